//! Everything a run needs to know about its environment, read once from environment variables.
//!
//! Hooks read no configuration file: an environment variable costs nothing, a file costs a
//! syscall on every tool call. Invalid values never fail a hook; they fall back to the default
//! and leave a warning for the log.

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::glob::DirGlob;
use crate::privacy::secrets::{self, Redactor};

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
/// Budget of the context handed to Claude at session start, in UTF-16 units: Claude Code (in
/// JavaScript) cuts strings at 10,000 of those.
pub const DEFAULT_CONTEXT_CHARS: usize = 6000;
/// How many recent sessions the start-of-session context lists.
pub const DEFAULT_CONTEXT_SESSIONS: usize = 8;
/// Budget of what per-prompt recall hands Claude with a prompt, in UTF-16 units
/// (`CLAUDE_MEM_RECALL_CHARS`): a few items, not a second session-start context.
pub const DEFAULT_RECALL_CHARS: usize = 1500;
/// The model the compressor asks (`CLAUDE_MEM_MODEL`): a small one.
pub const DEFAULT_COMPRESS_MODEL: &str = "haiku";
/// Tokens the compressor may spend in a day (`CLAUDE_MEM_COMPRESS_DAILY_TOKENS`).
pub const DEFAULT_COMPRESS_DAILY_TOKENS: u64 = 300_000;
/// Estimated input tokens of one batch's digest at most (`CLAUDE_MEM_COMPRESS_BATCH_TOKENS`).
pub const DEFAULT_COMPRESS_BATCH_TOKENS: u64 = 20_000;
/// How long one model call may take (`CLAUDE_MEM_COMPRESS_TIMEOUT`, seconds).
pub const DEFAULT_COMPRESS_TIMEOUT: Duration = Duration::from_secs(300);
/// The most a day's budget may be: far more than any day can spend (a call counts for at most
/// 4 billion tokens), far below what the ledger's sums and the numbers shown can hold.
const MAX_COMPRESS_DAILY_TOKENS: u64 = 1_000_000_000_000;
/// The most tokens of one kind a model call is taken to have used, and the most it cost: more
/// than any model's context, far below what overflows a sum. A program reporting more (2^64 −
/// 1, 2^63) is believed up to here, so its call still spends the day's budget.
pub const MAX_CALL_TOKENS: u64 = 1_000_000_000;
pub const MAX_CALL_COST_USD: f64 = 1_000.0;
/// The most one batch's input may be: what a call is taken to use at most.
const MAX_COMPRESS_BATCH_TOKENS: u64 = MAX_CALL_TOKENS;
/// The longest a model call may take: its items' lease (1.25 times as long, and 5 s) must stay
/// within the queue's longest, a day.
const MAX_COMPRESS_TIMEOUT: u64 = 12 * 3600;
/// The longest a retention rule may wait, in days (a century): counted back from today it must
/// stay a date. 0 turns a rule off.
const MAX_RETENTION_DAYS: u64 = 36_500;

/// How captured items are compressed into memories (`claude-mem compress`).
#[derive(Debug, Clone)]
pub struct Compress {
    /// Hooks start the compressor after a session (`CLAUDE_MEM_COMPRESS`, on unless off).
    pub auto: bool,
    /// `CLAUDE_MEM_MODEL`, handed to `claude --model`.
    pub model: String,
    /// `CLAUDE_MEM_COMPRESS_CMD`: a shell command that replaces `claude -p`.
    pub command: Option<String>,
    pub daily_tokens: u64,
    pub batch_tokens: u64,
    pub timeout: Duration,
}

