//! Export and import: the memory as JSON Lines, to move it between machines or merge several.
//!
//! The format, `claude-mem/1`: a header line `{"format": "claude-mem/1", "exported_at": ...,
//! "claude_mem": VERSION, "filters": {...}}`, then one record a line, each with a `type`:
//! `session`, `prompt`, `private_turn`, `observation`, `summary_request`, `event`, `memory`,
//! `summary`, and the columns of its table by name (JSON columns as JSON; a memory's `type`
//! column is `memory_type`, `type` naming the record). Each session comes first, then its
//! records. The compressor's spend ledger (`compress_calls`) is not exported: it is this
//! machine's spending, not memory. Within format 1, fields are only ever added: a reader ignores fields it does not
//! know; anything else (a record type it does not know) is a newer format.
//!
//! Import is idempotent: every record has its id (a UUID, or Claude Code's session id), and one
//! already here is left as it is, so importing twice stores once and several files merge. What
//! is read is not trusted: it is checked whole before anything is stored ([`parse`] of every
//! line), and its text goes through today's privacy and secret rules (as `scrub` applies them)
//! on the way in; calls of claude-mem's own MCP tools (an earlier version stored them) are
//! skipped, as the hooks skip them. [`Importer`] takes records from any source: the JSON Lines reader here, and
//! later a reader of thedotmack/claude-mem's database.

use std::io::Write;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::clock;
use crate::privacy::is_our_tool;
use crate::privacy::secrets::Redactor;
use crate::privacy::{clean_payload, clean_text};
use crate::store::base::slices::Slicer;
use crate::store::rows::{self, GivenRow, Json, Memory, Prompt, QueueItem, Session, Summary, json};

/// The name every header carries, and the version of it this claude-mem writes and reads.
pub const FORMAT_NAME: &str = "claude-mem";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    #[serde(default)]
    pub exported_at: Option<String>,
    #[serde(default)]
    pub claude_mem: Option<String>,
    #[serde(default)]
    pub filters: Option<serde_json::Value>,
}

/// Which rows an export holds (as `search` filters).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Filter {
    pub project: Option<String>,
    pub session: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateTurn {
    pub prompt_id: String,
    pub session_id: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Event {
    pub id: String,
    pub session_id: Option<String>,
    pub event: String,
    pub detail: Option<Box<RawValue>>,
    pub created_at: String,
}

/// One line of an export after the header.
#[derive(Debug)]
pub enum Record {
    Session(Session),
    Prompt(Prompt),
    PrivateTurn(PrivateTurn),
    Observation(QueueItem),
    SummaryRequest(QueueItem),
    Event(Event),
    Memory(Memory),
    Summary(Summary),
}

/// The record types, as the `type` field names them, in the order an export writes them.
const TYPES: [&str; 8] = [
    "session",
    "prompt",
    "private_turn",
    "observation",
    "summary_request",
    "event",
    "memory",
    "summary",
];

impl Record {
    fn type_name(&self) -> &'static str {
        match self {
            Record::Session(_) => TYPES[0],
            Record::Prompt(_) => TYPES[1],
            Record::PrivateTurn(_) => TYPES[2],
            Record::Observation(_) => TYPES[3],
            Record::SummaryRequest(_) => TYPES[4],
            Record::Event(_) => TYPES[5],
            Record::Memory(_) => TYPES[6],
            Record::Summary(_) => TYPES[7],
        }
    }

    /// One line: `{"type": ..., the columns...}`.
    pub fn line(&self) -> Result<String> {
        let body = match self {
            Record::Session(r) => serde_json::to_string(r)?,
            Record::Prompt(r) => serde_json::to_string(r)?,
            Record::PrivateTurn(r) => serde_json::to_string(r)?,
            Record::Observation(r) | Record::SummaryRequest(r) => serde_json::to_string(r)?,
            Record::Event(r) => serde_json::to_string(r)?,
            Record::Memory(r) => serde_json::to_string(r)?,
            Record::Summary(r) => serde_json::to_string(r)?,
        };
        Ok(format!(
            "{{\"type\":\"{}\",{}\n",
            self.type_name(),
            &body[1..]
        ))
    }
}

