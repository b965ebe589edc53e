//! Putting the new settings file in place of the old one, and noticing when the old one was no
//! longer the file our change was based on.
//!
//! The last check that the file is unchanged and the rename that replaces it are two system
//! calls; another program can write in between. On Linux the rename is an exchange
//! (`renameat2(RENAME_EXCHANGE)`): the file we displaced stays reachable at our temp path,
//! so we can look at it. If it is not the file we checked (someone renamed theirs over it), or
//! it was written since (someone rewrote it in place), we exchange again, which puts their file
//! back, and the caller merges into it. That closes the gap for writers that replace the file
//! by a rename. For a writer that rewrites in place without a lock, as Claude Code does, a gap
//! stays that no rename can close: a write that opened the old file before our exchange and
//! lands after our second look at it (2 ms later) goes into a file that is no longer
//! settings.json; and one that lands between the exchange and the exchange back, in a version
//! it read from our file, competes with the write we put back, and the newer one stays.
//! Elsewhere (or on a file system without the exchange) a plain rename is used, and the gap is
//! the time between the last check and the rename.

use std::io;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use tempfile::NamedTempFile;

use super::open::{self, Snapshot, Stamp};

/// How long an in-place write that opened the old file before our exchange is given to land
/// in it, before that file is removed.
const LATE_WRITE: Duration = Duration::from_millis(2);

pub enum Replaced {
    Done,
    /// Someone else's write landed in the gap; their file is back in place, ours is gone.
    Raced,
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
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => Ok(Replaced::Raced),
            Err(err) => Err(err.error).with_context(cannot),
        };
    };
    let ours = Stamp::of(&temp.as_file().metadata().with_context(cannot)?);
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
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Replaced::Raced),
        Err(err) => return Err(err).with_context(cannot),
    }
    // `temp` now names the file we displaced; dropping it removes that file. Looked at twice:
    // an in-place write that opened it just before the exchange may land a moment later.
    let unchanged = || open::read(&temp).map(|now| now.as_ref() == Some(expected));
    if unchanged().with_context(cannot)? && {
        std::thread::sleep(LATE_WRITE);
        unchanged().with_context(cannot)?
    } {
        return Ok(Replaced::Done);
    }
    if let Err(err) = put_back(&temp, target, &ours) {
        // Their file must not go with our temp file: leave it where it is, and say where.
        let kept = temp.keep().unwrap_or_default();
        return Err(err).with_context(|| {
            format!(
                "another program wrote {} at the same moment, and its version could not be put \
                 back; it is in {}",
                target.display(),
                kept.display()
            )
        });
    }
    Ok(Replaced::Raced)
}

/// Exchanges back, so that the file someone else wrote is settings.json again.
fn put_back(temp: &Path, target: &Path, ours: &Stamp) -> Result<()> {
    exchange(temp, target)?;
    let back = open::read(temp)?;
    if back.is_some_and(|back| back.stamp != *ours) {
        // Yet another write replaced or rewrote ours in the meantime: that one is the newest.
        exchange(temp, target)?;
    }
    Ok(())
}

/// Swaps two paths atomically (`renameat2` through `syscall`, which every libc has).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both pointers are NUL-terminated strings that outlive the call, which keeps
    // neither; the arguments are those renameat2(2) takes.
    let status = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
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
