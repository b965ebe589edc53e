//! The read behind the start-of-session context: recent sessions of one project, each with
//! what it asked, the errors it met (and whether a later run of the same command succeeded),
//! the commands that changed something, the files it changed and Claude's last message; and,
//! once the compressor has been at it, its latest summary and memories, the errors and
//! commands then only of what came after them (what is not compressed yet).
//!
//! Bounded whatever the size of the database or of a session: one indexed range scan of the
//! project's sessions, newest first, then a few rows per session, each read through a partial
//! index in time order (`pending_queue_changes`, `_failures`, `_commands`) with a limit.
//!
//! Also which ids are this database's own ([`known`]): the context shows the team's notes, and a
//! person's own shared files, read back in their own project, are theirs, not the team's.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, Result, params};
use serde_json::Value;

use super::doc::call_title;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecentSession {
    pub session_id: String,
    pub started_at: String,
    pub updated_at: String,
    pub prompt_count: i64,
    pub first_prompt: Option<String>,
    pub last_assistant_message: Option<String>,
    pub files_changed: Vec<String>,
    /// The latest failed tool calls, newest first.
    pub failures: Vec<Failure>,
    /// The latest commands that changed something (not a look, a test or a build), newest
    /// first, each once.
    pub commands: Vec<String>,
    /// The compressor's latest summary of the session.
    pub summary: Option<LatestSummary>,
    /// The compressor's latest memories of the session, newest first, at most one more than
    /// [`MEMORIES_SHOWN`] (so that a reader knows there are more).
    pub memories: Vec<MemoryLine>,
}

/// The latest compressed summary of a session, as the context shows it: what it says as of
/// its turn `prompt_number`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatestSummary {
    pub request: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub prompt_number: Option<i64>,
}

/// A memory in one line.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryLine {
    pub id: String,
    pub kind: String,
    pub title: String,
}

/// A tool call that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub tool: String,
    /// The call in one line: its command, file, pattern, ….
    pub call: String,
    /// The telling line of its error.
    pub error: String,
    /// For a command: whether its last later run (the same command, spaces around it aside)
    /// succeeded; `None` when it was not run again.
    pub later: Option<bool>,
}

/// Which sessions to list.
pub struct Wanted<'a> {
    pub project_dir: &'a str,
    /// The session starting now: it is never listed.
    pub current: &'a str,
    /// Only sessions started after this (on resume: after the current session started, as
    /// its transcript already holds what was listed then).
    pub started_after: Option<&'a str>,
    pub limit: usize,
}

const FILES_PER_SESSION: i64 = 12;
const FAILURES_PER_SESSION: i64 = 2;
/// Commands looked at per session (newest first) for the ones that changed something, and
/// after a failure for a rerun.
const COMMANDS_LOOKED_AT: i64 = 12;
const COMMANDS_SHOWN: usize = 3;
/// Memories listed per session; one more is read to know whether there are more.
pub const MEMORIES_SHOWN: usize = 5;

/// The files the latest changes of a session touched (Write, Edit, …: not reads). The tool list
/// must stay the one of the partial index `pending_queue_changes`, which serves this query.
const FILES_CHANGED: &str = "SELECT DISTINCT f.value
       FROM (SELECT files_touched FROM pending_queue
              WHERE session_id = ?1
                AND tool_name IN ('Write', 'Edit', 'MultiEdit', 'NotebookEdit')
              ORDER BY created_at DESC
              LIMIT 64) q,
            json_each(q.files_touched) f
      LIMIT ?2";

/// The latest failures of a session after ?3 (`pending_queue_failures`). What a call was and
/// how it failed are read from `raw_output` here, in Rust (see [`Called`]), as for commands.
const FAILURES: &str = "SELECT tool_name, raw_output, created_at
       FROM pending_queue
      WHERE session_id = ?1 AND event = 'PostToolUseFailure' AND created_at > ?3
      ORDER BY created_at DESC LIMIT ?2";

/// A session's commands after a time, oldest first, at most ?3 (`pending_queue_commands`).
const COMMANDS_AFTER: &str = "SELECT event = 'PostToolUse', raw_output
       FROM pending_queue
      WHERE session_id = ?1 AND tool_name = 'Bash' AND created_at > ?2
      ORDER BY created_at LIMIT ?3";

