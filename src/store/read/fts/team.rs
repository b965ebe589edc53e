//! The team's notes searched as the index searches our own items: the same query, tokenizer,
//! ranking and snippets, in an index built in memory (see `notes.rs`), kept for the next
//! search of the same notes.
//!
//! An MCP server searches the same notes call after call: the project's folder is read again
//! only once it changed (`team::read::all`), and indexing the notes anew at each call cost
//! their every word through the tokenizer (a few hundred instructions a byte, of up to 4 MiB of
//! notes). So the last notes searched and their index are kept, and used again while the notes
//! to search are the same, compared whole (a few instructions a byte).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use anyhow::Result;
use rusqlite::{Connection, params};

use super::notes::{item, kind};
use super::rank::{self, Candidate};
use super::snippet::snippet;
use super::{Hit, Search, WEIGHTS};
use crate::store::rows::Kind;
use crate::team::Note;

/// The notes that match `search`, best first: as [`super::Index::search`] answers, each with
/// `project` as its project. A search for a session or a tool finds none (a note has neither
/// a whole session id nor a tool).
pub fn search(notes: &[Note], project: &str, search: &Search) -> Result<Vec<Hit>> {
    if notes.is_empty() || search.session.is_some() || search.tool.is_some() {
        return Ok(Vec::new());
    }
    let conn = kept(notes)?;
    let candidates = candidates(&conn, search)?;
    let weights = rank::rarity(&conn, &search.query)?;
    let page: Vec<rank::Ranked> = rank::rank(&search.query, &weights, candidates)
        .into_iter()
        .skip(search.offset)
        .take(search.limit)
        .collect();
    let mut found = shown(&conn, &search.query.expression, &page)?;
    let mut hits = Vec::new();
    for ranked in page {
        let (Some(note), Some((snippet, matches))) = (
            usize::try_from(ranked.id).ok().and_then(|n| notes.get(n)),
            found.remove(&ranked.id),
        ) else {
            continue;
        };
        hits.push(Hit {
            item: item(note, project),
            snippet,
            matches,
            score: ranked.bm25,
            count: 1,
            standing: ranked.standing,
        });
    }
    Ok(hits)
}

/// Notes searched, and their index.
type Indexed = (Vec<Note>, Rc<Connection>);

thread_local! {
    /// The notes last searched on this thread, and their index.
    static KEPT: RefCell<Option<Indexed>> = const { RefCell::new(None) };
}

/// The index of `notes`: the one kept when they are the notes last searched, else one made now
/// (and kept in its place).
fn kept(notes: &[Note]) -> Result<Rc<Connection>> {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some((searched, conn)) = kept.as_ref()
            && searched.as_slice() == notes
        {
            return Ok(Rc::clone(conn));
        }
        // The old index goes first: two of them at once would be twice the memory.
        *kept = None;
        let conn = Rc::new(index(notes)?);
        *kept = Some((notes.to_vec(), Rc::clone(&conn)));
        Ok(conn)
    })
}

/// The notes in an index of their own, in memory (see `notes.rs`), with what a search filters
/// them by beside it.
fn index(notes: &[Note]) -> Result<Connection> {
    let conn = super::notes::index(notes)?;
    rank::register(&conn)?;
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT, created_at TEXT, files TEXT);
         BEGIN;",
    )?;
    {
        let mut meta = conn.prepare("INSERT INTO notes VALUES (?1, ?2, ?3, ?4)")?;
        for (n, note) in notes.iter().enumerate() {
            let files: String = note.files.iter().map(|f| format!("/{f}\n")).collect();
            meta.execute(params![
                n as i64,
                kind(note.kind).as_str(),
                note.when,
                format!("\n{files}")
            ])?;
        }
    }
    conn.execute_batch("COMMIT")?;
    Ok(conn)
}

/// The age every note is ranked at: ten years, past any recency bonus. A note's time is its
/// author's to write: taken for its age, the time just before now that anyone can claim would
/// rank a note above every honest one made earlier. So notes rank by their text alone, and
/// among equals in the order they are given in (see `recall::team::notes`).
const AGE_DAYS: f64 = 3650.0;

