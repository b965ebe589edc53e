//! An item whole, as both fronts give it: `show` prints it to a person (as text, or as one JSON
//! object), and the MCP `get` tool answers it to Claude. A session shows its prompts in order,
//! each with the tool calls and Claude's message of its turn.

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use crate::render::{self, Color, Style, Table, cell};
use crate::store::read::{
    Call, Message, Prompt, QueueRecord, Reader, SessionOverview, SessionRecord, Turn,
};
use crate::store::rows::{Kind, Memory, Summary, short_id};

/// The item `id` (of `kind`) whole, as text for `style` or as its JSON object: what `show`
/// prints, and what the MCP server's `get` answers.
pub fn render(reader: &Reader, kind: Kind, id: &str, json: bool, style: &Style) -> Result<String> {
    let gone = || anyhow!("{id} is no longer in the database");
    Ok(match kind {
        Kind::Session => {
            let session = reader.session(id)?.ok_or_else(gone)?;
            let (memories, summaries) = reader.compressed(id)?;
            if json {
                let mut value = session_json(&session);
                value["memories"] = json!(memories.iter().map(memory_json).collect::<Vec<_>>());
                value["summaries"] = json!(summaries.iter().map(summary_json).collect::<Vec<_>>());
                render::json_line(&value)
            } else {
                let compressed = compressed_text(&memories, summaries.last(), style);
                session_text(&session, &compressed, style)
            }
        }
        Kind::Memory => {
            let memory = reader.memory(id)?.ok_or_else(gone)?;
            if json {
                render::json_line(&memory_json(&memory))
            } else {
                memory_text(&memory, style)
            }
        }
        Kind::Summary => {
            let summary = reader.summary(id)?.ok_or_else(gone)?;
            if json {
                render::json_line(&summary_json(&summary))
            } else {
                summary_text(&summary, style)
            }
        }
        Kind::Prompt => {
            let prompt = reader.prompt(id)?.ok_or_else(gone)?;
            let turn = reader.turn_of(&prompt)?;
            if json {
                render::json_line(&prompt_json(&prompt, Some(&turn)))
            } else {
                prompt_text(&prompt, &turn, style)
            }
        }
        Kind::Observation | Kind::Message => {
            let row = reader.queue_row(id)?.ok_or_else(gone)?;
            if json {
                render::json_line(&queue_json(&row))
            } else {
                queue_text(&row, style)
            }
        }
    })
}

/// A record's first line: what it is and its short id.
fn header(what: &str, id: &str, style: &Style) -> String {
    format!(
        "{} {}\n",
        style.paint(what, Color::Header),
        style.paint(short_id(id), Color::Id)
    )
}

/// `label   value` lines of a record's header.
fn fields(rows: &[(&str, String)], style: &Style) -> String {
    let mut table = Table::default();
    for (label, value) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        table.row(vec![cell(*label).color(Color::Header), cell(value.clone())]);
    }
    table.render(style)
}

/// A session: its header, what is remembered of it (`compressed`), then its turns.
fn session_text(s: &SessionRecord, compressed: &str, style: &Style) -> String {
    let sum = &s.summary;
    let took = render::seconds_between(&sum.started_at, &sum.last_at)
        .map(render::duration)
        .unwrap_or_default();
    let state = match (&sum.ended_at, &s.end_reason) {
        (Some(_), Some(reason)) => format!("ended ({reason})"),
        (Some(_), None) => "ended".to_string(),
        (None, _) => sum.status.clone(),
    };
    let mut out = header("session", &sum.session_id, style);
    out.push_str(&fields(
        &[
            ("id", sum.session_id.clone()),
            ("project", sum.project_dir.clone().unwrap_or_default()),
            ("started", style.moment(&sum.started_at)),
            ("took", format!("{took}, {state}")),
            ("agent", sum.agent.clone()),
            ("model", sum.model.clone().unwrap_or_default()),
            ("source", s.source.clone().unwrap_or_default()),
            (
                "counts",
                format!(
                    "{}, {}, {} changed",
                    render::plural(sum.prompts, "prompt"),
                    render::plural(sum.tool_calls, "tool call"),
                    render::plural(sum.files_changed.len() as i64, "file")
                ),
            ),
            ("transcript", s.transcript_path.clone().unwrap_or_default()),
        ],
        style,
    ));
    if !sum.files_changed.is_empty() {
        out.push_str(&format!(
            "{}\n",
            style.paint("files changed", Color::Header)
        ));
        for file in &sum.files_changed {
            let file = within(file, sum.project_dir.as_deref());
            out.push_str(&format!("  {}\n", render::one_line(file, 300)));
        }
    }
    out.push_str(compressed);
    for turn in &s.turns {
        out.push('\n');
        match &turn.prompt {
            Some(p) => {
                out.push_str(&format!(
                    "{} {}  {}\n",
                    style.paint(&format!("#{}", p.prompt_number), Color::Header),
                    style.paint(short_id(&p.id), Color::Id),
                    style.paint(&style.clock(&p.created_at), Color::Time),
                ));
                render::block(&p.prompt_text, 2, &mut out);
            }
            None => out.push_str(&format!(
                "{}\n",
                style.paint("before the first prompt", Color::Header)
            )),
        }
        out.push_str(&turn_text(turn, sum.project_dir.as_deref(), style));
    }
    out
}

