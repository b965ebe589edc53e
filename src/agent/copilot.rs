//! GitHub Copilot CLI: hooks registered under Claude Code's PascalCase event names
//! (`SessionStart`, `PostToolUse`, ...) get Claude Code's snake_case payloads (`hook_event_name`,
//! `session_id`, `cwd`, `tool_name` as Claude Code names the tool), so most events pass through
//! as they are. A tool call's result differs: Copilot sends `tool_result`, an object of
//! `result_type` and `text_result_for_llm`, where Claude Code sends `tool_response`; that one
//! event is rewritten, its text becoming the response (a result that is not a success, the
//! error of a PostToolUseFailure). Copilot's camelCase registrations (`postToolUse`, with
//! `toolArgs`) are not used: `install-hooks --agent copilot` writes PascalCase keys.
//!
//! Answers: Copilot reads context from a top-level `additionalContext` (the one of
//! `hookSpecificOutput` is ignored), for SessionStart and UserPromptSubmit; anything else is
//! answered with nothing. A notice stays in the log, as Copilot does not show a hook's message.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::claude::{Text, text};
use super::{Agent, quiet};
use crate::emit::{Answer, HookOutput};

/// A Copilot tool-call event, as far as it is read.
#[derive(Deserialize)]
struct ToolEvent<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    hook_event_name: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    session_id: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    cwd: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    transcript_path: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    timestamp: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    tool_name: Text<'a>,
    #[serde(borrow, default)]
    tool_input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_result: Option<ToolResult<'a>>,
    /// A PostToolUseFailure's own error, should Copilot send one.
    #[serde(borrow, default, deserialize_with = "text")]
    error: Text<'a>,
}

#[derive(Deserialize)]
struct ToolResult<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    result_type: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    text_result_for_llm: Text<'a>,
}

/// The same tool call as Claude Code would have sent it.
#[derive(Serialize)]
struct Claude<'a> {
    hook_event_name: &'static str,
    session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript_path: Option<&'a str>,
    tool_name: &'a str,
    tool_use_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_input: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_response: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

/// Whether an event of this name needs [`adapt`]: the tool calls, which carry `tool_result`.
pub fn rewrites(event_name: Option<&str>) -> bool {
    matches!(event_name, Some("PostToolUse" | "PostToolUseFailure"))
}

/// Claude Code's JSON of a Copilot tool call, or why it is left out.
pub fn adapt(input: &[u8]) -> Result<Vec<u8>, &'static str> {
    let e: ToolEvent = serde_json::from_slice(input).map_err(|_| "not a JSON object")?;
    let get = |field: &'_ Text<'_>| field.as_deref().filter(|s| !s.is_empty()).is_some();
    if !get(&e.session_id) || !get(&e.tool_name) {
        return Err("no session_id or tool_name");
    }
    let result = e.tool_result.as_ref();
    let text = result.and_then(|r| r.text_result_for_llm.as_deref());
    let failed = e.hook_event_name.as_deref() == Some("PostToolUseFailure")
        || result
            .and_then(|r| r.result_type.as_deref())
            .is_some_and(|kind| kind != "success");
    let error = e.error.as_deref().or(text);
    let claude = Claude {
        hook_event_name: if failed {
            "PostToolUseFailure"
        } else {
            "PostToolUse"
        },
        session_id: e.session_id.as_deref().unwrap_or_default(),
        cwd: e.cwd.as_deref(),
        transcript_path: e.transcript_path.as_deref(),
        tool_name: e.tool_name.as_deref().unwrap_or_default(),
        tool_use_id: call_id(&e, text),
        tool_input: e.tool_input,
        tool_response: text.filter(|_| !failed),
        error: error.filter(|_| failed),
    };
    serde_json::to_vec(&claude).map_err(|_| "could not be rewritten")
}

/// The call's id (Copilot sends none): see [`super::call_id`].
fn call_id(e: &ToolEvent, result: Option<&str>) -> String {
    let at = e.timestamp.as_deref().unwrap_or_default();
    let tool = e.tool_name.as_deref().unwrap_or_default();
    let input = e.tool_input.map(RawValue::get);
    super::call_id(Agent::Copilot, at, tool, input, result.map_or(0, str::len))
}

pub fn answer(answer: Answer) -> Answer {
    let output = match quiet(answer.output) {
        HookOutput::Context { text, .. } => HookOutput::TopLevelContext(text),
        other => other,
    };
    output.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapted(input: &str) -> serde_json::Value {
        serde_json::from_slice(&adapt(input.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn a_tool_result_becomes_claude_codes_tool_response() {
        let v = adapted(
            r#"{"hook_event_name":"PostToolUse","session_id":"s1","timestamp":"2026-01-01T00:00:00Z",
                "cwd":"/w/app","tool_name":"Bash","tool_input":{"command":"ls"},
                "tool_result":{"result_type":"success","text_result_for_llm":"a\nb"}}"#,
        );
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["tool_response"], "a\nb");
        assert_eq!(v["tool_input"]["command"], "ls");
        assert_eq!(v["cwd"], "/w/app");
        assert!(v.get("error").is_none());
        let id = v["tool_use_id"].as_str().unwrap();
        assert!(id.starts_with("copilot-2026-01-01T00:00:00Z-"), "{id}");
        let other = adapted(
            r#"{"hook_event_name":"PostToolUse","session_id":"s1","timestamp":"2026-01-01T00:00:00Z",
                "tool_name":"Bash","tool_input":{"command":"ls -a"}}"#,
        );
        assert_ne!(
            other["tool_use_id"], v["tool_use_id"],
            "another call, another id"
        );
    }

    #[test]
    fn a_result_that_is_not_a_success_is_a_failure_with_its_text_as_the_error() {
        for input in [
            r#"{"hook_event_name":"PostToolUse","session_id":"s1","tool_name":"Bash",
                "tool_result":{"result_type":"failure","text_result_for_llm":"denied"}}"#,
            r#"{"hook_event_name":"PostToolUseFailure","session_id":"s1","tool_name":"Bash",
                "error":"denied"}"#,
        ] {
            let v = adapted(input);
            assert_eq!(v["hook_event_name"], "PostToolUseFailure", "{input}");
            assert_eq!(v["error"], "denied", "{input}");
            assert!(v.get("tool_response").is_none(), "{input}");
        }
    }

    #[test]
    fn without_a_session_or_a_tool_it_is_left_out() {
        for input in [
            r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
            r#"{"hook_event_name":"PostToolUse","session_id":"s"}"#,
            "[]",
        ] {
            assert!(adapt(input.as_bytes()).is_err(), "{input}");
        }
    }

    #[test]
    fn context_goes_back_top_level_and_nothing_else_is_said() {
        let context = HookOutput::Context {
            event: "UserPromptSubmit",
            text: "ctx".into(),
        };
        assert_eq!(
            answer(context.into()).output,
            HookOutput::TopLevelContext("ctx".into())
        );
        assert_eq!(answer(HookOutput::Ack.into()).output, HookOutput::Nothing);
        let noticed = Answer {
            output: HookOutput::Ack,
            notice: Some("disk full".into()),
        };
        assert_eq!(answer(noticed).notice, None);
    }
}