/// Retention (see `store::retention`): days a session may stay idle before its tool calls keep
/// only their digest, and before it is deleted whole; and the database's size cap.
pub const DEFAULT_PAYLOAD_DAYS: u64 = 30;
pub const DEFAULT_KEEP_DAYS: u64 = 365;
pub const DEFAULT_MAX_DB_MB: u64 = 1024;
/// How often the maintenance process syncs, at most (`CLAUDE_MEM_SYNC_INTERVAL`).
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(600);

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    /// Where releases before the layout change kept their files (`~/.claude-mem`, the folder
    /// thedotmack/claude-mem also uses; or the same `CLAUDE_MEM_DATA_DIR`): moved to the
    /// current layout once, by the maintenance process.
    pub legacy_dir: PathBuf,
    pub disabled: bool,
    pub debug: bool,
    pub skip_tools: Vec<String>,
    /// `None` means no cap.
    pub max_payload_bytes: Option<usize>,
    pub synchronous_full: bool,
    pub wait_budget: Duration,
    /// `CLAUDE_PROJECT_DIR`, when set and not empty: the stable project root.
    pub project_dir: Option<String>,
    /// `XDG_RUNTIME_DIR`, when set: a per-user folder nobody else can write, preferred over the
    /// shared temp dir for the fallback folder.
    pub runtime_dir: Option<PathBuf>,
    pub context_chars: usize,
    pub context_sessions: usize,
    /// Per-prompt recall: on unless `CLAUDE_MEM_RECALL=0`.
    pub recall: bool,
    /// `CLAUDE_MEM_RECALL_CHARS`: its budget in UTF-16 units.
    pub recall_chars: usize,
    /// Secret redaction: on unless `CLAUDE_MEM_REDACT=0`, with `CLAUDE_MEM_REDACT_EXTRA`.
    pub redactor: Redactor,
    /// `CLAUDE_MEM_EXCLUDE`: project directories where nothing is captured.
    pub exclude: Vec<DirGlob>,
    /// `CLAUDE_MEM_PROJECT_ROOTS`: folders that are projects of their own, whatever repository
    /// they are in (see `project`).
    pub project_roots: Vec<PathBuf>,
    pub compress: Compress,
    pub retention: Retention,
    /// `CLAUDE_MEM_SYNC_INTERVAL`: the least time between two background syncs; `None` (0)
    /// when only `claude-mem sync` syncs.
    pub sync_interval: Option<Duration>,
    /// Values that could not be used, for the log.
    pub warnings: Vec<String>,
}

/// The retention policy; `None` turns a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// `CLAUDE_MEM_PAYLOAD_DAYS`: idle days after which a session's tool calls are reduced.
    pub payload_days: Option<u64>,
    /// `CLAUDE_MEM_KEEP_DAYS`: idle days after which a session is deleted whole.
    pub keep_days: Option<u64>,
    /// `CLAUDE_MEM_MAX_DB_MB`, in bytes: the most live data the database may hold.
    pub max_db_bytes: Option<u64>,
}

impl Retention {
    pub fn is_off(&self) -> bool {
        self.payload_days.is_none() && self.keep_days.is_none() && self.max_db_bytes.is_none()
    }

    fn from_env(warnings: &mut Vec<String>) -> Retention {
        // 0 turns a rule off; unset is the default.
        let mut read = |name: &str, default: u64, max: u64| match number(name, warnings) {
            Some(0) => None,
            Some(n) => Some(at_most(name, n, max, warnings)),
            None => Some(default),
        };
        Retention {
            payload_days: read(
                "CLAUDE_MEM_PAYLOAD_DAYS",
                DEFAULT_PAYLOAD_DAYS,
                MAX_RETENTION_DAYS,
            ),
            keep_days: read(
                "CLAUDE_MEM_KEEP_DAYS",
                DEFAULT_KEEP_DAYS,
                MAX_RETENTION_DAYS,
            ),
            max_db_bytes: read("CLAUDE_MEM_MAX_DB_MB", DEFAULT_MAX_DB_MB, u64::MAX)
                .map(|mb| mb.saturating_mul(1 << 20)),
        }
    }
}

impl Config {
    /// The environment's configuration with its data in `dir`: for unit tests.
    #[cfg(test)]
    pub fn in_dir(dir: &std::path::Path) -> Config {
        Config {
            data_dir: dir.to_path_buf(),
            ..Config::from_env()
        }
    }

