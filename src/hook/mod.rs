//! The hot path: `claude-mem hook <name>`, run by Claude Code on every lifecycle event.
//!
//! One run: read stdin to the end, parse, decide (purely) whether there is anything to record,
//! and only then open the database and write it in one short transaction. Whatever happens the
//! run answers with exit 0 and at most one JSON object; what went wrong goes to the log. When
//! the database cannot take the write in time, the write goes to the spill folder instead and a
//! later run applies it. This module must not depend on the cold commands.

mod capture;
mod cleanup;
mod context;
mod input;
pub(crate) mod private_turn;
mod prompt;
mod recall;
mod record;
mod standing;
mod summary;
mod threads;
mod turn;

use std::ffi::{OsStr, OsString};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::agent::claude as wire;
use crate::agent::{self, Agent};
use crate::config::Config;
use crate::emit::{Answer, HookOutput};
use crate::log::Log;
use crate::notice;
use crate::ops::{SessionRef, Write, truncate};
use crate::spill;
use crate::{clock, detach};
use input::Stdin;
use wire::Event;

/// A Stop starts the compressor once this many items wait: the number the Stop's own write
/// counts up to, whose count answers (one short range of an index, counted once). A SessionEnd
/// starts it for any.
const COMPRESS_AFTER_STOP: i64 = crate::store::RAW_BACKLOG_CAP;

/// Events are read whole; past this we stop keeping bytes (and drain the rest) rather than let
/// one event exhaust memory. Far above `CLAUDE_MEM_MAX_PAYLOAD_BYTES`' default.
const READ_LIMIT: u64 = 256 * 1024 * 1024;

/// The hooks this version knows. `install-hooks` registers each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Context,
    Prompt,
    Capture,
    Summary,
    Cleanup,
}

impl Hook {
    pub fn from_name(name: &OsStr) -> Option<Hook> {
        Some(match name.to_str()? {
            "context" => Hook::Context,
            "prompt" => Hook::Prompt,
            "capture" => Hook::Capture,
            "summary" => Hook::Summary,
            "cleanup" => Hook::Cleanup,
            _ => return None,
        })
    }
}

/// What a handler knows besides the event itself.
pub struct Ctx<'c> {
    pub config: &'c Config,
    pub now: String,
    pub id: String,
    /// Size of the event as read from stdin.
    pub payload_bytes: usize,
    /// The agent whose event this is.
    pub agent: Agent,
    /// The folder the agent says the session is of: the workspace Cursor names, else
    /// `CLAUDE_PROJECT_DIR`.
    pub started_in: Option<String>,
}

impl Ctx<'_> {
    /// The session part every write carries. The project is that of the folder the agent
    /// started in (Cursor's workspace, else `CLAUDE_PROJECT_DIR`, stable across `cd`), else of
    /// the event's `cwd`: its repository's top, as `project` finds it; the same rule for every
    /// hook.
    fn session(&self, event: &Event, session_id: &str) -> SessionRef {
        let cwd = meta(&event.cwd);
        let started = self.started_in.clone().or_else(|| cwd.clone());
        SessionRef {
            session_id: short(session_id).to_string(),
            project_dir: started.map(|dir| self.project_of(dir)),
            cwd,
            transcript_path: meta(&event.transcript_path),
            agent: self.agent.recorded(),
        }
    }

    /// The project of `dir`; a relative one (no event sends it) is kept as it is.
    fn project_of(&self, dir: String) -> String {
        let path = std::path::Path::new(&dir);
        if !path.is_absolute() {
            return dir;
        }
        let root = crate::project::of(path, &self.config.project_roots).root;
        match root.to_str() {
            Some(root) if root != dir => root.to_string(),
            _ => dir,
        }
    }

    fn write(&self, session: SessionRef, change: crate::ops::Change) -> Write {
        Write {
            id: self.id.clone(),
            at: self.now.clone(),
            session,
            change,
        }
    }
}

/// Runs `hook <args>` and returns its answer. Never panics, never fails. Anything but exactly
/// one known hook name (a newer install's hook, a stray argument) is a no-op.
pub fn run(args: &[OsString]) -> Answer {
    ignore_file_size_signal();
    crate::store::arena::for_this_process();
    let name = args.first().map(OsString::as_os_str);
    let config = Config::from_env();
    let label = name.map_or_else(|| "(none)".into(), OsStr::to_string_lossy);
    let log = Arc::new(Log::new(&config, &format!("hook {label}")));
    guarded(&log, || run_logged(args, &config, &log))
}

