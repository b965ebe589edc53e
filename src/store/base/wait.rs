//! How a hook waits for the write lock: it looks again every millisecond (at first every
//! quarter of one) until its deadline.
//!
//! SQLite's own busy handler sleeps ever longer between looks (1, 2, 5, ... up to 100 ms). A
//! command that writes in short slices, one transaction right after another (prune, scrub,
//! forget, import), leaves the lock free for a moment only between two of them, and a hook
//! that looks every 100 ms almost never finds it free: on the 100,000-capture database hooks
//! waited their whole second during a scrub, and one spilled its event. Looking every
//! millisecond, a hook gets the lock at the end of the slice it arrived in; the slices leave a
//! gap for it ([`crate::store::base::slices`]). Only one waiting hook looks at a time: the others
//! sleep until it is their turn (`hook::turn`), so that hundreds of them waking every
//! millisecond do not starve the process that holds the lock.
//!
//! Where waiting could deadlock SQLite fails at once instead, whatever the busy handler:
//! [`past_deadlock`] tries again.

use std::cell::Cell;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

thread_local! {
    /// The deadline of this thread's wait: a busy handler is a plain function, and the hook's
    /// one connection is used on one thread.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// From now on, `conn` waits for locks until `deadline` and no longer.
pub fn until(conn: &mut Connection, deadline: Instant) -> rusqlite::Result<()> {
    DEADLINE.with(|d| d.set(Some(deadline)));
    conn.busy_handler(Some(look_again))
}

/// The first looks come quicker: a lock that passes from hook to hook is free again within a
/// millisecond or two, and each look saved is a hook's write sooner for all those in line. In
/// a burst of 256 waiting hooks, all were in 230 to 320 ms after the lock was let go, against
/// 430 to 630 ms looking every millisecond. A lock held longer (a long job's slice, someone
/// else's transaction) is looked at every millisecond.
const QUICK_LOOKS: i32 = 40;
const QUICK: Duration = Duration::from_micros(250);
const SLOW: Duration = Duration::from_millis(1);

fn look_again(tries: i32) -> bool {
    match DEADLINE.with(Cell::get) {
        Some(deadline) if Instant::now() < deadline => {
            std::thread::sleep(if tries < QUICK_LOOKS { QUICK } else { SLOW });
            true
        }
        _ => false,
    }
}

/// Runs `step` again, every 5 ms until `deadline`, while SQLite fails it with SQLITE_BUSY
/// without calling the busy handler. It does so when two connections that both read a new
/// file then both need its exclusive lock to turn it to WAL: letting both wait would deadlock.
/// The one that failed let go of its lock when `step` returned, so the other gets through, and
/// then the retry does too.
pub fn past_deadlock<T>(
    deadline: Instant,
    mut step: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    loop {
        match step() {
            Err(err)
                if err.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            done => return done,
        }
    }
}
