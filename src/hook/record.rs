//! Getting a hook's write to disk: into the database within the wait budget, else into the
//! spill folder, never lost in silence.
//!
//! The run's own write goes first, so that it is on disk as early as possible (a run killed
//! before that loses it); a small slice of the spill backlog follows. A hook that answers with
//! what the database holds (the session-start context, per-prompt recall) makes its answer
//! once the database is open and before the write, outside the write lock, so that what the
//! answer gave is recorded in the write's own transaction (a few inserts) rather than in a
//! second one; the answer is handed back only once the write is in. A run that finds the
//! database busy keeps its write in the spill folder *before* it waits, so that Claude Code
//! killing it while it waits loses nothing; that copy skips the fsync (a kill does not lose
//! written data, only a power loss would) and is removed once the write is in. Then it waits
//! its turn behind the other hooks that wait (see `turn`). A WAL grown huge behind a reader
//! would make opening the database itself slow: then the write is spilled without opening it,
//! and the maintenance process catches up. So is a write while a rebuild holds the lock for
//! seconds (see `store::rebuilding::under_way`): waiting would cost the whole budget.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::detach;
use crate::emit::HookOutput;
use crate::fsutil::{self, Durability};
use crate::given::{Gave, Giving};
use crate::log::Log;
use crate::notice::{PILE_AGE_MS, PILE_FILES, Problem};
use crate::ops::Write;
use crate::spill::{self, Backlog, Slice};
use crate::store::given::Gift;
use crate::store::layout;
use crate::store::{self, Maintenance, Store};

use super::turn::{self, Waited};

pub struct Recorded {
    /// The open store, when the write went into the database.
    pub store: Option<Store>,
    /// What the user must be told, if anything.
    pub problem: Option<Problem>,
    /// The hook's answer, made before the write, when the write went into the database.
    pub answer: Option<HookOutput>,
}

/// A hook's answer, made of the open store before its write, and what it gave (recorded with
/// the write: see `store::given`).
pub struct Made {
    pub output: HookOutput,
    pub giving: Giving,
    pub gave: Vec<Gave>,
}

/// How a hook makes its answer of the open store.
pub type Answering<'a> = &'a dyn Fn(&Store) -> Made;

/// Applies `write` within the wait budget, with the records of what the answer `answering`
/// makes gave, taking in `slice` of the spill backlog first; on failure keeps it in the spill
/// folder.
pub fn record(
    config: &Config,
    write: &Write,
    log: &Log,
    slice: Slice,
    answering: Option<Answering>,
) -> Recorded {
    if let Some((why, expected)) = not_now(config) {
        return keep(config, write, log, &why, expected);
    }
    let mut kept: Option<PathBuf> = None;
    let mut made = None;
    let to = Attempt {
        config,
        write,
        log,
        slice,
        answering,
    };
    match write_within_budget(&to, &mut made, &mut kept) {
        Ok((store, backlog)) => {
            if let Some(path) = kept {
                let _ = std::fs::remove_file(path);
            }
            after(config, &store, &backlog);
            Recorded {
                problem: piling(&backlog),
                store: Some(store),
                answer: made.map(|m| m.output),
            }
        }
        Err(failure) => match kept {
            Some(path) => kept_before_waiting(log, &failure, &path),
            None => keep(config, write, log, &failure, Expected::No),
        },
    }
}

/// Why the database is not to be opened at all now, for a write kept in the spill folder at
/// once: opening it would cost the whole budget, or move files under someone else's feet.
fn not_now(config: &Config) -> Option<(anyhow::Error, Expected)> {
    if layout::pending(config) {
        detach::maintain(config);
        let why = anyhow::anyhow!(
            "the data dir is being set up (files of an earlier release may have to move first)"
        );
        return Some((why, Expected::Yes));
    }
    if store::rebuilding::under_way(&config.data_dir) {
        let why = anyhow::anyhow!(
            "a rebuild holds it (forget, scrub or maintenance); kept without waiting"
        );
        return Some((why, Expected::Yes));
    }
    if store::wal_bytes(config) > store::WAL_OPEN_MAX {
        detach::maintain(config);
        let why = anyhow::anyhow!(
            "the WAL is too large to open now (a reader held it); the maintenance process is shrinking it"
        );
        return Some((why, Expected::No));
    }
    None
}

/// What every attempt at the write is given.
struct Attempt<'a> {
    config: &'a Config,
    write: &'a Write,
    log: &'a Log,
    slice: Slice,
    answering: Option<Answering<'a>>,
}

