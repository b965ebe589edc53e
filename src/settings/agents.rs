//! Registering claude-mem with another coding agent (Codex, Cursor): its hooks file and its
//! MCP configuration, each changed atomically and given back as it was on uninstall (see
//! [`super::given_back`]). Both files are checked before either is written, so that a file we
//! cannot read leaves the other as it was too.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::command::Program;
use super::given_back::{self, Edit, Edits};
use super::{codex, cursor};
use crate::agent::Agent;
use crate::config::Config;

/// One file of the agent's and what became of it.
pub struct FileEdit {
    /// What we register in it: "hooks" or "MCP server".
    pub what: &'static str,
    pub path: PathBuf,
    pub edit: Edit,
}

/// What registering, or unregistering, did.
pub struct Registered {
    pub files: Vec<FileEdit>,
    pub exe: PathBuf,
}

/// Adds our hooks and MCP server (unless `no_mcp`) to the agent's files.
pub fn register(config: &Config, agent: Agent, dry_run: bool, no_mcp: bool) -> Result<Registered> {
    run(config, agent, dry_run, no_mcp, true)
}

/// Takes them out again.
pub fn unregister(
    config: &Config,
    agent: Agent,
    dry_run: bool,
    no_mcp: bool,
) -> Result<Registered> {
    run(config, agent, dry_run, no_mcp, false)
}

fn run(
    config: &Config,
    agent: Agent,
    dry_run: bool,
    no_mcp: bool,
    adding: bool,
) -> Result<Registered> {
    let exe = super::ours::this_binary()?;
    let program = Program::of(&exe)?;
    let exec = program.exec.clone();
    let (home, hooks_file, mcp_file, name) = match agent {
        Agent::Codex => (codex::home()?, "hooks.json", "config.toml", "codex"),
        Agent::Cursor => (cursor::home()?, "hooks.json", "mcp.json", "cursor"),
        Agent::ClaudeCode => anyhow::bail!("Claude Code's settings are not an agent's file"),
    };
    let add_hooks = |text: Option<&str>| match agent {
        Agent::Cursor => cursor::add_hooks(text, &program),
        _ => codex::add_hooks(text, &program),
    };
    let remove_hooks = |text: &str| match agent {
        Agent::Cursor => cursor::remove_hooks(text),
        _ => codex::remove_hooks(text),
    };
    let add_server = |text: Option<&str>| match agent {
        Agent::Cursor => cursor::add_server(text, &exec),
        _ => codex::add_server(text, &exec),
    };
    let remove_server = |text: &str| match agent {
        Agent::Cursor => cursor::remove_server(text),
        _ => codex::remove_server(text),
    };
    let mut wanted = vec![(
        "hooks",
        home.join(hooks_file),
        format!("{name}-{hooks_file}"),
        Edits {
            add: &add_hooks,
            remove: &remove_hooks,
        },
    )];
    if !no_mcp {
        wanted.push((
            "MCP server",
            home.join(mcp_file),
            format!("{name}-{mcp_file}"),
            Edits {
                add: &add_server,
                remove: &remove_server,
            },
        ));
    }
    let change = |path: &PathBuf, saved: &str, edits: &Edits, dry: bool| {
        let edit = if adding {
            given_back::install(config, path, saved, edits, dry)
        } else {
            given_back::uninstall(config, path, saved, edits, dry)
        };
        edit.with_context(|| format!("{} was left as it was", path.display()))
    };
    for (_, path, saved, edits) in &wanted {
        change(path, saved, edits, true)?;
    }
    let mut files = Vec::new();
    for (what, path, saved, edits) in &wanted {
        let edit = change(path, saved, edits, dry_run)?;
        files.push(FileEdit {
            what,
            path: path.clone(),
            edit,
        });
    }
    if agent == Agent::Cursor && !dry_run {
        crate::marks::mark_cursor_hooks(config, adding)
            .context("cannot note in the data dir that Cursor's hooks run ours")?;
    }
    Ok(Registered { files, exe })
}
