//! Where in a text a query's terms can match: the stretches a highlight tokenizes, so that a
//! page of long outputs is not tokenized whole for the few places its words are (on 100,000
//! captures, tokenizing a page of 21 results whole was a sixth of a `search`).
//!
//! The index stems words with SQLite's porter stemmer, and a stem is the beginning of its word
//! but for its last letters: a `y` made `i` (`happy`, `happi`), an `e` added or kept where the
//! word goes on otherwise (`filing`, `file`; `relational`, `relat`), `bl` or `ble` for `bility`
//! (`sensibility`, `sensibl`). So a word whose stem is a term, or begins with it for a prefix,
//! begins with the term cut before a last `e`, `i`, `l` or `le` (its [`needle`]: true of all
//! 1.9 million words of a check with suffixes added, and held by a test on this binary's
//! stemmer). In ASCII text, which the tokenizer only lowercases, a term matches only where its
//! needle is, whatever the case: in a word, or in a compound word run together without its `_`
//! and `-` (the index holds its whole so).
//!
//! A phrase's terms are consecutive tokens, so a stretch runs on over chunks of text that make
//! no token (`|`, `--`) and ends only at one that surely makes a token: a run of at most 64
//! bytes between whitespace (no word in it too long to be indexed) with a letter or a digit in
//! it. Tokenized alone, a stretch makes the tokens the whole text makes there (the tokenizer
//! starts afresh after whitespace), at the same positions one to another.

use std::ops::Range;

use super::tokenizer::MAX_TOKEN_BYTES;

/// What a word whose stem is `term` (or begins with it) begins with, lower case.
fn needle(term: &str) -> &str {
    let cut = term
        .strip_suffix("le")
        .or_else(|| term.strip_suffix(['e', 'i', 'l']))
        .unwrap_or(term);
    // The stemmer keeps a word's first letter: a term of one letter is its own needle.
    if cut.is_empty() { term } else { cut }
}

/// The stretches of `text` where `terms` (the terms of a query's phrases, as the stemmer makes
/// them) can match, in order; `None` when they can be anywhere (the text or a term not ASCII).
pub fn of(text: &str, terms: &[&str]) -> Option<Vec<Range<usize>>> {
    let needles: Vec<&str> = terms.iter().map(|t| needle(t)).collect();
    if !text.is_ascii() || needles.iter().any(|n| n.is_empty() || !n.is_ascii()) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let mut found: Vec<usize> = needles
        .iter()
        .flat_map(|n| lower.match_indices(n).map(|(at, _)| at))
        .collect();
    found.sort_unstable();
    let mut found = found.into_iter().peekable();
    let bytes = lower.as_bytes();
    let mut stretches: Vec<Range<usize>> = Vec::new();
    let mut open: Option<Range<usize>> = None;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_whitespace() {
            at += 1;
            continue;
        }
        let start = at;
        let (mut word, mut joined) = (false, false);
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
            word |= bytes[at].is_ascii_alphanumeric();
            // A compound word's whole is run together where a part ends.
            joined |= at > start
                && matches!(bytes[at], b'_' | b'-')
                && bytes[at - 1].is_ascii_alphanumeric();
            at += 1;
        }
        let mut holds = false;
        while found.next_if(|&f| f < at).is_some() {
            holds = true;
        }
        if !holds && joined && word {
            holds = run_together(&bytes[start..at], &needles);
        }
        if holds {
            open.get_or_insert(start..at).end = at;
        } else if word && at - start <= MAX_TOKEN_BYTES {
            stretches.extend(open.take());
        }
    }
    stretches.extend(open);
    Some(stretches)
}

/// Whether a chunk of text holds a needle once its `_` and `-` are taken out.
fn run_together(chunk: &[u8], needles: &[&str]) -> bool {
    needles.iter().any(|needle| {
        let needle = needle.as_bytes();
        (0..chunk.len()).any(|start| {
            let mut rest = chunk[start..]
                .iter()
                .filter(|&&b| !matches!(b, b'_' | b'-'));
            chunk[start] == needle[0] && needle.iter().all(|b| rest.next() == Some(b))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::fts::stems::Stemmer;

    /// Words with the suffixes the stemmer cuts and replaces, and the words that end like them.
    const WORDS: [&str; 24] = [
        "happy", "relate", "sense", "active", "file", "conform", "vacant", "digit", "organ",
        "real", "national", "operate", "general", "sensible", "able", "agree", "hop", "size",
        "lock", "merge", "test", "database", "fix", "cry",
    ];
    const SUFFIXES: [&str; 32] = [
        "", "s", "es", "ed", "ing", "y", "ies", "ly", "ation", "ational", "izer", "ization",
        "ness", "ful", "ability", "ibility", "ivity", "iveness", "ality", "ement", "ance", "ancy",
        "ency", "ence", "able", "ible", "ize", "ate", "ator", "ously", "ally", "ers",
    ];

    /// A word begins with the needle of its stem, and of every beginning of its stem (a
    /// prefix query), as this binary's stemmer makes them.
    #[test]
    fn a_word_begins_with_its_stems_needle() {
        let stemmer = Stemmer::new().unwrap();
        let mut checked = 0;
        for word in WORDS {
            for suffix in SUFFIXES {
                let word = format!("{word}{suffix}");
                let [stem] = &stemmer.terms(&word, false).unwrap()[..] else {
                    panic!("{word}: one term");
                };
                for end in 1..=stem.len() {
                    let needle = needle(&stem[..end]);
                    assert!(word.starts_with(needle), "{word}: {stem} cut to {needle}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 3000, "{checked}");
    }

    fn shown(text: &str, terms: &[&str]) -> Vec<String> {
        of(text, terms)
            .unwrap()
            .into_iter()
            .map(|r| text[r].to_string())
            .collect()
    }

    #[test]
    fn a_stretch_is_where_a_term_is_and_runs_over_what_makes_no_token() {
        let text = "ok ok Database | -- IS\tlocked ok db-Lock merge_settings ok";
        assert_eq!(
            shown(text, &["databas", "is", "lock", "mergeset"]),
            ["Database | -- IS\tlocked", "db-Lock merge_settings"]
        );
        assert_eq!(shown(text, &["nowher"]), Vec::<String>::new());
    }

    #[test]
    fn a_long_run_without_a_word_to_index_does_not_end_a_stretch() {
        let long = "x".repeat(MAX_TOKEN_BYTES + 1);
        let text = format!("fix {long} fix ok fix");
        assert_eq!(
            shown(&text, &["fix"]),
            [format!("fix {long} fix"), "fix".into()]
        );
    }

    #[test]
    fn text_or_terms_not_ascii_are_searched_whole() {
        assert_eq!(of("café is locked", &["lock"]), None);
        assert_eq!(of("is locked", &["日本"]), None);
    }
}
