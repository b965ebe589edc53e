//! OpenCode: it has no command hooks, so claude-mem's plugin for it (written by `install-hooks
//! --agent opencode`, `settings/opencode_plugin.js`) runs ours on OpenCode's events, and sends
//! each in Claude Code's fields and event names (`session_id`, `cwd`, `prompt`, `tool_name`,
//! `tool_input`, `tool_response`, `tool_use_id`, `last_assistant_message`). So an event is read
//! where it lies; only OpenCode's name of an MCP tool of ours (`claude-mem_search`, its server
//! and tool joined by `_`) takes Claude Code's form, so that the memory's own tools are never
//! recorded.
//!
//! Answers: the plugin reads Claude Code's `hookSpecificOutput.additionalContext` and adds it
//! to the system prompt; an answer with nothing to say is empty. OpenCode shows nothing of a
//! plugin's, so a notice stays in the log.

use super::claude::Event;
use super::quiet;
use crate::emit::Answer;

/// Gives an MCP tool of ours Claude Code's name, in place.
pub fn adapt(event: &mut Event) {
    super::ours_as_claudes(event, "");
}

pub fn answer(answer: Answer) -> Answer {
    Answer {
        output: quiet(answer.output),
        notice: answer.notice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::HookOutput;

    fn tool_of(input: &str) -> Option<String> {
        let mut event = Event::parse(input.as_bytes()).unwrap();
        adapt(&mut event);
        event.tool_name.as_deref().map(str::to_owned)
    }

    #[test]
    fn our_own_mcp_tools_take_claude_codes_form_and_others_stay() {
        let ours = r#"{"hook_event_name":"PostToolUse","tool_name":"claude-mem_search"}"#;
        assert_eq!(tool_of(ours).as_deref(), Some("mcp__claude-mem__search"));
        let theirs = r#"{"hook_event_name":"PostToolUse","tool_name":"docs_search"}"#;
        assert_eq!(tool_of(theirs).as_deref(), Some("docs_search"));
        let bash = r#"{"hook_event_name":"PostToolUse","tool_name":"bash"}"#;
        assert_eq!(tool_of(bash).as_deref(), Some("bash"));
    }

    #[test]
    fn nothing_to_say_is_an_empty_answer() {
        assert_eq!(answer(HookOutput::Ack.into()).output, HookOutput::Nothing);
    }
}
