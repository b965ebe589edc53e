//! `sessions`: recent sessions of this project (or all), most recently active first.

use anyhow::{Result, bail};

use super::{bounds, nothing_captured, project, scope_hint};
use crate::cli::Scope;
use crate::config::Config;
use crate::emit::Report;
use crate::ops::CLAUDE_CODE;
use crate::recall::names::Names;
use crate::recall::{Recall, whole};
use crate::render::{self, Color, Style, Table, cell};
use crate::store::read::{SessionFilter, SessionOverview};
use crate::store::rows::short_id;

pub fn sessions(scope: &Scope) -> Result<Report> {
    let config = Config::from_env();
    let (since, until) = bounds(&scope.range)?;
    let Some(recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    let project = project(&scope.projects, &recall)?;
    let sessions = recall.reader().sessions(&SessionFilter {
        project: project.clone(),
        since,
        until,
        limit: scope.limit,
        offset: scope.offset,
        agent: scope.agent.map(|a| a.agent().name().to_string()),
    })?;
    if sessions.is_empty() {
        // A project named that no session ever ran in is a mistake (a typo, a path that
        // moved): one line, in a pipe too.
        if let (Some(_), Some(p)) = (&scope.projects.project, &project)
            && !recall.reader().projects()?.contains(p)
        {
            bail!(
                "no session was ever recorded in {p} (--all lists the sessions of every project)"
            );
        }
        return Ok(Report {
            note: Some(scope_hint(project.as_deref(), "no sessions")),
            ..Report::default()
        });
    }
    let style = Style::detect();
    let names = Names::load(recall.reader())?;
    let stdout = if scope.json {
        sessions
            .iter()
            .map(|s| {
                let mut value = whole::overview_json(s);
                value["project_name"] = s.project_dir.as_deref().map(|d| names.name(d)).into();
                render::json_line(&value)
            })
            .collect()
    } else {
        table(&sessions, &style, project.is_none().then_some(&names))
    };
    Ok(stdout.into())
}

/// The sessions, a line each; with the project of each when `names` are given (`--all`), and
/// the agent of each when any is not Claude Code's.
fn table(sessions: &[SessionOverview], style: &Style, names: Option<&Names>) -> String {
    let mut table = Table::default();
    let agents = sessions.iter().any(|s| s.agent != CLAUDE_CODE);
    if style.terminal {
        let mut header = vec!["SESSION"];
        if agents {
            header.push("AGENT");
        }
        header.extend(["STARTED", "TOOK", "PROMPTS", "TOOLS", "FILES"]);
        if names.is_some() {
            header.push("PROJECT");
        }
        header.push("FIRST REQUEST");
        table.row(
            header
                .into_iter()
                .map(|h| cell(h).color(Color::Header))
                .collect(),
        );
    }
    for s in sessions {
        let took = render::seconds_between(&s.started_at, &s.last_at)
            .map(render::duration)
            .unwrap_or_default();
        let mut row = vec![cell(short_id(&s.session_id)).color(Color::Id)];
        if agents {
            row.push(cell(&s.agent).color(Color::Tool));
        }
        row.extend([
            cell(style.ago(&s.started_at)).color(Color::Time),
            cell(took).right(),
            cell(render::count(s.prompts)).right(),
            cell(render::count(s.tool_calls)).right(),
            cell(render::count(s.files_changed.len() as i64)).right(),
        ]);
        if let Some(names) = names {
            row.push(cell(names.shown(s.project_dir.as_deref())));
        }
        row.push(cell(render::fit(
            s.first_prompt.as_deref().unwrap_or(""),
            120,
        )));
        table.row(row);
    }
    table.render(style)
}
