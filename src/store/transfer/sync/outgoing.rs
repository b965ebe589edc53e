//! What this machine has to send: records not sent yet, sessions changed since they were sent
//! (a session goes on, and ends, after its first sync), tool calls numbered since (a capture
//! that arrived before its prompt gets its number later), and deletions (what `forget` or
//! retention removed here, of records sent or received). Also the lines of a chunk written
//! again ([`chunk_lines`]) and, once a push has landed, the record of what it holds
//! ([`pushed`]).
//!
//! What else changes of a record after it was sent stays here, on purpose: the queue's state
//! (claims, leases, done) is this machine's work, not memory; retention's reduction of a tool
//! call to its digest is applied by each machine's own retention, on the same session times;
//! `scrub` rewrites text with rules every machine has (run it on each); Claude's last message
//! of a session is worked out by each machine from the messages it holds (so that a forgotten
//! message never comes back through an older session line).

use std::collections::HashSet;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::{DELETED_HERE, GONE, HERE, Table};
use crate::privacy::secrets::Redactor;
use crate::privacy::{clean_payload, clean_text};
use crate::store::rows::{QueueItem, Session};
use crate::store::transfer::export::{self, Record};

/// A record to send, with what `known.ver` will say of it.
pub struct Out {
    pub table: Table,
    pub id: String,
    pub record: Record,
    pub ver: Option<String>,
}

/// Ids of `table` this machine never sent nor received.
pub(super) fn new_sql(table: Table) -> String {
    let (name, id) = table.sql();
    format!(
        "SELECT t.{id} FROM main.{name} t WHERE NOT EXISTS
           (SELECT 1 FROM sync.known k WHERE k.kind = '{}' AND k.id = t.{id})",
        table.name()
    )
}

/// Records known here that were deleted here since: noted already ([`note_deleted`]), or no
/// longer in `table`.
pub(super) fn vanished_sql(table: Table) -> String {
    let (name, id) = table.sql();
    format!(
        "SELECT k.id, k.chunk FROM sync.known k WHERE k.kind = '{kind}'
            AND (k.gone = {DELETED_HERE} OR (k.gone = {HERE}
                 AND NOT EXISTS (SELECT 1 FROM main.{name} t WHERE t.{id} = k.id)))",
        kind = table.name()
    )
}

/// Notes the records known here that are no longer in `table` as deleted here.
pub(super) fn note_deleted_sql(table: Table) -> String {
    let (name, id) = table.sql();
    format!(
        "UPDATE sync.known SET gone = {DELETED_HERE} WHERE kind = '{kind}' AND gone = {HERE}
            AND NOT EXISTS (SELECT 1 FROM main.{name} t WHERE t.{id} = known.id)",
        kind = table.name()
    )
}

/// Notes what was deleted here since the last sync (`forget`, retention) before anything is
/// taken in: a chunk of another machine that holds one of these records (one rewritten there
/// since, read again) must not bring it back before its deletion is sent.
pub fn note_deleted(conn: &Connection) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    for table in Table::ALL {
        tx.execute(&note_deleted_sql(table), [])?;
    }
    tx.commit()?;
    Ok(())
}

pub(super) fn row_sql(table: Table) -> String {
    let (name, id) = table.sql();
    format!("SELECT * FROM main.{name} t WHERE t.{id} = ?1")
}

