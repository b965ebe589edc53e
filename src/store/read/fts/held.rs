//! How many rows of the index hold each phrase of a query, kept while the documents they were
//! counted in stay the same.
//!
//! bm25 weighs a phrase by how many rows of the whole index hold it, so a search of one project
//! still counts every project's rows of each phrase: for `cargo test` on 100,000 captures, more
//! than the project's own rows it ranks. The MCP server asks many questions of one index, and
//! between two of them only the project being worked in gains rows. So a count is kept with
//! the index's epoch and the sum of the changes of the projects it was taken in (which only
//! grows: `projects.changes` in `schema.rs`, counted by the catch-up), and used while they are
//! the same. The first count of a phrase is bm25's own (FTS5 walks the phrase's rows once,
//! which a process that searches once could not do for less); once the index has changed, a
//! search of one project counts three ranges of projects (the one searched, those numbered
//! below it, those above) and keeps each, so that the next change of the project being worked
//! in leaves the other two standing.

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
pub type Stamp = (i64, i64);

/// The counts kept, of one index.
#[derive(Default)]
pub struct Held {
    counts: RefCell<HashMap<Key, (Stamp, i64)>>,
}

/// What is known of a query's phrases before it runs.
pub enum Counted {
    /// How many rows hold each.
    Known(Vec<i64>),
    /// None of them was counted before: bm25 counts them, and [`Held::learn`] keeps what it
    /// counted, with the index as it is now.
    Unknown(Stamp),
}

impl Held {
    /// How many rows of `conn`'s index hold each of `texts` (phrases as FTS5 reads them), in
    /// order, for a search of project number `project` (every project: `None`).
    pub fn counts(
        &self,
        conn: &Connection,
        texts: &[String],
        project: Option<i64>,
    ) -> Result<Counted> {
        let ranges = match project {
            Some(n) => vec![(n, n), (0, n - 1), (n + 1, LAST_PROJECT)],
            None => vec![],
        };
        let epoch = epoch(conn)?;
        let stamp = |first: i64, last: i64| stamp(conn, epoch, first, last);
        let whole = stamp(0, LAST_PROJECT)?;
        let mut counts = self.counts.borrow_mut();
        // A former index's counts, or too many.
        counts.retain(|_, ((was, _), _)| *was == epoch);
        if counts.len() > KEPT {
            counts.clear();
        }
        let kept = |counts: &HashMap<Key, (Stamp, i64)>, text: &String, first, last, now| {
            counts
                .get(&(text.clone(), first, last))
                .filter(|(was, _)| *was == now)
                .map(|&(_, count)| count)
        };
        let known: Option<Vec<i64>> = texts
            .iter()
            .map(|t| kept(&counts, t, 0, LAST_PROJECT, whole))
            .collect();
        if let Some(known) = known {
            return Ok(Counted::Known(known));
        }
        let seen = |t: &String| counts.keys().any(|(text, _, _)| text == t);
        if !texts.iter().any(seen) {
            return Ok(Counted::Unknown(whole));
        }
        let mut stamps = Vec::with_capacity(ranges.len().max(1));
        for &(first, last) in ranges.iter().filter(|(first, last)| first <= last) {
            stamps.push(((first, last), stamp(first, last)?));
        }
        if stamps.is_empty() {
            stamps.push(((0, LAST_PROJECT), whole));
        }
        let mut held = Vec::with_capacity(texts.len());
        for text in texts {
            let mut sum = 0;
            for &((first, last), now) in &stamps {
                sum += match kept(&counts, text, first, last, now) {
                    Some(count) => count,
                    None => {
                        let count = count(conn, text, first, last)?;
                        counts.insert((text.clone(), first, last), (now, count));
                        count
                    }
                };
            }
            counts.insert((text.clone(), 0, LAST_PROJECT), (whole, sum));
            held.push(sum);
        }
        Ok(Counted::Known(held))
    }

    /// Keeps what bm25 counted of `texts` (`held`, in order) on the index stamped `whole`.
    pub fn learn(&self, texts: &[String], held: &[i64], whole: Stamp) {
        if texts.len() != held.len() {
            return;
        }
        let mut counts = self.counts.borrow_mut();
        for (text, &count) in texts.iter().zip(held) {
            counts.insert((text.clone(), 0, LAST_PROJECT), (whole, count));
        }
    }
}

/// The index's epoch (see `create` in `mod.rs`): another index, another epoch.
pub fn epoch(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key = 'epoch'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// The stamp of the projects numbered `first` to `last` of the index of `epoch`.
pub fn stamp(conn: &Connection, epoch: i64, first: i64, last: i64) -> Result<Stamp> {
    let changes: i64 = conn
        .prepare_cached("SELECT coalesce(sum(changes), 0) FROM projects WHERE n BETWEEN ?1 AND ?2")?
        .query_row([first, last], |r| r.get(0))?;
    Ok((epoch, changes))
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

    fn known(counted: Counted) -> Vec<i64> {
        match counted {
            Counted::Known(held) => held,
            Counted::Unknown(_) => panic!("not known"),
        }
    }

    fn count_change(conn: &Connection, n: i64) {
        conn.execute(
            "UPDATE projects SET changes = changes + 1 WHERE n = ?1",
            [n],
        )
        .unwrap();
    }

    /// The counts are of every project's rows, whichever project is searched: bm25's the first
    /// time, then kept while nothing changed; once a project changed, that project is counted
    /// again and the others' counts kept; a new index starts anew.
    #[test]
    fn counts_every_projects_rows_and_keeps_them_while_nothing_changed() {
        let conn = index();
        add(&conn, 1, 8, "cargo test", true);
        add(&conn, 2, 8, "cargo build", true);
        add(&conn, 3, 8, "cargo test again", true);
        add(&conn, 0, 8, "test", true);
        let held = Held::default();
        let words = texts(&["cargo", "test", "nothing"]);
        let Counted::Unknown(whole) = held.counts(&conn, &words, Some(2)).unwrap() else {
            panic!("counted before anything was asked");
        };
        held.learn(&words, &[3, 3, 0], whole);
        for project in [Some(1), Some(2), Some(3), Some(0), None] {
            let counted = known(held.counts(&conn, &words, project).unwrap());
            assert_eq!(counted, [3, 3, 0], "{project:?}");
        }
        // A row nobody counted as a change: the kept counts stand.
        add(&conn, 3, 16, "cargo", false);
        assert_eq!(
            known(held.counts(&conn, &words, Some(2)).unwrap()),
            [3, 3, 0]
        );
        // Counted: each range is counted anew, and kept.
        count_change(&conn, 3);
        assert_eq!(
            known(held.counts(&conn, &words, Some(2)).unwrap()),
            [4, 3, 0]
        );
        assert_eq!(known(held.counts(&conn, &words, None).unwrap()), [4, 3, 0]);
        // Project 2 changes: it is counted again, the others' counts stand (a row of project
        // 3 that nobody counted is not seen).
        add(&conn, 3, 24, "cargo", false);
        add(&conn, 2, 16, "cargo test", true);
        assert_eq!(
            known(held.counts(&conn, &words, Some(2)).unwrap()),
            [5, 4, 0]
        );
        // A new index, whose changes are counted from nothing again.
        create(&conn, None, 0).unwrap();
        assert!(matches!(
            held.counts(&conn, &words, Some(2)).unwrap(),
            Counted::Unknown(_)
        ));
    }
}
