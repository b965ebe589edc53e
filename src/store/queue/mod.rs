//! The queue's contract with its consumers (a summarizer, the compressor, a user's script):
//! items are claimed under a lease, then acked, failed or released. Any number of consumers may
//! work at once, from any process, because each step is one short IMMEDIATE transaction and
//! every answer is fenced by the token of the lease it answers for.
//!
//! - A claim picks and marks its items in one statement of one write transaction, so two
//!   claims never pick the same item. An item is claimable when it is raw, when its lease has
//!   ended (its consumer died or is too slow), or when the backoff after a failure has ended.
//! - Each claim draws a fresh random token. Ack, fail and release name it, and change an item
//!   only while it is claimed under that token: once another consumer has claimed the item,
//!   the first one's answer changes nothing (and says so), so an item is acked at most once.
//!   Until then a late answer still counts: nobody else holds the item.
//! - The write lock is held only to mark the items (a few milliseconds for a hundred): their
//!   bodies, up to the payload cap each, are read after the commit in one read statement, and
//!   only those still held under the new token are returned.
//! - A consumer killed at any point loses nothing: its items come back when its lease ends.
//!   Delivery is at least once: an item whose lease ends before its ack is handed out again.

pub mod compressed;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::privacy::secrets::Redactor;
use crate::{clock, privacy};

/// Most items one claim may take: the claim's write transaction grows with it.
pub const MAX_CLAIM: usize = 1000;
pub const MIN_LEASE: Duration = Duration::from_secs(1);
pub const MAX_LEASE: Duration = Duration::from_secs(24 * 3600);
/// A consumer's error text is kept to this many characters.
const MAX_ERROR_CHARS: usize = 2000;
/// `retry --all` puts failed items back this many per transaction, so that hooks never wait
/// behind one long write.
const RETRY_CHUNK: i64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Observation,
    Summary,
}

/// What one claim asks for.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    /// Who holds the items, for people reading `stats` (the token is what fences).
    pub consumer: &'a str,
    pub limit: usize,
    pub lease: Duration,
    /// Only items of this kind; `None` for both.
    pub kind: Option<Kind>,
    /// Only items of this session, and then in the order they were captured rather than by
    /// priority: a consumer that works turn by turn (the compressor) gets whole turns.
    pub session: Option<&'a str>,
}

/// A claimed item: one JSON Lines object of `claude-mem queue claim`, fields in this order.
#[derive(Debug, Serialize)]
pub struct Item {
    pub id: String,
    /// `observation` or `summary`.
    pub kind: String,
    pub session_id: String,
    pub prompt_id: Option<String>,
    pub prompt_number: Option<i64>,
    pub tool_use_id: Option<String>,
    /// PostToolUse, PostToolUseFailure or Stop.
    pub event: String,
    pub tool_name: Option<String>,
    pub project_dir: Option<String>,
    /// 0 high, 1 normal, 2 low.
    pub priority: i64,
    pub created_at: String,
    /// Failed attempts so far.
    pub attempts: i64,
    pub last_error: Option<String>,
    pub truncated: bool,
    pub payload_bytes: i64,
    pub files_touched: Vec<String>,
    /// The stored JSON object as it is (a row damaged by hand: its text as a JSON string).
    pub raw_output: Box<RawValue>,
    pub lease_token: String,
    pub lease_until: String,
    pub claimed_by: String,
}

/// When a failed item is tried again, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    /// Wait after the first failure, the second, …; the last one repeats.
    pub delays: Vec<Duration>,
    /// The failure that makes this many attempts is final.
    pub max_attempts: u32,
}

impl Default for Backoff {
    fn default() -> Backoff {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        Backoff {
            delays: vec![minutes(1), minutes(5), minutes(30), minutes(120)],
            max_attempts: 5,
        }
    }
}

impl Backoff {
    /// The wait after failed attempt number `attempt` (from 1).
    fn delay(&self, attempt: i64) -> Duration {
        let index = usize::try_from(attempt.saturating_sub(1)).unwrap_or(0);
        self.delays
            .get(index)
            .or(self.delays.last())
            .copied()
            .unwrap_or_default()
    }
}

