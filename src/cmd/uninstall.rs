//! `uninstall-hooks`: removes every claude-mem handler from a Claude Code settings file,
//! whatever binary path it carries, and nothing else; and its MCP server from Claude Code. Our part of a longer command line is
//! taken out only where that is exact; otherwise the line stays and the report says why.

use anyhow::Result;

use crate::agent::Agent;
use crate::claude::{CLAUDE_BIN_VAR, ClaudeCode};
use crate::cli::SettingsArgs;
use crate::config::Config;
use crate::settings::agents;
use crate::settings::given_back::Edit;
use crate::settings::mcp::{self, Unregistered};
use crate::settings::merge::{self, Change, Status};
use crate::settings::{Written, settings_path, update};

pub fn uninstall(args: &SettingsArgs) -> Result<String> {
    if let Some(agent) = args
        .agent
        .map(|a| a.agent())
        .filter(|a| *a != Agent::ClaudeCode)
    {
        return another_agent(agent, args);
    }
    let mut out = remove_hooks(args)?;
    out.push_str(&mcp_server(args));
    Ok(out)
}

/// Removes the MCP server from Claude Code (when it is ours) and says what happened.
fn mcp_server(args: &SettingsArgs) -> String {
    if let Some(why) = mcp::left_alone(&args.target(), args.no_mcp) {
        return format!("MCP server: left registered ({why}).\n");
    }
    let config = Config::from_env();
    let name = mcp::SERVER_NAME;
    match mcp::unregister(&config, &ClaudeCode::detect(), args.dry_run) {
        Unregistered::Removed => {
            format!("MCP server: removed {name} from Claude Code (user scope).\n")
        }
        Unregistered::NotThere => {
            format!("MCP server: {name} is not registered; nothing to remove.\n")
        }
        Unregistered::WouldRun { command } => {
            format!("Dry run: would remove the MCP server:\n    {command}\n")
        }
        Unregistered::NotOurs { command } => format!(
            "MCP server: the server named {name} is not ours; left as it is:\n    {command}\n"
        ),
        Unregistered::NoClaude { command } => format!(
            "MCP server: no Claude Code found to remove it with (`claude` on PATH, or \
             {CLAUDE_BIN_VAR}).\n  Remove it with:\n    {command}\n"
        ),
        Unregistered::Failed { why, command } => {
            format!("MCP server: not removed: {why}\n  Remove it with:\n    {command}\n")
        }
    }
}

/// Takes our hooks out of the settings file and says what it did.
fn remove_hooks(args: &SettingsArgs) -> Result<String> {
    let path = settings_path(&args.target())?;
    let outcome = update(&path, args.dry_run, false, |root| {
        Ok(merge::uninstall(root))
    })?;
    let kept = outcome
        .report
        .iter()
        .any(|c| matches!(c.status, Status::Kept { .. }));
    let mut out = match &outcome.written {
        Written::Missing => {
            return Ok(format!(
                "Nothing to remove: {} does not exist.\n",
                path.display()
            ));
        }
        Written::Unchanged | Written::Created if kept => {
            format!("Nothing removed from {}:\n", path.display())
        }
        Written::Unchanged | Written::Created => {
            return Ok(format!(
                "Nothing to remove: there are no claude-mem hooks in {}.\n",
                path.display()
            ));
        }
        Written::Replaced { .. } => format!("Removed claude-mem hooks from {}:\n", path.display()),
        Written::WouldChange { diff } => format!(
            "Dry run: nothing was written. Uninstalling would change {} like this:\n{diff}\n\
             Hooks to remove:\n",
            path.display()
        ),
    };
    for change in &outcome.report {
        out.push_str(&line(change));
    }
    out.extend(outcome.split_links_note(&path));
    if let Written::Replaced {
        backup: Some(backup),
    } = &outcome.written
    {
        out.push_str(&format!(
            "The file as it was before is kept in {}\n",
            backup.display()
        ));
    }
    Ok(out)
}

fn line(change: &Change) -> String {
    let what = format!("  {:<20} hook {}", change.event, change.hook);
    match &change.status {
        Status::Unchained { left } => {
            format!("{what}: only claude-mem's part was taken out, leaving {left:?}\n")
        }
        Status::Kept { command, why } => format!("{what}: kept {command:?}, because {why}\n"),
        _ => format!("{what}\n"),
    }
}

/// `uninstall-hooks --agent codex|cursor|copilot|gemini`: each of the agent's files given back as install
/// found it, or with our entries alone taken out.
fn another_agent(agent: Agent, args: &SettingsArgs) -> Result<String> {
    let config = Config::from_env();
    let done = agents::unregister(&config, agent, args.dry_run, args.no_mcp)?;
    let mut out = String::new();
    for file in &done.files {
        let path = file.path.display();
        let what = file.what;
        out.push_str(&match &file.edit {
            Edit::Unchanged => format!("{what}: none of ours in {path}; nothing changed.\n"),
            Edit::GivenBack => format!("{what}: {path} is back as install found it.\n"),
            Edit::Removed => format!("{what}: removed {path}, which install had created.\n"),
            Edit::Changed | Edit::Created => format!("{what}: taken out of {path}.\n"),
            Edit::WouldWrite(text) => {
                format!("Dry run: nothing was written. {what}: {path} would read:\n{text}")
            }
            Edit::WouldRemove => {
                format!("Dry run: nothing was written. {path} would be removed.\n")
            }
        });
    }
    Ok(out)
}
