//! What per-prompt recall and the session start know of a project's team notes without reading
//! them: for the newest files of its `.claude-mem/` (within [`BOUNDS`]), each one's path in the
//! folder, a hash of its text, when this machine first saw it, and the terms each holds as the
//! search index's tokenizer makes them, hashed: never the words.
//!
//! The notes are kept in the order they are shown in, newest first by what a file's author
//! cannot choose: when this machine first saw that text (kept from one digest to the next; a
//! text not seen before was first seen when its file was written here, its modification time,
//! which git sets at checkout, capped at now), and among notes seen at once (within a minute:
//! [`sort`]) by a hash of their text keyed with a secret of this machine ([`key`]), never by a
//! name, an id or a time the file says.
//!
//! Reading a folder of notes and tokenizing them costs some 25 times the whole prompt hook
//! (105 million instructions for 200 notes of 1.7 KB, against 4 million for the prompt hook
//! with recall; see docs/performance.md), so the digest is made by a process of its own (`claude-mem
//! maintain --team DIR`, which a hook starts detached when it finds the digest missing or
//! stale) and read as it is found, as per-prompt recall reads the search index: one file in
//! `team/` of the data dir per project, named by a hash of its path, written whole by a rename.
//!
//! It is stale when the folder, or a month folder it listed, was changed since it was made
//! (their modification times: adding, removing or renaming a file changes its folder's, as
//! git's checkout does), or was changed so shortly before that the change may have been missed
//! ([`RACY_SECS`]). A stale digest is still read: the files it names are read again, as
//! untrusted, before anything of them is handed, so a change is at worst not found until the
//! next digest is made (a file edited in place, which changes no folder, until then).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::read::Bounds;
use crate::config::{Config, fnv1a};
use crate::fsutil::{self, Access, Durability};

/// What of the folder a digest covers: the newest notes, in the newest five years of months.
pub const BOUNDS: Bounds = Bounds {
    names: super::read::MAX_ENTRIES,
    months: 60,
    notes: 500,
    bytes: 2 * 1024 * 1024,
};
/// The most (term, note) pairs a digest holds: a note whose terms would pass this is left
/// out, with those after it. Ten bytes each: a file of at most a megabyte or so, read whole by
/// every prompt that has words to look up.
pub const MAX_PAIRS: usize = 100_000;
/// A folder changed less than this before the digest was begun (in whole seconds: 2 to 3 s)
/// may have changed again during its listing, within one tick of the file system's clock: the
/// digest is then made again.
const RACY_SECS: i64 = 2;
/// Notes first seen within one such span (milliseconds) were seen at once (see [`sort`]).
const SEEN_AT_ONCE_MS: i64 = 60_000;
const MAGIC: &[u8; 4] = b"cmtd";
const VERSION: u32 = 2;
/// Larger files are not ours: a digest within [`MAX_PAIRS`] and the bounds is smaller.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The front of a digest, read for its stamps: those of 60 months fit in 2 KB.
const HEAD_BYTES: u64 = 4096;
/// The front of a digest read for its order: the stamps and the paths of 500 notes.
const ORDER_BYTES: u64 = 64 * 1024;

/// A folder as the digest saw it: its name in `.claude-mem/` (empty for the folder itself) and
/// when it was last changed (seconds and nanoseconds since 1970).
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    name: String,
    changed: (i64, u32),
}

/// A note as the digest is made of it: its file's path in the folder (`2026-11/memory-<id>.md`),
/// a hash of its text, and when this machine first saw that text (milliseconds since 1970).
#[derive(Debug, Clone, PartialEq)]
pub struct Noted {
    pub path: String,
    pub text: u64,
    pub seen: i64,
}

/// A project's digest, as read from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    /// When its making began (seconds since 1970).
    began: i64,
    stamps: Vec<Stamp>,
    /// The file, kept whole: the notes' paths and the pairs are read from it where they are.
    bytes: Vec<u8>,
    /// Of each note, where its path is in `bytes`, its text's hash and when it was first seen.
    notes: Vec<(usize, usize, u64, i64)>,
    /// Where the (term hash, note) pairs begin in `bytes`: sorted, ten bytes each.
    pairs_at: usize,
}

