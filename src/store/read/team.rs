//! What the database says about the team's files: which memories and summaries of a project
//! `share` writes out, which of its sessions did something (the floor under what summaries
//! are shared), and which of the notes a clone holds are this database's own or forgotten here
//! (a person's own shared files, read back in their own project, are shown once, as theirs;
//! what they forgot, never).

use std::collections::HashSet;

use anyhow::Result;

use super::Reader;
use crate::store::rows::{self, MEMORY_COLUMNS, Memory, SUMMARY_COLUMNS, Summary};

/// The sessions of a project: the memories and summaries of these are the project's.
const OF_PROJECT: &str = "session_id IN (SELECT session_id FROM sessions WHERE project_dir = ?1)";

impl Reader {
    /// The project's memories and summaries, oldest first.
    pub fn project_compressed(&self, project: &str) -> Result<(Vec<Memory>, Vec<Summary>)> {
        let conn = self.conn();
        let memories = conn
            .prepare(&format!(
                "{MEMORY_COLUMNS} WHERE {OF_PROJECT} ORDER BY created_at, id"
            ))?
            .query_map([project], rows::memory)?
            .collect::<rusqlite::Result<_>>()?;
        let summaries = conn
            .prepare(&format!(
                "{SUMMARY_COLUMNS} WHERE {OF_PROJECT} ORDER BY created_at, id"
            ))?
            .query_map([project], rows::summary)?
            .collect::<rusqlite::Result<_>>()?;
        Ok((memories, summaries))
    }
}

/// The project's sessions that did something: the compressor made a memory of them, or a tool
/// call of theirs changed a file (Write, Edit, MultiEdit or NotebookEdit, not failed; the
/// partial index of changes finds them).
const BUSY: &str = "SELECT s.session_id FROM sessions s WHERE s.project_dir = ?1 AND (
        EXISTS (SELECT 1 FROM memories m WHERE m.session_id = s.session_id)
        OR EXISTS (SELECT 1 FROM pending_queue q WHERE q.session_id = s.session_id
            AND q.tool_name IN ('Write', 'Edit', 'MultiEdit', 'NotebookEdit')
            AND q.event = 'PostToolUse'))";

impl Reader {
    /// The sessions of `project` that did something (see [`BUSY`]).
    pub fn busy_sessions(&self, project: &str) -> Result<HashSet<String>> {
        let mut stmt = self.conn().prepare(BUSY)?;
        let ids = stmt.query_map([project], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }
}

impl Reader {
    /// The ids of the items the user forgot here (schema v10): their shared files are the
    /// user's, whatever origin they name.
    pub fn forgotten(&self) -> Result<HashSet<String>> {
        let mut stmt = self.conn().prepare("SELECT id FROM forgotten")?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    /// [`known`](super::context::known) on this reader's connection.
    pub fn known<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Result<HashSet<String>> {
        super::context::known(self.conn(), ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queries_use_the_indexes() {
        let conn = crate::store::testing::database();
        for sql in [
            format!("{MEMORY_COLUMNS} WHERE {OF_PROJECT}"),
            format!("{SUMMARY_COLUMNS} WHERE {OF_PROJECT}"),
            BUSY.to_string(),
        ] {
            let plan = crate::store::testing::plan(&conn, &sql).join("\n");
            assert!(!plan.contains("SCAN"), "{sql}: {plan}");
        }
        let busy = crate::store::testing::plan(&conn, BUSY).join("\n");
        assert!(busy.contains("pending_queue_changes"), "{busy}");
    }
}
