//! A streaming rewriter of JSON text: every string, keys included, passes through a transform
//! in document order, and only the strings it changes are re-encoded; everything else is
//! copied byte for byte.
//!
//! Building a tree instead (serde_json `Value`) loses what a filter must see: an object keeps
//! only the last of two equal keys, a number out of range or nesting deeper than 128 fails the
//! whole parse, and re-serializing a 5 MB tool response costs more than storing it. Here no
//! tree is built, numbers stay text, and nesting costs one bit per level.
//!
//! A filter may also leave whole members of an object out (the lean shape of a tool's payload):
//! it is told where it is (containers opening and closing, each key) and asked at the end of
//! each member whether to keep it. A member left out goes with its comma, and its strings were
//! still handed over in order, so a filter that follows the whole text (private tags) sees all.

use std::borrow::Cow;
use std::ops::Range;

use crate::text::find;

/// What to do with each value of a document, called in document order. Implemented by each
/// filter (private tags, and later secret redaction) that shares the one walk. The key of an
/// object's value is the string handed over just before it, with `key` set.
pub trait Rewrite {
    /// The new text of a string, or `None` to keep it as written. `key` tells an object's key
    /// from a value.
    fn string(&mut self, text: &str, key: bool) -> Option<String>;

    /// Whether a number, `true` or `false` (`literal`, as written) is kept; when not, it
    /// becomes `null`.
    fn keep_literal(&mut self, _literal: &str) -> bool {
        true
    }

    /// A container opens (`object` tells which kind), as a value: for a filter that follows
    /// where it is.
    fn open(&mut self, _object: bool) {}

    /// The innermost open container closes.
    fn close(&mut self) {}

    /// Whether the member of an object whose value just ended is written; `value` is that
    /// value as written in the input. Asked of members up to [`MEMBER_DEPTH`] levels deep
    /// (deeper ones are kept), after `close` when the value is a container. What is written
    /// shrinks when a member is left out, so a filter that leaves any out must be walked whole
    /// (`keep` of `usize::MAX`).
    fn keep_member(&mut self, _value: &str) -> bool {
        true
    }
}

/// How deep in objects members can be left out: the bookkeeping costs a few words a level,
/// and nesting must stay cheap whatever the input (it costs a bit a level otherwise).
pub const MEMBER_DEPTH: usize = 32;

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
/// Stops once more than `keep` bytes are written: the answer then starts as the whole answer
/// would (the output is never revisited) and is longer than `keep`; the rest is not checked.
pub fn rewrite<'a>(
    json: &'a str,
    rewrite: &mut impl Rewrite,
    keep: usize,
) -> Result<Cow<'a, str>, Invalid> {
    let mut walk = Walk {
        json,
        at: 0,
        out: Splice::new(json),
        nesting: Nesting::default(),
        members: Vec::new(),
    };
    let mut expect = Expect::Value;
    while let Some(byte) = walk.next_token() {
        expect = walk.token(byte, expect, rewrite)?;
        if walk.out.written(walk.at) > keep {
            return walk.out.finish(walk.at);
        }
    }
    if expect != Expect::End {
        return Err(Invalid(walk.at));
    }
    walk.out.finish(json.len())
}

/// Where the walk is in the document.
struct Walk<'a> {
    json: &'a str,
    at: usize,
    out: Splice<'a>,
    nesting: Nesting,
    /// The objects open within [`MEMBER_DEPTH`] levels, innermost last.
    members: Vec<Members>,
}

/// Where the member being read in an object starts, in the input and in what is written, so
/// that it can be left out once its value has ended.
struct Members {
    /// Nesting depth of the object (the containers around it, itself included).
    depth: usize,
    /// Length of what is written just after the `{`.
    body: usize,
    /// Whether a member of this object was written, and whether one was left out.
    kept_any: bool,
    dropped_any: bool,
    /// Length of what is written where the current member's removal starts: at its comma
    /// when a member was written before it, else just after the `{`.
    member: usize,
    /// Where the current member's value starts in the input.
    value: usize,
    /// Length of what is written before the last comma.
    comma: usize,
}

