//! The daily token budget: when it is spent the rest waits for tomorrow; usage numbers and
//! settings past their most are held to it, never breaking the ledger.

use crate::harness::assert_clean;

use super::*;

/// When the day's budget has no room for the next batch, its items wait (released, not
/// failed) and compression pauses until the next day; what was spent is on the ledger and in
/// `status`.
#[test]
fn the_daily_budget_stops_compression_and_the_rest_waits_for_tomorrow() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", "8000");
    fs::write(model.join("tokens"), "5000").unwrap();
    working_session(&env, "first");
    working_session(&env, "second");
    // Yesterday's spend does not count against today.
    env.db()
        .execute(
            "INSERT INTO compress_calls (id, day, batch, items, tokens, estimated, outcome,
                                         created_at, updated_at)
             VALUES ('old', '2000-01-01', 'b', 1, 999999, 0, 'stored', '', '')",
            [],
        )
        .unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("Compressed 6 items of 1 session"), "{out}");
    assert!(
        out.contains("Stopped: today's budget of 8,000 tokens is spent; 6 items wait for tomorrow"),
        "{out}"
    );
    assert_eq!(calls(&model).len(), 1);
    assert_eq!(
        rows(
            &env,
            "SELECT session_id, status, attempts FROM pending_queue GROUP BY 1, 2, 3"
        ),
        [json!(["first", "done", 0]), json!(["second", "raw", 0])]
    );
    assert!(env.data_dir.join("compress.paused").exists());
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains(
            "compress      today 5,100 of 8,000 tokens ($0.0015); 6 items waiting; paused until"
        ) && status.contains("the daily token budget is spent"),
        "{status}"
    );
    let json: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["status", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(json["compress"]["today"]["tokens"], 5100);
    assert_eq!(json["compress"]["daily_tokens"], 8000);
    assert_eq!(json["compress"]["waiting"], 6);
    // A hook's run does nothing while paused; a run by hand with a larger budget goes on.
    let auto = compress(&env, &["--auto"]);
    assert_clean(&auto);
    assert_eq!(calls(&model).len(), 1);
    let env = env.with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", "100000");
    ok(&compress(&env, &[]));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert!(!env.data_dir.join("compress.paused").exists());
}

/// Issue 16: usage numbers from a model program are not ours. 2^64 − 1 tokens was recorded as
/// −1 (and panicked a debug build); rows of 2^63 made SQLite's `sum` overflow, so every
/// `compress` and `status` failed for the rest of the day. A report is held to a billion
/// tokens of each kind, and the ledger is read safely whatever rows it already holds.
#[test]
fn absurd_usage_numbers_are_clamped_and_never_break_the_ledger() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("tokens"), u64::MAX.to_string()).unwrap();
    ok(&compress(&env, &[]));
    assert_eq!(
        rows(&env, "SELECT input_tokens, tokens FROM compress_calls"),
        [json!([1_000_000_000_i64, 1_000_000_100_i64])]
    );
    // Rows an earlier release stored: 2^64 − 1 as −1, 2^63 as −2^63, and worse.
    let day: String = env
        .db()
        .query_row("SELECT day FROM compress_calls", [], |r| r.get(0))
        .unwrap();
    for (n, tokens) in [-1, i64::MIN, i64::MAX, i64::MAX].into_iter().enumerate() {
        env.db()
            .execute(
                "INSERT INTO compress_calls (id, day, batch, items, tokens, estimated, outcome,
                                             created_at, updated_at)
                 VALUES (?1, ?2, 'b', 1, ?3, 0, 'stored', '', '')",
                rusqlite::params![format!("old{n}"), day, tokens],
            )
            .unwrap();
    }
    let json: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["status", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    let today = json["compress"]["today"]["tokens"].as_i64().unwrap();
    assert!(today >= 1_000_000_100, "{json}");
    ok(&env.command().arg("status").output().unwrap());
    // The budget is spent: the next session waits for tomorrow, said plainly.
    working_session(&env, "s2");
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("today's budget of 300,000 tokens is spent"),
        "{out}"
    );
    assert_eq!(calls(&model).len(), 1);
}

/// Regression: `CLAUDE_MEM_COMPRESS_DAILY_TOKENS=18446744073709551615` was shown as a budget
/// of -1 tokens by `status` and `compress` (u64 shown as i64), a timeout that large made
/// `compress` panic (a lease of 1.25 times it overflowed), and a number past 64 bits was "not
/// a whole number" and became the default 300,000. Each is held to its most, which `doctor`
/// and `status` say.
#[test]
fn numbers_past_their_most_are_held_to_it_and_doctor_says_so() {
    for huge in ["18446744073709551615", "99999999999999999999999"] {
        let (env, _model) = with_model();
        let env = env
            .with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", huge)
            .with("CLAUDE_MEM_COMPRESS_BATCH_TOKENS", huge)
            .with("CLAUDE_MEM_COMPRESS_TIMEOUT", huge);
        working_session(&env, "s1");
        let out = ok(&compress(&env, &[]));
        assert!(
            out.contains("Today: ") && out.contains(" of 1,000,000,000,000 tokens"),
            "{out}"
        );
        let status = ok(&env.command().arg("status").output().unwrap());
        assert!(
            status.contains(" of 1,000,000,000,000 tokens")
                && status.contains(
                    "CLAUDE_MEM_COMPRESS_DAILY_TOKENS is more than 1,000,000,000,000; using \
                     1,000,000,000,000"
                ),
            "{status}"
        );
        assert!(!status.contains(" of -"), "{status}");
        let json: Value = serde_json::from_str(&ok(&env
            .command()
            .args(["status", "--json"])
            .output()
            .unwrap()))
        .unwrap();
        assert_eq!(json["compress"]["daily_tokens"], 1_000_000_000_000u64);
        let doctor = stdout(&env.command().arg("doctor").output().unwrap());
        assert!(
            doctor.contains("environment") && doctor.contains("is more than"),
            "{doctor}"
        );
    }
}
