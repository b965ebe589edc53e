//! End to end: the real Claude Code CLI, offline, talking to our loopback mock of the Messages
//! API, with claude-mem's hooks installed into a throwaway HOME.
//!
//! The other tests feed the binary captured payloads; only this one proves that Claude Code
//! actually runs the hooks we install, with payloads we understand, in an order and within
//! time limits that leave a complete session in the database, and that the memory we hand back
//! (at the next session start, and with a prompt about earlier work) really reaches the model.
//!
//! The CLI comes from `harness::claude_cli`: `CLAUDE_MEM_E2E_CLAUDE` (`.ci/run` sets it; then it
//! must work), else the pinned install under `target/e2e/`, which `CLAUDE_MEM_E2E_INSTALL=1`
//! makes from npm when it is missing. Without either the test says why and how to run it, and
//! passes as skipped, or fails under `CLAUDE_MEM_TEST_REQUIRE_ALL=1` (see `harness::require`).
//! Unix only: on Windows Claude Code runs hooks and its Bash tool through another shell, which
//! nothing here has checked.
#![cfg(unix)]
// The timings and the failure diagnostics are for the person reading the test output.
#![allow(clippy::print_stderr)]

use std::env;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::claude_cli::{self, wait_or_kill};
use crate::harness::mock_api::{MockApi, Reply};
use crate::harness::{self, Env, FRAME};
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::{Value, json};

/// One `claude -p` run against the mock takes about a second; this only stops a hang.
const SESSION_LIMIT: Duration = Duration::from_secs(120);

const FIRST_PROMPT: &str = "Record the e2e marker with Bash, then write the notes file.";
const BASH_COMMAND: &str = "echo e2e > e2e.txt";
const WRITTEN_FILE: &str = "notes-e2e.md";
const WRITTEN_TEXT: &str = "notes written by the e2e session\n";
const FIRST_ANSWER: &str = "Both files are in place: e2e.txt and notes-e2e.md.";
const SECOND_PROMPT: &str = "What did we do last time?";
const SECOND_ANSWER: &str = "Last time we wrote e2e.txt and notes-e2e.md.";
/// About the first session's work: its Write of the notes file holds "notes", "e2e", "write".
const RECALL_PROMPT: &str = "Which file did the e2e session write its notes to?";
/// About nothing the project did, with words enough to be looked up.
const SMALL_TALK: &str = "Good morning! How is the weather looking today?";
/// The line per-prompt recall heads its list with (the session-start context has another).
const RECALL_HEAD: &str = "Earlier work in this project that matches this prompt";

#[test]
fn a_claude_code_session_is_recorded_and_its_memory_reaches_the_next_one() {
    let Some(claude) = claude_cli::find() else {
        return;
    };
    // Per-prompt recall on, as for a user: the hooks then have maintenance keep the index.
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let project = env.root.path().join("project");
    fs::create_dir(&project).unwrap();
    let (run, mock, _diagnostics) = sandbox(claude, env, &project);

    install_hooks(&run);
    let first = first_session(&run, &mock);

    // Between sessions, what a user's machine does: the maintenance process the first
    // session's end started brings the search index up to date. Recall never waits for it.
    wait_for_the_index(&run);

    second_session(&run, &mock, &first);

    assert_small_talk_recalls_nothing(&run, &mock);
    assert_a_refused_database_is_told_once(&run, &mock);
    // Nothing the hooks started outlives the sandbox.
    run.env.wait_for_maintenance();
}

/// A project is its repository: a session Claude Code starts in a subfolder of the repository
/// gets what one at its top would, the earlier session in its start context, its work with
/// the prompt about it, and the memory through the MCP server (which runs in the subfolder).
#[test]
fn a_session_started_in_a_subfolder_gets_what_the_repositorys_top_would() {
    let Some(claude) = claude_cli::find() else {
        return;
    };
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let top = env.root.path().join("shop");
    let sub = top.join("invoices");
    fs::create_dir_all(&sub).unwrap();
    harness::git_in(&top, &["init", "-q"]);
    let sub = sub.canonicalize().unwrap();
    let (mut run, mock, _diagnostics) = sandbox(claude, env, &top);
    install_hooks(&run);
    let first = first_session(&run, &mock);
    wait_for_the_index(&run);
    run.project = sub;
    second_session(&run, &mock, &first);
    run.env.wait_for_maintenance();
}

