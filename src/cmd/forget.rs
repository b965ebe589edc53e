//! `forget`: deletes for good what a person names (see `store::forget`), after showing it and
//! asking on a terminal. Then it reaches everything else that held it: events of it still
//! waiting in the spill folder (removed there, never applied), the private-turn and notice marks
//! of forgotten sessions, the files `share` wrote of its memories and summaries into a
//! project's `.claude-mem/` (removed when safe, else left with how; see `sharing::unshare`),
//! the search index (a catch-up, which takes the rows' text out), and the old copies of its
//! rows that earlier writes left in both files (a rebuild of each, then their WALs truncated:
//! see `maintain::for_good`). The ids of the memories and summaries it removes are kept (see
//! `store::forgotten`), so that a team's file of one never shows it to the user again.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::bounds;
use crate::cli::ForgetArgs;
use crate::config::Config;
use crate::emit::Report;
use crate::recall::{Recall, usage};
use crate::render::{self, Style};
use crate::sharing::unshare::{self, Shared};
use crate::store::Store;
use crate::store::forget::{self, Counts, Plan, Range, Target};
use crate::store::forgotten;
use crate::store::rebuilding;
use crate::store::rows::{Kind, short_id};
use crate::store::slices::Slicer;
use crate::{fsutil, notice, spill};

/// How long forget waits for the write lock and for readers to let go of the WAL.
const WAIT: Duration = Duration::from_secs(10);
/// Sessions listed by name in the question; the rest are counted.
const LISTED: usize = 10;

pub fn forget(args: &ForgetArgs) -> Result<Report> {
    let config = Config::from_env();
    let mut recall = Recall::open_for_item(&config)?;
    let target = target(args, &mut recall)?;
    let mut ask = |what: &str| -> Result<Option<String>> {
        if args.dry_run {
            return Ok(Some(format!("{what}Nothing was deleted (--dry-run).\n")));
        }
        if !super::confirmed("forget", what, "Forget this?", args.yes)? {
            return Ok(Some("Nothing forgotten.\n".to_string()));
        }
        Ok(None)
    };
    for_good(&mut recall, target, &mut ask).map(Report::from)
}

/// Forgets `target` for good once `ask`, shown what will go, answers `None` (go on); its
/// answer otherwise. What `forget` does, and `browse` on `d` (handed it by `cmd::run`).
pub fn for_good(
    recall: &mut Recall,
    target: Target,
    ask: &mut dyn FnMut(&str) -> Result<Option<String>>,
) -> Result<String> {
    let config = recall.config.clone();
    // No one may apply a spilled event of what goes while it goes (a hook takes in spilled
    // events only under this lock too).
    let lock = fsutil::lock_waiting(&config.maintain_lock())
        .context("another claude-mem maintain kept running")?;
    let store = Store::open(&config, Instant::now() + WAIT)?;
    let mut plan = forget::plan(store.conn(), &target)?;
    let spilled = spill::forget(&config, &|write| plan.covers(write), false);
    if plan.is_empty() && spilled == 0 {
        return Ok("Nothing to forget.\n".to_string());
    }
    let made = forgotten::made(store.conn(), &plan, &unshare::has_folder)?;
    let mut shared = match recall.reader().store_id()? {
        Some(origin) => unshare::find(&made, &origin, &config.redactor),
        None => Vec::new(),
    };
    let mut what = describe(&plan, &target);
    what.push_str(&shared_files(&shared));
    if spilled > 0 {
        what.push_str(&format!(
            "  {} waiting in the spill folder\n",
            render::plural(spilled as i64, "event")
        ));
    }
    if let Some(answer) = ask(&what)? {
        return Ok(answer);
    }
    let slicer = Slicer::command(WAIT);
    let conn = store.conn();
    // The person may have taken longer to answer than the store's first wait.
    store.set_wait(WAIT)?;
    // Remembered until done: a forget stopped half-way leaves the rebuild to maintenance.
    rebuilding::request(conn)?;
    forgotten::remember(conn, made.ids.iter().map(String::as_str))?;
    forget::apply(conn, &mut plan, &slicer)?;
    // What the compressor stored while the person was asked went too.
    forgotten::remember(
        conn,
        plan.memories
            .iter()
            .chain(&plan.summaries)
            .map(String::as_str),
    )?;
    let spilled = spill::forget(&config, &|write| plan.covers(write), true);
    for session in &plan.sessions {
        crate::hook::private_turn::forget_session(&config, &session.session_id);
        notice::forget_session(&config, &session.session_id);
    }
    let mut out = String::new();
    if !plan.is_empty() {
        out.push_str(&format!("Forgot {}.\n", counts(&plan)));
    }
    if spilled > 0 {
        out.push_str(&format!(
            "Removed {} waiting in the spill folder.\n",
            render::plural(spilled as i64, "event")
        ));
    }
    unshare::remove(&mut shared);
    out.push_str(&taken_back(&shared));
    super::finish_for_good(&config, store, lock, recall, &slicer, &mut out)?;
    Ok(out)
}

