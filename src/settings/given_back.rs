//! Another agent's file that we register in (Codex's `hooks.json` and `config.toml`,
//! Cursor's `hooks.json` and `mcp.json`): changed atomically, and given back on uninstall as
//! it was, byte for byte, when we were its only change since.
//!
//! Install keeps, in the data dir, the file as it found it and as it left it. Uninstall
//! compares: a file as we left it is put back as it was found (removed, when there was none);
//! a file someone changed since has only our entries taken out, its other changes kept. A
//! file that held our entries when install found it keeps no copy: giving it back would give
//! back entries of ours.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::config::Config;
use crate::fsutil::{self, Durability};

/// What became of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    Unchanged,
    Created,
    Changed,
    /// Uninstall put the file back as install found it.
    GivenBack,
    /// Uninstall removed the file install had created.
    Removed,
    /// A dry run: what would be written.
    WouldWrite(String),
    /// A dry run: the file would be removed.
    WouldRemove,
}

/// How our entries go in and out of one kind of file. Both are pure: text in, text out.
pub struct Edits<'a> {
    /// The file with our entries, from what it holds (`None`: no file).
    pub add: &'a dyn Fn(Option<&str>) -> Result<String>,
    /// The file without any entry of ours.
    pub remove: &'a dyn Fn(&str) -> Result<String>,
}

/// The copies kept of one file: `<name>.before` (absent when there was no file) and
/// `<name>.after`.
struct Saved {
    before: PathBuf,
    after: PathBuf,
}

impl Saved {
    fn of(config: &Config, name: &str) -> Saved {
        let dir = config.data_dir.join("agents");
        Saved {
            before: dir.join(format!("{name}.before")),
            after: dir.join(format!("{name}.after")),
        }
    }

    fn after(&self) -> Option<String> {
        fs::read_to_string(&self.after).ok()
    }

    fn forget(&self) -> io::Result<()> {
        for path in [&self.before, &self.after] {
            match fs::remove_file(path) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
        Ok(())
    }

    fn keep(&self, config: &Config, before: Option<&str>, after: &str) -> Result<()> {
        let dir = config.data_dir.join("agents");
        fsutil::our_dir(&config.data_dir)?;
        fsutil::our_dir(&dir)?;
        let write = |path: &Path, text: &str| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("saved");
            fsutil::write_atomic(&dir, name, text.as_bytes(), Durability::PowerLoss)
        };
        match before {
            Some(before) => write(&self.before, before)?,
            None => self.forget()?,
        }
        write(&self.after, after)?;
        Ok(())
    }
}

/// Adds our entries to the file at `path` (saved as `name` in the data dir).
pub fn install(
    config: &Config,
    path: &Path,
    name: &str,
    edits: &Edits,
    dry_run: bool,
) -> Result<Edit> {
    let path = &resolved(path);
    let current = read(path)?;
    let new = (edits.add)(current.as_deref())?;
    if current.as_deref() == Some(new.as_str()) {
        return Ok(Edit::Unchanged);
    }
    if dry_run {
        return Ok(Edit::WouldWrite(new));
    }
    let saved = Saved::of(config, name);
    let pristine = match &current {
        None => true,
        Some(text) => (edits.remove)(text)? == *text,
    };
    if pristine {
        saved.keep(config, current.as_deref(), &new)?;
    } else if saved.after() == current {
        // Ours, as a previous install left it: what it found stays the file to give back.
        let before = fs::read_to_string(&saved.before).ok();
        saved.keep(config, before.as_deref(), &new)?;
    } else {
        saved.forget()?;
    }
    write(path, &new)?;
    Ok(if current.is_none() {
        Edit::Created
    } else {
        Edit::Changed
    })
}

/// Takes our entries out of the file at `path`: gives back the file install found when the
/// file is as install left it, else removes our entries alone.
pub fn uninstall(
    config: &Config,
    path: &Path,
    name: &str,
    edits: &Edits,
    dry_run: bool,
) -> Result<Edit> {
    let path = &resolved(path);
    let saved = Saved::of(config, name);
    let Some(current) = read(path)? else {
        if !dry_run {
            saved.forget()?;
        }
        return Ok(Edit::Unchanged);
    };
    let as_we_left_it = saved.after().as_deref() == Some(current.as_str());
    let back = if as_we_left_it {
        fs::read_to_string(&saved.before).ok()
    } else {
        Some((edits.remove)(&current)?)
    };
    let edit = match back {
        Some(text) if text == current => Edit::Unchanged,
        Some(text) if dry_run => Edit::WouldWrite(text),
        Some(text) => {
            write(path, &text)?;
            if as_we_left_it {
                Edit::GivenBack
            } else {
                Edit::Changed
            }
        }
        None if dry_run => Edit::WouldRemove,
        None => {
            fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
            Edit::Removed
        }
    };
    if !dry_run {
        saved.forget()?;
    }
    Ok(edit)
}

/// The file behind a symlink (a dotfiles manager's): written there, the link stays a link.
fn resolved(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The file's text; `None` when there is no file. A folder, a FIFO or a device is refused.
fn read(path: &Path) -> Result<Option<String>> {
    read_regular(path, true)
}

/// [`read`], of what a link at `path` points to when `follow` (a settings file kept in a
/// dotfiles repository), else refusing a link as it refuses a folder.
pub(crate) fn read_regular(path: &Path, follow: bool) -> Result<Option<String>> {
    let meta = match follow {
        true => fs::metadata(path),
        false => fs::symlink_metadata(path),
    };
    match meta {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        Ok(meta) if !meta.is_file() => {
            bail!("{} is not a regular file; left untouched", path.display())
        }
        Ok(_) => {}
    }
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Some(text))
}

/// Replaces the file atomically, creating its folder when missing.
pub(super) fn write(path: &Path, text: &str) -> Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        bail!("{} is not a file's path", path.display());
    };
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // The new file is made private; one the user had is given its mode back.
    let mode = fs::metadata(path).map(|m| m.permissions()).ok();
    fsutil::write_atomic(dir, name, text.as_bytes(), Durability::PowerLoss)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(mode) = mode {
        let _ = fs::set_permissions(path, mode);
    }
    Ok(())
}
