//! A streaming rewriter of JSON text: every string, keys included, passes through a transform
//! in document order, and only the strings it changes are re-encoded; everything else is
//! copied byte for byte.
//!
//! Building a tree instead (serde_json `Value`) loses what a filter must see: an object keeps
//! only the last of two equal keys, a number out of range or nesting deeper than 128 fails the
//! whole parse, and re-serializing a 5 MB tool response costs more than storing it. Here no
//! tree is built, numbers stay text, and nesting costs one bit per level.

use std::borrow::Cow;

/// What to do with each value of a document, in document order. Implemented by each filter
/// (private tags, and later secret redaction) that shares the one walk.
pub trait Rewrite {
    /// The new text of a string, or `None` to keep it as written. `key` tells an object's key
    /// from a value.
    fn string(&mut self, text: &str, key: bool) -> Option<String>;

    /// Whether a number, `true` or `false` is kept as written; when not, it becomes `null`.
    fn keep_literal(&mut self) -> bool {
        true
    }
}

/// Text that is not one JSON document; the byte offset where reading stopped.
#[derive(Debug, PartialEq)]
pub struct Invalid(pub usize);

/// What may come next at some point of the document.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Value,
    ValueOrClose,
    Key,
    KeyOrClose,
    Colon,
    CommaOrClose,
    End,
}

/// Passes every string and literal of `json` through `rewrite`. Borrowed when nothing changed.
pub fn rewrite<'a>(json: &'a str, rewrite: &mut impl Rewrite) -> Result<Cow<'a, str>, Invalid> {
    let bytes = json.as_bytes();
    let mut out = Splice::new(json);
    let mut nesting = Nesting::default();
    let mut expect = Expect::Value;
    let mut at = 0;
    loop {
        at += bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        let Some(&byte) = bytes.get(at) else { break };
        let value = matches!(expect, Expect::Value | Expect::ValueOrClose);
        let key = matches!(expect, Expect::Key | Expect::KeyOrClose);
        let next = match byte {
            b'{' | b'[' if value => {
                nesting.push(byte == b'{');
                at += 1;
                if byte == b'{' {
                    Expect::KeyOrClose
                } else {
                    Expect::ValueOrClose
                }
            }
            b'}' if matches!(expect, Expect::KeyOrClose | Expect::CommaOrClose)
                && nesting.pop() == Some(true) =>
            {
                at += 1;
                nesting.after_value()
            }
            b']' if matches!(expect, Expect::ValueOrClose | Expect::CommaOrClose)
                && nesting.pop() == Some(false) =>
            {
                at += 1;
                nesting.after_value()
            }
            b',' if expect == Expect::CommaOrClose => {
                at += 1;
                if nesting.in_object() {
                    Expect::Key
                } else {
                    Expect::Value
                }
            }
            b':' if expect == Expect::Colon => {
                at += 1;
                Expect::Value
            }
            b'"' if value || key => {
                let (end, escaped) = string_end(bytes, at)?;
                let raw = &json[at + 1..end - 1];
                let text = if escaped {
                    Cow::Owned(decode(raw).ok_or(Invalid(at))?)
                } else {
                    Cow::Borrowed(raw)
                };
                if let Some(new) = rewrite.string(&text, key) {
                    out.replace(at..end, |o| encode_into(o, &new));
                }
                at = end;
                if key {
                    Expect::Colon
                } else {
                    nesting.after_value()
                }
            }
            b'-' | b'0'..=b'9' | b'a'..=b'z' if value => {
                let end = at
                    + bytes[at..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
                        .count();
                if &json[at..end] != "null" && !rewrite.keep_literal() {
                    out.replace(at..end, |o| o.push_str("null"));
                }
                at = end;
                nesting.after_value()
            }
            _ => return Err(Invalid(at)),
        };
        expect = next;
    }
    if expect != Expect::End {
        return Err(Invalid(at));
    }
    Ok(out.finish())
}

