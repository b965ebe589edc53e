//! The command line, as clap types only. Doc comments here are the help text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

// The help's first line (`about`) is Cargo.toml's `description`, the README's first sentence.
#[derive(Debug, Parser)]
#[command(name = "claude-mem", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Each command's arguments are made only for the command run: all of them were made for
// every run, 0.2 ms and 55 page faults of each command's start. So the structs of arguments
// below have `//` comments: made last, a doc comment of theirs would be their command's help.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Run by Claude Code, not by you: one hook, with one JSON event on stdin.
    ///
    /// install-hooks registers them in Claude Code's settings: context (SessionStart), prompt
    /// (UserPromptSubmit), capture (PostToolUse, PostToolUseFailure), summary (Stop), cleanup
    /// (SessionEnd). A hook always exits 0 and prints no error: what goes wrong is in the log
    /// (see claude-mem status and claude-mem doctor).
    #[command(hide = true)]
    Hook {
        /// Which hook.
        name: String,
        /// The agent whose hooks file runs it, when not Claude Code: codex, cursor, copilot,
        /// gemini or opencode (install-hooks --agent writes it into the command).
        #[arg(long, value_enum, value_name = "AGENT")]
        agent: Option<AgentArg>,
    },
    /// Register claude-mem's hooks in Claude Code's settings.json.
    ///
    /// The file is ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json when that is
    /// set, unless a flag names another. Everything else in it is kept; running this again
    /// changes nothing, and entries left by a binary that moved are pointed at this one.
    /// PostToolUseFailure is added only when `claude --version` (the `claude` on PATH, or the
    /// one $CLAUDE_MEM_CLAUDE_BIN names) is 2.1.101 or later: older versions ignore a whole
    /// settings file over an event they do not know.
    InstallHooks(SettingsArgs),
    /// Apply events waiting in the spill folder and shrink the WAL, now.
    ///
    /// The hooks start this on their own, detached, when there is more of either than a hook
    /// should spend time on (a backlog left by an outage, a WAL grown behind a long reader).
    /// Waits up to a minute for a reader to let go; does nothing while another one runs.
    Maintain {
        /// Started by a hook: a rebuild that failed lately (a full disk) waits its hour.
        #[arg(long, hide = true)]
        auto: bool,
        /// Started by a hook: only make the digest of this project's team notes that
        /// per-prompt recall reads.
        #[arg(long, hide = true, value_name = "DIR")]
        team: Option<String>,
        /// Started by a hook whose write took the WAL past its bound: only copy it back.
        #[arg(long, hide = true, conflicts_with_all = ["auto", "team"])]
        checkpoint: bool,
    },
    /// Remove claude-mem's hooks (and nothing else) from Claude Code's settings.json.
    ///
    /// Removes every handler whose command runs a program named claude-mem with `hook`, from
    /// whatever path, and the groups and events that this leaves empty. In a command line that
    /// chains ours with another command, only our part goes; a line it cannot take apart
    /// exactly is kept and reported.
    UninstallHooks(SettingsArgs),
    /// Hand captured items to consumers (a summarizer, a script): claim them under a lease,
    /// then ack, fail or release each.
    ///
    /// Any number of consumers may run at once: two never hold the same item while its lease
    /// runs, and an item is acked at most once. Items of a consumer that dies come back when
    /// its lease ends. docs/queue.md has the contract and an example.
    #[command(subcommand)]
    Queue(QueueCommand),
    /// Search the memory: prompts, tool calls, Claude's messages, memories and summaries.
    ///
    /// Ask in plain words or a question: the best matches first (the query as typed, then all
    /// its words, then some; English stop words left out). `"a phrase"` must match, in order
    /// (an argument with spaces is one): one that no item holds, a question in quotes, is
    /// searched as its words, and said so; `merg*` matches words that start so. Words are
    /// matched as developers write them: `session` finds `upsert_session` and `getSession`,
    /// `merge.rs` the file, `test` also `tests`, `cafe` `café`. A misspelt word is searched as
    /// the nearest stored one. Exits 1 when nothing is found.
    Search(SearchArgs),
    /// Print one item whole: a session with its prompts, tool calls and memories, a prompt, a
    /// tool call, a message of Claude's, a memory or a summary.
    ///
    /// ID is any id claude-mem prints, whole or as a unique prefix of at least 6 characters.
    Show {
        /// A session, prompt, tool call, message, memory or summary id, or a unique prefix of
        /// one (6 characters or more).
        id: String,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List recent sessions: when, how long, prompts, tool calls, files changed, first request.
    Sessions(SessionsArgs),
    /// The standing instructions the user gave ("from now on…", "always…", "we use X, not
    /// Y"): the current ones of this project, as every new session gets them; pin or unpin one.
    ///
    /// Each is listed with the id of the prompt that said it (claude-mem forget removes it by that id), when,
    /// and the words said. A later instruction on the same subject replaces an earlier one;
    /// --replaced lists those too. A pinned one is never left out of a session's context for
    /// its budget.
    Conventions(ConventionsArgs),
    /// The folders the memory holds sessions of, and which belong to another project now.
    ///
    /// A project is its repository: a session started in a subfolder or a linked worktree
    /// belongs to the repository's top. An earlier release recorded it under the folder
    /// Claude Code started in; `projects join` (run once by the maintenance process) moves
    /// those sessions to their repository, `projects unjoin` puts every one it moved back.
    Projects {
        #[command(subcommand)]
        action: Option<ProjectsAction>,
        /// JSON Lines: one object per folder.
        #[arg(long)]
        json: bool,
    },
    /// Browse the memory in a terminal UI: sessions by day, a session's timeline, search as
    /// you type, an item in full, the standing instructions; `d` forgets (see docs/browse.md).
    Browse(BrowseArgs),
    /// What happened around one item: the items before and after it in its session.
    Timeline {
        /// A session, prompt, tool call, message, memory or summary id (a session shows from
        /// its start).
        id: String,
        /// How many items before it.
        #[arg(long, value_name = "N", default_value_t = 5)]
        before: usize,
        /// How many items after it.
        #[arg(long, value_name = "N", default_value_t = 10)]
        after: usize,
        /// JSON Lines, one item a line.
        #[arg(long)]
        json: bool,
    },
    /// What the session-start context and per-prompt recall gave a session, and why.
    ///
    /// Each item given: when, by what (the context, or a prompt's recall), its id, what it is,
    /// the reason (recent, memory, thread, rule, team, match), its score where it cleared
    /// recall's bar, and the bytes of its lines. Without an id, the latest session of this
    /// project.
    Given {
        /// A session's or a prompt's id, or a unique prefix of one (6 characters or more).
        id: Option<String>,
        /// JSON Lines, one item given a line.
        #[arg(long)]
        json: bool,
    },
    /// Serve the memory to Claude Code over the Model Context Protocol (stdio).
    ///
    /// Claude Code starts this itself once `install-hooks` has registered it (`claude mcp add`).
    /// Its tools: `search` (a compact index of what matches), `timeline` (what happened around
    /// an item) and `get` (items whole, by id). Runs until stdin closes.
    Mcp,
    /// Turn captured tool calls into short typed memories and session summaries, with a
    /// small model, a batch of a session's items per call.
    ///
    /// The model is headless Claude Code (`claude -p`, your own login: subscription or key)
    /// with $CLAUDE_MEM_MODEL (haiku), no tools; $CLAUDE_MEM_COMPRESS_CMD names any other
    /// program that reads the digest on stdin and prints the same JSON. At most
    /// $CLAUDE_MEM_COMPRESS_DAILY_TOKENS tokens a day (300,000); past that, items wait for the
    /// next day. The hooks run this after each session unless CLAUDE_MEM_COMPRESS=off.
    Compress(CompressArgs),
    /// Where the hooks are registered, where the data is, and whether anything is wrong.
    Status {
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Find what is broken and say how to fix it: one line per check (ok, warn, fail).
    ///
    /// Checks the hooks in every settings file Claude Code reads (registered, each running an
    /// existing claude-mem, none twice), the MCP server, Claude Code's version, the data dir's
    /// files and modes, the database (opens, ours, quick_check, WAL, disk space), the spill
    /// folder and the log of the last day. Exits 1 when a check fails, 0 otherwise.
    Doctor {
        /// Repair what can be repaired safely, say what was done, then check again.
        #[arg(long)]
        fix: bool,
        /// One JSON object with a `checks` array.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell.
    ///
    /// Where to put it: for bash, ~/.local/share/bash-completion/completions/claude-mem; for
    /// zsh, a file _claude-mem in a folder of your fpath; for fish,
    /// ~/.config/fish/completions/claude-mem.fish; for elvish, `eval (claude-mem completions
    /// elvish | slurp)` in ~/.config/elvish/rc.elv; for powershell, `claude-mem completions
    /// powershell | Out-String | Invoke-Expression` in your $PROFILE. For example:
    /// `claude-mem completions fish | source` for the running shell only.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Apply today's privacy and secret rules to everything already stored.
    ///
    /// What a rule added since (or a CLAUDE_MEM_REDACT_EXTRA pattern) finds in prompts, tool
    /// calls, Claude's messages and errors is redacted; what it replaced is then in no file of
    /// the data dir: not in the database, its WAL or free pages, nor in the search index.
    Scrub {
        /// Count what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Apply the retention policy now and give the space it frees back to the file system.
    ///
    /// Sessions idle for CLAUDE_MEM_KEEP_DAYS (365) are deleted; the tool calls of sessions
    /// idle for CLAUDE_MEM_PAYLOAD_DAYS (30) keep only what the search index holds of them;
    /// past CLAUDE_MEM_MAX_DB_MB (1024) the oldest sessions go first. The maintenance process
    /// does the same in small slices after sessions end.
    Prune(PruneArgs),
    /// Delete for good a session, a prompt (with its turn), a tool call, a message, a memory or
    /// a summary, or everything of a project or of a time.
    ///
    /// On a terminal it shows what will go and asks first; elsewhere it needs --yes. What is
    /// forgotten is gone from the database, its WAL and free pages, the search index and the
    /// spill folder.
    Forget(ForgetArgs),
    /// Write what was captured as JSON Lines: a header line, then one record a line.
    ///
    /// The format is `claude-mem/1` (see docs/hygiene.md). Filters as for search; by default the
    /// current project.
    Export(ExportArgs),
    /// Sync this machine's memory with your other machines through a git remote, encrypted.
    ///
    /// Without a subcommand: push what is new here and take in what the other machines pushed,
    /// now, and say what moved. The remote (any repository git reaches: ssh, https, a path)
    /// holds only ciphertext; the key never leaves your machines. After sessions end, the
    /// maintenance process syncs every $CLAUDE_MEM_SYNC_INTERVAL (10m) at most. See
    /// docs/sync.md.
    Sync {
        #[command(subcommand)]
        command: Option<SyncCommand>,
    },
    /// Read back what export wrote, or bring over thedotmack/claude-mem's memory.
    ///
    /// Records already here (by id) are not stored twice; the privacy and secret rules apply
    /// to what is read. Nothing is stored from a file with a bad line or of a newer format.
    /// With --from-claude-mem, that tool's database is read (never changed) and its sessions,
    /// prompts, observations and session summaries stored as ours.
    Import(ImportArgs),
    /// Write this project's memories and session summaries into its .claude-mem/ folder, one
    /// Markdown file each, for the team to commit with the code.
    ///
    /// Only what the compressor made is shared, never prompts, tool calls or Claude's
    /// messages; secrets are redacted again and `<private>` text never leaves. No summary of a
    /// session that did nothing (no memory made of it, no file changed) unless named or
    /// --all-summaries. Running it again rewrites the files that changed and removes this
    /// machine's files of what was pruned since (`forget` removes a forgotten item's file
    /// itself); a teammate's files are never touched. A teammate's claude-mem, in a clone,
    /// shows them in search, the MCP tools and the session-start context, as the team's,
    /// without storing them. See docs/sharing.md.
    Share(ShareArgs),
}

#[derive(Debug, Args)]
pub struct ShareArgs {
    /// Only these: session, memory or summary ids, as any command prints them (a session brings
    /// its memories and summary, whatever it did).
    #[arg(value_name = "ID", conflicts_with_all = ["since", "until"])]
    pub ids: Vec<String>,
    /// The project (default: the current one: $CLAUDE_PROJECT_DIR, else the current directory,
    /// or the recorded project that contains it).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Only what was made in that time.
    #[command(flatten)]
    pub range: Range,
    /// Also the summaries of sessions that did nothing (no memory made of them, no file
    /// changed: a question asked and answered).
    #[arg(long)]
    pub all_summaries: bool,
    /// List the files that would be written or removed, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SyncCommand {
    /// Sync with REMOTE: on a remote that holds no claude-mem data, make a key and print it;
    /// on one that does, give its key.
    ///
    /// A wrong key, or one made for another remote, ends with nothing imported and the remote
    /// unchanged.
    Setup {
        /// A repository git reaches: git@host:me/memory.git, https://..., a path, file://...
        remote: String,
        /// The remote's key (`claude-mem sync key` prints it on a machine that syncs), or - to
        /// read it from stdin.
        #[arg(long, value_name = "KEY")]
        key: Option<String>,
    },
    /// The remote, the last sync and what it moved, its error if it failed, what waits to go.
    Status {
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print the remote's key again, for another machine's `sync setup --key`.
    Key,
    /// Stop syncing here: forget the remote, its key and what was synced (the remote and the
    /// other machines are left as they are).
    Off,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Say what would go, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also delete sessions last active before then: a duration ago (90d, 12w, 6mo, 1y; 30m
    /// is minutes) or a date. On a terminal it shows what goes and asks first.
    #[arg(long, value_name = "WHEN")]
    pub older_than: Option<String>,
    /// With --older-than: do not ask (needed when not on a terminal).
    #[arg(long, short)]
    pub yes: bool,
    /// Only this project's sessions (default: every project).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true)
    .args(["id", "session", "project", "since", "until"])))]
// Here --project alone names what to delete, not a filter: its help and --all's say so.
#[command(mut_arg("project", |a| {
    a.help("Everything of this project (with --since/--until: of that time)")
}))]
#[command(mut_arg("all", |a| {
    a.help("With --since/--until: of every project (default: the current one)")
}))]
pub struct ForgetArgs {
    /// A session, prompt, tool call, message, memory or summary id (a prompt takes its turn
    /// along).
    #[arg(conflicts_with_all = ["session", "project", "all", "since", "until"])]
    pub id: Option<String>,
    /// This session, with everything in it.
    #[arg(long, value_name = "ID", conflicts_with_all = ["project", "all", "since", "until"])]
    pub session: Option<String>,
    #[command(flatten)]
    pub projects: Projects,
    #[command(flatten)]
    pub range: Range,
    /// Do not ask.
    #[arg(long, short)]
    pub yes: bool,
    /// Say what would go, and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub projects: Projects,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    #[command(flatten)]
    pub range: Range,
    /// Write to this file (created with mode 0600) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Instead, write one self-contained HTML page (sessions by day, summaries, memories, a
    /// search box; no network) to this file, mode 0600.
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A file export wrote, or - for stdin.
    #[arg(value_name = "FILE", required_unless_present = "from_claude_mem")]
    pub file: Option<PathBuf>,
    /// Instead, thedotmack/claude-mem's database: its sessions, prompts, observations and
    /// session summaries (default: ~/.claude-mem/claude-mem.db). It is only read.
    #[arg(long, value_name = "DB", num_args = 0..=1, conflicts_with = "file")]
    pub from_claude_mem: Option<Option<PathBuf>>,
}

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// Claim up to N items, high priority first, then oldest; print them as JSON Lines.
    ///
    /// Each line is one item with its `lease_token`, which ack, fail and release need. Nothing
    /// to claim: no output, exit 0.
    Claim {
        /// At most this many items (1 to 1000).
        #[arg(long, value_name = "N", default_value_t = 10,
              value_parser = clap::value_parser!(u16).range(1..=1000))]
        limit: u16,
        /// How long the items are held; then they go to the next claim (1s to 24h).
        #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = lease)]
        lease: Duration,
        /// Only items of this kind.
        #[arg(long, value_enum)]
        kind: Option<QueueKind>,
        /// A name for `queue stats` to show (default: `pid` and the caller's process id).
        #[arg(long, value_name = "NAME", value_parser = consumer)]
        consumer: Option<String>,
    },
    /// Mark items done.
    Ack(Answer),
    /// Record a failed attempt: the item is tried again after a backoff, or after the last
    /// attempt it is failed for good (until `queue retry`).
    Fail {
        #[command(flatten)]
        answer: Answer,
        /// What went wrong (kept with the item, shown to the next consumer).
        #[arg(long, value_name = "TEXT")]
        error: String,
        /// Waits after the 1st, 2nd, … failure; the last repeats.
        #[arg(long, value_name = "DURATIONS", value_delimiter = ',', default_value = "1m,5m,30m,2h",
              value_parser = crate::clock::parse_duration)]
        backoff: Vec<Duration>,
        /// The failure that makes this many attempts is final.
        #[arg(long, value_name = "N", default_value_t = 5,
              value_parser = clap::value_parser!(u32).range(1..))]
        max_attempts: u32,
    },
    /// Give items back unprocessed: claimable again at once, no attempt counted.
    Release(Answer),
    /// Put failed items back in the queue now, their attempts counted from zero.
    Retry {
        /// Item ids.
        #[arg(
            value_name = "ID",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        ids: Vec<String>,
        /// Every failed item.
        #[arg(long)]
        all: bool,
    },
    /// How many items are waiting, held, retrying, failed and done.
    Stats {
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

// Which claimed items an ack, fail or release answers for.
#[derive(Debug, Args)]
pub struct Answer {
    /// The `lease_token` the items were claimed with.
    #[arg(long, value_name = "TOKEN")]
    pub token: String,
    /// Item ids.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum QueueKind {
    Observation,
    Summary,
}

/// The command that `args` (the whole command line) runs, as far as it names subcommands
/// (`claude-mem queue claim`): a usage error points at that command's help.
pub fn command_path(args: &[std::ffi::OsString]) -> String {
    let mut command = Cli::command();
    let mut path = vec!["claude-mem".to_string()];
    for arg in args.iter().skip(1) {
        let Some(sub) = arg
            .to_str()
            .and_then(|a| command.find_subcommand(a))
            .cloned()
        else {
            break;
        };
        path.push(sub.get_name().to_string());
        command = sub;
    }
    path.join(" ")
}

/// A consumer's name is shown in `queue stats`: one printable line of reasonable length.
fn consumer(name: &str) -> Result<String, String> {
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err("a consumer name is 1 to 100 printable characters".into());
    }
    Ok(name.to_string())
}

