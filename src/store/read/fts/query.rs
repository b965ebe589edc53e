//! What a user types, as an FTS5 query that cannot be a syntax error, nor take long, and what
//! ranks its results.
//!
//! People search the way they ask: "how did we fix the login timeout?", "Inventory class with
//! add stock and remove stock methods". So the words are alternatives, not all required: the
//! query is the OR of its words, ranked (see `rank.rs`) by bm25 and by how many of the words a
//! result holds, the whole query as typed counting most. English stop words are left out
//! ("how", "did", "the"), except in a query of nothing else, and except words code is written
//! with (`if`, `not`, `while`, `null`, ...). A `"quoted phrase"` is required as written. A word
//! is split at punctuation (`Caroline's` is `Caroline`, `end.` is `end`) except where it joins
//! the parts of a name (`merge_settings`, `foo-bar`, `merge.rs`, `src/store`, `a::b`): those
//! stay one term, a phrase of their parts. Prefixes (`merg*`, `"merge sett"*`) are understood.
//! Each term becomes a quoted FTS5 string, inside which FTS5 has no syntax, so `NOT`, `(` are
//! searched for as written. A NUL, which would end FTS5's reading of the query, is a space.
//!
//! A query is bounded: ranking and highlighting a row walk FTS5's list of every match of every
//! term, built by looking at each term for each match, so a row costs about the square of the
//! terms times the matches. Measured (release build, interleaved with the build before this
//! bound): on 20,000 rows, 10,000 of them holding `database` 20 times, `database` alone took
//! 0.04 s; 8, 16 and 32 spellings that all match it (`database.`, `(database`, `data*`, …) 0.15,
//! 0.39 and 1.2 s; 20,000 copies of the word did not finish in 10 minutes, the MCP server
//! answering nothing meanwhile.

use super::tokenizer::each_token;

/// The most terms and characters a query takes: more than anyone types, few enough that the
/// worst of them costs about ten times one word. Stop words do not count; words past the
/// first this many are not searched for (quoted phrases past them are a mistake).
pub const MAX_TERMS: usize = 16;
pub const MAX_CHARS: usize = 1_000;
/// The whole query as a phrase is one more term (it ranks exact matches first) when it has
/// this many words at most: a phrase costs the list of its most common word, and a long one
/// is never typed exactly.
const WHOLE_WORDS: usize = 5;

/// A query ready for the index: the FTS5 expression and how to read which of its phrases a
/// result holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The FTS5 expression.
    pub expression: String,
    /// For each phrase of the expression in order (FTS5 numbers them so), the term it is:
    /// an index below `terms`, or `None` for the whole query as a phrase.
    pub phrases: Vec<Option<usize>>,
    /// Each phrase of the expression alone, as FTS5 reads it: a query of it finds the rows that
    /// hold the phrase.
    pub texts: Vec<String>,
    /// How many different terms the query has (required and optional).
    pub terms: usize,
    /// The words searched for, as typed, for a suggestion when nothing matches (prefixes and
    /// quoted phrases are not guessed at).
    pub words: Vec<String>,
    /// How many of the terms are required: the quoted ones.
    pub required: usize,
    /// The quoted phrases of several words (not prefixes), as typed between their quotes: a
    /// question typed in quotes, which may match nothing as written (see [`unquote`]).
    pub quoted: Vec<String>,
}

/// One term: the text FTS5 gets (quoted, with `*` for a prefix), and its key (lower case).
struct Term {
    fts: String,
    key: String,
    prefix: bool,
    /// A quoted phrase of several words, as typed.
    phrase: Option<String>,
}

/// Words code is written with, kept although English grammar would drop them.
const CODE_WORDS: &[&str] = &["if", "not", "no", "while", "until", "then", "or", "and"];

/// English stop words (NLTK's list), less [`CODE_WORDS`].
const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "couldn",
    "didn",
    "doesn",
    "hadn",
    "hasn",
    "haven",
    "isn",
    "ma",
    "mightn",
    "mustn",
    "needn",
    "shan",
    "shouldn",
    "wasn",
    "weren",
    "won",
    "wouldn",
];

/// Whether `word` (in lower case) is left out of a query.
fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word) && !CODE_WORDS.contains(&word)
}