/// Tries the write until it is in, it fails for another reason than a busy database, or the
/// budget is spent. The first busy answer keeps the write in the spill folder (its path in
/// `kept`) before this run waits, so that a kill while waiting loses nothing. The answer is
/// made once, into `made`, by the first attempt that opens the database.
fn write_within_budget(
    to: &Attempt,
    made: &mut Option<Made>,
    kept: &mut Option<PathBuf>,
) -> anyhow::Result<(Store, Backlog)> {
    let (config, write, log) = (to.config, to.write, to.log);
    let deadline = Instant::now() + config.wait_budget;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let err = match write_once(to, made, deadline, kept.is_some()) {
            Err(err) if store::is_busy(&err) => err,
            done => return done,
        };
        if kept.is_none() {
            match spill::keep(config, write, Durability::Kill) {
                Ok(k) => {
                    *kept = Some(k.path);
                    continue;
                }
                Err(spill_err) => log.important(
                    "WARN",
                    &format!("could not keep the event before waiting: {spill_err:#}"),
                ),
            };
        }
        // A brand-new database can refuse at once (switching to WAL takes an exclusive
        // lock that the busy timeout does not cover): retry, jittered, within the budget.
        let pause = jitter(attempt);
        if Instant::now() + pause >= deadline {
            return Err(err);
        }
        thread::sleep(pause);
    }
}

/// One attempt: open, make the answer (unless an earlier attempt made it), apply `write` with
/// what the answer gave (after waiting its turn when `wait`, the write already kept), then
/// take in a slice of the backlog.
fn write_once(
    to: &Attempt,
    made: &mut Option<Made>,
    deadline: Instant,
    wait: bool,
) -> anyhow::Result<(Store, Backlog)> {
    let (config, write, log) = (to.config, to.write, to.log);
    // A panic in SQLite or here must not cost the event: it is spilled like any failure.
    panic::catch_unwind(AssertUnwindSafe(|| {
        let mut store = Store::for_a_hook(config, deadline)?;
        if made.is_none()
            && let Some(answering) = to.answering
        {
            *made = Some(make(answering, &store));
        }
        let gift = made.as_ref().map(|m| Gift {
            giving: m.giving,
            gave: &m.gave,
        });
        // Only a run that has to wait pays for the spill file, and then waits its turn.
        let left_out = if wait {
            wait_and_apply(&mut store, config, (write, gift), deadline)?
        } else {
            store.wait_until(Instant::now())?;
            store.apply_giving(write, gift, || {})?
        };
        if let (Some(err), Some(gift)) = (left_out, gift) {
            let what = match gift.giving {
                Giving::Context => "the context",
                Giving::Recall => "recall",
            };
            log.line(
                "WARN",
                &format!("what {what} gave was not recorded: {err:#}"),
            );
        }
        let backlog = take_in(&mut store, config, log, to.slice);
        // An attempt that failed closes its connection; this one lasts until the exit.
        store.leave_to_exit();
        anyhow::Ok((store, backlog))
    }))
    .unwrap_or_else(|_| {
        Err(anyhow::anyhow!(
            "a panic while writing (see the line above)"
        ))
    })
}

/// The answer `answering` makes of `store`, in one read transaction (one snapshot, its locks
/// taken once rather than around each of its statements, ended before the write); the
/// acknowledgement alone when it panics (the message is in the log): the write goes on.
fn make(answering: Answering, store: &Store) -> Made {
    let reading = store.conn().execute_batch("BEGIN").is_ok();
    let made = panic::catch_unwind(AssertUnwindSafe(|| answering(store))).unwrap_or(Made {
        output: HookOutput::Ack,
        giving: Giving::Context,
        gave: Vec::new(),
    });
    if reading {
        let _ = store.conn().execute_batch("ROLLBACK");
    }
    made
}

/// The write kept before waiting, when waiting did not get it in: that copy now is the event.
fn kept_before_waiting(log: &Log, failure: &anyhow::Error, path: &Path) -> Recorded {
    // Make it last a power loss too.
    fsutil::sync_file(path);
    log.important(
        "WARN",
        &format!(
            "database unavailable ({failure:#}); event kept in {} for a later run",
            path.display()
        ),
    );
    Recorded {
        store: None,
        problem: refused(failure, path),
        answer: None,
    }
}

