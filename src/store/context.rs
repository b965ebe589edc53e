//! The read behind the start-of-session context: recent sessions of one project.
//!
//! Bounded whatever the size of the database: one indexed range scan of the project's sessions,
//! newest first, and a few rows per session.

use rusqlite::{Connection, Result, params};

#[derive(Debug, Clone, PartialEq)]
pub struct RecentSession {
    pub session_id: String,
    pub started_at: String,
    pub updated_at: String,
    pub prompt_count: i64,
    pub first_prompt: Option<String>,
    pub last_assistant_message: Option<String>,
    pub files_changed: Vec<String>,
}

const FILES_PER_SESSION: i64 = 12;

/// The files the latest changes of a session touched (Write, Edit, …: not reads). The tool list
/// must stay the one of the partial index `pending_queue_changes`, which serves this query.
const FILES_CHANGED: &str = "SELECT DISTINCT f.value
       FROM (SELECT files_touched FROM pending_queue
              WHERE session_id = ?1
                AND tool_name IN ('Write', 'Edit', 'MultiEdit', 'NotebookEdit')
              ORDER BY created_at DESC
              LIMIT 64) q,
            json_each(q.files_touched) f
      LIMIT ?2";

const RECENT_SESSIONS: &str =
    "SELECT s.session_id, s.started_at, s.updated_at, s.prompt_count, s.last_assistant_message,
                (SELECT prompt_text FROM user_prompts p
                  WHERE p.session_id = s.session_id ORDER BY prompt_number LIMIT 1)
           FROM sessions s
          WHERE s.project_dir = ?1
            AND (s.prompt_count > 0 OR s.last_assistant_message IS NOT NULL
                 OR EXISTS (SELECT 1 FROM pending_queue q WHERE q.session_id = s.session_id))
          ORDER BY s.updated_at DESC
          LIMIT ?2";

/// The `limit` most recently active sessions of `project_dir` that hold anything.
pub fn recent_sessions(
    conn: &Connection,
    project_dir: &str,
    limit: usize,
) -> Result<Vec<RecentSession>> {
    let mut sessions = conn.prepare(RECENT_SESSIONS)?;
    let mut files = conn.prepare(FILES_CHANGED)?;
    let rows = sessions.query_map(params![project_dir, limit as i64], |row| {
        Ok(RecentSession {
            session_id: row.get(0)?,
            started_at: row.get(1)?,
            updated_at: row.get(2)?,
            prompt_count: row.get(3)?,
            last_assistant_message: row.get(4)?,
            first_prompt: row.get(5)?,
            files_changed: Vec::new(),
        })
    })?;
    let mut recent = rows.collect::<Result<Vec<_>>>()?;
    for session in &mut recent {
        session.files_changed = files
            .query_map(params![session.session_id, FILES_PER_SESSION], |row| {
                row.get(0)
            })?
            .collect::<Result<_>>()?;
    }
    Ok(recent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Years of sessions must not mean a scan: the project's sessions come from the index,
    /// newest first, and each session's rows from the queue's session index.
    #[test]
    fn the_queries_use_the_indexes() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(include_str!("v1.sql")).unwrap();
        let plan = |sql: &str| -> String {
            let rows: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map(params!["x", 8], |row| row.get(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows.join("\n")
        };
        let files = plan(FILES_CHANGED);
        let plan = plan(RECENT_SESSIONS);
        assert!(plan.contains("USING INDEX sessions_by_project"), "{plan}");

        assert!(
            files.contains("USING INDEX pending_queue_changes"),
            "{files}"
        );
        // DISTINCT sorts at most 64 rows' files; what must not happen is sorting the session.
        assert!(!files.contains("FOR ORDER BY"), "{files}");
        assert!(
            !plan.contains("SCAN s\n") && !plan.contains("SCAN q"),
            "{plan}"
        );
        assert!(
            !plan.contains("TEMP B-TREE"),
            "sorted by the index, not afterwards:\n{plan}"
        );
    }
}
