//! The spill folder: where a write goes when the database cannot take it in time (locked past
//! the wait budget, read-only, corrupt, newer schema, disk full), and where later runs pick it
//! up again.
//!
//! A spill file is written atomically (temp file, fsync, rename), named by the write's UUID v7
//! id so names sort oldest first, and removed only after its write is committed. Applying a
//! write is idempotent (its id is the key of what it inserts), so a run killed between commit
//! and removal, or two runs ingesting the same file, still store it once.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::fsutil;
use crate::log::Log;
use crate::ops::Write;
use crate::store::Store;

/// Version of the spill file format; a newer one is left for the binary that wrote it.
const FORMAT: u32 = 1;
/// Bounded work per run, so no single hook pays for a long outage.
const MAX_FILES_PER_RUN: usize = 32;
const MAX_TIME_PER_RUN: Duration = Duration::from_millis(150);

#[derive(Serialize, Deserialize)]
struct SpillFile {
    format: u32,
    write: Write,
}

/// Keeps `write` in the data dir's spill folder, or in the temp-dir fallback when the data dir
/// cannot be written. Returns the file's path.
pub fn keep(config: &Config, write: &Write) -> Result<PathBuf> {
    let bytes = serde_json::to_vec(&SpillFile {
        format: FORMAT,
        write: write.clone(),
    })?;
    let name = format!("{}.json", write.id);
    let mut last_err = None;
    for dir in [config.spill_dir(), config.fallback_dir().join("spill")] {
        match fsutil::private_dir(&dir).and_then(|()| fsutil::write_atomic(&dir, &name, &bytes)) {
            Ok(()) => return Ok(dir.join(name)),
            Err(err) => {
                last_err = Some(anyhow::Error::new(err).context(format!("{}", dir.display())))
            }
        }
    }
    Err(last_err.unwrap_or_else(|| anyhow::anyhow!("no spill folder")))
}

/// Applies the oldest spilled writes, a bounded number per run.
pub fn ingest(store: &mut Store, config: &Config, log: &Log) {
    let started = Instant::now();
    let mut budget = MAX_FILES_PER_RUN;
    for dir in [config.spill_dir(), config.fallback_dir().join("spill")] {
        if budget == 0 {
            return;
        }
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect();
        names.sort_unstable();
        for name in names.iter().take(budget) {
            if started.elapsed() > MAX_TIME_PER_RUN {
                return;
            }
            budget -= 1;
            let path = dir.join(name);
            match apply_file(store, &path) {
                Ok(true) => {
                    let _ = fs::remove_file(&path);
                    log.line(
                        "INFO",
                        &format!("applied the spilled write {}", path.display()),
                    );
                }
                // Gone already: another run took it.
                Ok(false) => {}
                Err(err) if crate::store::is_busy(&err) => return,
                Err(err) => {
                    // Not ours to read (a newer format, a damaged file): set aside, never deleted.
                    let aside = path.with_extension("json.unreadable");
                    let _ = fs::rename(&path, &aside);
                    log.important("WARN", &format!("set aside {} ({err:#})", aside.display()));
                }
            }
        }
    }
}

/// Applies one spill file; `Ok(false)` when it no longer exists.
fn apply_file(store: &mut Store, path: &Path) -> Result<bool> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err).context("cannot read it"),
    };
    let file: SpillFile = serde_json::from_slice(&bytes).context("not a spill file")?;
    anyhow::ensure!(
        file.format <= FORMAT,
        "spill format {} is newer than this binary",
        file.format
    );
    store.apply(&file.write)?;
    Ok(true)
}
