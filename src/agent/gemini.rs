//! Google's Gemini CLI: its hooks (in `settings.json`, in the nested shape of Claude Code's)
//! send Claude Code's fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `tool_name`, `tool_input`, `tool_response`) under events of its own names: BeforeAgent is
//! UserPromptSubmit, AfterTool PostToolUse, AfterAgent Stop (its `prompt_response` the turn's
//! last message). So an event is read where it lies and only renamed, in place; no copy of a
//! tool's output is made. Gemini names an MCP tool `mcp_<server>_<tool>`: ours take Claude
//! Code's form, so that the memory's own tools are never recorded. Run with `-p`, Gemini puts
//! the session-start context before the prompt it hands BeforeAgent (0.61.0, seen with the real
//! CLI): that is hook text, not the user's, and is cut off before the prompt is recorded or
//! searched for.
//!
//! Answers: Gemini reads `hookSpecificOutput.additionalContext` as Claude Code does (at
//! SessionStart and BeforeAgent), takes an empty stdout as success and shows `systemMessage`;
//! only an answer with nothing to say differs: it is empty.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::claude::{Event, Text, text};
use super::{Agent, quiet};
use crate::emit::{Answer, HookOutput};

/// Claude Code's name of the Gemini events claude-mem records.
fn claude_event(gemini: &str) -> Option<&'static str> {
    Some(match gemini {
        "SessionStart" => "SessionStart",
        "BeforeAgent" => "UserPromptSubmit",
        "AfterTool" => "PostToolUse",
        "AfterAgent" => "Stop",
        "SessionEnd" => "SessionEnd",
        _ => return None,
    })
}

/// The one field of AfterAgent that Claude Code names otherwise.
#[derive(Deserialize)]
struct AfterAgent<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    prompt_response: Text<'a>,
}

/// Reads Gemini's `event` (parsed from `input`) as Claude Code's, in place; `Err` says why it
/// is left out.
pub fn adapt<'a>(event: &mut Event<'a>, input: &'a [u8]) -> Result<(), &'static str> {
    let name = Event::get(&event.hook_event_name).ok_or("no hook_event_name")?;
    let claude = claude_event(name).ok_or("an event claude-mem does not record")?;
    if claude == "Stop" {
        let after: AfterAgent = serde_json::from_slice(input).map_err(|_| "not a JSON object")?;
        event.last_assistant_message = after.prompt_response;
    }
    event.hook_event_name = Some(Cow::Borrowed(claude));
    if claude == "UserPromptSubmit" {
        event.prompt = event.prompt.take().map(users_words);
    }
    if claude == "PostToolUse" && Event::get(&event.tool_use_id).is_none() {
        let at = Event::get(&event.timestamp).unwrap_or_default();
        let tool = Event::get(&event.tool_name).unwrap_or_default();
        let input = event.tool_input.map(RawValue::get);
        let len = event.tool_response.map_or(0, |r| r.get().len());
        let id = super::call_id(Agent::Gemini, at, tool, input, len);
        event.tool_use_id = Some(Cow::Owned(id));
    }
    super::ours_as_claudes(event, "mcp_");
    Ok(())
}

