//! `export --html`: the memory as one static HTML page (sessions by day with their prompts,
//! tool calls and Claude's answers, summaries, memories, and a search box), for reading in a
//! browser with no server, no network and nothing installed.
//!
//! It is a view of the export, not a second reader of the database: the page is built from
//! the records `store::export::each_record` hands the JSON Lines export, with the same filters,
//! so it can hold nothing the export would not (secrets were redacted and `<private>` text
//! dropped when they were captured, and an export carries what is stored). The file holds the
//! user's history: it is made private (mode 0600) and written whole or not at all, and only a
//! regular file of the user's own is ever replaced by it.

mod html;
mod model;

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use crate::store::export::{Counts, Filter};

/// What a page holds and how big it is.
pub struct Written {
    pub counts: Counts,
    pub bytes: u64,
}

/// Writes the page of what `filter` selects to `path` (see `fsutil::write_whole`).
pub fn write(conn: &Connection, filter: &Filter, path: &Path) -> Result<Written> {
    let (counts, bytes) =
        crate::fsutil::write_whole(path, |out| html::page(conn, filter, &mut *out))?;
    Ok(Written { counts, bytes })
}