/// Characters that join the parts of one name: `merge_settings`, `merge.rs`, `a::b`.
fn joins(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | '/' | '\\' | ':' | '@' | '#' | '~')
}

/// The query for `input`; `Ok(None)` when it holds nothing to search for, an error (one line
/// for the user) when it is longer than a query may be.
pub fn parse(input: &str) -> Result<Option<Query>, String> {
    let chars = input.chars().count();
    if chars > MAX_CHARS {
        return Err(format!(
            "the query is {} characters long: a search takes at most {} characters and \
             {MAX_TERMS} words",
            crate::text::count(chars as i64),
            crate::text::count(MAX_CHARS as i64)
        ));
    }
    let input = &input.replace('\0', " ");
    let (required, bare) = terms(input);
    let mut optional: Vec<Term> = Vec::new();
    let mut stops: Vec<Term> = Vec::new();
    for term in bare {
        let list = if !term.prefix && is_stop_word(&term.key) {
            &mut stops
        } else {
            &mut optional
        };
        if !list.iter().chain(&required).any(|t| t.key == term.key) {
            list.push(term);
        }
    }
    if optional.is_empty() && required.is_empty() {
        optional = std::mem::take(&mut stops);
    }
    if required.len() > MAX_TERMS {
        return Err(format!(
            "the query has {} different phrases: a search takes at most {MAX_TERMS}",
            required.len()
        ));
    }
    // A question or a pasted paragraph is searched by its first words.
    optional.truncate(MAX_TERMS - required.len());
    let distinct = required.len() + optional.len();
    if distinct == 0 {
        return Ok(None);
    }
    Ok(Some(build(input, required, optional)))
}

/// The expression: every required phrase, and any of the terms (the required ones among them,
/// so that a result's matches of each are counted), or the whole query as a phrase.
fn build(input: &str, required: Vec<Term>, optional: Vec<Term>) -> Query {
    let mut phrases: Vec<Option<usize>> = Vec::new();
    let mut all = Vec::new();
    for (n, term) in required.iter().enumerate() {
        phrases.push(Some(n));
        all.push(term.fts.clone());
    }
    let mut any = Vec::new();
    for (n, term) in required.iter().chain(&optional).enumerate() {
        phrases.push(Some(n));
        any.push(term.fts.clone());
    }
    let mut texts: Vec<String> = all.iter().chain(&any).cloned().collect();
    let words: Vec<&str> = input.split_whitespace().collect();
    if required.is_empty()
        && optional.len() > 1
        && words.len() <= WHOLE_WORDS
        && !input.contains(['"', '*'])
    {
        phrases.push(None);
        any.push(quote(&words.join(" ")));
        texts.extend(any.last().cloned());
    }
    let any = any.join(" OR ");
    let expression = if all.is_empty() {
        any
    } else if optional.is_empty() {
        // The required phrases are counted by the `all` part.
        phrases.truncate(required.len());
        texts.truncate(required.len());
        all.join(" AND ")
    } else {
        format!("{} AND ({any})", all.join(" AND "))
    };
    Query {
        expression,
        phrases,
        texts,
        terms: required.len() + optional.len(),
        words: optional
            .iter()
            .filter(|t| !t.prefix)
            .map(|t| t.key.clone())
            .collect(),
        required: required.len(),
        quoted: required.into_iter().filter_map(|t| t.phrase).collect(),
    }
}

/// The quoted phrases, and the other words split into terms, in order.
fn terms(input: &str) -> (Vec<Term>, Vec<Term>) {
    let (mut required, mut bare): (Vec<Term>, Vec<Term>) = (Vec::new(), Vec::new());
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '"' {
            chars.next();
            let text: String = chars.by_ref().take_while(|&c| c != '"').collect();
            let prefix = chars.next_if_eq(&'*').is_some();
            if let Some(mut term) = term(&text, prefix)
                && !required.iter().any(|t| t.key == term.key)
            {
                let several = text.split_whitespace().nth(1).is_some();
                term.phrase = (several && !prefix).then_some(text);
                required.push(term);
            }
            continue;
        }
        let mut word = String::new();
        while let Some(c) = chars.next_if(|&c| !c.is_whitespace() && c != '"') {
            word.push(c);
        }
        bare.extend(split(&word));
    }
    (required, bare)
}

