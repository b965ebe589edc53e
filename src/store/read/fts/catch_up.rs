//! Bringing the index up to date with the database, incrementally.
//!
//! Each source table is copied in rowid order from a mark kept in the index; rows deleted from
//! the database come back as tombstones (schema v4) and are removed. SQLite gives a new row the
//! largest rowid plus one, so after the newest rows are deleted their rowids come back: a
//! tombstone therefore also lowers its table's mark to the largest rowid left after the delete
//! (schema v7; before, to just below the deleted rowid), and what follows is indexed again. A
//! tombstone of a row that is still there (a row scrub rewrote, or a rowid handed out again)
//! indexes the row as it is now. Every batch is one short read of the database and one write
//! transaction here.
//!
//! A source is a table and how its rows read as documents; adding one is one more entry in
//! [`SOURCES`] (a number below [`SOURCE_SLOTS`]) and a tombstone trigger in
//! `store/base/tombstones.sql` (a connection's, not the file's, since schema v14).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::lengths::Edit;
use super::schema::{LAST_PROJECT, PROJECT_SHIFT};
use super::{Index, create};
use crate::store::read::Reader;
use crate::store::read::doc::{self, Text};
use crate::store::rows::{Kind, handle};
use crate::store::sql::TOMBSTONES_SINCE;

/// Documents added and taken out in a batch, by project number.
/// How long a catch-up that deleted anything tries to empty the WAL while other readers hold it.
const DELETED_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What a batch changed: how many documents of each project (by number), and each document
/// added (its id and length) or taken out (its id), in order (see `lengths.rs`).
#[derive(Default)]
struct Changes {
    projects: std::collections::HashMap<i64, i64>,
    edits: Vec<Edit>,
}

impl Changes {
    fn note(&mut self, id: i64, tokens: Option<i64>) {
        *self.projects.entry(id >> PROJECT_SHIFT).or_default() += 1;
        self.edits.push((id, tokens));
    }
}

/// Told `(done, total)` after each batch; `total` is an estimate from rowids.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Document keys are `rowid * SOURCE_SLOTS + number`: room for this many sources. A document's
/// id is its key and its project's number (see `schema::PROJECT_SHIFT`).
const SOURCE_SLOTS: i64 = 8;

/// Rows of each source, and tombstones, per batch: larger batches build faster (fewer FTS5
/// segments to merge); each is still one short read of the database.
const BATCH: i64 = 2000;
/// Taking a document out costs about 20 times indexing one (FTS5's secure-delete rewrites the
/// index around each of its terms: measured 2 ms against 0.1 ms), so past one deleted row in
/// this many documents the index starts over instead (when there are more than a few).
const REBUILD_RATIO: i64 = 16;
const REBUILD_FLOOR: i64 = 256;

struct Source {
    /// The table in the database, as the tombstones name it.
    table: &'static str,
    /// Its documents' keys are `rowid * SOURCE_SLOTS + number`.
    number: i64,
    /// Rows after a rowid (?1), in rowid order, at most ?2; the first column is the rowid.
    batch: &'static str,
    read: fn(&Row) -> rusqlite::Result<Option<Doc>>,
}

const SOURCES: &[Source] = &[
    Source {
        table: "sessions",
        number: 0,
        batch: "SELECT rowid, session_id, project_dir, started_at FROM sessions
                 WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        read: session,
    },
    Source {
        table: "user_prompts",
        number: 1,
        batch: "SELECT p.rowid, p.id, p.session_id, s.project_dir, p.prompt_number,
                       p.created_at, p.prompt_text
                  FROM user_prompts p LEFT JOIN sessions s ON s.session_id = p.session_id
                 WHERE p.rowid > ?1 ORDER BY p.rowid LIMIT ?2",
        read: prompt,
    },
    Source {
        table: "pending_queue",
        number: 2,
        batch: "SELECT rowid, id, session_id, project_dir, prompt_number, created_at, kind,
                       tool_name, files_touched, raw_output
                  FROM pending_queue WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        read: queue_row,
    },
    Source {
        table: "memories",
        number: 3,
        batch: "SELECT rowid, id, session_id, project_dir, prompt_number, created_at, type,
                       title, subtitle, narrative, facts, concepts, files_read, files_modified
                  FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        read: memory,
    },
    Source {
        table: "summaries",
        number: 4,
        batch: "SELECT rowid, id, session_id, project_dir, prompt_number, created_at, request,
                       investigated, learned, completed, next_steps, notes, files_read,
                       files_edited
                  FROM summaries WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        read: summary,
    },
];

