//! Sync outside the command: no hook runs git; the maintenance process a session's end starts
//! syncs, at most once every `CLAUDE_MEM_SYNC_INTERVAL`; and a machine where sync is not set up
//! gets nothing made for it. (Linux: the tests read who ran git from /proc.)
#![cfg(target_os = "linux")]

use std::io::Write;
use std::process::Stdio;

use serde_json::json;

use super::*;

/// A `git` first on PATH that notes which process ran it, then runs the real one.
fn recording_git(env: &Env) -> (PathBuf, String) {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let bin = env.root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = env.root.path().join("git-calls");
    write_program(
        &bin.join("git"),
        format!(
            "#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline >> '{}'\necho >> '{}'\nexec '{real}' \"$@\"\n",
            calls.display(),
            calls.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (calls, path)
}

/// Moves the time of the last sync an hour and a minute back, as if that long had passed.
fn an_hour_later(env: &Env) {
    last_sync_at(
        env,
        std::time::SystemTime::now() - std::time::Duration::from_secs(3660),
    );
}

/// Sets the time of the last sync.
fn last_sync_at(env: &Env, at: std::time::SystemTime) {
    let tried = env.data_dir.join("sync/tried");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&tried)
        .unwrap();
    file.set_modified(at).unwrap();
}

/// A whole session through the hooks of `env`, with `path` as their PATH (a `git` first on it
/// that notes in `calls` who runs it): whether git ran, which may be only the maintenance
/// process the session's end started, never a hook.
fn session_through_the_hooks(env: &Env, path: &str, calls: &Path, id: &str) -> bool {
    let hook = |name: &str, event_name: &str, extra: serde_json::Value| {
        let out = env
            .command()
            .env("PATH", path)
            .args(["hook", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(&event(event_name, id, PROJECT, extra))?;
                child.wait_with_output()
            })
            .unwrap();
        assert_clean(&out);
    };
    hook("context", "SessionStart", json!({"source": "startup"}));
    hook(
        "prompt",
        "UserPromptSubmit",
        json!({"prompt_id": "p", "prompt": "hello"}),
    );
    hook(
        "capture",
        "PostToolUse",
        json!({"prompt_id": "p", "tool_name": "Bash", "tool_use_id": format!("t{id}"),
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "x", "stderr": ""}}),
    );
    hook(
        "summary",
        "Stop",
        json!({"prompt_id": "p", "last_assistant_message": "done"}),
    );
    hook("cleanup", "SessionEnd", json!({"reason": "other"}));
    env.wait_for_maintenance();
    let seen = std::fs::read_to_string(calls).unwrap_or_default();
    std::fs::write(calls, "").unwrap();
    for caller in seen.lines().filter(|l| !l.is_empty()) {
        assert!(!caller.contains(" hook "), "a hook ran git: {caller}");
        assert!(caller.contains("maintain --auto"), "{caller}");
    }
    !seen.is_empty()
}

#[test]
fn no_hook_runs_git_and_the_maintenance_process_syncs_after_a_session_ends_at_most_every_interval()
{
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = Env::new().with("CLAUDE_MEM_SYNC_INTERVAL", "1h");
    let (calls, path) = recording_git(&a);
    let token = start(&a, &remote);
    let session = |id: &str| session_through_the_hooks(&a, &path, &calls, id);
    std::fs::write(&calls, "").unwrap();
    assert!(
        session("aaaaaaaa-0000-4000-8000-0000000000b1"),
        "the maintenance process synced after the session ended"
    );
    let b = machine();
    join(&b, &remote, &token);
    let got = sync(&b);
    assert!(got.contains("received 1 session"), "{got}");
    // Another session ends within the hour: no sync.
    assert!(
        !session("aaaaaaaa-0000-4000-8000-0000000000b2"),
        "synced again before CLAUDE_MEM_SYNC_INTERVAL passed"
    );
    // The clock went back a day: the last sync is in the future, which is no reason to wait
    // a day for the next.
    last_sync_at(
        &a,
        std::time::SystemTime::now() + std::time::Duration::from_secs(86_400),
    );
    assert!(
        session("aaaaaaaa-0000-4000-8000-0000000000b5"),
        "a clock that jumped back stopped the background sync"
    );
    // An hour later, with the remote gone: the failure shows in status and doctor, and no
    // hook is any the wiser.
    an_hour_later(&a);
    let moved = remote.dir.path().join("elsewhere.git");
    std::fs::rename(remote.path(), &moved).unwrap();
    assert!(session("aaaaaaaa-0000-4000-8000-0000000000b3"));
    let main = ok(&run(&a, &["status"]));
    assert!(
        main.contains("failing since") && main.contains("cannot reach"),
        "{main}"
    );
    assert_doctor_warns_it_cannot_reach(&a);
    // Back, an hour later again: the next session's end sends both sessions.
    std::fs::rename(&moved, remote.path()).unwrap();
    an_hour_later(&a);
    assert!(session("aaaaaaaa-0000-4000-8000-0000000000b4"));
    assert!(!ok(&run(&a, &["status"])).contains("failing"));
    let got = sync(&b);
    assert!(got.contains("received 4 sessions"), "{got}");
}

