//! `claude-mem hook capture` through the real binary: what lands in the queue, what is a no-op,
//! and that nothing is lost when the database is busy, unwritable, corrupt or too new.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness;
use crate::harness::*;
use serde_json::{Value, json};

fn row(env: &Env, tool_use_id: &str) -> Value {
    env.db()
        .query_row(
            "SELECT json_object('session_id', session_id, 'tool_name', tool_name, 'event', event,
                 'prompt_id', prompt_id, 'project_dir', project_dir, 'raw_output', json(raw_output),
                 'files_touched', json(files_touched), 'priority', priority, 'status', status,
                 'kind', kind, 'payload_bytes', payload_bytes, 'truncated', truncated, 'attempts', attempts)
             FROM pending_queue WHERE tool_use_id = ?1",
            [tool_use_id],
            |r| r.get::<_, String>(0),
        )
        .map(|s| serde_json::from_str(&s).unwrap())
        .unwrap_or_else(|e| panic!("no row for {tool_use_id}: {e}"))
}

#[test]
fn every_real_capture_event_is_stored_with_its_fields() {
    let env = Env::new();
    let names: Vec<String> = [
        fixtures_of("PostToolUse"),
        fixtures_of("PostToolUseFailure"),
    ]
    .concat();
    assert_eq!(names.len(), 8);
    for name in &names {
        let input = fixture(name);
        assert_ack(&env.hook("capture", &input));
        let event = fixture_json(name);
        let stored = row(&env, event["tool_use_id"].as_str().unwrap());
        let tool = event["tool_name"].as_str().unwrap();
        assert_eq!(stored["session_id"], event["session_id"], "{name}");
        assert_eq!(stored["tool_name"], event["tool_name"], "{name}");
        assert_eq!(stored["event"], event["hook_event_name"], "{name}");
        assert_eq!(stored["prompt_id"], event["prompt_id"], "{name}");
        assert_eq!(stored["project_dir"], event["cwd"], "{name}");
        assert_eq!(stored["status"], "raw");
        assert_eq!(stored["kind"], "observation");
        assert_eq!(stored["truncated"], 0);
        assert_eq!(stored["attempts"], 0);
        assert_eq!(stored["payload_bytes"], input.len());
        let raw = &stored["raw_output"];
        // The project is a column, and the call ran there: neither is repeated.
        assert!(raw.get("cwd").is_none() && raw.get("project_dir").is_none());
        assert_eq!(raw["lean"], 1);
        // Known tools are stored in their lean shape (tests/cli/hygiene.rs); others as sent.
        let lean = matches!(tool, "Bash" | "Write" | "Edit" | "Read");
        if !lean {
            assert_eq!(raw["tool_input"], event["tool_input"], "{name}");
        }
        if event["hook_event_name"] == "PostToolUseFailure" {
            assert_eq!(raw["error"], event["error"]);
            assert_eq!(raw["is_interrupt"], event["is_interrupt"]);
            assert!(raw.get("tool_response").is_none());
        } else if !lean {
            assert_eq!(raw["tool_response"], event["tool_response"], "{name}");
        }
        let expected_priority = match tool {
            "Bash" | "Write" | "Edit" => 0,
            "Read" => 2,
            _ => 1,
        };
        assert_eq!(stored["priority"], expected_priority, "{name}");
        let files = match tool {
            "Write" | "Edit" | "Read" => json!([event["tool_input"]["file_path"]]),
            _ => json!([]),
        };
        assert_eq!(stored["files_touched"], files, "{name}");
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 8);
    // Every capture also makes sure its session exists: captures can come before SessionStart.
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 4);
}

#[test]
fn a_repeated_event_is_stored_once() {
    let env = Env::new();
    let input = fixture("hooks/PostToolUse-2.json");
    for _ in 0..3 {
        assert_ack(&env.hook("capture", &input));
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 1);
}

#[test]
fn the_store_is_private_wal_and_versioned() {
    let env = Env::new();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let db = env.db();
    let mode: String = db
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    let version: i64 = db
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let app: i64 = db
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!((mode.as_str(), version, app), ("wal", 14, 0x636d_656d));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&env.data_dir), 0o700);
        assert_eq!(mode(&env.db_path()), 0o600);
        let wal = env.data_dir.join("memory.db-wal");
        assert_eq!(
            mode(&wal),
            0o600,
            "the WAL is kept between runs, and private"
        );
    }
}

#[test]
fn bad_input_is_a_silent_no_op_that_creates_nothing() {
    let mut cases = bad_inputs("PostToolUse");
    cases.push(("other event", fixture("hooks/PreToolUse-1.json")));
    cases.push((
        "no tool name",
        br#"{"hook_event_name":"PostToolUse","session_id":"s"}"#.to_vec(),
    ));
    cases.push((
        "tool name of the wrong type",
        br#"{"hook_event_name":"PostToolUse","session_id":"s","tool_name":{"a":1}}"#.to_vec(),
    ));
    for (what, input) in cases {
        let env = Env::new();
        let out = env.hook("capture", &input);
        assert_silent(&out);
        assert!(
            !env.data_dir.exists(),
            "{what}: a no-op created the data dir"
        );
        assert!(tmp_is_empty(&env), "{what}: wrote to TMPDIR");
    }
}