fn lease(text: &str) -> Result<Duration, String> {
    let lease = crate::clock::parse_duration(text)?;
    if !(crate::store::queue::MIN_LEASE..=crate::store::queue::MAX_LEASE).contains(&lease) {
        return Err(format!("a lease lasts 1s to 24h, not {text}"));
    }
    Ok(lease)
}

/// A `--limit`: 0 would list nothing and end as if nothing were found.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("a limit is 1 or more".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?} is not a whole number")),
    }
}

// Which project a command covers: one (by default the current one), or every one.
#[derive(Debug, Args)]
pub struct Projects {
    /// Only this project (default: the current one: $CLAUDE_PROJECT_DIR, else the current
    /// directory, or the recorded project that contains it).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub project: Option<PathBuf>,
    /// Every project.
    #[arg(long)]
    pub all: bool,
}

// From when and until when items were captured, as a user writes times (read by
// `recall::bounds`).
#[derive(Debug, Args)]
pub struct Range {
    /// Only since then: a duration ago (90s, 30m, 12h, 2d, 1w, 3mo, 1y; m is minutes) or a
    /// date (2026-11-01, local time).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only before then: a duration ago, or a date (the whole day included).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

// Which project's items a listing covers, from when, which page of them, and how printed.
#[derive(Debug, Args)]
pub struct Scope {
    #[command(flatten)]
    pub projects: Projects,
    #[command(flatten)]
    pub range: Range,
    /// At most this many (1 or more).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = at_least_one)]
    pub limit: usize,
    /// Skip this many first.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
    /// Only the sessions of this coding agent.
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Option<AgentArg>,
    /// JSON Lines, one a line.
    #[arg(long)]
    pub json: bool,
}

/// A coding agent whose sessions claude-mem records, by the name they are recorded under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    ClaudeCode,
    Codex,
    Cursor,
    Copilot,
    Gemini,
    #[value(name = "opencode")]
    OpenCode,
}

