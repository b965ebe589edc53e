//! `hook capture` (PostToolUse, PostToolUseFailure): one queue row per tool call.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::wire::{self, Event};
use super::{Ctx, meta, short, truncate};
use crate::ops::{Change, Observation, Priority, Write};
use crate::privacy;
use crate::privacy::lean::{self, Piece, Shape};

/// The shape of `raw_output` this version writes, as `raw_output.lean`: rows without it were
/// stored whole (tool_input and tool_response as Claude Code sent them, with project_dir and
/// cwd).
const LEAN_VERSION: &str = "1";

pub fn decide(event: &Event, ctx: &Ctx) -> Option<Write> {
    let event_name = Event::get(&event.hook_event_name)?;
    let failure = match event_name {
        "PostToolUse" => false,
        "PostToolUseFailure" => true,
        _ => return None,
    };
    let session_id = Event::get(&event.session_id)?;
    let tool_name = Event::get(&event.tool_name)?;
    // The memory's own answers are never memories (see `is_our_tool`), whatever the skip list.
    if ctx.config.skips(tool_name) || privacy::is_our_tool(tool_name) {
        return None;
    }
    let session = ctx.session(event, session_id);
    let (second_key, second, piece) = if failure {
        ("error", event.error, Piece::Error)
    } else {
        ("tool_response", event.tool_response, Piece::Response)
    };
    let pieces = clean(event.tool_input, second, tool_name, piece, ctx);

    let mut raw = String::with_capacity(pieces.input.len() + pieces.second.len() + 256);
    let mut cut = Vec::new();
    raw.push_str("{\"tool_input\":");
    if push_piece(&mut raw, &pieces.input, pieces.input_max) {
        cut.push("tool_input");
    }
    raw.push_str(",\"");
    raw.push_str(second_key);
    raw.push_str("\":");
    if push_piece(&mut raw, &pieces.second, pieces.second_max) {
        cut.push(second_key);
    }
    if failure {
        raw.push_str(",\"is_interrupt\":");
        raw.push_str(&json(&event.is_interrupt.unwrap_or(false)));
    }
    // The project is the row's column; the directory the call ran in only when it differs.
    if session.cwd.is_some() && session.cwd != session.project_dir {
        raw.push_str(",\"cwd\":");
        raw.push_str(&json(&session.cwd));
    }
    raw.push_str(",\"lean\":");
    raw.push_str(LEAN_VERSION);
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
        files_touched: files_touched(&pieces.input),
        priority: priority(tool_name),
        payload_bytes: ctx.payload_bytes as u64,
        truncated: !cut.is_empty(),
    };
    Some(ctx.write(session, Change::Observation(observation)))
}

/// A tool call's two pieces, cleaned, and how many bytes of each the payload cap lets in.
struct Pieces<'a> {
    input: Cow<'a, str>,
    second: Cow<'a, str>,
    input_max: usize,
    second_max: usize,
}

/// Private parts go first, before anything reads, leaves out or cuts the pieces; secrets next,
/// in what is left. The input is cleaned whole, as the files touched are read from it (a tag
/// left open in an earlier string may cover a path). A known tool's pieces are cut to their
/// lean shape, whole (the tail of an output is kept), and the cap applies to what is left; of
/// an unknown tool's second piece, the filter walks only what its share of the cap keeps.
fn clean<'a>(
    input: Option<&'a RawValue>,
    second: Option<&'a RawValue>,
    tool_name: &str,
    piece: Piece,
    ctx: &Ctx,
) -> Pieces<'a> {
    let all = usize::MAX;
    let redactor = &ctx.config.redactor;
    let raw_input = input.map_or("null", RawValue::get);
    let file = lean::names_files(tool_name)
        .then(|| file_path(raw_input))
        .flatten();
    let file = file.as_deref().map(privacy::strip);
    let shape = |piece| Shape::of(tool_name, piece, file.as_deref());
    let input = privacy::clean_json(raw_input, redactor, shape(Piece::Input), all);
    let second = second.map_or("null", RawValue::get);
    let max = ctx.config.max_payload_bytes;
    let share_of = |over: Option<usize>, second: usize| {
        over.map_or((all, all), |max| share(input.len(), second, max))
    };
    let (input_max, second_max, second) = match shape(piece) {
        Some(shape) => {
            let second = privacy::clean_json(second, redactor, Some(shape), all);
            let over = max.filter(|max| input.len() + second.len() > *max);
            let (a, b) = share_of(over, second.len());
            (a, b, second)
        }
        None => {
            let over = max.filter(|max| ctx.payload_bytes > *max);
            let (a, b) = share_of(over, second.len());
            (a, b, privacy::clean_json(second, redactor, None, b))
        }
    };
    Pieces {
        input,
        second,
        input_max,
        second_max,
    }
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

/// The paths a tool call's input names: `file_path` (Write, Edit, MultiEdit, Read, …) and
/// `notebook_path` (NotebookEdit). Parsed only when the input mentions one of them.
fn paths(tool_input: &str) -> Vec<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Paths<'a> {
        #[serde(borrow, default, deserialize_with = "wire_text")]
        file_path: Option<Cow<'a, str>>,
        #[serde(borrow, default, deserialize_with = "wire_text")]
        notebook_path: Option<Cow<'a, str>>,
    }
    fn wire_text<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Cow<'de, str>>, D::Error> {
        wire::text(d)
    }
    if !tool_input.contains("\"file_path\"") && !tool_input.contains("\"notebook_path\"") {
        return Vec::new();
    }
    let Ok(paths) = serde_json::from_str::<Paths>(tool_input) else {
        return Vec::new();
    };
    [paths.file_path, paths.notebook_path]
        .into_iter()
        .flatten()
        .filter(|path| !path.is_empty())
        .collect()
}

/// The file a call of a file tool names, from its input as Claude Code sent it.
fn file_path(raw_input: &str) -> Option<String> {
    paths(raw_input).into_iter().next().map(Cow::into_owned)
}

/// The files a tool call names, from its input cleaned of private parts and secrets, as a
/// JSON array.
fn files_touched(tool_input: &str) -> String {
    let mut files: Vec<Cow<str>> = Vec::new();
    for path in paths(tool_input) {
        if !files.contains(&path) {
            files.push(path);
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