/// A session's latest commands after ?3, newest first, at most ?2, and whether each succeeded.
const LATEST_COMMANDS: &str = "SELECT event = 'PostToolUse', raw_output
       FROM pending_queue
      WHERE session_id = ?1 AND tool_name = 'Bash' AND created_at > ?3
      ORDER BY created_at DESC LIMIT ?2";

/// The compressor's latest summary of a session (`summaries_by_session`).
const LATEST_SUMMARY: &str = "SELECT request, learned, completed, next_steps, prompt_number,
            created_at
       FROM summaries WHERE session_id = ?1 ORDER BY created_at DESC LIMIT 1";

/// The compressor's latest memories of a session (`memories_by_session`).
const LATEST_MEMORIES: &str = "SELECT id, type, title, created_at FROM memories
      WHERE session_id = ?1 ORDER BY created_at DESC LIMIT ?2";

const RECENT_SESSIONS: &str =
    "SELECT s.session_id, s.started_at, s.updated_at, s.prompt_count, s.last_assistant_message,
                (SELECT prompt_text FROM user_prompts p
                  WHERE p.session_id = s.session_id ORDER BY prompt_number LIMIT 1)
           FROM sessions s
          WHERE s.project_dir = ?1
            AND s.session_id <> ?3
            AND (?4 IS NULL OR s.started_at > ?4)
            AND (s.prompt_count > 0 OR s.last_assistant_message IS NOT NULL
                 OR EXISTS (SELECT 1 FROM pending_queue q WHERE q.session_id = s.session_id))
          ORDER BY s.updated_at DESC
          LIMIT ?2";

const STARTED_AT: &str = "SELECT started_at FROM sessions WHERE session_id = ?1";

/// When `session_id` started, if it is recorded.
pub fn started_at(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    conn.query_row(STARTED_AT, [session_id], |r| r.get(0))
        .optional()
}

/// The most recently active sessions `wanted` asks for, those that hold anything.
pub fn recent_sessions(conn: &Connection, wanted: &Wanted) -> Result<Vec<RecentSession>> {
    let mut sessions = conn.prepare(RECENT_SESSIONS)?;
    let rows = sessions.query_map(
        params![
            wanted.project_dir,
            wanted.limit as i64,
            wanted.current,
            wanted.started_after
        ],
        |row| {
            Ok(RecentSession {
                session_id: row.get(0)?,
                started_at: row.get(1)?,
                updated_at: row.get(2)?,
                prompt_count: row.get(3)?,
                last_assistant_message: row.get(4)?,
                first_prompt: row.get(5)?,
                ..RecentSession::default()
            })
        },
    )?;
    let mut recent = rows.collect::<Result<Vec<_>>>()?;
    for session in &mut recent {
        let id = session.session_id.clone();
        session.files_changed = conn
            .prepare_cached(FILES_CHANGED)?
            .query_map(params![id, FILES_PER_SESSION], |row| row.get(0))?
            .collect::<Result<_>>()?;
        // What the compressor made of the session stands for what it covers: the raw
        // errors and commands are those of what came after it.
        let compressed_until = compressed(conn, session)?;
        let after = compressed_until.as_deref().unwrap_or("");
        session.failures = failures(conn, &id, after)?;
        session.commands = changing_commands(conn, &id, after)?;
    }
    Ok(recent)
}

/// Fills in the compressor's latest summary and memories of `session`; returns when the work
/// they tell of ends (the newest item they came from), if there are any.
fn compressed(conn: &Connection, session: &mut RecentSession) -> Result<Option<String>> {
    let id = session.session_id.as_str();
    let summary = conn
        .prepare_cached(LATEST_SUMMARY)?
        .query_row([id], |r| {
            Ok((
                LatestSummary {
                    request: r.get(0)?,
                    learned: r.get(1)?,
                    completed: r.get(2)?,
                    next_steps: r.get(3)?,
                    prompt_number: r.get(4)?,
                },
                r.get::<_, String>(5)?,
            ))
        })
        .optional()?;
    let memories: Vec<(MemoryLine, String)> = conn
        .prepare_cached(LATEST_MEMORIES)?
        .query_map(params![id, MEMORIES_SHOWN as i64 + 1], |r| {
            Ok((
                MemoryLine {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    title: r.get(2)?,
                },
                r.get(3)?,
            ))
        })?
        .collect::<Result<_>>()?;
    let until = summary
        .as_ref()
        .map(|(_, at)| at.clone())
        .into_iter()
        .chain(memories.first().map(|(_, at)| at.clone()))
        .max();
    session.summary = summary.map(|(s, _)| s);
    session.memories = memories.into_iter().map(|(m, _)| m).collect();
    Ok(until)
}

