//! What the last sync did, for `sync status`, `status` and `doctor`: when it was tried, when
//! one last succeeded and what it moved, and the error of the last one that failed (cleared by
//! the next success). Kept in `sync/status.json`, written whole or not at all.

use serde::{Deserialize, Serialize};

use serde_json::{Value, json};

use super::Paths;
use crate::config::Config;
use crate::fsutil::{self, Durability};
use crate::render::{Color, Style};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Status {
    /// When the last sync began.
    pub tried_at: Option<String>,
    /// When the last successful one ended, and what it moved.
    pub synced_at: Option<String>,
    pub moved: Option<String>,
    /// What went wrong the last time, if the last one failed.
    pub error: Option<String>,
    /// When that was.
    pub failed_at: Option<String>,
    /// The chunks of other machines set aside, as of the last successful sync: how many, and
    /// the first, in one short sentence.
    #[serde(default)]
    pub set_aside: Option<String>,
}

/// What is kept of an error: one line, whatever a remote makes git print.
const ERROR_CHARS: usize = 400;

pub fn read(paths: &Paths) -> Status {
    fsutil::open_ours(&paths.status(), fsutil::Access::Read)
        .ok()
        .and_then(|file| serde_json::from_reader(std::io::BufReader::new(file)).ok())
        .unwrap_or_default()
}

fn write(paths: &Paths, status: &Status) {
    if let Ok(bytes) = serde_json::to_vec_pretty(status) {
        let _ = fsutil::write_atomic(&paths.dir, "status.json", &bytes, Durability::Kill);
    }
}

/// A sync begins: the background's clock (`marks::sync_due`) starts again, whatever comes.
pub fn began(paths: &Paths) {
    if let Ok(file) = fsutil::open_ours(&paths.tried(), fsutil::Access::Append) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
    let mut status = read(paths);
    status.tried_at = Some(crate::clock::now());
    write(paths, &status);
}

/// A sync ended: what it moved and what is set aside, or why it failed.
pub fn ended(paths: &Paths, outcome: Result<(&str, Option<&str>), &str>) {
    let mut status = read(paths);
    let now = crate::clock::now();
    match outcome {
        Ok((moved, aside)) => {
            status.synced_at = Some(now);
            status.moved = Some(moved.to_string());
            status.set_aside = aside.map(str::to_string);
            status.error = None;
            status.failed_at = None;
        }
        Err(error) => {
            status.error = Some(crate::text::one_line(error, ERROR_CHARS));
            status.failed_at = Some(now);
        }
    }
    write(paths, &status);
}

/// The `sync` line of `status`: where, and how the last sync went; `None` when not set up.
pub fn status_line(config: &Config, style: &Style) -> Option<(String, Option<Color>)> {
    let settings = super::settings(config).ok().flatten()?;
    let s = read(&Paths::of(config));
    Some(match (&s.error, &s.failed_at) {
        (Some(error), Some(at)) => (
            format!(
                "{}: failing since {}: {error}",
                settings.url,
                style.moment(at)
            ),
            Some(Color::Bad),
        ),
        _ => (
            match (&s.synced_at, &s.set_aside) {
                (Some(at), None) => format!("{}: last synced {}", settings.url, style.moment(at)),
                (Some(at), Some(_)) => format!(
                    "{}: last synced {}, chunks set aside (claude-mem sync status)",
                    settings.url,
                    style.moment(at)
                ),
                (None, _) => format!("{}: not synced yet (claude-mem sync)", settings.url),
            },
            s.set_aside.as_ref().map(|_| Color::Warn),
        ),
    })
}

/// The `sync` object of `status --json`.
pub fn status_json(config: &Config) -> Value {
    let settings = super::settings(config).ok().flatten();
    let s = read(&Paths::of(config));
    json!({
        "remote": settings.as_ref().map(|s| &s.url),
        "synced_at": s.synced_at,
        "error": s.error,
        "failed_at": s.failed_at,
    })
}

/// For `doctor`: `None` when sync is not set up; else how it goes, an error when the last
/// sync failed.
pub fn health(config: &Config) -> Option<Result<String, String>> {
    let settings = match super::settings(config) {
        Ok(settings) => settings?,
        Err(err) => return Some(Err(format!("{err:#}"))),
    };
    let s = read(&Paths::of(config));
    let style = Style::plain();
    Some(match (&s.error, &s.failed_at) {
        (Some(error), Some(at)) => Err(format!(
            "the last sync with {} failed ({}): {error}",
            settings.url,
            style.moment(at)
        )),
        _ => Ok(match &s.synced_at {
            Some(at) => format!("with {}, last synced {}", settings.url, style.moment(at)),
            None => format!("with {}, not synced yet", settings.url),
        }),
    })
}
