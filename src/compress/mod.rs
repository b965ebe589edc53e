//! The compressor: drains the queue into memories, one model call per batch of a session's
//! items rather than one per tool call, under a daily token budget, without ever losing or
//! doubling an item.
//!
//! - Items are taken through the queue's contract (`store::queue`): a session's items, whole
//!   turns in capture order, claimed in chunks under leases that outlast the model call. What
//!   does not fit a batch's input cap is released at once, uncounted.
//! - Each batch becomes one digest (`digest`), one call (`model`), one checked answer
//!   (`answer`). A valid answer is stored with its items' ack in one transaction
//!   (`store::compressed::save`); an invalid or partial one, or a model error, fails the
//!   batch as a whole (backoff, then kept as failed), storing nothing.
//! - Every call is entered in the ledger before it is made, inside the day's budget, and settled
//!   with the usage the model reports. When the budget is spent, items wait for the next day,
//!   released, never dropped.
//! - A compressor killed at any moment leaves its items claimed until their lease ends; then
//!   they are claimed again. A lease that ended while its compressor was still working means
//!   the ack is refused, so the late answer is not stored (the new holder stores its own).

mod answer;
pub mod cause;
mod digest;
#[cfg(target_os = "linux")]
pub mod guard;
mod model;
pub mod pause;
mod process;
mod rows;
mod verdict;

use std::time::Duration;

use anyhow::Result;
use chrono::{Local, Utc};

use crate::config::Config;
use crate::log::Log;
use crate::store::Store;
use crate::store::compressed::{self, Batch as Stored, Call, Saved, Spend};
use crate::store::queue::{self, Backoff, Claim, Item, MAX_LEASE, MIN_LEASE};
use crate::{clock, detach, fsutil};
use cause::Cause;
use verdict::{Asked, Verdict};

pub use model::describe as model_description;

/// Items claimed at a time while a batch fills.
const CHUNK: usize = 40;
/// Who holds claimed items, for `queue stats`.
const CONSUMER: &str = "claude-mem compress";
/// Tokens of every call besides the digest, our instructions and our schema: the CLI's own
/// system text, its environment block and the answer tool's wrapper (measured with the pinned
/// CLI 2.1.330: about 1,550 characters).
const CLI_OVERHEAD: u64 = 450;
/// Titles of a session's earlier memories shown with a later batch of it.
const EARLIER_SHOWN: usize = 30;
/// After this many failed batches in a row, the run stops: something is wrong beyond a batch.
pub const FAILURES_IN_A_ROW: usize = 3;
/// Passes over the sessions with work: items that arrive during a run get one more.
const PASSES: usize = 3;
/// The most of a failed batch's reason that is printed and kept.
const FAILURE_CHARS: usize = 400;
/// A writer's wait for the database: longer than a hook's, it holds nobody up.
const WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this session (a whole id).
    pub session: Option<String>,
    /// Print the digests and estimates; claim nothing, call nothing.
    pub dry_run: bool,
    /// Started by a hook: one per data dir, and not while paused.
    pub auto: bool,
}

/// Why a run stopped before the queue was empty.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The day's budget has no room for the next batch.
    Budget,
    /// No model program could be started.
    Unavailable(String),
    /// The model answered with an error that is not the batch's fault (login, credit, rate
    /// limit, overload, network): what it is about, and the error.
    Unreachable(cause::Cause, String),
    /// Several batches in a row failed.
    Failing(String),
    /// Started by a hook while paused.
    Paused(pause::Pause),
    /// Started by a hook while another compressor runs.
    Busy,
}

/// One batch of a dry run.
#[derive(Debug, Clone)]
pub struct DryBatch {
    pub session_id: String,
    pub items: usize,
    pub digest: String,
    /// Input tokens of the call, estimated: digest, instructions and the CLI's own.
    pub tokens: u64,
    /// What the same items would cost at one call each (the incumbent's way), estimated.
    pub one_call_each: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    pub sessions: usize,
    pub batches: usize,
    /// Items stored and acked.
    pub items: usize,
    pub memories: usize,
    pub summaries: usize,
    /// One line per batch that failed.
    pub failures: Vec<String>,
    pub stop: Option<Stop>,
    /// How long the hooks start no compressor after this run's stop (a pause that doubles
    /// while the model stays out of reach or its batches keep failing; see `pause`).
    pub paused_for: Option<Duration>,
    pub today: Spend,
    pub cap: u64,
    /// The queue when the run ended: what still waits, and why none of it could be taken.
    pub queue: queue::Stats,
    pub dry: Vec<DryBatch>,
}

