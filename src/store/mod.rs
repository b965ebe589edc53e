//! The only module that touches SQLite: opening, migrating, and applying a hook's write.
//!
//! Each hook run opens one connection, runs one short IMMEDIATE transaction and exits. What
//! makes that fast: schema work only when `user_version` is behind, no checkpoint when the
//! connection closes (every process would pay to copy and delete the WAL), and instead a
//! checkpoint by whichever run sees the WAL grow past a bound.
//!
//! No hook pays for more than a bounded slice of maintenance. A reader holding a snapshot
//! (a consumer, a viewer, a crashed sqlite3 shell) stops every checkpoint, and the WAL grows
//! meanwhile: the first process to open it afterwards reads all of it, and the first
//! checkpoint copies all of it (a second at 400 MB). Past a bound, a hook leaves both to the
//! detached maintenance process (`claude-mem maintain`) instead.

pub mod compressed;
mod context;
pub mod export;
pub mod forget;
pub mod fts;
pub mod integrity;
pub mod layout;
pub mod lean;
pub mod numbering;
pub mod purge;
pub mod queue;
pub mod read;
pub mod rebuild;
pub mod retention;
pub mod scrub;
pub mod slices;
mod wait;
mod write;

pub use context::{
    Failure, MEMORIES_SHOWN, MemoryLine, RecentSession, SessionSummary, Wanted, recent_sessions,
    started_at,
};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::config::Config;
use crate::fsutil;
use crate::ops::{Change, Write};

/// "cmem" in ASCII: marks the file as ours (`PRAGMA application_id`).
pub const APPLICATION_ID: i64 = 0x636d_656d;
/// Append-only: schema version N is the first N entries.
const MIGRATIONS: &[&str] = &[
    include_str!("v1.sql"),
    include_str!("v2.sql"),
    include_str!("v3.sql"),
    include_str!("v4.sql"),
    include_str!("v5.sql"),
    include_str!("v6.sql"),
    include_str!("v7.sql"),
    include_str!("v8.sql"),
];
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
/// Past this WAL size, the run that notices checkpoints it (measured best at 256 KiB).
const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;
/// Past this, a checkpoint is more than a hook should pay for: the maintenance process does it.
pub const WAL_INLINE_MAX: u64 = 2 << 20;
/// Past this, even opening the database costs a hook too much (the first connection reads the
/// whole WAL, about 0.6 ms per MB): the hook keeps its event in the spill folder instead.
pub const WAL_OPEN_MAX: u64 = 16 << 20;

pub struct Store {
    conn: Connection,
    wal_path: PathBuf,
    /// Set while captures are left to number (see [`numbering`]).
    numbering_flag: PathBuf,
    /// Set while private turns have rows left (see [`purge`]).
    purge_flag: PathBuf,
    /// Set when there is maintenance a hook must not do itself: after a commit, or after an
    /// upgrade that deleted rows.
    maintenance: Option<Maintenance>,
}

/// Work left for the maintenance process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// The WAL is past what a hook may checkpoint.
    Checkpoint,
    /// Rows of a private turn were deleted but a reader kept their old pages in the WAL.
    Scrub,
    /// Rows were deleted for good (by an upgrade): the file must be rebuilt (see `rebuild`).
    Rebuild,
    /// Captures stored before their prompt are left to number.
    Number,
    /// Rows of private turns are left to remove.
    Purge,
}