/// A matched note's snippet and the byte ranges of it that matched.
type Shown = (String, Vec<(usize, usize)>);

/// What each note of `page` shows (its snippet, highlighted for `expression`), by its id: only
/// the page's are highlighted (each of all the notes that matched was most of a search of
/// 500 notes).
fn shown(
    conn: &Connection,
    expression: &str,
    page: &[rank::Ranked],
) -> Result<HashMap<i64, Shown>> {
    let ids = serde_json::to_string(&page.iter().map(|r| r.id).collect::<Vec<_>>())?;
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, highlight(fts, 0, char(2), char(3)), highlight(fts, 1, char(2), char(3))
           FROM fts WHERE fts MATCH ?1 AND rowid IN (SELECT value FROM json_each(?2))",
    )?;
    let shown = stmt
        .query_map(params![expression, ids], |r| {
            Ok((r.get(0)?, snippet(&[r.get(1)?, r.get(2)?])))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(shown)
}

/// The notes that match the search, to be ranked as our own items are (see `rank.rs`), so that
/// both lists merge into one order; each note is its own result (a note's text is not a
/// repeat of another's).
fn candidates(conn: &Connection, search: &Search) -> Result<Vec<Candidate>> {
    let file = search.file.as_deref().map(|f| {
        let f = f.trim_start_matches("./").trim_start_matches('/');
        format!("/{f}\n")
    });
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT n.id, bm25(fts, {WEIGHTS}) AS score, cmem_matched(fts), n.kind
           FROM fts JOIN notes n ON n.id = fts.rowid
          WHERE fts MATCH ?1
            AND (?2 IS NULL OR n.created_at >= ?2)
            AND (?3 IS NULL OR n.created_at < ?3)
            AND (?4 IS NULL OR instr(n.files, ?4) > 0)
            AND (?5 IS NULL OR n.kind = ?5)"
    ))?;
    let candidates = stmt.query_map(
        params![
            search.query.expression,
            search.since,
            search.until,
            file,
            search.kind.map(Kind::as_str),
        ],
        |r| {
            let n: i64 = r.get(0)?;
            Ok(Candidate {
                id: n,
                bm25: r.get(1)?,
                matched: r.get::<_, i64>(2)? as u64,
                kind: Kind::parse(&r.get::<_, String>(3)?).unwrap_or(Kind::Memory),
                age_days: AGE_DAYS,
                digest: n,
                place: None,
            })
        },
    )?;
    Ok(candidates.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::NoteKind;

    fn note(id: &str, title: &str, body: &str) -> Note {
        Note {
            kind: NoteKind::Memory,
            id: id.into(),
            label: "bugfix".into(),
            title: title.into(),
            when: "2026-11-20T10:00:00.000Z".into(),
            session: "5f0e9d3c".into(),
            files: vec!["src/billing.rs".into()],
            origin: "o".into(),
            body: body.into(),
        }
    }

    #[test]
    fn notes_are_found_as_the_index_finds_items() {
        let notes = [
            note("a", "Rounding fixed", "upsertSession rounds once per order"),
            note("b", "Cache warmed", "nothing about it"),
        ];
        let query = |q: &str| Search {
            query: super::super::parse_query(q).unwrap().unwrap(),
            limit: 10,
            ..Search::default()
        };
        let hits = search(&notes, "/p", &query("session")).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].item.id, "a");
        assert_eq!(hits[0].item.files, vec!["/p/src/billing.rs".to_string()]);
        assert!(
            hits[0].snippet.contains("upsertSession"),
            "{}",
            hits[0].snippet
        );
        let by_file = Search {
            file: Some("billing.rs".into()),
            ..query("rounding")
        };
        assert_eq!(search(&notes, "/p", &by_file).unwrap().len(), 1);
        let elsewhere = Search {
            file: Some("cart.rs".into()),
            ..query("rounding")
        };
        assert!(search(&notes, "/p", &elsewhere).unwrap().is_empty());
        let summaries = Search {
            kind: Some(Kind::Summary),
            ..query("rounding")
        };
        assert!(search(&notes, "/p", &summaries).unwrap().is_empty());
    }
}
