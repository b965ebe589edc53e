//! The page of a search's results, read whole and highlighted.
//!
//! `highlight()` needs its row found by the query. Found in the index by its rowid, each row
//! cost about 0.6 million instructions (FTS5 steps through every term's list up to the row, as
//! many times as there are rows on the page): on 100,000 captures, a page of 21 results of a
//! six-word question was 18 of the 51 million instructions of a whole `search`, more than the
//! query that found them. What `highlight()` marks depends on the row's text and the query
//! alone, so the page's texts are read by rowid (a lookup each, no query) and marked as it
//! would mark them (see `marks.rs`), where the query's words can be (see `stretches.rs`).

use std::collections::HashMap;

use anyhow::Result;

use super::schema::{ITEM_COLUMNS, ITEM_COUNT, item};
use super::snippet::around;
use super::stems::Stemmer;
use super::{Hit, Index, Item, Query, marks, rank};

impl Index {
    /// The items of a page of ranked results, highlighted for `expression`, in their order.
    pub(super) fn page(&self, query: &Query, page: &[&rank::Ranked]) -> Result<Vec<Hit>> {
        let ids = serde_json::to_string(&page.iter().map(|r| r.id).collect::<Vec<_>>())?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS}, d.id, f.head, f.body
               FROM docs d JOIN fts f ON f.rowid = d.id
              WHERE d.id IN (SELECT value FROM json_each(?1))"
        ))?;
        let mut rows: HashMap<i64, Row> = stmt
            .query_map([ids], |r| {
                let [doc, head, body] = [0, 1, 2].map(|n| ITEM_COUNT + n);
                Ok((r.get(doc)?, (item(r)?, r.get(head)?, r.get(body)?)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let stemmer = Stemmer::on(&self.conn)?;
        let phrases = marks::phrases(&stemmer, &query.texts)?;
        let mut hits = Vec::with_capacity(page.len());
        for ranked in page {
            // A row taken out since it was ranked is left out.
            let Some((item, head, body)) = rows.remove(&ranked.id) else {
                continue;
            };
            let head_spans = marks::spans(&stemmer, &phrases, &head)?;
            let body_spans = marks::spans(&stemmer, &phrases, &body)?;
            let (snippet, matches) = around(&[(&head, &head_spans), (&body, &body_spans)]);
            hits.push(Hit {
                item,
                snippet,
                matches,
                score: ranked.bm25,
                count: ranked.count,
                standing: ranked.standing,
            });
        }
        Ok(hits)
    }
}

/// A row of the page: its item, and its two columns' text.
type Row = (Item, String, String);