impl Walk<'_> {
    /// The first byte of the next token, whitespace skipped.
    fn next_token(&mut self) -> Option<u8> {
        let bytes = &self.json.as_bytes()[self.at..];
        self.at += bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
        self.json.as_bytes().get(self.at).copied()
    }

    /// Reads the token that starts with `byte` where `expect` is what may come; what may come
    /// after it.
    fn token(
        &mut self,
        byte: u8,
        expect: Expect,
        rewrite: &mut impl Rewrite,
    ) -> Result<Expect, Invalid> {
        use Expect::*;
        let value = matches!(expect, Value | ValueOrClose);
        let closes = |object| {
            matches!(
                (object, expect),
                (true, KeyOrClose | CommaOrClose) | (false, ValueOrClose | CommaOrClose)
            )
        };
        if value {
            self.value_starts();
        }
        let next = match byte {
            b'"' if matches!(expect, Key | KeyOrClose) => {
                self.key_starts();
                return self.string(true, rewrite);
            }
            b'"' if value => return self.string(false, rewrite),
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' if value => return Ok(self.literal(rewrite)),
            b'{' | b'[' if value => {
                let object = byte == b'{';
                self.nesting.push(object);
                rewrite.open(object);
                if object && self.nesting.depth <= MEMBER_DEPTH {
                    let body = self.out.written(self.at + 1);
                    self.members.push(Members {
                        depth: self.nesting.depth,
                        body,
                        kept_any: false,
                        dropped_any: false,
                        member: body,
                        value: 0,
                        comma: body,
                    });
                }
                if object { KeyOrClose } else { ValueOrClose }
            }
            b'}' | b']' if closes(byte == b'}') && self.nesting.pop() == Some(byte == b'}') => {
                if self
                    .members
                    .last()
                    .is_some_and(|m| m.depth > self.nesting.depth)
                {
                    self.members.pop();
                }
                rewrite.close();
                self.at += 1;
                return Ok(self.value_ends(rewrite));
            }
            b',' if expect == CommaOrClose && self.nesting.in_object() => {
                let comma = self.out.written(self.at);
                if let Some(members) = self.innermost_members() {
                    members.comma = comma;
                }
                Key
            }
            b',' if expect == CommaOrClose => Value,
            b':' if expect == Colon => Value,
            _ => return Err(Invalid(self.at)),
        };
        self.at += 1;
        Ok(next)
    }

    /// The bookkeeping of the innermost container, when it is an object within reach.
    fn innermost_members(&mut self) -> Option<&mut Members> {
        let depth = self.nesting.depth;
        self.members.last_mut().filter(|m| m.depth == depth)
    }

    /// A key starts at `self.at`: the member it opens would be removed from its comma, or,
    /// when nothing of the object was written yet, from just after the `{` (what members left
    /// out before it left behind, their commas, goes now).
    fn key_starts(&mut self) {
        let at = self.at;
        let Some(members) = self.members.last_mut() else {
            return;
        };
        if members.depth != self.nesting.depth {
            return;
        }
        if !members.kept_any && members.dropped_any {
            self.out.cut(members.body, at);
        }
        members.member = if members.kept_any {
            members.comma
        } else {
            members.body
        };
    }

    /// A value starts at `self.at`: when it is an object's member, remembered to hand over.
    fn value_starts(&mut self) {
        let at = self.at;
        if let Some(members) = self.innermost_members() {
            members.value = at;
        }
    }

    /// A value ended at `self.at`: the filter decides on the member it completes. What may
    /// come next.
    fn value_ends(&mut self, rewrite: &mut impl Rewrite) -> Expect {
        let at = self.at;
        let json = self.json;
        if let Some(members) = self
            .members
            .last_mut()
            .filter(|m| m.depth == self.nesting.depth)
        {
            if rewrite.keep_member(&json[members.value..at]) {
                members.kept_any = true;
            } else {
                members.dropped_any = true;
                self.out.cut(members.member, at);
            }
        }
        self.nesting.after_value()
    }

    fn string(&mut self, key: bool, rewrite: &mut impl Rewrite) -> Result<Expect, Invalid> {
        let start = self.at;
        let (end, text) = read_string(self.json, start)?;
        if let Some(new) = rewrite.string(&text, key) {
            self.out.string(start..end, &new);
        }
        self.at = end;
        Ok(if key {
            Expect::Colon
        } else {
            self.value_ends(rewrite)
        })
    }

    /// A number, `true`, `false` or `null`, read loosely: it is copied, never interpreted.
    fn literal(&mut self, rewrite: &mut impl Rewrite) -> Expect {
        let start = self.at;
        let rest = &self.json.as_bytes()[start..];
        let end = start
            + rest
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
                .count();
        let literal = &self.json[start..end];
        if literal != "null" && !rewrite.keep_literal(literal) {
            self.out.null(start..end);
        }
        self.at = end;
        self.value_ends(rewrite)
    }
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

