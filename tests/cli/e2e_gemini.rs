//! End to end: the real Gemini CLI (`gemini -p`), offline, talking to a loopback stand-in of
//! Gemini's API (`harness::mock_responses`, its Gemini side: `GOOGLE_GEMINI_BASE_URL`, an API
//! key from the environment), with claude-mem's hooks installed by `install-hooks --agent
//! gemini` into the user settings of a throwaway HOME, which hold settings of the user's. It
//! proves that Gemini runs the hooks we install, with payloads we understand and answers it
//! accepts (no hook reported as failed), that its sessions and tool calls are recorded as
//! Gemini's, that the memory handed back (at the next session start, and with a prompt about
//! earlier work) reaches the model's request, and nowhere else, and that uninstall gives the
//! user's settings back.
//!
//! The CLI comes from `harness::gemini_cli` (`CLAUDE_MEM_E2E_GEMINI`, or the pinned install
//! under `target/e2e/`, which `CLAUDE_MEM_E2E_INSTALL=1` makes); without it the test says why
//! and passes as skipped, or fails under `CLAUDE_MEM_TEST_REQUIRE_ALL=1`. Unix only, as the
//! others.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::gemini_cli;
use crate::harness::mock_responses::{ANSWER, MockResponses};
use crate::harness::{Env, run_with_input, wait_or_kill};
use serde_json::{Value, json};

/// The command the stand-in model runs in every turn: its output is the old session's fact.
const COMMAND: &str = "echo the staging database listens on port 6543";
const START_HEAD: &str = "Recent sessions in this project";
const RECALL_HEAD: &str = "Earlier work in this project that matches this prompt";
/// What opens everything the memory hands the model; Gemini escapes a hook's `<` and `>`,
/// so the tag's name is looked for, not the tag.
const OURS: &str = "claude-mem-context";
/// A user's Gemini settings, which install must keep and uninstall give back: an API key's
/// login (the key is in the environment), no usage statistics, telemetry or update checks.
const USER_SETTINGS: &str = r#"{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false }
}
"#;

/// What reached the model in one `gemini -p`.
struct Turn {
    requests: Vec<Value>,
}

impl Turn {
    fn saw(&self, text: &str) -> bool {
        self.requests.iter().any(|r| r.to_string().contains(text))
    }
}

struct Gemini<'a> {
    bin: &'a Path,
    env: &'a Env,
    mock: &'a MockResponses,
}

impl Gemini<'_> {
    fn prompt(&self, project: &Path, prompt: &str) -> Turn {
        std::fs::create_dir_all(project).unwrap();
        let mut cmd = self.env.command_of(self.bin);
        cmd.current_dir(project)
            .env("GEMINI_API_KEY", "offline")
            .env("GOOGLE_GEMINI_BASE_URL", self.mock.origin())
            // One process: the CLI otherwise starts itself again with a larger heap.
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .args([
                "-p",
                prompt,
                "-m",
                "gemini-2.5-flash",
                "--yolo",
                "--skip-trust",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let status = wait_or_kill(&mut child, Duration::from_secs(120)).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(status.is_some_and(|s| s.success()), "gemini -p: {stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(ANSWER),
            "the turn ended with the model's answer: {stderr}"
        );
        // Gemini reports a failed hook ("Hook(s) [...] failed for event AfterTool") and shows
        // a hook's message ("Hook system message: ...") here: ours say nothing.
        assert!(!stderr.contains("Hook"), "{stderr}");
        Turn {
            requests: self.mock.take_requests(),
        }
    }
}

fn settings(env: &Env) -> PathBuf {
    env.home().join(".gemini/settings.json")
}

#[test]
fn a_real_gemini_session_is_recorded_as_geminis_and_its_memory_reaches_the_next() {
    let Some(bin) = gemini_cli::find() else {
        return;
    };
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    std::fs::create_dir_all(env.home().join(".gemini")).unwrap();
    std::fs::write(settings(&env), USER_SETTINGS).unwrap();
    let out = hooks_command(&env, "install-hooks");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let call = json!({"command": COMMAND, "description": "Check the staging setup"});
    let mock = MockResponses::gemini_calling("run_shell_command", &call).unwrap();
    let gemini = Gemini {
        bin: &bin,
        env: &env,
        mock: &mock,
    };
    let project = env.root.path().join("shop");

    let first = gemini.prompt(&project, "check the staging setup");
    assert!(!first.saw(OURS), "a new memory has nothing to give");
    recorded(&env, &project);
    // The session's end asked the maintenance process for the search index; a search waits
    // for nothing and brings it up to date now.
    let search = env.command().args(["search", "staging", "--all"]).output();
    assert!(search.unwrap().status.success());

    let second = gemini.prompt(&project, "which port does the staging database listen on?");
    assert!(
        second.saw(START_HEAD),
        "the session-start context reached the model"
    );
    // The turn's first request, before the stand-in's call ran again in this session.
    let asked = second.requests[0].to_string();
    assert!(
        asked.contains(RECALL_HEAD) && asked.contains("port 6543"),
        "per-prompt recall of the first session's output reached the model: {asked}"
    );
    let prompts = env.count(
        "SELECT COUNT(*) FROM user_prompts
         WHERE prompt_text = 'which port does the staging database listen on?'",
    );
    assert_eq!(
        prompts, 1,
        "the prompt is recorded as typed, without the context"
    );

    let unrelated = gemini.prompt(&project, "rename the logo file to brand.svg");
    assert!(unrelated.saw(START_HEAD));
    assert!(
        !unrelated.saw(RECALL_HEAD),
        "an unrelated prompt gets no recall"
    );
    let elsewhere = gemini.prompt(
        &env.root.path().join("blog"),
        "which port does staging use?",
    );
    assert!(!elsewhere.saw(OURS), "another project gets nothing");

    assert!(hooks_command(&env, "uninstall-hooks").status.success());
    let after = std::fs::read_to_string(settings(&env)).unwrap();
    assert_eq!(after, USER_SETTINGS);
}

/// `install-hooks --agent gemini` or `uninstall-hooks --agent gemini`, in the test's HOME.
fn hooks_command(env: &Env, command: &str) -> std::process::Output {
    let mut cmd = env.command();
    cmd.args([command, "--agent", "gemini"]);
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
    assert_eq!(agent, "gemini");
    assert_eq!(Path::new(&dir), project);
    assert_eq!(status, "closed", "SessionEnd ran");
    let (tool, raw): (String, String) = db
        .query_row(
            "SELECT tool_name, raw_output FROM pending_queue WHERE kind = 'observation'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(tool, "run_shell_command", "Gemini's name of the tool");
    assert!(raw.contains("port 6543"), "{raw}");
    let last: String = db
        .query_row("SELECT last_assistant_message FROM sessions", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(last, ANSWER, "AfterAgent's prompt_response");
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
}
