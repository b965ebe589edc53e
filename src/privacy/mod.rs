//! Privacy at the edge: what the user marked private never reaches the disk.
//!
//! `<private>…</private>` is the user's mark; `<claude-mem-context>…</claude-mem-context>` is
//! the context we injected ourselves, removed so memory never feeds on itself. Both are removed
//! from every text a hook stores, before anything is written (the spill file included). Tag
//! names match in any letter case: someone who typed `<PRIVATE>` meant it too. Tags nest; an
//! opening tag without its closing tag removes everything after it (fail closed).
//!
//! In a JSON document (a tool's input, output or error) the tags are looked for in the decoded
//! text of every string, keys included, so JSON escapes anywhere in a tag do not hide it; and
//! the document is one text: a tag left open at the end of one string covers the strings after
//! it, in document order, until it closes. Text that cannot hold a tag is returned untouched,
//! and finding that out costs a scan for `<` and its escape.
//!
//! Secrets (`secrets`) are redacted from what is left, and a known tool's payload is cut to
//! its lean shape (`lean`), in the same walk: private parts first, in the whole document as
//! Claude Code sent it, then what is left out or cut, then secrets in what is kept of each
//! string (searched a little beyond each cut, so a cut never splits a secret into parts no
//! rule knows).

mod again;
mod json;
pub mod lean;
mod ours;
pub mod secrets;
mod tags;

pub use again::{clean_payload, clean_text};
pub use ours::{SERVER_NAME, is_our_tool};

use std::borrow::Cow;

use crate::text::find;
use lean::{Lean, Shape, Text};
use secrets::Redactor;

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

fn strip_tags<'a>(text: &'a str, names: &[&'static str]) -> Cow<'a, str> {
    match tags::strip(text, names, &mut None) {
        Some(clean) => Cow::Owned(clean),
        None => Cow::Borrowed(text),
    }
}

/// Cleans a JSON document given as text (a tool's input, response or error): removes private
/// parts from every string (keys included), cuts the document to `shape` (a known tool's lean
/// shape), and redacts secrets, copying the rest as written.
///
/// While a tag is open (to the end of the document when it never closes), every string, key
/// or value, becomes `""` and every number or boolean `null`: the document keeps its shape and
/// stays valid JSON (several keys of one object may then read `""`, which parsers accept,
/// keeping the last). Without a shape, returned untouched, without a walk, when it cannot hold
/// a tag or a secret; text that is not JSON and might hold a tag becomes `null` (fail closed),
/// other text that is not JSON has its secrets redacted as plain text.
///
/// `keep` is how many bytes of the result the caller keeps (`usize::MAX` for all): as what is
/// written is never revisited, the work may stop once more than that is known, and the answer
/// is then longer than `keep`, its first `keep` bytes those of the whole result. A shape drops
/// members, so with one the document is always walked whole.
pub fn clean_json<'a>(
    json: &'a str,
    redactor: &Redactor,
    shape: Option<Shape>,
    keep: usize,
) -> Cow<'a, str> {
    let tags = might_hold_tag(json, keep);
    if shape.is_none() && !tags && !redactor.might_hold(json, keep) {
        return Cow::Borrowed(json);
    }
    let keep = if shape.is_some() { usize::MAX } else { keep };
    let mut cleaner = Cleaner {
        open: None,
        redactor,
        lean: shape.map(Lean::new),
        key: None,
    };
    match json::rewrite(json, &mut cleaner, keep) {
        Ok(clean) => clean,
        Err(_) if tags => Cow::Borrowed("null"),
        // Not JSON (a list an older tool stored malformed, a hand-made import): its secrets are
        // still found in the text as it stands.
        Err(_) => redactor.redact(json),
    }
}

/// The walk's filter: the element a string left open carries into the next ones, where the
/// lean shape is, and the key of the value that comes next.
struct Cleaner<'r> {
    open: Option<tags::Open>,
    redactor: &'r Redactor,
    lean: Option<Lean>,
    key: Option<String>,
}

