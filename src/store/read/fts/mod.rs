//! The search index: an SQLite FTS5 file beside the database, derived from it and written only
//! by the read commands.
//!
//! Indexing as the hooks write would cost every tool call (measured: about 0.4x of an empty
//! process more for a 1 KB capture, over a budget with almost no room), so the index is
//! brought up to date when it is read: each read command first copies what is new, in short
//! batches by rowid per source table, and removes what the database's tombstones (schema v4)
//! say was deleted. The database is only
//! ever read (see `read/mod.rs`); the index file has its own lock, so two readers catching it up at once
//! wait for each other, never for a hook. The file is a cache: deleting it means a rebuild.
//!
//! A deleted row leaves no trace here: FTS5's secure-delete takes its terms out of the index at
//! once, `secure_delete` zeroes the freed pages, and the WAL is truncated after a catch-up that
//! deleted anything.

mod auxiliary;
mod best;
mod bm25;
mod catch_up;
mod common;
mod context;
mod doclists;
mod held;
mod lengths;
mod marks;
mod merge;
pub mod notes;
mod page;
mod query;
pub mod rank;
pub mod recall;
mod schema;
mod snippet;
pub mod stems;
mod stretches;
mod suggest;
pub mod team;
mod team_recall;
mod tokenizer;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::config::Config;
use crate::fsutil;
use crate::store::base::files::{READ_CACHE, open_file_read_only};
use crate::store::base::sql_count;
use crate::store::rows::Kind;

pub use query::{Query, parse as parse_query, unquote};
pub use schema::Item;
use schema::{APPLICATION_ID, FORMAT, ITEM_COLUMNS, ITEM_COUNT, SCHEMA, item};

/// Another reader's catch-up batch is short; a first build by another reader can take a while.
const BUSY_WAIT: Duration = Duration::from_secs(120);
/// SQLite's own page cache, which writing the index and a server that searches it again and
/// again keep; a command reads it through [`READ_CACHE`].
const WIDE_CACHE: &str = "PRAGMA cache_size = -2000";
/// bm25 weights of the columns: what names an item counts more than what it answered.
const WEIGHTS: &str = "2.0, 1.0";

/// A search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub item: Item,
    /// A few words around the match, on one line.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched.
    pub matches: Vec<(usize, usize)>,
    /// Its bm25 (lower is better): how well its words match, whatever it is. Results are
    /// ranked by more than this (see `rank.rs`).
    pub score: f64,
    /// How many items with the same text it stands for (the same command, the same output).
    pub count: usize,
    /// Where it stands in the order of its search's results.
    pub standing: rank::Standing,
}

/// What to search for and where.
#[derive(Debug, Clone, Default)]
pub struct Search {
    /// From [`parse_query`].
    pub query: Query,
    pub project: Option<String>,
    pub session: Option<String>,
    /// ISO-8601 UTC bounds on when the item was captured: `since <= t < until`.
    pub since: Option<String>,
    pub until: Option<String>,
    pub tool: Option<String>,
    /// A path, or the end of one (`src/merge.rs` finds `/p/src/merge.rs`).
    pub file: Option<String>,
    pub kind: Option<Kind>,
    /// Only these sessions (a JSON array of ids): an agent's (`--agent`).
    pub sessions: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

/// What `status` says of the index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexInfo {
    pub items: i64,
}

pub struct Index {
    conn: Connection,
    /// How many rows hold the phrases searched for, kept between searches (see `held.rs`).
    held: held::Held,
    /// The lengths of the documents searched, kept once the index is told it will be searched
    /// again (see `lengths.rs`).
    lengths: lengths::Lengths,
}

/// The projects a search reads: the one numbered so, every one, or one the index has no
/// document of.
#[derive(Debug, Clone, Copy)]
enum Scope {
    One(i64),
    All,
    Unknown,
}

