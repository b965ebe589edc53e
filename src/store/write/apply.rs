//! Applying a hook's [`Write`] in one IMMEDIATE transaction.
//!
//! Idempotent: the write's id is the key of what it inserts, so a spill file applied twice
//! stores once. Writes may arrive out of order (a spilled prompt lands after the captures of
//! its turn), so each change also repairs what an earlier-applied, later-made write assumed.
//! Every statement is an index probe: a hook costs the same in a session of five captures and
//! in one of two hundred thousand.

use anyhow::Result;
use rusqlite::{OptionalExtension, Transaction, params};

use super::numbering;
use super::purge::{self, Found, Purged};
use crate::ops::{Change, Observation, SessionRef, Write};

// The statements a hook runs, each an index probe (see the test at the end).
const SESSION_START: &str = "UPDATE sessions SET source = ?2, model = COALESCE(?3, model),
                     project_dir = COALESCE(?4, project_dir), status = 'active',
                     ended_at = NULL, end_reason = NULL
                 WHERE session_id = ?1 AND (ended_at IS NULL OR ended_at <= ?5)";
const SESSION_END: &str = "UPDATE sessions SET status = 'closed', ended_at = ?2, end_reason = ?3
                 WHERE session_id = ?1 AND NOT EXISTS (
                     SELECT 1 FROM event_log WHERE session_id = ?1
                        AND event = 'session_start' AND created_at > ?2)";
const INSERT_OBSERVATION: &str =
    "INSERT OR IGNORE INTO pending_queue (id, kind, session_id, tool_use_id,
             prompt_id, prompt_number, event, tool_name, project_dir, raw_output,
             files_touched, priority, payload_bytes, truncated, created_at, updated_at)
         VALUES (?1, 'observation', ?2, ?3, ?4,
             (SELECT prompt_number FROM user_prompts
               WHERE session_id = ?2 AND prompt_id = ?4),
             ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)";
const TURN_PRIVATE_BY_ID: &str = "SELECT EXISTS (SELECT 1 FROM private_turns WHERE prompt_id = ?1)";
/// Whether the session has a private turn before ?2 at all: almost never, and a question a third
/// the size of [`TURN_PRIVATE_BY_TIME`], which preparing costs by (callgrind: 89,000
/// instructions, 5% of a 1 KB capture without prompt_id).
const ANY_PRIVATE_TURN: &str = "SELECT EXISTS (
                 SELECT 1 FROM private_turns WHERE session_id = ?1 AND created_at <= ?2)";
const TURN_PRIVATE_BY_TIME: &str = "SELECT EXISTS (
                 SELECT 1 FROM private_turns t
                  WHERE t.session_id = ?1 AND t.created_at <= ?2
                    AND t.created_at >= COALESCE(
                        (SELECT p.created_at FROM user_prompts p
                          WHERE p.session_id = ?1 AND p.created_at <= ?2
                          ORDER BY p.prompt_number DESC LIMIT 1), ''))";
const INSERT_PROMPT: &str =
    "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_id, prompt_number,
             prompt_text, truncated, created_at, standing)
         VALUES (?1, ?2, ?3,
             (SELECT prompt_count + 1 FROM sessions WHERE session_id = ?2), ?4, ?5, ?6, ?7)";
const INSERT_PRIVATE_TURN: &str =
    "INSERT OR IGNORE INTO private_turns (prompt_id, session_id, created_at)
         VALUES (?1, ?2, ?3)";
const PROMPT_COUNT: &str = "SELECT prompt_count FROM sessions WHERE session_id = ?1";
const INSERT_SUMMARY: &str = "INSERT OR IGNORE INTO pending_queue (id, kind, session_id, prompt_id,
                 prompt_number, event, project_dir, raw_output, priority,
                 payload_bytes, created_at, updated_at)
             VALUES (?1, 'summary', ?2, ?3, ?4, 'Stop', ?5, ?6, 1, ?7, ?8, ?8)";
const LAST_MESSAGE: &str = "UPDATE sessions SET last_assistant_message = ?2
                 WHERE session_id = ?1 AND NOT EXISTS (
                     SELECT 1 FROM pending_queue WHERE session_id = ?1
                        AND kind = 'summary' AND created_at > ?3)";
pub(super) const RAW_BACKLOG: &str =
    "SELECT COUNT(*) FROM (SELECT 1 FROM pending_queue WHERE status = 'raw' LIMIT ?1)";
