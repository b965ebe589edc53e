//! Taking in a chunk of another machine: its records stored each once, by id, whatever order
//! and however often chunks come (the export's [`Importer`], which cleans their text with
//! today's rules on the way in), and its deletions applied as `forget` applies them.
//!
//! What makes it converge:
//! - A deletion is for good: the record is marked gone in `known`, and a line of it in any
//!   chunk read later (one written before the deletion, not yet rewritten) is not stored again.
//! - A session sent again (it went on, it ended) replaces the one here when it is newer by its
//!   sender's chunk number, never by a clock; a session of this machine is never replaced.
//!   Claude's last message is worked out here from the messages this machine holds.
//! - A tool call stored here is done for the compressor: the machine that captured it makes
//!   the memories of it, which come too; compressing it here would spend tokens twice and store
//!   each memory twice. One sent again with its prompt number gets that number here.
//! - What came is never sent back: it is in `known` with its sender.

use std::collections::HashSet;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::Table;
use crate::privacy::secrets::Redactor;
use crate::store::base::rebuilding;
use crate::store::base::slices::Slicer;
use crate::store::hygiene::forget::{self, Target};
use crate::store::transfer::export::{Importer, Record};
use crate::store::write::purge;

/// One line of a chunk after its header.
#[derive(Debug)]
pub enum Line {
    Record(Box<Record>),
    /// A record deleted on the machine that sent this.
    Gone(Table, String),
}

/// What taking in one chunk did.
#[derive(Debug, Default, Clone)]
pub struct Received {
    /// New records stored, by type (as `export::describe` counts them).
    pub stored: crate::store::transfer::export::Counts,
    /// Records deleted here.
    pub deleted: i64,
    /// Sessions brought up to date, tool calls numbered.
    pub updated: i64,
}

impl Received {
    pub fn add(&mut self, other: &Received) {
        for (a, b) in self.stored.iter_mut().zip(other.stored) {
            *a += b;
        }
        self.deleted += other.deleted;
        self.updated += other.updated;
    }
}

/// The table and id of a record.
pub fn key(record: &Record) -> (Table, String) {
    match record {
        Record::Session(s) => (Table::Session, s.session_id.clone()),
        Record::Prompt(p) => (Table::Prompt, p.id.clone()),
        Record::PrivateTurn(t) => (Table::PrivateTurn, t.prompt_id.clone()),
        Record::Observation(q) | Record::SummaryRequest(q) => (Table::Queue, q.id.clone()),
        Record::Event(e) => (Table::Event, e.id.clone()),
        Record::Memory(m) => (Table::Memory, m.id.clone()),
        Record::Summary(s) => (Table::Summary, s.id.clone()),
    }
}

/// What `known` says of a record: whether it is gone (announced, or deleted here), who sent it (`None`: ours), the sender's
/// chunk of the version here.
struct Known {
    gone: bool,
    sender: Option<String>,
    rev: Option<i64>,
}

fn known(conn: &Connection, table: Table, id: &str) -> Result<Option<Known>> {
    Ok(conn
        .prepare_cached("SELECT gone, sender, rev FROM sync.known WHERE kind = ?1 AND id = ?2")?
        .query_row(params![table.name(), id], |r| {
            Ok(Known {
                gone: r.get(0)?,
                sender: r.get(1)?,
                rev: r.get(2)?,
            })
        })
        .optional()?)
}

/// Takes in the lines of chunk `seq` of `machine`, all of them checked already.
pub fn apply(
    conn: &Connection,
    redactor: &Redactor,
    machine: &str,
    seq: i64,
    lines: Vec<Line>,
    slicer: &Slicer,
) -> Result<Received> {
    let mut received = Received::default();
    let mut importer = Importer::new(redactor);
    let mut touched = HashSet::new();
    let mut gone = Vec::new();
    let mut records = Vec::new();
    let mut identities = Vec::new();
    for line in lines {
        match line {
            Line::Record(record) => {
                if let Record::Session(s) = record.as_ref()
                    && let (Some(dir), Some(id)) = (&s.project_dir, &s.project_id)
                {
                    identities.push((dir.clone(), id.clone()));
                }
                records.push(*record);
            }
            Line::Gone(table, id) => gone.push((table, id)),
        }
    }
    let mut next = records.into_iter();
    slicer.run(conn, |tx| {
        let Some(record) = next.next() else {
            return Ok(false);
        };
        store(
            tx,
            &mut importer,
            &mut received,
            &mut touched,
            machine,
            seq,
            record,
        )?;
        Ok(true)
    })?;
    received.stored = importer.stored;
    // Another machine's sessions filed under this machine's checkout of the same repository.
    crate::store::hygiene::projects::remember(conn, &identities)?;
    crate::store::hygiene::projects::adopt(conn, &crate::clock::now())?;
    if !gone.is_empty() {
        received.deleted = delete(conn, machine, &gone, slicer)?;
    }
    slicer.run(conn, |tx| {
        for session in touched.drain() {
            let ours = known(tx, Table::Session, &session)?.is_some_and(|k| k.sender.is_none());
            if !ours {
                tx.prepare_cached(purge::LAST_MESSAGE)?
                    .execute([&session])?;
            }
        }
        Ok(false)
    })?;
    Ok(received)
}

