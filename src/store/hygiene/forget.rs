//! Forgetting: what a person asks to be gone is deleted so that nothing of it can be read back.
//!
//! What a target covers is worked out first, read-only ([`plan`]), so that the person sees it
//! before anything goes; then exactly that is deleted ([`apply`]), in short transactions (a
//! hook never waits long), with `secure_delete` on: SQLite overwrites the freed space of a page
//! and every freed page with zeros. The deletes leave tombstones (schema v4, v5), from which
//! the search index removes the rows' text. What the caller finishes: the WAL (a truncating
//! checkpoint), the free pages (an incremental vacuum), the index (a catch-up) and the spill folder
//! ([`Plan::covers`] says which spilled writes belong to what was forgotten).
//!
//! What the compressor made of a forgotten row (a memory or summary whose `queue_ids` name it,
//! or that tells of a forgotten prompt's turn) holds its text too: it goes with it.
//!
//! Retention deletes whole sessions through [`session`] too, without `secure_delete`.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use crate::ops::{Change, Write};
use crate::store::base::slices::Slicer;
use crate::store::rows::Kind;
use crate::store::write::purge::LAST_MESSAGE as LAST_MESSAGE_AFTER_PURGE;

/// What to forget.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Session(String),
    /// A prompt and its turn: the tool calls and Claude's message that followed it.
    Turn(String),
    /// One tool call or message (a queue row).
    Item(String),
    /// One memory or summary the compressor made (or an import brought).
    Memory(String),
    Summary(String),
    Range(Range),
}

impl Target {
    /// What forgetting the item `id` of `kind` takes: a session whole, a prompt with its turn,
    /// a tool call or message with what was made of it, a memory or summary alone.
    pub fn of(kind: Kind, id: String) -> Target {
        match kind {
            Kind::Session => Target::Session(id),
            Kind::Prompt => Target::Turn(id),
            Kind::Observation | Kind::Message => Target::Item(id),
            Kind::Memory => Target::Memory(id),
            Kind::Summary => Target::Summary(id),
        }
    }
}

/// Everything of one project (or of all), captured within a time range (`since <= t < until`,
/// ISO-8601 UTC). Sessions that started within it go whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Range {
    pub project: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

impl Range {
    fn holds(&self, at: &str) -> bool {
        self.since.as_deref().is_none_or(|since| at >= since)
            && self.until.as_deref().is_none_or(|until| at < until)
    }

    fn bounded(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// The bounds as SQL parameters: the project, and the range (open ends as '' and '~').
    fn params(&self) -> (Option<&str>, &str, &str) {
        (
            self.project.as_deref(),
            self.since.as_deref().unwrap_or(""),
            self.until.as_deref().unwrap_or("~"),
        )
    }
}

/// A session that goes whole, as the question before forgetting shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub session_id: String,
    pub project_dir: Option<String>,
    pub started_at: String,
    /// What is in it (`sessions` 1).
    pub rows: Counts,
}

/// What a target covers: the sessions that go whole, and rows of the sessions that stay.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub sessions: Vec<SessionInfo>,
    pub prompts: Vec<String>,
    pub calls: Vec<String>,
    pub messages: Vec<String>,
    pub memories: Vec<String>,
    pub summaries: Vec<String>,
    events: Vec<String>,
    private_turns: Vec<String>,
    /// Sessions that stay but lose a message of Claude's: their last one is worked out again.
    touched: Vec<String>,
    sources: Sources,
    reach: Reach,
}

/// The rows of sessions that stay that memories and summaries may have been made from.
#[derive(Debug, Clone, Default)]
struct Sources {
    /// The forgotten queue rows, by session.
    queue: HashMap<String, HashSet<String>>,
    /// A forgotten prompt: its session and number.
    prompt: Option<(String, i64)>,
}

/// What a spilled write must match to belong to what is forgotten.
#[derive(Debug, Clone, Default)]
struct Reach {
    sessions: HashSet<String>,
    ids: HashSet<String>,
    /// A turn: its session, its prompt_id, and when it began and ended.
    turn: Option<(String, Option<String>, String, Option<String>)>,
    range: Option<Range>,
}

