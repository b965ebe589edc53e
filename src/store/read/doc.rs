//! What of a stored row is worth finding, and how it reads in one line.
//!
//! A tool call is indexed by its tool, the input fields a developer remembers it by (command,
//! file path, pattern, URL, query, description) and the start and end of what it answered; a
//! prompt or Claude's message by its text. Everything is bounded, so one huge row costs the
//! index no more than a few kilobytes, and cleaned of terminal control sequences, which tool
//! output is full of and which must never reach a terminal from a snippet.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::text::{bounded, clean};

/// Input fields that name a tool call, in the order a title prefers them.
const SALIENT: &[&str] = &[
    "command",
    "file_path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "path",
];
/// Parts of a tool's answer that only repeat something else at length (an Edit answers with
/// the whole file as it was before).
const NOISE: &[&str] = &["originalFile"];

const FIELD_CHARS: usize = 500;
const ANSWER_HEAD_CHARS: usize = 1000;
const ANSWER_TAIL_CHARS: usize = 500;
const TEXT_HEAD_CHARS: usize = 4000;
const TEXT_TAIL_CHARS: usize = 1000;
const TITLE_CHARS: usize = 200;

/// The indexed text of one row: `head` says what it is, `body` what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub title: String,
    pub head: String,
    pub body: String,
}

/// A prompt or a message of Claude's: all in the head.
pub fn prose(text: &str) -> Text {
    let head = clean(&bounded(text, TEXT_HEAD_CHARS, TEXT_TAIL_CHARS));
    Text {
        title: title_line(&head),
        head,
        body: String::new(),
    }
}

/// A memory or a summary: what names it in the head, the rest in the body.
pub fn prose_with(head: &str, body: &str) -> Text {
    let head = clean(&bounded(head, TEXT_HEAD_CHARS, 0));
    Text {
        title: title_line(&head),
        head,
        body: clean(&bounded(body, TEXT_HEAD_CHARS, TEXT_TAIL_CHARS)),
    }
}

/// A tool call, from its queue row's `raw_output`.
pub fn tool_call(tool_name: &str, raw_output: &str) -> Text {
    #[derive(Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        tool_input: Option<&'a RawValue>,
        #[serde(borrow)]
        tool_response: Option<&'a RawValue>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    let parse = |raw: Option<&RawValue>| {
        raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
            .unwrap_or(Value::Null)
    };
    let (input, answer) = match serde_json::from_str::<Raw>(raw_output) {
        Ok(raw) => (
            parse(raw.tool_input),
            parse(raw.error.or(raw.tool_response)),
        ),
        Err(_) => (Value::Null, Value::Null),
    };
    let mut given = Vec::new();
    strings(&input, &mut given);
    let mut head = clean(tool_name);
    let mut fields: Vec<&str> = salient(&input).collect();
    let all = given.join("\n");
    if fields.is_empty() {
        fields.push(&all);
    }
    for field in fields.iter().filter(|f| !f.is_empty()) {
        head.push('\n');
        head.push_str(&clean(&bounded(field, FIELD_CHARS, 0)));
    }
    // What the answer repeats of the input (a Write's content, an Edit's strings) is no news.
    let mut answered = Vec::new();
    strings(&answer, &mut answered);
    answered.retain(|s| !given.contains(s));
    Text {
        title: call_title(&input),
        head,
        body: clean(&bounded(
            &answered.join("\n"),
            ANSWER_HEAD_CHARS,
            ANSWER_TAIL_CHARS,
        )),
    }
}

