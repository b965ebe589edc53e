//! The WAL's bounds, and the checkpoints that keep it short. Every hook is the first connection
//! to open the database and reads the whole WAL, so a short WAL is what makes the next hook
//! fast; a checkpoint never waits for a reader, since one holding an old snapshot would make
//! every run pay the whole wait (design rule 8).

use std::time::Duration;

use rusqlite::Connection;

use crate::config::Config;

/// Past this WAL size, the run that notices checkpoints it (measured best at 256 KiB).
pub const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;
/// Past this, a checkpoint is more than a hook should pay for: the maintenance process does it.
pub const WAL_INLINE_MAX: u64 = 2 << 20;
/// Past this, even opening the database costs a hook too much (the first connection reads the
/// whole WAL, about 0.6 ms per MB): the hook keeps its event in the spill folder instead.
pub const WAL_OPEN_MAX: u64 = 16 << 20;

/// Size of the database's WAL file, without opening the database.
pub fn wal_bytes(config: &Config) -> u64 {
    let mut wal = config.db_path().into_os_string();
    wal.push("-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// A PASSIVE checkpoint: copies the WAL back into the database without blocking writers or
/// waiting for anyone, so that a TRUNCATE after it has little left to do while it holds the
/// write lock.
pub fn copy_back(conn: &Connection) {
    let _ = conn.busy_timeout(Duration::ZERO);
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
}

/// A TRUNCATE checkpoint, waiting up to `wait` for readers and writers; returns whether the
/// WAL is now empty. The connection waits `wait` for locks afterwards.
pub fn checkpoint(conn: &Connection, wait: Duration) -> bool {
    let _ = conn.busy_timeout(wait);
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
        row.get::<_, i64>(0)
    })
    .is_ok_and(|busy| busy == 0)
}

/// Size of the WAL of the database `conn` is open on.
pub fn wal_bytes_of(conn: &Connection) -> u64 {
    conn.path()
        .filter(|path| !path.is_empty())
        .and_then(|path| std::fs::metadata(format!("{path}-wal")).ok())
        .map_or(0, |meta| meta.len())
}
