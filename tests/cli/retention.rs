//! Retention through the real binary: `prune` (dry run and real), the size cap, the file that
//! really shrinks (a new database, and one made before it could), the slices the maintenance
//! process applies after a session ends, and what `status` says is due.

use std::path::Path;

use crate::harness::memory::*;
use crate::harness::*;
use serde_json::{Value, json};

const OLD: &str = "11111111-1111-4111-8111-111111111111";
const MID: &str = "22222222-2222-4222-8222-222222222222";
const NEW: &str = "33333333-3333-4333-8333-333333333333";

/// `calls` calls of a tool whose answer is kept as sent, each about `kib` KiB, their answers
/// starting with `{word}head{i}` and ending with `{word}tail{i}`.
fn big_calls(env: &Env, session: &str, word: &str, calls: usize, kib: usize) {
    for i in 0..calls {
        let filler = "lorem ipsum ".repeat(kib * 1024 / 12);
        assert_ack(&env.hook(
            "capture",
            &event(
                "PostToolUse",
                session,
                PROJECT,
                json!({"prompt_id": format!("{session}-big"), "tool_name": "mcp__db__query",
                       "tool_use_id": format!("{session}-big{i}"),
                       "tool_input": {"query": format!("select {word}query{i}")},
                       "tool_response": {"rows": format!("{word}head{i} {filler} {word}tail{i}")}}),
            ),
        ));
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// The bytes of the database's pages that hold data.
fn live(env: &Env) -> i64 {
    env.count(
        "SELECT (SELECT page_count FROM pragma_page_count())
              - (SELECT freelist_count FROM pragma_freelist_count())",
    ) * 4096
}

fn digests(env: &Env, session: &str) -> i64 {
    env.count(&format!(
        "SELECT COUNT(*) FROM pending_queue WHERE session_id = '{session}'
            AND raw_output LIKE '%\"digest\":1%'"
    ))
}

#[test]
fn prune_says_what_would_go_then_removes_it_and_the_file_shrinks() {
    let env = Env::new();
    session(&env, OLD, PROJECT, &["old1"]);
    age(&env, OLD, 400);
    // Calls of a few KiB, each in a page of its own: reduced, their pages must merge.
    session(&env, MID, PROJECT, &["mid1"]);
    big_calls(&env, MID, "mid", 200, 3);
    age(&env, MID, 40);
    session(&env, NEW, PROJECT, &["new1"]);
    assert_eq!(found(&env, "midtail7"), ["mcp__db__query"]);
    let db = env.db_path();
    let before = std::fs::read(&db).unwrap();

    let dry = ok(&run(&env, &["prune", "--dry-run"]));
    assert!(
        dry.contains("\nWould delete 1 session (3 items in them, about ")
            && dry.contains("\nWould reduce 200 tool calls of 1 session to their digest: "),
        "{dry}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "a dry run changes nothing"
    );

    let done = ok(&run(&env, &["prune"]));
    assert!(
        done.starts_with("Deleted 1 session (3 items in them, about ")
            && done.contains("\nReduced 200 tool calls of 1 session to their digest: "),
        "{done}"
    );
    assert!(
        !done.contains("Converted"),
        "a new database needs no conversion"
    );
    assert!(
        size(&db) * 10 < before.len() as u64 * 7,
        "the file shrank: {} -> {}",
        before.len(),
        size(&db)
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 2);
    assert_eq!(digests(&env, MID), 200);
    assert_eq!(digests(&env, NEW), 0);
    assert!(found(&env, "old1command").is_empty());
    // What the index held is what the digest holds: found the same, even by a new index.
    std::fs::remove_file(env.data_dir.join("memory-index.db")).unwrap();
    for word in [
        "midhead7",
        "midtail7",
        "midquery7",
        "mid1output",
        "mid1message",
    ] {
        assert_eq!(found(&env, word).len(), 1, "{word}");
    }
    let call = ids(
        &env,
        &format!("SELECT id FROM pending_queue WHERE tool_use_id = '{MID}-big7'"),
    );
    let shown: Value =
        serde_json::from_str(&ok(&run(&env, &["show", &call[0], "--json"]))).unwrap();
    assert_eq!(shown["raw_output"]["digest"], 1);
    assert_eq!(
        shown["raw_output"]["tool_input"]["query"],
        "select midquery7"
    );

    let again = ok(&run(&env, &["prune"]));
    assert!(again.starts_with("Nothing to prune.\n"), "{again}");
}

/// A session deleted for its age takes what the compressor made of it, and the estimate of
/// what goes counts those too.
#[cfg(unix)]
#[test]
fn a_deleted_session_takes_its_memories_and_summaries() {
    let env = Env::new();
    session(&env, OLD, PROJECT, &["old1"]);
    // A long memory: the estimate of the bytes that go must count it.
    let mut long = memory("old1", &[1, 2]);
    long["narrative"] = json!(format!("old1narrative {}", "lorem ipsum ".repeat(20_000)));
    compress(&env, OLD, &[long], summary("oldsum"));
    age(&env, OLD, 400);
    session(&env, NEW, PROJECT, &["new1"]);
    compress(&env, NEW, &[memory("new1", &[1, 2])], summary("newsum"));
    assert_eq!(found(&env, "old1narrative"), ["memory"]);

    let about = |out: &str| -> f64 {
        let kib = out
            .split("items in them, about ")
            .nth(1)
            .and_then(|rest| rest.split(" KiB)").next())
            .unwrap_or_else(|| panic!("{out}"));
        kib.parse().unwrap()
    };
    let dry = ok(&run(&env, &["prune", "--dry-run"]));
    assert!(
        dry.contains("\nWould delete 1 session (5 items in them, about "),
        "{dry}"
    );
    assert!(about(&dry) > 230.0, "the memory's 234 KiB count: {dry}");
    let done = ok(&run(&env, &["prune"]));
    assert!(
        done.starts_with("Deleted 1 session (5 items in them, about "),
        "{done}"
    );
    assert_eq!(
        ids(
            &env,
            "SELECT session_id FROM memories UNION SELECT session_id FROM summaries"
        ),
        [NEW]
    );
    for word in ["old1narrative", "old1fact", "oldsumlearned"] {
        assert!(found(&env, word).is_empty(), "{word}");
    }
    assert_eq!(found(&env, "new1narrative"), ["memory"]);
}

#[test]
fn a_database_made_before_it_could_shrink_is_converted_once() {
    let env = Env::new();
    std::fs::create_dir_all(&env.data_dir).unwrap();
    env.db()
        .execute_batch(&format!(
            "{} PRAGMA journal_mode = WAL; PRAGMA application_id = 1668113773;
             PRAGMA user_version = 1;",
            include_str!("../fixtures/schema/v1.sql")
        ))
        .unwrap();
    session(&env, MID, PROJECT, &["mid1"]);
    big_calls(&env, MID, "mid", 20, 40);
    age(&env, MID, 40);
    assert_eq!(found(&env, "midhead3"), ["mcp__db__query"]);
    assert_eq!(
        env.count("PRAGMA auto_vacuum"),
        0,
        "migrated, not converted"
    );
    let store_id = ids(&env, "SELECT value FROM meta WHERE key = 'store_id'");
    let status = ok(&run(&env, &["status"]));
    assert!(
        status.contains("the file cannot shrink until claude-mem prune converts it (once)"),
        "{status}"
    );
    let before = size(&env.db_path());

    let done = ok(&run(&env, &["prune"]));
    assert!(
        done.contains("\nConverted the database once so that its file can shrink ("),
        "{done}"
    );
    assert_eq!(env.count("PRAGMA auto_vacuum"), 2);
    assert!(
        size(&env.db_path()) * 4 < before,
        "{before} -> {}",
        size(&env.db_path())
    );
    // VACUUM kept the rowids: the index follows the database as it was.
    assert_eq!(
        ids(&env, "SELECT value FROM meta WHERE key = 'store_id'"),
        store_id
    );
    assert_eq!(found(&env, "midhead3"), ["mcp__db__query"]);
    assert!(!ok(&run(&env, &["prune"])).contains("Converted"));
}

#[test]
fn past_the_cap_the_oldest_sessions_are_reduced_then_deleted() {
    let env = Env::new().with("CLAUDE_MEM_MAX_DB_MB", "1");
    let sessions = [
        "44444444-4444-4444-8444-000000000001",
        "44444444-4444-4444-8444-000000000002",
        "44444444-4444-4444-8444-000000000003",
        "44444444-4444-4444-8444-000000000004",
    ];
    for (n, session) in sessions.iter().enumerate() {
        big_calls(&env, session, &format!("cap{n}"), 4, 85);
        age(&env, session, 5 - n as i64);
    }
    session(&env, NEW, PROJECT, &["new1"]);
    assert!(live(&env) > 1 << 20);

    // Reducing the two oldest is enough.
    ok(&run(&env, &["prune"]));
    assert!(live(&env) <= 1 << 20, "{}", live(&env));
    let reduced: Vec<i64> = sessions.iter().map(|s| digests(&env, s)).collect();
    assert_eq!(reduced, [4, 4, 0, 0]);
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 5);

    // Today's work alone is past the cap: every older session goes, oldest first; what is
    // left was active today.
    big_calls(&env, NEW, "today", 3, 500);
    let done = ok(&run(&env, &["prune"]));
    assert!(
        done.contains("Still over the 1.0 MiB cap: what is left was active in the last day."),
        "{done}"
    );
    assert_eq!(ids(&env, "SELECT session_id FROM sessions"), [NEW]);
    assert!(!found(&env, "todayhead2").is_empty());
}

#[test]
fn after_a_session_ends_the_maintenance_process_applies_the_policy_when_due() {
    let env = Env::new();
    let end = |env: &Env| {
        assert_ack(&env.hook(
            "cleanup",
            &event("SessionEnd", NEW, PROJECT, json!({"reason": "other"})),
        ));
        env.wait_for_maintenance();
    };
    session(&env, OLD, PROJECT, &["old1"]);
    age(&env, OLD, 400);
    session(&env, NEW, PROJECT, &["new1"]);
    end(&env);
    assert_eq!(ids(&env, "SELECT session_id FROM sessions"), [NEW]);
    let stamp = env.data_dir.join("retention-checked");
    assert!(stamp.exists());
    assert!(
        env.log().contains("retention: deleted 1 sessions"),
        "{}",
        env.log()
    );

    // Looked a moment ago: the next end starts nothing for retention.
    session(&env, MID, PROJECT, &["mid1"]);
    age(&env, MID, 400);
    end(&env);
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 2);
    // A day later it does.
    let yesterday = std::time::SystemTime::now() - std::time::Duration::from_secs(25 * 3600);
    std::fs::File::options()
        .append(true)
        .open(&stamp)
        .unwrap()
        .set_modified(yesterday)
        .unwrap();
    end(&env);
    assert_eq!(ids(&env, "SELECT session_id FROM sessions"), [NEW]);

    // The clock went back a day after the last look (the stamp is in the future): waiting for
    // the clock to catch up would hold retention off for that day, so it looks again.
    session(&env, MID, PROJECT, &["mid1"]);
    age(&env, MID, 400);
    let tomorrow = std::time::SystemTime::now() + std::time::Duration::from_secs(25 * 3600);
    std::fs::File::options()
        .append(true)
        .open(&stamp)
        .unwrap()
        .set_modified(tomorrow)
        .unwrap();
    end(&env);
    assert_eq!(ids(&env, "SELECT session_id FROM sessions"), [NEW]);
}

