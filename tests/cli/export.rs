//! `claude-mem export` and `import` through the real binary: a round trip between two fresh
//! data dirs gives the same rows; importing twice stores once; files of a newer format or with
//! a bad line store nothing; what is read goes through the privacy and secret rules.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::harness;
use crate::harness::memory::*;
use crate::harness::*;
use serde_json::{Value, json};

const A: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const OLD: &str = "33333333-3333-4333-8333-333333333333";
const TOKEN: &str = "ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i";

/// Every row of the tables an export carries, each value as text, in a stable order.
fn rows(env: &Env) -> Vec<Vec<String>> {
    let db = env.db();
    let mut all = Vec::new();
    for (table, key) in [
        ("sessions", "session_id"),
        ("user_prompts", "id"),
        ("private_turns", "prompt_id"),
        ("pending_queue", "id"),
        ("event_log", "id"),
        ("memories", "id"),
        ("summaries", "id"),
    ] {
        let mut stmt = db
            .prepare(&format!("SELECT * FROM {table} ORDER BY {key}"))
            .unwrap();
        let columns = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..columns)
                    .map(|i| Ok(format!("{:?}", r.get::<_, rusqlite::types::Value>(i)?)))
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .unwrap();
        all.push(vec![table.to_string()]);
        all.extend(rows.map(Result::unwrap));
    }
    all
}

/// A memory of every kind of row: two projects, a private turn, a failed call, an acked item,
/// a session that ended, and an old one whose calls retention reduced.
fn memory(env: &Env) {
    session(env, A, PROJECT, &["alpha1", "alpha2"]);
    session(env, B, "/home/dev/other", &["beta1"]);
    session(env, OLD, PROJECT, &["old1"]);
    assert_ack(&env.hook(
        "capture",
        &event(
            "PostToolUse",
            OLD,
            PROJECT,
            json!({"prompt_id": "old", "tool_name": "Bash", "tool_use_id": "long",
                   "tool_input": {"command": "cargo test"},
                   "tool_response": {"stdout": "test ok\n".repeat(2000), "stderr": ""}}),
        ),
    ));
    age(env, OLD, 40);
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            A,
            PROJECT,
            json!({"prompt_id": "hidden", "prompt": "<private>no</private>"}),
        ),
    ));
    assert_ack(&env.hook(
        "capture",
        &event(
            "PostToolUseFailure",
            A,
            PROJECT,
            json!({"prompt_id": "visible", "tool_name": "Read", "tool_use_id": "failed",
                   "tool_input": {"file_path": "/home/dev/shop/nope.rs"},
                   "error": "File does not exist.", "is_interrupt": false}),
        ),
    ));
    let claimed = ok(&run(env, &["queue", "claim", "--limit", "1"]));
    let item: Value = serde_json::from_str(claimed.lines().next().unwrap()).unwrap();
    ok(&run(
        env,
        &[
            "queue",
            "ack",
            "--token",
            item["lease_token"].as_str().unwrap(),
            item["id"].as_str().unwrap(),
        ],
    ));
    ok(&run(env, &["prune"]));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE raw_output LIKE '%\"digest\":1%'"),
        1,
        "the old session's call is a digest"
    );
    assert_ack(&env.hook(
        "cleanup",
        &event(
            "SessionEnd",
            B,
            "/home/dev/other",
            json!({"reason": "other"}),
        ),
    ));
    env.wait_for_maintenance();
}

/// A `memory` record of session [`A`] as an import from elsewhere would have it, with
/// `changed` fields replaced.
fn memory_record(changed: Value) -> Value {
    let mut record = json!({"type": "memory", "id": "01950000-0000-7000-8000-0000000000a1",
        "key": "import/elsewhere/1", "session_id": A, "project_dir": PROJECT,
        "prompt_number": 1, "memory_type": "decision", "title": "Keep the queue in SQLite",
        "subtitle": "xisubtitle", "narrative": "xinarrative", "facts": ["xifact"],
        "concepts": ["trade-off"], "files_read": [], "files_modified": ["/home/dev/shop/a.rs"],
        "queue_ids": [], "origin": "import", "model": null,
        "extra": {"discovery_tokens": 1200, "text": "xiextra"},
        "created_at": "2026-01-01T00:00:02.000Z"});
    record
        .as_object_mut()
        .unwrap()
        .extend(changed.as_object().unwrap().clone());
    record
}

