//! What claude-mem registers with GitHub Copilot CLI: a hooks file of its own,
//! `$COPILOT_HOME/hooks/claude-mem.json` (default `~/.copilot`; Copilot loads every `*.json`
//! of that folder as the user's hooks), and its MCP server in `$COPILOT_HOME/mcp-config.json`
//! (`mcpServers.claude-mem`, as `copilot mcp add` writes it). The hooks are keyed by Claude
//! Code's PascalCase event names, which make Copilot send Claude Code's snake_case payloads,
//! and each runs a `bash` command naming the agent (`hook capture --agent copilot`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::command::Program;
use super::cursor;
use super::document::{agent_object, agent_text};

/// (Copilot's event, our hook).
pub const HOOKS: &[(&str, &str)] = &[
    ("SessionStart", "context"),
    ("UserPromptSubmit", "prompt"),
    ("PostToolUse", "capture"),
    ("PostToolUseFailure", "capture"),
    ("Stop", "summary"),
    ("SessionEnd", "cleanup"),
];

/// Our hooks file, in Copilot's folder.
pub const HOOKS_FILE: &str = "hooks/claude-mem.json";

/// Copilot's folder: `$COPILOT_HOME`, else `~/.copilot`.
pub fn home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("COPILOT_HOME").filter(|d| !d.is_empty()) {
        return std::path::absolute(PathBuf::from(dir)).context("cannot resolve $COPILOT_HOME");
    }
    let home = dirs::home_dir().context("cannot find the home folder for ~/.copilot")?;
    Ok(home.join(".copilot"))
}

/// The hooks file with our hooks, run by `program` (any of ours already there taken out
/// first).
pub fn add_hooks(text: Option<&str>, program: &Program) -> Result<String> {
    cursor::with_handlers(text, HOOKS, "bash", |hook| {
        json!({
            "type": "command",
            "bash": format!("{} hook {hook} --agent copilot", program.shell),
        })
    })
}

/// The hooks file without any hook of ours, and without the events and the `hooks` object
/// that this leaves empty.
pub fn remove_hooks(text: &str) -> Result<String> {
    let mut root = agent_object(Some(text))?;
    if !take_ours(&mut root) {
        return Ok(text.to_string());
    }
    agent_text(&root)
}

/// `mcp-config.json` with our server running `exe mcp`, every tool of it allowed.
pub fn add_server(text: Option<&str>, exe: &str) -> Result<String> {
    let entry = json!({"type": "local", "command": exe, "args": ["mcp"], "tools": ["*"]});
    cursor::add_server_as(text, entry)
}

/// `mcp-config.json` without our server: the same key as Cursor's.
pub fn remove_server(text: &str) -> Result<String> {
    cursor::remove_server(text)
}

/// Takes every handler of ours out (Copilot's command is under `bash`); whether there was one.
fn take_ours(root: &mut Map<String, Value>) -> bool {
    cursor::take_ours_by(root, "bash")
}