/// The ids of records of `table` not sent nor received yet.
pub fn new_ids(conn: &Connection, table: Table) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(&new_sql(table))?;
    let ids = stmt.query_map([], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

/// Records known here that were deleted here since: their table, id and the chunk of this
/// machine that holds their line (none when they were received).
pub fn vanished(conn: &Connection) -> Result<Vec<(Table, String, Option<i64>)>> {
    let mut out = Vec::new();
    for table in Table::ALL {
        let mut stmt = conn.prepare(&vanished_sql(table))?;
        let rows = stmt.query_map([], |r| Ok((table, r.get(0)?, r.get(1)?)))?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

/// Sessions of this machine whose row changed since it was sent.
pub fn changed_sessions(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT k.id, k.ver FROM sync.known k
          WHERE k.kind = 'session' AND k.sender IS NULL AND k.gone = 0",
    )?;
    let sent: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut changed = Vec::new();
    for (id, ver) in sent {
        if let Some(Record::Session(s)) = row(conn, Table::Session, &id)?
            && ver.as_deref() != Some(fingerprint(&s).as_str())
        {
            changed.push(id);
        }
    }
    Ok(changed)
}

/// Tool calls of this machine sent without a prompt number that have one now.
pub fn renumbered(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT k.id FROM sync.known k JOIN main.pending_queue q ON q.id = k.id
          WHERE k.kind = 'queue' AND k.ver IS NULL AND k.sender IS NULL AND k.gone = 0
            AND q.prompt_number IS NOT NULL",
    )?;
    let ids = stmt.query_map([], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

/// One record as it would be sent, its text cleaned with today's rules; `None` when it is gone.
pub fn out(conn: &Connection, redactor: &Redactor, table: Table, id: &str) -> Result<Option<Out>> {
    let Some(mut record) = row(conn, table, id)? else {
        return Ok(None);
    };
    if let Record::Session(s) = &mut record {
        s.project_id = s.project_dir.as_deref().and_then(|dir| {
            let dir = std::path::Path::new(dir);
            dir.is_dir()
                .then(|| crate::project::identity(dir))
                .flatten()
        });
    }
    let ver = match &record {
        Record::Session(s) => Some(fingerprint(s)),
        Record::Observation(q) | Record::SummaryRequest(q) => {
            q.prompt_number.map(|_| String::new())
        }
        _ => Some(String::new()),
    };
    Ok(Some(Out {
        table,
        id: id.to_string(),
        record: cleaned(record, redactor)?,
        ver,
    }))
}

/// A row of `table` as an export record.
pub(super) fn row(conn: &Connection, table: Table, id: &str) -> Result<Option<Record>> {
    let mut stmt = conn.prepare_cached(&row_sql(table))?;
    let record = match table {
        Table::Session => stmt
            .query_row([id], |r| {
                crate::store::rows::session(r).map(Record::Session)
            })
            .optional()?,
        Table::Prompt => stmt.query_row([id], export::prompt).optional()?,
        Table::PrivateTurn => stmt.query_row([id], export::private_turn).optional()?,
        Table::Queue => stmt.query_row([id], export::queued).optional()?,
        Table::Event => stmt.query_row([id], export::event).optional()?,
        Table::Memory => stmt.query_row([id], export::memory).optional()?,
        Table::Summary => stmt.query_row([id], export::summary).optional()?,
    };
    Ok(record)
}

/// What of a session may change and travels (not Claude's last message, not when this
/// machine's retention reduced it): a change of any of it sends the session again. Not its
/// project: each machine files a session under its own checkout of the repository (see
/// `store::projects::adopt`), and two machines would otherwise send it back and forth.
fn fingerprint(s: &Session) -> String {
    format!(
        "{}|{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}|{:?}",
        s.updated_at,
        s.status,
        s.ended_at,
        s.end_reason,
        s.prompt_count,
        s.model,
        s.source,
        s.cwd,
        s.transcript_path,
    )
}

/// A record as it leaves: private parts and secrets out with today's rules (what was stored
/// under older ones included), and nothing of this machine's own state: a session without
/// Claude's last message (the receiver works it out from the messages it holds), a queue item
/// without its consumer's name and lease.
fn cleaned(record: Record, r: &Redactor) -> Result<Record> {
    let text = |t: &str| clean_text(r, t).into_owned();
    let json = |raw: &RawValue, tool: Option<&str>| -> Result<Box<RawValue>> {
        Ok(RawValue::from_string(
            clean_payload(r, tool, raw.get()).into_owned(),
        )?)
    };
    Ok(match record {
        Record::Session(mut s) => {
            s.last_assistant_message = None;
            s.reduced_at = None;
            Record::Session(s)
        }
        Record::Prompt(mut p) => {
            p.prompt_text = text(&p.prompt_text);
            Record::Prompt(p)
        }
        Record::Observation(q) => Record::Observation(cleaned_queued(q, r)?),
        Record::SummaryRequest(q) => Record::SummaryRequest(cleaned_queued(q, r)?),
        Record::Event(mut e) => {
            e.detail = e.detail.as_deref().map(|d| json(d, None)).transpose()?;
            Record::Event(e)
        }
        Record::Memory(m) => Record::Memory(export::cleaned_memory(r, &m)),
        Record::Summary(s) => Record::Summary(export::cleaned_summary(r, &s)),
        other => other,
    })
}

fn cleaned_queued(mut q: QueueItem, r: &Redactor) -> Result<QueueItem> {
    q.raw_output = RawValue::from_string(
        clean_payload(r, q.tool_name.as_deref(), q.raw_output.get()).into_owned(),
    )?;
    q.last_error = q
        .last_error
        .as_deref()
        .map(|e| clean_text(r, e).into_owned());
    q.claimed_by = None;
    q.claimed_at = None;
    q.lease_until = None;
    q.lease_token = None;
    q.retry_at = None;
    Ok(q)
}

/// A chunk's lines: its records, and its deletions.
pub type Lines = (Vec<Out>, Vec<(Table, String)>);

/// What a chunk of this machine holds now: its records as they are here today, and the
/// deletions it announced; not the records deleted since, nor lines that a later chunk
/// replaced (a session sent again). `leaving` are records found deleted in this same run,
/// whose lines go too.
pub fn chunk_lines(
    conn: &Connection,
    redactor: &Redactor,
    seq: i64,
    leaving: &HashSet<(Table, String)>,
) -> Result<Lines> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, id, gone FROM sync.known WHERE chunk = ?1 ORDER BY kind, id",
    )?;
    let held: Vec<(String, String, i64)> = stmt
        .query_map([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let (mut records, mut gone) = (Vec::new(), Vec::new());
    for (kind, id, state) in held {
        let Some(table) = Table::from_name(&kind) else {
            continue;
        };
        if state == GONE {
            gone.push((table, id));
        } else if state == HERE
            && !leaving.contains(&(table, id.clone()))
            && let Some(out) = out(conn, redactor, table, &id)?
        {
            records.push(out);
        }
    }
    Ok((records, gone))
}

/// What a landed push holds, recorded: the records sent (in chunk `seq`), the deletions
/// announced (in `seq` too), the records deleted here found in this run (their chunks marked
/// for rewriting, unless rewritten in this push), and the chunks written.
pub struct Pushed<'a> {
    pub sent: &'a [(Table, String, Option<String>, i64)],
    pub announced: &'a [(Table, String, i64)],
    pub chunks: &'a [(i64, String)],
    /// Chunks that no longer hold anything: gone from the remote.
    pub emptied: &'a [i64],
    pub next_seq: i64,
}

pub fn pushed(conn: &Connection, p: &Pushed) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    {
        let mut sent = tx.prepare(
            "INSERT INTO sync.known (kind, id, chunk, ver) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (kind, id) DO UPDATE SET chunk = excluded.chunk, ver = excluded.ver",
        )?;
        for (table, id, ver, seq) in p.sent {
            sent.execute(params![table.name(), id, seq, ver])?;
        }
        let mut gone = tx.prepare(
            "INSERT INTO sync.known (kind, id, chunk, gone) VALUES (?1, ?2, ?3, 1)
             ON CONFLICT (kind, id) DO UPDATE SET chunk = excluded.chunk, gone = 1,
                 sender = NULL, ver = NULL",
        )?;
        for (table, id, seq) in p.announced {
            gone.execute(params![table.name(), id, seq])?;
        }
        let mut chunk =
            tx.prepare("INSERT OR REPLACE INTO sync.chunks (seq, blob, dirty) VALUES (?1, ?2, 0)")?;
        for (seq, blob) in p.chunks {
            chunk.execute(params![seq, blob])?;
        }
        for seq in p.emptied {
            tx.execute("DELETE FROM sync.chunks WHERE seq = ?1", [seq])?;
        }
    }
    super::set_meta(&tx, "next_seq", &p.next_seq.to_string())?;
    tx.commit()?;
    Ok(())
}

/// What waits to go: records, and deletions, as the next sync would find them.
pub fn waiting(conn: &Connection) -> Result<(i64, i64)> {
    let mut records = (changed_sessions(conn)?.len() + renumbered(conn)?.len()) as i64;
    for table in Table::ALL {
        records += conn.query_row(
            &format!("SELECT count(*) FROM ({})", new_sql(table)),
            [],
            |r| r.get::<_, i64>(0),
        )?;
    }
    Ok((records, vanished(conn)?.len() as i64))
}
