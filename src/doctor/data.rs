//! The checks of our own side: the environment, the data dir's files, the database and its
//! WAL, free space, the spill folder and the log.

use std::path::Path;
use std::time::SystemTime;

use super::{Check, Repair, Verdict, shown};
use crate::config::Config;
use crate::health::data::{self, Problem};
use crate::health::{log, spill};
use crate::notice::{PILE_AGE_MS, PILE_FILES};
use crate::render::{self, bytes, plural};
use crate::store::integrity::Health;
use crate::store::{self, SCHEMA_VERSION, WAL_INLINE_MAX, WAL_OPEN_MAX};

/// Free space below these is a warning, then a failure (the database grows with every
/// capture; on a full disk events go to a 2 MiB reserve, then are lost).
const DISK_WARN: u64 = 512 << 20;
const DISK_FAIL: u64 = 64 << 20;

pub fn environment(config: &Config) -> Check {
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

/// The data dir's files: ours, closed to others.
pub fn data_dir(config: &Config) -> Check {
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

pub fn database(config: &Config, health: Health) -> Check {
    let db = config.db_path();
    let at = shown(&db);
    match health {
        Health::Missing if crate::store::layout::pending(config) => Check::new(
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

pub fn wal(config: &Config) -> Check {
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

pub fn disk(config: &Config) -> Check {
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

/// The spill folder's check, and one more when a newer claude-mem left events there.
pub fn spill_folder(config: &Config) -> Vec<Check> {
    let found = spill::look(config);
    let mut checks = vec![waiting_spill(config, &found)];
    if found.newer > 0 {
        checks.push(
            Check::new(
                "spill",
                Verdict::Warn,
                format!(
                    "{} written by a newer claude-mem {} for it in {} (this version cannot \
                     read them)",
                    plural(found.newer as i64, "event"),
                    if found.newer == 1 { "waits" } else { "wait" },
                    shown(&config.spill_dir()),
                ),
            )
            .fix("upgrade claude-mem: the newer version applies them"),
        );
    }
    checks
}

fn waiting_spill(config: &Config, found: &spill::Spill) -> Check {
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
        .as_ref()
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

pub fn log_check(config: &Config) -> Check {
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