/// Reads the header line: the format must be one this claude-mem reads.
pub fn parse_header(line: &str) -> Result<Header> {
    let header: Header = serde_json::from_str(line)
        .ok()
        .filter(|h: &Header| h.format.starts_with(&format!("{FORMAT_NAME}/")))
        .context("it is not a claude-mem export (its first line is no claude-mem/N header)")?;
    let version = header.format[FORMAT_NAME.len() + 1..].parse::<u32>().ok();
    match version {
        Some(v) if v <= FORMAT_VERSION => Ok(header),
        _ => bail!(
            "it is in format {}, newer than this claude-mem reads ({FORMAT_NAME}/{FORMAT_VERSION}): \
             upgrade claude-mem",
            header.format
        ),
    }
}

/// Reads one record line.
pub fn parse(line: &str) -> Result<Record> {
    #[derive(Deserialize)]
    struct Tag {
        #[serde(rename = "type")]
        kind: String,
    }
    let tag: Tag = serde_json::from_str(line).context("not a JSON object with a \"type\"")?;
    let record = match tag.kind.as_str() {
        "session" => Record::Session(serde_json::from_str(line)?),
        "prompt" => Record::Prompt(serde_json::from_str(line)?),
        "private_turn" => Record::PrivateTurn(serde_json::from_str(line)?),
        "observation" => Record::Observation(serde_json::from_str(line)?),
        "summary_request" => Record::SummaryRequest(serde_json::from_str(line)?),
        "event" => Record::Event(serde_json::from_str(line)?),
        "memory" => Record::Memory(serde_json::from_str(made(line, MEMORY_LISTS)?)?),
        "summary" => Record::Summary(serde_json::from_str(made(line, SUMMARY_LISTS)?)?),
        other => bail!("a record of type {other:?}, which this claude-mem does not know"),
    };
    check(&record)?;
    Ok(record)
}

/// What the database's constraints would refuse half-way, refused before anything is stored.
fn check(record: &Record) -> Result<()> {
    let bad = |what: &str, value: &dyn std::fmt::Debug| bail!("{what} cannot be {value:?}");
    match record {
        Record::Session(s) if !["active", "closed"].contains(&s.status.as_str()) => {
            bad("a session's status", &s.status)
        }
        Record::Session(s) => match s.given.iter().find(|g| !given_ok(g)) {
            Some(g) => bad("a record of what was given", g),
            None => Ok(()),
        },
        Record::Observation(q) | Record::SummaryRequest(q) => {
            if !(0..=2).contains(&q.priority) {
                return bad("priority", &q.priority);
            }
            if !["raw", "claimed", "done", "failed"].contains(&q.status.as_str()) {
                return bad("status", &q.status);
            }
            serde_json::from_str::<Vec<String>>(q.files_touched.get())
                .context("files_touched must be an array of paths")?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether a record of what was given is one a hook could have written: a known giving and
/// reason, a size and a score that are numbers a size and a share can be.
fn given_ok(g: &GivenRow) -> bool {
    ["context", "recall"].contains(&g.giving.as_str())
        && crate::given::Reason::parse(&g.reason).is_some()
        && g.bytes >= 0
        && g.score.is_none_or(f64::is_finite)
}

/// The list columns of a memory and of a summary.
const MEMORY_LISTS: &[&str] = &[
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "queue_ids",
];
const SUMMARY_LISTS: &[&str] = &["files_read", "files_edited", "queue_ids"];

/// A memory's or summary's line, once its origin is one the table takes, its lists are arrays
/// of strings (as every reader of them expects) and its `extra` an object.
fn made<'a>(line: &'a str, lists: &[&str]) -> Result<&'a str> {
    let record: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)?;
    if let Some(origin) = record.get("origin").and_then(|o| o.as_str())
        && !["compressor", "import"].contains(&origin)
    {
        bail!("origin cannot be {origin:?}");
    }
    for name in lists {
        if let Some(list) = record.get(*name) {
            serde_json::from_value::<Vec<String>>(list.clone())
                .with_context(|| format!("{name} must be an array of strings"))?;
        }
    }
    if let Some(extra) = record.get("extra").filter(|e| !e.is_null()) {
        serde_json::from_value::<serde_json::Map<String, serde_json::Value>>(extra.clone())
            .context("extra must be an object")?;
    }
    Ok(line)
}

