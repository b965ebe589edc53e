//! Privacy at the edge: what the user marked private never reaches the disk.
//!
//! `<private>…</private>` is the user's mark; `<claude-mem-context>…</claude-mem-context>` is
//! the context we injected ourselves, removed so memory never feeds on itself. Both are removed
//! from every text a hook stores, before anything is written (the spill file included). Tag
//! names match in any letter case: someone who typed `<PRIVATE>` meant it too. Tags nest; an
//! opening tag without its closing tag removes everything after it (fail closed). Text without
//! a tag is returned untouched, and finding that out costs one byte scan for `<`.

use std::borrow::Cow;

use serde_json::Value;

/// What the user or we ourselves marked as never to be stored.
const PRIVATE: &[&str] = &["private", "claude-mem-context"];
/// The same, plus Claude Code's injected reminders, which are noise in prompts and messages.
const PRIVATE_AND_NOISE: &[&str] = &["private", "claude-mem-context", "system-reminder"];

/// Claude Code's own blocks, which arrive through the prompt hook but are not the user's words.
const INTERNAL: &[&str] = &["task-notification", "system-reminder"];

/// Whether a prompt is only Claude Code's own blocks (a `<task-notification>`), not a user's.
pub fn is_internal(prompt: &str) -> bool {
    prompt.trim_start().starts_with('<') && strip_tags(prompt, INTERNAL).trim().is_empty()
}

/// Removes private parts from a tool's input, output or error text.
pub fn strip(text: &str) -> Cow<'_, str> {
    strip_tags(text, PRIVATE)
}

/// Removes private parts and Claude Code's `<system-reminder>` blocks from a prompt or an
/// assistant message.
pub fn strip_message(text: &str) -> Cow<'_, str> {
    strip_tags(text, PRIVATE_AND_NOISE)
}

/// Removes private parts from every string (keys included) of a JSON document given as text.
/// Returns the text unchanged, without parsing it, when it cannot hold a tag.
pub fn strip_json(json: &str) -> Cow<'_, str> {
    if !might_hold_tag(json) {
        return Cow::Borrowed(json);
    }
    match serde_json::from_str::<Value>(json) {
        Ok(mut value) => {
            if strip_value(&mut value) {
                Cow::Owned(value.to_string())
            } else {
                Cow::Borrowed(json)
            }
        }
        // Not JSON we can walk: treat it as plain text, which errs on the side of removing.
        Err(_) => strip(json),
    }
}

fn strip_value(value: &mut Value) -> bool {
    match value {
        Value::String(s) => match strip(s) {
            Cow::Owned(clean) => {
                *s = clean;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| strip_value(v) | changed),
        Value::Object(map) => {
            if map.keys().any(|k| might_hold_tag(k)) {
                let old = std::mem::take(map);
                for (key, mut v) in old {
                    strip_value(&mut v);
                    map.insert(strip(&key).into_owned(), v);
                }
                true
            } else {
                map.values_mut()
                    .fold(false, |changed, v| strip_value(v) | changed)
            }
        }
        _ => false,
    }
}

/// Cheap pre-check on JSON text: a tag is `<` followed by one of our names, in any case. In JSON
/// text `<` may also be written `\u003c`, and a name may hide behind escapes (`<\u0070rivate>`):
/// an escape right after `<` counts as a possible tag, and the text is decoded to be sure.
fn might_hold_tag(text: &str) -> bool {
    let bytes = text.as_bytes();
    let named = |at: usize| {
        bytes.get(at) == Some(&b'\\')
            || PRIVATE
                .iter()
                .any(|name| starts_with_ignore_case(&bytes[at.min(bytes.len())..], name))
    };
    // memchr-backed searches: a byte-by-byte walk was 14% of a 5 MB capture.
    text.match_indices('<').any(|(i, _)| named(i + 1))
        || text
            .match_indices("\\u003")
            .any(|(i, _)| matches!(bytes.get(i + 5), Some(b'c' | b'C')) && named(i + 6))
}

fn strip_tags<'a>(text: &'a str, names: &[&str]) -> Cow<'a, str> {
    let bytes = text.as_bytes();
    if !bytes.contains(&b'<') {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut kept_from = 0;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        let pos = at + offset;
        let Some((name, open_len)) = names
            .iter()
            .find_map(|n| open_tag(bytes, pos, n).map(|l| (*n, l)))
        else {
            at = pos + 1;
            continue;
        };
        out.push_str(&text[kept_from..pos]);
        match close_of(bytes, pos + open_len, name) {
            Some(end) => {
                kept_from = end;
                at = end;
            }
            None => {
                kept_from = text.len();
                break;
            }
        }
    }
    if kept_from == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[kept_from..]);
    Cow::Owned(out)
}