/// The open containers, innermost last: a bit each, set for an object.
#[derive(Default)]
struct Nesting {
    bits: Vec<u64>,
    depth: usize,
}

impl Nesting {
    fn push(&mut self, object: bool) {
        let (word, bit) = (self.depth / 64, self.depth % 64);
        if word == self.bits.len() {
            self.bits.push(0);
        }
        self.bits[word] = self.bits[word] & !(1 << bit) | (u64::from(object) << bit);
        self.depth += 1;
    }

    /// Closes the innermost container; whether it was an object.
    fn pop(&mut self) -> Option<bool> {
        let object = self.in_object_at(self.depth.checked_sub(1)?);
        self.depth -= 1;
        Some(object)
    }

    fn in_object(&self) -> bool {
        self.depth > 0 && self.in_object_at(self.depth - 1)
    }

    fn in_object_at(&self, level: usize) -> bool {
        self.bits[level / 64] & (1 << (level % 64)) != 0
    }

    fn after_value(&self) -> Expect {
        if self.depth == 0 {
            Expect::End
        } else {
            Expect::CommaOrClose
        }
    }
}

/// The output, copied from the input only once something changes.
struct Splice<'a> {
    input: &'a str,
    out: Option<String>,
    copied_to: usize,
}

impl<'a> Splice<'a> {
    fn new(input: &'a str) -> Splice<'a> {
        Splice {
            input,
            out: None,
            copied_to: 0,
        }
    }

    /// Writes what `write` writes instead of the input's `range`.
    fn replace(&mut self, range: std::ops::Range<usize>, write: impl FnOnce(&mut String)) {
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.input.len()));
        out.push_str(&self.input[self.copied_to..range.start]);
        write(out);
        self.copied_to = range.end;
    }

    fn finish(self) -> Cow<'a, str> {
        match self.out {
            None => Cow::Borrowed(self.input),
            Some(mut out) => {
                out.push_str(&self.input[self.copied_to..]);
                Cow::Owned(out)
            }
        }
    }
}

/// The end (just past the closing quote) of the string that opens at `at`, and whether it holds
/// an escape.
fn string_end(bytes: &[u8], at: usize) -> Result<(usize, bool), Invalid> {
    let mut escaped = false;
    let mut i = at + 1;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'"' || b == b'\\') {
        i += offset;
        if bytes[i] == b'"' {
            return Ok((i + 1, escaped));
        }
        escaped = true;
        i += 2;
        if i > bytes.len() {
            break;
        }
    }
    Err(Invalid(at))
}

/// The text of a string's body (between its quotes). A lone surrogate (half an emoji, which
/// JavaScript writes and serde_json lets through unparsed) becomes U+FFFD.
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'\\') {
        out.push_str(&raw[at..at + offset]);
        let (c, next) = escape_at(bytes, at + offset)?;
        out.push(c);
        at = next;
    }
    out.push_str(&raw[at..]);
    Some(out)
}

/// The character an escape at `at` (a backslash) stands for, and where the escape ends.
fn escape_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex_unit(bytes, at)?;
            if (0xD800..0xDC00).contains(&unit) {
                if let Some(low @ 0xDC00..0xE000) = hex_unit(bytes, at + 6) {
                    let code =
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    return Some((char::from_u32(code)?, at + 12));
                }
            }
            return Some((char::from_u32(unit.into()).unwrap_or('\u{fffd}'), at + 6));
        }
        _ => return None,
    };
    Some((c, at + 2))
}

/// The UTF-16 unit of a `\uXXXX` escape at `at`.
pub fn hex_unit(bytes: &[u8], at: usize) -> Option<u16> {
    let escape = bytes.get(at..at + 6)?;
    if &escape[..2] != b"\\u" || !escape[2..].iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
}