#[test]
fn unknown_hook_names_and_bad_arguments_exit_zero() {
    let env = Env::new();
    let input = fixture("hooks/PostToolUse-1.json");
    for args in [
        &["hook", "post-tool-use-v9"][..],
        &["hook"][..],
        &["hook", ""][..],
        // `hook --help` alone is a person asking (command_line.rs); with anything else it is not.
        &["hook", "--bogus"][..],
        &["hook", "--help", "capture"][..],
        &["hook", "capture", "--help"][..],
        &["hook", "capture", "--bogus", "x"][..],
    ] {
        let mut child = env
            .command()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(&input);
        let out = child.wait_with_output().unwrap();
        assert_clean(&out);
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!env.data_dir.exists(), "{args:?} created the data dir");
    }
}

#[test]
fn a_malformed_event_leaves_a_line_in_an_existing_log() {
    let env = Env::new();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    assert_silent(&env.hook("capture", b"{not json"));
    let log = env.log();
    assert!(
        log.contains("hook capture") && log.contains("not a JSON event"),
        "log: {log}"
    );
}

#[test]
fn claude_project_dir_wins_over_cwd() {
    let env = Env::new().with("CLAUDE_PROJECT_DIR", "/repo/root");
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let stored = row(&env, "toolu_mock_34a29c408e1d4ba48423");
    assert_eq!(stored["project_dir"], "/repo/root");
    assert!(stored["raw_output"].get("project_dir").is_none());
    assert_eq!(
        stored["raw_output"]["cwd"], "/home/dev/proj1",
        "where the call ran, as it is not the project"
    );
}

#[test]
fn skipped_tools_and_their_override() {
    let todo = post_tool_use("s", "TodoWrite", "t-1", json!({"todos": []}));
    let bash = post_tool_use("s", "Bash", "t-2", json!({"command": "ls"}));

    let env = Env::new();
    for tool in [
        "ListMcpResourcesTool",
        "SlashCommand",
        "Skill",
        "TodoWrite",
        "AskUserQuestion",
    ] {
        assert_silent(&env.hook("capture", &post_tool_use("s", tool, "x", json!({}))));
    }
    assert!(
        !env.data_dir.exists(),
        "a skipped tool created the data dir"
    );

    let env = Env::new().with("CLAUDE_MEM_SKIP_TOOLS", "Bash, Grep");
    assert_silent(&env.hook("capture", &bash));
    assert_ack(&env.hook("capture", &todo));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_name = 'TodoWrite'"),
        1
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_name = 'Bash'"),
        0
    );
}

/// Regression (issue 16): claude-mem stored the calls of its own MCP tools, so a `get` answer
/// kept a whole earlier session (searchable after that session was forgotten, filling search
/// results with the memory's own answers, summarised by the compressor). They are never
/// captured, whatever `CLAUDE_MEM_SKIP_TOOLS` says: the hook opens and creates nothing.
#[test]
fn claude_mem_captured_its_own_mcp_answers() {
    let ours = |tool: &str| {
        let mut event: serde_json::Value = serde_json::from_slice(&post_tool_use(
            "s",
            tool,
            "t-1",
            json!({"ids": ["0a1b2c3d"]}),
        ))
        .unwrap();
        event["tool_response"] = json!([{"type": "text", "text": "prompt: the earlier words"}]);
        event.to_string().into_bytes()
    };
    let tools = [
        "mcp__claude-mem__search",
        "mcp__claude-mem__get",
        "mcp__claude-mem__timeline",
        "mcp__plugin_tools_claude-mem__get",
    ];
    for env in [Env::new(), Env::new().with("CLAUDE_MEM_SKIP_TOOLS", "Grep")] {
        for tool in tools {
            assert_silent(&env.hook("capture", &ours(tool)));
        }
        assert!(
            !env.data_dir.exists(),
            "a capture of our own tool created the data dir"
        );
        assert!(tmp_is_empty(&env));
    }
    // Once there is a database, still nothing of them; another server's tools are kept.
    let env = Env::new();
    assert_ack(&env.hook("capture", &ours("mcp__memory__search")));
    for tool in tools {
        assert_silent(&env.hook("capture", &ours(tool)));
    }
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_name LIKE 'mcp%'"),
        1
    );
}

