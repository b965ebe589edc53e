//! `claude-mem maintain`: the work no hook may pay for, done in a process of its own. Hooks
//! start it detached (see `detach`) when the WAL has grown past what a hook may checkpoint,
//! when a private turn's rows were deleted (or are left to delete), when the spill folder holds
//! more than a hook's slice, when an upgrade deleted rows, when a prompt stored after many
//! captures of its turn left some to number, at a session's end when retention is due or
//! per-prompt recall is on, or at a session's start when recall has no index yet or the
//! database was written since the index was last brought up to date. It
//! applies every spilled write, numbers the captures left (`store::numbering`), removes what
//! private turns left (`store::purge`), applies a slice of the retention policy
//! (`store::retention`, at most `retention::SLICE`), rebuilds both files when a rebuild was
//! asked for ([`for_good`]), checkpoints and truncates the WAL (waiting for readers to let go,
//! as a hook never may), brings the search index up to date when recall is on and merges it
//! (hooks read it, never write it), and exits: at once when there is nothing left, or when its time is up
//! and a later hook will start it again.
//!
//! A hook whose write took the WAL past its bound starts it for the checkpoint alone
//! ([`copy_back`]).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::config::Config;
use crate::fsutil;
use crate::log::Log;
use crate::recall::Recall;
use crate::spill::{self, FULL_SLICE};
use crate::store::retention::{self, Scope};
use crate::store::slices::{self, Slicer};
use crate::store::{self, Store, fts, numbering, purge, rebuild, rebuilding};

/// How long one run keeps trying while a reader holds the WAL.
const LIFETIME: Duration = Duration::from_secs(60);
/// After a rebuild failed (a full disk), the next try waits this long.
const REBUILD_RETRY: Duration = Duration::from_secs(3600);
/// With deleted private pages in the WAL, a run waits longer for the reader to let go.
const SCRUB_LIFETIME: Duration = Duration::from_secs(15 * 60);
const PAUSE: Duration = Duration::from_millis(250);
/// Between two tries of a copy back that readers were in the way of: a hook reads for a few
/// milliseconds.
const COPY_BACK_PAUSE: Duration = Duration::from_millis(20);
/// How long one pass numbers captures left by prompt writes, and how long each of its
/// transactions holds the lock: short, as the turn goes on meanwhile and its hooks wait.
const NUMBERING_SLICE: Duration = Duration::from_secs(5);
const NUMBERING_TX: Duration = Duration::from_millis(5);
/// Another run may be taking the lock for a moment (a hook applying its slice, 10 ms at most).
const LOCK_WAIT: Duration = Duration::from_millis(250);

/// What one run did, for the person who ran it by hand.
#[derive(Debug, Default)]
pub struct Report {
    pub applied: usize,
    pub waiting: usize,
    pub wal_before: u64,
    pub wal_after: u64,
    /// Another maintenance process holds the lock.
    pub busy: bool,
    /// What the retention slice did, when one was due.
    pub retention: Option<retention::Report>,
    /// The rebuild asked for, when one was tried: done, or why not.
    pub rebuilt: Option<Result<(), String>>,
}

