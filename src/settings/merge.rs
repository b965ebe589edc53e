//! The pure part of install and uninstall: add our handlers to, or take them out of, a parsed
//! settings object, and say what changed.
//!
//! Everything that is not ours stays where it is: other keys, other tools' groups, other
//! handlers inside a group we share. What we add goes after what is there, in a group of its
//! own, so key order holds and no foreign group is edited. A handler of ours that is already
//! there is repointed in place (only its program path changes), never duplicated.

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use super::chain::{Removal, find_ours, remove_ours};
use super::command::{Program, is_our_program};
use super::document::kind;

/// Every handler we create carries this timeout (seconds). Without one, all SessionEnd hooks
/// share 1.5 s and the others get 600 s.
pub const TIMEOUT_SECS: u64 = 10;

/// One hook we register: on `event`, run `claude-mem hook <hook>`.
#[derive(Debug, Clone, Copy)]
pub struct Registration {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub hook: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Added,
    /// Our handler was there with another program path, now replaced by ours.
    Updated,
    Present,
    /// Uninstall took the whole handler out.
    Removed,
    /// Uninstall took our part out of a longer command line; this is what is left.
    Unchained {
        left: String,
    },
    /// Uninstall left this command line in place, for the reason given.
    Kept {
        command: String,
        why: String,
    },
}

/// One line of the report: which hook on which event, and what happened to it.
#[derive(Debug, Clone)]
pub struct Change {
    pub event: String,
    pub hook: String,
    pub status: Status,
}

/// The hooks of ours that a handler runs: in shell form (`command` is a command line, which
/// may hold more than our part) or in exec form (`command` is the program, `args` its
/// arguments, and no shell reads them).
fn our_hooks(handler: &Map<String, Value>) -> Vec<&str> {
    let Some(command) = our_command(handler) else {
        return Vec::new();
    };
    match handler.get("args") {
        Some(Value::Array(args)) => {
            let hook = match args.as_slice() {
                [Value::String(word), rest @ ..] if word == "hook" => {
                    rest.first().and_then(Value::as_str).unwrap_or("")
                }
                _ => return Vec::new(),
            };
            if is_our_program(command) {
                vec![hook]
            } else {
                Vec::new()
            }
        }
        _ => find_ours(command)
            .into_iter()
            .map(|ours| ours.hook)
            .collect(),
    }
}

/// Whether a handler of ours for `registration` is in the file, whatever its binary path.
pub fn is_registered(root: &Map<String, Value>, registration: &Registration) -> bool {
    let Some(Value::Array(groups)) = root
        .get("hooks")
        .and_then(|hooks| hooks.get(registration.event))
    else {
        return false;
    };
    groups
        .iter()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(Value::as_object)
        .any(|handler| our_hooks(handler).contains(&registration.hook))
}

/// Points every command of ours in `handler` at `program`; the hooks it changed.
fn repoint(handler: &mut Map<String, Value>, program: &Program) -> Vec<String> {
    let Some(command) = our_command(handler) else {
        return Vec::new();
    };
    let hooks: Vec<String> = our_hooks(handler).iter().map(|h| h.to_string()).collect();
    let updated = if handler.get("args").is_some() {
        program.exec.clone()
    } else {
        // Only the program words change; the rest of the line (a prefix, other commands) stays.
        let mut line = command.to_string();
        for ours in find_ours(command).iter().rev() {
            line.replace_range(ours.program_start..ours.program_end, &program.shell);
        }
        line
    };
    if hooks.is_empty() || updated == command {
        return Vec::new();
    }
    handler.insert("command".into(), Value::String(updated));
    hooks
}