/// A word as typed, split where it is not one name; a `*` at its end makes its last term a
/// prefix; a run of three CJK characters or more gives each pair of them (see the tokenizer).
fn split(word: &str) -> Vec<Term> {
    let stem = word.trim_end_matches('*');
    let prefix = stem.len() < word.len();
    let pieces: Vec<&str> = stem
        .split(|c: char| !c.is_alphanumeric() && !joins(c))
        .map(|p| p.trim_matches(joins))
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .collect();
    let mut out = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let cjk = cjk_pairs(piece);
        if cjk.len() > 1 && !(last && prefix) {
            out.extend(cjk.iter().filter_map(|pair| term(pair, false)));
        } else {
            out.extend(term(piece, last && prefix));
        }
    }
    out
}

/// The overlapping pairs of a piece that is all CJK characters, as the tokenizer pairs them.
fn cjk_pairs(piece: &str) -> Vec<&str> {
    let mut pairs = Vec::new();
    let mut whole = true;
    each_token(piece, true, &mut |token, start, end, _| {
        whole &= token.chars().count() == 2 && !token.is_ascii();
        pairs.push(&piece[start..end]);
        whole
    });
    if whole { pairs } else { Vec::new() }
}

/// A term for `text`, `None` when it holds nothing to search for (nothing but punctuation
/// would be an empty phrase, which FTS5 ignores).
fn term(text: &str, prefix: bool) -> Option<Term> {
    let mut key = String::new();
    each_token(text, true, &mut |token, _, _, _| {
        if !key.is_empty() {
            key.push(' ');
        }
        key.push_str(token);
        true
    });
    if key.is_empty() {
        return None;
    }
    let star = if prefix { "*" } else { "" };
    Some(Term {
        fts: format!("{}{star}", quote(text)),
        key: format!("{key}{star}"),
        prefix,
        phrase: None,
    })
}

/// `input` with the quotes taken off each of `phrases` (as [`Query::quoted`] holds them),
/// read as [`parse`] reads quotes: their words are then searched for as if typed bare.
pub fn unquote(input: &str, phrases: &[String]) -> String {
    let key = |text: &str| term(text, false).map(|t| t.key);
    let keys: Vec<String> = phrases.iter().filter_map(|p| key(p)).collect();
    let mut out = String::new();
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            out.push(c);
            continue;
        }
        let text: String = chars.by_ref().take_while(|&c| c != '"').collect();
        let prefix = chars.peek() == Some(&'*');
        if !prefix && key(&text).is_some_and(|k| keys.contains(&k)) {
            out.push_str(&format!(" {text} "));
        } else {
            out.push_str(&quote(&text));
        }
    }
    out
}

fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(input: &str) -> Option<String> {
        parse(input).unwrap().map(|q| q.expression)
    }

    /// The recall bench runs this question's expression bare, to compare `search` with it.
    #[test]
    fn the_recall_benchs_question_is_its_content_words() {
        assert_eq!(
            query("how did we fix locked database").as_deref(),
            Some(r#""fix" OR "locked" OR "database""#)
        );
    }

    #[test]
    fn words_are_alternatives_and_the_whole_query_a_phrase() {
        assert_eq!(
            query("merge  settings").as_deref(),
            Some(r#""merge" OR "settings" OR "merge settings""#)
        );
        let q = parse("merge settings").unwrap().unwrap();
        assert_eq!(q.phrases, [Some(0), Some(1), None]);
        assert_eq!(
            q.texts,
            [r#""merge""#, r#""settings""#, r#""merge settings""#]
        );
        assert_eq!(q.terms, 2);
    }

    #[test]
    fn quoted_phrases_are_required_and_prefixes_understood() {
        assert_eq!(
            query(r#""database is locked" merg*"#).as_deref(),
            Some(r#""database is locked" AND ("database is locked" OR "merg"*)"#)
        );
        let q = parse(r#""database is locked" merg*"#).unwrap().unwrap();
        assert_eq!(q.phrases, [Some(0), Some(0), Some(1)]);
        assert_eq!(
            q.texts,
            [
                r#""database is locked""#,
                r#""database is locked""#,
                r#""merg"*"#
            ]
        );
        assert_eq!(
            query(r#""merge sett"*"#).as_deref(),
            Some(r#""merge sett"*"#)
        );
        assert_eq!(
            parse(r#""a b" "c d""#).unwrap().unwrap().phrases,
            [Some(0), Some(1)]
        );
    }

    #[test]
    fn questions_lose_their_stop_words_and_punctuation() {
        assert_eq!(
            query("How did we fix the login timeout?").as_deref(),
            Some(r#""fix" OR "login" OR "timeout""#)
        );
        assert_eq!(
            query("What is Caroline's identity?").as_deref(),
            Some(r#""Caroline" OR "identity" OR "What is Caroline's identity?""#)
        );
        // Nothing else: the stop words are what there is.
        assert_eq!(
            query("what is this").as_deref(),
            Some(r#""what" OR "is" OR "this" OR "what is this""#)
        );
        // Words code is written with stay.
        assert_eq!(query("NOT").as_deref(), Some(r#""NOT""#));
        assert_eq!(
            query("if not null").as_deref(),
            Some(r#""if" OR "not" OR "null" OR "if not null""#)
        );
    }

    #[test]
    fn quoted_phrases_of_several_words_can_be_searched_as_their_words() {
        let typed = r#"deploy "how did we  fix it" "merge sett"* "one" "fix" "a-b""#;
        let q = parse(typed).unwrap().unwrap();
        // A prefix, a word, a name: not phrases of several words.
        assert_eq!(q.quoted, ["how did we  fix it"]);
        assert_eq!(q.required, 5);
        assert_eq!(
            unquote(typed, &q.quoted),
            r#"deploy  how did we  fix it  "merge sett"* "one" "fix" "a-b""#
        );
        // Read as `parse` reads quotes: a word glued to them, one left open, another case.
        assert_eq!(
            unquote(r#"x"Fix  It"y "fix it"#, &["fix it".into()]),
            "x Fix  It y  fix it "
        );
        assert_eq!(
            query(&unquote(r#""how did we fix it""#, &q.quoted)).as_deref(),
            Some(r#""fix""#)
        );
    }

    #[test]
    fn names_stay_whole() {
        assert_eq!(query("foo-bar").as_deref(), Some(r#""foo-bar""#));
        assert_eq!(
            query("./src/merge.rs").as_deref(),
            Some(r#""src/merge.rs""#)
        );
        assert_eq!(query("a::b").as_deref(), Some(r#""a::b""#));
        assert_eq!(query("is_empty").as_deref(), Some(r#""is_empty""#));
        assert_eq!(
            query(r#""unbalanced words"#).as_deref(),
            Some(r#""unbalanced words""#)
        );
        assert_eq!(
            query(r#"say"hi"#).as_deref(),
            Some(r#""hi" AND ("hi" OR "say")"#)
        );
        assert_eq!(query("- :: * \"\"").as_deref(), None);
        assert_eq!(query("").as_deref(), None);
    }

    #[test]
    fn cjk_is_searched_by_its_pairs() {
        assert_eq!(query("日本").as_deref(), Some(r#""日本""#));
        assert_eq!(
            query("日本語").as_deref(),
            Some(r#""日本" OR "本語" OR "日本語""#)
        );
    }

    #[test]
    fn a_word_written_twice_counts_once() {
        assert_eq!(
            query("merge Merge merge merge*").as_deref(),
            Some(r#""merge" OR "merge"*"#)
        );
    }

    #[test]
    fn a_nul_is_a_space() {
        assert_eq!(
            query("mer\0ge").as_deref(),
            Some(r#""mer" OR "ge" OR "mer ge""#)
        );
        assert_eq!(query("\"mer\0ge\"").as_deref(), Some(r#""mer ge""#));
        assert_eq!(query("\0").as_deref(), None);
    }

    #[test]
    fn a_query_is_bounded() {
        let words: Vec<String> = (0..=MAX_TERMS).map(|n| format!("w{n}")).collect();
        let q = parse(&words.join(" ")).unwrap().unwrap();
        assert_eq!(q.terms, MAX_TERMS);
        assert!(!q.expression.contains("w16"), "{}", q.expression);
        let phrases: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        let err = parse(&phrases.join(" ")).unwrap_err();
        assert!(err.contains("17 different phrases"), "{err}");
        assert!(parse(&phrases[1..].join(" ")).is_ok());
        let err = parse(&"merge ".repeat(20_000)).unwrap_err();
        assert!(err.contains("120,000 characters"), "{err}");
    }
}
