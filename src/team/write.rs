//! The project's `.claude-mem/` folder brought in line with this machine's memories: a file
//! for each note shared, in the folder of the month it was made (see `format::month`), written
//! when its text changed (atomically: a teammate's editor or git never sees half a file), and
//! this machine's files whose item is gone (forgotten, pruned) removed; those of items held
//! but not chosen this time are left as they are. A file is this machine's when this machine
//! recorded writing its id (`team::shared`), or its id is one this database forgot (whatever
//! origin a teammate wrote into it: what the user forgot does not stay shared for an edited
//! line); never for the `origin:` it names, which anyone may write. A teammate's is never
//! touched. Files are 0644 and the folders 0755: they are meant to be committed.

use std::collections::{BTreeSet, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use super::format::{self, Note};
use super::read;

/// The note the folder holds besides the notes, saying what it is.
pub const README: &str = "README.md";
const README_TEXT: &str = "\
# Shared project memory (claude-mem)

Each file here is a memory or a session summary that a teammate's `claude-mem share` wrote:
what claude-mem's compressor made of their Claude Code sessions in this project. Never their
prompts, tool calls or Claude's messages; secrets are redacted and `<private>` text never
leaves their machine.

Commit these files with the code. A teammate's claude-mem shows them in `claude-mem search`,
in its MCP tools and at the start of each Claude Code session, marked as the team's, without
storing them. Review them as you review code. To un-share one, its author runs
`claude-mem forget <id>`, which removes the file too, and commits the deletion (a file only
deleted is written again by its author's next `share`, as an edited one is rewritten).

claude-mem's docs/sharing.md says more.
";

/// What a share did (or, dry, would do).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub folder: PathBuf,
    pub written: usize,
    pub unchanged: usize,
    pub removed: usize,
    /// Files of the folder this machine did not write (a teammate's), left as they are.
    pub others: usize,
    /// This machine's files of items it still holds but did not share this time, left as
    /// they are.
    pub kept: usize,
    /// The files written or removed (or, dry, to be), by path in the folder, in that order.
    pub changes: Vec<Change>,
    /// The ids of the files that now hold this database's items under its own origin: what
    /// this machine wrote (see `team::shared`).
    pub written_ids: Vec<String>,
    /// The ids of the files removed (or, dry, to be).
    pub removed_ids: Vec<String>,
}

/// A file a share writes or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub removed: bool,
    /// What the note is called (none for a removed file: it is not read again).
    pub title: String,
}

/// The items of this database that a share does not write: their files are this machine's
/// all the same.
#[derive(Debug, Default, Clone)]
pub struct Others {
    /// Held but not chosen this time: their files stay as they are.
    pub held: HashSet<String>,
    /// Forgotten: their files go, whatever origin they name.
    pub forgotten: HashSet<String>,
    /// What this machine's shares wrote before (see `team::shared`): gone from the database,
    /// their files go too.
    pub shared: HashSet<String>,
}

/// Writes `notes` (this database's, of origin `origin`) into the project's folder (created if
/// missing) and removes the files that `others` says this machine shared or forgot that are
/// not among them, but for those of the items `others` holds (not chosen this time). `dry`
/// changes nothing and counts what would change.
pub fn share(
    project: &Path,
    notes: &[Note],
    others: &Others,
    origin: &str,
    dry: bool,
) -> Result<Outcome> {
    let dir = project.join(super::FOLDER);
    let exists = usable(&dir)?;
    if !exists && !dry {
        create_folder(&dir)?;
    }
    let mut outcome = Outcome {
        folder: dir.clone(),
        ..Outcome::default()
    };
    let mut ours = BTreeSet::new();
    let mut wanted: Vec<(String, Option<&Note>)> =
        notes.iter().map(|n| (format::path(n), Some(n))).collect();
    wanted.push((README.into(), None));
    for (path, note) in &wanted {
        ours.insert(path.clone());
        let old = exists.then(|| read::text(&dir, path).ok()).flatten();
        let text = match note {
            Some(note) => {
                let owned = owned(note, old.as_deref());
                if owned.origin == origin {
                    outcome.written_ids.push(note.id.clone());
                }
                format::render(&owned)
            }
            None => README_TEXT.to_string(),
        };
        if old.as_deref() == Some(text.as_str()) {
            outcome.unchanged += usize::from(note.is_some());
            continue;
        }
        if !dry {
            write(&dir, path, text.as_bytes())?;
        }
        if let Some(note) = note {
            outcome.written += 1;
            outcome.changes.push(Change {
                path: path.clone(),
                removed: false,
                title: note.title.clone(),
            });
        }
    }
    if exists {
        remove_gone(&dir, &ours, others, dry, &mut outcome)?;
    }
    if !dry {
        crate::fsutil::sync_dir(&dir);
    }
    Ok(outcome)
}

