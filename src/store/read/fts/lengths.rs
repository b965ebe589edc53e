//! Each document's length in tokens, kept in memory by an index that is searched again and again
//! (the one an MCP server keeps between its calls).
//!
//! bm25 weighs a row by its length. A process that searches once reads it with the row it
//! ranks (`docs.tokens`, a lookup of `docs` for each row that holds a word of the query): on
//! 100,000 captures, a sixth of an MCP search of `cargo test`, whose words 9,000 rows of the
//! project hold. An index told it will be searched again keeps the lengths of the documents of
//! the projects it searches, in id order, with the stamp of those projects (see `held.rs`),
//! read in one range scan (about what the lookups of one search of two common words cost, so
//! not for a process that searches once or twice: a command, a hook). What its own
//! catch-ups add and take out is applied to them; a change made by another process (a stamp
//! that its own catch-ups do not account for) has them read again.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use anyhow::Result;
use rusqlite::Connection;

use super::held::{Stamp, epoch, stamp};
use super::schema::PROJECT_SHIFT;

/// The lengths of the documents of a range of ids, by id.
pub struct Table {
    ids: Vec<i64>,
    tokens: Vec<u32>,
}

impl Table {
    /// The length of document `id`, if it is in the table.
    pub fn get(&self, id: i64) -> Option<f64> {
        let at = self.ids.binary_search(&id).ok()?;
        Some(f64::from(self.tokens[at]))
    }
}

impl Table {
    /// This table with `edits` made, in order.
    fn edited(&self, edits: &[Edit]) -> Table {
        let mut last: BTreeMap<i64, Option<u32>> = BTreeMap::new();
        for &(id, tokens) in edits {
            last.insert(id, tokens.map(length));
        }
        let mut table = Table {
            ids: Vec::with_capacity(self.ids.len() + last.len()),
            tokens: Vec::with_capacity(self.ids.len() + last.len()),
        };
        let mut edits = last.into_iter().peekable();
        for (&id, &tokens) in self.ids.iter().zip(&self.tokens) {
            while let Some((new, tokens)) = edits.next_if(|(new, _)| *new < id) {
                table.push(new, tokens);
            }
            match edits.next_if(|(new, _)| *new == id) {
                Some((_, edit)) => table.push(id, edit),
                None => table.push(id, Some(tokens)),
            }
        }
        for (new, tokens) in edits {
            table.push(new, tokens);
        }
        table
    }

    fn push(&mut self, id: i64, tokens: Option<u32>) {
        if let Some(tokens) = tokens {
            self.ids.push(id);
            self.tokens.push(tokens);
        }
    }
}

/// A length as the table keeps it.
fn length(tokens: i64) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The first and last document ids a search reads (see `schema::PROJECT_SHIFT`).
pub type Range = (i64, i64);

/// A document a catch-up added (its id and length) or took out (its id alone).
pub type Edit = (i64, Option<i64>);

/// The edits kept at most between two searches; past them the lengths are read again.
const EDITS: usize = 4096;

/// The lengths one index keeps: of the range of its last search, once it is told to.
#[derive(Default)]
pub struct Lengths {
    wanted: Cell<bool>,
    kept: RefCell<Option<(Range, Stamp, Rc<Table>)>>,
    /// What this index's catch-ups changed since the lengths were kept (`None`: more than
    /// [`EDITS`]).
    edits: RefCell<Option<Vec<Edit>>>,
}

impl Lengths {
    /// From now on, keeps the lengths of what is searched.
    pub fn keep(&self) {
        self.wanted.set(true);
    }

    /// Whether it keeps them (see [`Lengths::keep`]).
    pub fn kept(&self) -> bool {
        self.wanted.get()
    }

    /// The lengths of the documents of `range` in the index `conn`: kept, or read when its
    /// projects changed or another range was searched last. `None` until [`Lengths::keep`]
    /// (the search reads each length with its row).
    pub fn of(&self, conn: &Connection, range: Range) -> Result<Option<Rc<Table>>> {
        if !self.wanted.get() {
            return Ok(None);
        }
        let (first, last) = range;
        if first > last {
            return Ok(None);
        }
        // The projects of the range: its ids' high bits.
        let now = stamp(
            conn,
            epoch(conn)?,
            first >> PROJECT_SHIFT,
            last >> PROJECT_SHIFT,
        )?;
        let edits = self.edits.replace(Some(Vec::new()));
        let mut kept = self.kept.borrow_mut();
        if let Some((was, stamped, table)) = kept.as_mut()
            && *was == range
            && stamped.0 == now.0
        {
            let ours = edits.map(|edits| {
                let ids = first..=last;
                edits
                    .into_iter()
                    .filter(|e| ids.contains(&e.0))
                    .collect::<Vec<_>>()
            });
            // Whether every change to these projects since was one of ours.
            if let Some(ours) = ours.filter(|ours| stamped.1 + ours.len() as i64 == now.1) {
                if !ours.is_empty() {
                    *table = Rc::new(table.edited(&ours));
                    *stamped = now;
                }
                return Ok(Some(Rc::clone(table)));
            }
        }
        // The table of another range goes first: one is kept at a time.
        *kept = None;
        let table = Rc::new(read(conn, range)?);
        *kept = Some((range, now, Rc::clone(&table)));
        Ok(Some(table))
    }

