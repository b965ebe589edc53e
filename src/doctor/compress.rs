//! The checks of compression: whether it waits (a pause, and why), whether its model calls
//! fail, and what became of the items of failed batches. Each says what to do; `--fix` repairs
//! none of them: what they need is a login, a setting, or a retry that costs tokens, which is
//! the user's to choose.

use chrono::{DateTime, Local, Utc};

use super::{Check, Verdict};
use crate::compress::cause::{self, Cause};
use crate::compress::pause::{self, Pause};
use crate::config::Config;
use crate::render::{self, count, plural};
use crate::store::compressed::{self, Outlook, Settled};
use crate::store::queue::{Backoff, Stats};

/// This many failed calls in a row and compression is failing, not just unlucky: where a run
/// of the compressor stops too.
const FAILING: usize = crate::compress::FAILURES_IN_A_ROW;

/// The `compress` check, and the `queue` check when the database can be read (`readable`: it
/// is healthy and has the ledger).
pub fn checks(config: &Config, readable: bool) -> Vec<Check> {
    let now = Utc::now();
    let paused = pause::current(config);
    if !readable {
        return vec![calls(config, paused, None, now)];
    }
    match compressed::outlook(config, &crate::compress::today(), now) {
        Ok(outlook) => vec![
            calls(config, paused, Some(&outlook), now),
            queue(&outlook.queue),
        ],
        Err(err) => vec![
            Check::new(
                "compress",
                Verdict::Warn,
                format!("cannot read the ledger now ({err:#})"),
            )
            .fix("run claude-mem doctor again in a moment"),
        ],
    }
}

/// The model calls: a pause in force, else the latest calls.
fn calls(config: &Config, paused: Option<Pause>, o: Option<&Outlook>, now: DateTime<Utc>) -> Check {
    if let Some(pause) = paused {
        return on_pause(config, &pause, o);
    }
    let latest = o.map_or(&[][..], |o| o.calls.as_slice());
    let Some(last) = latest.first() else {
        return Check::ok(
            "compress",
            if o.is_none() && config.db_path().exists() {
                "the ledger of model calls cannot be read (the database check says why)"
            } else {
                "no model call yet"
            },
        );
    };
    match last.outcome.as_str() {
        "unavailable" => refused(last, Cause::Unavailable, now),
        "unreachable" => {
            let cause = last.error.as_deref().and_then(|e| cause::of_error(e, None));
            refused(last, cause.unwrap_or(Cause::Service), now)
        }
        _ => failing(config, latest, now).unwrap_or_else(|| {
            Check::ok(
                "compress",
                format!(
                    "{}; the last model call, {}, {}",
                    spend(config, o),
                    ago(&last.at, now),
                    if last.outcome == "stored" {
                        "stored its batch"
                    } else {
                        "was not needed (another compressor stored its batch)"
                    }
                ),
            )
        }),
    }
}

/// Paused: a failure when only the user can end it, else a warning; the fix says what ends it.
fn on_pause(config: &Config, pause: &Pause, o: Option<&Outlook>) -> Check {
    let cause = pause.cause.or_else(|| cause::of_error(&pause.why, None));
    let verdict = match cause {
        Some(cause) if cause.needs_you() => Verdict::Fail,
        _ => Verdict::Warn,
    };
    let mut message = format!(
        "paused until {}, when the hooks try again{}: {}",
        local(pause.until),
        pause.backing_off(),
        pause.why
    );
    if cause == Some(Cause::Budget) {
        message.push_str(&format!(" ({})", spend(config, o)));
    }
    if let Some(waiting) = o.map(|o| o.queue.waiting()).filter(|n| *n > 0) {
        message.push_str(&format!("; {} waiting", plural(waiting, "item")));
    }
    Check::new("compress", verdict, message)
        .fix(cause.map_or("claude-mem compress tries again now", Cause::remedy))
}

/// The last call could not reach a model, and its pause has ended: it may work now, unless
/// only the user can make it.
fn refused(last: &Settled, cause: Cause, now: DateTime<Utc>) -> Check {
    let verdict = if cause.needs_you() {
        Verdict::Fail
    } else {
        Verdict::Warn
    };
    Check::new(
        "compress",
        verdict,
        format!(
            "the last model call, {}, could not reach a model: {}",
            ago(&last.at, now),
            last.error.as_deref().unwrap_or("no reason given")
        ),
    )
    .fix(cause.remedy())
}

