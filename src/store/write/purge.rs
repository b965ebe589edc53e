//! Removing what was stored of a turn before it turned out to be private as a whole (its
//! prompt's write was applied after its tool calls: it waited in the spill folder, or its hook
//! ran late).
//!
//! The prompt's own write removes at most [`IN_A_WRITE`] of the turn's captures, so that its
//! cost does not grow with the turn: a private prompt without prompt_id, in a session of
//! 100,000 captures sent without one, took the prompt hook 451 ms. What is left is named in
//! `meta` (`purge:<turn>`) in that same transaction, so that it cannot be forgotten; a flag
//! file (`purging`) starts the maintenance process, which removes the rest in short
//! transactions. Until then, a consumer's claim removes it first: no model is ever handed it.
//! And whatever a purge removed, the database is then rebuilt (see `rebuild`): a deleted row
//! leaves old copies in live pages that no delete reaches.

use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::store::base::rebuilding;
use crate::store::base::slices::Slicer;
use crate::store::base::tombstones;

/// Captures (and summary requests) a prompt's write removes itself; a turn's tool calls rarely
/// come to more.
pub const IN_A_WRITE: i64 = 200;

/// The turn's captures (session ?1, prompt_id ?2), at most ?3. Captures of a private turn never
/// got a prompt number (its prompt is not stored), so the partial index
/// `pending_queue_unnumbered` finds them.
pub(super) const CAPTURES_BY_ID: &str = "DELETE FROM pending_queue WHERE rowid IN (
     SELECT rowid FROM pending_queue
      WHERE session_id = ?1 AND prompt_id = ?2 AND prompt_number IS NULL LIMIT ?3)";
pub(super) const SUMMARIES_BY_ID: &str = "DELETE FROM pending_queue WHERE rowid IN (
     SELECT rowid FROM pending_queue
      WHERE kind = 'summary' AND session_id = ?1 AND prompt_id = ?2 LIMIT ?3)";
/// Without a prompt_id, a turn is the time from its prompt (?2) to the session's next one.
pub(super) const CAPTURES_BY_TIME: &str = "DELETE FROM pending_queue WHERE rowid IN (
     SELECT rowid FROM pending_queue
      WHERE prompt_number IS NULL AND session_id = ?1 AND prompt_id IS NULL AND created_at >= ?2
        AND created_at < COALESCE((SELECT MIN(created_at) FROM user_prompts
                                    WHERE session_id = ?1 AND created_at > ?2), '~')
      LIMIT ?3)";
pub(super) const SUMMARIES_BY_TIME: &str = "DELETE FROM pending_queue WHERE rowid IN (
     SELECT rowid FROM pending_queue
      WHERE kind = 'summary' AND session_id = ?1 AND prompt_id IS NULL AND created_at >= ?2
        AND created_at < COALESCE((SELECT MIN(created_at) FROM user_prompts
                                    WHERE session_id = ?1 AND created_at > ?2), '~')
      LIMIT ?3)";
/// Claude's last message of the session, once the turn's is gone.
pub(in crate::store) const LAST_MESSAGE: &str = "UPDATE sessions SET last_assistant_message =
                 (SELECT json_extract(raw_output, '$.last_assistant_message') FROM pending_queue
                   WHERE session_id = ?1 AND kind = 'summary' ORDER BY created_at DESC LIMIT 1)
             WHERE session_id = ?1";
/// The first turn with rows left (its key in `private_turns`, and how it is found).
pub(super) const NEXT_LEFT: &str = "SELECT substr(m.key, 7), m.value, t.session_id, t.created_at
       FROM meta m LEFT JOIN private_turns t ON t.prompt_id = substr(m.key, 7)
      WHERE m.key > 'purge:' AND m.key < 'purge;' ORDER BY m.key LIMIT 1";
const LEAVE: &str = "INSERT OR REPLACE INTO meta (key, value) VALUES ('purge:' || ?1, ?2)";
const DONE: &str = "DELETE FROM meta WHERE key = 'purge:' || ?1";

/// How a private turn's rows are found: by its prompt_id, or by time (Claude Code before
/// 2.1.196 sends no prompt_id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found<'a> {
    ById(&'a str),
    ByTime { at: &'a str },
}

/// What a purge did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Purged {
    pub removed: bool,
    /// Rows may be left: named in `meta` for the maintenance process.
    pub left: bool,
}

/// Removes at most [`IN_A_WRITE`] of each kind of row of the private turn `key` of
/// `session_id`; names the turn in `meta` when some may be left, and asks for a rebuild when it
/// removed any.
pub fn in_a_write(tx: &Transaction, session_id: &str, key: &str, found: Found) -> Result<Purged> {
    let (removed, left) = remove(tx, session_id, found, IN_A_WRITE)?;
    if left {
        let how = match found {
            Found::ById(_) => "id",
            Found::ByTime { .. } => "time",
        };
        tx.execute(LEAVE, params![key, how])?;
    }
    Ok(Purged {
        removed: removed > 0,
        left,
    })
}

