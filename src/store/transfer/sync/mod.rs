//! What sync keeps about the records it moved, and the SQL that finds what to move and applies
//! what came (the sync itself, git and the crypto, is `crate::sync`; this is the store's part,
//! the only code that speaks SQL).
//!
//! The state lives in a database of its own, `sync/state.db`, attached to the main connection
//! as `sync` while a sync runs: every hook parses the main database's schema when it opens it
//! (see v4.sql), so tables there would cost every hook, and no hook ever needs these. What the
//! state holds is ids and numbers, and of a session what tells that it changed (its times,
//! status, model, folders and transcript path: `ver`); never what anyone wrote.
//!
//! - `known`: every record this machine pushed or received, by table and id: which of this
//!   machine's chunks holds its line (`chunk`), who sent it (`sender`, NULL when it is ours),
//!   what was pushed of what may change (`ver`), and whether it is gone (`gone`: [`HERE`],
//!   [`GONE`], a tombstone: a record deleted anywhere is never taken back from an older chunk,
//!   or [`DELETED_HERE`], deleted here and not announced yet, which is not taken back either). What is new is what is not in
//!   it ([`outgoing`]), what was deleted here is what is in it and no longer in its table; so
//!   nothing depends on rowids (a rebuild may renumber them) or on clocks (a capture spilled
//!   during an outage lands late, with its own old time).
//! - `chunks`: this machine's chunks on the remote, by number, with their blob, and whether
//!   one holds a line of a record deleted since (`dirty`: it is rewritten without it).
//! - `applied`: the chunks of other machines taken in, with the blob taken: a chunk rewritten
//!   there (a new blob under the same name) is read again.
//! - `set_aside`: the chunks of other machines refused (over the size cap, not opening, not
//!   parsing), with the blob refused and why, in a few words: not read again until that
//!   machine writes another blob there; their objects are dropped from `repo.git`.
//! - `meta`: this machine's id on the remote and the next chunk number.

pub mod incoming;
pub mod outgoing;

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sync.known (kind TEXT NOT NULL, id TEXT NOT NULL, chunk INTEGER,
    sender TEXT, rev INTEGER, ver TEXT, gone INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sync.known_by_chunk ON known (chunk) WHERE chunk IS NOT NULL;
CREATE INDEX IF NOT EXISTS sync.known_unnumbered ON known (id)
    WHERE kind = 'queue' AND ver IS NULL AND sender IS NULL;
CREATE TABLE IF NOT EXISTS sync.chunks (seq INTEGER PRIMARY KEY, blob TEXT NOT NULL,
    dirty INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS sync.applied (machine TEXT NOT NULL, seq INTEGER NOT NULL,
    blob TEXT NOT NULL, PRIMARY KEY (machine, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync.set_aside (machine TEXT NOT NULL, seq INTEGER NOT NULL,
    blob TEXT NOT NULL, why TEXT NOT NULL, PRIMARY KEY (machine, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
";

/// `known.gone`: the record is here (or was never deleted).
pub const HERE: i64 = 0;
/// `known.gone`: deleted, and its deletion announced (by this machine or another).
pub const GONE: i64 = 1;
/// `known.gone`: deleted here, its deletion not sent yet.
pub const DELETED_HERE: i64 = 2;

/// A table whose records travel, as `known.kind` and a tombstone's `of` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    Session,
    Prompt,
    PrivateTurn,
    Queue,
    Event,
    Memory,
    Summary,
}

impl Table {
    pub const ALL: [Table; 7] = [
        Table::Session,
        Table::Prompt,
        Table::PrivateTurn,
        Table::Queue,
        Table::Event,
        Table::Memory,
        Table::Summary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Session => "session",
            Table::Prompt => "prompt",
            Table::PrivateTurn => "private_turn",
            Table::Queue => "queue",
            Table::Event => "event",
            Table::Memory => "memory",
            Table::Summary => "summary",
        }
    }

    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The SQL table and its id column.
    fn sql(self) -> (&'static str, &'static str) {
        match self {
            Table::Session => ("sessions", "session_id"),
            Table::Prompt => ("user_prompts", "id"),
            Table::PrivateTurn => ("private_turns", "prompt_id"),
            Table::Queue => ("pending_queue", "id"),
            Table::Event => ("event_log", "id"),
            Table::Memory => ("memories", "id"),
            Table::Summary => ("summaries", "id"),
        }
    }
}

/// Attaches the state database at `path` (created 0600 when missing) as `sync`.
pub fn attach(conn: &Connection, path: &Path) -> Result<()> {
    if let Err(err) = crate::fsutil::create_private(path)
        && err.kind() != std::io::ErrorKind::AlreadyExists
    {
        return Err(err).with_context(|| format!("cannot create {}", path.display()));
    }
    let path = path.to_str().context("the data dir's path is not UTF-8")?;
    conn.execute("ATTACH DATABASE ?1 AS sync", [path])
        .context("cannot open the sync state")?;
    conn.execute_batch(SCHEMA)
        .context("cannot set up the sync state")?;
    Ok(())
}

pub fn detach(conn: &Connection) {
    let _ = conn.execute_batch("DETACH DATABASE sync");
}

/// Forgets what the state at `path` says of its remote (this machine's chunks and id there,
/// what it took in, the chunks set aside, the records it sent), keeping the records this
/// machine knows were deleted: a remote joined later, or this one again after its host rolled
/// it back, never brings one of them back.
pub fn forget_remote(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let conn = Connection::open_in_memory()?;
    attach(&conn, path)?;
    let result = conn
        .execute_batch(&format!(
            "BEGIN;
             DELETE FROM sync.known WHERE gone = {HERE};
             UPDATE sync.known SET chunk = NULL;
             DELETE FROM sync.chunks;
             DELETE FROM sync.applied;
             DELETE FROM sync.set_aside;
             DELETE FROM sync.meta;
             COMMIT;"
        ))
        .context("cannot reset the sync state");
    detach(&conn);
    result
}

/// A value of the state's `meta`.
pub fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM sync.meta WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .optional()?)
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO sync.meta (key, value) VALUES (?1, ?2)",
        params![key, value],
    )?;
    Ok(())
}

/// This machine's chunks on the remote: number, blob, and whether it must be rewritten.
pub fn chunks(conn: &Connection) -> Result<Vec<(i64, String, bool)>> {
    let mut stmt = conn.prepare("SELECT seq, blob, dirty FROM sync.chunks ORDER BY seq")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The blob taken in of each chunk of other machines, by machine and number.
pub fn applied(conn: &Connection) -> Result<std::collections::HashMap<(String, i64), String>> {
    let mut stmt = conn.prepare("SELECT machine, seq, blob FROM sync.applied")?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Remembers that this chunk of `machine` was taken in whole (and is no longer set aside).
pub fn mark_applied(conn: &Connection, machine: &str, seq: i64, blob: &str) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute(
        "INSERT OR REPLACE INTO sync.applied (machine, seq, blob) VALUES (?1, ?2, ?3)",
        params![machine, seq, blob],
    )?;
    tx.execute(
        "DELETE FROM sync.set_aside WHERE machine = ?1 AND seq = ?2",
        params![machine, seq],
    )?;
    tx.commit()?;
    Ok(())
}

/// A chunk of another machine refused: where, its blob, and why.
pub struct Refused {
    pub machine: String,
    pub seq: i64,
    pub blob: String,
    pub why: String,
}

/// Sets these chunks aside, in one transaction (thousands may come at once).
pub fn set_aside(conn: &Connection, refused: &[Refused]) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    for r in refused {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO sync.set_aside (machine, seq, blob, why)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![r.machine, r.seq, r.blob, r.why])?;
    }
    tx.commit()?;
    Ok(())
}