/// A database (or data dir) that will not work until a person acts: someone else's file, a
/// newer schema, a corrupt file. Retrying does not help; telling the user does.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl Store {
    /// Opens (creating if needed) the database, waiting for locks at most until `deadline`.
    pub fn open(config: &Config, deadline: Instant) -> Result<Store> {
        let dir = &config.data_dir;
        match fsutil::our_dir(dir) {
            Ok(false) => {}
            Ok(true) => crate::log::Log::new(config, "store").line(
                "WARN",
                &format!(
                    "{} was open to other users; closed it (mode 0700)",
                    dir.display()
                ),
            ),
            Err(err) => {
                let why = format!("cannot use the data dir {}", dir.display());
                return Err(refused_if_permanent(err, why));
            }
        }
        let path = config.db_path();
        // Created by us so it is 0600 from the start; SQLite gives its WAL the same mode.
        if let Err(err) = fsutil::create_private(&path)
            && err.kind() != std::io::ErrorKind::AlreadyExists
        {
            let why = format!("cannot create the database {}", path.display());
            return Err(refused_if_permanent(err, why));
        }
        check_file(&path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        wait::until(&mut conn, deadline)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        conn.execute_batch(if config.synchronous_full {
            "PRAGMA synchronous = FULL"
        } else {
            "PRAGMA synchronous = NORMAL"
        })?;
        let (version, app_id) = versions(&conn)
            .with_context(|| format!("cannot read the database {}", path.display()))?;
        check_version(version, app_id, &path)?;
        let mut maintenance = None;
        if version < SCHEMA_VERSION {
            migrate(&mut conn, deadline)
                .with_context(|| format!("cannot set up {}", path.display()))?;
            if rebuild::requested(&conn)? {
                maintenance = Some(Maintenance::Rebuild);
            }
        }
        let mut wal_path = path.into_os_string();
        wal_path.push("-wal");
        Ok(Store {
            conn,
            wal_path: wal_path.into(),
            numbering_flag: config.numbering_flag(),
            purge_flag: config.purge_flag(),
            maintenance,
        })
    }

    /// Applies one write in one IMMEDIATE transaction (see [`write::apply`]).
    pub fn apply(&mut self, write: &Write) -> Result<()> {
        self.apply_locked(write, || {})
    }

    /// [`Store::apply`], calling `locked` as soon as the write lock is taken.
    pub fn apply_locked(&mut self, write: &Write, locked: impl FnOnce()) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        locked();
        let applied = write::apply(&tx, write)?;
        tx.commit()?;
        if applied.numbering_left {
            numbering::flag_left(&self.numbering_flag);
            self.maintenance = self.maintenance.or(Some(Maintenance::Number));
        }
        if applied.purged.left {
            purge::flag_left(&self.purge_flag);
            self.maintenance = self.maintenance.or(Some(Maintenance::Purge));
        }
        self.after_commit(
            applied.purged.removed,
            matches!(write.change, Change::SessionEnd { .. }),
        );
        Ok(())
    }

    /// Keeps the WAL bounded after writes made through [`Store::conn`] (the queue's), as after
    /// a hook's own: see [`Store::after_commit`].
    pub fn after_write(&mut self) {
        self.after_commit(false, false);
    }

    /// Keeps the WAL bounded. A run that finds it past the bound copies it back and truncates
    /// it (TRUNCATE: every hook is the first connection to open the database and reads the
    /// whole WAL, so a short file is what makes the next run fast; RESTART would be undone, as
    /// the next process rebuilds the WAL index from the file and appends); SessionEnd always
    /// does a PASSIVE pass. Neither ever waits: a reader holding an old snapshot would make
    /// every run pay the whole timeout, and what cannot be done now is done by a later run.
    /// The copy and its syncs are a PASSIVE pass first, which lets other writers go on: a
    /// TRUNCATE alone holds the write lock meanwhile (28 ms a time on the loaded dev machine),
    /// and in a burst of 256 parallel captures, one hook in ten checkpointed.
    /// Past [`WAL_INLINE_MAX`] the copy is left to the maintenance process. After a private
    /// turn was purged, TRUNCATE whatever the size, so that the WAL keeps no old copy of its
    /// pages; if a reader prevents that, the maintenance process retries until it succeeds.
    /// Either way, it then rebuilds the file (the purge asked for it): old copies of the rows
    /// stay in live pages otherwise.
    fn after_commit(&mut self, purged: bool, session_end: bool) {
        let wal = self.wal_bytes();
        let _ = self.conn.busy_timeout(Duration::ZERO);
        if purged {
            self.maintenance = if self.copy_back_and_truncate() {
                self.maintenance.or(Some(Maintenance::Rebuild))
            } else {
                Some(Maintenance::Scrub)
            };
        } else if wal > WAL_INLINE_MAX {
            self.maintenance = Some(Maintenance::Checkpoint);
        } else if wal > WAL_CHECKPOINT_BYTES {
            self.copy_back_and_truncate();
        } else if session_end {
            self.checkpoint("PASSIVE");
        }
    }

    /// A PASSIVE checkpoint, then a TRUNCATE with little left to copy; returns whether the
    /// WAL is now empty.
    fn copy_back_and_truncate(&self) -> bool {
        self.checkpoint("PASSIVE");
        self.checkpoint("TRUNCATE")
    }

    /// Runs one checkpoint; returns whether it completed (no reader or writer was in the way).
    pub fn checkpoint(&self, mode: &str) -> bool {
        self.conn
            .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
                row.get::<_, i64>(0)
            })
            .is_ok_and(|busy| busy == 0)
    }

    /// Size of the WAL file now.
    pub fn wal_bytes(&self) -> u64 {
        std::fs::metadata(&self.wal_path).map_or(0, |m| m.len())
    }

    /// How many items wait for a consumer, counted up to `cap` (one short range of an index,
    /// however long the backlog): what decides whether a hook starts the compressor.
    pub fn raw_backlog(&self, cap: i64) -> Result<i64> {
        Ok(self
            .conn
            .query_row(write::RAW_BACKLOG, [cap], |row| row.get(0))?)
    }

    /// Maintenance the last commit left for the maintenance process, if any.
    pub fn maintenance(&self) -> Option<Maintenance> {
        self.maintenance
    }

    /// Waits for locks at most until `deadline` from now on.
    pub fn wait_until(&mut self, deadline: Instant) -> Result<()> {
        Ok(wait::until(&mut self.conn, deadline)?)
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Waits for locks up to `timeout` (the maintenance process may wait, a hook may not).
    pub fn set_wait(&self, timeout: Duration) -> Result<()> {
        Ok(self.conn.busy_timeout(timeout)?)
    }
}

