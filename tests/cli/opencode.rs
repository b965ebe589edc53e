//! OpenCode on the same binary and memory: the events claude-mem's plugin sends from
//! OpenCode's (Claude Code's fields and names, `--agent opencode`), the answers it reads, and
//! `install-hooks --agent opencode` (the plugin and the MCP server in `opencode.json`) with
//! its uninstall. The real OpenCode runs the plugin in `e2e_opencode.rs`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

/// An event as the plugin sends it: the session, its folder, the event's name and `extra`.
fn opencode_event(event: &str, session: &str, cwd: &Path, extra: Value) -> Value {
    let mut e = json!({"session_id": session, "cwd": cwd, "hook_event_name": event});
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e
}

fn opencode(env: &Env, hook: &str, event: &Value) -> Output {
    let mut cmd = env.command();
    cmd.args(["hook", hook, "--agent", "opencode"]);
    run_with_input(&mut cmd, event.to_string().as_bytes())
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `bash` call as the plugin sends OpenCode's `tool.execute.after`.
fn bash_call(command: &str, output: &str, call: &str) -> Value {
    json!({"tool_name": "bash", "tool_use_id": call,
           "tool_input": {"command": command, "description": "Run the tests"},
           "tool_response": {"title": command, "output": output,
                             "metadata": {"output": output, "exit": 0, "truncated": false}}})
}

/// A whole OpenCode session: start, prompt, a call, the turn's end, the process's exit.
fn opencode_session(env: &Env, session: &str, project: &Path) {
    let events = [
        ("context", "SessionStart", json!({"source": "startup"})),
        (
            "prompt",
            "UserPromptSubmit",
            json!({"prompt": "make the parser accept tabs"}),
        ),
        (
            "capture",
            "PostToolUse",
            bash_call("cargo test parser", "test parser::tabs ... ok", "call_1"),
        ),
        (
            "summary",
            "Stop",
            json!({"last_assistant_message": "The parser accepts tabs now."}),
        ),
        ("cleanup", "SessionEnd", json!({"reason": "exit"})),
    ];
    for (hook, event, extra) in events {
        assert_clean(&opencode(
            env,
            hook,
            &opencode_event(event, session, project, extra),
        ));
    }
}

#[test]
fn an_opencode_session_is_recorded_as_opencodes_and_given_context() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let project = env.root.path().join("app");
    opencode_session(&env, "ses_old", &project);
    let (agent, status): (String, String) = env
        .db()
        .query_row(
            "SELECT agent, status FROM sessions WHERE session_id = 'ses_old'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((agent.as_str(), status.as_str()), ("opencode", "closed"));
    let out = run(
        &env,
        &["sessions", "--all", "--agent", "opencode", "--json"],
    );
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["tool_calls"], 1, "{line}");
    let out = run(&env, &["search", "--all", "tabs"]);
    assert!(out.status.success(), "{out:?}");

    let start = opencode_event("SessionStart", "ses_new", &project, json!({}));
    let out = opencode(&env, "context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a context answer");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("make the parser accept tabs"), "{answer}");

    env.wait_for_maintenance();
    let ask = json!({"prompt": "how did we make the parser accept tabs?"});
    let out = opencode(
        &env,
        "prompt",
        &opencode_event("UserPromptSubmit", "ses_new", &project, ask),
    );
    let answer: Value = serde_json::from_slice(&out.stdout).expect("a recall answer");
    let recall = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        recall.contains("bash") && recall.contains("cargo test parser"),
        "{answer}"
    );
    // Nothing to say is nothing at all (the plugin reads no acknowledgement).
    let call = bash_call("ls", "a", "call_2");
    assert_silent(&opencode(
        &env,
        "capture",
        &opencode_event("PostToolUse", "ses_new", &project, call),
    ));
}

#[test]
fn the_memorys_own_mcp_tools_are_not_recorded_from_opencode() {
    let env = Env::new();
    let project = env.root.path().join("app");
    let extra = json!({"tool_name": "claude-mem_search", "tool_use_id": "call_9",
                       "tool_input": {"query": "tabs"},
                       "tool_response": {"title": "", "output": "1 result", "metadata": {}}});
    let ours = opencode_event("PostToolUse", "ses_mcp", &project, extra);
    assert_silent(&opencode(&env, "capture", &ours));
    assert!(
        !env.db_path().exists() || env.count("SELECT COUNT(*) FROM pending_queue") == 0,
        "nothing recorded"
    );
}

