//! Giving captures the number of their turn's prompt when the prompt is stored after them (it
//! waited in the spill folder, or its hook ran late).
//!
//! The prompt's own write numbers at most [`IN_A_WRITE`] of them, so that its cost does not
//! grow with its turn: numbering 100,000 captures in one transaction took the prompt hook
//! 1.4 s and left a WAL too large for the next hooks to open. What is left waits for the
//! maintenance process, which numbers the rest in short transactions; a flag file
//! (`numbering`) says that there is some, and lasts until that is done.

use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::store::base::slices::Slicer;

/// Captures a prompt's write numbers itself; a turn's tool calls rarely come to more.
pub const IN_A_WRITE: i64 = 200;

/// Numbers up to ?4 captures of the turn (session ?2, prompt_id ?3) with the number of the
/// prompt whose row id is ?1.
pub(super) const NUMBER_CAPTURES: &str = "UPDATE pending_queue SET prompt_number =
                 (SELECT prompt_number FROM user_prompts WHERE id = ?1)
             WHERE rowid IN (SELECT rowid FROM pending_queue
                              WHERE session_id = ?2 AND prompt_id = ?3
                                AND prompt_number IS NULL LIMIT ?4)";
/// The next prompt, by rowid from ?1 on, that has captures still without its number.
pub(super) const NEXT_PROMPT: &str = "SELECT p.rowid, p.id, p.session_id, p.prompt_id
       FROM user_prompts p
      WHERE p.rowid >= ?1 AND p.prompt_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM pending_queue q
                     WHERE q.session_id = p.session_id AND q.prompt_id = p.prompt_id
                       AND q.prompt_number IS NULL)
      ORDER BY p.rowid LIMIT 1";

/// Numbers at most [`IN_A_WRITE`] captures of the turn of the prompt stored as `prompt_row`;
/// returns whether some may be left.
pub fn in_a_write(
    tx: &Transaction,
    prompt_row: &str,
    session_id: &str,
    prompt_id: Option<&str>,
) -> rusqlite::Result<bool> {
    let numbered = tx.execute(
        NUMBER_CAPTURES,
        params![prompt_row, session_id, prompt_id, IN_A_WRITE],
    )?;
    Ok(numbered as i64 == IN_A_WRITE)
}

/// Marks that captures are left to number, for the maintenance process.
pub fn flag_left(flag: &Path) {
    let _ = crate::fsutil::create_private(flag);
}

/// Numbers every capture left, turn by turn, in the transactions of `slicer`; returns whether
/// it got to the end. The flag goes first, so that a write that leaves more meanwhile sets it
/// again; it is set again here too when time ran out.
pub fn the_rest(conn: &Connection, slicer: &Slicer, flag: &Path) -> Result<bool> {
    let _ = std::fs::remove_file(flag);
    let mut from = 0i64;
    let finished = slicer.run(conn, |tx| {
        let next = tx
            .query_row(NEXT_PROMPT, [from], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            })
            .optional()?;
        let Some((rowid, id, session_id, prompt_id)) = next else {
            return Ok(false);
        };
        if !in_a_write(tx, &id, &session_id, Some(&prompt_id))? {
            from = rowid + 1;
        }
        Ok(true)
    });
    if !matches!(finished, Ok(true)) {
        flag_left(flag);
    }
    finished
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    fn unnumbered(conn: &Connection) -> i64 {
        conn.query_row(
            "SELECT COUNT(*) FROM pending_queue WHERE prompt_number IS NULL",
            [],
            |row| row.get(0),
        )
        .unwrap()
    }

    #[test]
    fn a_write_numbers_a_bounded_part_and_the_rest_is_numbered_later() {
        let mut conn = testing::database();
        for n in 0..IN_A_WRITE * 3 + 7 {
            testing::capture(&conn, n, Some("p"));
        }
        // A capture of another turn, and one of a Claude Code that sends no prompt_id.
        testing::capture(&conn, 9_000, Some("other"));
        testing::capture(&conn, 9_001, None);
        conn.execute_batch(
            "INSERT INTO user_prompts (id, session_id, prompt_id, prompt_number, prompt_text,
                 created_at) VALUES ('u', 's', 'p', 3, 'x', 'y')",
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        assert!(in_a_write(&tx, "u", "s", Some("p")).unwrap());
        tx.commit().unwrap();
        assert_eq!(unnumbered(&conn), IN_A_WRITE * 2 + 7 + 2);

        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("numbering");
        flag_left(&flag);
        let slicer = Slicer::command(std::time::Duration::ZERO);
        assert!(the_rest(&conn, &slicer, &flag).unwrap());
        assert!(!flag.exists());
        assert_eq!(unnumbered(&conn), 2);
        let numbered: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM pending_queue WHERE prompt_id = 'p' AND prompt_number = 3",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(numbered, IN_A_WRITE * 3 + 7);
    }
}
