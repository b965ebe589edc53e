//! Per-prompt recall: the few items of a project's earlier sessions that a prompt is about,
//! or nothing when none clears the relevance bar.
//!
//! `hook prompt` runs this on every prompt, so it reads the index as it finds it and never
//! waits: no index, one another process is locking, one that follows another database or has
//! not seen the newest deletions (it may still hold what was forgotten) all mean no answer. It
//! never builds or updates the index; the read commands and the maintenance process do.
//!
//! The query is the prompt's content words (stop words and the words of requests, "please",
//! "run", "again", left out), each looked up on its own with a bound on how many items it may
//! match: a word in more than [`COMMON`] items says little and would make the lookup cost
//! more than a hook may spend, so it is dropped, as a stop word of this memory. Each remaining word weighs its rarity (idf,
//! `ln(1 + items / items with it)`), and an item scores the weight of the prompt's words it
//! holds. The bar: an item must hold at least [`MIN_WORDS`] of them and at least [`COVERAGE`]
//! (0.4) of the weight of all the prompt's content words, a word the memory never saw counting as
//! the rarest. So "thanks" (no content word) and "run the tests again" (one) abstain, and so
//! does a prompt that shares only a common word or two with the project's history.
//!
//! The team's notes of the project (its `.claude-mem/` files) are weighed as if the index held
//! them, through their digest (see `team_recall.rs`): a word's items are the index's and the
//! notes' that hold it, and the items of the memory the index's and the notes'. Without an
//! index ready, the notes are weighed among themselves.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Result;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::common::{Memo, Of};
use super::schema::{
    APPLICATION_ID, FORMAT, ITEM_COLUMNS, Item, item, key_of, project_number, project_range, varint,
};
use super::snippet::{self, snippet};
use super::team_recall::Side;
pub use super::team_recall::Team;
use super::{doclists, tokenizer};
use crate::config::Config;
use crate::recorded::Whose;
use crate::store::rows::Kind;

/// A word matching more items than this is left out of the query.
pub const COMMON: usize = 500;
/// Content words looked up per prompt at most: the longest ones, which say the most.
const MAX_WORDS: usize = 8;
/// Characters of a prompt read for its words: a pasted log says what it is about early.
const READ_CHARS: usize = 4000;
/// The bar (see the module's doc). On the relevance bench (LoCoMo questions with a gold item
/// in the injection, and unrelated prompts abstained on), at 2 words: coverage 0.3 gave 59%
/// and 96%, 0.35 58% and 99%, 0.4 55% and 99%, 0.45 52% and 99%, 0.5 47% and 99.5%; at 3
/// words and 0.4, 45% and 99.5%. On the coding set 0.4 abstained on 95% of unrelated prompts,
/// 0.3 on 90%. (Measured with [`COMMON`] at 1,000 and 12 words; at 500 and 8, 0.4 gave 54% and
/// 99%.)
pub const MIN_WORDS: usize = 2;
pub const COVERAGE: f64 = 0.4;
/// Words of a tool's answer said to have matched, at most.
const MATCHED_WORDS: usize = 6;
/// Items of the project looked at, best first, for the ones that may be shown.
const LOOKED_AT: usize = 200;

/// Function words, and the words prompts ask with rather than about.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "check",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "else",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "give",
    "go",
    "going",
    "good",
    "got",
    "great",
    "had",
    "has",
    "have",
    "having",
    "he",
    "hello",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "hi",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "know",
    "let",
    "lets",
    "like",
    "look",
    "make",
    "many",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "need",
    "nice",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "ok",
    "okay",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "re",
    "rerun",
    "retry",
    "run",
    "same",
    "see",
    "she",
    "should",
    "show",
    "so",
    "some",
    "something",
    "still",
    "such",
    "sure",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "thx",
    "to",
    "too",
    "try",
    "under",
    "until",
    "up",
    "us",
    "use",
    "very",
    "want",
    "was",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yeah",
    "yes",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// What to recall for.
pub struct Ask<'a> {
    /// The prompt as stored (private parts out, secrets redacted).
    pub prompt: &'a str,
    pub project: &'a str,
    /// The session asking: none of its own items come back.
    pub session: &'a str,
    /// Whether an item may be shown (not one the session was already given).
    pub keep: &'a dyn Fn(&Item) -> bool,
    pub limit: usize,
    /// The team's notes of the project, when it has a `.claude-mem/` folder and a digest of
    /// it: weighed as if the index held them (but this database's own).
    pub team: Option<Team<'a>>,
}

/// An item recalled, with the words around the first match.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    pub item: Item,
    /// Of a tool call, the words around a match in its input only (Claude's); empty when only
    /// its answer matched.
    pub snippet: String,
    /// Of a tool call, the words of its answer (third-party text) that matched, and none of
    /// the text around them.
    pub matched: Vec<String>,
    /// A teammate's note, not an item of ours.
    pub team: bool,
    /// The share of the prompt's weight (its content words' rarity) the item holds: what was
    /// held to the bar, [`COVERAGE`].
    pub score: f64,
}

