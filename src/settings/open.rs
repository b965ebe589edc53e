//! Opening the files around a settings file without trusting what is at their paths.
//!
//! Whoever can write a directory can put a FIFO, a socket, a device node or a directory where
//! we expect settings.json, its backup or our lock file. Opening a FIFO blocks until someone
//! writes to it (forever), and replacing a device node by a rename turns `/dev/null` into a
//! regular file. So opens are non-blocking and the type is checked with fstat on the opened
//! handle, not on the path (which can change in between): only a regular file is used.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::Path;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

/// Settings files are a few KB; a bigger file is not one, and would only cost memory.
const MAX_BYTES: u64 = 64 << 20;

/// Which file, and as of when: two equal stamps mean nobody wrote the file in between (as far
/// as the file system can tell: the clock behind mtime ticks every few milliseconds, so the
/// content is compared as well).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            dev,
            ino,
            size: meta.len(),
            modified: meta.modified().ok(),
        }
    }

    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }
}

/// What a file held, read in one go from one handle, and which file that was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes: Vec<u8>,
    pub stamp: Stamp,
    /// Hard links to the file: more than one means a rename splits it from its twins.
    pub links: u64,
}

/// The file's contents, or `None` if there is none. Refuses anything but a regular file.
pub fn read(path: &Path) -> Result<Option<Snapshot>> {
    let mut file = match open(path, false) {
        Ok(file) => file,
        Err(err) if is_not_found(&err) => return Ok(None),
        Err(err) => return Err(err),
    };
    let cannot = || format!("cannot read {}", path.display());
    // A write while we read would give a torn copy: read until the stamp holds still.
    for _ in 0..10 {
        let meta = file.metadata().with_context(cannot)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .with_context(cannot)?;
        if bytes.len() as u64 > MAX_BYTES {
            bail!(
                "{} is larger than {} MiB; that is not a settings file",
                path.display(),
                MAX_BYTES >> 20
            );
        }
        let after = file.metadata().with_context(cannot)?;
        if Stamp::of(&meta) == Stamp::of(&after) {
            return Ok(Some(Snapshot {
                bytes,
                stamp: Stamp::of(&after),
                links: link_count(&after),
            }));
        }
        file = open(path, false)?;
    }
    bail!(
        "{} kept changing while it was read (another program is writing it); run the command \
         again",
        path.display()
    )
}

/// Opens `path` (following links) for reading, or for writing without truncating, without
/// blocking, and only if it is a regular file.
pub fn open(path: &Path, write: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(!write).write(write);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let verb = if write { "write" } else { "read" };
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) => {
            // A socket cannot be opened at all (ENXIO): say what it is rather than how it failed.
            if let Ok(meta) = fs::metadata(path) {
                refuse_other_than_file(path, &meta)?;
            }
            return Err(err).with_context(|| format!("cannot {verb} {}", path.display()));
        }
    };
    let meta = file
        .metadata()
        .with_context(|| format!("cannot look at {}", path.display()))?;
    // O_NONBLOCK is left set: on a regular file it changes nothing.
    refuse_other_than_file(path, &meta)?;
    Ok(file)
}

/// Fails unless `meta` (of `path`) is a regular file, saying what it is instead.
pub fn refuse_other_than_file(path: &Path, meta: &Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    bail!(
        "{} is {}, not a regular file; claude-mem reads and writes only regular files",
        path.display(),
        what_it_is(meta)
    )
}

/// Fails if something other than a regular file is at `path` (a link is not followed).
pub fn refuse_planted(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) => refuse_other_than_file(path, &meta),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err).with_context(|| format!("cannot look at {}", path.display())),
    }
}

fn is_not_found(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|err| err.kind() == ErrorKind::NotFound)
}

fn what_it_is(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    "not a file"
}

fn link_count(meta: &Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(meta)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}
