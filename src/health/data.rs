//! The data dir's files as the file system has them: whose they are, whether they are closed
//! to other users (prompts and tool output are private data: folders 0700, files 0600), and
//! how much room the disk has left.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::config::Config;

/// Something in the data dir that is not as it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Ours, but other users may read (or write) it.
    Open { path: PathBuf, mode: u32, dir: bool },
    /// Another user's: never ours to change.
    NotOurs { path: PathBuf, uid: u32 },
    /// A link, a FIFO, a socket or a device where only our files and folders belong.
    NotAFile { path: PathBuf },
}

/// The data dir and what is in it, down to the files of its folders.
#[derive(Debug, Default)]
pub struct DataDir {
    pub exists: bool,
    pub problems: Vec<Problem>,
}

pub fn look(config: &Config) -> DataDir {
    let dir = &config.data_dir;
    // A link the user made (the data dir on another disk) is followed, as the hooks do.
    let Ok(meta) = fs::metadata(dir) else {
        return DataDir::default();
    };
    let mut problems = Vec::new();
    judge(dir, &meta, &mut problems);
    if meta.is_dir() {
        walk(dir, 1, &mut problems);
    }
    DataDir {
        exists: true,
        problems,
    }
}

/// Looks at the entries of `dir`, and into its folders down to `depth` more levels.
fn walk(dir: &Path, depth: usize, problems: &mut Vec<Problem>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let ours = judge(&path, &meta, problems);
        if ours && meta.is_dir() && depth > 0 {
            walk(&path, depth - 1, problems);
        }
    }
}

/// Adds what is wrong with one entry; whether it is ours.
fn judge(path: &Path, meta: &fs::Metadata, problems: &mut Vec<Problem>) -> bool {
    if !meta.is_dir() && !meta.is_file() {
        problems.push(Problem::NotAFile { path: path.into() });
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != crate::fsutil::euid() {
            problems.push(Problem::NotOurs {
                path: path.into(),
                uid: meta.uid(),
            });
            return false;
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            problems.push(Problem::Open {
                path: path.into(),
                mode,
                dir: meta.is_dir(),
            });
        }
    }
    true
}

/// Bytes free for us on the file system of `dir` (or of its nearest existing parent).
#[cfg(unix)]
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    let stat = rustix::fs::statvfs(existing)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(not(unix))]
pub fn free_bytes(_dir: &Path) -> io::Result<u64> {
    Err(io::Error::other("not measured on this platform"))
}
