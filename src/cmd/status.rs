//! `status`: what a user runs first. Where the hooks are registered and whether they run this
//! binary, which coding agents have our hooks and MCP server, where the data is and how big, what waits in the queue and the spill folder, when
//! the last capture was, and what the log warned about in the last day. Reads only.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::{Value, json};

use crate::claude::ClaudeCode;
use crate::compress::pause;
use crate::config::{Config, Retention};
use crate::emit::Report;
use crate::health::agents::{self, Found, Registration};
use crate::health::hooks::{self, HookFile, HookState, runs, unquote};
use crate::health::log::Warnings;
use crate::render::{self, Color, Style, Table, cell};
use crate::settings::ours::HOOKS;
use crate::store::compressed::Spend;
use crate::store::fts::{Index, IndexInfo};
use crate::store::read::{Reader, StoreStats};
use crate::store::retention::{self, Outlook};

/// The database as status found it, with what the compressor spent today.
enum Database {
    Missing,
    Failed(String),
    Read(Box<StoreStats>, Spend),
}

/// Everything status looks at, gathered once; rendered as text or JSON.
struct Status {
    config: Config,
    exe: Option<PathBuf>,
    files: Vec<HookFile>,
    /// Every agent, and whether its files hold our hooks and MCP server.
    agents: Vec<Registration>,
    optional: Vec<(&'static str, Option<String>)>,
    database: Database,
    retention: Option<Outlook>,
    index: Result<Option<IndexInfo>>,
    spill: (usize, usize),
    warnings: Warnings,
    /// The project of the folder status runs in, as the hooks would record it.
    here: Option<crate::project::Project>,
    /// What that project is called on every machine (`project::identity`), for a repository.
    identity: Option<String>,
}

pub fn status(json: bool) -> Result<Report> {
    let config = Config::from_env();
    let files = hooks::files(&config, HOOKS);
    let mut outlook = None;
    let read = |r: Reader| {
        outlook = retention::outlook(&r, &config.retention, chrono::Utc::now()).ok();
        Ok((r.stats()?, r.spend(&crate::compress::today())?))
    };
    let database = match Reader::open(&config).and_then(|r| r.map(read).transpose()) {
        Ok(None) => Database::Missing,
        Ok(Some((stats, spend))) => Database::Read(Box::new(stats), spend),
        Err(err) => Database::Failed(format!("{err:#}")),
    };
    let status = Status {
        retention: outlook,
        exe: std::env::current_exe().ok(),
        optional: hooks::missing_optional(&files, HOOKS, &ClaudeCode::detect()),
        agents: agents::look(&files),
        files,
        database,
        index: Index::info_at(&config),
        spill: {
            let spill = crate::health::spill::look(&config);
            (spill.waiting, spill.quarantined)
        },
        warnings: crate::health::log::warnings(&config, &crate::health::log::a_day_ago()),
        identity: here(&config)
            .filter(|p| p.why != crate::project::Why::Folder)
            .and_then(|p| crate::project::identity(&p.root)),
        here: here(&config),
        config,
    };
    Ok(if json {
        render::json_line(&to_json(&status)).into()
    } else {
        text(&status, &Style::detect()).into()
    })
}

/// The project of $CLAUDE_PROJECT_DIR, else of the current directory.
fn here(config: &Config) -> Option<crate::project::Project> {
    let dir = match &config.project_dir {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().ok()?,
    };
    let dir = std::path::absolute(dir).ok()?;
    Some(crate::project::of(&dir, &config.project_roots))
}

fn to_json(s: &Status) -> Value {
    let config = &s.config;
    let (stats, spend) = match &s.database {
        Database::Read(stats, spend) => (Some(stats), Some(spend)),
        _ => (None, None),
    };
    let paused = pause::current(config);
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "binary": s.exe,
        "data_dir": config.data_dir,
        "disabled": config.disabled,
        "config_warnings": config.warnings,
        "project": s.here.as_ref().map(|p| json!({
            "root": p.root,
            "why": p.why.key(),
            "identity": s.identity,
            "worktree": match &p.why {
                crate::project::Why::Worktree(top) => Some(top),
                _ => None,
            },
        })),
        "hooks": s.files.iter().map(|f| file_json(f, s.exe.as_deref())).collect::<Vec<_>>(),
        "agents": s.agents.iter().map(agent_json).collect::<Vec<_>>(),
        "database": {
            "path": config.db_path(),
            "bytes": size(&config.db_path()),
            "wal_bytes": size(&wal(&config.db_path())),
            "error": match &s.database {
                Database::Failed(err) => Some(err),
                _ => None,
            },
            "schema_version": stats.map(|s| s.schema_version),
            "tables": stats.map(|s| pairs(&s.tables)),
            "queue": stats.map(|s| pairs(&s.queue)),
            "last_capture_at": stats.and_then(|s| s.last_capture_at.clone()),
            "agents": stats.map(|s| pairs(&s.agents)),
        },
        "compress": {
            "auto": config.compress.auto,
            "model": config.compress.model,
            "command": config.compress.command,
            "daily_tokens": config.compress.daily_tokens,
            "today": spend.map(|t| json!({"tokens": t.tokens, "cost_usd": t.cost_usd,
                                          "calls": t.calls})),
            "waiting": stats.map(|s| s.pending.waiting()),
            "failed": stats.map(|s| s.pending.failed),
            "paused_until": paused.as_ref().map(|p| until(p.until)),
            "paused_in_a_row": paused.as_ref().map(|p| p.streak.saturating_add(1)),
            "paused_because": paused.map(|p| p.why),
        },
        "retention": retention_json(&config.retention, s.retention.as_ref()),
        "sync": crate::sync::status::status_json(config),
        "spill": {"waiting": s.spill.0, "quarantined": s.spill.1},
        "index": {
            "path": config.index_path(),
            "bytes": size(&config.index_path()),
            "items": s.index.as_ref().ok().and_then(|i| i.as_ref().map(|i| i.items)),
        },
        "recall": {"on": config.recall, "chars": config.recall_chars},
        "log": {"path": config.log_path(), "warnings_last_day": s.warnings.count,
                "latest": s.warnings.latest},
    })
}

