//! Locks on files of ours, between processes: one maintenance run per data dir, one
//! compressor, one layout move, one hook waiting its turn. A `flock`, which the kernel releases
//! however the holder ends, kill -9 included; never waited on without a deadline.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Access, open_ours};

/// Takes the lock of `path` without waiting: `None` when another process holds it. The lock
/// goes with the returned file.
pub fn try_lock(path: &Path) -> Option<File> {
    let file = open_ours(path, Access::Append).ok()?;
    flock(&file).then_some(file)
}

/// Takes the lock of `path`, waiting for whoever holds it (holders keep it briefly).
pub fn lock_waiting(path: &Path) -> std::io::Result<File> {
    let file = open_ours(path, Access::Append)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !flock(&file) {
        if Instant::now() > deadline {
            return Err(std::io::Error::other(format!(
                "{} stayed locked for 30 s",
                path.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(file)
}

/// Whether another process holds the lock of `path` now.
pub fn is_locked(path: &Path) -> bool {
    match open_ours(path, Access::Append) {
        Ok(file) => !flock(&file),
        Err(_) => false,
    }
}

/// Whether another process holds an exclusive lock on `file`, learned by a shared lock taken
/// for a moment (never in the way of another look).
pub fn held(file: &File) -> bool {
    !flock_shared(file)
}

#[cfg(unix)]
fn flock_shared(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor owned by `file` for the duration of the call.
    unsafe {
        let taken = libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) == 0;
        if taken {
            libc::flock(file.as_raw_fd(), libc::LOCK_UN);
        }
        taken
    }
}

#[cfg(not(unix))]
fn flock_shared(_file: &File) -> bool {
    true
}

/// An exclusive `flock` without waiting; the kernel drops it when the file is closed or the
/// process dies.
#[cfg(unix)]
fn flock(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor owned by `file` for the duration of the call.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Elsewhere there is no lock: two maintenance runs at once do the same idempotent work.
#[cfg(not(unix))]
fn flock(_file: &File) -> bool {
    true
}