    /// Takes note of what a catch-up of this index changed, once it is in the file.
    pub fn edited(&self, edits: &[Edit]) {
        let mut kept = self.edits.borrow_mut();
        if let Some(list) = kept.as_mut() {
            if list.len() + edits.len() > EDITS {
                *kept = None;
            } else {
                list.extend_from_slice(edits);
            }
        }
    }
}

/// The lengths of the documents with ids `first` to `last`.
fn read(conn: &Connection, (first, last): (i64, i64)) -> Result<Table> {
    let mut stmt =
        conn.prepare_cached("SELECT id, tokens FROM docs WHERE id BETWEEN ?1 AND ?2 ORDER BY id")?;
    let mut rows = stmt.query([first, last])?;
    let (mut ids, mut tokens) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        ids.push(row.get(0)?);
        tokens.push(length(row.get(1)?));
    }
    Ok(Table { ids, tokens })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::fts::{create, rank, tokenizer};

    const RANGE: Range = (0, i64::MAX);

    fn index() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        tokenizer::register(&conn).unwrap();
        rank::register(&conn).unwrap();
        create(&conn, None, 0).unwrap();
        for (id, tokens) in [(8, 5), (16, 7), (24, 9)] {
            set(&conn, id, Some(tokens));
        }
        conn
    }

    /// Sets (or takes out) the document `id`'s length, and counts the change.
    fn set(conn: &Connection, id: i64, tokens: Option<i64>) {
        conn.execute("DELETE FROM docs WHERE id = ?1", [id])
            .unwrap();
        if let Some(tokens) = tokens {
            conn.execute(
                "INSERT INTO docs (id, key, kind, item_id, handle, session_id, title, created_at,
                                   digest, tokens)
                 VALUES (?1, ?1, 'observation', ?1, ?1, 's', '', '', 0, ?2)",
                [id, tokens],
            )
            .unwrap();
        }
        conn.execute("UPDATE projects SET changes = changes + 1 WHERE n = 0", [])
            .unwrap();
    }

    fn all(table: &Table) -> Vec<(i64, u32)> {
        table
            .ids
            .iter()
            .copied()
            .zip(table.tokens.clone())
            .collect()
    }

    #[test]
    fn kept_once_asked_and_edited_as_the_catch_up_edits() {
        let conn = index();
        let lengths = Lengths::default();
        assert!(lengths.of(&conn, RANGE).unwrap().is_none());
        lengths.keep();
        let kept = lengths.of(&conn, RANGE).unwrap().unwrap();
        assert_eq!(all(&kept), [(8, 5), (16, 7), (24, 9)]);

        // Our catch-up: one added before the first, one rewritten, one taken out, one after.
        let edits = [(4, Some(3)), (16, Some(70)), (24, None), (32, Some(1))];
        for (id, tokens) in edits {
            set(&conn, id, tokens);
        }
        lengths.edited(&edits);
        let edited = lengths.of(&conn, RANGE).unwrap().unwrap();
        assert_eq!(all(&edited), [(4, 3), (8, 5), (16, 70), (32, 1)]);
        assert_eq!(all(&edited), all(&read(&conn, RANGE).unwrap()));
    }

    #[test]
    fn read_again_after_a_change_that_was_not_ours() {
        let conn = index();
        let lengths = Lengths::default();
        lengths.keep();
        lengths.of(&conn, RANGE).unwrap().unwrap();
        // Another process rewrites a document; our catch-up adds one.
        set(&conn, 8, Some(50));
        set(&conn, 40, Some(2));
        lengths.edited(&[(40, Some(2))]);
        let now = lengths.of(&conn, RANGE).unwrap().unwrap();
        assert_eq!(all(&now), [(8, 50), (16, 7), (24, 9), (40, 2)]);
    }

    #[test]
    fn a_search_of_other_projects_between_has_them_read_again() {
        let conn = index();
        let lengths = Lengths::default();
        lengths.keep();
        let other: Range = (1 << PROJECT_SHIFT, (2 << PROJECT_SHIFT) - 1);
        lengths.of(&conn, RANGE).unwrap().unwrap();
        assert!(all(&lengths.of(&conn, other).unwrap().unwrap()).is_empty());
        // Changed meanwhile, and not by our catch-up: what is read is as the index is now.
        set(&conn, 16, Some(8));
        lengths.edited(&[(16, Some(8))]);
        set(&conn, 8, Some(6));
        assert_eq!(
            all(&lengths.of(&conn, RANGE).unwrap().unwrap()),
            [(8, 6), (16, 8), (24, 9)]
        );
    }
}
