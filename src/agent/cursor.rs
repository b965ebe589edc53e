//! Cursor: its `~/.cursor/hooks.json` (and, with "third-party configs" on, the hooks of
//! `~/.claude/settings.json`) run our hooks with Cursor's own payloads: camelCase event names,
//! the session as `conversation_id`, the project as `workspace_roots` (`cwd` is empty outside
//! a shell call), a tool's output as a string of JSON. Each is rewritten once into Claude
//! Code's event. An event with no session or no absolute project folder is left out: filed
//! under a wrong or empty project it could never be found, or would be found in the wrong one.
//!
//! Answers: `sessionStart` takes the context as `additional_context`; every other event is
//! answered with nothing (an empty stdout lets the agent go on). `beforeSubmitPrompt` can only
//! let a prompt through or stop it, so per-prompt recall is not run for Cursor.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::claude::{Text, text};
use super::quiet;
use crate::emit::{Answer, HookOutput};

/// A Cursor event, as far as it is read.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    hook_event_name: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    conversation_id: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    session_id: Text<'a>,
    #[serde(borrow, default)]
    workspace_roots: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "text")]
    cwd: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    transcript_path: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    model: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    prompt: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    tool_name: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    tool_use_id: Text<'a>,
    #[serde(borrow, default)]
    tool_input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_output: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "text")]
    error_message: Text<'a>,
    /// `afterAgentResponse`: the agent's message.
    #[serde(borrow, default, deserialize_with = "text")]
    text: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    reason: Text<'a>,
}

/// The same event as Claude Code would have sent it.
#[derive(Serialize)]
struct Claude<'a> {
    hook_event_name: &'static str,
    session_id: &'a str,
    cwd: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_input: Option<Cow<'a, RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_response: Option<Cow<'a, RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_assistant_message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// A Cursor event read into Claude Code's.
pub struct Adapted {
    /// Claude Code's JSON of the event.
    pub json: Vec<u8>,
    /// The workspace's folder: the session's project, whatever else the environment says.
    pub project: String,
}

/// Why a Cursor event is left out.
pub type Skipped = &'static str;

/// Claude Code's event for Cursor's `input`, or why there is none.
pub fn adapt(input: &[u8]) -> Result<Adapted, Skipped> {
    let e: Event = serde_json::from_slice(input).map_err(|_| "not a JSON object")?;
    let get = |field: &Text<'_>| {
        field
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let name = get(&e.hook_event_name).ok_or("no hook_event_name")?;
    let event = claude_event(&name).ok_or("an event claude-mem does not record")?;
    let session = e.conversation_id.as_deref().filter(|s| !s.is_empty());
    let session = session
        .or(e.session_id.as_deref().filter(|s| !s.is_empty()))
        .ok_or("no conversation_id")?;
    let project = workspace(e.workspace_roots)
        .or_else(|| get(&e.cwd).filter(|dir| absolute(dir)))
        .ok_or("no workspace_roots nor cwd to file it under")?;
    let cwd = e
        .cwd
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or(&project);
    let stop = event == "Stop";
    let claude = Claude {
        hook_event_name: event,
        session_id: session,
        cwd,
        transcript_path: e.transcript_path.as_deref().filter(|s| !s.is_empty()),
        model: e.model.as_deref(),
        source: (event == "SessionStart").then_some("startup"),
        prompt: e.prompt.as_deref(),
        tool_name: e.tool_name.as_deref().map(tool_name),
        tool_use_id: e.tool_use_id.as_deref(),
        tool_input: e.tool_input.map(unwrapped),
        tool_response: e.tool_output.map(unwrapped),
        error: e.error_message.as_deref(),
        last_assistant_message: e.text.as_deref().filter(|_| stop),
        reason: e.reason.as_deref(),
    };
    let json = serde_json::to_vec(&claude).map_err(|_| "could not be rewritten")?;
    Ok(Adapted { json, project })
}

