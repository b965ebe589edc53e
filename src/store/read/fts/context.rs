//! A result's context: its session, and the two items before and the two after it there.
//!
//! A conversation's turn or a tool call is read in its context: "what did she paint?" is
//! answered by a turn that says "a sunset", after one that says "I painted last week". So a
//! result's relevance is raised by a share of its neighbours' and its session's best
//! relevance to the same query (see `rank::in_context`).

use std::collections::HashMap;

use anyhow::Result;

use super::Index;
use super::rank::{Context, Ranked, may_reach};

/// A side's two nearest items of a result in its session.
fn side(op: &str, order: &str) -> String {
    format!(
        "SELECT id FROM docs
          WHERE session_id = ?1 AND kind <> 'session' AND (created_at, id) {op} (?2, ?3)
          ORDER BY created_at {order}, id {order} LIMIT 2"
    )
}

impl Index {
    /// For each of `results` (ranked, of which `wanted` are asked for), its session and the ids
    /// of the items before and after it there: two lookups a result, each side's two nearest
    /// read at once from `docs_by_session` (which holds all they read), for the results that
    /// may reach the first `wanted` with them (`rank::may_reach`); none for the others.
    ///
    /// Four subqueries a result were a tenth of an MCP search of two common words (1,000
    /// results in 147 sessions). Reading a session's items whole, in order, where it has many
    /// results, cost as much (callgrind: 106.1 against 106.4 million instructions for that
    /// search from six results a session, 30.3 against 30.0 for a question): not done.
    pub(super) fn contexts(
        &self,
        results: &[Ranked],
        wanted: usize,
    ) -> Result<HashMap<i64, Context>> {
        let ids: Vec<i64> = results.iter().map(|r| r.id).collect();
        let mut of = self.conn.prepare_cached(
            "SELECT d.id, d.session_id, d.created_at FROM docs d
              WHERE d.id IN (SELECT value FROM json_each(?1))",
        )?;
        let placed: Vec<(i64, String, String)> = of
            .query_map([serde_json::to_string(&ids)?], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let session_of: HashMap<i64, String> =
            placed.iter().map(|(id, s, _)| (*id, s.clone())).collect();
        let reach = may_reach(results, &session_of, wanted);
        let mut before = self.conn.prepare_cached(&side("<", "DESC"))?;
        let mut after = self.conn.prepare_cached(&side(">", "ASC"))?;
        let mut contexts = HashMap::with_capacity(placed.len());
        for (id, session, created_at) in placed {
            let mut around = [[None; 2]; 2];
            if reach.contains(&id) {
                let [b1, b2] = two(&mut before, &session, &created_at, id)?;
                let [a1, a2] = two(&mut after, &session, &created_at, id)?;
                around = [[b1, a1], [b2, a2]];
            }
            contexts.insert(id, Context { session, around });
        }
        Ok(contexts)
    }
}

/// The two ids `side` (a statement of [`side`]) finds of the result `id` of `session`.
fn two(
    side: &mut rusqlite::CachedStatement,
    session: &str,
    created_at: &str,
    id: i64,
) -> Result<[Option<i64>; 2]> {
    let mut rows = side.query(rusqlite::params![session, created_at, id])?;
    let mut found = [None; 2];
    for slot in &mut found {
        match rows.next()? {
            Some(row) => *slot = Some(row.get(0)?),
            None => break,
        }
    }
    Ok(found)
}
