//! `doctor --fix`: the repairs the checks offer, each as safe as the command that does the
//! same by hand (install-hooks' merge and atomic write for settings files, the maintenance
//! pass for the spill folder and the WAL), in an order where each finds what it needs: the
//! layout and the database first, then what writes into them.

use std::path::{Path, PathBuf};

use super::{Check, Repair, Repaired, shown};
use crate::claude::ClaudeCode;
use crate::config::Config;
use crate::render::{self, plural};
use crate::settings::merge::{self, Status};
use crate::settings::ours;
use crate::settings::{Written, update};
use crate::store::integrity;

/// Makes every repair the checks offer that is not in `tried` yet (and adds it there).
pub fn repair(
    config: &Config,
    claude: &ClaudeCode,
    checks: &[Check],
    tried: &mut Vec<Repair>,
) -> Vec<Repaired> {
    let mut todo: Vec<(&'static str, Repair)> = Vec::new();
    for check in checks {
        if let Some(repair) = &check.repair
            && !tried.contains(repair)
            && !todo.iter().any(|(_, r)| r == repair)
        {
            todo.push((check.name, repair.clone()));
        }
    }
    // A file ours are taken out of (another file has them) is not registered again.
    let leaving: Vec<PathBuf> = todo
        .iter()
        .filter_map(|(_, r)| match r {
            Repair::Unregister { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    todo.retain(|(_, r)| !matches!(r, Repair::Register(path) if leaving.contains(path)));
    todo.sort_by_key(|(_, r)| order(r));
    todo.into_iter()
        .map(|(name, repair)| {
            let outcome = apply(config, claude, &repair).map_err(|err| format!("{err:#}"));
            tried.push(repair);
            Repaired { name, outcome }
        })
        .collect()
}

fn order(repair: &Repair) -> u8 {
    match repair {
        Repair::Layout => 0,
        // Before the damaged database moves aside: the file kept is closed too.
        Repair::Tighten(_) => 1,
        Repair::Salvage => 2,
        Repair::Maintain => 3,
        Repair::Unregister { .. } => 4,
        Repair::Register(_) => 5,
        Repair::RegisterMcp => 6,
    }
}

fn apply(config: &Config, claude: &ClaudeCode, repair: &Repair) -> anyhow::Result<String> {
    match repair {
        Repair::Layout => Ok(match crate::store::layout::settle(config)? {
            crate::store::layout::Settled::Moved { from } => format!(
                "moved the files of an earlier release from {} to {}",
                shown(&from),
                shown(&config.data_dir)
            ),
            _ => "nothing to move any more".into(),
        }),
        Repair::Salvage => salvage(config),
        Repair::Tighten(paths) => tighten(config, paths),
        Repair::Maintain => maintain(config),
        Repair::Register(path) => register(path, claude),
        Repair::Unregister { path, kept_in } => unregister(path, kept_in),
        Repair::RegisterMcp => register_mcp(config, claude),
    }
}

/// install-hooks' registration of the MCP server.
fn register_mcp(config: &Config, claude: &ClaudeCode) -> anyhow::Result<String> {
    use crate::settings::mcp::{self, Registered};
    let exe = std::env::current_exe()?;
    match mcp::register(config, claude, &exe, false) {
        Registered::Added => Ok(format!("registered {} as the MCP server", shown(&exe))),
        Registered::Repointed { from } => Ok(format!(
            "the MCP server now runs {} (it ran {from})",
            shown(&exe)
        )),
        Registered::Already => Ok("the MCP server was registered already".into()),
        Registered::NotOurs { command } => Err(anyhow::anyhow!(
            "an MCP server named claude-mem that is not ours is registered ({command}): left alone"
        )),
        Registered::NoClaude { command } => Err(anyhow::anyhow!(
            "no Claude Code found to register it with; run: {command}"
        )),
        Registered::Failed { why, command } => {
            Err(anyhow::anyhow!("{why}; run by hand: {command}"))
        }
        Registered::WouldRun { command } => Ok(format!("would run {command}")),
    }
}

fn salvage(config: &Config) -> anyhow::Result<String> {
    let done = integrity::salvage(config)?;
    let gaps = match done.gaps {
        0 => String::new(),
        n => format!(
            "; {} could not be read",
            plural(n as i64, "damaged stretch")
        ),
    };
    Ok(format!(
        "moved the damaged database to {} (delete it once you no longer need it); copied {} \
         from it into a new one{gaps}",
        shown(&done.aside),
        plural(done.rows as i64, "row"),
    ))
}

fn maintain(config: &Config) -> anyhow::Result<String> {
    let report = crate::maintain::run(config, false)?;
    if report.busy {
        return Ok("another claude-mem maintain is at it now".into());
    }
    let waiting = match report.waiting {
        0 => String::new(),
        n => format!("; {n} still waiting (see the log)"),
    };
    Ok(format!(
        "applied {}; WAL {} -> {}{waiting}",
        plural(report.applied as i64, "spilled event"),
        render::bytes(report.wal_before),
        render::bytes(report.wal_after),
    ))
}

/// install-hooks' merge on one file.
fn register(path: &Path, claude: &ClaudeCode) -> anyhow::Result<String> {
    let done = ours::register(path, false, claude)?;
    let count = |status: Status| {
        let changes = done.outcome.report.iter();
        changes.filter(|c| c.status == status).count() as i64
    };
    let mut did = Vec::new();
    for (n, what) in [
        (count(Status::Added), "added"),
        (count(Status::Updated), "repointed"),
    ] {
        if n > 0 {
            did.push(format!("{} {what}", plural(n, "hook")));
        }
    }
    Ok(format!(
        "{}: {}, running {}",
        shown(path),
        did.join(", "),
        shown(&done.exe)
    ))
}

/// uninstall-hooks' removal on one file.
fn unregister(path: &Path, kept_in: &[PathBuf]) -> anyhow::Result<String> {
    let outcome = update(path, false, false, |root| Ok(merge::uninstall(root)))?;
    let kept: Vec<String> = kept_in.iter().map(|p| shown(p)).collect();
    Ok(match outcome.written {
        Written::Replaced { .. } => format!(
            "took claude-mem's hooks out of {} ({} has them)",
            shown(path),
            kept.join(" and ")
        ),
        _ => format!("nothing to take out of {}", shown(path)),
    })
}

/// Closes our files and folders to other users; the data dir itself, which may be a link the
/// user made, through the same check the hooks make.
fn tighten(config: &Config, paths: &[PathBuf]) -> anyhow::Result<String> {
    let mut closed = 0;
    for path in paths {
        let changed = if *path == config.data_dir {
            crate::fsutil::our_dir(path)?
        } else {
            crate::fsutil::close_to_others(path)?
        };
        closed += usize::from(changed);
    }
    Ok(match closed {
        0 => "nothing was open to other users any more".into(),
        1 => "closed 1 file or folder to other users (folders 0700, files 0600)".into(),
        n => format!("closed {n} files and folders to other users (folders 0700, files 0600)"),
    })
}
