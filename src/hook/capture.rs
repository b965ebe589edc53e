//! `hook capture` (PostToolUse, PostToolUseFailure): one queue row per tool call.

use serde::Deserialize;

use super::wire::{self, Event};
use super::{Ctx, meta, short, truncate};
use crate::ops::{Change, Observation, Priority, Write};
use crate::privacy;

pub fn decide(event: &Event, ctx: &Ctx) -> Option<Write> {
    let event_name = Event::get(&event.hook_event_name)?;
    let failure = match event_name {
        "PostToolUse" => false,
        "PostToolUseFailure" => true,
        _ => return None,
    };
    let session_id = Event::get(&event.session_id)?;
    let tool_name = Event::get(&event.tool_name)?;
    if ctx.config.skips(tool_name) {
        return None;
    }
    let session = ctx.session(event, session_id);

    // Private parts go first, before anything reads or cuts the pieces. The input is stripped
    // whole, as the files touched are read from it (a tag left open in an earlier string may
    // cover a path); of the second piece, the filter walks only what its share keeps.
    let all = usize::MAX;
    let tool_input = privacy::strip_json(event.tool_input.map_or("null", |raw| raw.get()), all);
    let (second_key, second) = if failure {
        ("error", event.error)
    } else {
        ("tool_response", event.tool_response)
    };
    let second = second.map_or("null", |raw| raw.get());
    let over_cap = ctx
        .config
        .max_payload_bytes
        .filter(|max| ctx.payload_bytes > *max);
    let (input_max, second_max) = match over_cap {
        Some(max) => share(tool_input.len(), second.len(), max),
        None => (all, all),
    };
    let second = privacy::strip_json(second, second_max);

    let mut raw = String::with_capacity(tool_input.len() + second.len() + 256);
    let mut cut = Vec::new();
    raw.push_str("{\"tool_input\":");
    if push_piece(&mut raw, &tool_input, input_max) {
        cut.push("tool_input");
    }
    raw.push_str(",\"");
    raw.push_str(second_key);
    raw.push_str("\":");
    if push_piece(&mut raw, &second, second_max) {
        cut.push(second_key);
    }
    if failure {
        raw.push_str(",\"is_interrupt\":");
        raw.push_str(&json(&event.is_interrupt.unwrap_or(false)));
    }
    raw.push_str(",\"project_dir\":");
    raw.push_str(&json(&session.project_dir));
    raw.push_str(",\"cwd\":");
    raw.push_str(&json(&session.cwd));
    if !cut.is_empty() {
        raw.push_str(",\"truncated\":");
        raw.push_str(&json(&cut));
        raw.push_str(",\"original_bytes\":");
        raw.push_str(&ctx.payload_bytes.to_string());
    }
    raw.push('}');

    let observation = Observation {
        event: event_name.to_string(),
        tool_name: short(tool_name).to_string(),
        tool_use_id: meta(&event.tool_use_id),
        prompt_id: meta(&event.prompt_id),
        raw_output: raw,
        files_touched: files_touched(&tool_input),
        priority: priority(tool_name),
        payload_bytes: ctx.payload_bytes as u64,
        truncated: !cut.is_empty(),
    };
    Some(ctx.write(session, Change::Observation(observation)))
}

/// Mutations and commands first, reads and listings last.
fn priority(tool: &str) -> Priority {
    match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Bash" | "PowerShell" => Priority::High,
        "Read"
        | "Glob"
        | "Grep"
        | "LS"
        | "NotebookRead"
        | "BashOutput"
        | "ReadMcpResourceTool"
        | "ListMcpResourcesTool"
        | "ToolSearch" => Priority::Low,
        _ => Priority::Normal,
    }
}

/// How many bytes each of two pieces may keep so that both fit in `max`: a piece that fits in
/// half keeps all of it and the other gets the rest.
fn share(a: usize, b: usize, max: usize) -> (usize, usize) {
    let half = max / 2;
    if a + b <= max {
        (a, b)
    } else if a <= half {
        (a, max - a)
    } else if b <= half {
        (max - b, b)
    } else {
        (half, max - half)
    }
}

/// Appends a JSON piece already stripped of private parts. A piece over its share is kept as a
/// JSON string holding the start of its text; returns whether it was cut. Stripping came first
/// and worked on the decoded strings, so neither a cut nor a JSON escape can hide a tag.
fn push_piece(out: &mut String, clean: &str, max: usize) -> bool {
    if clean.len() <= max {
        out.push_str(clean);
        false
    } else {
        out.push_str(&json(truncate(clean, max)));
        true
    }
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// The files a tool call names: `file_path` (Write, Edit, MultiEdit, Read, …) and
/// `notebook_path` (NotebookEdit), from its input stripped of private parts. Parsed only when
/// the input mentions one of them.
fn files_touched(tool_input: &str) -> String {
    #[derive(Deserialize)]
    struct Paths<'a> {
        #[serde(borrow, default, deserialize_with = "wire_text")]
        file_path: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default, deserialize_with = "wire_text")]
        notebook_path: Option<std::borrow::Cow<'a, str>>,
    }
    fn wire_text<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<std::borrow::Cow<'de, str>>, D::Error> {
        wire::text(d)
    }
    if !tool_input.contains("\"file_path\"") && !tool_input.contains("\"notebook_path\"") {
        return "[]".into();
    }
    let Ok(paths) = serde_json::from_str::<Paths>(tool_input) else {
        return "[]".into();
    };
    let mut files: Vec<String> = Vec::new();
    for path in [paths.file_path, paths.notebook_path].into_iter().flatten() {
        if !path.is_empty() && !files.iter().any(|f| *f == path) {
            files.push(path.into_owned());
        }
    }
    json(&files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_fit_the_cap_and_keep_small_pieces_whole() {
        assert_eq!(share(10, 20, 100), (10, 20));
        assert_eq!(share(10, 500, 100), (10, 90));
        assert_eq!(share(500, 10, 100), (90, 10));
        assert_eq!(share(500, 500, 100), (50, 50));
    }

    #[test]
    fn priorities() {
        assert_eq!(priority("Edit"), Priority::High);
        assert_eq!(priority("Grep"), Priority::Low);
        assert_eq!(priority("mcp__memory__search"), Priority::Normal);
    }
}
