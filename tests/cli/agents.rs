//! Other coding agents on the same binary and the same memory: Codex's events (Claude Code's
//! shape, its own answers) and Cursor's (its own shape, through its hooks file or through
//! Claude Code's registration), each session recorded with its agent, and the readers that
//! show and filter by it. The payloads are those the agents' sources and documentation give
//! (Codex: codex-rs/hooks/src/schema.rs's command inputs; Cursor: cursor.com/docs/agent/hooks).

use std::path::Path;
use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

/// `hook <name>` with `args` after it (`--agent codex`), `event` on stdin.
fn hook_with(env: &Env, name: &str, args: &[&str], event: &Value) -> Output {
    let mut cmd = env.command();
    cmd.args(["hook", name]).args(args);
    run_with_input(&mut cmd, event.to_string().as_bytes())
}

fn codex(env: &Env, name: &str, event: &Value) -> Output {
    hook_with(env, name, &["--agent", "codex"], event)
}

/// A Codex event as Codex's hooks send it (`*CommandInput` of codex-rs/hooks/src/schema.rs).
fn codex_event(event: &str, session: &str, cwd: &Path, extra: Value) -> Value {
    let mut e = json!({
        "session_id": session,
        "turn_id": "turn-1",
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": event,
        "model": "gpt-5.1-codex",
        "permission_mode": "default",
    });
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e
}

/// A Cursor event as Cursor's hooks send it: the common fields of every event and `extra`.
fn cursor_event(event: &str, conversation: &str, workspace: &Path, extra: Value) -> Value {
    let mut e = json!({
        "conversation_id": conversation,
        "generation_id": "gen-1",
        "model": "claude-sonnet-4",
        "hook_event_name": event,
        "cursor_version": "1.7.2",
        "workspace_roots": [workspace],
        "user_email": "dev@example.com",
        "transcript_path": null,
    });
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e
}

