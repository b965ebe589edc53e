//! Starting work a hook must not wait for (a large checkpoint, a backlog of spill files, the
//! compression of a session's items) in a process of its own: its own session and process
//! group, stdio closed (Claude Code waits for the hook's pipes to close, so an inherited one
//! would hold it up), never waited for. At most one of each runs per data dir: it holds a lock
//! on a file there, which the kernel releases however it ends, kill -9 included.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::config::Config;
use crate::fsutil;

/// Starts `claude-mem maintain` for this data dir, unless one is running already.
pub fn maintain(config: &Config) {
    if !is_locked(&config.maintain_lock()) {
        start(&["maintain", "--auto"]);
    }
}

/// Starts `claude-mem compress --auto` for this data dir, unless one is running already or
/// compression is paused (the day's budget is spent, no model could be reached). The caller
/// has checked that compression is on and that items wait.
pub fn compress(config: &Config) {
    if !is_locked(&config.compress_lock()) && crate::compress::pause::current(config).is_none() {
        start(&["compress", "--auto"]);
    }
}

/// Whether a background sync is due: sync is set up, and the last one began longer ago than
/// `CLAUDE_MEM_SYNC_INTERVAL`. Two `stat`s, for the SessionEnd hook; the sync itself runs in
/// the maintenance process (see `crate::sync`), never in a hook.
pub fn sync_due(config: &Config) -> bool {
    let Some(every) = config.sync_interval else {
        return false;
    };
    let dir = config.sync_dir();
    if !dir.join(SYNC_SETTINGS).exists() {
        return false;
    }
    std::fs::metadata(dir.join(SYNC_TRIED))
        .and_then(|m| m.modified())
        .map_or(true, |at| at.elapsed().unwrap_or_default() >= every)
}

/// Present once sync is set up (in `Config::sync_dir`).
pub const SYNC_SETTINGS: &str = "remote.json";
/// Touched when a sync begins.
pub const SYNC_TRIED: &str = "tried";

fn start(args: &[&str]) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe);
    command
        .args(args)
        // The environment is the hook's own, so the data dir (and the old place an earlier
        // release used) are the same for both.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    detach(&mut command);
    // Dropping the handle neither waits for nor kills the child.
    let _ = command.spawn();
}

#[cfg(unix)]
fn detach(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn detach(_command: &mut Command) {}

/// Takes the lock of `path` without waiting: `None` when another process holds it. The lock
/// goes with the returned file.
pub fn try_lock(path: &Path) -> Option<File> {
    let file = fsutil::open_ours(path, fsutil::Access::Append).ok()?;
    flock(&file).then_some(file)
}

/// Takes the lock of `path`, waiting for whoever holds it (holders keep it briefly).
pub fn lock_waiting(path: &Path) -> std::io::Result<File> {
    let file = fsutil::open_ours(path, fsutil::Access::Append)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !flock(&file) {
        if std::time::Instant::now() > deadline {
            return Err(std::io::Error::other(format!(
                "{} stayed locked for 30 s",
                path.display()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(file)
}

/// Whether another process holds the lock of `path` now.
fn is_locked(path: &Path) -> bool {
    match fsutil::open_ours(path, fsutil::Access::Append) {
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
