//! A project's standing instructions as the database holds them: the prompts marked as stating
//! one (schema v9), read through their partial index, each sentence that states one an
//! instruction, and which newer instruction replaced which (see [`crate::standing::current`]).
//! What the session-start context gives every new session, what per-prompt recall may add, and
//! what `claude-mem conventions` lists.

use rusqlite::{Connection, Result, params};

use crate::standing::{self, Rule, Subject};

/// The most instructions a project's list is read from, the newest: a pathological project (a
/// chat log imported as prompts) must not make a session start slow, and a rule said hundreds
/// of rules ago has been said again if it still holds.
pub const READ_MOST: i64 = 500;

/// One standing instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// The row id of the prompt that states it (what `forget` and `conventions pin` take).
    pub prompt: String,
    pub session_id: String,
    /// The prompt's number in its session.
    pub prompt_number: i64,
    /// The sentence that states it, as the user wrote it.
    pub text: String,
    /// What the sentence is about (see [`standing::subject`]), made once when it is read: which
    /// rule replaced which and which bear on a prompt are both weighed by it.
    pub subject: Subject,
    pub said_at: String,
    pub pinned_at: Option<String>,
    /// The instruction that replaced it: its prompt's id and when it was said.
    pub replaced_by: Option<(String, String)>,
    /// When the instruction it replaced was said, if it replaced one.
    pub replaces: Option<String>,
}

impl Instruction {
    pub fn is_current(&self) -> bool {
        self.replaced_by.is_none()
    }
}

/// The newest of the prompts of project ?1 that state a standing instruction: read from the
/// partial index, newest first, each joined to its session by its key.
const OF_PROJECT: &str = "SELECT p.id, p.session_id, p.prompt_text, p.created_at, p.pinned_at,
            p.standing, p.prompt_number
       FROM user_prompts p INDEXED BY user_prompts_standing
       CROSS JOIN sessions s ON s.session_id = p.session_id
      WHERE p.standing > 0 AND s.project_dir = ?1
      ORDER BY p.created_at DESC LIMIT ?2";

/// Every standing instruction of `project`, oldest first, each with what replaced it.
pub fn of_project(conn: &Connection, project: &str) -> Result<Vec<Instruction>> {
    let mut found = Vec::new();
    let mut stmt = conn.prepare_cached(OF_PROJECT)?;
    let mut rows = stmt.query(params![project, READ_MOST])?;
    let mut prompts = Vec::new();
    while let Some(row) = rows.next()? {
        prompts.push((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, i64>(5)?,
            row.get::<_, i64>(6)?,
        ));
    }
    let mut rules = Vec::new();
    for (prompt, session_id, text, said_at, pinned_at, mask, prompt_number) in
        prompts.into_iter().rev()
    {
        for stated in standing::marked(&text, mask) {
            rules.push(stated.changes);
            found.push(Instruction {
                prompt: prompt.clone(),
                session_id: session_id.clone(),
                prompt_number,
                subject: standing::subject(&stated.text),
                text: stated.text,
                said_at: said_at.clone(),
                pinned_at: pinned_at.clone(),
                replaced_by: None,
                replaces: None,
            });
        }
    }
    let list: Vec<Rule> = found
        .iter()
        .zip(&rules)
        .map(|(i, changes)| Rule {
            subject: &i.subject,
            changes: *changes,
        })
        .collect();
    for (old, new) in standing::current(&list).into_iter().enumerate() {
        if let Some(new) = new {
            found[old].replaced_by = Some((found[new].prompt.clone(), found[new].said_at.clone()));
            found[new].replaces = Some(found[old].said_at.clone());
        }
    }
    Ok(found)
}

/// The current ones, as a session should get them: pinned first, then newest first.
pub fn current(conn: &Connection, project: &str) -> Result<Vec<Instruction>> {
    Ok(as_given(of_project(conn, project)?).0)
}

/// A project's list (oldest first) as a session gets it: the current ones, pinned first, then
/// newest first; and the replaced ones.
pub fn as_given(list: Vec<Instruction>) -> (Vec<Instruction>, Vec<Instruction>) {
    let (mut current, replaced): (Vec<Instruction>, Vec<Instruction>) =
        list.into_iter().partition(Instruction::is_current);
    current.reverse();
    current.sort_by_key(|i| i.pinned_at.is_none());
    (current, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session start reads the prompts that state one from their partial index, newest first,
    /// and each one's session by its key: never a scan of the prompts.
    #[test]
    fn the_query_reads_the_partial_index() {
        let conn = crate::store::testing::database();
        let plan = crate::store::testing::plan(&conn, OF_PROJECT).join("\n");
        assert!(plan.contains("USING INDEX user_prompts_standing"), "{plan}");
        assert!(!plan.contains("SCAN s"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}
