//! Which coding agents claude-mem is registered with: for each one, whether its files hold
//! our hooks (OpenCode's: our plugin) and our MCP server. An entry counts as ours by the same
//! code that uninstall takes ours out with (`settings::<agent>::remove_*`: a file it would
//! change holds something of ours), so that status and uninstall never disagree. Reads only.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::claude::Mcp;
use super::hooks::HookFile;
use crate::agent::Agent;
use crate::settings::{codex, copilot, cursor, gemini, opencode};

/// What one file of an agent's holds of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Registered,
    /// The file is there, without our entry.
    NotRegistered,
    NoFile,
    /// It cannot be read: why.
    Unreadable(String),
}

impl Found {
    /// The state as `status --json` gives it.
    pub fn key(&self) -> &'static str {
        match self {
            Found::Registered => "registered",
            Found::NotRegistered => "not_registered",
            Found::NoFile => "no_file",
            Found::Unreadable(_) => "unreadable",
        }
    }
}

/// One of an agent's files, and what it holds of ours.
pub struct File {
    /// `None` when there is no home folder to find it in.
    pub path: Option<PathBuf>,
    pub found: Found,
}

/// An agent, and its file of hooks (OpenCode's plugin) and of MCP servers (one file for
/// Gemini: both are that file).
pub struct Registration {
    pub agent: Agent,
    pub hooks: File,
    pub mcp: File,
}

/// Every agent's registrations, Claude Code's hooks as status read its settings files
/// (`claude`).
pub fn look(claude: &[HookFile]) -> Vec<Registration> {
    Agent::ALL
        .into_iter()
        .map(|agent| {
            let (hooks, mcp) = files_of(agent, claude);
            Registration { agent, hooks, mcp }
        })
        .collect()
}

/// Whether a file's text holds an entry of ours.
type Holds = fn(&str) -> Result<bool>;

/// Whether `remove` would take something out of a file's text.
fn changes(remove: fn(&str) -> Result<String>, text: &str) -> Result<bool> {
    Ok(remove(text)? != text)
}

/// The agent's file of hooks and of MCP servers, each with what it holds of ours.
fn files_of(agent: Agent, claude: &[HookFile]) -> (File, File) {
    let in_home = |home: Result<PathBuf>, hooks: &str, mcp: &str| {
        let home = home.ok();
        (
            home.as_ref().map(|h| h.join(hooks)),
            home.map(|h| h.join(mcp)),
        )
    };
    let ((hooks, mcp), holds): ((Option<PathBuf>, Option<PathBuf>), [Holds; 2]) = match agent {
        Agent::ClaudeCode => return (claude_hooks(claude), claude_mcp()),
        Agent::Codex => (
            in_home(codex::home(), "hooks.json", "config.toml"),
            [
                |t| changes(codex::remove_hooks, t),
                |t| changes(codex::remove_server, t),
            ],
        ),
        Agent::Cursor => (
            in_home(cursor::home(), "hooks.json", "mcp.json"),
            [
                |t| changes(cursor::remove_hooks, t),
                |t| changes(cursor::remove_server, t),
            ],
        ),
        Agent::Copilot => (
            in_home(copilot::home(), copilot::HOOKS_FILE, "mcp-config.json"),
            [
                |t| changes(copilot::remove_hooks, t),
                |t| changes(copilot::remove_server, t),
            ],
        ),
        Agent::Gemini => {
            let settings = gemini::settings().ok();
            (
                (settings.clone(), settings),
                [
                    |t| changes(|t| gemini::remove(t, false), t),
                    |t| changes(cursor::remove_server, t),
                ],
            )
        }
        Agent::OpenCode => {
            let home = opencode::home().ok();
            (
                (
                    home.as_ref().map(|h| h.join(opencode::PLUGIN_FILE)),
                    home.as_deref().map(opencode::config_file),
                ),
                [
                    |t| Ok(opencode::is_ours(t)),
                    |t| changes(opencode::remove_server, t),
                ],
            )
        }
    };
    (read(hooks, holds[0]), read(mcp, holds[1]))
}

/// What the file at `path` holds of ours, by `holds`.
fn read(path: Option<PathBuf>, holds: Holds) -> File {
    let found = match path.as_deref().map(read_text) {
        None => Found::NoFile,
        Some(Ok(None)) => Found::NoFile,
        Some(Ok(Some(text))) => match holds(&text) {
            Ok(true) => Found::Registered,
            Ok(false) => Found::NotRegistered,
            Err(err) => Found::Unreadable(format!("{err:#}")),
        },
        Some(Err(why)) => Found::Unreadable(why),
    };
    File { path, found }
}

fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err.to_string()),
        Ok(meta) if !meta.is_file() => return Err("not a regular file".into()),
        Ok(_) => {}
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Claude Code's hooks: registered in any of its settings files status read (the user's
/// first).
fn claude_hooks(files: &[HookFile]) -> File {
    let registered = files.iter().find(|f| f.registered().next().is_some());
    let Some(first) = registered.or(files.first()) else {
        return File {
            path: None,
            found: Found::NoFile,
        };
    };
    let found = match &first.hooks {
        _ if registered.is_some() => Found::Registered,
        None => Found::NoFile,
        Some(Err(why)) => Found::Unreadable(why.clone()),
        Some(Ok(_)) => Found::NotRegistered,
    };
    File {
        path: Some(first.path.clone()),
        found,
    }
}

/// Claude Code's MCP servers, in its own state file (`~/.claude.json`).
fn claude_mcp() -> File {
    let Some(mcp) = super::claude::mcp() else {
        return File {
            path: None,
            found: Found::NoFile,
        };
    };
    let (path, found) = match mcp {
        Mcp::NoFile(path) => (path, Found::NoFile),
        Mcp::TooBig { path, bytes } => (
            path,
            Found::Unreadable(format!("{bytes} bytes: too large to read here")),
        ),
        Mcp::Unreadable { path, why } => (path, Found::Unreadable(why)),
        Mcp::NotRegistered(path) => (path, Found::NotRegistered),
        Mcp::Registered { path, .. } => (path, Found::Registered),
    };
    File {
        path: Some(path),
        found,
    }
}