#[test]
fn the_kill_switch_does_nothing() {
    let env = Env::new().with("CLAUDE_MEM_DISABLED", "1");
    assert_silent(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    assert!(!env.data_dir.exists());
}

#[test]
fn the_queue_drains_high_then_normal_then_low() {
    let env = Env::new();
    for (i, tool) in ["Read", "Agent", "Grep", "Edit", "WebFetch", "Bash"]
        .iter()
        .enumerate()
    {
        let input = post_tool_use("s", tool, &format!("t-{i}"), json!({"file_path": "/x"}));
        assert_ack(&env.hook("capture", &input));
    }
    let db = env.db();
    let mut stmt = db
        .prepare("SELECT tool_name FROM pending_queue WHERE status = 'raw' ORDER BY priority, created_at")
        .unwrap();
    let order: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(order, ["Edit", "Bash", "Agent", "WebFetch", "Read", "Grep"]);
}

/// A big response of a tool without a lean shape (Read's would be cut to a head and a tail).
fn big_event(tool_use_id: &str, bytes: usize) -> Vec<u8> {
    let content = "x".repeat(bytes);
    serde_json::json!({
        "session_id": "big", "cwd": "/p", "hook_event_name": "PostToolUse",
        "tool_name": "mcp__files__read",
        "tool_input": {"file_path": "/p/big.txt"},
        "tool_response": {"type": "text", "file": {"filePath": "/p/big.txt", "content": content}},
        "tool_use_id": tool_use_id,
    })
    .to_string()
    .into_bytes()
}

#[test]
fn an_oversized_event_is_stored_truncated_never_dropped() {
    let env = Env::new();
    let input = big_event("big-1", 20 * 1024 * 1024);
    assert_ack(&env.hook("capture", &input));
    let stored = row(&env, "big-1");
    assert_eq!(stored["truncated"], 1);
    assert_eq!(stored["payload_bytes"], input.len());
    let raw = &stored["raw_output"];
    assert_eq!(
        raw["tool_input"],
        json!({"file_path": "/p/big.txt"}),
        "the small part is whole"
    );
    let kept = raw["tool_response"]
        .as_str()
        .expect("the cut part is kept as text");
    assert!(kept.starts_with("{\"type\":\"text\""));
    assert!(
        kept.len() < 1024 * 1024 && kept.len() > 900 * 1024,
        "kept {}",
        kept.len()
    );
    assert_eq!(raw["truncated"], json!(["tool_response"]));
    assert_eq!(raw["original_bytes"], input.len());
    assert_eq!(stored["files_touched"], json!(["/p/big.txt"]));

    // 0 means no cap: stored whole.
    let env = Env::new().with("CLAUDE_MEM_MAX_PAYLOAD_BYTES", "0");
    let input = big_event("big-2", 3 * 1024 * 1024);
    assert_ack(&env.hook("capture", &input));
    let stored = row(&env, "big-2");
    assert_eq!(stored["truncated"], 0);
    assert_eq!(
        stored["raw_output"]["tool_response"]["file"]["content"]
            .as_str()
            .unwrap()
            .len(),
        3 * 1024 * 1024
    );
}

#[test]
fn parallel_captures_lose_nothing() {
    const N: usize = 256;
    // Hundreds of hooks at once: with the machine's cores to itself, as a user's burst.
    let _turn = heavy();
    let env = Env::new();
    let children: Vec<_> = (0..N)
        .map(|i| {
            let input = post_tool_use(
                &format!("s-{}", i % 8),
                "Bash",
                &format!("par-{i}"),
                json!({"command": format!("echo {i}")}),
            );
            env.spawn_hook("capture", &input)
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_ack(&out);
    }
    env.wait_for_maintenance();
    let stored = env.count("SELECT COUNT(*) FROM pending_queue") as usize;
    let spilled = env.spilled().len();
    assert_eq!(stored + spilled, N, "{stored} stored + {spilled} spilled");
    // The next run that can write takes in whatever was spilled.
    assert_ack(&env.hook("capture", &post_tool_use("s-0", "Bash", "after", json!({}))));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue") as usize,
        N + 1
    );
    assert_eq!(
        env.count("SELECT COUNT(DISTINCT tool_use_id) FROM pending_queue") as usize,
        N + 1
    );
}

/// Regression: in a burst of 256 parallel captures every waiting hook looked at the database
/// every millisecond, and on 2 cores hundreds of them left the hook holding the lock (and
/// everything else) little time: in 5 of 20 bursts 83 to 122 hooks waited their whole second
/// and spilled. Waiting hooks now take turns, asleep in the kernel but for the one whose turn
/// it is. Here 256 hooks all wait behind a held lock, then it is let go, and the lock changes
/// hands 256 times: none may run out of its budget meanwhile. (Before, merely starting the 256
/// took 5.6 s here, as those already waiting kept both cores busy; now 1.1 s, and all are in
/// 0.7 to 1.3 s after the lock is let go.)
#[cfg(unix)]
#[test]
fn a_burst_of_waiting_hooks_all_get_their_turn() {
    const N: usize = 256;
    // Hundreds of hooks at once: with the machine's cores to itself, as a user's burst.
    let _turn = heavy();
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "5000");
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let children: Vec<_> = (0..N)
        .map(|i| {
            let session = format!("s-{}", i % 8);
            let input = post_tool_use(&session, "Bash", &format!("burst-{i}"), json!({}));
            env.spawn_hook("capture", &input)
        })
        .collect();
    // A hook keeps its event in the spill folder before it starts to wait.
    while env.spilled().len() < N {
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(10));
    }
    let all_waiting = started.elapsed();
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    for child in children {
        assert_ack(&child.wait_with_output().unwrap());
    }
    let log = env.log();
    let spilled = log.matches("event kept in").count();
    assert_eq!(
        spilled,
        0,
        "{spilled} hooks ran out of time (all waiting after {all_waiting:?}, all done after {:?}): {log}",
        started.elapsed()
    );
    env.wait_for_maintenance();
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue") as usize,
        N + 1
    );
}

