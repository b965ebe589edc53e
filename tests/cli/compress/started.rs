//! The hooks start the compressor detached: at a session's end, and after a Stop once a
//! backlog waits; never when it is turned off; and install-hooks says what it uses.

use crate::harness::{ACK, assert_clean};

use super::*;

/// SessionEnd starts the compressor detached: the hook answers at once (while the compressor
/// is still at work) and the session's items become memories. With CLAUDE_MEM_COMPRESS=off
/// nothing starts.
#[test]
fn session_end_starts_the_compressor_detached_unless_turned_off() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS", "on");
    working_session(&env, "s1");
    fs::write(model.join("hold"), "").unwrap();
    let end = event("s1", "SessionEnd", json!({"reason": "other"}));
    let out = env.hook("cleanup", &end);
    assert_eq!(String::from_utf8_lossy(&out.stdout), ACK);
    assert_clean(&out);
    // The hook is back (its pipes closed: the compressor holds none of them) while the
    // compressor it started is still in its model call.
    wait_until(|| !calls(&model).is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0);
    fs::remove_file(model.join("hold")).unwrap();
    wait_until(|| {
        env.log()
            .contains("6 items into 1 memories and 1 summaries in 1 calls")
    });
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 1);
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);

    let (env, model) = with_model();
    working_session(&env, "s1");
    assert_ack(&env.hook("cleanup", &end));
    assert_started_no_compressor(&env, &model);
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// After the hooks of a test have returned, that they started no compressor: one they had
/// started would be running now (a hook returns once its child is started), or have taken
/// its lock and called the model.
fn assert_started_no_compressor(env: &Env, model: &Path) {
    #[cfg(target_os = "linux")]
    assert_eq!(env.running("compress"), Vec::<u32>::new());
    assert!(!env.data_dir.join("compress.lock").exists());
    assert!(calls(model).is_empty());
}

/// A Stop starts it only once enough waits (100 items): a short turn does not.
#[test]
fn a_stop_starts_the_compressor_once_the_backlog_passes_the_threshold() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS", "on");
    working_session(&env, "s1");
    // 6 items are no backlog.
    assert_started_no_compressor(&env, &model);
    let many: Vec<(&str, Value, Value)> = (0..100)
        .map(|i| {
            (
                "Bash",
                json!({"command": format!("echo {i}")}),
                json!({"stdout": "ok"}),
            )
        })
        .collect();
    turn(&env, "s1", 2, "Run many commands", &many);
    wait_until(|| env.log().contains(" items into "));
    assert!(!calls(&model).is_empty());
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
}

#[test]
fn install_hooks_says_what_compression_uses_and_how_to_turn_it_off() {
    let env = Env::new().with("CLAUDE_MEM_COMPRESS", "on");
    let out = ok(&env.command().arg("install-hooks").output().unwrap());
    // The note is wrapped to 100 columns: read it as one line.
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains(
            "Compression: after each session, claude-mem compress turns its captured tool calls \
             into short memories with your Claude Code account (claude -p with model haiku"
        ) && out.contains("at most 300,000 tokens a day")
            && out.contains("set CLAUDE_MEM_COMPRESS=off"),
        "{out}"
    );
}
