//! `conventions`: the standing instructions the user gave, the current ones of this project
//! (or every project's), as every new session gets them; `pin` and `unpin` one.

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use serde_json::json;

use super::{nothing_captured, project, scope_hint};
use crate::cli::{ConventionsAction, ConventionsArgs};
use crate::config::Config;
use crate::emit::Report;
use crate::recall::Recall;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::read::standing::Instruction;
use crate::store::rows::{Kind, short_id};
use crate::store::{Store, pins};

pub fn conventions(args: &ConventionsArgs) -> Result<Report> {
    let config = Config::from_env();
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    match &args.action {
        Some(ConventionsAction::Pin { id }) => pin(&config, &mut recall, id, true),
        Some(ConventionsAction::Unpin { id }) => pin(&config, &mut recall, id, false),
        None => list(args, &recall),
    }
}

fn list(args: &ConventionsArgs, recall: &Recall) -> Result<Report> {
    let project = project(&args.projects, recall)?;
    let projects = match &project {
        Some(p) => vec![p.clone()],
        None => recall.reader().projects()?,
    };
    let mut found: Vec<(String, Instruction)> = Vec::new();
    for p in projects {
        let mut list = recall.reader().standing(&p)?;
        list.retain(|i| args.replaced || i.is_current());
        // Newest first, as a session gets them.
        found.extend(list.into_iter().rev().map(|i| (p.clone(), i)));
    }
    if found.is_empty() {
        return Ok(Report {
            note: Some(scope_hint(project.as_deref(), "no standing instructions")),
            ..Report::default()
        });
    }
    let stdout = if args.json {
        found
            .iter()
            .map(|(p, i)| render::json_line(&to_json(p, i)))
            .collect()
    } else {
        table(&found, &Style::detect(), project.is_none())
    };
    Ok(stdout.into())
}

fn table(found: &[(String, Instruction)], style: &Style, all: bool) -> String {
    let mut table = Table::default();
    if style.terminal {
        let mut header = vec!["ID", "SAID", "STATUS"];
        if all {
            header.push("PROJECT");
        }
        header.push("WORDS");
        table.row(
            header
                .into_iter()
                .map(|h| cell(h).color(Color::Header))
                .collect(),
        );
    }
    for (project, i) in found {
        let status = match (&i.replaced_by, &i.pinned_at) {
            (Some((by, _)), _) => format!("replaced by {}", short_id(by)),
            (None, Some(_)) => "pinned".to_string(),
            (None, None) => "current".to_string(),
        };
        let mut row = vec![
            cell(short_id(&i.prompt)).color(Color::Id),
            cell(style.moment(&i.said_at)).color(Color::Time),
            cell(status),
        ];
        if all {
            row.push(cell(render::path(project)));
        }
        row.push(cell(render::fit(&i.text, 200)));
        table.row(row);
    }
    table.render(style)
}

fn to_json(project: &str, i: &Instruction) -> serde_json::Value {
    json!({
        "id": i.prompt,
        "short_id": short_id(&i.prompt),
        "project": project,
        "session_id": i.session_id,
        "said_at": i.said_at,
        "text": i.text,
        "current": i.is_current(),
        "pinned_at": i.pinned_at,
        "replaced_by": i.replaced_by.as_ref().map(|(id, _)| id),
        "replaced_at": i.replaced_by.as_ref().map(|(_, at)| at),
    })
}

/// Pins or unpins the standing instructions of the prompt `id` names.
fn pin(config: &Config, recall: &mut Recall, id: &str, on: bool) -> Result<Report> {
    let (kind, id) = recall.resolve(id)?;
    if kind != Kind::Prompt {
        bail!(
            "{} is a {}, not a prompt: `claude-mem conventions` lists the ids of the prompts \
             that gave a standing instruction",
            short_id(&id),
            kind.as_str()
        );
    }
    let store = Store::open(config, Instant::now() + Duration::from_secs(5))?;
    let at = on.then(crate::clock::now);
    if !pins::pin(store.conn(), &id, at.as_deref())? {
        return Err(anyhow!(
            "prompt {} gives no standing instruction (`claude-mem conventions` lists those that do)",
            short_id(&id)
        ));
    }
    let done = if on {
        "Pinned: its instructions are in every new session's context, whatever the budget."
    } else {
        "Unpinned: its instructions may be left out when the context's budget is spent."
    };
    Ok(format!("{done} ({})\n", short_id(&id)).into())
}
