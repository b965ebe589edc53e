//! What the model is asked for and what it must answer: the instructions, the JSON schema of
//! the answer (handed to `claude --json-schema`, which makes the model answer through a tool
//! with that schema), and the checks an answer must pass before anything of it is stored. An
//! answer that fails any check fails its batch as a whole: nothing of it is stored.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::store::rows::{MemoryText, SummaryText};

/// The types a memory may have: those of thedotmack/claude-mem's code mode (its security
/// types aside; an import may bring those, and the tables take any).
pub const TYPES: &[&str] = &[
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
];
/// The concepts a memory may be tagged with, as thedotmack/claude-mem's code mode has them.
pub const CONCEPTS: &[&str] = &[
    "how-it-works",
    "why-it-exists",
    "what-changed",
    "problem-solution",
    "gotcha",
    "pattern",
    "trade-off",
];
/// Longer titles are cut (a title is a line in a list).
const TITLE_CHARS: usize = 120;
/// A type or concept the model made up is quoted in the error up to this many characters.
const QUOTED_CHARS: usize = 40;

const INSTRUCTIONS: &str = "\
You write memories of a Claude Code session for later sessions of the same project. You get a \
digest of the session's tool calls, turn by turn; each item is numbered (#n). You have no tools \
and need none: use only what the digest shows.

Write observations: one for each thing worth knowing later that was learned, decided, fixed, \
built or changed. Merge items about one thing into one observation; skip routine items \
(listings, re-reads, checks that found nothing). For each observation give:
- type: bugfix (something broken, now fixed), feature (a new capability), refactor (code \
restructured, behaviour unchanged), change (other changes: docs, config, dependencies), \
discovery (something learned about the existing system), decision (a choice made, and why);
- title: at most 10 words, what it is about;
- narrative: one paragraph, what and why, for someone who was not there;
- facts: short statements that stand alone, with names, paths and numbers;
- concepts: from how-it-works, why-it-exists, what-changed, problem-solution, gotcha, pattern, \
trade-off;
- files_read and files_modified: paths as the digest writes them;
- sources: the numbers of the items it comes from.
Record what the work found or did, not that someone looked: \"Spill files are applied in name \
order\", not \"Claude read spill.rs\". An empty list is a fine answer for a batch of routine \
items.";

const SUMMARY_INSTRUCTIONS: &str = "

Also write the summary of the session as of the last turn shown (the digest's summary so far \
included): request (what the user asked for), investigated (what was looked into), learned, \
completed (what is done), next_steps (what is left); each one or two sentences, an empty string \
when there is nothing to say.";

/// The system prompt for a batch.
pub fn instructions(wants_summary: bool) -> String {
    let mut text = INSTRUCTIONS.to_string();
    if wants_summary {
        text.push_str(SUMMARY_INSTRUCTIONS);
    }
    text
}

/// The JSON schema of the answer to a batch of `items` items: `summary` is required when the
/// batch holds a summary request, absent otherwise.
pub fn schema(items: usize, wants_summary: bool) -> Value {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let observation = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "title", "narrative", "facts", "concepts", "files_read",
                     "files_modified", "sources"],
        "properties": {
            "type": {"type": "string", "enum": TYPES},
            "title": {"type": "string", "minLength": 1},
            "narrative": {"type": "string", "minLength": 1},
            "facts": strings,
            "concepts": {"type": "array", "items": {"type": "string", "enum": CONCEPTS}},
            "files_read": strings,
            "files_modified": strings,
            "sources": {"type": "array", "minItems": 1,
                        "items": {"type": "integer", "minimum": 1, "maximum": items.max(1)}},
        },
    });
    let mut schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["observations"],
        "properties": {"observations": {"type": "array", "items": observation}},
    });
    if wants_summary {
        let field = json!({"type": "string"});
        schema["required"] = json!(["observations", "summary"]);
        schema["properties"]["summary"] = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["request", "investigated", "learned", "completed", "next_steps"],
            "properties": {"request": field, "investigated": field, "learned": field,
                           "completed": field, "next_steps": field},
        });
    }
    schema
}

/// An answer that passed every check.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Answer {
    pub observations: Vec<Observation>,
    #[serde(default)]
    pub summary: Option<SummaryText>,
}

/// A memory as the model writes it: what it says, as stored, and the items it comes from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Observation {
    #[serde(flatten)]
    pub memory: MemoryText,
    /// Item numbers (`#n`), from 1.
    pub sources: Vec<u64>,
}