impl Recalled {
    /// Whose words the item's text is: a teammate's note is a third party's, whatever its kind.
    pub fn whose(&self) -> Whose {
        match self.team {
            true => Whose::ThirdParty,
            false => self.item.kind.whose(),
        }
    }
}

/// The items of `ask.project`'s other sessions, and its team's notes, that clear the bar, best
/// first; none of ours when the index is not there or not ready. `main` is the database, to
/// tell whether the index is.
pub fn recall(config: &Config, main: &Connection, ask: &Ask) -> Result<Vec<Recalled>> {
    let mut found = recall_each(config, main, std::slice::from_ref(ask))?;
    Ok(found.pop().unwrap_or_default())
}

/// What [`recall`] answers for each of `asks`, in order, the index opened once for all.
pub fn recall_each(config: &Config, main: &Connection, asks: &[Ask]) -> Result<Vec<Vec<Recalled>>> {
    match look_each(config, main, asks) {
        // Another process holds the index (a catch-up, a rebuild): no answer this time.
        Err(err) if busy(&err) => Ok(vec![Vec::new(); asks.len()]),
        found => found,
    }
}

fn busy(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}

/// Each ask's answer; the index is not opened when no ask has words enough to look up. Without
/// an index ready, the team's notes are weighed among themselves.
fn look_each(config: &Config, main: &Connection, asks: &[Ask]) -> Result<Vec<Vec<Recalled>>> {
    let words: Vec<Vec<String>> = asks.iter().map(|a| content_words(a.prompt)).collect();
    let nothing = || vec![Vec::new(); asks.len()];
    if words.iter().all(|w| w.len() < MIN_WORDS) {
        return Ok(nothing());
    }
    let index = match open_ready(config, main) {
        Err(err) if busy(&err) => None,
        index => index?,
    };
    if index.is_none() && asks.iter().all(|a| a.team.is_none()) {
        return Ok(nothing());
    }
    let mut memo = match &index {
        Some((_, of)) => Memo::read(config, of),
        None => Memo::default(),
    };
    let opened = index.as_ref().map(|(conn, of)| (conn, of.items));
    let found = asks
        .iter()
        .zip(&words)
        .map(|(ask, words)| match words.len() < MIN_WORDS {
            true => Ok(Vec::new()),
            false => look(main, opened, &mut memo, ask, words),
        })
        .collect();
    if let Some((_, of)) = &index {
        memo.keep(config, of);
    }
    found
}

/// The rows of the index that hold each of `words` (see `doclists::read`), `None` for a word in
/// more than [`COMMON`] items: one `memo` knows is, without walking its rows; one found so now
/// is learned.
fn rows_of(index: &Connection, words: &[String], memo: &mut Memo) -> Result<Vec<Option<Vec<i64>>>> {
    let asked: Vec<String> = words.iter().filter(|w| !memo.has(w)).cloned().collect();
    let mut found = doclists::read(index, &asked, COMMON)?.into_iter();
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        if memo.has(word) {
            out.push(None);
            continue;
        }
        let rows = found
            .next()
            .ok_or_else(|| anyhow::anyhow!("the search index's lookup missed {word:?}"))?;
        if rows.is_none() {
            memo.learn(word);
        }
        out.push(rows);
    }
    Ok(out)
}

/// A content word of the prompt that some item or note holds.
struct Word {
    /// Its place among the prompt's content words.
    at: usize,
    /// As queried.
    query: String,
    weight: f64,
    /// The index's items that hold it, and the team's notes (by place in their digest).
    items: Vec<i64>,
    notes: Vec<i64>,
}

