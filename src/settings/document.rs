//! Strict reading and faithful writing of a settings file.
//!
//! Claude Code ignores a whole settings file over one comment or trailing comma, so such a file
//! is refused, not "repaired": the user must know it is being ignored today. What we write back
//! is what Claude Code itself writes (two-space indent, key order kept, non-ASCII text as is),
//! with the original's line ending and final newline, so a file in that form round-trips byte
//! for byte.

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value};

use super::shape;

pub struct Document {
    pub root: Map<String, Value>,
    style: Style,
}

#[derive(Clone, Copy)]
struct Style {
    crlf: bool,
    final_newline: bool,
}

impl Document {
    /// Parses a settings file. An empty (or blank) file is `{}`, as Claude Code treats it.
    pub fn parse(bytes: &[u8]) -> Result<Document> {
        let text = std::str::from_utf8(bytes).map_err(|err| {
            anyhow!(
                "it is not UTF-8 text (bad byte at offset {})",
                err.valid_up_to()
            )
        })?;
        let style = Style {
            crlf: text.contains("\r\n"),
            final_newline: text.trim().is_empty() || text.ends_with('\n'),
        };
        if text.trim().is_empty() {
            return Ok(Document {
                root: Map::new(),
                style,
            });
        }
        if text.starts_with('\u{feff}') {
            bail!(
                "it starts with a byte order mark (BOM), which JSON does not allow; save it as \
                 UTF-8 without a BOM and run again"
            );
        }
        // Claude Code keeps the last of two equal keys; writing the file back would drop the
        // other one without a word. Refuse instead.
        if let Err(err) = serde_json::from_str::<UniqueKeys>(text)
            && err.is_data()
        {
            bail!(
                "{}; Claude Code uses only the last one: remove the other and run again",
                err
            );
        }
        let value: Value = serde_json::from_str(text).map_err(|err| match jsonc_feature(text) {
            Some((feature, at)) => {
                let (line, column) = line_column(text, at);
                anyhow!(
                    "it has a {feature} at line {line}, column {column}, and Claude Code ignores a \
                     settings file with comments or trailing commas (it is ignoring this one \
                     now); remove it and run again"
                )
            }
            None => anyhow!("it is not valid JSON: {err}"),
        })?;
        let Value::Object(root) = value else {
            bail!(
                "its top level is {}, not an object; Claude Code ignores such a file",
                kind(&value)
            );
        };
        shape::check(&root)?;
        Ok(Document { root, style })
    }

    /// The bytes of `root` in this document's style.
    pub fn render(&self, root: &Map<String, Value>) -> Vec<u8> {
        let mut text =
            serde_json::to_string_pretty(root).expect("a map of JSON values always serializes");
        if self.style.final_newline {
            text.push('\n');
        }
        if self.style.crlf {
            // Safe on the whole text: JSON strings never hold a raw line break.
            text = text.replace('\n', "\r\n");
        }
        text.into_bytes()
    }
}

/// The top-level object of another agent's JSON file (Codex's or Cursor's `hooks.json`,
/// Cursor's `mcp.json`): an empty or missing file is an empty object. Their shapes are not
/// Claude Code's, so only JSON itself is checked here.
pub fn agent_object(text: Option<&str>) -> Result<Map<String, Value>> {
    let text = text.unwrap_or("");
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => bail!("it is not a JSON object"),
        Err(err) => bail!("it is not valid JSON ({err})"),
    }
}

/// Another agent's JSON file as we write it: indented, with a final newline.
pub fn agent_text(root: &Map<String, Value>) -> Result<String> {
    Ok(serde_json::to_string_pretty(root)? + "\n")
}

/// "an array", "a string", ...: for messages about a value of the wrong type.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Refuses a file (already parsed) holding a number that would not be written back as it is
/// written: `1e3` (written back as `1000.0`), `1.50`, `-0`, an integer beyond 64 bits (which
/// loses digits). `1` and `1.0` stay as they are. Changing the user's text, even to an equal
/// number, is changing what is not ours.
pub fn check_numbers(bytes: &[u8]) -> Result<()> {
    let text = String::from_utf8_lossy(bytes);
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'-' | b'0'..=b'9' if !in_string => {
                let len = bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let number = &text[i..i + len];
                let again = serde_json::from_str::<Value>(number)
                    .map(|value| value.to_string())
                    .unwrap_or_default();
                if again != number {
                    let (line, column) = line_column(&text, i);
                    bail!(
                        "its number {number} at line {line}, column {column} would be written \
                         back as {again}, and claude-mem changes nothing but its own entries; \
                         write the number the way it should stay and run again"
                    );
                }
                i += len - 1;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Finds the first comment or trailing comma outside strings: only called once strict parsing
/// failed, to say why in terms the user can act on.
fn jsonc_feature(text: &str) -> Option<(&'static str, usize)> {
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut comma = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*')) => {
                    return Some(("comment", i));
                }
                b',' => comma = Some(i),
                b'}' | b']' if comma.is_some() => return comma.map(|at| ("trailing comma", at)),
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b'"' => {
                    in_string = true;
                    comma = None;
                }
                _ => comma = None,
            }
        }
        i += 1;
    }
    None
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Walks a document and fails on the first object that has a key twice (the error carries the
/// line and column where serde_json found it).
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(self)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "it has the key {key:?} twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_numbers_that_would_be_written_back_differently() {
        for (text, number) in [
            ("{\"a\": 1e3}", "1e3"),
            ("{\"a\": [1, 1.0, 2.50]}", "2.50"),
            ("{\"a\": 1.50}", "1.50"),
            ("{\"a\": -0}", "-0"),
            (
                "{\"a\": 123456789012345678901234567890}",
                "123456789012345678901234567890",
            ),
            ("{\"a\": 1E-7}", "1E-7"),
        ] {
            let err = check_numbers(text.as_bytes()).expect_err(text).to_string();
            assert!(
                err.contains(&format!("number {number} at line 1")),
                "{text}: {err}"
            );
        }
        for text in [
            "{\"a\": [0, -1, 1.0, 0.5, 18446744073709551615, -9223372036854775808, 1e-7]}",
            "{\"a\": \"1e3 \\\" 1.0\", \"1.0\": 2}",
        ] {
            assert!(check_numbers(text.as_bytes()).is_ok(), "{text}");
        }
    }

    #[test]
    fn finds_comments_and_trailing_commas_outside_strings_only() {
        let cases = [
            ("{\n  // note\n  \"a\": 1\n}", Some(("comment", 2, 3))),
            ("{\"a\": 1 /* x */}", Some(("comment", 1, 9))),
            ("{\"a\": [1, 2,\n]}", Some(("trailing comma", 1, 12))),
            ("{\"a\": 1,\n}", Some(("trailing comma", 1, 8))),
            ("{\"a\": \"http://x, }\" ]", None),
            ("{\"a\": \"\\\"//\" x}", None),
            ("{\"a\": 1 x}", None),
        ];
        for (text, want) in cases {
            let got = jsonc_feature(text).map(|(what, at)| {
                let (line, column) = line_column(text, at);
                (what, line, column)
            });
            assert_eq!(got, want, "{text:?}");
        }
    }
}
