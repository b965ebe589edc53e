//! A result's context: its session, and the items just before and after it there.
//!
//! A conversation's turn or a tool call is read in its context: "what did she paint?" is
//! answered by a turn that says "a sunset", after one that says "I painted last week". So a
//! result's relevance is raised by a share of its neighbours' and its session's best
//! relevance to the same query (see `rank::in_context`).

use std::collections::HashMap;

use anyhow::Result;

use super::Index;
use super::rank::Context;

impl Index {
    /// For each of `ids`, its session and the ids of the items before and after it there.
    pub(super) fn contexts(&self, ids: &[i64]) -> Result<HashMap<i64, Context>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.id, d.session_id,
                    (SELECT p.id FROM docs p
                      WHERE p.session_id = d.session_id AND p.kind <> 'session'
                        AND (p.created_at, p.id) < (d.created_at, d.id)
                      ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
                    (SELECT n.id FROM docs n
                      WHERE n.session_id = d.session_id AND n.kind <> 'session'
                        AND (n.created_at, n.id) > (d.created_at, d.id)
                      ORDER BY n.created_at ASC, n.id ASC LIMIT 1)
               FROM docs d WHERE d.id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([serde_json::to_string(ids)?], |r| {
            let context = Context {
                session: r.get(1)?,
                around: [r.get(2)?, r.get(3)?],
            };
            Ok((r.get::<_, i64>(0)?, context))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
