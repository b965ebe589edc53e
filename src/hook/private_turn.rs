//! Marks of turns that are private as a whole, kept beside the database.
//!
//! A prompt that is private as a whole makes its turn private: its tool calls and Claude's
//! closing message must never reach the disk. The database knows the turn once the prompt's
//! write is in; but that write may be waiting in the spill folder (the database was busy) when
//! the turn's first tool call is captured, and the capture would then be spilled, in clear
//! text, before anything knew. So the prompt hook also leaves a mark (an empty file named after
//! the session and the prompt), and every capture and Stop looks for its turn's mark before it
//! writes anything anywhere: one `stat`. Without a prompt_id (Claude Code before 2.1.196), the
//! mark is per session and means "the current turn", until the session's next prompt.
//! A session's marks are removed when it ends.

use std::path::PathBuf;

use crate::config::{Config, fnv1a};
use crate::fsutil;
use crate::ops::{Change, Write};

/// Leaves the mark of a private turn. Best effort: the database knows the turn too.
pub fn mark(config: &Config, write: &Write) {
    let Change::PrivatePrompt { prompt_id } = &write.change else {
        return;
    };
    let name = mark_name(&write.session.session_id, prompt_id.as_deref());
    let left = |dir: &std::path::Path| match fsutil::create_private(&dir.join(&name)) {
        Ok(_) => true,
        Err(err) => err.kind() == std::io::ErrorKind::AlreadyExists,
    };
    let primary = config.private_marks_dir();
    if fsutil::our_dir(&primary).is_ok() && left(&primary) {
        return;
    }
    let fallback = config.fallback_dir();
    let dir = fallback.join("private");
    if fsutil::private_temp_dir(&fallback).is_ok() && fsutil::private_dir(&dir).is_ok() {
        left(&dir);
    }
}

/// A prompt that is not private ends the session's private turn (without prompt_id).
pub fn end_turn(config: &Config, write: &Write) {
    if let Change::Prompt {
        prompt_id: None, ..
    } = &write.change
    {
        let name = mark_name(&write.session.session_id, None);
        for dir in places(config) {
            let _ = std::fs::remove_file(dir.join(&name));
        }
    }
}

/// Whether `write` belongs to a turn marked private: such a write is dropped before it is
/// written anywhere.
pub fn covers(config: &Config, write: &Write) -> bool {
    let prompt_id = match &write.change {
        Change::Observation(o) => o.prompt_id.as_deref(),
        Change::SummaryRequest { prompt_id, .. } => prompt_id.as_deref(),
        _ => return false,
    };
    let name = mark_name(&write.session.session_id, prompt_id);
    places(config)
        .into_iter()
        .any(|dir| dir.join(&name).exists())
}

/// Removes the marks of a session that ended.
pub fn forget_session(config: &Config, session_id: &str) {
    let prefix = format!("{:016x}-", fnv1a(session_id.as_bytes()));
    for dir in places(config) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The data dir's marks folder, and the fallback folder's when that exists (the data dir could
/// not be written when the mark was left).
fn places(config: &Config) -> Vec<PathBuf> {
    let mut dirs = vec![config.private_marks_dir()];
    let fallback = config.fallback_dir();
    if fallback.is_dir() && fsutil::private_temp_dir(&fallback).is_ok() {
        dirs.push(fallback.join("private"));
    }
    dirs
}

fn mark_name(session_id: &str, prompt_id: Option<&str>) -> String {
    let session = fnv1a(session_id.as_bytes());
    match prompt_id {
        Some(prompt_id) => format!("{session:016x}-{:016x}", fnv1a(prompt_id.as_bytes())),
        None => format!("{session:016x}-turn"),
    }
}