    pub fn from_env() -> Config {
        let mut warnings = Vec::new();
        let (data_dir, legacy_dir) = data_dirs();
        let max_payload_bytes = match number("CLAUDE_MEM_MAX_PAYLOAD_BYTES", &mut warnings) {
            Some(0) => None,
            Some(n) => Some(n as usize),
            None => Some(DEFAULT_MAX_PAYLOAD_BYTES),
        };
        let synchronous_full = synchronous_full(&mut warnings);
        let wait_budget = wait_budget(&mut warnings);
        let context_chars = number("CLAUDE_MEM_CONTEXT_CHARS", &mut warnings)
            .map(|n| (n as usize).min(9_500))
            .unwrap_or(DEFAULT_CONTEXT_CHARS);
        let context_sessions = number("CLAUDE_MEM_CONTEXT_SESSIONS", &mut warnings)
            .map(|n| n as usize)
            .unwrap_or(DEFAULT_CONTEXT_SESSIONS);
        let recall_chars = number("CLAUDE_MEM_RECALL_CHARS", &mut warnings)
            .map(|n| (n as usize).min(9_500))
            .unwrap_or(DEFAULT_RECALL_CHARS);
        let (extra, bad) =
            secrets::parse_list(&non_empty("CLAUDE_MEM_REDACT_EXTRA").unwrap_or_default());
        warnings.extend(bad);
        let redactor = Redactor::new(!off("CLAUDE_MEM_REDACT"), extra);
        let compress = compress(&mut warnings);
        let retention = Retention::from_env(&mut warnings);
        let sync_interval = sync_interval(&mut warnings);
        Config {
            data_dir,
            legacy_dir,
            disabled: flag("CLAUDE_MEM_DISABLED"),
            debug: flag("CLAUDE_MEM_DEBUG"),
            skip_tools: skip_tools(),
            max_payload_bytes,
            synchronous_full,
            wait_budget,
            project_dir: non_empty("CLAUDE_PROJECT_DIR"),
            runtime_dir: non_empty("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute()),
            context_chars,
            context_sessions,
            recall: !off("CLAUDE_MEM_RECALL"),
            recall_chars,
            redactor,
            exclude: exclude(),
            project_roots: project_roots(&mut warnings),
            compress,
            retention,
            sync_interval,
            warnings,
        }
    }

    /// The database. Every name in the data dir differs from the files thedotmack/claude-mem
    /// keeps in its own (`claude-mem.db`, `logs/`, `settings.json`, `chroma/`, …), so that the
    /// two tools never touch each other's files, even in one folder.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("memory.db")
    }

    /// The search index: a cache derived from the database, written only by read commands.
    pub fn index_path(&self) -> PathBuf {
        self.data_dir.join("memory-index.db")
    }

    pub fn log_path(&self) -> PathBuf {
        self.data_dir.join("memory.log")
    }

    /// Copies of settings files that `install-hooks` changed, where they cannot sit beside the
    /// file (a project's `settings.local.json`).
    pub fn backups_dir(&self) -> PathBuf {
        self.data_dir.join("settings-backups")
    }

    /// The database of releases before the layout change, in [`Config::legacy_dir`].
    pub fn legacy_db_path(&self) -> PathBuf {
        self.legacy_dir.join("claude-mem.db")
    }

    /// Where events go when the database cannot take them.
    pub fn spill_dir(&self) -> PathBuf {
        self.data_dir.join("spill")
    }

    /// Spill files that could not be applied (unreadable, not ours, damaged), set aside so that
    /// they never block the ones behind them.
    pub fn quarantine_dir(&self) -> PathBuf {
        self.data_dir.join("spill-quarantine")
    }

    /// Marks of turns that are private as a whole, checked before a capture is even spilled.
    pub fn private_marks_dir(&self) -> PathBuf {
        self.data_dir.join("private")
    }

    /// Marks of the problems already told to the user, one per problem and session.
    pub fn notices_dir(&self) -> PathBuf {
        self.data_dir.join("notices")
    }

    /// Present once the maintenance process has moved the sessions an earlier release recorded
    /// under a subfolder of a repository to the repository (`projects join`): it does so once,
    /// so that `projects unjoin` stays undone.
    pub fn projects_joined_flag(&self) -> PathBuf {
        self.data_dir.join("projects-joined")
    }

    /// The digests of the team's notes that per-prompt recall reads, one a project (see
    /// `team::digest`).
    pub fn team_dir(&self) -> PathBuf {
        self.data_dir.join("team")
    }

