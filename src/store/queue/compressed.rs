//! What the compressor keeps (memories and session summaries, schema v6) and what it spends
//! (the ledger of model calls), and the reads of both.
//!
//! A batch's memories and summary are stored, and its queue items acked, in one transaction:
//! either the items are done and their memories are there, or neither (a crash in between
//! cannot store twice, nor lose the items). Each row also carries a key made from the batch, so
//! that storing the same batch again changes nothing. The ledger row of a call is written
//! before the call, inside the same check of the day's budget, so that compressors running at
//! once never spend more than the cap between them, and a call whose compressor died still
//! counts.

use anyhow::Result;
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::{self as queue, Outcome};
use crate::clock;
use crate::config::{Config, MAX_CALL_COST_USD, MAX_CALL_TOKENS};
use crate::store::rows::{
    self, MEMORY_COLUMNS, Memory, MemoryText, SUMMARY_COLUMNS, Summary, SummaryText,
};

/// A typed observation to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    pub text: MemoryText,
    pub queue_ids: Vec<String>,
    pub prompt_number: Option<i64>,
    pub created_at: String,
}

/// A session summary to store: the session as of the batch's last turn.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSummary {
    pub text: SummaryText,
    pub files_read: Vec<String>,
    pub files_edited: Vec<String>,
    pub queue_ids: Vec<String>,
    pub prompt_number: Option<i64>,
    pub created_at: String,
}

/// What one batch made, for one session.
#[derive(Debug, Clone)]
pub struct Batch<'a> {
    /// Derived from the batch's items: the same items make the same key.
    pub key: &'a str,
    pub session_id: &'a str,
    pub project_dir: Option<&'a str>,
    pub model: Option<&'a str>,
    pub memories: &'a [NewMemory],
    pub summary: Option<&'a NewSummary>,
}

/// The items of a batch, by the lease each was claimed under.
pub type Leases = [(String, Vec<String>)];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// Stored and acked; how many rows were new.
    Stored { memories: usize, summaries: usize },
    /// An item is no longer held under its lease (it ended and another consumer claimed it):
    /// nothing was stored, that consumer stores it. The item and what it is now.
    NotHeld(String, String),
}

/// Stores a batch and acks its items in one transaction; nothing at all when an item is not
/// held any more.
pub fn save(
    conn: &Connection,
    batch: &Batch,
    leases: &Leases,
    now: DateTime<Utc>,
) -> Result<Saved> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    for (token, ids) in leases {
        for (id, outcome) in queue::ack_in(&tx, token, ids, now)? {
            match outcome {
                Outcome::Done | Outcome::Already => {}
                Outcome::NotHeld(now) => return Ok(Saved::NotHeld(id, now)),
                other => return Ok(Saved::NotHeld(id, format!("{other:?}"))),
            }
        }
    }
    let mut memories = 0;
    for (n, memory) in batch.memories.iter().enumerate() {
        let text = memory.text.clone();
        memories += rows::insert_memory(
            &tx,
            &Memory {
                id: clock::new_id(),
                key: format!("{}/{n}", batch.key),
                session_id: batch.session_id.into(),
                project_dir: batch.project_dir.map(Into::into),
                prompt_number: memory.prompt_number,
                kind: text.kind,
                title: text.title,
                subtitle: None,
                narrative: text.narrative,
                facts: text.facts,
                concepts: text.concepts,
                files_read: text.files_read,
                files_modified: text.files_modified,
                queue_ids: memory.queue_ids.clone(),
                origin: "compressor".into(),
                model: batch.model.map(Into::into),
                extra: None,
                created_at: memory.created_at.clone(),
            },
        )?;
    }
    let mut summaries = 0;
    if let Some(s) = batch.summary {
        let text = s.text.clone();
        summaries += rows::insert_summary(
            &tx,
            &Summary {
                id: clock::new_id(),
                key: format!("{}/summary", batch.key),
                session_id: batch.session_id.into(),
                project_dir: batch.project_dir.map(Into::into),
                prompt_number: s.prompt_number,
                request: text.request,
                investigated: text.investigated,
                learned: text.learned,
                completed: text.completed,
                next_steps: text.next_steps,
                notes: None,
                files_read: s.files_read.clone(),
                files_edited: s.files_edited.clone(),
                queue_ids: s.queue_ids.clone(),
                origin: "compressor".into(),
                model: batch.model.map(Into::into),
                extra: None,
                created_at: s.created_at.clone(),
            },
        )?;
    }
    tx.commit()?;
    Ok(Saved::Stored {
        memories,
        summaries,
    })
}