/// Opens the database for a command that only looks (search, show, `queue stats`, ...):
/// read-only, so that it can take no write lock, and refusing to write even by mistake; `None`
/// when nothing was ever captured. Files an earlier release left at the old place are moved
/// first, and a database an older claude-mem wrote is brought up to date through
/// [`Store::open`], as the next hook would do anyway.
pub fn open_read_only(config: &Config, deadline: Instant) -> Result<Option<Connection>> {
    layout::settle(config)?;
    let path = config.db_path();
    match std::fs::symlink_metadata(&path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => check_file(&path)?,
    }
    let conn = read::open_file_read_only(&path)?;
    // A reader waits only while a WAL is being recovered.
    conn.busy_timeout(remaining(deadline))?;
    let (version, app_id) =
        versions(&conn).with_context(|| format!("cannot read the database {}", path.display()))?;
    check_version(version, app_id, &path)?;
    if version == 0 {
        return Ok(None);
    }
    if version < SCHEMA_VERSION {
        drop(conn);
        if Store::open(config, deadline)?.maintenance().is_some() {
            crate::detach::maintain(config);
        }
        return read::open_file_read_only(&path).map(Some);
    }
    Ok(Some(conn))
}

/// A file-system error that only a person can fix (permissions, a read-only mount, a folder
/// of someone else's) becomes [`Refused`]; others (a full disk) may pass by themselves.
fn refused_if_permanent(err: std::io::Error, context: String) -> anyhow::Error {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    match err.kind() {
        PermissionDenied | ReadOnlyFilesystem => Refused(format!("{context}: {err}")).into(),
        _ => anyhow::Error::new(err).context(context),
    }
}

