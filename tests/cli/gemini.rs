//! Google's Gemini CLI on the same binary and memory: its events (Claude Code's fields under
//! its own event names), its answers, and `install-hooks --agent gemini` in its settings with
//! its uninstall. The payloads are those Gemini CLI 0.61.0's source builds
//! (packages/core/src/hooks/hookEventHandler.ts: the base input and each event's fields), and
//! those the real CLI 0.61.0 sent to a hook (tests/fixtures/gemini-0.61.0/, recorded offline
//! against a loopback model; only the paths were changed); `e2e_gemini` runs the CLI itself.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

/// A Gemini event: the base input of every event and `extra`.
fn gemini_event(event: &str, session: &str, cwd: &Path, extra: Value) -> Value {
    let mut e = json!({
        "session_id": session,
        "transcript_path": cwd.join(".gemini-chat.json"),
        "cwd": cwd,
        "hook_event_name": event,
        "timestamp": "2026-11-29T10:00:00.000Z",
    });
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e
}

fn gemini(env: &Env, hook: &str, event: &Value) -> Output {
    let mut cmd = env.command();
    cmd.args(["hook", hook, "--agent", "gemini"]);
    run_with_input(&mut cmd, event.to_string().as_bytes())
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A shell call as Gemini's AfterTool sends it.
fn shell_call(command: &str, output: &str, at: &str) -> Value {
    json!({"tool_name": "run_shell_command", "timestamp": at,
           "tool_input": {"command": command, "description": "Run the tests"},
           "tool_response": {"llmContent": format!("Command: {command}\nOutput: {output}\nExit Code: 0"),
                             "returnDisplay": output}})
}

/// The payload the real Gemini CLI sent for `event`, as it sent it (byte for byte, but its
/// folder, which becomes `project`).
fn sent(event: &str, project: &Path) -> Vec<u8> {
    let text = String::from_utf8(fixture(&format!("gemini-0.61.0/{event}.json"))).unwrap();
    let folder = serde_json::to_string(project).unwrap();
    let text = text.replace("\"/home/dev/app\"", &folder);
    assert!(text.contains(&folder), "the fixture's cwd is /home/dev/app");
    text.into_bytes()
}

fn gemini_sent(env: &Env, hook: &str, input: &[u8]) -> Output {
    let mut cmd = env.command();
    cmd.args(["hook", hook, "--agent", "gemini"]);
    run_with_input(&mut cmd, input)
}

/// A session as the real CLI ran it with `-p`: the prompt it hands BeforeAgent (and AfterAgent)
/// starts with the session-start context, which is not the user's.
#[test]
fn a_session_gemini_sent_is_recorded_with_the_prompt_as_the_user_typed_it() {
    let env = Env::new();
    let project = env.root.path().join("app");
    for (hook, event) in [
        ("context", "SessionStart"),
        ("prompt", "BeforeAgent"),
        ("capture", "AfterTool"),
        ("summary", "AfterAgent"),
        ("cleanup", "SessionEnd"),
    ] {
        assert_clean(&gemini_sent(&env, hook, &sent(event, &project)));
    }
    let (agent, status, last): (String, String, String) = env
        .db()
        .query_row(
            "SELECT agent, status, last_assistant_message FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (agent.as_str(), status.as_str(), last.as_str()),
        ("gemini", "closed", "Done: the command ran.")
    );
    let prompt: String = env
        .db()
        .query_row("SELECT prompt_text FROM user_prompts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(prompt, "which port does the staging database listen on?");
    let out = run(&env, &["search", "--all", "claude-mem-context"]);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("claude-mem-context"),
        "our own context is nowhere in the memory: {out:?}"
    );
}

#[test]
fn a_gemini_calls_id_is_the_same_in_every_build() {
    let env = Env::new();
    let project = env.root.path().join("app");
    assert_silent(&gemini_sent(&env, "capture", &sent("AfterTool", &project)));
    let id: String = env
        .db()
        .query_row("SELECT tool_use_id FROM pending_queue", [], |r| r.get(0))
        .unwrap();
    // FNV-1a of the tool, its input as sent and the length of its result: the id an event
    // sent again gets, whichever Rust built the binary.
    assert_eq!(id, "gemini-2026-11-29T18:48:08.620Z-6176ac2e1bebf54a");
}

/// A whole Gemini session: start, prompt, a shell call, the turn's end, the session's.
fn gemini_session(env: &Env, session: &str, project: &Path) {
    let prompt = "make the parser accept tabs";
    let events = [
        ("context", "SessionStart", json!({"source": "startup"})),
        ("prompt", "BeforeAgent", json!({"prompt": prompt})),
        (
            "capture",
            "AfterTool",
            shell_call("cargo test parser", "test parser::tabs ... ok", "t1"),
        ),
        (
            "summary",
            "AfterAgent",
            json!({"prompt": prompt, "prompt_response": "The parser accepts tabs now.",
                   "stop_hook_active": false}),
        ),
        ("cleanup", "SessionEnd", json!({"reason": "exit"})),
    ];
    for (hook, event, extra) in events {
        let out = gemini(env, hook, &gemini_event(event, session, project, extra));
        assert_clean(&out);
    }
}

#[test]
fn a_gemini_session_is_recorded_as_geminis_under_claude_codes_events() {
    let env = Env::new();
    let project = env.root.path().join("app");
    gemini_session(&env, "gm-1", &project);
    let (agent, status): (String, String) = env
        .db()
        .query_row(
            "SELECT agent, status FROM sessions WHERE session_id = 'gm-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((agent.as_str(), status.as_str()), ("gemini", "closed"));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM user_prompts WHERE session_id = 'gm-1'"),
        1
    );
    let raw: String = env
        .db()
        .query_row(
            "SELECT raw_output FROM pending_queue
             WHERE session_id = 'gm-1' AND tool_name = 'run_shell_command'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(raw.contains("test parser::tabs ... ok"), "{raw}");
    let summary: String = env
        .db()
        .query_row(
            "SELECT raw_output FROM pending_queue
             WHERE session_id = 'gm-1' AND raw_output LIKE '%last_assistant_message%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        summary.contains("The parser accepts tabs now."),
        "{summary}"
    );
    let out = run(&env, &["sessions", "--all", "--agent", "gemini", "--json"]);
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["tool_calls"], 1, "{line}");
}