/// The output, copied from the input only once something changes. Bytes, as the string encoder
/// writes bytes; only whole UTF-8 pieces are ever written.
struct Splice<'a> {
    input: &'a str,
    out: Option<Vec<u8>>,
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

    /// Writes `text` as a JSON string instead of the input's `range`.
    fn string(&mut self, range: Range<usize>, text: &str) {
        encode_into(self.replacing(range), text);
    }

    /// Writes `null` instead of the input's `range`.
    fn null(&mut self, range: Range<usize>) {
        self.replacing(range).extend_from_slice(b"null");
    }

    /// The output, ready to take what replaces `range`: the input before it is copied.
    fn replacing(&mut self, range: Range<usize>) -> &mut Vec<u8> {
        let out = self
            .out
            .get_or_insert_with(|| Vec::with_capacity(self.input.len()));
        out.extend_from_slice(&self.input.as_bytes()[self.copied_to..range.start]);
        self.copied_to = range.end;
        out
    }

    /// Takes back what is written from length `from` on, once the input up to `at` is in it:
    /// the input is then read on from `at`.
    fn cut(&mut self, from: usize, at: usize) {
        let out = self.replacing(at..at);
        out.truncate(from);
    }

    /// How long the output is once the input up to `at` is in it.
    fn written(&self, at: usize) -> usize {
        self.out
            .as_ref()
            .map_or(at, |out| out.len() + at - self.copied_to)
    }

    /// The output, once the input up to `at` is in it; unchanged, the whole input.
    fn finish(self, at: usize) -> Result<Cow<'a, str>, Invalid> {
        let Some(mut out) = self.out else {
            return Ok(Cow::Borrowed(self.input));
        };
        out.extend_from_slice(&self.input.as_bytes()[self.copied_to..at]);
        String::from_utf8(out)
            .map(Cow::Owned)
            .map_err(|err| Invalid(err.utf8_error().valid_up_to()))
    }
}

