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
mod prompt;
mod summary;
pub mod wire;

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::emit::HookOutput;
use crate::log::Log;
use crate::ops::{SessionRef, Write};
use crate::store::Store;
use crate::{clock, spill};
use wire::Event;

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
}

impl Ctx<'_> {
    /// The session part every write carries. The project is `CLAUDE_PROJECT_DIR` (stable across
    /// `cd`), else the event's `cwd`: the same rule for every hook.
    fn session(&self, event: &Event, session_id: &str) -> SessionRef {
        let cwd = meta(&event.cwd);
        SessionRef {
            session_id: short(session_id).to_string(),
            project_dir: self.config.project_dir.clone().or_else(|| cwd.clone()),
            cwd,
            transcript_path: meta(&event.transcript_path),
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
pub fn run(args: &[OsString]) -> HookOutput {
    let name = args.first().map(OsString::as_os_str);
    let config = Config::from_env();
    let label = name.map_or_else(|| "(none)".into(), OsStr::to_string_lossy);
    let log = Arc::new(Log::new(&config, &format!("hook {label}")));
    guarded(&log, || run_logged(args, &config, &log))
}

/// Runs `body`; a panic in it ends as `Nothing` with its message in the log, never on stderr
/// (which Claude Code would show as a hook error).
fn guarded(log: &Arc<Log>, body: impl FnOnce() -> HookOutput) -> HookOutput {
    let panic_log = Arc::clone(log);
    panic::set_hook(Box::new(move |info| {
        panic_log.important("PANIC", &info.to_string())
    }));
    panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or(HookOutput::Nothing)
}

fn run_logged(args: &[OsString], config: &Config, log: &Log) -> HookOutput {
    let hook = match args {
        [name] => Hook::from_name(name),
        _ => None,
    };
    if config.disabled {
        drain_stdin();
        return HookOutput::Nothing;
    }
    let Some(hook) = hook else {
        drain_stdin();
        log.line(
            "INFO",
            &format!("hook {args:?}: not a hook of this version; nothing done"),
        );
        return HookOutput::Nothing;
    };
    let input = match read_stdin() {
        Ok(input) => input,
        Err(err) => {
            log.line("WARN", &format!("could not read the event: {err}"));
            return HookOutput::Nothing;
        }
    };
    let repaired;
    let parsed = match Event::parse(&input) {
        Err(err) => match wire::repair_lone_surrogates(&input) {
            Some(fixed) => {
                repaired = fixed;
                Event::parse(&repaired).map_err(|_| err)
            }
            None => Err(err),
        },
        parsed => parsed,
    };
    let event = match parsed {
        Ok(event) => event,
        Err(err) => {
            log.line(
                "WARN",
                &format!("ignored input that is not a JSON event object: {err}"),
            );
            return HookOutput::Nothing;
        }
    };
    let ctx = Ctx {
        config,
        now: clock::now(),
        id: clock::new_id(),
        payload_bytes: input.len(),
    };
    let decision = match hook {
        Hook::Capture => capture::decide(&event, &ctx),
        Hook::Prompt => prompt::decide(&event, &ctx),
        Hook::Context => context::decide(&event, &ctx),
        Hook::Summary => summary::decide(&event, &ctx),
        Hook::Cleanup => cleanup::decide(&event, &ctx),
    };
    let Some(write) = decision else {
        return HookOutput::Nothing;
    };
    let store = record(config, &write, log);
    // After the write, so that a first run's warnings find the data dir it created.
    for warning in &config.warnings {
        log.line("WARN", warning);
    }
    match hook {
        Hook::Context => context::answer(store, config, &write.session),
        _ => HookOutput::Ack,
    }
}

/// Applies `write` within the wait budget; on failure keeps it in the spill folder. Spilled
/// writes are older than this one, so a bounded number of them are applied first: a private
/// prompt kept in a spill file should be known before the captures of its turn are stored
/// (and if it is applied later, it removes them). A run that finds the database busy keeps its
/// write in the spill folder *before* it waits, so that Claude Code killing it while it waits
/// loses nothing; the file is removed once the write is in. Returns the open store when the
/// write went to the database.
fn record(config: &Config, write: &Write, log: &Log) -> Option<Store> {
    let deadline = Instant::now() + config.wait_budget;
    let mut kept: Option<std::path::PathBuf> = None;
    let mut attempt = 0u32;
    let failure = loop {
        attempt += 1;
        let wait = kept.is_some();
        // A panic in SQLite or here must not cost the event: it is spilled like any failure.
        let result = panic::catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<Store> {
            let mut store = Store::open(config, deadline)?;
            spill::ingest(&mut store, config, log);
            // Without waiting first: only a run that has to wait pays for the spill file.
            store.wait_until(if wait { deadline } else { Instant::now() })?;
            store.apply(write)?;
            Ok(store)
        }))
        .unwrap_or_else(|_| {
            Err(anyhow::anyhow!(
                "a panic while writing (see the line above)"
            ))
        });
        match result {
            Ok(store) => {
                if let Some(path) = kept {
                    let _ = std::fs::remove_file(path);
                }
                return Some(store);
            }
            Err(err) if crate::store::is_busy(&err) => {
                if kept.is_none() {
                    match spill::keep(config, write) {
                        Ok(path) => {
                            kept = Some(path);
                            continue;
                        }
                        Err(spill_err) => log.important(
                            "WARN",
                            &format!("could not keep the event before waiting: {spill_err:#}"),
                        ),
                    }
                }
                // A brand-new database can refuse at once (switching to WAL takes an exclusive
                // lock that the busy timeout does not cover): retry, jittered, within the budget.
                let pause = jitter(attempt);
                if Instant::now() + pause >= deadline {
                    break err;
                }
                thread::sleep(pause);
            }
            Err(err) => break err,
        }
    };
    let kept = match kept {
        Some(path) => Ok(path),
        None => spill::keep(config, write),
    };
    match kept {
        Ok(path) => log.important(
            "WARN",
            &format!(
                "database unavailable ({failure:#}); event kept in {} for a later run",
                path.display()
            ),
        ),
        Err(err) => log.important(
            "ERROR",
            &format!("database unavailable ({failure:#}) and the event could not be kept: {err:#}"),
        ),
    }
    None
}

