//! End to end: the real OpenCode CLI (`opencode run`), offline, talking to the loopback
//! stand-in of `harness::mock_responses` through a custom OpenAI-compatible provider (Chat
//! Completions, its `baseURL` on 127.0.0.1; no models.dev fetch, update check, share or default
//! plugin), with claude-mem's plugin installed by `install-hooks --agent opencode` into a
//! throwaway HOME whose `~/.config/opencode/opencode.json` is the user's. It proves that
//! OpenCode loads the plugin we write and that the plugin runs our hooks with events we
//! understand, that OpenCode's sessions and tool calls are recorded as OpenCode's and closed,
//! that the memory handed back (at the next session start, and with a prompt about earlier
//! work) reaches the model's request, and nowhere else, and that uninstall gives the user's
//! file back; and that a plugin whose binary is gone, or hangs, leaves OpenCode as it was.
//!
//! The CLI comes from `harness::opencode_cli` (`CLAUDE_MEM_E2E_OPENCODE`, or the pinned install
//! under `target/e2e/`, which `CLAUDE_MEM_E2E_INSTALL=1` makes); without it the test says why
//! and passes as skipped, or fails under `CLAUDE_MEM_TEST_REQUIRE_ALL=1`. Unix only, as the
//! others.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::mock_responses::{ANSWER, MockResponses};
use crate::harness::opencode_cli;
use crate::harness::{Env, run_with_input, wait_or_kill, write_program};
use serde_json::{Value, json};

/// The command the stand-in model runs in every turn: its output is the old session's fact.
const COMMAND: &str = "echo the staging database listens on port 6543";
const START_HEAD: &str = "Recent sessions in this project";
const RECALL_HEAD: &str = "Earlier work in this project that matches this prompt";

struct OpenCode<'a> {
    bin: &'a Path,
    env: &'a Env,
    mock: &'a MockResponses,
}

impl OpenCode<'_> {
    /// One `opencode run` in `project`: the requests that reached the model.
    fn run(&self, project: &Path, prompt: &str) -> Vec<Value> {
        std::fs::create_dir_all(project).unwrap();
        let mut cmd = self.env.command_of(self.bin);
        cmd.current_dir(project)
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_SHARE", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .args(["run", prompt])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let status = wait_or_kill(&mut child, Duration::from_secs(180)).unwrap();
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(status.is_some_and(|s| s.success()), "opencode run: {said}");
        assert!(
            said.contains(ANSWER),
            "the turn ended with the model's answer: {said}"
        );
        assert!(
            !said.to_lowercase().contains("error"),
            "no error shown: {said}"
        );
        self.mock.take_requests()
    }
}

fn saw(requests: &[Value], text: &str) -> bool {
    requests.iter().any(|r| r.to_string().contains(text))
}

fn opencode_home(env: &Env) -> PathBuf {
    env.home().join(".config/opencode")
}

/// The user's config: the stand-in as their provider and model, which install must keep and
/// uninstall give back byte for byte.
fn user_config(mock: &MockResponses) -> String {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "e2e/e2e-model",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"e2e": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "E2E stand-in",
            "options": {"baseURL": mock.base_url(), "apiKey": "offline"},
            "models": {"e2e-model": {"name": "E2E model", "tool_call": true}},
        }},
    });
    // Not as claude-mem writes JSON: a tab, keys on one line.
    format!("{config}\n").replace("{\"", "{\t\"")
}

