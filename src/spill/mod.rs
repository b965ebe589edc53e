//! The spill folder: where a write goes when the database cannot take it in time (locked past
//! the wait budget, read-only, corrupt, newer schema, disk full), and where later runs pick it
//! up again.
//!
//! A spill file is written atomically (temp file, fsync, rename), named by the write's UUID v7
//! id so names sort oldest first, and removed only after its write is committed. Applying a
//! write is idempotent (its id is the key of what it inserts), so a run killed between commit
//! and removal, or two runs ingesting the same file, still store it once.
//!
//! Nothing in the folder is trusted blindly: a file is applied only when it is a regular file
//! of ours of a sane size that parses; anything else is set aside in the quarantine folder with
//! the reason in the log, so that one bad file never blocks the ones behind it. A hook applies
//! only a small slice of a backlog; a larger one is left to the maintenance process.
//!
//! File names carry the format: `<id>.json` is format 1, and a later format must name itself
//! `<id>.v<N>.json`, which this version skips without opening. A file of a later format found
//! under a format-1 name is given its proper name once, and skipped from then on.
//!
//! A hook's slice counts the writes it applies: a file it only looks at (one too large for
//! the slice, one of a later format, one set aside) costs no transaction, and is bounded by
//! the slice's time alone, so that files skipped at the head of the folder never keep the
//! hooks from the writes behind them.

mod reserve;

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::fsutil::{self, Access, Durability};
use crate::log::Log;
use crate::ops::Write;
use crate::store::Store;

pub use reserve::replenish;

/// Version of the spill file format written into every file.
const FORMAT: u32 = 1;
/// Nothing we write comes near this; a larger file in the folder is not ours to read.
const MAX_FILE_BYTES: u64 = 1 << 30;
/// A temp file this old belongs to no living run, whatever its pid says.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// How much of a backlog one pass may take in.
#[derive(Debug, Clone, Copy)]
pub struct Slice {
    /// Writes applied; files only looked at do not count.
    pub max_files: usize,
    pub max_time: Duration,
    /// Larger files are left for a pass that may take longer.
    pub max_file_bytes: u64,
    /// Whether to take in the reserve's chunks (hundreds of writes each).
    pub reserve: bool,
}

/// What a hook may spend on someone else's backlog: a few small files, a few milliseconds.
pub const HOOK_SLICE: Slice = Slice {
    max_files: 8,
    max_time: Duration::from_millis(10),
    max_file_bytes: 2 << 20,
    reserve: false,
};

/// The maintenance process takes everything.
pub const FULL_SLICE: Slice = Slice {
    max_files: usize::MAX,
    max_time: Duration::from_secs(30),
    max_file_bytes: MAX_FILE_BYTES,
    reserve: true,
};

/// `W` is `&Write` when keeping (no copy of a large payload) and `Write` when reading back.
#[derive(Serialize, Deserialize)]
struct SpillFile<W> {
    format: u32,
    write: W,
}

/// Where a kept write went.
#[derive(Debug)]
pub struct Kept {
    pub path: PathBuf,
    /// The disk was full: the write went to a pre-allocated slot, cut to fit it if need be.
    pub reserve: bool,
}

/// Keeps `write` in the data dir's spill folder; when that fails, in the reserve (a full disk);
/// else in the temp-dir fallback (an unwritable data dir). `lasts` says whether the copy must
/// survive a power loss or only the hook being killed.
pub fn keep(config: &Config, write: &Write, lasts: Durability) -> Result<Kept> {
    let bytes = serde_json::to_vec(&SpillFile {
        format: FORMAT,
        write,
    })?;
    let name = file_name(write);
    let primary = config.spill_dir();
    let first = fsutil::our_dir(&config.data_dir)
        .and_then(|_| fsutil::our_dir(&primary))
        .and_then(|_| fsutil::write_atomic(&primary, &name, &bytes, lasts));
    let Err(first) = first else {
        return Ok(Kept {
            path: primary.join(name),
            reserve: false,
        });
    };
    if let Ok(path) = reserve::keep(config, write) {
        return Ok(Kept {
            path,
            reserve: true,
        });
    }
    let fallback = config.fallback_dir();
    let dir = fallback.join("spill");
    fsutil::private_temp_dir(&fallback)
        .and_then(|()| fsutil::private_dir(&dir))
        .and_then(|()| fsutil::write_atomic(&dir, &name, &bytes, lasts))
        .with_context(|| format!("{}: {first}; and {}", primary.display(), dir.display()))?;
    Ok(Kept {
        path: dir.join(name),
        reserve: false,
    })
}

