//! The real Claude Code CLI as the compressor, against the mock of the API: what it sends
//! (a small model, no tools but the answer's, our schema, our instructions, our digest, none
//! of the user's CLAUDE.md), and what comes of the scripted answers.

use std::process::Stdio;
use std::time::Instant;

use super::*;
use crate::harness::claude_cli;
use crate::harness::mock_api::{MockApi, Reply};

struct Cli {
    env: Env,
    mock: MockApi,
}

fn cli() -> Option<Cli> {
    let Cli { env, mock } = logged_out()?;
    let env = env.with("ANTHROPIC_API_KEY", "sk-ant-compress-dummy");
    Some(Cli { env, mock })
}

/// The CLI with no login at all (and the mock as its API all the same, so that a login it
/// found elsewhere would reach nothing real).
fn logged_out() -> Option<Cli> {
    let claude = claude_cli::find()?;
    let mock = MockApi::start(Duration::from_secs(600)).unwrap();
    let env = Env::new()
        .with("CLAUDE_MEM_CLAUDE_BIN", claude.to_str().unwrap())
        .with("ANTHROPIC_BASE_URL", &mock.base_url())
        .with("DISABLE_TELEMETRY", "1")
        .with("DISABLE_AUTOUPDATER", "1")
        .with("DISABLE_ERROR_REPORTING", "1")
        .with("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let env = if harness::is_root() {
        env.with("IS_SANDBOX", "1")
    } else {
        env
    };
    // Instructions of the user's that the compressor must neither follow nor pay for.
    fs::create_dir_all(env.home().join(".claude")).unwrap();
    fs::write(
        env.home().join(".claude/CLAUDE.md"),
        "USER-CLAUDE-MD-MARKER\n",
    )
    .unwrap();
    Some(Cli { env, mock })
}

fn answer() -> Value {
    json!({"observations": [{"type": "bugfix", "title": "Discounts rounded once per order",
        "narrative": "Discounts were rounded per item; now once on the order total.",
        "facts": ["round_discount is in src/billing.rs"], "concepts": ["problem-solution"],
        "files_read": ["src/billing.rs"], "files_modified": ["src/billing.rs"],
        "sources": [4, 5]}],
        "summary": {"request": "Fix the discount rounding", "investigated": "billing",
                    "learned": "per-item rounding lost cents", "completed": "fixed",
                    "next_steps": ""}})
}

#[test]
fn the_cli_is_asked_for_our_schema_with_a_small_model_and_no_tools() {
    let Some(Cli { env, mock }) = cli() else {
        return;
    };
    working_session(&env, "s1");
    mock.set_structured(vec![Reply::structured(answer())]);
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("Compressed 6 items of 1 session into 1 memory and 1 summary"),
        "{out}"
    );

    let requests = mock.requests();
    let asks: Vec<_> = requests.iter().filter(|r| r.wants_structure()).collect();
    assert_eq!(asks.len(), 1, "one call: {requests:#?}");
    let body = &asks[0].body;
    assert!(
        body["model"].as_str().unwrap().contains("haiku"),
        "{}",
        body["model"]
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["defer_loading"] != true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["StructuredOutput"], "no tool but the answer's");
    let schema = &body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .unwrap()["input_schema"];
    assert_eq!(schema["required"], json!(["observations", "summary"]));
    assert_eq!(
        schema["properties"]["observations"]["items"]["properties"]["type"]["enum"],
        json!([
            "bugfix",
            "feature",
            "refactor",
            "change",
            "discovery",
            "decision"
        ])
    );
    assert!(asks[0].has_text_with(&["You write memories of a Claude Code session"]));
    assert!(asks[0].has_text_with(&[
        "Turn 1, the user asked: Fix the discount rounding in billing",
        "#1 read src/billing.rs · #2 read src/order.rs",
    ]));
    assert!(
        !asks[0].has_text_with(&["USER-CLAUDE-MD-MARKER"]),
        "the user's CLAUDE.md went to the compressor"
    );
    assert!(!asks[0].has_text_with(&[PROJECT, "Primary working directory"]));

    let memory = rows(
        &env,
        "SELECT type, files_modified, json_array_length(queue_ids), model FROM memories",
    );
    assert_eq!(memory.len(), 1);
    assert_eq!(memory[0][0], "bugfix");
    assert_eq!(memory[0][1], "[\"/home/dev/shop/src/billing.rs\"]");
    assert_eq!(memory[0][2], 2);
    assert!(
        memory[0][3].as_str().unwrap().contains("haiku"),
        "{memory:?}"
    );
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    // The spend as the CLI reported it: the mock's usage (12 in, 8 out) and a cost.
    let spend = rows(
        &env,
        "SELECT input_tokens, output_tokens, estimated, cost_usd > 0, outcome FROM compress_calls",
    );
    assert_eq!(spend, [json!([12, 8, 0, 1, "stored"])]);
}

