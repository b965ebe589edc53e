//! The page of a search's results, read whole and highlighted.
//!
//! `highlight()` needs its row found by the query. Found in the index by its rowid, each row
//! cost about 0.6 million instructions (FTS5 steps through every term's list up to the row, as
//! many times as there are rows on the page): on 100,000 captures, a page of 21 results of a
//! six-word question was 18 of the 51 million instructions of a whole `search`, more than the
//! query that found them. So the page's texts are read by rowid (a lookup each, no query), put
//! in an index of their own in memory with the same table and tokenizer, and highlighted
//! there: what `highlight()` marks depends on the row's text and the query alone, so the marks
//! are the same (as for the team's notes, see `notes.rs`).

use std::collections::HashMap;

use anyhow::Result;

use super::schema::{ITEM_COLUMNS, item};
use super::snippet::snippet;
use super::{Hit, Index, Item, rank};

impl Index {
    /// The items of a page of ranked results, highlighted for `expression`, in their order.
    pub(super) fn page(&self, expression: &str, page: &[&rank::Ranked]) -> Result<Vec<Hit>> {
        let ids = serde_json::to_string(&page.iter().map(|r| r.id).collect::<Vec<_>>())?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS}, d.id AS doc, f.head, f.body
               FROM docs d JOIN fts f ON f.rowid = d.id
              WHERE d.id IN (SELECT value FROM json_each(?1))"
        ))?;
        let rows: Vec<Row> = stmt
            .query_map([ids], |r| {
                Ok((r.get("doc")?, item(r)?, r.get("head")?, r.get("body")?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut marked = highlighted(expression, &rows)?;
        let mut items: HashMap<i64, Item> = rows
            .into_iter()
            .map(|(doc, item, ..)| (doc, item))
            .collect();
        let hits = page
            .iter()
            .filter_map(|ranked| {
                let columns = marked.remove(&ranked.id)?;
                let (snippet, matches) = snippet(&columns);
                Some(Hit {
                    item: items.remove(&ranked.id)?,
                    snippet,
                    matches,
                    score: ranked.bm25,
                    count: ranked.count,
                    standing: ranked.standing,
                })
            })
            .collect();
        Ok(hits)
    }
}

/// A row of the page: its doc id, its item, and its two columns' text.
type Row = (i64, Item, String, String);

/// The columns of each of `rows` that `expression` matches, as `highlight()` marks them
/// (`\x02` and `\x03` around each match), by doc id.
fn highlighted(expression: &str, rows: &[Row]) -> Result<HashMap<i64, [String; 2]>> {
    let conn =
        super::schema::in_memory(rows.iter().map(|(doc, _, head, body)| (*doc, head, body)))?;
    let mut stmt = conn.prepare(
        "SELECT rowid, highlight(fts, 0, char(2), char(3)), highlight(fts, 1, char(2), char(3))
           FROM fts WHERE fts MATCH ?1",
    )?;
    let marked = stmt
        .query_map([expression], |r| Ok((r.get(0)?, [r.get(1)?, r.get(2)?])))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(marked)
}
