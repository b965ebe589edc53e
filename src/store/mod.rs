//! The database: the only code that speaks SQL to it. This file is its outside face: the rest
//! of the program names the store's parts through the paths below (`store::read`,
//! `store::forget`, ...), whatever folder holds them; inside, every part names another by its
//! real path. The parts, lowest first (a part imports only those below it, and
//! `tests/cli/layers/store.rs` keeps it so):
//!
//! - `base/`, `rows.rs`: what every part stands on (the file checks, why a write failed, how a
//!   writer waits, long work in short slices, the WAL's bounds, the rebuild's flag and lock),
//!   and one type per table row with its one reader;
//! - `sql/`: the schema, one migration a version;
//! - `write/`: the hook's write path (open, apply, lean, numbering, purge);
//! - `layout.rs`: where the database lives, and moving an earlier release's files;
//! - `queue/`: the queue contract and the compressor's tables;
//! - `read/`: the readers (one short query each), the session-start context, the search index;
//! - `hygiene/`: retention, forget (and the ids of what it forgot), scrub, integrity, the
//!   rebuild that leaves nothing deleted;
//! - `transfer/`: export and import, the incumbent's import, and sync's records in and out.
//!
//! A hook runs the parts up to `layout.rs`, and of the readers only the session-start context
//! and per-prompt recall's read of the index.

pub mod arena;
mod base;
mod hygiene;
pub mod layout;
pub mod queue;
pub mod read;
pub mod rows;
mod sql;
mod transfer;
mod write;

pub use base::errors::{is_busy, is_refused, is_transient};
pub use base::wal::{WAL_INLINE_MAX, WAL_OPEN_MAX, wal_bytes};
pub use base::{rebuilding, slices};
pub use hygiene::{forget, forgotten, integrity, projects, rebuild, retention, scrub};
pub use queue::compressed;
pub use read::context::{
    Failure, LatestSummary, MEMORIES_SHOWN, MemoryLine, RecentSession, Wanted, recent_sessions,
    started_at,
};
pub use read::{fts, open_read_only};
pub use sql::SCHEMA_VERSION;
pub use transfer::{export, incumbent, sync};
pub use write::{
    Maintenance, RAW_BACKLOG_CAP, Store, given, lean, numbering, purge, standing as pins,
};

/// What the tests that pin each statement to an index share.
#[cfg(test)]
mod testing {
    use rusqlite::Connection;

    /// An empty database at the latest schema.
    pub fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for migration in super::sql::MIGRATIONS {
            conn.execute_batch(migration).unwrap();
        }
        // As `Store::open` arms every connection but a hook's.
        super::base::tombstones::arm(&conn).unwrap();
        conn
    }

    /// The steps of the plan SQLite picks for `sql`, every parameter bound to 1.
    pub fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut plan = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let params: Vec<&dyn rusqlite::ToSql> = vec![&1; plan.parameter_count()];
        plan.query_map(params.as_slice(), |row| row.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Capture `n` of session `s`, in turn `prompt_id`, stored without a number.
    pub fn capture(conn: &Connection, n: i64, prompt_id: Option<&str>) {
        conn.execute(
            "INSERT INTO pending_queue (id, session_id, tool_use_id, prompt_id, event,
                 raw_output, created_at, updated_at)
             VALUES (printf('c-%06d', ?1), 's', printf('t-%06d', ?1), ?2, 'PostToolUse', '{}',
                 printf('2026-01-01T00:00:%06d', ?1), 'x')",
            rusqlite::params![n, prompt_id],
        )
        .unwrap();
    }
}