/// A `summary` record of session [`A`], with `changed` fields replaced.
fn summary_record(changed: Value) -> Value {
    let mut record = json!({"type": "summary", "id": "01950000-0000-7000-8000-0000000000b1",
        "key": "import/elsewhere/s1", "session_id": A, "project_dir": PROJECT,
        "prompt_number": 1, "request": "xirequest", "investigated": "", "learned": "xilearned",
        "completed": "", "next_steps": "", "notes": "xinotes", "files_read": [],
        "files_edited": [], "queue_ids": [], "origin": "import", "model": null,
        "extra": null, "created_at": "2026-01-01T00:00:03.000Z"});
    record
        .as_object_mut()
        .unwrap()
        .extend(changed.as_object().unwrap().clone());
    record
}

fn import(env: &Env, file: &Path) -> std::process::Output {
    run(env, &["import", file.to_str().unwrap()])
}

#[test]
fn a_round_trip_between_two_fresh_data_dirs_gives_the_same_rows() {
    let source = Env::new();
    memory(&source);
    let file = source.root.path().join("memory.jsonl");
    let said = ok(&run(
        &source,
        &["export", "--all", "--output", file.to_str().unwrap()],
    ));
    assert!(
        said.starts_with(
            "Exported 3 sessions, 4 prompts, 1 private turn, 6 tool calls, 4 summary requests"
        ),
        "{said}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let target = Env::new();
    let said = ok(&import(&target, &file));
    assert!(said.starts_with("Imported 3 sessions, 4 prompts"), "{said}");
    assert_eq!(rows(&target), rows(&source));
    // Twice stores once.
    let said = ok(&import(&target, &file));
    assert_eq!(
        said,
        format!(
            "Imported nothing from {}; all of it was here already.\n",
            file.display()
        )
    );
    assert_eq!(rows(&target), rows(&source));
    // What was imported is found, shown and forgotten like what was captured.
    assert_eq!(found(&target, "alpha2command"), ["Bash"]);

    // From stdin, and merged into a memory of its own.
    let merged = Env::new();
    session(
        &merged,
        "44444444-4444-4444-8444-444444444444",
        PROJECT,
        &["own1"],
    );
    let mut child = merged
        .command()
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        &std::fs::read(&file).unwrap(),
    )
    .unwrap();
    let said = ok(&child.wait_with_output().unwrap());
    assert!(said.contains("from stdin"), "{said}");
    assert_eq!(merged.count("SELECT COUNT(*) FROM sessions"), 4);
    assert_eq!(found(&merged, "own1command"), ["Bash"]);
    assert_eq!(found(&merged, "beta1command"), ["Bash"]);
}