/// Regression: waiting hooks take turns on a lock of `hooks.turn`, and only the holder looked
/// at the database; a holder stopped (SIGSTOP, a debugger) made every other waiter spend its
/// whole budget in line and spill its event, though the database was free. Here the test holds
/// the turn and never lets go: the waiting hooks must find the database free by themselves.
#[cfg(unix)]
#[test]
fn a_stopped_turn_holder_does_not_make_waiting_hooks_spill() {
    const N: usize = 4;
    let env = Env::new();
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
    // Nothing but the hooks themselves may take in what they keep.
    let _maintenance = env.hold_maintenance();
    let turn = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(env.data_dir.join("hooks.turn"))
        .unwrap();
    assert!(try_flock(&turn));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let children: Vec<_> = (0..N)
        .map(|i| {
            env.spawn_hook(
                "capture",
                &post_tool_use("s", "Bash", &format!("w-{i}"), json!({})),
            )
        })
        .collect();
    // Each keeps its event in the spill folder before it starts to wait.
    wait_until(Duration::from_secs(30), "every hook kept its event", || {
        env.spilled().len() >= N
    });
    holder.execute_batch("ROLLBACK").unwrap();
    for child in children {
        assert_ack(&child.wait_with_output().unwrap());
    }
    let log = env.log();
    assert_eq!(log.matches("event kept in").count(), 0, "{log}");
    assert!(env.spilled().is_empty(), "{:?}", env.spilled());
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id LIKE 'w-%'") as usize,
        N
    );
    drop(turn);
}

#[test]
fn a_held_lock_spills_after_its_wait_and_the_next_run_ingests_once() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "500");
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));

    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE; INSERT INTO event_log (id, event, created_at) VALUES ('lock', 'x', 'y');").unwrap();
    let started = Instant::now();
    let out = env.hook(
        "capture",
        &post_tool_use("s", "Bash", "while-locked", json!({})),
    );
    let took = started.elapsed();
    assert_ack(&out);
    // That it gives up within its budget is the hooks bench's (benches/hooks/held.rs): a bound
    // here fails on a loaded machine.
    assert!(
        took >= Duration::from_millis(450),
        "the hook did not wait for the lock: {took:?}"
    );
    assert_eq!(env.spilled().len(), 1);
    assert!(env.log().contains("event kept in"), "log: {}", env.log());
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);

    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "after", json!({}))));
    env.wait_for_maintenance();
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'while-locked'"),
        1
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 3);
    assert!(
        env.spilled().is_empty(),
        "the spill file is removed once applied"
    );
}

#[test]
fn a_spill_file_applied_twice_is_stored_once() {
    // A run killed after its commit but before removing the file leaves the file behind.
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "100");
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
    let (spill, copy) = env.while_locked(|| {
        assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "spilled", json!({}))));
        let spill = env.spilled().pop().unwrap();
        let copy = std::fs::read(&spill).unwrap();
        (spill, copy)
    });
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "second", json!({}))));
    env.wait_for_maintenance();
    std::fs::write(&spill, copy).unwrap();
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "third", json!({}))));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'spilled'"),
        1
    );
    assert!(env.spilled().is_empty());
}

/// The spill files kept in the temp-dir fallback (at least one) and its log's text.
fn kept_in_the_fallback(env: &Env) -> (Vec<std::path::PathBuf>, String) {
    let kept = env.fallback_files();
    assert!(
        kept.iter()
            .any(|p| p.extension().is_some_and(|e| e == "json")),
        "kept: {kept:?}"
    );
    let log = kept
        .iter()
        .find(|p| p.ends_with("memory.log"))
        .expect("a fallback log");
    let log = std::fs::read_to_string(log).unwrap();
    (kept, log)
}

/// A data dir whose parent is a file: it cannot be created, whoever runs the test (root too).
/// Returns the environment and the file in the way.
fn unwritable_data_dir() -> (Env, std::path::PathBuf) {
    let env = Env::new();
    let blocker = env.root.path().join("blocked");
    std::fs::write(&blocker, "not a dir").unwrap();
    let env = Env {
        data_dir: blocker.join("data"),
        ..env
    };
    (env, blocker)
}

