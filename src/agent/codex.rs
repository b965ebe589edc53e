//! OpenAI's Codex CLI: its hooks send Claude Code's events (the same snake_case fields, the
//! same event names), so its events pass through as they are. Its answers differ: Codex's
//! parser fails a PostToolUse hook whose answer says `suppressOutput` ("hook: PostToolUse
//! Failed", although the row is stored), and takes an empty stdout as success, so an answer
//! with nothing to say is empty. Context goes back as Claude Code's `additionalContext`, but
//! past about 2,500 tokens (Codex counts a token as 4 bytes) Codex cuts the text and spills
//! the rest to a file the model never reads: a context is cut here, to whole lines, first.

use super::quiet;
use crate::emit::{Answer, HookOutput};

/// The most bytes of context handed to Codex: under its 2,500-token (10,000-byte) limit,
/// with room for what Codex adds around it.
pub const CONTEXT_MAX_BYTES: usize = 9_000;

/// What is said where lines were left out.
const CUT: &str = "(more was left out to fit Codex's limit on a hook's context)\n";

pub fn answer(answer: Answer, close: &str) -> Answer {
    let output = match quiet(answer.output) {
        HookOutput::Context { event, text } => HookOutput::Context {
            event,
            text: fit(text, close),
        },
        other => other,
    };
    Answer {
        output,
        notice: answer.notice,
    }
}

/// `text` (which ends with `close`) in at most [`CONTEXT_MAX_BYTES`]: its first whole lines,
/// then [`CUT`] and `close`.
fn fit(text: String, close: &str) -> String {
    if text.len() <= CONTEXT_MAX_BYTES {
        return text;
    }
    let room = CONTEXT_MAX_BYTES - CUT.len() - close.len();
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = match text[..end].rfind('\n') {
        Some(at) => &text[..=at],
        None => &text[..end],
    };
    format!("{kept}{CUT}{close}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_context_keeps_whole_lines_and_its_close() {
        let close = "</c>";
        let long: String = (0..2000).map(|i| format!("line {i} é\n")).collect();
        let text = fit(format!("<c>\n{long}{close}"), close);
        assert!(text.len() <= CONTEXT_MAX_BYTES, "{}", text.len());
        assert!(text.ends_with(&format!("\n{CUT}{close}")), "{text}");
        let short = format!("<c>\nfew\n{close}");
        assert_eq!(fit(short.clone(), close), short);
    }

    #[test]
    fn nothing_to_say_is_an_empty_answer() {
        let out = answer(HookOutput::Ack.into(), "</c>");
        assert_eq!(out.output, HookOutput::Nothing);
    }
}
