//! Pinning a prompt's standing instructions (`claude-mem conventions pin`): a pinned one is in
//! every new session's context whatever the budget. One short write by a command, never a
//! hook's.

use rusqlite::{Connection, Result, params};

/// Pins (`at` the time) or unpins (`None`) the standing instructions of prompt `id`; returns
/// whether the prompt states any.
pub fn pin(conn: &Connection, id: &str, at: Option<&str>) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE user_prompts SET pinned_at = ?2 WHERE id = ?1 AND standing > 0",
        params![id, at],
    )?;
    Ok(changed > 0)
}
