//! What claude-mem registers with OpenAI's Codex CLI: its hooks in `$CODEX_HOME/hooks.json`
//! (default `~/.codex`), in the shape of Claude Code's, each command naming the agent
//! (`hook capture --agent codex`); its MCP server as `[mcp_servers.claude-mem]` in
//! `$CODEX_HOME/config.toml`, edited in place so that every key, comment and blank line of the
//! user's stays. And whether the user has reviewed our hooks: Codex runs only hooks whose
//! trust it recorded in `config.toml` (`[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`,
//! a `trusted_hash`), and skips the others silently.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::command::{Program, is_our_program};
use super::document::{agent_object, agent_text};
use super::merge::{self, Registration};

/// Our hooks in Codex. Codex has no PostToolUseFailure; its SessionEnd hooks get 1 s (3 at
/// most), which the cleanup hook keeps well within, so no timeout is written for them.
pub const HOOKS: &[Registration] = &[
    reg("SessionStart", "context"),
    reg("UserPromptSubmit", "prompt"),
    reg("PostToolUse", "capture"),
    reg("Stop", "summary"),
    reg("SessionEnd", "cleanup"),
];

const fn reg(event: &'static str, hook: &'static str) -> Registration {
    Registration {
        event,
        matcher: None,
        hook,
    }
}

/// The name the MCP server is registered under, as with Claude Code.
pub const SERVER: &str = crate::settings::mcp::SERVER_NAME;

/// Codex's folder: `$CODEX_HOME`, else `~/.codex`.
pub fn home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return std::path::absolute(PathBuf::from(dir)).context("cannot resolve $CODEX_HOME");
    }
    let home = dirs::home_dir().context("cannot find the home folder for ~/.codex")?;
    Ok(home.join(".codex"))
}

/// `hooks.json` with our hooks, run by `program`: any of ours already there is taken out
/// first, so that a moved binary or an older registration leaves nothing behind.
pub fn add_hooks(text: Option<&str>, program: &Program) -> Result<String> {
    let mut root = agent_object(text)?;
    add_registrations(&mut root, program, HOOKS, "codex")?;
    agent_text(&root)
}

/// Adds `registrations` to a file in Claude Code's nested shape of hooks (Codex's, Gemini's),
/// each running `program` for `agent`, after taking any of ours out.
pub fn add_registrations(
    root: &mut Map<String, Value>,
    program: &Program,
    registrations: &[Registration],
    agent: &str,
) -> Result<()> {
    merge::uninstall(root);
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        bail!("its \"hooks\" value is not an object");
    };
    for registration in registrations {
        let handler = json!({
            "type": "command",
            "command": format!("{} hook {} --agent {agent}", program.shell, registration.hook),
        });
        let groups = hooks
            .entry(registration.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            bail!("its {} value is not a list", registration.event);
        };
        groups.push(json!({"hooks": [handler]}));
    }
    Ok(())
}

/// `hooks.json` without any hook of ours.
pub fn remove_hooks(text: &str) -> Result<String> {
    let mut root = agent_object(Some(text))?;
    if merge::uninstall(&mut root).is_empty() {
        return Ok(text.to_string());
    }
    agent_text(&root)
}

/// The hook-state keys Codex would record trust under for our handlers: the path of the
/// hooks file, the event's label, the group's and the handler's places.
pub fn trust_keys(path: &Path, text: &str) -> Vec<String> {
    let Ok(root) = agent_object(Some(text)) else {
        return Vec::new();
    };
    let Some(Value::Object(hooks)) = root.get("hooks") else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    for (event, groups) in hooks {
        let label = snake(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let ours = handler
                    .get("command")
                    .and_then(Value::as_str)
                    .and_then(super::command::parse_ours)
                    .is_some();
                if ours {
                    keys.push(format!("{}:{label}:{g}:{h}", path.display()));
                }
            }
        }
    }
    keys
}

/// The keys of `keys` that `config.toml` records no trust for.
pub fn untrusted(config_toml: Option<&str>, keys: &[String]) -> Vec<String> {
    let doc = config_toml.and_then(|t| t.parse::<DocumentMut>().ok());
    let state = doc
        .as_ref()
        .and_then(|d| d.get("hooks"))
        .and_then(|h| h.get("state"));
    keys.iter()
        .filter(|key| {
            let trusted = state
                .and_then(|s| s.get(key.as_str()))
                .and_then(|k| k.get("trusted_hash"))
                .and_then(Item::as_str);
            trusted.is_none_or(str::is_empty)
        })
        .cloned()
        .collect()
}

/// `config.toml` with `[mcp_servers.claude-mem]` running `exe mcp`.
pub fn add_server(text: Option<&str>, exe: &str) -> Result<String> {
    let mut doc = document(text)?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_like_mut()
        .context("its mcp_servers is not a table")?;
    if let Some(command) = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Item::as_str)
        && !is_our_program(command)
    {
        bail!("it already has an MCP server named {SERVER} that runs {command}; left untouched");
    }
    let mut server = Table::new();
    server.insert("command", value(exe));
    server.insert("args", value(Array::from_iter(["mcp"])));
    servers.insert(SERVER, Item::Table(server));
    Ok(doc.to_string())
}

/// `config.toml` without our MCP server (one named so that runs another program stays).
pub fn remove_server(text: &str) -> Result<String> {
    let mut doc = document(Some(text))?;
    let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) else {
        return Ok(text.to_string());
    };
    let ours = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Item::as_str)
        .is_some_and(is_our_program);
    if !ours {
        return Ok(text.to_string());
    }
    servers.remove(SERVER);
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    Ok(doc.to_string())
}

fn document(text: Option<&str>) -> Result<DocumentMut> {
    text.unwrap_or("")
        .parse::<DocumentMut>()
        .map_err(|err| anyhow::anyhow!("it is not valid TOML ({})", one_line(&err.to_string())))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `PostToolUse` -> `post_tool_use`, as Codex labels an event in its hook-state keys.
fn snake(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_and_every_key_stay_and_removal_gives_the_text_back() {
        let text = "# mine\nmodel = \"o3\" # keep\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let added = add_server(Some(text), "/bin/claude-mem").unwrap();
        assert!(added.starts_with(text), "{added}");
        assert!(added.contains("[mcp_servers.claude-mem]"), "{added}");
        assert_eq!(remove_server(&added).unwrap(), text);
    }

    #[test]
    fn labels_are_snake_case() {
        assert_eq!(snake("PostToolUse"), "post_tool_use");
        assert_eq!(snake("SessionStart"), "session_start");
    }
}
