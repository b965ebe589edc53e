//! The coding agents whose hooks run `claude-mem hook <name>`, and how each one's events and
//! answers differ from Claude Code's.
//!
//! Every agent's event is read into the one shape the hooks decide on, Claude Code's
//! ([`claude`]), and every answer is worded as that agent's parser takes it, so that nothing
//! below this layer knows which agent spoke. The registered command names its agent
//! (`hook capture --agent codex`); without the flag the event is Claude Code's, unless its
//! shape says otherwise: Cursor runs the hooks of `~/.claude/settings.json` with its own
//! payloads, and a Codex hooks file written by hand runs ours without the flag. Claude Code's
//! and Codex's events pass through as they are (no copy), and so do Copilot's but its tool
//! calls; a Cursor event is rewritten, once; a Gemini event is renamed in place, and so is an
//! OpenCode tool call of ours. A Copilot, Gemini or OpenCode event is told only by the flag:
//! none runs Claude Code's hooks, and their payloads carry nothing Claude Code's could not.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod opencode;

use crate::emit::{Answer, HookOutput};

/// An agent claude-mem records, by the name its sessions are recorded under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Cursor,
    Copilot,
    Gemini,
    OpenCode,
}

impl Agent {
    pub const ALL: [Agent; 6] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Gemini,
        Agent::OpenCode,
    ];

    /// The name sessions record, `--agent` takes and the listings show.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => crate::ops::CLAUDE_CODE,
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// What a session's row records: nothing for Claude Code, the column's default, so that
    /// its writes (and spill files) stay as they were before agents were told apart.
    pub fn recorded(self) -> Option<String> {
        (self != Agent::ClaudeCode).then(|| self.name().to_string())
    }

    /// Whether the agent takes context with a prompt. Cursor's `beforeSubmitPrompt` can only
    /// let the prompt through or stop it: per-prompt recall is not run for it.
    pub fn takes_prompt_context(self) -> bool {
        self != Agent::Cursor
    }

    /// The agent of an event whose command names none, by its shape: Claude Code names its
    /// events in PascalCase, Cursor in camelCase; Codex sends Claude Code's, with a `turn_id`.
    pub fn by_shape(event: &claude::Event) -> Agent {
        let first = claude::Event::get(&event.hook_event_name).and_then(|n| n.bytes().next());
        match first {
            Some(first) if first.is_ascii_lowercase() => Agent::Cursor,
            _ if claude::Event::get(&event.turn_id).is_some() => Agent::Codex,
            _ => Agent::ClaudeCode,
        }
    }

    /// The answer worded for this agent. `close` ends every context text (the wrapper's tag),
    /// which a cut must keep.
    pub fn answer(self, answer: Answer, close: &str) -> Answer {
        match self {
            Agent::ClaudeCode => answer,
            Agent::Codex => codex::answer(answer, close),
            Agent::Cursor => cursor::answer(answer),
            Agent::Copilot => copilot::answer(answer),
            Agent::Gemini => gemini::answer(answer),
            Agent::OpenCode => opencode::answer(answer),
        }
    }
}

/// The agent `hook <name>`'s arguments after the name select: none (Claude Code's
/// registration), `--agent NAME` or `--agent=NAME`. `Err` for anything else, which the hook
/// takes as not its own.
pub fn named(rest: &[&str]) -> Result<Option<Agent>, ()> {
    let name = match rest {
        [] => return Ok(None),
        ["--agent", name] => *name,
        [flag] => flag.strip_prefix("--agent=").ok_or(())?,
        _ => return Err(()),
    };
    Agent::from_name(name).map(Some).ok_or(())
}

/// An id for a tool call of an agent that sends none (Copilot, Gemini): the queue keeps one
/// row per call id of a session (an event sent twice is stored once), and `sessions` counts
/// the calls by it. The call's time (to the millisecond), its tool and input and the length of
/// its result: two calls share it only when they are the same call at the same moment. The
/// result is measured, not read, so that a 5 MB output costs nothing here. The hash is FNV-1a,
/// the same in every build: std's hasher is not promised to stay the same across Rust
/// releases, and an event sent again after an upgrade must get the id it got before. Each
/// part goes in after its length, so that no two tuples of parts read as the same bytes.
fn call_id(agent: Agent, at: &str, tool: &str, input: Option<&str>, result_len: usize) -> String {
    let input = input.unwrap_or_default();
    let len = |n: usize| (n as u64).to_le_bytes();
    let (tool_len, input_len, result_len) = (len(tool.len()), len(input.len()), len(result_len));
    let parts: [&[u8]; 5] = [
        &tool_len,
        tool.as_bytes(),
        &input_len,
        input.as_bytes(),
        &result_len,
    ];
    let hash = crate::config::fnv1a(parts.into_iter().flatten());
    format!("{}-{at}-{hash:016x}", agent.name())
}

/// An answer with nothing to say is no output at all: the agents that are not Claude Code
/// take an empty stdout as "go on", and some refuse Claude Code's acknowledgement.
fn quiet(output: HookOutput) -> HookOutput {
    match output {
        HookOutput::Ack => HookOutput::Nothing,
        other => other,
    }
}

/// Gives an MCP tool of ours, as the agent names it (`prefix`, our server's name, `_`, the
/// tool), Claude Code's name, in place: what skips and records our tools knows that one.
fn ours_as_claudes(event: &mut claude::Event, prefix: &str) {
    let ours = claude::Event::get(&event.tool_name).and_then(|t| {
        t.strip_prefix(prefix)?
            .strip_prefix(crate::privacy::SERVER_NAME)?
            .strip_prefix('_')
    });
    if let Some(tool) = ours {
        let name = format!("mcp__{}__{tool}", crate::privacy::SERVER_NAME);
        event.tool_name = Some(std::borrow::Cow::Owned(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_names_an_agent_or_the_hook_is_not_ours() {
        assert_eq!(named(&[]), Ok(None));
        assert_eq!(named(&["--agent", "codex"]), Ok(Some(Agent::Codex)));
        assert_eq!(named(&["--agent=cursor"]), Ok(Some(Agent::Cursor)));
        assert_eq!(named(&["--agent", "vim"]), Err(()));
        assert_eq!(named(&["--agent"]), Err(()));
        assert_eq!(named(&["stray"]), Err(()));
    }

    #[test]
    fn a_call_id_is_pinned_to_its_parts_not_to_the_rust_release() {
        let id = call_id(
            Agent::Gemini,
            "2026-11-29T18:42:51.540Z",
            "run_shell_command",
            Some(r#"{"command":"ls"}"#),
            42,
        );
        assert_eq!(id, "gemini-2026-11-29T18:42:51.540Z-49259ff6b18646bc");
        let other = |tool, input| call_id(Agent::Copilot, "t", tool, input, 0);
        assert_ne!(other("ab", Some("c")), other("a", Some("bc")));
        assert_ne!(other("a", None), other("a", Some("x")));
    }

    #[test]
    fn shapes() {
        let shape = |json: &str| Agent::by_shape(&claude::Event::parse(json.as_bytes()).unwrap());
        assert_eq!(shape(r#"{"hook_event_name":"postToolUse"}"#), Agent::Cursor);
        assert_eq!(
            shape(r#"{"hook_event_name":"PostToolUse"}"#),
            Agent::ClaudeCode
        );
        let codex = r#"{"hook_event_name":"PostToolUse","turn_id":"t1"}"#;
        assert_eq!(shape(codex), Agent::Codex);
        assert_eq!(shape("{}"), Agent::ClaudeCode);
    }
}