/// The conditions of `search` (`file`: whether it has a file filter) on the rows of `fts` and
/// `docs d`, in the query's parameters: the range of ids of the projects it reads (see
/// [`ids_of`]) in 10 and 11, which FTS5 reads alone of each word's rows, then those of its
/// filters that are set: project, session, since, until, tool, file (see [`file_pattern`]),
/// kind and sessions, in 2 to 9; and whether any of them reads `docs`. A filter that is not set
/// costs nothing (as `?2 IS NULL OR`, it was a tenth of a search of two common words); nor does
/// the project's, when the range is its documents alone.
fn filters(search: &Search, scope: Scope, file: bool) -> (String, bool) {
    let project_is_range = matches!(scope, Scope::One(n) if n > 0);
    let mut sql = String::from("AND fts.rowid BETWEEN ?10 AND ?11");
    let mut on_docs = false;
    for (set, condition) in [
        (
            search.project.is_some() && !project_is_range,
            "d.project_dir = ?2",
        ),
        (search.session.is_some(), "d.session_id = ?3"),
        (search.since.is_some(), "d.created_at >= ?4"),
        (search.until.is_some(), "d.created_at < ?5"),
        (search.tool.is_some(), "d.tool_name = ?6 COLLATE NOCASE"),
        (file, "instr(d.files, ?7) > 0"),
        (search.kind.is_some(), "d.kind = ?8"),
        (
            search.sessions.is_some(),
            "d.session_id IN (SELECT value FROM json_each(?9))",
        ),
    ] {
        if set {
            sql.push_str(" AND ");
            sql.push_str(condition);
            on_docs = true;
        }
    }
    (sql, on_docs)
}

/// The first and last document ids of `scope` (see `schema::PROJECT_SHIFT`).
fn ids_of(scope: Scope) -> (i64, i64) {
    match scope {
        Scope::One(n) => schema::project_range(n),
        Scope::All => (0, i64::MAX),
        Scope::Unknown => (1, 0),
    }
}

/// What the ranking weighs of a row besides its bm25, from its `kind`, `created_at`, `digest`
/// and `session_id` in `docs`, read from `row` in that order from column `at` on: its age in
/// days (0 for a time ahead of `now`), to the millisecond, and where it is (see `context.rs`).
fn weighs(
    row: &rusqlite::Row<'_>,
    at: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> rusqlite::Result<best::Weighs> {
    let created_at: String = row.get(at + 1)?;
    let age_days = crate::clock::parse_time(&created_at).map_or(0.0, |t| {
        (now - t).num_milliseconds().max(0) as f64 / 86_400_000.0
    });
    let kind = row.get_ref(at)?.as_str().ok().and_then(Kind::parse);
    Ok(best::Weighs {
        kind: kind.unwrap_or(Kind::Observation),
        age_days,
        digest: row.get(at + 2)?,
        place: rank::Place {
            session: row.get(at + 3)?,
            created_at,
        },
    })
}

/// The values of a search's parameters, numbered as [`filters`] numbers them.
struct Bound<'a> {
    search: &'a Search,
    file: Option<&'a str>,
    kind: Option<&'static str>,
    ids: (i64, i64),
}

impl<'a> Bound<'a> {
    fn of(search: &'a Search, file: Option<&'a str>, scope: Scope) -> Bound<'a> {
        Bound {
            search,
            file,
            kind: search.kind.map(Kind::as_str),
            ids: ids_of(scope),
        }
    }

    fn values(&self) -> [&dyn rusqlite::ToSql; 11] {
        let s = self.search;
        [
            &s.query.expression,
            &s.project,
            &s.session,
            &s.since,
            &s.until,
            &s.tool,
            &self.file,
            &self.kind,
            &s.sessions,
            &self.ids.0,
            &self.ids.1,
        ]
    }
}

/// The file filter of `search` as the pattern its items' files hold: a whole path, or a path's
/// end from a `/`.
fn file_pattern(search: &Search) -> Option<String> {
    search.file.as_deref().map(|f| {
        let f = f.trim_start_matches("./");
        if f.starts_with('/') {
            format!("\n{f}\n")
        } else {
            format!("/{f}\n")
        }
    })
}

/// The connection's settings, the file turned to WAL on first use (by one of two readers that
/// create the index at once, then by the other: see `store::write::wait::past_deadlock`).
fn set_up(conn: &Connection) -> rusqlite::Result<()> {
    crate::store::base::wait::past_deadlock(std::time::Instant::now() + BUSY_WAIT, || {
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;",
        )?;
        conn.execute_batch(READ_CACHE)
    })
}

