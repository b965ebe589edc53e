//! The hook's write path: opening the database (migrating it when `user_version` is behind),
//! applying a hook's write (`apply`), waiting for the write lock (`wait`), SQLite's memory
//! set-up for one short write (`lean`), and the bounded share of numbering and purging a
//! prompt's write does itself (`numbering`, `purge`). Everything here is what a hook runs.
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

mod apply;
pub mod given;
pub mod lean;
pub mod numbering;
pub mod purge;
pub mod standing;

pub use apply::RAW_BACKLOG_CAP;

use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::config::Config;
use crate::fsutil;
use crate::ops::{Change, Write};
use crate::store::base::errors::Refused;
use crate::store::base::files::check_file;
use crate::store::base::rebuilding;
use crate::store::base::tombstones;
use crate::store::base::wait;
use crate::store::base::wal::{WAL_CHECKPOINT_BYTES, WAL_INLINE_MAX};
use crate::store::sql::{APPLICATION_ID, SCHEMA_VERSION, check_version, migrate, versions};

pub struct Store {
    /// Closed when the store is dropped, unless it is left to the process's exit (see
    /// [`Store::leave_to_exit`]).
    conn: ManuallyDrop<Connection>,
    left_to_exit: bool,
    wal_path: PathBuf,
    /// Set while captures are left to number (see [`numbering`]).
    numbering_flag: PathBuf,
    /// Set while private turns have rows left (see [`purge`]).
    purge_flag: PathBuf,
    /// Set when there is maintenance a hook must not do itself: after a commit, or after an
    /// upgrade that deleted rows.
    maintenance: Option<Maintenance>,
    /// The raw backlog the last write counted (a Stop's), up to [`apply::RAW_BACKLOG_CAP`].
    counted_backlog: Option<i64>,
    /// A hook's store: the checkpoint its commits call for is left to a process of its own
    /// (see [`Maintenance::CopyBack`]).
    for_a_hook: bool,
}

/// Work left for the maintenance process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// The WAL is past its bound: a process of its own copies it back and truncates it
    /// (`claude-mem maintain --checkpoint`), so that no hook waits on the checkpoint's syncs
    /// (two `fsync`s and a truncation: 1.0 to 1.5 ms, the slowest twentieth of prompt hooks).
    CopyBack,
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

impl Store {
    /// Opens (creating if needed) the database, waiting for locks at most until `deadline`,
    /// its deletes leaving tombstones (see [`tombstones`]).
    pub fn open(config: &Config, deadline: Instant) -> Result<Store> {
        let mut store = Store::for_a_hook(config, deadline)?;
        tombstones::arm(&store.conn)?;
        store.for_a_hook = false;
        Ok(store)
    }

