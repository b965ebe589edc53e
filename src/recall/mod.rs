//! What every reader of the memory shares, the read commands and the MCP server alike: the
//! database opened read-only, the search index brought up to date once it is needed, ids
//! resolved from any prefix a command printed, which project a question is about, and time
//! bounds.
//!
//! A [`Recall`] lives for one command, or, kept by [`held::Held`], for an MCP server's calls
//! while its files are the ones it opened: its connections hold no read transaction between
//! queries (design rule 8: each statement runs on its own and is reset when done), and the
//! index is caught up with the database once per call ([`Recall::next_call`]).

pub mod held;
pub mod names;
pub mod rules;
pub mod search;
pub mod team;
pub mod whole;

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use chrono::{DateTime, Datelike, Local, NaiveDate, NaiveTime, SecondsFormat, TimeZone, Utc};

use crate::clock;
use crate::config::Config;
use crate::emit::{self, UsageError};
use crate::render;
use crate::store::fts::{Index, Item, RESOLVE_LIMIT};
use crate::store::read::Reader;
use crate::store::rows::{Kind, handle};

/// The items an ambiguous id lists by name; the rest are counted.
const CANDIDATES: usize = 5;

/// The database of one command or call, and its search index once asked for.
pub struct Recall {
    pub config: Config,
    reader: Reader,
    index: Option<Index>,
    /// Whether the index was caught up with the database in this command or call.
    current: bool,
    /// Whether a server keeps this recall between its calls.
    kept: bool,
}

impl Recall {
    /// `None` when nothing was ever captured.
    pub fn open(config: &Config) -> Result<Option<Recall>> {
        Ok(Reader::open(config)?.map(|reader| Recall {
            config: config.clone(),
            reader,
            index: None,
            current: false,
            kept: false,
        }))
    }

    /// Like [`Recall::open`], for a question about one item: without a database there is none.
    pub fn open_for_item(config: &Config) -> Result<Recall> {
        Recall::open(config)?.ok_or_else(|| anyhow!(no_database(config)))
    }

    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The search index, brought up to date with the database the first time it is asked for
    /// (a progress line on a terminal while that takes a moment).
    pub fn index(&mut self) -> Result<&Index> {
        if self.index.is_none() {
            self.index = Some(Index::open(&self.config)?);
            self.current = false;
        }
        let index = self.index.as_ref().expect("the index was just opened");
        if self.kept {
            index.keep_lengths()?;
        }
        if !self.current {
            // What is written from now on may come after the catch-up's last read.
            let began = std::time::SystemTime::now();
            let mut progress = emit::Progress::new("indexing");
            index.catch_up(&self.reader, &mut |done, total| {
                progress.update(done, total)
            })?;
            // For per-prompt recall's sake: a session start that finds the database written
            // since has the maintenance process catch the index up (see `marks::index_behind`).
            if self.config.recall {
                crate::marks::index_caught_up(&self.config, began);
            }
            self.current = true;
        }
        Ok(index)
    }

    /// A new call of a server that keeps this recall: the index is caught up again when next
    /// asked for (what the hooks wrote since is found), and keeps what it will be asked for
    /// again (see [`Index::keep_lengths`]).
    pub fn next_call(&mut self) {
        self.current = false;
        self.kept = true;
    }

    /// Brings the search index up to date again after this command changed the database (a
    /// forget, a prune, a scrub): it takes out what was deleted or rewritten.
    pub fn resync(&mut self) -> Result<()> {
        self.index = None;
        self.index().map(|_| ())
    }

    /// After rows were deleted or rewritten for good (forget, scrub): the index takes them out
    /// and its file is rebuilt, so that no old copy of them stays in it (see `store::rebuild`).
    /// Returns whether its WAL is empty (a reader may hold it up to `wait`). Nothing to do when
    /// there is no index.
    pub fn purge_index(&mut self, wait: std::time::Duration) -> Result<bool> {
        if !self.config.index_path().exists() {
            return Ok(true);
        }
        self.resync()?;
        let data_dir = self.config.data_dir.clone();
        self.index()?.rebuild(&data_dir, wait)
    }

