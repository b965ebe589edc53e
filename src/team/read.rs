//! The team's files read back, as untrusted input: a clone holds what someone else wrote.
//!
//! The folder is used only when it is a real folder (not a link), and so is each month's
//! folder in it; each file only when its name is one of ours, it opens without following a
//! link as a regular file of the user's, it is at most [`MAX_FILE_BYTES`], UTF-8 without NUL,
//! and it parses. Anything else is skipped with a line in the log, never an error for the
//! whole command; the files skipped are said in one line of the log per read, however many
//! (a hostile folder of thousands would rotate the user's real warnings out of the log). Which
//! files a bounded read takes is found from names alone, without a `stat` each, the newest
//! first: months sort by name, and ids are UUID v7, whose first digits are the time they were
//! made. But the names are the file's author's to choose: a month after the user's own, or
//! `undated`, and an id that is not a UUID v7 or says a time after the user's clock, sort after
//! every other (see [`order`]). What is shown is never in the names' order: the session start
//! lists notes in their digest's order (`team::digest`), and a search ranks them by their text
//! alone, in an order of this machine's (`recall::team`). At most [`MAX_ENTRIES`] names are looked at and
//! [`MAX_NOTES`] files read, and a search's read is kept for the rest of the process while the
//! folder is unchanged ([`all`]): a server asked many times parses it once.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::format::{self, Note, NoteKind};
use crate::fsutil::{self, Access};
use crate::log::Log;

/// The largest file read; ours are a few KB.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The most files read for a search.
pub const MAX_NOTES: usize = 2_000;
/// The most text of them kept for a search: some 2,000 notes of the compressor's size, and
/// what an index in memory takes in well within a search's time.
pub const MAX_TOTAL_BYTES: usize = 4 * 1024 * 1024;
/// The most names of the folder looked at, and of month folders.
pub const MAX_ENTRIES: usize = 20_000;
/// The most month folders listed: a hundred years.
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

/// How much of a folder a read looks at: the names of each listing and the month folders
/// listed, and of what they name the files read and the bytes of text kept.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub names: usize,
    pub months: usize,
    pub notes: usize,
    pub bytes: usize,
}

/// What of a note's file is read for a list of notes, or a snippet: its header and the start
/// of its text.
pub const FRONT_BYTES: u64 = 4096;

/// What a search reads.
const SEARCH: Bounds = Bounds {
    names: MAX_ENTRIES,
    months: MAX_MONTHS,
    notes: MAX_NOTES,
    bytes: MAX_TOTAL_BYTES,
};

/// The month folders of `dir`, newest first (by [`order::month`]): real folders (the listing
/// says, without a `stat`; a link is not one) named as [`format::month`] names them.
fn months(dir: &Path, bounds: Bounds) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut months: Vec<String> = read
        .take(bounds.names)
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            (format::is_month(&name) && e.file_type().ok()?.is_dir()).then_some(name)
        })
        .collect();
    let this = order::this_month();
    let newer = |a: &String, b: &String| order::month(b, &this).cmp(&order::month(a, &this));
    // Only the newest are kept: chosen in one pass, and only they sorted (1,200 names sorted
    // whole cost a session start 1.3 million instructions, a third of it).
    if let Some(last) = bounds.months.checked_sub(1)
        && months.len() > bounds.months
    {
        months.select_nth_unstable_by(last, newer);
    }
    months.truncate(bounds.months);
    months.sort_unstable_by(newer);
    months
}

/// The files of one month's folder named as notes, newest first (by [`order::made`]; within a
/// millisecond by id, then by name).
fn month_entries(dir: &Path, month: &str, names: usize) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir.join(month)) else {
        return Vec::new();
    };
    let mut found: Vec<Entry> = read
        .take(names)
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
    let now = order::now_ms();
    found.sort_unstable_by(|a, b| {
        let made = |e: &Entry| order::made(e.id(), now);
        made(b)
            .cmp(&made(a))
            .then_with(|| b.id().cmp(a.id()))
            .then_with(|| a.name.cmp(&b.name))
    });
    found
}