impl AgentArg {
    pub fn agent(self) -> crate::agent::Agent {
        match self {
            AgentArg::ClaudeCode => crate::agent::Agent::ClaudeCode,
            AgentArg::Codex => crate::agent::Agent::Codex,
            AgentArg::Cursor => crate::agent::Agent::Cursor,
            AgentArg::Copilot => crate::agent::Agent::Copilot,
            AgentArg::Gemini => crate::agent::Agent::Gemini,
            AgentArg::OpenCode => crate::agent::Agent::OpenCode,
        }
    }
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to search for.
    #[arg(required = true, value_name = "WORDS")]
    pub words: Vec<String>,
    #[command(flatten)]
    pub scope: Scope,
    /// Only this session (an id or a prefix of one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only calls of this tool (Bash, Edit, ...).
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Only calls that touched this file (a path, or its end: src/merge.rs).
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,
    /// Only this kind of item.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
}

#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Only this session (an id, or a unique prefix of one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print each batch's digest and its estimated tokens; claim nothing, call no model.
    #[arg(long)]
    pub dry_run: bool,
    /// Started by a hook: exits at once when another such run holds the data dir's lock, or
    /// while compression is paused.
    #[arg(long, hide = true)]
    pub auto: bool,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub scope: Scope,
}

#[derive(Debug, Args)]
pub struct BrowseArgs {
    #[command(flatten)]
    pub projects: Projects,
}

