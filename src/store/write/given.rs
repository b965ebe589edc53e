//! The hooks' side of the `given` table (schema v13, see [`crate::given`]): the records of what
//! a context or a prompt's recall gave, written in the transaction of the event they answer
//! (the answer made before it, outside the write lock), so that they cost a few inserts and not
//! a second transaction; and what per-prompt recall reads of them: the items the session-start
//! context gave. Each statement is an index probe (pinned by the test below).
//!
//! The records go in a savepoint of their own: when they fail, they are rolled back and the
//! event is committed all the same (what was captured is never lost for a record of what was
//! given); an error that undid the whole transaction fails the write, which then goes to the
//! spill folder as after any failed write.

use rusqlite::{Connection, Transaction, params};

use crate::given::{Gave, Given, Giving};
use crate::ops::Write;

const INSERT: &str = "INSERT INTO given (session_id, prompt_id, giving, item_id, item_session,
     score, reason, bytes, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// The items and reasons of every session-start context of a session.
const AT_START: &str =
    "SELECT item_id, reason FROM given WHERE session_id = ?1 AND prompt_id IS NULL";

/// What the answer to a write gave: the session and the time are the write's, and so is the
/// prompt (its id) for per-prompt recall; the session-start context has none.
#[derive(Clone, Copy)]
pub struct Gift<'a> {
    pub giving: Giving,
    pub gave: &'a [Gave],
}

/// Records `gift`, the answer to `write`, inside `tx`: `Ok(Some(err))` when the records were
/// rolled back and the rest of `tx` stands, `Err` when the transaction itself failed.
pub(super) fn record(
    tx: &Transaction,
    write: &Write,
    gift: Gift,
) -> rusqlite::Result<Option<rusqlite::Error>> {
    if gift.gave.is_empty() {
        return Ok(None);
    }
    tx.execute_batch("SAVEPOINT given")?;
    match insert(tx, write, gift) {
        Ok(()) => tx.execute_batch("RELEASE given").map(|()| None),
        Err(err) => {
            // Fails when SQLite undid the whole transaction (a full disk, an I/O error): the
            // write fails with it.
            tx.execute_batch("ROLLBACK TO given; RELEASE given")?;
            Ok(Some(err))
        }
    }
}

fn insert(tx: &Transaction, write: &Write, gift: Gift) -> rusqlite::Result<()> {
    let prompt_id = match gift.giving {
        Giving::Recall => Some(write.id.as_str()),
        Giving::Context => None,
    };
    let mut insert = tx.prepare(INSERT)?;
    for g in gift.gave {
        insert.execute(params![
            write.session.session_id,
            prompt_id,
            gift.giving.as_str(),
            g.item_id,
            g.item_session,
            g.score,
            g.reason.code(),
            g.bytes as i64,
            write.at
        ])?;
    }
    Ok(())
}

/// What the session-start contexts of `session_id` gave it (every one of them: a resume or a
/// compaction gives anew, and what an earlier one gave is no more worth repeating).
pub fn at_start(conn: &Connection, session_id: &str) -> rusqlite::Result<Given> {
    let mut stmt = conn.prepare(AT_START)?;
    let rows: Vec<(String, String)> = stmt
        .query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Given::of(
        rows.iter()
            .map(|(id, reason)| (id.as_str(), reason.as_str())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::given::Reason;
    use crate::ops::{Change, SessionRef};
    use crate::store::testing;

    fn write(id: &str, at: &str) -> Write {
        Write {
            id: id.into(),
            at: at.into(),
            session: SessionRef {
                session_id: "s-1".into(),
                project_dir: None,
                cwd: None,
                transcript_path: None,
                agent: None,
            },
            change: Change::SessionStart {
                source: None,
                model: None,
            },
        }
    }

    fn gave(id: &str, reason: Reason) -> Gave {
        Gave {
            item_id: id.into(),
            item_session: Some("s-0".into()),
            score: None,
            reason,
            bytes: 40,
        }
    }

    fn recorded(conn: &mut Connection, write: &Write, gift: Gift) -> Option<rusqlite::Error> {
        let tx = conn.transaction().unwrap();
        let left_out = record(&tx, write, gift).unwrap();
        tx.commit().unwrap();
        left_out
    }

    #[test]
    fn records_read_back_by_an_index_probe() {
        let mut conn = testing::database();
        let plan = testing::plan(&conn, AT_START).join("\n");
        assert!(plan.contains("USING INDEX given_by_session"), "{plan}");
        let start = [gave("s-0", Reason::Recent), gave("m-0", Reason::Memory)];
        let gift = Gift {
            giving: Giving::Context,
            gave: &start,
        };
        assert!(recorded(&mut conn, &write("w-1", "t1"), gift).is_none());
        let prompt = [gave("q-0", Reason::Match)];
        let gift = Gift {
            giving: Giving::Recall,
            gave: &prompt,
        };
        assert!(recorded(&mut conn, &write("p-1", "t2"), gift).is_none());
        let given = at_start(&conn, "s-1").unwrap();
        assert_eq!(given.sessions, ["s-0"]);
        assert_eq!(given.items, ["m-0"], "what recall gave is not the start's");
        assert_eq!(at_start(&conn, "s-2").unwrap(), Given::default());
    }

    /// Records that cannot be written are rolled back alone: the rest of the transaction (the
    /// event they answer) commits.
    #[test]
    fn failed_records_leave_the_transaction_standing() {
        let mut conn = testing::database();
        conn.execute_batch(
            "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.given
             WHEN NEW.item_id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END",
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute("CREATE TABLE kept (x)", []).unwrap();
        let both = [gave("ok", Reason::Match), gave("bad", Reason::Match)];
        let gift = Gift {
            giving: Giving::Recall,
            gave: &both,
        };
        let left_out = record(&tx, &write("p-1", "t1"), gift).unwrap();
        tx.commit().unwrap();
        assert!(left_out.is_some_and(|e| e.to_string().contains("refused")));
        let given: i64 = conn
            .query_row("SELECT COUNT(*) FROM given", [], |r| r.get(0))
            .unwrap();
        assert_eq!(given, 0, "none of the records, not the first alone");
        conn.query_row("SELECT COUNT(*) FROM kept", [], |r| r.get::<_, i64>(0))
            .unwrap();
    }
}
