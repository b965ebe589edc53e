//! A rebuild asked for, and a rebuild under way: what every part of the store needs to know of
//! the rebuild (`hygiene::rebuild`), which runs VACUUM and so holds the write lock for seconds.
//!
//! A hook that finds a rebuild under way keeps its event in the spill folder at once instead of
//! waiting its whole budget ([`under_way`]: one `stat`, then a look at the lock [`Mark`] holds
//! on `rebuild.lock`, which the kernel lets go of however the rebuild ends). A rebuild asked
//! for and not done yet (a full disk, a killed process) is a row of `meta` ([`request`]), which
//! the write path reads when it migrates and the maintenance process acts on.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};

use crate::fsutil::{self, Access};

/// The row of `meta` that asks for a rebuild.
const REQUEST: &str = "rebuild";
/// The file in the data dir that a rebuild holds locked while it runs.
pub const MARK: &str = "rebuild.lock";
/// How long a rebuild tries to take its mark: a hook's look holds it for microseconds.
const MARK_WAIT: Duration = Duration::from_millis(50);

/// The lock a rebuild holds while it runs, on `rebuild.lock` in the data dir; the file goes
/// when it ends, before the lock.
pub struct Mark {
    path: PathBuf,
    _file: File,
}

impl Mark {
    /// Takes the mark. Best effort: without it hooks wait their budget, then spill.
    pub fn hold(data_dir: &Path) -> Option<Mark> {
        let path = data_dir.join(MARK);
        let deadline = Instant::now() + MARK_WAIT;
        loop {
            if let Some(file) = fsutil::try_lock(&path) {
                return Some(Mark { path, _file: file });
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether a rebuild holds the database now: one `stat` when none ran since the last ended;
/// else a look at the lock, which a rebuild that died no longer holds.
pub fn under_way(data_dir: &Path) -> bool {
    let path = data_dir.join(MARK);
    path.exists() && fsutil::open_ours(&path, Access::Read).is_ok_and(|f| fsutil::held(&f))
}

/// Remembers in the database that it must be rebuilt, until [`database`](crate::store::rebuild::database) has done it.
/// Each request is told apart from the one before (a random value), so that a rebuild answers
/// only the request it found when it began (see [`answered`]).
pub fn request(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, lower(hex(randomblob(8))))",
        [REQUEST],
    )?;
    Ok(())
}

/// The request standing now, to hand to [`answered`] once the work it asks for is done.
pub fn standing(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [REQUEST], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Clears the request `asked` (read by [`standing`] before the work began), and only it: a
/// private turn purged while the search index was being rebuilt asked again, and its text is
/// in the index until the next rebuild.
pub fn answered(conn: &Connection, asked: Option<&str>) -> Result<()> {
    if let Some(asked) = asked {
        conn.execute(
            "DELETE FROM meta WHERE key = ?1 AND value = ?2",
            [REQUEST, asked],
        )?;
    }
    Ok(())
}

/// Whether a rebuild was asked for and not done yet.
pub fn requested(conn: &Connection) -> Result<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM meta WHERE key = ?1", [REQUEST], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Runs `sql` (a VACUUM) with SQLite's temporary files in `temp_dir`, on disk whatever the
/// connection keeps in memory otherwise (a copy of the whole file does not belong there). The
/// folder is the process's setting: it is put back to SQLite's default (the temp dir) after,
/// and the connection's `temp_store` to what it was.
pub fn vacuum(conn: &Connection, temp_dir: &Path, sql: &str) -> rusqlite::Result<()> {
    let store: i64 = conn.query_row("PRAGMA temp_store", [], |r| r.get(0))?;
    let dir = temp_dir.to_string_lossy().replace('\'', "''");
    conn.execute_batch(&format!(
        "PRAGMA temp_store = FILE; PRAGMA temp_store_directory = '{dir}'"
    ))?;
    let done = conn.execute_batch(sql);
    let reset = conn.execute_batch(&format!(
        "PRAGMA temp_store_directory = ''; PRAGMA temp_store = {store}"
    ));
    done.and(reset)
}
