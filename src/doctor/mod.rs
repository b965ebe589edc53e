//! What `doctor` checks and what `--fix` repairs: each check finds what is broken and says how
//! to fix it; a repair does what it safely can and says what it did.
//!
//! The facts come from `health` (and `store` for the database and the compressor's ledger);
//! `hooks`, `data` and `compress` judge them (ok, warn, fail, with the fix), `fix` repairs.
//! "All is well" means no check failed: a warning is worth knowing but nothing is broken by it
//! (another copy of claude-mem, an event Claude Code is too old for, warnings the log kept from
//! the last day, items waiting for a retry), so the exit code is 1 only when a check fails, and
//! a script can run `doctor || alert`.

mod compress;
mod data;
mod fix;
mod hooks;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::claude::ClaudeCode;
use crate::config::Config;
use crate::render::{self, Color};
use crate::store::integrity::{self, Health};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }

    pub fn color(self) -> Color {
        match self {
            Verdict::Ok => Color::Good,
            Verdict::Warn => Color::Warn,
            Verdict::Fail => Color::Bad,
        }
    }
}

/// One finding.
#[derive(Debug)]
pub struct Check {
    pub name: &'static str,
    pub verdict: Verdict,
    pub message: String,
    /// More lines under the message (the log's most frequent warnings).
    pub details: Vec<String>,
    /// How to fix it: what `--fix` does, or what only the user can do.
    pub fix: Option<String>,
    /// What `--fix` does about it.
    pub repair: Option<Repair>,
}

impl Check {
    fn new(name: &'static str, verdict: Verdict, message: impl Into<String>) -> Check {
        Check {
            name,
            verdict,
            message: message.into(),
            details: Vec::new(),
            fix: None,
            repair: None,
        }
    }

    fn ok(name: &'static str, message: impl Into<String>) -> Check {
        Check::new(name, Verdict::Ok, message)
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }

    /// A fix that `--fix` does: `what` says what it does.
    fn repair(mut self, repair: Repair, what: impl Into<String>) -> Check {
        self.fix = Some(format!("claude-mem doctor --fix {}", what.into()));
        self.repair = Some(repair);
        self
    }
}

/// A repair `--fix` can make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// Register this binary's hooks in this settings file, as install-hooks does.
    Register(PathBuf),
    /// Take ours out of this personal settings file: another file Claude Code reads for the
    /// same projects registers them.
    Unregister {
        path: PathBuf,
        kept_in: Vec<PathBuf>,
    },
    /// Close these (ours) to other users.
    Tighten(Vec<PathBuf>),
    /// Move the files of an earlier release to the current layout.
    Layout,
    /// Move the damaged database aside, start a new one, copy what can be read.
    Salvage,
    /// Apply the spilled events and truncate the WAL.
    Maintain,
    /// Register this binary as the user's MCP server, as install-hooks does.
    RegisterMcp,
}

/// What one repair did, or why it could not.
#[derive(Debug)]
pub struct Repaired {
    pub name: &'static str,
    pub outcome: Result<String, String>,
}

/// Every check, and with `fix` the repairs `--fix` made. A repair can uncover another (hooks
/// taken out of a duplicate file may leave an event unregistered): a second round does what
/// the first made visible, never the same twice.
pub fn examine(config: &Config, fix: bool) -> (Vec<Check>, Vec<Repaired>) {
    let claude = ClaudeCode::detect();
    let mut checks = all(config, &claude);
    let mut repaired = Vec::new();
    if fix {
        let mut tried = Vec::new();
        for _ in 0..2 {
            let done = fix::repair(config, &claude, &checks, &mut tried);
            if done.is_empty() {
                break;
            }
            repaired.extend(done);
            checks = all(config, &claude);
        }
    }
    (checks, repaired)
}

/// Every check, in the order they are printed.
fn all(config: &Config, claude: &ClaudeCode) -> Vec<Check> {
    let exe = crate::settings::ours::this_binary().ok();
    let files = crate::health::hooks::files(config, crate::settings::ours::HOOKS);
    let mut checks = vec![data::environment(config)];
    checks.extend(hooks::hook_files(&files, exe.as_deref(), claude));
    checks.extend(hooks::registered_once(&files));
    checks.extend(hooks::mcp_server(exe.as_deref()));
    checks.push(hooks::claude_code(&files, claude));
    checks.extend(hooks::codex());
    checks.push(hooks::incumbent(config));
    checks.push(data::data_dir(config));
    let database = integrity::inspect(config);
    let healthy = matches!(database, Health::Healthy { .. });
    // The ledger came with schema v6.
    let has_ledger = matches!(database, Health::Healthy { schema_version } if schema_version >= 6);
    checks.push(data::database(config, database));
    if healthy {
        checks.push(data::wal(config));
    }
    checks.push(data::disk(config));
    checks.extend(data::spill_folder(config));
    checks.extend(compress::checks(config, has_ledger));
    checks.push(sync(config));
    checks.push(data::log_check(config));
    checks
}

/// Sync: how the last one went, when it is set up. A failure is a warning: the memory here
/// works as before, it only waits to go.
fn sync(config: &Config) -> Check {
    match crate::sync::status::health(config) {
        None => Check::ok(
            "sync",
            "not set up (claude-mem sync setup <REMOTE>: docs/sync.md)",
        ),
        Some(Ok(text)) => Check::ok("sync", text),
        Some(Err(text)) => Check::new("sync", Verdict::Warn, text)
            .fix("run claude-mem sync: it says what is wrong (docs/sync.md)"),
    }
}

/// A path for display, the home directory as `~`.
fn shown(path: &Path) -> String {
    render::path(&path.to_string_lossy())
}