/// A count for a `LIMIT` or `OFFSET`: SQLite takes an i64 and reads a negative one as none, so a
/// larger count is the largest it takes, never one that wraps around to the first page.
pub fn sql_count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Size of the database's WAL file, without opening the database.
pub fn wal_bytes(config: &Config) -> u64 {
    let mut wal = config.db_path().into_os_string();
    wal.push("-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// The database file must be a regular file of ours: SQLite would follow a symlink and open a
/// FIFO, and another user's file is not ours to write.
fn check_file(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("cannot look at the database {}", path.display()))?;
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

/// Whether a failure will last until a person acts (see [`Refused`]), as opposed to a lock or
/// a full disk that a later run may find gone.
pub fn is_refused(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.is::<Refused>()
            || matches!(
                cause
                    .downcast_ref::<rusqlite::Error>()
                    .and_then(rusqlite::Error::sqlite_error_code),
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt | ErrorCode::ReadOnly)
            )
    })
}

/// Whether applying a write failed because of the database's state now (locked, full, failing,
/// refused) rather than because of the write itself (a constraint it breaks): the first kind
/// leaves a spill file for later, the second sets it aside.
pub fn is_transient(err: &anyhow::Error) -> bool {
    !err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::ConstraintViolation | ErrorCode::TypeMismatch | ErrorCode::TooBig)
        )
    })
}

/// Whether an error is a lock held by someone else, worth a retry within the wait budget.
pub fn is_busy(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        )
    })
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

fn versions(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT application_id FROM pragma_application_id)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

fn check_version(version: i64, app_id: i64, path: &std::path::Path) -> Result<()> {
    if app_id != APPLICATION_ID && (app_id != 0 || version != 0) {
        return Err(Refused(format!(
            "{} is not a claude-mem database (application_id {app_id:#x}); left untouched",
            path.display()
        ))
        .into());
    }
    if version > SCHEMA_VERSION {
        return Err(Refused(format!(
            "{} has schema version {version}, newer than this claude-mem knows \
             ({SCHEMA_VERSION}); left untouched: upgrade claude-mem",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// Brings the schema up to date in one exclusive transaction. Re-reads the version inside it:
/// another process may have migrated while this one waited.
fn migrate(conn: &mut Connection, deadline: Instant) -> Result<()> {
    // Someone else's database must not even be switched to WAL.
    if refuse_foreign(conn)? {
        // A new file: freed pages can then be given back to the file system in small steps
        // (see `retention`). SQLite takes this only before the first table, and before the
        // switch to WAL, which writes the file's first page.
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL")?;
    }
    // Two hooks creating the database at once: one turns it to WAL, then the other.
    let mode: String = wait::past_deadlock(deadline, || {
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
    })?;
    if !mode.eq_ignore_ascii_case("wal") {
        bail!("could not switch to WAL mode (journal_mode is {mode})");
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    refuse_foreign(&tx)?;
    let (version, _) = versions(&tx)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("migration to schema version {}", index + 1))?;
    }
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    tx.commit()?;
    Ok(())
}

/// A database without our version stamp that already holds tables is someone else's.
/// One statement, so one snapshot: read apart, the version could come from before another
/// process's migration committed and the tables from after, and our own new database would
/// look like someone else's. Returns whether the file is empty (no tables yet).
fn refuse_foreign(conn: &Connection) -> Result<bool> {
    let (version, app_id, tables): (i64, i64, i64) = conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT application_id FROM pragma_application_id),
                (SELECT COUNT(*) FROM sqlite_schema)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    if version == 0 && app_id != APPLICATION_ID && tables > 0 {
        return Err(Refused(
            "the file holds tables but is not a claude-mem database; left untouched".into(),
        )
        .into());
    }
    Ok(tables == 0)
}

/// What the tests that pin each statement to an index share.
#[cfg(test)]
mod testing {
    use rusqlite::Connection;

    /// An empty database at the latest schema.
    pub fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for migration in super::MIGRATIONS {
            conn.execute_batch(migration).unwrap();
        }
        conn
    }

    /// The steps of the plan SQLite picks for `sql`, every parameter bound to 1.
    pub fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut plan = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let params: Vec<&dyn rusqlite::ToSql> = vec![&1; plan.parameter_count()];
        plan.query_map(params.as_slice(), |row| row.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}
