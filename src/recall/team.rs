//! The team's notes (a project's `.claude-mem/` files, see `crate::team`) beside this
//! machine's own memory in what the read commands and the MCP tools answer: searched with the
//! same query, merged into the same ranking, fetched whole by id, and always marked as the
//! team's. A note this database holds itself (the user's own shared file, read back in their
//! own project) is shown once, as theirs; one the user forgot, never. And the digest of them
//! that per-prompt recall reads, made here, in the process a hook starts for it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

use crate::config::Config;
use crate::fsutil;
use crate::log::Log;
use crate::recall::Recall;
use crate::recorded;
use crate::render;
use crate::store::fts::rank::Standing;
use crate::store::fts::stems::Stemmer;
use crate::store::fts::{Hit, Index, Search, notes, team};
use crate::team::digest::{self, Noted};
use crate::team::{Note, read};

/// What a line or a JSON result says of an item that is the team's.
pub const SOURCE: &str = "team";

/// The project's team notes whose id is none of this database's (an item, a session, one it
/// forgot: see `store::read::context::known`), in an order of this machine's
/// ([`unforeseeable`]); none for every project.
pub fn notes(recall: &Recall, project: Option<&str>) -> Result<Vec<Note>> {
    let Some(project) = project else {
        return Ok(Vec::new());
    };
    let log = Log::new(&recall.config, "team");
    let notes = read::all(Path::new(project), &log);
    if notes.is_empty() {
        return Ok(Vec::new());
    }
    let own = recall.reader().known(notes.iter().map(|n| n.id.as_str()))?;
    let theirs = notes
        .iter()
        .filter(|n| !own.contains(&n.id))
        .cloned()
        .collect();
    Ok(unforeseeable(&recall.config, theirs))
}

/// `notes` in the order that equally ranked ones are shown in: one that no file's author can
/// foresee, never their names'. By a hash of each id keyed with this machine's secret (that of
/// the digest's order, `team::digest::key`), or, before it is made, with one of this process's
/// (a read command writes nothing), the same for all its searches: the MCP server keeps the
/// notes it indexed while they come in the same order, and pages of one order.
fn unforeseeable(config: &Config, mut notes: Vec<Note>) -> Vec<Note> {
    static OURS: std::sync::OnceLock<[u8; 16]> = std::sync::OnceLock::new();
    let key = digest::made_key(config).unwrap_or_else(|| {
        *OURS.get_or_init(|| {
            let mut key = [0u8; 16];
            // Without randomness, the ids' own order: no worse than their names'.
            let _ = getrandom::fill(&mut key);
            key
        })
    });
    notes.sort_by_cached_key(|n| digest::keyed(&key, digest::hash(&n.id)));
    notes
}

/// What `search` finds in the index (when there is one) and in the team's notes, best first,
/// and which of the results are the team's. With notes, both lists are read from their first
/// result and the page is cut from their merge.
pub fn search(
    index: Option<&Index>,
    search: &Search,
    notes: &[Note],
) -> Result<(Vec<Hit>, HashSet<String>)> {
    if notes.is_empty() {
        let own = index.map(|i| i.search(search)).transpose()?;
        return Ok((own.unwrap_or_default(), HashSet::new()));
    }
    let offset = search.offset;
    let both = Search {
        limit: search.limit.saturating_add(offset),
        offset: 0,
        ..search.clone()
    };
    let own = index
        .map(|i| i.search(&both))
        .transpose()?
        .unwrap_or_default();
    let project = search.project.as_deref().unwrap_or_default();
    let theirs = team::search(notes, project, &both)?;
    let ids: HashSet<String> = theirs.iter().map(|h| h.item.id.clone()).collect();
    let mut hits: Vec<Hit> = own.into_iter().chain(theirs).collect();
    // Both ranked by one rule: merged by where each stands, then the user's own newer first,
    // then the team's (a stable sort keeps each list's own order among equals). A note's time
    // is its author's to write, and decides nothing: any `when` just before now would put a
    // note first.
    hits.sort_by(|a, b| {
        Standing::order(&a.standing, &b.standing).then_with(|| when(b, &ids).cmp(when(a, &ids)))
    });
    let hits: Vec<Hit> = hits.into_iter().skip(offset).collect();
    let team = hits
        .iter()
        .filter(|h| ids.contains(&h.item.id))
        .map(|h| h.item.id.clone())
        .collect();
    Ok((hits, team))
}