fn store(
    tx: &Connection,
    importer: &mut Importer,
    received: &mut Received,
    touched: &mut HashSet<String>,
    machine: &str,
    seq: i64,
    mut record: Record,
) -> Result<()> {
    let (table, id) = key(&record);
    let was = known(tx, table, &id)?;
    if was.as_ref().is_some_and(|k| k.gone) {
        return Ok(());
    }
    // A record of a session deleted for good goes with it, however late it comes.
    if let Some(session) = session_of(&record)
        && known(tx, Table::Session, session)?.is_some_and(|k| k.gone)
    {
        return Ok(());
    }
    let before: i64 = importer.stored.iter().sum();
    match &mut record {
        Record::Session(s) => {
            s.last_assistant_message = None;
            touched.insert(s.session_id.clone());
        }
        Record::Observation(q) | Record::SummaryRequest(q) => {
            q.status = "done".into();
            q.claimed_by = None;
            q.claimed_at = None;
            q.lease_until = None;
            q.lease_token = None;
            q.retry_at = None;
            if matches!(record, Record::SummaryRequest(_)) {
                touched.insert(session_of(&record).unwrap_or_default().to_string());
            }
        }
        _ => {}
    }
    importer.store(tx, &record)?;
    let stored = importer.stored.iter().sum::<i64>() > before;
    if !stored {
        received.updated += update(tx, &record, was.as_ref(), machine, seq)?;
    }
    // A record here already and ours keeps what `known` says of it.
    let rev = matches!(record, Record::Session(_)).then_some(seq);
    tx.prepare_cached(
        "INSERT INTO sync.known (kind, id, sender, rev) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (kind, id) DO UPDATE SET sender = excluded.sender, rev = excluded.rev
          WHERE sync.known.sender IS NOT NULL AND ?5",
    )?
    .execute(params![
        table.name(),
        id,
        machine,
        rev,
        newer(was.as_ref(), machine, seq)
    ])?;
    Ok(())
}

/// The session a record belongs to (none: it is a session).
fn session_of(record: &Record) -> Option<&str> {
    Some(match record {
        Record::Session(_) => return None,
        Record::Prompt(p) => &p.session_id,
        Record::PrivateTurn(t) => &t.session_id,
        Record::Observation(q) | Record::SummaryRequest(q) => &q.session_id,
        Record::Event(e) => e.session_id.as_deref()?,
        Record::Memory(m) => &m.session_id,
        Record::Summary(s) => &s.session_id,
    })
}

/// Whether a session line from `machine`'s chunk `seq` replaces the version here: the same
/// sender's later chunk, or the one of the two senders that sorts first (both sent it: both
/// imported one file), so that every machine ends with the same version.
fn newer(was: Option<&Known>, machine: &str, seq: i64) -> bool {
    match was {
        None => true,
        Some(k) => match &k.sender {
            None => false,
            Some(sender) if sender == machine => k.rev.is_none_or(|rev| seq > rev),
            Some(sender) => machine < sender.as_str(),
        },
    }
}

