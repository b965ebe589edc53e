//! An item of this database as the team's file holds it (a `team::Note`): its texts cleaned
//! again with today's privacy and secret rules (as `scrub` applies them), and file paths told
//! relative to the project, a path of the user's machine outside it left out: in its list of
//! files and in every text (a title or a narrative names `/home/alice/secret-client/x.rs` as
//! readily), see [`relative`]. What `share` writes, and what `forget` compares a file with
//! before it takes the file back.

use std::path::Path;

use crate::privacy::clean_text;
use crate::privacy::secrets::Redactor;
use crate::render;
use crate::store::rows::short_id;
use crate::store::rows::{Memory, Summary};
use crate::team::format::TITLE_CHARS;
use crate::team::{Note, NoteKind};

/// A memory as shared: its texts cleaned again, its files relative to the project.
pub fn memory(m: &Memory, project: &str, origin: &str, r: &Redactor) -> Note {
    let clean = |t: &str| relative(&clean_text(r, t), project);
    let mut body = String::new();
    if let Some(subtitle) = m.subtitle.as_deref().filter(|s| !s.trim().is_empty()) {
        body.push_str(&format!("{}\n\n", clean(subtitle).trim()));
    }
    body.push_str(clean(&m.narrative).trim());
    section(&mut body, "Facts", &list(&m.facts, &clean));
    section(&mut body, "Concepts", &list(&m.concepts, &clean));
    let read = files(&m.files_read, project, &clean);
    let modified = files(&m.files_modified, project, &clean);
    section(&mut body, "Files read", &list(&read, &|t| t.to_string()));
    section(
        &mut body,
        "Files modified",
        &list(&modified, &|t| t.to_string()),
    );
    Note {
        kind: NoteKind::Memory,
        id: m.id.clone(),
        label: clean(&m.kind),
        title: render::one_line(&clean(&m.title), TITLE_CHARS),
        when: m.created_at.clone(),
        session: short_id(&m.session_id).to_string(),
        files: union(&modified, &read),
        origin: origin.to_string(),
        body: body.trim().to_string(),
    }
}

/// A session summary as shared, cleaned as a memory is.
pub fn summary(s: &Summary, project: &str, origin: &str, r: &Redactor) -> Note {
    let clean = |t: &str| relative(&clean_text(r, t), project);
    let mut body = String::new();
    for (name, text) in [
        ("Request", &s.request),
        ("Investigated", &s.investigated),
        ("Learned", &s.learned),
        ("Completed", &s.completed),
        ("Next steps", &s.next_steps),
    ] {
        section(&mut body, name, clean(text).trim());
    }
    if let Some(notes) = &s.notes {
        section(&mut body, "Notes", clean(notes).trim());
    }
    let read = files(&s.files_read, project, &clean);
    let edited = files(&s.files_edited, project, &clean);
    section(&mut body, "Files read", &list(&read, &|t| t.to_string()));
    section(
        &mut body,
        "Files edited",
        &list(&edited, &|t| t.to_string()),
    );
    Note {
        kind: NoteKind::Summary,
        id: s.id.clone(),
        label: "summary".into(),
        title: render::one_line(&clean(&s.request), TITLE_CHARS),
        when: s.created_at.clone(),
        session: short_id(&s.session_id).to_string(),
        files: union(&edited, &read),
        origin: origin.to_string(),
        body: body.trim().to_string(),
    }
}

/// What a text says in place of a path it leaves out.
const LEFT_OUT: &str = "(a path outside the project)";