/// How many records of each type, in [`TYPES`] order.
pub type Counts = [i64; TYPES.len()];

/// Counts `record` in `counts`.
pub fn tally(counts: &mut Counts, record: &Record) {
    if let Some(at) = TYPES.iter().position(|t| *t == record.type_name()) {
        counts[at] += 1;
    }
}

/// Writes the header and every record `filter` selects; returns how many of each type.
pub fn export(conn: &Connection, filter: &Filter, out: &mut dyn Write) -> Result<Counts> {
    writeln!(out, "{}", serde_json::to_string(&header(filter)?)?)?;
    let counts = each_record(conn, filter, &mut |record| {
        out.write_all(record.line()?.as_bytes())?;
        Ok(())
    })?;
    out.flush()?;
    Ok(counts)
}

/// The header of an export of `filter` made now.
pub fn header(filter: &Filter) -> Result<Header> {
    Ok(Header {
        format: format!("{FORMAT_NAME}/{FORMAT_VERSION}"),
        exported_at: Some(clock::now()),
        claude_mem: Some(env!("CARGO_PKG_VERSION").to_string()),
        filters: Some(serde_json::to_value(filter)?),
    })
}

/// Hands `each` every record `filter` selects, in the export's order (a session, then its
/// records); returns how many of each type. Every view of an export (its JSON Lines, the HTML
/// page) reads through here, so that none can show more than the export holds.
pub fn each_record(
    conn: &Connection,
    filter: &Filter,
    each: &mut dyn FnMut(&Record) -> Result<()>,
) -> Result<Counts> {
    let mut counts = [0; TYPES.len()];
    let since = filter.since.as_deref().unwrap_or("");
    let until = filter.until.as_deref().unwrap_or("~");
    let sessions: Vec<Session> = conn
        .prepare(EXPORT_SESSIONS)?
        .query_map(
            params![filter.project, filter.session, filter.since, filter.until],
            rows::session,
        )?
        .collect::<rusqlite::Result<_>>()?;
    for mut s in sessions {
        let id = s.session_id.clone();
        s.given = conn
            .prepare_cached(EXPORT_GIVEN)?
            .query_map(params![id, since, until], rows::given_row)?
            .collect::<rusqlite::Result<_>>()?;
        let active_before = filter
            .since
            .as_ref()
            .is_some_and(|since| s.updated_at < *since);
        let mut records = vec![Record::Session(s)];
        let mut read = |sql: &str, row: fn(&Row) -> rusqlite::Result<Record>| -> Result<()> {
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt.query_map(params![id, since, until], row)?;
            for record in rows {
                records.push(record?);
            }
            Ok(())
        };
        read(EXPORT_PROMPTS, prompt)?;
        read(EXPORT_PRIVATE_TURNS, private_turn)?;
        read(EXPORT_QUEUE, queued)?;
        read(EXPORT_EVENTS, event)?;
        read(EXPORT_MEMORIES, memory)?;
        read(EXPORT_SUMMARIES, summary)?;
        // A session still open but idle since before the range: nothing of it is in it.
        if active_before && records.len() == 1 {
            continue;
        }
        for record in &records {
            each(record)?;
            tally(&mut counts, record);
        }
    }
    Ok(counts)
}

/// The sessions of the filter, those active within its range (?3 to ?4) included.
const EXPORT_SESSIONS: &str = "SELECT * FROM sessions
     WHERE (?1 IS NULL OR project_dir = ?1) AND (?2 IS NULL OR session_id = ?2)
       AND (?3 IS NULL OR updated_at >= ?3 OR status = 'active')
       AND (?4 IS NULL OR started_at < ?4)
     ORDER BY started_at, rowid";
