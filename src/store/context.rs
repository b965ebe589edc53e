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

/// Tools whose `files_touched` are changes, not reads.
const CHANGING_TOOLS: &str = "('Write', 'Edit', 'MultiEdit', 'NotebookEdit')";
const FILES_PER_SESSION: i64 = 12;

/// The `limit` most recently active sessions of `project_dir` that hold anything.
pub fn recent_sessions(
    conn: &Connection,
    project_dir: &str,
    limit: usize,
) -> Result<Vec<RecentSession>> {
    let mut sessions = conn.prepare(
        "SELECT s.session_id, s.started_at, s.updated_at, s.prompt_count, s.last_assistant_message,
                (SELECT prompt_text FROM user_prompts p
                  WHERE p.session_id = s.session_id ORDER BY prompt_number LIMIT 1)
           FROM sessions s
          WHERE s.project_dir = ?1
            AND (s.prompt_count > 0 OR s.last_assistant_message IS NOT NULL
                 OR EXISTS (SELECT 1 FROM pending_queue q WHERE q.session_id = s.session_id))
          ORDER BY s.updated_at DESC
          LIMIT ?2",
    )?;
    let mut files = conn.prepare(&format!(
        "SELECT DISTINCT f.value
           FROM pending_queue q, json_each(q.files_touched) f
          WHERE q.session_id = ?1 AND q.tool_name IN {CHANGING_TOOLS}
          ORDER BY q.created_at
          LIMIT ?2"
    ))?;
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
