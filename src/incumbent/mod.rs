//! Noticing thedotmack/claude-mem, the tool many users come from, when it is installed too.
//!
//! Both tools would then record every tool call (Claude Code runs the hooks of both), each into
//! its own store, and the other's background worker spends tokens on the same events. That is
//! worth saying plainly at install time and in `doctor`; nothing here changes anything.
//! What a user brings over from it: `import --from-claude-mem` (see `store::incumbent`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::Config;

/// The plugin id the incumbent registers itself under.
pub const PLUGIN: &str = "claude-mem@thedotmack";

/// What gave the incumbent away, one phrase each, for the user.
#[derive(Debug, Default)]
pub struct Signs(pub Vec<String>);

/// Looks at the user's Claude Code settings and plugins and at the incumbent's data folder.
/// Cheap file reads only; a file that cannot be read says nothing.
pub fn detect(config: &Config) -> Signs {
    let mut signs = Vec::new();
    let claude_dir = claude_config_dir();
    let settings_path = claude_dir.join("settings.json");
    if let Some(settings) = read_json(&settings_path) {
        if settings
            .get("enabledPlugins")
            .and_then(|p| p.get(PLUGIN))
            .is_some_and(|on| on == &Value::Bool(true))
        {
            signs.push(format!(
                "its plugin {PLUGIN} is enabled in {}",
                settings_path.display()
            ));
        }
        if hooks_mention_it(&settings) {
            signs.push(format!("its hooks are in {}", settings_path.display()));
        }
    }
    let plugin_dir = claude_dir
        .join("plugins")
        .join("marketplaces")
        .join("thedotmack");
    if plugin_dir.is_dir() {
        signs.push(format!("its plugin files are in {}", plugin_dir.display()));
    }
    let data = incumbent_data_dir(config);
    for worker_file in ["worker.pid", "supervisor.json", "settings.json"] {
        if data.join(worker_file).is_file() {
            signs.push(format!("its worker files are in {}", data.display()));
            break;
        }
    }
    let db = data.join("claude-mem.db");
    if db.is_file() && db != config.db_path() && !is_ours(config, &db) {
        signs.push(format!("its database is {}", db.display()));
    }
    Signs(signs)
}

impl Signs {
    pub fn found(&self) -> bool {
        !self.0.is_empty()
    }

    /// A short paragraph for the user, or nothing when the incumbent is not there.
    pub fn explain(&self) -> Option<String> {
        if !self.found() {
            return None;
        }
        Some(format!(
            "thedotmack/claude-mem is installed too ({}). Both record every tool call: Claude \
             Code runs the hooks of both, each writes its own store, and its worker also \
             summarizes with your Claude account. To keep only this one, disable it \
             (`claude plugin disable {PLUGIN}`); to keep only that one, run \
             `claude-mem uninstall-hooks`. Its files are never changed by this claude-mem; \
             `claude-mem import --from-claude-mem` copies its memory here.\n",
            self.0.join("; ")
        ))
    }
}

/// Where the incumbent keeps its data: `$CLAUDE_MEM_DATA_DIR` (it reads the same variable) or
/// `~/.claude-mem`, which is also where our earlier releases lived.
pub fn incumbent_data_dir(config: &Config) -> PathBuf {
    config.legacy_dir.clone()
}

pub fn is_ours(config: &Config, db: &Path) -> bool {
    // Our own database of an earlier release, waiting to be moved, is not the incumbent's.
    db == config.legacy_db_path() && crate::store::layout::is_ours(db).unwrap_or(false)
}

fn claude_config_dir() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => dirs::home_dir().unwrap_or_default().join(".claude"),
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let file = crate::fsutil::open_ours(path, crate::fsutil::Access::Read).ok()?;
    serde_json::from_reader(std::io::Read::take(file, 16 << 20)).ok()
}

/// Hook commands of the incumbent (when copied into settings by hand or an old installer):
/// its worker script or its plugin folder in the command line.
fn hooks_mention_it(settings: &Value) -> bool {
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    hooks
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(|handler| handler.get("command")?.as_str())
        .any(|command| {
            command.contains("worker-service.cjs")
                || command.contains("thedotmack")
                || command.contains("claude-mem/plugin/scripts")
        })
}