/// Removes up to `limit` captures and `limit` summary requests of the turn (overwriting what
/// they freed); returns how many went and whether that was all.
fn remove(tx: &Connection, session_id: &str, found: Found, limit: i64) -> Result<(usize, bool)> {
    tx.execute_batch("PRAGMA secure_delete = ON")?;
    // A hook's connection has no tombstone triggers until it deletes.
    tombstones::arm(tx)?;
    let (captures, summaries) = match found {
        Found::ById(prompt_id) => (
            tx.execute(CAPTURES_BY_ID, params![session_id, prompt_id, limit])?,
            tx.execute(SUMMARIES_BY_ID, params![session_id, prompt_id, limit])?,
        ),
        Found::ByTime { at } => (
            tx.execute(CAPTURES_BY_TIME, params![session_id, at, limit])?,
            tx.execute(SUMMARIES_BY_TIME, params![session_id, at, limit])?,
        ),
    };
    let removed = captures + summaries;
    if removed > 0 {
        tx.execute(LAST_MESSAGE, [session_id])?;
        rebuilding::request(tx)?;
    }
    let whole = |n: usize| n as i64 == limit;
    Ok((removed, whole(captures) || whole(summaries)))
}

/// Marks that rows are left, for the maintenance process.
pub fn flag_left(flag: &Path) {
    let _ = crate::fsutil::create_private(flag);
}

/// Removes what private turns have left, [`IN_A_WRITE`] rows a step, in the transactions of
/// `slicer`; returns whether it got to the end. The flag goes first, so that a write that
/// leaves more meanwhile sets it again; it is set again here too when time ran out.
pub fn the_rest(conn: &Connection, slicer: &Slicer, flag: &Path) -> Result<bool> {
    let _ = std::fs::remove_file(flag);
    let finished = slicer.run(conn, |tx| step(tx, IN_A_WRITE));
    if !matches!(finished, Ok(true)) {
        flag_left(flag);
    }
    finished
}

/// Removes everything private turns have left, in the caller's transaction: a consumer's claim
/// runs this first, so that it never hands out a row of a private turn. One probe of `meta`
/// when nothing is left, as almost always.
pub fn all_left(tx: &Connection) -> Result<()> {
    while step(tx, -1)? {}
    Ok(())
}

/// Removes up to `limit` rows (-1: all) of the first turn with rows left; returns whether there
/// was one.
fn step(tx: &Connection, limit: i64) -> Result<bool> {
    let next = tx
        .query_row(NEXT_LEFT, [], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
                row.get::<_, Option<String>>(3)?,
            ))
        })
        .optional()?;
    let Some((key, how, session, at)) = next else {
        return Ok(false);
    };
    // A turn retention has since deleted took its rows along.
    let left = match (session, at) {
        (Some(session), Some(at)) => {
            let found = if how == "time" {
                Found::ByTime { at: &at }
            } else {
                Found::ById(&key)
            };
            remove(tx, &session, found, limit)?.1
        }
        _ => false,
    };
    if !left {
        tx.execute(DONE, [&key])?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    fn left(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM pending_queue", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_write_removes_a_bounded_part_and_the_rest_goes_later() {
        let mut conn = testing::database();
        for n in 0..IN_A_WRITE * 2 + 7 {
            testing::capture(&conn, n, None);
        }
        for n in 0..IN_A_WRITE + 1 {
            testing::capture(&conn, 10_000 + n, Some("p"));
        }
        // Before the private prompt's time: another turn's.
        testing::capture(&conn, -1, None);
        conn.execute_batch(
            "INSERT INTO private_turns VALUES ('w', 's', '2026-01-01T00:00:000000');
             INSERT INTO private_turns VALUES ('p', 's', '2026-01-01T00:00:000000');",
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        let at = "2026-01-01T00:00:000000";
        let by_time = in_a_write(&tx, "s", "w", Found::ByTime { at }).unwrap();
        let by_id = in_a_write(&tx, "s", "p", Found::ById("p")).unwrap();
        tx.commit().unwrap();
        assert!(by_time.removed && by_time.left && by_id.removed && by_id.left);
        assert_eq!(left(&conn), IN_A_WRITE + 7 + 1 + 1);
        assert!(rebuilding::requested(&conn).unwrap());

        let tx = conn.transaction().unwrap();
        all_left(&tx).unwrap();
        tx.commit().unwrap();
        assert_eq!(left(&conn), 1, "the other turn's capture stays");
        let named: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM meta WHERE key LIKE 'purge:%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(named, 0);
    }

    #[test]
    fn the_maintenance_process_removes_the_rest_in_slices() {
        let conn = testing::database();
        for n in 0..IN_A_WRITE * 3 {
            testing::capture(&conn, n, None);
        }
        conn.execute_batch(
            "INSERT INTO private_turns VALUES ('w', 's', '2026-01-01T00:00:000000');
             INSERT INTO meta VALUES ('purge:w', 'time');
             INSERT INTO meta VALUES ('purge:gone', 'id');",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("purging");
        flag_left(&flag);
        let slicer = Slicer::command(std::time::Duration::ZERO);
        assert!(the_rest(&conn, &slicer, &flag).unwrap());
        assert!(!flag.exists());
        assert_eq!(left(&conn), 0);
        assert!(!all_left_named(&conn));
    }

    fn all_left_named(conn: &Connection) -> bool {
        conn.query_row(NEXT_LEFT, [], |_| Ok(()))
            .optional()
            .unwrap()
            .is_some()
    }
}