/// Claude Code's name of the Cursor events claude-mem records. `afterAgentResponse` carries
/// the turn's last message, as Claude Code's Stop does; `stop` (which does not) is what Cursor
/// sends through Claude Code's registration of Stop. `install-hooks --agent cursor` registers
/// only the first, so that a turn asks for one summary.
fn claude_event(cursor: &str) -> Option<&'static str> {
    Some(match cursor {
        "sessionStart" => "SessionStart",
        "beforeSubmitPrompt" => "UserPromptSubmit",
        "postToolUse" => "PostToolUse",
        "postToolUseFailure" => "PostToolUseFailure",
        "afterAgentResponse" | "stop" => "Stop",
        "sessionEnd" => "SessionEnd",
        _ => return None,
    })
}

/// The first workspace root, when it is an absolute path.
fn workspace(roots: Option<&RawValue>) -> Option<String> {
    let roots: Vec<Cow<str>> = serde_json::from_str(roots?.get()).ok()?;
    let first = roots.into_iter().next()?;
    absolute(&first).then(|| first.into_owned())
}

fn absolute(dir: &str) -> bool {
    std::path::Path::new(dir).is_absolute()
}

/// Cursor names an MCP tool `MCP:server:tool`; Claude Code `mcp__server__tool`, which is how
/// the hooks tell the memory's own tools (never recorded) from others.
fn tool_name(name: &str) -> Cow<'_, str> {
    match name
        .strip_prefix("MCP:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((server, tool)) => Cow::Owned(format!("mcp__{server}__{tool}")),
        None => Cow::Borrowed(name),
    }
}

/// A tool's input or output that Cursor sends as a string of JSON, as that JSON; any other
/// value (a plain string of output included) as it is.
fn unwrapped(raw: &RawValue) -> Cow<'_, RawValue> {
    let inner = raw
        .get()
        .starts_with('"')
        .then(|| serde_json::from_str::<String>(raw.get()).ok())
        .flatten()
        .filter(|s| matches!(s.trim_start().as_bytes().first(), Some(b'{' | b'[')))
        .and_then(|s| RawValue::from_string(s).ok());
    match inner {
        Some(json) => Cow::Owned(json),
        None => Cow::Borrowed(raw),
    }
}

pub fn answer(answer: Answer) -> Answer {
    let output = match quiet(answer.output) {
        HookOutput::Context {
            event: "SessionStart",
            text,
        } => HookOutput::AdditionalContext(text),
        HookOutput::Context { .. } => HookOutput::Nothing,
        other => other,
    };
    // Cursor shows no message of a hook's to the user: the notice stays in the log.
    output.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapted(input: &str) -> serde_json::Value {
        serde_json::from_slice(&adapt(input.as_bytes()).unwrap().json).unwrap()
    }

    #[test]
    fn a_tool_call_becomes_claude_codes_with_its_output_as_json() {
        let v = adapted(
            r#"{"hook_event_name":"postToolUse","conversation_id":"c1","cwd":"",
                "workspace_roots":["/w/app"],"tool_name":"Shell",
                "tool_input":{"command":"ls"},"tool_output":"{\"exit\":0}"}"#,
        );
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["session_id"], "c1");
        assert_eq!(v["cwd"], "/w/app");
        assert_eq!(v["tool_response"]["exit"], 0);
        assert_eq!(v["tool_input"]["command"], "ls");
    }

    #[test]
    fn plain_output_stays_a_string_and_mcp_names_take_claude_codes_form() {
        let v = adapted(
            r#"{"hook_event_name":"postToolUse","conversation_id":"c1",
                "workspace_roots":["/w"],"tool_name":"MCP:claude-mem:search",
                "tool_output":"total 0"}"#,
        );
        assert_eq!(v["tool_response"], "total 0");
        assert_eq!(v["tool_name"], "mcp__claude-mem__search");
    }

    #[test]
    fn without_a_session_or_a_project_it_is_left_out() {
        for input in [
            r#"{"hook_event_name":"postToolUse","workspace_roots":["/w"]}"#,
            r#"{"hook_event_name":"postToolUse","conversation_id":"c","cwd":""}"#,
            r#"{"hook_event_name":"postToolUse","conversation_id":"c","workspace_roots":["rel"]}"#,
            r#"{"hook_event_name":"afterFileEdit","conversation_id":"c","workspace_roots":["/w"]}"#,
        ] {
            assert!(adapt(input.as_bytes()).is_err(), "{input}");
        }
    }
}
