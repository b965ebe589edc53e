//! `timeline <id>`: what happened around one item, in its session, in time order.

use anyhow::{Result, anyhow};
use serde_json::json;

use crate::config::Config;
use crate::emit::Report;
use crate::recall::Recall;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::fts::Item;
use crate::store::rows::{Kind, short_id};

pub fn timeline(id: &str, before: usize, after: usize, json: bool) -> Result<Report> {
    let config = Config::from_env();
    let mut recall = Recall::open_for_item(&config)?;
    let (_, id) = recall.resolve(id)?;
    let items = recall
        .index()?
        .around(&id, before, after)?
        .ok_or_else(|| anyhow!("{id} has nothing to show around it"))?;
    // The agent of the item's session (an item whole of one session, the team's notes aside).
    let agent = match items.iter().find(|item| item.id == id) {
        Some(item) => recall.reader().agent_of(&item.session_id)?,
        None => None,
    };
    let style = Style::detect();
    let stdout = if json {
        items
            .iter()
            .map(|item| {
                render::json_line(&json!({
                    "id": item.id,
                    "short_id": short_id(&item.id),
                    "kind": item.kind.as_str(),
                    "session_id": item.session_id,
                    "tool": item.tool_name,
                    "prompt_number": item.prompt_number,
                    "created_at": item.created_at,
                    "title": item.title,
                    "anchor": item.id == id,
                    "agent": agent,
                }))
            })
            .collect()
    } else {
        lines(&items, &id, agent.as_deref(), &style)
    };
    Ok(stdout.into())
}

/// The items a line each; the session's start says the agent it ran in, and the agent's
/// messages are named by it.
fn lines(items: &[Item], anchor: &str, agent: Option<&str>, style: &Style) -> String {
    let speaker = match agent {
        Some("codex") => "Codex",
        Some("cursor") => "Cursor",
        _ => "Claude",
    };
    let mut table = Table::default();
    for item in items {
        let here = item.id == anchor;
        let (what, title) = match item.kind {
            Kind::Session => (
                "session".to_string(),
                format!(
                    "started in {}{}",
                    render::path(item.project_dir.as_deref().unwrap_or("?")),
                    agent
                        .filter(|a| *a != crate::ops::CLAUDE_CODE)
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default()
                ),
            ),
            Kind::Prompt => (
                format!("prompt #{}", item.prompt_number.unwrap_or(0)),
                item.title.clone(),
            ),
            Kind::Observation => (
                item.tool_name.clone().unwrap_or_default(),
                item.title.clone(),
            ),
            Kind::Message => (speaker.to_string(), item.title.clone()),
            Kind::Memory => ("memory".to_string(), item.title.clone()),
            Kind::Summary => ("summary".to_string(), item.title.clone()),
        };
        let marker = if here { ">" } else { " " };
        table.row(vec![
            cell(marker).color(Color::Match),
            cell(style.clock(&item.created_at)).color(Color::Time),
            cell(short_id(&item.id)).color(Color::Id),
            cell(render::fit(&what, 24)).color(Color::Tool),
            cell(render::fit(&title, 160)),
        ]);
    }
    table.render(style)
}