/// Runs the compressor. `progress` is told `(items done, items to do)`.
pub fn run(
    config: &Config,
    options: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let mut report = Report {
        cap: config.compress.daily_tokens,
        ..Report::default()
    };
    // The hooks start one per data dir; one run by hand holds the lock when it is free, so
    // that they start none meanwhile, and runs anyway when it is not (the queue keeps two
    // compressors from ever taking the same item).
    let lock = fsutil::try_lock(&config.compress_lock());
    if options.auto {
        if lock.is_none() {
            report.stop = Some(Stop::Busy);
            return Ok(report);
        }
        if let Some(pause) = pause::current(config) {
            report.stop = Some(Stop::Paused(pause));
            return Ok(report);
        }
    }
    // Known before anything is read: a hook's run then ends in a few `stat`s, not a read of
    // the whole queue (5.7 to 7.7 s on 100,000 captures). A run by hand still counts what waits.
    let unavailable = (!options.dry_run)
        .then(|| model::unavailable(config))
        .flatten();
    if let Some(why) = &unavailable {
        report.paused_for = Some(pause::set_for(config, Cause::Unavailable, why));
        report.stop = Some(Stop::Unavailable(why.clone()));
        if options.auto {
            Log::new(config, "compress").line("INFO", &format!("stopped: {why}"));
            return Ok(report);
        }
    }
    if !config.db_path().exists() || crate::store::layout::pending(config) {
        return Ok(report);
    }
    let store = Store::open(config, std::time::Instant::now() + WAIT)?;
    store.set_wait(WAIT)?;
    let mut work = Work {
        config,
        store,
        log: Log::new(config, "compress"),
        report,
        failed_in_a_row: 0,
        seen: std::collections::BTreeSet::new(),
    };
    if options.dry_run {
        work.dry_run(options.session.as_deref())?;
    } else if unavailable.is_none() {
        work.drain(options.session.as_deref(), progress)?;
    }
    work.finish()
}

struct Work<'c> {
    config: &'c Config,
    store: Store,
    log: Log,
    report: Report,
    failed_in_a_row: usize,
    /// Sessions a batch was taken from.
    seen: std::collections::BTreeSet<String>,
}

/// A model call made for a batch: its ledger entry, the batch's key, what came of it.
struct Called<'a> {
    id: &'a str,
    key: &'a str,
    judged: &'a verdict::Judged,
}

/// A batch: items of one session in capture order, and the leases they are held under.
struct Batch {
    session_id: String,
    items: Vec<Item>,
    leases: Vec<(String, Vec<String>)>,
}