#[test]
fn a_real_opencode_session_is_recorded_as_opencodes_and_its_memory_reaches_the_next() {
    let Some(bin) = opencode_cli::find() else {
        return;
    };
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let call = json!({"command": COMMAND, "description": "Check the staging setup"});
    let mock = MockResponses::calling("bash", &call).unwrap();
    let home = opencode_home(&env);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("opencode.json"), user_config(&mock)).unwrap();
    let out = hooks_command(&env, "install-hooks");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let opencode = OpenCode {
        bin: &bin,
        env: &env,
        mock: &mock,
    };
    let project = env.root.path().join("shop");

    opencode.run(&project, "check the staging setup");
    recorded(&env, &project);
    // The session's end asked the maintenance process for the search index; a search waits
    // for nothing and brings it up to date now.
    let search = env.command().args(["search", "staging", "--all"]).output();
    assert!(search.unwrap().status.success());

    let second = opencode.run(&project, "which port does the staging database listen on?");
    assert!(
        saw(&second, START_HEAD),
        "the session-start context reached the model"
    );
    assert!(
        saw(&second, RECALL_HEAD),
        "per-prompt recall reached the model"
    );
    let unrelated = opencode.run(&project, "rename the logo file to brand.svg");
    assert!(saw(&unrelated, START_HEAD));
    assert!(
        !saw(&unrelated, RECALL_HEAD),
        "an unrelated prompt gets no recall"
    );
    let elsewhere = opencode.run(
        &env.root.path().join("blog"),
        "which port does staging use?",
    );
    assert!(
        !saw(&elsewhere, "<claude-mem-context>"),
        "another project gets nothing"
    );
    without_a_working_binary(&opencode, &home, &project);

    assert!(hooks_command(&env, "uninstall-hooks").status.success());
    let config = std::fs::read_to_string(home.join("opencode.json")).unwrap();
    assert_eq!(config, user_config(&mock));
    assert!(
        !home.join("plugins/claude-mem.js").exists(),
        "install had created it"
    );
}

/// The binary the plugin runs is gone (moved, removed by hand), or hangs: OpenCode goes on as
/// if there were no plugin, showing nothing; a hung hook is killed at its deadline.
fn without_a_working_binary(opencode: &OpenCode, home: &Path, project: &Path) {
    let plugin = home.join("plugins/claude-mem.js");
    let text = std::fs::read_to_string(&plugin).unwrap();
    // Each hung hook outlives OpenCode when OpenCode exits before its deadline (a capture):
    // it says its id, and is ended here. Two of 120 s, waited on, would outlast the run's 180.
    let hung = opencode.env.root.path().join("hung-claude-mem");
    let pids = opencode.env.root.path().join("hung.pids");
    write_program(
        &hung,
        format!(
            "#!/bin/sh\necho $$ >> '{}'\nexec sleep 120\n",
            pids.display()
        ),
    );
    for stand_in in [Path::new("/gone/claude-mem"), &hung] {
        let other = text.replace(env!("CARGO_BIN_EXE_claude-mem"), stand_in.to_str().unwrap());
        assert_ne!(other, text);
        std::fs::write(&plugin, other).unwrap();
        let without = opencode.run(project, "which port does the staging database listen on?");
        assert!(!saw(&without, "<claude-mem-context>"));
    }
    let hung_ids = std::fs::read_to_string(&pids).unwrap_or_default();
    for pid in hung_ids.split_whitespace() {
        let _ = std::process::Command::new("kill").arg(pid).status();
    }
    assert!(
        hung_ids.lines().count() >= 2,
        "the plugin ran the hung hooks"
    );
}

/// `install-hooks --agent opencode` or `uninstall-hooks --agent opencode`, in the test's HOME.
fn hooks_command(env: &Env, command: &str) -> std::process::Output {
    let mut cmd = env.command();
    cmd.args([command, "--agent", "opencode"]);
    run_with_input(&mut cmd, b"")
}

/// The first session, as the database holds it.
fn recorded(env: &Env, project: &Path) {
    let db = env.db();
    let (agent, dir, status): (String, String, String) = db
        .query_row("SELECT agent, project_dir, status FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(agent, "opencode");
    assert_eq!(Path::new(&dir), project);
    assert_eq!(status, "closed", "the session ended with OpenCode");
    let (tool, raw): (String, String) = db
        .query_row(
            "SELECT tool_name, raw_output FROM pending_queue WHERE kind = 'observation'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(tool, "bash", "OpenCode's name of the tool");
    assert!(raw.contains("port 6543"), "{raw}");
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
    let summary = "SELECT COUNT(*) FROM pending_queue WHERE kind = 'summary'";
    assert_eq!(
        env.count(summary),
        1,
        "the turn's end asked for its summary"
    );
}