impl json::Rewrite for Cleaner<'_> {
    fn string(&mut self, text: &str, key: bool) -> Option<String> {
        let stripped = tags::strip(text, PRIVATE, &mut self.open);
        let clean = stripped.as_deref().unwrap_or(text);
        if key {
            if let Some(lean) = &mut self.lean {
                lean.key(clean);
            }
            self.key = self.redactor.on().then(|| clean.to_string());
            return match self.redactor.redact(clean) {
                Cow::Owned(redacted) => Some(redacted),
                Cow::Borrowed(_) => stripped,
            };
        }
        let key = self.key.take();
        let fate = self.lean.as_ref().map_or(Text::Keep, Lean::text);
        let redacted = match fate {
            Text::Gone => return None,
            Text::SecretFile if self.redactor.on() => {
                return Some(secrets::SECRET_FILE.to_string());
            }
            _ => match key.and_then(|key| self.redactor.member(&key, clean)) {
                Some(marker) => Cow::Owned(marker),
                None => match (fate == Text::Bound)
                    .then(|| lean::bound(clean, self.redactor))
                    .flatten()
                {
                    Some(cut) => return Some(cut),
                    None => self.redactor.redact(clean),
                },
            },
        };
        match redacted {
            Cow::Owned(redacted) => Some(redacted),
            Cow::Borrowed(_) => stripped,
        }
    }

    fn keep_literal(&mut self, _literal: &str) -> bool {
        self.key = None;
        self.open.is_none()
    }

    fn open(&mut self, object: bool) {
        self.key = None;
        if let Some(lean) = &mut self.lean {
            lean.open(object);
        }
    }

    fn close(&mut self) {
        if let Some(lean) = &mut self.lean {
            lean.close();
        }
    }

    fn keep_member(&mut self, value: &str) -> bool {
        self.lean
            .as_ref()
            .is_none_or(|lean| lean.keep_member(value))
    }
}

/// Cheap and sound pre-check on JSON text: whether some string may decode to an opening tag.
/// In JSON text `<` is written `<` or `\u003c` (any case of `c`), and any character after it
/// may be an escape too (`<p\u0072ivate>`): at each `<`, the characters that follow are
/// decoded and compared with our names. A false alarm costs a walk; a miss would cost a secret.
/// Only tags that start within the first `keep` bytes can change those bytes.
fn might_hold_tag(json: &str, keep: usize) -> bool {
    let bytes = json.as_bytes();
    let within = |at: &usize| *at <= keep;
    // SIMD searches: a byte-by-byte walk was 14% of a 5 MB capture.
    let literal = find::bytes(b'<', bytes).take_while(within).map(|i| i + 1);
    let escaped = find::subs(bytes, b"\\u003")
        .take_while(within)
        .filter(|i| matches!(bytes.get(i + 5), Some(b'c' | b'C')))
        .map(|i| i + 6);
    literal.chain(escaped).any(|after| {
        // Most `<` start no tag (`Vec<u8>`, `a < b`): the next byte tells, unless escaped.
        let next = bytes.get(after).copied().unwrap_or_default();
        (next == b'\\'
            || PRIVATE
                .iter()
                .any(|n| n.as_bytes()[0] == next.to_ascii_lowercase()))
            && PRIVATE.iter().any(|name| {
                spelled(bytes, after, name).is_some_and(|end| spelled(bytes, end, ">").is_some())
            })
    })
}