/// A model call about to be made, with the tokens it is expected to use.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub id: &'a str,
    /// The local date the budget is counted in.
    pub day: &'a str,
    pub batch: &'a str,
    pub items: usize,
    pub model: Option<&'a str>,
    pub estimate: u64,
}

/// What a call used, as the model reported it (or the estimate, when it reported nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost_usd: Option<f64>,
    /// No report: `input` is the estimate.
    pub estimated: bool,
}

/// The most one ledger row counts for in a day's sum: all four kinds at their maximum.
const MAX_ROW_TOKENS: i64 = 4 * MAX_CALL_TOKENS as i64;

impl Usage {
    /// Every token read and written, cached ones included: what the budget counts.
    pub fn tokens(&self) -> u64 {
        [self.input, self.output, self.cache_read, self.cache_write]
            .into_iter()
            .map(|n| n.min(MAX_CALL_TOKENS))
            .sum()
    }
}

/// A count as stored: at most [`MAX_CALL_TOKENS`].
fn stored(n: u64) -> i64 {
    n.min(MAX_CALL_TOKENS) as i64
}

/// Records `call` as pending if the day's spend leaves room for its estimate under `cap`;
/// returns whether it did (nothing is written when it does not fit).
pub fn reserve(conn: &Connection, call: &Call, cap: u64, now: DateTime<Utc>) -> Result<bool> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let spent: f64 = tx.query_row(SPENT_TOKENS, params![call.day, MAX_ROW_TOKENS], |r| {
        r.get(0)
    })?;
    if (spent as u64).saturating_add(call.estimate) > cap {
        return Ok(false);
    }
    let at = clock::stamp(now);
    tx.execute(
        "INSERT INTO compress_calls (id, day, batch, items, model, tokens, estimated, outcome,
                                     created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 'pending', ?7, ?7)",
        params![
            call.id,
            call.day,
            call.batch,
            call.items as i64,
            call.model,
            call.estimate.min(MAX_ROW_TOKENS as u64) as i64,
            at
        ],
    )?;
    tx.commit()?;
    Ok(true)
}

/// Settles a pending call with what it used and how it ended (`stored`, `invalid`, `failed`,
/// `timeout`, `unavailable`, `unreachable`).
pub fn settle_call(
    conn: &Connection,
    id: &str,
    model: Option<&str>,
    usage: &Usage,
    outcome: &str,
    error: Option<&str>,
    now: DateTime<Utc>,
) -> Result<()> {
    conn.execute(
        "UPDATE compress_calls SET tokens = ?2, input_tokens = ?3, output_tokens = ?4,
                cache_read_tokens = ?5, cache_write_tokens = ?6, cost_usd = ?7, estimated = ?8,
                outcome = ?9, error = ?10, model = coalesce(?11, model), updated_at = ?12
          WHERE id = ?1",
        params![
            id,
            usage.tokens() as i64,
            stored(usage.input),
            stored(usage.output),
            stored(usage.cache_read),
            stored(usage.cache_write),
            usage
                .cost_usd
                .filter(|c| c.is_finite())
                .map(|c| c.clamp(0.0, MAX_CALL_COST_USD)),
            usage.estimated,
            outcome,
            error,
            model,
            clock::stamp(now)
        ],
    )?;
    Ok(())
}