/// The prompt without the hooks' context that Gemini's `-p` puts before it:
/// `<hook_context>…</hook_context>` and a blank line. Gemini escapes every `<` of a hook's
/// context, so the first closing tag is the wrapper's own.
fn users_words(prompt: Cow<'_, str>) -> Cow<'_, str> {
    const OPEN: &str = "<hook_context>";
    const CLOSE: &str = "</hook_context>";
    let Some(end) = prompt.strip_prefix(OPEN).and_then(|rest| rest.find(CLOSE)) else {
        return prompt;
    };
    let after = OPEN.len() + end + CLOSE.len();
    let blank = if prompt[after..].starts_with("\n\n") {
        2
    } else {
        0
    };
    let from = after + blank;
    match prompt {
        Cow::Borrowed(text) => Cow::Borrowed(&text[from..]),
        Cow::Owned(mut text) => {
            text.drain(..from);
            Cow::Owned(text)
        }
    }
}

pub fn answer(answer: Answer) -> Answer {
    let output = match quiet(answer.output) {
        HookOutput::Context {
            event: "UserPromptSubmit",
            text,
        } => HookOutput::Context {
            event: "BeforeAgent",
            text,
        },
        other => other,
    };
    Answer {
        output,
        notice: answer.notice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapted(input: &str) -> Option<(String, Option<String>, Option<String>)> {
        let mut event = Event::parse(input.as_bytes()).unwrap();
        adapt(&mut event, input.as_bytes()).ok()?;
        let get = |t: &Text| t.as_deref().map(str::to_owned);
        Some((
            get(&event.hook_event_name).unwrap(),
            get(&event.tool_name),
            get(&event.last_assistant_message),
        ))
    }

    #[test]
    fn events_take_claude_codes_names_and_after_agent_its_last_message() {
        let tool =
            r#"{"hook_event_name":"AfterTool","session_id":"g","tool_name":"run_shell_command"}"#;
        let (name, tool, _) = adapted(tool).unwrap();
        let mut call = Event::parse(
            br#"{"hook_event_name":"AfterTool","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        )
        .unwrap();
        adapt(&mut call, b"{}").unwrap();
        let id = call.tool_use_id.as_deref().unwrap();
        assert!(id.starts_with("gemini-2026-01-01T00:00:00.000Z-"), "{id}");
        assert_eq!(
            (name.as_str(), tool.as_deref()),
            ("PostToolUse", Some("run_shell_command"))
        );
        let after = r#"{"hook_event_name":"AfterAgent","session_id":"g","prompt":"p",
                        "prompt_response":"It passes now.","stop_hook_active":false}"#;
        let (name, _, message) = adapted(after).unwrap();
        assert_eq!(
            (name.as_str(), message.as_deref()),
            ("Stop", Some("It passes now."))
        );
        assert!(adapted(r#"{"hook_event_name":"BeforeTool","session_id":"g"}"#).is_none());
    }

    #[test]
    fn the_session_start_context_before_a_prompt_is_not_the_users() {
        let prompt = |json: &str| {
            let mut event = Event::parse(json.as_bytes()).unwrap();
            adapt(&mut event, json.as_bytes()).unwrap();
            event.prompt.unwrap().into_owned()
        };
        let with = r#"{"hook_event_name":"BeforeAgent","prompt":
            "<hook_context>&lt;claude-mem-context&gt;\nold&lt;/claude-mem-context&gt;</hook_context>\n\nfix it"}"#;
        assert_eq!(prompt(with), "fix it");
        let bare = r#"{"hook_event_name":"BeforeAgent","prompt":"<hook_context>x</hook_context>"}"#;
        assert_eq!(prompt(bare), "");
        let own = r#"{"hook_event_name":"BeforeAgent","prompt":"fix <hook_context> parsing"}"#;
        assert_eq!(prompt(own), "fix <hook_context> parsing");
        let open = r#"{"hook_event_name":"BeforeAgent","prompt":"<hook_context> is a tag"}"#;
        assert_eq!(prompt(open), "<hook_context> is a tag");
    }

    #[test]
    fn our_own_mcp_tools_take_claude_codes_form() {
        let ours = r#"{"hook_event_name":"AfterTool","tool_name":"mcp_claude-mem_search"}"#;
        let (_, tool, _) = adapted(ours).unwrap();
        assert_eq!(tool.as_deref(), Some("mcp__claude-mem__search"));
        let theirs = r#"{"hook_event_name":"AfterTool","tool_name":"mcp_docs_search"}"#;
        assert_eq!(
            adapted(theirs).unwrap().1.as_deref(),
            Some("mcp_docs_search")
        );
    }

    #[test]
    fn the_prompts_context_is_named_as_gemini_names_the_event() {
        let context = HookOutput::Context {
            event: "UserPromptSubmit",
            text: "ctx".into(),
        };
        let out = answer(context.into()).output;
        assert_eq!(
            out,
            HookOutput::Context {
                event: "BeforeAgent",
                text: "ctx".into()
            }
        );
        assert_eq!(answer(HookOutput::Ack.into()).output, HookOutput::Nothing);
    }
}
