//! Registering claude-mem with another coding agent (Codex, Cursor, Copilot, Gemini, OpenCode):
//! its hooks file (OpenCode's plugin) and its MCP configuration (one file, Gemini's settings,
//! holds both), each changed
//! atomically and given back as it was on uninstall (see [`super::given_back`]). Both files
//! are checked before either is written, so that a file we cannot read leaves the other as it
//! was too.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::command::Program;
use super::given_back::{self, Edit, Edits};
use super::{codex, copilot, cursor, gemini, opencode};
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
    if agent == Agent::Gemini {
        return one_file(config, (&program, exe), dry_run, no_mcp, adding);
    }
    if agent == Agent::OpenCode {
        return plugin_and_config(config, (&program, exe), dry_run, no_mcp, adding);
    }
    let (home, hooks_file, mcp_file) = files(agent)?;
    let name = agent.name();
    let add_hooks = |text: Option<&str>| match agent {
        Agent::Cursor => cursor::add_hooks(text, &program),
        Agent::Copilot => copilot::add_hooks(text, &program),
        _ => codex::add_hooks(text, &program),
    };
    let remove_hooks = |text: &str| match agent {
        Agent::Cursor => cursor::remove_hooks(text),
        Agent::Copilot => copilot::remove_hooks(text),
        _ => codex::remove_hooks(text),
    };
    let add_server = |text: Option<&str>| match agent {
        Agent::Cursor => cursor::add_server(text, &exec),
        Agent::Copilot => copilot::add_server(text, &exec),
        _ => codex::add_server(text, &exec),
    };
    let remove_server = |text: &str| match agent {
        Agent::Cursor => cursor::remove_server(text),
        Agent::Copilot => copilot::remove_server(text),
        _ => codex::remove_server(text),
    };
    let mut wanted = vec![Wanted {
        what: "hooks",
        path: home.join(hooks_file),
        // Copilot's is in a folder: the copy kept in the data dir is a flat name.
        saved: format!("{name}-{}", hooks_file.replace('/', "-")),
        edits: Edits {
            add: &add_hooks,
            remove: &remove_hooks,
        },
    }];
    if !no_mcp {
        wanted.push(Wanted {
            what: "MCP server",
            path: home.join(mcp_file),
            saved: format!("{name}-{mcp_file}"),
            edits: Edits {
                add: &add_server,
                remove: &remove_server,
            },
        });
    }
    let files = apply(config, &wanted, adding, dry_run)?;
    if agent == Agent::Cursor && !dry_run {
        crate::marks::mark_cursor_hooks(config, adding)
            .context("cannot note in the data dir that Cursor's hooks run ours")?;
    }
    Ok(Registered { files, exe })
}

/// A file of an agent's that we register in, and how.
struct Wanted<'a> {
    /// What we register in it: "hooks" or "MCP server".
    what: &'static str,
    path: PathBuf,
    /// The name of the copy kept in the data dir, to give the file back.
    saved: String,
    edits: Edits<'a>,
}

/// Installs (`adding`) or uninstalls every one of `wanted`, after a dry run of each: a file we
/// cannot edit refuses before any is written.
fn apply(config: &Config, wanted: &[Wanted], adding: bool, dry_run: bool) -> Result<Vec<FileEdit>> {
    let change = |w: &Wanted, dry: bool| {
        let edit = if adding {
            given_back::install(config, &w.path, &w.saved, &w.edits, dry)
        } else {
            given_back::uninstall(config, &w.path, &w.saved, &w.edits, dry)
        };
        edit.with_context(|| format!("{} was left as it was", w.path.display()))
    };
    for w in wanted {
        change(w, true)?;
    }
    wanted
        .iter()
        .map(|w| {
            Ok(FileEdit {
                what: w.what,
                path: w.path.clone(),
                edit: change(w, dry_run)?,
            })
        })
        .collect()
}

/// The agent's folder, and its hooks file and MCP configuration in it.
pub(crate) fn files(agent: Agent) -> Result<(PathBuf, &'static str, &'static str)> {
    Ok(match agent {
        Agent::Codex => (codex::home()?, "hooks.json", "config.toml"),
        Agent::Cursor => (cursor::home()?, "hooks.json", "mcp.json"),
        Agent::Copilot => (copilot::home()?, copilot::HOOKS_FILE, "mcp-config.json"),
        Agent::ClaudeCode | Agent::Gemini | Agent::OpenCode => {
            anyhow::bail!("Claude Code's, Gemini's and OpenCode's are not two files of an agent")
        }
    })
}

/// Gemini's settings, which hold both our hooks and our MCP server: one edit of one file.
fn one_file(
    config: &Config,
    (program, exe): (&Program, PathBuf),
    dry_run: bool,
    no_mcp: bool,
    adding: bool,
) -> Result<Registered> {
    let path = gemini::settings()?;
    let exec = (!no_mcp).then_some(program.exec.as_str());
    let add = |text: Option<&str>| gemini::add(text, program, exec);
    let remove = |text: &str| gemini::remove(text, !no_mcp);
    let (what, saved) = if no_mcp {
        ("hooks", "gemini-settings-hooks.json")
    } else {
        ("hooks and MCP server", "gemini-settings.json")
    };
    let wanted = Wanted {
        what,
        path,
        saved: saved.to_string(),
        edits: Edits {
            add: &add,
            remove: &remove,
        },
    };
    let files = apply(config, std::slice::from_ref(&wanted), adding, dry_run)?;
    Ok(Registered { files, exe })
}

/// OpenCode's: our plugin, a file of ours alone, and the MCP server in its config (given back
/// as the other agents' files are). The plugin is checked before either is written.
fn plugin_and_config(
    config: &Config,
    (program, exe): (&Program, PathBuf),
    dry_run: bool,
    no_mcp: bool,
    adding: bool,
) -> Result<Registered> {
    let home = opencode::home()?;
    let path = home.join(opencode::PLUGIN_FILE);
    let text = opencode::plugin(&program.exec);
    let plugin = |dry: bool| {
        let edit = if adding {
            opencode::install_plugin(&path, &text, dry)
        } else {
            opencode::uninstall_plugin(&path, dry)
        };
        edit.with_context(|| format!("{} was left as it was", path.display()))
    };
    plugin(true)?;
    let mut files = Vec::new();
    if !no_mcp {
        let add = |text: Option<&str>| opencode::add_server(text, &program.exec);
        let remove = |text: &str| opencode::remove_server(text);
        let config_file = opencode::config_file(&home);
        let name = config_file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("opencode.json");
        let wanted = Wanted {
            what: "MCP server",
            saved: format!("opencode-{name}"),
            path: config_file.clone(),
            edits: Edits {
                add: &add,
                remove: &remove,
            },
        };
        files = apply(config, std::slice::from_ref(&wanted), adding, dry_run)?;
    }
    files.insert(
        0,
        FileEdit {
            what: "plugin",
            edit: plugin(dry_run)?,
            path,
        },
    );
    Ok(Registered { files, exe })
}
