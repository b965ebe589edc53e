//! Serialises our own writers of one settings file (two installs at once, or an install racing
//! an uninstall), so that each merges into the other's result instead of overwriting it.
//!
//! A lock file created with O_EXCL beside the settings file, holding our pid. A holder keeps it
//! for milliseconds, so one that is older than a few seconds, or whose process is gone, was left
//! by a run that died and is taken over. Claude Code takes no lock; against it the writer
//! re-reads the file before renaming. Something other than a regular file at the lock's path
//! (a FIFO planted to make us block on it) is refused, never opened as a lock.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::open;
use crate::fsutil::create_private;

const STALE_AFTER: Duration = Duration::from_secs(5);
const GIVE_UP_AFTER: Duration = Duration::from_secs(15);

pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock of the settings file `target` (a real file, symlinks resolved).
    pub fn acquire(target: &Path) -> Result<Lock> {
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let path = target.with_file_name(format!(".{name}.claude-mem.lock"));
        let deadline = Instant::now() + GIVE_UP_AFTER;
        loop {
            match create_private(&path) {
                Ok(mut file) => {
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                    open::refuse_planted(&path).context("refusing the lock file")?;
                    if is_stale(&path)? {
                        let _ = fs::remove_file(&path);
                    } else if Instant::now() > deadline {
                        bail!(
                            "another claude-mem has been changing it for {} s (lock file {}); \
                             try again, or delete the lock file if no claude-mem is running",
                            GIVE_UP_AFTER.as_secs(),
                            path.display()
                        );
                    } else {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                Err(err) => {
                    return Err(err)
                        .with_context(|| format!("cannot create lock file {}", path.display()));
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn is_stale(path: &Path) -> Result<bool> {
    // Read through a non-blocking open that refuses anything but a regular file: the path
    // may have been swapped since it was looked at.
    let Some(lock) = open::read(path).context("refusing the lock file")? else {
        // Gone already: the next attempt to create it decides.
        return Ok(false);
    };
    let old = lock
        .stamp
        .modified()
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER);
    Ok(old || owner_is_gone(&lock.bytes))
}

/// Where processes can be looked up cheaply (Linux), a lock whose pid is gone is stale at once.
#[cfg(target_os = "linux")]
fn owner_is_gone(pid: &[u8]) -> bool {
    std::str::from_utf8(pid)
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .is_some_and(|pid| !Path::new("/proc").join(pid.to_string()).exists())
}

#[cfg(not(target_os = "linux"))]
fn owner_is_gone(_pid: &[u8]) -> bool {
    false
}
