//! The layout of the remote's branch: `header` at the root, and one folder per machine, named
//! by its random id (16 hex digits), of chunks `NNNNNNNN.cmc` numbered from 1. Each machine
//! writes only its own folder, so two machines never change the same file and pushes never
//! conflict: one that loses the race takes the other's tree and puts its folder in again.
//! Nothing in a name is the user's: ids are random, numbers count.
//!
//! Anything else in the branch (a README someone committed, a folder of another tool) is left
//! as it is and never read.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use super::git::{Entry, Git};

pub const HEADER: &str = "header";
const CHUNK_SUFFIX: &str = ".cmc";

/// What the remote's tree holds.
#[derive(Debug, Default)]
pub struct Layout {
    /// The header's blob.
    pub header: Option<String>,
    /// Each machine's chunks: number to blob.
    pub machines: BTreeMap<String, BTreeMap<i64, String>>,
    /// The entries at the root, as they are (the machines' folders and the header included).
    root: Vec<Entry>,
}

/// Whether `name` is a machine's folder name.
pub fn is_machine(name: &str) -> bool {
    name.len() == 16
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub fn chunk_name(seq: i64) -> String {
    format!("{seq:08}{CHUNK_SUFFIX}")
}

fn chunk_seq(name: &str) -> Option<i64> {
    let digits = name.strip_suffix(CHUNK_SUFFIX)?;
    (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|seq| *seq > 0)
}

impl Layout {
    /// The layout of `commit`'s tree.
    pub fn read(git: &Git, commit: &str) -> Result<Layout> {
        let entries = git.tree(commit).context("cannot read the remote's tree")?;
        let mut layout = Layout::default();
        for entry in entries {
            match entry.path.split_once('/') {
                None => {
                    if entry.path == HEADER && entry.kind == "blob" {
                        layout.header = Some(entry.id.clone());
                    }
                    layout.root.push(entry);
                }
                Some((machine, name)) if is_machine(machine) && entry.kind == "blob" => {
                    if let Some(seq) = chunk_seq(name) {
                        layout
                            .machines
                            .entry(machine.to_string())
                            .or_default()
                            .insert(seq, entry.id);
                    }
                }
                Some(_) => {}
            }
        }
        Ok(layout)
    }

    /// The blobs at the root (the header, files not ours): read, or named by every tree a
    /// push makes, so never dropped here even when a refused chunk has the same bytes.
    pub fn root_blobs(&self) -> impl Iterator<Item = &str> {
        self.root
            .iter()
            .filter(|e| e.kind == "blob")
            .map(|e| e.id.as_str())
    }

    /// The root tree with `machine`'s folder holding exactly `chunks` (none: no folder), and
    /// the header `header` when given; everything else as it was.
    pub fn tree(
        &self,
        git: &Git,
        header: Option<&str>,
        machine: &str,
        chunks: &BTreeMap<i64, String>,
    ) -> Result<String> {
        let mut root: Vec<Entry> = self
            .root
            .iter()
            .filter(|e| e.path != machine && !(header.is_some() && e.path == HEADER))
            .cloned()
            .collect();
        if let Some(header) = header {
            root.push(blob(HEADER, header));
        }
        if !chunks.is_empty() {
            let files: Vec<Entry> = chunks
                .iter()
                .map(|(seq, id)| blob(&chunk_name(*seq), id))
                .collect();
            root.push(Entry {
                mode: "040000".into(),
                kind: "tree".into(),
                id: git.mktree(&files)?,
                path: machine.into(),
            });
        }
        git.mktree(&root)
    }
}

fn blob(name: &str, id: &str) -> Entry {
    Entry {
        mode: "100644".into(),
        kind: "blob".into(),
        id: id.into(),
        path: name.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ours_or_ignored() {
        assert!(is_machine("0123456789abcdef"));
        assert!(!is_machine("0123456789ABCDEF"));
        assert!(!is_machine("README.md"));
        assert_eq!(chunk_name(7), "00000007.cmc");
        assert_eq!(chunk_seq("00000007.cmc"), Some(7));
        assert_eq!(chunk_seq("00000000.cmc"), None);
        assert_eq!(chunk_seq("7.cmc"), None);
        assert_eq!(chunk_seq("notes.txt"), None);
    }
}