/// A working session in Claude Code with the hooks installed: when it ends, its
/// SessionEnd starts the compressor, which asks the CLI, and the session's memories are
/// stored (the compressor's own session is recorded nowhere); the next session's context,
/// as it reaches the model, carries them.
#[test]
fn a_session_that_ends_is_compressed_by_the_cli_and_the_next_one_is_told() {
    let Some(Cli { env, mock }) = cli() else {
        return;
    };
    let env = env.with("CLAUDE_MEM_COMPRESS", "on");
    let claude = claude_cli::find().unwrap();
    let project = env.root.path().join("project");
    fs::create_dir(&project).unwrap();
    let project = project.canonicalize().unwrap();
    ok(&env.command().arg("install-hooks").output().unwrap());
    script_a_working_session(&mock, &project);
    claude_session(&env, &claude, &project, "Fix the discount rounding");
    assert_its_end_compressed_it(&env, &mock);

    mock.set_script(vec![Reply::Text(
        "We rounded discounts once per order.".into(),
    )]);
    let mut second = answer();
    second["observations"] = json!([]);
    mock.set_structured(vec![Reply::structured(second)]);
    let before = mock.requests().len();
    claude_session(&env, &claude, &project, "What did we change last time?");
    let told = mock.requests()[before..].iter().any(|r| {
        r.is_main_turn()
            && !r.wants_structure()
            && r.has_text_with(&[
                "<claude-mem-context>",
                "  memories:\n    bugfix ",
                ": Discounts rounded once per order\n",
                "  asked: Fix the discount rounding\n",
            ])
    });
    assert!(told, "the next session's context did not carry the memory");
    // The compressor its end started is done before the mock goes away.
    wait_until(|| env.count("SELECT COUNT(*) FROM summaries") == 2);
}

/// The model's side of a session of work in `project`: a Bash call, a Write, a closing
/// message; and the compressor's answer, a memory from the two calls.
fn script_a_working_session(mock: &MockApi, project: &Path) {
    mock.set_script(vec![
        Reply::ToolUse {
            id: "toolu_bash".into(),
            name: "Bash".into(),
            input: json!({"command": "echo fixed > fixed.txt", "description": "Mark it"}),
        },
        Reply::ToolUse {
            id: "toolu_write".into(),
            name: "Write".into(),
            input: json!({"file_path": project.join("NOTES.md"),
                          "content": "Discounts are rounded once per order.\n"}),
        },
        Reply::Text("Fixed: discounts are rounded once per order.".into()),
    ]);
    let mut first = answer();
    first["observations"][0]["sources"] = json!([1, 2]);
    mock.set_structured(vec![Reply::structured(first)]);
}

