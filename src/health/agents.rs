//! Which coding agents claude-mem is registered with: for each one, whether its files hold
//! our hooks (OpenCode's: our plugin) and our MCP server. An entry counts as ours by the same
//! code that uninstall takes ours out with (`settings::<agent>::remove_*`: a file it would
//! change holds something of ours), so that status and uninstall never disagree. Reads only.

use std::path::PathBuf;

use anyhow::Result;

use super::claude::Mcp;
use super::hooks::HookFile;
use crate::agent::Agent;
use crate::settings::given_back::read_regular;
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

/// The agent's file of hooks and of MCP servers, each with what it holds of ours: the files
/// install writes (`settings::agents::files` for the agents of two files), read as uninstall
/// reads them (OpenCode's plugin not through a link).
fn files_of(agent: Agent, claude: &[HookFile]) -> (File, File) {
    let (hooks, mcp, holds): (Option<PathBuf>, Option<PathBuf>, [Holds; 2]) = match agent {
        Agent::ClaudeCode => return (claude_hooks(claude), claude_mcp()),
        Agent::Codex | Agent::Cursor | Agent::Copilot => {
            let holds: [Holds; 2] = match agent {
                Agent::Codex => [
                    |t| changes(codex::remove_hooks, t),
                    |t| changes(codex::remove_server, t),
                ],
                Agent::Cursor => [
                    |t| changes(cursor::remove_hooks, t),
                    |t| changes(cursor::remove_server, t),
                ],
                _ => [
                    |t| changes(copilot::remove_hooks, t),
                    |t| changes(copilot::remove_server, t),
                ],
            };
            let files = crate::settings::agents::files(agent).ok();
            let (hooks, mcp) = files
                .map(|(home, hooks, mcp)| (home.join(hooks), home.join(mcp)))
                .unzip();
            (hooks, mcp, holds)
        }
        Agent::Gemini => {
            let settings = gemini::settings().ok();
            let holds: [Holds; 2] = [
                |t| changes(|t| gemini::remove(t, false), t),
                |t| changes(cursor::remove_server, t),
            ];
            (settings.clone(), settings, holds)
        }
        Agent::OpenCode => {
            let home = opencode::home().ok();
            let holds: [Holds; 2] = [
                |t| Ok(opencode::is_ours(t)),
                |t| changes(opencode::remove_server, t),
            ];
            let plugin = home.as_ref().map(|h| h.join(opencode::PLUGIN_FILE));
            (plugin, home.as_deref().map(opencode::config_file), holds)
        }
    };
    let follow = agent != Agent::OpenCode;
    (read(hooks, holds[0], follow), read(mcp, holds[1], true))
}

/// What the file at `path` holds of ours, by `holds`; a link followed when `follow`.
fn read(path: Option<PathBuf>, holds: Holds, follow: bool) -> File {
    let found = match path.as_deref().map(|p| read_regular(p, follow)) {
        None | Some(Ok(None)) => Found::NoFile,
        Some(Ok(Some(text))) => match holds(&text) {
            Ok(true) => Found::Registered,
            Ok(false) => Found::NotRegistered,
            Err(err) => Found::Unreadable(format!("{err:#}")),
        },
        Some(Err(err)) => Found::Unreadable(format!("{err:#}")),
    };
    File { path, found }
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
