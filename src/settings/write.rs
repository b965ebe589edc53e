//! Read, change, replace: the one way a settings file is written.
//!
//! Claude Code rewrites the file too (whole, in place, without a lock), a dotfiles user may
//! have it as a symlink, and a run of ours can be killed at any moment. So: the change is
//! computed from what is on disk and never written when it is empty; the file is replaced by a
//! rename of a synced temp file in the same directory (a reader sees the old file or the new
//! one, never a part); the link is followed so it survives; mode and owner are kept. Just
//! before the rename, under our lock, the file is read again and its identity (device, inode,
//! size, mtime) and bytes compared with what the change was based on; the rename itself checks
//! what it displaced (see `replace`); and the file is read once more after it. Whenever someone
//! else's write shows, the change is merged again into their version instead of overwriting
//! it, together with what a version of theirs that could not stay had changed (see `rebase`).
//! What stays open: a program that rewrites the file in place, without a lock, can still lose
//! a write that lands in the microseconds around our rename (see `replace`).

use std::fs::{self, Metadata};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use tempfile::NamedTempFile;

use super::diff;
use super::document::{self, Document};
use super::lock::Lock;
use super::open::{self, Snapshot};
use super::rebase::Carried;
use super::replace::{Replaced, replace};
use crate::fsutil::{create_private, private_dir, sync_dir};

/// Rounds of read-merge-write before giving up on a file that keeps changing under us.
const ATTEMPTS: usize = 8;
/// While a version of theirs that could not stay is still to be merged, giving up would lose
/// what it changed: rounds go on, at least this many and for at least [`CARRYING_FOR`] since
/// it was dropped. A program that rewrites the file every millisecond or so lets about one
/// round in ten through, and 32 rounds take some 40 ms: a bound of rounds alone gave up (and
/// lost that version's keys) in about one race test of six.
const ATTEMPTS_CARRYING: usize = 32;
const CARRYING_FOR: Duration = Duration::from_secs(2);

/// How long to wait before believing an empty or unparsable file: Claude Code truncates the
/// file before it writes it, so such a read may be of a write half done.
const SETTLE: Duration = Duration::from_millis(10);
/// An empty file younger than this may still be filled by the writer that emptied it.
const FRESH: Duration = Duration::from_secs(1);

/// What happened to the file.
pub enum Written {
    /// The change was already there: nothing was written, the file's mtime is unchanged.
    Unchanged,
    /// There was no file (and nothing to remove from it): nothing was written.
    Missing,
    Created,
    /// Replaced; `backup` is set when this run kept a copy of the previous contents.
    Replaced {
        backup: Option<PathBuf>,
    },
    /// `--dry-run`: the diff that a real run would apply. Nothing was written.
    WouldChange {
        diff: String,
    },
}

pub struct Outcome<T> {
    pub written: Written,
    /// What `edit` reported on the version of the file that was written (or found).
    pub report: T,
    /// Hard links the file had: replacing it leaves the others with the old contents.
    pub links: u64,
}

impl<T> Outcome<T> {
    /// A line saying that the file was (or would be) split from its hard links, if it was.
    pub fn split_links_note(&self, path: &Path) -> Option<String> {
        let dry = matches!(self.written, Written::WouldChange { .. });
        let replaced = dry || matches!(self.written, Written::Replaced { .. });
        (replaced && self.links > 1).then(|| {
            format!(
                "Note: {} had {} hard links; it {} replaced by a new file, so the other {} \
                 the old contents\n",
                path.display(),
                self.links,
                if dry { "would be" } else { "was" },
                if self.links > 2 {
                    "links keep"
                } else {
                    "link keeps"
                }
            )
        })
    }
}

/// The versions of theirs that could not stay, to merge into ours, and since when: while there
/// are any, rounds go on for longer (see [`ATTEMPTS_CARRYING`]).
#[derive(Default)]
struct Carrying {
    carried: Carried,
    /// When the first of them was dropped.
    since: Option<Instant>,
}

