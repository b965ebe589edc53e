//! Retention: the database stays bounded without anyone deleting by hand.
//!
//! The policy (`Config::retention`; each rule is turned off by a 0 in its variable):
//! - 30 days after a session was last active, its tool calls keep only their digest: what the
//!   search index holds of them (`store::doc::digest`: the input fields a call is remembered by,
//!   the start and end of its answer), so search finds them as before and `show` prints the
//!   digest. Prompts and Claude's messages stay whole. This loses nothing the index holds, so
//!   it is safe before anything summarizes the queue; once summaries are stored (issue 11),
//!   the rows they cover can go whole.
//! - 365 days after a session was last active, it is deleted with everything in it.
//! - Past the size cap (1 GiB of live data), the oldest sessions are reduced, then deleted,
//!   oldest first, until the database is under it; never a session active in the last day.
//!
//! Freed pages go back to the file system (`auto_vacuum = INCREMENTAL`, which new databases
//! get at creation), so the file shrinks; a database made before schema v7 is converted once
//! by `prune` (a whole VACUUM, which keeps every rowid: see [`convert`]).
//!
//! Who applies it: the maintenance process, a slice of at most [`SLICE`] when the SessionEnd
//! hook sees (two `stat`s, see `marks::retention_due`) that a look is due; and `claude-mem prune`, all of it
//! at once. Either way each transaction is short (see `slices`).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use super::forget::{self, Target};
use crate::clock;
use crate::config::{Config, Retention};
use crate::store::base::slices::Slicer;
use crate::store::base::wal;
use crate::store::read::Reader;
use crate::store::read::doc;

/// The most a maintenance run spends on retention...
pub const SLICE: Duration = Duration::from_millis(300);
/// ...of which this much is kept for giving freed pages back.
const GIVE_BACK: Duration = Duration::from_millis(60);
/// The size cap never takes a session active this recently.
const RECENT: chrono::Duration = chrono::Duration::days(1);
/// Bytes a row costs besides its text, for estimates.
const ROW_OVERHEAD: u64 = 100;

/// Which sessions a pass may touch.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Only this project's sessions.
    pub project: Option<String>,
    /// Sessions last active before this time are deleted (`prune --older-than`), whatever the
    /// policy's age.
    pub delete_before: Option<String>,
}

/// Sessions, their rows and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub sessions: i64,
    pub rows: i64,
    pub bytes: u64,
}

/// What a pass did, or (dry) would do.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Sessions deleted whole (their prompts, calls and messages as rows; bytes estimated).
    pub deleted: Tally,
    /// Sessions whose calls were reduced (the calls as rows; bytes of what was replaced).
    pub reduced: Tally,
    /// Bytes of the digests that replaced them.
    pub digest_bytes: u64,
    /// Live data before and after (estimated in a dry run).
    pub live_before: u64,
    pub live_after: u64,
    /// Bytes given back to the file system.
    pub freed_bytes: u64,
    /// Everything due was done (else the deadline came first).
    pub finished: bool,
}

/// Applies the policy: deletes what is too old, reduces what is old, then keeps under the cap;
/// gives freed pages back. `slicer` `None` is a dry run: nothing is written, sizes are
/// estimated. Stops at the slicer's deadline.
pub fn run(
    conn: &Connection,
    policy: &Retention,
    scope: &Scope,
    now: DateTime<Utc>,
    slicer: Option<&Slicer>,
) -> Result<Report> {
    // The policy stops short of the deadline, so that what it freed can go back meanwhile.
    let policy_slicer = slicer.map(|s| Slicer {
        until: s
            .until
            .map(|until| until.checked_sub(GIVE_BACK).unwrap_or(until)),
        ..*s
    });
    let mut pass = Pass {
        conn,
        scope,
        now: clock::stamp(now),
        slicer: policy_slicer.as_ref(),
        live: live_bytes(conn)?,
        deleted: HashSet::new(),
        reduced: HashSet::new(),
        report: Report::default(),
    };
    pass.report.live_before = pass.live;
    let ago = |days: u64| clock::stamp(now - chrono::Duration::days(days as i64));
    let delete_before = scope
        .delete_before
        .clone()
        .or_else(|| policy.keep_days.map(ago));
    let finished = pass.age(
        delete_before.as_deref(),
        policy.payload_days.map(ago).as_deref(),
    )? && match policy.max_db_bytes {
        Some(cap) => pass.cap(cap, &clock::stamp(now - RECENT))?,
        None => true,
    };
    if let Some(slicer) = slicer {
        pass.report.freed_bytes = give_back(conn, slicer)?;
        pass.live = live_bytes(conn)?;
    }
    pass.report.finished = finished && slicer.is_none_or(|s| !s.out_of_time());
    pass.report.live_after = pass.live;
    Ok(pass.report)
}

