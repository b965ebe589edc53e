//! A search as both fronts ask it, the command line and the MCP `search` tool: what a query
//! may hold, how times are read, how pages are counted, and where the answer comes from (the
//! database and the team's notes, or the team's notes alone when nothing was ever captured
//! here). Each front reads its own arguments and words its own answers.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;

use super::{Recall, team, usage};
use crate::config::Config;
use crate::store::fts::{Hit, Query, Search, parse_query};
use crate::store::rows::Kind;

/// A search as asked on the command line or of the MCP `search` tool. Both check it and run
/// it here, so that what a query may hold, how times are read and how pages are counted are
/// one rule; each caller reads its own arguments and words its own answers.
pub struct Request<'a> {
    /// As typed (see [`parse_query`]).
    pub words: &'a str,
    pub project: Option<&'a Path>,
    pub all: bool,
    /// A session id, or a prefix of one.
    pub session: Option<&'a str>,
    /// As typed: a duration ago or a date (see [`super::bounds`]).
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub file: Option<&'a str>,
    pub kind: Option<Kind>,
    pub limit: usize,
    /// Past the last result is an empty page, however far.
    pub offset: usize,
}

/// A request whose words and times are good: what needs no database is checked before one
/// is opened.
pub struct Checked<'a> {
    request: Request<'a>,
    /// `None` when the words hold nothing to search for.
    query: Option<Query>,
    since: Option<String>,
    until: Option<String>,
}

/// One page of results.
pub struct Page {
    /// The project searched, `None` for every one.
    pub project: Option<String>,
    pub hits: Vec<Hit>,
    /// The ids of the hits that are the team's (files in the project's `.claude-mem/`).
    pub team: HashSet<String>,
    /// The offset of the next page, when there are more results.
    pub next: Option<usize>,
    /// When nothing matched the words, the stored words nearest to them, whose results these
    /// are.
    pub did_you_mean: Option<String>,
}

impl<'a> Request<'a> {
    /// The words as a query and the times as stored, or the mistake in them (a
    /// [`crate::emit::UsageError`]); `flags` is how the caller's errors name its options
    /// (`--` on the command line).
    pub fn check(self, flags: &str) -> Result<Checked<'a>> {
        let (since, until) = super::bounds(self.since, self.until, flags)?;
        let query = parse_query(self.words).map_err(usage)?;
        Ok(Checked {
            request: self,
            query,
            since,
            until,
        })
    }
}

impl Checked<'_> {
    /// The page asked for; `None` when the words hold nothing to search for.
    fn run(self, recall: &mut Recall) -> Result<Option<Page>> {
        let asked = self.request;
        let project = recall.project(asked.project, asked.all)?;
        let Some(query) = self.query else {
            return Ok(None);
        };
        let session = match asked.session {
            Some(id) => Some(recall.resolve_session(id)?),
            None => None,
        };
        let mut search = searching(
            &asked,
            query,
            project.clone(),
            session,
            self.since,
            self.until,
        );
        let notes = team::notes(recall, project.as_deref())?;
        let index = recall.index()?;
        let (mut hits, mut team) = team::search(Some(index), &search, &notes)?;
        let mut did_you_mean = None;
        // Nothing matched any word: the words are misspelt, or not stored. A near stored word
        // is what was meant, most likely.
        if hits.is_empty() && asked.offset == 0 {
            let corrected = index.suggest(&search.query)?;
            if let Some(query) = corrected
                .as_deref()
                .and_then(|c| parse_query(c).ok().flatten())
            {
                search.query = query;
                (hits, team) = team::search(Some(index), &search, &notes)?;
                did_you_mean = corrected.filter(|_| !hits.is_empty());
            }
        }
        Ok(Some(page(
            project,
            hits,
            team,
            did_you_mean,
            asked.limit,
            asked.offset,
        )))
    }

    /// The page asked for from the team's notes alone, when nothing was ever captured here:
    /// a teammate's files are found before their own first session.
    fn run_on_team(self, config: &Config) -> Result<Option<Page>> {
        let asked = self.request;
        let (Some(query), Some(project)) = (self.query, team::here(config, asked.project)) else {
            return Ok(None);
        };
        let session = asked.session.map(String::from);
        let search = searching(
            &asked,
            query,
            Some(project.clone()),
            session,
            self.since,
            self.until,
        );
        let notes = team::notes_here(config, &project);
        let (hits, team) = team::search(None, &search, &notes)?;
        Ok(Some(page(
            Some(project),
            hits,
            team,
            None,
            asked.limit,
            asked.offset,
        )))
    }
}

/// The index's search for what was asked, in `project` and `session` as found.
fn searching(
    asked: &Request,
    query: Query,
    project: Option<String>,
    session: Option<String>,
    since: Option<String>,
    until: Option<String>,
) -> Search {
    Search {
        query,
        project,
        session,
        since,
        until,
        tool: asked.tool.map(String::from),
        file: asked.file.map(String::from),
        kind: asked.kind,
        // One more than asked: whether there is a next page.
        limit: asked.limit.saturating_add(1),
        offset: asked.offset,
    }
}

/// The page of `limit` results from `offset` out of `hits` (one more when there is a next).
fn page(
    project: Option<String>,
    mut hits: Vec<Hit>,
    team: HashSet<String>,
    did_you_mean: Option<String>,
    limit: usize,
    offset: usize,
) -> Page {
    let next = (hits.len() > limit).then(|| offset.saturating_add(limit));
    hits.truncate(limit);
    Page {
        project,
        hits,
        team,
        next,
        did_you_mean,
    }
}

/// What a search found: a page, or why there is none.
pub enum Found {
    /// A page of results (maybe empty), with the database it was read from, if any.
    Page(Page, Option<Box<Recall>>),
    /// The words hold nothing to search for.
    NoWords,
    /// Nothing was ever captured here, and the team's notes do not answer either.
    NoDatabase,
}

impl Checked<'_> {
    /// Runs the search where it can be answered: the database (with the team's notes), or,
    /// when nothing was ever captured here, the team's notes alone, so that a teammate's files
    /// are found before their own first session.
    pub fn find(self, config: &Config) -> Result<Found> {
        match Recall::open(config)? {
            Some(mut recall) => Ok(match self.run(&mut recall)? {
                Some(page) => Found::Page(page, Some(Box::new(recall))),
                None => Found::NoWords,
            }),
            None => Ok(match self.run_on_team(config)? {
                Some(page) if !page.hits.is_empty() => Found::Page(page, None),
                _ => Found::NoDatabase,
            }),
        }
    }
}
