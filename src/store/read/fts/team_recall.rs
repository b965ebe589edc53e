//! Per-prompt recall's side of the team's notes (a project's `.claude-mem/` files): each of a
//! prompt's words looked up in their digest (`team::digest`: the terms of each note as the
//! index's tokenizer makes them, hashed, made by a process of its own), so that `recall.rs`
//! weighs the notes as if the index held them; then the notes that clear the bar read again,
//! as untrusted files, before any is handed: one gone or no longer one to read is not, and
//! what is shown of one is what its file holds now.
//!
//! The database's own notes are not the team's: the digest leaves out those this machine
//! shared or holds (see `recall::team::digest`), and a note whose id the database holds or
//! forgot is left out again when handed; never by the `origin:` a file names, which anyone may
//! write.

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use super::notes;
use super::schema::Item;
use super::snippet::snippet;
use super::stems::Stemmer;
use crate::team::digest::Digest;
use crate::team::read::FRONT_BYTES;

/// The team's notes of a project, as a prompt's recall is given them.
pub struct Team<'a> {
    /// The project's `.claude-mem/` folder.
    pub dir: &'a Path,
    pub digest: &'a Digest,
}

/// The team's notes as one prompt's words find them.
pub(super) struct Side<'a> {
    team: &'a Team<'a>,
    /// The prompt's content words.
    words: &'a [String],
    /// How many notes are weighed: all the digest's.
    pub count: u64,
    /// The terms of each of the prompt's words, as a query makes them.
    terms: Vec<Vec<String>>,
}

impl<'a> Side<'a> {
    /// The notes of `team` for the prompt's content `words`; `index` is the search index when
    /// it is ready.
    pub fn new(
        index: Option<&Connection>,
        team: &'a Team<'a>,
        words: &'a [String],
    ) -> Result<Side<'a>> {
        let stemmer = match index {
            Some(index) => Stemmer::on(index)?,
            None => Stemmer::new()?,
        };
        let terms = words
            .iter()
            .map(|w| stemmer.terms(w, true))
            .collect::<Result<_>>()?;
        Ok(Side {
            team,
            words,
            count: team.digest.count() as u64,
            terms,
        })
    }

    /// For each word, the notes weighed that hold it (all its terms, in any order), by place
    /// in the digest: as the index's lookup answers for its items.
    pub fn lists(&self) -> Vec<Option<Vec<i64>>> {
        self.terms
            .iter()
            .map(|terms| {
                let mut notes: Option<Vec<usize>> = None;
                for term in terms {
                    let holding = self.team.digest.holding(term);
                    notes = Some(match notes {
                        None => holding,
                        // Both in order of place.
                        Some(before) => before
                            .into_iter()
                            .filter(|n| holding.binary_search(n).is_ok())
                            .collect(),
                    });
                }
                Some(
                    notes
                        .unwrap_or_default()
                        .into_iter()
                        .map(|n| n as i64)
                        .collect(),
                )
            })
            .collect()
    }

    /// Of the notes of `passing` (by place in the digest, best first, with their scores), those
    /// that may be given, up to `limit`, each as an item of `project` with its score and
    /// snippet (around the first of the words `found`, by their places among the prompt's): a
    /// file to read still, a teammate's and not one of this database's, and `keep`'s. Bounded:
    /// the front of each file is read, [`FRONT_BYTES`]: its header and the start of its text,
    /// enough for what a prompt shows of it, whatever the size of the file.
    pub fn hand(
        &self,
        main: &Connection,
        (project, limit): (&str, usize),
        keep: &dyn Fn(&Item) -> bool,
        found: &[usize],
        passing: Vec<(i64, f64)>,
    ) -> Result<Vec<(f64, Item, String)>> {
        let probes: Vec<&str> = found
            .iter()
            .flat_map(|&at| std::iter::once(&self.words[at]).chain(&self.terms[at]))
            .map(String::as_str)
            .collect();
        let mut out = Vec::new();
        for (n, score) in passing {
            let Some(path) = usize::try_from(n)
                .ok()
                .and_then(|n| self.team.digest.path(n))
            else {
                continue;
            };
            let Ok(note) = crate::team::read::front(self.team.dir, path, FRONT_BYTES) else {
                continue;
            };
            if !crate::store::read::context::known(main, [note.id.as_str()])?.is_empty() {
                continue;
            }
            let item = notes::item(&note, project);
            if !keep(&item) {
                continue;
            }
            let snippet = snippet(&notes::marked(&note, &probes)).0;
            out.push((score, item, snippet));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }
}