/// How many of each kind a plan removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub sessions: i64,
    pub prompts: i64,
    pub calls: i64,
    pub messages: i64,
    pub memories: i64,
    pub summaries: i64,
}

impl std::ops::Add for Counts {
    type Output = Counts;

    fn add(self, other: Counts) -> Counts {
        Counts {
            sessions: self.sessions + other.sessions,
            prompts: self.prompts + other.prompts,
            calls: self.calls + other.calls,
            messages: self.messages + other.messages,
            memories: self.memories + other.memories,
            summaries: self.summaries + other.summaries,
        }
    }
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.counts() == Counts::default()
    }

    /// Everything it removes, the rows of whole sessions included.
    pub fn counts(&self) -> Counts {
        self.sessions
            .iter()
            .fold(self.staying(), |sum, s| sum + s.rows)
    }

    /// What it removes of the sessions that stay.
    pub fn staying(&self) -> Counts {
        Counts {
            sessions: 0,
            prompts: self.prompts.len() as i64,
            calls: self.calls.len() as i64,
            messages: self.messages.len() as i64,
            memories: self.memories.len() as i64,
            summaries: self.summaries.len() as i64,
        }
    }

    /// Whether a write waiting in the spill folder belongs to what is forgotten.
    pub fn covers(&self, write: &Write) -> bool {
        let reach = &self.reach;
        let session = &write.session.session_id;
        if reach.sessions.contains(session) || reach.ids.contains(&write.id) {
            return true;
        }
        if let Some((turn_session, prompt_id, from, to)) = &reach.turn {
            let same_turn = prompt_id.is_some() && prompt_id_of(write) == prompt_id.as_deref();
            let within = write.at >= *from && to.as_ref().is_none_or(|to| write.at < *to);
            if session == turn_session && (same_turn || within) {
                return true;
            }
        }
        reach.range.as_ref().is_some_and(|range| {
            range.holds(&write.at)
                && range
                    .project
                    .as_ref()
                    .is_none_or(|p| write.session.project_dir.as_ref() == Some(p))
        })
    }
}

fn prompt_id_of(write: &Write) -> Option<&str> {
    match &write.change {
        Change::Observation(o) => o.prompt_id.as_deref(),
        Change::SummaryRequest { prompt_id, .. }
        | Change::Prompt { prompt_id, .. }
        | Change::PrivatePrompt { prompt_id } => prompt_id.as_deref(),
        Change::SessionStart { .. } | Change::SessionEnd { .. } => None,
    }
}

const SESSION_INFO: &str = "SELECT s.session_id, s.project_dir, s.started_at,
        (SELECT COUNT(*) FROM user_prompts p WHERE p.session_id = s.session_id) AS prompts,
        (SELECT COUNT(*) FROM pending_queue q WHERE q.session_id = s.session_id) AS rows,
        (SELECT COUNT(*) FROM pending_queue q WHERE q.session_id = s.session_id
            AND q.kind = 'summary') AS messages,
        (SELECT COUNT(*) FROM memories m WHERE m.session_id = s.session_id) AS memories,
        (SELECT COUNT(*) FROM summaries m WHERE m.session_id = s.session_id) AS summaries
   FROM sessions s";
/// Sessions of a range that go whole: of the project (?1, or any), started since ?2, last
/// active before ?3.
const RANGE_SESSIONS: &str = "WHERE (?1 IS NULL OR s.project_dir = ?1)
        AND s.started_at >= ?2 AND s.updated_at < ?3 ORDER BY s.started_at";
/// Queue rows captured within a range, found through the drain index (every status and
/// priority there is), of the project's sessions.
const RANGE_QUEUE: &str = "SELECT q.id, q.kind, q.session_id FROM pending_queue q
     WHERE q.status IN ('raw', 'claimed', 'done', 'failed') AND q.priority IN (0, 1, 2)
       AND q.created_at >= ?2 AND q.created_at < ?3
       AND (?1 IS NULL OR q.project_dir = ?1
            OR q.session_id IN (SELECT session_id FROM sessions WHERE project_dir = ?1))";
const RANGE_PROMPTS: &str = "SELECT id, session_id FROM user_prompts
     WHERE created_at >= ?2 AND created_at < ?3
       AND (?1 IS NULL OR session_id IN (SELECT session_id FROM sessions WHERE project_dir = ?1))";