    /// Present while the WAL may still hold pages of deleted private rows (a reader prevented
    /// the truncating checkpoint): the maintenance process retries until it succeeds.
    pub fn scrub_flag(&self) -> PathBuf {
        self.data_dir.join("wal-scrub")
    }

    /// Present while captures stored before their prompt are left to number (see
    /// `store::numbering`): the maintenance process numbers them.
    pub fn numbering_flag(&self) -> PathBuf {
        self.data_dir.join("numbering")
    }

    /// Present while private turns have rows left to remove (see `store::purge`): the
    /// maintenance process removes them.
    pub fn purge_flag(&self) -> PathBuf {
        self.data_dir.join("purging")
    }

    /// Present while `claude-mem mcp` is registered with Claude Code (install-hooks writes it
    /// once Claude Code confirmed, uninstall-hooks removes it): the session-start context
    /// points at the MCP tools only then, and learns it with one `stat`.
    pub fn mcp_marker(&self) -> PathBuf {
        self.data_dir.join("mcp-registered")
    }

    /// Present while our hooks are in Cursor's own hooks file (`install-hooks --agent cursor`
    /// writes it, its uninstall removes it): a Cursor event that comes through Claude Code's
    /// registration is then left out, as the same event comes through Cursor's too.
    pub fn cursor_marker(&self) -> PathBuf {
        self.data_dir.join("cursor-hooks")
    }

    /// Its time is when a catch-up of the search index last began (while per-prompt recall is
    /// on; the file keeps the name of the releases that called it a sync):
    /// a database written after it may hold what the index lacks (see `marks::index_behind`).
    pub fn index_stamp(&self) -> PathBuf {
        self.data_dir.join("index-synced")
    }

    /// Touched when retention last found nothing more to do: a hook starts the maintenance
    /// process for retention only when this is old (see `marks::retention_due`).
    pub fn retention_stamp(&self) -> PathBuf {
        self.data_dir.join("retention-checked")
    }

    /// Touched when the maintenance process failed to rebuild the database (a full disk): it
    /// tries again only when this is old, as each try holds the write lock while it runs.
    pub fn rebuild_stamp(&self) -> PathBuf {
        self.data_dir.join("rebuild-failed")
    }

    /// What sync keeps (see `crate::sync`): its settings, key, state and git repository.
    pub fn sync_dir(&self) -> PathBuf {
        self.data_dir.join("sync")
    }

    /// Held by the one maintenance process of this data dir.
    pub fn maintain_lock(&self) -> PathBuf {
        self.data_dir.join("maintain.lock")
    }

    /// Held by the one process of this data dir that copies the WAL back for the hooks (see
    /// `maintain::copy_back`): a lock of its own, so that the maintenance process, which a
    /// hook may ask for meanwhile, is never kept from starting by it.
    pub fn checkpoint_lock(&self) -> PathBuf {
        self.data_dir.join("checkpoint.lock")
    }

    /// Held by the hook whose turn it is to wait for the database's write lock (see
    /// `hook::turn`).
    pub fn turn_lock(&self) -> PathBuf {
        self.data_dir.join("hooks.turn")
    }

    /// Held by the compressor the hooks started (one per data dir); one run by hand takes it
    /// when it is free, so that the hooks start no other meanwhile.
    pub fn compress_lock(&self) -> PathBuf {
        self.data_dir.join("compress.lock")
    }

    /// Present while compression waits (the daily budget is spent, no model can be reached):
    /// until when, and why. The hooks start no compressor before then.
    pub fn compress_pause(&self) -> PathBuf {
        self.data_dir.join("compress.paused")
    }

    /// Where events and log lines go when the data dir itself cannot be written, named after
    /// the data dir so two data dirs never share one: under `$XDG_RUNTIME_DIR` when it is set
    /// (a per-user folder nobody else can write in), else in the shared temp dir under a name
    /// that carries our uid. Either way the folder is checked to be ours before any use.
    pub fn fallback_dir(&self) -> PathBuf {
        let key = fnv1a(self.data_dir.to_string_lossy().as_bytes());
        match &self.runtime_dir {
            Some(runtime) => runtime.join(format!("claude-mem-{key:016x}")),
            None => env::temp_dir().join(format!("claude-mem-{}-{key:016x}", uid())),
        }
    }

