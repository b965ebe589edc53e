//! What of a forget outlives it: the ids of the memories and summaries the user forgot (schema
//! v10, never their text), and, read before they go, those rows whole, for the caller to take
//! back the files `share` wrote of them into a project's `.claude-mem/` folder.
//!
//! The files are the reason: a teammate's branch merged later, or a file the forget could not
//! remove (edited, of another database), still holds one of them, and readers must not show it
//! to the user as the team's (see `read::context::known`). Only `forget` notes ids: retention
//! and sync's deletions do not.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, params};

use crate::store::hygiene::forget::Plan;
use crate::store::rows::{self, MEMORY_COLUMNS, Memory, SUMMARY_COLUMNS, Summary};

/// The memories and summaries a plan removes: every id, and, whole, those of the projects the
/// caller asked for (the ones with a `.claude-mem/` folder), each with its project: what
/// `share` may have written of them there.
#[derive(Debug, Clone, Default)]
pub struct Made {
    pub ids: Vec<String>,
    pub memories: Vec<(Memory, String)>,
    pub summaries: Vec<(Summary, String)>,
}

/// Each memory of one id or one session, with its project (its session's, else its own).
const MEMORY_PROJECT: &str = "SELECT m.id, coalesce(s.project_dir, m.project_dir)
     FROM memories m LEFT JOIN sessions s ON s.session_id = m.session_id WHERE m.";
const SUMMARY_PROJECT: &str = "SELECT m.id, coalesce(s.project_dir, m.project_dir)
     FROM summaries m LEFT JOIN sessions s ON s.session_id = m.session_id WHERE m.";

/// The memories and summaries `plan` removes, those of the sessions that go whole included,
/// read before they go: an index probe or two each, and whole only when `wanted` says so of
/// their project (asked once a project), so that forgetting years of a project without a
/// shared folder reads no text.
pub fn made(conn: &Connection, plan: &Plan, wanted: &dyn Fn(&str) -> bool) -> Result<Made> {
    let sessions: Vec<String> = plan.sessions.iter().map(|s| s.session_id.clone()).collect();
    let mut asked: HashMap<String, bool> = HashMap::new();
    let mut wanted = |project: &str| -> bool {
        *asked
            .entry(project.to_string())
            .or_insert_with(|| wanted(project))
    };
    let mut made = Made::default();
    for (id, project) in projects(conn, MEMORY_PROJECT, &plan.memories, &sessions)? {
        if let Some(project) = project.filter(|p| wanted(p)) {
            let sql = format!("{MEMORY_COLUMNS} WHERE id = ?1");
            let row = conn.prepare_cached(&sql)?.query_row([&id], rows::memory)?;
            made.memories.push((row, project));
        }
        made.ids.push(id);
    }
    for (id, project) in projects(conn, SUMMARY_PROJECT, &plan.summaries, &sessions)? {
        if let Some(project) = project.filter(|p| wanted(p)) {
            let sql = format!("{SUMMARY_COLUMNS} WHERE id = ?1");
            let row = conn.prepare_cached(&sql)?.query_row([&id], rows::summary)?;
            made.summaries.push((row, project));
        }
        made.ids.push(id);
    }
    Ok(made)
}

/// The ids `of` selects by id (`ids`) and by session (`sessions`), each with its project.
fn projects(
    conn: &Connection,
    of: &str,
    ids: &[String],
    sessions: &[String],
) -> Result<Vec<(String, Option<String>)>> {
    let mut found = Vec::new();
    for (by, keys) in [("id", ids), ("session_id", sessions)] {
        let mut stmt = conn.prepare_cached(&format!("{of}{by} = ?1"))?;
        for key in keys {
            for row in stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))? {
                found.push(row?);
            }
        }
    }
    Ok(found)
}

/// Notes `ids` as forgotten by the user (schema v10: the ids alone, never their text), so that
/// no team's file of one of them is shown to the user as the team's again.
pub fn remember<'a>(conn: &Connection, ids: impl IntoIterator<Item = &'a str>) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    {
        let mut stmt =
            tx.prepare_cached("INSERT OR IGNORE INTO forgotten (id, at) VALUES (?1, ?2)")?;
        let now = crate::clock::now();
        for id in ids {
            stmt.execute(params![id, now])?;
        }
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    /// A forget of a session with years of memories, or of many, must not read them all.
    #[test]
    fn the_rows_are_read_by_index() {
        let conn = testing::database();
        for sql in [
            format!("{MEMORY_COLUMNS} WHERE id = ?1"),
            format!("{MEMORY_PROJECT}id = ?1"),
            format!("{MEMORY_PROJECT}session_id = ?1"),
            format!("{SUMMARY_COLUMNS} WHERE id = ?1"),
            format!("{SUMMARY_PROJECT}id = ?1"),
            format!("{SUMMARY_PROJECT}session_id = ?1"),
        ] {
            let plan = testing::plan(&conn, &sql).join("\n");
            assert!(!plan.contains("SCAN"), "{sql}: {plan}");
        }
    }

    #[test]
    fn the_ids_are_noted_once_and_read_as_known() {
        let conn = testing::database();
        remember(&conn, ["m-1", "s-1", "m-1"]).unwrap();
        let noted: i64 = conn
            .query_row("SELECT COUNT(*) FROM forgotten", [], |r| r.get(0))
            .unwrap();
        assert_eq!(noted, 2);
        let known = crate::store::read::context::known(&conn, ["m-1", "s-1", "x"]).unwrap();
        assert_eq!(known.len(), 2);
        assert!(!known.contains("x"));
    }
}
