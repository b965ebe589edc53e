//! The team's files read back, as untrusted input: a clone holds what someone else wrote.
//!
//! The folder is used only when it is a real folder (not a link), and so is each month's
//! folder in it; each file only when its name is one of ours, it opens without following a
//! link as a regular file of the user's, it is at most [`MAX_FILE_BYTES`], UTF-8 without NUL,
//! and it parses. Anything else is skipped with a line in the log, never an error for the
//! whole command. The newest come first, found from names alone, without a `stat` each: months
//! sort by name, and ids are UUID v7, whose first digits are the time they were made. At most
//! [`MAX_ENTRIES`] names are looked at and [`MAX_NOTES`] files read.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::format::{self, Note, NoteKind};
use crate::fsutil::{self, Access};
use crate::log::Log;

/// The largest file read; ours are a few KB.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The most files read for a search.
pub const MAX_NOTES: usize = 2_000;
/// The most text of them kept for a search.
pub const MAX_TOTAL_BYTES: usize = 16 * 1024 * 1024;
/// The most names of the folder looked at, and of month folders.
pub const MAX_ENTRIES: usize = 20_000;
const MAX_MONTHS: usize = 1_200;

/// A file of the folder that may be a note: its month's folder, its name and kind.
#[derive(Debug, Clone)]
pub struct Entry {
    pub month: String,
    pub name: String,
    pub kind: NoteKind,
}

impl Entry {
    /// The id its name says (see [`format::parse_name`]).
    pub fn id(&self) -> &str {
        let stem = self.name.strip_suffix(".md").unwrap_or(&self.name);
        stem.split_once('-').map_or(stem, |(_, id)| id)
    }

    /// Its path in the folder: `2026-11/memory-<id>.md`.
    pub fn path(&self) -> String {
        format!("{}/{}", self.month, self.name)
    }
}

/// The project's `.claude-mem/` folder when it is a real folder: one `lstat`, and nothing more
/// when there is none.
pub fn folder(project: &Path) -> Option<PathBuf> {
    let dir = project.join(super::FOLDER);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    meta.is_dir().then_some(dir)
}

/// The month folders of `dir`, newest first: real folders (the listing says, without a
/// `stat`; a link is not one) named as [`format::month`] names them.
fn months(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut months: Vec<String> = read
        .take(MAX_ENTRIES)
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            (format::is_month(&name) && e.file_type().ok()?.is_dir()).then_some(name)
        })
        .take(MAX_MONTHS)
        .collect();
    months.sort_unstable_by(|a, b| b.cmp(a));
    months
}

/// The files of one month's folder named as notes, newest first (by id; ties by name).
fn month_entries(dir: &Path, month: &str) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir.join(month)) else {
        return Vec::new();
    };
    let mut found: Vec<Entry> = read
        .take(MAX_ENTRIES)
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let (kind, _) = format::parse_name(&name)?;
            Some(Entry {
                month: month.to_string(),
                name,
                kind,
            })
        })
        .collect();
    found.sort_unstable_by(|a, b| b.id().cmp(a.id()).then_with(|| a.name.cmp(&b.name)));
    found
}

/// The notes' files of `dir`, newest first, month by month: a month's folder is listed only
/// when the ones after it were not enough.
pub fn entries(dir: &Path) -> impl Iterator<Item = Entry> {
    let dir = dir.to_path_buf();
    months(&dir)
        .into_iter()
        .flat_map(move |month| month_entries(&dir, &month))
        .take(MAX_ENTRIES)
}

/// The text of a file of the folder (`path` in it), if it is one to read; else why not.
pub fn text(dir: &Path, path: &str) -> Result<String, String> {
    let path = dir.join(path);
    let file = fsutil::open_ours(&path, Access::Read).map_err(|err| err.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| err.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("it is larger than {MAX_FILE_BYTES} bytes"));
    }
    if bytes.contains(&0) {
        return Err("it is binary".into());
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".into())
}

/// The note in an entry, or `None` (and a line in the log) when it is not one to read.
pub fn note(dir: &Path, entry: &Entry, log: &Log) -> Option<Note> {
    let parsed = text(dir, &entry.path())
        .and_then(|text| format::parse(&text, entry.kind, entry.id()).map_err(String::from));
    match parsed {
        Ok(note) => Some(note),
        Err(why) => {
            log.line(
                "WARN",
                &format!(
                    "skipped the team's file {}: {why}",
                    dir.join(entry.path()).display()
                ),
            );
            None
        }
    }
}

/// Up to `limit` of the notes in `dir` (a project's [`folder`]), newest first, but those
/// whose id `skip` names (known from the name: the file is not read). At most three files are
/// read per note, and 256 names looked at, so that a folder of bad files or of skipped ones
/// costs little more; the months before are not listed once enough is found.
pub fn newest(dir: &Path, limit: usize, log: &Log, skip: impl Fn(&str) -> bool) -> Vec<Note> {
    entries(dir)
        .take(256)
        .filter(|e| !skip(e.id()))
        .take(limit.saturating_mul(3))
        .filter_map(|e| note(dir, &e, log))
        .take(limit)
        .collect()
}

/// The project's notes a search looks through: the newest, at most [`MAX_NOTES`] of them and
/// [`MAX_TOTAL_BYTES`] of text.
pub fn all(project: &Path, log: &Log) -> Vec<Note> {
    let Some(dir) = folder(project) else {
        return Vec::new();
    };
    let mut bytes = 0;
    entries(&dir)
        .take(MAX_NOTES)
        .filter_map(|e| note(&dir, &e, log))
        .take_while(|n| {
            bytes += n.body.len() + n.title.len();
            bytes <= MAX_TOTAL_BYTES
        })
        .collect()
}

/// The notes whose id, or the last group of it that short ids show, starts with `prefix`.
pub fn find(project: &Path, prefix: &str, log: &Log) -> Vec<Note> {
    let Some(dir) = folder(project) else {
        return Vec::new();
    };
    let prefix = prefix.to_ascii_lowercase();
    entries(&dir)
        .filter(|e| {
            let id = e.id().to_ascii_lowercase();
            let tail = id.rsplit('-').next().unwrap_or(&id);
            id.starts_with(&prefix) || (id.len() == 36 && tail.starts_with(&prefix))
        })
        .take(MAX_NOTES)
        .filter_map(|e| note(&dir, &e, log))
        .collect()
}
