//! Moving the files of releases before the layout change into the current layout, once.
//!
//! Those releases kept their database as `~/.claude-mem/claude-mem.db`: the very folder and
//! name of thedotmack/claude-mem, so that one tool's hooks refused the other's database and
//! every event went to the spill folder for good. Now our files have names of their own in a
//! folder of their own (see `Config`). A database at the old place is moved only when it is
//! ours (our `application_id`); the incumbent's is never touched.
//!
//! Hooks never do the move: one that finds no database where it belongs but one at the old
//! place keeps its event in the spill folder and starts the maintenance process, which moves
//! the files under a lock (or, when the old database is not ours, just creates the new one).
//! `install-hooks` does the same in the foreground.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::config::Config;
use crate::fsutil;
use crate::store::sql::APPLICATION_ID;
use crate::store::write::Store;

/// What [`settle`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    /// The current layout was there already, or there was nothing to move.
    Nothing,
    /// Our files were moved from the old place.
    Moved { from: PathBuf },
    /// The file at the old place is not ours (thedotmack/claude-mem's): left alone.
    NotOurs { legacy_db: PathBuf },
}

/// Whether a hook must leave its event to the maintenance process: no database yet where it
/// belongs, and a file at the old place that may have to move first. One `stat` when the
/// database is there.
pub fn pending(config: &Config) -> bool {
    !config.db_path().exists()
        && config.legacy_db_path() != config.db_path()
        && config.legacy_db_path().exists()
}

/// Brings the data dir to the current layout. Idempotent; safe with other runs at once.
pub fn settle(config: &Config) -> Result<Settled> {
    if !pending(config) {
        return Ok(Settled::Nothing);
    }
    fsutil::our_dir(&config.data_dir)
        .with_context(|| format!("cannot use the data dir {}", config.data_dir.display()))?;
    let _lock = crate::fsutil::lock_waiting(&config.data_dir.join(".layout.lock"))
        .context("cannot take the layout lock")?;
    if !pending(config) {
        return Ok(Settled::Nothing);
    }
    let legacy_db = config.legacy_db_path();
    if !is_ours(&legacy_db)? {
        // Ours starts beside it: from now on `pending` is false.
        Store::open(config, std::time::Instant::now() + Duration::from_secs(5))?;
        return Ok(Settled::NotOurs { legacy_db });
    }
    move_database(&legacy_db, &config.db_path())?;
    let legacy = &config.legacy_dir;
    move_entries(&legacy.join("spill"), &config.spill_dir())?;
    move_entries(&legacy.join("backups"), &config.backups_dir())?;
    move_file(
        &legacy.join("claude-mem.log.1"),
        &config.log_path().with_extension("log.1"),
    )?;
    prepend_log(&legacy.join("claude-mem.log"), &config.log_path())?;
    if legacy != &config.data_dir {
        // Gone only when nothing else is in it (never the incumbent's files).
        let _ = fs::remove_dir(legacy);
    }
    Ok(Settled::Moved {
        from: legacy.clone(),
    })
}