/// Length of an opening tag `<name>` at `pos`, if there is one. No attributes: `<private key>`
/// is a phrase people write, not a mark, and a bounded tag keeps the scan linear.
fn open_tag(bytes: &[u8], pos: usize, name: &str) -> Option<usize> {
    let rest = &bytes[pos + 1..];
    (starts_with_ignore_case(rest, name) && rest.get(name.len()) == Some(&b'>'))
        .then_some(name.len() + 2)
}

/// Length of a closing tag `</name>` at `pos`, if there is one.
fn close_tag(bytes: &[u8], pos: usize, name: &str) -> Option<usize> {
    let rest = &bytes[pos + 1..];
    if rest.first() != Some(&b'/') || !starts_with_ignore_case(&rest[1..], name) {
        return None;
    }
    let after = &rest[1 + name.len()..];
    let spaces = after.iter().take_while(|b| b.is_ascii_whitespace()).count();
    (after.get(spaces) == Some(&b'>')).then_some(name.len() + spaces + 3)
}

/// Where the element opened just before `from` ends, counting nested tags of the same name.
fn close_of(bytes: &[u8], from: usize, name: &str) -> Option<usize> {
    let mut depth = 1usize;
    let mut at = from;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        let pos = at + offset;
        if let Some(len) = close_tag(bytes, pos, name) {
            depth -= 1;
            if depth == 0 {
                return Some(pos + len);
            }
            at = pos + len;
        } else if let Some(len) = open_tag(bytes, pos, name) {
            depth += 1;
            at = pos + len;
        } else {
            at = pos + 1;
        }
    }
    None
}

fn starts_with_ignore_case(haystack: &[u8], name: &str) -> bool {
    haystack.len() >= name.len() && haystack[..name.len()].eq_ignore_ascii_case(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_table() {
        let cases: &[(&str, &str)] = &[
            ("no tags at all", "no tags at all"),
            ("a < b and c > d", "a < b and c > d"),
            ("keep <private>secret</private> this", "keep  this"),
            ("<private>a</private>x<private>b</private>", "x"),
            ("multi <private>line\none\ntwo</private>!", "multi !"),
            ("case <PRIVATE>shout</Private> ok", "case  ok"),
            (
                "nested <private>a <private>b</private> c</private> end",
                "nested  end",
            ),
            ("unclosed <private>everything after", "unclosed "),
            ("stray </private> stays", "stray </private> stays"),
            (
                "a <private key> is not a tag",
                "a <private key> is not a tag",
            ),
            (
                "ctx <claude-mem-context>old memory</claude-mem-context>",
                "ctx ",
            ),
            (
                "<privateer>not a tag</privateer>",
                "<privateer>not a tag</privateer>",
            ),
            ("close spaced <private>x</private >y", "close spaced y"),
        ];
        for (input, want) in cases {
            assert_eq!(strip(input), *want, "input: {input:?}");
        }
    }

    #[test]
    fn untagged_text_is_borrowed_not_copied() {
        assert!(matches!(strip("plain <b>html</b>"), Cow::Borrowed(_)));
        assert!(matches!(strip_json(r#"{"a":"<div>"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn task_notifications_alone_are_internal() {
        assert!(is_internal(
            "<task-notification>\n<task-id>1</task-id>\n</task-notification>"
        ));
        assert!(!is_internal(
            "<task-notification>x</task-notification> and my question"
        ));
        assert!(!is_internal("plain prompt"));
    }

    #[test]
    fn system_reminders_are_noise_only_in_messages() {
        let text = "do it<system-reminder>\nnoise\n</system-reminder>";
        assert_eq!(strip_message(text), "do it");
        assert_eq!(strip(text), text);
    }

    #[test]
    fn json_strings_and_keys_are_stripped() {
        let raw = r#"{"cmd":"echo <private>pw</private>","list":["a<private>b</private>"],"<private>k</private>x":1}"#;
        let clean = strip_json(raw);
        assert!(!clean.contains("pw") && !clean.contains("\"b\"") && !clean.contains('k'));
        let value: Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(value["cmd"], "echo ");
        assert_eq!(value["list"][0], "a");
        assert_eq!(value["x"], 1);
    }

    #[test]
    fn escaped_tags_are_seen() {
        let raw = r#"{"a":"\u003cprivate>pw\u003c/private>ok"}"#;
        assert_eq!(strip_json(raw), r#"{"a":"ok"}"#);
        let raw = r#"{"a":"<\u0070rivate>pw</private>ok"}"#;
        assert_eq!(strip_json(raw), r#"{"a":"ok"}"#);
    }

    #[test]
    fn many_unfinished_tags_take_linear_time() {
        // Quadratic behaviour took minutes on inputs of this size.
        let text = "<private ".repeat(200_000);
        assert_eq!(strip(&text), text);
        let text = "<private>".repeat(200_000);
        assert_eq!(strip(&text), "");
    }
}
