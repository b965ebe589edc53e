//! `projects`: the folders the memory holds sessions of, and which of them belong to another
//! project now that a project is its repository. An earlier release recorded a session under
//! the folder Claude Code started in; `projects join` (run once by the maintenance process)
//! moves those recorded under a subfolder or a linked worktree to their repository, and
//! `projects unjoin` puts back every session it moved (see `store::projects`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;

use super::nothing_captured;
use crate::cli::ProjectsAction;
use crate::config::Config;
use crate::emit::Report;
use crate::recall::Recall;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::{self, Store, projects};

/// How long a join or an unjoin waits for the write lock.
const WAIT: Duration = Duration::from_secs(10);

pub fn projects(action: Option<&ProjectsAction>, json: bool) -> Result<Report> {
    let config = Config::from_env();
    if Recall::open(&config)?.is_none() {
        return Ok(nothing_captured(&config));
    }
    match action {
        None => list(&config, json),
        Some(ProjectsAction::Join { dry_run }) => join(&config, *dry_run),
        Some(ProjectsAction::Unjoin) => {
            let store = Store::open(&config, Instant::now() + WAIT)?;
            let back = projects::unjoin(store.conn())?;
            Ok(format!(
                "put {} back under the folder it was recorded under\n",
                sessions(back)
            )
            .into())
        }
    }
}

/// Every recorded folder, and where `join` would move its sessions.
fn list(config: &Config, json: bool) -> Result<Report> {
    let conn =
        store::open_read_only(config, Instant::now() + WAIT)?.context("the database went away")?;
    let moves = projects::plan(&conn, &config.project_roots)?;
    let joins = |dir: &str| moves.iter().find(|m| m.from == dir).map(|m| m.to.clone());
    let recorded = projects::recorded(&conn)?;
    if json {
        let lines: String = recorded
            .iter()
            .map(|r| {
                render::json_line(&json!({"project": r.dir, "sessions": r.sessions,
                       "last_active_at": r.last_active, "joins": joins(&r.dir)}))
            })
            .collect();
        return Ok(lines.into());
    }
    let style = Style::detect();
    let mut table = Table::default();
    for r in &recorded {
        let mut row = vec![
            cell(style.moment(&r.last_active)).color(Color::Time),
            cell(sessions(r.sessions)),
            cell(render::path(&r.dir)),
        ];
        if let Some(to) = joins(&r.dir) {
            row.push(cell(format!(
                "belongs to {to} now (claude-mem projects join)"
            )));
        }
        table.row(row);
    }
    let mut out = table.render(&style);
    let moved = projects::moved(&conn)?;
    if moved > 0 {
        out.push_str(&format!(
            "{} moved to their repository by projects join (claude-mem projects unjoin puts \
             them back)\n",
            sessions(moved)
        ));
    }
    Ok(out.into())
}

fn join(config: &Config, dry_run: bool) -> Result<Report> {
    let store = Store::open(config, Instant::now() + WAIT)?;
    let moves = projects::plan(store.conn(), &config.project_roots)?;
    let mut out = String::new();
    for m in &moves {
        out.push_str(&format!(
            "{} {} -> {}\n",
            sessions(m.sessions),
            m.from,
            m.to
        ));
    }
    if moves.is_empty() {
        out.push_str("every session is under its project already\n");
    } else if dry_run {
        out.push_str("nothing moved (--dry-run)\n");
    } else {
        let moved = projects::join(store.conn(), &moves, &crate::clock::now())?;
        out.push_str(&format!(
            "moved {} (claude-mem projects unjoin puts them back)\n",
            sessions(moved)
        ));
    }
    Ok(out.into())
}

fn sessions(n: i64) -> String {
    format!("{n} session{}", if n == 1 { "" } else { "s" })
}