impl Index {
    /// Opens the index file, creating it (mode 0600) or rebuilding it when it is not one of
    /// ours in this layout. A damaged file is deleted and made anew: it is only a cache.
    pub fn open(config: &Config) -> Result<Index> {
        let path = config.index_path();
        match Index::open_at(&path) {
            Ok(index) => Ok(index),
            Err(err) if is_damaged(&err) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut file = path.clone().into_os_string();
                    file.push(suffix);
                    let _ = std::fs::remove_file(file);
                }
                Index::open_at(&path)
            }
            Err(err) => Err(err),
        }
        .with_context(|| format!("cannot open the search index {}", path.display()))
    }

    fn open_at(path: &Path) -> Result<Index> {
        if let Err(err) = fsutil::create_private(path)
            && err.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(err.into());
        }
        // Ours: a regular file of the user's (SQLite would follow a link, block on a FIFO).
        crate::store::base::files::check_file(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_WAIT)?;
        // The first statements read the file: a damaged one fails here, recognisably.
        set_up(&conn)?;
        tokenizer::register(&conn)?;
        rank::register(&conn)?;
        let index = Index {
            conn,
            held: held::Held::default(),
            lengths: lengths::Lengths::default(),
        };
        index.in_write(|conn| {
            let (format, app_id): (i64, i64) = conn.query_row(
                "SELECT (SELECT user_version FROM pragma_user_version),
                        (SELECT application_id FROM pragma_application_id)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            if format != FORMAT || app_id != APPLICATION_ID {
                create(conn, None, 0)?;
            }
            Ok(())
        })?;
        Ok(index)
    }

    /// Runs `body` in one IMMEDIATE transaction of the index file: the lock two readers that
    /// catch up at once take turns on.
    fn in_write<T>(&self, body: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match body(&self.conn) {
            Ok(value) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(value)
            }
            Err(err) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(err)
            }
        }
    }

    /// Tells the index it will be searched again and again (by a server that keeps it): it
    /// keeps the lengths of the documents it searches (see `lengths.rs`), and SQLite keeps the
    /// pages it read for the next search.
    pub fn keep_lengths(&self) -> Result<()> {
        if !self.lengths.kept() {
            self.conn.execute_batch(WIDE_CACHE)?;
            self.lengths.keep();
        }
        Ok(())
    }

    /// Runs `work`, which writes the index, with SQLite's default page cache.
    fn widely<T>(&self, work: impl FnOnce() -> Result<T>) -> Result<T> {
        if self.lengths.kept() {
            return work();
        }
        self.conn.execute_batch(WIDE_CACHE)?;
        let done = work();
        let narrowed = self.conn.execute_batch(READ_CACHE);
        let done = done?;
        narrowed?;
        Ok(done)
    }

    /// Ranked results (see `rank.rs`): the best first, the same texts made one. One query
    /// in the index finds the rows that match and their bm25, the filters its columns; the
    /// best of them are ranked, and only the page of results is read whole and highlighted.
    /// The entry point of every search: the command, the MCP tool, the prompt hook's recall.
    pub fn search(&self, search: &Search) -> Result<Vec<Hit>> {
        // One snapshot for all it reads: the query, the kept lengths' stamp (a row rewritten
        // by another process's catch-up between them would be scored with its old length), the
        // contexts and the page; and the file's locks taken once, not around each of the
        // hundred statements a page of twenty results reads.
        let snapshot = self.conn.unchecked_transaction()?;
        let hits = self.search_in(search)?;
        snapshot.commit()?;
        Ok(hits)
    }

    /// [`Index::search`] within its read transaction.
    fn search_in(&self, search: &Search) -> Result<Vec<Hit>> {
        let file = file_pattern(search);
        // Ranking looks past bm25's order, but not at every row of a word in most of them.
        let wanted = search.offset.saturating_add(search.limit);
        let depth = wanted.saturating_mul(4).max(CANDIDATES);
        // The counts bm25 made for the candidates weigh the terms (see `bm25.rs`).
        let _ = bm25::take_counts();
        let scope = self.scope(search.project.as_deref())?;
        let texts = &search.query.texts;
        let counted = match scope {
            Scope::One(n) => Some(self.held.counts(&self.conn, texts, Some(n))?),
            Scope::All => Some(self.held.counts(&self.conn, texts, None)?),
            // Nothing to count: the search finds nothing.
            Scope::Unknown => None,
        };
        if let Some(held::Counted::Known(held)) = &counted {
            bm25::know(Some(held.clone()));
        }
        let first = self.candidates(search, scope, file.as_deref(), depth);
        bm25::know(None);
        let first = first?;
        let counts = bm25::take_counts();
        if let (Some(held::Counted::Unknown(whole)), Some(counts)) = (&counted, &counts) {
            self.held.learn(texts, &counts.held, *whole);
        }
        let weights = counts
            .map(|counts| rank::weights(&search.query, &counts))
            .unwrap_or_default();
        let ranked = rank::rank(&search.query, &weights, first);
        let contexts = self.contexts(&ranked)?;
        let ranked = rank::in_context(ranked, &contexts);
        let page: Vec<&rank::Ranked> = ranked
            .iter()
            .skip(search.offset)
            .take(search.limit)
            .collect();
        self.page(&search.query, &page)
    }

    /// Whether any row matches the query of `search` within its filters, whatever its page:
    /// the first found answers, nothing is ranked (a search that found nothing on a page past
    /// the first, or a quoted phrase beside others, asks whether anything holds it at all).
    pub fn matches(&self, search: &Search) -> Result<bool> {
        let scope = self.scope(search.project.as_deref())?;
        let file = file_pattern(search);
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM fts JOIN docs d ON d.id = fts.rowid
              WHERE fts MATCH ?1 {})",
            filters(search, scope, file.is_some()).0
        ))?;
        let bound = Bound::of(search, file.as_deref(), scope);
        Ok(stmt.query_row(&bound.values()[..], |r| r.get(0))?)
    }

    /// The rows that match the query of `search` within its filters (`file` made a pattern),
    /// the best `depth` by bm25 (see `best.rs`), then what the ranking weighs of each.
    fn candidates(
        &self,
        search: &Search,
        scope: Scope,
        file: Option<&str>,
        depth: usize,
    ) -> Result<Vec<rank::Candidate>> {
        let query = &search.query;
        let (conditions, on_docs) = filters(search, scope, file.is_some());
        let lengths = match on_docs {
            false => self.lengths.of(&self.conn, ids_of(scope))?,
            true => None,
        };
        // Joined to `docs` for the lengths or a filter, the query reads what the ranking weighs
        // of a row as well, for the rows kept: looked up after, each was a second seek.
        let joined = lengths.is_none();
        let sql = match joined {
            false => format!(
                "SELECT fts.rowid, cmem_bm25(fts, {WEIGHTS}) FROM fts
                  WHERE fts MATCH ?1 {conditions}"
            ),
            true => format!(
                "SELECT fts.rowid, cmem_bm25(fts, {WEIGHTS}, d.tokens), d.kind, d.created_at,
                        d.digest, d.session_id
                   FROM fts JOIN docs d ON d.id = fts.rowid
                  WHERE fts MATCH ?1 {conditions}"
            ),
        };
        let bound = Bound::of(search, file, scope);
        // Which terms a row holds matters only when there are several.
        let several = query.phrases.len() > 1;
        let mut best = best::Best::new(depth);
        let now = chrono::Utc::now();
        bm25::lengths(lengths);
        let read = (|| -> Result<()> {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(&bound.values()[..])?;
            while let Some(r) = rows.next()? {
                let mut row = best::Scored {
                    id: r.get(0)?,
                    bm25: r.get(1)?,
                    matched: 1,
                    weighs: None,
                };
                if !best.takes(&row) {
                    continue;
                }
                if several {
                    row.matched = bm25::matched();
                }
                if joined {
                    row.weighs = Some(weighs(r, 2, now)?);
                }
                best.offer(row);
            }
            Ok(())
        })();
        bm25::lengths(None);
        read?;
        self.weighed(best.into_sorted(), now)
    }

    /// The candidates that `rows` are, with what the ranking weighs besides bm25, read from
    /// `docs` for the rows the query did not read it of (a row taken out since the query is
    /// left out).
    fn weighed(
        &self,
        rows: Vec<best::Scored>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<rank::Candidate>> {
        let unread: Vec<i64> = rows
            .iter()
            .filter(|r| r.weighs.is_none())
            .map(|r| r.id)
            .collect();
        let mut read: HashMap<i64, best::Weighs> = HashMap::new();
        if !unread.is_empty() {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, kind, created_at, digest, session_id FROM docs
                  WHERE id IN (SELECT value FROM json_each(?1))",
            )?;
            let mut found = stmt.query([serde_json::to_string(&unread)?])?;
            while let Some(r) = found.next()? {
                read.insert(r.get(0)?, weighs(r, 1, now)?);
            }
        }
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let weighs = row.weighs.or_else(|| read.remove(&row.id))?;
                Some(rank::Candidate {
                    id: row.id,
                    bm25: row.bm25,
                    matched: row.matched,
                    kind: weighs.kind,
                    age_days: weighs.age_days,
                    digest: weighs.digest,
                    place: Some(weighs.place),
                })
            })
            .collect())
    }

    /// The projects a search of the project at `dir` (of every one: `None`) reads.
    fn scope(&self, dir: Option<&str>) -> Result<Scope> {
        let Some(dir) = dir else {
            return Ok(Scope::All);
        };
        let n = schema::project_number(&self.conn, dir)?;
        Ok(n.map_or(Scope::Unknown, Scope::One))
    }

    /// Every item whose id, or the random end of it that short ids show, starts with `prefix`;
    /// only the item itself when `prefix` is a whole id.
    pub fn resolve(&self, prefix: &str) -> Result<Vec<Item>> {
        let mut stmt = self.conn.prepare_cached(&resolve_sql())?;
        let found: Vec<Item> = stmt
            .query_map([prefix], item)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(match found.iter().find(|i| i.id == prefix) {
            Some(exact) => vec![exact.clone()],
            None => found,
        })
    }

    /// The item `id` with up to `before` items before it and `after` after it in its session,
    /// in time order; `None` when it is not indexed. A session's own item is its start.
    pub fn around(&self, id: &str, before: usize, after: usize) -> Result<Option<Vec<Item>>> {
        let Some(anchor) = self
            .conn
            .query_row(
                &format!("SELECT {ITEM_COLUMNS}, d.id FROM docs d WHERE d.item_id = ?1"),
                [id],
                |r| Ok((item(r)?, r.get::<_, i64>(ITEM_COUNT)?)),
            )
            .optional()?
        else {
            return Ok(None);
        };
        let (anchor, doc) = anchor;
        let side = |op: &str, order: &str, limit: usize| -> Result<Vec<Item>> {
            let mut stmt = self.conn.prepare_cached(&side_sql(op, order))?;
            let rows = stmt.query_map(
                params![anchor.session_id, anchor.created_at, doc, sql_count(limit)],
                item,
            )?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let mut items = side("<", "DESC", before)?;
        items.reverse();
        let later = side(">", "ASC", after)?;
        items.push(anchor);
        items.extend(later);
        Ok(Some(items))
    }

    /// Rebuilds the index file (see `store::rebuild`: the old copies of what a catch-up took out
    /// stay in its pages otherwise), its temporary copy made in `temp_dir`, then truncates its
    /// WAL, trying again until `wait` has passed while a reader holds it. Returns whether the
    /// WAL is empty.
    pub fn rebuild(&self, temp_dir: &Path, wait: Duration) -> Result<bool> {
        self.widely(|| {
            crate::store::base::rebuilding::vacuum(&self.conn, temp_dir, "VACUUM")
                .context("cannot rebuild the search index")
        })?;
        Ok(truncate_wal(&self.conn, wait))
    }

    /// The newest tombstone of the database `main` that the index file has seen; `None` when
    /// there is no index, or one that will rebuild anyway (of another database, damaged).
    /// Reads only.
    pub fn tombstones_seen(config: &Config, main: &Connection) -> Result<Option<i64>> {
        let path = config.index_path();
        if !path.exists() {
            return Ok(None);
        }
        crate::store::base::files::check_file(&path)?;
        let value = |conn: &Connection, key: &str| -> Option<rusqlite::types::Value> {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .ok()
        };
        let Ok(index) = open_file_read_only(&path) else {
            return Ok(None);
        };
        if value(&index, "store_id") != value(main, "store_id") {
            return Ok(None);
        }
        Ok(match value(&index, "mark:tombstones") {
            Some(rusqlite::types::Value::Integer(seen)) => Some(seen),
            _ => None,
        })
    }

    /// What `status` says about the index file, without creating or changing it.
    pub fn info_at(config: &Config) -> Result<Option<IndexInfo>> {
        let path = config.index_path();
        if !path.exists() {
            return Ok(None);
        }
        crate::store::base::files::check_file(&path)?;
        let conn = open_file_read_only(&path)?;
        Ok(Some(conn.query_row(
            "SELECT COUNT(*) FROM docs WHERE kind <> 'session'",
            [],
            |r| Ok(IndexInfo { items: r.get(0)? }),
        )?))
    }
}

