//! Putting the new settings file in place of the old one, and noticing when the old one was no
//! longer the file our change was based on.
//!
//! The last check that the file is unchanged and the rename that replaces it are two system
//! calls; another program can write in between. On Linux the rename is an exchange
//! (`renameat2(RENAME_EXCHANGE)`): the file we displaced stays reachable at our temp path,
//! so we can look at it. If it is not the file we checked (someone renamed theirs over it), or
//! it was written since (someone rewrote it in place), we exchange again, which puts their file
//! back, and the caller merges into it. That closes the gap for writers that replace the file
//! by a rename. A writer that rewrites the file in place, without a lock, as Claude Code does,
//! may have opened the old file before our exchange and write into it after: so the file we
//! displaced is looked at again once no program has it open for writing any more (the kernel
//! says so: a read lease can be taken only then), for up to half a second, and only then
//! removed. A write that lands while their file is being put back competes with it; when
//! theirs then cannot stay, its text goes back to the caller, which merges what it changed.
//! Where leases are not available the displaced file is looked at 2 ms after the exchange,
//! and a write that comes later goes into a file that is no longer settings.json. Elsewhere
//! (or on a file system without the exchange) a plain rename is used, and the gap is the time
//! between the last check and the rename.

use std::io;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use tempfile::NamedTempFile;

use super::open::{self, Snapshot, Stamp};

/// Where no lease tells whether a program still has the file we displaced open for writing:
/// how long an in-place write that opened it before our exchange is given to land in it.
const LATE_WRITE: Duration = Duration::from_millis(2);
/// How long a program that has the displaced file open for writing is waited for.
const WRITER_CLOSES: Duration = Duration::from_millis(500);

pub enum Replaced {
    Done,
    /// Someone else's write landed in the gap; their file is back in place, ours is gone.
    /// `dropped` is the text of an earlier version of theirs that could not stay (a later
    /// write of theirs had rewritten ours meanwhile): what it changed must be merged too.
    Raced {
        dropped: Option<Vec<u8>>,
    },
}

/// Replaces `target` by `temp`, expecting `target` to be what `expected` saw (or to be missing
/// when `expected` is `None`).
pub fn replace(
    temp: NamedTempFile,
    target: &Path,
    expected: Option<&Snapshot>,
) -> Result<Replaced> {
    let cannot = || format!("cannot replace {}", target.display());
    let Some(expected) = expected else {
        // A new file: never over one that someone created meanwhile.
        return match temp.persist_noclobber(target) {
            Ok(_) => Ok(Replaced::Done),
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Replaced::Raced { dropped: None })
            }
            Err(err) => Err(err.error).with_context(cannot),
        };
    };
    let ours = Stamp::of(&temp.as_file().metadata().with_context(cannot)?);
    // A program writing the file in place now would write into the one we displace: let it
    // finish first, and merge into what it wrote.
    writers_gone(target);
    if open::read(target).with_context(cannot)?.as_ref() != Some(expected) {
        return Ok(Replaced::Raced { dropped: None });
    }
    let temp = temp.into_temp_path();
    match exchange(&temp, target) {
        Ok(()) => {}
        Err(err) if exchange_unsupported(&err) => {
            temp.persist(target)
                .map_err(|err| err.error)
                .with_context(cannot)?;
            return Ok(Replaced::Done);
        }
        // Removed since the last check: the next round creates it.
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(Replaced::Raced { dropped: None });
        }
        Err(err) => return Err(err).with_context(cannot),
    }
    // `temp` now names the file we displaced; dropping it removes that file. Looked at twice:
    // an in-place write that opened it before the exchange may land in it later.
    let unchanged = || open::read(&temp).map(|now| now.as_ref() == Some(expected));
    if unchanged().with_context(cannot)? && {
        writers_gone(&temp);
        unchanged().with_context(cannot)?
    } {
        return Ok(Replaced::Done);
    }
    match put_back(&temp, target, &ours) {
        Ok(dropped) => Ok(Replaced::Raced { dropped }),
        Err(err) => {
            // Their file must not go with our temp file: leave it where it is, and say where.
            let kept = temp.keep().unwrap_or_default();
            Err(err).with_context(|| {
                format!(
                    "another program wrote {} at the same moment, and its version could not be \
                     put back; it is in {}",
                    target.display(),
                    kept.display()
                )
            })
        }
    }
}

/// Exchanges back, so that the file someone else wrote is settings.json again. Returns the
/// text of their earlier version when a later write of theirs stays instead.
fn put_back(temp: &Path, target: &Path, ours: &Stamp) -> Result<Option<Vec<u8>>> {
    exchange(temp, target)?;
    // A program that opened ours meanwhile may be about to write it.
    writers_gone(temp);
    let back = open::read(temp)?;
    if !back.is_some_and(|back| back.stamp != *ours) {
        return Ok(None);
    }
    // Yet another write replaced or rewrote ours in the meantime: that one is the newest, and
    // what the one put back changed is merged into it by the caller.
    exchange(temp, target)?;
    writers_gone(temp);
    Ok(open::read(temp)?.map(|dropped| dropped.bytes))
}

/// Returns once no program has `path` open for writing, or after [`WRITER_CLOSES`]; where the
/// kernel cannot tell, after [`LATE_WRITE`].
fn writers_gone(path: &Path) {
    let started = std::time::Instant::now();
    loop {
        match open_for_writing(path) {
            Some(false) => return,
            None => return std::thread::sleep(LATE_WRITE),
            Some(true) if started.elapsed() > WRITER_CLOSES => return,
            Some(true) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// Whether some program has `path` open for writing: a read lease is granted only when none
/// has. `None` when leases are not available here (another file system, another owner).
#[cfg(target_os = "linux")]
fn open_for_writing(path: &Path) -> Option<bool> {
    // A lease broken while we hold it would be told with SIGIO, whose default is to end the
    // process; it is held for two system calls, on a file nobody opens by its name.
    // SAFETY: sets a signal's disposition to SIG_IGN (no handler runs), which has no
    // preconditions.
    unsafe { libc::signal(libc::SIGIO, libc::SIG_IGN) };
    let file = std::fs::File::open(path).ok()?;
    match lease(&file, libc::F_RDLCK) {
        Ok(()) => {
            let _ = lease(&file, libc::F_UNLCK);
            Some(false)
        }
        Err(err) => (err.raw_os_error() == Some(libc::EAGAIN)).then_some(true),
    }
}

/// Takes (`F_RDLCK`) or gives back (`F_UNLCK`) a lease on `file`: `fcntl(F_SETLEASE)`, which
/// neither std nor rustix offers.
#[cfg(target_os = "linux")]
fn lease(file: &std::fs::File, kind: libc::c_int) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a descriptor `file` owns for the duration of the call, and an integer argument:
    // F_SETLEASE reads and writes no memory of ours.
    match unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, kind) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_for_writing(_path: &Path) -> Option<bool> {
    None
}

/// Swaps two paths atomically (`renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    Ok(renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)?)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The kernel or the file system has no exchange (EINVAL, ENOSYS, EOPNOTSUPP).
fn exchange_unsupported(err: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    let codes = [libc::EINVAL, libc::ENOSYS, libc::EOPNOTSUPP];
    #[cfg(not(target_os = "linux"))]
    let codes: [i32; 0] = [];
    err.kind() == io::ErrorKind::Unsupported
        || err.raw_os_error().is_some_and(|code| codes.contains(&code))
}