#[test]
fn an_unwritable_data_dir_keeps_the_event_in_the_temp_dir_until_it_can_be_written() {
    let (env, blocker) = unwritable_data_dir();
    let out = env.hook("capture", &fixture("hooks/PostToolUse-1.json"));
    assert_ack(&out);
    let (_, log) = kept_in_the_fallback(&env);
    assert!(log.contains("cannot use the data dir"), "log: {log}");

    std::fs::remove_file(&blocker).unwrap();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-2.json")));
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
    assert!(
        env.fallback_files()
            .iter()
            .all(|p| p.ends_with("memory.log"))
    );
}

/// Root ignores permission bits, so this runs the hook as another user when the tests run as
/// root (`setpriv`, from util-linux), and says so when it cannot.
#[cfg(unix)]
#[test]
fn a_read_only_data_dir_keeps_the_event_and_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    // Everything the other user needs to reach, reachable; the data dir theirs and read-only.
    let open = |p: &std::path::Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(env.root.path(), 0o755);
    open(&env.tmp(), 0o1777);
    std::fs::create_dir(&env.data_dir).unwrap();
    if is_root() {
        chown(&env.data_dir, NOBODY);
    }
    open(&env.data_dir, 0o555);
    let Some(out) = hook_as_user(&env, "capture", &fixture("hooks/PostToolUse-1.json")) else {
        return;
    };
    assert_ack_telling(&out, "claude-mem is not recording");
    assert!(
        !env.db_path().exists(),
        "a database was created in a read-only dir"
    );
    let (_, log) = kept_in_the_fallback(&env);
    assert!(
        log.contains("Permission denied") || log.contains("permission denied"),
        "log: {log}"
    );
    // A read-only folder stays read-only: only the bits of others would have been removed.
    let mode = std::fs::metadata(&env.data_dir)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o500);

    // Once the owner makes the dir writable, their next run takes the event in.
    open(&env.data_dir, 0o700);
    let out = hook_as_user(&env, "capture", &fixture("hooks/PostToolUse-2.json")).unwrap();
    assert_ack(&out);
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
}

/// Runs a capture against a database file claude-mem must not touch: the file keeps every
/// byte, the event waits in the spill folder, and the log gives `reason`.
fn assert_refused_and_kept(env: &Env, reason: &str) {
    let before = std::fs::read(env.db_path()).unwrap();
    let out = env.hook("capture", &fixture("hooks/PostToolUse-1.json"));
    // The user is told, once per session, that nothing is being recorded.
    assert_ack_telling(&out, "claude-mem is not recording");
    assert!(notice(&out).unwrap().contains(reason), "{:?}", notice(&out));
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    assert_eq!(
        std::fs::read(env.db_path()).unwrap(),
        before,
        "the file was modified"
    );
    assert_eq!(env.spilled().len(), 2, "the events were not kept");
    assert!(env.log().contains(reason), "log: {}", env.log());
}

#[test]
fn a_corrupt_database_is_left_alone_and_the_event_kept() {
    let env = Env::new();
    std::fs::create_dir(&env.data_dir).unwrap();
    let garbage = b"this is not a database, but it is somebody's file".repeat(100);
    std::fs::write(env.db_path(), &garbage).unwrap();
    assert_refused_and_kept(&env, "not a database");

    // Once the file is dealt with, the kept events land: the next hook takes in what its 10 ms
    // slice allows and starts the maintenance process for the rest. (This asserted at once
    // that the hook had taken in both, which failed under load: the first file took longer
    // than the slice, and the second was still on its way in.)
    std::fs::rename(env.db_path(), env.data_dir.join("corrupt.db")).unwrap();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-2.json")));
    wait_until(
        std::time::Duration::from_secs(60),
        "the kept events landed",
        || env.spilled().is_empty(),
    );
    env.wait_for_maintenance();
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
}

#[test]
fn a_database_from_a_newer_version_is_never_modified() {
    let env = Env::new();
    std::fs::create_dir(&env.data_dir).unwrap();
    {
        let db = env.db();
        db.execute_batch(
            "PRAGMA application_id = 1668113773; PRAGMA user_version = 99;
             CREATE TABLE future (x); INSERT INTO future VALUES (1);",
        )
        .unwrap();
    }
    assert_refused_and_kept(&env, "newer than this claude-mem");
    assert!(!env.data_dir.join("memory.db-wal").exists());
}

