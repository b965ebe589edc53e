//! What claude-mem registers with Claude Code: its hooks (which events, which hook each runs,
//! from which Claude Code version), by the absolute path of this binary. `install-hooks` and
//! `doctor` (which checks and repairs a registration) read it here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::command::Program;
use super::merge::{self, Change, Registration};
use super::{Outcome, update};
use crate::claude::{ClaudeCode, Version};

/// What we register. SessionStart has no matcher so that every source (startup, resume, clear,
/// compact) fires it.
pub const HOOKS: &[(Registration, Option<Version>)] = &[
    (reg("SessionStart", None, "context"), None),
    (reg("UserPromptSubmit", None, "prompt"), None),
    (reg("PostToolUse", Some("*"), "capture"), None),
    // An event name an older Claude Code does not know made it ignore the whole file; since
    // 2.1.101 it is only a warning.
    (
        reg("PostToolUseFailure", Some("*"), "capture"),
        Some(Version(2, 1, 101)),
    ),
    (reg("Stop", None, "summary"), None),
    (reg("SessionEnd", None, "cleanup"), None),
];

const fn reg(
    event: &'static str,
    matcher: Option<&'static str>,
    hook: &'static str,
) -> Registration {
    Registration {
        event,
        matcher,
        hook,
    }
}

/// What registering our hooks in one file did.
pub struct Registered {
    pub outcome: Outcome<Vec<Change>>,
    /// Hooks not added, with why (the installed Claude Code may not know their event).
    pub skipped: Vec<(&'static Registration, String)>,
    pub exe: PathBuf,
}

/// This binary's absolute path, as the hooks are to run it.
pub fn this_binary() -> Result<PathBuf> {
    std::env::current_exe()
        .and_then(|exe| {
            if exe.is_absolute() {
                Ok(exe)
            } else {
                exe.canonicalize()
            }
        })
        .context("cannot find the path of the running claude-mem binary")
}

/// Registers this binary's hooks in the settings file at `path` (what install-hooks does, and
/// doctor's repair of a stale registration): adds what is missing, repoints what runs another
/// binary, keeps everything else.
pub fn register(path: &Path, dry_run: bool, claude: &ClaudeCode) -> Result<Registered> {
    let exe = this_binary()?;
    let program = Program::of(&exe)?;
    let mut wanted = Vec::new();
    let mut skipped = Vec::new();
    for (registration, since) in HOOKS {
        match since.map_or(Ok(()), |since| claude.allows(since)) {
            Ok(()) => wanted.push(*registration),
            Err(why) => skipped.push((registration, why)),
        }
    }
    let outcome = update(path, dry_run, true, |root| {
        // A hook we would not add now but that is already there (registered when a newer
        // Claude Code was found) is kept, and repointed like the others.
        let mut registrations = wanted.clone();
        registrations.extend(
            skipped
                .iter()
                .map(|(registration, _)| **registration)
                .filter(|registration| merge::is_registered(root, registration)),
        );
        merge::install(root, &program, &registrations)
    })?;
    Ok(Registered {
        outcome,
        skipped,
        exe,
    })
}
