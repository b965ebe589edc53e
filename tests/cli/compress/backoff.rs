//! Issue 27: honest spend and a compressor that backs off. A model program that never ran (not
//! found, not executable, a wrapper whose target is gone) was charged its estimate and an
//! attempt of every item of its batch, and with it missing every session's end started the
//! compressor again. Such a call now costs nothing, and each pause that follows another with
//! nothing stored between lasts twice as long, up to a cap; the hooks start no compressor
//! meanwhile.

use super::*;

/// The day's tokens, as `status --json` gives them.
fn spent_today(env: &Env) -> i64 {
    let out = ok(&env.command().args(["status", "--json"]).output().unwrap());
    let status: Value = serde_json::from_str(&out).unwrap();
    status["compress"]["today"]["tokens"].as_i64().unwrap_or(0)
}

/// The pause file's first line: until when (seconds since the epoch), the cause, the streak.
fn pause_line(env: &Env) -> (u64, String, u32) {
    let text = fs::read_to_string(env.data_dir.join("compress.paused")).unwrap();
    let words: Vec<&str> = text.lines().next().unwrap().split(' ').collect();
    (
        words[0].parse().unwrap(),
        words[1].to_string(),
        words[2].parse().unwrap(),
    )
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A program that is not there (127 from `sh`, or from the keeper when `CLAUDE_MEM_CLAUDE_BIN`
/// names a missing file), a file that cannot be run (126), a wrapper whose target is gone
/// (127 from its own shell): none reached a model. The batch goes back with no attempt
/// counted, the day's spend stays 0, compression pauses, and the command says so with exit 1.
#[test]
fn a_model_program_that_never_ran_costs_no_tokens_and_no_attempt() {
    // Only its folder is used: each case has an environment of its own.
    let (_home, model) = with_model();
    let not_executable = model.join("plain.txt");
    fs::write(&not_executable, "not a program\n").unwrap();
    let wrapper = model.join("claude");
    harness::write_program(&wrapper, "#!/bin/sh\nexec /gone/claude-2.1.330 \"$@\"\n");
    let missing = model.join("missing-model");
    let cases: [(&str, &str, &std::path::Path); 4] = [
        ("missing", "CLAUDE_MEM_COMPRESS_CMD", &missing),
        ("not executable", "CLAUDE_MEM_COMPRESS_CMD", &not_executable),
        (
            "a wrapper whose target is gone",
            "CLAUDE_MEM_COMPRESS_CMD",
            &wrapper,
        ),
        (
            "a claude wrapper whose target is gone",
            "CLAUDE_MEM_CLAUDE_BIN",
            &wrapper,
        ),
    ];
    for (case, var, program) in cases {
        let env = Env::new().with(var, program.to_str().unwrap());
        working_session(&env, "s1");
        for _ in 0..2 {
            let out = compress(&env, &[]);
            assert_eq!(out.status.code(), Some(1), "{case}: {}", stdout(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("could not run") && err.contains("no attempt counted, no token spent"),
                "{case}: {err}"
            );
        }
        assert_eq!(queue_states(&env), [json!(["raw", 0, 0])], "{case}");
        assert_eq!(
            rows(
                &env,
                "SELECT outcome, tokens FROM compress_calls GROUP BY 1, 2"
            ),
            [json!(["unavailable", 0])],
            "{case}"
        );
        assert_eq!(spent_today(&env), 0, "{case}");
        assert_eq!(pause_line(&env).1, "unavailable", "{case}");
    }
}

/// With the model program missing, a session's end starts the compressor once: it gives its
/// batch back and pauses for an hour; the next session ends start none (the wrapper counts the
/// times it was run). Each pause that follows another lasts twice as long (1 h, 2 h, 4 h), up
/// to 6 h; `status` and `doctor` say until when and that it is backing off.
#[test]
fn a_missing_model_program_backs_off_doubling_and_the_hooks_do_not_restart_it() {
    let (env, model) = with_model();
    let counter = model.join("runs");
    let wrapper = model.join("wrapper.sh");
    harness::write_program(
        &wrapper,
        format!(
            "#!/bin/sh\necho run >> '{}'\nexec /gone/model \"$@\"\n",
            counter.display()
        ),
    );
    let env = env
        .with("CLAUDE_MEM_COMPRESS_CMD", wrapper.to_str().unwrap())
        .with("CLAUDE_MEM_COMPRESS", "on");
    let runs = || {
        fs::read_to_string(&counter)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let end = |session: &str| {
        working_session(&env, session);
        assert_ack(&env.hook(
            "cleanup",
            &event(session, "SessionEnd", json!({"reason": "other"})),
        ));
    };
    let hour = 3600;
    let mut expected = [hour, 2 * hour, 4 * hour, 6 * hour, 6 * hour].into_iter();
    for round in 0..5u32 {
        end(&format!("s{round}a"));
        wait_until(|| env.log().matches("stopped: Unavailable").count() > round as usize);
        assert_eq!(runs(), round as usize + 1, "round {round}");
        let (until, cause, streak) = pause_line(&env);
        let pause = expected.next().unwrap();
        assert_eq!((cause.as_str(), streak), ("unavailable", round));
        assert!(until.abs_diff(now() + pause) < 60, "round {round}: {until}");
        // Within the pause, another session's end starts nothing.
        end(&format!("s{round}b"));
        // A compressor the hook started exists once it returned (a spawn returns after the
        // exec); the maintenance process it starts too is waited for, not the clock.
        env.wait_for_maintenance();
        #[cfg(target_os = "linux")]
        assert_eq!(env.running("compress"), Vec::<u32>::new());
        assert_eq!(runs(), round as usize + 1, "round {round}: restarted");
        if round == 1 {
            let status = ok(&env.command().arg("status").output().unwrap());
            assert!(
                status.contains("when the hooks try again; backing off: paused 2 times in a row"),
                "{status}"
            );
            let doctor = stdout(&env.command().arg("doctor").output().unwrap());
            assert!(doctor.contains("backing off: paused 2 times"), "{doctor}");
        }
        // Time passes: the pause is over (its streak kept), and the next end tries again.
        let text = fs::read_to_string(env.data_dir.join("compress.paused")).unwrap();
        let rest = text.split_once(' ').unwrap().1;
        fs::write(
            env.data_dir.join("compress.paused"),
            format!("{} {rest}", now() - 1),
        )
        .unwrap();
    }
    // Nothing was spent, no attempt counted.
    assert_eq!(spent_today(&env), 0);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE attempts > 0"),
        0
    );
    // A model that works again: the run stores, and the backoff is over.
    fs::remove_file(&wrapper).unwrap();
    harness::write_program(&wrapper, MODEL);
    ok(&compress(&env, &[]));
    assert!(!env.data_dir.join("compress.paused").exists());
}

/// Batch after batch failing (a program that answers no JSON) stops the run after three, as
/// before, and now also pauses the hooks' runs for 15 minutes, doubling while it goes on:
/// the next session end starts no compressor.
#[test]
fn batches_failing_in_a_row_back_off() {
    let (env, model) = with_model();
    let broken = model.join("broken.sh");
    harness::write_program(
        &broken,
        format!(
            "#!/bin/sh\ncat >/dev/null\necho run >> '{}'\necho 'Traceback: KeyError' >&2\nexit 1\n",
            model.join("runs").display()
        ),
    );
    let env = env
        .with("CLAUDE_MEM_COMPRESS_CMD", broken.to_str().unwrap())
        .with("CLAUDE_MEM_COMPRESS", "on");
    for session in ["s1", "s2", "s3"] {
        working_session(&env, session);
    }
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Stopped after 3 failed batches in a row")
            && err.contains("the hooks start no compressor for 15 minutes"),
        "{err}"
    );
    let (until, cause, streak) = pause_line(&env);
    assert_eq!((cause.as_str(), streak), ("failing", 0));
    assert!(until.abs_diff(now() + 15 * 60) < 60, "{until}");
    let runs = || {
        fs::read_to_string(model.join("runs"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(runs(), 3);
    working_session(&env, "s4");
    assert_ack(&env.hook(
        "cleanup",
        &event("s4", "SessionEnd", json!({"reason": "other"})),
    ));
    env.wait_for_maintenance();
    #[cfg(target_os = "linux")]
    assert_eq!(env.running("compress"), Vec::<u32>::new());
    assert_eq!(
        runs(),
        3,
        "the hooks started a compressor while it backs off"
    );
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains("when the hooks try again") && status.contains("3 batches failed in a row"),
        "{status}"
    );
}
