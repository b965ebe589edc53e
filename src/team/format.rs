//! One shared file: a memory or a session summary as Markdown, a header of fields between two
//! `---` lines (one `name: value` a line), then the text. Written the same, byte for byte, for
//! the same row, so that sharing again changes nothing a review would see; read leniently,
//! since a teammate may have edited it by hand: unknown fields are ignored, a missing one
//! takes a default, and only a file that is not ours at all (no `claude-mem:` kind, no id, an
//! id that is not its name's) is refused.

use crate::text;

/// The longest field value kept from a header line, and the longest title.
const FIELD_CHARS: usize = 300;
pub const TITLE_CHARS: usize = 200;
/// The longest id a file may be named by (a UUID is 36).
const ID_CHARS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    Memory,
    Summary,
}

impl NoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Memory => "memory",
            NoteKind::Summary => "summary",
        }
    }

    fn parse(text: &str) -> Option<NoteKind> {
        match text {
            "memory" => Some(NoteKind::Memory),
            "summary" => Some(NoteKind::Summary),
            _ => None,
        }
    }
}

/// A shared memory or summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub kind: NoteKind,
    pub id: String,
    /// A memory's type (bugfix, decision, …); `summary` for a summary.
    pub label: String,
    pub title: String,
    /// When it was made (as stored: RFC 3339, UTC).
    pub when: String,
    /// The short id of the session it came from.
    pub session: String,
    /// The project's files it is about, relative to the project's root.
    pub files: Vec<String>,
    /// The database that wrote it (its `store_id`): share rewrites and removes only its own.
    pub origin: String,
    /// The Markdown text under the header.
    pub body: String,
}

/// Whether `id` can name a file: a UUID or any id of letters, digits, `-` and `_`.
pub fn is_file_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The folder of a month's notes, `2026-11`, from when a note was made (`undated` when that
/// is not a time): a month's files are few enough to list at every session start, and to
/// review on a git host that shows a folder's first thousand files only.
pub fn month(when: &str) -> String {
    match when.get(..7) {
        Some(m) if is_month(m) => m.to_string(),
        _ => UNDATED.into(),
    }
}

/// The folder of the notes whose time is not one.
pub const UNDATED: &str = "undated";

/// Whether a folder's name is one [`month`] gives.
pub fn is_month(name: &str) -> bool {
    let b = name.as_bytes();
    name == UNDATED
        || (b.len() == 7
            && b[4] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || c.is_ascii_digit()))
}

/// The file a note is kept in: `memory-<id>.md` or `summary-<id>.md`.
pub fn file_name(kind: NoteKind, id: &str) -> String {
    format!("{}-{id}.md", kind.as_str())
}

/// Where in the folder a note's file is: `2026-11/memory-<id>.md`.
pub fn path(note: &Note) -> String {
    format!("{}/{}", month(&note.when), file_name(note.kind, &note.id))
}

/// What a file's name says it holds: its kind and id; `None` for a name that is not one of
/// ours (the README, a teammate's notes, an editor's backup).
pub fn parse_name(name: &str) -> Option<(NoteKind, &str)> {
    let stem = name.strip_suffix(".md")?;
    let (kind, id) = stem.split_once('-')?;
    let kind = NoteKind::parse(kind)?;
    is_file_id(id).then_some((kind, id))
}

/// The file's text.
pub fn render(note: &Note) -> String {
    let files = serde_json::to_string(&note.files).unwrap_or_else(|_| "[]".into());
    let mut out = String::from("---\n");
    for (name, value) in [
        ("claude-mem", note.kind.as_str()),
        ("id", &note.id),
        ("type", &note.label),
        ("title", &note.title),
        ("when", &note.when),
        ("session", &note.session),
        ("files", &files),
        ("origin", &note.origin),
    ] {
        out.push_str(&format!("{name}: {}\n", field(value)));
    }
    out.push_str("---\n\n");
    out.push_str(note.body.trim_end());
    out.push('\n');
    out
}

/// A header value on one line: a newline in it would start a field of its own.
fn field(value: &str) -> String {
    text::one_line(value, FIELD_CHARS)
}

