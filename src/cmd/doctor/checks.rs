//! The checks: facts from `health` and `store::integrity`, judged, each with its fix.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::super::install::{HOOKS, this_binary};
use super::{Check, Repair, Verdict};
use crate::config::Config;
use crate::health::claude::{Mcp, mcp};
use crate::health::data::{self, Problem};
use crate::health::hooks::{self, HookFile, Runs, Scope, what_runs};
use crate::health::{log, spill};
use crate::notice::{PILE_AGE_MS, PILE_FILES};
use crate::render::{self, bytes, plural};
use crate::settings::compat::ClaudeCode;
use crate::store::integrity::{self, Health};
use crate::store::{self, SCHEMA_VERSION, WAL_INLINE_MAX, WAL_OPEN_MAX};

/// Free space below these is a warning, then a failure (the database grows with every
/// capture; on a full disk events go to a 2 MiB reserve, then are lost).
const DISK_WARN: u64 = 512 << 20;
const DISK_FAIL: u64 = 64 << 20;

pub fn all(config: &Config, claude: &ClaudeCode) -> Vec<Check> {
    let exe = this_binary().ok();
    let files = hooks::files(config, HOOKS);
    let mut checks = vec![environment(config)];
    checks.extend(hook_files(&files, exe.as_deref(), claude));
    checks.extend(registered_once(&files));
    checks.extend(mcp_server(exe.as_deref()));
    checks.push(claude_code(&files, claude));
    checks.push(incumbent(config));
    checks.push(data_dir(config));
    let database = integrity::inspect(config);
    let healthy = matches!(database, Health::Healthy { .. });
    checks.push(database_check(config, database));
    if healthy {
        checks.push(wal(config));
    }
    checks.push(disk(config));
    checks.push(spill_folder(config));
    checks.push(log_check(config));
    checks
}

fn environment(config: &Config) -> Check {
    let mut problems = config.warnings.clone();
    if config.disabled {
        problems.insert(
            0,
            "CLAUDE_MEM_DISABLED is set here: hooks run with it record nothing".into(),
        );
    }
    match problems.as_slice() {
        [] => Check::ok("environment", "the CLAUDE_MEM_* variables are all usable"),
        [one, ..] => Check::new("environment", Verdict::Warn, one.clone())
            .fix("unset or correct the variable where it is set (your shell's profile)"),
    }
}

/// One check per settings file that exists (and the user's always): are our hooks there, all
/// of them, each running an executable claude-mem?
fn hook_files(files: &[HookFile], exe: Option<&Path>, claude: &ClaudeCode) -> Vec<Check> {
    let optional = hooks::missing_optional(files, HOOKS, claude);
    let anywhere = files.iter().any(|f| f.registered().next().is_some());
    let mut checks = Vec::new();
    for file in files {
        let shown = shown(&file.path);
        let states = match &file.hooks {
            None if file.scope == Scope::User && !anywhere => {
                checks.push(not_registered(&file.path, "does not exist"));
                continue;
            }
            None => continue,
            Some(Err(why)) => {
                checks.push(
                    Check::new("hooks", Verdict::Fail, format!("{shown}: {why}"))
                        .fix("correct the file by hand; claude-mem rewrites only files it can read exactly"),
                );
                continue;
            }
            Some(Ok(states)) => states,
        };
        let present = states.iter().filter(|s| s.registered).count();
        if present == 0 {
            checks.push(match file.scope {
                Scope::User if !anywhere => not_registered(&file.path, "no claude-mem hooks"),
                _ => Check::ok("hooks", format!("{shown}: no claude-mem hooks")),
            });
            continue;
        }
        checks.push(one_file(file, present, exe, &optional));
    }
    checks
}

fn not_registered(path: &Path, what: &str) -> Check {
    Check::new(
        "hooks",
        Verdict::Fail,
        format!(
            "{}: {what}, and no settings file registers claude-mem's hooks: nothing is recorded",
            shown(path)
        ),
    )
    .repair(
        Repair::Register(path.to_path_buf()),
        format!(
            "registers them in {} (as claude-mem install-hooks does)",
            shown(path)
        ),
    )
}