fn file_name(write: &Write) -> String {
    format!("{}.json", write.id)
}

/// What one pass over the spill folders did and left.
#[derive(Debug, Default)]
pub struct Backlog {
    pub applied: usize,
    /// Files still waiting after this pass (an estimate when the pass stopped early).
    pub waiting: usize,
    /// Name of the oldest file still waiting (names sort by time).
    pub oldest: Option<String>,
}

/// Applies the oldest spilled writes, within `slice`: the data dir's spill folder, then the
/// fallback folder's when it exists (a `stat` says it does not, almost always). Never waits for
/// a lock: this is a chore any later run can do, not something to hold Claude Code up for.
pub fn ingest(store: &mut Store, config: &Config, log: &Log, slice: Slice) -> Backlog {
    let started = Instant::now();
    let mut backlog = Backlog::default();
    if store.wait_until(started).is_err() {
        return backlog;
    }
    let mut dirs = vec![config.spill_dir()];
    dirs.extend(fallback_spill(config, log));
    let mut pass = Pass {
        store,
        quarantine: config.quarantine_dir(),
        log,
        slice,
        started,
        applied: 0,
        stopped: false,
    };
    for dir in dirs {
        pass.dir(&dir, &mut backlog);
    }
    backlog
}

/// Whether a write waits in the data dir's spill folder (one read of the folder).
pub fn any_waiting(config: &Config) -> bool {
    fs::read_dir(config.spill_dir()).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| is_current_format(&e.file_name().to_string_lossy()))
    })
}

/// The fallback folder's spill folder, when the folder exists and is ours.
fn fallback_spill(config: &Config, log: &Log) -> Option<PathBuf> {
    let fallback = config.fallback_dir();
    if !fallback.exists() {
        return None;
    }
    match fsutil::private_temp_dir(&fallback) {
        Ok(()) => Some(fallback.join("spill")),
        Err(err) => {
            log.line("WARN", &format!("ignored the fallback folder: {err}"));
            None
        }
    }
}

struct Pass<'a> {
    store: &'a mut Store,
    quarantine: PathBuf,
    log: &'a Log,
    slice: Slice,
    started: Instant,
    /// Writes applied so far (what [`Slice::max_files`] bounds).
    applied: usize,
    /// The database cannot take writes now: leave everything for later.
    stopped: bool,
}

