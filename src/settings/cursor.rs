//! What claude-mem registers with Cursor: its hooks in `~/.cursor/hooks.json` (`"version": 1`,
//! each event a flat list of `{"command": ...}`), each command naming the agent
//! (`hook capture --agent cursor`), and its MCP server in `~/.cursor/mcp.json`
//! (`mcpServers.claude-mem`). `stop` is not registered: `afterAgentResponse`, which carries the
//! turn's last message, asks for the turn's summary.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use super::command::{Program, is_our_program, parse_ours};

/// (Cursor's event, our hook).
pub const HOOKS: &[(&str, &str)] = &[
    ("sessionStart", "context"),
    ("beforeSubmitPrompt", "prompt"),
    ("postToolUse", "capture"),
    ("postToolUseFailure", "capture"),
    ("afterAgentResponse", "summary"),
    ("sessionEnd", "cleanup"),
];

const SERVER: &str = crate::settings::mcp::SERVER_NAME;

/// Cursor's folder of the user's settings: `~/.cursor`.
pub fn home() -> Result<PathBuf> {
    let home = dirs::home_dir().context("cannot find the home folder for ~/.cursor")?;
    Ok(home.join(".cursor"))
}

/// `hooks.json` with our hooks, run by `program` (any of ours already there taken out first).
pub fn add_hooks(text: Option<&str>, program: &Program) -> Result<String> {
    let mut root = object(text)?;
    take_ours(&mut root);
    root.entry("version").or_insert(json!(1));
    let Value::Object(hooks) = root.entry("hooks").or_insert_with(|| json!({})) else {
        bail!("its \"hooks\" value is not an object");
    };
    for (event, hook) in HOOKS {
        let Value::Array(list) = hooks.entry(*event).or_insert_with(|| json!([])) else {
            bail!("its {event} value is not a list");
        };
        list.push(json!({
            "command": format!("{} hook {hook} --agent cursor", program.shell),
        }));
    }
    pretty(&root)
}

/// `hooks.json` without any hook of ours, and without the events and the `hooks` object
/// that this leaves empty.
pub fn remove_hooks(text: &str) -> Result<String> {
    let mut root = object(Some(text))?;
    if !take_ours(&mut root) {
        return Ok(text.to_string());
    }
    pretty(&root)
}

/// `mcp.json` with our server running `exe mcp`.
pub fn add_server(text: Option<&str>, exe: &str) -> Result<String> {
    let mut root = object(text)?;
    let Value::Object(servers) = root.entry("mcpServers").or_insert_with(|| json!({})) else {
        bail!("its \"mcpServers\" value is not an object");
    };
    if let Some(command) = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Value::as_str)
        && !is_our_program(command)
    {
        bail!("it already has an MCP server named {SERVER} that runs {command}; left untouched");
    }
    servers.insert(SERVER.into(), json!({"command": exe, "args": ["mcp"]}));
    pretty(&root)
}

/// `mcp.json` without our server.
pub fn remove_server(text: &str) -> Result<String> {
    let mut root = object(Some(text))?;
    let Some(Value::Object(servers)) = root.get_mut("mcpServers") else {
        return Ok(text.to_string());
    };
    let ours = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Value::as_str)
        .is_some_and(is_our_program);
    if !ours {
        return Ok(text.to_string());
    }
    servers.shift_remove(SERVER);
    if servers.is_empty() {
        root.shift_remove("mcpServers");
    }
    pretty(&root)
}

/// Takes every handler of ours out; whether there was one.
fn take_ours(root: &mut Map<String, Value>) -> bool {
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return false;
    };
    let mut took = false;
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        let Value::Array(list) = list else { continue };
        let before = list.len();
        list.retain(|handler| {
            let command = handler.get("command").and_then(Value::as_str);
            command.and_then(parse_ours).is_none()
        });
        if list.len() < before {
            took = true;
            if list.is_empty() {
                emptied.push(event.clone());
            }
        }
    }
    for event in &emptied {
        hooks.shift_remove(event);
    }
    if hooks.is_empty() && took {
        root.shift_remove("hooks");
    }
    took
}

fn object(text: Option<&str>) -> Result<Map<String, Value>> {
    let text = text.unwrap_or("");
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => bail!("it is not a JSON object"),
        Err(err) => bail!("it is not valid JSON ({err})"),
    }
}

fn pretty(root: &Map<String, Value>) -> Result<String> {
    Ok(serde_json::to_string_pretty(root)? + "\n")
}
