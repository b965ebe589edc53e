//! `search <words>`: ranked results from the search index, one line each, or JSON Lines (the
//! search itself is `recall::search`, which the MCP `search` tool runs too).

use anyhow::Result;
use serde_json::json;

use super::{nothing_captured, scope_hint};
use crate::cli::{KindArg, SearchArgs};
use crate::config::Config;
use crate::emit::Report;
use crate::recall::names::Names;
use crate::recall::search::{Found, Page, Request};
use crate::recall::team;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::fts::Hit;
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
        agent: scope.agent.map(|a| a.agent().name()),
        limit: scope.limit,
        offset: scope.offset,
    }
    .check("--")?;
    let (page, names) = match request.find(&config)? {
        Found::Page(page, recall) => {
            // Only the JSON and a listing across projects name a result's project: a query
            // of the database (a seventh of a search of a few rare words) otherwise for nothing.
            let named = scope.json || page.project.is_none();
            let names = recall
                .filter(|_| named)
                .map(|r| Names::load(r.reader()))
                .transpose()?;
            (*page, names)
        }
        Found::NoWords => {
            return Ok(Report {
                found_nothing: true,
                note: Some("no results: the words hold nothing to search for".into()),
                ..Report::default()
            });
        }
        Found::NoDatabase => {
            return Ok(Report {
                found_nothing: true,
                ..nothing_captured(&config)
            });
        }
    };
    let project = page.project.as_deref();
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
            .map(|h| render::json_line(&to_json(h, &page, names.as_ref())))
            .collect()
    } else {
        lines(&page, &style, project.is_none(), names.as_ref())
    };
    Ok(Report {
        stdout,
        note: note(&page, &words),
        ..Report::default()
    })
}

/// What a page of results says besides them: what was searched for instead of the `words`
/// typed, and where the next page starts.
fn note(page: &Page, words: &str) -> Option<String> {
    let corrected = match (&page.did_you_mean, page.phrases_as_words()) {
        (Some(near), _) => Some(format!(
            "no results for {words:?}; showing results for {near:?} instead"
        )),
        (None, Some(phrases)) => Some(format!(
            "no results for {phrases}; showing results for the words instead"
        )),
        (None, None) => None,
    };
    let more = page
        .next
        .map(|offset| format!("more results: --offset {offset}"));
    match (corrected, more) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
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
fn lines(page: &Page, style: &Style, all: bool, names: Option<&Names>) -> String {
    let (hits, team) = (&page.hits, &page.team);
    let mut table = Table::default();
    for hit in hits {
        let item = &hit.item;
        let mut what = render::fit(item.tool_name.as_deref().unwrap_or(item.kind.as_str()), 24);
        if team.contains(&item.id) {
            what.push_str(&format!(" ({})", team::SOURCE));
        }
        if page.rules.contains(&item.id) {
            what = "standing rule".to_string();
        }
        let mut row = vec![
            cell(short_id(&item.id)).color(Color::Id),
            cell(style.ago(&item.created_at)).color(Color::Time),
            cell(what).color(Color::Tool),
            cell(short_id(&item.session_id)).color(Color::Id),
        ];
        if all {
            let dir = item.project_dir.as_deref();
            row.push(cell(match names {
                Some(names) => names.shown(dir),
                None => render::path(dir.unwrap_or("-")),
            }));
        }
        row.push(cell(style.highlight(&hit.snippet, &hit.matches)));
        table.row(row);
    }
    table.render(style)
}

/// The documented JSON shape of one result of `page`; `source` is `team` for a team's note,
/// else `own`.
fn to_json(hit: &Hit, page: &Page, names: Option<&Names>) -> serde_json::Value {
    let item = &hit.item;
    let team = page.team.contains(&item.id);
    let project_name = item.project_dir.as_deref().map(|dir| match names {
        Some(names) => names.name(dir),
        None => crate::project::name(None, dir),
    });
    json!({
        "id": item.id,
        "short_id": short_id(&item.id),
        "kind": item.kind.as_str(),
        "session_id": item.session_id,
        "project": item.project_dir,
        "project_name": project_name,
        "tool": item.tool_name,
        "files": item.files,
        "prompt_number": item.prompt_number,
        "created_at": item.created_at,
        "title": item.title,
        "snippet": hit.snippet,
        "score": hit.score,
        "count": hit.count,
        "did_you_mean": page.did_you_mean,
        "searched_as_words": !page.as_words.is_empty(),
        "source": if team { team::SOURCE } else { "own" },
        "standing": page.rules.contains(&item.id),
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
