//! What the log says: its warnings and errors of the last day, counted and summarized, and the
//! newest line about a given thing (why spilled events wait).
//!
//! Lines are `<time> <LEVEL> pid=<n> <context>: <message>` (see `crate::log`), in the data dir's
//! log, its rotated part and the fallback folder's log.

use std::io::Read;
use std::path::PathBuf;

use crate::config::Config;
use crate::fsutil::{self, Access};

/// Log lines at these levels are warnings.
pub const WARN_LEVELS: &[&str] = &["WARN", "ERROR", "PANIC"];
const LATEST: usize = 3;
/// The log rotates past 1 MiB; anything much larger is not ours to read whole.
const MAX_READ: u64 = 8 << 20;

/// The warnings of a period.
#[derive(Debug, Default)]
pub struct Warnings {
    pub count: usize,
    /// The last few lines, oldest first.
    pub latest: Vec<String>,
    /// (level, lines) of each level that occurs, in the order of [`WARN_LEVELS`].
    pub levels: Vec<(&'static str, usize)>,
    /// (kind, lines), the most frequent first: a line's context and message with what varies
    /// (numbers, paths) blanked out.
    pub kinds: Vec<(String, usize)>,
}

/// The files the log may be in, oldest first.
fn paths(config: &Config) -> [PathBuf; 3] {
    let log = config.log_path();
    [
        log.with_extension("log.1"),
        log,
        config.fallback_dir().join("memory.log"),
    ]
}

/// Every line of the logs (only files of ours: never through a link someone put there).
fn lines(config: &Config) -> Vec<String> {
    let mut lines = Vec::new();
    for path in paths(config) {
        let Ok(file) = fsutil::open_ours(&path, Access::Read) else {
            continue;
        };
        let mut bytes = Vec::new();
        if file.take(MAX_READ).read_to_end(&mut bytes).is_ok() {
            lines.extend(String::from_utf8_lossy(&bytes).lines().map(String::from));
        }
    }
    lines
}

/// The time a day ago, as log lines write it (they sort as text).
pub fn a_day_ago() -> String {
    (chrono::Utc::now() - chrono::Duration::days(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Warnings logged since `since` (a timestamp as log lines write them).
pub fn warnings(config: &Config, since: &str) -> Warnings {
    let mut found: Vec<(String, &'static str)> = lines(config)
        .into_iter()
        .filter_map(|line| {
            let mut words = line.splitn(3, ' ');
            let (ts, level) = (words.next()?, words.next()?);
            let level = WARN_LEVELS.iter().find(|l| **l == level)?;
            (ts >= since).then_some((line, *level))
        })
        .collect();
    found.sort();
    let levels = WARN_LEVELS
        .iter()
        .map(|level| (*level, found.iter().filter(|(_, l)| l == level).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for (line, _) in &found {
        let kind = kind(line);
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    // Stable: equally frequent kinds stay in order of first appearance.
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    let skip = found.len().saturating_sub(LATEST);
    Warnings {
        count: found.len(),
        latest: found.into_iter().skip(skip).map(|(line, _)| line).collect(),
        levels,
        kinds,
    }
}

/// What a line is about: its level, context and message, with paths and numbers blanked out
/// so that lines about the same problem read the same.
fn kind(line: &str) -> String {
    let mut words = line.splitn(4, ' ');
    let (_ts, level, _pid) = (words.next(), words.next().unwrap_or(""), words.next());
    let rest = words.next().unwrap_or("");
    let text: Vec<String> = rest
        .split_whitespace()
        .map(|word| {
            if word.contains('/') {
                "…".to_string()
            } else {
                word.chars()
                    .map(|c| if c.is_ascii_digit() { '#' } else { c })
                    .collect()
            }
        })
        .collect();
    format!("{level} {}", text.join(" "))
}

/// The newest line of the logs that contains `needle`, if any.
pub fn newest_with(config: &Config, needle: &str) -> Option<String> {
    let mut found: Vec<String> = lines(config)
        .into_iter()
        .filter(|line| line.contains(needle))
        .collect();
    found.sort();
    found.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_about_one_problem_are_one_kind() {
        let a = "2026-11-20T10:00:00.000Z WARN pid=12 hook capture: database unavailable \
                 (database is locked); event kept in /d/spill/0191.json for a later run";
        let b = "2026-11-20T11:00:00.000Z WARN pid=345 hook capture: database unavailable \
                 (database is locked); event kept in /d/spill/0192.json for a later run";
        assert_eq!(kind(a), kind(b));
        assert_eq!(
            kind(a),
            "WARN hook capture: database unavailable (database is locked); event kept in … \
             for a later run"
        );
    }
}
