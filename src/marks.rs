//! The flag files of the data dir that a hook looks at with one `stat` (or one short read)
//! before it does anything costly: the compressor's pause, the retention stamp, the time of the
//! last sync, the time the search index was last brought up to date, the MCP marker and the
//! flags of maintenance left to do (a WAL to scrub, captures to number, private rows to purge).
//! Each says one thing by being there (or by its age); the commands, the compressor and the
//! maintenance process set and clear them here, so that a hook needs none of them.
//!
//! The paths are named in `Config`; what a file means lives here.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::config::Config;
use crate::fsutil::{self, Access, Durability};

/// A retention look is due this long after the last one that found nothing to do...
const RECHECK: Duration = Duration::from_secs(24 * 3600);
/// ...or this long after it, when the file is past the cap.
const RECHECK_OVER_CAP: Duration = Duration::from_secs(3600);

/// The pause file as written (see `compress::pause`): until when (seconds since the epoch),
/// the word of its cause (absent in a file of an earlier release), how many pauses came before
/// it with no run storing anything between (the backoff; absent in an earlier release's file),
/// and its reason as stored.
pub struct PauseFile {
    pub until: u64,
    pub cause: Option<String>,
    pub streak: u32,
    pub why: String,
}

/// What the pause file says, whether or not its time is over; `None` without a readable one.
pub fn pause_file(config: &Config) -> Option<PauseFile> {
    let mut text = String::new();
    fsutil::open_ours(&config.compress_pause(), Access::Read)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let (first, why) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    let mut words = first.split_whitespace();
    let until: u64 = words.next()?.parse().ok()?;
    Some(PauseFile {
        until,
        cause: words.next().map(str::to_string),
        streak: words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
        why: why.trim().to_string(),
    })
}

/// Whether compression waits now (the day's budget is spent, no model can be reached, it is
/// backing off after failures): the hooks start no compressor then. One `stat`: the pause
/// file's modification time is the end of the pause ([`pause_ends_at`]). A file that is not a
/// regular file of ours, or one an earlier release wrote (its time is when it was written),
/// reads as no pause here: the compressor started then reads the file itself and stops at once.
pub fn compress_paused(config: &Config) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(config.compress_pause()) else {
        return false;
    };
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::uid(&meta) != fsutil::euid() {
        return false;
    }
    meta.is_file() && meta.modified().is_ok_and(|at| at > SystemTime::now())
}

/// Stamps the pause file with the end of its pause, for [`compress_paused`]. Best effort:
/// without it the hooks start a compressor that reads the pause and stops at once.
pub fn pause_ends_at(config: &Config, until: u64) {
    if let Ok(file) = fsutil::open_ours(&config.compress_pause(), Access::Append) {
        let _ = file.set_modified(UNIX_EPOCH + Duration::from_secs(until));
    }
}

/// Seconds since the epoch, as the pause file counts them.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether a retention look is due (cheap enough for a hook: two `stat`s, no database): never
/// looked, or not for a day, or not for an hour while the file is past the cap.
pub fn retention_due(config: &Config) -> bool {
    let policy = &config.retention;
    if policy.is_off() {
        return false;
    }
    match stamp_age(&config.retention_stamp()) {
        None => true,
        Some(age) if age > RECHECK => true,
        Some(age) => {
            age > RECHECK_OVER_CAP
                && policy.max_db_bytes.is_some_and(|cap| {
                    std::fs::metadata(config.db_path()).is_ok_and(|m| m.len() > cap)
                })
        }
    }
}