/// Runs one pass; `auto` when a hook started it (see [`rebuild_now`]).
pub fn run(config: &Config, auto: bool) -> Result<Report> {
    let log = Log::new(config, "maintain");
    fsutil::our_dir(&config.data_dir)
        .with_context(|| format!("cannot use the data dir {}", config.data_dir.display()))?;
    let Some(_lock) = lock(config) else {
        return Ok(Report {
            busy: true,
            ..Report::default()
        });
    };
    settle(config, &log)?;
    let started = Instant::now();
    let mut report = Report {
        wal_before: store::wal_bytes(config),
        ..Report::default()
    };
    let mut retention_due = crate::marks::retention_due(config);
    let mut projects_due = true;
    loop {
        let mut store = Store::open(config, Instant::now() + Duration::from_secs(5))?;
        if std::mem::take(&mut projects_due) {
            file_projects(config, &store, &log);
        }
        let backlog = spill::ingest(&mut store, config, &log, FULL_SLICE);
        report.applied += backlog.applied;
        report.waiting = backlog.waiting;
        let numbered = number_the_rest(config, &store, &log);
        let purged = purge_the_rest(config, &store, &log);
        if std::mem::take(&mut retention_due) {
            report.retention = retention_slice(config, &store, &log);
        }
        let mut rebuild_waits = false;
        let mut rebuild_ran = false;
        if rebuilding::requested(store.conn())? {
            let tried = rebuild_now(config, &store, &log, auto);
            rebuild_waits = tried.is_none();
            rebuild_ran = !rebuild_waits;
            report.rebuilt = tried.or(report.rebuilt);
        }
        // Read before the checkpoint, so that a flag left after it is never taken away.
        let scrub = crate::marks::scrub_asked(config);
        // The index's WAL too: a rebuild of it may have been kept from emptying it.
        let truncated = checkpoint(&store) && (!scrub || fts::truncate_wal_of(config));
        if truncated && scrub {
            crate::marks::scrub_done(config);
            log.line("INFO", "the WAL no longer holds pages of deleted rows");
        }
        report.wal_after = store.wal_bytes();
        // A hook that asked for a rebuild while this pass ran found this process running and
        // started none: read again at the end, so that the request is not left for the next
        // process some other cause starts.
        let rebuild_left = !rebuild_waits && rebuilding::requested(store.conn()).unwrap_or(false);
        drop(store);
        let limit = if scrub { SCRUB_LIFETIME } else { LIFETIME };
        let done = truncated && backlog.waiting == 0 && numbered && purged && !rebuild_left
            // Hooks that found the rebuild under way kept their events in the spill folder.
            && !(rebuild_ran && spill::any_waiting(config));
        if done || started.elapsed() > limit {
            break;
        }
        std::thread::sleep(PAUSE);
    }
    if config.recall {
        catch_up_index(config, &log);
    }
    Ok(report)
}

/// The files of an earlier release moved to where this one keeps them, before anything is
/// written at the new place.
fn settle(config: &Config, log: &Log) -> Result<()> {
    match crate::store::layout::settle(config) {
        Ok(crate::store::layout::Settled::Moved { from }) => log.line(
            "INFO",
            &format!(
                "moved the files of an earlier release from {}",
                from.display()
            ),
        ),
        Ok(_) => {}
        Err(err) => return Err(err.context("cannot move the files of an earlier release")),
    }
    Ok(())
}

/// Sessions filed under their project, once a pass: those an earlier release recorded under a
/// subfolder of a repository (once ever, see [`join_projects`]), and another machine's,
/// synced before this machine had a checkout of their repository.
fn file_projects(config: &Config, store: &Store, log: &Log) {
    if !config.projects_joined_flag().exists() {
        join_projects(config, store, log);
    }
    if let Err(err) = store::projects::adopt(store.conn(), &crate::clock::now()) {
        log.line(
            "WARN",
            &format!("could not file synced sessions under their checkout: {err:#}"),
        );
    }
}

/// Once: the sessions an earlier release recorded under a subfolder or a linked worktree of a
/// repository moved to the repository (`store::projects`), then the flag that says it is done.
fn join_projects(config: &Config, store: &Store, log: &Log) {
    let moved = store::projects::plan(store.conn(), &config.project_roots)
        .and_then(|moves| store::projects::join(store.conn(), &moves, &crate::clock::now()));
    match moved {
        Ok(moved) => {
            if moved > 0 {
                log.line(
                    "INFO",
                    &format!(
                        "moved {moved} sessions recorded under a subfolder to their repository                          (claude-mem projects unjoin puts them back)"
                    ),
                );
            }
            let _ = fsutil::create_private(&config.projects_joined_flag());
        }
        Err(err) => log.line(
            "WARN",
            &format!("could not move sessions to their repository: {err:#}"),
        ),
    }
}

