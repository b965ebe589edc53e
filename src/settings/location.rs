//! Which settings file a command changes: the user file Claude Code reads (moved by
//! `CLAUDE_CONFIG_DIR` when that is set), a project's shared or local file, or any file named
//! on the command line.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Which file, as a command line names it (`--project`, `--local`, `--settings`); none of them
/// names the user's file.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// A project's `.claude/settings.json` (its local file with `local`).
    pub project: Option<PathBuf>,
    /// The project's `.claude/settings.local.json` (the current directory's without `project`).
    pub local: bool,
    /// This file.
    pub settings: Option<PathBuf>,
}

impl Target {
    /// Whether it is the user's own file, which Claude Code reads for every project.
    pub fn is_user(&self) -> bool {
        self.settings.is_none() && self.project.is_none() && !self.local
    }
}

pub fn settings_path(args: &Target) -> Result<PathBuf> {
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
