//! `prune`: the retention policy (see `store::retention`) applied now, all of it, and the space
//! it frees given back to the file system; `--dry-run` says what would go. A database made
//! before schema v7 is converted once, so that its file can shrink from then on. Sessions that
//! `--older-than` deletes beyond the policy are shown and asked for first, as `forget` does.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;

use super::nothing_captured;
use crate::cli::PruneArgs;
use crate::config::{Config, Retention};
use crate::emit::Report;
use crate::fsutil;
use crate::recall::{Recall, time_bound};
use crate::render;
use crate::store::retention::{self, Scope};
use crate::store::slices::Slicer;
use crate::store::{self, Store};

/// How long prune waits for the write lock (hooks hold it for milliseconds) and for readers
/// to let go of the WAL.
const WAIT: Duration = Duration::from_secs(10);

pub fn prune(args: &PruneArgs) -> Result<Report> {
    let config = Config::from_env();
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    // Every project unless one is named (prune has no --all).
    let project = match &args.project {
        Some(dir) => recall.project(Some(dir), false)?,
        None => None,
    };
    let delete_before = args
        .older_than
        .as_deref()
        .map(|when| time_bound("--older-than", when, false))
        .transpose()?;
    let scope = Scope {
        project,
        delete_before,
    };
    let db = config.db_path();
    let size_before = size(&db);
    let now = Utc::now();
    if args.dry_run {
        let conn = store::open_read_only(&config, Instant::now() + WAIT)?
            .context("the database went away")?;
        let report = retention::run(&conn, &config.retention, &scope, now, None)?;
        let converts = !retention::incremental(&conn)?;
        return Ok(dry_text(&config.retention, &scope, &report, converts, size_before).into());
    }
    // `--older-than` deletes what the policy keeps, for good: as forget, it asks first.
    if scope.delete_before.is_some() && !args.yes {
        let conn = store::open_read_only(&config, Instant::now() + WAIT)?
            .context("the database went away")?;
        let report = retention::run(&conn, &config.retention, &scope, now, None)?;
        let what = lines(&scope, &report, true);
        if report.deleted.sessions > 0
            && !super::confirmed("prune --older-than", &what, "Prune?", false)?
        {
            return Ok("Nothing pruned.\n".to_string().into());
        }
    }
    // The maintenance process must not apply the policy at the same time.
    let _lock = fsutil::lock_waiting(&config.maintain_lock())
        .context("another claude-mem maintain kept running")?;
    let store = Store::open(&config, Instant::now() + WAIT)?;
    let conn = store.conn();
    let slicer = Slicer::command(WAIT);
    let report = retention::run(conn, &config.retention, &scope, now, Some(&slicer))?;
    let converted = if retention::incremental(conn)? {
        None
    } else {
        let started = Instant::now();
        retention::convert(conn, &config.data_dir)?;
        Some(started.elapsed())
    };
    // The index takes the deleted rows out, then their tombstones can go.
    if config.index_path().exists() {
        recall.resync()?;
    }
    retention::prune_tombstones(conn, &config)?;
    let wal_clean = retention::sweep(conn, &slicer, WAIT)?;
    crate::marks::retention_looked(&config, true);
    let mut out = done_text(&config.retention, &scope, &report, converted);
    out.push_str(&format!(
        "Database {} -> {}{}.\n",
        render::bytes(size_before),
        render::bytes(size(&db)),
        if wal_clean {
            ""
        } else {
            " (a reader holds the WAL: the file shrinks once it lets go)"
        }
    ));
    Ok(out.into())
}

/// What went, or would go, in lines: `verb` is "Deleted" / "Would delete" and so on.
fn lines(scope: &Scope, report: &retention::Report, dry: bool) -> String {
    let mut out = String::new();
    let (delete, reduce) = if dry {
        ("Would delete", "Would reduce")
    } else {
        ("Deleted", "Reduced")
    };
    let of_project = scope
        .project
        .as_deref()
        .map(|p| format!(" of {p}"))
        .unwrap_or_default();
    if report.deleted.sessions > 0 {
        out.push_str(&format!(
            "{delete} {}{of_project} ({} in them, about {}).\n",
            render::plural(report.deleted.sessions, "session"),
            render::plural(report.deleted.rows, "item"),
            render::bytes(report.deleted.bytes)
        ));
    }
    if report.reduced.rows > 0 {
        out.push_str(&format!(
            "{reduce} {} of {}{of_project} to their digest: {} -> {}.\n",
            render::plural(report.reduced.rows, "tool call"),
            render::plural(report.reduced.sessions, "session"),
            render::bytes(report.reduced.bytes),
            render::bytes(report.digest_bytes)
        ));
    }
    if out.is_empty() {
        out.push_str(&format!("Nothing to prune{of_project}.\n"));
    }
    out
}

fn dry_text(
    policy: &Retention,
    scope: &Scope,
    report: &retention::Report,
    converts: bool,
    size_before: u64,
) -> String {
    let mut out = format!("Policy: {}.\n", super::policy_text(policy));
    out.push_str(&lines(scope, report, true));
    if converts {
        out.push_str(
            "Would convert the database once so that its file can shrink (a VACUUM: hooks \
             spill their events meanwhile).\n",
        );
    }
    out.push_str(&format!(
        "Database {}, live data {} -> about {}.\n",
        render::bytes(size_before),
        render::bytes(report.live_before),
        render::bytes(report.live_after)
    ));
    over_cap(policy, report, &mut out);
    out
}

fn done_text(
    policy: &Retention,
    scope: &Scope,
    report: &retention::Report,
    converted: Option<Duration>,
) -> String {
    let mut out = lines(scope, report, false);
    if let Some(took) = converted {
        out.push_str(&format!(
            "Converted the database once so that its file can shrink ({:.1} s).\n",
            took.as_secs_f64()
        ));
    }
    over_cap(policy, report, &mut out);
    out
}

fn over_cap(policy: &Retention, report: &retention::Report, out: &mut String) {
    if let Some(cap) = policy.max_db_bytes.filter(|cap| report.live_after > *cap) {
        out.push_str(&format!(
            "Still over the {} cap: what is left was active in the last day.\n",
            render::bytes(cap)
        ));
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
