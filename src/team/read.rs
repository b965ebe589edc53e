//! The team's files read back, as untrusted input: a clone holds what someone else wrote.
//!
//! The folder is used only when it is a real folder (not a link); each file only when its
//! name is one of ours, it opens without following a link as a regular file of the user's, it
//! is at most [`MAX_FILE_BYTES`], UTF-8 without NUL, and it parses. Anything else is skipped
//! with a line in the log, never an error for the whole command. At most [`MAX_ENTRIES`]
//! names are looked at and [`MAX_NOTES`] files read, the newest first: ids are UUID v7, whose
//! first digits are the time they were made, so names sort by age without a `stat` each.

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
/// The most names of the folder looked at; by the session-start hook, which has a budget,
/// fewer (a folder holding more shows the newest of those the listing gives first).
pub const MAX_ENTRIES: usize = 20_000;
pub const MAX_HOOK_ENTRIES: usize = 4_096;

/// A file of the folder that may be a note: its name, kind and id.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub kind: NoteKind,
}

impl Entry {
    /// The id its name says (see [`format::parse_name`]).
    pub fn id(&self) -> &str {
        let stem = self.name.strip_suffix(".md").unwrap_or(&self.name);
        stem.split_once('-').map_or(stem, |(_, id)| id)
    }
}

/// The project's `.claude-mem/` folder when it is a real folder: one `lstat`, and nothing more
/// when there is none.
pub fn folder(project: &Path) -> Option<PathBuf> {
    let dir = project.join(super::FOLDER);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    meta.is_dir().then_some(dir)
}

/// The files of `dir` named as notes, newest first (by id; ties by name), of the first `max`
/// names the folder lists. One listing, no `stat`, one allocation a name.
pub fn entries(dir: &Path, max: usize) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Entry> = read
        .take(max)
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let (kind, _) = format::parse_name(&name)?;
            Some(Entry { name, kind })
        })
        .collect();
    found.sort_unstable_by(|a, b| b.id().cmp(a.id()).then_with(|| a.name.cmp(&b.name)));
    found
}

/// The text of a file of the folder, if it is one to read; else why not.
pub fn text(dir: &Path, name: &str) -> Result<String, String> {
    let path = dir.join(name);
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
    let parsed = text(dir, &entry.name)
        .and_then(|text| format::parse(&text, entry.kind, entry.id()).map_err(String::from));
    match parsed {
        Ok(note) => Some(note),
        Err(why) => {
            log.line(
                "WARN",
                &format!(
                    "skipped the team's file {}: {why}",
                    dir.join(&entry.name).display()
                ),
            );
            None
        }
    }
}

/// Up to `limit` of the notes in `dir` (a project's [`folder`]), newest first, but those
/// whose id `skip` names (known from the name: the file is not read). At most three files are
/// read per note, and 256 names looked at, so that a folder of bad files or of skipped ones
/// costs little more.
pub fn newest(dir: &Path, limit: usize, log: &Log, skip: impl Fn(&str) -> bool) -> Vec<Note> {
    entries(dir, MAX_HOOK_ENTRIES)
        .iter()
        .take(256)
        .filter(|e| !skip(e.id()))
        .take(limit.saturating_mul(3))
        .filter_map(|e| note(dir, e, log))
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
    entries(&dir, MAX_ENTRIES)
        .iter()
        .take(MAX_NOTES)
        .filter_map(|e| note(&dir, e, log))
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
    entries(&dir, MAX_ENTRIES)
        .iter()
        .filter(|e| {
            let id = e.id().to_ascii_lowercase();
            let tail = id.rsplit('-').next().unwrap_or(&id);
            id.starts_with(&prefix) || (id.len() == 36 && tail.starts_with(&prefix))
        })
        .take(MAX_NOTES)
        .filter_map(|e| note(&dir, e, log))
        .collect()
}
