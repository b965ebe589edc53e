//! Locks on files of ours, between processes: one maintenance run per data dir, one
//! compressor, one layout move, one hook waiting its turn. std's file lock (a `flock` on Unix),
//! which the kernel releases however the holder ends, kill -9 included; never waited on without
//! a deadline.

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
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// An exclusive lock without waiting (a `flock` on Unix); the kernel drops it when the file is
/// closed or the process dies.
fn flock(file: &File) -> bool {
    file.try_lock().is_ok()
}
