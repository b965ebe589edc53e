//! What a session was given (the `given` table, schema v13; see [`crate::given`]), as the read
//! side shows it: `claude-mem given` and `browse`, each answer (the session-start context, or a
//! prompt's recall) with the items it gave, in the order they were given.

use rusqlite::{Connection, Result};

use crate::store::rows::{self, GivenRow};

/// One answer that gave the session something: a session-start context, or a prompt's recall.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The prompt whose recall it was (its row id); none for a session-start context.
    pub prompt_id: Option<String>,
    /// That prompt's number in the session, while the prompt is stored.
    pub prompt_number: Option<i64>,
    /// `context` or `recall`.
    pub giving: String,
    pub at: String,
    /// What it gave, in its order.
    pub items: Vec<GivenRow>,
}

/// The session's records, oldest first (one index range of the session).
const OF_SESSION: &str = "SELECT g.prompt_id, g.giving, g.item_id, g.item_session, g.score,
        g.reason, g.bytes, g.at, p.prompt_number
     FROM given g LEFT JOIN user_prompts p ON p.id = g.prompt_id
     WHERE g.session_id = ?1 ORDER BY g.at, g.rowid";

/// What `session_id` was given, an [`Answer`] at a time, oldest first.
pub fn of_session(conn: &Connection, session_id: &str) -> Result<Vec<Answer>> {
    let mut stmt = conn.prepare(OF_SESSION)?;
    let rows = stmt.query_map([session_id], |r| {
        Ok((
            rows::given_row(r)?,
            r.get::<_, Option<i64>>("prompt_number")?,
        ))
    })?;
    let mut answers: Vec<Answer> = Vec::new();
    for row in rows {
        let (row, prompt_number) = row?;
        match answers.last_mut() {
            Some(last) if last.at == row.at && last.prompt_id == row.prompt_id => {
                last.items.push(row);
            }
            _ => answers.push(Answer {
                prompt_id: row.prompt_id.clone(),
                prompt_number,
                giving: row.giving.clone(),
                at: row.at.clone(),
                items: vec![row],
            }),
        }
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing;

    #[test]
    fn a_sessions_records_come_back_an_answer_at_a_time() {
        let conn = testing::database();
        let plan = testing::plan(&conn, OF_SESSION).join("\n");
        assert!(plan.contains("USING INDEX given_by_session"), "{plan}");
        conn.execute_batch(
            "INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
                 VALUES ('p-1', 's', 3, 'x', 't');
             INSERT INTO given (session_id, prompt_id, giving, item_id, item_session, score,
                 reason, bytes, at)
             VALUES ('s', NULL, 'context', 's-0', 's-0', NULL, 'recent', 90, 't1'),
                    ('s', NULL, 'context', 'm-0', 's-0', NULL, 'memory', 40, 't1'),
                    ('s', 'p-1', 'recall', 'q-0', 's-0', 0.5, 'match', 70, 't2'),
                    ('t', NULL, 'context', 's-0', 's-0', NULL, 'recent', 90, 't1');",
        )
        .unwrap();
        let answers = of_session(&conn, "s").unwrap();
        let shape: Vec<String> = answers
            .iter()
            .map(|a| {
                let bytes: i64 = a.items.iter().map(|i| i.bytes).sum();
                let items = a.items.len();
                format!(
                    "{:?} {:?} {} {items} {bytes}",
                    a.prompt_id, a.prompt_number, a.giving
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                "None None context 2 130",
                "Some(\"p-1\") Some(3) recall 1 70"
            ]
        );
        assert_eq!(answers[1].items[0].score, Some(0.5));
    }
}
