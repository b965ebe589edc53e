//! Scrub: today's privacy and secret rules applied to what was stored under older ones (a rule
//! added since, a `CLAUDE_MEM_REDACT_EXTRA` pattern, rows of an earlier release).
//!
//! Every text a person typed, read or was shown, and every text the compressor made of them
//! (a memory's or summary's prose, facts, concepts and `extra`), is read again in rowid order
//! and cleaned as a hook cleans it now (`privacy::clean_text`, `privacy::clean_payload`). A
//! row that changes is rewritten with `secure_delete` on, so the old text is overwritten where
//! it lay; when the search index holds it, a tombstone of the row (it is still there) makes the
//! index take the old text out and index the row as it is now (see `fts::catch_up`). The WAL and the free pages are left to the
//! caller (`retention::sweep`), as after a forget. Import cleans what it reads the same way.

use std::borrow::Cow;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, ToSql};

use crate::privacy::secrets::Redactor;
use crate::privacy::{clean_payload, clean_text};
use crate::store::base::slices::Slicer;

/// How a stored text is cleaned.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// Prose: `privacy::clean_text`.
    Text,
    /// A JSON document (a tool call's payload, a list of facts, an import's `extra`):
    /// `privacy::clean_payload`.
    Json,
}

/// The stored texts of one table scrub looks at, row by row.
struct Column {
    table: &'static str,
    /// The next row after rowid ?1 that holds one: rowid, what it is (a label), the tool whose
    /// payload it is, then the texts (NULL where a row has none).
    next: &'static str,
    /// Writes the texts back: the rowid ?1, the texts from ?2 on, as `next` reads them.
    update: &'static str,
    /// How each text is cleaned.
    forms: &'static [Form],
    /// The search index holds it: a change leaves a tombstone.
    indexed: bool,
}

const COLUMNS: &[Column] = &[
    Column {
        table: "user_prompts",
        next: "SELECT rowid, 'prompt', NULL, prompt_text FROM user_prompts
                WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE user_prompts SET prompt_text = ?2 WHERE rowid = ?1",
        forms: &[Form::Text],
        indexed: true,
    },
    Column {
        table: "pending_queue",
        next: "SELECT rowid, CASE kind WHEN 'summary' THEN 'message' ELSE 'tool call' END,
                      tool_name, raw_output
                 FROM pending_queue WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE pending_queue SET raw_output = ?2 WHERE rowid = ?1",
        forms: &[Form::Json],
        indexed: true,
    },
    Column {
        table: "pending_queue",
        next: "SELECT rowid, 'error', NULL, last_error FROM pending_queue
                WHERE rowid > ?1 AND last_error IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE pending_queue SET last_error = ?2 WHERE rowid = ?1",
        forms: &[Form::Text],
        indexed: false,
    },
    Column {
        table: "compress_calls",
        next: "SELECT rowid, 'error', NULL, error FROM compress_calls
                WHERE rowid > ?1 AND error IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE compress_calls SET error = ?2 WHERE rowid = ?1",
        forms: &[Form::Text],
        indexed: false,
    },
    Column {
        table: "sessions",
        next: "SELECT rowid, 'session', NULL, last_assistant_message FROM sessions
                WHERE rowid > ?1 AND last_assistant_message IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE sessions SET last_assistant_message = ?2 WHERE rowid = ?1",
        forms: &[Form::Text],
        indexed: false,
    },
    Column {
        table: "event_log",
        next: "SELECT rowid, 'event', NULL, detail FROM event_log
                WHERE rowid > ?1 AND detail IS NOT NULL ORDER BY rowid LIMIT 1",
        update: "UPDATE event_log SET detail = ?2 WHERE rowid = ?1",
        forms: &[Form::Json],
        indexed: false,
    },
    Column {
        table: "memories",
        next: "SELECT rowid, 'memory', NULL, title, subtitle, narrative, facts, concepts, extra
                 FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE memories SET title = ?2, subtitle = ?3, narrative = ?4, facts = ?5,
                        concepts = ?6, extra = ?7
                  WHERE rowid = ?1",
        forms: &[
            Form::Text,
            Form::Text,
            Form::Text,
            Form::Json,
            Form::Json,
            Form::Json,
        ],
        indexed: true,
    },
    Column {
        table: "summaries",
        next: "SELECT rowid, 'summary', NULL, request, investigated, learned, completed,
                      next_steps, notes, extra
                 FROM summaries WHERE rowid > ?1 ORDER BY rowid LIMIT 1",
        update: "UPDATE summaries SET request = ?2, investigated = ?3, learned = ?4,
                        completed = ?5, next_steps = ?6, notes = ?7, extra = ?8
                  WHERE rowid = ?1",
        forms: &[
            Form::Text,
            Form::Text,
            Form::Text,
            Form::Text,
            Form::Text,
            Form::Text,
            Form::Json,
        ],
        indexed: true,
    },
];

/// One row as [`Column::next`] reads it.
struct Texts {
    rowid: i64,
    label: String,
    tool: Option<String>,
    /// In [`Column::forms`] order.
    texts: Vec<Option<String>>,
}

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
            let row = conn
                .prepare_cached(column.next)?
                .query_row([after], |r| {
                    Ok(Texts {
                        rowid: r.get(0)?,
                        label: r.get(1)?,
                        tool: r.get(2)?,
                        texts: (0..column.forms.len())
                            .map(|i| r.get(3 + i))
                            .collect::<rusqlite::Result<_>>()?,
                    })
                })
                .optional()?;
            let Some(Texts {
                rowid,
                label,
                tool,
                texts,
            }) = row
            else {
                return Ok(false);
            };
            after = rowid;
            report.rows_read += texts.iter().flatten().count() as i64;
            if let Some(clean) = cleaned(redactor, column.forms, tool.as_deref(), &texts) {
                if slicer.is_some() {
                    let mut values: Vec<&dyn ToSql> = vec![&rowid];
                    values.extend(clean.iter().map(|text| text as &dyn ToSql));
                    conn.prepare_cached(column.update)?
                        .execute(values.as_slice())?;
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
                report.redactions += markers(&clean) - markers(&texts);
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

/// A row's texts as today's rules leave them, if that changes any.
fn cleaned<'a>(
    redactor: &Redactor,
    forms: &[Form],
    tool: Option<&str>,
    texts: &'a [Option<String>],
) -> Option<Vec<Option<Cow<'a, str>>>> {
    let clean: Vec<Option<Cow<str>>> = texts
        .iter()
        .zip(forms)
        .map(|(text, form)| {
            text.as_deref().map(|text| match form {
                Form::Text => clean_text(redactor, text),
                Form::Json => clean_payload(redactor, tool, text),
            })
        })
        .collect();
    let changed = clean
        .iter()
        .zip(texts)
        .any(|(clean, text)| clean.as_deref() != text.as_deref());
    changed.then_some(clean)
}

fn label_of(label: &str) -> &'static str {
    match label {
        "prompt" => "prompt",
        "message" => "message",
        "tool call" => "tool call",
        "error" => "error",
        "session" => "session",
        "memory" => "memory",
        "summary" => "summary",
        _ => "event",
    }
}

/// How many redaction markers a row's texts hold.
fn markers<T: AsRef<str>>(texts: &[Option<T>]) -> i64 {
    texts
        .iter()
        .flatten()
        .map(|text| text.as_ref().matches("[REDACTED:").count() as i64)
        .sum()
}
