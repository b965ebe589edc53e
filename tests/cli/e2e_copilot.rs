//! End to end: the real GitHub Copilot CLI (`copilot -p`), offline (`COPILOT_OFFLINE`, a
//! custom provider on `COPILOT_PROVIDER_BASE_URL` speaking the Responses API: the loopback
//! stand-in of `harness::mock_responses`, which calls Copilot's `bash` tool), with claude-mem's
//! hooks installed by `install-hooks --agent copilot` into a throwaway `COPILOT_HOME` that
//! holds an MCP config of the user's. It proves that Copilot runs the hooks we install, with
//! payloads we understand, that its sessions and tool calls are recorded as Copilot's, that
//! the memory handed back (at the next session start, and with a prompt about earlier work)
//! reaches the model's request, and nowhere else, and that uninstall gives the user's file
//! back.
//!
//! The CLI comes from `harness::copilot_cli` (`CLAUDE_MEM_E2E_COPILOT`, or the pinned install
//! under `target/e2e/`, which `CLAUDE_MEM_E2E_INSTALL=1` makes); without it the test says why
//! and passes as skipped, or fails under `CLAUDE_MEM_TEST_REQUIRE_ALL=1`. Unix only, as the
//! others.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::copilot_cli;
use crate::harness::mock_responses::{ANSWER, MockResponses};
use crate::harness::{Env, run_with_input, wait_or_kill};
use serde_json::{Value, json};

/// The command the stand-in model runs in every turn: its output is the old session's fact.
const COMMAND: &str = "echo the staging database listens on port 6543";
const START_HEAD: &str = "Recent sessions in this project";
const RECALL_HEAD: &str = "Earlier work in this project that matches this prompt";
/// A user's MCP config, which install must keep and uninstall give back.
const USER_MCP: &str = "{\"mcpServers\": {\"docs\": {\"type\": \"local\", \"command\": \
    \"docs-server\", \"args\": [], \"tools\": [\"*\"]}}}\n";

struct Copilot<'a> {
    bin: &'a Path,
    env: &'a Env,
    mock: &'a MockResponses,
}

impl Copilot<'_> {
    /// One `copilot -p` turn in `project`: the requests that reached the model.
    fn prompt(&self, project: &Path, prompt: &str) -> Vec<Value> {
        std::fs::create_dir_all(project).unwrap();
        let mut cmd = self.env.command_of(self.bin);
        cmd.current_dir(project)
            .env("COPILOT_HOME", copilot_home(self.env))
            // Copilot unpacks itself (190 MB) into the cache on its first run: once, not per test.
            .env("XDG_CACHE_HOME", unpacked())
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_PROVIDER_BASE_URL", self.mock.base_url())
            .env("COPILOT_PROVIDER_WIRE_API", "responses")
            .env("COPILOT_MODEL", "gpt-5.4")
            .args(["-p", prompt, "--allow-all-tools"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let status = wait_or_kill(&mut child, Duration::from_secs(120)).unwrap();
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(status.is_some_and(|s| s.success()), "copilot -p: {said}");
        assert!(
            said.contains(ANSWER),
            "the turn ended with the model's answer: {said}"
        );
        self.mock.take_requests()
    }
}

fn saw(requests: &[Value], text: &str) -> bool {
    requests.iter().any(|r| r.to_string().contains(text))
}

fn copilot_home(env: &Env) -> PathBuf {
    env.root.path().join("copilot-home")
}

fn unpacked() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache")
}

#[test]
fn a_real_copilot_session_is_recorded_as_copilots_and_its_memory_reaches_the_next() {
    let Some(bin) = copilot_cli::find() else {
        return;
    };
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let home = copilot_home(&env);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("mcp-config.json"), USER_MCP).unwrap();
    let out = hooks_command(&env, "install-hooks");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let call = json!({"command": COMMAND, "description": "Check the staging setup"});
    let mock = MockResponses::calling("bash", &call).unwrap();
    let copilot = Copilot {
        bin: &bin,
        env: &env,
        mock: &mock,
    };
    let project = env.root.path().join("shop");

    copilot.prompt(&project, "check the staging setup");
    recorded(&env, &project);
    // The session's end asked the maintenance process for the search index; a search waits
    // for nothing and brings it up to date now.
    let search = env.command().args(["search", "staging", "--all"]).output();
    assert!(search.unwrap().status.success());

    let second = copilot.prompt(&project, "which port does the staging database listen on?");
    assert!(
        saw(&second, START_HEAD),
        "the session-start context reached the model"
    );
    assert!(
        saw(&second, RECALL_HEAD),
        "per-prompt recall reached the model"
    );
    let unrelated = copilot.prompt(&project, "rename the logo file to brand.svg");
    assert!(saw(&unrelated, START_HEAD));
    assert!(
        !saw(&unrelated, RECALL_HEAD),
        "an unrelated prompt gets no recall"
    );
    let elsewhere = copilot.prompt(
        &env.root.path().join("blog"),
        "which port does staging use?",
    );
    assert!(
        !saw(&elsewhere, "<claude-mem-context>"),
        "another project gets nothing"
    );

    assert!(hooks_command(&env, "uninstall-hooks").status.success());
    let mcp = std::fs::read_to_string(home.join("mcp-config.json")).unwrap();
    assert_eq!(mcp, USER_MCP);
    assert!(
        !home.join("hooks/claude-mem.json").exists(),
        "install had created it"
    );
}

/// `install-hooks --agent copilot` or `uninstall-hooks --agent copilot`, in the test's
/// COPILOT_HOME.
fn hooks_command(env: &Env, command: &str) -> std::process::Output {
    let mut cmd = env.command();
    cmd.env("COPILOT_HOME", copilot_home(env))
        .args([command, "--agent", "copilot"]);
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
    assert_eq!(agent, "copilot");
    assert_eq!(Path::new(&dir), project);
    assert_eq!(status, "closed", "SessionEnd ran");
    let (tool, raw): (String, String) = db
        .query_row(
            "SELECT tool_name, raw_output FROM pending_queue WHERE kind = 'observation'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(tool, "Bash", "Claude Code's name of the tool");
    assert!(raw.contains("port 6543"), "{raw}");
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
}
