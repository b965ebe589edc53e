//! The only module that touches SQLite: opening, migrating, and applying a hook's write.
//!
//! Each hook run opens one connection, runs one short IMMEDIATE transaction and exits. What
//! makes that fast: schema work only when `user_version` is behind, no checkpoint when the
//! connection closes (every process would pay to copy and delete the WAL), and instead a
//! checkpoint by whichever run sees the WAL grow past a bound.

mod context;

pub use context::{RecentSession, recent_sessions};

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior, params};

use crate::config::Config;
use crate::fsutil;
use crate::ops::{Change, Write};

/// "cmem" in ASCII: marks the file as ours (`PRAGMA application_id`).
pub const APPLICATION_ID: i64 = 0x636d_656d;
/// Append-only: schema version N is the first N entries.
const MIGRATIONS: &[&str] = &[include_str!("v1.sql")];
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
/// Past this WAL size, the run that notices checkpoints it (measured best at 256 KiB).
const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;

pub struct Store {
    conn: Connection,
    wal_path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database, waiting for locks at most until `deadline`.
    pub fn open(config: &Config, deadline: Instant) -> Result<Store> {
        fsutil::private_dir(&config.data_dir)
            .with_context(|| format!("cannot create the data dir {}", config.data_dir.display()))?;
        let path = config.db_path();
        // Created by us so it is 0600 from the start; SQLite gives its WAL the same mode.
        if let Err(err) = fsutil::create_private(&path) {
            if err.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(err)
                    .with_context(|| format!("cannot create the database {}", path.display()));
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        conn.busy_timeout(remaining(deadline))?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        conn.execute_batch(if config.synchronous_full {
            "PRAGMA synchronous = FULL"
        } else {
            "PRAGMA synchronous = NORMAL"
        })?;
        let (version, app_id) = versions(&conn)
            .with_context(|| format!("cannot read the database {}", path.display()))?;
        check_version(version, app_id, &path)?;
        if version < SCHEMA_VERSION {
            migrate(&mut conn).with_context(|| format!("cannot set up {}", path.display()))?;
        }
        let mut wal_path = path.into_os_string();
        wal_path.push("-wal");
        Ok(Store {
            conn,
            wal_path: wal_path.into(),
        })
    }

    /// Applies one write in one IMMEDIATE transaction. Idempotent: the write's id is the key
    /// of what it inserts.
    pub fn apply(&mut self, write: &Write) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        upsert_session(&tx, write)?;
        let s = &write.session;
        let mut purged = false;
        match &write.change {
            Change::Observation(o) => {
                tx.execute(
                    "INSERT OR IGNORE INTO pending_queue (id, kind, session_id, tool_use_id,
                         prompt_id, prompt_number, event, tool_name, project_dir, raw_output,
                         files_touched, priority, payload_bytes, truncated, created_at, updated_at)
                     SELECT ?1, 'observation', ?2, ?3, ?4,
                         (SELECT prompt_number FROM user_prompts
                           WHERE session_id = ?2 AND prompt_id = ?4),
                         ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13
                     WHERE NOT EXISTS (SELECT 1 FROM private_turns WHERE prompt_id = ?4)",
                    params![
                        write.id,
                        s.session_id,
                        o.tool_use_id,
                        o.prompt_id,
                        o.event,
                        o.tool_name,
                        s.project_dir,
                        o.raw_output,
                        o.files_touched,
                        o.priority.rank(),
                        o.payload_bytes as i64,
                        o.truncated,
                        write.at
                    ],
                )?;
            }
            Change::Prompt {
                prompt_id,
                text,
                truncated,
            } => {
                let inserted = tx.execute(
                    "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_id, prompt_number,
                         prompt_text, truncated, created_at)
                     VALUES (?1, ?2, ?3,
                         (SELECT prompt_count + 1 FROM sessions WHERE session_id = ?2), ?4, ?5, ?6)",
                    params![write.id, s.session_id, prompt_id, text, truncated, write.at],
                )?;
                if inserted == 1 {
                    count_prompt(&tx, &s.session_id)?;
                    // Captures applied before their (spilled) prompt learn its number now.
                    tx.execute(
                        "UPDATE pending_queue SET prompt_number =
                             (SELECT prompt_number FROM user_prompts WHERE id = ?1)
                         WHERE session_id = ?2 AND prompt_id = ?3 AND prompt_number IS NULL",
                        params![write.id, s.session_id, prompt_id],
                    )?;
                }
            }
            Change::PrivatePrompt { prompt_id } => {
                let key = prompt_id.as_deref().unwrap_or(&write.id);
                let inserted = tx.execute(
                    "INSERT OR IGNORE INTO private_turns (prompt_id, session_id, created_at)
                     VALUES (?1, ?2, ?3)",
                    params![key, s.session_id, write.at],
                )?;
                if inserted == 1 {
                    count_prompt(&tx, &s.session_id)?;
                    purged = forget_turn(&tx, &s.session_id, key)?;
                }
            }
            Change::SessionStart { source, model } => {
                tx.execute(
                    "UPDATE sessions SET source = ?2, model = COALESCE(?3, model),
                         project_dir = COALESCE(?4, project_dir), status = 'active',
                         ended_at = NULL, end_reason = NULL
                     WHERE session_id = ?1 AND (ended_at IS NULL OR ended_at <= ?5)",
                    params![s.session_id, source, model, s.project_dir, write.at],
                )?;
                log_event(
                    &tx,
                    write,
                    "session_start",
                    serde_json::json!({"source": source}),
                )?;
            }
            Change::SummaryRequest {
                prompt_id,
                last_assistant_message,
            } => {
                let private: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM private_turns WHERE prompt_id = ?1)",
                    [prompt_id],
                    |row| row.get(0),
                )?;
                let raw_waiting: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM pending_queue
                     WHERE session_id = ?1 AND status = 'raw' AND kind = 'observation'",
                    [&s.session_id],
                    |row| row.get(0),
                )?;
                // The message of a private turn is about private things: it is not kept.
                if !private {
                    let prompt_number: i64 = tx.query_row(
                        "SELECT prompt_count FROM sessions WHERE session_id = ?1",
                        [&s.session_id],
                        |row| row.get(0),
                    )?;
                    let raw = serde_json::json!({
                        "last_assistant_message": last_assistant_message,
                        "prompt_number": prompt_number,
                        "project_dir": s.project_dir,
                        "transcript_path": s.transcript_path,
                    });
                    tx.execute(
                        "INSERT OR IGNORE INTO pending_queue (id, kind, session_id, prompt_id,
                             prompt_number, event, project_dir, raw_output, priority,
                             payload_bytes, created_at, updated_at)
                         VALUES (?1, 'summary', ?2, ?3, ?4, 'Stop', ?5, ?6, 1, ?7, ?8, ?8)",
                        params![
                            write.id,
                            s.session_id,
                            prompt_id,
                            prompt_number,
                            s.project_dir,
                            raw.to_string(),
                            last_assistant_message
                                .as_ref()
                                .map_or(0, |m| m.len() as i64),
                            write.at
                        ],
                    )?;
                    if last_assistant_message.is_some() {
                        tx.execute(
                            "UPDATE sessions SET last_assistant_message = ?2
                             WHERE session_id = ?1 AND NOT EXISTS (
                                 SELECT 1 FROM pending_queue WHERE session_id = ?1
                                    AND kind = 'summary' AND created_at > ?3)",
                            params![s.session_id, last_assistant_message, write.at],
                        )?;
                    }
                }
                log_event(
                    &tx,
                    write,
                    "stop",
                    serde_json::json!({"raw_waiting": raw_waiting, "private_turn": private}),
                )?;
            }
            Change::SessionEnd { reason } => {
                tx.execute(
                    "UPDATE sessions SET status = 'closed', ended_at = ?2, end_reason = ?3
                     WHERE session_id = ?1 AND NOT EXISTS (
                         SELECT 1 FROM event_log WHERE session_id = ?1
                            AND event = 'session_start' AND created_at > ?2)",
                    params![s.session_id, write.at, reason],
                )?;
                log_event(
                    &tx,
                    write,
                    "session_end",
                    serde_json::json!({"reason": reason}),
                )?;
            }
        }
        tx.commit()?;
        self.after_commit(purged, matches!(write.change, Change::SessionEnd { .. }));
        Ok(())
    }

    /// Keeps the WAL bounded. A run that finds it past the bound copies it back (TRUNCATE, so
    /// the next process maps a small file); SessionEnd always does a PASSIVE pass, which never
    /// waits. After a private turn was purged, TRUNCATE too, so the WAL keeps no old copy of
    /// its pages. Failure is fine: the next run tries again.
    fn after_commit(&self, purged: bool, session_end: bool) {
        let wal = std::fs::metadata(&self.wal_path).map_or(0, |m| m.len());
        let mode = if purged || wal > WAL_CHECKPOINT_BYTES {
            "TRUNCATE"
        } else if session_end {
            "PASSIVE"
        } else {
            return;
        };
        // Never wait: a reader holding an old snapshot (a consumer, a sqlite3 shell) would make
        // every run pay the whole timeout. What cannot be done now is done by a later run.
        let _ = self.conn.busy_timeout(Duration::ZERO);
        let _ = self
            .conn
            .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()));
    }

    /// Waits for locks at most until `deadline` from now on.
    pub fn wait_until(&self, deadline: Instant) -> Result<()> {
        Ok(self.conn.busy_timeout(remaining(deadline))?)
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Whether an error is a lock held by someone else, worth a retry within the wait budget.
pub fn is_busy(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        )
    })
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

