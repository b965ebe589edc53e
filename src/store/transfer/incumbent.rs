//! `import --from-claude-mem`: thedotmack/claude-mem's sessions, prompts, observations and
//! session summaries, brought into ours.
//!
//! Its database went through many migrations, so nothing is assumed about its columns: each
//! table's are read from `PRAGMA table_info`, and a column it does not have reads as NULL. Its
//! observations and session summaries carry the very fields of our memories and summaries
//! (title, narrative, facts, concepts, files; request, investigated, learned, completed, next
//! steps); what has no column of ours goes whole into `extra`. Its rows are keyed by its own
//! session and row ids, so importing twice stores once. Its text is not trusted: private tags
//! are stripped and secrets redacted as for anything we capture. Its file is opened read-only
//! and never changed.
//!
//! Its `project` is a name (the folder's), ours a path: a name that the basename of exactly one
//! project we already know is mapped to that project's path; any other name is kept as it is.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, params};
use serde_json::{Map, Value as JsonValue, json};

use crate::config::Config;
use crate::store::base::slices::Slicer;
use crate::store::write::Store;

/// Rows of theirs read at once.
const PAGE: usize = 500;
/// How long import waits for a lock, ours or theirs.
const WAIT: Duration = Duration::from_secs(10);

/// What an import brought, and what was there already.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Imported {
    pub sessions: Counted,
    pub prompts: Counted,
    pub memories: Counted,
    pub summaries: Counted,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// Rows stored now.
    pub new: usize,
    /// Rows of theirs already here (an earlier import, or captured by us too).
    pub present: usize,
}

impl Counted {
    fn add(&mut self, inserted: usize) {
        if inserted > 0 {
            self.new += 1;
        } else {
            self.present += 1;
        }
    }
}

/// Imports the database at `path` into ours.
pub fn import(config: &Config, path: &Path) -> Result<Imported> {
    let theirs = open_theirs(path)?;
    let tables = Tables::read(&theirs)?;
    crate::store::layout::settle(config)?;
    let store = Store::open(config, Instant::now() + WAIT)?;
    let mut import = Import {
        theirs: &theirs,
        tables: &tables,
        ours: store.conn(),
        config,
        projects: Projects::known(store.conn())?,
        imported: Imported::default(),
    };
    import.sessions()?;
    import.prompts()?;
    import.memories()?;
    import.summaries()?;
    Ok(import.imported)
}

/// Their database, read-only, refusing anything that is not theirs.
fn open_theirs(path: &Path) -> Result<Connection> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a file", path.display());
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(uri(path)?, flags)
        .with_context(|| format!("cannot open {}", path.display()))?;
    conn.busy_timeout(WAIT)?;
    conn.execute_batch("PRAGMA query_only = ON")?;
    let app_id: i64 = conn
        .query_row(
            "SELECT application_id FROM pragma_application_id",
            [],
            |r| r.get(0),
        )
        .with_context(|| format!("{} is not an SQLite database", path.display()))?;
    if app_id == crate::store::sql::APPLICATION_ID {
        bail!(
            "{} is a database of this claude-mem, not of thedotmack/claude-mem: use \
             `claude-mem export` and `import` to move it",
            path.display()
        );
    }
    Ok(conn)
}

/// How to open their file without adding one beside it. While its worker runs (its WAL is
/// there), as any reader does; otherwise as a file nobody changes (`immutable`): a reader of a
/// WAL database would create the `-wal` and `-shm` files its worker owns. Should the worker
/// start meanwhile, its new rows go to its WAL, which this read does not see (a later import
/// brings them).
fn uri(path: &Path) -> Result<String> {
    let path =
        std::path::absolute(path).with_context(|| format!("cannot use {}", path.display()))?;
    let text = path
        .to_str()
        .with_context(|| format!("{} is not a UTF-8 path", path.display()))?;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let mut uri = String::from("file:");
    for c in text.chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u32)),
            c => uri.push(c),
        }
    }
    if !Path::new(&wal).exists() {
        uri.push_str("?immutable=1");
    }
    Ok(uri)
}

