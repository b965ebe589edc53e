//! The schema: one SQL file per version, append-only (schema version N is the first N files),
//! and the code that brings a database up to the latest in one exclusive transaction. A
//! database newer than this binary, or someone else's, is refused and left untouched.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, TransactionBehavior};

mod compact;

use crate::store::base::errors::Refused;
use crate::store::base::wait;

/// "cmem" in ASCII: marks the file as ours (`PRAGMA application_id`).
pub const APPLICATION_ID: i64 = 0x636d_656d;

/// Append-only: schema version N is the first N entries.
pub(in crate::store) const MIGRATIONS: &[&str] = &[
    include_str!("v1.sql"),
    include_str!("v2.sql"),
    include_str!("v3.sql"),
    include_str!("v4.sql"),
    include_str!("v5.sql"),
    include_str!("v6.sql"),
    include_str!("v7.sql"),
    include_str!("v8.sql"),
    include_str!("v9.sql"),
    include_str!("v10.sql"),
    include_str!("v11.sql"),
    include_str!("v12.sql"),
    include_str!("v13.sql"),
    include_str!("v14.sql"),
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
/// What [`MIGRATIONS`] make of a new file, in one step (see the file's head).
const SCHEMA: &str = include_str!("schema.sql");
/// The schema version that brought `meta` (the store's identity) and `tombstones`.
pub const TOMBSTONES_SINCE: i64 = 4;

/// The schema version and the application id, as two plain pragmas: one `SELECT` of both
/// through their table-valued functions set up two virtual tables, 3.8% of a 1 KB capture's
/// instructions (callgrind). Read apart, outside a transaction, another process's first
/// migration can commit in between: the version is read first, so that such a race gives
/// version 0 (a new file, migrated under the lock, which reads it again) and never a version
/// without our id (someone else's file).
pub(in crate::store) fn versions(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    let version = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let app_id = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    Ok((version, app_id))
}

pub(in crate::store) fn check_version(
    version: i64,
    app_id: i64,
    path: &std::path::Path,
) -> Result<()> {
    if app_id != APPLICATION_ID && (app_id != 0 || version != 0) {
        return Err(Refused(format!(
            "{} is not a claude-mem database (application_id {app_id:#x}); left untouched",
            path.display()
        ))
        .into());
    }
    if version > SCHEMA_VERSION {
        return Err(Refused(format!(
            "{} has schema version {version}, newer than this claude-mem knows \
             ({SCHEMA_VERSION}); left untouched: upgrade claude-mem",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// Brings the schema up to date in one exclusive transaction. Re-reads the version inside it:
/// another process may have migrated while this one waited.
pub(in crate::store) fn migrate(conn: &mut Connection, deadline: Instant) -> Result<()> {
    // Someone else's database must not even be switched to WAL.
    if refuse_foreign(conn)? {
        // A new file: freed pages can then be given back to the file system in small steps
        // (see `retention`). SQLite takes this only before the first table, and before the
        // switch to WAL, which writes the file's first page.
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL")?;
    }
    // Two hooks creating the database at once: one turns it to WAL, then the other.
    let mode: String = wait::past_deadlock(deadline, || {
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
    })?;
    if !mode.eq_ignore_ascii_case("wal") {
        bail!("could not switch to WAL mode (journal_mode is {mode})");
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    let new = refuse_foreign(&tx)?;
    let (version, _) = versions(&tx)?;
    let version = if new && version == 0 {
        tx.execute_batch(SCHEMA)
            .context("the schema of a new file")?;
        SCHEMA_VERSION
    } else {
        version
    };
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .and_then(|()| after(&tx, index as i64 + 1))
            .with_context(|| format!("migration to schema version {}", index + 1))?;
    }
    // Saves time at every open; a schema SQLite would not let us rewrite stays as written.
    let _ = compact::compact(&tx);
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    tx.commit()?;
    Ok(())
}

/// What a migration needs done in Rust after its SQL: v9 marks the prompts stored before it
/// that state a standing instruction (one pass over the prompts, once).
fn after(tx: &Connection, version: i64) -> rusqlite::Result<()> {
    if version != 9 {
        return Ok(());
    }
    let mut marked = Vec::new();
    {
        let mut prompts = tx.prepare("SELECT rowid, prompt_text FROM user_prompts")?;
        let mut rows = prompts.query([])?;
        while let Some(row) = rows.next()? {
            let mask = crate::standing::mark(row.get_ref(1)?.as_str()?);
            if mask != 0 {
                marked.push((row.get::<_, i64>(0)?, mask));
            }
        }
    }
    let mut mark = tx.prepare("UPDATE user_prompts SET standing = ?2 WHERE rowid = ?1")?;
    for (rowid, mask) in marked {
        mark.execute([rowid, mask])?;
    }
    Ok(())
}

/// A database without our version stamp that already holds tables is someone else's.
/// One statement, so one snapshot: read apart, the version could come from before another
/// process's migration committed and the tables from after, and our own new database would
/// look like someone else's. Returns whether the file is empty (no tables yet).
pub(in crate::store) fn refuse_foreign(conn: &Connection) -> Result<bool> {
    let (version, app_id, tables): (i64, i64, i64) = conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT application_id FROM pragma_application_id),
                (SELECT COUNT(*) FROM sqlite_schema)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    if version == 0 && app_id != APPLICATION_ID && tables > 0 {
        return Err(Refused(
            "the file holds tables but is not a claude-mem database; left untouched".into(),
        )
        .into());
    }
    Ok(tables == 0)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    /// Each object of a schema: its type, name and text.
    type Objects = Vec<(String, String, Option<String>)>;

    /// The schema of a file, as SQLite keeps it (its text compacted as every migration leaves
    /// it), and the `meta` keys a new file holds.
    fn schema(conn: &mut Connection, sql: &[&str]) -> (Objects, Vec<String>) {
        let tx = conn.transaction().unwrap();
        for step in sql {
            tx.execute_batch(step).unwrap();
        }
        super::compact::compact(&tx).unwrap();
        let objects = tx
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let keys = tx
            .prepare("SELECT key FROM meta ORDER BY key")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        (objects, keys)
    }

    /// A new file is made from `schema.sql` in one step: it must be what the migrations make,
    /// object for object and text for text, so that a file made either way is the same file.
    #[test]
    fn a_new_file_gets_the_schema_the_migrations_make() {
        let mut migrated = Connection::open_in_memory().unwrap();
        let mut new = Connection::open_in_memory().unwrap();
        let (by_steps, keys) = schema(&mut migrated, super::MIGRATIONS);
        assert_eq!(schema(&mut new, &[super::SCHEMA]), (by_steps, keys));
    }
    /// Schema v8 deletes what earlier versions stored of our own MCP tools by the rule the
    /// hooks now skip them by (`privacy::is_our_tool`).
    #[test]
    fn v8_deletes_our_tools_by_the_rule_the_hooks_skip_them_by() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = include_str!("v8.sql");
        let (_, glob) = sql.split_once("WHERE tool_name").unwrap();
        let glob = glob.split_once(';').unwrap().0;
        for name in [
            "mcp__claude-mem__get",
            "mcp__plugin_x_claude-mem__get",
            "mcp__memory__x",
        ] {
            let matched: bool = conn
                .query_row(
                    &format!("SELECT ?1 AS tool_name WHERE tool_name {glob}"),
                    [name],
                    |_| Ok(()),
                )
                .is_ok();
            assert_eq!(matched, crate::privacy::is_our_tool(name), "{name}");
        }
    }
}