fn agent_of(env: &Env, session: &str) -> String {
    env.db()
        .query_row(
            "SELECT agent FROM sessions WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("no session {session}: {e}"))
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

/// A Codex session: a prompt, a shell call, a stop and its end.
fn codex_session(env: &Env, session: &str, project: &Path) {
    let prompt = json!({"prompt": "make the parser accept tabs"});
    let call = json!({"tool_name": "Bash", "tool_use_id": format!("call-{session}"),
        "tool_input": {"command": "cargo test parser"},
        "tool_response": "test parser::tabs ... ok"});
    let stop = json!({"stop_hook_active": false,
        "last_assistant_message": "The parser accepts tabs now."});
    for (hook, event, extra) in [
        ("context", "SessionStart", json!({"source": "startup"})),
        ("prompt", "UserPromptSubmit", prompt),
        ("capture", "PostToolUse", call),
        ("summary", "Stop", stop),
        ("cleanup", "SessionEnd", json!({"reason": "other"})),
    ] {
        let out = codex(env, hook, &codex_event(event, session, project, extra));
        assert_silent(&out);
    }
}

#[test]
fn a_codex_session_is_recorded_as_codexs_and_answered_with_nothing_to_refuse() {
    let env = Env::new();
    let project = env.root.path().join("app");
    codex_session(&env, "codex-1", &project);
    assert_eq!(agent_of(&env, "codex-1"), "codex");
    assert_eq!(
        env.count("SELECT COUNT(*) FROM user_prompts WHERE session_id = 'codex-1'"),
        1
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'call-codex-1'"),
        1
    );
    // Claude Code's own events, through its registration, stay Claude Code's.
    let claude = post_tool_use("claude-1", "Bash", "tu-1", json!({"command": "ls"}));
    assert_ack(&env.hook("capture", &claude));
    assert_eq!(agent_of(&env, "claude-1"), "claude-code");
}

#[test]
fn an_unknown_agent_is_not_a_hook_of_this_version() {
    let env = Env::new();
    let project = env.root.path().join("app");
    let event = codex_event("UserPromptSubmit", "s", &project, json!({"prompt": "hi"}));
    for args in [&["--agent", "vim"][..], &["--agent"], &["--agents=codex"]] {
        assert_silent(&hook_with(&env, "prompt", args, &event));
    }
    assert!(!env.db_path().exists(), "nothing recorded");
}

#[test]
fn sessions_search_timeline_and_status_show_and_filter_by_agent() {
    let env = Env::new();
    let project = env.root.path().join("app");
    codex_session(&env, "codex-1", &project);
    let mut claude: Value = serde_json::from_slice(&post_tool_use(
        "claude-1",
        "Bash",
        "tu-1",
        json!({"command": "cargo test parser"}),
    ))
    .unwrap();
    claude["cwd"] = json!(project);
    assert_ack(&env.hook("capture", claude.to_string().as_bytes()));

    let listed = |args: &[&str]| -> Vec<Value> {
        let out = run(&env, &[&["sessions", "--all", "--json"], args].concat());
        stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = listed(&[]);
    assert_eq!(all.len(), 2, "{all:?}");
    let codex_only = listed(&["--agent", "codex"]);
    assert_eq!(codex_only.len(), 1, "{codex_only:?}");
    assert_eq!(codex_only[0]["agent"], "codex");
    assert_eq!(codex_only[0]["id"], "codex-1");
    assert_eq!(listed(&["--agent", "claude-code"])[0]["id"], "claude-1");

    let text = stdout(&run(&env, &["sessions", "--all"]));
    assert!(
        text.contains("codex") && text.contains("claude-code"),
        "{text}"
    );

    let found = |agent: &str| -> Vec<Value> {
        let out = run(
            &env,
            &["search", "parser", "--all", "--json", "--agent", agent],
        );
        stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let codex_hits = found("codex");
    assert!(!codex_hits.is_empty());
    assert!(
        codex_hits.iter().all(|h| h["session_id"] == "codex-1"),
        "{codex_hits:?}"
    );
    assert!(
        found("claude-code")
            .iter()
            .all(|h| h["session_id"] == "claude-1")
    );
    let cursor = run(&env, &["search", "parser", "--all", "--agent", "cursor"]);
    assert_eq!(cursor.status.code(), Some(1), "nothing of Cursor's");

    let line = stdout(&run(&env, &["timeline", "codex-1", "--json"]));
    let first: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(first["agent"], "codex");

    let status: Value = serde_json::from_slice(&run(&env, &["status", "--json"]).stdout).unwrap();
    let agents = &status["database"]["agents"];
    assert_eq!(agents["codex"], 1, "{status}");
    assert_eq!(agents["claude-code"], 1, "{status}");
}

#[test]
fn cursor_events_through_claude_codes_registration_are_filed_under_the_workspace() {
    let env = Env::new();
    let workspace = env.root.path().join("shop");
    // A shell call's cwd, a tool's output as a string of JSON, as Cursor sends them.
    let call = cursor_event(
        "postToolUse",
        "conv-1",
        &workspace,
        json!({"tool_name": "Shell", "tool_use_id": "cu-1", "cwd": "",
               "tool_input": {"command": "npm test"},
               "tool_output": "{\"exitCode\":0,\"stdout\":\"12 passing\"}",
               "duration": 1200}),
    );
    let prompt = cursor_event(
        "beforeSubmitPrompt",
        "conv-1",
        &workspace,
        json!({"prompt": "why does checkout fail", "attachments": []}),
    );
    assert_silent(&env.hook("prompt", prompt.to_string().as_bytes()));
    assert_silent(&env.hook("capture", call.to_string().as_bytes()));
    assert_eq!(agent_of(&env, "conv-1"), "cursor");
    let (project, raw): (String, String) = env
        .db()
        .query_row(
            "SELECT project_dir, raw_output FROM pending_queue WHERE tool_use_id = 'cu-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(Path::new(&project), workspace);
    assert!(raw.contains("12 passing"), "{raw}");
    let session_project: String = env
        .db()
        .query_row(
            "SELECT project_dir FROM sessions WHERE session_id = 'conv-1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(Path::new(&session_project), workspace);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM user_prompts WHERE prompt_text = 'why does checkout fail'"),
        1
    );

    // With no workspace to file it under, or no conversation, it is left out, never stored
    // under an empty or wrong project.
    let mut homeless = call.clone();
    homeless["workspace_roots"] = json!([]);
    homeless["tool_use_id"] = json!("cu-2");
    let mut anonymous = call.clone();
    anonymous.as_object_mut().unwrap().remove("conversation_id");
    anonymous["tool_use_id"] = json!("cu-3");
    for event in [homeless, anonymous] {
        assert_silent(&env.hook("capture", event.to_string().as_bytes()));
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 1);
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 1);
}

#[test]
fn a_cursor_session_start_is_answered_with_additional_context() {
    let env = Env::new();
    let workspace = env.root.path().join("shop");
    let earlier = cursor_event(
        "beforeSubmitPrompt",
        "conv-1",
        &workspace,
        json!({"prompt": "fix the flaky checkout test"}),
    );
    assert_silent(&env.hook("prompt", earlier.to_string().as_bytes()));
    let start = cursor_event(
        "sessionStart",
        "conv-2",
        &workspace,
        json!({"session_id": "conv-2", "is_background_agent": false, "composer_mode": "agent"}),
    );
    for args in [&[][..], &["--agent", "cursor"]] {
        let out = hook_with(&env, "context", args, &start);
        assert_clean(&out);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        let context = answer["additional_context"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert!(context.contains("fix the flaky checkout test"), "{context}");
        assert!(answer.get("hookSpecificOutput").is_none(), "{answer}");
    }
    assert_eq!(agent_of(&env, "conv-2"), "cursor");
}
