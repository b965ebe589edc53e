//! What every part of the store stands on, the hook's write path first: the file checks and
//! read-only opening (`files`), why a write failed (`errors`), how a writer waits for the lock
//! (`wait`), long work in short transactions (`slices`), the WAL's bounds and checkpoints
//! (`wal`), whether a rebuild is asked for or under way (`rebuilding`), and the triggers that
//! leave tombstones of deleted rows (`tombstones`). Nothing here imports another part of the
//! store.

pub mod errors;
pub mod files;
pub mod rebuilding;
pub mod slices;
pub mod tombstones;
pub mod wait;
pub mod wal;

use std::time::{Duration, Instant};

/// A count for a `LIMIT` or `OFFSET`: SQLite takes an i64 and reads a negative one as none, so a
/// larger count is the largest it takes, never one that wraps around to the first page.
pub fn sql_count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// What is left of the time until `deadline` (none once it has passed).
pub fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, ffi};

    use super::files::open_file_read_only;

    /// SQLite is built without its memory statistics (`LIBSQLITE3_FLAGS` in
    /// `.cargo/config.toml`): they cost every allocation a process-wide lock.
    #[test]
    fn sqlite_keeps_no_memory_statistics() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(100000));")
            .unwrap();
        // SAFETY: a read of SQLite's counters, which any thread may make.
        let used = unsafe { ffi::sqlite3_memory_used() };
        assert_eq!(
            used, 0,
            "SQLite counts the memory it holds: it was built without \
             LIBSQLITE3_FLAGS=-DSQLITE_DEFAULT_MEMSTATUS=0 (see .cargo/config.toml)"
        );
    }

    /// A command reads a file through a small page cache that it reuses, not SQLite's 2 MiB
    /// of fresh heap.
    #[test]
    fn a_file_read_by_a_command_keeps_few_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        let conn = open_file_read_only(&path).unwrap();
        let pages: i64 = conn
            .query_row("PRAGMA cache_size", [], |r| r.get(0))
            .unwrap();
        assert_eq!(pages, 64);
    }
}
