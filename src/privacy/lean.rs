//! What of each known tool's payload is kept: what a summarizer and a person need, once.
//!
//! Claude Code hands a hook everything: a Write's content twice (input and response), an
//! Edit's whole original file for a one-word change, a Read's whole file, a command's whole
//! output. Kept instead: for Write, the path and the content once; for Edit and MultiEdit, the
//! path, the old and new strings and the patch; for Read, the path and a head and tail of what
//! was read (the file is on disk); for Bash, the command and a head and tail of its output.
//! Members that say nothing (`null`, `false`, `""`, `[]`, `{}`) go. Unknown tools keep their
//! payload. A file that is a secret by its name (`.env`, `id_rsa`, …) is recorded, its content
//! is not.
//!
//! This is part of the filter of the JSON walk (see `json`): members are left out once the
//! private parts are gone, and a long string is cut, then what is kept of it redacted, read
//! with a margin beyond each cut so that a cut never leaves a part of a secret no rule knows.

use super::secrets::Redactor;

/// The tools whose payload has a lean shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Write,
    Edit,
    MultiEdit,
    Read,
    Bash,
}

/// Which part of a tool call a JSON document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Input,
    Response,
    Error,
}

/// How one piece of one tool call is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    tool: Tool,
    piece: Piece,
    /// The file read or written is a secret by its name: its content is not kept.
    secret_file: bool,
}

impl Shape {
    /// The shape of `piece` of a call to `tool`, which names `file` (its `file_path`); `None`
    /// for a tool kept as it is.
    pub fn of(tool_name: &str, piece: Piece, file: Option<&str>) -> Option<Shape> {
        let tool = match tool_name {
            "Write" => Tool::Write,
            "Edit" => Tool::Edit,
            "MultiEdit" => Tool::MultiEdit,
            "Read" => Tool::Read,
            "Bash" => Tool::Bash,
            _ => return None,
        };
        let secret_file =
            names_files(tool_name) && file.is_some_and(super::secrets::is_secret_file);
        Some(Shape {
            tool,
            piece,
            secret_file,
        })
    }

    /// Whether the member `key`, inside the members `path` (outermost first), is left out
    /// whatever its value.
    fn drops(&self, path: &[&str], key: &str) -> bool {
        use Tool::*;
        if self.piece != Piece::Response {
            return false;
        }
        match (self.tool, path) {
            (Write, []) => matches!(
                key,
                "content" | "filePath" | "originalFile" | "structuredPatch"
            ),
            (Edit, []) => {
                matches!(
                    key,
                    "filePath" | "oldString" | "newString" | "originalFile" | "replaceAll"
                ) || (self.secret_file && key == "structuredPatch")
            }
            (MultiEdit, []) => {
                matches!(key, "filePath" | "edits" | "originalFile")
                    || (self.secret_file && key == "structuredPatch")
            }
            (Read, ["file"]) => matches!(key, "filePath" | "base64"),
            _ => false,
        }
    }

    /// What becomes of a string value under the member `key` (empty at the top or in an
    /// array at the top), inside `path`.
    fn string(&self, path: &[&str], key: &str) -> Text {
        if self.secret_file {
            let names_the_file = path.is_empty()
                && matches!(key, "file_path" | "filePath" | "notebook_path" | "type");
            return if names_the_file {
                Text::Keep
            } else {
                Text::SecretFile
            };
        }
        match self.piece {
            // What Claude asked for is kept whole: the command, the content written.
            Piece::Input => Text::Keep,
            Piece::Response | Piece::Error => Text::Bound,
        }
    }
}

/// Whether calls of `tool` read or write the file their input names (`file_path`): whether
/// that file must be known before their pieces are cleaned.
pub fn names_files(tool: &str) -> bool {
    matches!(tool, "Read" | "Write" | "Edit" | "MultiEdit")
}

/// What becomes of a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    Keep,
    /// Kept whole when short, else a head and a tail.
    Bound,
    /// Replaced by the secret-file marker.
    SecretFile,
    /// In a member left out: it does not matter.
    Gone,
}