/// The items of the index (with how many it holds) and the team's notes that clear the bar
/// for `ask`, best first; its content words are `words`. A note counts as an item of the
/// index: in how many hold a word, and in how many there are.
fn look(
    main: &Connection,
    index: Option<(&Connection, u64)>,
    memo: &mut Memo,
    ask: &Ask,
    words: &[String],
) -> Result<Vec<Recalled>> {
    let none = || vec![Some(Vec::new()); words.len()];
    let items = match index {
        Some((index, _)) => rows_of(index, words, memo)?,
        None => none(),
    };
    let team = match &ask.team {
        Some(team) => Some(Side::new(index.map(|(i, _)| i), team, words)?),
        None => None,
    };
    let held = team.as_ref().map_or_else(none, Side::lists);
    let all = index.map_or(0, |(_, n)| n) + team.as_ref().map_or(0, |t| t.count);
    let (found, whole) = weigh(words, items, held, all);
    let bar = COVERAGE * whole;
    let mut out = match index {
        Some((index, _)) => {
            // Only the project's documents: one range of ids (see `schema::PROJECT_SHIFT`).
            let (first, last) = project_ids(index, ask.project)?;
            let mine = |row: i64| (first..=last).contains(&row);
            let passing = passing(&found, |w| &w.items, mine, |row| -key_of(row), bar);
            ours(index, ask, &found, passing)?
        }
        None => Vec::new(),
    };
    if let Some(team) = &team {
        let passing = passing(&found, |w| &w.notes, |_| true, |n| n, bar);
        let places: Vec<usize> = found.iter().map(|w| w.at).collect();
        let handed = team.hand(main, (ask.project, ask.limit), ask.keep, &places, passing)?;
        for (score, item, snippet) in handed {
            let matched = Vec::new();
            let recalled = Recalled {
                item,
                snippet,
                matched,
                team: true,
                score,
            };
            out.push((score, recalled));
        }
    }
    // Best first; among equals ours first, each list in its own order (a stable sort).
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.truncate(ask.limit);
    let share = |score: f64| match whole > 0.0 {
        true => score / whole,
        false => 0.0,
    };
    Ok(out
        .into_iter()
        .map(|(score, recalled)| Recalled {
            score: share(score),
            ..recalled
        })
        .collect())
}

/// Of the prompt's content `words`, those some item (`items`) or note (`held`) holds, each
/// weighed by how rare it is among `all` items and notes, and the weight of them all. A word
/// too common to look up (`None`), or held by more than [`COMMON`], is as good as a stop word
/// here: out of the query and of the weight.
fn weigh(
    words: &[String],
    items: Vec<Option<Vec<i64>>>,
    held: Vec<Option<Vec<i64>>>,
    all: u64,
) -> (Vec<Word>, f64) {
    let weight = |found: usize| (1.0 + all as f64 / found.max(1) as f64).ln();
    let mut found: Vec<Word> = Vec::new();
    let mut whole = 0.0;
    for (at, ((word, items), notes)) in words.iter().zip(items).zip(held).enumerate() {
        let (Some(items), Some(notes)) = (items, notes) else {
            continue;
        };
        let holding = items.len() + notes.len();
        if holding > COMMON {
            continue;
        }
        whole += weight(holding);
        if holding > 0 {
            let query = format!("\"{word}\"");
            found.push(Word {
                at,
                query,
                weight: weight(holding),
                items,
                notes,
            });
        }
    }
    (found, whole)
}

/// The rows (of the index, or of the notes) that clear `bar` by the words `found` of them, of
/// those `mine` keeps, with their scores, best first; among equals the newest, the row whose
/// `age` is the least (the index's larger document keys are later rows; the notes are numbered
/// newest first).
fn passing(
    found: &[Word],
    rows: impl Fn(&Word) -> &Vec<i64>,
    mine: impl Fn(i64) -> bool,
    age: impl Fn(i64) -> i64,
    bar: f64,
) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    for word in found {
        for &row in rows(word).iter().filter(|row| mine(**row)) {
            let score = scores.entry(row).or_default();
            score.0 += word.weight;
            score.1 += 1;
        }
    }
    let mut passing: Vec<(i64, f64)> = scores
        .into_iter()
        .filter(|(_, (score, words))| *words >= MIN_WORDS && *score >= bar)
        .map(|(row, (score, _))| (row, score))
        .collect();
    passing.sort_by(|a, b| b.1.total_cmp(&a.1).then(age(a.0).cmp(&age(b.0))));
    passing.truncate(LOOKED_AT);
    passing
}

/// The first and last document ids of the project at `dir` in `index`; none when it has no
/// document there.
fn project_ids(index: &Connection, dir: &str) -> Result<(i64, i64)> {
    Ok(project_number(index, dir)?.map_or((1, 0), project_range))
}

/// The items of `passing` (rows of the index, with their scores) that `ask` may be given, up to
/// its limit, each with its score: of its project, not of its session, kept by its filter.
fn ours(
    index: &Connection,
    ask: &Ask,
    found: &[Word],
    passing: Vec<(i64, f64)>,
) -> Result<Vec<(f64, Recalled)>> {
    if passing.is_empty() {
        return Ok(Vec::new());
    }
    let query: Vec<&str> = found.iter().map(|w| w.query.as_str()).collect();
    let query = query.join(" OR ");
    let mut doc = index.prepare(&format!(
        "SELECT {ITEM_COLUMNS} FROM docs d
          WHERE d.id = ?1 AND d.project_dir = ?2 AND d.session_id <> ?3 AND d.kind <> 'session'"
    ))?;
    let mut out = Vec::new();
    for (row, score) in passing {
        let Some(item) = doc
            .query_row(params![row, ask.project, ask.session], item)
            .optional()?
        else {
            continue;
        };
        if !(ask.keep)(&item) {
            continue;
        }
        let (snippet, matched) = marked(index, &query, row, item.kind)?;
        out.push((
            score,
            Recalled {
                item,
                snippet,
                matched,
                team: false,
                score,
            },
        ));
        if out.len() >= ask.limit {
            break;
        }
    }
    Ok(out)
}