    pub fn skips(&self, tool: &str) -> bool {
        self.skip_tools.iter().any(|t| t == tool)
    }

    /// Whether `project` (a session's project directory) is one where nothing is captured.
    pub fn excludes(&self, project: &str) -> bool {
        self.exclude.iter().any(|glob| glob.covers(project))
    }
}

/// The data dir and where releases before the layout change kept their files: both
/// `CLAUDE_MEM_DATA_DIR` when it is set.
fn data_dirs() -> (PathBuf, PathBuf) {
    let home = || dirs::home_dir().unwrap_or_else(env::temp_dir);
    match non_empty("CLAUDE_MEM_DATA_DIR") {
        Some(dir) => (PathBuf::from(&dir), PathBuf::from(dir)),
        None => (
            dirs::data_dir()
                .unwrap_or_else(|| home().join(".local").join("share"))
                .join("claude-mem"),
            home().join(".claude-mem"),
        ),
    }
}

/// `CLAUDE_MEM_SKIP_TOOLS`, a comma-separated list (set and empty: no tool is skipped).
fn skip_tools() -> Vec<String> {
    match env::var("CLAUDE_MEM_SKIP_TOOLS") {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect(),
        Err(_) => DEFAULT_SKIP_TOOLS.iter().map(|t| t.to_string()).collect(),
    }
}

/// `CLAUDE_MEM_SYNCHRONOUS`: NORMAL (the default) or FULL.
fn synchronous_full(warnings: &mut Vec<String>) -> bool {
    match non_empty("CLAUDE_MEM_SYNCHRONOUS") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("normal") => false,
        Some(v) if v.eq_ignore_ascii_case("full") => true,
        Some(v) => {
            warnings.push(format!(
                "CLAUDE_MEM_SYNCHRONOUS={v:?} is neither NORMAL nor FULL; using NORMAL"
            ));
            false
        }
    }
}

/// `CLAUDE_MEM_WAIT_MS`, at most a minute: a hook holds Claude Code up while it waits.
fn wait_budget(warnings: &mut Vec<String>) -> Duration {
    number("CLAUDE_MEM_WAIT_MS", warnings)
        .map(|ms| {
            if ms > MAX_WAIT_BUDGET.as_millis() as u64 {
                warnings.push(format!(
                    "CLAUDE_MEM_WAIT_MS={ms} is over a minute; using 60000"
                ));
            }
            Duration::from_millis(ms).min(MAX_WAIT_BUDGET)
        })
        .unwrap_or(DEFAULT_WAIT_BUDGET)
}

/// `CLAUDE_MEM_EXCLUDE`: comma-separated project directories (globs, `~` for home).
fn exclude() -> Vec<DirGlob> {
    let home = dirs::home_dir();
    non_empty("CLAUDE_MEM_EXCLUDE")
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| DirGlob::new(p, home.as_deref()))
        .collect()
}

/// `CLAUDE_MEM_PROJECT_ROOTS`: comma-separated absolute folders (`~` for home).
fn project_roots(warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let home = dirs::home_dir();
    non_empty("CLAUDE_MEM_PROJECT_ROOTS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let path = match (p.strip_prefix("~/"), &home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => PathBuf::from(p),
            };
            let path = PathBuf::from(path.to_string_lossy().trim_end_matches('/'));
            if path.is_absolute() {
                Some(path)
            } else {
                warnings.push(format!(
                    "CLAUDE_MEM_PROJECT_ROOTS: {p:?} is not an absolute folder; left out"
                ));
                None
            }
        })
        .collect()
}

