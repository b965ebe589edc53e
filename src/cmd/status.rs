//! `status`: what a user runs first. Where the hooks are registered and whether they run this
//! binary, where the data is and how big, what waits in the queue and the spill folder, when
//! the last capture was, and what the log warned about in the last day. Reads only.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::{Map, Value, json};

use super::install::HOOKS;
use crate::cli::SettingsArgs;
use crate::config::{Config, Retention};
use crate::emit::Report;
use crate::render::{self, Color, Style, Table, cell};
use crate::settings::command::{Program, is_our_program, parse_ours};
use crate::settings::compat::ClaudeCode;
use crate::settings::merge;
use crate::settings::settings_path;
use crate::store::fts::{Index, IndexInfo};
use crate::store::read::{Reader, StoreStats};
use crate::store::retention::{self, Outlook};

/// Log lines at these levels are warnings.
const WARN_LEVELS: &[&str] = &["WARN", "ERROR", "PANIC"];
const LATEST_WARNINGS: usize = 3;

/// One settings file and the state of each of our hooks in it.
struct HookFile {
    path: PathBuf,
    /// `None`: the file does not exist. `Some(Err)`: it cannot be read as JSON.
    hooks: Option<Result<Vec<HookState>, String>>,
}

struct HookState {
    event: &'static str,
    hook: &'static str,
    registered: bool,
    /// The program of each handler of ours for it that names one plainly (as written in the
    /// file: quoted in a shell command, bare in an exec-form one).
    programs: Vec<String>,
}

struct Warnings {
    count: usize,
    latest: Vec<String>,
}

/// The database as status found it.
enum Database {
    Missing,
    Failed(String),
    Read(StoreStats),
}

/// Everything status looks at, gathered once; rendered as text or JSON.
struct Status {
    config: Config,
    exe: Option<PathBuf>,
    files: Vec<HookFile>,
    optional: Vec<(&'static str, Option<String>)>,
    database: Database,
    retention: Option<Outlook>,
    index: Result<Option<IndexInfo>>,
    spill: (usize, usize),
    warnings: Warnings,
}

pub fn status(json: bool) -> Result<Report> {
    let config = Config::from_env();
    let files = hook_files(&config);
    let mut outlook = None;
    let read = Reader::open(&config).and_then(|reader| {
        reader
            .map(|r| {
                outlook = retention::outlook(&r, &config.retention, chrono::Utc::now()).ok();
                r.stats()
            })
            .transpose()
    });
    let database = match read {
        Ok(None) => Database::Missing,
        Ok(Some(stats)) => Database::Read(stats),
        Err(err) => Database::Failed(format!("{err:#}")),
    };
    let status = Status {
        retention: outlook,
        exe: std::env::current_exe().ok(),
        optional: missing_optional(&files),
        files,
        database,
        index: Index::info_at(&config),
        spill: spill_counts(&config),
        warnings: log_warnings(&config),
        config,
    };
    Ok(if json {
        render::json_line(&to_json(&status)).into()
    } else {
        text(&status, &Style::detect()).into()
    })
}

fn to_json(s: &Status) -> Value {
    let config = &s.config;
    let stats = match &s.database {
        Database::Read(stats) => Some(stats),
        _ => None,
    };
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "binary": s.exe,
        "data_dir": config.data_dir,
        "disabled": config.disabled,
        "config_warnings": config.warnings,
        "hooks": s.files.iter().map(|f| file_json(f, s.exe.as_deref())).collect::<Vec<_>>(),
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
        },
        "retention": retention_json(&config.retention, s.retention.as_ref()),
        "spill": {"waiting": s.spill.0, "quarantined": s.spill.1},
        "index": {
            "path": config.index_path(),
            "bytes": size(&config.index_path()),
            "items": s.index.as_ref().ok().and_then(|i| i.as_ref().map(|i| i.items)),
        },
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
    hook_lines(&mut line, s);
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
        Database::Read(stats) => database_lines(&mut line, &db, stats, style),
    }
    if let Some(outlook) = &s.retention {
        line(
            "retention",
            retention_text(&s.config.retention, outlook, style),
            None,
        );
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
    let registered = s
        .files
        .iter()
        .any(|f| matches!(&f.hooks, Some(Ok(h)) if h.iter().any(|s| s.registered)));
    if !registered {
        line(
            label,
            "claude-mem's hooks are not registered: run claude-mem install-hooks".into(),
            Some(Color::Warn),
        );
    }
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
    line(
        "last capture",
        stats
            .last_capture_at
            .as_deref()
            .map_or_else(|| "never".to_string(), |t| style.moment(t)),
        None,
    );
}