const RANGE_EVENTS: &str = "SELECT id, session_id FROM event_log
     WHERE created_at >= ?2 AND created_at < ?3
       AND (?1 IS NULL OR session_id IN (SELECT session_id FROM sessions WHERE project_dir = ?1))";
const RANGE_PRIVATE_TURNS: &str = "SELECT prompt_id, session_id FROM private_turns
     WHERE created_at >= ?2 AND created_at < ?3
       AND (?1 IS NULL OR session_id IN (SELECT session_id FROM sessions WHERE project_dir = ?1))";
/// Memories and summaries of the project's sessions (?1, or any) made within a range, found
/// through their session index.
const RANGE_MEMORIES: &str = "SELECT id, session_id FROM memories
     WHERE session_id IN (SELECT session_id FROM sessions WHERE ?1 IS NULL OR project_dir = ?1)
       AND created_at >= ?2 AND created_at < ?3";
const RANGE_SUMMARIES: &str = "SELECT id, session_id FROM summaries
     WHERE session_id IN (SELECT session_id FROM sessions WHERE ?1 IS NULL OR project_dir = ?1)
       AND created_at >= ?2 AND created_at < ?3";
/// Memories and summaries without a session row, of the project (?1, by their own
/// project_dir, or any) made within a range.
const ORPHAN_MEMORIES: &str = "SELECT id FROM memories m
     WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = m.session_id)
       AND (?1 IS NULL OR m.project_dir = ?1) AND m.created_at >= ?2 AND m.created_at < ?3";
const ORPHAN_SUMMARIES: &str = "SELECT id FROM summaries m
     WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = m.session_id)
       AND (?1 IS NULL OR m.project_dir = ?1) AND m.created_at >= ?2 AND m.created_at < ?3";
/// Tool calls and messages without a session row, of the project (by their own project_dir)
/// made within a range.
const ORPHAN_QUEUE: &str = "SELECT q.id, q.kind, q.session_id FROM pending_queue q
     WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = q.session_id)
       AND (?1 IS NULL OR q.project_dir = ?1) AND q.created_at >= ?2 AND q.created_at < ?3";
/// Prompts, events and private turns without a session row carry no project: only a forget of
/// every project (?1 NULL) reaches them.
const ORPHAN_PROMPTS: &str = "SELECT p.id FROM user_prompts p
     WHERE ?1 IS NULL AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = p.session_id)
       AND p.created_at >= ?2 AND p.created_at < ?3";
const ORPHAN_EVENTS: &str = "SELECT e.id FROM event_log e
     WHERE ?1 IS NULL AND e.session_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = e.session_id)
       AND e.created_at >= ?2 AND e.created_at < ?3";
const ORPHAN_PRIVATE_TURNS: &str = "SELECT t.prompt_id FROM private_turns t
     WHERE ?1 IS NULL AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = t.session_id)
       AND t.created_at >= ?2 AND t.created_at < ?3";
/// A session's memories and summaries, with what they were made from.
const SESSION_MEMORIES: &str = "SELECT id, queue_ids, prompt_number FROM memories
     WHERE session_id = ?1";
const SESSION_SUMMARIES: &str = "SELECT id, queue_ids, prompt_number FROM summaries
     WHERE session_id = ?1";
/// The queue rows of a prompt's turn, as `show` groups them: captured from the prompt until
/// the session's next prompt (?2 to ?3), or carrying the prompt's prompt_id (?4).
const TURN_ROWS: &str = "SELECT id, kind FROM pending_queue
     WHERE session_id = ?1 AND ((created_at >= ?2 AND created_at < ?3) OR prompt_id = ?4)";

