//! A file `share` wrote taken back out of a project's `.claude-mem/` folder when the user
//! forgets its item. Only a file that is safe to remove goes: in a real folder of the user's
//! (and a real month folder), a regular file of theirs, holding, byte for byte, what `share`
//! writes of the item, whatever database its `origin:` names (a line anyone may edit: the item
//! is the user's by its id, which this database made, and another machine of theirs shares it
//! under its own). Anything else (edited since, a link in a folder's place) is left, with why,
//! for the user to delete by hand: what someone else wrote into it is not ours to throw away.

use std::io;
use std::path::{Path, PathBuf};

use super::format::{self, Note};
use super::read;
use super::write::real_folder;

/// What the folder holds of a forgotten item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No file of it.
    Nothing,
    /// This machine's file, as `share` wrote it: safe to remove.
    Ours(PathBuf),
    /// A file of it that must not be removed for the user, and why.
    Left(PathBuf, String),
}

/// What `project`'s folder holds of `note`: the item as `share` writes it today (with the
/// origin the file names).
pub fn find(project: &Path, note: &Note) -> Found {
    let dir = project.join(super::FOLDER);
    let path = format::path(note);
    let file = dir.join(&path);
    let month = dir.join(format::month(&note.when));
    for folder in [&dir, &month] {
        match real_folder(folder) {
            Ok(true) => {}
            Ok(false) => return Found::Nothing,
            // Only worth a word when the file is there to be seen through it.
            Err(_) if !file.exists() => return Found::Nothing,
            Err(why) => return Found::Left(file, why),
        }
    }
    if std::fs::symlink_metadata(&file).is_err() {
        return Found::Nothing;
    }
    let text = match read::text(&dir, &path) {
        Ok(text) => text,
        Err(why) => return Found::Left(file, format!("it is not a plain file of yours ({why})")),
    };
    match format::parse(&text, note.kind, &note.id) {
        Err(why) => Found::Left(file, format!("it is not a file share wrote ({why})")),
        Ok(old) => {
            let written = Note {
                origin: old.origin,
                ..note.clone()
            };
            match text == format::render(&written) {
                true => Found::Ours(file),
                false => Found::Left(
                    file,
                    "it is not what share wrote of it (edited since it was shared?)".into(),
                ),
            }
        }
    }
}

/// Removes a file [`find`] found to be ours (already gone is as good).
pub fn remove(file: &Path) -> io::Result<()> {
    match std::fs::remove_file(file) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::team::NoteKind;

    fn note(origin: &str) -> Note {
        Note {
            kind: NoteKind::Memory,
            id: "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44".into(),
            label: "bugfix".into(),
            title: "Rounding".into(),
            when: "2026-11-20T10:05:00.000Z".into(),
            session: "5f0e9d3c".into(),
            files: vec![],
            origin: origin.into(),
            body: "Rounded once.".into(),
        }
    }

    fn plant(project: &Path, text: &str) -> PathBuf {
        let month = project.join(".claude-mem/2026-11");
        std::fs::create_dir_all(&month).unwrap();
        let file = month.join(format::file_name(NoteKind::Memory, &note("").id));
        std::fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn only_our_file_as_share_wrote_it_is_ours_to_remove() {
        let project = tempfile::tempdir().unwrap();
        let ours = note("o-1");
        assert_eq!(find(project.path(), &ours), Found::Nothing);
        let file = plant(project.path(), &format::render(&ours));
        assert_eq!(find(project.path(), &ours), Found::Ours(file.clone()));
        let edited = format::render(&ours).replace("Rounded once.", "Rounded twice.");
        std::fs::write(&file, edited).unwrap();
        assert!(
            matches!(find(project.path(), &ours), Found::Left(_, why) if why.contains("edited"))
        );
        // Another origin: the id is ours, whatever the line says.
        std::fs::write(&file, format::render(&note("o-2"))).unwrap();
        assert_eq!(find(project.path(), &ours), Found::Ours(file.clone()));
        remove(&file).unwrap();
        remove(&file).unwrap();
        assert_eq!(find(project.path(), &ours), Found::Nothing);
    }

    #[test]
    fn a_link_in_a_folders_place_is_left_with_why() {
        let project = tempfile::tempdir().unwrap();
        let away = tempfile::tempdir().unwrap();
        let ours = note("o-1");
        plant(away.path(), &format::render(&ours));
        std::os::unix::fs::symlink(
            away.path().join(".claude-mem"),
            project.path().join(".claude-mem"),
        )
        .unwrap();
        assert!(
            matches!(find(project.path(), &ours), Found::Left(_, why) if why.contains("is not a folder"))
        );
    }
}
