//! A result's context: its session, and the two items before and the two after it there.
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
        // The n-th item before `d` in its session (`n` from 0), and after it.
        let side = |op: &str, order: &str, n: u8| {
            format!(
                "(SELECT s.id FROM docs s
                   WHERE s.session_id = d.session_id AND s.kind <> 'session'
                     AND (s.created_at, s.id) {op} (d.created_at, d.id)
                   ORDER BY s.created_at {order}, s.id {order} LIMIT 1 OFFSET {n})"
            )
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT d.id, d.session_id, {}, {}, {}, {}
               FROM docs d WHERE d.id IN (SELECT value FROM json_each(?1))",
            side("<", "DESC", 0),
            side(">", "ASC", 0),
            side("<", "DESC", 1),
            side(">", "ASC", 1),
        ))?;
        let rows = stmt.query_map([serde_json::to_string(ids)?], |r| {
            let context = Context {
                session: r.get(1)?,
                around: [[r.get(2)?, r.get(3)?], [r.get(4)?, r.get(5)?]],
            };
            Ok((r.get::<_, i64>(0)?, context))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
