//! The reserve: space set aside in advance, so that events still have somewhere to go when the
//! disk is full (on the usual one-partition laptop the temp dir is full too).
//!
//! A few chunk files of spaces live in the spill folder, written while there was room. Keeping
//! an event in one needs no new block: under the reserve's lock, the event's JSON is written as
//! one line over the spaces after the chunk's last line, in place (a JSON reader skips the
//! spaces), and a chunk in use is renamed `.reserve-N.used` (a rename needs no data block
//! either) so that the next pass over the spill folder sees it without opening anything. That
//! pass applies its events and turns it back into spaces. Session starts put back missing
//! chunks.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::fsutil::{self, Access};
use crate::ops::Write;

const CHUNKS: usize = 8;
const CHUNK_BYTES: usize = 256 * 1024;
/// An event larger than this is cut to fit (see [`Write::shrunk`]).
const MAX_EVENT_BYTES: usize = 64 * 1024;
const LOCK: &str = ".reserve.lock";
const USED: &str = ".used";

/// Puts back missing chunks. Costs a `stat` per chunk when all are there. Returns how many
/// were created.
pub fn replenish(config: &Config) -> io::Result<usize> {
    fsutil::our_dir(&config.data_dir)?;
    let dir = config.spill_dir();
    fsutil::our_dir(&dir)?;
    let mut created = 0;
    for chunk in 0..CHUNKS {
        let free = chunk_path(&dir, chunk);
        let used = used_path(&dir, chunk);
        if fs::symlink_metadata(&free).is_ok() || fs::symlink_metadata(&used).is_ok() {
            continue;
        }
        let temp = dir.join(format!(".reserve-{chunk}.tmp-{}", std::process::id()));
        let written = fsutil::create_private(&temp).and_then(|file| {
            write_spaces(&file, CHUNK_BYTES)?;
            // Allocated for real, not promised: a delayed allocation could still fail later.
            file.sync_all()
        });
        match written.and_then(|()| fs::rename(&temp, &free)) {
            Ok(()) => created += 1,
            Err(err) => {
                let _ = fs::remove_file(&temp);
                return Err(err);
            }
        }
    }
    if created > 0 {
        fsutil::sync_dir(&dir);
    }
    Ok(created)
}

/// Keeps `write` in the reserve, cut to fit. Returns the chunk it went to.
pub fn keep(config: &Config, write: &Write) -> io::Result<PathBuf> {
    let line = fitting(write)?;
    let dir = config.spill_dir();
    let _lock = lock(&dir)?;
    // Chunks in use first, so that free ones stay free as long as possible.
    let order = (0..CHUNKS)
        .map(|c| (used_path(&dir, c), None))
        .chain((0..CHUNKS).map(|c| (chunk_path(&dir, c), Some(used_path(&dir, c)))));
    for (path, rename_to) in order {
        let Ok(file) = open_chunk(&path) else {
            continue;
        };
        let Some(end) = end_of_data(&file)? else {
            continue;
        };
        if end + line.len() > CHUNK_BYTES {
            continue;
        }
        write_at(&file, &line, end as u64)?;
        file.sync_data()?;
        return match rename_to {
            Some(used) => {
                fs::rename(&path, &used)?;
                fsutil::sync_dir(&dir);
                Ok(used)
            }
            None => Ok(path),
        };
    }
    Err(io::Error::other("the reserve is full"))
}

/// The writes kept in a chunk in use, for a pass that can apply them; lines that do not
/// parse (a write torn by a kill) are skipped, as their hook never finished.
pub fn writes_in(path: &Path) -> io::Result<Vec<Write>> {
    let mut bytes = Vec::with_capacity(CHUNK_BYTES);
    open_chunk(path)?.read_to_end(&mut bytes)?;
    Ok(bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<super::SpillFile<Write>>(line).ok())
        .map(|file| file.write)
        .collect())
}

/// Turns a chunk whose writes are all applied back into a free one.
pub fn release(path: &Path) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let _lock = lock(dir)?;
    free(path)
}

