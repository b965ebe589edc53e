//! `given [<session or prompt id>]`: what the session-start context and per-prompt recall gave
//! a session (or one prompt), and why: each item's id, what it is, the reason it was given, its
//! score where it cleared recall's bar, and the bytes of its lines (see [`crate::given`]).
//! Without an id, the latest session of this project.

use anyhow::{Result, anyhow};
use serde_json::json;

use super::nothing_captured;
use crate::config::Config;
use crate::emit::Report;
use crate::recall::{Recall, usage};
use crate::render::{self, Color, Style, Table, cell};
use crate::store::fts::Item;
use crate::store::read::SessionFilter;
use crate::store::read::given::Answer;
use crate::store::rows::{GivenRow, Kind, short_id};

pub fn given(id: Option<&str>, json: bool) -> Result<Report> {
    let config = Config::from_env();
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    let (session, prompt) = match id {
        Some(id) => asked(&mut recall, id)?,
        None => (latest(&recall)?, None),
    };
    let mut answers = recall.reader().given(&session)?;
    if let Some(prompt) = &prompt {
        answers.retain(|a| a.prompt_id.as_ref() == Some(prompt));
    }
    if answers.is_empty() {
        let whom = match &prompt {
            Some(p) => format!("prompt {}", short_id(p)),
            None => format!("session {}", short_id(&session)),
        };
        return Ok(Report {
            note: Some(format!(
                "nothing was given to {whom} (no context, or nothing cleared recall's bar)"
            )),
            ..Report::default()
        });
    }
    let index = recall.index()?;
    let item = |id: &str| -> Result<Option<Item>> {
        Ok(index.resolve(id)?.into_iter().find(|item| item.id == id))
    };
    let style = Style::detect();
    let mut lines = Vec::new();
    let mut table = Table::default();
    if style.terminal && !json {
        let header = [
            "WHEN", "GIVEN", "ITEM", "WHAT", "REASON", "SCORE", "BYTES", "TITLE",
        ];
        table.row(header.map(|h| cell(h).color(Color::Header)).to_vec());
    }
    for answer in &answers {
        for (n, row) in answer.items.iter().enumerate() {
            let found = item(&row.item_id)?;
            match json {
                true => lines.push(render::json_line(&record(&session, answer, row, found))),
                false => table.row(line(answer, row, found, n == 0, &style)),
            }
        }
    }
    Ok(match json {
        true => lines.concat(),
        false => table.render(&style),
    }
    .into())
}

/// The session an id names and, for a prompt's id, the prompt.
fn asked(recall: &mut Recall, id: &str) -> Result<(String, Option<String>)> {
    match recall.resolve(id)? {
        (Kind::Session, session) => Ok((session, None)),
        (Kind::Prompt, prompt) => {
            let row = recall
                .reader()
                .prompt(&prompt)?
                .ok_or_else(|| anyhow!("prompt {id} is gone"))?;
            Ok((row.session_id, Some(prompt)))
        }
        (kind, _) => Err(usage(format!(
            "{id} is a {}: given takes a session's or a prompt's id",
            kind.as_str()
        ))),
    }
}

/// The latest session of this project.
fn latest(recall: &Recall) -> Result<String> {
    let project = recall.project(None, false)?;
    let sessions = recall.reader().sessions(&SessionFilter {
        project: project.clone(),
        limit: 1,
        ..SessionFilter::default()
    })?;
    let project = project.unwrap_or_default();
    sessions
        .into_iter()
        .next()
        .map(|s| s.session_id)
        .ok_or_else(|| anyhow!("no session was recorded in {project}: name a session's id"))
}

/// What gave it: the session-start context, or a prompt's recall (by the prompt's number).
fn giver(answer: &Answer) -> String {
    match (&answer.prompt_id, answer.prompt_number) {
        (None, _) => "context".into(),
        (Some(_), Some(n)) => format!("prompt #{n}"),
        (Some(id), None) => format!("prompt {}", short_id(id)),
    }
}

/// What an item is: its kind, a tool call by its tool; a teammate's note, which the index does
/// not hold, as one.
fn what(row: &GivenRow, found: Option<&Item>) -> String {
    match found {
        Some(item) if item.kind == Kind::Observation => item.tool_name.clone().unwrap_or_default(),
        Some(item) => item.kind.as_str().to_string(),
        None if row.item_session.is_none() => "team note".into(),
        None => "gone".into(),
    }
}

fn line(
    answer: &Answer,
    row: &GivenRow,
    found: Option<Item>,
    first: bool,
    style: &Style,
) -> Vec<render::Cell> {
    let (when, by) = match first {
        true => (style.clock(&answer.at), giver(answer)),
        false => (String::new(), String::new()),
    };
    let score = row.score.map(|s| format!("{s:.2}")).unwrap_or("-".into());
    vec![
        cell(when).color(Color::Time),
        cell(by),
        cell(short_id(&row.item_id)).color(Color::Id),
        cell(what(row, found.as_ref())).color(Color::Tool),
        cell(&row.reason),
        cell(score).right(),
        cell(row.bytes.to_string()).right(),
        cell(render::fit(found.as_ref().map_or("", |i| &i.title), 100)),
    ]
}

/// One item given, as `--json` prints it: one stable shape a line.
fn record(
    session: &str,
    answer: &Answer,
    row: &GivenRow,
    found: Option<Item>,
) -> serde_json::Value {
    json!({
        "session_id": session,
        "giving": answer.giving,
        "prompt_id": answer.prompt_id,
        "prompt_number": answer.prompt_number,
        "at": answer.at,
        "item_id": row.item_id,
        "short_id": short_id(&row.item_id),
        "item_session": row.item_session,
        "kind": found.as_ref().map(|i| i.kind.as_str()),
        "tool": found.as_ref().and_then(|i| i.tool_name.clone()),
        "title": found.map(|i| i.title),
        "reason": row.reason,
        "score": row.score,
        "bytes": row.bytes,
    })
}