#[test]
fn two_gemini_calls_with_no_id_are_two_rows_and_one_sent_twice_is_one() {
    let env = Env::new();
    let project = env.root.path().join("app");
    let call = |at: &str| gemini_event("AfterTool", "gm-2", &project, shell_call("ls", "a", at));
    for event in [call("t1"), call("t2"), call("t2")] {
        assert_silent(&gemini(&env, "capture", &event));
    }
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE session_id = 'gm-2'"),
        2
    );
}

#[test]
fn the_memorys_own_mcp_tools_are_not_recorded_from_gemini() {
    let env = Env::new();
    let project = env.root.path().join("app");
    let extra = json!({"tool_name": "mcp_claude-mem_search", "tool_input": {"query": "tabs"},
                       "tool_response": {"llmContent": "1 result", "returnDisplay": ""}});
    let ours = gemini_event("AfterTool", "gm-3", &project, extra);
    assert_silent(&gemini(&env, "capture", &ours));
    assert!(
        !env.db_path().exists() || env.count("SELECT COUNT(*) FROM pending_queue") == 0,
        "nothing recorded"
    );
}

#[test]
fn gemini_is_given_context_at_session_start_and_with_a_prompt() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let project = env.root.path().join("app");
    gemini_session(&env, "gm-old", &project);
    let out = run(&env, &["search", "--all", "index"]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");

    let start = gemini_event(
        "SessionStart",
        "gm-new",
        &project,
        json!({"source": "startup"}),
    );
    let out = gemini(&env, "context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a context answer");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("make the parser accept tabs"), "{answer}");

    // A maintenance process the hooks started may hold the index: recall then gives nothing.
    env.wait_for_maintenance();
    let ask = json!({"prompt": "how did we make the parser accept tabs?"});
    let out = gemini(
        &env,
        "prompt",
        &gemini_event("BeforeAgent", "gm-next", &project, ask),
    );
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a recall answer");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    let recall = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(recall.contains("make the parser accept tabs"), "{answer}");
}

