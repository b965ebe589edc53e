//! Our hooks in Codex's `hooks.json`, and whether the user reviewed them: Codex records the
//! trust of each hook in its `config.toml` and runs no other, silently (see
//! [`crate::settings::codex`]).

use std::path::{Path, PathBuf};

use crate::settings::codex;

/// Our hooks as Codex's files have them.
pub struct CodexHooks {
    pub path: PathBuf,
    /// Our handlers in the file.
    pub ours: usize,
    /// Their keys that Codex records no trust for.
    pub untrusted: Vec<String>,
}

/// Our hooks in `$CODEX_HOME/hooks.json`; `None` when it holds none.
pub fn look() -> Option<CodexHooks> {
    let path = codex::home().ok()?.join("hooks.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let ours = codex::trust_keys(&path, &text).len();
    (ours > 0).then(|| CodexHooks {
        untrusted: untrusted(&path),
        path,
        ours,
    })
}

/// The keys of our handlers in the hooks file at `path` that Codex has no trust recorded for
/// in the `config.toml` beside it. Codex names the file by its absolute path, which may be
/// the one behind a symlink: trust under either counts.
pub fn untrusted(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let config = path.with_file_name("config.toml");
    let config = std::fs::read_to_string(config).ok();
    let keys = codex::trust_keys(path, &text);
    let missing = codex::untrusted(config.as_deref(), &keys);
    match std::fs::canonicalize(path) {
        Ok(real) if real != path => {
            let real_keys = codex::trust_keys(&real, &text);
            let real_missing = codex::untrusted(config.as_deref(), &real_keys);
            if real_missing.len() < missing.len() {
                return real_missing;
            }
            missing
        }
        _ => missing,
    }
}