/// Where `word` (ASCII) ends if the JSON text at `at` spells it, each character written as
/// itself or as an escape, in any letter case.
fn spelled(bytes: &[u8], mut at: usize, word: &str) -> Option<usize> {
    for want in word.chars() {
        let (c, next) = json::char_at(bytes, at)?;
        if !c.eq_ignore_ascii_case(&want) {
            return None;
        }
        at = next;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Private parts only, as the filter of a tool unknown to the lean shapes.
    fn strip_json(json: &str, keep: usize) -> Cow<'_, str> {
        clean_json(json, &Redactor::new(false, Vec::new()), None, keep)
    }

    fn whole(json: &str) -> Cow<'_, str> {
        strip_json(json, usize::MAX)
    }

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

    /// Regression: text that was not JSON came back whole, secrets included, whatever the
    /// rules (an incumbent database's malformed list, an import, an old truncated payload).
    #[test]
    fn text_that_is_not_json_still_loses_its_secrets() {
        let redactor = Redactor::new(true, Vec::new());
        let broken = r#"["deploy with AKIAZ7QK2M4N5P6R7S2T", "#;
        let clean = clean_json(broken, &redactor, None, usize::MAX);
        assert_eq!(clean, r#"["deploy with [REDACTED:aws-access-key]", "#);
        let off = Redactor::new(false, Vec::new());
        assert_eq!(clean_json(broken, &off, None, usize::MAX), broken);
    }

    #[test]
    fn untagged_text_is_borrowed_not_copied() {
        assert!(matches!(strip("plain <b>html</b>"), Cow::Borrowed(_)));
        assert!(matches!(whole(r#"{"a":"<div>"}"#), Cow::Borrowed(_)));
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
        let clean = whole(raw);
        assert!(!clean.contains("pw") && !clean.contains("\"b\"") && !clean.contains('k'));
        let value: Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(value["cmd"], "echo ");
        assert_eq!(value["list"][0], "a");
        assert_eq!(value["x"], 1);
    }

    #[test]
    fn escaped_tags_are_seen() {
        let raw = r#"{"a":"\u003cprivate>pw\u003c/private>ok"}"#;
        assert_eq!(whole(raw), r#"{"a":"ok"}"#);
        let raw = r#"{"a":"<\u0070rivate>pw</private>ok"}"#;
        assert_eq!(whole(raw), r#"{"a":"ok"}"#);
    }

    #[test]
    fn an_escape_anywhere_in_a_tag_is_seen() {
        let tag = "<PriVate>";
        // Every choice of characters written as escapes, in both cases of hex digits.
        for mask in 0..1u32 << tag.len() {
            let spelled: String = tag
                .chars()
                .enumerate()
                .map(|(i, c)| match (mask >> i & 1, i % 2) {
                    (0, _) => c.to_string(),
                    (_, 0) => format!("\\u{:04x}", c as u32),
                    _ => format!("\\u{:04X}", c as u32),
                })
                .collect();
            let raw = format!(r#"{{"a":"{spelled}pw</private>ok"}}"#);
            assert!(might_hold_tag(&raw, usize::MAX), "{raw}");
            assert_eq!(whole(&raw), r#"{"a":"ok"}"#, "{raw}");
        }
    }

    #[test]
    fn what_only_looks_like_an_escaped_tag_is_kept_as_written() {
        // An escaped backslash: the text is `\u003cprivate>`, not a tag.
        for raw in [r#"{"a":"\\u003cprivate>x"}"#, r#"{"a":"<\\u0070rivate>x"}"#] {
            assert!(matches!(whole(raw), Cow::Borrowed(_)), "{raw}");
        }
    }

    #[test]
    fn every_value_of_a_repeated_key_is_stripped() {
        let raw = r#"{"c":"<private>pw</private>a","c":"b"}"#;
        assert_eq!(whole(raw), r#"{"c":"a","c":"b"}"#);
    }

    #[test]
    fn documents_no_tree_can_hold_are_stripped_and_copied_as_written() {
        let deep = format!(
            r#"{}"\u003cprivate>pw</private>ok"{}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        );
        let want = format!(r#"{}"ok"{}"#, "[".repeat(1000), "]".repeat(1000));
        assert_eq!(whole(&deep), want);
        let raw = r#"{"n":1e400,"m":1.50,"a":"\u003cprivate>pw</private>ok"}"#;
        assert_eq!(whole(raw), r#"{"n":1e400,"m":1.50,"a":"ok"}"#);
    }

    #[test]
    fn a_tag_open_at_the_end_of_a_string_covers_the_next_ones() {
        let raw = r#"{"a":"x <private>1","b":["2",3],"c":"4</private> y","d":5}"#;
        assert_eq!(whole(raw), r#"{"a":"x ","":["",null],"":" y","d":5}"#);
        let raw = r#"{"a":"x <private>1","k":{"k2":[true,null,"s"]}}"#;
        assert_eq!(whole(raw), r#"{"a":"x ","":{"":[null,null,""]}}"#);
    }

    #[test]
    fn a_caller_that_keeps_a_part_gets_the_start_of_the_whole_answer() {
        let docs = [
            r#"{"a":"keep <private>x</private> kept","b":"<private>y","c":["z</private>!",1]}"#,
            r#"{"long":"nothing to hide here at all","late":"<private>x</private>"}"#,
            r#"["\u003cprivate>x\u003c/private>","ok"]"#,
        ];
        for doc in docs {
            let all = whole(doc);
            for keep in 0..doc.len() + 2 {
                let part = strip_json(doc, keep);
                if all.len() <= keep {
                    assert_eq!(part, all, "{doc} {keep}");
                } else {
                    assert!(part.len() > keep, "{doc} {keep}: {part}");
                    assert_eq!(
                        part.as_bytes()[..keep],
                        all.as_bytes()[..keep],
                        "{doc} {keep}"
                    );
                }
            }
        }
        // A tag past what is kept is not looked for.
        assert!(matches!(strip_json(docs[1], 20), Cow::Borrowed(_)));
    }

    #[test]
    fn text_that_is_not_json_and_might_hold_a_tag_fails_closed() {
        assert_eq!(whole(r#"{"a":"<private>x""#), "null");
        assert_eq!(whole(r#"{"a":"<b>x""#), r#"{"a":"<b>x""#);
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