#[test]
fn an_export_is_a_header_then_one_record_a_line_filtered_like_search() {
    let env = Env::new();
    memory(&env);
    let lines = |args: &[&str]| -> Vec<Value> {
        let mut all = vec!["export"];
        all.extend_from_slice(args);
        ok(&run(&env, &all))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let this_project = lines(&[]);
    assert_eq!(this_project[0]["format"], "claude-mem/1");
    assert_eq!(this_project[0]["filters"]["project"], PROJECT);
    let sessions = |records: &[Value]| -> Vec<String> {
        records
            .iter()
            .filter(|r| r["type"] == "session")
            .map(|r| r["session_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sessions(&this_project), [OLD, A]);
    let call = this_project
        .iter()
        .find(|r| r["type"] == "observation" && r["tool_name"] == "Bash")
        .unwrap();
    assert!(call["raw_output"].is_object() && call["files_touched"].is_array());
    assert_eq!(sessions(&lines(&["--all"])), [OLD, A, B]);
    assert_eq!(sessions(&lines(&["--session", short(B)])), [B]);
    let recent = lines(&["--all", "--since", "1d"]);
    assert_eq!(sessions(&recent), [A, B]);
    let types: Vec<&str> = recent[1..]
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    for kind in [
        "session",
        "prompt",
        "private_turn",
        "observation",
        "summary_request",
        "event",
    ] {
        assert!(types.contains(&kind), "{kind} in {types:?}");
    }
}

/// `text` written as `name` in `dir`; its path.
fn write_in(dir: &Path, name: &str, text: String) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The export `lines` with line `n` (from 1) replaced by `line`.
fn with_line(lines: &[&str], n: usize, line: &str) -> String {
    let mut changed = lines.to_vec();
    changed[n - 1] = line;
    changed.join("\n")
}

/// Exports (made from the good one's `lines`, in `dir`) whose header or line is not one this
/// release reads, each with what the refusal says.
fn bad_formats_and_lines(lines: &[&str], dir: &Path) -> Vec<(PathBuf, &'static str)> {
    vec![
        (
            write_in(
                dir,
                "newer.jsonl",
                with_line(lines, 1, r#"{"format":"claude-mem/2"}"#),
            ),
            "newer than this claude-mem reads (claude-mem/1): upgrade claude-mem",
        ),
        (
            write_in(dir, "other.jsonl", "{\"hello\": 1}\n".into()),
            "not a claude-mem export",
        ),
        (write_in(dir, "empty.jsonl", String::new()), "is empty"),
        (
            write_in(
                dir,
                "torn.jsonl",
                with_line(lines, 3, r#"{"type":"prompt","id":"x","#),
            ),
            "line 3: ",
        ),
        (
            write_in(
                dir,
                "missing.jsonl",
                with_line(lines, 4, r#"{"type":"prompt","id":"x"}"#),
            ),
            "line 4: missing field",
        ),
        (
            write_in(
                dir,
                "unknown.jsonl",
                with_line(lines, 5, r#"{"type":"widget","id":"x"}"#),
            ),
            "line 5: a record of type \"widget\"",
        ),
    ]
}

/// Exports whose records are well formed but hold a value no record may hold, each with what
/// the refusal says.
fn bad_values(lines: &[&str], dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let observation = lines
        .iter()
        .find(|l| l.contains("\"type\":\"observation\""))
        .unwrap();
    vec![
        (
            write_in(
                dir,
                "memory.jsonl",
                with_line(
                    lines,
                    2,
                    &memory_record(json!({"origin": "elsewhere"})).to_string(),
                ),
            ),
            "line 2: origin cannot be \"elsewhere\"",
        ),
        (
            write_in(
                dir,
                "facts.jsonl",
                with_line(
                    lines,
                    2,
                    &memory_record(json!({"facts": "one fact"})).to_string(),
                ),
            ),
            "line 2: facts must be an array of strings",
        ),
        (
            write_in(
                dir,
                "priority.jsonl",
                with_line(
                    lines,
                    lines.len(),
                    &observation
                        .replace("\"priority\":0", "\"priority\":7")
                        .replace("\"priority\":1", "\"priority\":7")
                        .replace("\"priority\":2", "\"priority\":7"),
                ),
            ),
            "priority cannot be 7",
        ),
    ]
}

#[test]
fn a_newer_format_or_a_bad_line_is_refused_and_nothing_is_stored() {
    let source = Env::new();
    memory(&source);
    let good = ok(&run(&source, &["export", "--all"]));
    let lines: Vec<&str> = good.lines().collect();
    let dir = source.root.path();
    let mut cases = bad_formats_and_lines(&lines, dir);
    cases.extend(bad_values(&lines, dir));
    let fresh = Env::new();
    let before = rows(&source);
    for (file, says) in &cases {
        let err = failed(&import(&fresh, file), 1);
        assert!(err.contains(says), "{}: {err}", file.display());
        assert!(!fresh.data_dir.exists(), "nothing was created");
        // Into a memory that has rows: not one changes.
        failed(&import(&source, file), 1);
        assert_eq!(rows(&source), before);
    }
}

#[test]
fn what_is_imported_goes_through_the_privacy_and_secret_rules() {
    let env = Env::new();
    let file = env.root.path().join("leaky.jsonl");
    let header = json!({"format": "claude-mem/1"});
    let session = json!({"type": "session", "session_id": A, "project_dir": PROJECT,
        "cwd": PROJECT, "transcript_path": null, "source": "startup", "model": null,
        "status": "closed", "prompt_count": 1, "last_assistant_message": format!("use {TOKEN}"),
        "started_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
        "ended_at": null, "end_reason": null});
    let prompt = json!({"type": "prompt", "id": "01950000-0000-7000-8000-000000000001",
        "session_id": A, "prompt_id": "p1", "prompt_number": 1,
        "prompt_text": format!("deploy with {TOKEN} <private>zanzibarquux</private>"),
        "truncated": false, "created_at": "2026-01-01T00:00:00.000Z"});
    let call = json!({"type": "observation", "id": "01950000-0000-7000-8000-000000000002",
        "session_id": A, "tool_use_id": "t1", "prompt_id": "p1", "prompt_number": 1,
        "event": "PostToolUse", "tool_name": "Read", "project_dir": PROJECT,
        "files_touched": ["/home/dev/shop/.env"],
        "raw_output": {"tool_input": {"file_path": "/home/dev/shop/.env"},
                       "tool_response": {"file": {"content": "DB_PASSWORD=quetzalcoatl77"}}},
        "priority": 2, "status": "raw", "attempts": 0, "claimed_by": null, "claimed_at": null,
        "lease_until": null, "last_error": null, "payload_bytes": 100, "truncated": false,
        "created_at": "2026-01-01T00:00:01.000Z", "updated_at": "2026-01-01T00:00:01.000Z"});
    let memory = memory_record(json!({
        "narrative": format!("pushed with {TOKEN}"),
        "facts": [format!("the token is {TOKEN}"), "<private>zanzibarfact</private>"],
        "extra": {"text": format!("raw {TOKEN}")}}));
    let summary = summary_record(json!({"learned": format!("the token {TOKEN} works")}));
    std::fs::write(
        &file,
        format!("{header}\n{session}\n{prompt}\n{call}\n{memory}\n{summary}\n"),
    )
    .unwrap();
    let said = ok(&import(&env, &file));
    assert_eq!(
        said,
        format!(
            "Imported 1 session, 1 prompt, 1 tool call, 1 memory, 1 summary from {}.\n",
            file.display()
        )
    );
    for secret in [TOKEN, "zanzibarquux", "quetzalcoatl77", "zanzibarfact"] {
        assert_eq!(files_holding(&env.data_dir, secret), Vec::<PathBuf>::new());
    }
    let stored: String = env
        .db()
        .query_row("SELECT prompt_text FROM user_prompts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, "deploy with [REDACTED:github-token] ");
    assert_eq!(
        ids(&env, "SELECT narrative || ' ' || facts FROM memories"),
        [r#"pushed with [REDACTED:github-token] ["the token is [REDACTED:github-token]",""]"#]
    );
    assert!(contains(
        &std::fs::read(env.db_path()).unwrap(),
        "[REDACTED:secret-file]"
    ));
}

/// Regression: an imported memory's type was stored and shown as it came, of any length: a
/// 10 KB type, key and line breaks included, was stored whole, and with it in a recent session
/// the session-start context was not handed at all. A type is a label: an unknown one is kept
/// (another tool's modes have types of their own), its secrets out, on one line, cut to 32
/// characters; an empty one is `change`. A row an earlier build imported is shown cut all the
/// same, in the context, `show` and the MCP answers.
#[test]
fn an_imported_memory_type_is_kept_as_a_short_label() {
    let env = Env::new();
    session(&env, A, PROJECT, &["alpha1"]);
    let long = format!("{TOKEN}\n{}", "ab ".repeat(5000));
    let file = env.root.path().join("types.jsonl");
    let records: Vec<String> = [("security_alert", "1"), ("", "2"), (long.as_str(), "3")]
        .iter()
        .map(|(kind, n)| {
            memory_record(json!({"memory_type": kind, "key": format!("elsewhere/{n}"),
                "id": format!("01950000-0000-7000-8000-00000000000{n}"),
                "title": format!("imported {n}")}))
            .to_string()
        })
        .collect();
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            json!({"format": "claude-mem/1"}),
            records.join("\n")
        ),
    )
    .unwrap();
    ok(&import(&env, &file));
    let kinds = ids(&env, "SELECT type FROM memories ORDER BY title");
    assert_eq!(kinds[..2], ["security_alert", "change"]);
    assert!(
        kinds[2].starts_with("[REDACTED:github-token] ab ab")
            && kinds[2].chars().count() <= 32
            && !kinds[2].contains('\n'),
        "{:?}",
        kinds[2]
    );
    assert!(!contains(&everything_on_disk(&env), TOKEN));

    // As an earlier build stored it: shown cut in the context, `show` and the MCP answers.
    env.db()
        .execute(
            "UPDATE memories SET type = ?1 WHERE title = 'imported 3'",
            [format!("huge\n{}", "ab ".repeat(5000))],
        )
        .unwrap();
    let start = event(
        "SessionStart",
        "next",
        PROJECT,
        json!({"source": "startup"}),
    );
    let out = env.hook("context", &start);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no context: {answer}"))
        .to_string();
    assert!(context.contains("    security_alert "), "{context}");
    let memory = ids(&env, "SELECT id FROM memories WHERE title = 'imported 3'").remove(0);
    let shown = ok(&run(&env, &["show", &memory]));
    let session = ok(&run(&env, &["show", A]));
    let json = ok(&run(&env, &["show", &memory, "--json"]));
    let mcp = mcp_get(&env, &memory);
    for (what, text) in [
        ("context", &context),
        ("show", &shown),
        ("show session", &session),
        ("show --json", &json),
        ("mcp get", &mcp),
    ] {
        assert!(text.contains("huge ab ab"), "{what}: {text}");
        assert!(!text.contains(&"ab ".repeat(20)), "{what}: {text}");
    }
}

/// The text of the MCP `get` tool's answer for `id`.
fn mcp_get(env: &Env, id: &str) -> String {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "get", "arguments": {"ids": [id]}}}),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let out = run_with_input(
        env.command().arg("mcp").env("CLAUDE_PROJECT_DIR", PROJECT),
        input.as_bytes(),
    );
    let answer: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 2)
        .unwrap();
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// What the compressor made, and what an import brought, go both ways whole: every column of
/// every memory and summary, each after its session.
#[cfg(unix)]
#[test]
fn memories_and_summaries_go_both_ways_equal_in_every_column() {
    let source = Env::new();
    session(&source, A, PROJECT, &["alpha1", "alpha2"]);
    compress(
        &source,
        A,
        &[
            harness::memory::memory("alpha1", &[1, 2]),
            harness::memory::memory("alpha2", &[3, 4]),
        ],
        summary("alphasum"),
    );
    session(&source, B, "/home/dev/other", &["beta1"]);
    compress(
        &source,
        B,
        &[harness::memory::memory("beta1", &[1, 2])],
        summary("betasum"),
    );
    // One from elsewhere, with the columns the compressor leaves empty.
    let file = source.root.path().join("elsewhere.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{}\n",
            json!({"format": "claude-mem/1"}),
            memory_record(json!({})),
            summary_record(json!({}))
        ),
    )
    .unwrap();
    assert!(ok(&import(&source, &file)).starts_with("Imported 1 memory, 1 summary from "));

    let exported = ok(&run(&source, &["export", "--all"]));
    let records: Vec<Value> = exported
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut of_b: Vec<&str> = records
        .iter()
        .skip_while(|r| r["session_id"] != B)
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    of_b.dedup();
    assert_eq!(
        of_b,
        [
            "session",
            "prompt",
            "observation",
            "summary_request",
            "event",
            "memory",
            "summary"
        ]
    );
    let imported = records
        .iter()
        .find(|r| r["type"] == "memory" && r["origin"] == "import")
        .unwrap();
    assert_eq!(imported["memory_type"], "decision");
    assert_eq!(imported["extra"]["discovery_tokens"], 1200);
    assert!(imported["facts"].is_array() && imported["queue_ids"].is_array());

    let target = Env::new();
    let copy = target.root.path().join("memory.jsonl");
    std::fs::write(&copy, &exported).unwrap();
    let said = ok(&import(&target, &copy));
    assert!(said.contains(", 4 memories, 3 summaries from "), "{said}");
    assert_eq!(rows(&target), rows(&source));
    assert_eq!(target.count("SELECT COUNT(*) FROM memories"), 4);
    // Twice stores once; found as where they came from.
    assert!(ok(&import(&target, &copy)).contains("all of it was here already"));
    assert_eq!(rows(&target), rows(&source));
    assert_eq!(found(&target, "alpha2narrative"), ["memory"]);
    assert_eq!(found(&target, "xinarrative"), ["memory"]);
    assert_eq!(found(&target, "betasumlearned"), ["summary"]);
}

/// Regression: what was imported without its session (a file that has no session record for
/// it) had no session row, and `forget --project` and even `forget --all` left it.
#[test]
fn what_was_imported_without_its_session_is_forgotten_with_its_project() {
    let env = Env::new();
    memory(&env);
    const GONE: &str = "99999999-9999-4999-8999-999999999999";
    let file = env.root.path().join("partial.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{}\n",
            json!({"format": "claude-mem/1"}),
            memory_record(json!({"session_id": GONE, "narrative": "orphannarrative"})),
            summary_record(json!({"session_id": GONE, "learned": "orphanlearned"}))
        ),
    )
    .unwrap();
    // With a tool call and a prompt of that session, as such a file brings them.
    let orphans = |env: &Env| {
        assert!(ok(&import(env, &file)).starts_with("Imported 1 memory, 1 summary from "));
        env.db()
            .execute_batch(&format!(
                "INSERT OR IGNORE INTO pending_queue (id, session_id, event, tool_name, project_dir,
                     raw_output, created_at, updated_at)
                 VALUES ('01950000-0000-7000-8000-0000000000c1', '{GONE}', 'PostToolUse',
                     'Bash', '{PROJECT}', '{{\"tool_input\":\"orphancall\"}}',
                     '2026-01-01T00:00:04.000Z', '2026-01-01T00:00:04.000Z');
                 INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_number, prompt_text,
                     created_at)
                 VALUES ('01950000-0000-7000-8000-0000000000d1', '{GONE}', 1, 'orphanprompt',
                     '2026-01-01T00:00:01.000Z');"
            ))
            .unwrap();
    };
    orphans(&env);
    let left = |env: &Env| -> (i64, i64, i64, i64) {
        env.db()
            .query_row(
                "SELECT (SELECT COUNT(*) FROM memories WHERE session_id = ?1),
                        (SELECT COUNT(*) FROM summaries WHERE session_id = ?1),
                        (SELECT COUNT(*) FROM pending_queue WHERE session_id = ?1),
                        (SELECT COUNT(*) FROM user_prompts WHERE session_id = ?1)",
                [GONE],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap()
    };

    ok(&run(
        &env,
        &["forget", "--project", "/home/dev/other", "--yes"],
    ));
    assert_eq!(
        left(&env),
        (1, 1, 1, 1),
        "another project's forget took them"
    );

    // The project's forget takes what names the project; a prompt names none.
    let said = ok(&run(&env, &["forget", "--project", PROJECT, "--yes"]));
    assert!(
        said.contains("1 memory") && said.contains("1 summary"),
        "{said}"
    );
    assert_eq!(left(&env), (0, 0, 0, 1));
    for text in ["orphannarrative", "orphancall"] {
        assert_eq!(files_holding(&env.data_dir, text), Vec::<PathBuf>::new());
    }

    // A forget of every project, by time, takes all of them.
    orphans(&env);
    ok(&run(
        &env,
        &["forget", "--all", "--since", "2000-01-01", "--yes"],
    ));
    assert_eq!(left(&env), (0, 0, 0, 0));
    assert_eq!(
        files_holding(&env.data_dir, "orphanprompt"),
        Vec::<PathBuf>::new()
    );
}

/// Regression: `import /dev/stdin` and `import <(cmd)` imported nothing and exited 0 (the file
/// was opened again for the second reading, and a pipe's bytes were gone), and `import` of a
/// FIFO hung (the second open waited for a writer that had left).
#[cfg(unix)]
#[test]
fn a_pipe_or_a_fifo_is_read_as_a_stream() {
    let source = Env::new();
    memory(&source);
    let file = source.root.path().join("memory.jsonl");
    ok(&run(
        &source,
        &["export", "--all", "--output", file.to_str().unwrap()],
    ));
    let export = std::fs::read(&file).unwrap();
    let imported = |target: &Env, out: std::process::Output| {
        let said = ok(&out);
        assert!(said.starts_with("Imported 3 sessions, 4 prompts"), "{said}");
        assert_eq!(rows(target), rows(&source));
    };

    let target = Env::new();
    let mut child = target
        .command()
        .args(["import", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &export).unwrap();
    drop(child.stdin.take());
    imported(&target, child.wait_with_output().unwrap());

    let target = Env::new();
    let script = format!(
        "'{}' import <(cat '{}')",
        env!("CARGO_BIN_EXE_claude-mem"),
        file.display()
    );
    let out = target
        .command_of(Path::new("bash"))
        .args(["-c", &script])
        .output()
        .unwrap();
    imported(&target, out);

    let target = Env::new();
    let fifo = target.root.path().join("memory.fifo");
    mkfifo(&fifo, 0o600);
    let writer = {
        let (fifo, export) = (fifo.clone(), export.clone());
        // Like `cat memory.jsonl > memory.fifo`: it writes once and leaves.
        std::thread::spawn(move || {
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let _ = std::io::Write::write_all(&mut pipe, &export);
        })
    };
    let mut child = target
        .command()
        .args(["import", fifo.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if wait_or_kill(&mut child, std::time::Duration::from_secs(30))
        .unwrap()
        .is_none()
    {
        // Let the writer go, whatever the import did.
        let _ = std::fs::OpenOptions::new().read(true).open(&fifo);
        panic!("import of a FIFO hung");
    }
    writer.join().unwrap();
    imported(&target, child.wait_with_output().unwrap());

    let out = run(&target, &["import", target.root.path().to_str().unwrap()]);
    let err = failed(&out, 1);
    assert!(err.contains("is a folder"), "{err}");
}

/// Regression: an export made by an earlier version can hold calls of claude-mem's own MCP
/// tools (a `get` answer quotes a whole other session), which the hooks no longer store and
/// schema v8 deleted; import stored them again. It skips them now, and says how many.
#[test]
fn import_skips_calls_of_our_own_mcp_tools_and_says_so() {
    let env = Env::new();
    let file = env.root.path().join("old.jsonl");
    let header = json!({"format": "claude-mem/1"});
    let session = json!({"type": "session", "session_id": A, "project_dir": PROJECT,
        "cwd": PROJECT, "transcript_path": null, "source": "startup", "model": null,
        "status": "closed", "prompt_count": 1, "last_assistant_message": null,
        "started_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
        "ended_at": null, "end_reason": null});
    let call = |n: u32, tool: &str, text: &str| {
        json!({"type": "observation", "id": format!("01950000-0000-7000-8000-00000000000{n}"),
            "session_id": A, "tool_use_id": format!("t{n}"), "prompt_id": "p1",
            "prompt_number": 1, "event": "PostToolUse", "tool_name": tool,
            "project_dir": PROJECT, "files_touched": [],
            "raw_output": {"tool_input": {"ids": ["0a1b2c3d"]},
                           "tool_response": [{"type": "text", "text": text}]},
            "priority": 1, "status": "raw", "attempts": 0, "claimed_by": null,
            "claimed_at": null, "lease_until": null, "last_error": null, "payload_bytes": 100,
            "truncated": false, "created_at": "2026-01-01T00:00:01.000Z",
            "updated_at": "2026-01-01T00:00:01.000Z"})
    };
    let lines = [
        header,
        session,
        call(1, "Bash", "keptoutput"),
        call(2, "mcp__claude-mem__get", "ownanswerone"),
        call(3, "mcp__plugin_memory_claude-mem__search", "ownanswertwo"),
        call(4, "mcp__memory__search", "otheranswer"),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    assert_eq!(
        ok(&import(&env, &file)),
        format!(
            "Imported 1 session, 2 tool calls from {}; skipped 2 calls of claude-mem's own MCP \
             tools (an earlier version stored them).\n",
            file.display()
        )
    );
    assert_eq!(
        ids(
            &env,
            "SELECT tool_name FROM pending_queue ORDER BY tool_use_id"
        ),
        ["Bash", "mcp__memory__search"]
    );
    for own in ["ownanswerone", "ownanswertwo"] {
        assert_eq!(files_holding(&env.data_dir, own), Vec::<PathBuf>::new());
    }
    assert_eq!(
        ok(&import(&env, &file)),
        format!(
            "Imported nothing from {}; all of it was here already; skipped 2 calls of \
             claude-mem's own MCP tools (an earlier version stored them).\n",
            file.display()
        )
    );
}