/// The latest calls failed their batches: a warning, a failure from [`FAILING`] in a row.
fn failing(config: &Config, latest: &[Settled], now: DateTime<Utc>) -> Option<Check> {
    let failed = latest
        .iter()
        .filter(|c| c.outcome != "superseded")
        .take_while(|c| matches!(c.outcome.as_str(), "invalid" | "failed" | "timeout"))
        .collect::<Vec<_>>();
    let last = failed.first()?;
    let verdict = if failed.len() >= FAILING {
        Verdict::Fail
    } else {
        Verdict::Warn
    };
    let which = match failed.len() {
        1 => "the last model call failed".to_string(),
        n => format!("the last {n} model calls failed"),
    };
    let fix = match last.outcome.as_str() {
        "timeout" => format!(
            "raise CLAUDE_MEM_COMPRESS_TIMEOUT (now {} s), or lower \
             CLAUDE_MEM_COMPRESS_BATCH_TOKENS (now {})",
            config.compress.timeout.as_secs(),
            count(config.compress.batch_tokens as i64)
        ),
        "invalid" => "the model's answers do not fit the schema: a larger model \
                      (CLAUDE_MEM_MODEL), or CLAUDE_MEM_COMPRESS_CMD's output as \
                      docs/compression.md shows it"
            .into(),
        _ => "the error says why; claude-mem compress runs a batch now and says what came of it"
            .into(),
    };
    Some(
        Check::new(
            "compress",
            verdict,
            format!(
                "{which}; the latest, {}: {}",
                ago(&last.at, now),
                last.error.as_deref().unwrap_or(&last.outcome)
            ),
        )
        .fix(fix),
    )
}

/// Items of failed batches: waiting for their retry, or failed for good.
fn queue(stats: &Stats) -> Check {
    let retrying = stats.retrying + stats.retry_due;
    let next = stats
        .next_retry
        .as_deref()
        .and_then(render::parse_time)
        .map(|at| format!(", the next at {}", local(at.timestamp().max(0) as u64)))
        .unwrap_or_default();
    let waiting = stats.waiting();
    // What waits, when more waits than the retries the message names: the count `compress`
    // and `status` give too.
    let total = |all: &str| {
        if waiting > retrying {
            format!("; {} waiting for compression{all}", plural(waiting, "item"))
        } else {
            String::new()
        }
    };
    if stats.failed > 0 {
        let also = match retrying {
            0 => total(""),
            n => format!("; {} to be tried again{next}{}", waits(n), total(" in all")),
        };
        let (are, them) = if stats.failed == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        return Check::new(
            "queue",
            Verdict::Warn,
            format!(
                "{} failed {} times and {are} kept as failed: nothing compresses {them}{also}",
                plural(stats.failed, "item"),
                Backoff::default().max_attempts
            ),
        )
        .fix(
            "once the cause is fixed (the compress check says it), claude-mem queue retry --all \
             puts them back in the queue",
        );
    }
    if retrying > 0 {
        return Check::new(
            "queue",
            Verdict::Warn,
            format!(
                "{} to be tried again after a failed batch{next}{}",
                waits(retrying),
                total(" in all")
            ),
        )
        .fix(
            "claude-mem compress takes them once their wait ends; claude-mem queue retry --all \
             puts them back now",
        );
    }
    Check::ok(
        "queue",
        format!(
            "{} waiting for compression, none failed",
            plural(waiting, "item")
        ),
    )
}

/// "1 item waits", "2 items wait".
fn waits(n: i64) -> String {
    match n {
        1 => "1 item waits".into(),
        n => format!("{} wait", plural(n, "item")),
    }
}

/// Today's spend against the budget.
fn spend(config: &Config, o: Option<&Outlook>) -> String {
    format!(
        "today {} of {} tokens",
        count(o.map_or(0, |o| o.today.tokens)),
        count(config.compress.daily_tokens.min(i64::MAX as u64) as i64)
    )
}

fn ago(stamp: &str, now: DateTime<Utc>) -> String {
    match render::parse_time(stamp) {
        Some(at) => format!("{} ago", render::duration((now - at).num_seconds())),
        None => stamp.to_string(),
    }
}

/// A moment in local time, as `status` shows a pause.
fn local(epoch: u64) -> String {
    DateTime::from_timestamp(epoch.min(i64::MAX as u64) as i64, 0)
        .map(|t| t.with_timezone(&Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}