/// Records how a retention look ended: when it finished, nothing is due until
/// [`retention_due`] says so again; when work is left, the next SessionEnd starts the
/// maintenance process again.
pub fn retention_looked(config: &Config, finished: bool) {
    let stamp = config.retention_stamp();
    if !finished {
        let _ = std::fs::remove_file(stamp);
        return;
    }
    if let Ok(file) = fsutil::open_ours(&stamp, Access::Append) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Whether a background sync is due: sync is set up, and the last one began longer ago than
/// `CLAUDE_MEM_SYNC_INTERVAL`. Two `stat`s, for the SessionEnd hook; the sync itself runs in
/// the maintenance process (see `crate::sync`), never in a hook.
pub fn sync_due(config: &Config) -> bool {
    let Some(every) = config.sync_interval else {
        return false;
    };
    let dir = config.sync_dir();
    if !dir.join(SYNC_SETTINGS).exists() {
        return false;
    }
    sync_asked(config) || stamp_age(&dir.join(SYNC_TRIED)).is_none_or(|age| age >= every)
}

/// How old the last sync may be when a session starts. Older, the session start asks the
/// maintenance process for one (`ask_sync`), so that the session's own prompts can recall what
/// another machine did a minute ago; the hook itself only `stat`s and spawns.
pub const SYNC_AT_START: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether a session starting now should ask for a sync: background syncs are on, sync is set
/// up, and the last one began [`SYNC_AT_START`] ago or more (three `stat`s).
pub fn sync_due_at_start(config: &Config) -> bool {
    let dir = config.sync_dir();
    config.sync_interval.is_some()
        && dir.join(SYNC_SETTINGS).exists()
        && stamp_age(&dir.join(SYNC_TRIED)).is_none_or(|age| age >= SYNC_AT_START)
}

/// Asks the next maintenance process to sync whatever its interval says.
pub fn ask_sync(config: &Config) {
    let _ = fsutil::create_private(&config.sync_dir().join(SYNC_ASKED));
}

/// Whether a session start asked for a sync that has not run yet.
pub fn sync_asked(config: &Config) -> bool {
    config.sync_dir().join(SYNC_ASKED).exists()
}

pub fn sync_answered(config: &Config) {
    let _ = std::fs::remove_file(config.sync_dir().join(SYNC_ASKED));
}

/// Whether the database may hold what the search index lacks (three `stat`s, for the
/// SessionStart hook): it was written after a catch-up of the index last began (the maintenance
/// process's or a read command's), or none was recorded. So it is when a session ended without
/// its SessionEnd hook (Claude Code killed, the hook cancelled past its time), which would have
/// started the maintenance process, or when the compressor stored memories after it ran.
pub fn index_behind(config: &Config) -> bool {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let Some(caught_up) = modified(&config.index_stamp()) else {
        return true;
    };
    let mut wal = config.db_path().into_os_string();
    wal.push("-wal");
    [config.db_path(), wal.into()]
        .iter()
        .filter_map(|path| modified(path))
        .any(|written| written > caught_up)
}

/// Records that a catch-up of the index began at `began`: what was written before then is in it.
pub fn index_caught_up(config: &Config, began: SystemTime) {
    if let Ok(file) = fsutil::open_ours(&config.index_stamp(), Access::Append) {
        let _ = file.set_modified(began);
    }
}

/// How long ago a stamp file was touched (one `stat`); `None` without one. A stamp in the
/// future means the clock went back: it reads as long ago, since waiting for the clock to catch
/// up could hold off what it times for days.
fn stamp_age(path: &std::path::Path) -> Option<std::time::Duration> {
    let touched = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(touched.elapsed().unwrap_or(std::time::Duration::MAX))
}

/// Present once sync is set up (in `Config::sync_dir`).
pub const SYNC_SETTINGS: &str = "remote.json";
/// Touched when a sync begins: its age is the time since the last one.
pub const SYNC_TRIED: &str = "tried";
/// Present while a session start's sync waits for the maintenance process.
const SYNC_ASKED: &str = "asked";

/// Whether `claude-mem mcp` is registered, as far as the last install or uninstall knows: one
/// `stat`.
pub fn mcp_registered(config: &Config) -> bool {
    config.mcp_marker().exists()
}

/// Marks the server registered. The marker says which binary was (for a person looking); its
/// presence is what counts.
pub fn mark_mcp(config: &Config, exe: &Path) {
    let text = format!("{}\n", exe.display());
    let path = config.mcp_marker();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = fsutil::our_dir(&config.data_dir).and_then(|_| {
        fsutil::write_atomic(&config.data_dir, &name, text.as_bytes(), Durability::Kill)
    });
}

pub fn unmark_mcp(config: &Config) {
    let _ = std::fs::remove_file(config.mcp_marker());
}

/// Whether our hooks are in Cursor's own hooks file, as far as the last install or uninstall
/// knows: one `stat`, only for a Cursor event.
pub fn cursor_hooks(config: &Config) -> bool {
    config.cursor_marker().exists()
}

/// Marks or unmarks our hooks in Cursor's hooks file.
pub fn mark_cursor_hooks(config: &Config, installed: bool) -> std::io::Result<()> {
    let path = config.cursor_marker();
    if !installed {
        return match std::fs::remove_file(&path) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        };
    }
    fsutil::our_dir(&config.data_dir)?;
    fsutil::write_atomic(&config.data_dir, "cursor-hooks", b"", Durability::Kill)
}

/// Asks the maintenance process to empty the WAL of deleted rows' pages (a reader kept the
/// truncating checkpoint from doing it): it retries until it succeeds.
pub fn ask_scrub(config: &Config) {
    let _ = fsutil::create_private(&config.scrub_flag());
}

pub fn scrub_asked(config: &Config) -> bool {
    config.scrub_flag().exists()
}

pub fn scrub_done(config: &Config) {
    let _ = std::fs::remove_file(config.scrub_flag());
}

/// Whether maintenance is left that a hook must not do itself: a WAL to scrub, captures to
/// number, private turns' rows to remove.
pub fn maintenance_left(config: &Config) -> bool {
    scrub_asked(config) || config.numbering_flag().exists() || config.purge_flag().exists()
}