fn opencode_dir(env: &Env) -> PathBuf {
    env.home().join(".config/opencode")
}

/// A user's OpenCode config: keys of theirs, a server of theirs, their own indent.
const USER_CONFIG: &str = "{\n    \"$schema\": \"https://opencode.ai/config.json\",\n    \
    \"theme\": \"tokyonight\",\n    \"mcp\": {\"docs\": {\"type\": \"remote\", \"url\": \
    \"https://docs.example\"}}\n}\n";

fn with_user_config(env: &Env, name: &str, text: &str) -> PathBuf {
    let path = opencode_dir(env).join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn opencode_install_keeps_every_key_and_uninstall_gives_the_config_back_byte_for_byte() {
    let env = Env::new();
    let path = with_user_config(&env, "opencode.json", USER_CONFIG);
    let plugin = opencode_dir(&env).join("plugins/claude-mem.js");
    let out = run(&env, &["install-hooks", "--agent", "opencode"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(config["theme"], "tokyonight");
    assert_eq!(config["mcp"]["docs"]["url"], "https://docs.example");
    let ours = &config["mcp"]["claude-mem"];
    assert_eq!(ours["type"], "local");
    assert_eq!(ours["command"][1], "mcp", "{config}");
    let exe = ours["command"][0].as_str().unwrap();
    let text = read(&plugin);
    assert!(
        text.contains(&format!("const CLAUDE_MEM = {}", json!(exe))),
        "{text}"
    );
    assert!(text.contains("\"experimental.chat.system.transform\""));
    let again = run(&env, &["install-hooks", "--agent", "opencode"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing changed"));

    let out = run(&env, &["uninstall-hooks", "--agent", "opencode"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&path), USER_CONFIG, "byte for byte");
    assert!(!plugin.exists(), "the plugin is taken out");
    assert!(files_in(&env.data_dir.join("agents")).is_empty());
}

#[test]
fn opencode_uninstall_after_the_user_changed_the_config_keeps_their_change() {
    let env = Env::new();
    let path = with_user_config(&env, "opencode.jsonc", USER_CONFIG);
    assert!(
        run(&env, &["install-hooks", "--agent", "opencode"])
            .status
            .success()
    );
    assert!(
        !opencode_dir(&env).join("opencode.json").exists(),
        "the user's .jsonc is used"
    );
    let mut config: Value = serde_json::from_str(&read(&path)).unwrap();
    config["theme"] = json!("dracula");
    std::fs::write(&path, config.to_string()).unwrap();
    assert!(
        run(&env, &["uninstall-hooks", "--agent", "opencode"])
            .status
            .success()
    );
    let left: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(left["theme"], "dracula");
    assert_eq!(left["mcp"]["docs"]["type"], "remote");
    assert!(!read(&path).contains("claude-mem"), "{left}");
}

#[test]
fn opencode_install_refuses_and_changes_nothing() {
    let env = Env::new();
    // A config with comments, which OpenCode reads and claude-mem does not write.
    let commented = "{\n  // my theme\n  \"theme\": \"tokyonight\"\n}\n";
    let path = with_user_config(&env, "opencode.jsonc", commented);
    let plugin = opencode_dir(&env).join("plugins/claude-mem.js");
    let out = run(&env, &["install-hooks", "--agent", "opencode"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("opencode.jsonc"), "{err}");
    assert_eq!(read(&path), commented);
    assert!(!plugin.exists(), "nothing written when a file is refused");

    // A plugin of that name that is someone else's.
    std::fs::write(&path, "{}\n").unwrap();
    let theirs = "export const Mine = async () => ({})\n";
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, theirs).unwrap();
    let out = run(&env, &["install-hooks", "--agent", "opencode"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not claude-mem's plugin"), "{err}");
    assert_eq!(read(&plugin), theirs);
    assert_eq!(read(&path), "{}\n");
    let out = run(&env, &["uninstall-hooks", "--agent", "opencode"]);
    assert!(out.status.success());
    assert_eq!(read(&plugin), theirs, "uninstall takes only ours");
}
