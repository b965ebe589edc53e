//! The triggers that leave a tombstone for each deleted row of a table the search index copies
//! (its rowid, and the largest rowid left: see `read::fts::catch_up`), made on a connection
//! rather than stored in the file.
//!
//! Until schema v14 they were in the file, and SQLite parses every trigger of a file's schema
//! in every process that opens it: each hook paid for five triggers it never fires (10% of a
//! 1 KB capture's instructions). As TEMP triggers they live only in the connections that arm
//! them: [`crate::store::Store::open`] arms every connection but a hook's, and a hook's arms
//! them before the one delete a hook makes (a private turn's purge). The text is the text the
//! file held (v7), so a tombstone is what it was.

use rusqlite::Connection;

const TRIGGERS: &str = include_str!("tombstones.sql");

/// Makes the triggers on `conn` (once: arming again changes nothing). In a transaction, they
/// go with it if it rolls back: whoever deletes arms in the transaction that deletes.
pub fn arm(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(TRIGGERS)
}
