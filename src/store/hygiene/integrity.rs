//! A database that may be damaged: how it stands, for `doctor`, and getting back what can
//! still be read from one that is.
//!
//! The check opens the file read-only as it is (no layout move, no migration: looking changes
//! nothing) and runs SQLite's `quick_check`. The repair never deletes: the damaged file moves
//! aside under a dated name with its WAL, a fresh database takes its place (hooks can write
//! again at once), and every row that can still be read from the old file is copied into the
//! new one with `INSERT OR IGNORE` on its own key, as the hooks' writes are, so a row that a
//! hook stored meanwhile or a salvage run twice stores once. Rows are read in rowid order; a
//! damaged page makes reading stop there, so the reader looks for the next rowid it can read
//! again (further and further ahead, then back to the first one that works) and goes on: the
//! rows of the good pages come back, those of the bad page are lost.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior, params_from_iter};

use crate::config::Config;
use crate::store::base::files::check_file;
use crate::store::base::files::open_file_read_only;
use crate::store::sql::{check_version, versions};
use crate::store::write::Store;

/// How a database stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    Missing,
    /// Created by a first hook and not set up yet.
    Empty,
    Healthy {
        schema_version: i64,
    },
    /// Not ours to touch (another user's, not a regular file, another program's, a newer
    /// claude-mem's): why.
    Refused(String),
    /// It cannot be read as a database, or `quick_check` finds damage: what was found.
    Damaged(String),
    /// It could not be looked at now (locked while a WAL is recovered, ...): why.
    Unreadable(String),
}

/// The tables whose rows are worth saving, parents first. (`meta` is not: a fresh store id
/// makes the search index rebuild from the new file; `tombstones` only serve that index.)
const TABLES: &[&str] = &[
    "sessions",
    "user_prompts",
    "private_turns",
    "pending_queue",
    "event_log",
];
const BATCH: i64 = 500;
/// At most this many problems of `quick_check` are listed.
const PROBLEMS: usize = 3;

pub fn inspect(config: &Config) -> Health {
    let path = config.db_path();
    match std::fs::symlink_metadata(&path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Health::Missing,
        Err(err) => return Health::Unreadable(err.to_string()),
        Ok(meta) if meta.len() == 0 => return Health::Empty,
        Ok(_) => {}
    }
    if let Err(err) = check_file(&path) {
        return Health::Refused(format!("{err:#}"));
    }
    let conn = match open_file_read_only(&path) {
        Ok(conn) => conn,
        Err(err) => return classify(err),
    };
    let (version, app_id) = match versions(&conn) {
        Ok(v) => v,
        Err(err) => return classify(err.into()),
    };
    if let Err(err) = check_version(version, app_id, &path) {
        return Health::Refused(format!("{err:#}"));
    }
    if version == 0 {
        return Health::Empty;
    }
    match quick_check(&conn) {
        Ok(problems) if problems.is_empty() => Health::Healthy {
            schema_version: version,
        },
        Ok(problems) => Health::Damaged(problems.join("; ")),
        Err(err) => classify(err.into()),
    }
}

/// The problems `quick_check` reports (none: the file is sound).
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let found: Vec<String> = conn
        .prepare(&format!("PRAGMA quick_check({PROBLEMS})"))?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    // Each problem as one line, without the heading SQLite puts before a database's list.
    Ok(found
        .iter()
        .flat_map(|text| text.lines())
        .map(str::trim)
        .filter(|line| *line != "ok" && !line.starts_with("*** in database"))
        .map(String::from)
        .collect())
}

fn classify(err: anyhow::Error) -> Health {
    let damaged = err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
        )
    });
    if damaged {
        Health::Damaged(format!("{err:#}"))
    } else {
        Health::Unreadable(format!("{err:#}"))
    }
}

/// What [`salvage`] did.
#[derive(Debug)]
pub struct Salvaged {
    /// Where the damaged file is now.
    pub aside: PathBuf,
    /// Rows copied into the new database.
    pub rows: usize,
    /// Stretches of the old file that could not be read.
    pub gaps: usize,
}