fn compress(warnings: &mut Vec<String>) -> Compress {
    let auto = match non_empty("CLAUDE_MEM_COMPRESS") {
        None => true,
        Some(_) if off("CLAUDE_MEM_COMPRESS") => false,
        Some(_) if flag("CLAUDE_MEM_COMPRESS") => true,
        Some(v) => {
            warnings.push(format!(
                "CLAUDE_MEM_COMPRESS={v:?} is neither on nor off; compressing after sessions"
            ));
            true
        }
    };
    let positive = |name: &str, default: u64, max: u64, warnings: &mut Vec<String>| match number(
        name, warnings,
    ) {
        Some(0) => {
            warnings.push(format!("{name}=0 is not allowed; using the default"));
            default
        }
        Some(n) => at_most(name, n, max, warnings),
        None => default,
    };
    Compress {
        auto,
        model: non_empty("CLAUDE_MEM_MODEL")
            .map(|m| m.trim().to_string())
            .unwrap_or_else(|| DEFAULT_COMPRESS_MODEL.to_string()),
        command: non_empty("CLAUDE_MEM_COMPRESS_CMD").filter(|c| !c.trim().is_empty()),
        daily_tokens: positive(
            "CLAUDE_MEM_COMPRESS_DAILY_TOKENS",
            DEFAULT_COMPRESS_DAILY_TOKENS,
            MAX_COMPRESS_DAILY_TOKENS,
            warnings,
        ),
        batch_tokens: positive(
            "CLAUDE_MEM_COMPRESS_BATCH_TOKENS",
            DEFAULT_COMPRESS_BATCH_TOKENS,
            MAX_COMPRESS_BATCH_TOKENS,
            warnings,
        ),
        timeout: Duration::from_secs(positive(
            "CLAUDE_MEM_COMPRESS_TIMEOUT",
            DEFAULT_COMPRESS_TIMEOUT.as_secs(),
            MAX_COMPRESS_TIMEOUT,
            warnings,
        )),
    }
}

/// `CLAUDE_MEM_SYNC_INTERVAL`: a duration (`10m`, `1h`) or seconds; 0 turns background syncs off.
fn sync_interval(warnings: &mut Vec<String>) -> Option<Duration> {
    let Some(raw) = non_empty("CLAUDE_MEM_SYNC_INTERVAL") else {
        return Some(DEFAULT_SYNC_INTERVAL);
    };
    let text = raw.trim();
    let parsed = match text.parse::<u64>() {
        Ok(seconds) => Ok(Duration::from_secs(seconds)),
        Err(_) => crate::clock::parse_duration(text),
    };
    match parsed {
        Ok(every) if every.is_zero() => None,
        Ok(every) => Some(every),
        Err(_) => {
            warnings.push(format!(
                "CLAUDE_MEM_SYNC_INTERVAL={raw:?} is not a duration such as 10m; using 10m"
            ));
            Some(DEFAULT_SYNC_INTERVAL)
        }
    }
}

fn non_empty(name: &str) -> Option<String> {
    env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(OsString::into_string)
        .and_then(Result::ok)
}

/// `0`, `false`, `no`, `off`, in any letter case.
fn off(name: &str) -> bool {
    non_empty(name).is_some_and(|value| {
        ["0", "false", "no", "off"]
            .iter()
            .any(|off| value.trim().eq_ignore_ascii_case(off))
    })
}

/// `1`, `true`, `yes`, `on`, in any letter case.
fn flag(name: &str) -> bool {
    non_empty(name).is_some_and(|value| {
        ["1", "true", "yes", "on"]
            .iter()
            .any(|on| value.trim().eq_ignore_ascii_case(on))
    })
}

#[cfg(unix)]
fn uid() -> u32 {
    crate::fsutil::euid()
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}

/// A whole number; digits past what 64 bits hold read as the largest (each variable has its
/// own most, see [`at_most`]).
fn number(name: &str, warnings: &mut Vec<String>) -> Option<u64> {
    let raw = non_empty(name)?;
    let digits = raw.trim();
    match digits.parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Some(u64::MAX)
        }
        Err(_) => {
            warnings.push(format!(
                "{name}={raw:?} is not a whole number; using the default"
            ));
            None
        }
    }
}

/// `n`, or `max` with a warning when it is more.
fn at_most(name: &str, n: u64, max: u64, warnings: &mut Vec<String>) -> u64 {
    if n > max {
        warnings.push(format!(
            "{name} is more than {}; using {}",
            crate::text::count(max as i64),
            crate::text::count(max as i64)
        ));
    }
    n.min(max)
}

/// A stable 64-bit hash (FNV-1a): names derived from paths and ids (the fallback folder, marks)
/// must not change between runs or Rust versions, which rules out the std hasher. Takes any
/// run of bytes, so that parts are hashed as one without being copied together first.
pub fn fnv1a<'a>(bytes: impl IntoIterator<Item = &'a u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
