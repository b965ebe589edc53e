//! `export --html`: the memory as one static HTML page (sessions by day with their prompts,
//! tool calls and Claude's answers, summaries, memories, and a search box), for reading in a
//! browser with no server, no network and nothing installed.
//!
//! It is a view of the export, not a second reader of the database: the page is built from
//! the records `store::export::each_record` hands the JSON Lines export, with the same filters,
//! so it can hold nothing the export would not (secrets were redacted and `<private>` text
//! dropped when they were captured, and an export carries what is stored). The file holds the
//! user's history: it is made private (mode 0600) and written whole or not at all, and only a
//! regular file of the user's own is ever replaced by it.

mod html;
mod model;

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::Connection;

use crate::store::export::{Counts, Filter};

/// What a page holds and how big it is.
pub struct Written {
    pub counts: Counts,
    pub bytes: u64,
}

/// Writes the page of what `filter` selects to `path`.
pub fn write(conn: &Connection, filter: &Filter, path: &Path) -> Result<Written> {
    refuse_to_replace(path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // A temp file beside it is 0600 from the start and replaces the target only when whole.
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let counts = {
        let mut out = std::io::BufWriter::new(file.as_file_mut());
        let counts = html::page(conn, filter, &mut out)?;
        out.flush()?;
        counts
    };
    file.as_file().sync_all()?;
    let bytes = file.as_file().metadata()?.len();
    // A rename replaces what is at `path` (never what a link there points to): checked again,
    // as something may have been put there while the page was written.
    refuse_to_replace(path)?;
    file.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Written { counts, bytes })
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
    if meta.uid() != crate::fsutil::euid() {
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
