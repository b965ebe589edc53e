//! Which settings file a command changes: the user file Claude Code reads (moved by
//! `CLAUDE_CONFIG_DIR` when that is set), a project's shared or local file, or any file named
//! on the command line.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::SettingsArgs;

pub fn settings_path(args: &SettingsArgs) -> Result<PathBuf> {
    let path = if let Some(path) = &args.settings {
        path.clone()
    } else if args.project.is_some() || args.local {
        let project = args.project.as_deref().unwrap_or(Path::new("."));
        let name = if args.local {
            "settings.local.json"
        } else {
            "settings.json"
        };
        project.join(".claude").join(name)
    } else if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        PathBuf::from(dir).join("settings.json")
    } else {
        dirs::home_dir()
            .context(
                "cannot find your home directory; set HOME, or name the file with --settings PATH",
            )?
            .join(".claude")
            .join("settings.json")
    };
    // Absolute, so every message names the file unambiguously; symlinks are followed later,
    // when the file is written, so that the link itself survives.
    std::path::absolute(&path).with_context(|| format!("cannot use {:?} as a path", path))
}
