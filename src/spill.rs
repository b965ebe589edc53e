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
/// A temp file this old belongs to no living run.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// `W` is `&Write` when keeping (no copy of a large payload) and `Write` when reading back.
#[derive(Serialize, Deserialize)]
struct SpillFile<W> {
    format: u32,
    write: W,
}

/// Keeps `write` in the data dir's spill folder, or in the temp-dir fallback when the data dir
/// cannot be written. Returns the file's path.
pub fn keep(config: &Config, write: &Write) -> Result<PathBuf> {
    let bytes = serde_json::to_vec(&SpillFile {
        format: FORMAT,
        write,
    })?;
    let name = format!("{}.json", write.id);
    let primary = config.spill_dir();
    let first =
        fsutil::private_dir(&primary).and_then(|()| fsutil::write_atomic(&primary, &name, &bytes));
    let Err(first) = first else {
        return Ok(primary.join(name));
    };
    let fallback = config.fallback_dir();
    let dir = fallback.join("spill");
    fsutil::private_temp_dir(&fallback)
        .and_then(|()| fsutil::private_dir(&dir))
        .and_then(|()| fsutil::write_atomic(&dir, &name, &bytes))
        .with_context(|| format!("{}: {first}; and {}", primary.display(), dir.display()))?;
    Ok(dir.join(name))
}

/// What became of one spill file.
enum Taken {
    Applied,
    /// Another run took it first.
    Gone,
    /// Written by a newer claude-mem: left for it.
    Newer,
}

/// Applies the oldest spilled writes, a bounded number per run. Never waits for a lock: this
/// is a chore any later run can do, not something to hold Claude Code up for.
pub fn ingest(store: &mut Store, config: &Config, log: &Log) {
    let started = Instant::now();
    let mut budget = MAX_FILES_PER_RUN;
    if store.wait_until(started).is_err() {
        return;
    }
    for dir in [config.spill_dir(), config.fallback_dir().join("spill")] {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.ends_with(".json") && !name.starts_with('.') {
                names.push(name);
            } else if name.starts_with('.') && is_stale(&entry) {
                // A temp file of a run killed before its rename: it never became a spill file.
                let _ = fs::remove_file(entry.path());
            }
        }
        names.sort_unstable();
        for name in names {
            if budget == 0 || started.elapsed() > MAX_TIME_PER_RUN {
                return;
            }
            budget -= 1;
            let path = dir.join(&name);
            match take(store, &path) {
                Ok(Taken::Applied) => {
                    let _ = fs::remove_file(&path);
                    log.line(
                        "INFO",
                        &format!("applied the spilled write {}", path.display()),
                    );
                }
                Ok(Taken::Gone | Taken::Newer) => {}
                // The database cannot take it now (busy, full, failing): leave it for later.
                Err(Failure::Store(err)) => {
                    if !crate::store::is_busy(&err) {
                        log.line(
                            "WARN",
                            &format!("left {} for later ({err:#})", path.display()),
                        );
                    }
                    return;
                }
                Err(Failure::Unreadable(err)) => {
                    // Damaged beyond reading: set aside, never deleted.
                    let aside = path.with_extension("json.unreadable");
                    let _ = fs::rename(&path, &aside);
                    log.important("WARN", &format!("set aside {} ({err:#})", aside.display()));
                }
            }
        }
    }
}

enum Failure {
    Store(anyhow::Error),
    Unreadable(anyhow::Error),
}

fn take(store: &mut Store, path: &Path) -> Result<Taken, Failure> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Taken::Gone),
        Err(err) => return Err(Failure::Store(err.into())),
    };
    #[derive(Deserialize)]
    struct Header {
        format: u32,
    }
    let unreadable = |err: serde_json::Error| Failure::Unreadable(anyhow::Error::new(err));
    let header: Header = serde_json::from_slice(&bytes).map_err(unreadable)?;
    if header.format > FORMAT {
        return Ok(Taken::Newer);
    }
    let file: SpillFile<Write> = serde_json::from_slice(&bytes).map_err(unreadable)?;
    store.apply(&file.write).map_err(Failure::Store)?;
    Ok(Taken::Applied)
}

/// Older than any run could still be writing it.
fn is_stale(entry: &fs::DirEntry) -> bool {
    entry
        .metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > STALE_TEMP))
}