/// A result's time as the merge orders equals by: an item's own, none for a note of the team's
/// (`ids`).
fn when<'a>(h: &'a Hit, ids: &HashSet<String>) -> &'a str {
    match ids.contains(&h.item.id) {
        true => "",
        false => h.item.created_at.as_str(),
    }
}

/// Whether anything matches `search` in the index (when there is one) or in the team's notes,
/// whatever its page.
pub fn matches(index: Option<&Index>, search: &Search, notes: &[Note]) -> Result<bool> {
    if let Some(index) = index
        && index.matches(search)?
    {
        return Ok(true);
    }
    let first = Search {
        offset: 0,
        limit: 1,
        ..search.clone()
    };
    let project = search.project.as_deref().unwrap_or_default();
    Ok(!team::search(notes, project, &first)?.is_empty())
}

/// The notes of the current project that `id` names (a whole id or a prefix of one); the
/// project as `recall` finds it, or without a database as [`here`] does. Never one whose id is
/// the database's.
pub fn find(config: &Config, recall: Option<&Recall>, id: &str) -> Result<Vec<Note>> {
    let project = match recall {
        Some(recall) => recall.project(None, false)?,
        None => here(config, None),
    };
    let Some(project) = project else {
        return Ok(Vec::new());
    };
    let found = read::find(Path::new(&project), id, &Log::new(config, "team"));
    let Some(recall) = recall.filter(|_| !found.is_empty()) else {
        return Ok(found);
    };
    let known = recall.reader().known(found.iter().map(|n| n.id.as_str()))?;
    Ok(found
        .into_iter()
        .filter(|n| !known.contains(&n.id))
        .collect())
}

/// The project a command is about when there is no database to find recorded projects in:
/// `dir`, else $CLAUDE_PROJECT_DIR, else the current directory.
pub fn here(config: &Config, dir: Option<&Path>) -> Option<String> {
    let dir = match (dir, &config.project_dir) {
        (Some(dir), _) => dir.to_path_buf(),
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => std::env::current_dir().ok()?,
    };
    let dir = std::path::absolute(dir).ok()?;
    Some(dir.to_string_lossy().trim_end_matches('/').to_string()).filter(|d| !d.is_empty())
}

/// The project's notes, where there is no database of ours to hold any of them.
pub fn notes_here(config: &Config, project: &str) -> Vec<Note> {
    let notes = read::all(Path::new(project), &Log::new(config, "team")).to_vec();
    unforeseeable(config, notes)
}

/// Makes the digest of `project`'s team notes that per-prompt recall and the session start
/// read (see `team::digest`), but of this machine's own (below), unless the project has no
/// `.claude-mem/` folder, another process is making it, or the one there is fresh: how many
/// notes it holds, when it made one.
pub fn digest(config: &Config, project: &str) -> Result<Option<usize>> {
    let Some(dir) = read::folder(Path::new(project)) else {
        return Ok(None);
    };
    fsutil::our_dir(&config.team_dir())?;
    let Some(_making) = fsutil::try_lock(&digest::lock_path(config, project)) else {
        return Ok(None);
    };
    let before = digest::read(config, project);
    if before.as_ref().is_some_and(|d| d.fresh(&dir)) {
        return Ok(None);
    }
    let seen = before.map(|d| d.seen()).unwrap_or_default();
    let began = digest::now();
    let found = read::within(&dir, digest::BOUNDS, Some(&Log::new(config, "team")));
    let stamps = digest::stamps(&dir, &found.months)
        .ok_or_else(|| anyhow!("{} changed while it was read", dir.display()))?;
    let own = own(config, project, &found.notes)?;
    let stemmer = Stemmer::new()?;
    let now = chrono::Utc::now().timestamp_millis();
    let mut notes = found
        .notes
        .iter()
        .filter(|(_, note)| !own.contains(&note.id))
        .map(|(path, note)| {
            let text = digest::hash(&crate::team::format::render(note));
            let noted = Noted {
                seen: seen
                    .get(&text)
                    .copied()
                    .unwrap_or_else(|| written(&dir.join(path)).min(now)),
                path: path.clone(),
                text,
            };
            Ok((noted, notes::terms(&stemmer, note)?))
        })
        .collect::<Result<Vec<_>>>()?;
    digest::sort(&mut notes, &digest::key(config)?);
    let (file, kept) = digest::encode(began, &stamps, notes);
    digest::write(config, project, &file)?;
    Ok(Some(kept))
}