/// What a record here already takes from the line: a newer session, a prompt number.
fn update(
    tx: &Connection,
    record: &Record,
    was: Option<&Known>,
    machine: &str,
    seq: i64,
) -> Result<i64> {
    let changed = match record {
        Record::Session(s) if newer(was, machine, seq) => tx
            .prepare_cached(
                "UPDATE sessions SET project_dir = ?2, cwd = ?3, transcript_path = ?4,
                        source = ?5, model = ?6, status = ?7, prompt_count = ?8,
                        started_at = ?9, updated_at = ?10, ended_at = ?11, end_reason = ?12
                  WHERE session_id = ?1",
            )?
            .execute(params![
                s.session_id,
                s.project_dir,
                s.cwd,
                s.transcript_path,
                s.source,
                s.model,
                s.status,
                s.prompt_count,
                s.started_at,
                s.updated_at,
                s.ended_at,
                s.end_reason
            ])?,
        Record::Observation(q) | Record::SummaryRequest(q) if q.prompt_number.is_some() => tx
            .prepare_cached(
                "UPDATE pending_queue SET prompt_number = ?2
                  WHERE id = ?1 AND prompt_number IS NULL",
            )?
            .execute(params![q.id, q.prompt_number])?,
        _ => 0,
    };
    Ok(changed as i64)
}

/// Applies deletions: each record (and what this machine made of it) deleted as `forget`
/// deletes it, then marked gone, and the chunks of ours that held it marked for rewriting.
/// A session's records are marked gone with it: they went with it everywhere. Asks for a
/// rebuild, so that no old copy of what went stays in the file.
fn delete(
    conn: &Connection,
    machine: &str,
    gone: &[(Table, String)],
    slicer: &Slicer,
) -> Result<i64> {
    rebuilding::request(conn)?;
    let mut deleted = 0;
    for (table, id) in gone {
        let was = known(conn, *table, id)?;
        if was.as_ref().is_some_and(|k| k.gone) {
            continue;
        }
        let mut marks = vec![(*table, id.clone())];
        let target = match table {
            Table::Session => {
                // By session id, its row or not (records of it may have come first).
                marks.extend(session_records(conn, id)?);
                conn.execute_batch("PRAGMA secure_delete = ON")?;
                forget::session(conn, id, slicer)?;
                deleted += marks.len() as i64;
                None
            }
            Table::Queue => Some(Target::Item(id.clone())),
            Table::Memory => Some(Target::Memory(id.clone())),
            Table::Summary => Some(Target::Summary(id.clone())),
            Table::Prompt | Table::PrivateTurn | Table::Event => None,
        };
        match target {
            Some(target) => {
                let mut plan = forget::plan(conn, &target)?;
                deleted += counted(&plan);
                forget::apply(conn, &mut plan, slicer)?;
            }
            None if *table == Table::Session => {}
            None => {
                conn.execute_batch("PRAGMA secure_delete = ON")?;
                let (name, column) = table.sql();
                deleted += conn.execute(
                    &format!("DELETE FROM main.{name} WHERE {column} = ?1"),
                    [id],
                )? as i64;
            }
        }
        let tx = conn.unchecked_transaction()?;
        for (table, id) in &marks {
            mark_gone(&tx, *table, id, machine)?;
        }
        tx.commit()?;
    }
    Ok(deleted)
}

fn counted(plan: &forget::Plan) -> i64 {
    let c = plan.counts();
    c.sessions + c.prompts + c.calls + c.messages + c.memories + c.summaries
}

/// The records of a session, every table.
fn session_records(conn: &Connection, session: &str) -> Result<Vec<(Table, String)>> {
    let mut out = Vec::new();
    for table in Table::ALL {
        if table == Table::Session {
            continue;
        }
        let (name, column) = table.sql();
        let mut stmt = conn.prepare(&format!(
            "SELECT {column} FROM main.{name} WHERE session_id = ?1"
        ))?;
        for id in stmt.query_map([session], |r| r.get::<_, String>(0))? {
            out.push((table, id?));
        }
    }
    Ok(out)
}

/// Marks a record gone, as `machine` said; a chunk of ours that held it is rewritten.
fn mark_gone(tx: &Connection, table: Table, id: &str, machine: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sync.chunks SET dirty = 1 WHERE seq =
           (SELECT chunk FROM sync.known WHERE kind = ?1 AND id = ?2 AND sender IS NULL)",
    )?
    .execute(params![table.name(), id])?;
    tx.prepare_cached(
        "INSERT INTO sync.known (kind, id, sender, gone) VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (kind, id) DO UPDATE SET gone = 1, sender = excluded.sender, chunk = NULL,
             ver = NULL",
    )?
    .execute(params![table.name(), id, machine])?;
    Ok(())
}
