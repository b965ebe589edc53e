//! The spill folder as it stands: how many events wait for the database, since when, why (the
//! log's newest word on it), how many were written by a newer claude-mem (which this one never
//! applies), and how many files were set aside as unusable.

use std::fs;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::config::Config;

#[derive(Debug, Default)]
pub struct Spill {
    /// Events waiting in the spill folders (the data dir's and the fallback).
    pub waiting: usize,
    /// When the oldest of them was written.
    pub oldest: Option<SystemTime>,
    /// Why they wait, as the hooks last logged it (the database's error).
    pub why: Option<String>,
    /// Events a newer claude-mem wrote in a format this one does not know (`<id>.vN.json`):
    /// they wait for it, not for the database.
    pub newer: usize,
    /// Spill files set aside in the quarantine folder.
    pub quarantined: usize,
}

pub fn look(config: &Config) -> Spill {
    let mut spill = Spill::default();
    for dir in [config.spill_dir(), config.fallback_dir().join("spill")] {
        for (path, modified) in waiting_in(dir) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if crate::spill::is_newer_format(&name) {
                spill.newer += 1;
                continue;
            }
            if !crate::spill::is_current_format(&name) {
                continue;
            }
            spill.waiting += 1;
            if let Some(m) = modified {
                spill.oldest = Some(spill.oldest.map_or(m, |o| o.min(m)));
            }
        }
    }
    spill.quarantined = waiting_in(config.quarantine_dir()).len();
    if spill.waiting > 0 {
        spill.why = super::log::newest_with(config, "database unavailable (")
            .as_deref()
            .and_then(reason);
    }
    spill
}

/// Spill files in `dir` (not temp files nor the reserve's chunks) with their mtime.
fn waiting_in(dir: PathBuf) -> Vec<(PathBuf, Option<SystemTime>)> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !name.starts_with('.') && name.ends_with(".json")
        })
        .map(|e| (e.path(), e.metadata().and_then(|m| m.modified()).ok()))
        .collect()
}

/// The text in the first balanced parentheses after "database unavailable".
fn reason(line: &str) -> Option<String> {
    let start = line.find("database unavailable (")? + "database unavailable (".len();
    let mut depth = 1;
    for (i, c) in line[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(line[start..start + i].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_the_databases_error() {
        let line = "t WARN pid=1 hook capture: database unavailable (cannot open (x): locked); \
                    event kept in /s/a.json for a later run";
        assert_eq!(reason(line).as_deref(), Some("cannot open (x): locked"));
        assert_eq!(reason("t WARN nothing"), None);
    }
}
