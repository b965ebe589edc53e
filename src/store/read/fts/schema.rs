//! The index file's layout: the id and format that mark it as ours, its tables, and the item
//! row that every answer reads (a search, a listing, per-prompt recall). Per-prompt recall
//! reads the index from a hook, so it needs this and none of the index's upkeep.

use rusqlite::{Connection, OptionalExtension, Row, ToSql};

use crate::store::rows::Kind;

/// "cmix" in ASCII: marks the file as our index.
pub const APPLICATION_ID: i64 = 0x636d_6978;
/// The layout below and the tokenizer's; a file in any other is rebuilt (2: room for eight
/// sources, memories and summaries among them; 3: accents folded, CJK by characters, compound
/// names whole, each document's digest; 4: a document's id begins with its project's number).
/// Changing what the tokenizer makes of a text changes the index: a test pins both together.
pub const FORMAT: i64 = 4;

/// A document's id is its project's number (see `projects`) shifted by this many bits, plus its
/// key, the source row's rowid times 8 plus the source's number. So a project's documents are
/// one range of ids, and FTS5, which keeps each word's rows in rowid order, reads only that
/// range of a word's rows for a search of one project (see [`project_range`]): on 100,000
/// captures over 6 projects, a sixth of them. Room for 2^41 rowids a source, 2^19 projects.
pub const PROJECT_SHIFT: u32 = 44;

/// The largest project number.
pub const LAST_PROJECT: i64 = i64::MAX >> PROJECT_SHIFT;

/// The part of a document's id that is its key, the same whatever its project.
pub fn key_of(id: i64) -> i64 {
    id & ((1 << PROJECT_SHIFT) - 1)
}

/// The first and last ids a document of project number `n` may have.
pub fn project_range(n: i64) -> (i64, i64) {
    debug_assert!((0..=LAST_PROJECT).contains(&n));
    (
        n << PROJECT_SHIFT,
        n << PROJECT_SHIFT | ((1 << PROJECT_SHIFT) - 1),
    )
}

/// An index of `rows` (rowid, head, body) in memory: its `fts` table as the file's, with the
/// same tokenizer, so that what it matches and marks is what the file's would.
pub fn in_memory<H: ToSql, B: ToSql>(
    rows: impl IntoIterator<Item = (i64, H, B)>,
) -> anyhow::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    super::tokenizer::register(&conn)?;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE fts USING fts5(head, body, tokenize = 'porter cmem');
         BEGIN;",
    )?;
    {
        let mut text = conn.prepare("INSERT INTO fts (rowid, head, body) VALUES (?1, ?2, ?3)")?;
        for (rowid, head, body) in rows {
            text.execute(rusqlite::params![rowid, head, body])?;
        }
    }
    conn.execute_batch("COMMIT")?;
    Ok(conn)
}

/// The number of the project at `dir` in the index of `conn`, if it has one.
pub fn project_number(conn: &Connection, dir: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT n FROM projects WHERE dir = ?1")?
        .query_row([dir], |r| r.get(0))
        .optional()
}

/// SQLite's varint at the start of `bytes` (big-endian groups of 7 bits, high bit set while
/// more follow, the ninth byte whole), as FTS5 writes its records, and what follows it.
pub fn varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some((value << 8 | u64::from(byte), &bytes[9..]));
        }
        value = value << 7 | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

/// `docs` holds one row per indexed item (sessions too, for their ids, without text); its id
/// is the FTS rowid (see [`PROJECT_SHIFT`]). `projects` numbers the projects from 1 (0 is none),
/// and counts the changes to each one's documents (see `held.rs`).
/// The FTS table keeps the indexed text: without it (`content = ''`) a delete cannot take a
/// document's terms out of the index, which would keep a trace of what was forgotten.
pub const SCHEMA: &str = "
    DROP TABLE IF EXISTS meta;
    DROP TABLE IF EXISTS docs;
    DROP TABLE IF EXISTS projects;
    DROP TABLE IF EXISTS fts;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
    CREATE TABLE projects (
        n             INTEGER PRIMARY KEY,
        dir           TEXT NOT NULL UNIQUE,
        changes       INTEGER NOT NULL DEFAULT 0  -- documents added and taken out
    );
    INSERT INTO projects (n, dir) VALUES (0, '');
    CREATE TABLE docs (
        id            INTEGER PRIMARY KEY,
        key           INTEGER NOT NULL UNIQUE,
        kind          TEXT NOT NULL,
        item_id       TEXT NOT NULL,
        handle        TEXT NOT NULL,
        session_id    TEXT NOT NULL,
        project_dir   TEXT,
        tool_name     TEXT,
        files         TEXT,          -- each path followed by a newline, after a newline
        prompt_number INTEGER,
        title         TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        digest        INTEGER NOT NULL, -- same text, same digest: one search result
        tokens        INTEGER NOT NULL DEFAULT 0  -- its text's length, as bm25 counts it
    );
    CREATE INDEX docs_by_item ON docs (item_id);
    CREATE INDEX docs_by_handle ON docs (handle);
    CREATE INDEX docs_by_session ON docs (session_id, created_at, id, kind);
    CREATE VIRTUAL TABLE fts USING fts5(head, body, tokenize = 'porter cmem');
    INSERT INTO fts (fts, rank) VALUES ('secure-delete', 1);
";

/// One indexed item as a list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: Kind,
    pub id: String,
    pub session_id: String,
    pub project_dir: Option<String>,
    pub tool_name: Option<String>,
    pub files: Vec<String>,
    pub prompt_number: Option<i64>,
    pub title: String,
    pub created_at: String,
}

/// What [`item`] reads, the first columns of its query; a query's other columns come after
/// them, from [`ITEM_COUNT`] on (read by place: looked up by name, the columns of a page of
/// 21 results were a seventh of its reading).
pub const ITEM_COLUMNS: &str =
    "d.kind, d.item_id, d.session_id, d.project_dir, d.tool_name, d.files,
    d.prompt_number, d.title, d.created_at";
pub const ITEM_COUNT: usize = 9;

pub fn item(r: &Row) -> rusqlite::Result<Item> {
    let kind = r.get_ref(0)?.as_str()?;
    let files: Option<String> = r.get(5)?;
    Ok(Item {
        kind: Kind::parse(kind).unwrap_or(Kind::Observation),
        id: r.get(1)?,
        session_id: r.get(2)?,
        project_dir: r.get(3)?,
        tool_name: r.get(4)?,
        files: files
            .map(|f| {
                f.lines()
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        prompt_number: r.get(6)?,
        title: r.get(7)?,
        created_at: r.get(8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, &[][..])));
        assert_eq!(varint(&[0x81, 0x00, 0x07]), Some((128, &[0x07][..])));
        assert_eq!(varint(&[0x86, 0x8d, 0x20]), Some((100_000, &[][..])));
        assert_eq!(varint(&[0x80]), None);
    }
}