/// What a term is kept as.
pub fn hash(term: &str) -> u64 {
    fnv1a(term.as_bytes())
}

/// Now, in seconds since 1970.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The stamps of the folder `dir` and of its month folders `months`; `None` when one is not a
/// real folder any more.
pub fn stamps(dir: &Path, months: &[String]) -> Option<Vec<Stamp>> {
    std::iter::once("")
        .chain(months.iter().map(String::as_str))
        .map(|name| {
            let meta = std::fs::symlink_metadata(dir.join(name)).ok()?;
            let changed = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
            meta.is_dir().then(|| Stamp {
                name: name.to_string(),
                changed: (changed.as_secs() as i64, changed.subsec_nanos()),
            })
        })
        .collect()
}

/// The file of a digest begun at `began` of the folder as `stamps` say it was, of `notes` each
/// with its terms, within [`MAX_PAIRS`] (the notes past it left out), and how many it holds.
pub fn encode(began: i64, stamps: &[Stamp], notes: Vec<(Noted, Vec<String>)>) -> (Vec<u8>, usize) {
    let mut pairs: Vec<(u64, u16)> = Vec::new();
    let mut kept = Vec::new();
    for (n, (note, terms)) in notes.into_iter().enumerate() {
        let Ok(n) = u16::try_from(n) else { break };
        if pairs.len() + terms.len() > MAX_PAIRS {
            break;
        }
        pairs.extend(terms.iter().map(|t| (hash(t), n)));
        kept.push(note);
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = Vec::with_capacity(10 * pairs.len() + 64 * kept.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&began.to_le_bytes());
    put_len(&mut out, stamps.len());
    for stamp in stamps {
        put_str(&mut out, &stamp.name);
        out.extend_from_slice(&stamp.changed.0.to_le_bytes());
        out.extend_from_slice(&stamp.changed.1.to_le_bytes());
    }
    put_len(&mut out, kept.len());
    for note in &kept {
        put_str(&mut out, &note.path);
        out.extend_from_slice(&note.text.to_le_bytes());
        out.extend_from_slice(&note.seen.to_le_bytes());
    }
    put_len(&mut out, pairs.len());
    for (hash, note) in pairs {
        out.extend_from_slice(&hash.to_le_bytes());
        out.extend_from_slice(&note.to_le_bytes());
    }
    (out, kept.len())
}

impl Digest {
    /// How many notes it holds.
    pub fn count(&self) -> usize {
        self.notes.len()
    }

    /// The path in the folder of its note `n`.
    pub fn path(&self, n: usize) -> Option<&str> {
        let &(at, len, ..) = self.notes.get(n)?;
        std::str::from_utf8(self.bytes.get(at..at + len)?).ok()
    }

    /// When this machine first saw each text it holds, by the text's hash.
    pub fn seen(&self) -> std::collections::HashMap<u64, i64> {
        self.notes
            .iter()
            .map(|&(_, _, text, seen)| (text, seen))
            .collect()
    }

    /// Whether the folder `dir` is as the digest saw it, and was then long enough.
    pub fn fresh(&self, dir: &Path) -> bool {
        fresh(self.began, &self.stamps, dir)
    }

    /// The notes (by place, as [`Digest::path`] takes them) that hold `term`, in order of place.
    pub fn holding(&self, term: &str) -> Vec<usize> {
        let h = hash(term);
        let pairs = &self.bytes[self.pairs_at..];
        let count = pairs.len() / 10;
        let key = |i: usize| {
            let at = i * 10;
            let hash = u64::from_le_bytes(pairs[at..at + 8].try_into().unwrap_or_default());
            let note = u16::from_le_bytes(pairs[at + 8..at + 10].try_into().unwrap_or_default());
            (hash, usize::from(note))
        };
        // The first pair of the term: a binary search over the sorted pairs.
        let (mut low, mut high) = (0, count);
        while low < high {
            let mid = (low + high) / 2;
            if key(mid).0 < h {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        (low..count)
            .map(key)
            .take_while(|(hash, _)| *hash == h)
            .map(|(_, note)| note)
            .filter(|&n| n < self.notes.len())
            .collect()
    }

    fn decode(bytes: Vec<u8>) -> Option<Digest> {
        let mut r = Reader(&bytes);
        let (began, stamps) = head(&mut r)?;
        let mut notes = Vec::new();
        for _ in 0..r.u32()? {
            let len = r.u32()? as usize;
            let at = bytes.len() - r.0.len();
            r.take(len)?;
            notes.push((at, len, r.u64()?, r.i64()?));
        }
        let count = r.u32()? as usize;
        let pairs_at = bytes.len() - r.0.len();
        (r.0.len() == count * 10 && !stamps.is_empty()).then_some(Digest {
            began,
            stamps,
            bytes,
            notes,
            pairs_at,
        })
    }
}

/// Whether the folder `dir` is as `stamps` say, and was so [`RACY_SECS`] before `began`.
fn fresh(began: i64, stamps: &[Stamp], dir: &Path) -> bool {
    let months: Vec<String> = stamps.iter().skip(1).map(|s| s.name.clone()).collect();
    self::stamps(dir, &months).is_some_and(|now| now == stamps)
        && stamps.iter().all(|s| s.changed.0 + RACY_SECS < began)
}

/// When a digest's making began and what it saw of the folders, read from its front.
fn head(r: &mut Reader) -> Option<(i64, Vec<Stamp>)> {
    if r.take(4)? != MAGIC || r.u32()? != VERSION {
        return None;
    }
    let began = r.i64()?;
    let stamps = (0..r.u32()?)
        .map(|_| {
            Some(Stamp {
                name: r.str()?,
                changed: (r.i64()?, r.u32()?),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((began, stamps))
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_len(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

/// The bytes of a digest, read from the front.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn str(&mut self) -> Option<String> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

/// The digest's file name for `project`.
pub(super) fn name(project: &str) -> String {
    format!("{:016x}", fnv1a(project.as_bytes()))
}

/// The lock that the one process making `project`'s digest holds.
pub fn lock_path(config: &Config, project: &str) -> PathBuf {
    config.team_dir().join(format!("{}.lock", name(project)))
}

/// `project`'s digest, when there is one to read (a file of ours, whole, of this format).
pub fn read(config: &Config, project: &str) -> Option<Digest> {
    let bytes = front(config, project, MAX_FILE_BYTES)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return None;
    }
    Digest::decode(bytes)
}

/// Whether `project`'s digest is missing or stale (see [`Digest::fresh`]) for its folder `dir`,
/// from the front of the file alone: what a session start asks, which does not look words up.
pub fn stale(config: &Config, project: &str, dir: &Path) -> bool {
    let Some(bytes) = front(config, project, HEAD_BYTES) else {
        return true;
    };
    head(&mut Reader(&bytes)).is_none_or(|(began, stamps)| !fresh(began, &stamps, dir))
}

/// The paths of the notes of `project`'s digest, in its order (newest first, see the module's
/// doc), from the front of the file: what a session start lists, without the terms.
pub fn order(config: &Config, project: &str) -> Option<Vec<String>> {
    let bytes = front(config, project, ORDER_BYTES)?;
    let mut r = Reader(&bytes);
    head(&mut r)?;
    let count = r.u32()?;
    let mut paths = Vec::new();
    for _ in 0..count {
        let Some(path) = r.str() else { break };
        if r.take(16).is_none() {
            break;
        }
        paths.push(path);
    }
    Some(paths)
}

/// `notes` in the digest's order: when first seen, the latest minute first; among those seen
/// within one minute, by their texts' hashes keyed with `key`. A clone or a pull writes its
/// files within moments, one after another in the order of their paths: ordered to the
/// millisecond, they would still come out in their names' order.
pub fn sort(notes: &mut [(Noted, Vec<String>)], key: &[u8; 16]) {
    notes.sort_by_key(|(note, _)| {
        (
            std::cmp::Reverse(note.seen.div_euclid(SEEN_AT_ONCE_MS)),
            keyed(key, note.text),
        )
    });
}

/// A text's hash keyed with this machine's secret: an order no file's author can foresee.
pub fn keyed(key: &[u8; 16], text: u64) -> u64 {
    let mut bytes = key.to_vec();
    bytes.extend_from_slice(&text.to_le_bytes());
    bytes.extend_from_slice(key);
    fnv1a(&bytes)
}

/// This machine's secret for [`sort`]: 16 random bytes in the data dir's `team/key` (mode
/// 0600), made the first time.
pub fn key(config: &Config) -> std::io::Result<[u8; 16]> {
    use std::io::{Read, Write};
    let path = config.team_dir().join("key");
    let mut key = [0u8; 16];
    match fsutil::create_private(&path) {
        Ok(mut file) => {
            getrandom::fill(&mut key).map_err(std::io::Error::other)?;
            file.write_all(&key)?;
            return Ok(key);
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    fsutil::open_ours(&path, Access::Read)?.read_exact(&mut key)?;
    Ok(key)
}

/// This machine's secret for [`sort`] when it was made (see [`key`]); nothing is written.
pub fn made_key(config: &Config) -> Option<[u8; 16]> {
    use std::io::Read;
    let mut key = [0u8; 16];
    let mut file = fsutil::open_ours(&config.team_dir().join("key"), Access::Read).ok()?;
    file.read_exact(&mut key).ok()?;
    Some(key)
}

/// Up to `most` bytes and one of the front of `project`'s digest file, when it is a file of ours.
fn front(config: &Config, project: &str, most: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = fsutil::open_ours(&config.team_dir().join(name(project)), Access::Read).ok()?;
    let mut bytes = Vec::new();
    file.take(most + 1).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Keeps `file` (see [`encode`]) as `project`'s digest, replacing the one before whole.
pub fn write(config: &Config, project: &str, file: &[u8]) -> std::io::Result<()> {
    let dir = config.team_dir();
    fsutil::our_dir(&dir)?;
    fsutil::write_atomic(&dir, &name(project), file, Durability::Kill)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noted(n: u32) -> Noted {
        Noted {
            path: format!("2026-11/memory-{n}.md"),
            text: n.into(),
            seen: i64::from(n) * 10,
        }
    }

    fn terms(words: &str) -> Vec<String> {
        words.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_digest_reads_back_and_finds_each_terms_notes() {
        let stamp = Stamp {
            name: String::new(),
            changed: (1_700_000_000, 5),
        };
        let notes = vec![
            (noted(0), terms("gunicorn port bind")),
            (noted(1), terms("port nginx")),
        ];
        let (file, kept) = encode(1_800_000_000, &[stamp], notes);
        assert_eq!(kept, 2);
        let back = Digest::decode(file.clone()).unwrap();
        assert_eq!(
            (back.count(), back.path(1)),
            (2, Some("2026-11/memory-1.md"))
        );
        assert_eq!(back.seen().get(&1), Some(&10));
        assert_eq!(back.holding("port"), [0, 1]);
        assert_eq!(back.holding("gunicorn"), [0]);
        assert!(back.holding("mysql").is_empty());
        assert!(Digest::decode(file[..20].to_vec()).is_none());
        assert!(Digest::decode(b"nope".to_vec()).is_none());
    }

    #[test]
    fn a_digest_keeps_the_notes_within_its_pairs() {
        let many: Vec<String> = (1..MAX_PAIRS).map(|n| format!("w{n}")).collect();
        let stamp = Stamp {
            name: String::new(),
            changed: (0, 0),
        };
        let (file, kept) = encode(
            0,
            &[stamp],
            vec![(noted(0), many), (noted(1), terms("a b"))],
        );
        assert_eq!(kept, 1);
        let digest = Digest::decode(file).unwrap();
        assert!(digest.holding("a").is_empty() && digest.holding("w7") == [0]);
    }

    #[test]
    fn a_digest_is_fresh_until_its_folders_change_and_not_when_made_racily() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir(dir.join("2026-11")).unwrap();
        let months = vec!["2026-11".to_string()];
        let seen = stamps(dir, &months).unwrap();
        let made = |began| Digest::decode(encode(began, &seen, Vec::new()).0).unwrap();
        assert!(!made(now()).fresh(dir), "made within a tick of a change");
        let digest = made(now() + 10);
        assert!(digest.fresh(dir));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.join("2026-11/memory-x.md"), "x").unwrap();
        assert!(!digest.fresh(dir));
    }
}