const UPSERT_SESSION: &str =
    "INSERT INTO sessions (session_id, project_dir, cwd, transcript_path, started_at, updated_at,
             agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, COALESCE(?7, 'claude-code'))
         ON CONFLICT (session_id) DO UPDATE SET
             project_dir = COALESCE(sessions.project_dir, excluded.project_dir),
             cwd = CASE WHEN excluded.updated_at >= sessions.updated_at
                        THEN COALESCE(excluded.cwd, sessions.cwd) ELSE sessions.cwd END,
             transcript_path = COALESCE(excluded.transcript_path, sessions.transcript_path),
             updated_at = CASE WHEN ?6 THEN MAX(sessions.updated_at, excluded.updated_at)
                               ELSE sessions.updated_at END
         WHERE ?6
            OR (sessions.project_dir IS NULL AND excluded.project_dir IS NOT NULL)
            OR (excluded.cwd IS NOT sessions.cwd AND excluded.cwd IS NOT NULL
                AND excluded.updated_at >= sessions.updated_at)
            OR (excluded.transcript_path IS NOT sessions.transcript_path
                AND excluded.transcript_path IS NOT NULL)";
/// Whether the session's row already holds what a capture would bring to it (see
/// [`UPSERT_SESSION`]'s WHERE, of which this is the negation): then the capture leaves it be.
const SESSION_AS_IS: &str = "SELECT 1 FROM sessions WHERE session_id = ?1
         AND (project_dir IS NOT NULL OR ?2 IS NULL)
         AND (?3 IS NULL OR cwd IS ?3 OR updated_at > ?5)
         AND (?4 IS NULL OR transcript_path IS ?4)";
const COUNT_PROMPT: &str =
    "UPDATE sessions SET prompt_count = prompt_count + 1 WHERE session_id = ?1";
const LOG_EVENT: &str =
    "INSERT OR IGNORE INTO event_log (id, session_id, event, detail, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)";

/// The raw backlog a Stop records is counted up to this many items, the number at which a Stop
/// starts the compressor (see `hook`). Counted to 1,000, stepping the index was a quarter of a
/// Stop's instructions wherever nothing drained the queue (callgrind, the hooks bench's
/// database of 100,000 raw rows: 549,000 of 2.29 million).
pub const RAW_BACKLOG_CAP: i64 = 100;

/// What a committed write leaves for after the commit.
pub struct Applied {
    /// What the purge of a private turn did: rows deleted (their old pages must leave the WAL
    /// too, and old copies the file: a rebuild is asked for), and rows left (see [`purge`]).
    pub purged: Purged,
    /// Captures stored before their prompt are left to number (see [`numbering`]).
    pub numbering_left: bool,
    /// The raw backlog a Stop counted, up to [`RAW_BACKLOG_CAP`].
    pub raw_backlog: Option<i64>,
}

pub fn apply(tx: &Transaction, write: &Write) -> Result<Applied> {
    upsert_session(tx, write)?;
    let s = &write.session;
    let mut purged = Purged::default();
    let mut numbering_left = false;
    let mut raw_backlog = None;
    match &write.change {
        Change::Observation(o) => observation(tx, write, o)?,
        Change::Prompt {
            prompt_id,
            text,
            truncated,
        } => numbering_left = prompt(tx, write, prompt_id.as_deref(), text, *truncated)?,
        Change::PrivatePrompt { prompt_id } => {
            purged = private_prompt(tx, write, prompt_id.as_deref())?;
        }
        Change::SessionStart { source, model } => {
            tx.execute(
                SESSION_START,
                params![s.session_id, source, model, s.project_dir, write.at],
            )?;
            log_event(
                tx,
                write,
                "session_start",
                serde_json::json!({"source": source}),
            )?;
        }
        Change::SummaryRequest {
            prompt_id,
            last_assistant_message,
        } => {
            raw_backlog = Some(summary_request(
                tx,
                write,
                prompt_id.as_deref(),
                last_assistant_message,
            )?);
        }
        Change::SessionEnd { reason } => {
            tx.execute(SESSION_END, params![s.session_id, write.at, reason])?;
            log_event(
                tx,
                write,
                "session_end",
                serde_json::json!({"reason": reason}),
            )?;
        }
    }
    Ok(Applied {
        purged,
        numbering_left,
        raw_backlog,
    })
}

