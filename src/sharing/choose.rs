//! Which of a project's memories and summaries a `share` takes: the ones named (a session
//! brings its own), those made within a time, and, unless asked for every one, no summary of a
//! session that did nothing. A session did something when the compressor made a memory of it,
//! a tool call of it changed a file, or its summary lists a file edited: a session that only
//! read, searched, ran commands that left nothing or answered a question gives a summary the
//! team has no use for, and it would crowd their session-start context.
//!
//! What is not taken this time is still the database's: `share` leaves its file as it is.

use anyhow::{Result, anyhow};

use crate::store::read::Reader;
use crate::store::rows::{Kind, Memory, Summary, short_id};
use crate::team::write::Others;

/// What a `share` is asked for.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// Sessions, memories and summaries named, by whole id; none: every one of the project.
    pub named: Vec<(Kind, String)>,
    /// Made since then (stored time, inclusive) and before then.
    pub since: Option<String>,
    pub until: Option<String>,
    /// The summaries of sessions that did nothing too.
    pub every_summary: bool,
}

/// What it takes.
#[derive(Debug, Clone, Default)]
pub struct Chosen {
    pub memories: Vec<Memory>,
    pub summaries: Vec<Summary>,
    /// Summaries otherwise chosen, left out as their sessions did nothing.
    pub idle: usize,
    /// The ids of the project's items not taken (their files stay as they are), and of the
    /// items forgotten (theirs go).
    pub others: Others,
    /// Whether the project has any memory or summary at all.
    pub any: bool,
}

/// The items of `project` that `ask` takes. A named id that is none of the project's is an
/// error that says so.
pub fn choose(reader: &Reader, project: &str, ask: &Ask) -> Result<Chosen> {
    let (memories, summaries) = reader.project_compressed(project)?;
    let any = !memories.is_empty() || !summaries.is_empty();
    for (kind, id) in &ask.named {
        let found = memories
            .iter()
            .map(|m| (Kind::Memory, &m.id, &m.session_id))
            .chain(
                summaries
                    .iter()
                    .map(|s| (Kind::Summary, &s.id, &s.session_id)),
            )
            .any(|item| names(*kind, id, item));
        if !found {
            return Err(anyhow!(not_here(*kind, id, project)));
        }
    }
    let floor = if ask.named.is_empty() && !ask.every_summary {
        Some(reader.busy_sessions(project)?)
    } else {
        None
    };
    let asked = |kind: Kind, id: &String, session: &String, at: &str| {
        let named = ask.named.is_empty()
            || ask
                .named
                .iter()
                .any(|(k, n)| names(*k, n, (kind, id, session)));
        let within = ask.since.as_deref().is_none_or(|since| at >= since)
            && ask.until.as_deref().is_none_or(|until| at < until);
        named && within
    };
    let mut chosen = Chosen {
        any,
        ..Chosen::default()
    };
    chosen.others.forgotten = reader.forgotten()?;
    for m in memories {
        if asked(Kind::Memory, &m.id, &m.session_id, &m.created_at) {
            chosen.memories.push(m);
        } else {
            chosen.others.held.insert(m.id);
        }
    }
    for s in summaries {
        if !asked(Kind::Summary, &s.id, &s.session_id, &s.created_at) {
            chosen.others.held.insert(s.id);
        } else if floor
            .as_ref()
            .is_some_and(|busy| !busy.contains(&s.session_id) && s.files_edited.is_empty())
        {
            chosen.idle += 1;
            chosen.others.held.insert(s.id);
        } else {
            chosen.summaries.push(s);
        }
    }
    Ok(chosen)
}

/// Whether `id` of `kind` names the item (its kind, id and session).
fn names(kind: Kind, id: &str, (of, item, session): (Kind, &String, &String)) -> bool {
    match kind {
        Kind::Session => session == id,
        _ => of == kind && item == id,
    }
}

/// Why a named id takes nothing, and what to do.
fn not_here(kind: Kind, id: &str, project: &str) -> String {
    match kind {
        Kind::Session => format!(
            "session {} has no memory or summary in {project} (claude-mem compress makes them; \
             a session of another project is shared with --project DIR)",
            short_id(id)
        ),
        _ => format!(
            "{} {} is not of {project}: share it with --project and its project's folder",
            kind.as_str(),
            short_id(id)
        ),
    }
}