/// What the context reads of a stored call's `raw_output`: its input and its error. Read with
/// serde, which steps over the rest (a command's output, often most of the text) without
/// building it; SQLite's `json_extract` builds the whole document first, and did so for every
/// command looked at: a fifth of what a session start cost.
#[derive(serde::Deserialize, Default)]
struct Called {
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    error: Option<String>,
}

#[derive(serde::Deserialize)]
struct CommandInput {
    command: Option<String>,
}

/// The command a stored Bash call ran, from its `raw_output`. The parse stops once it has read
/// `tool_input`, which a capture stores before `tool_response`: the output, up to the 1 MiB
/// payload cap, is not read through for every command a session start lists (it was an eighth
/// of a session start's instructions on the hooks bench's 1.6 KB outputs). Stopping early leaves
/// the document unfinished, which serde_json reports as an error, ignored here.
fn command_of(raw: &str) -> Option<String> {
    let found = std::cell::Cell::new(None);
    let mut parser = serde_json::Deserializer::from_str(raw);
    let _ = serde::Deserializer::deserialize_map(&mut parser, UntilInput(&found));
    found.into_inner()
}

/// Reads the keys of a call's `raw_output` up to `tool_input`, and keeps its command.
struct UntilInput<'a>(&'a std::cell::Cell<Option<String>>);

impl<'de> serde::de::Visitor<'de> for UntilInput<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a stored tool call")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            if key == "tool_input" {
                let input: Option<CommandInput> = map.next_value()?;
                self.0.set(input.and_then(|input| input.command));
                return Ok(());
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

/// Characters of an error read for its telling line.
const ERROR_READ: usize = 4000;

fn failures(conn: &Connection, session_id: &str, after: &str) -> Result<Vec<Failure>> {
    let rows: Vec<(String, String, String)> = conn
        .prepare_cached(FAILURES)?
        .query_map(params![session_id, FAILURES_PER_SESSION, after], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get(1)?,
                r.get(2)?,
            ))
        })?
        .collect::<Result<_>>()?;
    let mut failures = Vec::new();
    for (tool, raw, at) in rows {
        let Called {
            tool_input: input,
            error,
        } = serde_json::from_str(&raw).unwrap_or_default();
        let error: Option<String> = error.map(|e| e.chars().take(ERROR_READ).collect());
        let command = input.get("command").and_then(Value::as_str);
        let later = match command {
            Some(command) if tool == "Bash" => rerun(conn, session_id, &at, command)?,
            _ => None,
        };
        failures.push(Failure {
            call: call_title(&input),
            tool,
            error: telling_line(error.as_deref().unwrap_or("")),
            later,
        });
    }
    Ok(failures)
}

/// How the last later run of `command` ended. Only the same command is a rerun (spaces around
/// it aside): a passing `npm run build` says nothing of a failing `npm run lint`, nor
/// `cargo test -p a` of `cargo test -p b`.
fn rerun(conn: &Connection, session_id: &str, after: &str, command: &str) -> Result<Option<bool>> {
    let command = command.trim();
    let runs: Vec<(bool, Option<String>)> = conn
        .prepare_cached(COMMANDS_AFTER)?
        .query_map(params![session_id, after, COMMANDS_LOOKED_AT], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, String>(1).map(|raw| command_of(&raw))?,
            ))
        })?
        .collect::<Result<_>>()?;
    Ok(runs
        .into_iter()
        .filter(|(_, c)| c.as_deref().is_some_and(|c| c.trim() == command))
        .map(|(ok, _)| ok)
        .next_back())
}

fn changing_commands(conn: &Connection, session_id: &str, after: &str) -> Result<Vec<String>> {
    let commands: Vec<Option<String>> = conn
        .prepare_cached(LATEST_COMMANDS)?
        .query_map(params![session_id, COMMANDS_LOOKED_AT, after], |r| {
            let (succeeded, raw): (bool, String) = (r.get(0)?, r.get(1)?);
            Ok(if succeeded { command_of(&raw) } else { None })
        })?
        .collect::<Result<_>>()?;
    let mut shown: Vec<String> = Vec::new();
    for command in commands.into_iter().flatten() {
        let line = call_title(&serde_json::json!({ "command": command }));
        if changes_something(&command) && !shown.contains(&line) {
            shown.push(line);
        }
        if shown.len() == COMMANDS_SHOWN {
            break;
        }
    }
    Ok(shown)
}

