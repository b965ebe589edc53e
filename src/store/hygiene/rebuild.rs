//! Rebuilding a database file, so that nothing deleted from it survives anywhere in it.
//!
//! `secure_delete` overwrites what a delete frees, not the older copies of rows that earlier
//! writes left behind: a row rewritten at another size (the session row, at every Stop) leaves
//! its old cell in the unused space of its page when `secure_delete` is off, as the hooks
//! write; a page taken from the free list keeps what it held wherever it is not written again;
//! and a page SQLite rebuilds while it balances a b-tree keeps copies of the cells it handed to
//! a sibling, whatever the setting. Deleting a row later overwrites its live cell only: of three
//! sessions recorded through the hooks, the middle one forgotten, 7 of its 48 texts stayed
//! readable in pages still in use (issue 16); with `secure_delete` on for every write, 3 of
//! about 1,000 rows deleted in the test below still left their text. So whatever must be gone
//! for good (forget, scrub, claude-mem's own MCP answers on upgrade) ends with a rebuild of
//! the database and of the search index: VACUUM writes every live row into a new file, whose
//! pages then replace those of the old one through the WAL, and the caller's truncating
//! checkpoint leaves only the new pages on disk. The hooks keep writing with `secure_delete`
//! off: turning it on would not make a rebuild unnecessary.
//!
//! VACUUM holds the write lock throughout (2.1 s on a 424 MiB database, 5.9 s on 568 MiB under
//! load). A hook waiting for it would wait its whole budget (a second) and then keep its event
//! in the spill folder: Claude Code slowed by a second per tool call while it runs. So the
//! rebuild holds a lock on a file of its own meanwhile ([`Mark`], `rebuild.lock`), and a hook
//! that finds that lock held keeps its event in the spill folder at once (see
//! [`under_way`](crate::store::base::rebuilding::under_way)). The kernel lets go of it however the rebuild ends, kill -9 included: a file
//! left behind by a crash is not held, and hooks then go on as usual. Its temporary copy
//! (every live row) is made in the data dir, not in a temp dir other users can see. A rebuild
//! asked for and not done (a full disk, a killed process) is remembered in `meta`, and the
//! maintenance process does it.

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::store::base::rebuilding::{Mark, answered, vacuum};

/// Rebuilds the database `conn` is open on (no transaction may be open on it), making its
/// temporary copy in `data_dir` and holding the [`Mark`] there meanwhile. The file takes the
/// layout that gives free pages back (`auto_vacuum = INCREMENTAL`, see `retention`), whatever it had. VACUUM keeps the rowids of
/// tables with an index, as ours all have, and the search index relies on them: should a
/// SQLite ever renumber them, the row at a table's largest rowid is another one after (rows
/// renumbered in order change only past a gap), and the database draws a new `store_id`, so
/// that the index rebuilds. Answers the rebuild request `asked` (see `rebuilding::answered`).
pub fn database(conn: &Connection, data_dir: &Path, asked: Option<&str>) -> Result<()> {
    let before = last_rows(conn, None)?;
    let mark = Mark::hold(data_dir);
    vacuum(conn, data_dir, "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")
        .context("cannot rebuild the database (VACUUM needs free space about twice its size)")?;
    drop(mark);
    if last_rows(conn, Some(&before))? != before {
        conn.execute(
            "UPDATE meta SET value = lower(hex(randomblob(16))) WHERE key = 'store_id'",
            [],
        )?;
    }
    answered(conn, asked)
}