    /// [`Store::open`] for a hook: without the tombstone triggers, which a hook makes only
    /// before it deletes (see [`purge`]), the one delete a hook makes; and leaving the
    /// checkpoint its writes call for to a process of its own (see [`Maintenance::CopyBack`]).
    pub fn for_a_hook(config: &Config, deadline: Instant) -> Result<Store> {
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
        // SQLite's planner otherwise weighs the value bound to a range (`created_at > ?`) and
        // prepares the statement again at its first step once one is bound: the session
        // start's reads were each prepared twice, a third of what the hook cost.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
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
            if rebuilding::requested(&conn)? {
                maintenance = Some(Maintenance::Rebuild);
            }
        }
        // What SQLite keeps aside in a transaction (the pages a savepoint may roll back, as
        // the records of what was given have) stays in memory: kept in a temporary file, it
        // cost every prompt a file made in /var/tmp, written and freed, and put pages of the
        // database in a file outside the data dir. Set after the migrations, whose indexes
        // over whole tables are sorted on disk.
        conn.execute_batch("PRAGMA temp_store = MEMORY")?;
        let mut wal_path = path.into_os_string();
        wal_path.push("-wal");
        Ok(Store {
            conn: ManuallyDrop::new(conn),
            left_to_exit: false,
            wal_path: wal_path.into(),
            numbering_flag: config.numbering_flag(),
            purge_flag: config.purge_flag(),
            maintenance,
            counted_backlog: None,
            for_a_hook: true,
        })
    }

    /// For a hook, whose process exits once it is done with the store: the connection is then
    /// not closed but left to the exit. Closing frees the schema SQLite parsed at open one
    /// object at a time, 5.6% of a 1 KB capture's instructions (callgrind), and with the
    /// close-time checkpoint off it does nothing else that the exit does not: every commit is
    /// already in the WAL, and the exit closes the files and releases their locks.
    pub fn leave_to_exit(&mut self) {
        self.left_to_exit = true;
    }

    /// Applies one write in one IMMEDIATE transaction (see [`apply::apply`]).
    pub fn apply(&mut self, write: &Write) -> Result<()> {
        self.apply_giving(write, None, || {}).map(drop)
    }

    /// [`Store::apply`] with the records of what the answer to `write` gave, if any, in the
    /// same transaction (see [`given`]), calling `locked` as soon as the write lock is taken.
    /// `Ok(Some(err))`: the write is in, the records were left out.
    pub fn apply_giving(
        &mut self,
        write: &Write,
        gift: Option<given::Gift>,
        locked: impl FnOnce(),
    ) -> Result<Option<rusqlite::Error>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        locked();
        let applied = apply::apply(&tx, write)?;
        let left_out = match gift {
            Some(gift) => given::record(&tx, write, gift)?,
            None => None,
        };
        tx.commit()?;
        self.counted_backlog = applied.raw_backlog;
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
        Ok(left_out)
    }

    /// Keeps the WAL bounded after writes made through [`Store::conn`] (the queue's), as after
    /// a hook's own: see [`Store::after_commit`].
    pub fn after_write(&mut self) {
        self.after_commit(false, false);
    }

    /// Keeps the WAL bounded. A run that finds it past the bound copies it back and truncates
    /// it (TRUNCATE: every hook is the first connection to open the database and reads the
    /// whole WAL, so a short file is what makes the next run fast; RESTART would be undone, as
    /// the next process rebuilds the WAL index from the file and appends), or, for a hook,
    /// asks for a process of its own to do it ([`Maintenance::CopyBack`], see
    /// [`Store::copy_back_here`]); SessionEnd always does a PASSIVE pass. Neither ever waits:
    /// a reader holding an old snapshot would make every run pay the whole timeout, and what
    /// cannot be done now is done by a later run.
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
            if self.for_a_hook {
                self.maintenance = self.maintenance.or(Some(Maintenance::CopyBack));
            } else {
                self.copy_back_and_truncate();
            }
        } else if session_end {
            self.checkpoint("PASSIVE");
        }
    }

    /// The checkpoint [`Maintenance::CopyBack`] asks for, made by the hook itself: for one
    /// whose process for it could not start, so that the WAL stays bounded all the same.
    pub fn copy_back_here(&self) {
        if self.wal_bytes() <= WAL_INLINE_MAX {
            let _ = self.set_wait(Duration::ZERO);
            self.copy_back_and_truncate();
        }
    }

    /// A PASSIVE checkpoint, then a TRUNCATE with little left to copy; returns whether the
    /// WAL was copied back whole and truncated. Outside a hook, the WAL is then started anew
    /// ([`Store::restart_wal`]).
    pub fn copy_back_and_truncate(&self) -> bool {
        self.checkpoint("PASSIVE");
        let truncated = self.checkpoint("TRUNCATE");
        if truncated && !self.for_a_hook {
            self.restart_wal();
        }
        truncated
    }

    /// Writes the first frame of an empty WAL: page 1, as it is (the application id set to
    /// what it is). The first write into an empty WAL writes its header and syncs it and its
    /// folder (SQLite's guard against a write reordered after a restart): 0.3 ms, which the
    /// next hook paid after every copy back, a quarter of the prompts in the hooks bench. A
    /// process of its own pays it here instead. Nothing when a writer came first: it paid.
    fn restart_wal(&self) {
        if self.wal_bytes() == 0 {
            let _ = self
                .conn
                .execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"));
        }
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
    /// however long the backlog): what decides whether a hook starts the compressor. The count
    /// the last write made (a Stop's, in its transaction) answers when it went as far as `cap`:
    /// the Stop's hook then does not count again.
    pub fn raw_backlog(&self, cap: i64) -> Result<i64> {
        if let Some(counted) = self
            .counted_backlog
            .filter(|_| cap <= apply::RAW_BACKLOG_CAP)
        {
            return Ok(counted.min(cap));
        }
        Ok(self
            .conn
            .query_row(apply::RAW_BACKLOG, [cap], |row| row.get(0))?)
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

impl Drop for Store {
    fn drop(&mut self) {
        if !self.left_to_exit {
            // SAFETY: `conn` is taken once, here, and the store is not used after `drop`.
            drop(unsafe { ManuallyDrop::take(&mut self.conn) });
        }
    }
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