/// What was spent on one day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    pub tokens: i64,
    pub cost_usd: f64,
    pub calls: i64,
}

/// What was spent on `day`. Each row counts within the bounds a call can reach, and the sums
/// are SQLite's `total` (a float, which never raises "integer overflow" as `sum` does): rows an
/// earlier release stored from absurd reports (2^64 − 1 as −1, 2^63 as −2^63) cannot make the
/// day unreadable.
pub fn spent(conn: &Connection, day: &str) -> Result<Spend> {
    Ok(conn.query_row(
        "SELECT total(min(max(tokens, 0), ?2)), total(min(max(cost_usd, 0), ?3)), count(*)
           FROM compress_calls WHERE day = ?1",
        params![day, MAX_ROW_TOKENS, MAX_CALL_COST_USD],
        |r| {
            Ok(Spend {
                tokens: r.get::<_, f64>(0)? as i64,
                cost_usd: r.get(1)?,
                calls: r.get(2)?,
            })
        },
    )?)
}

/// A call that ended, as the ledger has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// stored, invalid, failed, timeout, unavailable, unreachable or superseded.
    pub outcome: String,
    pub error: Option<String>,
    /// When it ended.
    pub at: String,
}

/// Compression as `doctor` judges it: the latest calls that ended, newest first, the queue's
/// items by state, and what `day` spent.
#[derive(Debug, Clone)]
pub struct Outlook {
    pub calls: Vec<Settled>,
    pub queue: queue::Stats,
    pub today: Spend,
}

/// Reads the [`Outlook`] from the database file as it is: read-only, and without what opening
/// it for a command may do first (moving an earlier release's files, upgrading the schema),
/// which `doctor` reports instead. The database must be healthy and have the ledger (v6).
pub fn outlook(config: &Config, day: &str, now: DateTime<Utc>) -> Result<Outlook> {
    let conn = crate::store::base::files::open_file_read_only(&config.db_path())?;
    let mut calls = latest_calls(&conn, LATEST_CALLS)?;
    // Errors are redacted when settled; a row an earlier build settled is redacted here, as
    // `doctor` shows it.
    for call in &mut calls {
        if let Some(error) = &mut call.error {
            *error = crate::privacy::clean_text(&config.redactor, error).into_owned();
        }
    }
    Ok(Outlook {
        calls,
        queue: queue::stats(&conn, now)?,
        today: spent(&conn, day)?,
    })
}

/// How many of the latest calls `doctor` looks at.
const LATEST_CALLS: usize = 10;

