//! The diagnostics log: one size-capped file in the data dir.
//!
//! A hook has no voice of its own (stderr would be a hook error in Claude Code), so what went
//! wrong is written here. Hundreds of hooks may log at once: each line is one `write` to a file
//! opened with O_APPEND, so lines never interleave. Logging never creates the data dir: a hook
//! with nothing to do creates no files, and a line about it is only kept where a log already
//! has a home. The log is opened like every file of ours: never through a symlink, never
//! blocking on a FIFO someone put in its place, only when it is a regular file of ours.
//! Secrets are redacted from every line: a message may quote what a hook was handed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::emit;
use crate::fsutil::{self, Access};
use crate::privacy::secrets::Redactor;

/// Past this size the log is rotated to `memory.log.1`, so it never grows without bound.
const MAX_LOG_BYTES: u64 = 1024 * 1024;

pub struct Log {
    path: PathBuf,
    fallback: PathBuf,
    debug: bool,
    context: String,
    redactor: Redactor,
}

impl Log {
    pub fn new(config: &Config, context: &str) -> Log {
        Log {
            path: config.log_path(),
            fallback: config.fallback_dir().join("memory.log"),
            debug: config.debug,
            context: context.to_string(),
            redactor: config.redactor.clone(),
        }
    }

    /// A line in the data dir's log, if the data dir exists.
    pub fn line(&self, level: &str, message: &str) {
        let line = self.format(level, message);
        let _ = append(&self.path, &line);
        if self.debug {
            emit::debug(&line);
        }
    }

    /// A line that must survive even when the data dir cannot be written (it says where an
    /// event was kept): falls back to the temp-dir log, creating it if need be.
    pub fn important(&self, level: &str, message: &str) {
        let line = self.format(level, message);
        if append(&self.path, &line).is_err()
            && let Some(dir) = self.fallback.parent()
            && crate::fsutil::private_temp_dir(dir).is_ok()
        {
            let _ = append(&self.fallback, &line);
        }
        if self.debug {
            emit::debug(&line);
        }
    }

    fn format(&self, level: &str, message: &str) -> String {
        let mut line = format!(
            "{} {} pid={} {}: {}",
            crate::clock::now(),
            level,
            std::process::id(),
            self.context,
            self.redactor.redact(message)
        );
        // One entry, one line, whatever the message held.
        line.retain(|c| c != '\n' && c != '\r');
        line.push('\n');
        line
    }
}

fn append(path: &Path, line: &str) -> std::io::Result<()> {
    // Never a file of ours in a folder we refuse (another user's data dir).
    if let Some(dir) = path.parent() {
        fsutil::is_our_dir(dir)?;
    }
    let mut file = fsutil::open_ours(path, Access::Append)?;
    if file.metadata()?.len() > MAX_LOG_BYTES {
        fs::rename(path, path.with_extension("log.1"))?;
        file = fsutil::open_ours(path, Access::Append)?;
    }
    file.write_all(line.as_bytes())
}
