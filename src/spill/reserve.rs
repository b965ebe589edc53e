//! Reserve slots: space set aside in advance, so that an event still has somewhere to go when
//! the disk is full (on the usual one-partition laptop the temp dir is full too).
//!
//! A slot is a file of spaces written while there was room. Keeping an event in one needs no
//! new block: the slot is claimed by an atomic rename, the event's JSON is written over its
//! start (the spaces after it are white space a JSON reader skips), and the slot is renamed
//! into the spill folder, where it is applied like any spill file. Session starts put back the
//! slots that were used.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::fsutil;
use crate::ops::Write;

const SLOTS: usize = 16;
/// An event larger than a slot is cut to fit (see [`Write::shrunk`]).
pub const SLOT_BYTES: usize = 64 * 1024;

/// Puts back missing slots. Costs a `stat` per slot when all are there. Returns how many were
/// created.
pub fn replenish(config: &Config) -> io::Result<usize> {
    let dir = config.reserve_dir();
    fsutil::our_dir(&dir)?;
    // The spill folder must exist before the disk fills: creating it then could fail.
    fsutil::our_dir(&config.spill_dir())?;
    recover_claimed(&dir, &config.spill_dir());
    let mut created = 0;
    for slot in 0..SLOTS {
        let path = slot_path(&dir, slot);
        if fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let temp = dir.join(format!(".slot-{slot}.tmp-{}", std::process::id()));
        let written = fsutil::create_private(&temp).and_then(|mut file| {
            file.write_all(&[b' '; SLOT_BYTES])?;
            // Allocated for real, not promised: a delayed allocation could still fail later.
            file.sync_all()
        });
        match written.and_then(|()| fs::rename(&temp, &path)) {
            Ok(()) => created += 1,
            Err(err) => {
                let _ = fs::remove_file(&temp);
                return Err(err);
            }
        }
    }
    Ok(created)
}

/// A slot claimed by a run that died before renaming it into the spill folder: if it holds a
/// whole spill file, it goes there now; otherwise it is removed, and a fresh slot takes its place.
fn recover_claimed(dir: &Path, spill: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(".claimed-") else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|pid| pid.parse().ok());
        if pid.is_some_and(super::process_alive) {
            continue;
        }
        let path = entry.path();
        let spilled = super::read_ours(&path, SLOT_BYTES as u64)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<super::SpillFile<Write>>(&bytes).ok());
        match spilled {
            Some(file) => {
                let _ = fs::rename(&path, spill.join(super::file_name(&file.write)));
            }
            None => {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

/// Keeps `write` in a free slot, cut to fit. Returns the spill file it became.
pub fn keep(config: &Config, write: &Write, name: &str) -> io::Result<PathBuf> {
    let bytes = fitting(write)?;
    let dir = config.reserve_dir();
    let spill = config.spill_dir();
    for slot in 0..SLOTS {
        let claimed = dir.join(format!(".claimed-{}-{slot}", std::process::id()));
        // Whoever renames a slot first owns it; the others try the next one.
        if fs::rename(slot_path(&dir, slot), &claimed).is_err() {
            continue;
        }
        let result = fill(&claimed, &bytes).and_then(|()| fs::rename(&claimed, spill.join(name)));
        match result {
            Ok(()) => {
                fsutil::sync_dir(&spill);
                return Ok(spill.join(name));
            }
            Err(err) => {
                let _ = fs::rename(&claimed, slot_path(&dir, slot));
                return Err(err);
            }
        }
    }
    Err(io::Error::other("no reserve slot is left"))
}

/// The spill file bytes of `write`, cut until they fit in a slot.
fn fitting(write: &Write) -> io::Result<Vec<u8>> {
    let encode = |write: &Write| {
        serde_json::to_vec(&super::SpillFile {
            format: super::FORMAT,
            write,
        })
        .map_err(io::Error::other)
    };
    let bytes = encode(write)?;
    if bytes.len() <= SLOT_BYTES {
        return Ok(bytes);
    }
    // JSON escapes can make text up to six times longer: cut with that margin.
    let bytes = encode(&write.shrunk(SLOT_BYTES / 8))?;
    if bytes.len() > SLOT_BYTES {
        return Err(io::Error::other("the event does not fit in a reserve slot"));
    }
    Ok(bytes)
}

/// Writes `bytes` over the start of a claimed slot, in place: no new block is needed.
fn fill(slot: &Path, bytes: &[u8]) -> io::Result<()> {
    let file = fs::OpenOptions::new().write(true).open(slot)?;
    if file.metadata()?.len() < bytes.len() as u64 {
        return Err(io::Error::other(
            "the reserve slot is smaller than expected",
        ));
    }
    write_at_start(&file, bytes)?;
    file.sync_data()
}

#[cfg(unix)]
fn write_at_start(file: &fs::File, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, 0)
}

#[cfg(not(unix))]
fn write_at_start(mut file: &fs::File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)
}

fn slot_path(dir: &Path, slot: usize) -> PathBuf {
    dir.join(format!("slot-{slot}"))
}