/// What the user told Claude to do from now on, fifteen sessions ago, is in the model's
/// request of a new session that asks for code: the rule said in a real Claude Code session,
/// fourteen sessions of other work after it through the hooks, then the request for code.
#[test]
fn a_rule_said_fifteen_sessions_ago_reaches_the_model_when_the_prompt_asks_for_code() {
    let Some(claude) = claude_cli::find() else {
        return;
    };
    let env = Env::new();
    let project = env.root.path().join("project");
    fs::create_dir(&project).unwrap();
    let (run, mock, _diagnostics) = sandbox(claude, env, &project);
    install_hooks(&run);
    mock.set_script(vec![Reply::Text("Noted.".into())]);
    run.session("rule", RULE_PROMPT);
    for n in 0..14 {
        other_work(&run, n);
    }
    let before = mock.requests().len();
    mock.set_script(vec![Reply::Text("Here is the rate limiter.".into())]);
    run.session("code", CODE_PROMPT);
    let requests = &mock.requests()[before..];
    assert!(
        requests.iter().any(|r| r.is_main_turn()
            && r.has_text_with(&["<claude-mem-context>", "meant to last", RULE])),
        "the rule of fifteen sessions ago is not in the request for code; its main turns:\n{}",
        requests
            .iter()
            .filter(|r| r.is_main_turn())
            .map(|r| r.body["messages"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    run.env.wait_for_maintenance();
}

const RULE: &str = "prefix private helpers with an underscore";
const RULE_PROMPT: &str =
    "Thanks. From now on, prefix private helpers with an underscore: we grep for them.";
const CODE_PROMPT: &str = "Write a rate limiter for the upload endpoint.";

/// A session of other work in the project, through the hooks as Claude Code runs them.
fn other_work(run: &Run, n: usize) {
    let session = format!("5e55{n:04}-0000-4000-8000-000000000000");
    let event = |name: &str, extra: Value| {
        let mut e = json!({"session_id": session, "cwd": run.project, "hook_event_name": name,
                           "transcript_path": format!("/tmp/{session}.jsonl")});
        e.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        e.to_string().into_bytes()
    };
    let hooks = [
        (
            "context",
            event("SessionStart", json!({"source": "startup"})),
        ),
        (
            "prompt",
            event(
                "UserPromptSubmit",
                json!({"prompt": format!("Fix the typo in section {n} of the README")}),
            ),
        ),
        ("cleanup", event("SessionEnd", json!({"reason": "other"}))),
    ];
    for (hook, input) in hooks {
        harness::assert_clean(&run.env.hook(hook, &input));
    }
}

/// The first session: a Bash call and a Write in a project with no history, answered; the
/// tools really ran, no context was handed, and the database holds the session as it went.
/// The session, and how many requests the mock had by its end.
fn first_session(run: &Run, mock: &MockApi) -> (Session, usize) {
    let project = &run.project;
    let written = project.join(WRITTEN_FILE);
    mock.set_script(vec![
        Reply::ToolUse {
            id: "toolu_e2e_bash".into(),
            name: "Bash".into(),
            input: json!({"command": BASH_COMMAND, "description": "Write the e2e marker"}),
        },
        Reply::ToolUse {
            id: "toolu_e2e_write".into(),
            name: "Write".into(),
            input: json!({"file_path": written, "content": WRITTEN_TEXT}),
        },
        Reply::Text(FIRST_ANSWER.into()),
    ]);
    let first = run.session("first", FIRST_PROMPT);
    assert_eq!(
        first.answer, FIRST_ANSWER,
        "claude -p printed another answer"
    );
    // The tools really ran: the session did what the captures will claim.
    assert_eq!(
        fs::read_to_string(project.join("e2e.txt")).unwrap(),
        "e2e\n"
    );
    assert_eq!(fs::read_to_string(&written).unwrap(), WRITTEN_TEXT);
    let first_requests = mock.requests();
    assert!(
        !first_requests
            .iter()
            .any(|r| r.has_text_with(&["<claude-mem-context>"])),
        "a project without history got a context block"
    );

    let db = Connection::open(run.env.data_dir.join("memory.db")).unwrap();
    assert_first_session(&db, &first.session_id, project, &written);
    (first, first_requests.len())
}

/// The second session, about the work of `first` (the mock's requests `before` its end): its
/// prompt gets the Write back (per-prompt recall), the model asks the memory through the MCP
/// server install-hooks registered, and Claude Code hands it the answer; the context names the
/// first session by its short id and points at the MCP tools; the session ends closed.
fn second_session(run: &Run, mock: &MockApi, (first, before): &(Session, usize)) {
    // Claude Code defers MCP tools: the model loads the tool by name first (ToolSearch), as
    // it is told to, then calls it.
    mock.set_script(vec![
        Reply::ToolUse {
            id: "toolu_e2e_load".into(),
            name: "ToolSearch".into(),
            input: json!({"query": "select:mcp__claude-mem__search", "max_results": 1}),
        },
        Reply::ToolUse {
            id: "toolu_e2e_memory".into(),
            name: "mcp__claude-mem__search".into(),
            input: json!({"query": "notes"}),
        },
        Reply::Text(SECOND_ANSWER.into()),
    ]);
    let second = run.session("second", RECALL_PROMPT);
    assert_ne!(second.session_id, first.session_id);
    assert_eq!(second.answer, SECOND_ANSWER);
    let second_requests = &mock.requests()[*before..];
    let main_turns = || {
        second_requests
            .iter()
            .filter(|r| r.is_main_turn())
            .map(|r| r.body["messages"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first_short = short_id(&first.session_id);
    assert!(
        second_requests.iter().any(|r| r.is_main_turn()
            && r.has_text_with(&["<claude-mem-context>", first_short, FIRST_PROMPT])),
        "no request of the second session carried the first session in a claude-mem context \
         block; the messages of its main turns:\n{}",
        main_turns()
    );
    assert!(
        second_requests.iter().any(|r| r.is_main_turn()
            && r.has_text_with(&["<claude-mem-context>", "mcp__claude-mem__search"])),
        "the context does not point at the MCP tools:\n{}",
        main_turns()
    );
    assert!(
        !second_requests
            .iter()
            .any(|r| r.has_text_with(&["<claude-mem-context>", &first.session_id])),
        "the context names sessions by short ids"
    );
    assert_recall_reached_the_model(second_requests, &run.env.data_dir);
    assert_given_is_what_the_model_got(run, second_requests, &second.session_id);
    assert_memory_reached_the_model(second_requests, &run.env.data_dir);
    let db = Connection::open(run.env.data_dir.join("memory.db")).unwrap();
    let status: String = db
        .query_row(
            "SELECT status FROM sessions WHERE session_id = ?1",
            [&second.session_id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(status, "closed", "the second session was not closed");
}

/// Waits until the search index holds every row of the database: the maintenance process a
/// session's end starts gets there within milliseconds (a `search` would too, but no user runs
/// one between sessions). Then until that process has exited, so that the next session's
/// hooks find the index as a user's do.
fn wait_for_the_index(run: &Run) {
    let started = Instant::now();
    harness::wait_until(
        Duration::from_secs(60),
        "the maintenance process to bring the search index up to date",
        || index_caught_up(&run.env.data_dir),
    );
    run.env.wait_for_maintenance();
    eprintln!(
        "e2e: the index was up to date {:.1?} later",
        started.elapsed()
    );
}

/// Whether the index has copied every row of each table it indexes (its marks, the largest
/// rowid it copied of each, against the database's largest): read-only, as recall reads it.
fn index_caught_up(data_dir: &Path) -> bool {
    use rusqlite::{OpenFlags, OptionalExtension};
    let open = |name: &str| {
        Connection::open_with_flags(data_dir.join(name), OpenFlags::SQLITE_OPEN_READ_ONLY)
    };
    // Not there yet, or being made: not up to date.
    let (Ok(index), Ok(db)) = (open("memory-index.db"), open("memory.db")) else {
        return false;
    };
    [
        "sessions",
        "user_prompts",
        "pending_queue",
        "memories",
        "summaries",
    ]
    .iter()
    .all(|table| {
        let mark: Option<i64> = index
            .query_row(
                "SELECT value FROM meta WHERE key = 'mark:' || ?1",
                [table],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten();
        let last: Result<Option<i64>, _> =
            db.query_row(&format!("SELECT max(rowid) FROM {table}"), [], |r| r.get(0));
        last.is_ok_and(|last| mark.unwrap_or(0) >= last.unwrap_or(0))
    })
}

/// Per-prompt recall through the real CLI: the second session's prompt is about the first
/// session's Write, and every main turn carries, once, the block `hook prompt` answered with:
/// framed as recorded history, the Write by short id with the words that matched, and not the
/// first prompt, which the session-start context already gave.
fn assert_recall_reached_the_model(requests: &[harness::mock_api::Request], data_dir: &Path) {
    let write_id = write_id(data_dir);
    let main_turns: Vec<_> = requests.iter().filter(|r| r.is_main_turn()).collect();
    assert!(
        !main_turns.is_empty(),
        "the second session made no main turn"
    );
    for turn in &main_turns {
        let blocks = recall_blocks(turn);
        assert_eq!(
            blocks.len(),
            1,
            "each main turn should carry the recalled items once; its messages:\n{}",
            turn.body["messages"]
        );
        let block = &blocks[0];
        assert!(
            block.starts_with(&format!("<claude-mem-context>\n{FRAME}\n{RECALL_HEAD}")),
            "{block}"
        );
        assert!(
            block.contains(&format!("- Write {}, ", short_id(&write_id)))
                && block.contains(WRITTEN_FILE),
            "the first session's Write of {WRITTEN_FILE} was not recalled: {block}"
        );
        assert!(
            !block.contains(FIRST_PROMPT),
            "recalled what the session-start context gave: {block}"
        );
    }
}

/// `claude-mem given` says what the model's requests carried: for the second session's prompt,
/// exactly the items of the recall block in its main turns (by short id), each a match with its
/// score; for its start, the first session, which the context block names.
fn assert_given_is_what_the_model_got(
    run: &Run,
    requests: &[harness::mock_api::Request],
    session: &str,
) {
    let given = |id: &str| -> Vec<Value> {
        let out = run
            .env
            .command()
            .args(["given", id, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let db = Connection::open(run.env.data_dir.join("memory.db")).unwrap();
    let prompt: String = db
        .query_row(
            "SELECT id FROM user_prompts WHERE session_id = ?1 AND prompt_text = ?2",
            [session, RECALL_PROMPT],
            |r| r.get(0),
        )
        .unwrap();
    let listed: Vec<String> = given(&prompt)
        .iter()
        .inspect(|r| {
            assert!(
                r["reason"] == "match" && r["score"].as_f64() >= Some(0.4),
                "{r}"
            )
        })
        .map(|r| r["short_id"].as_str().unwrap().to_string())
        .collect();
    let turn = requests.iter().find(|r| r.is_main_turn()).unwrap();
    let block = recall_blocks(turn).pop().unwrap();
    // An item's line: "- <what> <short id>, <when> UTC: <title>".
    let carried: Vec<String> = block
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains(" UTC: "))
        .filter_map(|l| l.split(", ").next()?.rsplit(' ').next().map(String::from))
        .collect();
    assert!(!carried.is_empty(), "{block}");
    assert_eq!(
        listed, carried,
        "given lists another set than the request carried: {block}"
    );
    let at_start = given(session);
    let context: Vec<&Value> = at_start
        .iter()
        .filter(|r| r["giving"] == "context")
        .collect();
    assert!(!context.is_empty(), "{at_start:?}");
    for r in context {
        let short = r["short_id"].as_str().unwrap();
        assert!(
            turn.has_text_with(&["<claude-mem-context>", short]),
            "{r} is not in the request"
        );
    }
}

/// A later session whose prompt is about nothing the project did: the model gets the
/// session-start context and no recalled items.
fn assert_small_talk_recalls_nothing(run: &Run, mock: &MockApi) {
    wait_for_the_index(run);
    let before = mock.requests().len();
    mock.set_script(vec![Reply::Text(SECOND_ANSWER.into())]);
    run.session("small-talk", SMALL_TALK);
    let requests = &mock.requests()[before..];
    let main_turns: Vec<_> = requests.iter().filter(|r| r.is_main_turn()).collect();
    assert!(
        main_turns
            .iter()
            .any(|r| r.has_text_with(&["<claude-mem-context>", FRAME])),
        "the small-talk session got no session-start context"
    );
    for turn in main_turns {
        assert!(
            recall_blocks(turn).is_empty(),
            "small talk got recalled items: {}",
            turn.body["messages"]
        );
    }
}

/// The claude-mem blocks of per-prompt recall in a request's messages, each whole.
fn recall_blocks(request: &harness::mock_api::Request) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                let mut rest = text.as_str();
                while let Some(start) = rest.find("<claude-mem-context>") {
                    let block = &rest[start..];
                    let end = block
                        .find("</claude-mem-context>")
                        .map_or(block.len(), |end| end + "</claude-mem-context>".len());
                    if block[..end].contains(RECALL_HEAD) {
                        out.push(block[..end].to_string());
                    }
                    rest = &block[end..];
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&request.body["messages"], &mut out);
    out
}

/// The request after the model's `mcp__claude-mem__search` call carries the tool's answer: the
/// index of the first session's items (its Write of the notes file among them, by short id).
fn assert_memory_reached_the_model(requests: &[harness::mock_api::Request], data_dir: &Path) {
    let first_turn = requests.iter().find(|r| r.is_main_turn()).unwrap();
    for tool in ["search", "timeline", "get"] {
        assert!(
            first_turn.has_text_with(&[&format!("mcp__claude-mem__{tool}")]),
            "Claude Code does not tell the model of mcp__claude-mem__{tool}"
        );
    }
    let write_id = write_id(data_dir);
    let answered = requests
        .iter()
        .filter(|r| r.is_main_turn())
        .find(|r| r.body.to_string().contains("toolu_e2e_memory"))
        .unwrap_or_else(|| panic!("no request carried the result of the memory search"));
    let results: Vec<&Value> = answered.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|block| {
            block["type"] == "tool_result" && block["tool_use_id"] == "toolu_e2e_memory"
        })
        .collect();
    assert_eq!(results.len(), 1, "{}", answered.body["messages"]);
    let text = results[0].to_string();
    assert!(
        results[0]["is_error"] != json!(true),
        "the memory search failed: {text}"
    );
    assert!(
        text.contains(short_id(&write_id)) && text.contains(WRITTEN_FILE),
        "the tool result does not hold the first session's Write: {text}"
    );
}

/// The id of the first session's Write capture (the only Write of the test).
fn write_id(data_dir: &Path) -> String {
    let db = Connection::open(data_dir.join("memory.db")).unwrap();
    db.query_row(
        "SELECT id FROM pending_queue WHERE tool_name = 'Write'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// The 8 characters every claude-mem output names an id by.
fn short_id(id: &str) -> &str {
    &id[24..32]
}

/// Fail loud, once: with a database claude-mem must not touch (here: from a newer version), the
/// hooks keep every event in the spill folder and say so through `systemMessage`, which Claude
/// Code shows the user as a notice; none of them counts as a failed hook.
fn assert_a_refused_database_is_told_once(run: &Run, mock: &MockApi) {
    let db = Connection::open(run.env.data_dir.join("memory.db")).unwrap();
    db.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(db);
    mock.set_script(vec![
        Reply::ToolUse {
            id: "toolu_e2e_refused".into(),
            name: "Bash".into(),
            input: json!({"command": "echo refused", "description": "Echo"}),
        },
        Reply::Text(SECOND_ANSWER.into()),
    ]);
    let events = run.session_events("refused", SECOND_PROMPT);
    let notices: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "system" && e["subtype"] == "informational")
        .filter_map(|e| e["content"].as_str())
        .filter(|text| text.contains("claude-mem"))
        .collect();
    assert_eq!(
        notices.len(),
        1,
        "the user should be told once; notices: {notices:#?}"
    );
    assert!(
        notices[0].contains("claude-mem is not recording")
            && notices[0].contains("newer than this claude-mem"),
        "{}",
        notices[0]
    );
    let failed: Vec<&Value> = events
        .iter()
        .filter(|e| e["subtype"] == "hook_response" && e["outcome"] != "success")
        .collect();
    assert!(failed.is_empty(), "hooks counted as failed: {failed:#?}");
    let spilled = fs::read_dir(run.env.data_dir.join("spill"))
        .unwrap()
        .count();
    assert!(
        spilled >= 3,
        "the session's events were not kept: {spilled}"
    );
}

/// What a user would look for after one session: it is there, closed, with its prompt, both tool
/// calls linked to that prompt, the file they wrote, and the request to summarize the turn.
fn assert_first_session(db: &Connection, session_id: &str, project: &Path, written: &Path) {
    let sessions = table(
        db,
        "SELECT session_id, project_dir, status, end_reason, ended_at IS NOT NULL AS ended,
                prompt_count, last_assistant_message
           FROM sessions",
        (),
    );
    assert_eq!(
        sessions,
        [
            json!({"session_id": session_id, "project_dir": project, "status": "closed",
                "end_reason": "other", "ended": 1, "prompt_count": 1,
                "last_assistant_message": FIRST_ANSWER})
        ],
        "the sessions table"
    );

    let prompts = table(
        db,
        "SELECT prompt_number, prompt_text, prompt_id FROM user_prompts WHERE session_id = ?1",
        [session_id],
    );
    let prompt_id = prompts[0]["prompt_id"].clone();
    assert!(
        prompt_id.is_string(),
        "the prompt has no prompt_id to link captures to"
    );
    assert_eq!(
        prompts,
        [json!({"prompt_number": 1, "prompt_text": FIRST_PROMPT, "prompt_id": prompt_id})]
    );

    assert_its_tool_calls(db, session_id, &prompt_id, written);
    assert_its_summary_request_and_events(db, session_id, &prompt_id);
}

/// Both tool calls of the first session captured, linked to its prompt `prompt_id`, with
/// their input and the file the Write touched.
fn assert_its_tool_calls(db: &Connection, session_id: &str, prompt_id: &Value, written: &Path) {
    let observations = table(
        db,
        "SELECT tool_name, tool_use_id, event, prompt_id, status,
                json_type(raw_output, '$.tool_response') AS response
           FROM pending_queue WHERE session_id = ?1 AND kind = 'observation'
          ORDER BY created_at, id",
        [session_id],
    );
    let observation = |tool: &str, id: &str| {
        json!({"tool_name": tool, "tool_use_id": id, "event": "PostToolUse",
               "prompt_id": prompt_id, "status": "raw", "response": "object"})
    };
    assert_eq!(
        observations,
        [
            observation("Bash", "toolu_e2e_bash"),
            observation("Write", "toolu_e2e_write")
        ],
        "the captured tool calls"
    );
    let details = table(
        db,
        "SELECT json_extract(raw_output, '$.tool_input.command') AS command,
                json_extract(raw_output, '$.tool_input.content') AS content,
                files_touched
           FROM pending_queue WHERE session_id = ?1 AND kind = 'observation'
          ORDER BY created_at, id",
        [session_id],
    );
    assert_eq!(details[0]["command"], BASH_COMMAND);
    assert_eq!(details[1]["content"], WRITTEN_TEXT);
    let files: Value = serde_json::from_str(details[1]["files_touched"].as_str().unwrap()).unwrap();
    assert_eq!(
        files,
        json!([written]),
        "files_touched of the Write capture"
    );
}

/// The request to summarize the first session's turn, and its lifecycle events in order.
fn assert_its_summary_request_and_events(db: &Connection, session_id: &str, prompt_id: &Value) {
    let summaries = table(
        db,
        "SELECT prompt_id, status,
                json_extract(raw_output, '$.last_assistant_message') AS last_assistant_message
           FROM pending_queue WHERE session_id = ?1 AND kind = 'summary'",
        [session_id],
    );
    assert_eq!(
        summaries,
        [json!({"prompt_id": prompt_id, "status": "raw", "last_assistant_message": FIRST_ANSWER})],
        "the summary requests"
    );

    let events = table(
        db,
        "SELECT event FROM event_log WHERE session_id = ?1 ORDER BY created_at, id",
        [session_id],
    );
    assert_eq!(
        events,
        [
            json!({"event": "session_start"}),
            json!({"event": "stop"}),
            json!({"event": "session_end"})
        ]
    );
}

/// The rows of a query as JSON objects keyed by column name, so one `assert_eq!` shows a whole
/// row when it differs.
fn table(db: &Connection, sql: &str, params: impl rusqlite::Params) -> Vec<Value> {
    let mut statement = db.prepare(sql).unwrap();
    let names: Vec<String> = statement.column_names().map(String::from).collect();
    let rows = statement
        .query_map(params, |row| {
            let mut object = serde_json::Map::new();
            for (i, name) in names.iter().enumerate() {
                let value = match row.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => json!(n),
                    ValueRef::Real(x) => json!(x),
                    ValueRef::Text(t) | ValueRef::Blob(t) => json!(String::from_utf8_lossy(t)),
                };
                object.insert(name.clone(), value);
            }
            Ok(Value::Object(object))
        })
        .unwrap();
    rows.collect::<rusqlite::Result<_>>().unwrap()
}

/// Registers the hooks in `$HOME/.claude/settings.json` the way a user does, telling
/// install-hooks which Claude Code it is for (so PostToolUseFailure is registered too).
fn install_hooks(run: &Run) {
    let bin = Path::new(env!("CARGO_BIN_EXE_claude-mem"));
    let out = run
        .scrubbed(bin)
        .arg("install-hooks")
        .env("CLAUDE_MEM_CLAUDE_BIN", &run.claude)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "install-hooks failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("MCP server: registered with Claude Code as claude-mem (user scope)"),
        "install-hooks did not register the MCP server:\n{said}"
    );
    let settings = fs::read_to_string(run.env.home().join(".claude/settings.json")).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            settings.contains(&format!("\"{event}\"")),
            "{event} missing:\n{settings}"
        );
    }
}

/// Everything one `claude -p` run needs.
/// A run of `claude` in `env` with `project` (made already) as its folder, against a mock of
/// the API, and what a failure prints. Claude Code reports the project dir resolved; so must
/// we, or a /tmp symlink (macOS) would make comparisons fail for the wrong reason.
fn sandbox(claude: PathBuf, env: Env, project: &Path) -> (Run, MockApi, Diagnostics) {
    let mock = MockApi::start(Duration::from_secs(600)).unwrap();
    let diagnostics = Diagnostics {
        root: env.root.path().to_path_buf(),
        home: env.home(),
        data_dir: env.data_dir.clone(),
    };
    let run = Run {
        claude,
        env,
        project: project.canonicalize().unwrap(),
        base_url: mock.base_url(),
    };
    (run, mock, diagnostics)
}

struct Run {
    claude: PathBuf,
    /// The sandbox; each run leaves its debug log and output at its root, for `Diagnostics`.
    env: Env,
    project: PathBuf,
    base_url: String,
}

struct Session {
    session_id: String,
    answer: String,
}

impl Run {
    /// `program` with none of the developer's environment (their API key, CLAUDE_CONFIG_DIR,
    /// CLAUDE_MEM_* settings), and with everything that would make the CLI call out turned off.
    fn scrubbed(&self, program: &Path) -> Command {
        // The queue stays as the session left it (CLAUDE_MEM_COMPRESS=off: tests/cli/compress/
        // drives compression).
        let mut cmd = self.env.command_of(program);
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-e2e-dummy")
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_BUG_COMMAND", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1")
            .current_dir(&self.project)
            .stdin(Stdio::null());
        if harness::is_root() {
            // Claude Code refuses --dangerously-skip-permissions to root outside a sandbox.
            cmd.env("IS_SANDBOX", "1");
        }
        cmd
    }

    /// One non-interactive session; panics unless it ends in time with a JSON result.
    fn session(&self, label: &str, prompt: &str) -> Session {
        let stdout = self.run_claude(label, prompt, &["--output-format", "json"]);
        let result: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|err| panic!("claude -p ({label}) printed no JSON result: {err}"));
        Session {
            session_id: result["session_id"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            answer: result["result"].as_str().unwrap_or_default().to_string(),
        }
    }

    /// One non-interactive session, as the stream of events Claude Code reports (hook runs and
    /// the notices a user sees included).
    fn session_events(&self, label: &str, prompt: &str) -> Vec<Value> {
        let stdout = self.run_claude(
            label,
            prompt,
            &["--output-format", "stream-json", "--verbose"],
        );
        stdout
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("claude -p ({label}) printed {line:?}: {err}"))
            })
            .collect()
    }

    /// Runs `claude -p prompt` with `format_args`; panics unless it ends in time and well.
    /// Returns its stdout.
    fn run_claude(&self, label: &str, prompt: &str, format_args: &[&str]) -> String {
        let logs = self.env.root.path();
        let debug = logs.join(format!("claude-{label}.debug.log"));
        let stdout_path = logs.join(format!("claude-{label}.stdout"));
        let stderr_path = logs.join(format!("claude-{label}.stderr"));
        let started = Instant::now();
        let mut child = self
            .scrubbed(&self.claude)
            .args(["-p", prompt, "--dangerously-skip-permissions"])
            .args(format_args)
            .arg("--debug-file")
            .arg(&debug)
            .stdout(File::create(&stdout_path).unwrap())
            .stderr(File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        let status = wait_or_kill(&mut child, SESSION_LIMIT).unwrap();
        let Some(status) = status else {
            panic!("claude -p ({label}) did not finish within {SESSION_LIMIT:?}");
        };
        eprintln!("e2e: {label} session took {:.1?}", started.elapsed());
        let stdout = fs::read_to_string(&stdout_path).unwrap();
        assert!(status.success(), "claude -p ({label}) exited with {status}");
        stdout
    }
}

/// Prints what a failure needs to be understood: Claude Code's debug logs (each hook's result),
/// its output, our own log. Only when the test fails; the temp dir goes away afterwards.
struct Diagnostics {
    root: PathBuf,
    home: PathBuf,
    data_dir: PathBuf,
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        if !thread::panicking() {
            return;
        }
        let mut files: Vec<PathBuf> = fs::read_dir(&self.root)
            .map(|dir| {
                dir.flatten()
                    // Not the `latest` symlink the CLI puts next to its debug log.
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files.push(self.home.join(".claude/settings.json"));
        files.push(self.data_dir.join("memory.log"));
        for file in files {
            match fs::read_to_string(&file) {
                Ok(text) => eprintln!("---- {} ----\n{text}", file.display()),
                Err(err) => eprintln!("---- {}: {err}", file.display()),
            }
        }
    }
}
