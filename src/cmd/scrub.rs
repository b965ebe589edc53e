//! `scrub`: today's privacy and secret rules applied to everything already stored (see
//! `store::scrub`), and what they replaced then removed from every file that held it: the
//! search index (a catch-up), and the old copies of the rows that earlier writes left in both
//! files (a rebuild of each, then their WALs truncated: see `maintain::for_good`). Events
//! waiting in the spill folder are applied first, so that they are scrubbed too.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::nothing_captured;
use crate::compress::pause;
use crate::config::Config;
use crate::emit::Report;
use crate::log::Log;
use crate::recall::Recall;
use crate::render;
use crate::store::slices::Slicer;
use crate::store::{self, Store, rebuilding, scrub};
use crate::{fsutil, spill};

/// How long scrub waits for the write lock and for readers to let go of the WAL.
const WAIT: Duration = Duration::from_secs(10);

pub fn scrub(dry_run: bool) -> Result<Report> {
    let config = Config::from_env();
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    if dry_run {
        let conn = store::open_read_only(&config, Instant::now() + WAIT)?
            .context("the database went away")?;
        let report = scrub::run(&conn, &config.redactor, None)?;
        let paused = pause::scrub(&config, true);
        return Ok(format!("{}{}", text(&report, true), said(paused, true)).into());
    }
    let lock = fsutil::lock_waiting(&config.maintain_lock())
        .context("another claude-mem maintain kept running")?;
    let mut store = Store::open(&config, Instant::now() + WAIT)?;
    spill::ingest(
        &mut store,
        &config,
        &Log::new(&config, "scrub"),
        spill::FULL_SLICE,
    );
    let slicer = Slicer::command(WAIT);
    // Taking in spilled events waits for nothing; a hook may hold the lock a moment.
    store.set_wait(WAIT)?;
    // Remembered until done: a scrub stopped half-way leaves the rebuild to maintenance.
    let pending = rebuilding::requested(store.conn())?;
    rebuilding::request(store.conn())?;
    let asked = rebuilding::standing(store.conn())?;
    let report = scrub::run(store.conn(), &config.redactor, Some(&slicer))?;
    let mut out = text(&report, false);
    out.push_str(&said(pause::scrub(&config, false), false));
    if report.rows_changed() == 0 && !pending {
        rebuilding::answered(store.conn(), asked.as_deref())?;
        return Ok(out.into());
    }
    super::finish_for_good(&config, store, lock, &mut recall, &slicer, &mut out)?;
    Ok(out.into())
}

/// A line about the compression pause's file, when `scrub` changed it (or would).
fn said(paused: pause::Scrubbed, dry: bool) -> String {
    let line = match (paused, dry) {
        (pause::Scrubbed::Nothing, _) => return String::new(),
        (pause::Scrubbed::Redacted, false) => {
            "Redacted the reason kept with the compression pause (compress.paused)."
        }
        (pause::Scrubbed::Redacted, true) => {
            "Would redact the reason kept with the compression pause (compress.paused)."
        }
        (pause::Scrubbed::Over, false) => {
            "Removed the ended compression pause (compress.paused): its reason held a secret."
        }
        (pause::Scrubbed::Over, true) => {
            "Would remove the ended compression pause (compress.paused): its reason holds a secret."
        }
        (pause::Scrubbed::NotOurs, false) => {
            "Removed compress.paused: not a pause file claude-mem can read as its own."
        }
        (pause::Scrubbed::NotOurs, true) => {
            "Would remove compress.paused: not a pause file claude-mem can read as its own."
        }
    };
    format!("{line}\n")
}

fn text(report: &scrub::Report, dry: bool) -> String {
    if report.changed.is_empty() {
        return format!(
            "Nothing to scrub: no stored text has anything today's rules remove ({} checked).\n",
            render::plural(report.rows_read, "text")
        );
    }
    let what = report
        .changed
        .iter()
        .map(|(label, n)| render::plural(*n, label))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} {what}: {} redacted ({} checked).\n",
        if dry { "Would scrub" } else { "Scrubbed" },
        render::plural(report.redactions, "secret"),
        render::plural(report.rows_read, "text")
    )
}
