//! The files `share` wrote of what the user forgets, taken back out of the projects'
//! `.claude-mem/` folders with it: each forgotten memory and summary is made into the note
//! `share` would write of it today, in its project, under this database's origin, and a file
//! is removed only when it holds exactly that (see `team::unshare`). The user commits the
//! deletion; a file that cannot be removed safely is left, with why.

use std::path::{Path, PathBuf};

use super::note;
use crate::privacy::secrets::Redactor;
use crate::store::forgotten::Made;
use crate::team::Note;
use crate::team::unshare::{self, Found};

/// A file of a forgotten item, in the folder of its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// The project's `.claude-mem/` folder.
    pub folder: PathBuf,
    pub file: PathBuf,
    /// `None`: ours, to remove; else why it stays.
    pub left: Option<String>,
}

/// Whether `project` has a `.claude-mem/` folder here: only then is an item of it read whole
/// (see `store::forgotten::made`).
pub fn has_folder(project: &str) -> bool {
    crate::team::read::folder(Path::new(project)).is_some()
}

/// The files the projects' folders hold of `made`, shared from the database `origin`.
pub fn find(made: &Made, origin: &str, redactor: &Redactor) -> Vec<Shared> {
    let memories = made
        .memories
        .iter()
        .map(|(m, project)| (project, note::memory(m, project, origin, redactor)));
    let summaries = made
        .summaries
        .iter()
        .map(|(s, project)| (project, note::summary(s, project, origin, redactor)));
    memories
        .chain(summaries)
        .filter_map(|(project, note)| shared(Path::new(project), &note))
        .collect()
}

fn shared(project: &Path, note: &Note) -> Option<Shared> {
    let folder = project.join(crate::team::FOLDER);
    match unshare::find(project, note) {
        Found::Nothing => None,
        Found::Ours(file) => Some(Shared {
            folder,
            file,
            left: None,
        }),
        Found::Left(file, why) => Some(Shared {
            folder,
            file,
            left: Some(why),
        }),
    }
}

/// Removes the files found to be ours; those it could not remove are left, with why.
pub fn remove(shared: &mut [Shared]) {
    for s in shared.iter_mut().filter(|s| s.left.is_none()) {
        if let Err(err) = unshare::remove(&s.file) {
            s.left = Some(format!("it could not be removed ({err})"));
        }
    }
}
