//! Claude Code's side: whether claude-mem is registered as an MCP server for the user.
//!
//! Claude Code keeps user-scope MCP servers in `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`)
//! under `mcpServers`. That file is Claude Code's own state, rewritten by it all the time and
//! often megabytes long (it keeps every project's history): read with a size bound, never
//! written. (The version of Claude Code and the events it knows: `claude`.)

use std::fs::{self, OpenOptions};
use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

/// The name claude-mem's server is registered under.
pub const MCP_NAME: &str = "claude-mem";
/// Past this the file is not read (it would only cost time and memory).
const MAX_BYTES: u64 = 64 << 20;

/// What the user's Claude Code state says about our MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mcp {
    /// No such file: Claude Code never ran for this user (or under this config dir).
    NoFile(PathBuf),
    /// Too large to read here.
    TooBig {
        path: PathBuf,
        bytes: u64,
    },
    Unreadable {
        path: PathBuf,
        why: String,
    },
    NotRegistered(PathBuf),
    Registered {
        path: PathBuf,
        /// The program it runs, as written.
        command: String,
    },
}

/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
pub fn state_file() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join(".claude.json")),
        None => dirs::home_dir().map(|home| home.join(".claude.json")),
    }
}

pub fn mcp() -> Option<Mcp> {
    let path = state_file()?;
    let unreadable = |why: String| Mcp::Unreadable {
        path: path.clone(),
        why,
    };
    let meta = match fs::metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Some(Mcp::NoFile(path));
        }
        Err(err) => return Some(unreadable(err.to_string())),
    };
    if !meta.is_file() {
        return Some(unreadable("not a regular file".into()));
    }
    if meta.len() > MAX_BYTES {
        let bytes = meta.len();
        return Some(Mcp::TooBig { path, bytes });
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut bytes = Vec::new();
    let read = options
        .open(&path)
        .and_then(|file| file.take(MAX_BYTES).read_to_end(&mut bytes));
    if let Err(err) = read {
        return Some(unreadable(err.to_string()));
    }
    let root: Value = match serde_json::from_slice(&bytes) {
        Ok(root) => root,
        Err(err) => return Some(unreadable(format!("not JSON ({err})"))),
    };
    let server = root.get("mcpServers").and_then(|s| s.get(MCP_NAME));
    Some(
        match server
            .and_then(|s| s.get("command"))
            .and_then(Value::as_str)
        {
            Some(command) => Mcp::Registered {
                path,
                command: command.to_string(),
            },
            None => Mcp::NotRegistered(path),
        },
    )
}
