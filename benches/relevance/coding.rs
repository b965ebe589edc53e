//! The coding set: Claude Code sessions of this repository's history
//! (benches/data/coding-sessions.jsonl: `{"hook": NAME, "event": {...}}` a line, in the shapes
//! of Claude Code 2.1.197's payloads), the real fixture sessions of tests/fixtures/hooks, and
//! queries written by hand (benches/data/coding-queries.json). A result is scored by its
//! session: each history session is one turn of work.

use std::path::Path;

use serde_json::Value;

use crate::Result;
use crate::set::{Doc, Load, Query, Set, Unit};

const PROJECT: &str = "/home/dev/claude-mem";

pub fn read(data: &Path, fixtures: &Path) -> Result<Set> {
    let mut events = Vec::new();
    let history = data.join("coding-sessions.jsonl");
    let text = std::fs::read_to_string(&history)
        .map_err(|e| format!("cannot read {}: {e}", history.display()))?;
    for line in text.lines() {
        let mut line: Value = serde_json::from_str(line)?;
        let hook = hook_of(
            line["event"]["hook_event_name"]
                .as_str()
                .unwrap_or_default(),
        )
        .ok_or("coding-sessions.jsonl: an event no hook takes")?;
        events.push((hook, line["event"].take()));
    }
    events.extend(fixture_sessions(fixtures)?);
    let docs = events
        .iter()
        .filter_map(|(_, event)| {
            Some(Doc {
                project: event["cwd"].as_str()?.to_string(),
                key: event["session_id"].as_str()?.to_string(),
                text: text_of(event),
            })
        })
        .collect();

    let path = data.join("coding-queries.json");
    let queries: Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
    )?;
    let queries = queries["queries"]
        .as_array()
        .ok_or("coding-queries.json has no queries")?
        .iter()
        .map(|q| Query {
            project: q["project"].as_str().unwrap_or(PROJECT).to_string(),
            text: q["query"].as_str().unwrap_or_default().to_string(),
            gold: q["gold"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.as_str().map(String::from))
                .collect(),
            slice: q["slice"].as_str().unwrap_or("question").to_string(),
        })
        .collect();
    Ok(Set {
        name: "coding",
        load: Load::Hooks(events),
        docs,
        queries,
        unit: Unit::Session,
        projects: vec![PROJECT.to_string()],
    })
}

fn hook_of(event_name: &str) -> Option<&'static str> {
    Some(match event_name {
        "UserPromptSubmit" => "prompt",
        "PostToolUse" | "PostToolUseFailure" => "capture",
        "Stop" => "summary",
        _ => return None,
    })
}

/// The prompts, tool calls and closing messages of the real sessions, each session's prompt
/// first and its Stop last, as Claude Code sent them.
fn fixture_sessions(dir: &Path) -> Result<Vec<(&'static str, Value)>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut events = Vec::new();
    for file in files {
        let event: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        let name = event["hook_event_name"].as_str().unwrap_or_default();
        if let Some(hook) = hook_of(name) {
            let order = ["prompt", "capture", "summary"]
                .iter()
                .position(|h| *h == hook);
            events.push((order, hook, event));
        }
    }
    events.sort_by_key(|(order, _, _)| *order);
    Ok(events.into_iter().map(|(_, h, e)| (h, e)).collect())
}

/// What the reference indexes of an event: a prompt, Claude's message, or a tool call's name
/// and every string of its input and answer.
pub fn text_of(event: &Value) -> String {
    for field in ["prompt", "last_assistant_message"] {
        if let Some(text) = event[field].as_str() {
            return text.to_string();
        }
    }
    let mut parts = vec![event["tool_name"].as_str().unwrap_or_default().to_string()];
    for part in ["tool_input", "tool_response", "error"] {
        strings(&event[part], &mut parts);
    }
    parts.join("\n")
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
