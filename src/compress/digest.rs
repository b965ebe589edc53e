//! The digest: a batch's queue items as one compact text for the model, turn by turn.
//!
//! What a model needs to write a memory is what was asked, what was looked at, what was run and
//! what came of it, what changed, and what Claude said at the end; not whole files or whole
//! logs. So reads and listings of a turn become one list line (`#3 read src/a.rs · #4 grep
//! "x" → 2 files`), long outputs a head and a tail, edits their old and new text, writes the
//! start of the new file; paths inside the project are written relative to it. Every item has
//! a number (`#n`) by which the model names the items each memory came from.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::store::queue::Item;
use crate::text::{bounded, clean};

/// Characters of one token, as estimated: code and paths run at about 3.5 (English prose at
/// about 4), so this errs on the side of more tokens.
const CHARS_PER_TOKEN: f64 = 3.5;

/// What the digest says about the session around the batch.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub id: String,
    pub project: Option<String>,
    /// The session's prompts by number.
    pub prompts: BTreeMap<i64, String>,
    /// Memories already stored for the session: (type, title).
    pub earlier: Vec<(String, String)>,
    /// The session's latest summary, in a line or two.
    pub summary: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    pub text: String,
    /// Whether a summary request (a Stop) is among the items: then a summary is asked for.
    pub wants_summary: bool,
}

/// Tokens a text is estimated to cost the model.
pub fn tokens(text: &str) -> u64 {
    (text.chars().count() as f64 / CHARS_PER_TOKEN).ceil() as u64
}

