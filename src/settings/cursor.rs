//! What claude-mem registers with Cursor: its hooks in `~/.cursor/hooks.json` (`"version": 1`,
//! each event a flat list of `{"command": ...}`), each command naming the agent
//! (`hook capture --agent cursor`), and its MCP server in `~/.cursor/mcp.json`
//! (`mcpServers.claude-mem`). `stop` is not registered: `afterAgentResponse`, which carries the
//! turn's last message, asks for the turn's summary.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use super::command::{Program, is_our_program, parse_ours};
use super::document::{agent_object, agent_text};

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
    with_handlers(
        text,
        HOOKS,
        "command",
        |hook| json!({"command": format!("{} hook {hook} --agent cursor", program.shell)}),
    )
}

/// A hooks file of Cursor's shape (Copilot's too: a `version` and a `hooks` object of event
/// lists) with `handler(hook)` added to each event of `hooks`, every handler of ours (its
/// command under `key`) taken out first.
pub(super) fn with_handlers(
    text: Option<&str>,
    hooks: &[(&str, &str)],
    key: &str,
    handler: impl Fn(&str) -> Value,
) -> Result<String> {
    let mut root = agent_object(text)?;
    take_ours_by(&mut root, key);
    root.entry("version").or_insert(json!(1));
    let Value::Object(hooks_of) = root.entry("hooks").or_insert_with(|| json!({})) else {
        bail!("its \"hooks\" value is not an object");
    };
    for (event, hook) in hooks {
        let Value::Array(list) = hooks_of.entry(*event).or_insert_with(|| json!([])) else {
            bail!("its {event} value is not a list");
        };
        list.push(handler(hook));
    }
    agent_text(&root)
}

/// `hooks.json` without any hook of ours, and without the events and the `hooks` object
/// that this leaves empty.
pub fn remove_hooks(text: &str) -> Result<String> {
    let mut root = agent_object(Some(text))?;
    if !take_ours(&mut root) {
        return Ok(text.to_string());
    }
    agent_text(&root)
}

/// `mcp.json` with our server running `exe mcp`.
pub fn add_server(text: Option<&str>, exe: &str) -> Result<String> {
    add_server_as(text, json!({"command": exe, "args": ["mcp"]}))
}

/// An `mcpServers` file (Cursor's, Copilot's) with our server as `entry`.
pub fn add_server_as(text: Option<&str>, entry: Value) -> Result<String> {
    let mut root = agent_object(text)?;
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
    servers.insert(SERVER.into(), entry);
    agent_text(&root)
}

/// `mcp.json` without our server.
pub fn remove_server(text: &str) -> Result<String> {
    let mut root = agent_object(Some(text))?;
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
    agent_text(&root)
}

/// Takes every handler of ours out; whether there was one.
fn take_ours(root: &mut Map<String, Value>) -> bool {
    take_ours_by(root, "command")
}

/// Takes every handler of ours out of a `hooks` object of event lists (Cursor's and Copilot's
/// shape), a handler's command under `key`; whether there was one.
pub(super) fn take_ours_by(root: &mut Map<String, Value>, key: &str) -> bool {
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return false;
    };
    let mut took = false;
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        let Value::Array(list) = list else { continue };
        let before = list.len();
        list.retain(|handler| {
            let command = handler.get(key).and_then(Value::as_str);
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
