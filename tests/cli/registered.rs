//! `status` lists the coding agents claude-mem is registered with: for each of Claude Code,
//! Codex, Cursor, Copilot, Gemini and OpenCode, whether its files hold our hooks (OpenCode's:
//! our plugin) and our MCP server, as a user installed them with `install-hooks --agent`.

use std::process::Output;

use crate::harness::*;
use serde_json::Value;

fn run(env: &Env, args: &[&str]) -> Output {
    let out = env.command().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Each agent's (hooks, MCP) states in `status --json`.
fn states(env: &Env) -> Vec<(String, String, String)> {
    let out = run(env, &["status", "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agents = status["agents"].as_array().expect("an agents list");
    agents
        .iter()
        .map(|a| {
            let state = |key: &str| a[key]["state"].as_str().unwrap().to_string();
            (
                a["agent"].as_str().unwrap().to_string(),
                state("hooks"),
                state("mcp"),
            )
        })
        .collect()
}

fn state_of(all: &[(String, String, String)], agent: &str) -> (String, String) {
    let (_, hooks, mcp) = all.iter().find(|(a, _, _)| a == agent).unwrap();
    (hooks.clone(), mcp.clone())
}

#[test]
fn status_lists_each_agent_and_what_of_ours_its_files_hold() {
    let env = Env::new();
    run(&env, &["install-hooks", "--agent", "codex"]);
    run(&env, &["install-hooks", "--agent", "opencode"]);
    run(&env, &["install-hooks", "--agent", "cursor", "--no-mcp"]);
    let gemini = env.home().join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(&gemini, "{ // mine\n}\n").unwrap();

    let all = states(&env);
    let names: Vec<&str> = all.iter().map(|(a, _, _)| a.as_str()).collect();
    let every = [
        "claude-code",
        "codex",
        "cursor",
        "copilot",
        "gemini",
        "opencode",
    ];
    assert_eq!(names, every);
    let pair = |h: &str, m: &str| (h.to_string(), m.to_string());
    assert_eq!(state_of(&all, "codex"), pair("registered", "registered"));
    assert_eq!(state_of(&all, "opencode"), pair("registered", "registered"));
    assert_eq!(state_of(&all, "cursor"), pair("registered", "no_file"));
    assert_eq!(state_of(&all, "copilot"), pair("no_file", "no_file"));
    assert_eq!(state_of(&all, "gemini"), pair("unreadable", "unreadable"));
    assert_eq!(state_of(&all, "claude-code"), pair("no_file", "no_file"));

    let out = run(&env, &["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "registered  codex: hooks and MCP server",
        "cursor: hooks; no MCP server",
        "opencode: plugin and MCP server",
        "gemini: ~/.gemini/settings.json cannot be read",
        "not with claude-code, copilot (claude-mem install-hooks --agent NAME)",
    ] {
        assert!(text.contains(line), "{line}:\n{text}");
    }
    assert!(!text.contains('\x1b'), "no colour when piped");

    run(&env, &["uninstall-hooks", "--agent", "opencode"]);
    run(&env, &["uninstall-hooks", "--agent", "codex"]);
    let all = states(&env);
    assert_eq!(state_of(&all, "opencode"), pair("no_file", "no_file"));
    assert_eq!(state_of(&all, "codex"), pair("no_file", "no_file"));
    let text = String::from_utf8_lossy(&run(&env, &["status"]).stdout).into_owned();
    assert!(
        text.contains("not with claude-code, codex, copilot, opencode"),
        "{text}"
    );
}
