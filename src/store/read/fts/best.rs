//! The best rows of a search's query by bm25, kept as its rows stream by: what `ORDER BY score,
//! key LIMIT n` asks of SQLite, without SQLite's way of doing it. SQLite keeps such a query's
//! best rows in a b-tree of whole result records, making a record of every row to compare it
//! and inserting and rebalancing for each that beats the worst: on 100,000 captures, an MCP
//! search of `cargo test` (9,000 rows of the project hold a word of it) spent a tenth of its
//! instructions there. Here a row is three numbers in a heap, and only the winners' other
//! columns are read, once the query is done.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::rank::Place;
use super::schema::key_of;
use crate::store::rows::Kind;

/// What the ranking weighs of a row besides bm25, and where the row is (see `rank.rs`).
#[derive(Debug, Clone)]
pub struct Weighs {
    pub kind: Kind,
    /// Days since it was captured.
    pub age_days: f64,
    /// Its text's hash.
    pub digest: i64,
    pub place: Place,
}

/// A row of the query: its document id, its bm25 (lower is better), the phrases it holds
/// (bit n for phrase n), and what the ranking weighs of it when the query read that too.
#[derive(Debug, Clone)]
pub struct Scored {
    pub id: i64,
    pub bm25: f64,
    pub matched: u64,
    pub weighs: Option<Weighs>,
}

impl Scored {
    /// bm25's order, ties broken by key (the order of the ids before they began with the
    /// project's number: see `schema::PROJECT_SHIFT`), as the query ordered them in SQL.
    fn order(&self, other: &Scored) -> Ordering {
        self.bm25
            .partial_cmp(&other.bm25)
            .unwrap_or(Ordering::Equal)
            .then(key_of(self.id).cmp(&key_of(other.id)))
    }
}

impl PartialEq for Scored {
    fn eq(&self, other: &Scored) -> bool {
        self.order(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Scored) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Scored) -> Ordering {
        self.order(other)
    }
}

/// The best `n` rows offered so far, the worst of them on top.
pub struct Best {
    n: usize,
    heap: BinaryHeap<Scored>,
}

impl Best {
    pub fn new(n: usize) -> Best {
        Best {
            n,
            heap: BinaryHeap::with_capacity(n.min(4096)),
        }
    }

    /// Whether `row` would be kept, by its id and bm25: the rest of it is read only then.
    pub fn takes(&self, row: &Scored) -> bool {
        self.heap.len() < self.n || self.heap.peek().is_some_and(|worst| row < worst)
    }

    /// Keeps `row` if it is among the best `n` so far.
    pub fn offer(&mut self, row: Scored) {
        if self.heap.len() < self.n {
            self.heap.push(row);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && row < *worst
        {
            *worst = row;
        }
    }

    /// The best rows, the best first.
    pub fn into_sorted(self) -> Vec<Scored> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::fts::schema::PROJECT_SHIFT;

    fn row(id: i64, bm25: f64) -> Scored {
        Scored {
            id,
            bm25,
            matched: 1,
            weighs: None,
        }
    }

    /// The best by bm25, ties by key whatever the project, as `ORDER BY score, d.key LIMIT n`.
    #[test]
    fn keeps_the_best_in_the_order_sql_gave_them() {
        let mut best = Best::new(3);
        let other_project = 2 << PROJECT_SHIFT;
        for r in [
            row(10, -1.0),
            row(11, -3.0),
            row(other_project | 12, -2.0),
            row(9, -2.0),
            row(13, -0.5),
            row(other_project | 8, -2.0),
        ] {
            best.offer(r);
        }
        let ids: Vec<i64> = best.into_sorted().iter().map(|r| r.id).collect();
        assert_eq!(ids, [11, other_project | 8, 9]);
    }

    /// A row is read whole only when it would be kept: what `takes` says is what `offer`
    /// does, while the heap fills and once it is full, for rows better and worse than the
    /// worst kept.
    #[test]
    fn takes_what_offer_keeps() {
        let mut best = Best::new(3);
        for (n, bm25) in [-1.0, -3.0, -2.0, -2.0, -0.5, -4.0, -2.0, -1.0, -5.0]
            .into_iter()
            .enumerate()
        {
            let offered = row(n as i64, bm25);
            let takes = best.takes(&offered);
            let before: Vec<i64> = best.heap.iter().map(|r| r.id).collect();
            best.offer(offered);
            let after: Vec<i64> = best.heap.iter().map(|r| r.id).collect();
            assert_eq!(takes, after.contains(&(n as i64)), "row {n}");
            assert_eq!(takes, before != after, "row {n}");
        }
    }

    #[test]
    fn keeps_nothing_when_asked_for_nothing() {
        let mut best = Best::new(0);
        best.offer(row(1, -1.0));
        assert!(best.into_sorted().is_empty());
    }
}
