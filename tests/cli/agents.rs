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

/// A user's Codex config: comments, their own server, a hook of theirs and a trusted one.
const USER_CONFIG: &str = "# my Codex\nmodel = \"o3\"  # the one I like\n\n\
    [mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--stdio\"]\n\n\
    [hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:abc\"\n";
const USER_HOOKS: &str = "{\n  \"hooks\": {\n    \"Stop\": [\n      { \"hooks\": [ { \"type\": \
    \"command\", \"command\": \"notify-send done\" } ] }\n    ]\n  }\n}\n";

fn codex_home(env: &Env) -> std::path::PathBuf {
    env.root.path().join("codex-home")
}

fn with_codex_home(env: Env) -> Env {
    let home = codex_home(&env);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), USER_CONFIG).unwrap();
    std::fs::write(home.join("hooks.json"), USER_HOOKS).unwrap();
    let home = home.to_str().unwrap().to_string();
    env.with("CODEX_HOME", &home)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn codex_install_keeps_every_key_and_uninstall_gives_the_files_back_byte_for_byte() {
    let env = with_codex_home(Env::new());
    let home = codex_home(&env);
    let out = run(&env, &["install-hooks", "--agent", "codex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = stdout(&out);
    assert!(said.contains("/hooks"), "the one step left: {said}");

    let hooks: Value = serde_json::from_str(&read(&home.join("hooks.json"))).unwrap();
    assert_eq!(
        hooks.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["hooks"],
        "Codex refuses any other top-level key: {hooks}"
    );
    assert_eq!(
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    for (event, hook) in [
        ("SessionStart", "context"),
        ("UserPromptSubmit", "prompt"),
        ("PostToolUse", "capture"),
        ("Stop", "summary"),
        ("SessionEnd", "cleanup"),
    ] {
        let groups = hooks["hooks"][event].as_array().unwrap();
        let ours = groups.last().unwrap()["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(
            ours.ends_with(&format!("hook {hook} --agent codex")),
            "{ours}"
        );
    }
    let config = read(&home.join("config.toml"));
    assert!(
        config.starts_with("# my Codex\nmodel = \"o3\"  # the one I like\n"),
        "{config}"
    );
    assert!(
        config.contains("[mcp_servers.docs]\ncommand = \"docs-server\""),
        "{config}"
    );
    assert!(config.contains("[mcp_servers.claude-mem]"), "{config}");
    assert!(config.contains("args = [\"mcp\"]"), "{config}");
    assert!(config.contains("trusted_hash = \"sha256:abc\""), "{config}");

    let again = run(&env, &["install-hooks", "--agent", "codex"]);
    assert!(
        stdout(&again).contains("nothing changed"),
        "{}",
        stdout(&again)
    );

    let out = run(&env, &["uninstall-hooks", "--agent", "codex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&home.join("config.toml")), USER_CONFIG);
    assert_eq!(read(&home.join("hooks.json")), USER_HOOKS);
}

#[test]
fn codex_uninstall_after_the_user_changed_a_file_keeps_their_change() {
    let env = with_codex_home(Env::new());
    let home = codex_home(&env);
    assert!(
        run(&env, &["install-hooks", "--agent", "codex"])
            .status
            .success()
    );
    let config = home.join("config.toml");
    let changed = read(&config) + "\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    std::fs::write(&config, &changed).unwrap();
    assert!(
        run(&env, &["uninstall-hooks", "--agent", "codex"])
            .status
            .success()
    );
    let after = read(&config);
    assert!(
        after.contains("[profiles.fast]\nmodel = \"o4-mini\""),
        "{after}"
    );
    assert!(
        after.contains("# my Codex") && after.contains("[mcp_servers.docs]"),
        "{after}"
    );
    assert!(!after.contains("claude-mem"), "{after}");
    assert_eq!(read(&home.join("hooks.json")), USER_HOOKS);
}

#[test]
fn codex_install_refuses_a_config_it_cannot_read_and_changes_nothing() {
    let env = with_codex_home(Env::new());
    let home = codex_home(&env);
    std::fs::write(home.join("config.toml"), "model = \n[[[").unwrap();
    let out = run(&env, &["install-hooks", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("config.toml"), "{err}");
    assert_eq!(
        read(&home.join("hooks.json")),
        USER_HOOKS,
        "hooks.json untouched too"
    );
}

#[test]
fn doctor_says_when_codex_hooks_are_installed_but_not_reviewed() {
    let env = with_codex_home(Env::new());
    let home = codex_home(&env);
    assert!(
        run(&env, &["install-hooks", "--agent", "codex"])
            .status
            .success()
    );
    let codex_line = |env: &Env| -> String {
        let out = run(env, &["doctor", "--json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "codex")
            .unwrap_or_else(|| panic!("no codex check: {report}"))
            .clone();
        format!("{} {}", check["status"], check["message"])
    };
    let before = codex_line(&env);
    assert!(
        before.contains("warn") && before.contains("not reviewed"),
        "{before}"
    );

    // Codex records a review as a trusted hash under the hook's key: file, event, places.
    let hooks: Value = serde_json::from_str(&read(&home.join("hooks.json"))).unwrap();
    let mut trust = String::new();
    for (event, groups) in hooks["hooks"].as_object().unwrap() {
        let label: String = event
            .chars()
            .enumerate()
            .flat_map(|(i, c)| match (i, c.is_ascii_uppercase()) {
                (0, _) | (_, false) => vec![c.to_ascii_lowercase()],
                _ => vec!['_', c.to_ascii_lowercase()],
            })
            .collect();
        for (g, group) in groups.as_array().unwrap().iter().enumerate() {
            if group["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains("claude-mem")
            {
                let key = format!("{}:{label}:{g}:0", home.join("hooks.json").display());
                trust.push_str(&format!(
                    "\n[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:1\"\n"
                ));
            }
        }
    }
    let config = home.join("config.toml");
    std::fs::write(&config, read(&config) + &trust).unwrap();
    let after = codex_line(&env);
    assert!(
        after.contains("ok") && after.contains("reviewed"),
        "{after}"
    );
}

#[test]
fn a_long_context_is_cut_to_fit_codexs_limit_in_bytes() {
    let env = Env::new()
        .with("CLAUDE_MEM_CONTEXT_SESSIONS", "40")
        .with("CLAUDE_MEM_CONTEXT_CHARS", "40000");
    let project = env.root.path().join("app");
    // Three bytes a character: under Claude Code's cap in characters, over Codex's in bytes.
    let wide = "解析器は入力のタブを受け付けるべきです。".repeat(12);
    for n in 0..30 {
        let session = format!("old-{n}");
        let prompt = json!({"prompt": format!("{n} {wide}")});
        let stop = json!({"last_assistant_message": format!("{n} {wide}")});
        assert_silent(&codex(
            &env,
            "prompt",
            &codex_event("UserPromptSubmit", &session, &project, prompt),
        ));
        assert_silent(&codex(
            &env,
            "summary",
            &codex_event("Stop", &session, &project, stop),
        ));
    }
    let start = codex_event(
        "SessionStart",
        "new",
        &project,
        json!({"source": "startup"}),
    );
    let out = codex(&env, "context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.len() <= 9_000, "{} bytes", context.len());
    assert!(
        context.len() > 4_000,
        "{} bytes: more than a stub",
        context.len()
    );
    assert!(context.ends_with("</claude-mem-context>"), "{context}");
    assert!(context.contains("Codex's limit"), "says that it was cut");
    // Claude Code's own session start is not cut.
    let claude = json!({"session_id": "c", "cwd": project, "hook_event_name": "SessionStart",
                        "source": "startup"});
    let out = env.hook("context", claude.to_string().as_bytes());
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let full = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(full.len() > 9_000, "{} bytes", full.len());
}

#[test]
fn cursor_events_are_stored_once_when_both_registrations_send_them() {
    let env = Env::new();
    let home = env.home();
    let out = run(&env, &["install-hooks", "--agent", "cursor"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hooks: Value = serde_json::from_str(&read(&home.join(".cursor/hooks.json"))).unwrap();
    assert_eq!(hooks["version"], 1);
    let start = hooks["hooks"]["sessionStart"][0]["command"]
        .as_str()
        .unwrap();
    assert!(start.ends_with("hook context --agent cursor"), "{start}");
    assert!(
        hooks["hooks"].get("stop").is_none(),
        "one summary a turn: {hooks}"
    );
    let mcp: Value = serde_json::from_str(&read(&home.join(".cursor/mcp.json"))).unwrap();
    assert_eq!(mcp["mcpServers"]["claude-mem"]["args"], json!(["mcp"]));

    let workspace = env.root.path().join("shop");
    let call = cursor_event(
        "postToolUse",
        "conv-1",
        &workspace,
        json!({"tool_name": "Read", "tool_use_id": "cu-1", "tool_input": {"file_path": "a.rs"},
               "tool_output": "{\"content\":\"fn main() {}\"}"}),
    );
    assert_silent(&hook_with(&env, "capture", &["--agent", "cursor"], &call));
    assert_silent(&env.hook("capture", call.to_string().as_bytes()));
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 1);

    // Uninstalled, Claude Code's registration is the only one left, and records again.
    assert!(
        run(&env, &["uninstall-hooks", "--agent", "cursor"])
            .status
            .success()
    );
    assert!(!home.join(".cursor/hooks.json").exists());
    let mut next = call.clone();
    next["tool_use_id"] = json!("cu-2");
    assert_silent(&env.hook("capture", next.to_string().as_bytes()));
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
}

#[test]
fn a_codex_event_through_a_command_without_the_flag_is_told_by_its_turn_id() {
    // A hooks.json written by hand, before install-hooks --agent codex: `claude-mem hook
    // capture`. Codex would report the acknowledgement as a failed hook.
    let env = Env::new();
    let project = env.root.path().join("app");
    let call = codex_event(
        "PostToolUse",
        "codex-9",
        &project,
        json!({"tool_name": "Bash", "tool_use_id": "call-9",
               "tool_input": {"command": "ls"}, "tool_response": "Cargo.toml"}),
    );
    let out = env.hook("capture", call.to_string().as_bytes());
    assert_silent(&out);
    assert_eq!(agent_of(&env, "codex-9"), "codex");
}
