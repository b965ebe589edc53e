//! Long work on the database (retention, forget, scrub, import) done as many short write
//! transactions, so that a hook never waits long for the lock: it waits at most its budget
//! (1 s) and then spills its event, which is safe but should stay rare.
//!
//! Each transaction runs small steps until it has held the lock for about [`Slicer::tx`]; the
//! work as a whole may also stop at a deadline (the maintenance process's slice). Between
//! transactions the WAL is kept as short as a hook keeps it: the work rewrites many pages, and
//! a hook that finds the WAL long copies it back itself.

use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::wal::{WAL_CHECKPOINT_BYTES, checkpoint, copy_back, wal_bytes_of};

/// How long one transaction of a long job may hold the write lock.
pub const TX: Duration = Duration::from_millis(25);
/// The pause after each transaction, in which a waiting hook takes the lock.
const GAP: Duration = Duration::from_millis(2);

#[derive(Debug, Clone, Copy)]
pub struct Slicer {
    pub tx: Duration,
    /// When the whole job must stop (what is left is done by a later run).
    pub until: Option<Instant>,
    /// How long a transaction waits for the lock (and what the connection is set back to).
    pub wait: Duration,
}

impl Slicer {
    /// For a command a person runs: no deadline.
    pub fn command(wait: Duration) -> Slicer {
        Slicer {
            tx: TX,
            until: None,
            wait,
        }
    }

    /// Whether the deadline has passed.
    pub fn out_of_time(&self) -> bool {
        self.until.is_some_and(|until| Instant::now() >= until)
    }

    /// Runs `step` (a small piece of work that returns whether there is more) over as many
    /// transactions as it takes; returns whether it finished before the deadline.
    pub fn run(
        &self,
        conn: &Connection,
        mut step: impl FnMut(&Transaction) -> Result<bool>,
    ) -> Result<bool> {
        // Whatever the connection was left at (taking in spilled events waits for nothing).
        conn.busy_timeout(self.wait)?;
        loop {
            if self.out_of_time() {
                return Ok(false);
            }
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            let started = Instant::now();
            let mut more = true;
            while more && started.elapsed() < self.tx {
                more = step(&tx)?;
            }
            tx.commit()?;
            self.keep_wal_short(conn);
            if !more {
                return Ok(true);
            }
            // A hook waiting for the lock looks again within a millisecond (see `store::wait`):
            // this is its turn.
            std::thread::sleep(GAP);
        }
    }

    /// Keeps the WAL within the bound a hook checkpoints at, so that no hook pays to copy back
    /// what a long job wrote: past it, a PASSIVE checkpoint copies the WAL back without
    /// blocking writers, then a TRUNCATE, with little left to copy, empties it. Neither waits
    /// for anyone: a reader or writer in the way only means a later pass does it. (A TRUNCATE
    /// alone holds the write lock while it copies and syncs: measured on 100,000 captures,
    /// hooks running meanwhile waited 557 ms at the 90th percentile, against 45 ms now; a
    /// PASSIVE alone never empties the file and made prune three times slower.)
    pub fn keep_wal_short(&self, conn: &Connection) {
        if wal_bytes_of(conn) > WAL_CHECKPOINT_BYTES {
            copy_back(conn);
            checkpoint(conn, Duration::ZERO);
            let _ = conn.busy_timeout(self.wait);
        }
    }
}
