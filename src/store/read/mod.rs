//! The read side's view of the database: opened read-only, each answer one short query.
//!
//! Readers are guests (design rule 8): a read transaction held open stops every checkpoint, so
//! the WAL grows and the next hook pays for it. So the connection is read-only, runs every
//! statement on its own (autocommit: the read transaction ends with the statement), and never
//! takes a write lock; results are collected before the next query. What it returns is plain
//! data for the commands and the MCP server to render.

pub mod context;
pub mod doc;
pub mod fts;
pub mod given;
pub mod standing;
pub mod team;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use crate::config::Config;
use crate::store::base::files::{check_file, open_file_read_only};
use crate::store::base::remaining;
use crate::store::layout;
use crate::store::queue;
use crate::store::queue::compressed::{self, Spend};
use crate::store::rows::Kind;
pub use crate::store::rows::Prompt;
use crate::store::rows::{self, Memory, Summary};
use crate::store::sql::TOMBSTONES_SINCE;
use crate::store::sql::{SCHEMA_VERSION, check_version, versions};
use crate::store::write::Store;

/// How long a reader waits for the rare lock a reader can meet (a WAL being recovered).
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// A session as the `sessions` list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionOverview {
    pub session_id: String,
    pub project_dir: Option<String>,
    pub started_at: String,
    /// The last thing that happened: its end, or its last prompt or stop.
    pub last_at: String,
    pub ended_at: Option<String>,
    pub status: String,
    pub model: Option<String>,
    pub prompts: i64,
    pub tool_calls: i64,
    pub files_changed: Vec<String>,
    pub first_prompt: Option<String>,
    /// The coding agent it ran in (`claude-code`, `codex`, `cursor`).
    pub agent: String,
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// `None`: every project.
    pub project: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: usize,
    pub offset: usize,
    /// `None`: every agent's.
    pub agent: Option<String>,
}

/// A session whole: what `show <session>` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub summary: SessionOverview,
    pub source: Option<String>,
    pub end_reason: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    /// In order; the first has no prompt when something was captured before any prompt.
    pub turns: Vec<Turn>,
}

/// A prompt and what followed it until the next one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    pub prompt: Option<Prompt>,
    pub calls: Vec<Call>,
    pub messages: Vec<Message>,
}

/// A tool call in one line.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub tool_name: String,
    pub title: String,
    pub failed: bool,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: String,
    pub text: String,
    pub created_at: String,
}

/// A queue row whole: what `show <observation or message>` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRecord {
    pub id: String,
    pub kind: Kind,
    pub session_id: String,
    pub project_dir: Option<String>,
    pub tool_name: Option<String>,
    pub event: String,
    pub prompt_number: Option<i64>,
    pub files: Vec<String>,
    pub status: String,
    pub truncated: bool,
    pub payload_bytes: i64,
    pub created_at: String,
    /// `raw_output` as stored (a JSON object).
    pub raw: Value,
}

/// Counts for `status`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoreStats {
    pub schema_version: i64,
    /// (table, rows), in schema order.
    pub tables: Vec<(String, i64)>,
    /// (status, rows) of the queue.
    pub queue: Vec<(String, i64)>,
    /// The queue counted as its consumers see it: what waits, is held, is failed.
    pub pending: queue::Stats,
    pub last_capture_at: Option<String>,
    /// (agent, sessions), the most sessions first.
    pub agents: Vec<(String, i64)>,
}

pub struct Reader {
    conn: Connection,
    version: i64,
}

impl Reader {
    /// Opens the database read-only; `None` when nothing was ever captured (no file, or a file
    /// a first hook created but has not set up yet). Never creates anything.
    pub fn open(config: &Config) -> Result<Option<Reader>> {
        let Some(conn) = open_read_only(config, Instant::now() + BUSY_WAIT)? else {
            return Ok(None);
        };
        Ok(Some(Reader {
            conn,
            version: SCHEMA_VERSION,
        }))
    }

