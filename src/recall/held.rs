//! The database an MCP server keeps between its calls. Opening it afresh for each call (the
//! database's checks and version, the index's settings, its tokenizer and ranking functions,
//! every statement prepared again) was most of what a `search` call cost on one running server
//! (see docs/performance.md). So one [`Recall`] is kept, with its connections and their cached
//! statements, for as long as its files are the ones it opened: a `stat` of each per call. A
//! database or an index deleted or replaced meanwhile (a restore, `rm`, a rebuild that made a
//! new file) is opened again; so is everything after a call that failed, which may have left
//! it half way.
//!
//! Keeping it holds no read transaction between calls (design rule 8): every statement runs
//! on its own and is reset when done, as a command's are.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;

use super::Recall;
use crate::config::Config;

/// A file as it was when opened: its device and inode, `None` when there was none.
type Stamp = Option<(u64, u64)>;

fn stamp(path: &Path) -> Stamp {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// The recall a server keeps, and the files it was opened on.
#[derive(Default)]
pub struct Held {
    kept: Option<(Recall, Stamp, Stamp)>,
}

impl Held {
    /// The recall for a call: the one kept when its files are still the same, else one opened
    /// now (`None` when nothing was ever captured). Give it back with [`Held::keep`] once the
    /// call succeeded.
    pub fn take(&mut self, config: &Config) -> Result<Option<Recall>> {
        let (db, index) = (stamp(&config.db_path()), stamp(&config.index_path()));
        if let Some((mut recall, was_db, was_index)) = self.kept.take()
            && db.is_some()
            && db == was_db
            && (index == was_index || was_index.is_none())
        {
            recall.next_call();
            return Ok(Some(recall));
        }
        Recall::open(config)
    }

    /// Keeps `recall` for the next call, with what its files are now.
    pub fn keep(&mut self, recall: Recall) {
        let config = &recall.config;
        let (db, index) = (stamp(&config.db_path()), stamp(&config.index_path()));
        let index = if recall.index.is_some() { index } else { None };
        self.kept = Some((recall, db, index));
    }
}