/// The notes' files of `dir`, newest first, month by month: a month's folder is listed only
/// when the ones after it were not enough.
pub fn entries(dir: &Path) -> impl Iterator<Item = Entry> {
    listed(dir, SEARCH)
}

/// [`entries`] within `bounds`' names and months.
fn listed(dir: &Path, bounds: Bounds) -> impl Iterator<Item = Entry> {
    let dir = dir.to_path_buf();
    months(&dir, bounds)
        .into_iter()
        .flat_map(move |month| month_entries(&dir, &month, bounds.names))
        .take(bounds.names)
}

/// The text of a file of the folder (`path` in it), if it is one to read; else why not.
pub fn text(dir: &Path, path: &str) -> Result<String, String> {
    text_of(dir, path, MAX_FILE_BYTES).map_err(|why| why.to_string())
}

/// Why a file of the folder was not read.
enum Unread {
    /// It holds more than the bytes a read was allowed.
    Larger(u64),
    Not(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Larger(most) => write!(f, "it is larger than {most} bytes"),
            Unread::Not(why) => f.write_str(why),
        }
    }
}

/// [`text`], of at most `most` bytes.
fn text_of(dir: &Path, path: &str, most: u64) -> Result<String, Unread> {
    let not = |err: std::io::Error| Unread::Not(err.to_string());
    let file = fsutil::open_ours(&dir.join(path), Access::Read).map_err(not)?;
    let mut bytes = Vec::new();
    file.take(most + 1).read_to_end(&mut bytes).map_err(not)?;
    if bytes.len() as u64 > most {
        return Err(Unread::Larger(most));
    }
    if bytes.contains(&0) {
        return Err(Unread::Not("it is binary".into()));
    }
    String::from_utf8(bytes).map_err(|_| Unread::Not("it is not UTF-8 text".into()))
}

/// The note in an entry's file of at most `most` bytes, and how many it held.
fn parsed(dir: &Path, entry: &Entry, most: u64) -> Result<(Note, usize), Unread> {
    let text = text_of(dir, &entry.path(), most)?;
    let note =
        format::parse(&text, entry.kind, entry.id()).map_err(|why| Unread::Not(why.into()))?;
    Ok((note, text.len()))
}

/// The files a read of a folder skipped: how many, and the first with why, said in one line
/// of the log once the read is done.
#[derive(Default)]
struct Skipped {
    count: usize,
    first: Option<String>,
}

impl Skipped {
    fn add(&mut self, entry: &Entry, why: &dyn std::fmt::Display) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!("{}: {why}", entry.path()));
        }
    }

    fn say(self, dir: &Path, log: Option<&Log>) {
        if let (Some(first), Some(log)) = (self.first, log) {
            log.line(
                "WARN",
                &format!(
                    "skipped {} of the team's files in {} (the first, {first})",
                    self.count,
                    dir.display()
                ),
            );
        }
    }
}

/// Up to `limit` of the notes at `paths` in `dir` (the folder's files in the order of its
/// digest, `team::digest::order`), in that order, but those whose id `skip` names (known from
/// the name), each from the front of its file: at most three files read per note, and 256
/// paths looked at, so that a folder of bad files or of skipped ones costs a hook little more.
pub fn in_order(
    dir: &Path,
    paths: &[String],
    limit: usize,
    log: &Log,
    skip: impl Fn(&str) -> bool,
) -> Vec<Note> {
    let mut skipped = Skipped::default();
    let notes = paths
        .iter()
        .take(256)
        .filter(|path| {
            let name = path.rsplit('/').next().unwrap_or(path);
            format::parse_name(name).is_some_and(|(_, id)| !skip(id))
        })
        .take(limit.saturating_mul(3))
        .filter_map(|path| match front(dir, path, FRONT_BYTES) {
            Ok(note) => Some(note),
            Err(why) => {
                skipped.count += 1;
                skipped
                    .first
                    .get_or_insert_with(|| format!("{path}: {why}"));
                None
            }
        })
        .take(limit)
        .collect();
    skipped.say(dir, Some(log));
    notes
}

