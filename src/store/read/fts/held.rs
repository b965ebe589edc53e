//! How many rows of the index hold each phrase of a query, counted by ranges of projects and
//! kept while the documents of those projects stay the same.
//!
//! bm25 weighs a phrase by how many rows of the whole index hold it, so a search of one project
//! still counts every project's rows of each phrase: for `cargo test` on 100,000 captures, more
//! than the project's own rows it ranks. The MCP server asks many questions of one index, and
//! between two of them only the project being worked in gains rows. So the counts are taken per
//! range of projects (the one searched, those numbered below it, those above), each kept with
//! the sum of its projects' changes (which only grows: `projects.changes` in `schema.rs`, counted
//! by the catch-up) and the index's epoch, and counted again only when that sum or the epoch is
//! not what it was. A process that searches once counts each range once.

use std::cell::RefCell;
use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::schema::{LAST_PROJECT, project_range};

/// Counts kept at most; past them they are all dropped (a server asked that many different
/// phrases has moved on from most of them).
const KEPT: usize = 4096;

/// A phrase, and the first and last project numbers of a range.
type Key = (String, i64, i64);

/// What the projects of a range were when a count was taken: the index's epoch and the sum of
/// their changes.
type Stamp = (i64, i64);

/// The counts kept, of one index.
#[derive(Default)]
pub struct Held {
    counts: RefCell<HashMap<Key, (Stamp, i64)>>,
}

impl Held {
    /// How many rows of `conn`'s index hold each of `texts` (phrases as FTS5 reads them), in
    /// order, for a search of project number `project` (every project: `None`).
    pub fn counts(
        &self,
        conn: &Connection,
        texts: &[String],
        project: Option<i64>,
    ) -> Result<Vec<i64>> {
        let ranges = match project {
            Some(n) => vec![(n, n), (0, n - 1), (n + 1, LAST_PROJECT)],
            None => vec![(0, LAST_PROJECT)],
        };
        let epoch: i64 = conn
            .query_row("SELECT value FROM meta WHERE key = 'epoch'", [], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(0);
        let mut stamps = Vec::with_capacity(ranges.len());
        for &(first, last) in ranges.iter().filter(|(first, last)| first <= last) {
            let changes: i64 = conn
                .prepare_cached(
                    "SELECT coalesce(sum(changes), 0) FROM projects WHERE n BETWEEN ?1 AND ?2",
                )?
                .query_row([first, last], |r| r.get(0))?;
            stamps.push(((first, last), (epoch, changes)));
        }
        let mut counts = self.counts.borrow_mut();
        if counts.len() > KEPT {
            counts.clear();
        }
        let mut held = Vec::with_capacity(texts.len());
        for text in texts {
            let mut sum = 0;
            for &((first, last), stamp) in &stamps {
                let key = (text.clone(), first, last);
                let count = match counts.get(&key) {
                    Some(&(was, count)) if was == stamp => count,
                    _ => {
                        let count = count(conn, text, first, last)?;
                        counts.insert(key, (stamp, count));
                        count
                    }
                };
                sum += count;
            }
            held.push(sum);
        }
        Ok(held)
    }
}

/// The rows of the projects numbered `first` to `last` that hold `text`.
fn count(conn: &Connection, text: &str, first: i64, last: i64) -> Result<i64> {
    let (from, _) = project_range(first);
    let (_, to) = project_range(last);
    Ok(conn
        .prepare_cached("SELECT count(*) FROM fts WHERE fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3")?
        .query_row(params![text, from, to], |r| r.get(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::fts::{create, rank, tokenizer};

    fn index() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        tokenizer::register(&conn).unwrap();
        rank::register(&conn).unwrap();
        create(&conn, None, 0).unwrap();
        conn.execute_batch("INSERT INTO projects (n, dir) VALUES (1, '/a'), (2, '/b'), (3, '/c')")
            .unwrap();
        conn
    }

    /// A document of project `n` saying `body`, its change counted or not.
    fn add(conn: &Connection, n: i64, key: i64, body: &str, counted: bool) {
        let (first, _) = project_range(n);
        conn.execute(
            "INSERT INTO fts (rowid, head, body) VALUES (?1, '', ?2)",
            params![first + key, body],
        )
        .unwrap();
        if counted {
            conn.execute(
                "UPDATE projects SET changes = changes + 1 WHERE n = ?1",
                [n],
            )
            .unwrap();
        }
    }

    fn texts(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| format!("\"{w}\"")).collect()
    }

    /// The counts are of every project's rows, whichever project is searched; one is kept while
    /// the changes of its projects are the same, and taken again once they are not, or once
    /// the index is a new one.
    #[test]
    fn counts_every_projects_rows_and_keeps_them_while_nothing_changed() {
        let conn = index();
        add(&conn, 1, 8, "cargo test", true);
        add(&conn, 2, 8, "cargo build", true);
        add(&conn, 3, 8, "cargo test again", true);
        add(&conn, 0, 8, "test", true);
        let held = Held::default();
        let words = texts(&["cargo", "test", "nothing"]);
        for project in [Some(1), Some(2), Some(3), Some(0), None] {
            assert_eq!(
                held.counts(&conn, &words, project).unwrap(),
                [3, 3, 0],
                "{project:?}"
            );
        }
        // A row nobody counted as a change: the kept counts stand.
        add(&conn, 3, 16, "cargo", false);
        assert_eq!(held.counts(&conn, &words, Some(2)).unwrap(), [3, 3, 0]);
        // Counted: another project's search sees it.
        conn.execute("UPDATE projects SET changes = changes + 1 WHERE n = 3", [])
            .unwrap();
        assert_eq!(held.counts(&conn, &words, Some(2)).unwrap(), [4, 3, 0]);
        assert_eq!(held.counts(&conn, &words, None).unwrap(), [4, 3, 0]);
        // A new index, whose changes are counted from nothing again.
        create(&conn, None, 0).unwrap();
        conn.execute_batch("INSERT INTO projects (n, dir) VALUES (1, '/a'), (2, '/b'), (3, '/c')")
            .unwrap();
        add(&conn, 3, 8, "cargo", false);
        assert_eq!(held.counts(&conn, &words, Some(2)).unwrap(), [1, 0, 0]);
    }
}
