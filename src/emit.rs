//! The only place that writes to stdout or stderr, and the only place that picks an exit code.
//!
//! Claude Code reads a hook's stdout as JSON, shows any stderr on success as a hook error and
//! blocks on exit 2. Keeping every byte and every exit code here makes those rules checkable in
//! one file; clippy denies printing and exiting everywhere else.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

/// What a hook answers Claude Code.
#[derive(Debug, PartialEq, Eq)]
pub enum HookOutput {
    /// Nothing was done: empty stdout.
    Nothing,
    /// Something was recorded: the acknowledgement object.
    Ack,
    /// Context for Claude (SessionStart): the JSON form with `hookEventName`.
    Context { event: &'static str, text: String },
    /// Context in the form Cursor's `sessionStart` takes: `additional_context`.
    AdditionalContext(String),
    /// Context in the form GitHub Copilot CLI takes: a top-level `additionalContext`.
    TopLevelContext(String),
    /// A person ran the hook at a terminal: a hint for them, on stderr.
    Terminal,
}

/// A hook's whole answer: the output and, when something is really wrong, a line for the user.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub output: HookOutput,
    /// Shown to the user by Claude Code (`systemMessage`), never to Claude.
    pub notice: Option<String>,
}

impl From<HookOutput> for Answer {
    fn from(output: HookOutput) -> Answer {
        Answer {
            output,
            notice: None,
        }
    }
}

const TERMINAL_HINT: &str = "claude-mem hook: Claude Code runs this with one JSON event on \
                             stdin; at a terminal it does nothing. See `claude-mem hook --help`.\n";

/// Writes a hook's answer. A hook always exits 0: any other code is a hook error in Claude
/// Code, and 2 blocks it. A closed stdout is not our problem to report.
pub fn hook(answer: &Answer) -> u8 {
    let mut body = match &answer.output {
        HookOutput::Nothing => None,
        HookOutput::Ack => Some(json!({"continue": true, "suppressOutput": true})),
        HookOutput::Context { event, text } => Some(json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        })),
        HookOutput::AdditionalContext(text) => Some(json!({"additional_context": text})),
        HookOutput::TopLevelContext(text) => Some(json!({"additionalContext": text})),
        HookOutput::Terminal => {
            let _ = io::stderr().lock().write_all(TERMINAL_HINT.as_bytes());
            None
        }
    };
    if let Some(notice) = &answer.notice {
        let object = body.get_or_insert_with(|| json!({}));
        object["systemMessage"] = json!(notice);
    }
    if let Some(body) = body {
        let body = body.to_string();
        let mut out = io::stdout().lock();
        let _ = out.write_all(body.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
    0
}

/// Part of what a command was asked was declined by the state of things, not by a failure: a
/// queue answer for items no longer held under the caller's lease. Exit 3, so that a script
/// tells it apart from an error worth retrying (1) and a usage error (2).
#[derive(Debug)]
pub struct Declined(pub String);

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Declined {}

/// What a command produced: its output, and how it ends.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub stdout: String,
    /// Exit 1 without an error line: a search that found nothing, as grep and ripgrep do.
    pub found_nothing: bool,
    /// One line for a person at a terminal ("no results", a hint); never shown when stderr is
    /// not a terminal, so a pipe gets no trailing noise.
    pub note: Option<String>,
}

impl From<String> for Report {
    fn from(stdout: String) -> Report {
        Report {
            stdout,
            ..Report::default()
        }
    }
}

/// A mistake in how a command was called, found after parsing (a bad `--since`, an id too
/// short): one line and exit 2, like clap's own.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Writes a command's report, or its error as one line on stderr with exit 1 (2 for a
/// [`UsageError`], 3 for [`Declined`]).
pub fn command(result: anyhow::Result<Report>) -> u8 {
    match result {
        Ok(report) => {
            let mut out = io::stdout().lock();
            let _ = out.write_all(report.stdout.as_bytes());
            if !report.stdout.is_empty() && !report.stdout.ends_with('\n') {
                let _ = out.write_all(b"\n");
            }
            let _ = out.flush();
            if let Some(note) = report.note.filter(|_| stderr_is_terminal()) {
                eprintln!("{note}");
            }
            if report.found_nothing { 1 } else { 0 }
        }
        Err(err) => {
            eprintln!("claude-mem: error: {err:#}");
            if err.downcast_ref::<UsageError>().is_some() {
                2
            } else if err.downcast_ref::<Declined>().is_some() {
                3
            } else {
                1
            }
        }
    }
}

/// The exit code of a panic that reached `main`, as Rust's own start-up gives it.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
pub const PANICKED: u8 = 101;

