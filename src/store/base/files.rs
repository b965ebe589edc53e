//! Opening the database file only when it is ours: a regular file of this user's, never
//! through a link; for reading, a connection that cannot write even by mistake.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

use super::errors::Refused;
use crate::fsutil;

/// How long a reader waits for the rare lock a reader can meet (a WAL being recovered).
pub const READ_WAIT: Duration = Duration::from_secs(5);

/// The database file must be a regular file of ours: SQLite would follow a symlink and open a
/// FIFO, and another user's file is not ours to write. So must its `-wal` and `-shm` when they
/// are there: SQLite opens them by name, following a link (a planted `-shm` symlink made every
/// open fail with "unable to open database file", which said nothing of what to remove).
pub fn check_file(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("cannot look at the database {}", path.display()))?;
    check_meta(path, &meta)?;
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let side = Path::new(&side);
        if let Ok(meta) = std::fs::symlink_metadata(side) {
            check_side(side, &meta)?;
        }
    }
    Ok(())
}

/// A `-wal` or `-shm` that is not ours: SQLite makes both anew, so removing it is the fix (a
/// WAL of ours is a regular file of ours, never what this refuses).
fn check_side(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    check_meta(path, meta).map_err(|_| {
        Refused(format!(
            "{} is not a file of ours (a symlink, a folder, a device or another user's); \
             remove it (rm {}) and claude-mem records again",
            path.display(),
            path.display()
        ))
        .into()
    })
}

fn check_meta(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if !meta.is_file() {
        return Err(Refused(format!(
            "{} is not a regular file (a symlink, a folder or a device); left untouched",
            path.display()
        ))
        .into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != fsutil::euid() {
            return Err(Refused(format!(
                "{} belongs to another user (uid {}); left untouched",
                path.display(),
                meta.uid()
            ))
            .into());
        }
    }
    Ok(())
}

/// The pages SQLite keeps in memory of a file a command reads. A command reads most pages once:
/// SQLite's default cache (2 MiB) made each page read a new stretch of heap, which the kernel
/// faults in a page at a time, zeroed and charged to the process. With 64 pages reused, on
/// 100,000 captures, `sessions` went from 739 page faults and 3.8 ms of CPU to 289 and 3.0,
/// `status` from 735 to 287 (25.5 to 24.3 ms), a six-word `search` of the index from 786 to
/// 360 (4.2 to 3.3 ms); the pages read again cost a few `pread`s.
pub const READ_CACHE: &str = "PRAGMA cache_size = 64";

/// A read-only connection to the file at `path` that cannot write even by mistake and never
/// follows a link, reading through [`READ_CACHE`].
pub fn open_file_read_only(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    conn.busy_timeout(READ_WAIT)?;
    conn.execute_batch("PRAGMA query_only = ON")?;
    conn.execute_batch(READ_CACHE)?;
    Ok(conn)
}
