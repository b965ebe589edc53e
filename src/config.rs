//! Everything a run needs to know about its environment, read once from environment variables.
//!
//! Hooks read no configuration file: an environment variable costs nothing, a file costs a
//! syscall on every tool call. Invalid values never fail a hook; they fall back to the default
//! and leave a warning for the log.

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Tools whose calls carry nothing worth remembering.
const DEFAULT_SKIP_TOOLS: &[&str] = &[
    "ListMcpResourcesTool",
    "SlashCommand",
    "Skill",
    "TodoWrite",
    "AskUserQuestion",
];

/// Events above this size are stored truncated (`CLAUDE_MEM_MAX_PAYLOAD_BYTES`).
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// How long a hook may wait for the database before it spills the event instead.
pub const DEFAULT_WAIT_BUDGET: Duration = Duration::from_millis(1000);
/// A hook holds Claude Code up while it waits: never longer than this, whatever is configured.
const MAX_WAIT_BUDGET: Duration = Duration::from_secs(60);
/// Character budget of the context handed to Claude at session start (Claude Code cuts at 10,000).
pub const DEFAULT_CONTEXT_CHARS: usize = 6000;
/// How many recent sessions the start-of-session context lists.
pub const DEFAULT_CONTEXT_SESSIONS: usize = 8;

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub disabled: bool,
    pub debug: bool,
    pub skip_tools: Vec<String>,
    /// `None` means no cap.
    pub max_payload_bytes: Option<usize>,
    pub synchronous_full: bool,
    pub wait_budget: Duration,
    /// `CLAUDE_PROJECT_DIR`, when set and not empty: the stable project root.
    pub project_dir: Option<String>,
    pub context_chars: usize,
    pub context_sessions: usize,
    /// Values that could not be used, for the log.
    pub warnings: Vec<String>,
}

impl Config {
    pub fn from_env() -> Config {
        let mut warnings = Vec::new();
        let data_dir = match non_empty("CLAUDE_MEM_DATA_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => dirs::home_dir()
                .unwrap_or_else(env::temp_dir)
                .join(".claude-mem"),
        };
        let skip_tools = match env::var("CLAUDE_MEM_SKIP_TOOLS") {
            Ok(list) => list
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect(),
            Err(_) => DEFAULT_SKIP_TOOLS.iter().map(|t| t.to_string()).collect(),
        };
        let max_payload_bytes = match number("CLAUDE_MEM_MAX_PAYLOAD_BYTES", &mut warnings) {
            Some(0) => None,
            Some(n) => Some(n as usize),
            None => Some(DEFAULT_MAX_PAYLOAD_BYTES),
        };
        let synchronous_full = match non_empty("CLAUDE_MEM_SYNCHRONOUS") {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("normal") => false,
            Some(v) if v.eq_ignore_ascii_case("full") => true,
            Some(v) => {
                warnings.push(format!(
                    "CLAUDE_MEM_SYNCHRONOUS={v:?} is neither NORMAL nor FULL; using NORMAL"
                ));
                false
            }
        };
        let wait_budget = number("CLAUDE_MEM_WAIT_MS", &mut warnings)
            .map(|ms| {
                if ms > MAX_WAIT_BUDGET.as_millis() as u64 {
                    warnings.push(format!(
                        "CLAUDE_MEM_WAIT_MS={ms} is over a minute; using 60000"
                    ));
                }
                Duration::from_millis(ms).min(MAX_WAIT_BUDGET)
            })
            .unwrap_or(DEFAULT_WAIT_BUDGET);
        let context_chars = number("CLAUDE_MEM_CONTEXT_CHARS", &mut warnings)
            .map(|n| (n as usize).min(9_500))
            .unwrap_or(DEFAULT_CONTEXT_CHARS);
        let context_sessions = number("CLAUDE_MEM_CONTEXT_SESSIONS", &mut warnings)
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_CONTEXT_SESSIONS);
        Config {
            data_dir,
            disabled: flag("CLAUDE_MEM_DISABLED"),
            debug: flag("CLAUDE_MEM_DEBUG"),
            skip_tools,
            max_payload_bytes,
            synchronous_full,
            wait_budget,
            project_dir: non_empty("CLAUDE_PROJECT_DIR"),
            context_chars,
            context_sessions,
            warnings,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("claude-mem.db")
    }

    pub fn log_path(&self) -> PathBuf {
        self.data_dir.join("claude-mem.log")
    }

    /// Where events go when the database cannot take them.
    pub fn spill_dir(&self) -> PathBuf {
        self.data_dir.join("spill")
    }

    /// Where events and log lines go when the data dir itself cannot be written: a folder in
    /// the system temp dir named after the data dir, so two data dirs never share one.
    pub fn fallback_dir(&self) -> PathBuf {
        let key = self.data_dir.to_string_lossy();
        env::temp_dir().join(format!("claude-mem-{:016x}", fnv1a(key.as_bytes())))
    }

    pub fn skips(&self, tool: &str) -> bool {
        self.skip_tools.iter().any(|t| t == tool)
    }
}

fn non_empty(name: &str) -> Option<String> {
    env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(OsString::into_string)
        .and_then(Result::ok)
}

fn flag(name: &str) -> bool {
    matches!(
        non_empty(name).as_deref(),
        Some("1" | "true" | "yes" | "on")
    )
}

fn number(name: &str, warnings: &mut Vec<String>) -> Option<u64> {
    let raw = non_empty(name)?;
    match raw.trim().parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => {
            warnings.push(format!(
                "{name}={raw:?} is not a whole number; using the default"
            ));
            None
        }
    }
}

/// A stable 64-bit hash (FNV-1a): the fallback folder's name must not change between runs or
/// Rust versions, which rules out the std hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