/// Brings the search index up to date (building it when there is none) and keeps it merged
/// (see `fts::merge`): per-prompt recall reads it and never writes it, so what a session
/// captured is found in the next ones, at the cost of one segment per word looked up.
fn catch_up_index(config: &Config, log: &Log) {
    let caught_up = Recall::open(config).and_then(|recall| match recall {
        Some(mut recall) => recall.index()?.keep_merged().map(|_| ()),
        None => Ok(()),
    });
    if let Err(err) = caught_up {
        log.line(
            "WARN",
            &format!("bringing the search index up to date: {err:#}"),
        );
    }
}

/// Numbers the captures that prompt writes left (see `store::numbering`), when there are
/// any; returns whether none are left.
fn number_the_rest(config: &Config, store: &Store, log: &Log) -> bool {
    let flag = config.numbering_flag();
    if !flag.exists() {
        return true;
    }
    let slicer = Slicer {
        tx: NUMBERING_TX,
        until: Some(Instant::now() + NUMBERING_SLICE),
        wait: Duration::from_secs(1),
    };
    match numbering::the_rest(store.conn(), &slicer, &flag) {
        Ok(done) => done,
        Err(err) => {
            log.line("WARN", &format!("numbering captures: {err:#}"));
            false
        }
    }
}

/// Removes what private turns left (see `store::purge`), when they left any; returns whether
/// none is left.
fn purge_the_rest(config: &Config, store: &Store, log: &Log) -> bool {
    let flag = config.purge_flag();
    if !flag.exists() {
        return true;
    }
    let slicer = Slicer {
        tx: NUMBERING_TX,
        until: Some(Instant::now() + NUMBERING_SLICE),
        wait: Duration::from_secs(1),
    };
    match purge::the_rest(store.conn(), &slicer, &flag) {
        Ok(done) => done,
        Err(err) => {
            log.line(
                "WARN",
                &format!("removing what private turns left: {err:#}"),
            );
            false
        }
    }
}

/// One slice of the retention policy: a few hundred milliseconds, in short transactions.
fn retention_slice(config: &Config, store: &Store, log: &Log) -> Option<retention::Report> {
    let slicer = Slicer {
        tx: slices::TX,
        until: Some(Instant::now() + retention::SLICE),
        wait: Duration::from_secs(1),
    };
    let conn = store.conn();
    let now = chrono::Utc::now();
    let pass = retention::run(
        conn,
        &config.retention,
        &Scope::default(),
        now,
        Some(&slicer),
    )
    .and_then(|report| {
        retention::prune_tombstones(conn, config)?;
        Ok(report)
    });
    match pass {
        Ok(report) => {
            crate::marks::retention_looked(config, report.finished);
            if report.deleted.sessions + report.reduced.rows > 0 {
                log.line(
                    "INFO",
                    &format!(
                        "retention: deleted {} sessions, reduced {} tool calls ({} -> {} bytes); \
                         {} bytes given back{}",
                        report.deleted.sessions,
                        report.reduced.rows,
                        report.reduced.bytes,
                        report.digest_bytes,
                        report.freed_bytes,
                        if report.finished {
                            ""
                        } else {
                            "; more next time"
                        }
                    ),
                );
            }
            Some(report)
        }
        Err(err) => {
            log.line("WARN", &format!("retention: {err:#}"));
            None
        }
    }
}

/// What forget and scrub end with, and the maintenance process when a rebuild was asked for
/// (an upgrade that deleted rows, a rebuild a full disk stopped): what was deleted or rewritten
/// for good leaves every file. The search index takes it out and is rebuilt, the tombstones it
/// has seen go, the database is rebuilt (see `store::rebuild`: old copies of rows stay in the
/// unused space of pages otherwise) and both WALs are truncated, waiting up to `wait` for
/// readers to let go. Returns whether both WALs are empty; when not, the maintenance process
/// must truncate them later (the caller leaves the scrub flag).
pub fn for_good(
    config: &Config,
    store: &Store,
    recall: &mut Recall,
    slicer: &Slicer,
    wait: Duration,
) -> Result<bool> {
    let conn = store.conn();
    // Read first: a private turn purged from now on asks again, and this pass may have
    // caught the index up before its tombstones.
    let asked = rebuilding::standing(conn)?;
    let index_clean = recall.purge_index(wait)?;
    retention::prune_tombstones(conn, config)?;
    rebuild::database(conn, &config.data_dir, asked.as_deref())?;
    let _ = std::fs::remove_file(config.rebuild_stamp());
    Ok(retention::sweep(conn, slicer, wait)? && index_clean)
}