impl Work<'_> {
    fn drain(&mut self, only: Option<&str>, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        let mut done = 0u64;
        for _ in 0..PASSES {
            let sessions = self.sessions(only)?;
            if sessions.is_empty() {
                break;
            }
            let total = done + sessions.iter().map(|(_, n)| *n as u64).sum::<u64>();
            progress(done, total);
            for (session, _) in &sessions {
                while let Some(batch) = self.take(session)? {
                    self.seen.insert(session.clone());
                    done += batch.items.len() as u64;
                    self.compress(batch)?;
                    progress(done.min(total), total);
                    if self.report.stop.is_some() {
                        return Ok(());
                    }
                }
                if self.report.stop.is_some() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Sessions with claimable items, oldest work first (only `only` when given).
    fn sessions(&self, only: Option<&str>) -> Result<Vec<(String, i64)>> {
        let mut sessions = queue::sessions(self.store.conn(), Utc::now())?;
        if let Some(only) = only {
            sessions.retain(|(id, _)| id == only);
        }
        Ok(sessions)
    }

    /// Claims the next batch of `session`: chunks in capture order until the input cap is
    /// reached, the rest of the last chunk released. `None` when nothing is left to claim or
    /// the day's budget has no room for even a small batch.
    fn take(&mut self, session: &str) -> Result<Option<Batch>> {
        let Some(cap) = self.batch_cap()? else {
            self.stop(Stop::Budget);
            return Ok(None);
        };
        let project = self.project_of(session)?;
        let lease = lease(self.config.compress.timeout);
        let mut batch = Batch {
            session_id: session.to_string(),
            items: Vec::new(),
            leases: Vec::new(),
        };
        let mut cost = 0;
        let mut rest: Vec<(String, String)> = Vec::new();
        loop {
            let claim = Claim {
                consumer: CONSUMER,
                limit: CHUNK,
                lease,
                kind: None,
                session: Some(session),
            };
            let mut chunk = queue::claim(self.store.conn(), &claim, Utc::now())?;
            self.tidy()?;
            let whole = chunk.len() == CHUNK;
            chunk.sort_by(|a, b| a.created_at.cmp(&b.created_at));
            for item in chunk {
                let item_cost = digest::cost(&item, project.as_deref());
                if !rest.is_empty() || (!batch.items.is_empty() && cost + item_cost > cap) {
                    rest.push((item.lease_token, item.id));
                    continue;
                }
                cost += item_cost;
                match batch
                    .leases
                    .iter_mut()
                    .find(|(t, _)| *t == item.lease_token)
                {
                    Some((_, ids)) => ids.push(item.id.clone()),
                    None => batch
                        .leases
                        .push((item.lease_token.clone(), vec![item.id.clone()])),
                }
                batch.items.push(item);
            }
            if !whole || !rest.is_empty() {
                break;
            }
        }
        for (token, id) in rest {
            queue::release(self.store.conn(), &token, &[id], Utc::now())?;
        }
        Ok((!batch.items.is_empty()).then_some(batch))
    }

    /// The input cap of the next batch: the configured one, or what is left of the day's
    /// budget once a call's fixed part is paid, whichever is smaller; `None` when that leaves
    /// too little to be worth a call.
    fn batch_cap(&self) -> Result<Option<u64>> {
        let spent = compressed::spent(self.store.conn(), &today())?
            .tokens
            .max(0) as u64;
        let left = self.config.compress.daily_tokens.saturating_sub(spent);
        let fixed = fixed_cost(true) + output_reserve(CHUNK);
        let cap = self
            .config
            .compress
            .batch_tokens
            .min(left.saturating_sub(fixed));
        Ok((cap >= 200).then_some(cap))
    }

    fn project_of(&self, session: &str) -> Result<Option<String>> {
        Ok(compressed::session_context(self.store.conn(), session, 0)?.project_dir)
    }

    /// One batch: its digest to the model, and the answer stored, or the batch failed or
    /// given back.
    fn compress(&mut self, batch: Batch) -> Result<()> {
        let session = self.session(&batch.session_id, &batch.items)?;
        let digest = digest::render(&batch.items, &session);
        let asked = Asked {
            items: batch.items.len(),
            wants_summary: digest.wants_summary,
            estimate: digest::tokens(&digest.text)
                + fixed_cost(digest.wants_summary)
                + output_reserve(batch.items.len()),
            timeout: self.config.compress.timeout,
        };
        let key = batch_key(&batch.items);
        let call_id = clock::new_id();
        let call = Call {
            id: &call_id,
            day: &today(),
            batch: &key,
            items: batch.items.len(),
            model: Some(&self.config.compress.model),
            estimate: asked.estimate,
        };
        let cap = self.config.compress.daily_tokens;
        if !compressed::reserve(self.store.conn(), &call, cap, Utc::now())? {
            self.give_back(&batch)?;
            self.stop(Stop::Budget);
            return Ok(());
        }
        let request = model::Request {
            digest: &digest.text,
            system: &answer::instructions(digest.wants_summary),
            schema: &answer::schema(batch.items.len(), digest.wants_summary),
        };
        let judged = verdict::judge(model::call(self.config, &request), asked);
        if judged.called {
            self.report.batches += 1;
        }
        let called = Called {
            id: &call_id,
            key: &key,
            judged: &judged,
        };
        match &judged.verdict {
            Verdict::GiveBack(cause, why) => {
                self.settle(&called, judged.outcome, judged.error.as_deref())?;
                self.give_back(&batch)?;
                self.report.paused_for = Some(pause::set_for(self.config, *cause, why));
                self.stop(match cause {
                    Cause::Unavailable => Stop::Unavailable(why.clone()),
                    _ => Stop::Unreachable(*cause, why.clone()),
                });
                Ok(())
            }
            Verdict::Fail(why) => {
                self.settle(&called, judged.outcome, judged.error.as_deref())?;
                self.fail(&batch, why)
            }
            Verdict::Store(answer) => {
                self.keep(&batch, answer, session.project.as_deref(), &called)
            }
        }
    }

    /// Stores a checked answer with its items' ack, unless their lease was lost meanwhile.
    fn keep(
        &mut self,
        batch: &Batch,
        answer: &answer::Answer,
        project: Option<&str>,
        called: &Called,
    ) -> Result<()> {
        let (memories, summary) = rows::rows(answer, &batch.items, project, &self.config.redactor);
        let model = called.judged.model.as_deref();
        let stored = Stored {
            key: called.key,
            session_id: &batch.session_id,
            project_dir: project,
            model: Some(model.unwrap_or(&self.config.compress.model)),
            memories: &memories,
            summary: summary.as_ref(),
        };
        match compressed::save(self.store.conn(), &stored, &batch.leases, Utc::now())? {
            Saved::Stored {
                memories,
                summaries,
            } => {
                self.settle(called, "stored", None)?;
                self.report.items += batch.items.len();
                self.report.memories += memories;
                self.report.summaries += summaries;
                self.failed_in_a_row = 0;
                pause::clear(self.config);
            }
            Saved::NotHeld(id, now) => {
                let why = format!(
                    "not stored: item {id} is {now} (its lease ended during the call; its new \
                     holder compresses it)"
                );
                self.settle(called, "superseded", Some(&why))?;
                self.log.line("WARN", &why);
                self.give_back(batch)?;
            }
        }
        Ok(())
    }

    /// Enters in the ledger what a call used and how it ended.
    fn settle(&self, called: &Called, outcome: &str, error: Option<&str>) -> Result<()> {
        // The error may quote the model's answer, which is made of the user's captures.
        let error = error.map(|e| crate::privacy::clean_text(&self.config.redactor, e));
        compressed::settle_call(
            self.store.conn(),
            called.id,
            called.judged.model.as_deref(),
            &called.judged.usage,
            outcome,
            error.as_deref(),
            Utc::now(),
        )
    }

    /// What the digest says about the batch's session: its project, the prompts of the
    /// batch's turns, what is already remembered of it.
    fn session(&self, session_id: &str, items: &[Item]) -> Result<digest::Session> {
        let conn = self.store.conn();
        let context = compressed::session_context(conn, session_id, EARLIER_SHOWN)?;
        let mut prompts = std::collections::BTreeMap::new();
        for number in items.iter().filter_map(|i| i.prompt_number) {
            if let std::collections::btree_map::Entry::Vacant(slot) = prompts.entry(number)
                && let Some(text) = compressed::prompt_text(conn, session_id, number)?
            {
                slot.insert(text);
            }
        }
        Ok(digest::Session {
            id: session_id.to_string(),
            project: context
                .project_dir
                .or_else(|| items.iter().find_map(|i| i.project_dir.clone())),
            prompts,
            earlier: context.earlier,
            summary: context.summary.map(|s| {
                [
                    ("asked", s.request),
                    ("done", s.completed),
                    ("next", s.next_steps),
                ]
                .into_iter()
                .filter(|(_, text)| !text.trim().is_empty())
                .map(|(label, text)| format!("{label}: {}", text.trim()))
                .collect::<Vec<_>>()
                .join("; ")
            }),
        })
    }

    /// The batch failed: an attempt counted for each item (retried after a backoff, kept as
    /// failed after the last).
    fn fail(&mut self, batch: &Batch, why: &str) -> Result<()> {
        // Printed and logged: it may quote the model's answer (a type it made up, a value
        // serde found wrong), which is made of the user's captures.
        let why = &model::told(why, &self.config.redactor, FAILURE_CHARS);
        for (token, ids) in &batch.leases {
            queue::fail(
                self.store.conn(),
                &self.config.redactor,
                token,
                ids,
                why,
                &Backoff::default(),
                Utc::now(),
            )?;
        }
        self.tidy()?;
        self.log.line(
            "WARN",
            &format!("a batch of {} items failed: {why}", batch.items.len()),
        );
        self.report.failures.push(why.to_string());
        self.failed_in_a_row += 1;
        if self.failed_in_a_row >= FAILURES_IN_A_ROW {
            // Something is wrong beyond a batch: the hooks back off rather than start a run
            // at every session's end that fails the next batches the same way.
            let said = format!("{FAILURES_IN_A_ROW} batches failed in a row, the last: {why}");
            self.report.paused_for = Some(pause::set_for(self.config, Cause::Failing, &said));
            self.stop(Stop::Failing(why.to_string()));
        }
        Ok(())
    }

    /// The batch goes back to the queue untouched: not its fault.
    fn give_back(&mut self, batch: &Batch) -> Result<()> {
        for (token, ids) in &batch.leases {
            queue::release(self.store.conn(), token, ids, Utc::now())?;
        }
        self.tidy()?;
        Ok(())
    }

    /// Keeps the WAL bounded after writes, as a hook would (which leaves the connection
    /// waiting for no lock), then waits for locks again as a consumer may.
    fn tidy(&mut self) -> Result<()> {
        self.store.after_write();
        self.store.set_wait(WAIT)
    }

    fn stop(&mut self, stop: Stop) {
        if stop == Stop::Budget {
            pause::set(
                self.config,
                next_midnight(),
                Cause::Budget,
                0,
                "the daily token budget is spent",
            );
        }
        self.report.stop = Some(stop);
    }

    /// Every session's batches as they would be made now, without claiming anything.
    fn dry_run(&mut self, only: Option<&str>) -> Result<()> {
        let cap = self.config.compress.batch_tokens;
        for (session, count) in self.sessions(only)? {
            self.report.sessions += 1;
            let items = queue::peek(self.store.conn(), &session, count as usize, Utc::now())?;
            let project = self.project_of(&session)?;
            let mut rest = items.as_slice();
            while !rest.is_empty() {
                let mut cost = 0;
                let take = rest
                    .iter()
                    .position(|item| {
                        cost += digest::cost(item, project.as_deref());
                        cost > cap
                    })
                    .unwrap_or(rest.len())
                    .max(1);
                let (items, later) = rest.split_at(take);
                rest = later;
                let context = self.session(&session, items)?;
                let digest = digest::render(items, &context);
                let tokens = digest::tokens(&digest.text) + fixed_cost(digest.wants_summary);
                let one_call_each = items
                    .iter()
                    .map(|i| fixed_cost(false) + digest::tokens(i.raw_output.get()))
                    .sum();
                self.report.dry.push(DryBatch {
                    session_id: session.clone(),
                    items: items.len(),
                    digest: digest.text,
                    tokens,
                    one_call_each,
                });
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Report> {
        if self.report.dry.is_empty() {
            self.report.sessions = self.seen.len();
        }
        let conn = self.store.conn();
        self.report.today = compressed::spent(conn, &today())?;
        self.report.queue = queue::stats(conn, Utc::now())?;
        self.tidy()?;
        if self.store.maintenance().is_some() {
            detach::maintain(self.config);
        }
        let r = &self.report;
        if r.batches > 0 || r.stop.is_some() {
            self.log.line(
                "INFO",
                &format!(
                    "{} items into {} memories and {} summaries in {} calls, {} failed; today \
                     {} of {} tokens; {} items left{}",
                    r.items,
                    r.memories,
                    r.summaries,
                    r.batches,
                    r.failures.len(),
                    r.today.tokens,
                    r.cap,
                    r.queue.waiting(),
                    r.stop
                        .as_ref()
                        .map(|s| format!("; stopped: {s:?}"))
                        .unwrap_or_default()
                ),
            );
        }
        Ok(self.report)
    }
}

/// Tokens of a call besides the digest: our instructions and schema, and the CLI's own.
fn fixed_cost(wants_summary: bool) -> u64 {
    let schema = answer::schema(CHUNK, wants_summary).to_string();
    digest::tokens(&answer::instructions(wants_summary)) + digest::tokens(&schema) + CLI_OVERHEAD
}

/// Tokens the answer to `items` items is expected to take.
fn output_reserve(items: usize) -> u64 {
    (300 + 40 * items as u64).min(4000)
}

/// The lease of a claim: the call's deadline and a margin for the digest and the store.
fn lease(timeout: Duration) -> Duration {
    (timeout + timeout / 4 + Duration::from_secs(5)).clamp(MIN_LEASE, MAX_LEASE)
}

/// The same items make the same key, whichever claim and lease they came under.
fn batch_key(items: &[Item]) -> String {
    let mut ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
    ids.sort_unstable();
    format!(
        "{:016x}-{}",
        crate::config::fnv1a(ids.join("\n").as_bytes()),
        ids.len()
    )
}

/// The local date the budget counts in.
pub fn today() -> String {
    Local::now().format("%Y-%m-%d").to_string()
}

/// The start of the next local day, in seconds since the epoch.
fn next_midnight() -> u64 {
    let tomorrow = Local::now().date_naive().succ_opt().unwrap_or_default();
    tomorrow
        .and_hms_opt(0, 0, 0)
        .and_then(|t| t.and_local_timezone(Local).earliest())
        .map_or(0, |t| t.timestamp().max(0) as u64)
}