/// Under a file-size limit (`ulimit -f`) a write past it kills the process with SIGXFSZ unless
/// the signal is ignored; ignored, the write fails with EFBIG and the event is spilled like
/// after any other failed write.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Runs `body`; a panic in it ends as `Nothing` with its message in the log, never on stderr
/// (which Claude Code would show as a hook error).
fn guarded(log: &Arc<Log>, body: impl FnOnce() -> Answer) -> Answer {
    let panic_log = Arc::clone(log);
    panic::set_hook(Box::new(move |info| {
        panic_log.important("PANIC", &info.to_string());
    }));
    panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| HookOutput::Nothing.into())
}

fn run_logged(args: &[OsString], config: &Config, log: &Log) -> Answer {
    let excluded = |project: Option<&str>| project.is_some_and(|dir| config.excludes(dir));
    let Some((hook, named)) = wanted(args, config, log) else {
        input::drain();
        return HookOutput::Nothing.into();
    };
    let input = match input::read(READ_LIMIT) {
        Ok(Stdin::Event(input)) => input,
        Ok(Stdin::Terminal) => return HookOutput::Terminal.into(),
        Err(err) => {
            log.line("WARN", &format!("could not read the event: {err}"));
            return HookOutput::Nothing.into();
        }
    };
    let mut repaired = None;
    let (mut event, raw) = match parse(&input, &mut repaired) {
        Ok(parsed) => parsed,
        Err(err) => {
            log.line(
                "WARN",
                &format!("ignored input that is not a JSON event object: {err}"),
            );
            return HookOutput::Nothing.into();
        }
    };
    let agent = named.unwrap_or_else(|| Agent::by_shape(&event));
    let mut started_in = config.project_dir.clone();
    // Cursor's events and Copilot's tool calls are rewritten, into `adapted`, which the
    // event then borrows; every other event is read where it lies.
    let adapted;
    let event = match rewrite(agent, named.is_none(), raw, &mut event, config, log) {
        Rewrite::Kept => event,
        Rewrite::Skipped => return HookOutput::Nothing.into(),
        Rewrite::Into { json, project } => {
            started_in = project.or(started_in);
            adapted = json;
            match Event::parse(&adapted) {
                Ok(event) => event,
                Err(_) => return HookOutput::Nothing.into(),
            }
        }
    };
    // Without a folder from the agent the project is the event's cwd, known only now.
    if excluded(started_in.as_deref().or(Event::get(&event.cwd))) {
        return HookOutput::Nothing.into();
    }
    let ctx = Ctx {
        config,
        now: clock::now(),
        id: clock::new_id(),
        payload_bytes: input.len(),
        agent,
        started_in,
    };
    let decision = match hook {
        Hook::Capture => capture::decide(&event, &ctx),
        Hook::Prompt => prompt::decide(&event, &ctx),
        Hook::Context => context::decide(&event, &ctx),
        Hook::Summary => summary::decide(&event, &ctx),
        Hook::Cleanup => cleanup::decide(&event, &ctx),
    };
    let Some(write) = decision else {
        return HookOutput::Nothing.into();
    };
    let answer = write_and_answer(hook, agent, &write, config, log);
    agent.answer(answer, context::CLOSE)
}

/// The hook the arguments name and the agent they select, when this run is to read its event:
/// not when claude-mem is disabled or the project excluded, nor for arguments this version
/// does not know (logged).
fn wanted(args: &[OsString], config: &Config, log: &Log) -> Option<(Hook, Option<Agent>)> {
    if config.disabled
        || config
            .project_dir
            .as_deref()
            .is_some_and(|dir| config.excludes(dir))
    {
        return None;
    }
    let (hook, named) = match args.split_first() {
        Some((name, rest)) => (Hook::from_name(name), named_agent(rest)),
        None => (None, Err(())),
    };
    let (Some(hook), Ok(named)) = (hook, named) else {
        log.line(
            "INFO",
            &format!("hook {args:?}: not a hook of this version; nothing done"),
        );
        return None;
    };
    Some((hook, named))
}

/// The agent the arguments after the hook's name select (`--agent NAME`), none for Claude
/// Code's registration; `Err` when they are not ours.
fn named_agent(rest: &[OsString]) -> Result<Option<Agent>, ()> {
    let rest: Option<Vec<&str>> = rest.iter().map(|a| a.to_str()).collect();
    agent::named(&rest.ok_or(())?)
}