#[derive(Debug, Args)]
pub struct ConventionsArgs {
    #[command(subcommand)]
    pub action: Option<ConventionsAction>,
    #[command(flatten)]
    pub projects: Projects,
    /// Also the instructions a later one replaced.
    #[arg(long)]
    pub replaced: bool,
    /// JSON Lines: one object per instruction.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConventionsAction {
    /// Keep a prompt's standing instructions in every session's context, whatever its budget.
    Pin {
        /// The id `conventions` lists (a prompt's), or a unique prefix of one.
        id: String,
    },
    /// Let them be left out again when the context's budget is spent.
    Unpin {
        /// The id `conventions` lists, or a unique prefix of one.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProjectsAction {
    /// Move the sessions recorded under a folder that belongs to another project now (a
    /// subfolder or a linked worktree of a repository) to that project.
    Join {
        /// List what would move, and move nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Put every session `projects join` moved back under the folder it was recorded under.
    Unjoin,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    Prompt,
    Observation,
    Message,
    Summary,
    Memory,
}

// Which settings file to change, and how.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// Use DIR/.claude/settings.json (DIR defaults to the current directory).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "settings",
          value_parser = existing_dir)]
    pub project: Option<PathBuf>,
    /// Use .claude/settings.local.json of the project (current directory, or --project DIR).
    #[arg(long, conflicts_with = "settings")]
    pub local: bool,
    /// Use this settings file.
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Leave the MCP server alone (install-hooks registers it with Claude Code, `claude mcp
    /// add --scope user`, and uninstall-hooks removes it, when they change the user's
    /// settings).
    #[arg(long)]
    pub no_mcp: bool,
    /// Another coding agent's files instead of Claude Code's: codex ($CODEX_HOME/hooks.json
    /// and config.toml, default ~/.codex), cursor (~/.cursor/hooks.json and mcp.json) or
    /// copilot ($COPILOT_HOME/hooks/claude-mem.json and mcp-config.json, default ~/.copilot),
    /// gemini (~/.gemini/settings.json, its hooks and mcpServers) or opencode (a plugin in
    /// ~/.config/opencode/plugins/ and the MCP server in its opencode.json).
    /// Uninstall gives each file back as install found it when nothing else changed it since.
    #[arg(long, value_enum, value_name = "AGENT", conflicts_with_all = ["project", "local", "settings"])]
    pub agent: Option<AgentArg>,
}

impl SettingsArgs {
    /// The settings file these flags name.
    pub fn target(&self) -> crate::settings::Target {
        crate::settings::Target {
            project: self.project.clone(),
            local: self.local,
            settings: self.settings.clone(),
        }
    }
}

/// A project directory must exist: a typo would otherwise create a new tree for it.
fn existing_dir(text: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(text);
    if dir.is_dir() {
        Ok(dir)
    } else if dir.exists() {
        Err("not a directory".into())
    } else {
        Err("no such directory".into())
    }
}
