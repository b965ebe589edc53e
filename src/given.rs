//! What the session-start context and per-prompt recall gave a session, and why: one record an
//! item (its id, the session it is of, a score where it cleared a bar, a short reason, the
//! bytes of its lines), written by the hooks into the database (`given`, schema v13) with the
//! rest of what they write, and read back by per-prompt recall so that it does not hand again
//! what the session's start gave, by `claude-mem given` and by `browse`. Records hold ids and
//! scores, never the text given: that stays in the rows they name, and `forget` and retention
//! take the records with those rows.

/// Which answer gave an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Giving {
    /// The session-start context (SessionStart).
    Context,
    /// Per-prompt recall (UserPromptSubmit).
    Recall,
}

impl Giving {
    pub fn as_str(self) -> &'static str {
        match self {
            Giving::Context => "context",
            Giving::Recall => "recall",
        }
    }
}

/// Why an item was given: the rule that let it through, as a short code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// One of the project's most recent sessions, listed by the session-start context.
    Recent,
    /// A memory the compressor made of a listed session, named under it.
    Memory,
    /// Matched (cleared recall's bar for) an error the newest session left unresolved.
    Thread,
    /// A standing instruction of the project (at the start: one of the current ones that fit;
    /// with a prompt: one sharing words enough with it).
    Rule,
    /// A teammate's note (at the start: among the newest; with a prompt: it cleared the bar).
    Team,
    /// Cleared per-prompt recall's bar for the prompt.
    Match,
}

impl Reason {
    pub fn code(self) -> &'static str {
        match self {
            Reason::Recent => "recent",
            Reason::Memory => "memory",
            Reason::Thread => "thread",
            Reason::Rule => "rule",
            Reason::Team => "team",
            Reason::Match => "match",
        }
    }

    /// The reason a code names; none for a code no version wrote.
    pub fn parse(code: &str) -> Option<Reason> {
        [
            Reason::Recent,
            Reason::Memory,
            Reason::Thread,
            Reason::Rule,
            Reason::Team,
            Reason::Match,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}

/// One item given.
#[derive(Debug, Clone, PartialEq)]
pub struct Gave {
    pub item_id: String,
    /// The session the item is of; none for a teammate's note (not a row of ours).
    pub item_session: Option<String>,
    /// Of an item that cleared recall's bar, the share of the prompt's weight it held.
    pub score: Option<f64>,
    pub reason: Reason,
    /// The bytes of its lines in the text given.
    pub bytes: usize,
}

/// What the session-start context gave a session: what per-prompt recall leaves out.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Given {
    /// The sessions listed (their first prompt, summary and closing message were shown).
    pub sessions: Vec<String>,
    /// The items named by id (memories, open threads' items, rules' prompts, team notes).
    pub items: Vec<String>,
}

impl Given {
    /// From the records of a context: a listed session's record, or an item's.
    pub fn of<'a>(records: impl IntoIterator<Item = (&'a str, &'a str)>) -> Given {
        let mut given = Given::default();
        for (id, reason) in records {
            match reason == Reason::Recent.code() {
                true => given.sessions.push(id.to_string()),
                false => given.items.push(id.to_string()),
            }
        }
        given
    }

    pub fn has_session(&self, id: &str) -> bool {
        self.sessions.iter().any(|s| s == id)
    }

    pub fn has_item(&self, id: &str) -> bool {
        self.items.iter().any(|i| i == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_session_is_told_from_an_item_by_its_reason() {
        let given = Given::of([("s-0", "recent"), ("m-1", "memory"), ("p-2", "rule")]);
        assert!(given.has_session("s-0") && !given.has_item("s-0"));
        assert!(given.has_item("m-1") && given.has_item("p-2") && !given.has_session("m-1"));
        assert_eq!(Reason::parse("thread"), Some(Reason::Thread));
        assert_eq!(Reason::parse("Thread"), None);
    }
}
