//! How a hook waits for the write lock: it looks again every millisecond until its deadline.
//!
//! SQLite's own busy handler sleeps ever longer between looks (1, 2, 5, ... up to 100 ms). A
//! command that writes in short slices, one transaction right after another (prune, scrub,
//! forget, import), leaves the lock free for a moment only between two of them, and a hook
//! that looks every 100 ms almost never finds it free: on the 100,000-capture database hooks
//! waited their whole second during a scrub, and one spilled its event. Looking every
//! millisecond, a hook gets the lock at the end of the slice it arrived in; the slices leave a
//! gap for it ([`crate::store::slices`]).

use std::cell::Cell;
use std::time::{Duration, Instant};

use rusqlite::Connection;

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

fn look_again(_tries: i32) -> bool {
    match DEADLINE.with(Cell::get) {
        Some(deadline) if Instant::now() < deadline => {
            std::thread::sleep(Duration::from_millis(1));
            true
        }
        _ => false,
    }
}