const EXPORT_GIVEN: &str = "SELECT prompt_id, giving, item_id, item_session, score, reason,
        bytes, at FROM given WHERE session_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY at, rowid";
const EXPORT_PROMPTS: &str = "SELECT * FROM user_prompts
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY prompt_number";
const EXPORT_PRIVATE_TURNS: &str = "SELECT * FROM private_turns
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at";
const EXPORT_QUEUE: &str = "SELECT * FROM pending_queue
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY rowid";
const EXPORT_EVENTS: &str = "SELECT * FROM event_log
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at, rowid";
const EXPORT_MEMORIES: &str = "SELECT * FROM memories
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at, rowid";
const EXPORT_SUMMARIES: &str = "SELECT * FROM summaries
     WHERE session_id = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at, rowid";

pub(super) fn prompt(r: &Row) -> rusqlite::Result<Record> {
    rows::prompt(r).map(Record::Prompt)
}

pub(super) fn private_turn(r: &Row) -> rusqlite::Result<Record> {
    Ok(Record::PrivateTurn(PrivateTurn {
        prompt_id: r.get("prompt_id")?,
        session_id: r.get("session_id")?,
        created_at: r.get("created_at")?,
    }))
}

pub(super) fn queued(r: &Row) -> rusqlite::Result<Record> {
    let row = rows::queue_item(r)?;
    Ok(if r.get::<_, String>("kind")? == "summary" {
        Record::SummaryRequest(row)
    } else {
        Record::Observation(row)
    })
}

pub(super) fn event(r: &Row) -> rusqlite::Result<Record> {
    Ok(Record::Event(Event {
        id: r.get("id")?,
        session_id: r.get("session_id")?,
        event: r.get("event")?,
        detail: r.get::<_, Option<String>>("detail")?.map(json),
        created_at: r.get("created_at")?,
    }))
}

pub(super) fn memory(r: &Row) -> rusqlite::Result<Record> {
    rows::memory(r).map(Record::Memory)
}

pub(super) fn summary(r: &Row) -> rusqlite::Result<Record> {
    rows::summary(r).map(Record::Summary)
}

/// Stores records, each once: what is here already (by id, or a memory or summary by its
/// `key`) is left as it is. Its text is cleaned with today's rules first.
pub struct Importer<'a> {
    pub redactor: &'a Redactor,
    /// Per type ([`TYPES`] order): records stored, and records that were here already.
    pub stored: Counts,
    pub present: Counts,
    /// Calls of claude-mem's own MCP tools, which an earlier version stored and exported: never
    /// stored (see `privacy::is_our_tool`).
    pub ours: i64,
}

