//! What FTS5's `highlight()` marks in a text for a query, made without a table.
//!
//! `highlight()` needs its row found by a query of an FTS5 table. The page of a search was put in
//! a table of its own in memory to be highlighted there: a connection, a table of five shadow
//! tables, and each row indexed then read back, about a quarter of a whole `search` of a
//! six-word question (4 to 7 of 27 million instructions). Here the text is tokenized once, by
//! the index's own tokenizer and stemmer, each phrase of the query is found at every position
//! where the index would find it, and the marks are placed as `highlight()` places them (its
//! callback, `fts5HighlightCb` in SQLite 3.54, step for step): so they are the same, which a
//! test holds against `highlight()` itself.

use anyhow::Result;

use super::stems::Stemmer;
use super::stretches;

/// A phrase of a query as FTS5 reads it: its terms, in order, the last a prefix or not.
pub struct Phrase {
    terms: Vec<String>,
    prefix: bool,
}

/// The phrases of `texts` (each a phrase of the expression alone, as `Query::texts` holds
/// them: a quoted string, `""` for a quote, then `*` for a prefix), their words made terms by
/// `stemmer` as FTS5 makes them of a query. A phrase with no term matches nothing.
pub fn phrases(stemmer: &Stemmer, texts: &[String]) -> Result<Vec<Phrase>> {
    let mut phrases = Vec::with_capacity(texts.len());
    for text in texts {
        let prefix = text.ends_with('*');
        let quoted = text.trim_end_matches('*');
        let inner = quoted
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(quoted)
            .replace("\"\"", "\"");
        let mut terms = Vec::new();
        stemmer.each(&inner, true, &mut |term, _, _, _| {
            terms.push(term.to_string())
        })?;
        phrases.push(Phrase { terms, prefix });
    }
    Ok(phrases)
}

/// The terms of a text, by position: a position is a token and the tokens colocated with it.
struct Positions {
    /// Each position's byte range in the text (its first token's).
    places: Vec<(usize, usize)>,
    /// Where each position's terms begin in `ends` (they end where the next one's begin).
    first: Vec<usize>,
    /// Every term, run together (one string, not one a token: a page's columns hold
    /// thousands), and where each ends in it.
    terms: String,
    ends: Vec<usize>,
}

impl Positions {
    fn of(stemmer: &Stemmer, text: &str) -> Result<Positions> {
        let mut positions = Positions {
            places: Vec::new(),
            first: Vec::new(),
            terms: String::with_capacity(text.len()),
            ends: Vec::new(),
        };
        stemmer.each(text, false, &mut |term, start, end, colocated| {
            // A colocated token before any other would have no position: FTS5 gives it the
            // first, as here.
            if !colocated || positions.places.is_empty() {
                positions.places.push((start, end));
                positions.first.push(positions.ends.len());
            }
            positions.terms.push_str(term);
            positions.ends.push(positions.terms.len());
        })?;
        Ok(positions)
    }

    fn terms_at(&self, position: usize) -> impl Iterator<Item = &str> {
        let end = self
            .first
            .get(position + 1)
            .copied()
            .unwrap_or(self.ends.len());
        (self.first[position]..end).map(|n| {
            let start = n.checked_sub(1).map_or(0, |m| self.ends[m]);
            &self.terms[start..self.ends[n]]
        })
    }

    /// Whether `phrase` is found at `position`.
    fn holds(&self, phrase: &Phrase, position: usize) -> bool {
        let last = phrase.terms.len() - 1;
        phrase.terms.iter().enumerate().all(|(i, wanted)| {
            position + i < self.places.len()
                && self.terms_at(position + i).any(|term| {
                    term == wanted.as_str()
                        || (phrase.prefix && i == last && term.starts_with(wanted.as_str()))
                })
        })
    }

    /// Every match of every phrase, its first and last positions, in order of the first.
    fn matches(&self, phrases: &[Phrase]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for phrase in phrases.iter().filter(|p| !p.terms.is_empty()) {
            for position in 0..self.places.len() {
                if self.holds(phrase, position) {
                    found.push((position, position + phrase.terms.len() - 1));
                }
            }
        }
        found.sort_by_key(|&(first, _)| first);
        found
    }
}

/// The matches of a column in `highlight()`'s order, those that overlap made one
/// (`fts5CInstIterNext`).
struct Spans {
    matches: std::vec::IntoIter<(usize, usize)>,
    next: Option<(usize, usize)>,
    /// The span `highlight()` stands before or in: its first and last positions.
    current: Option<(usize, usize)>,
}

