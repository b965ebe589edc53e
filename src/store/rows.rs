//! One type per row of the tables that more than one part reads, each with its one reader:
//! the readers (`show`, the MCP server, the compressor's context), export and import all see a
//! memory or a summary as the same [`Memory`] and [`Summary`]. Serialized, a row is its export
//! record: the columns by name (a memory's `type` as `memory_type`, JSON columns as JSON).

use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::recorded::Whose;

/// What an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Session,
    Prompt,
    Observation,
    /// Claude's last message of a turn (a summary request's `last_assistant_message`).
    Message,
    /// A session summary the compressor wrote (or an import brought).
    Summary,
    /// A typed observation the compressor wrote (or an import brought).
    Memory,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Prompt => "prompt",
            Kind::Observation => "observation",
            Kind::Message => "message",
            Kind::Summary => "summary",
            Kind::Memory => "memory",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        [
            Kind::Session,
            Kind::Prompt,
            Kind::Observation,
            Kind::Message,
            Kind::Summary,
            Kind::Memory,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }

    /// Whose words the text of an item of this kind is (see [`Whose`]): of a tool call, its
    /// answer's (its input, the call's title, is Claude's).
    pub fn whose(self) -> Whose {
        match self {
            Kind::Prompt => Whose::User,
            Kind::Session | Kind::Message | Kind::Summary | Kind::Memory => Whose::Claude,
            Kind::Observation => Whose::ThirdParty,
        }
    }
}

/// The part of an id that short ids are prefixes of: a UUID's last group, which is random in
/// Claude Code's session ids (v4) and in our row ids (v7, whose first groups are a millisecond
/// timestamp, the same for ids made together); any other id whole.
pub fn handle(id: &str) -> &str {
    let b = id.as_bytes();
    let uuid = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
    if uuid { &id[24..] } else { id }
}

/// The id every command prints: the first 8 characters of [`handle`]. One in four billion ids
/// shares them with a given one; `show` then names the candidates.
pub fn short_id(id: &str) -> &str {
    let h = handle(id);
    h.get(..8).unwrap_or(h)
}

/// A memory's type is a label, shown on every line that lists the memory (the session-start
/// context, `show`, the MCP answers): one line of at most this many characters. The
/// compressor's are from `compress::answer::TYPES`; an import may bring others, which are
/// kept (thedotmack/claude-mem's other modes have types of their own, and mapping them to one
/// of ours would lose what they say), cut to this.
pub const KIND_CHARS: usize = 32;

/// A memory's type as stored and shown: one line of at most [`KIND_CHARS`] characters,
/// `change` (other changes) when nothing is left.
pub fn kind(text: &str) -> String {
    match crate::text::one_line(text, KIND_CHARS) {
        kind if kind.is_empty() => "change".into(),
        kind => kind,
    }
}

/// What a memory says: as the compressor's answer gives it (`type` and the rest), and as a
/// row of `memories` keeps it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MemoryText {
    /// bugfix, feature, refactor, change, discovery or decision.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub narrative: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
}

/// What a session summary says, as the compressor's answer gives it and a row keeps it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SummaryText {
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
}

/// A row of `memories`: what the compressor made or an import brought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: String,
    /// Made from the batch (or the import): storing the same again changes nothing.
    pub key: String,
    pub session_id: String,
    pub project_dir: Option<String>,
    pub prompt_number: Option<i64>,
    /// The column `type`, bounded as shown (see [`kind`]).
    #[serde(rename = "memory_type")]
    pub kind: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub narrative: String,
    pub facts: Vec<String>,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub queue_ids: Vec<String>,
    /// compressor or import.
    pub origin: String,
    pub model: Option<String>,
    /// What an import brought that has no column (a JSON object).
    pub extra: Option<Json>,
    pub created_at: String,
}

/// A row of `summaries`: a session as of its turn `prompt_number`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub id: String,
    pub key: String,
    pub session_id: String,
    pub project_dir: Option<String>,
    pub prompt_number: Option<i64>,
    pub request: String,
    pub investigated: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub notes: Option<String>,
    pub files_read: Vec<String>,
    pub files_edited: Vec<String>,
    pub queue_ids: Vec<String>,
    pub origin: String,
    pub model: Option<String>,
    pub extra: Option<Json>,
    pub created_at: String,
}

/// A JSON document as stored (an import's `extra`), kept as its text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Json(pub Box<RawValue>);

impl PartialEq for Json {
    fn eq(&self, other: &Json) -> bool {
        self.0.get() == other.0.get()
    }
}

/// A row of `sessions`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    pub project_dir: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub source: Option<String>,
    pub model: Option<String>,
    pub status: String,
    pub prompt_count: i64,
    pub last_assistant_message: Option<String>,
    pub started_at: String,
    pub updated_at: String,
    pub ended_at: Option<String>,
    pub end_reason: Option<String>,
    #[serde(default)]
    pub reduced_at: Option<String>,
    /// The coding agent the session ran in (schema v11); a record made before it was Claude
    /// Code's.
    #[serde(default = "claude_code")]
    pub agent: String,
    /// Not a column: the identity of the session's repository (`project::identity`), which
    /// sync carries so that another machine files the session under its own checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Not a column: what its session-start contexts and its prompts' recall gave it (the
    /// `given` table, schema v13), which export carries and sync does not (see
    /// `transfer::export`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<GivenRow>,
}

