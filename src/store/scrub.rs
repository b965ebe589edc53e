//! Scrub: today's privacy and secret rules applied to what was stored under older ones (a rule
//! added since, a `CLAUDE_MEM_REDACT_EXTRA` pattern, rows of an earlier release).
//!
//! Every text a person typed, read or was shown is read again in rowid order and cleaned as a
//! hook cleans it now ([`clean_text`], [`clean_payload`]). A row that changes is rewritten with
//! `secure_delete` on, so the old text is overwritten where it lay; when the search index holds
//! it, a tombstone of the row (it is still there) makes the index take the old text out and
//! index the row as it is now (see `fts::sync`). The WAL and the free pages are left to the
//! caller (`retention::sweep`), as after a forget. Import cleans what it reads the same way.

use std::borrow::Cow;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::slices::Slicer;
use crate::privacy;
use crate::privacy::lean::{self, Piece, Shape};
use crate::privacy::secrets::{self, Redactor};

/// A prompt, a message of Claude's or an error, as a hook would store it now: without private
/// parts, Claude Code's reminders and secrets.
pub fn clean_text<'a>(redactor: &Redactor, text: &'a str) -> Cow<'a, str> {
    match privacy::strip_message(text) {
        Cow::Borrowed(text) => redactor.redact(text),
        Cow::Owned(text) => Cow::Owned(redactor.redact(&text).into_owned()),
    }
}

/// A tool call's `raw_output` (or any stored JSON document) as a hook would store it now:
/// private parts and secrets out of every string, and, for a read or write of a file that is
/// a secret by its name, its content too.
pub fn clean_payload<'a>(redactor: &Redactor, tool: Option<&str>, raw: &'a str) -> Cow<'a, str> {
    let secret_file = tool
        .filter(|tool| lean::names_files(tool))
        .and_then(|tool| {
            let value: serde_json::Map<String, Value> = serde_json::from_str(raw).ok()?;
            let file = value
                .get("tool_input")?
                .get("file_path")?
                .as_str()?
                .to_string();
            secrets::is_secret_file(&file).then_some((tool, file, value))
        });
    let Some((tool, file, mut value)) = secret_file.filter(|_| redactor.on()) else {
        return privacy::clean_json(raw, redactor, None, usize::MAX);
    };
    for (key, piece) in [
        ("tool_input", Piece::Input),
        ("tool_response", Piece::Response),
        ("error", Piece::Error),
    ] {
        if let Some(part) = value.get_mut(key) {
            let text = part.to_string();
            let shape = Shape::of(tool, piece, Some(&file));
            let clean = privacy::clean_json(&text, redactor, shape, usize::MAX);
            *part = serde_json::from_str(&clean).unwrap_or(Value::Null);
        }
    }
    let whole = Value::Object(value).to_string();
    Cow::Owned(privacy::clean_json(&whole, redactor, None, usize::MAX).into_owned())
}

/// One stored text scrub looks at.
struct Column {
    table: &'static str,
    /// The next row after rowid ?1 that holds one: rowid, the text, what it is (a label), and
    /// the tool whose payload it is.
    next: &'static str,
    update: &'static str,
    json: bool,
    /// The search index holds it: a change leaves a tombstone.
    indexed: bool,
}

const COLUMNS: &[Column] = &[
    Column {
        table: "user_prompts",
        next: "SELECT rowid, prompt_text, 'prompt', NULL FROM user_prompts
                WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE user_prompts SET prompt_text = ?2 WHERE rowid = ?1",
        json: false,
        indexed: true,
    },
    Column {
        table: "pending_queue",
        next: "SELECT rowid, raw_output,
                      CASE kind WHEN 'summary' THEN 'message' ELSE 'tool call' END, tool_name
                 FROM pending_queue WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE pending_queue SET raw_output = ?2 WHERE rowid = ?1",
        json: true,
        indexed: true,
    },
    Column {
        table: "pending_queue",
        next: "SELECT rowid, last_error, 'error', NULL FROM pending_queue
                WHERE rowid > ?1 AND last_error IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE pending_queue SET last_error = ?2 WHERE rowid = ?1",
        json: false,
        indexed: false,
    },
    Column {
        table: "sessions",
        next: "SELECT rowid, last_assistant_message, 'session', NULL FROM sessions
                WHERE rowid > ?1 AND last_assistant_message IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE sessions SET last_assistant_message = ?2 WHERE rowid = ?1",
        json: false,
        indexed: false,
    },
    Column {
        table: "event_log",
        next: "SELECT rowid, detail, 'event', NULL FROM event_log
                WHERE rowid > ?1 AND detail IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE event_log SET detail = ?2 WHERE rowid = ?1",
        json: true,
        indexed: false,
    },
];

/// What scrub changed (or, dry, would change): rows per label, and the redactions added.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// (label, rows changed), in the order first met.
    pub changed: Vec<(&'static str, i64)>,
    pub redactions: i64,
    pub rows_read: i64,
}

impl Report {
    fn count(&mut self, label: &'static str) {
        match self.changed.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => self.changed.push((label, 1)),
        }
    }

    pub fn rows_changed(&self) -> i64 {
        self.changed.iter().map(|(_, n)| n).sum()
    }
}

/// Cleans every stored text with `redactor`'s rules. `slicer` `None` is a dry run: nothing is
/// written. Returns whether it finished (a command's slicer has no deadline).
pub fn run(conn: &Connection, redactor: &Redactor, slicer: Option<&Slicer>) -> Result<Report> {
    if slicer.is_some() {
        conn.execute_batch("PRAGMA secure_delete = ON")?;
    }
    let mut report = Report::default();
    for column in COLUMNS {
        let mut after = 0i64;
        let mut step = |conn: &Connection| -> Result<bool> {
            let row: Option<(i64, String, String, Option<String>)> = conn
                .prepare_cached(column.next)?
                .query_row([after], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional()?;
            let Some((rowid, text, label, tool)) = row else {
                return Ok(false);
            };
            after = rowid;
            report.rows_read += 1;
            let clean = if column.json {
                clean_payload(redactor, tool.as_deref(), &text)
            } else {
                clean_text(redactor, &text)
            };
            if clean != text.as_str() {
                if slicer.is_some() {
                    conn.prepare_cached(column.update)?
                        .execute(params![rowid, clean.as_ref()])?;
                    if column.indexed {
                        conn.execute(
                            &format!(
                                "INSERT INTO tombstones VALUES (NULL, '{0}', ?1,
                                   (SELECT max(rowid) FROM {0}))",
                                column.table
                            ),
                            [rowid],
                        )?;
                    }
                }
                report.count(label_of(&label));
                report.redactions += markers(&clean) - markers(&text);
            }
            Ok(true)
        };
        match slicer {
            Some(slicer) => {
                slicer.run(conn, |tx| step(tx))?;
            }
            None => while step(conn)? {},
        }
    }
    Ok(report)
}

fn label_of(label: &str) -> &'static str {
    match label {
        "prompt" => "prompt",
        "message" => "message",
        "tool call" => "tool call",
        "error" => "error",
        "session" => "session",
        _ => "event",
    }
}

/// How many redaction markers a text holds.
fn markers(text: &str) -> i64 {
    text.matches("[REDACTED:").count() as i64
}
