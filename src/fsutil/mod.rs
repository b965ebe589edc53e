//! File-system helpers shared by the store, the spill folder, the log and the settings writer:
//! private directories and files (prompts and tool output are private data), atomic
//! replacement, and the checks that make us trust a file before we read or write it.
//!
//! The machine may be shared. A folder in the temp dir, a spill file or a log path can be
//! planted by another user, as a symlink, a FIFO (every open would block), or a huge sparse
//! file. So a file of ours is opened without following links and without blocking, and is used
//! only when the opened handle is a regular file owned by us; a folder of ours must be a real
//! folder owned by us and closed to others.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

mod lock;
pub use lock::{held, is_locked, lock_waiting, try_lock};
mod named;
pub use named::write_whole;

/// What to do with a file opened by [`open_ours`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Append, creating the file (mode 0600) when it is missing.
    Append,
    /// Read, and write in place (a small file rewritten over its own bytes); never created.
    Rewrite,
}

/// Creates `dir` (and its parents) with mode 0700 where it is missing.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Our own data folder: created 0700 when missing; refused when it is not a folder or is
/// someone else's; closed to others when it was open (the owner's bits are kept: a folder the
/// user made read-only stays read-only). A symlink the user made
/// (the data dir on another disk) is followed: it is the folder behind it that must be ours.
/// Returns whether the mode had to be tightened, for the log. One `stat` when all is well.
pub fn our_dir(dir: &Path) -> io::Result<bool> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            private_dir(dir)?;
            fs::metadata(dir)?
        }
        Err(err) => return Err(err),
    };
    if !meta.is_dir() {
        return Err(refused(dir, "is not a folder"));
    }
    check_owner(dir, &meta)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700))?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether files of ours may be created in `dir`: it is a folder, and ours. Nothing is created
/// or changed (see [`our_dir`] for that).
pub fn is_our_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(refused(dir, "is not a folder"));
    }
    check_owner(dir, &meta)
}

/// A folder of ours in a shared place (the temp dir), whose name anyone can guess: created 0700
/// when missing, and used only when it is a real folder, ours, and closed to others. One that
/// someone else made, or that was ever open to others, is refused, never repaired: files may
/// have been planted in it meanwhile.
pub fn private_temp_dir(dir: &Path) -> io::Result<()> {
    private_dir(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(refused(dir, "is not a folder (a symlink or a file)"));
    }
    check_owner(dir, &meta)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(refused(dir, "is open to other users"));
        }
    }
    Ok(())
}

/// Opens a file of ours: no symlink is followed, a FIFO or device never blocks the open, and
/// the handle is refused unless it is a regular file owned by us.
pub fn open_ours(path: &Path, access: Access) -> io::Result<File> {
    let mut options = OpenOptions::new();
    match access {
        Access::Read => options.read(true),
        Access::Append => options.append(true).create(true),
        Access::Rewrite => options.read(true).write(true),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    check_owner(path, &meta)?;
    Ok(file)
}

/// Closes a file or folder of ours to other users: a folder keeps only its owner's bits
/// (0700), a file its owner's read and write (0600). Opened without following a link and
/// without blocking, and changed through that handle only when it is a regular file or a
/// folder owned by us. Returns whether the mode changed.
pub fn close_to_others(path: &Path) -> io::Result<bool> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(refused(path, "is not a regular file or a folder"));
    }
    check_owner(path, &meta)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        let keep = if meta.is_dir() { 0o700 } else { 0o600 };
        if mode & 0o077 != 0 {
            file.set_permissions(fs::Permissions::from_mode(mode & keep))?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Opens a new file with mode 0600; fails if anything exists at `path`, a symlink included.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// How long a file must last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Through a power loss: fsync the file and the folder.
    PowerLoss,
    /// Through the writer being killed, which needs only the rename (the kernel keeps what was
    /// written): for a copy that the writer itself is about to make redundant.
    Kill,
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new one, never a part:
/// a temp file in the same folder, (fsync,) rename over, (fsync the folder).
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8], lasts: Durability) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = create_private(&tmp)?;
        file.write_all(bytes)?;
        if lasts == Durability::PowerLoss {
            file.sync_all()?;
        }
        fs::rename(&tmp, dir.join(name))?;
        if lasts == Durability::PowerLoss {
            sync_dir(dir);
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a file written with [`Durability::Kill`] last a power loss. Best effort.
pub fn sync_file(path: &Path) {
    if let Ok(file) = File::open(path) {
        let _ = file.sync_all();
    }
    if let Some(dir) = path.parent() {
        sync_dir(dir);
    }
}

/// Makes a rename durable. Best effort: not every platform can open a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// The effective user id of this process; on other platforms there is no owner to compare.
#[cfg(unix)]
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(unix)]
fn check_owner(path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != euid() {
        return Err(refused(
            path,
            &format!("belongs to another user (uid {})", meta.uid()),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner(_path: &Path, _meta: &fs::Metadata) -> io::Result<()> {
    Ok(())
}

fn refused(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} {why}; not using it", path.display()),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_fifo_or_a_symlink_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo {}", fifo.display());
        // Reading a FIFO without a writer would block in open() without O_NONBLOCK.
        assert!(open_ours(&fifo, Access::Read).is_err());
        assert!(open_ours(&fifo, Access::Append).is_err());
        let real = dir.path().join("real");
        fs::write(&real, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(open_ours(&link, Access::Read).is_err());
        assert!(open_ours(&real, Access::Read).is_ok());
    }

    #[test]
    fn our_dir_is_closed_to_others() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        assert!(!our_dir(&data).unwrap());
        fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(our_dir(&data).unwrap());
        let mode = fs::metadata(&data).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(our_dir(&file).is_err());
    }
}