/// The rows of a search ranked beyond bm25's order, at least (more for a deep page).
const CANDIDATES: usize = 1000;

/// The most items [`Index::resolve`] returns for a prefix.
pub const RESOLVE_LIMIT: usize = 50;

/// Truncates the WAL of the index `conn` is open on, trying again until `wait` has passed while
/// a reader holds it (each try gives up at once: readers of the index are short). Returns
/// whether it is empty. The connection waits for locks as before after.
fn truncate_wal(conn: &Connection, wait: Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    let _ = conn.busy_timeout(Duration::ZERO);
    let clean = loop {
        let done = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                r.get::<_, i64>(0)
            })
            .is_ok_and(|busy| busy == 0);
        if done || std::time::Instant::now() >= deadline {
            break done;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = conn.busy_timeout(BUSY_WAIT);
    clean
}

/// Truncates the WAL of the index file, if there is one, without waiting: what the maintenance
/// process retries when a reader kept a rebuild from emptying it.
pub fn truncate_wal_of(config: &Config) -> bool {
    let path = config.index_path();
    if !path.exists() {
        return true;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    crate::store::base::files::check_file(&path).is_ok()
        && Connection::open_with_flags(&path, flags)
            .is_ok_and(|conn| truncate_wal(&conn, Duration::ZERO))
}

/// Items whose handle or id starts with ?1 (`char(1114111)` sorts after any character).
fn resolve_sql() -> String {
    format!(
        "SELECT {ITEM_COLUMNS} FROM docs d
          WHERE (d.handle >= ?1 AND d.handle < ?1 || char(1114111))
             OR (d.item_id >= ?1 AND d.item_id < ?1 || char(1114111))
          ORDER BY d.created_at LIMIT {RESOLVE_LIMIT}"
    )
}

/// A session's (?1) items on one side (`op`: `<` or `>`) of the one at (?2 time, ?3 doc id),
/// nearest first, at most ?4.
fn side_sql(op: &str, order: &str) -> String {
    format!(
        "SELECT {ITEM_COLUMNS} FROM docs d
          WHERE d.session_id = ?1 AND d.kind <> 'session'
            AND (d.created_at, d.id) {op} (?2, ?3)
          ORDER BY d.created_at {order}, d.id {order} LIMIT ?4"
    )
}

/// Empties the index (within the caller's transaction) and records which database it now
/// follows and from which tombstone on.
fn create(conn: &Connection, store_id: Option<&str>, tombstone_mark: i64) -> Result<()> {
    conn.execute_batch(&format!(
        "{SCHEMA} PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {FORMAT};"
    ))?;
    // The epoch tells this index's counts of changes (see `held.rs`) from a former one's.
    conn.execute(
        "INSERT INTO meta (key, value)
         VALUES ('store_id', ?1), ('mark:tombstones', ?2), ('epoch', random())",
        params![store_id.unwrap_or(""), tombstone_mark],
    )?;
    Ok(())
}

/// Whether opening failed because the file is not a database or is damaged.
fn is_damaged(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command's index keeps few pages in memory, and takes SQLite's default again to write
    /// (a catch-up) or for a server that searches again and again.
    #[test]
    fn a_command_reads_through_a_small_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let store = crate::store::Store::open(&config, std::time::Instant::now()).unwrap();
        drop(store);
        let cache = |index: &Index| -> i64 {
            index
                .conn
                .query_row("PRAGMA cache_size", [], |r| r.get(0))
                .unwrap()
        };
        let index = Index::open(&config).unwrap();
        assert_eq!(cache(&index), 64);
        let seen = index.widely(|| Ok(cache(&index))).unwrap();
        assert_eq!(
            (seen, cache(&index)),
            (-2000, 64),
            "wide to write, then small"
        );
        index.keep_lengths().unwrap();
        assert_eq!(cache(&index), -2000, "a server's index");
        assert_eq!(index.widely(|| Ok(cache(&index))).unwrap(), -2000);
        assert_eq!(cache(&index), -2000, "a server's index stays wide");
    }

    /// Resolving an id and listing around an item read ranges of indexes, whatever the size.
    #[test]
    fn lookups_use_the_indexes() {
        let conn = Connection::open_in_memory().unwrap();
        tokenizer::register(&conn).unwrap();
        rank::register(&conn).unwrap();
        create(&conn, None, 0).unwrap();
        let plan = |sql: &str| crate::store::testing::plan(&conn, sql).join("\n");
        let resolve = plan(&resolve_sql());
        assert!(
            resolve.contains("INDEX docs_by_handle") && resolve.contains("INDEX docs_by_item"),
            "{resolve}"
        );
        for (op, order) in [("<", "DESC"), (">", "ASC")] {
            let side = plan(&side_sql(op, order));
            assert!(side.contains("USING INDEX docs_by_session"), "{side}");
            assert!(!side.contains("TEMP B-TREE"), "{side}");
        }
        // A result's context reads the next two items of its session from the index alone.
        let next = plan(context::NEXT);
        assert!(
            next.contains("USING COVERING INDEX docs_by_session"),
            "{next}"
        );
        assert!(!next.contains("TEMP B-TREE"), "{next}");
    }
}
