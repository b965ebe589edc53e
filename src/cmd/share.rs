//! `share`: the project's memories and session summaries written into its `.claude-mem/`
//! folder, for the team to commit (see `team` for the format and the folder, `sharing` for
//! what is taken and how an item reads there). All of them, or the ones named, or those made
//! in a time; never a summary of a session that did nothing unless asked for. `--dry-run`
//! lists the files it would write and remove.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::json;

use super::bounds;
use crate::cli::ShareArgs;
use crate::config::Config;
use crate::emit::Report;
use crate::recall::{Recall, no_database, usage};
use crate::render::{self, plural};
use crate::sharing::choose::{self, Ask, Chosen};
use crate::sharing::note;
use crate::store::rows::Kind;
use crate::team::format::is_file_id;
use crate::team::{Note, NoteKind, shared, write};

pub fn share(args: &ShareArgs) -> Result<Report> {
    let config = Config::from_env();
    let mut recall = Recall::open(&config)?.ok_or_else(|| anyhow!(no_database(&config)))?;
    let project = shared_project(&recall, args)?;
    let ask = ask(args, &mut recall)?;
    let root = Path::new(&project);
    let origin = recall
        .reader()
        .store_id()?
        .ok_or_else(|| anyhow!("the database has no identity yet: run claude-mem maintain"))?;
    let mut chosen = choose::choose(recall.reader(), &project, &ask)?;
    let shared_before = shared::read(&config, &project);
    chosen.others.shared = shared_before.iter().cloned().collect();
    let redactor = &config.redactor;
    let notes: Vec<Note> = chosen
        .memories
        .iter()
        .map(|m| note::memory(m, &project, &origin, redactor))
        .chain(
            chosen
                .summaries
                .iter()
                .map(|s| note::summary(s, &project, &origin, redactor)),
        )
        .filter(|n| is_file_id(&n.id))
        .collect();
    let skipped = chosen.memories.len() + chosen.summaries.len() - notes.len();
    let told = Told {
        project: &project,
        notes: &notes,
        skipped,
        idle: chosen.idle,
    };
    if notes.is_empty() && crate::team::read::folder(root).is_none() {
        let nothing = write::Outcome {
            folder: root.join(crate::team::FOLDER),
            ..write::Outcome::default()
        };
        let (_, value) = shared(args, &told, &nothing);
        let line = format!("nothing to share in {project}: {}", why_nothing(&chosen));
        return Ok(answer(args, &line, &value));
    }
    let done = write::share(root, &notes, &chosen.others, &origin, args.dry_run)?;
    if !args.dry_run {
        shared::after(&config, &project, shared_before, &done)
            .map_err(|err| anyhow!("cannot record what was shared in {project} ({err})"))?;
    }
    let (line, value) = shared(args, &told, &done);
    Ok(answer(args, &line, &value))
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

/// What the arguments ask for: each id named resolved (a session, memory or summary), and the
/// time bounds.
fn ask(args: &ShareArgs, recall: &mut Recall) -> Result<Ask> {
    let (since, until) = bounds(&args.range)?;
    let mut named = Vec::new();
    for id in &args.ids {
        let (kind, whole) = recall.resolve(id)?;
        if !matches!(kind, Kind::Session | Kind::Memory | Kind::Summary) {
            return Err(usage(format!(
                "{id} is a {}: share takes a session, memory or summary id (what the \
                 compressor made of it is shared with its session)",
                kind.as_str()
            )));
        }
        named.push((kind, whole));
    }
    Ok(Ask {
        named,
        since,
        until,
        every_summary: args.all_summaries,
    })
}

/// Why nothing is to be shared, for a project with no folder yet.
fn why_nothing(chosen: &Chosen) -> String {
    if !chosen.any {
        "it has no memories or summaries yet (claude-mem compress makes them)".into()
    } else if chosen.idle > 0 {
        format!(
            "only {} of sessions that did nothing (--all-summaries shares them)",
            plural(chosen.idle as i64, "summary")
        )
    } else {
        "none was made in that time".into()
    }
}

/// What a share is told about besides its outcome.
struct Told<'a> {
    project: &'a str,
    notes: &'a [Note],
    /// Items with an id no file can be named by.
    skipped: usize,
    /// Summaries of sessions that did nothing, left out.
    idle: usize,
}

/// What share did (or would do), as a line (after the files, dry) and as JSON.
fn shared(args: &ShareArgs, told: &Told, done: &write::Outcome) -> (String, serde_json::Value) {
    let shared = |kind| told.notes.iter().filter(|n| n.kind == kind).count() as i64;
    let (m, s) = (shared(NoteKind::Memory), shared(NoteKind::Summary));
    let verb = if args.dry_run {
        "would share"
    } else {
        "shared"
    };
    let mut line = format!(
        "{verb} {} and {} of {} in {}: {} written, {} unchanged, {} removed",
        plural(m, "memory"),
        plural(s, "summary"),
        told.project,
        done.folder.display(),
        render::count(done.written as i64),
        render::count(done.unchanged as i64),
        render::count(done.removed as i64)
    );
    for (n, what) in [
        (done.kept, "of yours kept (not chosen this time)"),
        (done.others, "of others left as they are"),
    ] {
        if n > 0 {
            line.push_str(&format!("; {} {what}", plural(n as i64, "file")));
        }
    }
    if told.idle > 0 {
        line.push_str(&format!(
            "; {} of sessions that did nothing left out (--all-summaries shares them)",
            plural(told.idle as i64, "summary")
        ));
    }
    if told.skipped > 0 {
        line.push_str(&format!(
            "; {} with an id no file can be named by",
            plural(told.skipped as i64, "item")
        ));
    }
    if args.dry_run && !args.json {
        line = format!("{}{line}", listing(&done.changes));
    }
    let files: Vec<_> = done
        .changes
        .iter()
        .map(|c| json!({"path": c.path, "change": if c.removed { "remove" } else { "write" }}))
        .collect();
    let value = json!({
        "project": told.project,
        "folder": done.folder,
        "memories": m,
        "summaries": s,
        "written": done.written,
        "unchanged": done.unchanged,
        "removed": done.removed,
        "kept": done.kept,
        "others": done.others,
        "left_out": told.idle,
        "skipped": told.skipped,
        "files": files,
        "dry_run": args.dry_run,
    });
    (line, value)
}

/// The files a dry run would write or remove, one a line: what, where in the folder, and the
/// title of what is written.
fn listing(changes: &[write::Change]) -> String {
    let width = changes.iter().map(|c| c.path.len()).max().unwrap_or(0);
    changes
        .iter()
        .map(|c| {
            let what = if c.removed { "remove" } else { "write" };
            let line = format!("{what:<6}  {:<width$}  {}", c.path, c.title);
            format!("{}\n", line.trim_end())
        })
        .collect()
}

fn answer(args: &ShareArgs, line: &str, value: &serde_json::Value) -> Report {
    if args.json {
        render::json_line(value).into()
    } else {
        format!("{line}\n").into()
    }
}
