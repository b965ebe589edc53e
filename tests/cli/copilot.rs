//! GitHub Copilot CLI on the same binary and memory: its events (Claude Code's shape under
//! PascalCase keys, its tool calls' `tool_result`), its answers (a top-level
//! `additionalContext`), and `install-hooks --agent copilot` with its uninstall. The payloads
//! are those the real Copilot CLI 1.0.102 sent to a hook (tests/fixtures/copilot-1.0.102/,
//! recorded offline against a loopback model; only `cwd` and `transcript_path` were changed);
//! `e2e_copilot` runs the CLI itself.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

/// A payload Copilot sent for `event`, in session `session` of the folder `cwd`.
fn copilot_event(event: &str, session: &str, cwd: &Path) -> Value {
    let mut e = fixture_json(&format!("copilot-1.0.102/{event}.json"));
    e["session_id"] = json!(session);
    e["cwd"] = json!(cwd);
    if e.get("transcript_path").is_some() {
        e["transcript_path"] = json!(cwd.join("no-transcript.jsonl"));
    }
    e
}

fn copilot(env: &Env, hook: &str, event: &Value) -> Output {
    let mut cmd = env.command();
    cmd.args(["hook", hook, "--agent", "copilot"]);
    run_with_input(&mut cmd, event.to_string().as_bytes())
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A whole Copilot session: start, prompt, a shell call, the turn's stop, its end.
fn copilot_session(env: &Env, session: &str, project: &Path) {
    for (hook, event) in [
        ("context", "SessionStart"),
        ("prompt", "UserPromptSubmit"),
        ("capture", "PostToolUse"),
        ("summary", "Stop"),
        ("cleanup", "SessionEnd"),
    ] {
        let out = copilot(env, hook, &copilot_event(event, session, project));
        assert_clean(&out);
    }
}

#[test]
fn a_copilot_session_is_recorded_as_copilots_with_its_tool_result_as_the_response() {
    let env = Env::new();
    let project = env.root.path().join("app");
    copilot_session(&env, "cp-1", &project);
    let (agent, status): (String, String) = env
        .db()
        .query_row(
            "SELECT agent, status FROM sessions WHERE session_id = 'cp-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((agent.as_str(), status.as_str()), ("copilot", "closed"));
    let prompt: String = env
        .db()
        .query_row(
            "SELECT prompt_text FROM user_prompts WHERE session_id = 'cp-1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(prompt, "make the parser accept tabs");
    let (tool, raw): (String, String) = env
        .db()
        .query_row(
            "SELECT tool_name, raw_output FROM pending_queue
             WHERE session_id = 'cp-1' AND tool_name <> ''",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(tool, "Bash");
    let raw: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(raw["tool_input"]["command"], "echo hello-e2e");
    let response = raw["tool_response"].as_str().unwrap_or_default();
    assert!(response.starts_with("hello-e2e\n"), "{raw}");

    let out = run(&env, &["sessions", "--all", "--agent", "copilot", "--json"]);
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (line["agent"].as_str(), line["tool_calls"].as_i64()),
        (Some("copilot"), Some(1))
    );
}

#[test]
fn a_copilot_tool_result_that_is_not_a_success_is_recorded_as_a_failure() {
    let env = Env::new();
    let project = env.root.path().join("app");
    let mut call = copilot_event("PostToolUse", "cp-2", &project);
    call["tool_result"] = json!({"result_type": "denied",
                                 "text_result_for_llm": "The user denied this tool call."});
    assert_silent(&copilot(&env, "capture", &call));
    let (event, raw): (String, String) = env
        .db()
        .query_row(
            "SELECT event, raw_output FROM pending_queue WHERE session_id = 'cp-2'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(event, "PostToolUseFailure");
    assert!(raw.contains("The user denied this tool call."), "{raw}");
}

#[test]
fn copilot_is_given_context_as_a_top_level_additional_context() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let project = env.root.path().join("app");
    copilot_session(&env, "cp-old", &project);
    // The search index per-prompt recall reads, brought up to date as a search does.
    let out = run(&env, &["search", "--all", "index"]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");

    let out = copilot(
        &env,
        "context",
        &copilot_event("SessionStart", "cp-new", &project),
    );
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a context answer");
    assert!(answer.get("hookSpecificOutput").is_none(), "{answer}");
    let context = answer["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("make the parser accept tabs"), "{answer}");

    // Another session, as the start's context gave this one the prompt already.
    let mut prompt = copilot_event("UserPromptSubmit", "cp-next", &project);
    prompt["prompt"] = json!("how did we make the parser accept tabs?");
    let out = copilot(&env, "prompt", &prompt);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a recall answer");
    let recall = answer["additionalContext"].as_str().unwrap_or_default();
    assert!(recall.contains("make the parser accept tabs"), "{answer}");
    // Nothing to say is nothing at all: Copilot needs no acknowledgement.
    let call = copilot_event("PostToolUse", "cp-new", &project);
    assert_silent(&copilot(&env, "capture", &call));
}

fn copilot_home(env: &Env) -> PathBuf {
    env.root.path().join("copilot-home")
}

/// A user's Copilot folder: an MCP server and a hooks file of theirs.
const USER_MCP: &str = "{\n    \"mcpServers\": {\n        \"docs\": {\"type\": \"local\", \
    \"command\": \"docs-server\", \"args\": [], \"tools\": [\"*\"]}\n    }\n}\n";
const USER_HOOKS: &str = "{\"version\": 1, \"hooks\": {\"sessionEnd\": [{\"type\": \"command\", \
    \"bash\": \"notify-send done\"}]}}\n";

fn with_copilot_home(env: Env) -> Env {
    let home = copilot_home(&env);
    std::fs::create_dir_all(home.join("hooks")).unwrap();
    std::fs::write(home.join("mcp-config.json"), USER_MCP).unwrap();
    std::fs::write(home.join("hooks/mine.json"), USER_HOOKS).unwrap();
    let home = home.to_str().unwrap().to_string();
    env.with("COPILOT_HOME", &home)
}

#[test]
fn copilot_install_writes_a_hooks_file_of_its_own_and_uninstall_gives_everything_back() {
    let env = with_copilot_home(Env::new());
    let home = copilot_home(&env);
    let out = run(&env, &["install-hooks", "--agent", "copilot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Value = serde_json::from_str(&read(&home.join("hooks/claude-mem.json"))).unwrap();
    assert_eq!(ours["version"], 1);
    for (event, hook) in [
        ("SessionStart", "context"),
        ("UserPromptSubmit", "prompt"),
        ("PostToolUse", "capture"),
        ("PostToolUseFailure", "capture"),
        ("Stop", "summary"),
        ("SessionEnd", "cleanup"),
    ] {
        let handler = &ours["hooks"][event][0];
        assert_eq!(handler["type"], "command", "{ours}");
        let bash = handler["bash"].as_str().unwrap_or_default();
        assert!(
            bash.ends_with(&format!("hook {hook} --agent copilot")),
            "{bash}"
        );
    }
    let mcp: Value = serde_json::from_str(&read(&home.join("mcp-config.json"))).unwrap();
    assert_eq!(mcp["mcpServers"]["docs"]["command"], "docs-server");
    let server = &mcp["mcpServers"]["claude-mem"];
    assert_eq!(
        (&server["args"], &server["type"]),
        (&json!(["mcp"]), &json!("local"))
    );
    assert_eq!(read(&home.join("hooks/mine.json")), USER_HOOKS);

    let again = run(&env, &["install-hooks", "--agent", "copilot"]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("nothing changed"), "{said}");

    let out = run(&env, &["uninstall-hooks", "--agent", "copilot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!home.join("hooks/claude-mem.json").exists());
    assert_eq!(
        read(&home.join("mcp-config.json")),
        USER_MCP,
        "byte for byte"
    );
    assert_eq!(read(&home.join("hooks/mine.json")), USER_HOOKS);
}

#[test]
fn copilot_uninstall_keeps_what_the_user_added_to_our_hooks_file() {
    let env = with_copilot_home(Env::new());
    let home = copilot_home(&env);
    assert!(
        run(&env, &["install-hooks", "--agent", "copilot", "--no-mcp"])
            .status
            .success()
    );
    let path = home.join("hooks/claude-mem.json");
    let mut hooks: Value = serde_json::from_str(&read(&path)).unwrap();
    hooks["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "bash": "say done"}));
    std::fs::write(&path, hooks.to_string()).unwrap();
    assert!(
        run(&env, &["uninstall-hooks", "--agent", "copilot", "--no-mcp"])
            .status
            .success()
    );
    let left: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(
        left["hooks"],
        json!({"Stop": [{"type": "command", "bash": "say done"}]})
    );
}

#[test]
fn copilot_install_refuses_an_mcp_config_it_cannot_read_and_changes_nothing() {
    let env = with_copilot_home(Env::new());
    let home = copilot_home(&env);
    std::fs::write(home.join("mcp-config.json"), "{\"mcpServers\": ").unwrap();
    let out = run(&env, &["install-hooks", "--agent", "copilot"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("mcp-config.json"), "{err}");
    assert!(
        !home.join("hooks/claude-mem.json").exists(),
        "no hooks file either"
    );
    assert_eq!(read(&home.join("mcp-config.json")), "{\"mcpServers\": ");
}
