//! Today's rules applied to a text stored under older ones: what `scrub` rewrites, what the
//! compressor and the pause file keep of a model's error, what an import brings in. The same
//! result a hook would store now, from a text already stored.

use std::borrow::Cow;

use serde_json::Value;

use super::lean::{self, Piece, Shape};
use super::secrets::{self, Redactor};

/// A prompt, a message of Claude's or an error, as a hook would store it now: without private
/// parts, Claude Code's reminders and secrets.
pub fn clean_text<'a>(redactor: &Redactor, text: &'a str) -> Cow<'a, str> {
    match super::strip_message(text) {
        Cow::Borrowed(text) => redactor.redact(text),
        Cow::Owned(text) => Cow::Owned(redactor.redact(&text).into_owned()),
    }
}

/// A tool call's `raw_output` (or any stored JSON document) as a hook would store it now:
/// private parts and secrets out of every string, and, for a read or write of a file that is
/// a secret by its name, its content too.
pub fn clean_payload<'a>(redactor: &Redactor, tool: Option<&str>, raw: &'a str) -> Cow<'a, str> {
    let secret_file = tool
        .filter(|tool| lean::names_files(tool))
        .and_then(|tool| {
            let value: serde_json::Map<String, Value> = serde_json::from_str(raw).ok()?;
            let file = value
                .get("tool_input")?
                .get("file_path")?
                .as_str()?
                .to_string();
            secrets::is_secret_file(&file).then_some((tool, file, value))
        });
    let Some((tool, file, mut value)) = secret_file.filter(|_| redactor.on()) else {
        return super::clean_json(raw, redactor, None, usize::MAX);
    };
    for (key, piece) in [
        ("tool_input", Piece::Input),
        ("tool_response", Piece::Response),
        ("error", Piece::Error),
    ] {
        if let Some(part) = value.get_mut(key) {
            let text = part.to_string();
            let shape = Shape::of(tool, piece, Some(&file));
            let clean = super::clean_json(&text, redactor, shape, usize::MAX);
            *part = serde_json::from_str(&clean).unwrap_or(Value::Null);
        }
    }
    let whole = Value::Object(value).to_string();
    Cow::Owned(super::clean_json(&whole, redactor, None, usize::MAX).into_owned())
}