/// The blob set aside of each chunk of other machines, by machine and number.
pub fn aside(conn: &Connection) -> Result<std::collections::HashMap<(String, i64), String>> {
    let mut stmt = conn.prepare("SELECT machine, seq, blob FROM sync.set_aside")?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many chunks are set aside, and the first of them: its place and why.
pub fn aside_note(conn: &Connection) -> Result<Option<(i64, Refused)>> {
    Ok(conn
        .query_row(
            "SELECT (SELECT count(*) FROM sync.set_aside), machine, seq, blob, why
               FROM sync.set_aside ORDER BY machine, seq LIMIT 1",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    Refused {
                        machine: r.get(1)?,
                        seq: r.get(2)?,
                        blob: r.get(3)?,
                        why: r.get(4)?,
                    },
                ))
            },
        )
        .optional()?)
}

/// The blobs set aside that no chunk taken in or of ours is (a hostile remote may put a good
/// chunk in a wrong place): what the local repository may drop.
pub fn droppable(conn: &Connection) -> Result<std::collections::HashSet<String>> {
    let mut stmt = conn.prepare(
        "SELECT blob FROM sync.set_aside
          WHERE blob NOT IN (SELECT blob FROM sync.chunks)
            AND blob NOT IN (SELECT blob FROM sync.applied)",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    /// What every sync reads must not walk the main tables' rows (their pages hold the text):
    /// the id indexes, and probes of `known` by its key.
    #[test]
    fn the_lookups_use_the_indexes() {
        let conn = testing::database();
        let dir = tempfile::tempdir().unwrap();
        attach(&conn, &dir.path().join("state.db")).unwrap();
        for table in Table::ALL {
            for sql in [
                outgoing::new_sql(table),
                outgoing::vanished_sql(table),
                outgoing::note_deleted_sql(table),
                outgoing::row_sql(table),
            ] {
                let plan = testing::plan(&conn, &sql);
                for step in &plan {
                    let scans_rows = step.starts_with("SCAN") && !step.contains("COVERING INDEX");
                    assert!(!scans_rows, "{sql}: {plan:?}");
                }
            }
        }
    }
}
