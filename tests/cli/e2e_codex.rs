//! End to end: the real Codex CLI (`codex exec`), offline, talking to a loopback stand-in of the
//! Responses API (`harness::mock_responses`), with claude-mem's hooks installed by
//! `install-hooks --agent codex` into a throwaway `CODEX_HOME` that holds a config of the
//! user's. It proves that Codex runs the hooks we install, with payloads we understand and
//! answers it accepts (no hook reported as failed), that its sessions are recorded as Codex's,
//! that the memory handed back (at the next session start, and with a prompt about earlier
//! work) reaches the model's request, and nowhere else, and that uninstall gives the user's
//! files back.
//!
//! The CLI comes from `harness::codex_cli` (`CLAUDE_MEM_E2E_CODEX`, or the pinned install under
//! `target/e2e/`, which `CLAUDE_MEM_E2E_INSTALL=1` makes); without it the test says why and
//! passes as skipped, or fails under `CLAUDE_MEM_TEST_REQUIRE_ALL=1`. Hooks run without the
//! review Codex asks of a person (`--dangerously-bypass-hook-trust`); `tests/cli/agents.rs`
//! checks that doctor tells an unreviewed install. Unix only, as the Claude Code one.
#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use crate::harness::codex_cli;
use crate::harness::mock_responses::{ANSWER, MockResponses};
use crate::harness::{Env, run_with_input, wait_or_kill};
use serde_json::Value;

/// The command the stand-in model runs in every turn: its output is the old session's fact.
const COMMAND: &str = "echo the staging database listens on port 6543";
const START_HEAD: &str = "Recent sessions in this project";
const RECALL_HEAD: &str = "Earlier work in this project that matches this prompt";
/// A user's Codex config, which install must keep and uninstall give back.
const USER_CONFIG: &str = "# my Codex settings\napproval_policy = \"never\"  # I review diffs\n";

/// What one `codex exec` did: its stderr (Codex's report of each hook) and what reached the
/// model.
struct Turn {
    stderr: String,
    requests: Vec<Value>,
}

impl Turn {
    fn saw(&self, text: &str) -> bool {
        self.requests.iter().any(|r| r.to_string().contains(text))
    }
}

struct Codex<'a> {
    bin: &'a Path,
    env: &'a Env,
    mock: &'a MockResponses,
}

impl Codex<'_> {
    fn exec(&self, project: &Path, prompt: &str) -> Turn {
        std::fs::create_dir_all(project).unwrap();
        let mut cmd = self.env.command_of(self.bin);
        cmd.current_dir(project)
            .env("CODEX_HOME", codex_home(self.env))
            .env("E2E_MOCK_KEY", "offline")
            .args([
                "exec",
                "--dangerously-bypass-hook-trust",
                "--skip-git-repo-check",
            ])
            .args(["-s", "danger-full-access", "-c"])
            .arg(format!(
                "model_providers.mock.base_url=\"{}\"",
                self.mock.base_url()
            ))
            .arg(prompt)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let status = wait_or_kill(&mut child, Duration::from_secs(120)).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(status.is_some_and(|s| s.success()), "codex exec: {stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(ANSWER),
            "the turn ended with the model's answer: {stderr}"
        );
        Turn {
            stderr,
            requests: self.mock.take_requests(),
        }
    }
}

fn codex_home(env: &Env) -> std::path::PathBuf {
    env.root.path().join("codex-home")
}

/// The user's config, and the model provider that is the stand-in (a second file would do as
/// well; one keeps the test short, and uninstall must give back all of it).
fn user_config() -> String {
    format!(
        "{USER_CONFIG}model = \"e2e-model\"\nmodel_provider = \"mock\"\n\n\
         [model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"E2E_MOCK_KEY\"\n"
    )
}

#[test]
fn a_real_codex_session_is_recorded_as_codexs_and_its_memory_reaches_the_next() {
    let Some(bin) = codex_cli::find() else {
        return;
    };
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let home = codex_home(&env);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), user_config()).unwrap();
    let out = hooks_command(&env, "install-hooks");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mock = MockResponses::start(COMMAND).unwrap();
    let codex = Codex {
        bin: &bin,
        env: &env,
        mock: &mock,
    };
    let project = env.root.path().join("shop");

    let first = codex.exec(&project, "check the staging setup");
    recorded(&env, &project, &first);
    // The session's end asked the maintenance process for the search index; a search waits
    // for nothing and brings it up to date now.
    let search = env.command().args(["search", "staging", "--all"]).output();
    assert!(search.unwrap().status.success());

    let second = codex.exec(&project, "which port does the staging database listen on?");
    assert!(!second.stderr.contains("Failed"), "{}", second.stderr);
    assert!(
        second.saw(START_HEAD),
        "the session-start context reached the model"
    );
    assert!(
        second.saw(RECALL_HEAD),
        "per-prompt recall reached the model"
    );

    let unrelated = codex.exec(&project, "rename the logo file to brand.svg");
    assert!(unrelated.saw(START_HEAD));
    assert!(
        !unrelated.saw(RECALL_HEAD),
        "an unrelated prompt gets no recall"
    );
    let elsewhere = codex.exec(
        &env.root.path().join("blog"),
        "which port does staging use?",
    );
    assert!(
        !elsewhere.saw("<claude-mem-context>"),
        "another project gets nothing"
    );

    assert!(hooks_command(&env, "uninstall-hooks").status.success());
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert_eq!(config, user_config());
    assert!(!home.join("hooks.json").exists(), "install had created it");
}

/// `install-hooks --agent codex` or `uninstall-hooks --agent codex`, in the test's CODEX_HOME.
fn hooks_command(env: &Env, command: &str) -> std::process::Output {
    let mut cmd = env.command();
    cmd.env("CODEX_HOME", codex_home(env))
        .args([command, "--agent", "codex"]);
    run_with_input(&mut cmd, b"")
}

/// The first session, as Codex reported its hooks and as the database holds it.
fn recorded(env: &Env, project: &Path, first: &Turn) {
    for hook in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"] {
        assert!(
            first.stderr.contains(&format!("hook: {hook} Completed")),
            "{hook}: {}",
            first.stderr
        );
    }
    assert!(!first.stderr.contains("Failed"), "{}", first.stderr);
    let db = env.db();
    let (agent, dir, status): (String, String, String) = db
        .query_row("SELECT agent, project_dir, status FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(agent, "codex");
    assert_eq!(Path::new(&dir), project);
    assert_eq!(status, "closed", "SessionEnd ran within Codex's second");
    let raw: String = db
        .query_row(
            "SELECT raw_output FROM pending_queue WHERE kind = 'observation'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(raw.contains("port 6543"), "{raw}");
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
}