/// Registers `wanted`, running `program`. Also repoints any other handler of ours to
/// `program`, so a moved binary leaves no stale path behind.
pub fn install(
    root: &mut Map<String, Value>,
    program: &Program,
    wanted: &[Registration],
) -> Result<Vec<Change>> {
    let hooks = match root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(hooks) => hooks,
        other => bail!("its \"hooks\" value is {}, not an object", kind(other)),
    };

    let mut repointed = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        for handler in handlers_mut(groups) {
            for hook in repoint(handler, program) {
                repointed.push((event.clone(), hook));
            }
        }
    }

    let mut changes = Vec::new();
    for registration in wanted {
        let groups = hooks
            .entry(registration.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let present =
            handlers_mut(groups).any(|handler| our_hooks(handler).contains(&registration.hook));
        let was_repointed = repointed
            .iter()
            .position(|(event, hook)| event == registration.event && hook == registration.hook);
        let status = match (present, was_repointed) {
            (false, _) => {
                push_group(groups, registration, program);
                Status::Added
            }
            (true, Some(_)) => Status::Updated,
            (true, None) => Status::Present,
        };
        if let Some(index) = was_repointed {
            repointed.remove(index);
        }
        changes.push(Change {
            event: registration.event.to_string(),
            hook: registration.hook.to_string(),
            status,
        });
    }
    // Handlers of ours on events we no longer register (kept, but pointed at this binary).
    changes.extend(repointed.into_iter().map(|(event, hook)| Change {
        event,
        hook,
        status: Status::Updated,
    }));
    Ok(changes)
}

/// Removes every handler of ours, whatever program path it carries, and the groups, events and
/// `hooks` object that this leaves empty (but none that were empty already). Our part of a
/// longer command line is taken out where that is exact, or else the line is kept and said so.
pub fn uninstall(root: &mut Map<String, Value>) -> Vec<Change> {
    let mut changes = Vec::new();
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return changes;
    };
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let groups_before = groups.len();
        groups.retain_mut(|group| {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                return true;
            };
            let handlers_before = handlers.len();
            handlers.retain_mut(|handler| match handler.as_object_mut() {
                Some(handler) => keep_after_uninstall(event, handler, &mut changes),
                None => true,
            });
            !(handlers.is_empty() && handlers_before > 0)
        });
        if groups.is_empty() && groups_before > 0 {
            emptied_events.push(event.clone());
        }
    }
    for event in &emptied_events {
        hooks.shift_remove(event);
    }
    if hooks.is_empty() && !emptied_events.is_empty() {
        root.shift_remove("hooks");
    }
    changes
}

/// Takes our part out of one handler; whether the handler stays.
fn keep_after_uninstall(
    event: &str,
    handler: &mut Map<String, Value>,
    changes: &mut Vec<Change>,
) -> bool {
    let hooks: Vec<String> = our_hooks(handler).iter().map(|h| h.to_string()).collect();
    let Some(command) = our_command(handler).filter(|_| !hooks.is_empty()) else {
        return true;
    };
    let removal = if handler.get("args").is_some() {
        Removal::Whole
    } else {
        remove_ours(command)
    };
    let status = match removal {
        Removal::NotOurs => return true,
        Removal::Whole => Status::Removed,
        Removal::Rest(left) => Status::Unchained { left },
        Removal::Kept(why) => Status::Kept {
            command: command.to_string(),
            why,
        },
    };
    let stays = match &status {
        Status::Unchained { left } => {
            handler.insert("command".into(), Value::String(left.clone()));
            true
        }
        Status::Kept { .. } => true,
        _ => false,
    };
    changes.extend(hooks.into_iter().map(|hook| Change {
        event: event.to_string(),
        hook,
        status: status.clone(),
    }));
    stays
}

/// The command of a command handler.
fn our_command(handler: &Map<String, Value>) -> Option<&str> {
    (handler.get("type")?.as_str()? == "command").then_some(())?;
    handler.get("command")?.as_str()
}

/// The handler objects of an event's groups, skipping anything not shaped like one.
fn handlers_mut(groups: &mut Value) -> impl Iterator<Item = &mut Map<String, Value>> {
    groups
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|group| group.get_mut("hooks")?.as_array_mut())
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn push_group(groups: &mut Value, registration: &Registration, program: &Program) {
    let handler = json!({
        "type": "command",
        "command": format!("{} hook {}", program.shell, registration.hook),
        "timeout": TIMEOUT_SECS,
    });
    let group = match registration.matcher {
        Some(matcher) => json!({"matcher": matcher, "hooks": [handler]}),
        None => json!({"hooks": [handler]}),
    };
    if let Value::Array(groups) = groups {
        groups.push(group);
    }
}
