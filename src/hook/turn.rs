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
//!
//! A holder that stops looking (stopped by SIGSTOP or a debugger, or slowed to a crawl) would
//! make every waiter spend its whole budget in line while the database itself is free. So
//! each new holder stamps the turn file's time, and a waiter looks at it once every
//! [`LOOK_EVERY`]: when no turn began since its last look, it tries the database's lock
//! itself, which a free database grants at once. While the turns go round (a new one every
//! millisecond or two in a burst) a look is one `stat`, so that hundreds of waiters trying
//! the lock do not take the CPU from the holder.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use crate::fsutil::{self, Access};

/// This run's turn to wait for the write lock; the next waiter's begins when it is dropped.
pub struct Turn {
    _file: File,
}

impl Turn {
    /// Takes the turn, and says so to the waiters (see the module's doc).
    fn begin(file: File) -> Turn {
        let _ = file.set_modified(SystemTime::now());
        Turn { _file: file }
    }
}

/// How often a waiter looks at the database itself, besides waiting for its turn.
const LOOK_EVERY: Duration = Duration::from_millis(75);

/// What came of waiting for a turn.
pub enum Waited {
    Turn(Turn),
    /// A look at the database, between turns, did what the turn was for.
    Done,
    /// The deadline passed while other hooks took their turns.
    TooLong,
    /// The turn file cannot be used (not ours, an odd file system): wait without turns.
    Unavailable,
}

/// Waits until it is this run's turn, or until `deadline`; calls `look` when no turn began
/// for [`LOOK_EVERY`], and stops waiting when it returns true (it did the work, or failed for
/// good).
pub fn take(path: &Path, deadline: Instant, look: &mut dyn FnMut() -> bool) -> Waited {
    let Ok(file) = fsutil::open_ours(path, Access::Append) else {
        return Waited::Unavailable;
    };
    match file.try_lock() {
        Ok(()) => return Waited::Turn(Turn::begin(file)),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Waited::Unavailable,
    }
    let began = || {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
    };
    let mut last = began();
    // The kernel has no lock with a deadline: a thread waits for it, and when the deadline
    // comes first the run goes on without it (the lock, if it comes, goes when the process ends).
    let (sender, receiver) = mpsc::sync_channel(1);
    let waiter = std::thread::Builder::new().spawn(move || {
        let _ = sender.send(file.lock().map(|()| file));
    });
    if waiter.is_err() {
        return Waited::Unavailable;
    }
    loop {
        let now = Instant::now();
        let until = deadline.min(now + LOOK_EVERY);
        match receiver.recv_timeout(until.saturating_duration_since(now)) {
            Ok(Ok(file)) => return Waited::Turn(Turn::begin(file)),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => return Waited::Unavailable,
            Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                return Waited::TooLong;
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = began();
                if now != last {
                    last = now;
                } else if look() {
                    return Waited::Done;
                }
            }
        }
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
        let Waited::Turn(first) = take(&path, soon(), &mut || false) else {
            panic!("a free turn was not taken");
        };
        assert!(matches!(
            take(&path, soon(), &mut || false),
            Waited::TooLong
        ));
        let later = std::thread::spawn(move || {
            matches!(
                take(&path, Instant::now() + Duration::from_secs(10), &mut || {
                    false
                }),
                Waited::Turn(_)
            )
        });
        std::thread::sleep(Duration::from_millis(20));
        drop(first);
        assert!(later.join().unwrap(), "the turn was not handed on");
    }

    #[test]
    fn a_waiter_looks_for_itself_while_the_turn_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.turn");
        let far = Instant::now() + Duration::from_secs(10);
        let Waited::Turn(_held) = take(&path, far, &mut || false) else {
            panic!("a free turn was not taken");
        };
        let mut looks = 0;
        let waited = take(&path, far, &mut || {
            looks += 1;
            looks == 3
        });
        assert!(matches!(waited, Waited::Done));
        assert_eq!(looks, 3);
    }

    #[cfg(unix)]
    #[test]
    fn a_turn_file_that_is_not_ours_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.turn");
        std::os::unix::fs::symlink("/dev/null", &path).unwrap();
        assert!(matches!(
            take(&path, Instant::now(), &mut || false),
            Waited::Unavailable
        ));
    }
}