/// The digest of `items` (in capture order; item `i` is `#i+1`).
pub fn render(items: &[Item], session: &Session) -> Digest {
    let project = session.project.as_deref();
    let mut out = String::new();
    out.push_str(&format!(
        "Project: {}\nSession: {}\n",
        project.unwrap_or("(unknown)"),
        crate::store::rows::short_id(&session.id)
    ));
    if let Some(summary) = &session.summary {
        out.push_str(&format!("Summary of the session so far: {summary}\n"));
    }
    if !session.earlier.is_empty() {
        out.push_str("Already recorded from this session:\n");
        for (kind, title) in &session.earlier {
            out.push_str(&format!("- {kind}: {title}\n"));
        }
    }
    let mut turn: Option<Option<i64>> = None;
    let mut list: Vec<String> = Vec::new();
    let mut wants_summary = false;
    for (i, item) in items.iter().enumerate() {
        let number = i + 1;
        if turn != Some(item.prompt_number) {
            flush(&mut list, &mut out);
            turn = Some(item.prompt_number);
            out.push('\n');
            out.push_str(&turn_header(item.prompt_number, session));
        }
        if item.kind == "summary" {
            wants_summary = true;
            flush(&mut list, &mut out);
            out.push_str(&closing(number, item));
            continue;
        }
        let entry = entry(item, project);
        match entry {
            Entry::Listed(text) => list.push(format!("#{number} {text}")),
            Entry::Block(head, body) => {
                flush(&mut list, &mut out);
                out.push_str(&format!("#{number} {head}\n"));
                for line in body.lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
        }
    }
    flush(&mut list, &mut out);
    Digest {
        text: out,
        wants_summary,
    }
}

/// What one item's part of a digest costs, about: for cutting batches before rendering them.
pub fn cost(item: &Item, project: Option<&str>) -> u64 {
    let chars = if item.kind == "summary" {
        closing(1, item).chars().count()
    } else {
        match entry(item, project) {
            Entry::Listed(text) => text.chars().count() + 6,
            Entry::Block(head, body) => head.chars().count() + body.chars().count() + 8,
        }
    };
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

/// A list line of a turn's reads and listings, once something else comes.
fn flush(list: &mut Vec<String>, out: &mut String) {
    if !list.is_empty() {
        out.push_str(&list.join(" · "));
        out.push('\n');
        list.clear();
    }
}

fn turn_header(number: Option<i64>, session: &Session) -> String {
    let Some(number) = number else {
        return "Turn (prompt not recorded):\n".into();
    };
    match session.prompts.get(&number) {
        Some(prompt) => format!(
            "Turn {number}, the user asked: {}\n",
            one_line(&bounded(prompt, 600, 200))
        ),
        None => format!("Turn {number}:\n"),
    }
}

/// Claude's last message of a turn: what the turn came to.
fn closing(number: usize, item: &Item) -> String {
    let raw: Value = serde_json::from_str(item.raw_output.get()).unwrap_or(Value::Null);
    match raw
        .get("last_assistant_message")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
    {
        Some(message) => format!(
            "#{number} Claude ended the turn with:\n{}\n",
            indent(&excerpt(message, 800, 400))
        ),
        None => format!("#{number} (the turn ended)\n"),
    }
}

enum Entry {
    /// A read or a listing: one entry of the turn's list line.
    Listed(String),
    /// A head line and the lines under it.
    Block(String, String),
}

fn entry(item: &Item, project: Option<&str>) -> Entry {
    let raw: Value = serde_json::from_str(item.raw_output.get()).unwrap_or(Value::Null);
    let input = raw.get("tool_input").unwrap_or(&Value::Null);
    let tool = item.tool_name.as_deref().unwrap_or("?");
    let path = |key: &str| relative(field(input, key), project);
    if let Some(error) = raw.get("error").filter(|e| !e.is_null()) {
        let what = match tool {
            "Bash" => format!("$ {}", one_line(&bounded(field(input, "command"), 300, 0))),
            _ => format!("{tool} {}", headline(tool, input, project)),
        };
        return Entry::Block(
            format!("{what} → failed"),
            excerpt(&text_of(error), 300, 500),
        );
    }
    let answer = raw.get("tool_response").unwrap_or(&Value::Null);
    match tool {
        "Read" => Entry::Listed(format!("read {}{}", path("file_path"), lines(answer))),
        "Glob" => Entry::Listed(format!(
            "glob \"{}\"{} → {}",
            field(input, "pattern"),
            within(input, project),
            found(answer, project)
        )),
        "Grep" => Entry::Listed(format!(
            "grep \"{}\"{} → {}",
            one_line(&bounded(field(input, "pattern"), 120, 0)),
            within(input, project),
            found(answer, project)
        )),
        "LS" => Entry::Listed(format!("ls {}", path("path"))),
        "Bash" => bash(input, answer),
        "Edit" => Entry::Block(
            format!(
                "edit {}{}",
                path("file_path"),
                if input.get("replace_all") == Some(&Value::Bool(true)) {
                    " (every occurrence)"
                } else {
                    ""
                }
            ),
            change(field(input, "old_string"), field(input, "new_string"), 300),
        ),
        "MultiEdit" => {
            let edits = input.get("edits").and_then(Value::as_array);
            let first = edits.and_then(|e| e.first()).unwrap_or(&Value::Null);
            Entry::Block(
                format!(
                    "edit {} ({} changes; the first:)",
                    path("file_path"),
                    edits.map_or(0, Vec::len)
                ),
                change(field(first, "old_string"), field(first, "new_string"), 200),
            )
        }
        "Write" => {
            let content = field(input, "content");
            let how = match answer.get("type").and_then(Value::as_str) {
                Some("update") => "replaced",
                _ => "new",
            };
            Entry::Block(
                format!(
                    "write {} ({how}, {} lines)",
                    path("file_path"),
                    content.lines().count()
                ),
                excerpt(content, 400, 0),
            )
        }
        _ => other(tool, input, answer, project),
    }
}

fn bash(input: &Value, answer: &Value) -> Entry {
    let mut head = format!("$ {}", one_line(&bounded(field(input, "command"), 300, 0)));
    let description = field(input, "description");
    if !description.is_empty() {
        head.push_str(&format!("  ({})", one_line(&bounded(description, 100, 0))));
    }
    if answer.get("interrupted") == Some(&Value::Bool(true)) {
        head.push_str(" → interrupted");
    }
    if let Some(code) = answer
        .get("returnCodeInterpretation")
        .and_then(Value::as_str)
    {
        head.push_str(&format!(" → {}", one_line(code)));
    }
    let output = [field(answer, "stdout"), field(answer, "stderr")]
        .iter()
        .filter(|s| !s.trim().is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let output = match answer {
        Value::String(text) => text.as_str(),
        _ => output.as_str(),
    };
    Entry::Block(head, excerpt(output.trim_end(), 400, 600))
}

/// Any other tool (WebFetch, Agent, an MCP tool, ...): what it was asked, and the start and end
/// of its answer's text.
fn other(tool: &str, input: &Value, answer: &Value, project: Option<&str>) -> Entry {
    Entry::Block(
        format!("{tool} {}", headline(tool, input, project)),
        excerpt(&text_of(answer), 500, 300),
    )
}

/// What a call was asked, in one line: its salient field, else its input as compact JSON.
fn headline(tool: &str, input: &Value, project: Option<&str>) -> String {
    for key in ["file_path", "notebook_path", "path"] {
        let path = field(input, key);
        if !path.is_empty() {
            return relative(path, project);
        }
    }
    let salient: Vec<String> = [
        "description",
        "url",
        "query",
        "prompt",
        "pattern",
        "command",
    ]
    .iter()
    .map(|key| field(input, key))
    .filter(|v| !v.trim().is_empty())
    .map(|v| one_line(&bounded(v, 300, 0)))
    .collect();
    if !salient.is_empty() && tool != "?" {
        return salient.join(" — ");
    }
    one_line(&bounded(&input.to_string(), 300, 0))
}

/// `text` whole when it is short, else about its first `head` and last `tail` characters, cut
/// at line breaks where there are some (the end of an output is where its errors and results
/// are), around a line saying how much was left out.
fn excerpt(text: &str, head: usize, tail: usize) -> String {
    let total = text.chars().count();
    if total <= head + tail + 80 {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let size = |line: &str| line.chars().count() + 1;
    let (mut first, mut used) = (0, 0);
    while first < lines.len() && used + size(lines[first]) <= head {
        used += size(lines[first]);
        first += 1;
    }
    let (mut last, mut kept) = (lines.len(), 0);
    while last > first && kept + size(lines[last - 1]) <= tail {
        kept += size(lines[last - 1]);
        last -= 1;
    }
    if first > 0 && tail == 0 {
        let more = lines.len() - first;
        return format!(
            "{}\n[… {more} more line{}]",
            lines[..first].join("\n"),
            plural(more)
        );
    }
    if first == 0 || last == lines.len() {
        // Lines too long to cut between: characters it is.
        return bounded(text, head, tail);
    }
    let cut = last - first;
    format!(
        "{}\n[… {cut} line{} cut …]\n{}",
        lines[..first].join("\n"),
        plural(cut),
        lines[last..].join("\n")
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The text in a tool's answer: a string as it is; else the `text` of content blocks (an
/// agent's or an MCP tool's answer); else its strings, one a line (numbers and flags, such as
/// usage counters, say nothing to a summarizer).
fn text_of(value: &Value) -> String {
    if let Value::String(text) = value {
        return text.clone();
    }
    let blocks: Vec<&str> = value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    if !blocks.is_empty() {
        return blocks.join("\n");
    }
    let mut strings = Vec::new();
    collect_strings(value, &mut strings);
    strings.join("\n")
}

fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) if !s.trim().is_empty() => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// `old` and `new` text of an edit, each bounded, as `-` and `+` lines.
fn change(old: &str, new: &str, chars: usize) -> String {
    let mut out = String::new();
    for (sign, text) in [("-", old), ("+", new)] {
        for line in bounded(text, chars, 0).lines() {
            out.push_str(&format!("{sign} {line}\n"));
        }
    }
    out
}

/// Which lines a Read covered, when not the whole file.
fn lines(answer: &Value) -> String {
    let file = answer.get("file").unwrap_or(&Value::Null);
    let number = |key: &str| file.get(key).and_then(Value::as_i64);
    match (
        number("startLine"),
        number("numLines"),
        number("totalLines"),
    ) {
        (Some(start), Some(n), Some(total)) if n > 0 && (start > 1 || n < total) => {
            format!(":{start}-{}", start + n - 1)
        }
        _ => String::new(),
    }
}

/// ` in DIR` of a search, when it names one.
fn within(input: &Value, project: Option<&str>) -> String {
    let path = field(input, "path");
    let glob = field(input, "glob");
    let mut out = String::new();
    if !path.is_empty() {
        out.push_str(&format!(" in {}", relative(path, project)));
    }
    if !glob.is_empty() {
        out.push_str(&format!(" ({glob})"));
    }
    out
}

/// What a search found: how many files, the first few.
fn found(answer: &Value, project: Option<&str>) -> String {
    let files: Vec<String> = answer
        .get("filenames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|f| relative(f, project))
        .collect();
    let count = answer
        .get("numFiles")
        .and_then(Value::as_u64)
        .unwrap_or(files.len() as u64);
    let mut out = format!("{count} file{}", if count == 1 { "" } else { "s" });
    if !files.is_empty() {
        let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
        out.push_str(&format!(": {}", shown.join(", ")));
        if files.len() > shown.len() {
            out.push_str(", …");
        }
    }
    if let Some(content) = answer.get("content").and_then(Value::as_str) {
        out.push_str(&format!(" [{}]", one_line(&bounded(content, 200, 0))));
    }
    out
}

fn field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A path inside the project, relative to it; anything else as it is.
fn relative(path: &str, project: Option<&str>) -> String {
    project
        .and_then(|p| path.strip_prefix(p.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
        .to_string()
}

/// On one line, control characters and runs of spaces gone.
fn one_line(text: &str) -> String {
    clean(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn indent(text: &str) -> String {
    clean(text)
        .lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::to_raw_value;

    fn item(tool: Option<&str>, kind: &str, prompt: Option<i64>, raw: Value) -> Item {
        Item {
            id: "id".into(),
            kind: kind.into(),
            session_id: "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44".into(),
            prompt_id: None,
            prompt_number: prompt,
            tool_use_id: None,
            event: "PostToolUse".into(),
            tool_name: tool.map(String::from),
            project_dir: Some("/p".into()),
            priority: 1,
            created_at: "2026-11-22T16:00:00.000Z".into(),
            attempts: 0,
            last_error: None,
            truncated: false,
            payload_bytes: 0,
            files_touched: Vec::new(),
            raw_output: to_raw_value(&raw).unwrap(),
            lease_token: String::new(),
            lease_until: String::new(),
            claimed_by: String::new(),
        }
    }

    fn read(path: &str) -> Item {
        item(
            Some("Read"),
            "observation",
            Some(1),
            json!({"tool_input": {"file_path": path},
                   "tool_response": {"type": "text", "file": {"content": "x".repeat(4000),
                   "numLines": 40, "startLine": 11, "totalLines": 900}}}),
        )
    }

    #[test]
    fn reads_are_one_list_and_outputs_a_head_and_a_tail() {
        let stdout = format!("FIRST\n{}\nLAST", "middle line\n".repeat(2000));
        let items = [
            read("/p/src/a.rs"),
            read("/p/src/b.rs"),
            item(
                Some("Grep"),
                "observation",
                Some(1),
                json!({"tool_input": {"pattern": "fn merge", "path": "/p/src"},
                       "tool_response": {"numFiles": 2, "filenames": ["/p/src/a.rs", "/p/src/c.rs"]}}),
            ),
            item(
                Some("Bash"),
                "observation",
                Some(1),
                json!({"tool_input": {"command": "cargo test", "description": "Run tests"},
                       "tool_response": {"stdout": stdout}}),
            ),
            item(
                None,
                "summary",
                Some(1),
                json!({"last_assistant_message": "Fixed the merge."}),
            ),
        ];
        let session = Session {
            id: "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44".into(),
            project: Some("/p".into()),
            prompts: BTreeMap::from([(1, "Fix the merge\nplease".to_string())]),
            ..Session::default()
        };
        let digest = render(&items, &session);
        let text = &digest.text;
        assert!(digest.wants_summary);
        assert!(
            text.contains(
                "Turn 1, the user asked: Fix the merge please\n#1 read src/a.rs:11-50 · #2 read \
                 src/b.rs:11-50 · #3 grep \"fn merge\" in src → 2 files: src/a.rs, src/c.rs\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("#4 $ cargo test  (Run tests)\n  FIRST\n  middle line\n"),
            "{text}"
        );
        assert!(
            text.contains("  middle line\n  [… 1919 lines cut …]\n  middle line\n"),
            "{text}"
        );
        assert!(text.contains("LAST\n#5 Claude ended the turn with:\n  Fixed the merge.\n"));
        assert!(!text.contains("xxxx"), "no file content: {text}");
        assert!(tokens(text) < 600, "{} tokens: {text}", tokens(text));
    }

    #[test]
    fn edits_writes_failures_and_unknown_tools_say_what_changed() {
        let items = [
            item(
                Some("Edit"),
                "observation",
                Some(2),
                json!({"tool_input": {"file_path": "/p/a.rs", "old_string": "beta",
                       "new_string": "gamma"}, "tool_response": {"structuredPatch": []}}),
            ),
            item(
                Some("Write"),
                "observation",
                Some(2),
                json!({"tool_input": {"file_path": "/elsewhere/n.txt", "content": "one\ntwo\n"},
                       "tool_response": {"type": "create"}}),
            ),
            item(
                Some("Bash"),
                "observation",
                Some(2),
                json!({"tool_input": {"command": "exit 3"}, "error": "Exit code 3\nboom"}),
            ),
            item(
                Some("mcp__tracker__get_issue"),
                "observation",
                None,
                json!({"tool_input": {"id": 42}, "tool_response": {"content":
                       [{"type": "text", "text": "Rounding of discounts"}], "usage": {"n": 1}}}),
            ),
        ];
        let text = render(&items, &Session::default()).text;
        for expected in [
            "Turn 2:\n#1 edit /p/a.rs\n  - beta\n  + gamma\n",
            "#2 write /elsewhere/n.txt (new, 2 lines)\n  one\n  two\n",
            "#3 $ exit 3 → failed\n  Exit code 3\n  boom\n",
            "Turn (prompt not recorded):\n#4 mcp__tracker__get_issue {\"id\":42}\n  Rounding of discounts\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in:\n{text}");
        }
    }
}