/// The string that opens at `at`: where it ends (just past its closing quote) and its text,
/// borrowed unless it holds an escape. A lone surrogate (half an emoji, which JavaScript writes
/// and serde_json lets through unparsed) becomes U+FFFD.
fn read_string(json: &str, at: usize) -> Result<(usize, Cow<'_, str>), Invalid> {
    let bytes = json.as_bytes();
    let mut decoded: Option<String> = None;
    let mut from = at + 1;
    loop {
        let stop = from
            + find::either(b'"', b'\\', &bytes[from..])
                .next()
                .ok_or(Invalid(at))?;
        if bytes[stop] == b'"' {
            let text = match decoded {
                None => Cow::Borrowed(&json[from..stop]),
                Some(mut text) => {
                    text.push_str(&json[from..stop]);
                    Cow::Owned(text)
                }
            };
            return Ok((stop + 1, text));
        }
        let text = decoded.get_or_insert_with(String::new);
        text.push_str(&json[from..stop]);
        let (c, next) = escape_at(bytes, stop).ok_or(Invalid(stop))?;
        text.push(c);
        from = next;
    }
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
            if (0xD800..0xDC00).contains(&unit)
                && let Some(low @ 0xDC00..0xE000) = hex_unit(bytes, at + 6)
            {
                let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                return Some((char::from_u32(code)?, at + 12));
            }
            return Some((char::from_u32(unit.into()).unwrap_or('\u{fffd}'), at + 6));
        }
        _ => return None,
    };
    Some((c, at + 2))
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it. A changed string can be
/// a whole 5 MB file: the bytes that need no escape are skipped a word at a time.
fn encode_into(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut from = 0;
    loop {
        let stop = from + plain_run(&bytes[from..]);
        out.extend_from_slice(&bytes[from..stop]);
        let Some(&byte) = bytes.get(stop) else { break };
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
        }
        from = stop + 1;
    }
    out.push(b'"');
}

/// How many bytes at the start of `bytes` a JSON string holds as they are: up to the first `"`,
/// `\` or control character. Eight at a time (the bit tricks of "has a zero byte").
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let zero_in = |word: u64| word.wrapping_sub(ONES) & !word;
    let mut run = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = chunk.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
        let quote = zero_in(word ^ (ONES * u64::from(b'"')));
        let backslash = zero_in(word ^ (ONES * u64::from(b'\\')));
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        // The lowest flag is exact; flags above a real one may be borrows.
        let found = (quote | backslash | control) & HIGH;
        if found != 0 {
            return run + found.trailing_zeros() as usize / 8;
        }
        run += 8;
    }
    run + bytes[run..]
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .unwrap_or(bytes.len() - run)
}