/// Stored unless its turn is private, or it is a call of claude-mem's own MCP tools that an
/// earlier version spilled (see `is_our_tool`).
fn observation(tx: &Transaction, write: &Write, o: &Observation) -> Result<()> {
    let s = &write.session;
    if crate::privacy::is_our_tool(&o.tool_name)
        || turn_is_private(tx, &s.session_id, o.prompt_id.as_deref(), &write.at)?
    {
        return Ok(());
    }
    tx.execute(
        INSERT_OBSERVATION,
        params![
            write.id,
            s.session_id,
            o.tool_use_id,
            o.prompt_id,
            o.event,
            o.tool_name,
            s.project_dir,
            o.raw_output,
            o.files_touched,
            o.priority.rank(),
            o.payload_bytes as i64,
            o.truncated,
            write.at
        ],
    )?;
    Ok(())
}

/// Whether the turn a write belongs to is private: by its prompt_id, or, without one (Claude
/// Code before 2.1.196 sends none), when the session's last prompt before `at` was private.
fn turn_is_private(
    tx: &Transaction,
    session_id: &str,
    prompt_id: Option<&str>,
    at: &str,
) -> rusqlite::Result<bool> {
    match prompt_id {
        Some(prompt_id) => tx.query_row(TURN_PRIVATE_BY_ID, [prompt_id], |row| row.get(0)),
        None => {
            let by_time = |sql| tx.query_row(sql, params![session_id, at], |row| row.get(0));
            Ok(by_time(ANY_PRIVATE_TURN)? && by_time(TURN_PRIVATE_BY_TIME)?)
        }
    }
}

/// Stores the prompt; returns whether captures of its turn are left to number.
fn prompt(
    tx: &Transaction,
    write: &Write,
    prompt_id: Option<&str>,
    text: &str,
    truncated: bool,
) -> Result<bool> {
    let s = &write.session;
    // Which of its sentences state a standing instruction (see `crate::standing::mark`).
    let standing = Some(crate::standing::mark(text)).filter(|mask| *mask != 0);
    let inserted = tx.execute(
        INSERT_PROMPT,
        params![
            write.id,
            s.session_id,
            prompt_id,
            text,
            truncated,
            write.at,
            standing
        ],
    )?;
    if inserted == 0 {
        return Ok(false);
    }
    count_prompt(tx, &s.session_id)?;
    // Captures applied before their (spilled) prompt learn its number now, a bounded number
    // of them.
    Ok(numbering::in_a_write(
        tx,
        &write.id,
        &s.session_id,
        prompt_id,
    )?)
}

/// Records the turn as private and removes what was stored of it before this write landed
/// (a bounded part: see [`purge`]).
fn private_prompt(tx: &Transaction, write: &Write, prompt_id: Option<&str>) -> Result<Purged> {
    let s = &write.session;
    let key = prompt_id.unwrap_or(&write.id);
    let inserted = tx.execute(INSERT_PRIVATE_TURN, params![key, s.session_id, write.at])?;
    if inserted == 0 {
        return Ok(Purged::default());
    }
    count_prompt(tx, &s.session_id)?;
    let found = match prompt_id {
        Some(prompt_id) => Found::ById(prompt_id),
        None => Found::ByTime { at: &write.at },
    };
    purge::in_a_write(tx, &s.session_id, key, found)
}

fn summary_request(
    tx: &Transaction,
    write: &Write,
    prompt_id: Option<&str>,
    last_assistant_message: &Option<String>,
) -> Result<i64> {
    let s = &write.session;
    let private = turn_is_private(tx, &s.session_id, prompt_id, &write.at)?;
    // The message of a private turn is about private things: it is not kept.
    if !private {
        let prompt_number: i64 = tx.query_row(PROMPT_COUNT, [&s.session_id], |row| row.get(0))?;
        let raw = serde_json::json!({
            "last_assistant_message": last_assistant_message,
            "prompt_number": prompt_number,
            "project_dir": s.project_dir,
            "transcript_path": s.transcript_path,
        });
        tx.execute(
            INSERT_SUMMARY,
            params![
                write.id,
                s.session_id,
                prompt_id,
                prompt_number,
                s.project_dir,
                raw.to_string(),
                last_assistant_message
                    .as_ref()
                    .map_or(0, |m| m.len() as i64),
                write.at
            ],
        )?;
        if last_assistant_message.is_some() {
            tx.execute(
                LAST_MESSAGE,
                params![s.session_id, last_assistant_message, write.at],
            )?;
        }
    }
    // What waits for a consumer, counted up to a cap: a consumer (or the compressor) starts
    // past a threshold, and a cap keeps this one index range short however long the backlog.
    let raw_backlog: i64 = tx.query_row(RAW_BACKLOG, [RAW_BACKLOG_CAP], |row| row.get(0))?;
    log_event(
        tx,
        write,
        "stop",
        serde_json::json!({"private_turn": private, "raw_backlog": raw_backlog}),
    )?;
    Ok(raw_backlog)
}

