//! Failing loud, once. A hook has no voice of its own (stderr would be a hook error, exit 2
//! would block Claude Code), but its JSON answer may carry a `systemMessage`, which Claude Code
//! shows to the user. When something is really wrong (an event lost, a database we cannot use,
//! events piling up unapplied) the hook says so there: one short line naming the problem and
//! the command that explains it, at most once per session and problem, so that a user who
//! keeps working is told, not nagged.
//!
//! That it was said is remembered by an empty file per problem and session in the data dir (or
//! in the fallback folder when the data dir cannot be written). When neither can be written,
//! the message is given every time: repeating it beats losing events in silence.

use std::path::PathBuf;

use crate::config::{Config, fnv1a};
use crate::fsutil;

/// Spill files waiting past either bound are "piling up".
pub const PILE_FILES: usize = 300;
pub const PILE_AGE_MS: u64 = 24 * 3600 * 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// An event could be kept nowhere.
    EventLost { why: String },
    /// The database (or data dir) will not work until the user acts; events wait in `kept_in`.
    Refused { why: String, kept_in: PathBuf },
    /// Spilled events are not being applied.
    Piling { waiting: usize, since: String },
}

impl Problem {
    fn key(&self) -> &'static str {
        match self {
            Problem::EventLost { .. } => "lost",
            Problem::Refused { .. } => "refused",
            Problem::Piling { .. } => "piling",
        }
    }

    fn message(&self, config: &Config) -> String {
        let text = match self {
            Problem::EventLost { why } => format!(
                "claude-mem could not save an event, so this session's memory is incomplete \
                 ({why})."
            ),
            Problem::Refused { why, kept_in } => format!(
                "claude-mem is not recording: {why}. Events wait in {}.",
                kept_in.display()
            ),
            Problem::Piling { waiting, since } => format!(
                "claude-mem has {waiting} event{} waiting to be saved since {since} in {}.",
                if *waiting == 1 { "" } else { "s" },
                config.spill_dir().display()
            ),
        };
        format!("{} Run `claude-mem doctor` to see why.", one_line(&text))
    }
}

/// The message for `problem`, unless this session was told already.
pub fn once(config: &Config, session_id: &str, problem: &Problem) -> Option<String> {
    let name = format!("{}-{:016x}", problem.key(), fnv1a(session_id.as_bytes()));
    for dir in places(config) {
        match fsutil::create_private(&dir.join(&name)) {
            Ok(_) => break,
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => return None,
            Err(_) => continue,
        }
    }
    Some(problem.message(config))
}

/// Where the marks may go: the data dir's notices folder, else the fallback folder's.
fn places(config: &Config) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let primary = config.notices_dir();
    if fsutil::our_dir(&config.data_dir).is_ok() && fsutil::our_dir(&primary).is_ok() {
        dirs.push(primary);
    }
    let fallback = config.fallback_dir();
    if fsutil::private_temp_dir(&fallback).is_ok() {
        let dir = fallback.join("notices");
        if fsutil::private_dir(&dir).is_ok() {
            dirs.push(dir);
        }
    }
    dirs
}

/// Marks of a session that ended, so the notices folder does not grow.
pub fn forget_session(config: &Config, session_id: &str) {
    let suffix = format!("-{:016x}", fnv1a(session_id.as_bytes()));
    let Ok(entries) = std::fs::read_dir(config.notices_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().ends_with(&suffix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