/// The character written at `at` in JSON text, escaped or not, and where it ends. A byte of a
/// multi-byte character reads as U+FFFD: callers compare with ASCII.
pub fn char_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    match *bytes.get(at)? {
        b'\\' => escape_at(bytes, at),
        b if b.is_ascii() => Some((char::from(b), at + 1)),
        _ => Some(('\u{fffd}', at + 1)),
    }
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it.
fn encode_into(out: &mut String, text: &str) {
    out.push('"');
    let mut from = 0;
    for (i, b) in text.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0C => "\\f",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&text[from..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(escape);
        }
        from = i + 1;
    }
    out.push_str(&text[from..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upper-cases every string and records what it saw.
    #[derive(Default)]
    struct Shout {
        seen: Seen,
    }

    impl Rewrite for Shout {
        fn string(&mut self, text: &str, key: bool) -> Option<String> {
            self.seen.push((text.to_string(), key));
            let upper = text.to_uppercase();
            (upper != text).then_some(upper)
        }
    }

    type Seen = Vec<(String, bool)>;

    fn shout(json: &str) -> (Result<Cow<'_, str>, Invalid>, Seen) {
        let mut shout = Shout::default();
        (rewrite(json, &mut shout), shout.seen)
    }

    #[test]
    fn only_changed_strings_are_rewritten_the_rest_is_copied_as_written() {
        let json = " { \"a\" : [ 1e400 , \"x\\u0079\" , \"Z\" , true , null ] , \"a\":-0.5E+3 } ";
        let (out, seen) = shout(json);
        assert_eq!(
            out.unwrap(),
            " { \"A\" : [ 1e400 , \"XY\" , \"Z\" , true , null ] , \"A\":-0.5E+3 } "
        );
        let seen: Vec<_> = seen.iter().map(|(s, k)| (s.as_str(), *k)).collect();
        assert_eq!(
            seen,
            [("a", true), ("xy", false), ("Z", false), ("a", true)]
        );
    }

    #[test]
    fn nothing_changed_is_borrowed() {
        let (out, _) = shout(r#"{"A":["B\n",{"C":1}]}"#);
        assert!(matches!(out, Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn nesting_has_no_depth_limit() {
        let json = format!("{}\"a\"{}", "[{\"k\":".repeat(5000), "}]".repeat(5000));
        let (out, seen) = shout(&json);
        assert_eq!(out.unwrap().matches("\"K\"").count(), 5000);
        assert_eq!(seen.last().unwrap(), &("a".to_string(), false));
    }

    #[test]
    fn escapes_decode_and_reencode_like_serde_json() {
        let json = r#"["\"\\\/\b\f\n\r\t\u00e9\ud83e\udd80 \ud83e x\u0001"]"#;
        let (_, seen) = shout(json);
        assert_eq!(
            seen[0].0,
            "\"\\/\u{8}\u{c}\n\r\t\u{e9}\u{1f980} \u{fffd} x\u{1}"
        );
        let mut out = String::new();
        encode_into(&mut out, &seen[0].0);
        assert_eq!(out, serde_json::to_string(&seen[0].0).unwrap());
    }

    #[test]
    fn literals_can_be_dropped_to_null() {
        struct DropAll;
        impl Rewrite for DropAll {
            fn string(&mut self, _: &str, _: bool) -> Option<String> {
                None
            }
            fn keep_literal(&mut self) -> bool {
                false
            }
        }
        let out = rewrite(r#"{"n":[12,true,false,null,"s"]}"#, &mut DropAll).unwrap();
        assert_eq!(out, r#"{"n":[null,null,null,null,"s"]}"#);
    }

    #[test]
    fn what_is_not_one_document_is_refused() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\"}",
            "{\"a\":1,}",
            "{1:2}",
            "[\"open]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[1] [2]",
            "}",
            "[}",
            "{]",
            "<",
            "[1:2]",
            "\"a\"\"b\"",
        ] {
            assert!(shout(bad).0.is_err(), "{bad:?}");
        }
    }
}
