//! What claude-mem registers with OpenCode, in its folder of the user's settings
//! (`$XDG_CONFIG_HOME/opencode`, default `~/.config/opencode`): a plugin of ours,
//! `plugins/claude-mem.js` (OpenCode loads every `*.js` of that folder, in every project; it
//! has no command hooks, so the plugin runs ours), and the MCP server in its config,
//! `opencode.json` (or the user's `opencode.jsonc`), as `mcp.claude-mem` of `"type": "local"`.
//!
//! The plugin is a file of ours alone: written whole (its text is in the binary, the path of
//! the binary written into it), and taken out whole. A file of that name that is not ours is
//! refused, never overwritten. The config goes through `given_back` as the other agents' files
//! do.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::command::is_our_program;
use super::document::{agent_object, agent_text};
use super::given_back::Edit;

/// Our plugin, in OpenCode's folder.
pub const PLUGIN_FILE: &str = "plugins/claude-mem.js";

/// The plugin's text; `@CLAUDE_MEM@` (quoted) is the binary's path.
const PLUGIN: &str = include_str!("opencode_plugin.js");
const BINARY_SLOT: &str = "\"@CLAUDE_MEM@\"";
/// How our plugin's text begins: a file that does not is not ours.
const MARK: &str = "// claude-mem's plugin for OpenCode,";

const SERVER: &str = crate::settings::mcp::SERVER_NAME;

/// OpenCode's folder of the user's settings: `$XDG_CONFIG_HOME/opencode`, else
/// `~/.config/opencode` (OpenCode's own rule, on every platform).
pub fn home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        let dir =
            std::path::absolute(PathBuf::from(dir)).context("cannot resolve $XDG_CONFIG_HOME")?;
        return Ok(dir.join("opencode"));
    }
    let home = dirs::home_dir().context("cannot find the home folder for ~/.config/opencode")?;
    Ok(home.join(".config").join("opencode"))
}

/// The config file we register the MCP server in: `opencode.json`, else the user's
/// `opencode.jsonc`, else a new `opencode.json`.
pub fn config_file(home: &Path) -> PathBuf {
    let json = home.join("opencode.json");
    let jsonc = home.join("opencode.jsonc");
    if !json.exists() && jsonc.exists() {
        jsonc
    } else {
        json
    }
}

/// The plugin, running `exe`.
pub fn plugin(exe: &str) -> String {
    let quoted = serde_json::to_string(exe).expect("a string always serializes");
    PLUGIN.replacen(BINARY_SLOT, &quoted, 1)
}

/// Whether a file's text is our plugin (of any version).
pub fn is_ours(text: &str) -> bool {
    text.starts_with(MARK)
}

/// Writes `text` as the plugin at `path` (a dry run writes nothing); a file there that is not
/// ours is refused.
pub fn install_plugin(path: &Path, text: &str, dry_run: bool) -> Result<Edit> {
    let current = read(path)?;
    if current.as_deref().is_some_and(|c| !is_ours(c)) {
        bail!(
            "{} is not claude-mem's plugin; left untouched (move it away to install ours)",
            path.display()
        );
    }
    if current.as_deref() == Some(text) {
        return Ok(Edit::Unchanged);
    }
    if dry_run {
        return Ok(Edit::WouldWrite(text.to_string()));
    }
    super::given_back::write(path, text)?;
    Ok(if current.is_none() {
        Edit::Created
    } else {
        Edit::Changed
    })
}

/// Removes our plugin from `path`; a file there that is not ours stays.
pub fn uninstall_plugin(path: &Path, dry_run: bool) -> Result<Edit> {
    match read(path)? {
        Some(text) if is_ours(&text) => {
            if dry_run {
                return Ok(Edit::WouldRemove);
            }
            fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
            Ok(Edit::Removed)
        }
        _ => Ok(Edit::Unchanged),
    }
}

/// The plugin's text: a link where it goes is refused, as any file that is not a regular one.
fn read(path: &Path) -> Result<Option<String>> {
    super::given_back::read_regular(path, false)
}

/// OpenCode's config with our MCP server running `exe mcp`.
pub fn add_server(text: Option<&str>, exe: &str) -> Result<String> {
    let mut root = agent_object(text)?;
    let Value::Object(servers) = root.entry("mcp").or_insert_with(|| json!({})) else {
        bail!("its \"mcp\" value is not an object");
    };
    if let Some(program) = servers.get(SERVER).and_then(program_of)
        && !is_our_program(program)
    {
        bail!("it already has an MCP server named {SERVER} that runs {program}; left untouched");
    }
    let entry = json!({"type": "local", "command": [exe, "mcp"], "enabled": true});
    servers.insert(SERVER.into(), entry);
    agent_text(&root)
}

/// OpenCode's config without our MCP server, and without the `mcp` object this leaves empty.
pub fn remove_server(text: &str) -> Result<String> {
    let mut root = agent_object(Some(text))?;
    let Some(Value::Object(servers)) = root.get_mut("mcp") else {
        return Ok(text.to_string());
    };
    if !servers
        .get(SERVER)
        .and_then(program_of)
        .is_some_and(is_our_program)
    {
        return Ok(text.to_string());
    }
    servers.shift_remove(SERVER);
    if servers.is_empty() {
        root.shift_remove("mcp");
    }
    agent_text(&root)
}

/// The program an `mcp` entry of OpenCode's runs: the first word of its `command` list.
pub fn program_of(entry: &Value) -> Option<&str> {
    entry.get("command")?.as_array()?.first()?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_this_binary_and_is_known_as_ours() {
        let text = plugin("/opt/my tools/claude-mem");
        assert!(
            text.contains(r#"const CLAUDE_MEM = "/opt/my tools/claude-mem""#),
            "{text}"
        );
        assert!(!text.contains("@CLAUDE_MEM@"));
        assert!(is_ours(&text));
        assert!(!is_ours("export const Mine = async () => ({})\n"));
    }

    #[test]
    fn the_server_goes_in_and_out_and_the_users_keys_stay() {
        let user = "{\n  \"model\": \"anthropic/claude-sonnet-4-6\",\n  \"mcp\": {\n    \"docs\": {\"type\": \"remote\", \"url\": \"https://d\"}\n  }\n}\n";
        let with = add_server(Some(user), "/bin/claude-mem").unwrap();
        let root: Value = serde_json::from_str(&with).unwrap();
        assert_eq!(
            root["mcp"][SERVER]["command"],
            json!(["/bin/claude-mem", "mcp"])
        );
        assert_eq!(root["mcp"]["docs"]["url"], "https://d");
        let without: Value = serde_json::from_str(&remove_server(&with).unwrap()).unwrap();
        assert_eq!(without, serde_json::from_str::<Value>(user).unwrap());
        let theirs = r#"{"mcp": {"claude-mem": {"type": "local", "command": ["other", "serve"]}}}"#;
        assert!(add_server(Some(theirs), "/bin/claude-mem").is_err());
        assert_eq!(remove_server(theirs).unwrap(), theirs);
    }
}