/// Works out what `target` covers, reading only.
pub fn plan(conn: &Connection, target: &Target) -> Result<Plan> {
    let mut plan = Plan::default();
    match target {
        Target::Session(id) => {
            plan.sessions = sessions(
                conn,
                &format!("{SESSION_INFO} WHERE s.session_id = ?1"),
                [id],
            )?;
        }
        Target::Turn(id) => turn(conn, id, &mut plan)?,
        Target::Item(id) => {
            let row: Option<(String, String)> = conn
                .query_row(
                    "SELECT kind, session_id FROM pending_queue WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((kind, session)) = row {
                plan.queue_row(id.clone(), &kind, session);
            }
        }
        Target::Memory(id) => plan.memories = existing(conn, "memories", id)?,
        Target::Summary(id) => plan.summaries = existing(conn, "summaries", id)?,
        Target::Range(range) => {
            let (project, since, until) = range.params();
            plan.sessions = sessions(
                conn,
                &format!("{SESSION_INFO} {RANGE_SESSIONS}"),
                params![project, since, until],
            )?;
            if range.bounded() {
                range_rows(conn, range, &mut plan)?;
            }
            orphans(conn, range, &mut plan)?;
            plan.reach.range = Some(range.clone());
        }
    }
    plan.derive(conn)?;
    plan.reach.sessions = plan.sessions.iter().map(|s| s.session_id.clone()).collect();
    plan.reach.ids.extend(plan.prompts.iter().cloned());
    plan.reach.ids.extend(plan.calls.iter().cloned());
    plan.reach.ids.extend(plan.messages.iter().cloned());
    Ok(plan)
}

impl Plan {
    fn queue_row(&mut self, id: String, kind: &str, session: String) {
        self.sources
            .queue
            .entry(session.clone())
            .or_default()
            .insert(id.clone());
        if kind == "summary" {
            self.messages.push(id);
            if !self.touched.contains(&session) {
                self.touched.push(session);
            }
        } else {
            self.calls.push(id);
        }
    }

    /// Adds the memories and summaries of the sessions that stay made from a forgotten row:
    /// those whose `queue_ids` name a forgotten queue row, and those of a forgotten prompt's
    /// turn (by its number: an import's may name no queue row).
    fn derive(&mut self, conn: &Connection) -> Result<()> {
        let mut sessions: Vec<&String> = self.sources.queue.keys().collect();
        if let Some((session, _)) = &self.sources.prompt {
            sessions.push(session);
        }
        sessions.sort();
        sessions.dedup();
        for (sql, found) in [
            (SESSION_MEMORIES, &mut self.memories),
            (SESSION_SUMMARIES, &mut self.summaries),
        ] {
            let mut known: HashSet<String> = found.iter().cloned().collect();
            let mut stmt = conn.prepare_cached(sql)?;
            for session in &sessions {
                let forgotten = self.sources.queue.get(*session);
                let number = match &self.sources.prompt {
                    Some((of, number)) if of == *session => Some(*number),
                    _ => None,
                };
                let rows = stmt.query_map([session], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<i64>>(2)?,
                    ))
                })?;
                for row in rows {
                    let (id, queue_ids, prompt_number) = row?;
                    let made_from = |queue: &HashSet<String>| {
                        serde_json::from_str::<Vec<String>>(&queue_ids)
                            .unwrap_or_default()
                            .iter()
                            .any(|q| queue.contains(q))
                    };
                    let derived = (number.is_some() && prompt_number == number)
                        || forgotten.is_some_and(made_from);
                    if derived && known.insert(id.clone()) {
                        found.push(id);
                    }
                }
            }
        }
        Ok(())
    }
}

/// `[id]` if `table` has a row of that id.
fn existing(conn: &Connection, table: &str, id: &str) -> Result<Vec<String>> {
    Ok(conn
        .query_row(
            &format!("SELECT id FROM {table} WHERE id = ?1"),
            [id],
            |r| r.get(0),
        )
        .optional()?
        .into_iter()
        .collect())
}

