//! When compression waits: the daily budget is spent, no model can be reached, or batch after
//! batch fails. The compressor leaves a small file saying until when and why, its modification
//! time set to the pause's end; the hooks `stat` it before they start a compressor (so that a
//! spent budget or a missing model program costs no process per session end), and `status`
//! and `doctor` read it. A run that stores something removes it.
//!
//! A pause that follows another with nothing stored between lasts twice as long, up to
//! [`MAX_BACKOFF`]: a model program that stays missing or broken is tried less and less often,
//! not at every session's end (where each try read and failed three batches of a 100,000-item
//! backlog, charged and counted against their items until issue 27, and slowed the hooks
//! while it went on). The budget's pause, until midnight, does not double.
//!
//! The file holds `<until> <cause> <streak>` on its first line and the reason on the second
//! (an earlier release wrote no cause and no streak: the pause holds all the same). The reason
//! is often a model's error, which may quote a key: it is redacted as the hooks redact what
//! they capture, before it is written, and again when read (a file an earlier build wrote);
//! `scrub` rewrites such a file over its own bytes ([`scrub`]).

use std::io::{Read, Seek, Write};
use std::time::Duration;

use super::cause::Cause;
use crate::config::Config;
use crate::fsutil::{self, Access, Durability};
use crate::marks;
use crate::privacy::clean_text;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    /// Seconds since the epoch.
    pub until: u64,
    /// What it waits for; `None` from a file of an earlier release.
    pub cause: Option<Cause>,
    /// Pauses before this one with nothing stored between: it lasts 2^streak times its cause's.
    pub streak: u32,
    pub why: String,
}

impl Pause {
    /// When it is one of several in a row, what `status` and `doctor` add to its time:
    /// "; backing off: paused 3 times in a row, each twice as long as the one before".
    pub fn backing_off(&self) -> String {
        if self.streak == 0 {
            return String::new();
        }
        format!(
            "; backing off: paused {} times in a row, each twice as long as the one before",
            self.streak.saturating_add(1)
        )
    }
}

/// The longest a pause that doubles can last.
pub const MAX_BACKOFF: Duration = Duration::from_secs(6 * 3600);

/// The pause in force now, if any.
pub fn current(config: &Config) -> Option<Pause> {
    let file = marks::pause_file(config)?;
    (file.until > now()).then(|| Pause {
        until: file.until,
        cause: file.cause.as_deref().and_then(Cause::parse),
        streak: file.streak,
        why: clean_text(&config.redactor, &file.why).into_owned(),
    })
}

/// Pauses compression until `until` (seconds since the epoch), the `streak`th pause in a row.
/// Best effort: without the file the hooks start a compressor that finds the same reason and
/// stops at once.
pub fn set(config: &Config, until: u64, cause: Cause, streak: u32, why: &str) {
    let why = clean_text(&config.redactor, why).replace('\n', " ");
    let text = format!("{until} {} {streak}\n{why}\n", cause.as_str());
    let path = config.compress_pause();
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let name = name.to_string_lossy();
        let _ = fsutil::write_atomic(dir, &name, text.as_bytes(), Durability::Kill);
        marks::pause_ends_at(config, until);
    }
}

/// Pauses compression for as long as `cause` asks, doubled for each pause before it with
/// nothing stored between (up to [`MAX_BACKOFF`]); how long that is.
pub fn set_for(config: &Config, cause: Cause, why: &str) -> Duration {
    // The budget's own pause says nothing of whether the model works.
    let streak = marks::pause_file(config)
        .filter(|before| before.cause.as_deref() != Some(Cause::Budget.as_str()))
        .map_or(0, |before| before.streak.saturating_add(1));
    let pause = backoff(cause.pause(), streak);
    set(config, now() + pause.as_secs(), cause, streak, why);
    pause
}