/// Moves a damaged database aside (never deleting it), starts a fresh one, and copies into it
/// what can still be read from the old. Refuses a database that is not damaged.
pub fn salvage(config: &Config) -> Result<Salvaged> {
    let path = config.db_path();
    if !matches!(inspect(config), Health::Damaged(_)) {
        bail!("{} is not damaged; left as it is", path.display());
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let aside = path.with_file_name(format!("memory.db.damaged-{stamp}"));
    std::fs::rename(&path, &aside)
        .with_context(|| format!("cannot move {} aside", path.display()))?;
    // The WAL and shared memory go with it: a new database must never meet the old WAL.
    for suffix in ["-wal", "-shm"] {
        let from = with_suffix(&path, suffix);
        if from.exists() {
            std::fs::rename(&from, with_suffix(&aside, suffix))
                .with_context(|| format!("cannot move {} aside", from.display()))?;
        }
    }
    let store = Store::open(config, Instant::now() + Duration::from_secs(10))?;
    store.set_wait(Duration::from_secs(10))?;
    let mut salvaged = Salvaged {
        aside,
        rows: 0,
        gaps: 0,
    };
    // A file whose first page is gone has no schema to read tables by: nothing to copy.
    if let Ok(old) = open_file_read_only(&salvaged.aside) {
        for table in TABLES {
            copy_table(&old, store.conn(), table, &mut salvaged)?;
        }
        repair_sessions(store.conn())?;
    }
    crate::log::Log::new(config, "doctor").line(
        "INFO",
        &format!(
            "moved the damaged database to {}; copied {} rows into a new one ({} unreadable \
             stretches)",
            salvaged.aside.display(),
            salvaged.rows,
            salvaged.gaps
        ),
    );
    Ok(salvaged)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// The columns both the old and the new table have (the old file may be of an older schema).
fn shared_columns(old: &Connection, new: &Connection, table: &str) -> Vec<String> {
    let columns = |conn: &Connection| -> Vec<String> {
        conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .unwrap_or_default()
    };
    let theirs = columns(old);
    columns(new)
        .into_iter()
        .filter(|c| theirs.contains(c))
        .collect()
}

/// Copies every readable row of `table`, in rowid order, stepping over what cannot be read.
fn copy_table(old: &Connection, new: &Connection, table: &str, out: &mut Salvaged) -> Result<()> {
    let columns = shared_columns(old, new, table);
    if columns.is_empty() {
        return Ok(());
    }
    let list = columns
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let select =
        format!("SELECT rowid, {list} FROM \"{table}\" WHERE rowid >= ?1 ORDER BY rowid LIMIT ?2");
    let insert = insert_sql(table, &columns, &list);
    let mut from = i64::MIN;
    loop {
        let (rows, failed) = read_rows(old, &select, from, BATCH);
        if let Some((last, _)) = rows.last() {
            from = last.saturating_add(1);
        }
        out.rows += write_rows(new, &insert, &rows)?;
        if failed {
            out.gaps += 1;
            match next_readable(old, &select, from) {
                Some(next) => from = next,
                None => return Ok(()),
            }
        } else if (rows.len() as i64) < BATCH || from == i64::MAX {
            return Ok(());
        }
    }
}

/// The first statement for a table: sessions merge with a row a hook made meanwhile, so that
/// its prompt count never goes back (the next prompt's number comes from it).
fn insert_sql(table: &str, columns: &[String], list: &str) -> String {
    let marks = vec!["?"; columns.len()].join(", ");
    if table == "sessions" && columns.iter().any(|c| c == "prompt_count") {
        return format!(
            "INSERT INTO sessions ({list}) VALUES ({marks}) ON CONFLICT (session_id) DO UPDATE
                SET prompt_count = max(prompt_count, excluded.prompt_count),
                    started_at = min(started_at, excluded.started_at)"
        );
    }
    format!("INSERT OR IGNORE INTO \"{table}\" ({list}) VALUES ({marks})")
}

/// Up to `limit` rows from rowid `from` on; and whether reading stopped at damage.
fn read_rows(
    old: &Connection,
    select: &str,
    from: i64,
    limit: i64,
) -> (Vec<(i64, Vec<Value>)>, bool) {
    let mut rows = Vec::new();
    let Ok(mut stmt) = old.prepare(select) else {
        return (rows, true);
    };
    let width = stmt.column_count();
    let Ok(mut cursor) = stmt.query(rusqlite::params![from, limit]) else {
        return (rows, true);
    };
    loop {
        match cursor.next() {
            Ok(Some(row)) => {
                let values: rusqlite::Result<Vec<Value>> = (1..width).map(|i| row.get(i)).collect();
                match (row.get::<_, i64>(0), values) {
                    (Ok(rowid), Ok(values)) => rows.push((rowid, values)),
                    _ => return (rows, true),
                }
            }
            Ok(None) => return (rows, false),
            Err(_) => return (rows, true),
        }
    }
}

/// The first rowid after `from` from which a row can be read again: probes further and further
/// ahead until one works, then halves the distance back to the first one that does. `None`
/// when nothing after `from` can be read.
fn next_readable(old: &Connection, select: &str, from: i64) -> Option<i64> {
    let works = |at: i64| {
        let (rows, failed) = read_rows(old, select, at, 1);
        (!failed).then(|| rows.first().map(|(rowid, _)| *rowid))
    };
    let mut bad = from;
    let mut step: i64 = 1;
    let found = loop {
        let at = bad.checked_add(step)?;
        match works(at) {
            Some(next) => break (at, next),
            None => {
                bad = at;
                step = step.saturating_mul(2);
            }
        }
    };
    let (mut good, mut next) = found;
    while good - bad > 1 {
        let mid = bad + (good - bad) / 2;
        match works(mid) {
            Some(found) => (good, next) = (mid, found),
            None => bad = mid,
        }
    }
    // `next` is `None` when the table ends after the damage.
    next
}

fn write_rows(new: &Connection, insert: &str, rows: &[(i64, Vec<Value>)]) -> Result<usize> {
    if rows.is_empty() {
        return Ok(0);
    }
    let tx = Transaction::new_unchecked(new, TransactionBehavior::Immediate)?;
    let mut written = 0;
    {
        let mut stmt = tx.prepare_cached(insert)?;
        for (_, values) in rows {
            // A row the new schema refuses (a damaged value) is skipped, not fatal.
            if let Ok(n) = stmt.execute(params_from_iter(values)) {
                written += n.min(1);
            }
        }
    }
    tx.commit()?;
    Ok(written)
}

/// Sessions whose row was on a damaged page get one back from their prompts and captures, and
/// every session counts at least the prompts it has (the next prompt's number follows it).
fn repair_sessions(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "INSERT OR IGNORE INTO sessions (session_id, project_dir, started_at, updated_at)
             SELECT session_id, max(project_dir), min(created_at), max(created_at)
               FROM (SELECT session_id, NULL AS project_dir, created_at FROM user_prompts
                     UNION ALL
                     SELECT session_id, project_dir, created_at FROM pending_queue)
              GROUP BY session_id;
         UPDATE sessions SET prompt_count = max(prompt_count,
             coalesce((SELECT max(prompt_number) FROM user_prompts p
                        WHERE p.session_id = sessions.session_id), 0));",
    )?;
    Ok(())
}