/// The rebuild asked for, with the write lock held as long as it takes (hooks spill meanwhile);
/// after a failure, not again for [`REBUILD_RETRY`] unless a person runs `maintain` (`forget`
/// tells them to, once they have freed space).
fn rebuild_now(
    config: &Config,
    store: &Store,
    log: &Log,
    auto: bool,
) -> Option<Result<(), String>> {
    let stamp = config.rebuild_stamp();
    let failed_lately = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .is_ok_and(|at| at.elapsed().unwrap_or_default() < REBUILD_RETRY);
    if auto && failed_lately {
        return None;
    }
    let wait = Duration::from_secs(1);
    let done = store.set_wait(wait).and_then(|()| {
        let slicer = Slicer::command(wait);
        match Recall::open(config)? {
            Some(mut recall) => for_good(config, store, &mut recall, &slicer, LOCK_WAIT),
            None => Ok(true),
        }
    });
    match done {
        Ok(clean) => {
            if !clean {
                crate::marks::ask_scrub(config);
            }
            log.line("INFO", "rebuilt the database and the search index");
            Some(Ok(()))
        }
        Err(err) => {
            if let Ok(file) = fsutil::open_ours(&stamp, fsutil::Access::Append) {
                let _ = file.set_modified(std::time::SystemTime::now());
            }
            log.line("WARN", &format!("rebuild, tried again in an hour: {err:#}"));
            Some(Err(format!("{err:#}")))
        }
    }
}

/// The pass a hook starts when its write took the WAL past its bound (see
/// `store::Maintenance::CopyBack`): the checkpoint alone, never waiting for a lock, since a
/// TRUNCATE that waits for readers holds the write lock meanwhile and every hook would wait
/// behind it; tried again while readers are in the way, for at most [`LIFETIME`]. Nothing when
/// another one runs. It runs beside the maintenance process as a hook does: its lock is its own.
/// Returns the WAL's size before and after.
pub fn copy_back(config: &Config) -> Result<(u64, u64)> {
    fsutil::our_dir(&config.data_dir)
        .with_context(|| format!("cannot use the data dir {}", config.data_dir.display()))?;
    let Some(_lock) = fsutil::try_lock(&config.checkpoint_lock()) else {
        let wal = store::wal_bytes(config);
        return Ok((wal, wal));
    };
    // The hook that started it finishes first (see `child::after_parent`); held meanwhile,
    // the lock tells the hooks of a burst that one runs already.
    crate::child::after_parent(crate::detach::PARENT_WAIT);
    let before = store::wal_bytes(config);
    let store = Store::open(config, Instant::now() + LOCK_WAIT)?;
    store.set_wait(Duration::ZERO)?;
    let started = Instant::now();
    loop {
        if store.copy_back_and_truncate() || started.elapsed() > LIFETIME {
            return Ok((before, store.wal_bytes()));
        }
        std::thread::sleep(COPY_BACK_PAUSE);
    }
}

/// Copies the WAL back and truncates it, waiting a little for readers. Returns whether the WAL
/// is now empty.
fn checkpoint(store: &Store) -> bool {
    let _ = store.set_wait(Duration::from_millis(200));
    store.copy_back_and_truncate()
}

fn lock(config: &Config) -> Option<std::fs::File> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        if let Some(lock) = fsutil::try_lock(&config.maintain_lock()) {
            return Some(lock);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