/// Whether a database file at the old place is ours, looking without touching it: its first
/// page carries the `application_id`, next to the schema. A page one with tables and without
/// our id is someone else's (thedotmack/claude-mem's). Only a main file without tables yet (a
/// young database of ours whose first page is in the WAL) is opened through SQLite, read-write
/// if need be: rebuilding a WAL's index writes nothing but the `-shm`.
pub fn is_ours(path: &Path) -> Result<bool> {
    let mut header = [0u8; 100];
    let mut file = fsutil::open_ours(path, fsutil::Access::Read)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let read = io::Read::read(&mut file, &mut header)?;
    if read == header.len() {
        if !header.starts_with(b"SQLite format 3\0") {
            return Ok(false);
        }
        let word = |at: usize| {
            i64::from(u32::from_be_bytes([
                header[at],
                header[at + 1],
                header[at + 2],
                header[at + 3],
            ]))
        };
        let (schema_cookie, id) = (word(40), word(68));
        // Page one holds the schema and the id together: tables without our id are theirs.
        // No tables yet (cookie 0): the rest may still be in the WAL; ask SQLite below.
        if id == APPLICATION_ID || id != 0 || schema_cookie != 0 {
            return Ok(id == APPLICATION_ID);
        }
    }
    let mut last = None;
    for flags in [
        OpenFlags::SQLITE_OPEN_READ_ONLY,
        OpenFlags::SQLITE_OPEN_READ_WRITE,
    ] {
        let answer = Connection::open_with_flags(path, flags).and_then(|conn| {
            conn.query_row(
                "SELECT application_id FROM pragma_application_id",
                [],
                |r| r.get::<_, i64>(0),
            )
        });
        match answer {
            Ok(id) => return Ok(id == APPLICATION_ID),
            Err(err)
                if matches!(
                    err.sqlite_error_code(),
                    Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
                ) =>
            {
                return Ok(false);
            }
            Err(err) => last = Some(err),
        }
    }
    Err(anyhow::Error::new(last.expect("two attempts")))
        .with_context(|| format!("cannot read {}", path.display()))
}

/// Moves a WAL database: its WAL is copied back and emptied first, so the main file is the
/// whole database; then the file is renamed (or, across file systems, copied by
/// `VACUUM INTO` and the old one removed).
fn move_database(from: &Path, to: &Path) -> Result<()> {
    let conn = Connection::open(from).with_context(|| format!("cannot open {}", from.display()))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    anyhow::ensure!(
        busy == 0,
        "{} is in use (a reader holds it); try again when it is closed",
        from.display()
    );
    match fs::rename(from, to) {
        Ok(()) => drop(conn),
        Err(err) if is_cross_device(&err) => {
            let temp = to.with_extension("db.partial");
            let _ = fs::remove_file(&temp);
            conn.execute("VACUUM INTO ?1", [temp.to_string_lossy()])?;
            drop(conn);
            fs::rename(&temp, to)?;
            fs::remove_file(from)?;
        }
        Err(err) => {
            return Err(err).with_context(|| format!("cannot move {}", from.display()));
        }
    }
    for suffix in ["-wal", "-shm"] {
        let mut side = from.as_os_str().to_owned();
        side.push(suffix);
        let _ = fs::remove_file(PathBuf::from(side));
    }
    Ok(())
}

/// Moves every entry of `from` into `to` (created if need be), and `from` if it is left empty.
fn move_entries(from: &Path, to: &Path) -> Result<()> {
    let Ok(entries) = fs::read_dir(from) else {
        return Ok(());
    };
    fsutil::our_dir(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in entries.flatten() {
        move_file(&entry.path(), &to.join(entry.file_name()))?;
    }
    let _ = fs::remove_dir(from);
    Ok(())
}

/// Moves one file unless something is already at `to`.
fn move_file(from: &Path, to: &Path) -> Result<()> {
    if !from.exists() || to.exists() {
        return Ok(());
    }
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(err) if is_cross_device(&err) => {
            fs::copy(from, to)?;
            fs::remove_file(from)?;
            Ok(())
        }
        Err(err) => Err(err).with_context(|| format!("cannot move {}", from.display())),
    }
}

/// The old log goes before the lines written since (the hooks that waited for the move).
fn prepend_log(old: &Path, new: &Path) -> Result<()> {
    let Ok(mut text) = fs::read(old) else {
        return Ok(());
    };
    text.extend(fs::read(new).unwrap_or_default());
    let dir = new.parent().unwrap_or(Path::new("."));
    let name = new.file_name().unwrap_or_default().to_string_lossy();
    fsutil::write_atomic(dir, &name, &text, fsutil::Durability::PowerLoss)
        .with_context(|| format!("cannot write {}", new.display()))?;
    fs::remove_file(old)?;
    Ok(())
}

fn is_cross_device(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::CrossesDevices
}
