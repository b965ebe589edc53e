//! A tolerant mirror of the JSON Claude Code sends on a hook's stdin.
//!
//! Only the fields claude-mem reads are named; unknown fields and events are fine. A field of
//! the wrong type reads as absent instead of failing the whole event, so a later Claude Code
//! that changes one field does not cost us the others. Tool input and output stay raw JSON
//! text: rebuilding a tree of a 5 MB tool response would cost more than storing it.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

pub type Text<'a> = Option<Cow<'a, str>>;

#[derive(Debug, Default, Deserialize)]
pub struct Event<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    pub hook_event_name: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub session_id: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub transcript_path: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub cwd: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub prompt_id: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub tool_name: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub tool_use_id: Text<'a>,
    #[serde(borrow, default)]
    pub tool_input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub tool_response: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "flag")]
    pub is_interrupt: Option<bool>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub prompt: Text<'a>,
    #[serde(default, deserialize_with = "flag")]
    pub stop_hook_active: Option<bool>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub last_assistant_message: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub source: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub model: Text<'a>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub reason: Text<'a>,
    /// Codex's alone (Claude Code sends none): how a Codex event that came through a command
    /// without `--agent` (a hooks file written by hand) is told.
    #[serde(borrow, default, deserialize_with = "text")]
    pub turn_id: Text<'a>,
    /// Gemini's and Copilot's (Claude Code sends none): the event's time, which names a tool
    /// call they send no id for.
    #[serde(borrow, default, deserialize_with = "text")]
    pub timestamp: Text<'a>,
}

impl<'a> Event<'a> {
    /// Parses one event. Only a JSON object is an event (serde would also read a struct
    /// from an array).
    pub fn parse(input: &'a [u8]) -> Result<Event<'a>, serde_json::Error> {
        let first = input.iter().find(|b| !b.is_ascii_whitespace());
        if first.is_some_and(|b| *b != b'{') {
            return Err(serde::de::Error::custom("the event is not a JSON object"));
        }
        serde_json::from_slice(input)
    }

    /// A field's value, when present and not empty.
    pub fn get<'s>(field: &'s Text<'a>) -> Option<&'s str> {
        field.as_deref().filter(|s| !s.is_empty())
    }
}

/// JavaScript strings may hold half an emoji (a string cut mid-character), which
/// JSON.stringify writes as a lone `\\udXXX` escape and serde refuses. One such character must
/// not cost the whole event: this returns the input with each lone surrogate escape replaced by
/// `\\uFFFD`, or `None` when there is none. Escaped backslashes (`\\\\`) are skipped, so text
/// that merely looks like an escape is kept.
pub fn repair_lone_surrogates(input: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u16> {
        let hex = input.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let paired = |at: usize| unit(at + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
    let mut out = Vec::with_capacity(input.len());
    let mut repaired = false;
    let mut i = 0;
    while i < input.len() {
        if input[i] != b'\\' {
            out.push(input[i]);
            i += 1;
            continue;
        }
        match unit(i) {
            Some(0xD800..=0xDBFF) if paired(i) => {
                out.extend_from_slice(&input[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.extend_from_slice(b"\\uFFFD");
                repaired = true;
                i += 6;
            }
            _ => {
                // Any other escape, `\\\\` included: copy it whole.
                let end = (i + 2).min(input.len());
                out.extend_from_slice(&input[i..end]);
                i = end;
            }
        }
    }
    repaired.then_some(out)
}

/// A string, or absent for anything else.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    d.deserialize_any(Lenient(|v| match v {
        Seen::Str(s) => Some(s),
        Seen::Bool(_) | Seen::Other => None,
    }))
}

/// A boolean, or absent for anything else.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_any(Lenient(|v| match v {
        Seen::Bool(b) => Some(b),
        Seen::Str(_) | Seen::Other => None,
    }))
}

enum Seen<'de> {
    Str(Cow<'de, str>),
    Bool(bool),
    Other,
}

struct Lenient<F>(F);

impl<'de, T, F: FnOnce(Seen<'de>) -> Option<T>> Visitor<'de> for Lenient<F> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Str(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Str(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Str(Cow::Owned(v))))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Other))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Other))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Other))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Other))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((self.0)(Seen::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok((self.0)(Seen::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((self.0)(Seen::Other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_read_as_absent_and_unknown_fields_are_ignored() {
        let e = Event::parse(
            br#"{"session_id":7,"tool_name":["x"],"cwd":{"a":1},"is_interrupt":"yes","new":{"z":[1]},"prompt":"hi"}"#,
        )
        .unwrap();
        assert!(e.session_id.is_none() && e.tool_name.is_none() && e.cwd.is_none());
        assert_eq!(e.is_interrupt, None);
        assert_eq!(e.prompt.as_deref(), Some("hi"));
    }

    #[test]
    fn half_an_emoji_does_not_cost_the_event() {
        let input =
            br#"{"session_id":"s","prompt":"cut \ud83d here, kept \ud83d\ude00, not \\ud83d"}"#;
        assert!(Event::parse(input).is_err());
        let repaired = repair_lone_surrogates(input).unwrap();
        let e = Event::parse(&repaired).unwrap();
        assert_eq!(
            e.prompt.as_deref(),
            Some("cut \u{fffd} here, kept \u{1f600}, not \\ud83d")
        );
    }

    #[test]
    fn nothing_to_repair_is_none() {
        assert!(repair_lone_surrogates(br#"{"a":"\ud83d\ude00 \\ud83d \u00e9"}"#).is_none());
    }

    #[test]
    fn only_objects_are_events() {
        for bad in [&b"[]"[..], b"null", b"3", b"\"s\"", b"{", b""] {
            assert!(
                Event::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