/// 1 to 16 ms, growing with the attempt, spread by the clock so racing processes part ways.
fn jitter(attempt: u32) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let spread = (nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % 1000;
    let base = 1u64 << attempt.min(4);
    Duration::from_micros(base * 1000 + u64::from(spread) * base)
}

fn read_stdin() -> io::Result<Vec<u8>> {
    let mut input = Vec::with_capacity(16 * 1024);
    let mut stdin = io::stdin().lock();
    (&mut stdin).take(READ_LIMIT).read_to_end(&mut input)?;
    if input.len() as u64 == READ_LIMIT {
        io::copy(&mut stdin, &mut io::sink())?;
        return Err(io::Error::other(format!(
            "the event is larger than {READ_LIMIT} bytes, the most a hook reads"
        )));
    }
    Ok(input)
}

/// Reads stdin to its end without keeping it: Claude Code's write must not hit a closed pipe.
fn drain_stdin() {
    let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
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

/// Cuts `text` to at most `max` bytes on a character boundary.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
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
            data_dir: dir.path().to_path_buf(),
            debug: false,
            ..Config::from_env()
        };
        let log = Arc::new(Log::new(&config, "hook test"));
        let out = guarded(&log, || panic!("boom in a handler"));
        // Back to the default hook, so other tests' failures print as usual.
        drop(panic::take_hook());
        assert_eq!(out, HookOutput::Nothing);
        let text = std::fs::read_to_string(config.log_path()).unwrap();
        assert!(
            text.contains("PANIC") && text.contains("boom in a handler"),
            "{text}"
        );
    }
}
