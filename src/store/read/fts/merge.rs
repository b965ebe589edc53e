//! Keeping the index in few segments, so that looking a word up stays cheap.
//!
//! FTS5 writes what each transaction indexed as a segment of its own and merges them only
//! now and then (four of a level into one of the next), so an index built or brought up to
//! date in batches holds a dozen segments or so, and every lookup of a word opens an iterator
//! on each of them: a third of what per-prompt recall cost on 100,000 captures with 9 segments.
//! The maintenance process therefore merges them into one after it has brought the index up to
//! date (never a hook, never a search command: merging rewrites the whole index), in short
//! transactions, so that a reader waiting for the index's lock waits for one of them only;
//! readers of the index (a hook's recall) do not wait at all, as in WAL mode readers never do.

use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::Connection;

use super::{Index, truncate_wal};

/// More segments than this and the index is merged into one.
pub const MAX_SEGMENTS: i64 = 2;
/// Pages of the merged segment written per transaction (FTS5's pages are 4,000 bytes or so).
const PAGES: i64 = 500;
/// How long one merge keeps going; what is left is merged by the next maintenance process.
const TIME: Duration = Duration::from_secs(60);

impl Index {
    /// The index's segments now.
    pub fn segments(&self) -> Result<i64> {
        segments(&self.conn)
    }

    /// Merges the index into one segment when it holds more than [`MAX_SEGMENTS`]. Returns
    /// the segments before and after.
    pub fn keep_merged(&self) -> Result<(i64, i64)> {
        let before = self.segments()?;
        if before <= MAX_SEGMENTS {
            return Ok((before, before));
        }
        let until = Instant::now() + TIME;
        // A negative number of pages merges every segment whatever its level; FTS5 writes two
        // changes or more when it merged anything.
        while Instant::now() < until
            && self.in_write(|conn| {
                let changes = conn.total_changes();
                conn.execute("INSERT INTO fts (fts, rank) VALUES ('merge', ?1)", [-PAGES])?;
                Ok(conn.total_changes() - changes >= 2)
            })?
        {}
        // The merge went through the WAL: it need not stay as large as the index.
        truncate_wal(&self.conn, Duration::ZERO);
        Ok((before, self.segments()?))
    }
}

/// The number of segments, read from the keys of `fts_data` (a page's key is its segment's
/// number shifted left by 37 bits, plus the page's; segment numbers are below 65,536), one
/// seek per segment.
fn segments(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "WITH RECURSIVE seg(id) AS (
             SELECT (SELECT min(id) >> 37 FROM fts_data WHERE id >= 1 << 37)
             UNION ALL
             SELECT (SELECT min(id) >> 37 FROM fts_data WHERE id >= (seg.id + 1) << 37)
               FROM seg WHERE seg.id IS NOT NULL)
         SELECT count(id) FROM seg WHERE id < 65536",
        [],
        |r| r.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Each transaction that indexes adds a segment; merging leaves one, and what is found
    /// stays the same.
    #[test]
    fn merging_leaves_one_segment_and_the_same_results() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        let index = Index::open(&config).unwrap();
        for batch in 0..6 {
            index
                .in_write(|conn| {
                    for n in 0..50 {
                        conn.execute(
                            "INSERT INTO fts (rowid, head, body) VALUES (?1, 'login', ?2)",
                            rusqlite::params![batch * 100 + n, format!("timeout w{n} b{batch}")],
                        )?;
                    }
                    Ok(())
                })
                .unwrap();
        }
        let found = || -> Vec<i64> {
            let mut stmt = index
                .conn
                .prepare("SELECT rowid FROM fts WHERE fts MATCH 'timeout OR w7' ORDER BY rank")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let before = found();
        let segments = index.segments().unwrap();
        assert!(segments > MAX_SEGMENTS, "{segments} segments");
        assert_eq!(index.keep_merged().unwrap(), (segments, 1));
        assert_eq!(found(), before);
        assert_eq!(
            index.keep_merged().unwrap(),
            (1, 1),
            "nothing left to merge"
        );
    }
}