    /// What `id` names: a whole id as stored, or a unique prefix (6 characters at least) of an
    /// id or of the short id printed for it. Ambiguity is an error naming the candidates.
    pub fn resolve(&mut self, id: &str) -> Result<(Kind, String)> {
        if let Some(kind) = self.reader.kind_of(id)? {
            return Ok((kind, id.to_string()));
        }
        if id.chars().count() < 6 {
            return Err(usage(format!(
                "{id:?} is too short to be an id: give at least 6 characters"
            )));
        }
        let found = self.index()?.resolve(id)?;
        match found.as_slice() {
            [] => Err(anyhow!(
                "no session, prompt, tool call, message, memory or summary has the id {id}"
            )),
            [one] => Ok((one.kind, one.id.clone())),
            many => Err(anyhow!("{id} is ambiguous: it starts {}", candidates(many))),
        }
    }

    /// [`Recall::resolve`] for an id that must name a session.
    pub fn resolve_session(&mut self, id: &str) -> Result<String> {
        match self.resolve(id)? {
            (Kind::Session, id) => Ok(id),
            (kind, _) => Err(anyhow!("{id} is a {}, not a session", kind.as_str())),
        }
    }

    /// The project a question is about, `None` for all of them: that of `dir`, else the one
    /// the hooks would record here ($CLAUDE_PROJECT_DIR, else the current directory): its
    /// repository's top, a configured root or a marked folder (see `project`); outside those,
    /// the recorded project that is that directory or the closest one containing it, so that a
    /// command run in a subdirectory finds its project.
    pub fn project(&self, dir: Option<&Path>, all: bool) -> Result<Option<String>> {
        if all {
            return Ok(None);
        }
        let explicit = dir.is_some();
        let dir = match (dir, &self.config.project_dir) {
            (Some(dir), _) => dir.to_path_buf(),
            (None, Some(dir)) => PathBuf::from(dir),
            (None, None) => std::env::current_dir().map_err(|err| {
                anyhow!("cannot read the current directory ({err}); name a project or ask for all")
            })?,
        };
        let dir = std::path::absolute(&dir)
            .map_err(|err| usage(format!("cannot use {} as a project ({err})", dir.display())))?;
        // A folder named that sessions were recorded under is that project, as recorded
        // (sessions `projects unjoin` put back under a subfolder are found so).
        let named = dir.to_str().map(|d| d.trim_end_matches('/'));
        if let Some(named) = named.filter(|_| explicit)
            && self.reader.is_recorded(named)?
        {
            return Ok(Some(named.to_string()));
        }
        let found = crate::project::of(&dir, &self.config.project_roots);
        if found.why != crate::project::Why::Folder {
            return Ok(Some(found.root.to_string_lossy().into_owned()));
        }
        let closest = self.reader.recorded_around(&dir)?;
        Ok(Some(closest.unwrap_or_else(|| {
            let dir = dir.to_string_lossy();
            match dir.trim_end_matches('/') {
                // The root stays itself, not an empty name.
                "" => dir.into_owned(),
                trimmed => trimmed.to_string(),
            }
        })))
    }
}

/// Why there is nothing to read, in one line a user can act on.
pub fn no_database(config: &Config) -> String {
    if crate::store::layout::pending(config) {
        return format!(
            "the database is still where an earlier release kept it, {}: claude-mem maintain \
             moves it",
            config.legacy_db_path().display()
        );
    }
    format!(
        "nothing captured yet: there is no database at {} (claude-mem install-hooks registers \
         the hooks that fill it)",
        config.db_path().display()
    )
}

pub fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
}