/// Regression: `claude-mem sync` on a machine where sync was never set up started the
/// maintenance process, which made a data dir and a database.
#[test]
fn sync_where_it_is_not_set_up_is_one_line_and_makes_nothing() {
    let a = machine();
    for args in [&["sync"][..], &["sync", "key"]] {
        let err = failed(&run(&a, args), 1);
        assert!(
            err.contains("not set up") && err.contains("sync setup"),
            "{err}"
        );
    }
    let said = ok(&run(&a, &["sync", "status"]));
    assert!(said.contains("not set up"), "{said}");
    let said = ok(&run(&a, &["sync", "off"]));
    assert!(said.contains("nothing to do"), "{said}");
    a.wait_for_maintenance();
    assert!(!a.data_dir.exists(), "{:?}", files_in(&a.data_dir));
}

/// A session started on B a moment after A synced: its start asks the maintenance process for
/// a sync (B's last is older than half a minute), and the session's next prompt recalls what
/// A did, with no hook running git.
#[test]
fn a_session_started_after_another_machine_synced_recalls_its_work_in_its_next_prompt() {
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    let b = Env::new().with("CLAUDE_MEM_RECALL", "1");
    join(&b, &remote, &token);
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-0000000000b9",
        PROJECT,
        &["bravo"],
    );
    b.wait_for_maintenance();
    let said = "Pin the zeppelin exporter to port 9464 behind the collector";
    let id = "aaaaaaaa-0000-4000-8000-0000000000a9";
    assert_ack(&a.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            id,
            PROJECT,
            json!({"prompt_id": "pa9", "prompt": said}),
        ),
    ));
    sync(&a);
    last_sync_at(
        &b,
        std::time::SystemTime::now() - std::time::Duration::from_secs(60),
    );

    let now = "bbbbbbbb-0000-4000-8000-0000000000c1";
    let start = b.hook(
        "context",
        &event("SessionStart", now, PROJECT, json!({"source": "startup"})),
    );
    assert_eq!(start.status.code(), Some(0));
    b.wait_for_maintenance();
    let out = b.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            now,
            PROJECT,
            json!({"prompt_id": "pc1", "prompt": "Which port is the zeppelin exporter pinned to?"}),
        ),
    );
    assert_clean(&out);
    let given = String::from_utf8_lossy(&out.stdout);
    assert!(given.contains("9464"), "A's work not recalled: {given}");
}

/// The sync a session's end starts waits while the compressor that end started makes the
/// session's memories (a model that takes two seconds here), so that they travel with it.
#[test]
fn the_sync_after_a_session_waits_for_its_compression_and_its_memories_travel() {
    let remote = Remote::new();
    let env = Env::new();
    let answer = env.root.path().join("answer.json");
    let reply = json!({"structured_output": {"observations": [memory("alpha", &[1])],
                                             "summary": summary("alpha")},
                       "usage": {"input_tokens": 1000, "output_tokens": 100}});
    std::fs::write(&answer, reply.to_string()).unwrap();
    let model = format!("sleep 2; cat >/dev/null; cat '{}'", answer.display());
    let a = env
        .with("CLAUDE_MEM_COMPRESS_CMD", &model)
        .with("CLAUDE_MEM_COMPRESS", "on");
    let token = start(&a, &remote);
    let id = "aaaaaaaa-0000-4000-8000-0000000000d1";
    session(&a, id, PROJECT, &["alpha"]);
    a.wait_for_maintenance();
    an_hour_later(&a);
    assert_ack(&a.hook(
        "cleanup",
        &event("SessionEnd", id, PROJECT, json!({"reason": "exit"})),
    ));
    wait_until(
        std::time::Duration::from_secs(60),
        "the compressor and the sync",
        || a.running("compress").is_empty() && a.running("maintain").is_empty(),
    );
    assert_eq!(ids(&a, "SELECT title FROM memories"), ["alphatitle"]);

    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(ids(&b, "SELECT title FROM memories"), ["alphatitle"]);
}
