//! Sessions an earlier release recorded under a subfolder of a repository (a project was the
//! folder Claude Code started in), moved to the repository's project as `project` finds it
//! now, and back. Each moved session keeps the folder it had in `project_moves`, so that
//! `unjoin` puts back exactly what `join` moved and nothing else; every row that names the
//! project moves with its session (prompts, tool calls, memories, summaries), and a tombstone
//! for each tells the search index to read it again.

use std::path::{Path, PathBuf};

use anyhow::Result;
use rusqlite::{Connection, params};

/// A recorded project folder whose sessions belong to another project now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub from: String,
    pub to: String,
    pub sessions: i64,
}

/// The tables whose rows carry a session's project, besides `sessions`.
const BY_SESSION: &[&str] = &["pending_queue", "memories", "summaries"];
/// Every table the search index reads a session's rows from.
const INDEXED: &[&str] = &[
    "sessions",
    "user_prompts",
    "pending_queue",
    "memories",
    "summaries",
];

/// A folder sessions were recorded under, how many, and when the last was active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub dir: String,
    pub sessions: i64,
    pub last_active: String,
}

/// Every recorded project folder, the most recently active first.
pub fn recorded(conn: &Connection) -> Result<Vec<Recorded>> {
    let mut stmt = conn.prepare(
        "SELECT project_dir, COUNT(*), max(updated_at) FROM sessions
          WHERE project_dir IS NOT NULL GROUP BY project_dir ORDER BY 3 DESC",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Recorded {
            dir: r.get(0)?,
            sessions: r.get(1)?,
            last_active: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// What `join` would move: each recorded folder that still exists and whose project is now
/// another folder (its repository's top, a marked folder, a configured root).
pub fn plan(conn: &Connection, roots: &[PathBuf]) -> Result<Vec<Move>> {
    Ok(recorded(conn)?
        .into_iter()
        .map(|r| (r.dir, r.sessions))
        .filter_map(|(from, sessions)| {
            let path = Path::new(&from);
            if !path.is_absolute() || !path.is_dir() {
                return None;
            }
            let to = crate::project::of(path, roots).root;
            let to = to.to_str()?.to_string();
            (to != from).then_some(Move { from, to, sessions })
        })
        .collect())
}

/// Moves the sessions of each of `moves` (one transaction), keeping where each was.
pub fn join(conn: &Connection, moves: &[Move], now: &str) -> Result<i64> {
    let tx = conn.unchecked_transaction()?;
    let mut moved = 0;
    for m in moves {
        let which = "SELECT session_id FROM sessions WHERE project_dir = ?1";
        tombstones(&tx, which, &[&m.from])?;
        tx.execute(
            "INSERT OR IGNORE INTO project_moves
             SELECT session_id, project_dir, ?2, ?3 FROM sessions WHERE project_dir = ?1",
            params![m.from, m.to, now],
        )?;
        for table in BY_SESSION {
            tx.execute(
                &format!("UPDATE {table} SET project_dir = ?2 WHERE session_id IN ({which})"),
                params![m.from, m.to],
            )?;
        }
        moved += tx.execute(
            "UPDATE sessions SET project_dir = ?2 WHERE project_dir = ?1",
            params![m.from, m.to],
        )? as i64;
    }
    tx.commit()?;
    Ok(moved)
}

/// Puts every session `join` moved back under the folder it was recorded under.
pub fn unjoin(conn: &Connection) -> Result<i64> {
    let tx = conn.unchecked_transaction()?;
    tombstones(&tx, "SELECT session_id FROM project_moves", &[])?;
    let back = "(SELECT from_dir FROM project_moves m WHERE m.session_id = t.session_id)";
    for table in BY_SESSION.iter().chain(["sessions"].iter()) {
        tx.execute(
            &format!(
                "UPDATE {table} AS t SET project_dir = {back}
                  WHERE session_id IN (SELECT session_id FROM project_moves)"
            ),
            [],
        )?;
    }
    let moved = tx.execute("DELETE FROM project_moves", [])? as i64;
    tx.commit()?;
    Ok(moved)
}

/// Keeps the identity sync brought for each folder another machine recorded sessions under.
pub fn remember(conn: &Connection, identities: &[(String, String)]) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO project_ids (project_dir, identity) VALUES (?1, ?2)
         ON CONFLICT (project_dir) DO UPDATE SET identity = excluded.identity",
    )?;
    for (dir, identity) in identities {
        stmt.execute(params![dir, identity])?;
    }
    Ok(())
}

/// Files the sessions recorded under another machine's checkout (a folder that is not a
/// checkout of that repository here) under this machine's checkout of the same repository,
/// when there is one: a recorded project here whose identity is the one sync brought. Returns
/// the sessions moved.
pub fn adopt(conn: &Connection, now: &str) -> Result<i64> {
    let mut stmt = conn.prepare_cached(
        "SELECT i.project_dir, i.identity, COUNT(*) FROM project_ids i
           JOIN sessions s ON s.project_dir = i.project_dir GROUP BY i.project_dir",
    )?;
    let foreign = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<(String, String, i64)>>>()?;
    // Not another machine's when the folder here is a checkout of the same repository.
    let foreign: Vec<_> = foreign
        .into_iter()
        .filter(|(dir, identity, _)| {
            crate::project::identity(Path::new(dir)).as_ref() != Some(identity)
        })
        .collect();
    if foreign.is_empty() {
        return Ok(0);
    }
    let ours: Vec<(String, String)> = recorded(conn)?
        .into_iter()
        .filter_map(|r| {
            let path = Path::new(&r.dir);
            let identity = path.is_dir().then(|| crate::project::identity(path))??;
            Some((identity, r.dir))
        })
        .collect();
    let moves: Vec<Move> = foreign
        .into_iter()
        .filter_map(|(from, identity, sessions)| {
            let (_, to) = ours.iter().find(|(id, _)| *id == identity)?;
            Some(Move {
                from,
                to: to.clone(),
                sessions,
            })
        })
        .collect();
    join(conn, &moves, now)
}

/// How many sessions `join` moved and `unjoin` has not put back.
pub fn moved(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT COUNT(*) FROM project_moves", [], |r| r.get(0))?)
}

/// A tombstone for every indexed row of the sessions `which` selects (with `args`): the index
/// reads each again, with its new project.
fn tombstones(conn: &Connection, which: &str, args: &[&dyn rusqlite::ToSql]) -> Result<()> {
    for table in INDEXED {
        let key = if *table == "sessions" {
            "session_id"
        } else {
            "t.session_id"
        };
        conn.execute(
            &format!(
                "INSERT INTO tombstones
                 SELECT NULL, '{table}', t.rowid, (SELECT max(rowid) FROM {table})
                   FROM {table} AS t WHERE {key} IN ({which})"
            ),
            args,
        )?;
    }
    Ok(())
}
