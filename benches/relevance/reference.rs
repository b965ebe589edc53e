//! The reference: the same documents in plain SQLite FTS5, one in-memory table per project
//! (`porter unicode61`), each query the OR of its terms that are not stopwords, ranked by
//! bm25. This is how the reference figures were measured outside the product, so the
//! table shows both from the same run on the same corpus. Its latencies are in-process
//! queries, not whole processes.

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::Connection;

use crate::score::Answer;
use crate::set::Set;
use crate::{DEPTH, Result};

/// NLTK's English stopwords.
const STOPWORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
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
    "that'll",
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
    "don't",
    "should",
    "should've",
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
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
];

pub fn search_all(set: &Set) -> Result<Vec<Answer>> {
    let mut tables: HashMap<&str, (Connection, Vec<&str>)> = HashMap::new();
    for doc in &set.docs {
        if !tables.contains_key(doc.project.as_str()) {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(
                "CREATE VIRTUAL TABLE docs USING fts5(text, tokenize = 'porter unicode61')",
            )?;
            tables.insert(&doc.project, (conn, Vec::new()));
        }
        let (conn, keys) = tables.get_mut(doc.project.as_str()).ok_or("no table")?;
        keys.push(&doc.key);
        conn.execute(
            "INSERT INTO docs (rowid, text) VALUES (?1, ?2)",
            (keys.len() as i64, &doc.text),
        )?;
    }
    let mut answers = Vec::new();
    for query in &set.queries {
        let started = Instant::now();
        let mut keys = Vec::new();
        if let (Some((conn, docs)), Some(expression)) =
            (tables.get(query.project.as_str()), expression(&query.text))
        {
            let mut statement = conn.prepare_cached(
                "SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT ?2",
            )?;
            let rows = statement.query_map((expression, DEPTH as i64), |r| r.get::<_, i64>(0))?;
            for rowid in rows {
                keys.push(docs[rowid? as usize - 1].to_string());
            }
        }
        answers.push(Answer {
            keys,
            took: started.elapsed(),
        });
    }
    Ok(answers)
}

/// `"term" OR "term" ...` of the query's words that are not stopwords, or `None`.
fn expression(text: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.is_empty() || STOPWORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
    }
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "")))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}