    pub(in crate::store) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// The database's identity (`None` before [`TOMBSTONES_SINCE`]).
    pub fn store_id(&self) -> Result<Option<String>> {
        if self.version < TOMBSTONES_SINCE {
            return Ok(None);
        }
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The standing instructions of `project`, oldest first (see [`standing::of_project`]).
    pub fn standing(&self, project: &str) -> Result<Vec<standing::Instruction>> {
        Ok(standing::of_project(&self.conn, project)?)
    }

    /// Every project that has sessions.
    pub fn projects(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT project_dir FROM sessions WHERE project_dir IS NOT NULL")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether sessions were recorded under `project`, as written (see [`IS_RECORDED`]).
    pub fn is_recorded(&self, project: &str) -> Result<bool> {
        let mut stmt = self.conn.prepare_cached(IS_RECORDED)?;
        Ok(stmt.exists([project])?)
    }

    /// The recorded project that is `dir` or the closest folder containing it: each of its
    /// folders looked up, the deepest first, with a trailing `/` (as `$CLAUDE_PROJECT_DIR` may
    /// spell a project's folder) and without. A probe each: reading every recorded project
    /// instead scans the index, which grows with the sessions recorded (0.36 million
    /// instructions of a `search` run outside a repository at 1,000 sessions).
    pub fn recorded_around(&self, dir: &Path) -> Result<Option<String>> {
        for folder in dir.ancestors() {
            let Some(folder) = folder.to_str().filter(|f| !f.is_empty()) else {
                continue;
            };
            let bare = folder.trim_end_matches('/');
            for spelling in [format!("{bare}/"), bare.to_string()] {
                if !spelling.is_empty() && self.is_recorded(&spelling)? {
                    return Ok(Some(spelling));
                }
            }
        }
        Ok(None)
    }

    /// The identity sync brought for each folder another machine recorded sessions under.
    pub fn project_identities(&self) -> Result<std::collections::HashMap<String, String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT project_dir, identity FROM project_ids")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// What `session_id` was given, an answer at a time (see [`given::of_session`]).
    pub fn given(&self, session_id: &str) -> Result<Vec<given::Answer>> {
        Ok(given::of_session(&self.conn, session_id)?)
    }

    /// What a full id names, if it names anything.
    pub fn kind_of(&self, id: &str) -> Result<Option<Kind>> {
        let found: Option<String> = self
            .conn
            .query_row(KIND_OF, [id], |r| r.get(0))
            .optional()?;
        Ok(found.as_deref().and_then(Kind::parse))
    }

    /// Recent sessions that hold anything, most recently active first.
    pub fn sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionOverview>> {
        let mut stmt = self.conn.prepare(&sessions_sql(filter.project.is_some()))?;
        let rows = stmt.query_map(
            params![
                filter.project,
                filter.since,
                filter.until,
                crate::store::base::sql_count(filter.limit),
                crate::store::base::sql_count(filter.offset),
                filter.agent
            ],
            summary,
        )?;
        let mut sessions = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        drop(stmt);
        for session in &mut sessions {
            session.files_changed = self.files_changed(&session.session_id)?;
        }
        Ok(sessions)
    }

    /// The ids of the sessions of `agent`, in `project` (or every one).
    pub fn sessions_of(&self, agent: &str, project: Option<&str>) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT session_id FROM sessions WHERE agent = ?1
                AND (?2 IS NULL OR project_dir = ?2)",
        )?;
        let ids = stmt.query_map(params![agent, project], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The coding agent a session ran in; `None` for a session not held.
    pub fn agent_of(&self, session_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT agent FROM sessions WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// A session with its turns.
    pub fn session(&self, session_id: &str) -> Result<Option<SessionRecord>> {
        let head = self
            .conn
            .query_row(
                &format!("{SESSION_COLUMNS} WHERE s.session_id = ?1"),
                [session_id],
                |r| {
                    Ok((
                        summary(r)?,
                        r.get::<_, Option<String>>("source")?,
                        r.get::<_, Option<String>>("end_reason")?,
                        r.get::<_, Option<String>>("cwd")?,
                        r.get::<_, Option<String>>("transcript_path")?,
                    ))
                },
            )
            .optional()?;
        let Some((mut summary, source, end_reason, cwd, transcript_path)) = head else {
            return Ok(None);
        };
        summary.files_changed = self.files_changed(session_id)?;
        Ok(Some(SessionRecord {
            summary,
            source,
            end_reason,
            cwd,
            transcript_path,
            turns: self.turns(session_id)?,
        }))
    }

    pub fn prompt(&self, id: &str) -> Result<Option<Prompt>> {
        Ok(self
            .conn
            .query_row(
                &format!("{PROMPT_COLUMNS} WHERE id = ?1"),
                [id],
                rows::prompt,
            )
            .optional()?)
    }

    /// The turn a prompt opened.
    pub fn turn_of(&self, prompt: &Prompt) -> Result<Turn> {
        Ok(self
            .turns(&prompt.session_id)?
            .into_iter()
            .find(|t| t.prompt.as_ref().is_some_and(|p| p.id == prompt.id))
            .unwrap_or_default())
    }

    pub fn queue_row(&self, id: &str) -> Result<Option<QueueRecord>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, kind, session_id, project_dir, tool_name, event, prompt_number,
                        files_touched, status, truncated, payload_bytes, created_at, raw_output
                   FROM pending_queue WHERE id = ?1",
                [id],
                |r| {
                    let files: String = r.get("files_touched")?;
                    let raw: String = r.get("raw_output")?;
                    let kind: String = r.get("kind")?;
                    Ok(QueueRecord {
                        id: r.get("id")?,
                        kind: if kind == "summary" {
                            Kind::Message
                        } else {
                            Kind::Observation
                        },
                        session_id: r.get("session_id")?,
                        project_dir: r.get("project_dir")?,
                        tool_name: r.get("tool_name")?,
                        event: r.get("event")?,
                        prompt_number: r.get("prompt_number")?,
                        files: serde_json::from_str(&files).unwrap_or_default(),
                        status: r.get("status")?,
                        truncated: r.get("truncated")?,
                        payload_bytes: r.get("payload_bytes")?,
                        created_at: r.get("created_at")?,
                        raw: serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
                    })
                },
            )
            .optional()?)
    }