fn settings_path(env: &Env) -> PathBuf {
    env.root.path().join("gemini-home/.gemini/settings.json")
}

/// A user's Gemini settings: keys of theirs, a server and a hook of theirs, their own indent.
const USER_SETTINGS: &str = "{\n    \"theme\": \"GitHub\",\n    \"mcpServers\": {\n        \
    \"docs\": {\"command\": \"docs-server\"}\n    },\n    \"hooks\": {\"BeforeTool\": [{\"matcher\": \
    \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\"}]}]}\n}\n";

fn with_gemini_home(env: Env) -> Env {
    let path = settings_path(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, USER_SETTINGS).unwrap();
    let home = env.root.path().join("gemini-home");
    let home = home.to_str().unwrap().to_string();
    env.with("GEMINI_CLI_HOME", &home)
}

#[test]
fn gemini_install_keeps_every_key_and_uninstall_gives_the_settings_back_byte_for_byte() {
    let env = with_gemini_home(Env::new());
    let path = settings_path(&env);
    let out = run(&env, &["install-hooks", "--agent", "gemini"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(settings["theme"], "GitHub");
    assert_eq!(settings["mcpServers"]["docs"]["command"], "docs-server");
    assert_eq!(settings["mcpServers"]["claude-mem"]["args"], json!(["mcp"]));
    assert_eq!(settings["hooks"]["BeforeTool"][0]["matcher"], "write_file");
    for (event, hook) in [
        ("SessionStart", "context"),
        ("BeforeAgent", "prompt"),
        ("AfterTool", "capture"),
        ("AfterAgent", "summary"),
        ("SessionEnd", "cleanup"),
    ] {
        let command = settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_default();
        assert!(
            command.ends_with(&format!("hook {hook} --agent gemini")),
            "{settings}"
        );
    }
    let again = run(&env, &["install-hooks", "--agent", "gemini"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing changed"));

    let out = run(&env, &["uninstall-hooks", "--agent", "gemini"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&path), USER_SETTINGS, "byte for byte");
}

#[test]
fn gemini_uninstall_after_the_user_changed_the_settings_keeps_their_change() {
    let env = with_gemini_home(Env::new());
    let path = settings_path(&env);
    assert!(
        run(&env, &["install-hooks", "--agent", "gemini"])
            .status
            .success()
    );
    let mut settings: Value = serde_json::from_str(&read(&path)).unwrap();
    settings["theme"] = json!("Dracula");
    std::fs::write(&path, settings.to_string()).unwrap();
    assert!(
        run(&env, &["uninstall-hooks", "--agent", "gemini"])
            .status
            .success()
    );
    let left: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(left["theme"], "Dracula");
    assert_eq!(left["hooks"]["BeforeTool"][0]["matcher"], "write_file");
    assert!(!read(&path).contains("claude-mem"), "{left}");
}

#[test]
fn gemini_install_refuses_settings_with_comments_and_changes_nothing() {
    let env = with_gemini_home(Env::new());
    let path = settings_path(&env);
    let commented = "{\n  // my theme\n  \"theme\": \"GitHub\"\n}\n";
    std::fs::write(&path, commented).unwrap();
    let out = run(&env, &["install-hooks", "--agent", "gemini"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("settings.json"), "{err}");
    assert_eq!(read(&path), commented);
}