impl Pass<'_> {
    fn dir(&mut self, dir: &Path, backlog: &mut Backlog) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<String> = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if reserve::is_used_chunk(&name) {
                self.reserve_chunk(&entry.path(), backlog);
            } else if let Some(temp) = name.strip_prefix('.') {
                recover_temp(dir, temp, &entry, self.log);
            } else if is_current_format(&name) {
                names.push(name);
            }
        }
        names.sort_unstable();
        for (index, name) in names.iter().enumerate() {
            if self.stopped
                || self.applied >= self.slice.max_files
                || self.started.elapsed() > self.slice.max_time
            {
                backlog.waiting += names.len() - index;
                backlog.oldest = backlog.oldest.take().or_else(|| Some(name.clone()));
                return;
            }
            self.one(dir, name, backlog);
        }
    }

    fn one(&mut self, dir: &Path, name: &str, backlog: &mut Backlog) {
        let path = &dir.join(name);
        match take(self.store, path, self.slice.max_file_bytes) {
            Taken::Applied => {
                let _ = fs::remove_file(path);
                self.applied += 1;
                backlog.applied += 1;
                self.log.line(
                    "INFO",
                    &format!("applied the spilled write {}", path.display()),
                );
            }
            Taken::Gone => {}
            Taken::Later => {
                backlog.waiting += 1;
                backlog.oldest = backlog.oldest.take().or_else(|| Some(name.into()));
            }
            Taken::Stop(err) => {
                self.stopped = true;
                backlog.waiting += 1;
                backlog.oldest = backlog.oldest.take().or_else(|| Some(name.into()));
                if !crate::store::is_busy(&err) {
                    self.log.line(
                        "WARN",
                        &format!("left {} for later ({err:#})", path.display()),
                    );
                }
            }
            Taken::Reject(why) => self.set_aside(path, name, &why),
            Taken::Newer(format) => self.rename_newer(dir, name, format),
        }
    }

    /// Gives a file of a later format the name that format must carry, so that this version
    /// skips it without opening it again and the version that knows it finds it.
    fn rename_newer(&self, dir: &Path, name: &str, format: u32) {
        let stem = name.strip_suffix(".json").unwrap_or(name);
        let proper = format!("{stem}.v{format}.json");
        match fs::rename(dir.join(name), dir.join(&proper)) {
            Ok(()) => self.log.line(
                "INFO",
                &format!("left {proper} (spill format {format}) for the version that knows it"),
            ),
            Err(err) => self.log.line(
                "WARN",
                &format!("could not rename {name} of spill format {format}: {err}"),
            ),
        }
    }

    /// Applies the writes a full disk left in a reserve chunk, then frees the chunk. Only whole:
    /// a chunk is freed once every write in it is in the database.
    fn reserve_chunk(&mut self, path: &Path, backlog: &mut Backlog) {
        if self.stopped || !self.slice.reserve {
            backlog.waiting += 1;
            return;
        }
        let writes = match reserve::writes_in(path) {
            Ok(writes) => writes,
            Err(err) => {
                self.log
                    .line("WARN", &format!("cannot read {}: {err}", path.display()));
                return;
            }
        };
        for write in &writes {
            if let Err(err) = self.store.apply(write) {
                // A write the database refuses for good is dropped with the chunk; one it cannot
                // take now keeps the chunk for a later pass.
                if crate::store::is_transient(&err) {
                    self.log.line(
                        "WARN",
                        &format!("left {} for later ({err:#})", path.display()),
                    );
                    self.stopped = true;
                    backlog.waiting += writes.len();
                    return;
                }
                self.log
                    .line("WARN", &format!("dropped a reserved write: {err:#}"));
            }
        }
        backlog.applied += writes.len();
        if let Err(err) = reserve::release(path) {
            self.log
                .line("WARN", &format!("cannot free {}: {err}", path.display()));
        }
        self.log.line(
            "INFO",
            &format!(
                "applied {} writes kept in the reserve while the disk was full",
                writes.len()
            ),
        );
    }

    /// Moves a file that cannot be applied out of the way, never deleting it.
    fn set_aside(&self, path: &Path, name: &str, why: &str) {
        let aside = self.quarantine.join(name);
        let moved = fsutil::our_dir(&self.quarantine).and_then(|_| fs::rename(path, &aside));
        match moved {
            Ok(()) => self.log.line(
                "WARN",
                &format!("set aside {} in {}: {why}", name, self.quarantine.display()),
            ),
            Err(err) => self.log.line(
                "WARN",
                &format!("could not set aside {} ({why}): {err}", path.display()),
            ),
        }
    }
}

/// Removes the writes waiting in the spill folders, or set aside in the quarantine folder,
/// that `covers` says belong to something forgotten; in the reserve's chunks their lines are
/// overwritten with spaces. A file that cannot be read as a write is left. Returns how many
/// writes went (with `remove` false, how many would go).
pub fn forget(config: &Config, covers: &dyn Fn(&Write) -> bool, remove: bool) -> usize {
    let mut dirs = vec![config.spill_dir(), config.quarantine_dir()];
    let fallback = config.fallback_dir();
    if fallback.is_dir() && fsutil::private_temp_dir(&fallback).is_ok() {
        dirs.push(fallback.join("spill"));
    }
    let mut removed = 0;
    for dir in dirs {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if reserve::is_used_chunk(&name) {
                removed += reserve::forget(&path, covers, remove).unwrap_or(0);
                continue;
            }
            // Spill files, and temp files of runs that died before renaming theirs.
            if !(name.ends_with(".json") || name.contains(".json.tmp-")) {
                continue;
            }
            let write = read_ours(&path, MAX_FILE_BYTES)
                .ok()
                .flatten()
                .and_then(|bytes| serde_json::from_slice::<SpillFile<Write>>(&bytes).ok());
            if write.is_some_and(|file| covers(&file.write))
                && (!remove || fs::remove_file(&path).is_ok())
            {
                removed += 1;
            }
        }
    }
    removed
}

/// `<uuid>.json`; anything else, `<id>.v2.json` of a later format included, is not ours to read.
pub fn is_current_format(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|stem| !stem.is_empty() && !stem.contains('.'))
}