/// A path inside the project as a relative one; anything else as it is.
fn within<'a>(text: &'a str, project: Option<&str>) -> &'a str {
    project
        .and_then(|p| text.strip_prefix(p.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(text)
}

/// A turn's tool calls, one line each (paths in the project relative to it), and Claude's
/// messages.
fn turn_text(turn: &Turn, project: Option<&str>, style: &Style) -> String {
    let mut out = String::new();
    let mut table = Table::default();
    for call in &turn.calls {
        let tool = if call.failed {
            format!("{} (failed)", call.tool_name)
        } else {
            call.tool_name.clone()
        };
        table.row(vec![
            cell("   "),
            cell(short_id(&call.id)).color(Color::Id),
            cell(style.clock(&call.created_at)).color(Color::Time),
            cell(render::fit(&tool, 40)).color(if call.failed { Color::Bad } else { Color::Tool }),
            cell(render::fit(within(&call.title, project), 160)),
        ]);
    }
    out.push_str(&table.render(style));
    for message in &turn.messages {
        out.push_str(&format!(
            "  {} {}  {}\n",
            style.paint("Claude", Color::Header),
            style.paint(short_id(&message.id), Color::Id),
            style.paint(&style.clock(&message.created_at), Color::Time)
        ));
        render::block(&message.text, 4, &mut out);
    }
    out
}

fn prompt_text(p: &Prompt, turn: &Turn, style: &Style) -> String {
    let mut out = header("prompt", &p.id, style);
    out.push_str(&fields(
        &[
            ("id", p.id.clone()),
            (
                "session",
                format!("{} (prompt #{})", short_id(&p.session_id), p.prompt_number),
            ),
            ("time", style.moment(&p.created_at)),
            (
                "truncated",
                if p.truncated {
                    "yes".into()
                } else {
                    String::new()
                },
            ),
        ],
        style,
    ));
    out.push('\n');
    render::block(&p.prompt_text, 2, &mut out);
    if !turn.calls.is_empty() || !turn.messages.is_empty() {
        out.push_str(&format!("\n{}\n", style.paint("this turn", Color::Header)));
        out.push_str(&turn_text(turn, None, style));
    }
    out
}

fn queue_text(row: &QueueRecord, style: &Style) -> String {
    let what = match row.kind {
        Kind::Message => "message".to_string(),
        _ => row.tool_name.clone().unwrap_or_else(|| "tool call".into()),
    };
    let mut out = header(&what, &row.id, style);
    let turn = row
        .prompt_number
        .map(|n| format!(" (prompt #{n})"))
        .unwrap_or_default();
    out.push_str(&fields(
        &[
            ("id", row.id.clone()),
            ("session", format!("{}{turn}", short_id(&row.session_id))),
            ("project", row.project_dir.clone().unwrap_or_default()),
            ("time", style.moment(&row.created_at)),
            ("event", row.event.clone()),
            ("files", row.files.join(", ")),
            ("queue", row.status.clone()),
            (
                "truncated",
                if row.truncated {
                    format!(
                        "yes, {} received",
                        render::bytes(row.payload_bytes.max(0) as u64)
                    )
                } else {
                    String::new()
                },
            ),
        ],
        style,
    ));
    if row.kind == Kind::Message {
        out.push('\n');
        let text = row
            .raw
            .get("last_assistant_message")
            .and_then(Value::as_str)
            .unwrap_or("");
        render::block(text, 2, &mut out);
        return out;
    }
    for (label, key) in [
        ("input", "tool_input"),
        ("answer", "tool_response"),
        ("error", "error"),
    ] {
        if let Some(value) = row.raw.get(key).filter(|v| !v.is_null()) {
            out.push_str(&format!("\n{}\n", style.paint(label, Color::Header)));
            render::readable(value, 2, &mut out);
        }
    }
    out
}

fn session_json(s: &SessionRecord) -> Value {
    let turns: Vec<Value> = s
        .turns
        .iter()
        .map(|t| {
            json!({
                "prompt": t.prompt.as_ref().map(|p| prompt_json(p, None)),
                "tool_calls": t.calls.iter().map(call_json).collect::<Vec<_>>(),
                "messages": t.messages.iter().map(message_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut value = overview_json(&s.summary);
    value["kind"] = json!("session");
    value["source"] = json!(s.source);
    value["end_reason"] = json!(s.end_reason);
    value["cwd"] = json!(s.cwd);
    value["transcript_path"] = json!(s.transcript_path);
    value["turns"] = json!(turns);
    value
}

fn prompt_json(p: &Prompt, turn: Option<&Turn>) -> Value {
    let mut value = json!({
        "kind": "prompt",
        "id": p.id,
        "short_id": short_id(&p.id),
        "session_id": p.session_id,
        "prompt_number": p.prompt_number,
        "text": p.prompt_text,
        "truncated": p.truncated,
        "created_at": p.created_at,
    });
    if let Some(turn) = turn {
        value["tool_calls"] = json!(turn.calls.iter().map(call_json).collect::<Vec<_>>());
        value["messages"] = json!(turn.messages.iter().map(message_json).collect::<Vec<_>>());
    }
    value
}

fn call_json(c: &Call) -> Value {
    json!({
        "id": c.id,
        "short_id": short_id(&c.id),
        "tool": c.tool_name,
        "title": c.title,
        "failed": c.failed,
        "created_at": c.created_at,
    })
}

fn message_json(m: &Message) -> Value {
    json!({
        "id": m.id,
        "short_id": short_id(&m.id),
        "text": m.text,
        "created_at": m.created_at,
    })
}

fn queue_json(row: &QueueRecord) -> Value {
    json!({
        "kind": row.kind.as_str(),
        "id": row.id,
        "short_id": short_id(&row.id),
        "session_id": row.session_id,
        "project": row.project_dir,
        "tool": row.tool_name,
        "event": row.event,
        "prompt_number": row.prompt_number,
        "files": row.files,
        "queue_status": row.status,
        "truncated": row.truncated,
        "payload_bytes": row.payload_bytes,
        "created_at": row.created_at,
        "raw_output": row.raw,
    })
}

/// A session's latest summary and its memories, one line each, under its header.
fn compressed_text(memories: &[Memory], summary: Option<&Summary>, style: &Style) -> String {
    let mut out = String::new();
    if let Some(s) = summary {
        out.push_str(&format!(
            "{} {}\n",
            style.paint("summary", Color::Header),
            style.paint(short_id(&s.id), Color::Id)
        ));
        out.push_str(&summary_fields(s, style));
    }
    if !memories.is_empty() {
        out.push_str(&format!("{}\n", style.paint("memories", Color::Header)));
        let mut table = Table::default();
        for m in memories {
            table.row(vec![
                cell("  "),
                cell(short_id(&m.id)).color(Color::Id),
                cell(m.kind.clone()).color(Color::Tool),
                cell(render::fit(&m.title, 160)),
            ]);
        }
        out.push_str(&table.render(style));
    }
    out
}

fn summary_fields(s: &Summary, style: &Style) -> String {
    let rows: Vec<(&str, String)> = [
        ("  request", &s.request),
        ("  investigated", &s.investigated),
        ("  learned", &s.learned),
        ("  completed", &s.completed),
        ("  next steps", &s.next_steps),
    ]
    .into_iter()
    .map(|(label, text)| (label, render::one_line(text, 400)))
    .collect();
    fields(&rows, style)
}

/// Paths in one line, those inside the project relative to it.
fn paths(list: &[String], project: Option<&str>) -> String {
    list.iter()
        .map(|f| within(f, project))
        .collect::<Vec<_>>()
        .join(", ")
}

fn origin(model: Option<&str>, origin: &str) -> String {
    match model {
        Some(model) => format!("{model} ({origin})"),
        None => origin.to_string(),
    }
}

fn memory_text(m: &Memory, style: &Style) -> String {
    let mut out = header("memory", &m.id, style);
    let turn = m
        .prompt_number
        .map(|n| format!(" (prompt #{n})"))
        .unwrap_or_default();
    let files = |list: &[String]| paths(list, m.project_dir.as_deref());
    out.push_str(&fields(
        &[
            ("id", m.id.clone()),
            ("type", m.kind.clone()),
            ("session", format!("{}{turn}", short_id(&m.session_id))),
            ("project", m.project_dir.clone().unwrap_or_default()),
            ("time", style.moment(&m.created_at)),
            ("made by", origin(m.model.as_deref(), &m.origin)),
            ("concepts", m.concepts.join(", ")),
            ("files read", files(&m.files_read)),
            ("modified", files(&m.files_modified)),
            (
                "from",
                m.queue_ids
                    .iter()
                    .map(|id| short_id(id))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ],
        style,
    ));
    out.push('\n');
    render::block(&m.title, 2, &mut out);
    if let Some(subtitle) = &m.subtitle {
        render::block(subtitle, 2, &mut out);
    }
    out.push('\n');
    render::block(&m.narrative, 2, &mut out);
    if !m.facts.is_empty() {
        out.push_str(&format!("\n{}\n", style.paint("facts", Color::Header)));
        for fact in &m.facts {
            render::block(&format!("- {fact}"), 2, &mut out);
        }
    }
    out
}

fn summary_text(s: &Summary, style: &Style) -> String {
    let mut out = header("summary", &s.id, style);
    let turn = s
        .prompt_number
        .map(|n| format!(" (as of prompt #{n})"))
        .unwrap_or_default();
    let files = |list: &[String]| paths(list, s.project_dir.as_deref());
    out.push_str(&fields(
        &[
            ("id", s.id.clone()),
            ("session", format!("{}{turn}", short_id(&s.session_id))),
            ("project", s.project_dir.clone().unwrap_or_default()),
            ("time", style.moment(&s.created_at)),
            ("made by", origin(s.model.as_deref(), &s.origin)),
            ("files read", files(&s.files_read)),
            ("edited", files(&s.files_edited)),
        ],
        style,
    ));
    for (label, text) in [
        ("request", &s.request),
        ("investigated", &s.investigated),
        ("learned", &s.learned),
        ("completed", &s.completed),
        ("next steps", &s.next_steps),
    ] {
        if !text.trim().is_empty() {
            out.push_str(&format!("\n{}\n", style.paint(label, Color::Header)));
            render::block(text, 2, &mut out);
        }
    }
    if let Some(notes) = s.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        out.push_str(&format!("\n{}\n", style.paint("notes", Color::Header)));
        render::block(notes, 2, &mut out);
    }
    out
}

fn memory_json(m: &Memory) -> Value {
    json!({
        "kind": "memory",
        "id": m.id,
        "short_id": short_id(&m.id),
        "session_id": m.session_id,
        "project": m.project_dir,
        "prompt_number": m.prompt_number,
        "type": m.kind,
        "title": m.title,
        "subtitle": m.subtitle,
        "narrative": m.narrative,
        "facts": m.facts,
        "concepts": m.concepts,
        "files_read": m.files_read,
        "files_modified": m.files_modified,
        "queue_ids": m.queue_ids,
        "origin": m.origin,
        "model": m.model,
        "created_at": m.created_at,
    })
}

fn summary_json(s: &Summary) -> Value {
    json!({
        "kind": "summary",
        "id": s.id,
        "short_id": short_id(&s.id),
        "session_id": s.session_id,
        "project": s.project_dir,
        "prompt_number": s.prompt_number,
        "request": s.request,
        "investigated": s.investigated,
        "learned": s.learned,
        "completed": s.completed,
        "next_steps": s.next_steps,
        "notes": s.notes,
        "files_read": s.files_read,
        "files_edited": s.files_edited,
        "queue_ids": s.queue_ids,
        "origin": s.origin,
        "model": s.model,
        "created_at": s.created_at,
    })
}

/// The documented JSON shape of a session (also the head of `show <session> --json`).
pub fn overview_json(s: &SessionOverview) -> Value {
    json!({
        "kind": "session",
        "id": s.session_id,
        "short_id": short_id(&s.session_id),
        "project": s.project_dir,
        "started_at": s.started_at,
        "last_at": s.last_at,
        "ended_at": s.ended_at,
        "duration_seconds": render::seconds_between(&s.started_at, &s.last_at),
        "status": s.status,
        "model": s.model,
        "prompts": s.prompts,
        "tool_calls": s.tool_calls,
        "files_changed": s.files_changed,
        "first_prompt": s.first_prompt,
        "agent": s.agent,
    })
}