/// A row of `given` (schema v13) but its session: one item an answer gave the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GivenRow {
    /// The prompt whose recall gave it; none for the session-start context.
    pub prompt_id: Option<String>,
    /// `context` or `recall`.
    pub giving: String,
    pub item_id: String,
    pub item_session: Option<String>,
    pub score: Option<f64>,
    /// A short code (see `crate::given::Reason`).
    pub reason: String,
    pub bytes: i64,
    pub at: String,
}

/// Reads a `given` row from a query that names its columns but the session.
pub fn given_row(r: &Row) -> rusqlite::Result<GivenRow> {
    Ok(GivenRow {
        prompt_id: r.get("prompt_id")?,
        giving: r.get("giving")?,
        item_id: r.get("item_id")?,
        item_session: r.get("item_session")?,
        score: r.get("score")?,
        reason: r.get("reason")?,
        bytes: r.get("bytes")?,
        at: r.get("at")?,
    })
}

/// A row of `user_prompts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub session_id: String,
    pub prompt_id: Option<String>,
    pub prompt_number: i64,
    pub prompt_text: String,
    pub truncated: bool,
    pub created_at: String,
    /// When the user pinned the standing instructions it states (schema v9; absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_at: Option<String>,
}

/// A row of `pending_queue`: an `observation` (a tool call) or a `summary_request` (a Stop).
/// (A claimed item as `queue claim` hands it to a consumer is `queue::Item`.)
#[derive(Debug, Serialize, Deserialize)]
pub struct QueueItem {
    pub id: String,
    pub session_id: String,
    pub tool_use_id: Option<String>,
    pub prompt_id: Option<String>,
    pub prompt_number: Option<i64>,
    pub event: String,
    pub tool_name: Option<String>,
    pub project_dir: Option<String>,
    pub files_touched: Box<RawValue>,
    pub raw_output: Box<RawValue>,
    pub priority: i64,
    pub status: String,
    pub attempts: i64,
    pub claimed_by: Option<String>,
    pub claimed_at: Option<String>,
    pub lease_until: Option<String>,
    pub last_error: Option<String>,
    pub payload_bytes: i64,
    pub truncated: bool,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub lease_token: Option<String>,
    #[serde(default)]
    pub retry_at: Option<String>,
}

/// The agent of a session recorded before sessions said theirs.
fn claude_code() -> String {
    crate::ops::CLAUDE_CODE.to_string()
}

pub fn session(r: &Row) -> rusqlite::Result<Session> {
    Ok(Session {
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        cwd: r.get("cwd")?,
        transcript_path: r.get("transcript_path")?,
        source: r.get("source")?,
        model: r.get("model")?,
        status: r.get("status")?,
        prompt_count: r.get("prompt_count")?,
        last_assistant_message: r.get("last_assistant_message")?,
        started_at: r.get("started_at")?,
        updated_at: r.get("updated_at")?,
        ended_at: r.get("ended_at")?,
        end_reason: r.get("end_reason")?,
        reduced_at: r.get("reduced_at")?,
        agent: r.get("agent")?,
        project_id: None,
        given: Vec::new(),
    })
}

/// Every column of `memories`, for [`memory`].
pub const MEMORY_COLUMNS: &str = "SELECT id, key, session_id, project_dir, prompt_number, type,
        title, subtitle, narrative, facts, concepts, files_read, files_modified, queue_ids,
        origin, model, extra, created_at FROM memories";
/// Every column of `summaries`, for [`summary`].
pub const SUMMARY_COLUMNS: &str = "SELECT id, key, session_id, project_dir, prompt_number,
        request, investigated, learned, completed, next_steps, notes, files_read, files_edited,
        queue_ids, origin, model, extra, created_at FROM summaries";

pub fn prompt(r: &Row) -> rusqlite::Result<Prompt> {
    Ok(Prompt {
        id: r.get("id")?,
        session_id: r.get("session_id")?,
        prompt_id: r.get("prompt_id")?,
        prompt_number: r.get("prompt_number")?,
        prompt_text: r.get("prompt_text")?,
        truncated: r.get("truncated")?,
        created_at: r.get("created_at")?,
        pinned_at: r.get("pinned_at")?,
    })
}

pub fn queue_item(r: &Row) -> rusqlite::Result<QueueItem> {
    Ok(QueueItem {
        id: r.get("id")?,
        session_id: r.get("session_id")?,
        tool_use_id: r.get("tool_use_id")?,
        prompt_id: r.get("prompt_id")?,
        prompt_number: r.get("prompt_number")?,
        event: r.get("event")?,
        tool_name: r.get("tool_name")?,
        project_dir: r.get("project_dir")?,
        files_touched: json(r.get("files_touched")?),
        raw_output: json(r.get("raw_output")?),
        priority: r.get("priority")?,
        status: r.get("status")?,
        attempts: r.get("attempts")?,
        claimed_by: r.get("claimed_by")?,
        claimed_at: r.get("claimed_at")?,
        lease_until: r.get("lease_until")?,
        last_error: r.get("last_error")?,
        payload_bytes: r.get("payload_bytes")?,
        truncated: r.get("truncated")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
        lease_token: r.get("lease_token")?,
        retry_at: r.get("retry_at")?,
    })
}

