//! Registering `claude-mem mcp` with Claude Code, the official way: `claude mcp add --scope
//! user`, so that every project's sessions get the memory tools. Claude Code keeps its MCP
//! servers in its own state file (`~/.claude.json`, large, rewritten by Claude Code all the
//! time): we never write it, only its CLI does.
//!
//! Whether the server is registered must be cheap to know at every session start (the
//! context points at the tools only then): a marker file in the data dir says so. It is
//! written when Claude Code confirmed the registration and removed when it is undone.

use std::path::Path;
use std::time::Duration;

use super::Target;
use super::command::is_our_program;
use crate::claude::{ClaudeCode, run};
use crate::config::Config;

pub use crate::privacy::SERVER_NAME;

/// `claude mcp` answers in a second (`get` starts the server to check it); this stops a hang.
const CLAUDE_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`register`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    Added,
    /// It was registered with another binary (an older install): now with this one.
    Repointed {
        from: String,
    },
    Already,
    /// A dry run: what would be run.
    WouldRun {
        command: String,
    },
    /// A server of that name that is not ours: left as it is.
    NotOurs {
        command: String,
    },
    /// No Claude Code to run it with: the user can run this.
    NoClaude {
        command: String,
    },
    Failed {
        why: String,
        command: String,
    },
}

/// What [`unregister`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unregistered {
    Removed,
    NotThere,
    WouldRun { command: String },
    NotOurs { command: String },
    NoClaude { command: String },
    Failed { why: String, command: String },
}

/// Why install-hooks and uninstall-hooks leave the server alone when called so, if they do:
/// it is registered for the user as a whole, so it goes with the user's settings file.
pub fn left_alone(target: &Target, no_mcp: bool) -> Option<&'static str> {
    if no_mcp {
        Some("--no-mcp")
    } else if !target.is_user() {
        Some("user settings only: no --project, --local or --settings")
    } else {
        None
    }
}

/// The words after `claude` that register `exe`.
fn add_args(exe: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["mcp", "add", "--scope", "user", SERVER_NAME, "--"]
        .map(String::from)
        .to_vec();
    args.push(exe.display().to_string());
    args.push("mcp".into());
    args
}

fn remove_args() -> Vec<String> {
    ["mcp", "remove", "--scope", "user", SERVER_NAME]
        .map(String::from)
        .to_vec()
}

/// A command line a user can paste.
fn shown(claude: &str, args: &[String]) -> String {
    let quote = |word: &str| {
        if word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@".contains(c))
        {
            word.to_string()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    std::iter::once(claude)
        .chain(args.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

fn claude_path(claude: &ClaudeCode) -> Option<&Path> {
    match claude {
        ClaudeCode::Found { path, .. } | ClaudeCode::Unknown { path, .. } => Some(path),
        ClaudeCode::Missing => None,
    }
}

/// Registers `exe mcp` as the user's MCP server `claude-mem`; running it again changes nothing,
/// and a registration of another claude-mem binary is pointed at this one.
pub fn register(config: &Config, claude: &ClaudeCode, exe: &Path, dry_run: bool) -> Registered {
    let args = add_args(exe);
    let Some(path) = claude_path(claude) else {
        return Registered::NoClaude {
            command: shown("claude", &args),
        };
    };
    let command = shown(&path.display().to_string(), &args);
    if dry_run {
        return Registered::WouldRun { command };
    }
    let added = run(path, &args, CLAUDE_TIMEOUT);
    let outcome = match added {
        Ok(_) => Registered::Added,
        Err(why) => match registered(path) {
            Some(Entry::Ours { program }) if Path::new(&program) == exe => Registered::Already,
            Some(Entry::Ours { program }) => {
                match run(path, &remove_args(), CLAUDE_TIMEOUT)
                    .and_then(|_| run(path, &args, CLAUDE_TIMEOUT))
                {
                    Ok(_) => Registered::Repointed { from: program },
                    Err(why) => Registered::Failed { why, command },
                }
            }
            Some(Entry::Other { command }) => Registered::NotOurs { command },
            None => Registered::Failed { why, command },
        },
    };
    let ours = matches!(
        outcome,
        Registered::Added | Registered::Repointed { .. } | Registered::Already
    );
    if ours {
        crate::marks::mark_mcp(config, exe);
    }
    outcome
}

/// Removes the user's MCP server `claude-mem` when it is ours.
pub fn unregister(config: &Config, claude: &ClaudeCode, dry_run: bool) -> Unregistered {
    let args = remove_args();
    let Some(path) = claude_path(claude) else {
        return Unregistered::NoClaude {
            command: shown("claude", &args),
        };
    };
    let command = shown(&path.display().to_string(), &args);
    if dry_run {
        return Unregistered::WouldRun { command };
    }
    let outcome = match registered(path) {
        None => Unregistered::NotThere,
        Some(Entry::Other { command }) => Unregistered::NotOurs { command },
        Some(Entry::Ours { .. }) => match run(path, &args, CLAUDE_TIMEOUT) {
            Ok(_) => Unregistered::Removed,
            Err(why) => Unregistered::Failed { why, command },
        },
    };
    if !matches!(outcome, Unregistered::Failed { .. }) {
        crate::marks::unmark_mcp(config);
    }
    outcome
}

/// A user-scope server named claude-mem, as `claude mcp get` describes it.
enum Entry {
    /// `<dir>/claude-mem mcp`.
    Ours {
        program: String,
    },
    Other {
        command: String,
    },
}

/// What the user scope holds under our name; `None` when nothing (or the answer could not be
/// read).
fn registered(claude: &Path) -> Option<Entry> {
    let out = run(
        claude,
        &["mcp".into(), "get".into(), SERVER_NAME.into()],
        CLAUDE_TIMEOUT,
    )
    .ok()?;
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    if !field("Scope:").is_some_and(|s| s.starts_with("User")) {
        return None;
    }
    let program = field("Command:")?;
    let args = field("Args:").unwrap_or_default();
    Some(if is_our_program(&program) && args == "mcp" {
        Entry::Ours { program }
    } else {
        Entry::Other {
            command: format!("{program} {args}").trim().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_shown_can_be_pasted() {
        let args = add_args(Path::new("/home/me/my tools/claude-mem"));
        assert_eq!(
            shown("claude", &args),
            "claude mcp add --scope user claude-mem -- '/home/me/my tools/claude-mem' mcp"
        );
    }
}
