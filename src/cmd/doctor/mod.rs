//! `doctor`: finds what is broken and says how to fix it, one line per check; `--fix` repairs
//! what it safely can, says what it did, and checks again.
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
use serde_json::{Value, json};

use crate::claude::ClaudeCode;
use crate::config::Config;
use crate::emit::Report;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::integrity::{self, Health};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }

    fn color(self) -> Color {
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

pub fn doctor(fix: bool, json: bool) -> Result<Report> {
    let config = Config::from_env();
    let claude = ClaudeCode::detect();
    let mut checks = all(&config, &claude);
    let mut repaired = Vec::new();
    if fix {
        // A repair can uncover another (hooks taken out of a duplicate file may leave an event
        // unregistered): a second round does what the first made visible, never the same twice.
        let mut tried = Vec::new();
        for _ in 0..2 {
            let done = fix::repair(&config, &claude, &checks, &mut tried);
            if done.is_empty() {
                break;
            }
            repaired.extend(done);
            checks = all(&config, &claude);
        }
    }
    let failed = checks.iter().any(|c| c.verdict == Verdict::Fail);
    let stdout = if json {
        render::json_line(&to_json(&checks, &repaired, fix))
    } else {
        text(&checks, &repaired, fix, &Style::detect())
    };
    Ok(Report {
        stdout,
        // Exit 1 without an error line: the report says what failed.
        found_nothing: failed,
        note: None,
    })
}

/// Every check, in the order they are printed.
fn all(config: &Config, claude: &ClaudeCode) -> Vec<Check> {
    let exe = super::install::this_binary().ok();
    let files = crate::health::hooks::files(config, super::install::HOOKS);
    let mut checks = vec![data::environment(config)];
    checks.extend(hooks::hook_files(&files, exe.as_deref(), claude));
    checks.extend(hooks::registered_once(&files));
    checks.extend(hooks::mcp_server(exe.as_deref()));
    checks.push(hooks::claude_code(&files, claude));
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
    match super::sync::health(config) {
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

fn text(checks: &[Check], repaired: &[Repaired], fixing: bool, style: &Style) -> String {
    let mut t = Table::default();
    for r in repaired {
        let (label, color, what) = match &r.outcome {
            Ok(did) => ("fixed", Color::Good, did),
            Err(why) => ("error", Color::Bad, why),
        };
        t.row(vec![
            cell(label).color(color),
            cell(r.name),
            cell(what.as_str()),
        ]);
    }
    for check in checks {
        let v = check.verdict;
        t.row(vec![
            cell(v.as_str()).color(v.color()),
            cell(check.name).color(Color::Header),
            cell(check.message.as_str()),
        ]);
        for detail in &check.details {
            t.row(vec![cell(""), cell(""), cell(format!("  {detail}"))]);
        }
        if let Some(fix) = check.fix.as_ref().filter(|_| v != Verdict::Ok) {
            t.row(vec![cell(""), cell(""), cell(format!("fix: {fix}"))]);
        }
    }
    let mut out = t.render(style);
    out.push_str(&summary(checks, fixing));
    out
}

/// The closing line: what is wrong in all, and whether `--fix` would help.
fn summary(checks: &[Check], fixing: bool) -> String {
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count() as i64;
    let (fails, warns) = (count(Verdict::Fail), count(Verdict::Warn));
    if fails + warns == 0 {
        return "All is well.\n".into();
    }
    let mut line = match (fails, warns) {
        (0, w) => format!("Nothing is broken; {}.", render::plural(w, "warning")),
        (f, 0) => format!("{} failed.", render::plural(f, "check")),
        (f, w) => format!(
            "{} failed, {}.",
            render::plural(f, "check"),
            render::plural(w, "warning")
        ),
    };
    let repairable = checks
        .iter()
        .filter(|c| c.verdict != Verdict::Ok && c.repair.is_some())
        .count();
    if repairable > 0 && !fixing {
        line.push_str(&format!(
            " `claude-mem doctor --fix` repairs {} of them.",
            if repairable == 1 {
                "one".into()
            } else {
                repairable.to_string()
            }
        ));
    }
    line.push('\n');
    line
}

fn to_json(checks: &[Check], repaired: &[Repaired], fixing: bool) -> Value {
    let checks: Vec<Value> = checks
        .iter()
        .map(|c| {
            json!({
                "check": c.name,
                "status": c.verdict.as_str(),
                "message": c.message,
                "details": c.details,
                "fix": c.fix.as_ref().filter(|_| c.verdict != Verdict::Ok),
                "fixable": c.verdict != Verdict::Ok && c.repair.is_some(),
            })
        })
        .collect();
    let repaired: Vec<Value> = repaired
        .iter()
        .map(|r| match &r.outcome {
            Ok(did) => json!({"check": r.name, "done": did, "error": null}),
            Err(why) => json!({"check": r.name, "done": null, "error": why}),
        })
        .collect();
    let status = checks
        .iter()
        .map(|c| c["status"].as_str().unwrap_or("ok"))
        .max_by_key(|s| ["ok", "warn", "fail"].iter().position(|v| v == s))
        .unwrap_or("ok");
    json!({
        "status": status,
        "checks": checks,
        "fixed": if fixing { Some(repaired) } else { None },
    })
}
