//! A search as both fronts ask it, the command line and the MCP `search` tool: what a query
//! may hold, how times are read, how pages are counted, where the answer comes from (the
//! database and the team's notes, or the team's notes alone when nothing was ever captured
//! here), and what is searched for instead when nothing matches the words as given (a quoted
//! question's words, a misspelt word's nearest stored one). Each front reads its own
//! arguments and words its own answers.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;

use super::{Recall, team, usage};
use crate::config::Config;
use crate::store::fts::{Hit, Index, Query, Search, parse_query, unquote};
use crate::store::rows::Kind;
use crate::team::Note;

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
    /// Only the sessions of this agent (`claude-code`, `codex`, `cursor`).
    pub agent: Option<&'a str>,
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
    /// The ids of the hits that are the project's standing instructions, woven into a task's
    /// results (see `recall::rules`).
    pub rules: HashSet<String>,
    /// The offset of the next page, when there are more results.
    pub next: Option<usize>,
    /// The quoted phrases of several words that nothing holds as written (within the
    /// filters), whose words these results are for: people type a question in quotes.
    pub as_words: Vec<String>,
    /// When nothing matched the words, the stored words nearest to them, whose results these
    /// are.
    pub did_you_mean: Option<String>,
}

impl Page {
    /// The phrases searched as their words, as a front says them (`the phrase "a b"`, `the
    /// phrases "a b" and "c d"`); `None` when the words were searched as given.
    pub fn phrases_as_words(&self) -> Option<String> {
        let quoted: Vec<String> = self.as_words.iter().map(|p| format!("{p:?}")).collect();
        Some(match quoted.as_slice() {
            [] => return None,
            [one] => format!("the phrase {one}"),
            [first @ .., last] => format!("the phrases {} and {last}", first.join(", ")),
        })
    }
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
        // The team's notes and the standing rules are no agent's: an agent's search has none.
        let (notes, rules) = match asked.agent {
            Some(agent) => {
                let ids = recall.reader().sessions_of(agent, project.as_deref())?;
                search.sessions = Some(serde_json::to_string(&ids)?);
                (Vec::new(), Vec::new())
            }
            None => (
                team::notes(recall, project.as_deref())?,
                super::rules::for_task(recall, project.as_deref(), asked.words)?,
            ),
        };
        let index = recall.index()?;
        if rules.is_empty() {
            let answer = answer(Some(index), search, &notes, asked.words)?;
            return Ok(Some(page(project, answer, asked.limit, asked.offset)));
        }
        // The rules are woven into the first places: the page is cut from the whole.
        let whole = Search {
            offset: 0,
            limit: asked.offset.saturating_add(search.limit),
            ..search
        };
        let mut answer = answer(Some(index), whole, &notes, asked.words)?;
        answer.rules = rules.iter().map(|r| r.item.id.clone()).collect();
        answer.hits = super::rules::weave(answer.hits, rules)
            .into_iter()
            .skip(asked.offset)
            .collect();
        Ok(Some(page(project, answer, asked.limit, asked.offset)))
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
        let answer = answer(None, search, &notes, asked.words)?;
        Ok(Some(page(Some(project), answer, asked.limit, asked.offset)))
    }
}

/// What a search found, and what it searched for instead of the words as given.
#[derive(Default)]
struct Answer {
    hits: Vec<Hit>,
    team: HashSet<String>,
    rules: HashSet<String>,
    as_words: Vec<String>,
    did_you_mean: Option<String>,
}

