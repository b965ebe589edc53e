//! The page of a search's results, read whole and highlighted.
//!
//! `highlight()` needs its row found by the query. Found in the index by its rowid, each row
//! cost about 0.6 million instructions (FTS5 steps through every term's list up to the row, as
//! many times as there are rows on the page): on 100,000 captures, a page of 21 results of a
//! six-word question was 18 of the 51 million instructions of a whole `search`, more than the
//! query that found them. What `highlight()` marks depends on the row's text and the query
//! alone, so the page's texts are read by rowid (a lookup each, no query) and marked as it
//! would mark them (see `marks.rs`).

use std::collections::HashMap;

use anyhow::Result;

use super::schema::{ITEM_COLUMNS, item};
use super::snippet::snippet;
use super::stems::Stemmer;
use super::{Hit, Index, Item, Query, marks, rank};

impl Index {
    /// The items of a page of ranked results, highlighted for `expression`, in their order.
    pub(super) fn page(&self, query: &Query, page: &[&rank::Ranked]) -> Result<Vec<Hit>> {
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
        let mut marked = self.highlighted(query, &rows)?;
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

impl Index {
    /// The columns of each of `rows` with the matches of `query` marked as `highlight()` marks
    /// them (`\x02` and `\x03` around each), by doc id.
    fn highlighted(&self, query: &Query, rows: &[Row]) -> Result<HashMap<i64, [String; 2]>> {
        let stemmer = Stemmer::on(&self.conn)?;
        let phrases = marks::phrases(&stemmer, &query.texts)?;
        let mark = |text: &str| marks::highlight(&stemmer, &phrases, text, "\x02", "\x03");
        rows.iter()
            .map(|(doc, _, head, body)| Ok((*doc, [mark(head)?, mark(body)?])))
            .collect()
    }
}
