//! The pure part of install and uninstall: add our handlers to, or take them out of, a parsed
//! settings object, and say what changed.
//!
//! Everything that is not ours stays where it is: other keys, other tools' groups, other
//! handlers inside a group we share. What we add goes after what is there, in a group of its
//! own, so key order holds and no foreign group is edited. A handler of ours that is already
//! there is repointed in place (only its program path changes), never duplicated.

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use super::command::parse_ours;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Added,
    /// Our handler was there with another program path, now replaced by ours.
    Updated,
    Present,
}

/// One line of the report: which hook on which event, and what happened to it.
#[derive(Debug, Clone)]
pub struct Change {
    pub event: String,
    pub hook: String,
    pub status: Status,
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
        .filter_map(|handler| our_command(handler.as_object()?))
        .filter_map(parse_ours)
        .any(|ours| ours.hook == registration.hook)
}

/// Registers `wanted`, running `program` (already quoted). Also repoints any other handler of
/// ours to `program`, so a moved binary leaves no stale path behind.
pub fn install(
    root: &mut Map<String, Value>,
    program: &str,
    wanted: &[Registration],
) -> Result<Vec<Change>> {
    let hooks = match root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(hooks) => hooks,
        other => bail!("its \"hooks\" value is {}, not an object", kind(other)),
    };
    for registration in wanted {
        if let Some(groups) = hooks.get(registration.event).filter(|g| !g.is_array()) {
            bail!(
                "its \"hooks.{}\" value is {}, not an array",
                registration.event,
                kind(groups)
            );
        }
    }

    let mut repointed = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        for handler in handlers_mut(groups) {
            let Some(command) = our_command(handler) else {
                continue;
            };
            let Some(ours) = parse_ours(command) else {
                continue;
            };
            let updated = format!(
                "{}{program}{}",
                &command[..ours.program_start],
                &command[ours.program_end..]
            );
            if updated != command {
                repointed.push((event.clone(), ours.hook.to_string()));
                handler.insert("command".into(), Value::String(updated));
            }
        }
    }

    let mut changes = Vec::new();
    for registration in wanted {
        let groups = hooks
            .entry(registration.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let present = handlers_mut(groups).any(|handler| {
            our_command(handler)
                .and_then(parse_ours)
                .is_some_and(|ours| ours.hook == registration.hook)
        });
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
/// `hooks` object that this leaves empty (but none that were empty already).
pub fn uninstall(root: &mut Map<String, Value>) -> Vec<Change> {
    let mut removed = Vec::new();
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return removed;
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
            handlers.retain(|handler| {
                let ours = handler
                    .as_object()
                    .and_then(our_command)
                    .and_then(parse_ours);
                if let Some(ours) = &ours {
                    removed.push(Change {
                        event: event.clone(),
                        hook: ours.hook.to_string(),
                        status: Status::Present,
                    });
                }
                ours.is_none()
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
    removed
}

/// The command of a command handler (a handler without `type` is taken as one).
fn our_command(handler: &Map<String, Value>) -> Option<&str> {
    match handler.get("type") {
        None => {}
        Some(Value::String(t)) if t == "command" => {}
        Some(_) => return None,
    }
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

fn push_group(groups: &mut Value, registration: &Registration, program: &str) {
    let handler = json!({
        "type": "command",
        "command": format!("{program} hook {}", registration.hook),
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