/// One row of `docs`, and its text when it is searchable.
struct Doc {
    kind: Kind,
    item_id: String,
    session_id: String,
    project_dir: Option<String>,
    tool_name: Option<String>,
    files: Option<String>,
    prompt_number: Option<i64>,
    created_at: String,
    title: String,
    text: Option<Text>,
}

impl Index {
    /// Copies what is new in the database and removes what was deleted from it. Returns how
    /// many rows it copied.
    pub fn catch_up(&self, main: &Reader, progress: Progress) -> Result<u64> {
        let tombstones = main.schema_version() >= TOMBSTONES_SINCE;
        if tombstones && self.up_to_date(main)? {
            return Ok(0);
        }
        self.widely(|| self.take_in(main, tombstones, progress))
    }

    /// What [`Index::catch_up`] does once it knows there is something new.
    fn take_in(&self, main: &Reader, tombstones: bool, progress: Progress) -> Result<u64> {
        // What a new index replaced was dropped with its pages zeroed; the WAL still has them.
        let mut deleted = self.follow(main, tombstones)?;
        let mut total = 0;
        for source in SOURCES {
            let last: i64 = main
                .conn()
                .query_row(
                    &format!("SELECT max(rowid) FROM {}", source.table),
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )?
                .unwrap_or(0);
            total += (last - mark(&self.conn, source.table)?).max(0) as u64;
        }
        let mut done = 0u64;
        loop {
            let (rows, more, removed, edits) =
                self.in_write(|conn| batch(conn, main, tombstones))?;
            self.lengths.edited(&edits);
            done += rows;
            deleted |= removed;
            if total > 0 {
                progress(done.min(total), total);
            }
            if !more {
                break;
            }
        }
        if deleted {
            // The WAL holds copies of the pages as they were, and the file holds them until a
            // checkpoint copies the new ones over: nothing deleted may stay. Another reader of
            // the index (a server's search, a maintenance process's catch-up) holds one back
            // for a moment: it is tried again for that long.
            super::truncate_wal(&self.conn, DELETED_WAIT);
        }
        Ok(done)
    }

    /// Whether the index has seen every row and tombstone of the database it was built from:
    /// one statement on each file, no write lock, where the catch-up that finds nothing to do
    /// read each source and each mark on its own (a tenth of a `search` of a few rare words).
    fn up_to_date(&self, main: &Reader) -> Result<bool> {
        let newest = |table: &str| format!("(SELECT coalesce(max(rowid), 0) FROM {table})");
        let seen = |name: &str| {
            format!("(SELECT coalesce(max(value), 0) FROM meta WHERE key = 'mark:{name}')")
        };
        let (tables, marks): (Vec<String>, Vec<String>) = SOURCES
            .iter()
            .map(|s| (newest(s.table), seen(s.table)))
            .unzip();
        let read = |conn: &Connection, sql: String| -> Result<(Option<String>, Vec<i64>)> {
            Ok(conn.query_row(&sql, [], |r| {
                let counts = (1..=SOURCES.len() + 1)
                    .map(|n| r.get(n))
                    .collect::<rusqlite::Result<_>>()?;
                Ok((r.get(0)?, counts))
            })?)
        };
        let (store_id, newest) = read(
            main.conn(),
            format!(
                "SELECT (SELECT value FROM meta WHERE key = 'store_id'),
                        (SELECT coalesce(max(seq), 0) FROM tombstones), {}",
                tables.join(", ")
            ),
        )?;
        let (built_for, seen) = read(
            &self.conn,
            format!(
                "SELECT (SELECT value FROM meta WHERE key = 'store_id'), {}, {}",
                seen("tombstones"),
                marks.join(", ")
            ),
        )?;
        // Tombstones first: a row deleted and its rowid handed out again is not new by rowid.
        Ok(built_for == Some(store_id.unwrap_or_default())
            && newest[0] == seen[0]
            && newest[1..].iter().zip(&seen[1..]).all(|(n, s)| n <= s))
    }