/// A tool call's `raw_output` reduced to what the index holds of it (retention keeps this of
/// an old call): the input fields it is remembered by, each cut as the index cuts it (or, when
/// it has none, all its input text as one `text`), and what it answered as one string, the
/// start and end the index keeps. Its other members (`cwd`, `is_interrupt`, ...) stay; `digest`
/// marks it and `digest_of` is the size of what it replaced. Indexing a digest gives the same
/// text as indexing the whole call (tested), so search finds the call as before. `None` when
/// it is a digest already, is not a JSON object, or would not be smaller.
pub fn digest(raw_output: &str) -> Option<String> {
    let mut raw: serde_json::Map<String, Value> = serde_json::from_str(raw_output).ok()?;
    if raw.contains_key("digest") {
        return None;
    }
    let input = raw.remove("tool_input").unwrap_or(Value::Null);
    let (answer_key, answer) = match raw.remove("error") {
        Some(error) => ("error", error),
        None => (
            "tool_response",
            raw.remove("tool_response").unwrap_or(Value::Null),
        ),
    };
    let mut given = Vec::new();
    strings(&input, &mut given);
    let mut kept = serde_json::Map::new();
    for key in SALIENT {
        if let Some(field) = input.get(key).and_then(Value::as_str)
            && !field.trim().is_empty()
        {
            kept.insert(key.to_string(), bounded(field, FIELD_CHARS, 0).into());
        }
    }
    if kept.is_empty() && !given.is_empty() {
        kept.insert(
            "text".into(),
            bounded(&given.join("\n"), FIELD_CHARS, 0).into(),
        );
    }
    let mut answered = Vec::new();
    strings(&answer, &mut answered);
    answered.retain(|s| !given.contains(s));
    let body = bounded(&answered.join("\n"), ANSWER_HEAD_CHARS, ANSWER_TAIL_CHARS);
    let mut out = serde_json::Map::new();
    out.insert("tool_input".into(), Value::Object(kept));
    if !body.is_empty() {
        out.insert(answer_key.into(), body.into());
    }
    out.extend(raw);
    out.insert("digest".into(), 1.into());
    out.insert("digest_of".into(), raw_output.len().into());
    let text = Value::Object(out).to_string();
    (text.len() < raw_output.len()).then_some(text)
}

/// A tool call in one line: its first salient input field (the command, the file, ...).
pub fn call_title(input: &Value) -> String {
    salient(input)
        .next()
        .map(|field| title_line(&clean(&bounded(field, TITLE_CHARS * 2, 0))))
        .unwrap_or_default()
}

/// Claude's message in a summary request's `raw_output`, if it had one.
pub fn message(raw_output: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Raw {
        last_assistant_message: Option<String>,
    }
    serde_json::from_str::<Raw>(raw_output)
        .ok()?
        .last_assistant_message
        .filter(|m| !m.trim().is_empty())
}

fn salient(input: &Value) -> impl Iterator<Item = &str> {
    SALIENT
        .iter()
        .filter_map(|key| input.get(key)?.as_str())
        .filter(|v| !v.trim().is_empty())
}

/// The non-empty string values of a JSON tree, leaving out [`NOISE`].
fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| !NOISE.contains(&key.as_str()))
            .for_each(|(_, v)| strings(v, out)),
        _ => {}
    }
}

