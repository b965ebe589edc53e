//! Registering `claude-mem mcp` with Claude Code, the official way: `claude mcp add --scope
//! user`, so that every project's sessions get the memory tools. Claude Code keeps its MCP
//! servers in its own state file (`~/.claude.json`, large, rewritten by Claude Code all the
//! time): we never write it, only its CLI does.
//!
//! Whether the server is registered must be cheap to know at every session start (the
//! context points at the tools only then): a marker file in the data dir says so. It is
//! written when Claude Code confirmed the registration and removed when it is undone.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::command::is_our_program;
use super::compat::ClaudeCode;
use crate::cli::SettingsArgs;
use crate::config::Config;
use crate::fsutil;

/// The server's name in Claude Code: its tools are `mcp__claude-mem__search`, ….
pub const SERVER_NAME: &str = "claude-mem";

/// Whether a tool of Claude Code's is one of this server's: `mcp__claude-mem__search` and the
/// others as install-hooks registers the server, or `mcp__plugin_<plugin>_claude-mem__…` should
/// a plugin bundle it. Their answers are the memory itself (a `get` holds a whole earlier
/// session), so they are never captured: a copy of them would outlive a forget of what they
/// quote, fill search results with the memory's own answers and cost the compressor tokens.
/// A server registered under another name is not recognised (its tools can be listed in
/// `CLAUDE_MEM_SKIP_TOOLS`). Schema v8 deletes what earlier versions stored by the same rule.
pub fn is_our_tool(tool_name: &str) -> bool {
    tool_name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.strip_prefix(SERVER_NAME).or_else(|| plugin_tool(rest)))
        .is_some_and(|rest| rest.starts_with("__"))
}

/// What follows `plugin_<plugin>_claude-mem` in a plugin's tool name (`rest` is after `mcp__`).
fn plugin_tool(rest: &str) -> Option<&str> {
    let rest = rest.strip_prefix("plugin_")?;
    let at = rest.find(&format!("_{SERVER_NAME}__"))?;
    Some(&rest[at + 1 + SERVER_NAME.len()..])
}

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
pub fn left_alone(args: &SettingsArgs) -> Option<&'static str> {
    if args.no_mcp {
        Some("--no-mcp")
    } else if args.settings.is_some() || args.project.is_some() || args.local {
        Some("user settings only: no --project, --local or --settings")
    } else {
        None
    }
}

/// Whether the server is registered, as far as the last install or uninstall knows: one `stat`.
pub fn status(config: &Config) -> bool {
    config.mcp_marker().exists()
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
    let added = run(path, &args);
    let outcome = match added {
        Ok(_) => Registered::Added,
        Err(why) => match registered(path) {
            Some(Entry::Ours { program }) if Path::new(&program) == exe => Registered::Already,
            Some(Entry::Ours { program }) => {
                match run(path, &remove_args()).and_then(|_| run(path, &args)) {
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
        mark(config, exe);
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
        Some(Entry::Ours { .. }) => match run(path, &args) {
            Ok(_) => Unregistered::Removed,
            Err(why) => Unregistered::Failed { why, command },
        },
    };
    if !matches!(outcome, Unregistered::Failed { .. }) {
        let _ = std::fs::remove_file(config.mcp_marker());
    }
    outcome
}

/// The marker says which binary was registered (for a person looking); its presence is what
/// counts.
fn mark(config: &Config, exe: &Path) {
    let text = format!("{}\n", exe.display());
    let _ = fsutil::our_dir(&config.data_dir).and_then(|_| {
        fsutil::write_atomic(
            &config.data_dir,
            &marker_name(config),
            text.as_bytes(),
            fsutil::Durability::Kill,
        )
    });
}

fn marker_name(config: &Config) -> String {
    config
        .mcp_marker()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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
    let out = run(claude, &["mcp".into(), "get".into(), SERVER_NAME.into()]).ok()?;
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

/// Runs `claude args…`; its stdout when it succeeds, else what it said (stderr's first line).
fn run(claude: &Path, args: &[String]) -> Result<String, String> {
    let mut child = Command::new(claude)
        .args(args)
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("{} does not run: {err}", claude.display()))?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(1 << 20).read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + CLAUDE_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`claude {}` gave no answer within {} s",
                    args.join(" "),
                    CLAUDE_TIMEOUT.as_secs()
                ));
            }
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if status.success() {
        return Ok(stdout);
    }
    let said = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(format!(
        "`claude {}` failed ({status}): {said}",
        args.join(" ")
    ))
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

    /// The same rule as schema v8's GLOBs, which delete what earlier versions stored.
    #[test]
    fn our_tools_are_those_of_the_server_named_claude_mem() {
        for ours in [
            "mcp__claude-mem__search",
            "mcp__claude-mem__get",
            "mcp__claude-mem__timeline",
            "mcp__claude-mem__a_later_tool",
            "mcp__plugin_memory_claude-mem__get",
            "mcp__plugin__claude-mem__get",
        ] {
            assert!(is_our_tool(ours), "{ours}");
        }
        for theirs in [
            "Bash",
            "mcp__memory__search",
            "mcp__claude-memory__search",
            "mcp__Claude-Mem__search",
            "mcp__claude-mem",
            "mcp__plugin_claude-mem_mcp-search__search",
            "mcp__plugin_claude-mem__search",
            "claude-mem__search",
        ] {
            assert!(!is_our_tool(theirs), "{theirs}");
        }
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = include_str!("../store/v8.sql");
        let (_, glob) = sql.split_once("WHERE tool_name").unwrap();
        let glob = glob.split_once(';').unwrap().0;
        for name in [
            "mcp__claude-mem__get",
            "mcp__plugin_x_claude-mem__get",
            "mcp__memory__x",
        ] {
            let matched: bool = conn
                .query_row(
                    &format!("SELECT ?1 AS tool_name WHERE tool_name {glob}"),
                    [name],
                    |_| Ok(()),
                )
                .is_ok();
            assert_eq!(matched, is_our_tool(name), "{name}");
        }
    }
}