impl Carrying {
    /// Whether another round may start after `rounds`.
    fn go_on(&self, rounds: usize) -> bool {
        match self.since {
            None => rounds < ATTEMPTS,
            Some(since) => rounds < ATTEMPTS_CARRYING || since.elapsed() < CARRYING_FOR,
        }
    }

    /// Remembers what `dropped`, a version of theirs that could not stay, changed from `base`.
    fn add(&mut self, base: &[u8], dropped: &[u8]) {
        self.carried.add(base, dropped);
        if !self.carried.is_empty() {
            self.since.get_or_insert_with(Instant::now);
        }
    }
}

/// A dry run's answer: the diff from `before` to `after` a real run would write.
fn would_change(path: &Path, before: &[u8], after: &[u8]) -> Written {
    let old = String::from_utf8_lossy(before);
    let new = String::from_utf8_lossy(after);
    Written::WouldChange {
        diff: diff::unified(&path.display().to_string(), &old, &new),
    }
}

/// Applies `edit` to the settings file at `path`. A missing file is created only when `create`
/// is set; otherwise `edit` runs on an empty object and nothing is written.
pub fn update<T>(
    path: &Path,
    dry_run: bool,
    create: bool,
    mut edit: impl FnMut(&mut Map<String, Value>) -> Result<T>,
) -> Result<Outcome<T>> {
    let unchanged = || format!("left {} unchanged", path.display());
    let target = resolve_links(path).with_context(unchanged)?;
    let mut earlier: Option<Outcome<T>> = None;
    // Made at most once, by the first round that gets as far as writing.
    let mut backup = None;
    let mut carrying = Carrying::default();
    let mut rounds = 0;
    while carrying.go_on(rounds) {
        rounds += 1;
        let carried = &carrying.carried;
        let edited = edited(
            path,
            &target,
            dry_run,
            create,
            &mut edit,
            carried,
            &mut earlier,
        )?;
        let (before, after, report, links) = match edited {
            Edited::Done(outcome) => return Ok(outcome),
            Edited::Again => continue,
            Edited::Change {
                before,
                after,
                report,
                links,
            } => (before, after, report, links),
        };
        let first = earlier.is_none();
        let replaced = replace_once(path, &target, before.as_ref(), &after, first, &mut backup)
            .with_context(unchanged)?;
        if let Replaced::Raced { dropped } = replaced {
            if let Some(dropped) = dropped {
                carrying.add(before.as_ref().map_or(&[][..], |b| &b.bytes), &dropped);
            }
            continue;
        }
        let written = match (before, earlier.take()) {
            (_, Some(first)) => first.written,
            (None, None) => Written::Created,
            (Some(_), None) => Written::Replaced {
                backup: backup.take(),
            },
        };
        let outcome = Outcome {
            written,
            report,
            links,
        };
        // Someone may have written over us right after the rename; then merge into theirs.
        if open::read(&target)?.is_some_and(|now| now.bytes == after) {
            return Ok(outcome);
        }
        earlier = Some(outcome);
    }
    bail!(
        "gave up on {}: it kept changing while claude-mem was updating it (another program is \
         writing it); run the command again",
        path.display()
    )
}

/// What one round's read and edit of the file came to.
enum Edited<T> {
    /// Nothing to write: the update ends with this.
    Done(Outcome<T>),
    /// The file read is half of someone else's write: read it again.
    Again,
    /// The file as read (`None`: there is none) and as the edit makes it.
    Change {
        before: Option<Snapshot>,
        after: Vec<u8>,
        report: T,
        links: u64,
    },
}