/// `text` with each path in it told as the team sees it: one in `project` relative to it (the
/// project itself as `.`), and any other absolute path (`/…/…`, `~/…`, `C:\…`) or one that
/// climbs out (`../…`) left out, as [`LEFT_OUT`]. A path is a word that starts so, after
/// a space, a quote or an opening bracket, to the next space, quote or closing bracket (a
/// sentence's last stop or comma is not of it); a URL's path (after `://`) is not one.
pub fn relative(text: &str, project: &str) -> String {
    let project = project.trim_end_matches('/');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_boundary = true;
    while let Some(c) = rest.chars().next() {
        let end = rest
            .find(|c: char| c.is_whitespace() || "\"'`)]}>,;".contains(c))
            .unwrap_or(rest.len());
        if after_boundary && end > 0 {
            let word = rest[..end].trim_end_matches(['.', ':', '!', '?']);
            if let Some(told) = told(word, project) {
                out.push_str(&told);
                rest = &rest[word.len()..];
                after_boundary = false;
                continue;
            }
        }
        after_boundary = c.is_whitespace() || "\"'`([{<=".contains(c);
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// How a word that is a path is told (see [`relative`]); `None` for a word that is not one.
fn told(word: &str, project: &str) -> Option<String> {
    if word == project {
        return Some(".".into());
    }
    if let Some(inside) = word.strip_prefix(project).and_then(|w| w.strip_prefix('/')) {
        return Some(inside.to_string());
    }
    let b = word.as_bytes();
    let absolute = (word.starts_with('/') && word[1..].contains('/') && b.get(1) != Some(&b'/'))
        || word.starts_with("~/")
        || word.starts_with("../")
        || (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\');
    absolute.then(|| LEFT_OUT.to_string())
}

/// `## name` and `text` after what `body` holds, unless `text` is empty.
fn section(body: &mut String, name: &str, text: &str) {
    if !text.trim().is_empty() {
        body.push_str(&format!("\n\n## {name}\n\n{}", text.trim()));
    }
}

fn list(items: &[String], clean: &dyn Fn(&str) -> String) -> String {
    items
        .iter()
        .map(|i| render::one_line(&clean(i), 500))
        .filter(|i| !i.is_empty())
        .map(|i| format!("- {i}\n"))
        .collect()
}

/// Paths as the team sees them: relative to the project's root. A path outside the project
/// (which would tell of the user's machine) or climbing out of it is left out.
fn files(paths: &[String], project: &str, clean: &dyn Fn(&str) -> String) -> Vec<String> {
    let prefix = format!("{}/", project.trim_end_matches('/'));
    paths
        .iter()
        .filter_map(|p| {
            let p = p.trim();
            let rel = match p.strip_prefix(&prefix) {
                Some(rel) => rel,
                None if !p.starts_with('/') && !p.starts_with('~') => p,
                None => return None,
            };
            let rel = rel.trim_start_matches("./");
            let climbs = Path::new(rel)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
            (!rel.is_empty() && !climbs && !rel.contains('\n')).then(|| clean(rel))
        })
        .collect()
}

/// `a` then what of `b` is not in it, each once.
fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in a.iter().chain(b) {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_told_relative_to_the_project_and_others_left_out() {
        let paths: Vec<String> = [
            "/home/dev/shop/src/a.rs",
            "src/b.rs",
            "./c.rs",
            "/home/dev/.ssh/config",
            "~/notes.md",
            "../other/x.rs",
            "src/../../x.rs",
        ]
        .map(String::from)
        .to_vec();
        let kept = files(&paths, "/home/dev/shop", &|t| t.to_string());
        assert_eq!(kept, ["src/a.rs", "src/b.rs", "c.rs"]);
    }

    #[test]
    fn paths_in_a_text_are_told_relative_to_the_project_and_others_left_out() {
        let text = "Fixed /home/dev/shop/src/a.rs (from /home/dev/secret-client/x.rs), see \
                    \"~/notes.md\", ../other/y.rs and C:\\Users\\dev\\z.rs; ran in /home/dev/shop. \
                    Not https://example.com/a/b, and/or /compact.";
        assert_eq!(
            relative(text, "/home/dev/shop/"),
            "Fixed src/a.rs (from (a path outside the project)), see \"(a path outside the \
             project)\", (a path outside the project) and (a path outside the project); ran in \
             .. Not https://example.com/a/b, and/or /compact."
        );
    }
}