/// `label  value` lines, a problem in colour.
fn text(s: &Status, style: &Style) -> String {
    let mut t = Table::default();
    let mut line = |label: &str, value: String, color: Option<Color>| {
        let value = match color {
            Some(c) => cell(value).color(c),
            None => cell(value),
        };
        t.row(vec![cell(label).color(Color::Header), value]);
    };
    let exe = s.exe.as_deref();
    line(
        "claude-mem",
        format!(
            "{} {}",
            env!("CARGO_PKG_VERSION"),
            exe.map(|p| p.display().to_string()).unwrap_or_default()
        ),
        None,
    );
    if s.config.disabled {
        line(
            "disabled",
            "CLAUDE_MEM_DISABLED is set here: hooks run with it record nothing".into(),
            Some(Color::Warn),
        );
    }
    for warning in &s.config.warnings {
        line("config", warning.clone(), Some(Color::Warn));
    }
    if let Some(here) = &s.here {
        line(
            "project",
            match &s.identity {
                Some(id) => format!(
                    "{} ({}; known on every machine by {})",
                    here.root.display(),
                    here.why.describe(),
                    crate::project::describe_identity(id)
                ),
                None => format!("{} ({})", here.root.display(), here.why.describe()),
            },
            None,
        );
    }
    hook_lines(&mut line, s);
    agent_lines(&mut line, &s.agents);
    let db = s.config.db_path();
    match &s.database {
        Database::Failed(err) => line(
            "database",
            format!("{}: {err}", shown(&db)),
            Some(Color::Bad),
        ),
        Database::Missing => line(
            "database",
            format!(
                "{}: not created yet (the first hook creates it)",
                shown(&db)
            ),
            None,
        ),
        Database::Read(stats, spend) => {
            database_lines(&mut line, &db, stats, style);
            compress_line(&mut line, &s.config, stats, spend);
        }
    }
    if let Some(outlook) = &s.retention {
        line(
            "retention",
            retention_text(&s.config.retention, outlook, style),
            None,
        );
    }
    if let Some((text, color)) = crate::sync::status::status_line(&s.config, style) {
        line("sync", text, color);
    }
    data_lines(&mut line, s);
    t.render(style)
}