/// Issue 27: a `memory.db-shm` symlink planted beside the database made every open fail with
/// SQLite's "unable to open database file": the events were spilled, and the user was told
/// nothing. It is refused as the database file itself is, by name, with what to remove; the
/// link's target is never created; once it is removed, the kept events land.
#[cfg(unix)]
#[test]
fn a_planted_shm_or_wal_symlink_is_refused_with_what_to_remove() {
    for suffix in ["-shm", "-wal"] {
        let env = Env::new();
        assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
        env.db()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        let side = env.data_dir.join(format!("memory.db{suffix}"));
        let target = env.root.path().join("target");
        let _ = std::fs::remove_file(&side);
        std::os::unix::fs::symlink(&target, &side).unwrap();
        let out = env.hook("capture", &fixture("hooks/PostToolUse-2.json"));
        assert_ack_telling(&out, "claude-mem is not recording");
        let told = notice(&out).unwrap();
        assert!(
            told.contains(&format!("remove it (rm {})", side.display())),
            "{suffix}: {told}"
        );
        assert!(!target.exists(), "{suffix}: the link was followed");
        assert_eq!(env.spilled().len(), 1, "{suffix}: the event was not kept");
        std::fs::remove_file(&side).unwrap();
        assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-3.json")));
        wait_until(Duration::from_secs(60), "the kept event landed", || {
            env.spilled().is_empty()
        });
        env.wait_for_maintenance();
        assert_eq!(
            env.count("SELECT COUNT(*) FROM pending_queue"),
            3,
            "{suffix}"
        );
    }
}

#[test]
fn the_wal_stays_bounded_across_many_runs() {
    let env = Env::new();
    let padding = "y".repeat(8 * 1024);
    for i in 0..120 {
        let input = post_tool_use("s", "Bash", &format!("w-{i}"), json!({"command": padding}));
        assert_ack(&env.hook("capture", &input));
    }
    // 120 runs wrote about 1 MiB; the WAL is checkpointed once it passes 256 KiB, by a process
    // the hook that takes it past starts, which may still be at it.
    let wal = || {
        std::fs::metadata(env.data_dir.join("memory.db-wal"))
            .unwrap()
            .len()
    };
    wait_until(Duration::from_secs(10), "the WAL under 400 KiB", || {
        wal() < 400 * 1024
    });
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 120);
}

/// Captures of 8 KiB each while the test holds the lock of the process that copies the WAL
/// back (as one running does), until the WAL is past the 256 KiB a checkpoint is due at; its
/// size then.
#[cfg(target_os = "linux")]
fn wal_past_its_bound(env: &Env, runs: usize) -> u64 {
    let wal = env.data_dir.join("memory.db-wal");
    let padding = "y".repeat(8 * 1024);
    let input = |i| post_tool_use("s", "Bash", &format!("w-{i}"), json!({"command": padding}));
    assert_ack(&env.hook("capture", &input(0)));
    // Making the database may have started one: held once it let go, and gone.
    let held = env.hold_lock("checkpoint.lock");
    env.wait_for_maintenance();
    for i in 1..runs {
        assert_ack(&env.hook("capture", &input(i)));
    }
    let size = std::fs::metadata(wal).unwrap().len();
    // Let go, and looked at from a process of its own until free: each child this test process
    // starts meanwhile (other tests') holds a copy of the lock's descriptor until its `exec`.
    drop(held);
    let lock = env.data_dir.join("checkpoint.lock");
    wait_until(
        Duration::from_secs(10),
        "checkpoint.lock to be let go",
        || {
            std::process::Command::new("flock")
                .arg("-n")
                .arg(&lock)
                .arg("true")
                .status()
                .is_ok_and(|status| status.success())
        },
    );
    size
}

/// The WAL's header, and one frame of a 4 KiB page with its own header.
const WAL_HEADER: u64 = 32;
const WAL_FRAME: u64 = 24 + 4096;

/// A checkpoint waits on two `fsync`s and a truncation (1 to 1.5 ms): the hook whose write
/// takes the WAL past its bound leaves it to a process of its own, which copies the WAL back.
#[cfg(target_os = "linux")]
#[test]
fn the_checkpoint_a_write_calls_for_is_left_to_a_process_of_its_own() {
    let env = Env::new();
    let wal = wal_past_its_bound(&env, 30);
    assert!(
        wal > 400 * 1024,
        "a hook checkpointed while another process was to: WAL of {wal} bytes"
    );
    assert!(env.running("maintain").is_empty());
    let input = post_tool_use("s", "Bash", "w-last", json!({"command": "ls"}));
    assert_ack(&env.hook("capture", &input));
    // Looked for by what it does: a process just started is not found by its arguments yet.
    // It copies the WAL back, truncates it and starts it anew with one frame, so that the next
    // hook does not pay for the new WAL's header and its syncs.
    let wal = env.data_dir.join("memory.db-wal");
    wait_until(
        Duration::from_secs(10),
        "the WAL copied back and started anew",
        || std::fs::metadata(&wal).is_ok_and(|m| m.len() == WAL_HEADER + WAL_FRAME),
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 31);
    assert!(!env.log().contains("ERROR"), "{}", env.log());
}