/// The UTF-16 unit of a `\uXXXX` escape at `at`.
fn hex_unit(bytes: &[u8], at: usize) -> Option<u16> {
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
        (rewrite(json, &mut shout, usize::MAX), shout.seen)
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
    fn stopping_early_gives_the_start_of_the_whole_answer() {
        let json = r#"{"a":"x","bb":["y\n",12,{"c":"zz"}],"d":"w"}"#;
        let whole = shout(json).0.unwrap();
        for keep in 0..whole.len() + 2 {
            let part = rewrite(json, &mut Shout::default(), keep).unwrap();
            if whole.len() <= keep {
                assert_eq!(part, whole);
            } else {
                assert!(part.len() > keep, "{keep}: {part}");
                assert_eq!(part.as_bytes()[..keep], whole.as_bytes()[..keep], "{keep}");
            }
        }
    }

    #[test]
    fn nesting_has_no_depth_limit() {
        let json = format!("{}\"a\"{}", "[{\"k\":".repeat(5000), "}]".repeat(5000));
        let (out, seen) = shout(&json);
        assert_eq!(out.unwrap().matches("\"K\"").count(), 5000);
        assert_eq!(seen.last().unwrap(), &("a".to_string(), false));
    }

    #[test]
    fn escapes_decode_and_changed_strings_reencode() {
        let json = r#"["\"\\\/\b\f\n\r\t\u00e9\ud83e\udd80 \ud83e x\u0001"]"#;
        let (out, seen) = shout(json);
        assert_eq!(
            seen[0].0,
            "\"\\/\u{8}\u{c}\n\r\t\u{e9}\u{1f980} \u{fffd} x\u{1}"
        );
        let back: Vec<String> = serde_json::from_str(&out.unwrap()).unwrap();
        assert_eq!(back[0], seen[0].0.to_uppercase());
    }

    #[test]
    fn strings_are_encoded_as_serde_json_encodes_them() {
        let mut texts: Vec<String> = (0u8..0x80)
            .map(|b| format!("ab{}cdefghij\u{e9}", b as char))
            .collect();
        texts.push("🦀 \"quoted\"\n\\ end".repeat(9));
        texts.push(String::new());
        for text in texts {
            let mut out = Vec::new();
            encode_into(&mut out, &text);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
        }
    }

    #[test]
    fn literals_can_be_dropped_to_null() {
        struct DropAll;
        impl Rewrite for DropAll {
            fn string(&mut self, _: &str, _: bool) -> Option<String> {
                None
            }
            fn keep_literal(&mut self, _: &str) -> bool {
                false
            }
        }
        let out = rewrite(
            r#"{"n":[12,true,false,null,"s"]}"#,
            &mut DropAll,
            usize::MAX,
        )
        .unwrap();
        assert_eq!(out, r#"{"n":[null,null,null,null,"s"]}"#);
    }

    /// Leaves out members named `x` or valued `null`, and says where it is.
    #[derive(Default)]
    struct Lean {
        keys: Vec<String>,
        depth: usize,
        deepest: usize,
        seen: usize,
    }

    impl Rewrite for Lean {
        fn string(&mut self, text: &str, key: bool) -> Option<String> {
            self.seen += 1;
            if key {
                self.keys.truncate(self.depth);
                self.keys.resize(self.depth, String::new());
                self.keys.push(text.to_string());
            }
            None
        }
        fn open(&mut self, _object: bool) {
            self.depth += 1;
            self.deepest = self.deepest.max(self.depth);
        }
        fn close(&mut self) {
            self.depth -= 1;
        }
        fn keep_member(&mut self, value: &str) -> bool {
            let key = self.keys.get(self.depth).map(String::as_str);
            key != Some("x") && value != "null"
        }
    }

    fn lean(json: &str) -> String {
        rewrite(json, &mut Lean::default(), usize::MAX)
            .unwrap()
            .into_owned()
    }

    #[test]
    fn members_are_left_out_with_their_commas() {
        let cases = [
            (r#"{"x":1,"a":2}"#, r#"{"a":2}"#),
            (r#"{"a":1,"x":2}"#, r#"{"a":1}"#),
            (r#"{"a":1,"x":2,"b":3}"#, r#"{"a":1,"b":3}"#),
            (r#"{"x":1,"y":null}"#, r#"{}"#),
            (
                r#"{"x":1,"y":null,"a":[1,{"x":{"a":1}}],"z":null}"#,
                r#"{"a":[1,{}]}"#,
            ),
            (
                r#" { "x" : [ 1 ] , "a" : "s" , "y" : null } "#,
                r#" {"a" : "s"  } "#,
            ),
            (
                r#"[{"x":1},{"a":{"b":null,"c":2}}]"#,
                r#"[{},{"a":{"c":2}}]"#,
            ),
            (r#"{"a":"x","b":"keep"}"#, r#"{"a":"x","b":"keep"}"#),
        ];
        for (json, want) in cases {
            let out = lean(json);
            assert_eq!(out, want, "{json}");
            serde_json::from_str::<serde_json::Value>(&out).unwrap();
        }
    }

    #[test]
    fn a_member_left_out_is_seen_all_the_same() {
        let mut walk = Lean::default();
        let out = rewrite(r#"{"x":{"k":[{"deep":"v"}]}}"#, &mut walk, usize::MAX).unwrap();
        assert_eq!(out, "{}");
        assert_eq!((walk.seen, walk.deepest), (4, 4));
    }

    #[test]
    fn members_deeper_than_the_bookkeeping_are_kept() {
        let deep = format!("{}null{}", r#"{"y":"#.repeat(40), "}".repeat(40));
        let out = lean(&deep);
        assert_eq!(out.matches("null").count(), 1, "{out}");
        assert!(out.starts_with(&r#"{"y":"#.repeat(MEMBER_DEPTH)));
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