/// Creates the session on the first write that sees it; later writes fill in what was missing.
/// SessionStart's own values win (see its UPDATE). A capture, the most frequent write, changes
/// the row only when it brings something new: rewriting an unchanged row and moving its index
/// entry cost two WAL pages on every tool call. For a capture it first asks whether the row
/// is as the capture would leave it, which it nearly always is: that question is a third of
/// the upsert's size, and preparing a statement costs by its size (callgrind: the upsert was
/// 8% of a capture's instructions).
fn upsert_session(tx: &Transaction, write: &Write) -> rusqlite::Result<()> {
    let s: &SessionRef = &write.session;
    let bump = !matches!(write.change, Change::Observation(_));
    if !bump {
        let as_is = params![
            s.session_id,
            s.project_dir,
            s.cwd,
            s.transcript_path,
            write.at
        ];
        if tx
            .query_row(SESSION_AS_IS, as_is, |_| Ok(()))
            .optional()?
            .is_some()
        {
            return Ok(());
        }
    }
    tx.execute(
        UPSERT_SESSION,
        params![
            s.session_id,
            s.project_dir,
            s.cwd,
            s.transcript_path,
            write.at,
            bump,
            s.agent
        ],
    )?;
    Ok(())
}

fn count_prompt(tx: &Transaction, session_id: &str) -> rusqlite::Result<()> {
    tx.execute(COUNT_PROMPT, [session_id])?;
    Ok(())
}

fn log_event(
    tx: &Transaction,
    write: &Write,
    event: &str,
    detail: serde_json::Value,
) -> rusqlite::Result<()> {
    tx.execute(
        LOG_EVENT,
        params![
            write.id,
            write.session.session_id,
            event,
            detail.to_string(),
            write.at
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    /// Regression: `hook summary` took 116 ms and `hook prompt` 62 ms in a session of 200,000
    /// captures, 4 ms in a new one: statements scanned the session. Each statement must find
    /// its rows through an index, whatever the table's size.
    #[test]
    fn every_statement_is_an_index_probe() {
        let conn = testing::database();
        let statements = [
            SESSION_START,
            SESSION_END,
            INSERT_OBSERVATION,
            TURN_PRIVATE_BY_ID,
            ANY_PRIVATE_TURN,
            TURN_PRIVATE_BY_TIME,
            INSERT_PROMPT,
            numbering::NUMBER_CAPTURES,
            numbering::NEXT_PROMPT,
            INSERT_PRIVATE_TURN,
            purge::CAPTURES_BY_ID,
            purge::SUMMARIES_BY_ID,
            purge::CAPTURES_BY_TIME,
            purge::SUMMARIES_BY_TIME,
            purge::LAST_MESSAGE,
            purge::NEXT_LEFT,
            PROMPT_COUNT,
            INSERT_SUMMARY,
            LAST_MESSAGE,
            RAW_BACKLOG,
            UPSERT_SESSION,
            SESSION_AS_IS,
            COUNT_PROMPT,
            LOG_EVENT,
        ];
        for sql in statements {
            let lines = testing::plan(&conn, sql);
            // A scan of a table, or a search of all the queue or log rows of a session: a range
            // as long as the session (its summary requests, one per turn, are short).
            let scans: Vec<&String> = lines
                .iter()
                .filter(|line| {
                    (line.starts_with("SCAN ")
                        && !line.contains("CONSTANT ROW")
                        && !line.starts_with("SCAN (subquery"))
                        || (line.ends_with("(session_id=?)")
                            && (line.contains("pending_queue") || line.contains("event_log"))
                            && !line.contains("pending_queue_summaries"))
                })
                .collect();
            assert!(scans.is_empty(), "{sql}\nscans: {scans:?}\nplan: {lines:?}");
        }
    }
}