/// A hook that cannot start that process (its program was replaced while it ran, as by an
/// upgrade) checkpoints itself: the WAL stays bounded all the same.
#[cfg(target_os = "linux")]
#[test]
fn a_hook_that_cannot_start_the_checkpoint_makes_it_itself() {
    let env = Env::new();
    assert!(wal_past_its_bound(&env, 30) > 256 * 1024);
    let program = env.tmp().join("claude-mem");
    copy_program(Path::new(env!("CARGO_BIN_EXE_claude-mem")), &program);
    let mut hook = env.hook_process_of(&program, "capture");
    // The hook waits for its event: its program is gone before it reads it.
    std::fs::remove_file(&program).unwrap();
    let input = post_tool_use("s", "Bash", "w-last", json!({"command": "ls"}));
    hook.stdin.take().unwrap().write_all(&input).unwrap();
    assert_ack(&hook.wait_with_output().unwrap());
    let after = std::fs::metadata(env.data_dir.join("memory.db-wal"))
        .unwrap()
        .len();
    assert_eq!(after, 0, "the WAL was left past its bound");
    assert!(env.running("maintain").is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 31);
}

#[cfg(unix)]
#[test]
fn a_planted_fallback_folder_open_to_others_is_not_used_and_the_loss_is_told() {
    use std::os::unix::fs::PermissionsExt;
    let (env, _blocker) = unwritable_data_dir();
    // Someone else creates the (predictable) fallback folder first, world-writable.
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let planted = std::fs::read_dir(env.tmp())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_dir_all(&planted).unwrap();
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = env.hook("capture", &fixture("hooks/PostToolUse-2.json"));
    assert!(
        harness::files_in(&planted).is_empty(),
        "wrote into a folder others can read"
    );
    // The event could be kept nowhere: the hook says so instead of acknowledging a loss.
    assert_ack_telling(&out, "could not save an event");
}

#[test]
fn debug_mode_mirrors_the_log_on_stderr() {
    let env = Env::new();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let env = env.with("CLAUDE_MEM_DEBUG", "1");
    let out = env.hook("capture", b"{oops");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a JSON event"));
}

/// Regression: someone else's SQLite file at our path used to be switched to WAL mode before
/// it was recognised as foreign.
#[test]
fn a_foreign_database_is_never_modified() {
    let env = Env::new();
    std::fs::create_dir(&env.data_dir).unwrap();
    env.db()
        .execute_batch("CREATE TABLE theirs (x); INSERT INTO theirs VALUES (1);")
        .unwrap();
    assert_refused_and_kept(&env, "not a claude-mem database");
}

#[test]
fn an_absurd_wait_budget_is_clamped_not_fatal() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "3000000000");
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 1);
    assert!(env.log().contains("over a minute"), "log: {}", env.log());
}

#[test]
fn spill_files_from_a_newer_version_are_left_and_damaged_ones_set_aside() {
    let env = Env::new();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let spill = env.data_dir.join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    // A later format names itself; this version never opens such a file.
    let newer = format!("{}.v2.json", spill_stem(0));
    std::fs::write(
        spill.join(&newer),
        br#"{"format": 2, "write": {"future": true}}"#,
    )
    .unwrap();
    let damaged = format!("{}.json", spill_stem(1));
    std::fs::write(spill.join(&damaged), b"{\"format\": 1, \"wri").unwrap();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-2.json")));
    env.wait_for_maintenance();
    let left: Vec<String> = env
        .spilled()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [newer]);
    let aside = env.data_dir.join("spill-quarantine").join(&damaged);
    assert!(aside.exists(), "the damaged file was not set aside");
    assert!(env.log().contains("set aside"), "log: {}", env.log());
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
}

/// Regression: 40 spill files of a later format at the head of the folder used up each hook's
/// slice (8 files), so the 10 events behind them took more than 15 runs to apply. A slice
/// counts only the writes it applies (its time still bounds the rest); a later format's file
/// found under a format-1 name gets its proper name, and is skipped from then on unopened.
#[cfg(unix)]
#[test]
fn newer_format_spill_files_at_the_head_do_not_use_up_a_hooks_slice() {
    let backlog = || {
        let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "1");
        assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
        let behind: Vec<Vec<u8>> = (0..10)
            .map(|i| post_tool_use("s", "Bash", &format!("behind-{i}"), json!({})))
            .collect();
        let maintenance = env.spill_captures(&behind);
        let spill = env.data_dir.join("spill");
        for n in 0..40 {
            let body = json!({"format": 2, "write": {"id": n, "future": true}});
            std::fs::write(
                spill.join(format!("{}.json", spill_stem(n))),
                body.to_string(),
            )
            .unwrap();
        }
        drop(maintenance);
        assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "next", json!({}))));
        env
    };
    // This run itself got past the 40 to the writes behind them (how many it applied in its
    // 10 ms depends on the machine; the maintenance process it started takes the rest). A
    // busy machine can take a hook off the CPU for its whole 10 ms: one of three runs must get
    // there, where a slice used up by files it only looks at never does.
    let env = (0..3)
        .map(|_| backlog())
        .find(|env| {
            env.log()
                .contains("hook capture: applied the spilled write")
        })
        .expect("the hook applied none of the writes behind, in three tries");
    env.wait_for_maintenance();
    let applied = env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id LIKE 'behind-%'");
    assert_eq!(applied, 10);
    let left: Vec<String> = env
        .spilled()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 40, "{left:?}");
    assert!(
        left.iter().all(|name| name.ends_with(".v2.json")),
        "{left:?}"
    );
    assert!(!env.data_dir.join("spill-quarantine").exists());
}

