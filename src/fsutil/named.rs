//! A file the user names on a command line (`export -o FILE`, `export --html FILE`): it holds
//! their history, so it is private from the start (mode 0600), written whole or not at all,
//! and it replaces only a regular file of theirs: never a link (which would write where it
//! points), a folder, a device or a FIFO, or another user's file.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Writes what `fill` writes to `path`, whole: what `fill` returned and how many bytes.
pub fn write_whole<T>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<T>,
) -> Result<(T, u64)> {
    refuse_to_replace(path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // A temp file beside it is 0600 from the start and replaces the target only when whole.
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let made = {
        let mut out = BufWriter::new(file.as_file_mut());
        let made = fill(&mut out)?;
        out.flush()?;
        made
    };
    file.as_file().sync_all()?;
    let bytes = file.as_file().metadata()?.len();
    // A rename replaces what is at `path` (never what a link there points to): checked again,
    // as something may have been put there while the file was written.
    refuse_to_replace(path)?;
    file.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((made, bytes))
}

/// Refuses a target that is not a regular file of this user's: a link, a folder, a device or
/// a FIFO, or another user's file, is left as it is.
fn refuse_to_replace(path: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => bail!("cannot write {}: {err}", path.display()),
    };
    let kind = meta.file_type();
    let what = if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a folder"
    } else if !kind.is_file() {
        "not a regular file"
    } else {
        return refuse_others(path, &meta);
    };
    bail!(
        "{} is {what}: not replaced (name a new file or a regular file of yours)",
        path.display()
    )
}

#[cfg(unix)]
fn refuse_others(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    if meta.uid() != super::euid() {
        bail!(
            "{} belongs to another user: not replaced (name a new file or a file of yours)",
            path.display()
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_others(_path: &Path, _meta: &std::fs::Metadata) -> Result<()> {
    Ok(())
}