fn versions(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT application_id FROM pragma_application_id)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

fn check_version(version: i64, app_id: i64, path: &std::path::Path) -> Result<()> {
    if app_id != APPLICATION_ID && (app_id != 0 || version != 0) {
        bail!(
            "{} is not a claude-mem database (application_id {app_id:#x}); left untouched",
            path.display()
        );
    }
    if version > SCHEMA_VERSION {
        bail!(
            "{} has schema version {version}, newer than this claude-mem knows ({SCHEMA_VERSION}); \
             left untouched: upgrade claude-mem",
            path.display()
        );
    }
    Ok(())
}

/// Brings the schema up to date in one exclusive transaction. Re-reads the version inside it:
/// another process may have migrated while this one waited.
fn migrate(conn: &mut Connection) -> Result<()> {
    // Someone else's database must not even be switched to WAL.
    refuse_foreign(conn)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        bail!("could not switch to WAL mode (journal_mode is {mode})");
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    refuse_foreign(&tx)?;
    let (version, _) = versions(&tx)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("migration to schema version {}", index + 1))?;
    }
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    tx.commit()?;
    Ok(())
}

/// A database without our version stamp that already holds tables is someone else's.
fn refuse_foreign(conn: &Connection) -> Result<()> {
    let (version, app_id) = versions(conn)?;
    if version == 0 && app_id != APPLICATION_ID {
        let tables: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |row| row.get(0))?;
        if tables > 0 {
            bail!("the file holds tables but is not a claude-mem database; left untouched");
        }
    }
    Ok(())
}