struct Pass<'a> {
    conn: &'a Connection,
    scope: &'a Scope,
    now: String,
    slicer: Option<&'a Slicer>,
    /// Live bytes now (measured), or as a dry run estimates them.
    live: u64,
    /// Sessions this pass deleted, and those it reduced.
    deleted: HashSet<String>,
    reduced: HashSet<String>,
    report: Report,
}

/// The sessions of the scope last active before ?2, oldest activity first; with `unreduced`,
/// only those whose calls were not reduced since.
fn sessions_sql(unreduced: bool) -> String {
    format!(
        "SELECT session_id FROM sessions
          WHERE (?1 IS NULL OR project_dir = ?1) AND updated_at < ?2 {}
          ORDER BY updated_at",
        if unreduced {
            "AND (reduced_at IS NULL OR reduced_at < updated_at)"
        } else {
            ""
        }
    )
}

impl Pass<'_> {
    /// The age rules. Returns whether they were done before the deadline.
    fn age(&mut self, delete_before: Option<&str>, reduce_before: Option<&str>) -> Result<bool> {
        if let Some(before) = delete_before {
            for session in self.sessions(false, before)? {
                if !self.delete(&session)? {
                    return Ok(false);
                }
            }
        }
        if let Some(before) = reduce_before {
            for session in self.sessions(true, before)? {
                if !self.reduce(&session)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The cap: the oldest sessions reduced first, then deleted, until the live data fits.
    fn cap(&mut self, cap: u64, recent: &str) -> Result<bool> {
        for unreduced in [true, false] {
            for session in self.sessions(unreduced, recent)? {
                if self.live <= cap {
                    return Ok(true);
                }
                let done = if unreduced {
                    self.reduce(&session)?
                } else {
                    self.delete(&session)?
                };
                if !done {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The sessions a rule applies to, oldest first, less those this pass deleted (or, to
    /// reduce, reduced) already: a dry run changes nothing, and a clock gone backwards could
    /// leave a session reduced "before" its last activity.
    fn sessions(&self, unreduced: bool, before: &str) -> Result<Vec<String>> {
        let found = self
            .conn
            .prepare(&sessions_sql(unreduced))?
            .query_map(params![self.scope.project, before], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(found
            .into_iter()
            .filter(|s| !(self.deleted.contains(s) || unreduced && self.reduced.contains(s)))
            .collect())
    }

    /// Deletes one session whole. Returns whether it finished.
    fn delete(&mut self, session: &str) -> Result<bool> {
        let plan = forget::plan(self.conn, &Target::Session(session.to_string()))?;
        let counts = plan.counts();
        let bytes = session_bytes(self.conn, session)?;
        let done = match self.slicer {
            Some(slicer) => forget::session(self.conn, session, slicer)?,
            None => true,
        };
        if done {
            self.deleted.insert(session.to_string());
            self.report.deleted.sessions += 1;
            self.report.deleted.rows += counts.prompts
                + counts.calls
                + counts.messages
                + counts.memories
                + counts.summaries;
            self.report.deleted.bytes += bytes;
            self.shrunk(bytes)?;
        }
        Ok(done)
    }

    /// Replaces the payload of each of a session's calls by its digest, then marks the
    /// session. Returns whether it finished.
    fn reduce(&mut self, session: &str) -> Result<bool> {
        let rowids: Vec<i64> = self
            .conn
            .prepare_cached("SELECT rowid FROM pending_queue WHERE session_id = ?1 ORDER BY rowid")?
            .query_map([session], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let rewrite = Rewrite::new(self.conn, "pending_queue")?;
        let (kind, raw_output) = (rewrite.column("kind")?, rewrite.column("raw_output")?);
        let mut next = 0;
        let (mut calls, mut before, mut after) = (0, 0u64, 0u64);
        let mut step = |conn: &Connection, write: bool| -> Result<bool> {
            if let Some(rowid) = rowids.get(next) {
                next += 1;
                let Some(mut row) = rewrite.read(conn, *rowid, session)? else {
                    return Ok(next < rowids.len());
                };
                let digest = match (&row[kind], &row[raw_output]) {
                    (Value::Text(kind), Value::Text(raw)) if kind == "observation" => {
                        doc::digest(raw).map(|digest| (raw.len(), digest))
                    }
                    _ => None,
                };
                if let Some((was, digest)) = digest {
                    calls += 1;
                    before += was as u64;
                    after += digest.len() as u64;
                    if write {
                        row[raw_output] = Value::Text(digest);
                        rewrite.write(conn, *rowid, row)?;
                    }
                }
            }
            Ok(next < rowids.len())
        };
        let done = match self.slicer {
            Some(slicer) => {
                let done = slicer.run(self.conn, |tx| step(tx, true))?;
                if done {
                    self.conn.execute(
                        "UPDATE sessions SET reduced_at = ?2 WHERE session_id = ?1",
                        params![session, self.now],
                    )?;
                }
                done
            }
            None => {
                while step(self.conn, false)? {}
                true
            }
        };
        self.report.reduced.rows += calls;
        self.report.reduced.bytes += before;
        self.report.digest_bytes += after;
        if done {
            self.reduced.insert(session.to_string());
            self.report.reduced.sessions += 1;
        }
        self.shrunk(before.saturating_sub(after))?;
        Ok(done)
    }

    /// The live size after freeing about `bytes`: measured, or estimated in a dry run.
    fn shrunk(&mut self, bytes: u64) -> Result<()> {
        self.live = match self.slicer {
            Some(_) => live_bytes(self.conn)?,
            None => self.live.saturating_sub(bytes),
        };
        Ok(())
    }
}

/// Replacing a row by a copy with other values, under the same rowid: a delete, then an
/// insert. An UPDATE that shrinks a row leaves its page as empty as it became (SQLite
/// rebalances pages only after a delete or an insert that overflows), so a table of reduced
/// rows would keep its size; after a delete, sparse pages are merged and the freed ones can
/// go back to the file system. The delete's tombstone is dropped in the same transaction (no
/// reader saw it): the row is still there, and what the index holds of it has not changed.
struct Rewrite {
    table: &'static str,
    columns: Vec<String>,
    select: String,
    insert: String,
}

impl Rewrite {
    /// Every column the table has (its schema may grow), read and written back as they are.
    fn new(conn: &Connection, table: &'static str) -> Result<Rewrite> {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let names = columns.join(", ");
        let slots: Vec<String> = (2..columns.len() + 2).map(|i| format!("?{i}")).collect();
        Ok(Rewrite {
            select: format!("SELECT {names} FROM {table} WHERE rowid = ?1 AND session_id = ?2"),
            insert: format!(
                "INSERT INTO {table} (rowid, {names}) VALUES (?1, {})",
                slots.join(", ")
            ),
            table,
            columns,
        })
    }

    fn column(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .with_context(|| format!("the table has no column {name}"))
    }

    /// The row `rowid`, if it is still there and of `session` (a rowid may have been freed
    /// and handed to another row since it was listed).
    fn read(&self, conn: &Connection, rowid: i64, session: &str) -> Result<Option<Vec<Value>>> {
        Ok(conn
            .prepare_cached(&self.select)?
            .query_row(params![rowid, session], |r| {
                (0..self.columns.len()).map(|i| r.get(i)).collect()
            })
            .optional()?)
    }

    fn write(&self, conn: &Connection, rowid: i64, row: Vec<Value>) -> Result<()> {
        let table = self.table;
        conn.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?
            .execute([rowid])?;
        conn.prepare_cached(&format!(
            "DELETE FROM tombstones WHERE seq = (SELECT max(seq) FROM tombstones)
                AND source = '{table}' AND row = ?1"
        ))?
        .execute([rowid])?;
        let mut values: Vec<Value> = Vec::with_capacity(row.len() + 1);
        values.push(Value::Integer(rowid));
        values.extend(row);
        conn.prepare_cached(&self.insert)?
            .execute(rusqlite::params_from_iter(values))?;
        Ok(())
    }
}

/// About how many bytes a session's rows take: its captures, and what the compressor made of
/// them.
fn session_bytes(conn: &Connection, session: &str) -> Result<u64> {
    let bytes: i64 = conn.query_row(SESSION_BYTES, params![session, ROW_OVERHEAD as i64], |r| {
        r.get(0)
    })?;
    Ok(bytes as u64)
}

const SESSION_BYTES: &str = "SELECT
        (SELECT coalesce(sum(octet_length(raw_output) + ?2), 0) FROM pending_queue
          WHERE session_id = ?1)
      + (SELECT coalesce(sum(octet_length(prompt_text) + ?2), 0) FROM user_prompts
          WHERE session_id = ?1)
      + (SELECT coalesce(sum(octet_length(title) + octet_length(narrative) + octet_length(facts)
                             + octet_length(concepts) + octet_length(files_read)
                             + octet_length(files_modified) + octet_length(queue_ids)
                             + coalesce(octet_length(subtitle), 0)
                             + coalesce(octet_length(extra), 0) + ?2), 0)
           FROM memories WHERE session_id = ?1)
      + (SELECT coalesce(sum(octet_length(request) + octet_length(investigated)
                             + octet_length(learned) + octet_length(completed)
                             + octet_length(next_steps) + octet_length(files_read)
                             + octet_length(files_edited) + octet_length(queue_ids)
                             + coalesce(octet_length(notes), 0)
                             + coalesce(octet_length(extra), 0) + ?2), 0)
           FROM summaries WHERE session_id = ?1)";

/// The bytes of the pages that hold data (the file less its free pages).
pub fn live_bytes(conn: &Connection) -> Result<u64> {
    let bytes: i64 = conn.query_row(
        "SELECT ((SELECT page_count FROM pragma_page_count())
                 - (SELECT freelist_count FROM pragma_freelist_count()))
                * (SELECT page_size FROM pragma_page_size())",
        [],
        |r| r.get(0),
    )?;
    Ok(bytes.max(0) as u64)
}

/// Whether freed pages can be given back to the file system in steps.
pub fn incremental(conn: &Connection) -> Result<bool> {
    Ok(conn.query_row("PRAGMA auto_vacuum", [], |r| r.get::<_, i64>(0))? == 2)
}

/// Gives free pages back to the file system, a few at a time (each step is a write
/// transaction that moves pages from the end of the file into free ones), until none are left
/// or the deadline comes. The file shrinks at the next checkpoint. Returns the bytes freed.
pub fn give_back(conn: &Connection, slicer: &Slicer) -> Result<u64> {
    if !incremental(conn)? {
        return Ok(0);
    }
    let free = || -> Result<u64> {
        Ok(conn.query_row("PRAGMA freelist_count", [], |r| r.get::<_, i64>(0))? as u64)
    };
    let (start, mut step) = (free()?, 64u64);
    loop {
        let left = free()?;
        if left == 0 || slicer.out_of_time() {
            let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
            return Ok((start - left) * page as u64);
        }
        let began = Instant::now();
        // One row a page freed: stepping to the end frees them all, in one transaction.
        let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({step})"))?;
        let mut rows = stmt.query([])?;
        while rows.next()?.is_some() {}
        // As many pages a step as fit in a short transaction.
        let took = began.elapsed();
        step = if took < slicer.tx / 2 {
            (step * 2).min(1 << 14)
        } else if took > slicer.tx {
            (step / 2).max(16)
        } else {
            step
        };
        slicer.keep_wal_short(conn);
    }
}

/// After rows were deleted or rewritten for good (forget, scrub, prune): free pages go back to
/// the file system (their content was overwritten already when `secure_delete` was on), then
/// the WAL, which still holds the pages as they were, is copied back and truncated, trying
/// again for up to `wait` while readers hold it; the file shrinks then. Returns whether the WAL
/// is clean: if a reader held on, old copies of pages are still in it.
///
/// Each try gives up at once when it cannot truncate: a truncating checkpoint that waits for
/// readers holds the write lock meanwhile, and hooks would wait behind it (they did, 1 s each,
/// one spilling, while a scrub waited for a reader).
pub fn sweep(conn: &Connection, slicer: &Slicer, wait: Duration) -> Result<bool> {
    give_back(conn, slicer)?;
    wal::copy_back(conn);
    let deadline = Instant::now() + wait;
    let clean = loop {
        if wal::checkpoint(conn, Duration::ZERO) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = conn.busy_timeout(slicer.wait);
    Ok(clean)
}

/// Converts a database made without `auto_vacuum = INCREMENTAL` (before schema v7), so that
/// it can give pages back from now on: one whole rebuild (see `rebuild`), which holds the write
/// lock while it rewrites the file (hooks spill meanwhile). Returns whether it converted.
pub fn convert(conn: &Connection, data_dir: &Path) -> Result<bool> {
    if incremental(conn)? {
        return Ok(false);
    }
    // Converting answers no request: what one asks of the search index is still to do.
    super::rebuild::database(conn, data_dir, None)?;
    Ok(true)
}

/// Drops the tombstones the search index has seen (all but the newest: the index must never
/// find the sequence going back), or all but the newest when there is no index to see them.
pub fn prune_tombstones(conn: &Connection, config: &Config) -> Result<usize> {
    let seen = crate::store::read::fts::Index::tombstones_seen(config, conn)?.unwrap_or(i64::MAX);
    Ok(conn.execute(
        "DELETE FROM tombstones WHERE seq <= ?1 AND seq < (SELECT max(seq) FROM tombstones)",
        [seen],
    )?)
}

/// What is due now and next, cheaply (for `status`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outlook {
    pub live_bytes: u64,
    pub incremental: bool,
    /// Sessions whose calls are due to be reduced, and their calls.
    pub reduce: Tally,
    /// Sessions due to be deleted.
    pub delete: Tally,
    /// When the next session's calls are due, if none is now.
    pub next_at: Option<String>,
}

pub fn outlook(reader: &Reader, policy: &Retention, now: DateTime<Utc>) -> Result<Outlook> {
    let conn = reader.conn();
    let ago =
        |days: Option<u64>| days.map(|d| clock::stamp(now - chrono::Duration::days(d as i64)));
    let (keep, payload) = (ago(policy.keep_days), ago(policy.payload_days));
    let count = |sql: &str, before: &Option<String>, after: &Option<String>| -> Result<Tally> {
        if before.is_none() {
            return Ok(Tally::default());
        }
        let (sessions, rows): (i64, i64) = conn.query_row(
            &format!(
                "SELECT COUNT(*), coalesce(sum((SELECT COUNT(*) FROM pending_queue q
                                                 WHERE q.session_id = s.session_id)), 0)
                   FROM sessions s WHERE s.updated_at < ?1 AND s.updated_at >= ?2 {sql}"
            ),
            params![before, after.as_deref().unwrap_or("")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(Tally {
            sessions,
            rows,
            bytes: 0,
        })
    };
    let unreduced = "AND (s.reduced_at IS NULL OR s.reduced_at < s.updated_at)";
    let next_at = match (&payload, policy.payload_days) {
        (Some(payload), Some(days)) => conn
            .query_row(
                &format!(
                    "SELECT min(s.updated_at) FROM sessions s WHERE s.updated_at >= ?1 {unreduced}"
                ),
                [payload],
                |r| r.get::<_, Option<String>>(0),
            )?
            .and_then(|at| crate::clock::parse_time(&at))
            .map(|at| clock::stamp(at + chrono::Duration::days(days as i64))),
        _ => None,
    };
    Ok(Outlook {
        live_bytes: live_bytes(conn)?,
        incremental: incremental(conn)?,
        reduce: count(unreduced, &payload, &keep)?,
        delete: count("", &keep, &None)?,
        next_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    #[test]
    fn finding_the_next_session_reads_no_queue_row() {
        let conn = testing::database();
        for unreduced in [false, true] {
            let plan = testing::plan(&conn, &sessions_sql(unreduced)).join("\n");
            assert!(!plan.contains("pending_queue"), "{plan}");
        }
    }

    #[test]
    fn a_sessions_bytes_are_summed_through_its_indexes() {
        let conn = testing::database();
        let plan = testing::plan(&conn, SESSION_BYTES);
        let scans: Vec<&String> = plan
            .iter()
            .filter(|step| step.starts_with("SCAN") && *step != "SCAN CONSTANT ROW")
            .collect();
        assert!(scans.is_empty(), "{plan:?}");
    }
}