#[test]
fn the_log_is_rotated_past_its_cap() {
    let env = Env::new();
    assert_ack(&env.hook("capture", &fixture("hooks/PostToolUse-1.json")));
    let log = env.data_dir.join("memory.log");
    std::fs::write(&log, "x".repeat(1024 * 1024 + 1)).unwrap();
    assert_silent(&env.hook("capture", b"not json"));
    let rotated = env.data_dir.join("memory.log.1");
    assert_eq!(std::fs::metadata(&rotated).unwrap().len(), 1024 * 1024 + 1);
    let fresh = std::fs::read_to_string(&log).unwrap();
    assert_eq!(fresh.lines().count(), 1, "{fresh}");
    assert!(fresh.contains("not a JSON event"));
}

/// Regression: a hook killed while it waited for the lock (Claude Code kills hooks that
/// overrun, and at exit) lost its event. A run that has to wait keeps the event first.
#[test]
fn a_hook_killed_while_waiting_for_the_lock_loses_nothing() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "20000");
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut waiting = env.spawn_hook("capture", &post_tool_use("s", "Bash", "killed", json!({})));
    let started = Instant::now();
    while env.spilled().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the waiting hook kept nothing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    waiting.kill().unwrap();
    waiting.wait().unwrap();
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "next", json!({}))));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'killed'"),
        1
    );
    assert!(env.spilled().is_empty());
}

/// The first capture, then 40 spilled (see `Env::spill_captures`).
#[cfg(unix)]
fn forty_spilled(env: &Env) -> std::fs::File {
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "first", json!({}))));
    let inputs: Vec<Vec<u8>> = (0..40)
        .map(|i| post_tool_use("s", "Bash", &format!("spilled-{i:02}"), json!({})))
        .collect();
    env.spill_captures(&inputs)
}

/// Regression: a backlog of spill files cost every hook up to 165 ms. A hook now takes in a
/// small slice, oldest first, and leaves the rest to the maintenance process it starts.
#[cfg(unix)]
#[test]
fn a_hook_applies_a_small_slice_of_a_backlog_and_maintenance_the_rest() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "1");
    let lock = forty_spilled(&env);
    // With the maintenance lock held, the hook leaves the backlog alone entirely.
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "busy", json!({}))));
    assert_eq!(env.spilled().len(), 40);
    drop(lock);
    assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", "next", json!({}))));
    // The oldest went first: what is in is a prefix, whatever maintenance did since.
    let (applied, last): (i64, String) = env
        .db()
        .query_row(
            "SELECT COUNT(*), MAX(tool_use_id) FROM pending_queue
              WHERE tool_use_id LIKE 'spilled-%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(applied >= 1, "applied {applied}");
    assert_eq!(last, format!("spilled-{:02}", applied - 1));
    // Maintenance, detached, takes in the rest without any further hook.
    let started = Instant::now();
    while !env.spilled().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "backlog left: {}",
            env.spilled().len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 43);
}

#[cfg(unix)]
#[test]
fn maintain_applies_everything_when_run_by_hand() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "1");
    drop(forty_spilled(&env));
    let out = env.command().arg("maintain").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Applied 40 spilled events"), "{text}");
    assert!(env.spilled().is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 41);
}

#[test]
fn files_touched_names_the_files_of_every_file_tool() {
    let env = Env::new();
    let cases = [
        (
            "MultiEdit",
            json!({"file_path": "/p/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
            json!(["/p/a.rs"]),
            0,
        ),
        (
            "NotebookEdit",
            json!({"notebook_path": "/p/n.ipynb", "new_source": "x"}),
            json!(["/p/n.ipynb"]),
            0,
        ),
        (
            "Glob",
            json!({"pattern": "**/*.rs", "path": "/p"}),
            json!([]),
            2,
        ),
        (
            "mcp__fs__write",
            json!({"file_path": "/p/m.txt"}),
            json!(["/p/m.txt"]),
            1,
        ),
    ];
    for (i, (tool, input, files, priority)) in cases.into_iter().enumerate() {
        let id = format!("f-{i}");
        assert_ack(&env.hook("capture", &post_tool_use("s", tool, &id, input)));
        let stored = row(&env, &id);
        assert_eq!(stored["files_touched"], files, "{tool}");
        assert_eq!(stored["priority"], priority, "{tool}");
    }
}
