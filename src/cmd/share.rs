//! `share`: the project's memories and session summaries written into its `.claude-mem/`
//! folder, for the team to commit (see `team` for the format and the folder). Only what the
//! compressor made travels, never the prompts, tool calls or Claude's messages it was made
//! from; its text goes through today's privacy and secret rules again on the way out (as
//! `scrub` applies them), and file paths are told relative to the project: a path of the
//! user's machine outside the project is left out.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::json;

use crate::cli::ShareArgs;
use crate::config::Config;
use crate::emit::Report;
use crate::privacy::clean_text;
use crate::privacy::secrets::Redactor;
use crate::recall::{Recall, no_database};
use crate::render::{self, plural};
use crate::store::rows::short_id;
use crate::store::rows::{Memory, Summary};
use crate::team::format::{TITLE_CHARS, is_file_id};
use crate::team::{Note, NoteKind, write};

pub fn share(args: &ShareArgs) -> Result<Report> {
    let config = Config::from_env();
    let recall = Recall::open(&config)?.ok_or_else(|| anyhow!(no_database(&config)))?;
    let project = shared_project(&recall, args)?;
    let root = Path::new(&project);
    let origin = recall
        .reader()
        .store_id()?
        .ok_or_else(|| anyhow!("the database has no identity yet: run claude-mem maintain"))?;
    let (memories, summaries) = recall.reader().project_compressed(&project)?;
    let redactor = &config.redactor;
    let notes: Vec<Note> = memories
        .iter()
        .map(|m| memory(m, &project, &origin, redactor))
        .chain(
            summaries
                .iter()
                .map(|s| summary(s, &project, &origin, redactor)),
        )
        .filter(|n| is_file_id(&n.id))
        .collect();
    let skipped = memories.len() + summaries.len() - notes.len();
    if notes.is_empty() && crate::team::read::folder(root).is_none() {
        let line = format!(
            "nothing to share in {project}: it has no memories or summaries yet (claude-mem \
             compress makes them)"
        );
        return Ok(answer(
            args,
            &line,
            &json!({"project": project, "memories": 0, "summaries": 0}),
        ));
    }
    let done = write::share(root, &notes, &origin, args.dry_run)?;
    Ok(shared(args, &project, &notes, skipped, &done))
}

/// The project to share: the one asked for, or the one here, a folder on this machine.
fn shared_project(recall: &Recall, args: &ShareArgs) -> Result<String> {
    let project = recall
        .project(args.project.as_deref(), false)?
        .ok_or_else(|| anyhow!("share needs a project"))?;
    if !Path::new(&project).is_dir() {
        bail!(
            "the project {project} is not a folder here: run share in the project, or name it \
             with --project"
        );
    }
    Ok(project)
}

/// What share did (or would do), as a line or as JSON.
fn shared(
    args: &ShareArgs,
    project: &str,
    notes: &[Note],
    skipped: usize,
    done: &write::Outcome,
) -> Report {
    let shared = |kind| notes.iter().filter(|n| n.kind == kind).count() as i64;
    let (m, s) = (shared(NoteKind::Memory), shared(NoteKind::Summary));
    let verb = if args.dry_run {
        "would share"
    } else {
        "shared"
    };
    let mut line = format!(
        "{verb} {} and {} of {project} in {}: {} written, {} unchanged, {} removed",
        plural(m, "memory"),
        plural(s, "summary"),
        done.folder.display(),
        render::count(done.written as i64),
        render::count(done.unchanged as i64),
        render::count(done.removed as i64)
    );
    if done.others > 0 {
        line.push_str(&format!(
            "; {} of others left as they are",
            plural(done.others as i64, "file")
        ));
    }
    if skipped > 0 {
        line.push_str(&format!(
            "; {} with an id no file can be named by",
            plural(skipped as i64, "item")
        ));
    }
    let value = json!({
        "project": project,
        "folder": done.folder,
        "memories": m,
        "summaries": s,
        "written": done.written,
        "unchanged": done.unchanged,
        "removed": done.removed,
        "others": done.others,
        "skipped": skipped,
        "dry_run": args.dry_run,
    });
    answer(args, &line, &value)
}

fn answer(args: &ShareArgs, line: &str, value: &serde_json::Value) -> Report {
    if args.json {
        render::json_line(value).into()
    } else {
        format!("{line}\n").into()
    }
}

/// A memory as shared: its texts cleaned again, its files relative to the project.
fn memory(m: &Memory, project: &str, origin: &str, r: &Redactor) -> Note {
    let clean = |t: &str| clean_text(r, t).into_owned();
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
fn summary(s: &Summary, project: &str, origin: &str, r: &Redactor) -> Note {
    let clean = |t: &str| clean_text(r, t).into_owned();
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
}
