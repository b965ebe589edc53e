//! The words per-prompt recall found in more than [`COMMON`] items of the index, remembered
//! beside it, so that the next prompt (or session start) that holds one does not walk its rows
//! again to learn so.
//!
//! Recall looks each of a prompt's words up to [`COMMON`] rows and one more; a word past that
//! says too little to count. Prompts are full of such words ("session", "test", "error"), and
//! walking their 501 rows was most of recall's lookup: about a sixth of a prompt hook's
//! instructions on the bench's database, a fifth of a session start's open threads. Once
//! common, a word stays so while rows are only added to the index, so what one run learns
//! holds for every later run until the index takes in a deletion: the memo names the index
//! (the database it follows), the last deletion it took in and how many items it held, and is
//! thrown away when any of those no longer fits.
//!
//! The memo holds the words' hashes (FNV-1a, 64 bits), never their text, in a file of ours
//! (`memory-index.common`, mode 0600, replaced whole); one that is not ours, not of this
//! index or not readable is ignored. A hash that matches by chance (one in 2^64) would leave a
//! word out, as a common one is left out.
//!
//! [`COMMON`]: super::recall::COMMON

use std::io::Read;
use std::path::Path;

use crate::config::Config;
use crate::fsutil::{self, Access, Durability};

const NAME: &str = "memory-index.common";
/// The first word of the file: its format.
const FORMAT: &str = "common-words-1";
/// More than this is not a memo of ours (a few thousand words at most).
const MOST_BYTES: u64 = 256 * 1024;

/// Which index a memo is of: the database it follows, the last deletion it took in, and how
/// many items it held (it may hold more, never fewer, without a deletion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Of {
    pub store_id: String,
    pub seen: i64,
    pub items: u64,
}

/// The common words of one index, as hashes, and whether this run learned new ones.
#[derive(Debug, Default)]
pub struct Memo {
    hashes: Vec<u64>,
    learned: bool,
}

impl Memo {
    /// The memo kept beside `config`'s index for the index `of`; empty when there is none of it.
    pub fn read(config: &Config, of: &Of) -> Memo {
        let path = config.data_dir.join(NAME);
        let Ok(file) = fsutil::open_ours(&path, Access::Read) else {
            return Memo::default();
        };
        let mut text = String::new();
        if file.take(MOST_BYTES).read_to_string(&mut text).is_err() {
            return Memo::default();
        }
        match parse(&text, of) {
            Some(hashes) => Memo {
                hashes,
                learned: false,
            },
            None => {
                // Of another index, or of this one before a deletion: it says nothing now.
                let _ = std::fs::remove_file(&path);
                Memo::default()
            }
        }
    }

    /// Whether `word` (as looked up) is known to be in more than `COMMON` items.
    pub fn has(&self, word: &str) -> bool {
        self.hashes.binary_search(&hash(word)).is_ok()
    }

    /// Remembers that `word` is in more than `COMMON` items.
    pub fn learn(&mut self, word: &str) {
        let h = hash(word);
        if let Err(at) = self.hashes.binary_search(&h) {
            self.hashes.insert(at, h);
            self.learned = true;
        }
    }

    /// Keeps the memo beside `config`'s index, for the index `of`, when this run learned a
    /// word; best effort (a memo not kept is learned again).
    pub fn keep(&self, config: &Config, of: &Of) {
        if !self.learned {
            return;
        }
        let mut text = format!("{FORMAT} {} {} {}\n", of.seen, of.items, of.store_id);
        for h in &self.hashes {
            text.push_str(&format!("{h:016x}\n"));
        }
        let _ = write(&config.data_dir, text.as_bytes());
    }
}

fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    fsutil::is_our_dir(dir)?;
    fsutil::write_atomic(dir, NAME, bytes, Durability::Kill)
}

/// The hashes of a memo of the index `of`, sorted; `None` when it is not one.
fn parse(text: &str, of: &Of) -> Option<Vec<u64>> {
    let (head, rest) = text.split_once('\n')?;
    let mut fields = head.splitn(4, ' ');
    let (format, seen, items, store_id) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    let fits = format == FORMAT
        && seen.parse::<i64>().ok()? == of.seen
        && items.parse::<u64>().ok()? <= of.items
        && store_id == of.store_id;
    if !fits {
        return None;
    }
    let mut hashes: Vec<u64> = rest
        .lines()
        .map(|line| u64::from_str_radix(line, 16).ok())
        .collect::<Option<_>>()?;
    hashes.sort_unstable();
    Some(hashes)
}

/// FNV-1a, 64 bits: the same in every build, unlike std's hasher.
fn hash(word: &str) -> u64 {
    crate::config::fnv1a(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(seen: i64, items: u64) -> Of {
        Of {
            store_id: "store-1".into(),
            seen,
            items,
        }
    }

    #[test]
    fn a_memo_holds_for_its_index_while_it_only_grows() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        std::fs::create_dir_all(&config.data_dir).unwrap();
        let mut memo = Memo::read(&config, &of(3, 1000));
        assert!(!memo.has("session"));
        memo.learn("session");
        memo.learn("error");
        memo.keep(&config, &of(3, 1000));
        let text = std::fs::read_to_string(config.data_dir.join(NAME)).unwrap();
        assert!(
            !text.contains("session") && !text.contains("error"),
            "{text}"
        );
        let later = Memo::read(&config, &of(3, 1200));
        assert!(later.has("session") && later.has("error") && !later.has("login"));
        assert!(
            !Memo::read(&config, &of(3, 999)).has("session"),
            "fewer items"
        );
        assert!(
            !config.data_dir.join(NAME).exists(),
            "a memo that no longer fits is thrown away"
        );
    }

    #[test]
    fn a_memo_of_another_index_or_after_a_deletion_says_nothing() {
        let text = format!("{FORMAT} 3 1000 store-1\n00000000000000ff\n");
        assert_eq!(parse(&text, &of(3, 1000)), Some(vec![255]));
        assert_eq!(parse(&text, &of(4, 1000)), None);
        let other = Of {
            store_id: "store-2".into(),
            ..of(3, 1000)
        };
        assert_eq!(parse(&text, &other), None);
        assert_eq!(
            parse("common-words-1 3 1000 store-1\nzz\n", &of(3, 1000)),
            None
        );
    }
}
