//! The session-start case at 10,000 sessions: the recall database (1,000 sessions of 100
//! captures) with 9,000 short sessions added, as a user's database is after months of small
//! tasks. Each is one turn in one of the six projects, spread over the same 90 days: a prompt,
//! three Bash calls (the last failing in every third session, so that the context has errors
//! to list and open threads to ask about).

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::json;

use crate::Result;
use crate::corpus::{self, PROJECTS, SPAN_DAYS};

/// Sessions in the database once the short ones are added.
pub const SESSIONS: usize = 10_000;
const CALLS: usize = 3;

/// Adds short sessions to the database of `data` until it holds [`SESSIONS`]; returns how many
/// it added.
pub fn add(data: &Path) -> Result<usize> {
    let mut conn = Connection::open(data.join("memory.db"))?;
    let have: i64 = conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))?;
    let add = SESSIONS.saturating_sub(have as usize);
    let tx = conn.transaction()?;
    let now = chrono::Utc::now().timestamp_millis();
    let span = SPAN_DAYS * 86_400_000;
    for s in 0..add {
        let at = now - span + (span / add.max(1) as i64) * s as i64;
        session(&tx, s, at)?;
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(add)
}

/// Short session `s`, started at `at` (milliseconds).
fn session(tx: &rusqlite::Transaction, s: usize, at: i64) -> Result<()> {
    let id = format!("5e550000-0000-4000-8000-{s:012}");
    let project = PROJECTS[s % PROJECTS.len()];
    let module = s % 40;
    tx.execute(
        "INSERT INTO sessions (session_id, project_dir, cwd, transcript_path, source, model,
             status, prompt_count, started_at, updated_at, ended_at, end_reason)
         VALUES (?1, ?2, ?2, ?3, 'startup', 'claude-opus-4-8', 'closed', 1, ?4, ?5, ?5, 'other')",
        params![
            id,
            project,
            format!("/home/dev/.claude/projects/x/{id}.jsonl"),
            corpus::ts(at),
            corpus::ts(at + 60_000)
        ],
    )?;
    let prompt_id = format!("short-{s}");
    tx.execute(
        "INSERT INTO user_prompts (id, session_id, prompt_id, prompt_number, prompt_text,
             created_at) VALUES (?1, ?2, ?3, 1, ?4, ?5)",
        params![
            format!("5e550001-0000-7000-8000-{s:012}"),
            id,
            prompt_id,
            format!("make the tests of module m{module} pass again"),
            corpus::ts(at + 1_000)
        ],
    )?;
    for c in 0..CALLS {
        let failed = c == CALLS - 1 && s.is_multiple_of(3);
        let input = json!({"command": format!("cargo test -p m{module}"),
                           "description": "Run the tests"});
        // A failed call is stored as Claude Code sends it: an `error`, no `tool_response`.
        let raw = match failed {
            true => json!({"tool_input": input, "project_dir": project, "cwd": project,
                           "error": format!("Exit code 101\nerror[E0308]: mismatched types \
                                             in src/m{module}.rs")}),
            false => json!({"tool_input": input, "project_dir": project, "cwd": project,
                            "tool_response": {"stdout": "test result: ok. 12 passed",
                                              "stderr": "", "interrupted": false,
                                              "isImage": false}}),
        }
        .to_string();
        tx.execute(
            "INSERT INTO pending_queue (id, session_id, tool_use_id, prompt_id, prompt_number,
                 event, tool_name, project_dir, raw_output, files_touched, priority,
                 payload_bytes, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, 'Bash', ?6, ?7, '[]', 1, ?8, ?9, ?9)",
            params![
                format!("5e550002-0000-7000-8000-{s:010}{c:02}"),
                id,
                format!("toolu_short_{s:012}_{c}"),
                prompt_id,
                if failed {
                    "PostToolUseFailure"
                } else {
                    "PostToolUse"
                },
                project,
                raw,
                raw.len() as i64,
                corpus::ts(at + 2_000 + c as i64 * 10_000)
            ],
        )?;
    }
    Ok(())
}