/// A file that registers some of our hooks: what each runs, and what is missing.
fn one_file(
    file: &HookFile,
    present: usize,
    exe: Option<&Path>,
    optional: &[(&'static str, Option<String>)],
) -> Check {
    let mut verdict = Verdict::Ok;
    let mut parts = vec![format!("{present} of {} hooks", HOOKS.len())];
    let mut repairable = false;
    let mut other_copy = false;
    let programs = file.registered().flat_map(|s| &s.programs);
    let mut seen = Vec::new();
    for runs in programs.map(|p| what_runs(p, exe)) {
        if seen.contains(&runs) {
            continue;
        }
        match &runs {
            Runs::ThisBinary => {}
            Runs::Missing(path) => {
                verdict = Verdict::Fail;
                repairable = true;
                parts.push(format!("{} does not exist", shown(path)));
            }
            Runs::NotExecutable(path) => {
                verdict = Verdict::Fail;
                repairable = true;
                parts.push(format!("{} cannot be run", shown(path)));
            }
            Runs::OtherCopy(path) => {
                verdict = verdict.max(Verdict::Warn);
                other_copy = true;
                parts.push(format!("running another claude-mem, {}", shown(path)));
            }
        }
        seen.push(runs);
    }
    if seen == [Runs::ThisBinary] {
        parts[0].push_str(", running this binary");
    }
    let states = file.hooks.as_ref().and_then(|h| h.as_ref().ok());
    for state in states.into_iter().flatten().filter(|s| !s.registered) {
        let optional_here = optional.iter().find(|(event, _)| *event == state.event);
        match (since(state.event), optional_here) {
            (None, _) => {
                verdict = Verdict::Fail;
                repairable = true;
                parts.push(format!("missing {} (hook {})", state.event, state.hook));
            }
            (Some(_), Some((_, Some(why)))) => {
                parts.push(format!("{} not added: {why}", state.event));
            }
            (Some(_), Some((_, None))) => {
                verdict = verdict.max(Verdict::Warn);
                repairable = true;
                parts.push(format!(
                    "missing {}, which the installed Claude Code knows",
                    state.event
                ));
            }
            // Registered in another file.
            (Some(_), None) => {}
        }
    }
    let check = Check::new(
        "hooks",
        verdict,
        format!("{}: {}", shown(&file.path), parts.join("; ")),
    );
    match (repairable, other_copy) {
        (true, _) => check.repair(
            Repair::Register(file.path.clone()),
            "registers them with this binary (as claude-mem install-hooks does)",
        ),
        // Which copy the user means to run is theirs to say: not repaired.
        (false, true) => check.fix(format!(
            "if this binary is the one to run, `claude-mem install-hooks{}` run with it points \
             them here",
            flag(file.scope)
        )),
        (false, false) => check,
    }
}

/// The Claude Code version that first knows `event`, for events not every version knows.
fn since(event: &str) -> Option<crate::settings::compat::Version> {
    HOOKS
        .iter()
        .find(|(r, _)| r.event == event)
        .and_then(|(_, v)| *v)
}

/// The install-hooks flag that names a file of this scope.
fn flag(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "",
        Scope::Project => " --project",
        Scope::Local => " --local",
    }
}

/// No hook registered in two files Claude Code reads for the same session: it would run both,
/// so every event would be handled twice (twice the time, and summary requests and session
/// events stored twice). The fix takes ours out of the project's personal
/// `settings.local.json` only, when the user's or the project's file has them: both cover that
/// project already. A project's shared `settings.json` is never changed by it: the team may
/// rely on it, so only the user can pick which one goes.
fn registered_once(files: &[HookFile]) -> Option<Check> {
    let with_hooks: Vec<&HookFile> = files
        .iter()
        .filter(|f| f.registered().next().is_some())
        .collect();
    let twice: Vec<&str> = HOOKS
        .iter()
        .map(|(r, _)| r.event)
        .filter(|event| {
            with_hooks
                .iter()
                .filter(|f| f.registered().any(|s| s.event == *event))
                .count()
                > 1
        })
        .collect();
    if twice.is_empty() {
        return None;
    }
    let paths: Vec<String> = with_hooks.iter().map(|f| shown(&f.path)).collect();
    let check = Check::new(
        "hooks",
        Verdict::Fail,
        format!(
            "registered in {} files, {}: Claude Code runs both, so {} handled twice",
            with_hooks.len(),
            paths.join(" and "),
            if twice.len() == HOOKS.len() || twice.len() > 2 {
                "every event is".to_string()
            } else {
                format!("{} is", twice.join(" and "))
            }
        ),
    );
    let local = with_hooks.iter().find(|f| f.scope == Scope::Local);
    let others: Vec<PathBuf> = with_hooks
        .iter()
        .filter(|f| f.scope != Scope::Local)
        .map(|f| f.path.clone())
        .collect();
    Some(match local {
        Some(local) if !others.is_empty() => check.repair(
            Repair::Unregister {
                path: local.path.clone(),
                kept_in: others,
            },
            format!("takes them out of {}", shown(&local.path)),
        ),
        _ => check.fix(
            "take them out of one: `claude-mem uninstall-hooks --project` (if your team does not \
             need them there) or `claude-mem uninstall-hooks` (yours)",
        ),
    })
}

/// Whether claude-mem's MCP server is registered for the user, running a claude-mem that
/// exists.
///
/// MCP-FIX: a repair is not offered yet. The MCP server and its registration come from another
/// branch; at merge, `Repair::RegisterMcp` calling its register function goes here (for
/// `NotRegistered`, `NoFile` and a registration that runs a missing binary), next to
/// `Repair::Register` in `fix.rs`.
fn mcp_server(exe: Option<&Path>) -> Option<Check> {
    let how = |exe: Option<&Path>| {
        format!(
            "claude mcp add --scope user claude-mem -- {} mcp",
            exe.map_or("claude-mem".into(), |e| e.display().to_string())
        )
    };
    Some(match mcp()? {
        Mcp::NoFile(path) | Mcp::NotRegistered(path) => Check::new(
            "mcp",
            Verdict::Warn,
            format!(
                "claude-mem is not registered as an MCP server in {}: Claude cannot search the \
                 memory by itself",
                shown(&path)
            ),
        )
        .fix(how(exe)),
        Mcp::TooBig { path, bytes: size } => Check::new(
            "mcp",
            Verdict::Warn,
            format!("not checked: {} is {}", shown(&path), bytes(size)),
        ),
        Mcp::Unreadable { path, why } => Check::new(
            "mcp",
            Verdict::Warn,
            format!("not checked: cannot read {} ({why})", shown(&path)),
        ),
        Mcp::Registered { path, command } => match what_runs(&command, exe) {
            Runs::ThisBinary => Check::ok(
                "mcp",
                format!("registered in {}, running this binary", shown(&path)),
            ),
            Runs::OtherCopy(other) => Check::new(
                "mcp",
                Verdict::Warn,
                format!(
                    "registered in {}, running another claude-mem, {}",
                    shown(&path),
                    shown(&other)
                ),
            )
            .fix(how(exe)),
            Runs::Missing(p) | Runs::NotExecutable(p) => Check::new(
                "mcp",
                Verdict::Fail,
                format!(
                    "registered in {}, running {}, which cannot be run",
                    shown(&path),
                    shown(&p)
                ),
            )
            .fix(format!(
                "claude mcp remove --scope user claude-mem, then {}",
                how(exe)
            )),
        },
    })
}

/// The Claude Code found, and whether it knows every event registered for it.
fn claude_code(files: &[HookFile], claude: &ClaudeCode) -> Check {
    let name = "claude-code";
    let too_new: Vec<String> = HOOKS
        .iter()
        .filter_map(|(r, since)| {
            let since = (*since)?;
            claude.allows(since).err()?;
            let file = files
                .iter()
                .find(|f| f.registered().any(|s| s.event == r.event))?;
            Some(format!(
                "{} is registered in {}",
                r.event,
                shown(&file.path)
            ))
        })
        .collect();
    match claude {
        ClaudeCode::Found { path, version } if too_new.is_empty() => Check::ok(
            name,
            format!(
                "{version} ({}), new enough for every registered event",
                shown(path)
            ),
        ),
        ClaudeCode::Found { version, .. } => Check::new(
            name,
            Verdict::Fail,
            format!(
                "{}, but Claude Code {version} ignores a whole settings file with an event it \
                 does not know",
                too_new.join("; ")
            ),
        )
        .fix("update Claude Code (`claude update`)"),
        ClaudeCode::Unknown { path, why } => Check::new(
            name,
            Verdict::Warn,
            format!("cannot tell the version of {} ({why})", shown(path)),
        )
        .fix("check that `claude --version` works"),
        ClaudeCode::Missing => Check::new(
            name,
            Verdict::Warn,
            "no `claude` found on PATH, in ~/.local/bin or ~/.claude/local: cannot check which \
             events it knows",
        )
        .fix("put claude on PATH, or set CLAUDE_MEM_CLAUDE_BIN to it"),
    }
}

/// thedotmack/claude-mem installed too.
fn incumbent(config: &Config) -> Check {
    let signs = crate::incumbent::detect(config);
    if !signs.found() {
        return Check::ok("incumbent", "thedotmack/claude-mem is not installed");
    }
    Check::new(
        "incumbent",
        Verdict::Warn,
        format!(
            "thedotmack/claude-mem is installed too ({}): both record every tool call, each in \
             its own store, and its worker also summarizes with your Claude account",
            signs.0.join("; ")
        ),
    )
    .fix(format!(
        "keep one: `claude plugin disable {}` (keeps this one) or `claude-mem uninstall-hooks` \
         (keeps that one); neither touches the other's files",
        crate::incumbent::PLUGIN
    ))
}

/// The data dir's files: ours, closed to others.
fn data_dir(config: &Config) -> Check {
    let dir = &config.data_dir;
    let found = data::look(config);
    if !found.exists {
        return Check::ok(
            "data",
            format!("{} not created yet (the first hook creates it)", shown(dir)),
        );
    }
    let mut open = Vec::new();
    let mut foreign = Vec::new();
    for problem in &found.problems {
        match problem {
            Problem::Open { path, mode, dir } => {
                open.push((
                    path.clone(),
                    format!("{} {mode:o}", name_in(config, path, *dir)),
                ));
            }
            Problem::NotOurs { path, uid } => {
                foreign.push(format!(
                    "{} belongs to uid {uid}",
                    name_in(config, path, false)
                ));
            }
            Problem::NotAFile { path } => {
                foreign.push(format!(
                    "{} is not a file or folder",
                    name_in(config, path, false)
                ));
            }
        }
    }
    if !foreign.is_empty() {
        return Check::new(
            "data",
            Verdict::Fail,
            format!("{}: {}", shown(dir), first_few(&foreign)),
        )
        .fix("move it out of the data dir; claude-mem never uses nor changes what is not its own");
    }
    if !open.is_empty() {
        let names: Vec<String> = open.iter().map(|(_, n)| n.clone()).collect();
        let paths = open.into_iter().map(|(p, _)| p).collect();
        return Check::new(
            "data",
            Verdict::Fail,
            format!("{}: open to other users: {}", shown(dir), first_few(&names)),
        )
        .repair(
            Repair::Tighten(paths),
            "closes them (folders 0700, files 0600)",
        );
    }
    Check::ok(
        "data",
        format!("{}: every file ours and private", shown(dir)),
    )
}

fn name_in(config: &Config, path: &Path, dir: bool) -> String {
    let name = path.strip_prefix(&config.data_dir).unwrap_or(path);
    let name = if name.as_os_str().is_empty() {
        Path::new(".")
    } else {
        name
    };
    format!("{}{}", name.display(), if dir { "/" } else { "" })
}

fn first_few(items: &[String]) -> String {
    let mut text = items.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > 3 {
        text.push_str(&format!(" and {} more", items.len() - 3));
    }
    text
}

fn database_check(config: &Config, health: Health) -> Check {
    let db = config.db_path();
    let at = shown(&db);
    match health {
        Health::Missing if crate::layout::pending(config) => Check::new(
            "database",
            Verdict::Warn,
            format!(
                "still where an earlier release kept it, {}",
                shown(&config.legacy_db_path())
            ),
        )
        .repair(Repair::Layout, format!("moves it to {at}")),
        Health::Missing => Check::ok("database", format!("{at}: not created yet (the first hook creates it)")),
        Health::Empty => Check::ok("database", format!("{at}: created, not set up yet")),
        Health::Healthy { schema_version } => {
            let later = if schema_version < SCHEMA_VERSION {
                format!(" (the next hook brings it to v{SCHEMA_VERSION})")
            } else {
                String::new()
            };
            Check::ok(
                "database",
                format!(
                    "{at}  {}, schema v{schema_version}{later}, quick_check ok",
                    bytes(std::fs::metadata(&db).map_or(0, |m| m.len()))
                ),
            )
        }
        Health::Refused(why) => Check::new("database", Verdict::Fail, why)
            .fix("claude-mem never changes it: upgrade claude-mem for a newer schema, or move the file away"),
        Health::Damaged(what) => Check::new("database", Verdict::Fail, format!("{at} is damaged: {what}"))
            .repair(
                Repair::Salvage,
                "moves it aside (kept, never deleted), starts a new one and copies into it what can still be read",
            ),
        Health::Unreadable(why) => Check::new("database", Verdict::Warn, format!("{at}: cannot check it now ({why})"))
            .fix("run claude-mem doctor again in a moment"),
    }
}

fn wal(config: &Config) -> Check {
    let size = store::wal_bytes(config);
    let text = format!("WAL {}", bytes(size));
    if size <= WAL_INLINE_MAX {
        return Check::ok("wal", text);
    }
    let (verdict, what) = if size > WAL_OPEN_MAX {
        (
            Verdict::Fail,
            "hooks now keep every event in the spill folder instead of opening it",
        )
    } else {
        (
            Verdict::Warn,
            "a reader (a viewer, a consumer, a sqlite3 shell) may be holding it",
        )
    };
    Check::new("wal", verdict, format!("{text}: {what}")).repair(
        Repair::Maintain,
        "truncates it once readers let go (claude-mem maintain)",
    )
}

fn disk(config: &Config) -> Check {
    match data::free_bytes(&config.data_dir) {
        Ok(free) => {
            let text = format!("{} free for the data dir", bytes(free));
            let verdict = match free {
                f if f < DISK_FAIL => Verdict::Fail,
                f if f < DISK_WARN => Verdict::Warn,
                _ => return Check::ok("disk", text),
            };
            Check::new("disk", verdict, text)
                .fix("free some space: events then wait in a small reserve, and past it are lost")
        }
        Err(err) => Check::new(
            "disk",
            Verdict::Warn,
            format!("cannot tell the free space ({err})"),
        ),
    }
}

fn spill_folder(config: &Config) -> Check {
    let found = spill::look(config);
    let aside = if found.quarantined > 0 {
        format!(
            "; {} set aside as unusable in {} (why: in the log)",
            found.quarantined,
            shown(&config.quarantine_dir())
        )
    } else {
        String::new()
    };
    if found.waiting == 0 {
        let check = Check::new(
            "spill",
            if found.quarantined > 0 {
                Verdict::Warn
            } else {
                Verdict::Ok
            },
            format!("nothing waiting{aside}"),
        );
        return check.fix("look at them, then delete them: nothing takes them in again");
    }
    let age_ms = found
        .oldest
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map_or(0, |d| d.as_millis() as u64);
    let verdict = if found.waiting >= PILE_FILES || age_ms >= PILE_AGE_MS {
        Verdict::Fail
    } else {
        Verdict::Warn
    };
    let why = found
        .why
        .map(|w| format!("; the database said: {w}"))
        .unwrap_or_default();
    Check::new(
        "spill",
        verdict,
        format!(
            "{} waiting in {} for the database, the oldest for {}{why}{aside}",
            plural(found.waiting as i64, "event"),
            shown(&config.spill_dir()),
            render::duration((age_ms / 1000) as i64)
        ),
    )
    .repair(Repair::Maintain, "applies them now (claude-mem maintain)")
}

fn log_check(config: &Config) -> Check {
    let found = log::warnings(config, &log::a_day_ago());
    if found.count == 0 {
        return Check::ok("log", "no warnings in the last day");
    }
    let levels: Vec<String> = found
        .levels
        .iter()
        .map(|(level, n)| {
            let word = match *level {
                "WARN" => "warning",
                "ERROR" => "error",
                _ => "panic",
            };
            plural(*n as i64, word)
        })
        .collect();
    let mut check = Check::new(
        "log",
        Verdict::Warn,
        format!(
            "{} in the last day in {}; most frequent:",
            levels.join(", "),
            shown(&config.log_path())
        ),
    );
    check.details = found
        .kinds
        .iter()
        .take(3)
        .map(|(kind, n)| render::one_line(&format!("{n}x {kind}"), 160))
        .collect();
    check.fix("the checks above say what is still wrong; the log keeps what happened")
}

/// A path for display, the home directory as `~`.
fn shown(path: &Path) -> String {
    render::path(&path.to_string_lossy())
}