/// Per indexed table: its largest rowid and the key of the row there (or, given an earlier
/// reading, the key of the row at the rowid read then: hooks may have added rows since). Each
/// is an index probe, whatever the size of the table.
fn last_rows(
    conn: &Connection,
    then: Option<&[(i64, Option<String>)]>,
) -> Result<Vec<(i64, Option<String>)>> {
    [
        ("sessions", "session_id"),
        ("user_prompts", "id"),
        ("pending_queue", "id"),
        ("memories", "id"),
        ("summaries", "id"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (table, key))| {
        let rowid = match then {
            Some(then) => then[i].0,
            None => conn.query_row(
                &format!("SELECT coalesce(max(rowid), 0) FROM {table}"),
                [],
                |r| r.get(0),
            )?,
        };
        let key = conn
            .query_row(
                &format!("SELECT {key} FROM {table} WHERE rowid = ?1"),
                [rowid],
                |r| r.get(0),
            )
            .optional()?;
        Ok((rowid, key))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::base::rebuilding::{request, requested, under_way};

    /// A writer keeps what a transaction sets aside (a savepoint's pages) in memory, never in
    /// a temporary file outside the data dir; a rebuild's copy of the whole file goes on disk
    /// all the same, and the setting is the same after.
    #[test]
    fn a_writer_sets_pages_aside_in_memory_and_a_rebuild_still_copies_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config::in_dir(dir.path());
        let store = crate::store::Store::open(&config, std::time::Instant::now()).unwrap();
        let temp_store = || -> i64 {
            store
                .conn()
                .query_row("PRAGMA temp_store", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(temp_store(), 2, "MEMORY");
        database(store.conn(), dir.path(), None).unwrap();
        assert_eq!(temp_store(), 2, "MEMORY again after the rebuild");
    }

    /// Old copies of deleted rows in pages still in use, which a delete does not reach even with
    /// `secure_delete` on for every write: rows of three sessions inserted in random key order,
    /// some rewritten longer, one session deleted.
    #[test]
    fn a_rebuild_leaves_no_old_copy_of_a_deleted_row_and_keeps_every_rowid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA secure_delete = ON;",
        )
        .unwrap();
        for migration in crate::store::sql::MIGRATIONS {
            conn.execute_batch(migration).unwrap();
        }
        assert!(
            !requested(&conn).unwrap(),
            "a new database asks for no rebuild"
        );
        write_three_sessions(&conn);
        conn.execute_batch(
            "DELETE FROM user_prompts WHERE session_id = 'q'; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
        assert!(rows_in_file(&path, b'q') > 0, "the test made no old copy");
        let kept = rowids(&conn);
        request(&conn).unwrap();
        assert!(requested(&conn).unwrap());

        let mut conn = conn;
        rebuild_seen_by_hooks(&mut conn, dir.path());
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        assert_eq!(rows_in_file(&path, b'q'), 0);
        let count: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM user_prompts WHERE session_id = 'p'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            rows_in_file(&path, b'p') as i64,
            count,
            "what stays is all there"
        );
        assert_eq!(rowids(&conn), kept);
        assert!(!requested(&conn).unwrap());
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(files.len(), 3, "no temporary file is left: {files:?}");
    }

    /// Regression: a private turn purged while the maintenance process rebuilt the search
    /// index and the database asked for a rebuild, and the rebuild's end took that request
    /// away: the turn's words stayed in the index file (seen under load in
    /// `privacy::a_private_turns_purge_left_old_copies_in_live_pages`).
    #[test]
    fn a_rebuild_answers_only_the_request_it_began_with() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("memory.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
        for migration in crate::store::sql::MIGRATIONS {
            conn.execute_batch(migration).unwrap();
        }
        request(&conn).unwrap();
        let asked = crate::store::base::rebuilding::standing(&conn).unwrap();
        assert!(asked.is_some());
        request(&conn).unwrap();
        database(&conn, dir.path(), asked.as_deref()).unwrap();
        assert!(
            requested(&conn).unwrap(),
            "the later request was taken away"
        );
        let asked = crate::store::base::rebuilding::standing(&conn).unwrap();
        database(&conn, dir.path(), asked.as_deref()).unwrap();
        assert!(!requested(&conn).unwrap());
    }

    /// Rebuilds the database `conn` is open on while another writer makes it wait for the
    /// lock: hooks learn that the rebuild holds it while it does, and only then.
    fn rebuild_seen_by_hooks(conn: &mut Connection, data_dir: &Path) {
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let during = std::sync::Arc::clone(&seen);
        let dir = data_dir.to_path_buf();
        let writer = Connection::open(data_dir.join("memory.db")).unwrap();
        writer.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.busy_handler(Some(move |_| {
            during.fetch_or(under_way(&dir), std::sync::atomic::Ordering::Relaxed);
            let _ = writer.execute_batch("ROLLBACK");
            true
        }))
        .unwrap();
        assert!(!under_way(data_dir));
        let asked = crate::store::base::rebuilding::standing(conn).unwrap();
        database(conn, data_dir, asked.as_deref()).unwrap();
        conn.busy_handler(None::<fn(i32) -> bool>).unwrap();
        assert!(
            seen.load(std::sync::atomic::Ordering::Relaxed),
            "no mark while it ran"
        );
        assert!(!under_way(data_dir));
    }

    /// 3,000 prompts of sessions p, q and r in random key order, one in seven rewritten longer.
    fn write_three_sessions(conn: &Connection) {
        let mut seed = 3u64;
        let mut random = |below: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % below
        };
        for n in 0..3000i64 {
            let session = ["p", "q", "r"][random(3) as usize];
            conn.prepare_cached(
                "INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
                 VALUES (?1, ?2, ?3, ?4, 't')",
            )
            .unwrap()
            .execute(rusqlite::params![
                format!("{:08x}-key{n:04}{session}", random(1 << 32)),
                session,
                n,
                format!(
                    "text{n:04}{session} {}",
                    "x".repeat(10 + random(1500) as usize)
                ),
            ])
            .unwrap();
            if n % 7 == 0 {
                conn.execute(
                    "UPDATE user_prompts SET prompt_text = prompt_text || 'y' WHERE rowid = ?1",
                    [1 + random(n as u64 + 1) as i64],
                )
                .unwrap();
            }
        }
    }

    /// The rows of a session with a key or a text anywhere in the file: `{n:04}{session}`.
    fn rows_in_file(path: &Path, session: u8) -> usize {
        let file = std::fs::read(path).unwrap();
        let found: std::collections::HashSet<&[u8]> = file
            .windows(5)
            .filter(|w| w[4] == session && w[..4].iter().all(u8::is_ascii_digit))
            .collect();
        found.len()
    }

    fn rowids(conn: &Connection) -> Vec<(i64, String)> {
        conn.prepare("SELECT rowid, id FROM user_prompts ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}