/// What `search` finds in the index (when there is one) and the team's notes. When nothing
/// matches its words as `typed`, on any page (so that every page of one query is the same
/// kind of result), each quoted phrase of several words that nothing holds is searched as its
/// words; when still nothing matches, each word is taken as misspelt (see [`Index::suggest`]).
fn answer(
    index: Option<&Index>,
    mut search: Search,
    notes: &[Note],
    typed: &str,
) -> Result<Answer> {
    let (hits, team) = team::search(index, &search, notes)?;
    let mut answer = Answer {
        hits,
        team,
        ..Answer::default()
    };
    if !matches_nothing(index, &search, notes, &answer.hits)? {
        return Ok(answer);
    }
    let phrases = unmatched(index, &search, notes)?;
    let bare = (!phrases.is_empty()).then(|| unquote(typed, &phrases));
    if let Some(query) = bare.and_then(|words| parse_query(&words).ok().flatten()) {
        search.query = query;
        (answer.hits, answer.team) = team::search(index, &search, notes)?;
        answer.as_words = phrases;
        if !matches_nothing(index, &search, notes, &answer.hits)? {
            return Ok(answer);
        }
    }
    let Some(index) = index else {
        return Ok(answer);
    };
    // Nothing matched any word: the words are misspelt, or not stored. A near stored word
    // is what was meant, most likely.
    let corrected = index.suggest(&search.query)?;
    if let Some(query) = corrected
        .as_deref()
        .and_then(|c| parse_query(c).ok().flatten())
    {
        search.query = query;
        (answer.hits, answer.team) = team::search(Some(index), &search, notes)?;
        answer.did_you_mean = corrected.filter(|_| !answer.hits.is_empty());
    }
    Ok(answer)
}

/// Whether nothing matches `search` on any page, given its own page: past the first, an
/// empty page may only be past the last result.
fn matches_nothing(
    index: Option<&Index>,
    search: &Search,
    notes: &[Note],
    page: &[Hit],
) -> Result<bool> {
    if !page.is_empty() || search.offset == 0 {
        return Ok(page.is_empty());
    }
    Ok(!team::matches(index, search, notes)?)
}

/// Of the quoted phrases of several words of a search that matched nothing, those that no item
/// holds within its filters. A phrase that is the only required term is one at once (the
/// search was that phrase); beside other required terms, each is looked for alone.
fn unmatched(index: Option<&Index>, search: &Search, notes: &[Note]) -> Result<Vec<String>> {
    let query = &search.query;
    if query.required <= 1 {
        return Ok(query.quoted.clone());
    }
    let mut unmatched = Vec::new();
    for phrase in &query.quoted {
        let Some(alone) = parse_query(&format!("\"{phrase}\"")).ok().flatten() else {
            continue;
        };
        let probe = Search {
            query: alone,
            ..search.clone()
        };
        if !team::matches(index, &probe, notes)? {
            unmatched.push(phrase.clone());
        }
    }
    Ok(unmatched)
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
        sessions: None,
        // One more than asked: whether there is a next page.
        limit: asked.limit.saturating_add(1),
        offset: asked.offset,
    }
}

/// The page of `limit` results from `offset` out of the answer's hits (one more when there is
/// a next).
fn page(project: Option<String>, answer: Answer, limit: usize, offset: usize) -> Page {
    let Answer {
        mut hits,
        team,
        rules,
        as_words,
        did_you_mean,
    } = answer;
    let next = (hits.len() > limit).then(|| offset.saturating_add(limit));
    hits.truncate(limit);
    Page {
        project,
        hits,
        team,
        rules,
        next,
        as_words,
        did_you_mean,
    }
}

/// What a search found: a page, or why there is none.
pub enum Found {
    /// A page of results (maybe empty), with the database it was read from, if any.
    Page(Box<Page>, Option<Box<Recall>>),
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
        self.find_in(config, Recall::open(config)?)
    }

    /// [`Checked::find`] in `recall`, the database as the caller opened it (`None` when
    /// nothing was ever captured): an MCP server keeps one between its calls.
    pub fn find_in(self, config: &Config, recall: Option<Recall>) -> Result<Found> {
        match recall {
            Some(mut recall) => Ok(match self.run(&mut recall)? {
                Some(page) => Found::Page(Box::new(page), Some(Box::new(recall))),
                None => Found::NoWords,
            }),
            None => Ok(match self.run_on_team(config)? {
                Some(page) if !page.hits.is_empty() => Found::Page(Box::new(page), None),
                _ => Found::NoDatabase,
            }),
        }
    }
}