/// Applies `write` (with `gift`, see [`Store::apply_giving`]) once it is this run's turn to
/// wait for the lock, or sooner, when a look of its own between turns finds the database free
/// (the holder of the turn may be stopped).
fn wait_and_apply(
    store: &mut Store,
    config: &Config,
    (write, gift): (&Write, Option<Gift>),
    deadline: Instant,
) -> anyhow::Result<Option<rusqlite::Error>> {
    let mut looked = None;
    let waited = turn::take(&config.turn_lock(), deadline, &mut || {
        let tried = store
            .wait_until(Instant::now())
            .and_then(|()| store.apply_giving(write, gift, || {}));
        match tried {
            Err(err) if store::is_busy(&err) => false,
            done => {
                looked = Some(done);
                true
            }
        }
    });
    let turn = match waited {
        Waited::Done => return looked.unwrap_or(Ok(None)),
        Waited::TooLong => {
            anyhow::bail!("waited the whole budget behind other hooks waiting for the lock")
        }
        Waited::Turn(turn) => Some(turn),
        Waited::Unavailable => None,
    };
    store.wait_until(deadline)?;
    // The next waiter's turn begins as soon as this one has the lock.
    store.apply_giving(write, gift, || drop(turn))
}

/// Whether keeping an event in the spill folder is part of the plan (the data dir being set
/// up, a rebuild under way: logged as INFO) or a sign that something is wrong (WARN).
#[derive(Clone, Copy, PartialEq)]
enum Expected {
    Yes,
    No,
}

/// Keeps `write` in the spill folder after the database failed with `failure`.
fn keep(
    config: &Config,
    write: &Write,
    log: &Log,
    failure: &anyhow::Error,
    expected: Expected,
) -> Recorded {
    match spill::keep(config, write, Durability::PowerLoss) {
        Ok(kept) => {
            let how = if kept.reserve {
                " (in a reserve slot: the disk is full)"
            } else {
                ""
            };
            let level = if expected == Expected::Yes {
                "INFO"
            } else {
                "WARN"
            };
            log.important(
                level,
                &format!(
                    "database unavailable ({failure:#}); event kept in {}{how} for a later run",
                    kept.path.display()
                ),
            );
            Recorded {
                store: None,
                problem: refused(failure, &kept.path),
                answer: None,
            }
        }
        Err(err) => {
            log.important(
                "ERROR",
                &format!(
                    "database unavailable ({failure:#}) and the event could not be kept: {err:#}"
                ),
            );
            Recorded {
                store: None,
                problem: Some(Problem::EventLost {
                    why: short_reason(&err),
                }),
                answer: None,
            }
        }
    }
}

/// Applies a slice of the spill backlog, unless the maintenance process is at it already.
fn take_in(store: &mut Store, config: &Config, log: &Log, slice: Slice) -> Backlog {
    if !config.spill_dir().exists() && !config.fallback_dir().exists() {
        return Backlog::default();
    }
    let Some(_lock) = fsutil::try_lock(&config.maintain_lock()) else {
        return Backlog::default();
    };
    spill::ingest(store, config, log, slice)
}

/// Hands what a hook must not do itself to the maintenance process, or the checkpoint alone
/// to a process of its own.
fn after(config: &Config, store: &Store, backlog: &Backlog) {
    let maintenance = store.maintenance();
    if maintenance == Some(Maintenance::Scrub) {
        // Remembered across runs: until a checkpoint truncates the WAL, it holds old pages.
        crate::marks::ask_scrub(config);
    }
    if maintenance == Some(Maintenance::CopyBack) && backlog.waiting == 0 {
        if !detach::checkpoint(config) {
            store.copy_back_here();
        }
    } else if maintenance.is_some() || backlog.waiting > 0 {
        detach::maintain(config);
    }
}

fn refused(failure: &anyhow::Error, kept: &Path) -> Option<Problem> {
    store::is_refused(failure).then(|| Problem::Refused {
        why: short_reason(failure),
        kept_in: kept.parent().unwrap_or(kept).to_path_buf(),
    })
}

/// Spill files waiting too long or in too great a number.
fn piling(backlog: &Backlog) -> Option<Problem> {
    let since = backlog.oldest.as_deref().and_then(uuid_v7_millis)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let old = now.saturating_sub(since) > PILE_AGE_MS;
    (old || backlog.waiting > PILE_FILES).then(|| Problem::Piling {
        waiting: backlog.waiting,
        since: chrono::DateTime::from_timestamp_millis(since as i64)
            .map_or_else(String::new, |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
    })
}

/// The creation time of a UUID v7 (its first 48 bits), from a spill file name.
fn uuid_v7_millis(name: &str) -> Option<u64> {
    let hex: String = name.chars().filter(|c| *c != '-').take(12).collect();
    u64::from_str_radix(&hex, 16).ok()
}

/// The last cause of an error, which is the part a user can act on.
fn short_reason(err: &anyhow::Error) -> String {
    err.chain()
        .last()
        .map_or_else(String::new, |cause| cause.to_string())
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