/// Parses one event, and gives the bytes it was parsed from; a string cut mid-character (a
/// lone surrogate escape) is repaired into `repaired` first.
fn parse<'a>(
    input: &'a [u8],
    repaired: &'a mut Option<Vec<u8>>,
) -> Result<(Event<'a>, &'a [u8]), serde_json::Error> {
    if let Err(err) = Event::parse(input) {
        *repaired = Some(wire::repair_lone_surrogates(input).ok_or(err)?);
    }
    let repaired: &'a Option<Vec<u8>> = repaired;
    let bytes = repaired.as_deref().unwrap_or(input);
    Ok((Event::parse(bytes)?, bytes))
}

/// What becomes of an event before the hooks read it.
enum Rewrite {
    /// Claude Code's shape already: read as it came.
    Kept,
    /// Left out (logged).
    Skipped,
    /// Claude Code's JSON of it, and the folder the agent names as the project.
    Into {
        json: Vec<u8>,
        project: Option<String>,
    },
}

/// A Cursor event, or a Copilot tool call, read into Claude Code's (`input` is `event`'s
/// bytes); a Gemini event, or an OpenCode call of an MCP tool of ours, renamed in place; any
/// other event is kept.
fn rewrite<'a>(
    agent: Agent,
    through_claude: bool,
    input: &'a [u8],
    event: &mut Event<'a>,
    config: &Config,
    log: &Log,
) -> Rewrite {
    match agent {
        Agent::OpenCode => {
            agent::opencode::adapt(event);
            Rewrite::Kept
        }
        Agent::Gemini => match agent::gemini::adapt(event, input) {
            Ok(()) => Rewrite::Kept,
            Err(why) => {
                log.line("INFO", &format!("left out a Gemini event: {why}"));
                Rewrite::Skipped
            }
        },
        Agent::Cursor => match cursor_event(through_claude, input, config, log) {
            Some(cursor) => Rewrite::Into {
                json: cursor.json,
                project: Some(cursor.project),
            },
            None => Rewrite::Skipped,
        },
        Agent::Copilot if agent::copilot::rewrites(Event::get(&event.hook_event_name)) => {
            match agent::copilot::adapt(input) {
                Ok(json) => Rewrite::Into {
                    json,
                    project: None,
                },
                Err(why) => {
                    log.line("INFO", &format!("left out a Copilot event: {why}"));
                    Rewrite::Skipped
                }
            }
        }
        _ => Rewrite::Kept,
    }
}

/// A Cursor event read into Claude Code's, or `None` (logged) when it is left out. Through
/// Claude Code's registration (`through_claude`) it is left out while our hooks are also in
/// Cursor's own file, which sends the same event: stored once, not twice.
fn cursor_event(
    through_claude: bool,
    input: &[u8],
    config: &Config,
    log: &Log,
) -> Option<agent::cursor::Adapted> {
    if through_claude && crate::marks::cursor_hooks(config) {
        return None;
    }
    agent::cursor::adapt(input)
        .inspect_err(|why| log.line("INFO", &format!("left out a Cursor event: {why}")))
        .ok()
}

/// Records `write` and builds the answer: the hook's own, plus a notice when the user must
/// know that something is wrong.
fn write_and_answer(hook: Hook, agent: Agent, write: &Write, config: &Config, log: &Log) -> Answer {
    // A private turn's tool calls and closing message go nowhere, not even to a spill file.
    if private_turn::covers(config, write) {
        return HookOutput::Ack.into();
    }
    crate::store::lean::for_one_write();
    private_turn::mark(config, write);
    private_turn::end_turn(config, write);
    if hook == Hook::Context {
        session_start_chores(config, log);
    }
    // The answers are made before the write, on the store it opens: what they gave is
    // recorded in the write's own transaction.
    let context = |store: &crate::store::Store| context::answer(store, config, write);
    let recall = |store: &crate::store::Store| recall::answer(store, config, write, log);
    let answering: Option<record::Answering> = match hook {
        Hook::Context => Some(&context),
        Hook::Prompt if agent.takes_prompt_context() => Some(&recall),
        _ => None,
    };
    let recorded = record::record(config, write, log, spill::HOOK_SLICE, answering);
    // After the write, so that a first run's warnings find the data dir it created.
    for warning in &config.warnings {
        log.line("WARN", warning);
    }
    if hook == Hook::Cleanup {
        private_turn::forget_session(config, &write.session.session_id);
        notice::forget_session(config, &write.session.session_id);
        // Retention and sync run in the maintenance process; whether either is due takes two
        // stats each (no hook runs git or waits on the network). So does bringing the search
        // index up to date with the session that ended, which per-prompt recall reads but
        // never writes.
        if crate::marks::retention_due(config)
            || crate::marks::sync_due(config)
            || recall_reads_the_index(config)
        {
            detach::maintain(config);
        }
    }
    if let Some(store) = &recorded.store {
        start_compression(hook, config, store);
    }
    // Claude Code drops a SessionEnd hook's systemMessage, and does not show SessionStart's in
    // every mode: the session's first prompt carries the notice instead.
    let tells = matches!(hook, Hook::Prompt | Hook::Capture | Hook::Summary);
    let notice = recorded
        .problem
        .as_ref()
        .filter(|_| tells)
        .and_then(|problem| notice::once(config, &write.session.session_id, problem));
    // Without the write in the database there is no answer, as there is no record of it.
    let output = recorded.answer.unwrap_or(HookOutput::Ack);
    Answer { output, notice }
}