/// Refuses `name` unless it is missing or a plain table: a view (a recursive one never ends)
/// or a virtual table (its module may read anything) is not what their worker writes.
fn is_table(conn: &Connection, name: &str) -> Result<()> {
    let found: Option<(String, String)> = conn
        .query_row(
            "SELECT type, coalesce(sql, '') FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE \
             AND type IN ('table', 'view')",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match found {
        Some((kind, sql)) if kind != "table" || is_virtual(&sql) => bail!(
            "this is not a thedotmack/claude-mem database: its {name} is a {}, not a table",
            if kind == "table" {
                "virtual table"
            } else {
                kind.as_str()
            }
        ),
        _ => Ok(()),
    }
}

/// Whether every `id` of `table` is an integer, as their `INTEGER PRIMARY KEY` makes it.
fn whole_number_ids(conn: &Connection, table: &str) -> Result<bool> {
    let other: Option<i64> = conn
        .query_row(
            &format!("SELECT 1 FROM {table} WHERE typeof(id) <> 'integer' LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(other.is_none())
}

fn is_virtual(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split_whitespace()
        .take(2)
        .map(str::to_ascii_uppercase)
        .collect();
    words == ["CREATE", "VIRTUAL"]
}

/// The columns each table of theirs has.
struct Tables(HashMap<&'static str, HashSet<String>>);

impl Tables {
    fn read(conn: &Connection) -> Result<Tables> {
        let mut tables = HashMap::new();
        for table in [
            "sdk_sessions",
            "user_prompts",
            "observations",
            "session_summaries",
        ] {
            is_table(conn, table)?;
            let mut statement = conn.prepare(&format!("PRAGMA table_info({table})"))?;
            let columns: HashSet<String> = statement
                .query_map([], |r| r.get::<_, String>(1))?
                .collect::<rusqlite::Result<_>>()?;
            // Pages go by `id > ?1`, which every text passes: the same rows again and again.
            if columns.contains("id") && !whole_number_ids(conn, table)? {
                bail!(
                    "this is not a thedotmack/claude-mem database: its {table} has ids that are \
                     not whole numbers"
                );
            }
            tables.insert(table, columns);
        }
        if tables["sdk_sessions"].is_empty() || tables["observations"].is_empty() {
            bail!(
                "this is not a thedotmack/claude-mem database (it has no sdk_sessions or \
                 observations table)"
            );
        }
        Ok(Tables(tables))
    }

    /// A page of `table` after the row id `?1`: `t.id` first, then `columns`, those it lacks
    /// read as NULL (a name with a dot is another table's, taken as it is).
    fn page(&self, table: &str, columns: &[&str], join: &str, filter: &str) -> String {
        let have = &self.0[table];
        let list: Vec<String> = columns
            .iter()
            .map(|c| match c {
                c if c.contains('.') => c.to_string(),
                c if have.contains(*c) => format!("t.{c}"),
                c => format!("NULL AS {c}"),
            })
            .collect();
        format!(
            "SELECT t.id, {} FROM {table} t {join} WHERE t.id > ?1 {filter} ORDER BY t.id \
             LIMIT {PAGE}",
            list.join(", ")
        )
    }

    fn has(&self, table: &str) -> bool {
        !self.0[table].is_empty()
    }

    /// Their columns that have no place of ours, to keep in `extra`.
    fn others(&self, table: &str, mapped: &[&str]) -> Vec<String> {
        let mut others: Vec<String> = self.0[table]
            .iter()
            .filter(|c| c.as_str() != "id" && !mapped.contains(&c.as_str()))
            .cloned()
            .collect();
        others.sort();
        others
    }
}

/// Maps their project names to the project paths we know.
struct Projects(HashMap<String, Option<String>>);

impl Projects {
    fn known(conn: &Connection) -> Result<Projects> {
        let mut by_name: HashMap<String, Option<String>> = HashMap::new();
        let mut statement = conn
            .prepare("SELECT DISTINCT project_dir FROM sessions WHERE project_dir IS NOT NULL")?;
        for dir in statement.query_map([], |r| r.get::<_, String>(0))? {
            let dir = dir?;
            let Some(name) = Path::new(&dir).file_name() else {
                continue;
            };
            by_name
                .entry(name.to_string_lossy().into_owned())
                .and_modify(|known| {
                    // Two projects of that name: which one is meant cannot be told.
                    if known.as_deref() != Some(dir.as_str()) {
                        *known = None;
                    }
                })
                .or_insert(Some(dir));
        }
        Ok(Projects(by_name))
    }

    fn path_of(&self, project: Option<String>) -> Option<String> {
        let project = project?;
        if Path::new(&project).is_absolute() {
            return Some(project);
        }
        Some(self.0.get(&project).cloned().flatten().unwrap_or(project))
    }
}

/// One row of theirs, owned: read a page at a time, so that no read of their database lasts
/// longer than a page (a reader holding a snapshot keeps their worker from checkpointing).
struct Cells(Vec<Value>);

impl Cells {
    fn text(&self, at: usize) -> Option<String> {
        match &self.0[at] {
            Value::Text(t) => Some(t.clone()),
            Value::Integer(n) => Some(n.to_string()),
            Value::Real(x) => Some(x.to_string()),
            Value::Null | Value::Blob(_) => None,
        }
    }

    fn int(&self, at: usize) -> Option<i64> {
        match &self.0[at] {
            Value::Integer(n) => Some(*n),
            Value::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }

    /// Their text at `at` as we would have stored it (see [`crate::privacy::clean_text`]).
    fn clean(&self, config: &Config, at: usize) -> Option<String> {
        self.text(at)
            .map(|t| crate::privacy::clean_text(&config.redactor, &t).into_owned())
    }
}

struct Import<'a> {
    theirs: &'a Connection,
    tables: &'a Tables,
    ours: &'a Connection,
    config: &'a Config,
    projects: Projects,
    imported: Imported,
}

impl Import<'_> {
    /// Runs `store` on every row of the paged `query`, in our short write transactions;
    /// `store` says how many rows it inserted (0: the row was here already).
    fn copy(
        &mut self,
        query: &str,
        counted: fn(&mut Imported) -> &mut Counted,
        mut store: impl FnMut(&Transaction, &Import, &Cells) -> Result<usize>,
    ) -> Result<()> {
        let mut after = 0i64;
        loop {
            let page: Vec<Cells> = self
                .theirs
                .prepare_cached(query)?
                .query_map([after], |row| {
                    (0..row.as_ref().column_count())
                        .map(|i| row.get::<_, Value>(i))
                        .collect::<rusqlite::Result<_>>()
                        .map(Cells)
                })?
                .collect::<rusqlite::Result<_>>()?;
            let Some(last) = page.last() else {
                return Ok(());
            };
            after = last.int(0).unwrap_or(i64::MAX);
            let (mut next, mut tally) = (0, Counted::default());
            Slicer::command(WAIT).run(self.ours, |tx| {
                tally.add(store(tx, self, &page[next])?);
                next += 1;
                Ok(next < page.len())
            })?;
            let total = counted(&mut self.imported);
            total.new += tally.new;
            total.present += tally.present;
            if page.len() < PAGE {
                return Ok(());
            }
        }
    }

    fn sessions(&mut self) -> Result<()> {
        let query = self.tables.page(
            "sdk_sessions",
            &[
                "content_session_id",
                "project",
                "started_at",
                "completed_at",
                "prompt_counter",
            ],
            "",
            "AND t.content_session_id IS NOT NULL",
        );
        self.copy(
            &query,
            |i| &mut i.sessions,
            |tx, import, row| {
                let Some(session) = row.text(1) else {
                    return Ok(0);
                };
                let started = row.text(3).unwrap_or_else(crate::clock::now);
                let ended = row.text(4);
                let updated = ended.clone().unwrap_or_else(|| started.clone());
                Ok(tx.execute(
                    "INSERT OR IGNORE INTO sessions (session_id, project_dir, source, status,
                     prompt_count, started_at, updated_at, ended_at, end_reason)
                 VALUES (?1, ?2, 'import', 'closed', ?3, ?4, ?5, ?6, 'imported')",
                    params![
                        session,
                        import.projects.path_of(row.text(2)),
                        row.int(5).unwrap_or(0),
                        started,
                        updated,
                        ended
                    ],
                )?)
            },
        )
    }

    fn prompts(&mut self) -> Result<()> {
        if !self.tables.has("user_prompts") {
            return Ok(());
        }
        let query = self.tables.page(
            "user_prompts",
            &[
                "content_session_id",
                "prompt_number",
                "prompt_text",
                "created_at",
            ],
            "",
            "AND t.content_session_id IS NOT NULL AND t.prompt_text IS NOT NULL",
        );
        self.copy(
            &query,
            |i| &mut i.prompts,
            |tx, import, row| {
                let (Some(session), Some(number)) = (row.text(1), row.int(2)) else {
                    return Ok(0);
                };
                let text = row.clean(import.config, 3).unwrap_or_default();
                if text.trim().is_empty() {
                    return Ok(0);
                }
                // Unique by session and number: a prompt we captured too is not stored twice.
                let inserted = tx.execute(
                "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_number, prompt_text,
                     created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    crate::clock::new_id(),
                    session,
                    number,
                    text,
                    row.text(4).unwrap_or_else(crate::clock::now)
                ],
            )?;
                tx.execute(
                "UPDATE sessions SET prompt_count = MAX(prompt_count, ?2) WHERE session_id = ?1",
                params![session, number],
            )?;
                Ok(inserted)
            },
        )
    }

    fn memories(&mut self) -> Result<()> {
        const MAPPED: &[&str] = &[
            "memory_session_id",
            "project",
            "type",
            "title",
            "subtitle",
            "narrative",
            "facts",
            "concepts",
            "files_read",
            "files_modified",
            "prompt_number",
            "created_at",
            // The same time as created_at.
            "created_at_epoch",
            "generated_by_model",
        ];
        let extra = self.tables.others("observations", MAPPED);
        let mut columns = vec!["s.content_session_id"];
        columns.extend(MAPPED);
        columns.extend(extra.iter().map(String::as_str));
        let at = |name: &str| 1 + columns.iter().position(|c| *c == name).expect("a column");
        let query = self.tables.page(
            "observations",
            &columns,
            "JOIN sdk_sessions s ON s.memory_session_id = t.memory_session_id",
            "",
        );
        self.copy(
            &query,
            |i| &mut i.memories,
            |tx, import, row| {
                let config = import.config;
                let mut extra = extras(config, row, 2 + MAPPED.len(), &extra);
                // Before it had a narrative, an observation was one `text`.
                let narrative = match row.clean(config, at("narrative")) {
                    Some(narrative) => narrative,
                    None => match extra.remove("text") {
                        Some(serde_json::Value::String(text)) => text,
                        _ => String::new(),
                    },
                };
                let title = row
                    .clean(config, at("title"))
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| first_line(&narrative));
                Ok(tx.execute(
                    "INSERT OR IGNORE INTO memories (id, key, session_id, project_dir,
                     prompt_number, type, title, subtitle, narrative, facts, concepts,
                     files_read, files_modified, origin, model, extra, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'import',
                     ?14, ?15, ?16)",
                    params![
                        crate::clock::new_id(),
                        format!(
                            "claude-mem-import:observation:{}:{}",
                            row.text(at("memory_session_id")).unwrap_or_default(),
                            row.int(0).unwrap_or_default()
                        ),
                        row.text(at("s.content_session_id")),
                        import.projects.path_of(row.text(at("project"))),
                        row.int(at("prompt_number")),
                        crate::store::rows::kind(
                            &row.clean(config, at("type")).unwrap_or_default()
                        ),
                        title,
                        row.clean(config, at("subtitle")),
                        narrative,
                        list(config, row.text(at("facts"))),
                        list(config, row.text(at("concepts"))),
                        list(config, row.text(at("files_read"))),
                        list(config, row.text(at("files_modified"))),
                        row.text(at("generated_by_model")),
                        object(extra),
                        row.text(at("created_at")).unwrap_or_else(crate::clock::now),
                    ],
                )?)
            },
        )
    }

    fn summaries(&mut self) -> Result<()> {
        if !self.tables.has("session_summaries") {
            return Ok(());
        }
        const MAPPED: &[&str] = &[
            "memory_session_id",
            "project",
            "request",
            "investigated",
            "learned",
            "completed",
            "next_steps",
            "notes",
            "files_read",
            "files_edited",
            "prompt_number",
            "created_at",
            "created_at_epoch",
        ];
        let extra = self.tables.others("session_summaries", MAPPED);
        let mut columns = vec!["s.content_session_id"];
        columns.extend(MAPPED);
        columns.extend(extra.iter().map(String::as_str));
        let at = |name: &str| 1 + columns.iter().position(|c| *c == name).expect("a column");
        let query = self.tables.page(
            "session_summaries",
            &columns,
            "JOIN sdk_sessions s ON s.memory_session_id = t.memory_session_id",
            "",
        );
        self.copy(
            &query,
            |i| &mut i.summaries,
            |tx, import, row| {
                let config = import.config;
                let text = |at| row.clean(config, at).unwrap_or_default();
                Ok(tx.execute(
                    "INSERT OR IGNORE INTO summaries (id, key, session_id, project_dir,
                     prompt_number, request, investigated, learned, completed, next_steps,
                     notes, files_read, files_edited, origin, extra, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'import',
                     ?14, ?15)",
                    params![
                        crate::clock::new_id(),
                        format!(
                            "claude-mem-import:summary:{}:{}",
                            row.text(at("memory_session_id")).unwrap_or_default(),
                            row.int(0).unwrap_or_default()
                        ),
                        row.text(at("s.content_session_id")),
                        import.projects.path_of(row.text(at("project"))),
                        row.int(at("prompt_number")),
                        text(at("request")),
                        text(at("investigated")),
                        text(at("learned")),
                        text(at("completed")),
                        text(at("next_steps")),
                        row.clean(config, at("notes")),
                        list(config, row.text(at("files_read"))),
                        list(config, row.text(at("files_edited"))),
                        object(extras(config, row, 2 + MAPPED.len(), &extra)),
                        row.text(at("created_at")).unwrap_or_else(crate::clock::now),
                    ],
                )?)
            },
        )
    }
}