/// `base` doubled `streak` times, at most [`MAX_BACKOFF`] (and never less than `base`).
fn backoff(base: Duration, streak: u32) -> Duration {
    base.checked_mul(1u32.checked_shl(streak.min(31)).unwrap_or(u32::MAX))
        .unwrap_or(Duration::MAX)
        .min(MAX_BACKOFF.max(base))
}

/// What [`scrub`] did (or, dry, would do) to the pause file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrubbed {
    /// No file, or nothing in it today's rules remove.
    Nothing,
    /// Its reason rewritten without what the rules remove, over the old bytes.
    Redacted,
    /// Removed: the pause is over, and its reason held what the rules remove.
    Over,
    /// Removed: not a pause file of ours (not a regular file of ours, or not as we write it).
    NotOurs,
}

/// The largest pause file read: ours hold a line and a model's error.
const MAX_FILE: u64 = 64 * 1024;

/// Today's privacy and secret rules applied to the pause file, which an earlier build may have
/// written with a key in its reason; with `dry`, only says what it would do.
pub fn scrub(config: &Config, dry: bool) -> Scrubbed {
    let path = config.compress_pause();
    if std::fs::symlink_metadata(&path).is_err() {
        return Scrubbed::Nothing;
    }
    let remove = |what: Scrubbed| {
        if !dry {
            let _ = std::fs::remove_file(&path);
        }
        what
    };
    let access = if dry { Access::Read } else { Access::Rewrite };
    let Ok(mut file) = fsutil::open_ours(&path, access) else {
        return remove(Scrubbed::NotOurs);
    };
    let mut text = String::new();
    let read = (&mut file).take(MAX_FILE + 1).read_to_string(&mut text);
    let (first, why) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    let until = first
        .split_whitespace()
        .next()
        .and_then(|w| w.parse::<u64>().ok());
    let (Ok(_), Some(until)) = (read, until) else {
        return remove(Scrubbed::NotOurs);
    };
    if text.len() as u64 > MAX_FILE {
        return remove(Scrubbed::NotOurs);
    }
    let why = why.trim();
    let clean = clean_text(&config.redactor, why).replace('\n', " ");
    if clean == why {
        return Scrubbed::Nothing;
    }
    if until <= now() {
        return remove(Scrubbed::Over);
    }
    if !dry && overwrite(&mut file, &format!("{first}\n{clean}\n"), text.len()).is_err() {
        return remove(Scrubbed::NotOurs);
    }
    if !dry {
        // The rewrite moved its time, which the hooks read as the pause's end.
        marks::pause_ends_at(config, until);
    }
    Scrubbed::Redacted
}

/// Writes `text` over the file's first `old_len` bytes (padding with newlines, which a reader
/// trims), syncs, then cuts the file to `text`: the old reason is overwritten where it lay.
fn overwrite(file: &mut std::fs::File, text: &str, old_len: usize) -> std::io::Result<()> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.resize(bytes.len().max(old_len), b'\n');
    file.rewind()?;
    file.write_all(&bytes)?;
    file.sync_data()?;
    file.set_len(text.len() as u64)?;
    file.sync_data()
}

pub fn clear(config: &Config) {
    let _ = std::fs::remove_file(config.compress_pause());
}

fn now() -> u64 {
    marks::now_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_doubles_with_each_before_it_up_to_the_cap() {
        let quarter = Duration::from_secs(15 * 60);
        let hours = |h: u64| Duration::from_secs(h * 3600);
        assert_eq!(backoff(quarter, 0), quarter);
        assert_eq!(backoff(quarter, 1), 2 * quarter);
        assert_eq!(backoff(hours(1), 2), hours(4));
        assert_eq!(backoff(hours(1), 3), MAX_BACKOFF);
        assert_eq!(backoff(hours(1), u32::MAX), MAX_BACKOFF);
        // A cause whose own pause is longer than the cap keeps its own.
        assert_eq!(backoff(hours(12), 5), hours(12));
    }
}