impl<'a> Importer<'a> {
    pub fn new(redactor: &'a Redactor) -> Importer<'a> {
        Importer {
            redactor,
            stored: [0; TYPES.len()],
            present: [0; TYPES.len()],
            ours: 0,
        }
    }

    /// Stores the records `next` hands out, in the slicer's short transactions; `next` returns
    /// `None` at the end.
    pub fn run(
        &mut self,
        conn: &Connection,
        slicer: &Slicer,
        mut next: impl FnMut() -> Result<Option<Record>>,
    ) -> Result<()> {
        slicer.run(conn, |tx| match next()? {
            Some(record) => {
                self.store(tx, &record)?;
                Ok(true)
            }
            None => Ok(false),
        })?;
        Ok(())
    }

    pub(super) fn store(&mut self, conn: &Connection, record: &Record) -> Result<()> {
        if let Record::Observation(q) = record
            && q.tool_name.as_deref().is_some_and(is_our_tool)
        {
            self.ours += 1;
            return Ok(());
        }
        let r = self.redactor;
        let inserted = match record {
            Record::Session(s) => {
                store_given(conn, s)?;
                store_session(conn, r, s)?
            }
            Record::Prompt(p) => store_prompt(conn, r, p)?,
            Record::PrivateTurn(t) => conn
                .prepare_cached(INSERT_PRIVATE_TURN)?
                .execute(params![t.prompt_id, t.session_id, t.created_at])?,
            Record::Observation(q) => store_queued(conn, r, q, "observation")?,
            Record::SummaryRequest(q) => store_queued(conn, r, q, "summary")?,
            Record::Event(e) => conn.prepare_cached(INSERT_EVENT)?.execute(params![
                e.id,
                e.session_id,
                e.event,
                e.detail.as_deref().map(|d| clean_payload(r, None, d.get())),
                e.created_at
            ])?,
            Record::Memory(m) => store_memory(conn, r, m)?,
            Record::Summary(s) => store_summary(conn, r, s)?,
        };
        let at = TYPES
            .iter()
            .position(|t| *t == record.type_name())
            .unwrap_or(0);
        if inserted > 0 {
            self.stored[at] += 1;
        } else {
            self.present[at] += 1;
        }
        Ok(())
    }
}

/// Stores a session, its last message cleaned; returns whether it was new.
fn store_session(conn: &Connection, r: &Redactor, s: &Session) -> Result<usize> {
    Ok(conn.prepare_cached(INSERT_SESSION)?.execute(params![
        s.session_id,
        s.project_dir,
        s.cwd,
        s.transcript_path,
        s.source,
        s.model,
        s.status,
        s.prompt_count,
        s.last_assistant_message
            .as_deref()
            .map(|m| clean_text(r, m)),
        s.started_at,
        s.updated_at,
        s.ended_at,
        s.end_reason,
        s.reduced_at,
        s.agent
    ])?)
}

/// Stores what the session was given, each record once (an import twice stores it once).
fn store_given(conn: &Connection, s: &Session) -> Result<()> {
    let mut insert = conn.prepare_cached(INSERT_GIVEN)?;
    for g in &s.given {
        insert.execute(params![
            s.session_id,
            g.prompt_id,
            g.giving,
            g.item_id,
            g.item_session,
            g.score,
            g.reason,
            g.bytes,
            g.at
        ])?;
    }
    Ok(())
}

/// Stores a prompt, its text cleaned, marked when it states a standing instruction as a hook
/// would have marked it; returns whether it was new.
fn store_prompt(conn: &Connection, r: &Redactor, p: &Prompt) -> Result<usize> {
    let text = clean_text(r, &p.prompt_text);
    let standing = Some(crate::standing::mark(&text)).filter(|mask| *mask != 0);
    Ok(conn.prepare_cached(INSERT_PROMPT)?.execute(params![
        p.id,
        p.session_id,
        p.prompt_id,
        p.prompt_number,
        text,
        p.truncated,
        p.created_at,
        standing,
        p.pinned_at
    ])?)
}

/// Stores a queue item (`kind` observation or summary), its payload and error cleaned;
/// returns whether it was new.
fn store_queued(conn: &Connection, r: &Redactor, q: &QueueItem, kind: &str) -> Result<usize> {
    Ok(conn.prepare_cached(INSERT_QUEUED)?.execute(params![
        q.id,
        kind,
        q.session_id,
        q.tool_use_id,
        q.prompt_id,
        q.prompt_number,
        q.event,
        q.tool_name,
        q.project_dir,
        q.files_touched.get(),
        clean_payload(r, q.tool_name.as_deref(), q.raw_output.get()),
        q.priority,
        q.status,
        q.attempts,
        q.claimed_by,
        q.claimed_at,
        q.lease_until,
        q.last_error.as_deref().map(|e| clean_text(r, e)),
        q.payload_bytes,
        q.truncated,
        q.created_at,
        q.updated_at,
        q.lease_token,
        q.retry_at
    ])?)
}

/// Stores a memory, cleaned ([`cleaned_memory`]); returns whether it was new.
fn store_memory(conn: &Connection, r: &Redactor, m: &Memory) -> Result<usize> {
    Ok(rows::insert_memory(conn, &cleaned_memory(r, m))?)
}

/// A memory, its prose and JSON texts cleaned as `scrub` cleans them: as it is stored from an
/// import, and as it leaves in a sync.
pub(super) fn cleaned_memory(r: &Redactor, m: &Memory) -> Memory {
    Memory {
        // Its secrets out before it is cut, so that no cut leaves a part no rule knows.
        kind: rows::kind(&clean_text(r, &m.kind)),
        title: clean_text(r, &m.title).into_owned(),
        subtitle: m.subtitle.as_deref().map(|t| clean_text(r, t).into_owned()),
        narrative: clean_text(r, &m.narrative).into_owned(),
        facts: clean_list(r, &m.facts),
        concepts: clean_list(r, &m.concepts),
        extra: clean_extra(r, m.extra.as_ref()),
        ..m.clone()
    }
}

/// Stores a summary, cleaned ([`cleaned_summary`]).
fn store_summary(conn: &Connection, r: &Redactor, s: &Summary) -> Result<usize> {
    Ok(rows::insert_summary(conn, &cleaned_summary(r, s))?)
}

/// A summary, cleaned as [`cleaned_memory`] cleans a memory.
pub(super) fn cleaned_summary(r: &Redactor, s: &Summary) -> Summary {
    let text = |t: &str| clean_text(r, t).into_owned();
    Summary {
        request: text(&s.request),
        investigated: text(&s.investigated),
        learned: text(&s.learned),
        completed: text(&s.completed),
        next_steps: text(&s.next_steps),
        notes: s.notes.as_deref().map(text),
        extra: clean_extra(r, s.extra.as_ref()),
        ..s.clone()
    }
}

/// A list of texts cleaned as the JSON document it is stored as.
fn clean_list(r: &Redactor, list: &[String]) -> Vec<String> {
    let clean = clean_payload(r, None, &rows::list_text(list)).into_owned();
    serde_json::from_str(&clean).unwrap_or_default()
}

fn clean_extra(r: &Redactor, extra: Option<&Json>) -> Option<Json> {
    extra.map(|e| Json(rows::json(clean_payload(r, None, e.0.get()).into_owned())))
}

const INSERT_GIVEN: &str = "INSERT INTO given (session_id, prompt_id, giving, item_id,
        item_session, score, reason, bytes, at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE NOT EXISTS (SELECT 1 FROM given
        WHERE session_id = ?1 AND prompt_id IS ?2 AND item_id = ?4 AND at = ?9)";
const INSERT_SESSION: &str = "INSERT OR IGNORE INTO sessions (session_id, project_dir, cwd,
        transcript_path, source, model, status, prompt_count, last_assistant_message,
        started_at, updated_at, ended_at, end_reason, reduced_at, agent)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