impl Spans {
    fn new(matches: Vec<(usize, usize)>) -> Spans {
        let mut matches = matches.into_iter();
        let next = matches.next();
        let mut spans = Spans {
            matches,
            next,
            current: None,
        };
        spans.advance();
        spans
    }

    fn advance(&mut self) {
        self.current = self.next.take();
        if let Some((_, end)) = &mut self.current {
            for (first, last) in self.matches.by_ref() {
                if first > *end {
                    self.next = Some((first, last));
                    break;
                }
                *end = (*end).max(last);
            }
        }
    }
}

/// Where `highlight(fts, column, open, close)` puts its marks in a row whose column is `text`,
/// for the matches of `phrases`: the byte ranges between each `open` and its `close`, in order.
/// Only the stretches of `text` where a term can be are tokenized (see `stretches.rs`).
pub fn spans(stemmer: &Stemmer, phrases: &[Phrase], text: &str) -> Result<Vec<(usize, usize)>> {
    let terms: Vec<&str> = phrases
        .iter()
        .flat_map(|p| p.terms.iter().map(String::as_str))
        .collect();
    let Some(stretches) = stretches::of(text, &terms) else {
        return spans_in(stemmer, phrases, text, 0);
    };
    let mut spans = Vec::new();
    for stretch in stretches {
        let start = stretch.start;
        spans.extend(spans_in(stemmer, phrases, &text[stretch], start)?);
    }
    Ok(spans)
}