/// The policy, the live data, and what it drops next.
fn retention_text(policy: &Retention, o: &Outlook, style: &Style) -> String {
    let mut out = format!(
        "{}; live data {}",
        super::prune::policy_text(policy),
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

/// The user's settings file (when there is a home to find it in), and the project's two when
/// they exist.
fn hook_files(config: &Config) -> Vec<HookFile> {
    let args = |project: Option<PathBuf>, local: bool| SettingsArgs {
        project,
        local,
        settings: None,
        dry_run: false,
    };
    let project = config
        .project_dir
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let mut paths: Vec<PathBuf> = settings_path(&args(None, false)).into_iter().collect();
    for local in [false, true] {
        let path = project
            .as_ref()
            .and_then(|dir| settings_path(&args(Some(dir.clone()), local)).ok());
        if let Some(path) = path.filter(|p| p.exists() && !paths.contains(p)) {
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .map(|path| HookFile {
            hooks: read_hooks(&path),
            path,
        })
        .collect()
}

fn read_hooks(path: &Path) -> Option<Result<Vec<HookState>, String>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => return Some(Err(format!("cannot read it ({err})"))),
    };
    let root: Map<String, Value> = match serde_json::from_slice(&bytes) {
        Ok(root) => root,
        Err(err) => {
            return Some(Err(format!(
                "not plain JSON ({err}): Claude Code ignores it"
            )));
        }
    };
    Some(Ok(HOOKS
        .iter()
        .map(|(registration, _)| HookState {
            event: registration.event,
            hook: registration.hook,
            registered: merge::is_registered(&root, registration),
            programs: programs(&root, registration.event, registration.hook),
        })
        .collect()))
}

/// The programs of the handlers of ours for `hook` on `event`: an exec-form handler's
/// `command`, or the program word of a shell command line that is ours alone.
fn programs(root: &Map<String, Value>, event: &str, hook: &str) -> Vec<String> {
    let groups = root
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array);
    groups
        .into_iter()
        .flatten()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(|handler| {
            let command = handler.get("command")?.as_str()?;
            match handler.get("args").and_then(Value::as_array) {
                Some(args) => (is_our_program(command)
                    && args.first().and_then(Value::as_str) == Some("hook")
                    && args.get(1).and_then(Value::as_str) == Some(hook))
                .then(|| command.to_string()),
                None => {
                    let ours = parse_ours(command)?;
                    (ours.hook == hook)
                        .then(|| command[ours.program_start..ours.program_end].to_string())
                }
            }
        })
        .collect()
}

/// Whether a program as written in a settings file runs `exe`.
fn runs(program: &str, exe: Option<&Path>) -> bool {
    let Some(exe) = exe else {
        return false;
    };
    if Program::of(exe).is_ok_and(|p| p.shell == program || p.exec == program) {
        return true;
    }
    let path = unquote(program);
    match (fs::canonicalize(&path), fs::canonicalize(exe)) {
        (Ok(a), Ok(b)) => a == b,
        _ => Path::new(&path) == exe,
    }
}

/// A shell word as sh reads it: `"..."` (with `\` escapes) or `'...'` or bare.
fn unquote(word: &str) -> String {
    if let Some(inner) = word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        return inner.to_string();
    }
    let Some(inner) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) else {
        return word.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next @ ('"' | '\\' | '$' | '`'))) => {
                out.push(next);
                chars.next();
            }
            (c, _) => out.push(c),
        }
    }
    out
}

/// Events of ours registered only with a recent enough Claude Code that no file has, with why
/// that is fine (or `None` when it is not).
fn missing_optional(files: &[HookFile]) -> Vec<(&'static str, Option<String>)> {
    let mut missing = Vec::new();
    for (registration, since) in HOOKS {
        let Some(since) = since else { continue };
        let anywhere = files.iter().any(|f| {
            matches!(&f.hooks, Some(Ok(h)) if h.iter()
                .any(|s| s.event == registration.event && s.registered))
        });
        if !anywhere {
            missing.push((
                registration.event,
                ClaudeCode::detect().allows(*since).err(),
            ));
        }
    }
    missing
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

/// Events waiting in the spill folders (the data dir's and the fallback), and spill files set
/// aside in the quarantine folder.
fn spill_counts(config: &Config) -> (usize, usize) {
    let count = |dir: PathBuf| {
        fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                !name.starts_with('.') && name.ends_with(".json")
            })
            .count()
    };
    let waiting = count(config.spill_dir()) + count(config.fallback_dir().join("spill"));
    (waiting, count(config.quarantine_dir()))
}

/// Warnings of the last day in the log (and its rotated part, and the fallback log).
fn log_warnings(config: &Config) -> Warnings {
    let since = (chrono::Utc::now() - chrono::Duration::days(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let log = config.log_path();
    let mut lines: Vec<String> = Vec::new();
    for path in [
        log.with_extension("log.1"),
        log.clone(),
        config.fallback_dir().join("claude-mem.log"),
    ] {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        lines.extend(text.lines().filter_map(|l| {
            let mut words = l.splitn(3, ' ');
            let (ts, level) = (words.next()?, words.next()?);
            (ts >= since.as_str() && WARN_LEVELS.contains(&level)).then(|| l.to_string())
        }));
    }
    lines.sort();
    Warnings {
        count: lines.len(),
        latest: lines
            .iter()
            .rev()
            .take(LATEST_WARNINGS)
            .rev()
            .cloned()
            .collect(),
    }
}