/// `claude -p <prompt>` in `project` with the hooks installed, as a user runs it; it must
/// succeed.
fn claude_session(env: &Env, claude: &Path, project: &Path, prompt: &str) {
    let mut session = env.command_of(claude);
    session
        .args(["-p", prompt, "--dangerously-skip-permissions"])
        .args(["--output-format", "json"])
        .current_dir(project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = session.spawn().unwrap();
    let status = claude_cli::wait_or_kill(&mut child, Duration::from_secs(120)).unwrap();
    assert!(
        status.is_some_and(|s| s.success()),
        "claude -p failed: {status:?}"
    );
}

/// The compressor the session's end started asked the CLI about the session's calls and
/// stored its memory and summary; its own `claude -p` session was recorded nowhere.
fn assert_its_end_compressed_it(env: &Env, mock: &MockApi) {
    wait_until(|| env.count("SELECT COUNT(*) FROM memories") > 0);
    let memories = rows(
        env,
        "SELECT type, title, json_array_length(queue_ids) FROM memories",
    );
    assert_eq!(
        memories,
        [json!(["bugfix", "Discounts rounded once per order", 2])]
    );
    wait_until(|| env.count("SELECT COUNT(*) FROM pending_queue WHERE status <> 'done'") == 0);
    assert_eq!(env.count("SELECT COUNT(*) FROM summaries"), 1);
    let ask = mock
        .requests()
        .into_iter()
        .find(|r| r.wants_structure())
        .expect("the compressor asked the CLI");
    assert!(ask.has_text_with(&["#1 $ echo fixed > fixed.txt  (Mark it)"]));
    assert!(ask.has_text_with(&["Fixed: discounts are rounded once per order."]));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM sessions"),
        1,
        "the compressor's own claude -p session was recorded"
    );
}

/// Issue 16 with the real CLI: no login is not the batch's fault.
#[test]
fn without_a_login_the_items_wait_untouched_and_the_command_says_to_log_in() {
    let Some(Cli { env, mock }) = logged_out() else {
        return;
    };
    working_session(&env, "s1");
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Not logged in") && err.contains("run claude, then /login"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    assert!(mock.requests().is_empty(), "{:#?}", mock.requests());
}

/// Regression: with its API out of reach, Claude Code retried a refused connection for
/// about three minutes before it said so; under the compressor's deadline that became a
/// timeout, an attempt counted against items that had done nothing wrong. Now it says so
/// in seconds, and the items wait untouched.
#[test]
fn an_api_out_of_reach_is_known_in_seconds_and_the_items_wait_untouched() {
    let Some(Cli { env, mock: _mock }) = cli() else {
        return;
    };
    // A loopback port nothing listens on: every connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = env
        .with("ANTHROPIC_BASE_URL", &format!("http://127.0.0.1:{closed}"))
        .with("CLAUDE_MEM_COMPRESS_TIMEOUT", "90");
    working_session(&env, "s1");
    let started = Instant::now();
    let out = compress(&env, &[]);
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}{}", stdout(&out));
    assert!(
        err.contains("Connection refused") && err.contains("check the network"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    // About two seconds here; the deadline is 90.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn a_malformed_answer_or_an_api_error_fails_the_batch() {
    let Some(Cli { env, mock }) = cli() else {
        return;
    };
    working_session(&env, "s1");
    let mut bad = answer();
    bad["observations"][0]["type"] = json!("chore");
    // The CLI checks the answer against the schema and asks once more; both are wrong.
    mock.set_structured(vec![Reply::structured(bad.clone()), Reply::structured(bad)]);
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("1 batch failed"), "{out}");
    assert_eq!(queue_states(&env), [json!(["failed", 1, 1])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0);

    env.db()
        .execute_batch(
            "UPDATE pending_queue SET retry_at = '2000-01-01T00:00:00.000Z'
              WHERE retry_at IS NOT NULL",
        )
        .unwrap();
    mock.set_structured(vec![Reply::Error {
        status: 400,
        message: "prompt is too long".into(),
    }]);
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("1 batch failed"), "{out}");
    assert_eq!(queue_states(&env), [json!(["failed", 2, 1])]);
    let error: String = env
        .db()
        .query_row("SELECT DISTINCT last_error FROM pending_queue", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(error.contains("rompt is too long"), "{error}");
}