    /// Starts over when the index was built from another database (replaced, restored, or
    /// still at schema v1 then), when tombstones it has not seen were pruned, or when so many
    /// rows were deleted (a forgotten project, sessions pruned) that indexing anew costs less
    /// than taking each out. Returns whether it started over.
    fn follow(&self, main: &Reader, tombstones: bool) -> Result<bool> {
        let store_id = main.store_id()?;
        let newest: i64 = if tombstones {
            main.conn()
                .query_row("SELECT coalesce(max(seq), 0) FROM tombstones", [], |r| {
                    r.get(0)
                })?
        } else {
            0
        };
        self.in_write(|conn| {
            let built_for: Option<String> = conn
                .query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
                    r.get(0)
                })
                .optional()?;
            let seen = mark(conn, "tombstones")?;
            // The oldest tombstone not seen yet must come right after the last one seen.
            let missed = tombstones
                && (newest < seen
                    || newest > seen && {
                        let next: Option<i64> = main.conn().query_row(
                            "SELECT min(seq) FROM tombstones WHERE seq > ?1",
                            [seen],
                            |r| r.get(0),
                        )?;
                        next != Some(seen + 1)
                    });
            let many = newest - seen > REBUILD_FLOOR && {
                let docs: i64 = conn.query_row("SELECT COUNT(*) FROM docs", [], |r| r.get(0))?;
                (newest - seen) * REBUILD_RATIO > docs
            };
            let again =
                built_for.as_deref() != Some(store_id.as_deref().unwrap_or("")) || missed || many;
            if again {
                // A new index has nothing to delete: it starts after the newest tombstone.
                create(conn, store_id.as_deref(), newest)?;
            }
            Ok(again)
        })
    }
}