/// The project's notes a search looks through: the newest, at most [`MAX_NOTES`] of them and
/// [`MAX_TOTAL_BYTES`] of text; read once per process while the folder is unchanged (see
/// [`Kept`]).
pub fn all(project: &Path, log: &Log) -> Arc<Vec<Note>> {
    let Some(dir) = folder(project) else {
        return Arc::default();
    };
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(k) = kept.iter().find(|k| k.dir == dir)
        && stamps(&dir, &k.months) == k.stamps
    {
        return Arc::clone(&k.notes);
    }
    let found = within(&dir, SEARCH, Some(log));
    let notes: Arc<Vec<Note>> = Arc::new(found.notes.into_iter().map(|(_, n)| n).collect());
    kept.retain(|k| k.dir != dir);
    kept.push(Kept {
        stamps: stamps(&dir, &found.months),
        dir,
        months: found.months,
        notes: Arc::clone(&notes),
    });
    notes
}

/// A folder as a search of this process read it: the notes it found, and when the folder and
/// the month folders it listed were last changed (adding, removing or renaming a file changes
/// its folder's, as git's checkout does). An MCP server answers many searches and `get`s: it
/// parses a folder again only once it changed, not at each.
struct Kept {
    dir: PathBuf,
    months: Vec<String>,
    stamps: Vec<Option<SystemTime>>,
    notes: Arc<Vec<Note>>,
}

static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// When `dir` and its folders `months` were last changed.
fn stamps(dir: &Path, months: &[String]) -> Vec<Option<SystemTime>> {
    std::iter::once("")
        .chain(months.iter().map(String::as_str))
        .map(|m| {
            std::fs::symlink_metadata(dir.join(m))
                .and_then(|m| m.modified())
                .ok()
        })
        .collect()
}

/// What a read of a folder found: the month folders it listed, newest first, and the notes in
/// their files, each with its file's path in the folder.
#[derive(Debug, Default)]
pub struct Found {
    pub months: Vec<String>,
    pub notes: Vec<(String, Note)>,
}

/// The newest notes of `dir` (a project's [`folder`]) within `bounds`: the files of the
/// newest months, and of those the newest, until one more would pass a bound (a file that is
/// not one to read counts as read; its bytes, as far as they were read, do not). A file
/// skipped is said in `log`, when there is one.
pub fn within(dir: &Path, bounds: Bounds, log: Option<&Log>) -> Found {
    let mut found = Found::default();
    let mut skipped = Skipped::default();
    let mut left = bounds.bytes as u64;
    let mut read = 0;
    for month in months(dir, bounds) {
        if read == bounds.notes {
            break;
        }
        let entries = month_entries(dir, &month, bounds.names);
        found.months.push(month);
        for entry in entries.into_iter().take(bounds.notes - read) {
            read += 1;
            let most = left.min(MAX_FILE_BYTES);
            match parsed(dir, &entry, most) {
                Ok((note, bytes)) => {
                    left = left.saturating_sub(bytes as u64);
                    found.notes.push((entry.path(), note));
                }
                // Not one to skip: the bytes left are too few for it.
                Err(Unread::Larger(_)) if most < MAX_FILE_BYTES => {
                    skipped.say(dir, log);
                    return found;
                }
                Err(why) => skipped.add(&entry, &why),
            }
        }
    }
    skipped.say(dir, log);
    found
}