/// Removes what was stored of a turn that turned out to be private (its prompt's write was
/// spilled and applied after the turn's captures), overwriting the freed pages.
/// Returns whether anything was removed.
fn forget_turn(tx: &rusqlite::Transaction, session_id: &str, prompt_id: &str) -> Result<bool> {
    tx.execute_batch("PRAGMA secure_delete = ON")?;
    let removed = tx.execute(
        "DELETE FROM pending_queue WHERE session_id = ?1 AND prompt_id = ?2",
        [session_id, prompt_id],
    )?;
    if removed > 0 {
        tx.execute(
            "UPDATE sessions SET last_assistant_message =
                 (SELECT json_extract(raw_output, '$.last_assistant_message') FROM pending_queue
                   WHERE session_id = ?1 AND kind = 'summary' ORDER BY created_at DESC LIMIT 1)
             WHERE session_id = ?1",
            [session_id],
        )?;
    }
    Ok(removed > 0)
}

/// Creates the session on the first write that sees it; later writes fill in what was missing.
/// SessionStart's own values win (see its UPDATE). A capture, the most frequent write, changes
/// the row only when it brings something new: rewriting an unchanged row and moving its index
/// entry cost two WAL pages on every tool call.
fn upsert_session(tx: &rusqlite::Transaction, write: &Write) -> rusqlite::Result<()> {
    let s = &write.session;
    let bump = !matches!(write.change, Change::Observation(_));
    tx.execute(
        "INSERT INTO sessions (session_id, project_dir, cwd, transcript_path, started_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
         ON CONFLICT (session_id) DO UPDATE SET
             project_dir = COALESCE(sessions.project_dir, excluded.project_dir),
             cwd = CASE WHEN excluded.updated_at >= sessions.updated_at
                        THEN COALESCE(excluded.cwd, sessions.cwd) ELSE sessions.cwd END,
             transcript_path = COALESCE(excluded.transcript_path, sessions.transcript_path),
             updated_at = CASE WHEN ?6 THEN MAX(sessions.updated_at, excluded.updated_at)
                               ELSE sessions.updated_at END
         WHERE ?6
            OR (sessions.project_dir IS NULL AND excluded.project_dir IS NOT NULL)
            OR (excluded.cwd IS NOT sessions.cwd AND excluded.cwd IS NOT NULL
                AND excluded.updated_at >= sessions.updated_at)
            OR (excluded.transcript_path IS NOT sessions.transcript_path
                AND excluded.transcript_path IS NOT NULL)",
        params![s.session_id, s.project_dir, s.cwd, s.transcript_path, write.at, bump],
    )?;
    Ok(())
}

fn count_prompt(tx: &rusqlite::Transaction, session_id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE sessions SET prompt_count = prompt_count + 1 WHERE session_id = ?1",
        [session_id],
    )?;
    Ok(())
}

fn log_event(
    tx: &rusqlite::Transaction,
    write: &Write,
    event: &str,
    detail: serde_json::Value,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR IGNORE INTO event_log (id, session_id, event, detail, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            write.id,
            write.session.session_id,
            event,
            detail.to_string(),
            write.at
        ],
    )?;
    Ok(())
}