/// The items an ambiguous prefix names, one a line (a few, then how many more), oldest first.
fn candidates(items: &[Item]) -> String {
    let count = if items.len() >= RESOLVE_LIMIT {
        format!("{} or more items", render::count(items.len() as i64))
    } else {
        render::plural(items.len() as i64, "item")
    };
    let mut out = format!("{count}; give more of it:");
    for i in items.iter().take(CANDIDATES) {
        let what = match (&i.kind, &i.tool_name) {
            (Kind::Observation, Some(tool)) => render::one_line(tool, 24),
            (kind, _) => kind.as_str().to_string(),
        };
        out.push_str(&format!(
            "\n  {}  {}  {what}",
            handle(&i.id),
            render::iso(&i.created_at)
        ));
    }
    if items.len() > CANDIDATES {
        let at_least = if items.len() >= RESOLVE_LIMIT {
            "at least "
        } else {
            ""
        };
        out.push_str(&format!(
            "\n  and {at_least}{} more",
            items.len() - CANDIDATES
        ));
    }
    out
}

/// `since` and `until` (as a user wrote them) as stored timestamps; errors name them with
/// `prefix` (`--` for flags).
pub fn bounds(
    since: Option<&str>,
    until: Option<&str>,
    prefix: &str,
) -> Result<(Option<String>, Option<String>)> {
    let since = since.map(|v| time_bound(&format!("{prefix}since"), v, false));
    let until = until.map(|v| time_bound(&format!("{prefix}until"), v, true));
    Ok((since.transpose()?, until.transpose()?))
}

/// A `since` or `until` as a stored timestamp: a duration ago (see [`clock::duration`]), a
/// local date (`2026-11-01`: its start, or its end for `--until`), or an RFC 3339 time. Errors
/// name it `flag`.
pub fn time_bound(flag: &str, value: &str, end_of_day: bool) -> Result<String> {
    let value = value.trim();
    let at = if let Some(ago) = clock::duration(value) {
        let ago = ago.map_err(|why| usage(format!("{flag} {why}")))?;
        // Stored times are text from year 1 on: an earlier one would not sort as a time.
        let at = chrono::Duration::from_std(ago)
            .ok()
            .and_then(|ago| Utc::now().checked_sub_signed(ago))
            .filter(|at| at.year() >= 1);
        Some(at.ok_or_else(|| {
            usage(format!(
                "{flag} {value} reaches back before the year 1: give a shorter duration or a date"
            ))
        })?)
    } else if let Ok(date) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        let day = if end_of_day {
            date.succ_opt().unwrap_or(date)
        } else {
            date
        };
        Local
            .from_local_datetime(&day.and_time(NaiveTime::MIN))
            .earliest()
            .map(|t| t.with_timezone(&Utc))
    } else {
        DateTime::parse_from_rfc3339(value)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    at.map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
        .ok_or_else(|| {
            usage(format!(
                "{flag} {value:?} is neither a duration (90s, 30m, 12h, 2d, 1w, 3mo, 1y) nor a \
                 date (2026-11-01)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_read_durations_and_dates() {
        let two_days = time_bound("since", "2d", false).unwrap();
        let expected = Utc::now() - chrono::Duration::days(2);
        let got = DateTime::parse_from_rfc3339(&two_days).unwrap();
        assert!((got.with_timezone(&Utc) - expected).num_seconds().abs() < 5);
        let start = time_bound("since", "2026-11-01", false).unwrap();
        let end = time_bound("until", "2026-11-01", true).unwrap();
        let day = DateTime::parse_from_rfc3339(&end).unwrap()
            - DateTime::parse_from_rfc3339(&start).unwrap();
        assert!((23..=25).contains(&day.num_hours()), "{start} {end}");
        assert_eq!(
            time_bound("since", "2026-11-01T10:00:00Z", false).unwrap(),
            "2026-11-01T10:00:00.000Z"
        );
        let year =
            DateTime::parse_from_rfc3339(&time_bound("since", "1y", false).unwrap()).unwrap();
        assert!(((Utc::now() - year.with_timezone(&Utc)).num_days() - 365).abs() <= 1);
        for bad in [
            "yesterday",
            "2x",
            "-3d",
            "2026-13-01",
            "",
            "9999999999w",
            "5000y",
        ] {
            let err = time_bound("since", bad, false).unwrap_err();
            assert!(err.downcast_ref::<UsageError>().is_some(), "{bad}");
        }
    }
}
