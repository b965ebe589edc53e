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
    ///
    /// Each session of `ids` is read once, in order (its entries of `docs_by_session`, which
    /// hold what is read), and each result found in it: a result's four neighbours asked one
    /// by one were a fifth of an MCP search of two common words (1,000 results in 170
    /// sessions).
    pub(super) fn contexts(&self, ids: &[i64]) -> Result<HashMap<i64, Context>> {
        let mut sessions: HashMap<String, Vec<i64>> = HashMap::new();
        let mut of = self.conn.prepare_cached(
            "SELECT d.id, d.session_id FROM docs d
              WHERE d.id IN (SELECT value FROM json_each(?1))",
        )?;
        let mut rows = of.query([serde_json::to_string(ids)?])?;
        while let Some(row) = rows.next()? {
            sessions.entry(row.get(1)?).or_default().push(row.get(0)?);
        }
        let mut items = self.conn.prepare_cached(
            "SELECT id FROM docs WHERE session_id = ?1 AND kind <> 'session'
              ORDER BY created_at, id",
        )?;
        let mut contexts = HashMap::with_capacity(ids.len());
        for (session, ours) in sessions {
            let order: Vec<i64> = items
                .query_map([&session], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let at = |n: Option<usize>| n.and_then(|n| order.get(n).copied());
            for (n, id) in order.iter().enumerate() {
                if !ours.contains(id) {
                    continue;
                }
                let around = [
                    [at(n.checked_sub(1)), at(Some(n + 1))],
                    [at(n.checked_sub(2)), at(Some(n + 2))],
                ];
                let session = session.clone();
                contexts.insert(*id, Context { session, around });
            }
        }
        Ok(contexts)
    }
}
