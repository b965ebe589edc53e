//! A result's context: its session, and the two items before and the two after it there.
//!
//! A conversation's turn or a tool call is read in its context: "what did she paint?" is
//! answered by a turn that says "a sunset", after one that says "I painted last week". So a
//! result's relevance is raised by a share of its neighbours' and its session's best
//! relevance to the same query (see `rank::in_context`).

use std::collections::HashMap;

use anyhow::Result;

use super::Index;
use super::rank::{Around, Context, Ranked};

/// The two items of a session (?1) after a result (its time ?2, its id ?3), in order.
pub(super) const NEXT: &str = "SELECT id FROM docs
     WHERE session_id = ?1 AND kind <> 'session' AND (created_at, id) > (?2, ?3)
     ORDER BY created_at, id LIMIT 2";

impl Index {
    /// For each of `results`, its session and, of the items before and after it there, those
    /// that are results themselves (no other item counts in `rank::in_context`). Where each
    /// result is came with it from the query that found it; a result without a place (a
    /// team's note) has no context.
    ///
    /// A session's results are put in its order (by time, as `docs_by_session` is), and one
    /// lookup a result but the last tells how many items lie between it and the next: the two
    /// items after it, read from `docs_by_session`, which holds all that is read. So the
    /// neighbours of every result of the session are known from a lookup a result; a session
    /// of one result needs none. Four subqueries a result were a tenth of an MCP search of two
    /// common words (1,000 results in 147 sessions); each side's two nearest items looked up
    /// for each result, two lookups a result, a fifth; reading a session's items whole, in
    /// order, as much.
    pub(super) fn contexts(&self, results: &[Ranked]) -> Result<HashMap<i64, Context>> {
        let mut sessions: HashMap<&str, Vec<(&str, i64)>> = HashMap::new();
        for r in results {
            if let Some(place) = &r.place {
                let at = (place.created_at.as_str(), r.id);
                sessions.entry(place.session.as_str()).or_default().push(at);
            }
        }
        let mut next = self.conn.prepare_cached(NEXT)?;
        let mut contexts = HashMap::with_capacity(results.len());
        for (session, mut order) in sessions {
            order.sort();
            // Items between each result and the next: 0, 1, or 2 for two or more.
            let mut gaps = Vec::with_capacity(order.len());
            for pair in order.windows(2) {
                let (created_at, id) = &pair[0];
                let after: Vec<i64> = next
                    .query_map(rusqlite::params![session, created_at, id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                let gap = after.iter().position(|n| *n == pair[1].1).unwrap_or(2);
                gaps.push(gap);
            }
            for (n, around) in neighbours(&order, &gaps).into_iter().enumerate() {
                let session = session.to_string();
                contexts.insert(order[n].1, Context { session, around });
            }
        }
        Ok(contexts)
    }
}

/// The results among the two items before and the two after each of `order` (a session's
/// results in its order), given the items between each and the next (`gaps`, 2 for two or
/// more).
fn neighbours<T>(order: &[(T, i64)], gaps: &[usize]) -> Vec<Around> {
    let id = |n: usize| order[n].1;
    (0..order.len())
        .map(|n| {
            let gap = |k: usize| gaps.get(k).copied();
            let after1 = (gap(n) == Some(0)).then(|| id(n + 1));
            let after2 = match (gap(n), n.checked_add(1).and_then(gap)) {
                (Some(1), _) => Some(id(n + 1)),
                (Some(0), Some(0)) => Some(id(n + 2)),
                _ => None,
            };
            let before = |back: usize| n.checked_sub(back);
            let before1 = before(1).filter(|&m| gap(m) == Some(0)).map(id);
            let before2 = match (before(1), before(2)) {
                (Some(m), _) if gap(m) == Some(1) => Some(id(m)),
                (Some(m), Some(l)) if gap(m) == Some(0) && gap(l) == Some(0) => Some(id(l)),
                _ => None,
            };
            [[before1, after1], [before2, after2]]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result's neighbours found from the gaps between the session's results are those that
    /// reading the session's items whole finds, of them the results: in many random sessions.
    #[test]
    fn the_gaps_between_results_give_the_neighbours_reading_the_session_would() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        for _ in 0..2000 {
            // The session's items in order, some of them results.
            let items: Vec<(i64, bool)> = (0..1 + next(12) as i64)
                .map(|id| (id, next(3) > 0))
                .collect();
            let order: Vec<(String, i64)> = items
                .iter()
                .filter(|(_, result)| *result)
                .map(|(id, _)| (format!("t{id:03}"), *id))
                .collect();
            let place = |id: i64| items.iter().position(|(i, _)| *i == id).unwrap();
            let gaps: Vec<usize> = order
                .windows(2)
                .map(|p| (place(p[1].1) - place(p[0].1) - 1).min(2))
                .collect();
            let result_at = |n: Option<usize>| {
                n.and_then(|n| items.get(n))
                    .filter(|(_, result)| *result)
                    .map(|(id, _)| *id)
            };
            let whole: Vec<Around> = order
                .iter()
                .map(|(_, id)| {
                    let n = place(*id);
                    [
                        [result_at(n.checked_sub(1)), result_at(Some(n + 1))],
                        [result_at(n.checked_sub(2)), result_at(Some(n + 2))],
                    ]
                })
                .collect();
            assert_eq!(neighbours(&order, &gaps), whole, "{items:?}");
        }
    }
}
