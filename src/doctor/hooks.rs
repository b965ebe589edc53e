//! The checks of Claude Code's side: the hooks in its settings files, the MCP server, its
//! version against the registered events, and thedotmack/claude-mem installed beside us.

use std::path::{Path, PathBuf};

use super::{Check, Repair, Verdict, shown};
use crate::claude::ClaudeCode;
use crate::config::Config;
use crate::health::claude::{Mcp, mcp};
use crate::health::hooks::{self, HookFile, Runs, Scope, what_runs};
use crate::render::bytes;
use crate::settings::ours::HOOKS;

/// One check per settings file that exists (and the user's always): are our hooks there, all
/// of them, each running an executable claude-mem?
pub fn hook_files(files: &[HookFile], exe: Option<&Path>, claude: &ClaudeCode) -> Vec<Check> {
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
    let mut found = Findings {
        verdict: Verdict::Ok,
        parts: vec![format!("{present} of {} hooks", HOOKS.len())],
        repairable: false,
        other_copy: false,
    };
    found.programs(file, exe);
    found.unregistered(file, optional);
    let message = format!("{}: {}", shown(&file.path), found.parts.join("; "));
    let check = Check::new("hooks", found.verdict, message);
    match (found.repairable, found.other_copy) {
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

/// What one settings file's hooks show, gathered part by part.
struct Findings {
    verdict: Verdict,
    parts: Vec<String>,
    /// `--fix` can mend it by registering this binary in the file.
    repairable: bool,
    /// A handler runs another existing claude-mem.
    other_copy: bool,
}

impl Findings {
    fn note(&mut self, verdict: Verdict, repairable: bool, part: String) {
        self.verdict = self.verdict.max(verdict);
        self.repairable |= repairable;
        self.parts.push(part);
    }

    /// What the handlers run, each program said once.
    fn programs(&mut self, file: &HookFile, exe: Option<&Path>) {
        let mut seen = Vec::new();
        for program in file.registered().flat_map(|s| &s.programs) {
            let runs = what_runs(program, exe);
            if seen.contains(&runs) {
                continue;
            }
            match &runs {
                Runs::ThisBinary => {}
                Runs::Missing(path) => {
                    self.note(
                        Verdict::Fail,
                        true,
                        format!("{} does not exist", shown(path)),
                    );
                }
                Runs::NotExecutable(path) => {
                    self.note(
                        Verdict::Fail,
                        true,
                        format!("{} cannot be run", shown(path)),
                    );
                }
                Runs::OtherCopy(path) => {
                    self.other_copy = true;
                    let part = format!("running another claude-mem, {}", shown(path));
                    self.note(Verdict::Warn, false, part);
                }
            }
            seen.push(runs);
        }
        if seen == [Runs::ThisBinary] {
            self.parts[0].push_str(", running this binary");
        }
    }

    /// The events of ours the file does not register: missing, or left out for a Claude Code
    /// that does not know them (fine), or left out when one that knows them is there now.
    fn unregistered(&mut self, file: &HookFile, optional: &[(&'static str, Option<String>)]) {
        let states = file.hooks.as_ref().and_then(|h| h.as_ref().ok());
        for state in states.into_iter().flatten().filter(|s| !s.registered) {
            let left_out = optional.iter().find(|(event, _)| *event == state.event);
            let (event, hook) = (state.event, state.hook);
            match (since(event), left_out) {
                (None, _) => {
                    self.note(
                        Verdict::Fail,
                        true,
                        format!("missing {event} (hook {hook})"),
                    );
                }
                (Some(_), Some((_, Some(why)))) => {
                    self.parts.push(format!("{event} not added: {why}"));
                }
                (Some(_), Some((_, None))) => {
                    let part = format!("missing {event}, which the installed Claude Code knows");
                    self.note(Verdict::Warn, true, part);
                }
                // Registered in another file.
                (Some(_), None) => {}
            }
        }
    }
}

/// The Claude Code version that first knows `event`, for events not every version knows.
fn since(event: &str) -> Option<crate::claude::Version> {
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
pub fn registered_once(files: &[HookFile]) -> Option<Check> {
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
/// exists. The repair registers this binary the way install-hooks does (`claude mcp add`).
pub fn mcp_server(exe: Option<&Path>) -> Option<Check> {
    let how = |check: Check| {
        check.repair(
            Repair::RegisterMcp,
            "registers this binary (claude mcp add --scope user claude-mem)",
        )
    };
    Some(match mcp()? {
        Mcp::NoFile(path) | Mcp::NotRegistered(path) => how(Check::new(
            "mcp",
            Verdict::Warn,
            format!(
                "claude-mem is not registered as an MCP server in {}: Claude cannot search the \
                 memory by itself",
                shown(&path)
            ),
        )),
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
            Runs::OtherCopy(other) => how(Check::new(
                "mcp",
                Verdict::Warn,
                format!(
                    "registered in {}, running another claude-mem, {}",
                    shown(&path),
                    shown(&other)
                ),
            )),
            Runs::Missing(p) | Runs::NotExecutable(p) => how(Check::new(
                "mcp",
                Verdict::Fail,
                format!(
                    "registered in {}, running {}, which cannot be run",
                    shown(&path),
                    shown(&p)
                ),
            )),
        },
    })
}

/// The Claude Code found, and whether it knows every event registered for it.
pub fn claude_code(files: &[HookFile], claude: &ClaudeCode) -> Check {
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
pub fn incumbent(config: &Config) -> Check {
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
        "keep one: `claude plugin disable {}` (keeps this one; `claude-mem import \
         --from-claude-mem` first copies its memory here) or `claude-mem uninstall-hooks` \
         (keeps that one); neither changes the other's files",
        crate::incumbent::PLUGIN
    ))
}

/// Our hooks in Codex, when they are there: whether the user reviewed them, without which
/// Codex skips them and records nothing, without a word.
pub fn codex() -> Option<Check> {
    let hooks = crate::health::codex::look()?;
    let path = shown(&hooks.path);
    if hooks.untrusted.is_empty() {
        return Some(Check::ok(
            "codex",
            format!("{} claude-mem hooks in {path}, reviewed", hooks.ours),
        ));
    }
    Some(
        Check::new(
            "codex",
            Verdict::Warn,
            format!(
                "{} of the {} claude-mem hooks in {path} are installed but not reviewed: Codex \
                 skips them and records nothing",
                hooks.untrusted.len(),
                hooks.ours
            ),
        )
        .fix("start codex, type /hooks and trust the claude-mem hooks"),
    )
}
