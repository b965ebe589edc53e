//! Errors that are not the batch's (a rate limit, no login, no model program, no network): the
//! items go back with no attempt counted, compression pauses, and the command says why with
//! exit 1.

use crate::harness::assert_clean;

use super::*;

/// A login that fails, a rate limit, or no model program at all is not the items' fault: they
/// go back uncounted, compression pauses (the hooks start none meanwhile), and the command
/// says so with exit 1.
#[test]
fn errors_that_are_not_the_batchs_give_the_items_back_and_pause() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(
        model.join("reply"),
        json!({"is_error": true, "api_error_status": 429, "result": "Rate limited",
               "usage": {"input_tokens": 0, "output_tokens": 0}})
        .to_string(),
    )
    .unwrap();
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not about the items (Rate limited); 6 items wait"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    assert!(env.data_dir.join("compress.paused").exists());
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains("paused until") && status.contains("Rate limited"),
        "{status}"
    );

    let env = Env::new().with("PATH", "/nonexistent");
    working_session(&env, "s2");
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Claude Code found"), "{err}");
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// Regression: `compress --auto` (which the hooks start after a session) with no `claude` to
/// run read the whole queue before it found out (126,000 pages, 5.7 to 7.7 s on a 100,000-capture
/// database), and claimed and gave back a batch. The model program is looked for first: a run
/// without one pauses compression and reads nothing; the database is left byte for byte.
#[test]
fn compress_auto_without_claude_pauses_before_reading_the_queue() {
    let env = Env::new().with("PATH", "/nonexistent");
    working_session(&env, "s1");
    env.db()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let files = || {
        ["memory.db", "memory.db-wal"].map(|f| fs::read(env.data_dir.join(f)).unwrap_or_default())
    };
    let before = files();
    let out = compress(&env, &["--auto"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(files() == before, "the database was written");
    let paused = fs::read_to_string(env.data_dir.join("compress.paused")).unwrap();
    assert!(paused.contains("no Claude Code found"), "{paused}");
    assert!(
        env.log().contains("stopped: no Claude Code found"),
        "{}",
        env.log()
    );
    // By hand it says so, and how many items wait.
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no Claude Code found") && err.contains("6 items wait"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// What Claude Code 2.1.330 prints for `claude -p --output-format json` with no login
/// (`is_error: true`, `api_error_status: null`, "Not logged in · Please run /login").
const NOT_LOGGED_IN: &str = include_str!("../../fixtures/compress/not-logged-in.json");

/// Issue 16: "Not logged in" has no API status, and was taken for a bad batch: an attempt
/// counted on every item at each run (the hooks start one after every session, so a lapsed
/// login failed them all for good), and exit 0. It is known by its words: the items go back
/// untouched, compression pauses, and the command exits 1 with one line saying what to do.
#[test]
fn not_logged_in_gives_the_items_back_pauses_and_exits_1() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("reply"), NOT_LOGGED_IN).unwrap();
    for _ in 0..6 {
        let out = compress(&env, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("(Not logged in · Please run /login); 6 items wait, no attempt counted")
                && err.contains(
                    "log in again (run claude, then /login), then run claude-mem compress"
                ),
            "{err}"
        );
        assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    }
    assert_eq!(
        rows(&env, "SELECT DISTINCT outcome FROM compress_calls"),
        [json!(["unreachable"])]
    );
    // Paused for an hour: the hooks' runs call nothing meanwhile.
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains("(Not logged in · Please run /login)"),
        "{status}"
    );
    let before = calls(&model).len();
    assert_clean(&compress(&env, &["--auto"]));
    assert_eq!(calls(&model).len(), before);
    // Logged in again: a run by hand compresses it all.
    fs::remove_file(model.join("reply")).unwrap();
    ok(&compress(&env, &[]));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert!(!env.data_dir.join("compress.paused").exists());
}

/// A program that dies saying why on stderr, without the JSON: the same words count.
#[test]
fn a_command_that_cannot_reach_its_model_gives_the_items_back() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    let script = model.join("offline.sh");
    harness::write_program(
        &script,
        "#!/bin/sh\ncat >/dev/null\necho 'urlopen error [Errno 111] Connection refused' >&2\nexit 1\n",
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("check the network"), "{err}");
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}