/// The words that say what a command does: the program and its first argument, after
/// `cd … &&` and `NAME=value` (`cargo test -p shop` is a `cargo test`).
fn command_key(command: &str) -> Vec<&str> {
    let last = command.rsplit("&&").next().unwrap_or(command);
    last.split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .take(2)
        .collect()
}

/// Programs (and a first argument) that only look, check or build: what is left changed
/// something (a commit, an install, a move, a deletion, …).
const LOOKS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "rg",
    "find",
    "fd",
    "echo",
    "pwd",
    "wc",
    "which",
    "file",
    "stat",
    "tree",
    "less",
    "diff",
    "jq",
    "sort",
    "uniq",
    "cut",
    "date",
    "env",
    "ps",
    "df",
    "du",
    "sleep",
    "true",
    "test",
    "type",
    "pytest",
    "tsc",
    "eslint",
    "ruff",
    "mypy",
    "curl",
    "git status",
    "git diff",
    "git log",
    "git show",
    "git branch",
    "git blame",
    "git rev-parse",
    "git ls-files",
    "git grep",
    "git remote",
    "git fetch",
    "git stash list",
    "cargo test",
    "cargo check",
    "cargo clippy",
    "cargo build",
    "cargo bench",
    "cargo doc",
    "cargo tree",
    "cargo run",
    "cargo fmt",
    "cargo metadata",
    "npm test",
    "npm run",
    "npm ls",
    "yarn test",
    "pnpm test",
    "go test",
    "go vet",
    "go build",
    "make test",
    "make check",
    "python -m",
    "python3 -m",
];