/// `note` as its file is to hold it: with the origin the file already names, when it names
/// another. The same memory is in several databases of one person once `sync` runs; the file
/// stays the one machine's that shared it first (its share removes the file after a forget,
/// which sync brings it), instead of changing hands, and so lines, at each machine's share.
fn owned(note: &Note, old: Option<&str>) -> Note {
    let theirs = old
        .and_then(|text| format::parse(text, note.kind, &note.id).ok())
        .map(|old| old.origin)
        .filter(|origin| !origin.is_empty() && *origin != note.origin);
    match theirs {
        Some(origin) => Note {
            origin,
            ..note.clone()
        },
        None => note.clone(),
    }
}

/// Removes the files of `dir` this machine shared or forgot that are not `ours` (the paths
/// just written) nor of an item held (see [`Others`]), and counts the others' files and the
/// ones held.
fn remove_gone(
    dir: &Path,
    ours: &BTreeSet<String>,
    others: &Others,
    dry: bool,
    outcome: &mut Outcome,
) -> Result<()> {
    for entry in read::entries(dir) {
        let path = entry.path();
        if ours.contains(&path) {
            continue;
        }
        let mine = others.forgotten.contains(entry.id()) || others.shared.contains(entry.id());
        if !mine {
            outcome.others += 1;
            continue;
        }
        if others.held.contains(entry.id()) {
            outcome.kept += 1;
            continue;
        }
        if !dry {
            let path = dir.join(&path);
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
        outcome.removed += 1;
        outcome.removed_ids.push(entry.id().to_string());
        outcome.changes.push(Change {
            path,
            removed: true,
            title: String::new(),
        });
    }
    Ok(())
}

/// Whether the folder exists; an error when something else is in its place (a link, a file,
/// another user's folder): we write only into a real folder of the user's.
fn usable(dir: &Path) -> Result<bool> {
    real_folder(dir).map_err(|why| anyhow!("{why}: not writing into it"))
}

/// Whether `dir` is there as a real folder of the user's (`false`: nothing is there); else
/// what is in its place, as the start of a line.
pub(super) fn real_folder(dir: &Path) -> Result<bool, String> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(format!("cannot read {} ({err})", dir.display())),
    };
    if !meta.is_dir() {
        return Err(format!(
            "{} is not a folder (a link or a file)",
            dir.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != crate::fsutil::euid() {
            return Err(format!(
                "{} belongs to another user (uid {})",
                dir.display(),
                meta.uid()
            ));
        }
    }
    Ok(true)
}

fn create_folder(dir: &Path) -> Result<()> {
    fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot set the mode of {}", dir.display()))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` in `dir` (`README.md`, or `<month>/<name>`, the month's folder
/// made if missing) with mode 0644 so that a reader sees the old file or the new one: a temp
/// file beside it, renamed over (which replaces a link, never follows it).
fn write(dir: &Path, path: &str, bytes: &[u8]) -> Result<()> {
    let (dir, name) = match path.split_once('/') {
        Some((month, name)) => {
            let month = dir.join(month);
            if !usable(&month)? {
                create_folder(&month)?;
            }
            (month, name)
        }
        None => (dir.to_path_buf(), path),
    };
    replace(&dir, name, bytes).with_context(|| format!("cannot write {}", dir.join(name).display()))
}

fn replace(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
        let mut file = options.open(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The umask may have taken more than the group's and others' write bits.
            file.set_permissions(fs::Permissions::from_mode(0o644))?;
        }
        file.write_all(bytes)?;
        fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