/// Of `notes`, the ids that are this machine's: held or forgotten by its database, or written
/// into the folder by its `share` (see `team::shared`), whatever `origin:` a file names.
fn own(config: &Config, project: &str, notes: &[(String, Note)]) -> Result<HashSet<String>> {
    let mut own: HashSet<String> = crate::team::shared::read(config, project)
        .into_iter()
        .collect();
    if let Some(recall) = Recall::open(config)? {
        own.extend(
            recall
                .reader()
                .known(notes.iter().map(|(_, n)| n.id.as_str()))?,
        );
    }
    Ok(own)
}

/// When the file at `path` was last written here, in milliseconds since 1970 (0 when unknown).
fn written(path: &Path) -> i64 {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A note whole, as `get` answers it: said to be the team's, each line that reads as an order
/// left out.
pub fn whole(note: &Note) -> String {
    recorded::told_by_line(&text(note)).into_owned()
}

/// A note whole, as `show` prints it to a person (who reads what is in the file as it is), or
/// as one JSON object with `source` `team`.
pub fn shown(note: &Note, json: bool) -> String {
    if !json {
        return text(note);
    }
    render::json_line(&serde_json::json!({
        "id": note.id,
        "kind": note.kind.as_str(),
        "type": note.label,
        "title": note.title,
        "created_at": note.when,
        "session": note.session,
        "files": note.files,
        "text": note.body,
        "source": SOURCE,
    }))
}

fn text(note: &Note) -> String {
    let files = if note.files.is_empty() {
        String::new()
    } else {
        format!("files: {}\n", note.files.join(", "))
    };
    format!(
        "{} {} (the team's: a file in the project's .claude-mem/, shared by a teammate)\n\
         {}: {}\nwhen: {}\nsession: {}\n{files}\n{}\n",
        note.kind.as_str(),
        note.id,
        note.label,
        note.title,
        note.when,
        note.session,
        note.body
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::NoteKind;

    /// Without this machine's key yet, the order is still one: the same at every search of a
    /// process, so that the MCP server's kept index of the notes serves and pages agree.
    #[test]
    fn the_notes_order_is_the_same_at_each_search_before_the_key_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let notes: Vec<Note> = (0..40)
            .map(|n| Note {
                kind: NoteKind::Memory,
                id: format!("0195f3a2-7c4b-7d3e-8f12-{n:012}"),
                label: "bugfix".into(),
                title: format!("Note {n}"),
                when: "2026-11-20T10:05:00.000Z".into(),
                session: "5f0e9d3c".into(),
                files: vec![],
                origin: String::new(),
                body: "Rounded once.".into(),
            })
            .collect();
        let ids = |notes: Vec<Note>| notes.into_iter().map(|n| n.id).collect::<Vec<_>>();
        let first = ids(unforeseeable(&config, notes.clone()));
        for _ in 0..5 {
            assert_eq!(ids(unforeseeable(&config, notes.clone())), first);
        }
        assert_ne!(first, ids(notes), "in the ids' own order");
    }
}