/// Their columns past `from`, named in `names`, as a JSON object (NULLs and blobs left out).
fn extras(config: &Config, row: &Cells, from: usize, names: &[String]) -> Map<String, JsonValue> {
    let mut map = Map::new();
    for (offset, name) in names.iter().enumerate() {
        let value = match &row.0[from + offset] {
            Value::Integer(n) => json!(n),
            Value::Real(x) => json!(x),
            Value::Text(t) => json!(crate::privacy::clean_text(&config.redactor, t)),
            Value::Null | Value::Blob(_) => continue,
        };
        map.insert(name.clone(), value);
    }
    map
}

fn object(map: Map<String, JsonValue>) -> Option<String> {
    (!map.is_empty()).then(|| JsonValue::Object(map).to_string())
}

/// A JSON array from their text, cleaned as any stored JSON document is: theirs are JSON
/// arrays as text; anything else becomes a list of its one value.
fn list(config: &Config, text: Option<String>) -> String {
    let list = match text.filter(|t| !t.trim().is_empty()) {
        None => return "[]".into(),
        Some(text) => match serde_json::from_str::<JsonValue>(&text) {
            Ok(JsonValue::Array(_)) => text,
            _ => json!([text]).to_string(),
        },
    };
    crate::privacy::clean_payload(&config.redactor, None, &list).into_owned()
}

fn first_line(text: &str) -> String {
    match text.lines().find(|l| !l.trim().is_empty()) {
        Some(line) => crate::text::one_line(line, 120),
        None => "(untitled)".into(),
    }
}
