//! `search <words>`: ranked results from the search index, one line each, or JSON Lines; and
//! the [`Request`] that the MCP `search` tool checks and runs the same way.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use serde_json::json;

use super::{nothing_captured, scope_hint};
use crate::cli::{KindArg, SearchArgs};
use crate::config::Config;
use crate::emit::Report;
use crate::recall::{self, Recall, usage};
use crate::render::{self, Color, Style, Table, cell};
use crate::store::fts::{Hit, Query, Search, parse_query};
use crate::store::rows::{Kind, short_id};

pub fn search(args: &SearchArgs) -> Result<Report> {
    let config = Config::from_env();
    let scope = &args.scope;
    let words = words(&args.words);
    let request = Request {
        words: &words,
        project: scope.projects.project.as_deref(),
        all: scope.projects.all,
        session: args.session.as_deref(),
        since: scope.range.since.as_deref(),
        until: scope.range.until.as_deref(),
        tool: args.tool.as_deref(),
        file: args.file.as_deref(),
        kind: args.kind.map(kind),
        limit: scope.limit,
        offset: scope.offset,
    }
    .check("--")?;
    let page = match Recall::open(&config)? {
        Some(mut recall) => request.run(&mut recall)?,
        None => match request.run_on_team(&config)? {
            Some(page) if !page.hits.is_empty() => Some(page),
            _ => {
                return Ok(Report {
                    found_nothing: true,
                    ..nothing_captured(&config)
                });
            }
        },
    };
    let Some(page) = page else {
        return Ok(Report {
            found_nothing: true,
            note: Some("no results: the words hold nothing to search for".into()),
            ..Report::default()
        });
    };
    let project = page.project.as_deref();
    let corrected = page
        .did_you_mean
        .as_ref()
        .map(|word| format!("no results for {words:?}; showing results for {word:?} instead"));
    if page.hits.is_empty() {
        return Ok(Report {
            found_nothing: true,
            note: Some(scope_hint(project, "no results")),
            ..Report::default()
        });
    }
    let style = Style::detect();
    let stdout = if scope.json {
        page.hits
            .iter()
            .map(|h| {
                render::json_line(&to_json(
                    h,
                    page.did_you_mean.as_deref(),
                    page.team.contains(&h.item.id),
                ))
            })
            .collect()
    } else {
        lines(&page.hits, &page.team, &style, project.is_none())
    };
    let more = page
        .next
        .map(|offset| format!("more results: --offset {offset}"));
    let note = match (corrected, more) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    Ok(Report {
        stdout,
        note,
        ..Report::default()
    })
}

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
    /// As typed: a duration ago or a date (see [`recall::bounds`]).
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
        let (since, until) = recall::bounds(self.since, self.until, flags)?;
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
    pub fn run(self, recall: &mut Recall) -> Result<Option<Page>> {
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
        let notes = super::team::notes(recall, project.as_deref())?;
        let index = recall.index()?;
        let (mut hits, mut team) = super::team::search(Some(index), &search, &notes)?;
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
                (hits, team) = super::team::search(Some(index), &search, &notes)?;
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
    pub fn run_on_team(self, config: &Config) -> Result<Option<Page>> {
        let asked = self.request;
        let (Some(query), Some(project)) = (self.query, super::team::here(config, asked.project))
        else {
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
        let notes = super::team::notes_here(config, &project);
        let (hits, team) = super::team::search(None, &search, &notes)?;
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

/// The words as one query; an argument with spaces was quoted in the shell: a phrase.
fn words(args: &[String]) -> String {
    args.iter()
        .map(|w| {
            if w.contains(char::is_whitespace) && !w.contains('"') {
                format!("\"{w}\"")
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn kind(arg: KindArg) -> Kind {
    match arg {
        KindArg::Prompt => Kind::Prompt,
        KindArg::Observation => Kind::Observation,
        KindArg::Message => Kind::Message,
        KindArg::Summary => Kind::Summary,
        KindArg::Memory => Kind::Memory,
    }
}

/// One line a result: id, when, what (the tool, or the kind; `(team)` after a team's note),
/// session, and the snippet; the project too when searching them all.
fn lines(hits: &[Hit], team: &HashSet<String>, style: &Style, all: bool) -> String {
    let mut table = Table::default();
    for hit in hits {
        let item = &hit.item;
        let mut what =
            render::one_line(item.tool_name.as_deref().unwrap_or(item.kind.as_str()), 24);
        if team.contains(&item.id) {
            what.push_str(&format!(" ({})", super::team::SOURCE));
        }
        let mut row = vec![
            cell(short_id(&item.id)).color(Color::Id),
            cell(style.ago(&item.created_at)).color(Color::Time),
            cell(what).color(Color::Tool),
            cell(short_id(&item.session_id)).color(Color::Id),
        ];
        if all {
            row.push(cell(render::path(
                item.project_dir.as_deref().unwrap_or("-"),
            )));
        }
        row.push(cell(style.highlight(&hit.snippet, &hit.matches)));
        table.row(row);
    }
    table.render(style)
}

/// The documented JSON shape of one result; `source` is `team` for a team's note, else
/// `own`.
fn to_json(hit: &Hit, did_you_mean: Option<&str>, team: bool) -> serde_json::Value {
    let item = &hit.item;
    json!({
        "id": item.id,
        "short_id": short_id(&item.id),
        "kind": item.kind.as_str(),
        "session_id": item.session_id,
        "project": item.project_dir,
        "tool": item.tool_name,
        "files": item.files,
        "prompt_number": item.prompt_number,
        "created_at": item.created_at,
        "title": item.title,
        "snippet": hit.snippet,
        "score": hit.score,
        "count": hit.count,
        "did_you_mean": did_you_mean,
        "source": if team { super::team::SOURCE } else { "own" },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_with_spaces_is_a_phrase() {
        assert_eq!(
            words(&["database is locked".into(), "merg*".into()]),
            "\"database is locked\" merg*"
        );
        assert_eq!(words(&["say \"hi\" now".into()]), "say \"hi\" now");
    }
}