/// The note in the file at `path` of the folder `dir` (as [`Found`] names it), from the first
/// `most` bytes of the file (its text cut there, at a character's bound), if it is one to read:
/// at most [`MAX_FILE_BYTES`], and what is read of it UTF-8 text without NUL and a note; else
/// why not.
pub fn front(dir: &Path, path: &str, most: u64) -> Result<Note, String> {
    let (month, name) = path
        .split_once('/')
        .ok_or("it is not in a month's folder")?;
    let (kind, id) = format::parse_name(name).ok_or("its name is not a note's")?;
    if !format::is_month(month) {
        return Err("it is not in a month's folder".into());
    }
    let file = fsutil::open_ours(&dir.join(path), Access::Read).map_err(|e| e.to_string())?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(Unread::Larger(MAX_FILE_BYTES).to_string());
    }
    let mut bytes = Vec::new();
    file.take(most)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.contains(&0) {
        return Err("it is binary".into());
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        // Cut within a character: the text up to it.
        Err(err) if err.error_len().is_none() => {
            std::str::from_utf8(&bytes[..err.valid_up_to()]).map_err(|_| "it is not UTF-8 text")?
        }
        Err(_) => return Err("it is not UTF-8 text".into()),
    };
    format::parse(text, kind, id).map_err(String::from)
}

/// The notes a search looks through ([`all`]) whose id, or the last group of it that short ids
/// show, starts with `prefix`.
pub fn find(project: &Path, prefix: &str, log: &Log) -> Vec<Note> {
    let prefix = prefix.to_ascii_lowercase();
    all(project, log)
        .iter()
        .filter(|n| {
            let id = n.id.to_ascii_lowercase();
            let tail = id.rsplit('-').next().unwrap_or(&id);
            id.starts_with(&prefix) || (id.len() == 36 && tail.starts_with(&prefix))
        })
        .cloned()
        .collect()
}

/// The order of the newest first, by what the names say but bounded by the user's own clock:
/// a name is the file's author's to choose, and one that would sort before every honest name
/// (`undated` after the digits, `zzzz…` after every UUID, a year to come) sorts after them.
mod order {
    use std::time::{SystemTime, UNIX_EPOCH};

    /// This month, `2026-11`, by the user's clock.
    pub fn this_month() -> String {
        chrono::Utc::now().format("%Y-%m").to_string()
    }

    /// Now, in milliseconds since 1970.
    pub fn now_ms() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// A month folder's place, the larger the newer: its name when it is a month no later than
    /// `this` one; `None` (after all) for `undated` and a month to come.
    pub fn month<'a>(name: &'a str, this: &str) -> Option<&'a str> {
        (name != super::format::UNDATED && name <= this).then_some(name)
    }

    /// When an id says its note was made (a UUID v7's first 48 bits: milliseconds since 1970),
    /// when it is one and that is no later than `now`; `None` (after all) otherwise.
    pub fn made(id: &str, now: u64) -> Option<u64> {
        let b = id.as_bytes();
        if b.len() != 36 || b[8] != b'-' || b[13] != b'-' || b[14] != b'7' {
            return None;
        }
        let high = u64::from_str_radix(id.get(..8)?, 16).ok()?;
        let low = u64::from_str_radix(id.get(9..13)?, 16).ok()?;
        Some((high << 16) | low).filter(|&ms| ms <= now)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn no_name_sorts_before_what_the_users_clock_allows() {
            let this = "2026-11";
            assert_eq!(month("2026-11", this), Some("2026-11"));
            assert!(month("2026-10", this) > month("undated", this));
            assert_eq!(month("2027-01", this), None);
            let now = 0x0195_f3a2_7c4b;
            assert_eq!(made("0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44", now), Some(now));
            for id in [
                "zzzzzzzz-zzzz-7zzz-zzzz-zzzzzzzzzzzz",
                "0195f3a2-7c4c-7d3e-8f12-3ebc8321ae44",
                "0195f3a2-7c4b-4d3e-8f12-3ebc8321ae44",
                "ffff",
            ] {
                assert_eq!(made(id, now), None, "{id}");
            }
        }
    }
}
