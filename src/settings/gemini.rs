//! What claude-mem registers with Google's Gemini CLI, all in its user settings,
//! `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/settings.json` when that is set): its
//! hooks under `hooks`, in the nested shape of Claude Code's, each command naming the agent
//! (`hook capture --agent gemini`), and its MCP server under `mcpServers.claude-mem`. One file
//! holds both, so both are changed in one write, and given back in one.

use std::path::PathBuf;

use super::codex;
use super::command::Program;
use super::cursor;
use super::document::{agent_object, agent_text};
use super::merge::{self, Registration};
use anyhow::{Context, Result};

/// Our hooks in Gemini, by its event names. Gemini has no event for a failed tool call (the
/// error is in AfterTool's `tool_response`).
pub const HOOKS: &[Registration] = &[
    reg("SessionStart", "context"),
    reg("BeforeAgent", "prompt"),
    reg("AfterTool", "capture"),
    reg("AfterAgent", "summary"),
    reg("SessionEnd", "cleanup"),
];

const fn reg(event: &'static str, hook: &'static str) -> Registration {
    Registration {
        event,
        matcher: None,
        hook,
    }
}

/// Gemini's settings file.
pub fn settings() -> Result<PathBuf> {
    let home = match std::env::var_os("GEMINI_CLI_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => {
            std::path::absolute(PathBuf::from(dir)).context("cannot resolve $GEMINI_CLI_HOME")?
        }
        None => dirs::home_dir().context("cannot find the home folder for ~/.gemini")?,
    };
    Ok(home.join(".gemini").join("settings.json"))
}

/// The settings with our hooks, run by `program`, and (unless `exe` is `None`) our MCP
/// server running `exe mcp`.
pub fn add(text: Option<&str>, program: &Program, exe: Option<&str>) -> Result<String> {
    let mut root = agent_object(text)?;
    codex::add_registrations(&mut root, program, HOOKS, "gemini")?;
    let text = agent_text(&root)?;
    match exe {
        Some(exe) => cursor::add_server(Some(&text), exe),
        None => Ok(text),
    }
}

/// The settings without our hooks, nor (when `server`) our MCP server.
pub fn remove(text: &str, server: bool) -> Result<String> {
    let mut root = agent_object(Some(text))?;
    let took_hooks = !merge::uninstall(&mut root).is_empty();
    let left = if took_hooks {
        agent_text(&root)?
    } else {
        text.to_string()
    };
    if server {
        return cursor::remove_server(&left);
    }
    Ok(left)
}