/// The latest `limit` calls that ended, newest first: the ledger walked back in the order the
/// calls were made, which stops after `limit` of them.
fn latest_calls(conn: &Connection, limit: usize) -> Result<Vec<Settled>> {
    let calls = conn
        .prepare_cached(LATEST)?
        .query_map([limit as i64], |r| {
            Ok(Settled {
                outcome: r.get(0)?,
                error: r.get(1)?,
                at: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(calls)
}

pub fn memory(conn: &Connection, id: &str) -> Result<Option<Memory>> {
    Ok(conn
        .prepare_cached(&format!("{MEMORY_COLUMNS} WHERE id = ?1"))?
        .query_row([id], rows::memory)
        .optional()?)
}

pub fn summary(conn: &Connection, id: &str) -> Result<Option<Summary>> {
    Ok(conn
        .prepare_cached(&format!("{SUMMARY_COLUMNS} WHERE id = ?1"))?
        .query_row([id], rows::summary)
        .optional()?)
}

/// A session's memories in the order of the work they describe.
pub fn session_memories(conn: &Connection, session_id: &str) -> Result<Vec<Memory>> {
    let rows = conn
        .prepare_cached(&format!(
            "{MEMORY_COLUMNS} WHERE session_id = ?1 ORDER BY created_at, rowid"
        ))?
        .query_map([session_id], rows::memory)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// A session's summaries, oldest first (the last is the session as it ended).
pub fn session_summaries(conn: &Connection, session_id: &str) -> Result<Vec<Summary>> {
    let rows = conn
        .prepare_cached(&format!(
            "{SUMMARY_COLUMNS} WHERE session_id = ?1 ORDER BY created_at, rowid"
        ))?
        .query_map([session_id], rows::summary)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// What the compressor tells the model about a session besides the batch: its project, the
/// titles of what is already remembered of it (the latest first, at most `limit`), and its
/// latest summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionContext {
    pub project_dir: Option<String>,
    /// (type, title), oldest first.
    pub earlier: Vec<(String, String)>,
    pub summary: Option<Summary>,
}

pub fn session_context(
    conn: &Connection,
    session_id: &str,
    limit: usize,
) -> Result<SessionContext> {
    let project_dir = conn
        .query_row(
            "SELECT project_dir FROM sessions WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    let mut earlier: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT type, title FROM memories WHERE session_id = ?1
              ORDER BY created_at DESC, rowid DESC LIMIT ?2",
        )?
        .query_map(params![session_id, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    earlier.reverse();
    let summary = conn
        .prepare_cached(&format!(
            "{SUMMARY_COLUMNS} WHERE session_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1"
        ))?
        .query_row([session_id], rows::summary)
        .optional()?;
    Ok(SessionContext {
        project_dir,
        earlier,
        summary,
    })
}

/// The text of a session's prompt `number`, if it was stored.
pub fn prompt_text(conn: &Connection, session_id: &str, number: i64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT prompt_text FROM user_prompts WHERE session_id = ?1 AND prompt_number = ?2",
        )?
        .query_row(params![session_id, number], |r| r.get(0))
        .optional()?)
}

const SPENT_TOKENS: &str =
    "SELECT total(min(max(tokens, 0), ?2)) FROM compress_calls WHERE day = ?1";
const LATEST: &str = "SELECT outcome, error, updated_at FROM compress_calls
  WHERE outcome <> 'pending' ORDER BY rowid DESC LIMIT ?1";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    fn t(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
    }

    fn call<'a>(id: &'a str, estimate: u64) -> Call<'a> {
        Call {
            id,
            day: "2023-11-14",
            batch: "b",
            items: 1,
            model: Some("haiku"),
            estimate,
        }
    }

    #[test]
    fn a_call_is_reserved_only_while_the_day_has_room_for_it() {
        let conn = testing::database();
        assert!(reserve(&conn, &call("a", 600), 1000, t(0)).unwrap());
        assert!(!reserve(&conn, &call("b", 500), 1000, t(1)).unwrap());
        // Settled with less than estimated: the room comes back.
        let usage = Usage {
            input: 200,
            output: 50,
            cost_usd: Some(0.001),
            ..Usage::default()
        };
        settle_call(&conn, "a", None, &usage, "stored", None, t(2)).unwrap();
        assert!(reserve(&conn, &call("b", 500), 1000, t(3)).unwrap());
        let spend = spent(&conn, "2023-11-14").unwrap();
        assert_eq!((spend.tokens, spend.calls), (750, 2));
        assert_eq!(spent(&conn, "2023-11-15").unwrap(), Spend::default());
    }

    #[test]
    fn the_latest_calls_that_ended_come_newest_first() {
        let conn = testing::database();
        for (n, id) in ["a", "b", "c"].into_iter().enumerate() {
            assert!(reserve(&conn, &call(id, 10), 1000, t(n as i64)).unwrap());
        }
        let usage = Usage::default();
        settle_call(&conn, "a", None, &usage, "stored", None, t(5)).unwrap();
        settle_call(&conn, "b", None, &usage, "timeout", Some("late"), t(6)).unwrap();
        let calls = latest_calls(&conn, 10).unwrap();
        let seen: Vec<_> = calls
            .iter()
            .map(|c| (c.outcome.as_str(), c.error.as_deref()))
            .collect();
        assert_eq!(seen, [("timeout", Some("late")), ("stored", None)]);
        assert_eq!(latest_calls(&conn, 1).unwrap().len(), 1);
    }

    fn claimed(conn: &Connection, ids: &[&str], at: i64) -> String {
        for id in ids {
            conn.execute(
                "INSERT OR IGNORE INTO pending_queue (id, session_id, event, raw_output,
                     created_at, updated_at)
                 VALUES (?1, 's', 'PostToolUse', '{}', ?2, ?2)",
                params![id, clock::stamp(t(0))],
            )
            .unwrap();
        }
        let claim = queue::Claim {
            consumer: "test",
            limit: 10,
            lease: std::time::Duration::from_secs(60),
            kind: None,
            session: Some("s"),
        };
        let items = queue::claim(conn, &claim, t(at)).unwrap();
        items
            .first()
            .map(|i| i.lease_token.clone())
            .unwrap_or_default()
    }

    fn batch<'a>(memories: &'a [NewMemory]) -> Batch<'a> {
        Batch {
            key: "k-2",
            session_id: "s",
            project_dir: None,
            model: Some("m"),
            memories,
            summary: None,
        }
    }

    fn memory() -> NewMemory {
        NewMemory {
            text: MemoryText {
                kind: "bugfix".into(),
                title: "t".into(),
                narrative: "n".into(),
                facts: vec![],
                concepts: vec![],
                files_read: vec![],
                files_modified: vec![],
            },
            queue_ids: vec!["a".into(), "b".into()],
            prompt_number: None,
            created_at: clock::stamp(t(0)),
        }
    }

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// A batch stored again (a replay, the same answer twice) stores nothing more.
    #[test]
    fn storing_a_batch_twice_stores_it_once() {
        let conn = testing::database();
        let token = claimed(&conn, &["a", "b"], 0);
        let leases = [(token, vec!["a".to_string(), "b".to_string()])];
        let memories = [memory()];
        let first = save(&conn, &batch(&memories), &leases, t(1)).unwrap();
        assert_eq!(
            first,
            Saved::Stored {
                memories: 1,
                summaries: 0
            }
        );
        let again = save(&conn, &batch(&memories), &leases, t(2)).unwrap();
        assert_eq!(
            again,
            Saved::Stored {
                memories: 0,
                summaries: 0
            }
        );
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM memories"), 1);
        assert_eq!(
            count(
                &conn,
                "SELECT COUNT(*) FROM pending_queue WHERE status = 'done'"
            ),
            2
        );
    }

    /// Once the lease has ended and another consumer holds an item, the late answer stores
    /// nothing at all, and acks nothing.
    #[test]
    fn a_lost_lease_stores_nothing_of_the_batch() {
        let conn = testing::database();
        let old = claimed(&conn, &["a", "b"], 0);
        let new = claimed(&conn, &[], 61);
        assert_ne!(old, new);
        let leases = [(old, vec!["a".to_string(), "b".to_string()])];
        let memories = [memory()];
        let saved = save(&conn, &batch(&memories), &leases, t(62)).unwrap();
        assert!(
            matches!(saved, Saved::NotHeld(ref id, _) if id == "a"),
            "{saved:?}"
        );
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM memories"), 0);
        assert_eq!(
            count(
                &conn,
                "SELECT COUNT(*) FROM pending_queue WHERE status = 'claimed'"
            ),
            2
        );
    }

    #[test]
    fn the_reads_find_their_rows_through_an_index() {
        let conn = testing::database();
        for sql in [
            format!("{MEMORY_COLUMNS} WHERE id = ?1"),
            format!("{MEMORY_COLUMNS} WHERE session_id = ?1 ORDER BY created_at, rowid"),
            format!("{SUMMARY_COLUMNS} WHERE session_id = ?1 ORDER BY created_at, rowid"),
            SPENT_TOKENS.to_string(),
        ] {
            let plan = testing::plan(&conn, &sql).join("\n");
            assert!(!plan.contains("SCAN"), "{sql}\n{plan}");
        }
    }
}
