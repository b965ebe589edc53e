//! Hooks that have to wait for the write lock take turns: one looks at the database, the rest
//! sleep in the kernel until it is theirs.
//!
//! A waiting hook looks at the database every millisecond (see `store::wait`), which is what
//! lets it find the gap a long job leaves between two of its transactions. But when hundreds
//! of hooks wait at once (a burst of parallel tool calls), hundreds of processes waking every
//! millisecond leave the two cores little time for the one that holds the lock: in 5 of 20
//! bursts of 256 captures, 83 to 122 hooks waited their whole second and spilled their event.
//! So a hook waits first for a lock on a file of its own (`hooks.turn`), which the kernel hands
//! to one waiter at a time, and only the holder looks at the database; it lets go as soon as
//! its write is in, and the next one's turn begins.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::mpsc;
use std::time::Instant;

use crate::fsutil::{self, Access};

/// This run's turn to wait for the write lock; the next waiter's begins when it is dropped.
pub struct Turn {
    _file: File,
}

/// What came of waiting for a turn.
pub enum Waited {
    Turn(Turn),
    /// The deadline passed while other hooks took their turns.
    TooLong,
    /// The turn file cannot be used (not ours, an odd file system): wait without turns.
    Unavailable,
}

/// Waits until it is this run's turn, or until `deadline`.
pub fn take(path: &Path, deadline: Instant) -> Waited {
    let Ok(file) = fsutil::open_ours(path, Access::Append) else {
        return Waited::Unavailable;
    };
    match file.try_lock() {
        Ok(()) => return Waited::Turn(Turn { _file: file }),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Waited::Unavailable,
    }
    // The kernel has no lock with a deadline: a thread waits for it, and when the deadline
    // comes first the run goes on without it (the lock, if it comes, goes when the process ends).
    let (sender, receiver) = mpsc::sync_channel(1);
    let waiter = std::thread::Builder::new().spawn(move || {
        let _ = sender.send(file.lock().map(|()| file));
    });
    if waiter.is_err() {
        return Waited::Unavailable;
    }
    match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(file)) => Waited::Turn(Turn { _file: file }),
        Ok(Err(_)) => Waited::Unavailable,
        Err(_) => Waited::TooLong,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn one_turn_at_a_time_and_the_next_when_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.turn");
        let soon = || Instant::now() + Duration::from_millis(50);
        let Waited::Turn(first) = take(&path, soon()) else {
            panic!("a free turn was not taken");
        };
        assert!(matches!(take(&path, soon()), Waited::TooLong));
        let later = std::thread::spawn(move || {
            matches!(
                take(&path, Instant::now() + Duration::from_secs(10)),
                Waited::Turn(_)
            )
        });
        std::thread::sleep(Duration::from_millis(20));
        drop(first);
        assert!(later.join().unwrap(), "the turn was not handed on");
    }

    #[cfg(unix)]
    #[test]
    fn a_turn_file_that_is_not_ours_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.turn");
        std::os::unix::fs::symlink("/dev/null", &path).unwrap();
        assert!(matches!(take(&path, Instant::now()), Waited::Unavailable));
    }
}