/// Overwrites with spaces the writes of a chunk in use that `covers` names (forgotten before
/// they could be applied); a chunk left with none is free again. Returns how many went (with
/// `remove` false, how many would go).
pub fn forget(path: &Path, covers: &dyn Fn(&Write) -> bool, remove: bool) -> io::Result<usize> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let _lock = lock(dir)?;
    let file = open_chunk(path)?;
    let mut bytes = Vec::with_capacity(CHUNK_BYTES);
    (&file).read_to_end(&mut bytes)?;
    let (mut offset, mut removed, mut left) = (0, 0, 0);
    for line in bytes.split(|b| *b == b'\n') {
        match serde_json::from_slice::<super::SpillFile<Write>>(line) {
            Ok(kept) if covers(&kept.write) => {
                if remove {
                    write_at(&file, &vec![b' '; line.len()], offset as u64)?;
                }
                removed += 1;
            }
            Ok(_) => left += 1,
            Err(_) => {}
        }
        offset += line.len() + 1;
    }
    if remove && removed > 0 {
        file.sync_data()?;
        if left == 0 {
            free(path)?;
        }
    }
    Ok(removed)
}

/// Blanks a chunk in use and gives it its free name (under the reserve's lock).
fn free(path: &Path) -> io::Result<()> {
    let file = open_chunk(path)?;
    let end = end_of_data(&file)?.unwrap_or(CHUNK_BYTES);
    write_at(&file, &vec![b' '; end], 0)?;
    file.sync_data()?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let free = path.with_file_name(name.trim_end_matches(USED));
    fs::rename(path, free)
}

/// Whether a spill folder entry is a chunk in use.
pub fn is_used_chunk(name: &str) -> bool {
    name.starts_with(".reserve-") && name.ends_with(USED)
}

/// One line: a newline, then the spill file's JSON, cut until it fits.
fn fitting(write: &Write) -> io::Result<Vec<u8>> {
    let encode = |write: &Write| {
        serde_json::to_vec(&super::SpillFile {
            format: super::FORMAT,
            write,
        })
        .map_err(io::Error::other)
    };
    let mut bytes = encode(write)?;
    if bytes.len() > MAX_EVENT_BYTES {
        // JSON escapes can make text up to six times longer: cut with that margin.
        bytes = encode(&write.shrunk(MAX_EVENT_BYTES / 8))?;
    }
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(io::Error::other("the event does not fit in the reserve"));
    }
    bytes.insert(0, b'\n');
    Ok(bytes)
}

/// Where the chunk's data ends (after its last byte that is not a space), or `None` when the
/// file is not a chunk of the expected size.
fn end_of_data(file: &File) -> io::Result<Option<usize>> {
    if file.metadata()?.len() != CHUNK_BYTES as u64 {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(CHUNK_BYTES);
    let mut handle = file;
    handle.read_to_end(&mut bytes)?;
    Ok(Some(
        bytes
            .iter()
            .rposition(|b| *b != b' ')
            .map_or(0, |at| at + 1),
    ))
}

fn open_chunk(path: &Path) -> io::Result<File> {
    // Checked like every file of ours, then reopened for writing in place.
    fsutil::open_ours(path, Access::Read)?;
    fs::OpenOptions::new().read(true).write(true).open(path)
}

/// The reserve's lock: one writer at a time packs events into the chunks. Waited for: holders
/// keep it for one small write, and the kernel drops it if a holder dies.
fn lock(dir: &Path) -> io::Result<File> {
    let file = fsutil::open_ours(&dir.join(LOCK), Access::Append)?;
    file.lock()?;
    Ok(file)
}

fn write_spaces(file: &File, len: usize) -> io::Result<()> {
    write_at(file, &vec![b' '; len], 0)
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write as _};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}

fn chunk_path(dir: &Path, chunk: usize) -> PathBuf {
    dir.join(format!(".reserve-{chunk}"))
}

fn used_path(dir: &Path, chunk: usize) -> PathBuf {
    dir.join(format!(".reserve-{chunk}{USED}"))
}