fn changes_something(command: &str) -> bool {
    let key = command_key(command);
    let Some(program) = key.first() else {
        return false;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let two = key.get(1).map(|arg| format!("{program} {arg}"));
    !LOOKS
        .iter()
        .any(|look| *look == program || two.as_deref() == Some(*look))
}

/// The line of an error that says what went wrong: the first naming an error, a panic or a
/// failure (not the `Exit code N` line Claude Code puts first), else the last one.
fn telling_line(error: &str) -> String {
    let lines: Vec<&str> = error
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Exit code"))
        .collect();
    let telling = lines.iter().find(|l| {
        let lower = l.to_lowercase();
        [
            "error",
            "panicked",
            "failed",
            "fatal",
            "exception",
            "not found",
        ]
        .iter()
        .any(|word| lower.contains(word))
    });
    telling
        .or(lines.last())
        .copied()
        .or_else(|| error.lines().next())
        .unwrap_or("")
        .to_string()
}

/// Which of `ids` are this database's: a memory, summary, prompt, tool call or session it
/// holds, or an item the user forgot here (schema v10). A team's file of one of these is never
/// shown as the team's: ids are ours to make, and a file that copies one would have the user's
/// own item taken for the team's, or bring back what they forgot. One index probe a table.
pub fn known<'a>(
    conn: &rusqlite::Connection,
    ids: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<HashSet<String>> {
    let mut found = HashSet::new();
    let mut stmt = conn.prepare_cached(KNOWN)?;
    for id in ids {
        if stmt.exists([id])? {
            found.insert(id.to_string());
        }
    }
    Ok(found)
}

const KNOWN: &str = "SELECT 1 FROM memories WHERE id = ?1 UNION ALL SELECT 1 FROM summaries \
     WHERE id = ?1 UNION ALL SELECT 1 FROM forgotten WHERE id = ?1 UNION ALL SELECT 1 FROM \
     user_prompts WHERE id = ?1 UNION ALL SELECT 1 FROM pending_queue WHERE id = ?1 UNION ALL \
     SELECT 1 FROM sessions WHERE session_id = ?1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_read_without_reading_the_output_after_it() {
        // What follows tool_input is never parsed: here it is not even JSON.
        let cut = r#"{"tool_input":{"command":"cargo test","description":"x"},"tool_response":{"stdout":"ok"#;
        assert_eq!(command_of(cut).as_deref(), Some("cargo test"));
        // In another order, the output is read past, and the command found after it.
        let after =
            r#"{"tool_response":{"stdout":"a \"b\" {c}"},"tool_input":{"command":"ls -la"}}"#;
        assert_eq!(command_of(after).as_deref(), Some("ls -la"));
        assert_eq!(command_of(r#"{"tool_input":{"file_path":"a.rs"}}"#), None);
        assert_eq!(command_of(r#"{"tool_response":{}}"#), None);
        assert_eq!(command_of("not json"), None);
    }

    /// Years of sessions, or one session of 100,000 calls, must not mean a scan: the project's
    /// sessions come from its index, newest first, and each session's rows from a partial
    /// index of the queue, in time order, with a limit.
    #[test]
    fn the_queries_use_the_indexes() {
        let conn = crate::store::testing::database();
        let plan = |sql: &str| crate::store::testing::plan(&conn, sql).join("\n");
        let known = plan(KNOWN);
        assert!(!known.contains("SCAN"), "{known}");
        let sessions = plan(RECENT_SESSIONS);
        assert!(
            sessions.contains("USING INDEX sessions_by_project"),
            "{sessions}"
        );
        assert!(
            !sessions.contains("SCAN s\n") && !sessions.contains("SCAN q"),
            "{sessions}"
        );
        assert!(
            !sessions.contains("TEMP B-TREE"),
            "sorted by the index, not afterwards:\n{sessions}"
        );
        for (sql, index) in [
            (FILES_CHANGED, "pending_queue_changes"),
            (FAILURES, "pending_queue_failures"),
            (COMMANDS_AFTER, "pending_queue_commands"),
            (LATEST_COMMANDS, "pending_queue_commands"),
            (LATEST_SUMMARY, "summaries_by_session"),
            (LATEST_MEMORIES, "memories_by_session"),
        ] {
            let plan = plan(sql);
            assert!(
                plan.contains(&format!("USING INDEX {index}")),
                "{sql}\n{plan}"
            );
            // DISTINCT sorts at most 64 rows' files; what must not happen is sorting the session.
            assert!(!plan.contains("FOR ORDER BY"), "{sql}\n{plan}");
        }
        let started = plan(STARTED_AT);
        assert!(!started.contains("SCAN"), "{started}");
    }

    /// Regression: the hook's connection let SQLite's planner weigh the values bound to
    /// ranges (`created_at > ?`), so each read of the session start was prepared again at its
    /// first step: a third of the hook's instructions at 10,000 sessions.
    #[test]
    fn the_session_start_reads_are_prepared_once() {
        use rusqlite::StatementStatus::RePrepare;
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config::in_dir(dir.path());
        let store = crate::store::Store::open(&config, std::time::Instant::now()).unwrap();
        for sql in [FAILURES, COMMANDS_AFTER, LATEST_COMMANDS, RECENT_SESSIONS] {
            let mut statement = store.conn().prepare(sql).unwrap();
            let params: Vec<&dyn rusqlite::ToSql> = vec![&"1"; statement.parameter_count()];
            statement.query(params.as_slice()).unwrap().next().unwrap();
            assert_eq!(statement.get_status(RePrepare), 0, "{sql}");
        }
    }

    #[test]
    fn changes_are_told_by_their_first_words() {
        assert_eq!(command_key("cargo test -p shop 2>&1"), ["cargo", "test"]);
        assert_eq!(
            command_key("cd app && RUST_LOG=1 cargo test"),
            ["cargo", "test"]
        );
        assert!(changes_something("git commit -m 'Fix the lock'"));
        assert!(changes_something("npm install left-pad"));
        assert!(changes_something("rm -rf target/tmp"));
        assert!(!changes_something("git status --short"));
        assert!(!changes_something("cargo test -p shop 2>&1 | tail -5"));
        assert!(!changes_something("/usr/bin/ls -la"));
        assert!(!changes_something(""));
    }

    #[test]
    fn the_telling_line_of_an_error_is_the_one_that_says_what_failed() {
        let error = "Exit code 101\n   Compiling shop\nthread 'main' panicked at src/a.rs:3\nnote: run with RUST_BACKTRACE=1";
        assert_eq!(telling_line(error), "thread 'main' panicked at src/a.rs:3");
        assert_eq!(telling_line("Exit code 1\nno such file"), "no such file");
        assert_eq!(telling_line("Exit code 2"), "Exit code 2");
    }
}