    /// The size in bytes of an item's stored text (a prompt's text, a tool call's or message's
    /// `raw_output`, a memory's or summary's text fields), read from its row's header without
    /// reading the text; `None` for a session or an item that is gone.
    pub fn stored_bytes(&self, kind: Kind, id: &str) -> Result<Option<i64>> {
        let sql = match kind {
            Kind::Prompt => PROMPT_BYTES,
            Kind::Observation | Kind::Message => QUEUE_BYTES,
            Kind::Memory => MEMORY_BYTES,
            Kind::Summary => SUMMARY_BYTES,
            Kind::Session => return Ok(None),
        };
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_row([id], |r| r.get(0))
            .optional()?)
    }

    /// A memory the compressor wrote (or an import brought).
    pub fn memory(&self, id: &str) -> Result<Option<Memory>> {
        compressed::memory(&self.conn, id)
    }

    pub fn summary(&self, id: &str) -> Result<Option<Summary>> {
        compressed::summary(&self.conn, id)
    }

    /// A session's memories, and its summaries, in the order of the work.
    pub fn compressed(&self, session_id: &str) -> Result<(Vec<Memory>, Vec<Summary>)> {
        Ok((
            compressed::session_memories(&self.conn, session_id)?,
            compressed::session_summaries(&self.conn, session_id)?,
        ))
    }

    /// What the compressor spent on `day` (a local date).
    pub fn spend(&self, day: &str) -> Result<Spend> {
        compressed::spent(&self.conn, day)
    }

    /// Rows per table, the queue by status, and when the last thing was captured.
    pub fn stats(&self) -> Result<StoreStats> {
        let mut tables = Vec::new();
        let names: Vec<String> = self
            .conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table'
                   AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for name in names {
            let rows: i64 =
                self.conn
                    .query_row(&format!("SELECT COUNT(*) FROM \"{name}\""), [], |r| {
                        r.get(0)
                    })?;
            tables.push((name, rows));
        }
        let queue = self
            .conn
            .prepare("SELECT status, COUNT(*) FROM pending_queue GROUP BY status ORDER BY status")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        // The newest rows have the largest rowids: two lookups, not a scan.
        let last_capture_at = self.conn.query_row(
            "SELECT max((SELECT created_at FROM pending_queue ORDER BY rowid DESC LIMIT 1),
                        (SELECT created_at FROM user_prompts ORDER BY rowid DESC LIMIT 1))",
            [],
            |r| r.get(0),
        )?;
        let agents = self
            .conn
            .prepare(
                "SELECT agent, COUNT(*) AS n FROM sessions GROUP BY agent ORDER BY n DESC, agent",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(StoreStats {
            schema_version: self.version,
            tables,
            queue,
            pending: queue::stats(&self.conn, chrono::Utc::now())?,
            last_capture_at,
            agents,
        })
    }

    /// The distinct files a session's changes touched, in the order first changed.
    fn files_changed(&self, session_id: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(FILES_CHANGED)?;
        let rows = stmt.query_map([session_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Prompts and queue rows of a session in time order, cut into turns at each prompt.
    fn turns(&self, session_id: &str) -> Result<Vec<Turn>> {
        let prompts: Vec<Prompt> = self
            .conn
            .prepare(&format!(
                "{PROMPT_COLUMNS} WHERE session_id = ?1 ORDER BY prompt_number"
            ))?
            .query_map([session_id], rows::prompt)?
            .collect::<rusqlite::Result<_>>()?;
        enum Row {
            Call(Call),
            Message(Message),
        }
        let rows: Vec<Row> = self
            .conn
            .prepare(SESSION_ROWS)?
            .query_map([session_id], |r| {
                let id = r.get("id")?;
                let created_at = r.get("created_at")?;
                let detail: Option<String> = r.get("detail")?;
                Ok(if r.get::<_, String>("kind")? == "summary" {
                    Row::Message(Message {
                        id,
                        text: detail.unwrap_or_default(),
                        created_at,
                    })
                } else {
                    let input = detail
                        .and_then(|d| serde_json::from_str(&d).ok())
                        .unwrap_or(Value::Null);
                    Row::Call(Call {
                        id,
                        tool_name: r.get::<_, Option<String>>("tool_name")?.unwrap_or_default(),
                        title: doc::call_title(&input),
                        failed: r.get::<_, String>("event")? == "PostToolUseFailure",
                        created_at,
                    })
                })
            })?
            .collect::<rusqlite::Result<_>>()?;

        let mut turns: Vec<Turn> = Vec::new();
        let mut prompts = prompts.into_iter().peekable();
        for row in rows {
            let at = match &row {
                Row::Call(c) => &c.created_at,
                Row::Message(m) => &m.created_at,
            };
            while let Some(prompt) = prompts.next_if(|p| p.created_at <= *at) {
                turns.push(Turn {
                    prompt: Some(prompt),
                    ..Turn::default()
                });
            }
            if turns.is_empty() {
                turns.push(Turn::default());
            }
            let turn = turns.last_mut().expect("a turn was just pushed");
            match row {
                Row::Call(call) => turn.calls.push(call),
                Row::Message(m) if !m.text.trim().is_empty() => turn.messages.push(m),
                Row::Message(_) => {}
            }
        }
        turns.extend(prompts.map(|prompt| Turn {
            prompt: Some(prompt),
            ..Turn::default()
        }));
        Ok(turns)
    }
}

const SESSION_COLUMNS: &str = "SELECT s.session_id, s.project_dir, s.started_at,
        max(s.updated_at, coalesce(s.ended_at, '')) AS last_at, s.ended_at, s.status, s.model,
        s.prompt_count, s.source, s.end_reason, s.cwd, s.transcript_path, s.agent,
        (SELECT COUNT(tool_use_id) FROM pending_queue q WHERE q.session_id = s.session_id)
            AS tool_calls,
        (SELECT prompt_text FROM user_prompts p WHERE p.session_id = s.session_id
          ORDER BY prompt_number LIMIT 1) AS first_prompt
   FROM sessions s";

/// The sessions that hold anything, most recently active first: of one project (?1), or of
/// all (?1 is NULL); separate statements, so that the project's one uses its index.
fn sessions_sql(project: bool) -> String {
    let which = if project {
        "s.project_dir = ?1"
    } else {
        "?1 IS NULL"
    };
    format!(
        "{SESSION_COLUMNS} WHERE {which}
            AND (?2 IS NULL OR max(s.updated_at, coalesce(s.ended_at, '')) >= ?2)
            AND (?3 IS NULL OR s.started_at < ?3)
            AND (?6 IS NULL OR s.agent = ?6)
            AND (s.prompt_count > 0
                 OR EXISTS (SELECT 1 FROM pending_queue q WHERE q.session_id = s.session_id))
          ORDER BY s.updated_at DESC LIMIT ?4 OFFSET ?5"
    )
}

const KIND_OF: &str = "SELECT 'session' FROM sessions WHERE session_id = ?1
    UNION ALL SELECT 'prompt' FROM user_prompts WHERE id = ?1
    UNION ALL SELECT CASE kind WHEN 'summary' THEN 'message' ELSE kind END
                FROM pending_queue WHERE id = ?1
    UNION ALL SELECT 'memory' FROM memories WHERE id = ?1
    UNION ALL SELECT 'summary' FROM summaries WHERE id = ?1";

/// The files a session's changes touched, first changed first (rowids are in time order, and
/// read from the index, unlike `created_at`, which lies after the large `raw_output`). The
/// tool list must stay the one of the partial index `pending_queue_changes`.
const FILES_CHANGED: &str = "SELECT f.value FROM pending_queue q, json_each(q.files_touched) f
     WHERE q.session_id = ?1 AND q.tool_name IN ('Write', 'Edit', 'MultiEdit', 'NotebookEdit')
     GROUP BY f.value ORDER BY min(q.rowid)";

/// A session's queue rows with what a one-line view needs of them, in time order.
const SESSION_ROWS: &str = "SELECT id, kind, tool_name, event, created_at,
        CASE kind WHEN 'summary' THEN json_extract(raw_output, '$.last_assistant_message')
             ELSE json_extract(raw_output, '$.tool_input') END AS detail
   FROM pending_queue WHERE session_id = ?1 ORDER BY created_at, rowid";

/// `octet_length` of a column is read from the record header: a large text is not loaded.
const PROMPT_BYTES: &str = "SELECT octet_length(prompt_text) FROM user_prompts WHERE id = ?1";
const QUEUE_BYTES: &str = "SELECT octet_length(raw_output) FROM pending_queue WHERE id = ?1";
const MEMORY_BYTES: &str =
    "SELECT octet_length(title) + octet_length(narrative) + octet_length(facts)
    + octet_length(concepts) + octet_length(files_read) + octet_length(files_modified)
    + octet_length(queue_ids) FROM memories WHERE id = ?1";
const SUMMARY_BYTES: &str = "SELECT octet_length(request) + octet_length(investigated)
    + octet_length(learned) + octet_length(completed) + octet_length(next_steps)
    + octet_length(files_read) + octet_length(files_edited) + octet_length(queue_ids)
    FROM summaries WHERE id = ?1";

const PROMPT_COLUMNS: &str = "SELECT id, session_id, prompt_id, prompt_number, prompt_text,
    truncated, created_at, pinned_at FROM user_prompts";

fn summary(r: &Row) -> rusqlite::Result<SessionOverview> {
    Ok(SessionOverview {
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        started_at: r.get("started_at")?,
        last_at: r.get("last_at")?,
        ended_at: r.get("ended_at")?,
        status: r.get("status")?,
        model: r.get("model")?,
        prompts: r.get("prompt_count")?,
        tool_calls: r.get("tool_calls")?,
        files_changed: Vec::new(),
        first_prompt: r.get("first_prompt")?,
        agent: r.get("agent")?,
    })
}

/// Opens the database for a command that only looks (search, show, `queue stats`, ...):
/// read-only, so that it can take no write lock, and refusing to write even by mistake; `None`
/// when nothing was ever captured. Files an earlier release left at the old place are moved
/// first, and a database an older claude-mem wrote is brought up to date through
/// [`Store::open`], as the next hook would do anyway.
pub fn open_read_only(config: &Config, deadline: Instant) -> Result<Option<Connection>> {
    layout::settle(config)?;
    let path = config.db_path();
    match std::fs::symlink_metadata(&path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => check_file(&path)?,
    }
    let conn = open_file_read_only(&path)?;
    // A reader waits only while a WAL is being recovered.
    conn.busy_timeout(remaining(deadline))?;
    let (version, app_id) =
        versions(&conn).with_context(|| format!("cannot read the database {}", path.display()))?;
    check_version(version, app_id, &path)?;
    if version == 0 {
        return Ok(None);
    }
    if version < SCHEMA_VERSION {
        drop(conn);
        if Store::open(config, deadline)?.maintenance().is_some() {
            crate::detach::maintain(config);
        }
        return open_file_read_only(&path).map(Some);
    }
    Ok(Some(conn))
}

/// Whether any session was recorded under project ?1: a probe of the sessions' index by project.
const IS_RECORDED: &str = "SELECT 1 FROM sessions WHERE project_dir = ?1 LIMIT 1";

#[cfg(test)]
mod tests {
    use super::*;

    /// Years of sessions must not mean a scan: every read starts from an index.
    #[test]
    fn the_queries_use_the_indexes() {
        let conn = crate::store::testing::database();
        let plan = |sql: &str| crate::store::testing::plan(&conn, sql).join("\n");
        let sessions = plan(&sessions_sql(true));
        assert!(
            sessions.contains("USING INDEX sessions_by_project"),
            "{sessions}"
        );
        assert!(!sessions.contains("SCAN q"), "{sessions}");
        assert!(
            sessions.contains("USING COVERING INDEX sqlite_autoindex_pending_queue_2"),
            "tool calls are counted from the index: {sessions}"
        );
        let files = plan(FILES_CHANGED);
        assert!(
            files.contains("USING INDEX pending_queue_changes"),
            "{files}"
        );
        for sql in [
            KIND_OF,
            SESSION_ROWS,
            PROMPT_BYTES,
            QUEUE_BYTES,
            MEMORY_BYTES,
            SUMMARY_BYTES,
            IS_RECORDED,
            &format!("{PROMPT_COLUMNS} WHERE session_id = ?1"),
        ] {
            let plan = plan(sql);
            assert!(!plan.contains("SCAN"), "{sql}: {plan}");
        }
    }
}
