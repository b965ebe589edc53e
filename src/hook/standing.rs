//! The session-start context's standing instructions: what the user told Claude in earlier
//! sessions of this project to do from now on, in their words, dated, the current wording of
//! each (see [`crate::standing`]). Pinned ones first, then the newest, within
//! [`STANDING_CHARS`]; a pinned one is never left out for that budget.
//!
//! With a prompt, the current ones that bear on it and that the session's start did not give
//! (left out for the budget, or said since): those sharing at least [`SHARED_WORDS`] of the
//! words they are about with the prompt.

use rusqlite::Connection;

use super::context::{sealed, units};
use crate::given::{Gave, Given, Reason};
use crate::store::read::standing::{self, Instruction};
use crate::store::rows::short_id;

/// How many of an instruction's subject words a prompt must hold for it to bear on the prompt.
const SHARED_WORDS: usize = 2;
/// Instructions handed with a prompt at most.
const WITH_A_PROMPT: usize = 2;
pub const PROMPT_HEAD: &str = "What the user asked for in earlier sessions of this project, \
                               meant to last, that bears on this prompt (their words, as \
                               recorded):\n";

/// What the instructions may take of the context, in UTF-16 units (about 15 rules of a line).
pub const STANDING_CHARS: usize = 2_000;
/// The longest instruction shown, in characters.
const RULE_CHARS: usize = 300;
pub const HEAD: &str = "What the user asked for in earlier sessions of this project, meant to \
                        last (their words, as recorded; the current wording of each, pinned and \
                        newest first):\n";

/// The lines of as many instructions as fit, and what they give (the prompts they came from).
pub fn lines(instructions: &[Instruction]) -> (String, Vec<Gave>) {
    let mut out = String::new();
    let mut spent = units(HEAD);
    let mut from = Vec::new();
    for instruction in instructions {
        let line = line(instruction);
        let cost = units(&line);
        if instruction.pinned_at.is_none() && spent + cost > STANDING_CHARS {
            break;
        }
        spent += cost;
        from.push(gave(instruction, &line));
        out.push_str(&line);
    }
    (out, from)
}

/// What giving `instruction` in `line` gives: the prompt that states it.
fn gave(instruction: &Instruction, line: &str) -> Gave {
    Gave {
        item_id: instruction.prompt.clone(),
        item_session: Some(instruction.session_id.clone()),
        score: None,
        reason: Reason::Rule,
        bytes: line.len(),
    }
}

/// The instructions of `current` that a rule `prompt` states replaces (see
/// [`crate::standing::current`]); none when it states none.
fn replaced_by<'c>(current: &'c [Instruction], prompt: &str) -> Vec<&'c Instruction> {
    let stated = crate::standing::marked(prompt, crate::standing::mark(prompt));
    if stated.is_empty() {
        return Vec::new();
    }
    // The project's list as said, oldest first (the current ones are pinned first, then
    // newest first), then what the prompt says.
    let mut said: Vec<&Instruction> = current.iter().rev().collect();
    said.sort_by(|a, b| a.said_at.cmp(&b.said_at));
    let subjects: Vec<_> = stated
        .iter()
        .map(|s| crate::standing::subject(&s.text))
        .collect();
    let rules: Vec<crate::standing::Rule> = said
        .iter()
        .map(|i| crate::standing::Rule {
            subject: &i.subject,
            changes: false,
        })
        .chain(
            stated
                .iter()
                .zip(&subjects)
                .map(|(s, subject)| crate::standing::Rule {
                    subject,
                    changes: s.changes,
                }),
        )
        .collect();
    crate::standing::current(&rules)
        .into_iter()
        .zip(said.iter().copied())
        .filter(|(by, _)| by.is_some_and(|new| new >= said.len()))
        .map(|(_, i)| i)
        .collect()
}

/// `- 2026-11-20 (a1b2c3d4, pinned): from now on, tests go under spec/ (replaces what was said
/// 2026-11-12)`.
fn line(instruction: &Instruction) -> String {
    let day = instruction
        .said_at
        .get(..10)
        .unwrap_or(&instruction.said_at);
    let pinned = if instruction.pinned_at.is_some() {
        ", pinned"
    } else {
        ""
    };
    let replaces = instruction
        .replaces
        .as_deref()
        .map(|at| format!(" (replaces what was said {})", at.get(..10).unwrap_or(at)))
        .unwrap_or_default();
    format!(
        "- {} ({}{pinned}): {}{replaces}\n",
        sealed(day),
        sealed(short_id(&instruction.prompt)),
        // The user's own words, checked for pasted orders when they were read as a rule (see
        // `crate::standing`): not for the "from now on you…" that users word rules with.
        sealed(&crate::text::one_line(&instruction.text, RULE_CHARS))
    )
}

/// The current instructions that bear on `prompt` and were not given at the session's start,
/// as lines, and what they give; empty when none does. A prompt of fewer than
/// [`SHARED_WORDS`] subject words reads nothing. Read before the prompt is written: a rule the
/// prompt itself replaces is not current any more, and is left out.
pub fn for_prompt<'g>(
    conn: &Connection,
    project: &str,
    prompt: &str,
    given: impl FnOnce() -> &'g Given,
) -> rusqlite::Result<(String, Vec<Gave>)> {
    let words = crate::standing::subject(prompt);
    if words.len() < SHARED_WORDS {
        return Ok((String::new(), Vec::new()));
    }
    let current = standing::current(conn, project)?;
    let bearing: Vec<&Instruction> = current
        .iter()
        .filter(|i| i.subject.shared(&words) >= SHARED_WORDS)
        .collect();
    if bearing.is_empty() {
        return Ok((String::new(), Vec::new()));
    }
    let replaced = replaced_by(&current, prompt);
    let given = given();
    let mut text = String::new();
    let mut gave_now = Vec::new();
    for instruction in bearing
        .into_iter()
        .filter(|i| !given.has_item(&i.prompt) && !replaced.iter().any(|r| std::ptr::eq(*r, *i)))
        .take(WITH_A_PROMPT)
    {
        let line = line(instruction);
        gave_now.push(gave(instruction, &line));
        text.push_str(&line);
    }
    Ok((text, gave_now))
}