/// A container the walk is in.
struct Frame {
    /// The member being read, when the container is an object.
    key: Option<String>,
    /// Inside a member that is left out.
    gone: bool,
}

/// The lean filter's part of a walk: where it is, and what each member and string becomes.
pub struct Lean {
    shape: Shape,
    frames: Vec<Frame>,
}

impl Lean {
    pub fn new(shape: Shape) -> Lean {
        Lean {
            shape,
            frames: Vec::new(),
        }
    }

    /// The keys of the members around the current one, outermost first.
    fn path(&self) -> Vec<&str> {
        let enclosing = self.frames.len().saturating_sub(1);
        self.frames[..enclosing]
            .iter()
            .filter_map(|f| f.key.as_deref())
            .collect()
    }

    fn current_key(&self) -> &str {
        self.frames
            .last()
            .and_then(|f| f.key.as_deref())
            .unwrap_or("")
    }

    /// Whether the value being read is in a member left out.
    fn in_gone(&self) -> bool {
        self.frames.last().is_some_and(|frame| {
            frame.gone
                || frame
                    .key
                    .as_deref()
                    .is_some_and(|key| self.shape.drops(&self.path(), key))
        })
    }

    /// An object's key was read.
    pub fn key(&mut self, key: &str) {
        if let Some(frame) = self.frames.last_mut() {
            frame.key = Some(key.to_string());
        }
    }

    /// A container opens: an object's keys name its members, an array's values have none.
    pub fn open(&mut self, object: bool) {
        let gone = self.in_gone();
        let _ = object;
        self.frames.push(Frame { key: None, gone });
    }

    pub fn close(&mut self) {
        self.frames.pop();
    }

    /// What becomes of the string value being read.
    pub fn text(&self) -> Text {
        if self.in_gone() {
            return Text::Gone;
        }
        self.shape.string(&self.path(), self.current_key())
    }

    /// Whether the member whose value (`value`, as written) just ended is kept.
    pub fn keep_member(&self, value: &str) -> bool {
        !self.in_gone() && !says_nothing(value)
    }
}

/// `null`, `false`, `""`, `[]` or `{}`, whatever the spaces.
fn says_nothing(value: &str) -> bool {
    let value = value.trim();
    let empty_container = ["[]", "{}"].iter().any(|pair| {
        value.len() >= 2
            && value.starts_with(&pair[..1])
            && value.ends_with(&pair[1..])
            && value[1..value.len() - 1].trim().is_empty()
    });
    empty_container || matches!(value, "null" | "false" | "\"\"")
}

/// Bytes kept at the start and at the end of a long string; a string up to `WHOLE` bytes is
/// kept whole.
const HEAD: usize = 2048;
const TAIL: usize = 2048;
const WHOLE: usize = 5 * 1024;

/// How far past each cut secrets are looked for, at least: more than any rule reads around a
/// secret (a name of 128 bytes, a value of 1 KiB, a URL's authority of 512 bytes). The reach
/// then goes on to a space or line break, which no token crosses.
const MARGIN: usize = 4096;
/// How far the reach goes on looking for a space or line break, after which the whole text is
/// read (a long text without one: a minified file, a blob).
const FAR: usize = 64 * 1024;

/// A long text as its head and tail around a line saying how much was cut, with the secrets of
/// what is kept redacted by `redactor`; each cut falls on a space or line break near it when
/// there is one, so that a word (or a token) is not split. `None` when the text is short
/// enough to keep whole.
///
/// Cut first, then redact: what is cut is never searched. Each kept part is searched with a
/// margin beyond its cut that ends on a space or line break, so a secret that crosses a cut is
/// seen whole (a key block crossing it without its other end counts to the cut, fail closed)
/// and is replaced whole. Where no such margin can be had (no space or line break near), the
/// whole text is searched.
pub fn bound(text: &str, redactor: &Redactor) -> Option<String> {
    if text.len() <= WHOLE {
        return None;
    }
    let head_end = cut_before(text, HEAD);
    let tail_start = cut_after(text, text.len() - TAIL);
    let (head, tail) = (0..head_end, tail_start..text.len());
    let windows = space_after(text, head_end + MARGIN)
        .zip(space_before(text, tail_start.saturating_sub(MARGIN)))
        .filter(|(head, tail)| head < tail);
    let mut parts = match windows {
        Some((head_window, tail_window)) => {
            let mut parts = redactor.redact_parts(text, 0..head_window, &[head]);
            parts.extend(redactor.redact_parts(text, tail_window..text.len(), &[tail]));
            parts
        }
        None => redactor.redact_parts(text, 0..text.len(), &[head, tail]),
    };
    let tail = parts.pop().unwrap_or_default();
    let head = parts.pop().unwrap_or_default();
    let cut = tail_start - head_end;
    Some(format!("{head}\n[… {cut} bytes cut …]\n{tail}"))
}