/// What the arguments name.
fn target(args: &ForgetArgs, recall: &mut Recall) -> Result<Target> {
    if let Some(id) = &args.id {
        let (kind, id) = recall.resolve(id)?;
        return Ok(Target::of(kind, id));
    }
    if let Some(id) = &args.session {
        return match recall.resolve(id)? {
            (Kind::Session, id) => Ok(Target::Session(id)),
            (kind, _) => Err(usage(format!(
                "{id} is a {}, not a session: forget {id} forgets it",
                kind.as_str()
            ))),
        };
    }
    let (since, until) = bounds(&args.range)?;
    Ok(Target::Range(Range {
        project: super::project(&args.projects, recall)?,
        since,
        until,
    }))
}

/// What goes, for the question (and for `--dry-run`).
fn describe(plan: &Plan, target: &Target) -> String {
    let style = Style::detect();
    let mut out = match counts(plan) {
        what if what.is_empty() => "This forgets:\n".to_string(),
        what => format!("This forgets {what}:\n"),
    };
    for s in plan.sessions.iter().take(LISTED) {
        out.push_str(&format!(
            "  session {}  {}  {}  {}\n",
            short_id(&s.session_id),
            s.project_dir
                .as_deref()
                .map(render::path)
                .unwrap_or_default(),
            style.moment(&s.started_at),
            items(&s.rows)
        ));
    }
    if plan.sessions.len() > LISTED {
        out.push_str(&format!(
            "  and {} more\n",
            render::plural((plan.sessions.len() - LISTED) as i64, "session")
        ));
    }
    let staying = plan.staying();
    match target {
        Target::Session(_) => {}
        Target::Turn(id) => out.push_str(&format!(
            "  prompt {} and its turn: {}\n",
            short_id(id),
            items(&Counts {
                prompts: 0,
                ..staying
            })
        )),
        Target::Item(id) => {
            let made = items(&Counts {
                memories: staying.memories,
                summaries: staying.summaries,
                ..Counts::default()
            });
            out.push_str(&format!(
                "  {} {}{}\n",
                if staying.messages > 0 {
                    "message"
                } else {
                    "tool call"
                },
                short_id(id),
                if made.is_empty() {
                    made
                } else {
                    format!(", and what was made of it: {made}")
                }
            ));
        }
        Target::Memory(id) => out.push_str(&format!("  memory {}\n", short_id(id))),
        Target::Summary(id) => out.push_str(&format!("  summary {}\n", short_id(id))),
        Target::Range(range) if staying != Counts::default() => {
            out.push_str(&format!(
                "  from sessions that stay{}: {}\n",
                range
                    .since
                    .as_deref()
                    .map(|since| format!(" (since {})", style.moment(since)))
                    .unwrap_or_default(),
                items(&staying)
            ));
        }
        Target::Range(_) => {}
    }
    out
}

fn counts(plan: &Plan) -> String {
    let c = plan.counts();
    let mut parts = Vec::new();
    if c.sessions > 0 {
        parts.push(render::plural(c.sessions, "session"));
    }
    let rest = items(&c);
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts.join(", ")
}

/// "10 prompts, 100 tool calls, 10 messages, 9 memories, 1 summary", leaving out what there
/// is none of (and the sessions).
fn items(c: &Counts) -> String {
    [
        (c.prompts, "prompt"),
        (c.calls, "tool call"),
        (c.messages, "message"),
        (c.memories, "memory"),
        (c.summaries, "summary"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| render::plural(*n, what))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The files `share` wrote of what goes, for the question: each removed with it, or left and
/// why.
fn shared_files(shared: &[Shared]) -> String {
    let mut out = String::new();
    for s in shared.iter().take(LISTED) {
        let fate = match &s.left {
            None => "removed with it (you commit the deletion)".to_string(),
            Some(why) => format!("left: {why}"),
        };
        out.push_str(&format!(
            "  shared file {}  {fate}\n",
            render::path(&s.file.to_string_lossy())
        ));
    }
    if shared.len() > LISTED {
        out.push_str(&format!(
            "  and {} more\n",
            render::plural((shared.len() - LISTED) as i64, "shared file")
        ));
    }
    out
}

/// What became of the shared files: a line for the files removed from each folder (the user
/// commits the deletion), and one for each left, saying how to remove it.
fn taken_back(shared: &[Shared]) -> String {
    let mut out = String::new();
    let mut folders: Vec<&std::path::Path> = shared
        .iter()
        .filter(|s| s.left.is_none())
        .map(|s| s.folder.as_path())
        .collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        let removed = shared
            .iter()
            .filter(|s| s.left.is_none() && s.folder == folder)
            .count();
        out.push_str(&format!(
            "Removed {} from {}: commit the deletion.\n",
            render::plural(removed as i64, "shared file"),
            folder.display()
        ));
    }
    for s in shared {
        if let Some(why) = &s.left {
            out.push_str(&format!(
                "Left {}: {why}; delete it yourself and commit the deletion.\n",
                s.file.display()
            ));
        }
    }
    out
}
