//! `compress`: runs the compressor (see `crate::compress`) and says what it did, with a
//! progress bar on a terminal; `--dry-run` prints the digests it would send instead.

use anyhow::{Result, anyhow};
use chrono::Utc;

use crate::cli::CompressArgs;
use crate::clock;
use crate::compress::cause::Cause;
use crate::compress::{self, DryBatch, Options, Report as Done, Stop};
use crate::config::Config;
use crate::emit::{Progress, Report};
use crate::recall::Recall;
use crate::render::{self, count, plural};
use crate::store::queue::Stats;
use crate::store::rows::short_id;

pub fn compress(args: &CompressArgs) -> Result<Report> {
    let config = Config::from_env();
    let session = match &args.session {
        Some(id) => Some(Recall::open_for_item(&config)?.resolve_session(id)?),
        None => None,
    };
    let options = Options {
        session,
        dry_run: args.dry_run,
        auto: args.auto,
    };
    let mut progress = Progress::new("compressing");
    let done = compress::run(&config, &options, &mut |d, t| progress.update(d, t))?;
    drop(progress);
    if args.auto {
        // Nobody reads a detached run's output: what it did is in the log.
        return Ok(Report::default());
    }
    let one_session = args.session.is_some();
    if args.dry_run {
        return Ok(dry_run(&done.dry, &done.queue, one_session).into());
    }
    let text = said(&done, &config, one_session);
    match &done.stop {
        Some(Stop::Unavailable(_) | Stop::Unreachable(..) | Stop::Failing(_)) => {
            Err(anyhow!("{}", text.trim_end().replace('\n', " ")))
        }
        _ => Ok(text.into()),
    }
}

/// What a run did, in a few lines.
fn said(done: &Done, config: &Config, one_session: bool) -> String {
    let left = Left {
        queue: &done.queue,
        shown: 0,
        one_session,
    };
    let mut out = String::new();
    if done.batches == 0 && done.stop.is_none() {
        out.push_str(&left.nothing());
    } else if done.items > 0 {
        out.push_str(&format!(
            "Compressed {} of {} into {} and {} ({}).\n",
            plural(done.items as i64, "item"),
            plural(done.sessions as i64, "session"),
            counted(done.memories, "memory", "memories"),
            counted(done.summaries, "summary", "summaries"),
            plural(done.batches as i64, "model call"),
        ));
    }
    if let Some(first) = done.failures.first() {
        out.push_str(&format!(
            "{} failed, to be tried again later (claude-mem queue stats shows them): {first}\n",
            counted(done.failures.len(), "batch", "batches"),
        ));
    }
    let waiting = waits(done.queue.waiting());
    match &done.stop {
        // The failures' line says already why their items wait.
        None if done.batches > 0 && done.failures.is_empty() => {
            if let Some(why) = left.why() {
                out.push_str(&format!(
                    "{} that this run could not take: {why}.\n",
                    waits(left.count())
                ));
            }
        }
        None | Some(Stop::Busy | Stop::Paused(_)) => {}
        Some(Stop::Budget) => out.push_str(&format!(
            "Stopped: today's budget of {} tokens is spent; {waiting} for tomorrow \
             (CLAUDE_MEM_COMPRESS_DAILY_TOKENS sets the budget).\n",
            count(config.compress.daily_tokens as i64)
        )),
        Some(Stop::Unavailable(why)) => out.push_str(&format!(
            "Stopped: the model cannot be run ({}): {why}; {waiting}, no attempt counted, no \
             token spent, and the hooks start no compressor for {}.\n",
            compress::model_description(config),
            for_how_long(done.paused_for.unwrap_or(Cause::Unavailable.pause())),
        )),
        Some(Stop::Unreachable(cause, why)) => out.push_str(&format!(
            "Stopped: the model answered with an error that is not about the items ({why}); \
             {waiting}, no attempt counted, and the hooks start no compressor for {}: {}.\n",
            for_how_long(done.paused_for.unwrap_or(cause.pause())),
            cause.remedy()
        )),
        Some(Stop::Failing(why)) => out.push_str(&format!(
            "Stopped after {} failed batches in a row: {why}; the hooks start no compressor \
             for {} (it doubles while batches keep failing).\n",
            done.failures.len(),
            for_how_long(done.paused_for.unwrap_or(Cause::Failing.pause())),
        )),
    }
    out.push_str(&format!(
        "Today: {} of {} tokens{}.\n",
        count(done.today.tokens),
        count(done.cap as i64),
        if done.today.cost_usd > 0.0 {
            format!(" (${:.4})", done.today.cost_usd)
        } else {
            String::new()
        }
    ));
    out
}