#[test]
fn status_shows_the_policy_the_size_and_what_is_due() {
    let env = Env::new();
    session(&env, OLD, PROJECT, &["old1"]);
    age(&env, OLD, 400);
    session(&env, MID, PROJECT, &["mid1"]);
    big_calls(&env, MID, "mid", 2, 20);
    age(&env, MID, 40);
    let text = ok(&run(&env, &["status"]));
    let line = text
        .lines()
        .find(|l| l.starts_with("retention"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(
            "tool calls reduced after 30 idle days, sessions deleted after 365, cap 1.0 GiB; \
             live data "
        ) && line.contains(
            "; due now: 4 items of 1 session to reduce, 1 session to delete (at the next \
             session end, or claude-mem prune)"
        ),
        "{line}"
    );
    let json: Value = serde_json::from_str(&ok(&run(&env, &["status", "--json"]))).unwrap();
    let retention = &json["retention"];
    assert_eq!(retention["payload_days"], 30);
    assert_eq!(retention["keep_days"], 365);
    assert_eq!(retention["max_db_bytes"], 1u64 << 30);
    assert_eq!(retention["incremental_vacuum"], true);
    assert_eq!(
        retention["due"],
        json!({"reduce_sessions": 1, "reduce_items": 4, "delete_sessions": 1})
    );
    assert!(retention["live_bytes"].as_u64().unwrap() > 40 * 1024);

    ok(&run(&env, &["prune"]));
    let after: Value = serde_json::from_str(&ok(&run(&env, &["status", "--json"]))).unwrap();
    assert_eq!(
        after["retention"]["due"],
        json!({"reduce_sessions": 0, "reduce_items": 0, "delete_sessions": 0})
    );
    let off = Env::new()
        .with("CLAUDE_MEM_PAYLOAD_DAYS", "0")
        .with("CLAUDE_MEM_KEEP_DAYS", "0")
        .with("CLAUDE_MEM_MAX_DB_MB", "0");
    session(&off, OLD, PROJECT, &["old1"]);
    let text = ok(&run(&off, &["status"]));
    assert!(
        text.contains("tool calls kept whole, sessions kept, no size cap; live data "),
        "{text}"
    );
}

/// Regression: a number of days that no calendar reaches back to (`CLAUDE_MEM_KEEP_DAYS=
/// 100000000`) made `status` and `prune` panic (`DateTime - TimeDelta` overflowed), and the
/// maintenance process with them. It counts as a century, which `doctor` says.
#[test]
fn days_past_any_calendar_count_as_a_century_and_doctor_says_so() {
    for name in ["CLAUDE_MEM_KEEP_DAYS", "CLAUDE_MEM_PAYLOAD_DAYS"] {
        let env = Env::new().with(name, "100000000");
        session(&env, OLD, PROJECT, &["old1"]);
        let status = ok(&run(&env, &["status"]));
        assert!(status.contains("after 36500"), "{status}");
        ok(&run(&env, &["prune", "--dry-run"]));
        ok(&run(&env, &["prune"]));
        let doctor = String::from_utf8_lossy(&run(&env, &["doctor"]).stdout).into_owned();
        assert!(
            doctor.contains(&format!("{name} is more than 36,500; using 36,500")),
            "{doctor}"
        );
    }
}

/// Regression: `prune --older-than 1m` (one minute) deleted every session older than that at
/// once, without asking; `1mo` and `1y` were refused. Now it shows what goes and asks on a
/// terminal, needs `--yes` elsewhere, and takes months and years.
#[cfg(unix)]
#[test]
fn prune_older_than_asks_first_and_takes_months_and_years() {
    let env = Env::new();
    session(&env, OLD, PROJECT, &["old1"]);
    age(&env, OLD, 40);
    session(&env, NEW, PROJECT, &["new1"]);
    let sessions = || env.count("SELECT COUNT(*) FROM sessions");

    let err = failed(&run(&env, &["prune", "--older-than", "1m"]), 2);
    assert!(
        err.contains("prune --older-than deletes for good") && err.contains("add --yes"),
        "{err}"
    );
    assert_eq!(sessions(), 2);
    let dry = ok(&run(&env, &["prune", "--older-than", "1mo", "--dry-run"]));
    assert!(dry.contains("\nWould delete 1 session ("), "{dry}");
    assert_eq!(sessions(), 2);

    let prune_on_terminal = |typed: &str| {
        let mut cmd = env.command();
        cmd.args(["prune", "--older-than", "1mo"])
            .env("CLAUDE_PROJECT_DIR", PROJECT);
        on_pty(cmd, typed)
    };
    let (code, shown) = prune_on_terminal("n\n");
    assert_eq!(code, Some(0), "{shown}");
    // What is typed ahead shows first (the terminal echoes it), then the question.
    assert!(
        shown.contains("\nWould delete 1 session (")
            && shown.ends_with(").\nPrune? [y/N] Nothing pruned.\n"),
        "{shown}"
    );
    assert_eq!(sessions(), 2);
    let (code, shown) = prune_on_terminal("y\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("Prune? [y/N] Deleted 1 session ("),
        "{shown}"
    );
    assert_eq!(sessions(), 1);

    // Nothing to delete: nothing to ask. With --yes, never asked.
    ok(&run(&env, &["prune", "--older-than", "1y"]));
    age(&env, NEW, 400);
    let done = ok(&run(&env, &["prune", "--older-than", "1y", "--yes"]));
    assert!(done.starts_with("Deleted 1 session ("), "{done}");
    assert_eq!(sessions(), 0);
}