/// Ends the process with `code`, stdout flushed: with glibc `main` is entered by the C library
/// (see main.rs), and no Rust start-up is there to flush it on return.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[allow(clippy::exit)]
pub fn exit(code: u8) -> ! {
    std::process::exit(i32::from(code))
}

pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// Whether a person can be asked a question: stdin and stderr are a terminal.
pub fn can_ask() -> bool {
    io::stdin().is_terminal() && stderr_is_terminal()
}

/// Asks `question` on stderr and reads one line from stdin: whether the answer is yes.
pub fn confirm(question: &str) -> io::Result<bool> {
    let mut err = io::stderr().lock();
    err.write_all(question.as_bytes())?;
    err.flush()?;
    let mut answer = String::new();
    io::stdin().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Stdout for a command whose output is too large to hold in a [`Report`] (an export): what
/// is written goes out as it comes, buffered.
pub fn stdout() -> impl Write {
    io::BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// How many [`Terminal`]s are out: while one is, nothing else writes to the terminal.
static SCREENS: AtomicUsize = AtomicUsize::new(0);

/// The terminal a full-screen command (`browse`) draws on: stdout, handed out only when it is
/// a terminal, so that what the command writes still goes out through this file. While one is
/// out, the progress line stays off: it would write over the screen.
pub struct Terminal(io::Stdout);

/// Stdout to draw on, `None` when it is not a terminal (a pipe, a file).
pub fn terminal() -> Option<Terminal> {
    let out = io::stdout();
    out.is_terminal().then(|| {
        SCREENS.fetch_add(1, Ordering::SeqCst);
        Terminal(out)
    })
}

impl Write for Terminal {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        SCREENS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A progress line on stderr for work that can take seconds (building the search index),
/// shown only on a terminal, only once the work has taken a moment, and erased when done.
pub struct Progress {
    label: &'static str,
    started: Instant,
    last: Option<Instant>,
    enabled: bool,
}

impl Progress {
    const DELAY: Duration = Duration::from_millis(300);
    const EVERY: Duration = Duration::from_millis(100);
    const WIDTH: u64 = 24;

    pub fn new(label: &'static str) -> Progress {
        Progress {
            label,
            started: Instant::now(),
            last: None,
            enabled: stderr_is_terminal() && SCREENS.load(Ordering::SeqCst) == 0,
        }
    }

    pub fn update(&mut self, done: u64, total: u64) {
        let now = Instant::now();
        if !self.enabled
            || total == 0
            || now - self.started < Self::DELAY
            || self.last.is_some_and(|last| now - last < Self::EVERY)
        {
            return;
        }
        self.last = Some(now);
        let filled = (done * Self::WIDTH / total) as usize;
        let bar = format!(
            "{}{}",
            "#".repeat(filled),
            " ".repeat(Self::WIDTH as usize - filled)
        );
        let mut err = io::stderr().lock();
        let _ = write!(
            err,
            "\r[{bar}] {:>3}% {} {done} of {total}",
            done * 100 / total,
            self.label
        );
        let _ = err.flush();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.last.is_some() {
            let _ = io::stderr().lock().write_all(b"\r\x1b[2K");
        }
    }
}

/// Help and version go to stdout as clap renders them, and so does the short help when a
/// command is given nothing (bare `claude-mem`: a person finding out what it does, exit 0). A
/// usage error becomes one line on stderr with clap's exit code: clap's message, its "did you
/// mean" tip, and the help to read (`command`'s: the subcommand's own, for a mistake in one).
pub fn usage(err: clap::Error, command: &str) -> u8 {
    if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = io::stdout()
            .lock()
            .write_all(err.render().to_string().as_bytes());
        return 0;
    }
    if err.use_stderr() {
        eprintln!(
            "claude-mem: error: {} (see {command} --help)",
            usage_line(&err.render().to_string())
        );
    } else {
        let _ = err.print();
    }
    u8::try_from(err.exit_code()).unwrap_or(2)
}

/// clap's rendered error (message, blank line, tips, usage, a pointer to --help) as one line:
/// the message and its tips.
fn usage_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim);
    let message: Vec<&str> = lines.by_ref().take_while(|l| !l.is_empty()).collect();
    let message = message.join(" ");
    let mut line = message
        .strip_prefix("error: ")
        .unwrap_or(&message)
        .to_string();
    for tip in lines.filter_map(|l| l.strip_prefix("tip: ")) {
        line.push_str("; ");
        line.push_str(tip);
    }
    line
}

/// Sends one MCP message (a JSON-RPC line) to the client on stdout, at once: the client waits
/// for it. An error means the client is gone.
pub fn mcp_message(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// A diagnostic line on stderr, used only when `CLAUDE_MEM_DEBUG=1`.
pub fn debug(line: &str) {
    let _ = io::stderr().lock().write_all(line.as_bytes());
}