/// A pause's length in words: "15 minutes", "1 hour".
fn for_how_long(pause: std::time::Duration) -> String {
    let minutes = (pause.as_secs() / 60) as i64;
    if minutes % 60 == 0 {
        plural(minutes / 60, "hour")
    } else {
        plural(minutes, "minute")
    }
}

/// What waits for compression besides the items a run took or a dry run would send, and why
/// they were not: the same count as `doctor` and `status` give (`Stats::waiting`).
struct Left<'a> {
    /// The queue as the run left it.
    queue: &'a Stats,
    /// Items in the dry run's batches (a run's are done by then, no longer counted).
    shown: i64,
    /// `--session` was given.
    one_session: bool,
}

impl Left<'_> {
    /// What the run would have said was waiting, had it taken nothing: nothing, or what waits
    /// and why none of it could be taken.
    fn nothing(&self) -> String {
        match self.why() {
            None => "Nothing to compress: no captured items wait.\n".into(),
            Some(why) => format!(
                "Nothing to compress now: {}, none that this run can take: {why}.\n",
                waits(self.count())
            ),
        }
    }

    fn count(&self) -> i64 {
        (self.queue.waiting() - self.shown).max(0)
    }

    /// Why items that wait were not taken, part by part; `None` when none waits.
    fn why(&self) -> Option<String> {
        let queue = self.queue;
        let mut why = Vec::new();
        // Claimable, yet not in this run: of other sessions, or captured after it looked.
        let ready = (queue.ready - self.shown).max(0);
        if ready > 0 {
            why.push(if self.one_session {
                format!("{} of other sessions", count(ready))
            } else {
                format!(
                    "{} captured meanwhile (the next run takes them)",
                    count(ready)
                )
            });
        }
        if queue.claimed > 0 {
            let holders = queue.consumers.keys().cloned().collect::<Vec<_>>();
            why.push(format!(
                "{} held by {} under a lease that has not ended (claude-mem queue stats shows \
                 them)",
                count(queue.claimed),
                if holders.is_empty() {
                    "another consumer".to_string()
                } else {
                    holders.join(", ")
                }
            ));
        }
        if queue.retrying > 0 {
            let next = queue
                .next_retry
                .as_deref()
                .and_then(|at| render::seconds_between(&clock::stamp(Utc::now()), at))
                .map(|secs| format!(", the next in {}", render::duration(secs)))
                .unwrap_or_default();
            why.push(format!(
                "{} to be tried again after a failed batch{next}",
                count(queue.retrying)
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// "1 item waits", "2 items wait".
fn waits(n: i64) -> String {
    match n {
        1 => "1 item waits".into(),
        n => format!("{} wait", plural(n, "item")),
    }
}

fn dry_run(batches: &[DryBatch], queue: &Stats, one_session: bool) -> String {
    let items: usize = batches.iter().map(|b| b.items).sum();
    let left = Left {
        queue,
        shown: items as i64,
        one_session,
    };
    if batches.is_empty() {
        return left.nothing();
    }
    let mut out = String::new();
    for (n, batch) in batches.iter().enumerate() {
        out.push_str(&format!(
            "=== batch {} of session {}: {}, about {} tokens in (one call per tool call: \
             about {})\n{}\n",
            n + 1,
            short_id(&batch.session_id),
            plural(batch.items as i64, "item"),
            count(batch.tokens as i64),
            count(batch.one_call_each as i64),
            batch.digest
        ));
    }
    let tokens: u64 = batches.iter().map(|b| b.tokens).sum();
    let each: u64 = batches.iter().map(|b| b.one_call_each).sum();
    let sessions = {
        let mut ids: Vec<&str> = batches.iter().map(|b| b.session_id.as_str()).collect();
        ids.dedup();
        ids.len()
    };
    out.push_str(&format!(
        "{} of {} in {}: about {} tokens in, plus the answers. One call per tool call: {} \
         calls, about {} tokens in.\n",
        plural(items as i64, "item"),
        plural(sessions as i64, "session"),
        plural(batches.len() as i64, "call"),
        count(tokens as i64),
        count(items as i64),
        count(each as i64)
    ));
    if let Some(why) = left.why() {
        let more = match left.count() {
            1 => "1 more item waits".to_string(),
            n => format!("{} more items wait", count(n)),
        };
        out.push_str(&format!("{more}, not in these calls: {why}.\n"));
    }
    out
}

/// `n thing` or `n things`, the number with thousands separators.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", count(n as i64), if n == 1 { one } else { many })
}