/// Reads the file at `target` and applies what versions of theirs changed, then `edit`. The
/// update ends here on a missing file that is not to be created, on an edit that changes
/// nothing, and on a dry run.
fn edited<T>(
    path: &Path,
    target: &Path,
    dry_run: bool,
    create: bool,
    edit: &mut impl FnMut(&mut Map<String, Value>) -> Result<T>,
    carried: &Carried,
    earlier: &mut Option<Outcome<T>>,
) -> Result<Edited<T>> {
    let unchanged = || format!("left {} unchanged", path.display());
    let before = settled_read(target).with_context(unchanged)?;
    let links = before.as_ref().map_or(1, |b| b.links);
    if before.is_none() && !create {
        let report = edit(&mut Map::new()).with_context(unchanged)?;
        let written = Written::Missing;
        return Ok(Edited::Done(Outcome {
            written,
            report,
            links,
        }));
    }
    let bytes = before.as_ref().map_or(&[][..], |b| &b.bytes);
    let document = match Document::parse(bytes) {
        Ok(document) => document,
        // Half a write of someone else's, unless it holds still.
        Err(_) if read_later(target)? != before => return Ok(Edited::Again),
        Err(err) => return Err(err).with_context(unchanged),
    };
    let mut root = document.root.clone();
    carried.apply(&mut root);
    let report = edit(&mut root).with_context(unchanged)?;
    let after = document.render(&root);
    if after == document.render(&document.root) {
        // After an earlier round wrote the file, finding nothing left to do means that
        // write stands: report it, not "unchanged".
        let written = Written::Unchanged;
        return Ok(Edited::Done(earlier.take().unwrap_or(Outcome {
            written,
            report,
            links,
        })));
    }
    document::check_numbers(bytes).with_context(unchanged)?;
    if dry_run {
        let written = would_change(path, bytes, &after);
        return Ok(Edited::Done(Outcome {
            written,
            report,
            links,
        }));
    }
    Ok(Edited::Change {
        before,
        after,
        report,
        links,
    })
}

/// Puts `after` in place of the file that `before` saw, under our lock. `Raced` when the file
/// changed meanwhile: then what is in place is theirs, and the change is to be merged again.
/// The backup is made (once) by the first round that gets this far.
fn replace_once(
    path: &Path,
    target: &Path,
    before: Option<&Snapshot>,
    after: &[u8],
    first: bool,
    backup: &mut Option<PathBuf>,
) -> Result<Replaced> {
    let existing = match before {
        Some(_) => Some(check_writable(target)?),
        None => {
            if let Some(dir) = target.parent() {
                private_dir(dir)
                    .with_context(|| format!("cannot create directory {}", dir.display()))?;
            }
            None
        }
    };
    let _lock = Lock::acquire(target)?;
    remove_stale_temps(target);
    if open::read(target)?.as_ref() != before {
        return Ok(Replaced::Raced { dropped: None });
    }
    if let (Some(before), true, None) = (before, first, &backup) {
        *backup = keep_backup(path, &before.bytes)?;
    }
    let temp = write_temp(target, after, existing.as_ref())?;
    if open::read(target)?.as_ref() != before {
        return Ok(Replaced::Raced { dropped: None });
    }
    let replaced = replace(temp, target, before)?;
    if let (Replaced::Done, Some(dir)) = (&replaced, target.parent()) {
        sync_dir(dir);
    }
    Ok(replaced)
}

/// The file as it is, waiting while it is empty and was written within the last second: an
/// empty file may be one that an in-place writer has just truncated, and taking it for `{}`
/// would write away everything.
fn settled_read(target: &Path) -> Result<Option<Snapshot>> {
    let started = std::time::Instant::now();
    loop {
        let now = open::read(target)?;
        let suspect = now.as_ref().is_some_and(|snapshot| {
            let fresh = snapshot
                .stamp
                .modified()
                .and_then(|at| at.elapsed().ok())
                .is_none_or(|age| age < FRESH);
            snapshot.bytes.trim_ascii().is_empty() && fresh
        });
        if !suspect || started.elapsed() > FRESH {
            return Ok(now);
        }
        std::thread::sleep(SETTLE);
    }
}

