//! The hooks' side of the `given` table (schema v13, see [`crate::given`]): the records of what
//! a context or a prompt's recall gave, written on the connection that wrote the event, in one
//! short IMMEDIATE transaction of its own once the answer is known; and what per-prompt recall
//! reads of them: the items the session-start context gave. Each statement is an index probe
//! (pinned by the test below).

use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior, params};

use crate::given::{Gave, Given, Giving};

/// How long the records wait for another hook's write: its transactions are a few
/// milliseconds; past this the records are left out (and logged), the answer is not held.
pub const WAIT: Duration = Duration::from_millis(50);

const INSERT: &str = "INSERT INTO given (session_id, prompt_id, giving, item_id, item_session,
     score, reason, bytes, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// The items and reasons of every session-start context of a session.
const AT_START: &str =
    "SELECT item_id, reason FROM given WHERE session_id = ?1 AND prompt_id IS NULL";

/// What one answer gave: the session, the prompt (none for the session-start context), when.
pub struct Giver<'a> {
    pub session_id: &'a str,
    pub prompt_id: Option<&'a str>,
    pub giving: Giving,
    pub at: &'a str,
}

/// Records `gave` in one IMMEDIATE transaction, waiting at most [`WAIT`] for the lock.
pub(super) fn record(conn: &mut Connection, giver: &Giver, gave: &[Gave]) -> rusqlite::Result<()> {
    conn.busy_timeout(WAIT)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut insert = tx.prepare(INSERT)?;
        for g in gave {
            insert.execute(params![
                giver.session_id,
                giver.prompt_id,
                giver.giving.as_str(),
                g.item_id,
                g.item_session,
                g.score,
                g.reason.code(),
                g.bytes as i64,
                giver.at
            ])?;
        }
    }
    tx.commit()
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
    use crate::store::testing;

    #[test]
    fn records_read_back_by_an_index_probe() {
        let mut conn = testing::database();
        let plan = testing::plan(&conn, AT_START).join("\n");
        assert!(plan.contains("USING INDEX given_by_session"), "{plan}");
        let gave = |id: &str, reason| Gave {
            item_id: id.into(),
            item_session: Some("s-0".into()),
            score: None,
            reason,
            bytes: 40,
        };
        let start = Giver {
            session_id: "s-1",
            prompt_id: None,
            giving: Giving::Context,
            at: "t1",
        };
        record(
            &mut conn,
            &start,
            &[gave("s-0", Reason::Recent), gave("m-0", Reason::Memory)],
        )
        .unwrap();
        let prompt = Giver {
            prompt_id: Some("p-1"),
            giving: Giving::Recall,
            at: "t2",
            ..start
        };
        record(&mut conn, &prompt, &[gave("q-0", Reason::Match)]).unwrap();
        let given = at_start(&conn, "s-1").unwrap();
        assert_eq!(given.sessions, ["s-0"]);
        assert_eq!(given.items, ["m-0"], "what recall gave is not the start's");
        assert_eq!(at_start(&conn, "s-2").unwrap(), Given::default());
    }
}