/// What an ack, fail, release or retry did to one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Acked, released or retried now.
    Done,
    /// Failed now, after this many attempts; claimable again from `at`.
    RetryAt { attempts: i64, at: String },
    /// Failed now, for good: that was the last of this many attempts.
    GaveUp { attempts: i64 },
    /// This lease had already done the same to it: nothing changed.
    Already,
    /// Not held under this lease (another consumer claimed it since, or it was settled
    /// otherwise): nothing changed. What the item is now.
    NotHeld(String),
    /// `retry` of an item that has not failed: nothing changed. What the item is now.
    NotFailed(String),
    /// No item has this id.
    Unknown,
}

/// How many items are in each state. `ready` is what a claim could take now.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub ready: i64,
    pub raw: i64,
    /// Held under a running lease.
    pub claimed: i64,
    /// Claimed, but the lease has ended: claimable.
    pub expired: i64,
    /// Failed, waiting for the end of the backoff.
    pub retrying: i64,
    /// Failed, backoff over: claimable.
    pub retry_due: i64,
    /// Failed for good.
    pub failed: i64,
    pub done: i64,
    pub oldest_raw: Option<String>,
    pub next_retry: Option<String>,
    /// Items held under a running lease, by consumer.
    pub consumers: BTreeMap<String, i64>,
}

impl Stats {
    /// What waits for compression: every item neither done nor failed for good, whether a
    /// claim could take it now, a consumer holds it under a running lease, or it waits for the
    /// end of its backoff. The one count that `compress`, `doctor` and `status` call waiting.
    pub fn waiting(&self) -> i64 {
        self.ready + self.claimed + self.retrying
    }
}