fn read_later(target: &Path) -> Result<Option<Snapshot>> {
    std::thread::sleep(SETTLE);
    open::read(target)
}

/// Follows symlinks to the file that is really written, so a linked settings.json (a dotfiles
/// repository) keeps its link and the target changes. The target need not exist yet.
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)
                    .with_context(|| format!("cannot read symlink {}", current.display()))?;
                current = match current.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            Err(err) if err.kind() != ErrorKind::NotFound => {
                return Err(err).with_context(|| format!("cannot look at {}", current.display()));
            }
            _ => return Ok(current),
        }
    }
    bail!("it is a loop of symbolic links")
}

/// A read-only file is refused even where we could replace it anyway (root, or a writable
/// directory): someone made it read-only so that it would not change.
/// Returns the file's metadata, for the new file to take its mode and owner.
fn check_writable(target: &Path) -> Result<Metadata> {
    let meta =
        fs::metadata(target).with_context(|| format!("cannot look at {}", target.display()))?;
    if meta.permissions().readonly() {
        bail!(
            "{} is read-only; make it writable (chmod u+w) if claude-mem may change it",
            target.display()
        );
    }
    // Opening without truncating changes nothing, and fails where the system would refuse the
    // write: another owner, an immutable file, a read-only mount.
    open::open(target, true)?;
    Ok(meta)
}

/// Keeps `<name>.claude-mem.bak` beside the file the user named (beside the link, not inside a
/// dotfiles repository), unless one exists: the first backup holds the file as it was before
/// claude-mem ever changed it. A project's `settings.local.json` is personal (it may hold
/// tokens) and Claude Code keeps it out of git by its exact name; a backup beside it would be
/// an untracked file that `git add -A` commits, so that one is kept in claude-mem's data dir.
fn keep_backup(path: &Path, bytes: &[u8]) -> Result<Option<PathBuf>> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let backup = if name == "settings.local.json" {
        let dir = crate::config::Config::from_env().backups_dir();
        private_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let flat: String = path
            .to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        dir.join(format!("{}.claude-mem.bak", flat.trim_start_matches('_')))
    } else {
        path.with_file_name(format!("{name}.claude-mem.bak"))
    };
    let mut file = match create_private(&backup) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {
            // A FIFO or a directory there is no backup, and writing on would say it is one.
            open::refuse_planted(&backup).context("refusing the backup")?;
            return Ok(None);
        }
        Err(err) => {
            return Err(err).with_context(|| format!("cannot create backup {}", backup.display()));
        }
    };
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write backup {}", backup.display()))?;
    Ok(Some(backup))
}

/// Temp files of ours left beside `target` by a run that was killed before its rename. Only
/// called under the lock, and only files old enough that no live run can own them.
fn remove_stale_temps(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let prefix = format!(".{}.claude-mem-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 60));
        if file_name.starts_with(&prefix) && file_name.ends_with(".tmp") && old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The new contents in a synced temp file beside `target`, with the old file's mode and owner
/// (0600 for a new file: settings can hold tokens in `env`).
fn write_temp(target: &Path, bytes: &[u8], existing: Option<&Metadata>) -> Result<NamedTempFile> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}.claude-mem-"))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    if let Some(meta) = existing {
        keep_mode_and_owner(temp.as_file(), meta)
            .with_context(|| format!("cannot keep the mode and owner of {}", target.display()))?;
    }
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    Ok(temp)
}

#[cfg(unix)]
fn keep_mode_and_owner(file: &fs::File, meta: &Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let ours = file.metadata()?;
    if (ours.uid(), ours.gid()) != (meta.uid(), meta.gid()) {
        std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()))?;
    }
    file.set_permissions(meta.permissions())
}

#[cfg(not(unix))]
fn keep_mode_and_owner(file: &fs::File, meta: &Metadata) -> std::io::Result<()> {
    file.set_permissions(meta.permissions())
}
