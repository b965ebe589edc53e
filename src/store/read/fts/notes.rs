//! The team's notes as the search index sees our own items: in an index of their own, in
//! memory, with the same table and tokenizer, for a search (`team.rs`, which keeps it for the
//! next search of the same notes), so that nothing of a teammate's text is written into this
//! machine's files; and
//! for per-prompt recall, which cannot pay for an index of them on every prompt, their terms
//! (for their digest, `team::digest`) and the words of one marked for a snippet.

use anyhow::Result;
use rusqlite::Connection;

use super::Item;
use super::stems::Stemmer;
use crate::store::rows::Kind;
use crate::team::{Note, NoteKind};

/// `notes` in an index in memory, the `fts` table's rowid of each its place in `notes`.
pub fn index(notes: &[Note]) -> Result<Connection> {
    let rows = notes.iter().enumerate();
    super::schema::in_memory(rows.map(|(n, note)| (n as i64, &note.title, plain(&note.body))))
}

/// The distinct terms of `note` as the index holds them (its title and its text as [`index`]
/// keeps it).
pub fn terms(stemmer: &Stemmer, note: &Note) -> Result<Vec<String>> {
    let mut terms = stemmer.terms(&note.title, false)?;
    terms.extend(stemmer.terms(&plain(&note.body), false)?);
    terms.sort_unstable();
    terms.dedup();
    Ok(terms)
}

/// `note`'s title and text as `highlight()` marks a match in the index (`\x02` and `\x03`
/// around a word), for a snippet, found without the tokenizer: each word that starts with one
/// of `probes` (lower case; a prompt's words and their stems), ASCII letters compared without
/// case. Per-prompt recall marks the notes it hands so, at a few instructions a byte rather
/// than the tokenizer's hundreds.
pub fn marked(note: &Note, probes: &[&str]) -> [String; 2] {
    [note.title.as_str(), &plain(&note.body)].map(|text| {
        let lower = text.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let word = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_alphanumeric);
        let mut ranges = Vec::new();
        for probe in probes.iter().filter(|p| !p.is_empty()) {
            for (start, _) in lower.match_indices(probe) {
                if start > 0 && word(start - 1) {
                    continue;
                }
                let mut end = start + probe.len();
                while word(end) {
                    end += 1;
                }
                ranges.push((start, end));
            }
        }
        mark(text, ranges)
    })
}

/// `text` with `\x02` and `\x03` around each of `ranges` (byte ranges at its characters'
/// bounds), those that overlap (a compound word and its parts) marked as one.
fn mark(text: &str, mut ranges: Vec<(usize, usize)>) -> String {
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len() + 2 * ranges.len());
    let mut at = 0;
    let mut ranges = ranges.into_iter().peekable();
    while let Some((start, mut end)) = ranges.next() {
        while let Some(&(next, to)) = ranges.peek()
            && next < end
        {
            end = end.max(to);
            ranges.next();
        }
        let (Some(before), Some(marked)) = (text.get(at..start), text.get(start..end)) else {
            continue;
        };
        out.push_str(before);
        out.push('\u{2}');
        out.push_str(marked);
        out.push('\u{3}');
        at = end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// A note's Markdown as the words worth finding: without its headings (`## Facts` in every
/// memory would make `facts` find them all) and the marks of its lists.
fn plain(body: &str) -> String {
    body.lines()
        .map(str::trim_start)
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.strip_prefix("- ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What kind of item a note is.
pub fn kind(kind: NoteKind) -> Kind {
    match kind {
        NoteKind::Memory => Kind::Memory,
        NoteKind::Summary => Kind::Summary,
    }
}

/// A note as a list shows an item, in `project`.
pub fn item(note: &Note, project: &str) -> Item {
    Item {
        kind: kind(note.kind),
        id: note.id.clone(),
        session_id: note.session.clone(),
        project_dir: Some(project.to_string()),
        tool_name: None,
        files: note
            .files
            .iter()
            .map(|f| format!("{}/{f}", project.trim_end_matches('/')))
            .collect(),
        prompt_number: None,
        title: note.title.clone(),
        created_at: note.when.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::NoteKind;

    #[test]
    fn a_note_is_marked_where_its_words_start_and_found_by_its_terms() {
        let note = Note {
            kind: NoteKind::Memory,
            id: "a".into(),
            label: "decision".into(),
            title: "Gunicorn binds port 8000".into(),
            when: String::new(),
            session: String::new(),
            files: Vec::new(),
            origin: String::new(),
            body: "## Facts\n- the upsertSession rebinding, Binding".into(),
        };
        let [title, body] = marked(&note, &["bind", "session"]);
        assert_eq!(title, "Gunicorn \u{2}binds\u{3} port 8000");
        assert_eq!(body, "the upsertSession rebinding, \u{2}Binding\u{3}");
        let stemmer = Stemmer::new().unwrap();
        let terms = terms(&stemmer, &note).unwrap();
        for term in ["bind", "gunicorn", "rebind", "session", "upsertsess"] {
            assert!(terms.contains(&term.to_string()), "{term}: {terms:?}");
        }
        assert!(!terms.contains(&"facts".to_string()), "{terms:?}");
    }
}