/// The first non-blank line, whitespace collapsed, at most [`TITLE_CHARS`] characters.
fn title_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let flat = line.split_whitespace().collect::<Vec<_>>().join(" ");
    let more = text.trim_end().len() > line.len();
    let mut title = bounded(&flat, TITLE_CHARS, 0);
    if more && !title.ends_with('…') {
        title.push_str(" …");
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_is_found_by_what_names_it_and_what_it_answered() {
        let raw = r#"{"tool_input":{"command":"cargo test -p shop merge","description":"Run tests",
            "timeout":5},"tool_response":{"stdout":"\u001b[32mok\u001b[0m 3 passed","stderr":"",
            "interrupted":false},"project_dir":"/p","cwd":"/p"}"#;
        let text = tool_call("Bash", raw);
        assert_eq!(text.title, "cargo test -p shop merge");
        assert_eq!(text.head, "Bash\ncargo test -p shop merge\nRun tests");
        assert_eq!(text.body, "ok 3 passed");

        let failed = r#"{"tool_input":{"file_path":"/p/src/merge.rs"},"error":"File not found",
            "is_interrupt":false}"#;
        let text = tool_call("Read", failed);
        assert_eq!(
            (text.title.as_str(), text.body.as_str()),
            ("/p/src/merge.rs", "File not found")
        );
    }

    #[test]
    fn big_answers_keep_their_start_and_end_and_edits_drop_the_old_file() {
        let stdout: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let raw = serde_json::json!({"tool_input": {"command": "make"},
            "tool_response": {"stdout": stdout, "originalFile": "OLD FILE"}})
        .to_string();
        let body = tool_call("Bash", &raw).body;
        assert!(body.starts_with("line 0\n") && body.ends_with("line 1999\n"));
        assert!(body.chars().count() < 1600 && !body.contains("OLD FILE"));
    }

    #[test]
    fn what_an_answer_repeats_of_the_input_is_left_out() {
        let raw = r#"{"tool_input":{"file_path":"/p/a.rs","old_string":"beta","new_string":"gamma"},
            "tool_response":{"filePath":"/p/a.rs","oldString":"beta","newString":"gamma",
            "structuredPatch":[{"lines":[" alpha","-beta","+gamma"]}]}}"#;
        assert_eq!(tool_call("Edit", raw).body, " alpha\n-beta\n+gamma");
    }

    #[test]
    fn an_unknown_tool_is_found_by_its_input_strings() {
        let raw = r#"{"tool_input":{"server":"db","args":{"sql":"select 1"}},"tool_response":"1"}"#;
        let text = tool_call("mcp__db__query", raw);
        assert_eq!(text.head, "mcp__db__query\ndb\nselect 1");
        assert_eq!(text.title, "");
    }

    /// What retention keeps of an old call is found by the same words, under the same title.
    #[test]
    fn a_digest_indexes_as_the_whole_call() {
        let long = |word: &str, n: usize| format!("{word} ").repeat(n);
        let stdout: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let calls = [
            (
                "Bash",
                serde_json::json!({"tool_input": {"command": format!("cargo test {}", long("x", 300)),
                    "description": "Run tests"}, "tool_response": {"stdout": stdout,
                    "stderr": "warning: unused"}, "lean": 1}),
            ),
            (
                "Edit",
                serde_json::json!({"tool_input": {"file_path": "/p/a.rs", "old_string": "beta",
                    "new_string": long("gamma", 400)}, "tool_response": {"originalFile":
                    long("OLD", 5000), "structuredPatch": [{"lines": ["-beta", "+gamma"]}]},
                    "project_dir": "/p", "cwd": "/p"}),
            ),
            (
                "mcp__db__query",
                serde_json::json!({"tool_input": {"server": "db", "args": {"sql": long("select", 200)}},
                    "tool_response": long("row", 3000)}),
            ),
            (
                "Read",
                serde_json::json!({"tool_input": {"file_path": "/p/big.rs"},
                    "error": long("File does not exist.", 400), "is_interrupt": false}),
            ),
            (
                "Grep",
                serde_json::json!({"tool_input": {"pattern": "merge"}, "tool_response":
                    {"content": long("src/merge.rs:1: merge", 200), "numFiles": 3},
                    "truncated": ["tool_response"], "original_bytes": 9_000_000}),
            ),
        ];
        for (tool, raw) in calls {
            let raw = raw.to_string();
            let reduced = digest(&raw).unwrap_or_else(|| panic!("{tool}: not reduced"));
            assert!(reduced.len() < raw.len() / 2, "{tool}: {reduced}");
            assert_eq!(tool_call(tool, &reduced), tool_call(tool, &raw), "{tool}");
            let value: Value = serde_json::from_str(&reduced).unwrap();
            assert_eq!(value["digest"], 1);
            assert_eq!(value["digest_of"], raw.len());
            assert_eq!(digest(&reduced), None, "{tool}: a digest is left alone");
        }
        let kept: Value = serde_json::from_str(
            &digest(
                &serde_json::json!({"tool_input":
            {"file_path": "/p/big.rs"}, "error": long("gone", 500), "is_interrupt": true,
            "cwd": "/q"})
                .to_string(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (&kept["is_interrupt"], &kept["cwd"]),
            (&Value::Bool(true), &Value::from("/q"))
        );
        assert!(kept.get("tool_response").is_none() && kept["error"].is_string());
        assert_eq!(digest("[1,2]"), None);
        assert_eq!(
            digest(r#"{"tool_input":{"command":"ls"},"tool_response":"a"}"#),
            None
        );
    }

    #[test]
    fn prose_titles_are_one_line() {
        let text = prose("\n  Fix the   login bug\nin auth.rs\r\n");
        assert_eq!(text.title, "Fix the login bug …");
        assert_eq!(prose("one line").title, "one line");
    }

    #[test]
    fn control_sequences_are_removed() {
        assert_eq!(
            clean("a\u{1b}[1;31mred\u{1b}[0m b\u{7}c\u{1b}]0;title\u{7}d\r\n"),
            "ared b cd\n"
        );
    }

    #[test]
    fn messages_come_out_of_summary_requests() {
        assert_eq!(
            message(r#"{"last_assistant_message":"Done","prompt_number":1}"#).as_deref(),
            Some("Done")
        );
        assert_eq!(message(r#"{"last_assistant_message":null}"#), None);
    }
}