fn sessions(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<SessionInfo>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params, |r| {
        let rows: i64 = r.get("rows")?;
        let messages: i64 = r.get("messages")?;
        Ok(SessionInfo {
            session_id: r.get("session_id")?,
            project_dir: r.get("project_dir")?,
            started_at: r.get("started_at")?,
            rows: Counts {
                sessions: 1,
                prompts: r.get("prompts")?,
                calls: rows - messages,
                messages,
                memories: r.get("memories")?,
                summaries: r.get("summaries")?,
            },
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn turn(conn: &Connection, prompt: &str, plan: &mut Plan) -> Result<()> {
    let found: Option<(String, Option<String>, i64, String)> = conn
        .query_row(
            "SELECT session_id, prompt_id, prompt_number, created_at FROM user_prompts
              WHERE id = ?1",
            [prompt],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((session, prompt_id, number, from)) = found else {
        return Ok(());
    };
    let to: Option<String> = conn.query_row(
        "SELECT min(created_at) FROM user_prompts WHERE session_id = ?1 AND prompt_number > ?2",
        params![session, number],
        |r| r.get(0),
    )?;
    let rows: Vec<(String, String)> = conn
        .prepare(TURN_ROWS)?
        .query_map(
            params![session, from, to.as_deref().unwrap_or("~"), prompt_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    plan.prompts.push(prompt.to_string());
    for (id, kind) in rows {
        plan.queue_row(id, &kind, session.clone());
    }
    plan.sources.prompt = Some((session.clone(), number));
    plan.reach.turn = Some((session, prompt_id, from, to));
    Ok(())
}

/// The rows of a range in sessions that do not go whole.
fn range_rows(conn: &Connection, range: &Range, plan: &mut Plan) -> Result<()> {
    let (project, since, until) = range.params();
    let whole: HashSet<String> = plan.sessions.iter().map(|s| s.session_id.clone()).collect();
    let read = |sql: &str| -> Result<Vec<(String, String)>> {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map(params![project, since, until], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|(_, session)| !whole.contains(session))
            .collect())
    };
    plan.prompts = read(RANGE_PROMPTS)?.into_iter().map(|(id, _)| id).collect();
    plan.events = read(RANGE_EVENTS)?.into_iter().map(|(id, _)| id).collect();
    plan.private_turns = read(RANGE_PRIVATE_TURNS)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    plan.memories = read(RANGE_MEMORIES)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    plan.summaries = read(RANGE_SUMMARIES)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    queue_rows(conn, RANGE_QUEUE, range, &whole, plan)
}

/// Adds the queue rows `sql` finds in the range (id, kind, session), but for those of the
/// sessions in `whole`, which go with their session.
fn queue_rows(
    conn: &Connection,
    sql: &str,
    range: &Range,
    whole: &HashSet<String>,
    plan: &mut Plan,
) -> Result<()> {
    let (project, since, until) = range.params();
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params![project, since, until], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (id, kind, session) = row?;
        if !whole.contains(&session) {
            plan.queue_row(id, &kind, session);
        }
    }
    Ok(())
}

/// Adds the range's rows that have no session row (imported from a file that had no record
/// of their session): no session takes them with it.
fn orphans(conn: &Connection, range: &Range, plan: &mut Plan) -> Result<()> {
    let (project, since, until) = range.params();
    for (sql, into) in [
        (ORPHAN_PROMPTS, &mut plan.prompts),
        (ORPHAN_EVENTS, &mut plan.events),
        (ORPHAN_PRIVATE_TURNS, &mut plan.private_turns),
        (ORPHAN_MEMORIES, &mut plan.memories),
        (ORPHAN_SUMMARIES, &mut plan.summaries),
    ] {
        let mut stmt = conn.prepare(sql)?;
        for id in stmt.query_map(params![project, since, until], |r| r.get::<_, String>(0))? {
            into.push(id?);
        }
    }
    // Their sessions are none of those that go whole: they have no row.
    queue_rows(conn, ORPHAN_QUEUE, range, &HashSet::new(), plan)
}

/// Deletes what `plan` covers, overwriting what is freed. Returns whether it finished before
/// the slicer's deadline (a command's slicer has none).
///
/// The memories and summaries made from the forgotten rows are worked out again once those are
/// gone: the compressor stores only what it still holds in the queue, so nothing more can be
/// made of them, and what it stored since the plan goes too (and is counted in `plan`).
pub fn apply(conn: &Connection, plan: &mut Plan, slicer: &Slicer) -> Result<bool> {
    conn.execute_batch("PRAGMA secure_delete = ON")?;
    // The records of what was given that name a row go before it: they find it by its session.
    let given: [(&str, &[String]); 4] = [
        (GIVEN_OF_PROMPT, &plan.prompts),
        (GIVEN_PROMPT, &plan.prompts),
        (GIVEN_QUEUE_ROW, &plan.calls),
        (GIVEN_QUEUE_ROW, &plan.messages),
    ];
    for (sql, ids) in given {
        if !delete_each(conn, slicer, sql, ids)? {
            return Ok(false);
        }
    }
    let sources: [(&str, &[String]); 5] = [
        ("DELETE FROM user_prompts WHERE id = ?1", &plan.prompts),
        ("DELETE FROM pending_queue WHERE id = ?1", &plan.calls),
        ("DELETE FROM pending_queue WHERE id = ?1", &plan.messages),
        ("DELETE FROM event_log WHERE id = ?1", &plan.events),
        (
            "DELETE FROM private_turns WHERE prompt_id = ?1",
            &plan.private_turns,
        ),
    ];
    for (sql, ids) in sources {
        if !delete_each(conn, slicer, sql, ids)? {
            return Ok(false);
        }
    }
    plan.derive(conn)?;
    for (sql, ids) in [
        (GIVEN_MEMORY, &plan.memories),
        (GIVEN_SUMMARY, &plan.summaries),
        ("DELETE FROM memories WHERE id = ?1", &plan.memories),
        ("DELETE FROM summaries WHERE id = ?1", &plan.summaries),
    ] {
        if !delete_each(conn, slicer, sql, ids)? {
            return Ok(false);
        }
    }
    for session in &plan.touched {
        conn.execute(LAST_MESSAGE_AFTER_PURGE, [session])?;
    }
    for info in &plan.sessions {
        if !session(conn, &info.session_id, slicer)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The records of what was given (schema v13) of a prompt's recall, and those naming a prompt,
/// a queue row, a memory or a summary: each found through the row's session (indexed).
const GIVEN_OF_PROMPT: &str = "DELETE FROM given
     WHERE session_id = (SELECT session_id FROM user_prompts WHERE id = ?1) AND prompt_id = ?1";
const GIVEN_PROMPT: &str = "DELETE FROM given
     WHERE item_session = (SELECT session_id FROM user_prompts WHERE id = ?1) AND item_id = ?1";
const GIVEN_QUEUE_ROW: &str = "DELETE FROM given
     WHERE item_session = (SELECT session_id FROM pending_queue WHERE id = ?1) AND item_id = ?1";
const GIVEN_MEMORY: &str = "DELETE FROM given
     WHERE item_session = (SELECT session_id FROM memories WHERE id = ?1) AND item_id = ?1";
const GIVEN_SUMMARY: &str = "DELETE FROM given
     WHERE item_session = (SELECT session_id FROM summaries WHERE id = ?1) AND item_id = ?1";

/// Runs `sql` for each id, a few to a transaction. Returns whether it finished in time.
fn delete_each(conn: &Connection, slicer: &Slicer, sql: &str, ids: &[String]) -> Result<bool> {
    let mut next = 0;
    slicer.run(conn, |tx| {
        if let Some(id) = ids.get(next) {
            tx.prepare_cached(sql)?.execute([id])?;
            next += 1;
        }
        Ok(next < ids.len())
    })
}

/// A session's rows, table by table, a few at a time; the session's own row last, so that a
/// run stopped half-way leaves it to be found again. The queue before what was made of it, so
/// that nothing more can be made of it meanwhile.
const SESSION_DELETES: [&str; 10] = [
    // What it was given, and what other sessions were given of it.
    "DELETE FROM given WHERE rowid IN
        (SELECT rowid FROM given WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM given WHERE rowid IN
        (SELECT rowid FROM given WHERE item_session = ?1 LIMIT 16)",
    "DELETE FROM pending_queue WHERE rowid IN
        (SELECT rowid FROM pending_queue WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM memories WHERE rowid IN
        (SELECT rowid FROM memories WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM summaries WHERE rowid IN
        (SELECT rowid FROM summaries WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM user_prompts WHERE rowid IN
        (SELECT rowid FROM user_prompts WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM private_turns WHERE rowid IN
        (SELECT rowid FROM private_turns WHERE session_id = ?1 LIMIT 16)",
    "DELETE FROM event_log WHERE rowid IN
        (SELECT rowid FROM event_log WHERE session_id = ?1 LIMIT 16)",
    // The folder it was recorded under, had `projects join` moved it: nothing of it stays.
    "DELETE FROM project_moves WHERE session_id = ?1",
    "DELETE FROM sessions WHERE session_id = ?1",
];

/// Deletes a session with everything in it. Returns whether it finished before the slicer's
/// deadline.
pub fn session(conn: &Connection, session_id: &str, slicer: &Slicer) -> Result<bool> {
    let mut stage = 0;
    slicer.run(conn, |tx| {
        let deleted = tx
            .prepare_cached(SESSION_DELETES[stage])?
            .execute([session_id])?;
        if deleted < 16 {
            stage += 1;
        }
        Ok(stage < SESSION_DELETES.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    /// Forgetting a session or a range in years of captures must not read them all.
    #[test]
    fn deletes_and_range_lookups_use_the_indexes() {
        let conn = testing::database();
        let plan = |sql: &str| testing::plan(&conn, sql).join("\n");
        for sql in SESSION_DELETES.iter().chain(&[
            GIVEN_OF_PROMPT,
            GIVEN_PROMPT,
            GIVEN_QUEUE_ROW,
            GIVEN_MEMORY,
            GIVEN_SUMMARY,
        ]) {
            let plan = plan(sql);
            assert!(!plan.contains("SCAN"), "{sql}: {plan}");
        }
        let queue = plan(RANGE_QUEUE);
        assert!(
            queue.contains("SEARCH q USING INDEX pending_queue_drain"),
            "{queue}"
        );
        assert!(!queue.contains("SCAN q"), "{queue}");
        for sql in [
            format!("{SESSION_INFO} WHERE s.session_id = ?1"),
            TURN_ROWS.to_string(),
        ] {
            let plan = plan(&sql);
            assert!(
                !plan.contains("SCAN q") && !plan.contains("SCAN pending_queue"),
                "{plan}"
            );
        }
        // Memories and summaries: through their session, never read all.
        for (table, sqls) in [
            ("memories", [RANGE_MEMORIES, SESSION_MEMORIES]),
            ("summaries", [RANGE_SUMMARIES, SESSION_SUMMARIES]),
        ] {
            for sql in sqls {
                let plan = plan(sql);
                assert!(
                    plan.contains(&format!("SEARCH {table} USING INDEX {table}_by_session")),
                    "{sql}: {plan}"
                );
                assert!(!plan.contains(&format!("SCAN {table}")), "{sql}: {plan}");
            }
            let by_id = plan(&format!("SELECT id FROM {table} WHERE id = ?1"));
            assert!(!by_id.contains("SCAN"), "{by_id}");
        }
        let info = plan(&format!("{SESSION_INFO} WHERE s.session_id = ?1"));
        assert!(
            !info.contains("SCAN m") && info.contains("memories_by_session"),
            "{info}"
        );
    }

    /// The compressor may store what it made of a row between the question and the answer:
    /// that goes too, and is counted.
    #[test]
    fn what_was_made_of_a_forgotten_row_after_the_plan_goes_too() {
        let conn = testing::database();
        conn.execute_batch(
            "INSERT INTO pending_queue (id, session_id, event, raw_output, created_at,
                                        updated_at)
             VALUES ('q1', 's', 'PostToolUse', '{}', 't', 't'),
                    ('q2', 's', 'PostToolUse', '{}', 't', 't');",
        )
        .unwrap();
        let mut plan = plan(&conn, &Target::Item("q1".into())).unwrap();
        assert_eq!(plan.counts().memories + plan.counts().summaries, 0);
        conn.execute_batch(
            "INSERT INTO memories (id, key, session_id, type, title, queue_ids, origin,
                                   created_at)
             VALUES ('m1', 'k1', 's', 'discovery', 't', '[\"q1\"]', 'compressor', 't'),
                    ('m2', 'k2', 's', 'discovery', 't', '[\"q2\"]', 'compressor', 't');
             INSERT INTO summaries (id, key, session_id, queue_ids, origin, created_at)
             VALUES ('s1', 'k3', 's', '[\"q2\", \"q1\"]', 'compressor', 't');",
        )
        .unwrap();
        let slicer = Slicer::command(std::time::Duration::from_secs(1));
        assert!(apply(&conn, &mut plan, &slicer).unwrap());
        let counts = plan.counts();
        assert_eq!((counts.calls, counts.memories, counts.summaries), (1, 1, 1));
        let left: Vec<String> = conn
            .prepare("SELECT id FROM memories UNION ALL SELECT id FROM summaries")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(left, ["m2"]);
    }
}