fn hook_lines(line: &mut impl FnMut(&str, String, Option<Color>), s: &Status) {
    let mut label = "hooks";
    for file in &s.files {
        let (text, color) = hooks_line(file, s.exe.as_deref(), &s.optional);
        line(label, format!("{}: {text}", shown(&file.path)), color);
        label = "";
    }
    let registered = s.files.iter().any(|f| f.registered().next().is_some());
    if !registered {
        line(
            label,
            "claude-mem's hooks are not registered: run claude-mem install-hooks".into(),
            Some(Color::Warn),
        );
    }
}

/// The agents claude-mem is registered with, a line each, then the others on one line.
fn agent_lines(line: &mut impl FnMut(&str, String, Option<Color>), list: &[Registration]) {
    let mut label = "registered";
    let mut others = Vec::new();
    for r in list {
        let name = r.agent.name();
        let hooks = if r.agent == crate::agent::Agent::OpenCode {
            "plugin"
        } else {
            "hooks"
        };
        let (text, color) = match (&r.hooks.found, &r.mcp.found) {
            (Found::Unreadable(why), _) => (unreadable(&r.hooks, why), Some(Color::Warn)),
            (_, Found::Unreadable(why)) => (unreadable(&r.mcp, why), Some(Color::Warn)),
            (Found::Registered, Found::Registered) => (format!("{hooks} and MCP server"), None),
            (Found::Registered, _) => (format!("{hooks}; no MCP server"), None),
            (_, Found::Registered) => (
                format!("MCP server; no {hooks}, so nothing is recorded"),
                Some(Color::Warn),
            ),
            _ => {
                others.push(name);
                continue;
            }
        };
        line(label, format!("{name}: {text}"), color);
        label = "";
    }
    if !others.is_empty() {
        line(
            label,
            format!(
                "not with {} (claude-mem install-hooks --agent NAME)",
                others.join(", ")
            ),
            None,
        );
    }
}

fn unreadable(file: &agents::File, why: &str) -> String {
    let path = file.path.as_deref().map(shown).unwrap_or_default();
    format!("{path} cannot be read: {why}")
}

fn agent_json(r: &Registration) -> Value {
    let file = |f: &agents::File| {
        json!({
            "file": f.path,
            "state": f.found.key(),
            "error": match &f.found {
                Found::Unreadable(why) => Some(why),
                _ => None,
            },
        })
    };
    json!({"agent": r.agent.name(), "hooks": file(&r.hooks), "mcp": file(&r.mcp)})
}

/// The spill folder, the index and the log.
fn data_lines(line: &mut impl FnMut(&str, String, Option<Color>), s: &Status) {
    let config = &s.config;
    line(
        "spill",
        match s.spill {
            (0, 0) => "nothing waiting".to_string(),
            (waiting, quarantined) => format!(
                "{} waiting in {} for the database{}",
                render::plural(waiting as i64, "event"),
                shown(&config.spill_dir()),
                if quarantined > 0 {
                    format!(
                        ", {quarantined} set aside in {}",
                        shown(&config.quarantine_dir())
                    )
                } else {
                    String::new()
                }
            ),
        },
        (s.spill != (0, 0)).then_some(Color::Warn),
    );
    let index = config.index_path();
    line(
        "index",
        match &s.index {
            Ok(Some(info)) => format!(
                "{}  {}, {} (searches bring it up to date)",
                shown(&index),
                render::bytes(size(&index)),
                render::plural(info.items, "item")
            ),
            Ok(None) => format!(
                "{}: not built yet (the first search builds it)",
                shown(&index)
            ),
            Err(err) => format!("{}: {err:#} (the next search rebuilds it)", shown(&index)),
        },
        None,
    );
    line(
        "recall",
        if config.recall {
            format!(
                "on: prompts get up to {} characters of earlier work that matches them \
                 (CLAUDE_MEM_RECALL=0 turns it off)",
                crate::text::count(config.recall_chars as i64)
            )
        } else {
            "off (CLAUDE_MEM_RECALL=0): prompts get no earlier work".into()
        },
        None,
    );
    match s.warnings.count {
        0 => line("log", "no warnings in the last day".into(), None),
        n => {
            line(
                "log",
                format!(
                    "{} in the last day in {}; latest:",
                    render::plural(n as i64, "warning"),
                    shown(&config.log_path())
                ),
                Some(Color::Warn),
            );
            for warning in &s.warnings.latest {
                line("", render::one_line(warning, 200), None);
            }
        }
    }
}