/// Marks up to `claim.limit` items claimed and returns them, high priority first, then oldest.
/// Empty when there is nothing to claim.
pub fn claim(conn: &Connection, claim: &Claim, now: DateTime<Utc>) -> Result<Vec<Item>> {
    if claim.limit == 0 || claim.limit > MAX_CLAIM {
        bail!("a claim takes 1 to {MAX_CLAIM} items, not {}", claim.limit);
    }
    if !(MIN_LEASE..=MAX_LEASE).contains(&claim.lease) {
        bail!("a lease lasts 1 second to 24 hours");
    }
    let token = clock::new_id();
    let at = clock::stamp(now);
    let until = clock::stamp(now + chrono::Duration::from_std(claim.lease)?);
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // What private turns left may not wait for the maintenance process: no consumer gets it.
    crate::store::write::purge::all_left(&tx)?;
    let limit = claim.limit as i64;
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![&limit, &at, &claim.consumer, &until, &token];
    if let Some(session) = &claim.session {
        values.push(session);
    }
    let ids: Vec<String> = tx
        .prepare(&claim_sql(claim.kind, claim.session.is_some()))?
        .query_map(values.as_slice(), |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    tx.commit()?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = serde_json::to_string(&ids)?;
    let items = conn
        .prepare(READ_CLAIMED)?
        .query_map(params![ids, token], item)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(items)
}

/// Marks items done. An item acked twice under the same lease is [`Outcome::Already`].
pub fn ack(
    conn: &Connection,
    token: &str,
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<(String, Outcome)>> {
    settle(conn, token, ids, now, &Settle::Ack)
}

/// [`ack`] inside the caller's write transaction: what a consumer stores of the items and their
/// ack commit together, or neither does (a crash between the two cannot store twice).
pub fn ack_in(
    tx: &Transaction,
    token: &str,
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<(String, Outcome)>> {
    settle_in(tx, token, ids, now, &Settle::Ack)
}

/// Records a failed attempt: the item is claimable again after its backoff, or, at the last
/// attempt, failed for good.
///
/// The error is stored as `last_error` once its private parts and secrets are gone (with
/// `redactor`'s rules): a consumer's error may quote what it was handling (a model's answer,
/// made of the user's captures, or the request with its key).
pub fn fail(
    conn: &Connection,
    redactor: &Redactor,
    token: &str,
    ids: &[String],
    error: &str,
    backoff: &Backoff,
    now: DateTime<Utc>,
) -> Result<Vec<(String, Outcome)>> {
    let error: String = redactor
        .redact(&privacy::strip(error))
        .chars()
        .take(MAX_ERROR_CHARS)
        .collect();
    settle(conn, token, ids, now, &Settle::Fail { error, backoff })
}

/// Gives items back unprocessed: claimable at once, no attempt counted.
pub fn release(
    conn: &Connection,
    token: &str,
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<(String, Outcome)>> {
    settle(conn, token, ids, now, &Settle::Release)
}

/// Puts failed items (waiting for their backoff, or failed for good) back in the queue at once,
/// with their attempts counted from zero again.
pub fn retry(
    conn: &Connection,
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<(String, Outcome)>> {
    let at = clock::stamp(now);
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let mut answers = Vec::with_capacity(ids.len());
    {
        let mut read = tx.prepare(READ_STATE)?;
        let mut put_back = tx.prepare(RETRY)?;
        for id in ids {
            let outcome = match read.query_row([id], State::from_row).optional()? {
                None => Outcome::Unknown,
                Some(state) if state.status == "failed" => {
                    put_back.execute(params![id, at])?;
                    Outcome::Done
                }
                Some(state) => Outcome::NotFailed(state.describe(&at)),
            };
            answers.push((id.clone(), outcome));
        }
    }
    tx.commit()?;
    Ok(answers)
}

/// [`retry`] of every failed item; returns how many were put back.
pub fn retry_all(conn: &Connection, now: DateTime<Utc>) -> Result<usize> {
    let at = clock::stamp(now);
    let mut total = 0;
    loop {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let moved = tx.execute(RETRY_SOME, params![RETRY_CHUNK, at])?;
        tx.commit()?;
        total += moved;
        if moved < RETRY_CHUNK as usize {
            return Ok(total);
        }
    }
}

/// The items a claim of `session` would take now, up to `limit`, in the same order, without
/// taking them (a dry run). Lease fields are as stored (empty when there is none).
pub fn peek(
    conn: &Connection,
    session: &str,
    limit: usize,
    now: DateTime<Utc>,
) -> Result<Vec<Item>> {
    let items = conn
        .prepare(&peek_sql())?
        .query_map(params![session, clock::stamp(now), limit as i64], item)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(items)
}

/// The sessions that have claimable items, with how many, the one with the oldest such item
/// first. One read.
pub fn sessions(conn: &Connection, now: DateTime<Utc>) -> Result<Vec<(String, i64)>> {
    let rows = conn
        .prepare(SESSIONS)?
        .query_map([clock::stamp(now)], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Counts by state, in one statement (one short read).
pub fn stats(conn: &Connection, now: DateTime<Utc>) -> Result<Stats> {
    let at = clock::stamp(now);
    let (mut stats, failed_in_all, consumers) = conn.query_row(STATS, [&at], |row| {
        let stats = Stats {
            raw: row.get(0)?,
            claimed: row.get(1)?,
            expired: row.get(2)?,
            retrying: row.get(3)?,
            retry_due: row.get(4)?,
            done: row.get(6)?,
            oldest_raw: row.get(7)?,
            next_retry: row.get(8)?,
            ..Stats::default()
        };
        Ok((stats, row.get::<_, i64>(5)?, row.get::<_, String>(9)?))
    })?;
    stats.failed = failed_in_all - stats.retrying - stats.retry_due;
    stats.ready = stats.raw + stats.expired + stats.retry_due;
    stats.consumers = serde_json::from_str(&consumers)?;
    Ok(stats)
}

/// Takes the best `?1` of the three kinds of claimable items. Each part walks only its own
/// items, through an index: raw ones in drain order up to the limit, claimed ones whose lease
/// has ended, and failed ones whose backoff is over (`+status` and the hints keep SQLite from
/// walking every claimed or failed item instead); then the few found are sorted.
fn claim_sql(kind: Option<Kind>, session: bool) -> String {
    if session {
        return session_claim_sql(kind);
    }
    let (raw, filter) = match kind {
        None => ("pending_queue", ""),
        Some(Kind::Observation) => ("pending_queue", " AND kind = 'observation'"),
        // Without the hint SQLite prefers the drain index and walks every raw observation.
        Some(Kind::Summary) => (
            "pending_queue INDEXED BY pending_queue_raw_summaries",
            " AND kind = 'summary'",
        ),
    };
    format!(
        "UPDATE pending_queue
            SET status = 'claimed', claimed_by = ?3, claimed_at = ?2, lease_until = ?4,
                lease_token = ?5, retry_at = NULL, updated_at = ?2
          WHERE id IN (SELECT id FROM (
                SELECT * FROM (SELECT id, priority, created_at FROM {raw}
                                WHERE status = 'raw'{filter}
                                ORDER BY priority, created_at LIMIT ?1)
                UNION ALL
                SELECT id, priority, created_at FROM pending_queue INDEXED BY pending_queue_leases
                 WHERE status = 'claimed' AND lease_until <= ?2{filter}
                UNION ALL
                SELECT id, priority, created_at FROM pending_queue
                 WHERE +status = 'failed' AND retry_at <= ?2{filter}
              ) ORDER BY priority, created_at LIMIT ?1)
          RETURNING id"
    )
}

/// A session's (?6) claimable items in capture order, through the session's index: the walk is
/// as long as the session, which only a consumer's claim pays for.
fn session_claim_sql(kind: Option<Kind>) -> String {
    let filter = match kind {
        None => "",
        Some(Kind::Observation) => " AND kind = 'observation'",
        Some(Kind::Summary) => " AND kind = 'summary'",
    };
    format!(
        "UPDATE pending_queue
            SET status = 'claimed', claimed_by = ?3, claimed_at = ?2, lease_until = ?4,
                lease_token = ?5, retry_at = NULL, updated_at = ?2
          WHERE id IN (SELECT id FROM pending_queue
                        WHERE session_id = ?6 AND {CLAIMABLE}{filter}
                        ORDER BY created_at, rowid LIMIT ?1)
          RETURNING id"
    )
}

/// What a claim may take at ?2: raw, or a lease or a backoff that has ended.
const CLAIMABLE: &str = "(status = 'raw' OR (status = 'claimed' AND lease_until <= ?2)
                             OR (status = 'failed' AND retry_at <= ?2))";
/// A session's (?1) claimable items at ?2 in capture order, at most ?3, as they are.
fn peek_sql() -> String {
    format!(
        "SELECT id, kind, session_id, prompt_id, prompt_number, tool_use_id, event, tool_name,
                project_dir, priority, created_at, attempts, last_error, truncated,
                payload_bytes, files_touched, raw_output, coalesce(lease_token, ''),
                coalesce(lease_until, ''), coalesce(claimed_by, '')
           FROM pending_queue
          WHERE session_id = ?1 AND {CLAIMABLE}
          ORDER BY created_at, rowid LIMIT ?3"
    )
}
/// Each kind of claimable item walks its own index, as in a claim.
const SESSIONS: &str = "SELECT session_id, COUNT(*) FROM (
        SELECT session_id, created_at FROM pending_queue WHERE status = 'raw'
        UNION ALL
        SELECT session_id, created_at FROM pending_queue INDEXED BY pending_queue_leases
         WHERE status = 'claimed' AND lease_until <= ?1
        UNION ALL
        SELECT session_id, created_at FROM pending_queue
         WHERE +status = 'failed' AND retry_at <= ?1)
  GROUP BY session_id ORDER BY min(created_at)";
const READ_CLAIMED: &str = "SELECT id, kind, session_id, prompt_id, prompt_number, tool_use_id,
        event, tool_name, project_dir, priority, created_at, attempts, last_error, truncated,
        payload_bytes, files_touched, raw_output, lease_token, lease_until, claimed_by
   FROM pending_queue
  WHERE id IN (SELECT value FROM json_each(?1)) AND lease_token = ?2
  ORDER BY priority, created_at";
const READ_STATE: &str = "SELECT status, lease_token, attempts, claimed_by, lease_until, retry_at
   FROM pending_queue WHERE id = ?1";
const ACK: &str = "UPDATE pending_queue SET status = 'done', lease_until = NULL, updated_at = ?2
  WHERE id = ?1";
const RELEASE: &str = "UPDATE pending_queue SET status = 'raw', lease_until = NULL, updated_at = ?2
  WHERE id = ?1";
const FAIL: &str = "UPDATE pending_queue SET status = 'failed', attempts = ?3, last_error = ?4,
        retry_at = ?5, lease_until = NULL, updated_at = ?2
  WHERE id = ?1";
const RETRY: &str = "UPDATE pending_queue SET status = 'raw', attempts = 0, retry_at = NULL,
        lease_token = NULL, lease_until = NULL, updated_at = ?2
  WHERE id = ?1";
const RETRY_SOME: &str = "UPDATE pending_queue SET status = 'raw', attempts = 0, retry_at = NULL,
        lease_token = NULL, lease_until = NULL, updated_at = ?2
  WHERE id IN (SELECT id FROM pending_queue WHERE status = 'failed' LIMIT ?1)";
/// Failed items are counted whole through the drain index; those waiting for a retry through
/// their partial index; the difference failed for good.
const STATS: &str = "SELECT
    (SELECT COUNT(*) FROM pending_queue WHERE status = 'raw'),
    (SELECT COUNT(*) FROM pending_queue WHERE status = 'claimed' AND lease_until > ?1),
    (SELECT COUNT(*) FROM pending_queue WHERE status = 'claimed' AND lease_until <= ?1),
    (SELECT COUNT(*) FROM pending_queue WHERE +status = 'failed' AND retry_at > ?1),
    (SELECT COUNT(*) FROM pending_queue WHERE +status = 'failed' AND retry_at <= ?1),
    (SELECT COUNT(*) FROM pending_queue WHERE status = 'failed'),
    (SELECT COUNT(*) FROM pending_queue WHERE status = 'done'),
    (SELECT MIN(created_at) FROM pending_queue WHERE status = 'raw'),
    (SELECT MIN(retry_at) FROM pending_queue WHERE retry_at > ?1),
    (SELECT json_group_object(consumer, n) FROM (
        SELECT IFNULL(claimed_by, '') AS consumer, COUNT(*) AS n FROM pending_queue
         WHERE status = 'claimed' AND lease_until > ?1 GROUP BY 1))";

fn item(row: &Row) -> rusqlite::Result<Item> {
    let files: String = row.get(15)?;
    let raw: String = row.get(16)?;
    let raw_output = match RawValue::from_string(raw) {
        Ok(json) => json,
        Err(_) => serde_json::value::to_raw_value(&row.get::<_, String>(16)?)
            .map_err(|err| rusqlite::Error::ToSqlConversionFailure(err.into()))?,
    };
    Ok(Item {
        id: row.get(0)?,
        kind: row.get(1)?,
        session_id: row.get(2)?,
        prompt_id: row.get(3)?,
        prompt_number: row.get(4)?,
        tool_use_id: row.get(5)?,
        event: row.get(6)?,
        tool_name: row.get(7)?,
        project_dir: row.get(8)?,
        priority: row.get(9)?,
        created_at: row.get(10)?,
        attempts: row.get(11)?,
        last_error: row.get(12)?,
        truncated: row.get(13)?,
        payload_bytes: row.get(14)?,
        files_touched: serde_json::from_str(&files).unwrap_or_default(),
        raw_output,
        lease_token: row.get(17)?,
        lease_until: row.get(18)?,
        claimed_by: row.get(19)?,
    })
}

/// An answer to a claim.
enum Settle<'a> {
    Ack,
    Fail { error: String, backoff: &'a Backoff },
    Release,
}

impl Settle<'_> {
    /// The status this answer leaves an item in: finding it there under the same token means
    /// the same answer was given before.
    fn leaves(&self) -> &'static str {
        match self {
            Settle::Ack => "done",
            Settle::Fail { .. } => "failed",
            Settle::Release => "raw",
        }
    }
}

/// One transaction for all of `ids`: each is changed only while claimed under `token`.
fn settle(
    conn: &Connection,
    token: &str,
    ids: &[String],
    now: DateTime<Utc>,
    answer: &Settle,
) -> Result<Vec<(String, Outcome)>> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let answers = settle_in(&tx, token, ids, now, answer)?;
    tx.commit()?;
    Ok(answers)
}

fn settle_in(
    tx: &Transaction,
    token: &str,
    ids: &[String],
    now: DateTime<Utc>,
    answer: &Settle,
) -> Result<Vec<(String, Outcome)>> {
    let at = clock::stamp(now);
    let mut answers = Vec::with_capacity(ids.len());
    let mut read = tx.prepare_cached(READ_STATE)?;
    for id in ids {
        let outcome = match read.query_row([id], State::from_row).optional()? {
            None => Outcome::Unknown,
            Some(state) if state.token.as_deref() != Some(token) => {
                Outcome::NotHeld(state.describe(&at))
            }
            Some(state) if state.status == "claimed" => apply(tx, id, &state, answer, now, &at)?,
            Some(state) if state.status == answer.leaves() => Outcome::Already,
            Some(state) => Outcome::NotHeld(state.describe(&at)),
        };
        answers.push((id.clone(), outcome));
    }
    Ok(answers)
}

fn apply(
    tx: &Transaction,
    id: &str,
    state: &State,
    answer: &Settle,
    now: DateTime<Utc>,
    at: &str,
) -> Result<Outcome> {
    Ok(match answer {
        Settle::Ack => {
            tx.execute(ACK, params![id, at])?;
            Outcome::Done
        }
        Settle::Release => {
            tx.execute(RELEASE, params![id, at])?;
            Outcome::Done
        }
        Settle::Fail { error, backoff } => {
            let attempts = state.attempts + 1;
            let retry_at = (attempts < i64::from(backoff.max_attempts))
                .then(|| chrono::Duration::from_std(backoff.delay(attempts)))
                .transpose()?
                .map(|delay| clock::stamp(now + delay));
            tx.execute(FAIL, params![id, at, attempts, error, retry_at])?;
            match retry_at {
                Some(at) => Outcome::RetryAt { attempts, at },
                None => Outcome::GaveUp { attempts },
            }
        }
    })
}

/// Where an item stands, as far as answering for it goes.
struct State {
    status: String,
    token: Option<String>,
    attempts: i64,
    claimed_by: Option<String>,
    lease_until: Option<String>,
    retry_at: Option<String>,
}

impl State {
    fn from_row(row: &Row) -> rusqlite::Result<State> {
        Ok(State {
            status: row.get(0)?,
            token: row.get(1)?,
            attempts: row.get(2)?,
            claimed_by: row.get(3)?,
            lease_until: row.get(4)?,
            retry_at: row.get(5)?,
        })
    }

    /// For the person told that an answer changed nothing.
    fn describe(&self, now: &str) -> String {
        let by = self.claimed_by.as_deref().unwrap_or("?");
        match (self.status.as_str(), &self.lease_until, &self.retry_at) {
            ("claimed", Some(until), _) if until.as_str() > now => {
                format!("claimed by {by} until {until}")
            }
            ("claimed", _, _) => format!("claimed by {by}, whose lease has ended"),
            ("done", _, _) => "acked".into(),
            ("raw", _, _) => "waiting in the queue".into(),
            ("failed", _, Some(at)) => format!("failed, to be retried from {at}"),
            ("failed", _, None) => "failed for good".into(),
            (other, _, _) => format!("in state {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    fn queue() -> Connection {
        testing::database()
    }

    fn add(conn: &Connection, id: &str, kind: &str, priority: i64, at: &str) {
        conn.execute(
            "INSERT INTO pending_queue (id, kind, session_id, event, raw_output, priority,
                 created_at, updated_at)
             VALUES (?1, ?2, 's', 'PostToolUse', '{}', ?3, ?4, ?4)",
            params![id, kind, priority, at],
        )
        .unwrap();
    }

    fn t(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
    }

    fn take(conn: &Connection, limit: usize, now: DateTime<Utc>) -> Vec<Item> {
        let request = Claim {
            consumer: "test",
            limit,
            lease: Duration::from_secs(60),
            kind: None,
            session: None,
        };
        claim(conn, &request, now).unwrap()
    }

    /// Regression guard for the hooks: a claim holds the write lock while it picks, so each
    /// part must walk only its own items, never a whole status or the table.
    #[test]
    fn every_statement_finds_its_rows_through_an_index() {
        let conn = queue();
        let kinds = [None, Some(Kind::Observation), Some(Kind::Summary)];
        let mut statements: Vec<String> = kinds
            .into_iter()
            .flat_map(|kind| [claim_sql(kind, false), claim_sql(kind, true)])
            .collect();
        statements.extend(
            [
                READ_CLAIMED,
                READ_STATE,
                ACK,
                RELEASE,
                FAIL,
                RETRY,
                RETRY_SOME,
                STATS,
                SESSIONS,
            ]
            .map(String::from),
        );
        statements.push(peek_sql());
        for sql in &statements {
            let lines = testing::plan(&conn, sql);
            // Walking the partial index of raw summaries is walking only what it takes.
            let scans: Vec<&String> = lines
                .iter()
                .filter(|l| {
                    l.starts_with("SCAN pending_queue")
                        && !l.ends_with("USING INDEX pending_queue_raw_summaries")
                })
                .collect();
            assert!(scans.is_empty(), "{sql}\n{lines:#?}");
            // Items in flight and failed ones (those that failed for good pile up) are reached
            // through their partial indexes, never by walking the whole status.
            let plan = lines.join("\n");
            if sql.contains("session_id = ?") {
                assert!(plan.contains("(session_id=?)"), "{plan}");
            } else if sql.contains("SET status = 'claimed'") {
                assert!(
                    plan.contains("pending_queue_leases (lease_until<?)"),
                    "{plan}"
                );
                assert!(
                    plan.contains("pending_queue_retries (retry_at<?)"),
                    "{plan}"
                );
            }
        }
        let summaries = testing::plan(&conn, &claim_sql(Some(Kind::Summary), false));
        assert!(
            summaries
                .iter()
                .any(|l| l.contains("pending_queue_raw_summaries")),
            "{summaries:#?}"
        );
    }

    #[test]
    fn a_failure_waits_its_backoff_then_comes_back_until_the_last_attempt() {
        let conn = queue();
        add(&conn, "a", "observation", 1, "2023-11-14T22:13:20.000Z");
        let backoff = Backoff {
            delays: vec![Duration::from_secs(60), Duration::from_secs(300)],
            max_attempts: 4,
        };
        let mut now = t(0);
        // Waits of 60 s, then 300 s, then 300 s again (the last delay repeats).
        for (attempt, wait) in [(1, 60), (2, 300), (3, 300)] {
            let item = take(&conn, 1, now).pop().unwrap();
            assert_eq!(item.attempts, attempt - 1);
            let answer = fail(
                &conn,
                &Redactor::default(),
                &item.lease_token,
                &[item.id],
                "boom",
                &backoff,
                now,
            )
            .unwrap();
            let at = clock::stamp(now + chrono::Duration::seconds(wait));
            assert_eq!(
                answer[0].1,
                Outcome::RetryAt {
                    attempts: attempt,
                    at
                }
            );
            assert!(take(&conn, 1, now + chrono::Duration::seconds(wait - 1)).is_empty());
            now += chrono::Duration::seconds(wait);
        }
        let item = take(&conn, 1, now).pop().unwrap();
        assert_eq!(item.last_error.as_deref(), Some("boom"));
        let answer = fail(
            &conn,
            &Redactor::default(),
            &item.lease_token,
            &[item.id],
            "boom",
            &backoff,
            now,
        )
        .unwrap();
        assert_eq!(answer[0].1, Outcome::GaveUp { attempts: 4 });
        assert!(take(&conn, 1, now + chrono::Duration::days(365)).is_empty());
        let stats = stats(&conn, now).unwrap();
        assert_eq!((stats.failed, stats.retrying, stats.ready), (1, 0, 0));
    }

    #[test]
    fn the_default_backoff_is_one_five_thirty_minutes_then_two_hours() {
        let backoff = Backoff::default();
        let minutes: Vec<u64> = (1..=6).map(|a| backoff.delay(a).as_secs() / 60).collect();
        assert_eq!(minutes, [1, 5, 30, 120, 120, 120]);
        assert_eq!(backoff.max_attempts, 5);
    }

    /// A lease that ended counts as raw again, in its place by priority and age, not after
    /// every raw item.
    #[test]
    fn an_expired_lease_is_claimable_in_drain_order() {
        let conn = queue();
        add(
            &conn,
            "old-low",
            "observation",
            2,
            "2023-11-14T22:13:20.000Z",
        );
        add(&conn, "high", "observation", 0, "2023-11-14T22:13:21.000Z");
        add(
            &conn,
            "new-low",
            "observation",
            2,
            "2023-11-14T22:13:22.000Z",
        );
        let first = take(&conn, 1, t(0));
        assert_eq!(first[0].id, "high");
        assert_eq!(take(&conn, 1, t(59))[0].id, "old-low");
        // At the end of the first lease, "high" comes before the raw "new-low".
        let again = take(&conn, 2, t(60));
        let ids: Vec<&str> = again.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["high", "new-low"]);
        assert_ne!(again[0].lease_token, first[0].lease_token);
    }

    #[test]
    fn stored_text_that_is_not_json_still_makes_a_line() {
        let conn = queue();
        add(&conn, "a", "observation", 1, "2023-11-14T22:13:20.000Z");
        conn.execute_batch(
            "UPDATE pending_queue SET raw_output = 'not {json', files_touched = 'x'",
        )
        .unwrap();
        let item = take(&conn, 1, t(0)).pop().unwrap();
        assert_eq!(item.raw_output.get(), "\"not {json\"");
        assert!(item.files_touched.is_empty());
    }
}