const INSERT_PROMPT: &str = "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_id,
        prompt_number, prompt_text, truncated, created_at, standing, pinned_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const INSERT_PRIVATE_TURN: &str =
    "INSERT OR IGNORE INTO private_turns (prompt_id, session_id, created_at) VALUES (?1, ?2, ?3)";
const INSERT_QUEUED: &str = "INSERT OR IGNORE INTO pending_queue (id, kind, session_id,
        tool_use_id, prompt_id, prompt_number, event, tool_name, project_dir, files_touched,
        raw_output, priority, status, attempts, claimed_by, claimed_at, lease_until, last_error,
        payload_bytes, truncated, created_at, updated_at, lease_token, retry_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
             ?19, ?20, ?21, ?22, ?23, ?24)";
const INSERT_EVENT: &str = "INSERT OR IGNORE INTO event_log (id, session_id, event, detail,
        created_at) VALUES (?1, ?2, ?3, ?4, ?5)";
/// What a count of records says: "3 sessions, 30 prompts, ...", the types there are any of.
pub fn describe(counts: &Counts) -> String {
    const NAMES: [&str; TYPES.len()] = [
        "session",
        "prompt",
        "private turn",
        "tool call",
        "summary request",
        "event",
        "memory",
        "summary",
    ];
    let parts: Vec<String> = counts
        .iter()
        .zip(NAMES)
        .filter(|(n, _)| **n > 0)
        .map(|(n, name)| crate::text::plural(*n, name))
        .collect();
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}
