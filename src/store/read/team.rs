//! What the database says about the team's files: which memories and summaries of a project
//! `share` writes out, and which of the notes a clone holds are this database's own (a
//! person's own shared files, read back in their own project, are shown once, as theirs).

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

impl Reader {
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
        ] {
            let plan = crate::store::testing::plan(&conn, &sql).join("\n");
            assert!(!plan.contains("SCAN"), "{sql}: {plan}");
        }
    }
}