pub fn check(value: &Value, items: usize, wants_summary: bool) -> Result<Answer, String> {
    let mut answer: Answer = serde_json::from_value(value.clone())
        .map_err(|err| format!("the answer does not have the asked shape: {err}"))?;
    for (i, o) in answer.observations.iter_mut().enumerate() {
        let at = format!("observation {}", i + 1);
        if !TYPES.contains(&o.memory.kind.as_str()) {
            return Err(format!(
                "{at} has the unknown type {}",
                quoted(&o.memory.kind)
            ));
        }
        if o.memory.title.trim().is_empty() || o.memory.narrative.trim().is_empty() {
            return Err(format!("{at} has no title or no narrative"));
        }
        if o.sources.is_empty() {
            return Err(format!("{at} names no item it comes from"));
        }
        if let Some(bad) = o.sources.iter().find(|&&n| n == 0 || n > items as u64) {
            return Err(format!(
                "{at} names item #{bad}, but the batch has items #1 to #{items}"
            ));
        }
        if let Some(bad) = o
            .memory
            .concepts
            .iter()
            .find(|c| !CONCEPTS.contains(&c.as_str()))
        {
            return Err(format!("{at} has the unknown concept {}", quoted(bad)));
        }
        o.sources.sort_unstable();
        o.sources.dedup();
        o.memory.title = shorten(o.memory.title.trim(), TITLE_CHARS);
    }
    if wants_summary && answer.summary.is_none() {
        return Err("the answer has no summary, which was asked for".into());
    }
    if !wants_summary {
        answer.summary = None;
    }
    Ok(answer)
}

/// A word the model made up, quoted in an error, which is printed and logged: whole when it
/// is short (the error is redacted whole then), else only its length, as a part of it could
/// be a part of a secret that no rule knows once cut.
fn quoted(word: &str) -> String {
    match word.chars().count() {
        n if n > QUOTED_CHARS => format!("of {n} characters"),
        _ => format!("{word:?}"),
    }
}

/// One line of at most `max` characters.
fn shorten(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Value {
        json!({"observations": [{"type": "bugfix", "title": "Spill files applied in order",
            "narrative": "They were applied in directory order.", "facts": ["a fact"],
            "concepts": ["gotcha"], "files_read": [], "files_modified": ["src/spill.rs"],
            "sources": [2, 1, 2]}],
            "summary": {"request": "r", "investigated": "i", "learned": "l", "completed": "c",
                        "next_steps": ""}})
    }

    #[test]
    fn a_good_answer_passes_and_is_tidied() {
        let answer = check(&good(), 2, true).unwrap();
        assert_eq!(answer.observations[0].sources, [1, 2]);
        assert!(answer.summary.is_some());
        // Not asked for: ignored, not an error.
        assert_eq!(check(&good(), 2, false).unwrap().summary, None);
    }

    #[test]
    fn a_bad_or_partial_answer_fails_whole() {
        let observation = |key: &str, value: Value| {
            let mut answer = good();
            answer["observations"][0][key] = value;
            answer
        };
        let without = |path: &[&str]| {
            let mut answer = good();
            let (last, parents) = path.split_last().unwrap();
            let mut at = &mut answer;
            for key in parents {
                at = if let Ok(i) = key.parse::<usize>() {
                    &mut at[i]
                } else {
                    &mut at[*key]
                };
            }
            at.as_object_mut().unwrap().remove(*last);
            answer
        };
        let cases = [
            (observation("type", json!("chore")), "unknown type"),
            (observation("sources", json!([3])), "item #3"),
            (observation("sources", json!([])), "names no item"),
            (observation("title", json!(" ")), "no title"),
            (observation("concepts", json!(["x"])), "concept"),
            (without(&["observations", "0", "facts"]), "shape"),
            (without(&["summary"]), "no summary"),
            (json!("just text"), "shape"),
        ];
        for (answer, why) in cases {
            let err = check(&answer, 2, true).unwrap_err();
            assert!(err.contains(why), "{why}: {err}");
        }
    }

    #[test]
    fn the_schema_asks_for_a_summary_only_with_a_summary_request() {
        assert!(schema(3, false)["properties"].get("summary").is_none());
        assert_eq!(
            schema(3, true)["required"],
            json!(["observations", "summary"])
        );
        assert_eq!(
            schema(3, true)["properties"]["observations"]["items"]["properties"]["sources"]["items"]
                ["maximum"],
            3
        );
    }
}
