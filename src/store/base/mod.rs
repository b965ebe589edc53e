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