/// The note in a file named for (`kind`, `id`), or why it is not one.
pub fn parse(text: &str, kind: NoteKind, id: &str) -> Result<Note, &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it does not start with a --- header");
    }
    let mut note = Note {
        kind,
        id: id.to_string(),
        label: kind.as_str().to_string(),
        title: String::new(),
        when: String::new(),
        session: String::new(),
        files: Vec::new(),
        origin: String::new(),
        body: String::new(),
    };
    let mut said_kind = None;
    let mut said_id = None;
    let mut closed = false;
    for line in lines.by_ref() {
        let line = line.trim_end();
        if line == "---" {
            closed = true;
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = field(value.trim());
        match name.trim() {
            "claude-mem" => said_kind = NoteKind::parse(&value),
            "id" => said_id = Some(value),
            "type" if !value.is_empty() => note.label = crate::text::one_line(&value, 32),
            "title" => note.title = crate::text::one_line(&value, TITLE_CHARS),
            "when" => note.when = value,
            "session" => note.session = value,
            "files" => note.files = serde_json::from_str(&value).unwrap_or_default(),
            "origin" => note.origin = value,
            _ => {}
        }
    }
    if !closed {
        return Err("its header is not closed by a --- line");
    }
    if said_kind != Some(kind) {
        return Err("its header's claude-mem field is not the kind its name says");
    }
    if said_id.as_deref() != Some(id) {
        return Err("its header's id is not the one its name says");
    }
    note.body = text::clean(lines.collect::<String>().trim());
    note.files.retain(|f| !f.is_empty() && !f.contains('\n'));
    if note.title.is_empty() {
        note.title = text::one_line(note.body.lines().next().unwrap_or(""), TITLE_CHARS);
    }
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> Note {
        Note {
            kind: NoteKind::Memory,
            id: "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44".into(),
            label: "bugfix".into(),
            title: "Discounts rounded\nonce per order".into(),
            when: "2026-11-20T10:05:00.000Z".into(),
            session: "5f0e9d3c".into(),
            files: vec!["src/billing.rs".into()],
            origin: "o-1".into(),
            body: "Rounding moved to the order total.\n\n## Facts\n- one".into(),
        }
    }

    #[test]
    fn a_note_reads_back_as_written() {
        let text = render(&note());
        assert!(text.starts_with(
            "---\nclaude-mem: memory\nid: 0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44\ntype: bugfix\n\
             title: Discounts rounded once per order\n"
        ));
        assert!(text.contains("files: [\"src/billing.rs\"]\norigin: o-1\n---\n\nRounding"));
        let back = parse(&text, NoteKind::Memory, &note().id).unwrap();
        assert_eq!(back.title, "Discounts rounded once per order");
        assert_eq!(back.body, note().body);
        assert_eq!(back.files, note().files);
        assert_eq!(render(&back), text);
    }

    #[test]
    fn a_file_that_is_not_what_its_name_says_is_refused() {
        let text = render(&note());
        assert!(parse(&text, NoteKind::Summary, &note().id).is_err());
        assert!(parse(&text, NoteKind::Memory, "other").is_err());
        assert!(parse("no header", NoteKind::Memory, "x").is_err());
        assert!(parse("---\nclaude-mem: memory\nid: x\n", NoteKind::Memory, "x").is_err());
        let bare = parse(
            "---\nclaude-mem: memory\nid: x\n---\nA title\nmore",
            NoteKind::Memory,
            "x",
        );
        assert_eq!(bare.unwrap().title, "A title");
    }

    #[test]
    fn a_note_is_kept_in_the_folder_of_its_month() {
        assert_eq!(month("2026-11-20T10:05:00.000Z"), "2026-11");
        assert_eq!(month("yesterday"), "undated");
        assert_eq!(month("../../x"), "undated");
        assert!(is_month("2026-11") && is_month("undated"));
        assert!(!is_month("2026-1x") && !is_month("..") && !is_month("2026-111"));
    }

    #[test]
    fn names_are_ours_only_when_they_name_a_kind_and_a_plain_id() {
        assert_eq!(
            parse_name("memory-0195f3a2-7c4b.md"),
            Some((NoteKind::Memory, "0195f3a2-7c4b"))
        );
        assert_eq!(
            parse_name("summary-a_b.md"),
            Some((NoteKind::Summary, "a_b"))
        );
        for other in [
            "README.md",
            "memory-.md",
            "memory-a.md~",
            "memory-../x.md",
            "note-a.md",
        ] {
            assert_eq!(parse_name(other), None, "{other}");
        }
    }
}