/// After a session ends, or a turn when enough has piled up, the compressor is started
/// detached: costs the hook a count of at most a few index entries, a lock test, and a spawn
/// only when there is work.
fn start_compression(hook: Hook, config: &Config, store: &crate::store::Store) {
    let threshold = match hook {
        Hook::Cleanup => 1,
        Hook::Summary => COMPRESS_AFTER_STOP,
        _ => return,
    };
    if config.compress.auto && store.raw_backlog(threshold).is_ok_and(|n| n >= threshold) {
        detach::compress(config);
    }
}

/// Once per session, what keeps the next outage harmless: the reserve slots for a full disk
/// are put back, and a WAL that still holds deleted private pages, captures left to number, or
/// rows private turns left, are handed to maintenance.
fn session_start_chores(config: &Config, log: &Log) {
    if let Err(err) = spill::replenish(config) {
        log.line(
            "WARN",
            &format!("could not set space aside for a full disk: {err}"),
        );
    }
    // Without an index, per-prompt recall has nothing to read: maintenance builds it. Behind
    // the database (the last session ended without its SessionEnd hook, which brings it up to
    // date), recall would miss that session's work: maintenance catches it up.
    let index_wanted =
        config.recall && (!recall_reads_the_index(config) || crate::marks::index_behind(config));
    // Another machine may have pushed a minute ago: a sync now brings its work to this
    // session's prompts. The maintenance process syncs; this hook never waits on the network.
    let sync_wanted = crate::marks::sync_due_at_start(config);
    if sync_wanted {
        crate::marks::ask_sync(config);
    }
    if crate::marks::maintenance_left(config) || index_wanted || sync_wanted {
        detach::maintain(config);
    }
}

/// Whether per-prompt recall is on and has an index to read (one `stat`): the maintenance
/// process then brings it up to date after each session.
fn recall_reads_the_index(config: &Config) -> bool {
    config.recall && config.index_path().exists()
}

/// Ids, paths, sources and reasons are short; a huge one (a broken or hostile event) is cut so
/// that it cannot bloat every row that repeats it.
const MAX_META_BYTES: usize = 4096;

fn short(text: &str) -> &str {
    truncate(text, MAX_META_BYTES)
}

/// A metadata field, when present and not empty, cut to [`MAX_META_BYTES`].
fn meta(field: &wire::Text) -> Option<String> {
    Event::get(field).map(|v| short(v).to_string())
}

/// Applies the payload cap to a message: the text and whether it was cut.
fn capped(config: &Config, text: &str) -> (String, bool) {
    match config.max_payload_bytes {
        Some(max) if text.len() > max => (truncate(text, max).to_string(), true),
        _ => (text.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_ends_as_nothing_with_its_message_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            debug: false,
            ..Config::in_dir(dir.path())
        };
        let log = Arc::new(Log::new(&config, "hook test"));
        let out = guarded(&log, || panic!("boom in a handler"));
        // Back to the default hook, so other tests' failures print as usual.
        drop(panic::take_hook());
        assert_eq!(out, HookOutput::Nothing.into());
        let text = std::fs::read_to_string(config.log_path()).unwrap();
        assert!(
            text.contains("PANIC") && text.contains("boom in a handler"),
            "{text}"
        );
    }
}