pub fn memory(r: &Row) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: r.get("id")?,
        key: r.get("key")?,
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        prompt_number: r.get("prompt_number")?,
        // Bounded as shown: a row an earlier build imported may hold any text.
        kind: kind(&r.get::<_, String>("type")?),
        title: r.get("title")?,
        subtitle: r.get("subtitle")?,
        narrative: r.get("narrative")?,
        facts: list(r, "facts")?,
        concepts: list(r, "concepts")?,
        files_read: list(r, "files_read")?,
        files_modified: list(r, "files_modified")?,
        queue_ids: list(r, "queue_ids")?,
        origin: r.get("origin")?,
        model: r.get("model")?,
        extra: r.get::<_, Option<String>>("extra")?.map(|t| Json(json(t))),
        created_at: r.get("created_at")?,
    })
}

pub fn summary(r: &Row) -> rusqlite::Result<Summary> {
    Ok(Summary {
        id: r.get("id")?,
        key: r.get("key")?,
        session_id: r.get("session_id")?,
        project_dir: r.get("project_dir")?,
        prompt_number: r.get("prompt_number")?,
        request: r.get("request")?,
        investigated: r.get("investigated")?,
        learned: r.get("learned")?,
        completed: r.get("completed")?,
        next_steps: r.get("next_steps")?,
        notes: r.get("notes")?,
        files_read: list(r, "files_read")?,
        files_edited: list(r, "files_edited")?,
        queue_ids: list(r, "queue_ids")?,
        origin: r.get("origin")?,
        model: r.get("model")?,
        extra: r.get::<_, Option<String>>("extra")?.map(|t| Json(json(t))),
        created_at: r.get("created_at")?,
    })
}

/// Stores a memory unless one with its id or key is there; whether it was new.
pub fn insert_memory(conn: &Connection, m: &Memory) -> rusqlite::Result<usize> {
    conn.prepare_cached(INSERT_MEMORY)?.execute(params![
        m.id,
        m.key,
        m.session_id,
        m.project_dir,
        m.prompt_number,
        m.kind,
        m.title,
        m.subtitle,
        m.narrative,
        list_text(&m.facts),
        list_text(&m.concepts),
        list_text(&m.files_read),
        list_text(&m.files_modified),
        list_text(&m.queue_ids),
        m.origin,
        m.model,
        m.extra.as_ref().map(|e| e.0.get()),
        m.created_at
    ])
}

/// Stores a summary unless one with its id or key is there; whether it was new.
pub fn insert_summary(conn: &Connection, s: &Summary) -> rusqlite::Result<usize> {
    conn.prepare_cached(INSERT_SUMMARY)?.execute(params![
        s.id,
        s.key,
        s.session_id,
        s.project_dir,
        s.prompt_number,
        s.request,
        s.investigated,
        s.learned,
        s.completed,
        s.next_steps,
        s.notes,
        list_text(&s.files_read),
        list_text(&s.files_edited),
        list_text(&s.queue_ids),
        s.origin,
        s.model,
        s.extra.as_ref().map(|e| e.0.get()),
        s.created_at
    ])
}

const INSERT_MEMORY: &str = "INSERT OR IGNORE INTO memories (id, key, session_id, project_dir,
        prompt_number, type, title, subtitle, narrative, facts, concepts, files_read,
        files_modified, queue_ids, origin, model, extra, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";
const INSERT_SUMMARY: &str = "INSERT OR IGNORE INTO summaries (id, key, session_id, project_dir,
        prompt_number, request, investigated, learned, completed, next_steps, notes, files_read,
        files_edited, queue_ids, origin, model, extra, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";

/// A list column as stored: a JSON array of strings.
pub fn list_text(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

fn list(r: &Row, column: &str) -> rusqlite::Result<Vec<String>> {
    let text: String = r.get(column)?;
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

/// Stored JSON as it is; text that is not JSON (never written by claude-mem) as a string.
pub fn json(text: String) -> Box<RawValue> {
    RawValue::from_string(text.clone()).unwrap_or_else(|_| {
        RawValue::from_string(serde_json::Value::String(text).to_string())
            .expect("a JSON string is JSON")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_come_from_the_random_end_of_uuids() {
        let v7 = "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44";
        assert_eq!(handle(v7), "3ebc8321ae44");
        assert_eq!(short_id(v7), "3ebc8321");
        assert_eq!(short_id("s-1"), "s-1");
        assert_eq!(
            handle("not-a-uuid-but-36-characters-long-xx"),
            "not-a-uuid-but-36-characters-long-xx"
        );
    }
}
