//! When compression waits: the daily budget is spent, or no model can be reached. The
//! compressor leaves a small file saying until when and why; the hooks read it before they
//! start a compressor (so that a spent budget costs no process per session end), and `status`
//! shows it. A run that stores something removes it.

use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::config::Config;
use crate::fsutil::{self, Access, Durability};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    /// Seconds since the epoch.
    pub until: u64,
    pub why: String,
}

/// The pause in force now, if any.
pub fn current(config: &Config) -> Option<Pause> {
    let mut text = String::new();
    fsutil::open_ours(&config.compress_pause(), Access::Read)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let (until, why) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    let until: u64 = until.trim().parse().ok()?;
    (until > now()).then(|| Pause {
        until,
        why: why.trim().to_string(),
    })
}

/// Pauses compression until `until` (seconds since the epoch). Best effort: without the file
/// the hooks start a compressor that finds the same reason and stops at once.
pub fn set(config: &Config, until: u64, why: &str) {
    let text = format!("{until}\n{}\n", why.replace('\n', " "));
    let path = config.compress_pause();
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let name = name.to_string_lossy();
        let _ = fsutil::write_atomic(dir, &name, text.as_bytes(), Durability::Kill);
    }
}

/// Pauses compression for `length` from now.
pub fn set_for(config: &Config, length: Duration, why: &str) {
    set(config, now() + length.as_secs(), why);
}

pub fn clear(config: &Config) {
    let _ = std::fs::remove_file(config.compress_pause());
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
