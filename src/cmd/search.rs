//! `search <words>`: ranked results from the search index, one line each, or JSON Lines.

use anyhow::Result;
use serde_json::json;

use super::{bounds, nothing_captured, project, scope_hint};
use crate::cli::{KindArg, SearchArgs};
use crate::config::Config;
use crate::emit::Report;
use crate::recall::{Recall, usage};
use crate::render::{self, Color, Style, Table, cell};
use crate::store::fts::{Hit, Search, parse_query};
use crate::store::read::{Kind, short_id};

pub fn search(args: &SearchArgs) -> Result<Report> {
    let config = Config::from_env();
    let scope = &args.scope;
    let (since, until) = bounds(scope)?;
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(Report {
            found_nothing: true,
            ..nothing_captured(&config)
        });
    };
    let project = project(scope, &recall)?;
    let Some(query) = parse_query(&words(&args.words)).map_err(usage)? else {
        return Ok(Report {
            found_nothing: true,
            note: Some("no results: the words hold nothing to search for".into()),
            ..Report::default()
        });
    };
    let session = match &args.session {
        Some(id) => Some(recall.resolve_session(id)?),
        None => None,
    };
    let mut hits = recall.index()?.search(&Search {
        query,
        project: project.clone(),
        session,
        since,
        until,
        tool: args.tool.clone(),
        file: args.file.clone(),
        kind: args.kind.map(kind),
        // One more than asked: whether to say that there are more.
        limit: scope.limit.saturating_add(1),
        offset: scope.offset,
    })?;
    let more = hits.len() > scope.limit;
    hits.truncate(scope.limit);
    if hits.is_empty() {
        return Ok(Report {
            found_nothing: true,
            note: Some(scope_hint(project.as_deref(), "no results")),
            ..Report::default()
        });
    }
    let style = Style::detect();
    let stdout = if scope.json {
        hits.iter()
            .map(|h| render::json_line(&to_json(h)))
            .collect()
    } else {
        lines(&hits, &style, project.is_none())
    };
    let note = more.then(|| {
        format!(
            "more results: --offset {}",
            scope.offset.saturating_add(scope.limit)
        )
    });
    Ok(Report {
        stdout,
        note,
        ..Report::default()
    })
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

/// One line a result: id, when, what (the tool, or the kind), session, and the snippet;
/// the project too when searching them all.
fn lines(hits: &[Hit], style: &Style, all: bool) -> String {
    let mut table = Table::default();
    for hit in hits {
        let item = &hit.item;
        let what = item.tool_name.as_deref().unwrap_or(item.kind.as_str());
        let mut row = vec![
            cell(short_id(&item.id)).color(Color::Id),
            cell(style.ago(&item.created_at)).color(Color::Time),
            cell(render::one_line(what, 24)).color(Color::Tool),
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

/// The documented JSON shape of one result.
fn to_json(hit: &Hit) -> serde_json::Value {
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