/// Just before the first space or line break at or after `from` (the end of `text` when it
/// ends first), looked for up to `FAR` bytes on.
fn space_after(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if from >= bytes.len() {
        return Some(bytes.len());
    }
    let reach = bytes.len().min(from + FAR);
    match bytes[from..reach].iter().position(u8::is_ascii_whitespace) {
        Some(i) => Some(from + i),
        None => (reach == bytes.len()).then_some(reach),
    }
}

/// Just after the last space or line break before `to` (the start of `text` when it starts
/// first), looked for up to `FAR` bytes back.
fn space_before(text: &str, to: usize) -> Option<usize> {
    let reach = to.saturating_sub(FAR);
    match text.as_bytes()[reach..to]
        .iter()
        .rposition(u8::is_ascii_whitespace)
    {
        Some(i) => Some(reach + i + 1),
        None => (reach == 0).then_some(0),
    }
}

/// An end for a head of about `max` bytes: after the last space or line break in its second
/// half, else at a character boundary.
fn cut_before(text: &str, max: usize) -> usize {
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let bytes = text.as_bytes();
    bytes[end / 2..end]
        .iter()
        .rposition(u8::is_ascii_whitespace)
        .map_or(end, |i| end / 2 + i + 1)
}

/// A start for a tail from about `from`: after the first space or line break in the next
/// half of what is left, else at a character boundary.
fn cut_after(text: &str, from: usize) -> usize {
    let mut start = from;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let reach = (text.len() - start) / 2;
    text.as_bytes()[start..start + reach]
        .iter()
        .position(u8::is_ascii_whitespace)
        .map_or(start, |i| start + i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_keep_a_head_and_a_tail_cut_between_words() {
        let text = "word ".repeat(10_000);
        let out = bound(&text, &Redactor::default()).unwrap();
        assert!(out.len() < HEAD + TAIL + 64, "{}", out.len());
        let (head, rest) = out.split_once("\n[… ").unwrap();
        let (cut, tail) = rest.split_once(" bytes cut …]\n").unwrap();
        assert!(head.ends_with("word "), "{head}");
        assert!(tail.starts_with("word"), "{tail}");
        assert_eq!(
            head.len() + cut.parse::<usize>().unwrap() + tail.len(),
            text.len()
        );
        assert_eq!(bound("short", &Redactor::default()), None);
        let crabs = "🦀".repeat(5000);
        let out = bound(&crabs, &Redactor::default()).unwrap();
        assert!(out.starts_with('🦀') && out.ends_with('🦀'));
    }

    #[test]
    fn values_that_say_nothing() {
        for v in ["null", "false", "\"\"", "[ ]", "{\n}"] {
            assert!(says_nothing(v), "{v}");
        }
        for v in ["0", "true", "\" \"", "[1]", "{\"a\":1}"] {
            assert!(!says_nothing(v), "{v}");
        }
    }

    #[test]
    fn shapes_of_known_tools_only() {
        assert!(Shape::of("mcp__db__query", Piece::Response, None).is_none());
        let env = Shape::of("Read", Piece::Response, Some("/p/.env")).unwrap();
        assert!(env.secret_file);
        assert_eq!(env.string(&["file"], "content"), Text::SecretFile);
        let bash = Shape::of("Bash", Piece::Input, Some("/p/.env")).unwrap();
        assert!(!bash.secret_file);
    }
}