/// One batch: tombstones first, then new rows of each source. Returns the rows copied, whether
/// a source had more than a batch, whether anything was deleted, and what it changed.
fn batch(
    conn: &Connection,
    main: &Reader,
    tombstones: bool,
) -> Result<(u64, bool, bool, Vec<Edit>)> {
    let mut changes = Changes::default();
    let mut more = false;
    let mut removed = false;
    if tombstones {
        let seen = mark(conn, "tombstones")?;
        let stones: Vec<(i64, String, i64, Option<i64>)> = main
            .conn()
            .prepare_cached(
                "SELECT seq, source, row, below FROM tombstones WHERE seq > ?1
                  ORDER BY seq LIMIT ?2",
            )?
            .query_map(params![seen, BATCH], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (seq, table, row, below) in &stones {
            if let Some(source) = SOURCES.iter().find(|s| s.table == table) {
                let key = row * SOURCE_SLOTS + source.number;
                removed |= remove(conn, key, &mut changes)?;
                // Rowids above `below` may be handed out again: those are copied anew.
                conn.execute(
                    "UPDATE meta SET value = min(value, ?2) WHERE key = ?1",
                    params![format!("mark:{table}"), below.unwrap_or(row - 1)],
                )?;
                // A row still there was rewritten (scrub) or came back under its rowid: it is
                // indexed as it is now.
                if let Some(doc) = read_row(main, source, *row)? {
                    insert(conn, key, &doc, &mut changes)?;
                }
            }
            set_mark(conn, "tombstones", *seq)?;
        }
        more |= stones.len() as i64 == BATCH;
    }
    let mut copied = 0;
    for source in SOURCES {
        let from = mark(conn, source.table)?;
        let rows: Vec<(i64, Option<Doc>)> = main
            .conn()
            .prepare_cached(source.batch)?
            .query_map(params![from, BATCH], |r| Ok((r.get(0)?, (source.read)(r)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (rowid, doc) in &rows {
            let key = rowid * SOURCE_SLOTS + source.number;
            remove(conn, key, &mut changes)?;
            if let Some(doc) = doc {
                insert(conn, key, doc, &mut changes)?;
            }
        }
        if let Some((last, _)) = rows.last() {
            set_mark(conn, source.table, *last)?;
        }
        copied += rows.len() as u64;
        more |= rows.len() as i64 == BATCH;
    }
    // What counted the rows of these projects counts again (see `held.rs`).
    for (n, count) in changes.projects {
        conn.prepare_cached("UPDATE projects SET changes = changes + ?2 WHERE n = ?1")?
            .execute([n, count])?;
    }
    Ok((copied, more, removed, changes.edits))
}

/// The row `rowid` of `source` as a document, if it is there and searchable.
fn read_row(main: &Reader, source: &Source, rowid: i64) -> Result<Option<Doc>> {
    Ok(main
        .conn()
        .prepare_cached(source.batch)?
        .query_row(params![rowid - 1, 1], |r| {
            Ok((r.get::<_, i64>(0)? == rowid)
                .then(|| (source.read)(r))
                .transpose()?
                .flatten())
        })
        .optional()?
        .flatten())
}

fn mark(conn: &Connection, name: &str) -> Result<i64> {
    Ok(conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [format!("mark:{name}")],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

fn set_mark(conn: &Connection, name: &str, value: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![format!("mark:{name}"), value],
    )?;
    Ok(())
}

/// Removes the document of `key`, counting the change in `changes` (by project number); returns
/// whether there was one.
fn remove(conn: &Connection, key: i64, changes: &mut Changes) -> Result<bool> {
    let id: Option<i64> = conn
        .prepare_cached("DELETE FROM docs WHERE key = ?1 RETURNING id")?
        .query_row([key], |r| r.get(0))
        .optional()?;
    if let Some(id) = id {
        conn.prepare_cached("DELETE FROM fts WHERE rowid = ?1")?
            .execute([id])?;
        changes.note(id, None);
    }
    Ok(id.is_some())
}

/// The number of the project at `dir` in the index, numbered now if it has none; 0 for none.
fn project_number(conn: &Connection, dir: Option<&str>) -> Result<i64> {
    let Some(dir) = dir else {
        return Ok(0);
    };
    match super::schema::project_number(conn, dir)? {
        Some(n) => Ok(n),
        None => Ok(conn
            .prepare_cached("INSERT INTO projects (dir) VALUES (?1) RETURNING n")?
            .query_row([dir], |r| r.get(0))?),
    }
}

/// The id of the document of `key` in the project numbered `n`, when both fit in one.
fn doc_id(key: i64, n: i64) -> Result<i64> {
    anyhow::ensure!(
        key >> PROJECT_SHIFT == 0 && n <= LAST_PROJECT,
        "the search index has no room for document {key} of project number {n}"
    );
    Ok(n << PROJECT_SHIFT | key)
}

/// Indexes `doc` under `key`, counting the change in `changes`.
fn insert(conn: &Connection, key: i64, doc: &Doc, changes: &mut Changes) -> Result<()> {
    let n = project_number(conn, doc.project_dir.as_deref())?;
    let id = doc_id(key, n)?;
    let mut tokens = 0;
    if let Some(text) = &doc.text {
        conn.prepare_cached("INSERT INTO fts (rowid, head, body) VALUES (?1, ?2, ?3)")?
            .execute(params![id, text.head, text.body])?;
        tokens = super::bm25::tokens(conn, id)?;
    }
    changes.note(id, Some(tokens));
    conn.prepare_cached(
        "INSERT INTO docs (id, key, kind, item_id, handle, session_id, project_dir, tool_name,
                           files, prompt_number, title, created_at, digest, tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        id,
        key,
        doc.kind.as_str(),
        doc.item_id,
        handle(&doc.item_id),
        doc.session_id,
        doc.project_dir,
        doc.tool_name,
        doc.files,
        doc.prompt_number,
        doc.title,
        doc.created_at,
        digest(doc),
        tokens
    ])?;
    Ok(())
}

/// A hash of what a document is and says: two with the same are one search result (the same
/// command with the same output, run again). FNV-1a, stable across builds.
fn digest(doc: &Doc) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let (head, body) = doc
        .text
        .as_ref()
        .map_or(("", ""), |t| (t.head.as_str(), t.body.as_str()));
    for part in [
        doc.kind.as_str(),
        doc.tool_name.as_deref().unwrap_or(""),
        head,
        body,
    ] {
        for byte in part.bytes().chain([0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash as i64
}

fn session(r: &Row) -> rusqlite::Result<Option<Doc>> {
    let session_id: String = r.get("session_id")?;
    Ok(Some(Doc {
        kind: Kind::Session,
        item_id: session_id.clone(),
        session_id,
        project_dir: r.get("project_dir")?,
        tool_name: None,
        files: None,
        prompt_number: None,
        created_at: r.get("started_at")?,
        title: String::new(),
        text: None,
    }))
}

fn prompt(r: &Row) -> rusqlite::Result<Option<Doc>> {
    let text = doc::prose(&r.get::<_, String>("prompt_text")?);
    Ok(Some(Doc {
        kind: Kind::Prompt,
        item_id: r.get("id")?,
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        tool_name: None,
        files: None,
        prompt_number: r.get("prompt_number")?,
        created_at: r.get("created_at")?,
        title: text.title.clone(),
        text: Some(text),
    }))
}

fn queue_row(r: &Row) -> rusqlite::Result<Option<Doc>> {
    let raw: String = r.get("raw_output")?;
    let tool_name: Option<String> = r.get("tool_name")?;
    let (kind, text, files) = if r.get::<_, String>("kind")? == "summary" {
        let Some(message) = doc::message(&raw) else {
            return Ok(None);
        };
        (Kind::Message, doc::prose(&message), None)
    } else {
        let files = files_column(&json_list(r, "files_touched")?);
        let text = doc::tool_call(tool_name.as_deref().unwrap_or(""), &raw);
        (Kind::Observation, text, files)
    };
    Ok(Some(Doc {
        kind,
        item_id: r.get("id")?,
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        tool_name,
        files,
        prompt_number: r.get("prompt_number")?,
        created_at: r.get("created_at")?,
        title: text.title.clone(),
        text: Some(text),
    }))
}

fn memory(r: &Row) -> rusqlite::Result<Option<Doc>> {
    let list = |column: &str| json_list(r, column);
    let kind: String = r.get("type")?;
    let title: String = r.get("title")?;
    let subtitle: Option<String> = r.get("subtitle")?;
    let files = distinct([list("files_read")?, list("files_modified")?]);
    let mut body = vec![r.get::<_, String>("narrative")?];
    body.extend(subtitle);
    body.extend(list("facts")?);
    body.extend(list("concepts")?);
    body.extend(files.iter().cloned());
    let text = doc::prose_with(&format!("{kind}: {title}"), &body.join("\n"));
    compressed(r, Kind::Memory, &files, doc::prose(&title).title, text)
}

fn summary(r: &Row) -> rusqlite::Result<Option<Doc>> {
    let list = |column: &str| json_list(r, column);
    let request: String = r.get("request")?;
    let mut body: Vec<String> = Vec::new();
    for column in ["investigated", "learned", "completed", "next_steps"] {
        body.push(r.get(column)?);
    }
    body.extend(r.get::<_, Option<String>>("notes")?);
    let files = distinct([list("files_read")?, list("files_edited")?]);
    let text = doc::prose_with(&request, &body.join("\n"));
    compressed(r, Kind::Summary, &files, text.title.clone(), text)
}

/// A memory's or a summary's document: the columns both tables have, and its text.
fn compressed(
    r: &Row,
    kind: Kind,
    files: &[String],
    title: String,
    text: Text,
) -> rusqlite::Result<Option<Doc>> {
    Ok(Some(Doc {
        kind,
        item_id: r.get("id")?,
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        tool_name: None,
        files: files_column(files),
        prompt_number: r.get("prompt_number")?,
        created_at: r.get("created_at")?,
        title,
        text: Some(text),
    }))
}

fn distinct(lists: [Vec<String>; 2]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in lists.into_iter().flatten() {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// A JSON array of strings in a column (empty when it is not one).
fn json_list(r: &Row, column: &str) -> rusqlite::Result<Vec<String>> {
    Ok(serde_json::from_str(&r.get::<_, String>(column)?).unwrap_or_default())
}

/// The `files` column of `docs`: each path followed by a newline, after a newline, so that a
/// search for a path or its end finds it whole.
fn files_column(files: &[String]) -> Option<String> {
    (!files.is_empty()).then(|| format!("\n{}\n", files.join("\n")))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::config::Config;
    use crate::store::write::Store;

    /// Regression: deleting an old row lowered the index's mark to just below it, so the next
    /// search copied again every row after it (forgetting or pruning the oldest session meant
    /// re-indexing almost everything). Now only rowids SQLite may hand out again are copied.
    #[test]
    fn deleting_an_old_row_copies_nothing_again() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let store = Store::open(&config, Instant::now()).unwrap();
        store
            .conn()
            .execute_batch(
                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 50)
                 INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                     raw_output, created_at, updated_at)
                 SELECT printf('q%03d', i), 's', 't' || i, 'PostToolUse', 'Bash',
                        '{\"tool_input\":{\"command\":\"echo ' || i || '\"}}', '2026', '2026'
                   FROM k;",
            )
            .unwrap();
        let reader = Reader::open(&config).unwrap().unwrap();
        let index = Index::open(&config).unwrap();
        let catch_up = || index.catch_up(&reader, &mut |_, _| {}).unwrap();
        assert_eq!(catch_up(), 50);

        store
            .conn()
            .execute("DELETE FROM pending_queue WHERE id IN ('q001', 'q002')", [])
            .unwrap();
        assert_eq!(
            catch_up(),
            0,
            "the rows after the deleted ones stay indexed"
        );
        assert_eq!(index.resolve("q001").unwrap(), []);
        assert_eq!(index.resolve("q003").unwrap().len(), 1);

        // The newest rows deleted: their rowids come back, and are indexed anew.
        store
            .conn()
            .execute_batch(
                "DELETE FROM pending_queue WHERE id IN ('q049', 'q050');
                 INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                     raw_output, created_at, updated_at)
                 VALUES ('again', 's', 'again', 'PostToolUse', 'Bash', '{}', '2026', '2026');",
            )
            .unwrap();
        assert_eq!(catch_up(), 1);
        assert_eq!(index.resolve("again").unwrap().len(), 1);
        assert_eq!(index.resolve("q050").unwrap(), []);
    }

    /// The one-statement check a search makes first says the index is up to date only when
    /// the catch-up has nothing to do: not after a new row, a deleted one, or with an index
    /// made for another database.
    #[test]
    fn up_to_date_only_when_nothing_is_new() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let store = Store::open(&config, Instant::now()).unwrap();
        let insert = |id: &str| {
            store
                .conn()
                .execute(
                    "INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                         raw_output, created_at, updated_at)
                     VALUES (?1, 's', ?1, 'PostToolUse', 'Bash', '{}', '2026', '2026')",
                    [id],
                )
                .unwrap();
        };
        insert("q1");
        let reader = Reader::open(&config).unwrap().unwrap();
        let index = Index::open(&config).unwrap();
        assert!(!index.up_to_date(&reader).unwrap(), "a new index");
        assert_eq!(index.catch_up(&reader, &mut |_, _| {}).unwrap(), 1);
        assert!(index.up_to_date(&reader).unwrap());

        insert("q2");
        assert!(!index.up_to_date(&reader).unwrap(), "a new row");
        assert_eq!(index.catch_up(&reader, &mut |_, _| {}).unwrap(), 1);
        assert!(index.up_to_date(&reader).unwrap());

        store
            .conn()
            .execute("DELETE FROM pending_queue WHERE id = 'q1'", [])
            .unwrap();
        assert!(!index.up_to_date(&reader).unwrap(), "a deleted row");
        index.catch_up(&reader, &mut |_, _| {}).unwrap();
        assert!(index.up_to_date(&reader).unwrap());
        assert_eq!(index.resolve("q1").unwrap(), []);

        index
            .conn
            .execute(
                "UPDATE meta SET value = 'another' WHERE key = 'store_id'",
                [],
            )
            .unwrap();
        assert!(
            !index.up_to_date(&reader).unwrap(),
            "another database's index"
        );
        index.catch_up(&reader, &mut |_, _| {}).unwrap();
        assert_eq!(index.resolve("q2").unwrap().len(), 1);
        assert!(index.up_to_date(&reader).unwrap());
    }

    /// Taking thousands of documents out one by one took seconds (2 ms each); past a share of
    /// the index it is indexed anew instead, and what was deleted is in no page of the file.
    #[test]
    fn deleting_a_large_share_indexes_anew_and_leaves_no_trace() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let store = Store::open(&config, Instant::now()).unwrap();
        store
            .conn()
            .execute_batch(
                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
                 INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                     raw_output, created_at, updated_at)
                 SELECT printf('q%04d', i), 's', 't' || i, 'PostToolUse', 'Bash',
                        '{\"tool_input\":{\"command\":\"echo w' || i || 'zyx\"}}', '2026', '2026'
                   FROM k;",
            )
            .unwrap();
        let reader = Reader::open(&config).unwrap().unwrap();
        let index = Index::open(&config).unwrap();
        let catch_up = || index.catch_up(&reader, &mut |_, _| {}).unwrap();
        assert_eq!(catch_up(), 1000);
        let holds = |word: &str| {
            ["", "-wal"].iter().any(|suffix| {
                let mut path = config.index_path().into_os_string();
                path.push(suffix);
                let bytes = std::fs::read(path).unwrap_or_default();
                bytes.windows(word.len()).any(|w| w == word.as_bytes())
            })
        };
        assert!(holds("w17zyx"));

        store
            .conn()
            .execute("DELETE FROM pending_queue WHERE id < 'q0300'", [])
            .unwrap();
        assert_eq!(catch_up(), 701, "indexed anew");
        assert_eq!(index.resolve("q0017").unwrap(), []);
        assert_eq!(index.resolve("q0300").unwrap().len(), 1);
        assert!(!holds("w17zyx"));
        assert!(holds("w300zyx"));
    }
}