/// [`spans`] of `text` tokenized whole, `at` bytes into the text it is part of.
fn spans_in(
    stemmer: &Stemmer,
    phrases: &[Phrase],
    text: &str,
    at: usize,
) -> Result<Vec<(usize, usize)>> {
    let positions = Positions::of(stemmer, text)?;
    let mut spans = Spans::new(positions.matches(phrases));
    let mut marks = Vec::new();
    let (mut offset, mut opened) = (0, None);
    for (position, &(start, end)) in positions.places.iter().enumerate() {
        let span = spans.current;
        if span.is_none_or(|(first, _)| position <= first)
            && start > offset
            && let Some(open) = opened.take()
        {
            marks.push((at + open, at + offset));
        }
        if span.is_some_and(|(first, _)| first == position) && opened.is_none() {
            opened = Some(start);
            offset = start;
        }
        if span.is_some_and(|(_, last)| last == position) {
            opened.get_or_insert(offset);
            offset = end;
            spans.advance();
        }
    }
    if let Some(open) = opened {
        marks.push((at + open, at + offset));
    }
    Ok(marks)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::store::read::fts::query::parse;
    use crate::store::read::fts::tokenizer;

    /// `text` with each match of `phrases` between `open` and `close`, as `highlight(fts, column,
    /// open, close)` gives it for a row whose column is `text`.
    fn highlight(
        stemmer: &Stemmer,
        phrases: &[Phrase],
        text: &str,
        open: &str,
        close: &str,
    ) -> Result<String> {
        let spans = spans(stemmer, phrases, text)?;
        let mut out = String::with_capacity(text.len() + spans.len() * (open.len() + close.len()));
        let mut offset = 0;
        for (start, end) in spans {
            out.push_str(&text[offset..start]);
            out.push_str(open);
            out.push_str(&text[start..end]);
            out.push_str(close);
            offset = end;
        }
        out.push_str(&text[offset..]);
        Ok(out)
    }

    /// Texts with compound words, paths, accents, CJK, repeated and adjacent matches, a match
    /// at each end, and one with none.
    const TEXTS: [&str; 13] = [
        "cargo test --locked: running 12 tests, test a ... ok, test b ... FAILED",
        "error: database is locked while merging settings; the database stays locked",
        "upsertSession merges upsert_session and upsert-session into merge.rs (src/merge.rs)",
        "Café déjà vu: cafe CAFÉ café-crème",
        "日本語のテキスト、日本と本語。東京タワー",
        "locked locked locked",
        "nothing to see here",
        "tests",
        "",
        "database is locked database is locked; locked database",
        "日本日本語 日本",
        "merge-settings merged merging merge_settings.rs",
        "cargo-test cargo_test cargoTest",
    ];

    /// Queries of words, phrases, prefixes, compound words and CJK, as a search makes them.
    const QUERIES: [&str; 11] = [
        "cargo test",
        "how did we fix the locked database",
        "\"database is locked\" merg*",
        "upsertSession",
        "upsert session merge.rs",
        "cafe crème",
        "日本",
        "locked",
        "test*",
        "locked database",
        "merge settings",
    ];

    /// Every query's marks of every text are `highlight()`'s own.
    #[test]
    fn marks_what_highlight_marks() {
        let conn = Connection::open_in_memory().unwrap();
        tokenizer::register(&conn).unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'porter cmem');")
            .unwrap();
        for text in TEXTS {
            conn.execute("INSERT INTO fts (body) VALUES (?1)", [text])
                .unwrap();
        }
        let stemmer = Stemmer::on(&conn).unwrap();
        let mut compared = 0;
        for typed in QUERIES {
            let query = parse(typed).unwrap().unwrap();
            let phrases = phrases(&stemmer, &query.texts).unwrap();
            let mut stmt = conn
                .prepare("SELECT body, highlight(fts, 0, '[', ']') FROM fts WHERE fts MATCH ?1")
                .unwrap();
            let rows: Vec<(String, String)> = stmt
                .query_map([&query.expression], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert!(!rows.is_empty(), "{typed}: nothing matched");
            for (text, marked) in rows {
                let ours = highlight(&stemmer, &phrases, &text, "[", "]").unwrap();
                assert_eq!(ours, marked, "{typed:?} in {text:?}");
                compared += 1;
            }
        }
        assert!(compared >= 25, "{compared}");
    }

    /// Texts made of words the queries below find and words they do not, in any case, run
    /// together, joined, between separators that make no token and long runs the index drops.
    fn made_up_texts(n: usize) -> Vec<String> {
        let pieces = [
            "Database",
            "databases",
            "is",
            "IS",
            "locked",
            "locking",
            "Lock",
            "fix",
            "fixes",
            "FIXED",
            "merge",
            "merging",
            "settings",
            "MergeSettings",
            "merge_settings",
            "merge-settings",
            "upsertSession",
            "upsert_session",
            "cargo",
            "tests",
            "test",
            "happy",
            "happiness",
            "relational",
            "|",
            "--",
            "->",
            "::",
            "ok",
            "x",
            "a_b",
            "src/merge.rs",
            "--locked",
            "e",
            "i",
            "le",
            "able",
            "file",
            "filing",
        ];
        let separators = [
            " ", "  ", "\n", "\t", "-", "_", ".", "/", ": ", " | ", "\n\n",
        ];
        let long = "q".repeat(70);
        let mut next = crate::text::made_up::picker(0x9e37_79b9_7f4a_7c15);
        (0..n)
            .map(|_| {
                let mut text = String::new();
                for _ in 0..next(40) {
                    match next(30) {
                        0 => text.push_str(&long),
                        _ => text.push_str(pieces[next(pieces.len())]),
                    }
                    text.push_str(separators[next(separators.len())]);
                }
                text
            })
            .collect()
    }

    /// Marked from their stretches, texts are marked as when tokenized whole.
    #[test]
    fn stretches_mark_what_the_whole_text_marks() {
        let stemmer = Stemmer::new().unwrap();
        let queries = [
            "how did we fix the locked database",
            "\"database is locked\" merg*",
            "upsertSession",
            "merge settings",
            "happy relational",
            "\"is locked\"",
            "e i le",
            "fil* lock*",
            "\"merge settings\" cargo test",
            "mergesettings upsertsession",
        ];
        let mut compared = 0;
        for text in made_up_texts(400) {
            for typed in queries {
                let query = parse(typed).unwrap().unwrap();
                let phrases = phrases(&stemmer, &query.texts).unwrap();
                let whole = spans_in(&stemmer, &phrases, &text, 0).unwrap();
                assert_eq!(
                    spans(&stemmer, &phrases, &text).unwrap(),
                    whole,
                    "{typed:?} in {text:?}"
                );
                compared += usize::from(!whole.is_empty());
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    #[test]
    fn a_text_without_a_match_is_left_as_it_is() {
        let conn = Connection::open_in_memory().unwrap();
        tokenizer::register(&conn).unwrap();
        let stemmer = Stemmer::on(&conn).unwrap();
        let query = parse("locked").unwrap().unwrap();
        let phrases = phrases(&stemmer, &query.texts).unwrap();
        let text = "nothing to see here";
        assert_eq!(highlight(&stemmer, &phrases, text, "[", "]").unwrap(), text);
    }
}