/// The words around the first match of `query` in document `row` of `index`, an item of
/// `kind`, and the words that matched where they are a third party's (a tool's answer): those
/// are never quoted, so the snippet is then of the input alone.
fn marked(index: &Connection, query: &str, row: i64, kind: Kind) -> Result<(String, Vec<String>)> {
    let mut marked = index.prepare_cached(
        "SELECT highlight(fts, 0, char(2), char(3)), highlight(fts, 1, char(2), char(3))
           FROM fts WHERE fts MATCH ?1 AND rowid = ?2",
    )?;
    let columns: [String; 2] = marked.query_row(params![query, row], |r| {
        Ok([
            r.get::<_, Option<String>>(0)?.unwrap_or_default(),
            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        ])
    })?;
    if kind.whose() != Whose::ThirdParty {
        return Ok((snippet(&columns).0, Vec::new()));
    }
    let [input, answer] = &columns;
    let (around, matches) = snippet(std::slice::from_ref(input));
    let around = if matches.is_empty() {
        String::new()
    } else {
        around
    };
    Ok((around, snippet::matched(answer, MATCHED_WORDS)))
}

/// The prompt's content words, lower case, each once: the [`MAX_WORDS`] longest.
pub fn content_words(prompt: &str) -> Vec<String> {
    let head: String = prompt.chars().take(READ_CHARS).collect();
    let mut words: Vec<String> = Vec::new();
    for word in head.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() < 2
            || word.chars().all(|c| c.is_ascii_digit())
            || STOP_WORDS.binary_search(&word.as_str()).is_ok()
            || words.contains(&word)
        {
            continue;
        }
        words.push(word);
    }
    // Stable: among words of a length, the first written stay.
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.truncate(MAX_WORDS);
    words
}

/// The index, read-only, with how many documents it holds, when it is there, not locked,
/// ours in this layout, following this database and aware of every deletion in it; `None`
/// otherwise. Never waits, never writes. One statement on each file: preparing statements is
/// most of what a hook's SQL costs.
fn open_ready(config: &Config, main: &Connection) -> Result<Option<(Connection, Of)>> {
    let path = config.index_path();
    if !path.exists() {
        return Ok(None);
    }
    crate::store::base::files::check_file(&path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let index = Connection::open_with_flags(&path, flags)?;
    index.busy_timeout(Duration::ZERO)?;
    // Each word looked up seeks each segment of the index with one of FTS5's own statements
    // (`term <= ?`), which SQLite otherwise prepares again whenever a new term is bound, so
    // that its planner may weigh the value: that was a sixth of what recall cost.
    index.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    tokenizer::register(&index)?;
    doclists::register(&index)?;
    // One read transaction for everything recall reads, ended when the connection closes: one
    // snapshot of the index, and its locks taken once rather than around every statement.
    index.execute_batch("BEGIN")?;
    // The number of documents is the first of FTS5's averages record (row 1 of `fts_data`),
    // read instead of counting them.
    let (layout, built_for, seen, averages): (bool, Option<String>, Option<i64>, Option<Vec<u8>>) =
        index.query_row(
            "SELECT (SELECT user_version FROM pragma_user_version) = ?1
                    AND (SELECT application_id FROM pragma_application_id) = ?2,
                    (SELECT value FROM meta WHERE key = 'store_id'),
                    (SELECT value FROM meta WHERE key = 'mark:tombstones'),
                    (SELECT block FROM fts_data WHERE id = 1)",
            params![FORMAT, APPLICATION_ID],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
    let (store_id, newest): (Option<String>, i64) = main.query_row(
        "SELECT (SELECT value FROM meta WHERE key = 'store_id'),
                (SELECT coalesce(max(seq), 0) FROM tombstones)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let ready = layout && built_for.is_some() && built_for == store_id && seen >= Some(newest);
    Ok(
        match (
            averages.as_deref().and_then(varint).map(|(items, _)| items),
            built_for,
            seen,
        ) {
            (Some(items), Some(store_id), Some(seen)) if ready => Some((
                index,
                Of {
                    store_id,
                    seen,
                    items,
                },
            )),
            _ => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn content_words_leave_out_what_a_prompt_asks_with() {
        assert!(content_words("thanks, that's all for today").len() < MIN_WORDS);
        assert!(content_words("run the tests again").len() < MIN_WORDS);
        assert_eq!(
            content_words("How did we fix the login timeout?"),
            vec!["timeout", "login", "fix"]
        );
        assert_eq!(content_words("Login LOGIN login 42"), vec!["login"]);
    }
}