fn database_lines(
    line: &mut impl FnMut(&str, String, Option<Color>),
    db: &Path,
    stats: &StoreStats,
    style: &Style,
) {
    line(
        "database",
        format!(
            "{}  {}, WAL {}, schema v{}",
            shown(db),
            render::bytes(size(db)),
            render::bytes(size(&wal(db))),
            stats.schema_version
        ),
        None,
    );
    let rows = stats
        .tables
        .iter()
        .map(|(table, n)| format!("{table} {}", render::count(*n)))
        .collect::<Vec<_>>()
        .join(", ");
    line("rows", rows, None);
    let queue = if stats.queue.is_empty() {
        "empty".to_string()
    } else {
        stats
            .queue
            .iter()
            .map(|(status, n)| format!("{status} {}", render::count(*n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    line("queue", queue, None);
    let agents = stats
        .agents
        .iter()
        .map(|(agent, n)| format!("{agent} {}", render::plural(*n, "session")))
        .collect::<Vec<_>>()
        .join(", ");
    if !agents.is_empty() {
        line("agents", agents, None);
    }
    line(
        "last capture",
        stats
            .last_capture_at
            .as_deref()
            .map_or_else(|| "never".to_string(), |t| style.moment(t)),
        None,
    );
}

/// What compression spent today against its cap, what waits for it, and when it runs.
fn compress_line(
    line: &mut impl FnMut(&str, String, Option<Color>),
    config: &Config,
    stats: &StoreStats,
    spend: &Spend,
) {
    let mut parts = vec![format!(
        "today {} of {} tokens{}",
        render::count(spend.tokens),
        render::count(config.compress.daily_tokens as i64),
        if spend.cost_usd > 0.0 {
            format!(" (${:.4})", spend.cost_usd)
        } else {
            String::new()
        }
    )];
    parts.push(format!(
        "{} waiting",
        render::plural(stats.pending.waiting(), "item")
    ));
    if stats.pending.failed > 0 {
        parts.push(format!(
            "{} failed (claude-mem queue retry --all puts them back)",
            render::count(stats.pending.failed)
        ));
    }
    let mut color = None;
    let when = match pause::current(config) {
        Some(pause) => {
            color = Some(Color::Warn);
            format!(
                "paused until {}, when the hooks try again{} ({})",
                until(pause.until),
                pause.backing_off(),
                pause.why
            )
        }
        None if config.compress.auto => {
            "runs after each session (CLAUDE_MEM_COMPRESS=off turns that off)".into()
        }
        None => "not run by the hooks (CLAUDE_MEM_COMPRESS=off): claude-mem compress".into(),
    };
    parts.push(when);
    line("compress", parts.join("; "), color);
}

/// The policy, the live data, and what it drops next.
fn retention_text(policy: &Retention, o: &Outlook, style: &Style) -> String {
    let mut out = format!(
        "{}; live data {}",
        super::policy_text(policy),
        render::bytes(o.live_bytes)
    );
    if o.reduce.sessions + o.delete.sessions > 0 {
        let mut due = Vec::new();
        if o.reduce.sessions > 0 {
            due.push(format!(
                "{} of {} to reduce",
                render::plural(o.reduce.rows, "item"),
                render::plural(o.reduce.sessions, "session")
            ));
        }
        if o.delete.sessions > 0 {
            due.push(format!(
                "{} to delete",
                render::plural(o.delete.sessions, "session")
            ));
        }
        out.push_str(&format!(
            "; due now: {} (at the next session end, or claude-mem prune)",
            due.join(", ")
        ));
    } else if let Some(next) = &o.next_at {
        out.push_str(&format!("; next due {}", style.moment(next)));
    } else {
        out.push_str("; nothing due");
    }
    if !o.incremental {
        out.push_str("; the file cannot shrink until claude-mem prune converts it (once)");
    }
    out
}

fn retention_json(policy: &Retention, outlook: Option<&Outlook>) -> Value {
    json!({
        "payload_days": policy.payload_days,
        "keep_days": policy.keep_days,
        "max_db_bytes": policy.max_db_bytes,
        "live_bytes": outlook.map(|o| o.live_bytes),
        "incremental_vacuum": outlook.map(|o| o.incremental),
        "due": outlook.map(|o| json!({
            "reduce_sessions": o.reduce.sessions,
            "reduce_items": o.reduce.rows,
            "delete_sessions": o.delete.sessions,
        })),
        "next_due_at": outlook.and_then(|o| o.next_at.clone()),
    })
}

/// Seconds since the epoch as a local time.
fn until(at: u64) -> String {
    chrono::DateTime::from_timestamp(at as i64, 0)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_default()
}

fn hooks_line(
    file: &HookFile,
    exe: Option<&Path>,
    optional: &[(&'static str, Option<String>)],
) -> (String, Option<Color>) {
    let states = match &file.hooks {
        None => return ("does not exist".into(), None),
        Some(Err(why)) => return (why.clone(), Some(Color::Warn)),
        Some(Ok(states)) => states,
    };
    let present: Vec<&HookState> = states.iter().filter(|s| s.registered).collect();
    if present.is_empty() {
        return ("no claude-mem hooks".into(), None);
    }
    let mut parts = vec![format!("{} of {} hooks", present.len(), states.len())];
    let mut color = Some(Color::Good);
    let others: Vec<&String> = present
        .iter()
        .flat_map(|s| &s.programs)
        .filter(|p| !runs(p, exe))
        .collect();
    if others.is_empty() {
        parts.push("running this binary".into());
    } else {
        color = Some(Color::Warn);
        parts.push(format!(
            "running another binary: {} (claude-mem install-hooks points them here)",
            unquote(others[0])
        ));
    }
    for state in states.iter().filter(|s| !s.registered) {
        let fine = optional
            .iter()
            .find(|(event, _)| *event == state.event)
            .and_then(|(_, why)| why.clone());
        match fine {
            Some(why) => parts.push(format!("{} not added: {why}", state.event)),
            None => {
                color = Some(Color::Warn);
                parts.push(format!("missing {} (hook {})", state.event, state.hook));
            }
        }
    }
    (parts.join("; "), color)
}

fn file_json(file: &HookFile, exe: Option<&Path>) -> Value {
    let (exists, error, hooks) = match &file.hooks {
        None => (false, None, Vec::new()),
        Some(Err(why)) => (true, Some(why.clone()), Vec::new()),
        Some(Ok(states)) => (
            true,
            None,
            states
                .iter()
                .map(|s| {
                    let state = if !s.registered {
                        "missing"
                    } else if s.programs.iter().all(|p| runs(p, exe)) {
                        "this_binary"
                    } else {
                        "other_binary"
                    };
                    json!({"event": s.event, "hook": s.hook, "state": state,
                           "programs": s.programs.iter().map(|p| unquote(p)).collect::<Vec<_>>()})
                })
                .collect(),
        ),
    };
    json!({"file": file.path, "exists": exists, "error": error, "hooks": hooks})
}

/// A path for display, the home directory as `~`.
fn shown(path: &Path) -> String {
    render::path(&path.to_string_lossy())
}

fn pairs(list: &[(String, i64)]) -> Value {
    Value::Object(list.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

fn size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

fn wal(db: &Path) -> PathBuf {
    let mut path = db.as_os_str().to_owned();
    path.push("-wal");
    path.into()
}