/// `<id>.v<N>.json`: a write of a later format, left for the version that knows it.
pub fn is_newer_format(name: &str) -> bool {
    name.strip_suffix(".json")
        .and_then(|stem| stem.rsplit_once(".v"))
        .is_some_and(|(id, n)| {
            is_current_format(&format!("{id}.json"))
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        })
}

/// What became of one spill file.
enum Taken {
    Applied,
    /// Another run took it first.
    Gone,
    /// Too large for this slice: for a longer pass.
    Later,
    /// The database cannot take writes now.
    Stop(anyhow::Error),
    /// Can never be applied: set it aside.
    Reject(String),
    /// Written by a later version in a format this one does not know.
    Newer(u32),
}

/// The part of a spill file that every format shares.
#[derive(Deserialize)]
struct Format {
    format: u32,
}

fn take(store: &mut Store, path: &Path, max_bytes: u64) -> Taken {
    let bytes = match read_ours(path, max_bytes) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Taken::Later,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Taken::Gone,
        Err(err) => return Taken::Reject(err.to_string()),
    };
    match serde_json::from_slice::<Format>(&bytes) {
        Ok(Format { format }) if format > FORMAT => return Taken::Newer(format),
        Ok(Format { format }) if format < FORMAT => {
            return Taken::Reject(format!("format {format}, which no version wrote"));
        }
        _ => {}
    }
    let file: SpillFile<Write> = match serde_json::from_slice(&bytes) {
        Ok(file) => file,
        Err(err) => return Taken::Reject(format!("damaged: {err}")),
    };
    match store.apply(&file.write) {
        Ok(()) => Taken::Applied,
        Err(err) if crate::store::is_transient(&err) => Taken::Stop(err),
        Err(err) => Taken::Reject(format!("the database refuses it: {err:#}")),
    }
}

/// The bytes of a spill file of ours, or `None` when it is larger than `max_bytes`.
fn read_ours(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let file = fsutil::open_ours(path, Access::Read)?;
    let len = file.metadata()?.len();
    if len > MAX_FILE_BYTES {
        return Err(io::Error::other(format!(
            "{len} bytes, far more than we write"
        )));
    }
    if len > max_bytes {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// A temp file (`.<name>.tmp-<pid>`) of a run that died before its rename: when it is whole,
/// its write was kept and must not be lost, so it becomes a spill file; a torn one held an
/// event that never became durable and is removed.
fn recover_temp(dir: &Path, temp: &str, entry: &fs::DirEntry, log: &Log) {
    let Some((name, pid)) = temp.rsplit_once(".tmp-") else {
        return;
    };
    let old = entry
        .metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > STALE_TEMP));
    let dead = pid.parse().is_ok_and(|pid| !process_alive(pid));
    if !(dead || old) || !is_current_format(name) {
        return;
    }
    let path = entry.path();
    let whole = read_ours(&path, MAX_FILE_BYTES)
        .ok()
        .flatten()
        .is_some_and(|bytes| serde_json::from_slice::<SpillFile<Write>>(&bytes).is_ok());
    if whole && fs::rename(&path, dir.join(name)).is_ok() {
        log.line(
            "INFO",
            &format!("recovered the spill file {name} of a run that died before renaming it"),
        );
    } else if !whole {
        let _ = fs::remove_file(&path);
    }
}

/// Whether a process with this pid may still be running: signal 0 checks that it exists
/// (and that we may signal it; one we may not still exists).
#[cfg(unix)]
fn process_alive(pid: i32) -> bool {
    use rustix::process::{Pid, test_kill_process};
    // Never 0 or below, which would name a group or every process.
    let Some(pid) = Pid::from_raw(pid.max(0)) else {
        return false;
    };
    let probe = test_kill_process(pid);
    probe.is_ok() || probe == Err(rustix::io::Errno::PERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: i32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_current_format_names_are_read() {
        assert!(is_current_format(
            "0191a2b3-0000-7000-8000-000000000000.json"
        ));
        assert!(!is_current_format(
            "0191a2b3-0000-7000-8000-000000000000.v2.json"
        ));
        assert!(!is_current_format(".json"));
        assert!(!is_current_format("x.json.tmp-12"));
        assert!(is_newer_format(
            "0191a2b3-0000-7000-8000-000000000000.v2.json"
        ));
        for other in [
            "a.json",
            "a.v.json",
            "a.vx.json",
            ".v2.json",
            "a.b.v2.json",
            "a.v2",
        ] {
            assert!(!is_newer_format(other), "{other}");
        }
    }
}
