//! The queue contract through the real binary: items captured by the real hooks, claimed,
//! acked, failed and released by consumer processes running at once, some of them killed.

use std::collections::{BTreeSet, HashSet};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::sleep;
use std::time::Duration;

use crate::harness::{self, Env, assert_ack, post_tool_use};
use serde_json::{Value, json};

/// Captures one tool call through `hook capture`.
fn capture(env: &Env, tool: &str, tool_use_id: &str) {
    let input = json!({"file_path": format!("/work/proj/{tool_use_id}.rs"), "command": "true"});
    assert_ack(&env.hook("capture", &post_tool_use("s1", tool, tool_use_id, input)));
}

/// Captures `n` calls of assorted tools, four hooks at a time; returns their tool_use ids.
fn fill(env: &Env, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n).map(|i| format!("toolu_{i:05}")).collect();
    let tools = ["Bash", "Read", "WebFetch", "Edit", "Grep"];
    std::thread::scope(|s| {
        for part in ids.chunks(n.div_ceil(4)) {
            s.spawn(move || {
                for id in part {
                    let i: usize = id[6..].parse().unwrap();
                    capture(env, tools[i % tools.len()], id);
                }
            });
        }
    });
    ids
}

fn queue(env: &Env, args: &[&str]) -> Output {
    env.command().arg("queue").args(args).output().unwrap()
}

/// `queue claim ARGS`, which must succeed cleanly; the items it printed.
fn claim(env: &Env, args: &[&str]) -> Vec<Value> {
    let out = queue(env, &[&["claim"], args].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `queue VERB --token TOKEN IDS… EXTRA…`.
fn answer(env: &Env, verb: &str, token: &str, ids: &[String], extra: &[&str]) -> Output {
    let mut cmd = env.command();
    cmd.args(["queue", verb, "--token", token])
        .args(ids)
        .args(extra);
    cmd.output().unwrap()
}

fn ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| i["id"].as_str().unwrap().into())
        .collect()
}

fn tool_use_ids(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|i| i["tool_use_id"].as_str().unwrap())
        .collect()
}

/// The one lease token of a batch.
fn token(items: &[Value]) -> String {
    let tokens: BTreeSet<&str> = items
        .iter()
        .map(|i| i["lease_token"].as_str().unwrap())
        .collect();
    assert_eq!(tokens.len(), 1, "one lease per claim: {tokens:?}");
    tokens.into_iter().next().unwrap().into()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A refusal: exit 3, nothing on stdout, one line on stderr; returns the line.
fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(out), stderr(out));
    assert!(out.stdout.is_empty(), "{}", stdout(out));
    let line = stderr(out);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.starts_with("claude-mem: error: "), "{line}");
    line
}

fn succeeded(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    assert!(out.stderr.is_empty(), "{}", stderr(out));
    stdout(out)
}

/// status, claimed_by and attempts of one item.
fn row(env: &Env, id: &str) -> (String, Option<String>, i64) {
    env.db()
        .query_row(
            "SELECT status, claimed_by, attempts FROM pending_queue WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

fn stats(env: &Env) -> Value {
    serde_json::from_str(&succeeded(&queue(env, &["stats", "--json"]))).unwrap()
}

/// Claims and acks until nothing is left to claim; returns the ids it acked.
fn drain(env: &Env, consumer: &str) -> Vec<String> {
    let mut acked = Vec::new();
    loop {
        let items = claim(
            env,
            &["--limit", "7", "--lease", "60s", "--consumer", consumer],
        );
        if items.is_empty() {
            return acked;
        }
        let batch = ids(&items);
        let out = answer(env, "ack", &token(&items), &batch, &[]);
        let plural = if batch.len() == 1 { "" } else { "s" };
        assert_eq!(
            succeeded(&out),
            format!("acked {} item{plural}\n", batch.len())
        );
        acked.extend(batch);
    }
}

/// Every one of `expected` acked exactly once, and every item of the queue done.
fn assert_all_acked_once(env: &Env, acked: &[String], expected: usize) {
    let unique: HashSet<&String> = acked.iter().collect();
    assert_eq!(unique.len(), acked.len(), "an item was acked twice");
    assert_eq!(acked.len(), expected);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE status = 'done'"),
        expected as i64
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue"),
        expected as i64
    );
}

#[test]
fn claims_high_priority_first_then_oldest_as_json_lines() {
    let env = Env::new();
    for (tool, id) in [
        ("Read", "low-1"),
        ("WebFetch", "normal-1"),
        ("Bash", "high-1"),
        ("Grep", "low-2"),
        ("Edit", "high-2"),
        ("WebSearch", "normal-2"),
    ] {
        capture(&env, tool, id);
        // Distinct creation times, so that "oldest first" has one answer.
        sleep(Duration::from_millis(3));
    }
    let stop = json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/proj",
                      "hook_event_name": "Stop", "stop_hook_active": false,
                      "last_assistant_message": "Done: fixed the parser."});
    assert_ack(&env.hook("summary", stop.to_string().as_bytes()));

    let high = claim(&env, &["--limit", "2", "--consumer", "me"]);
    assert_eq!(tool_use_ids(&high), ["high-1", "high-2"]);
    let summaries = claim(&env, &["--kind", "summary"]);
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0]["event"], "Stop");
    assert_eq!(
        summaries[0]["raw_output"]["last_assistant_message"],
        "Done: fixed the parser."
    );
    let rest = claim(&env, &["--limit", "10", "--kind", "observation"]);
    assert_eq!(
        tool_use_ids(&rest),
        ["normal-1", "normal-2", "low-1", "low-2"]
    );
    assert!(claim(&env, &[]).is_empty(), "everything is held");

    // The documented shape, in its order.
    let item = &high[0];
    let keys: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "kind",
            "session_id",
            "prompt_id",
            "prompt_number",
            "tool_use_id",
            "event",
            "tool_name",
            "project_dir",
            "priority",
            "created_at",
            "attempts",
            "last_error",
            "truncated",
            "payload_bytes",
            "files_touched",
            "raw_output",
            "lease_token",
            "lease_until",
            "claimed_by",
        ]
    );
    assert_eq!(item["kind"], "observation");
    assert_eq!(item["session_id"], "s1");
    assert_eq!(item["tool_name"], "Bash");
    assert_eq!(item["priority"], 0);
    assert_eq!(item["attempts"], 0);
    assert_eq!(item["truncated"], false);
    assert_eq!(item["claimed_by"], "me");
    assert_eq!(item["files_touched"], json!(["/work/proj/high-1.rs"]));
    assert_eq!(item["raw_output"]["tool_input"]["command"], "true");
    assert_eq!(item["raw_output"]["tool_response"]["stdout"], "ok");
    let created = item["created_at"].as_str().unwrap();
    let until = item["lease_until"].as_str().unwrap();
    // The stored format (text comparisons in SQL depend on it); the default lease is 5 min.
    assert_eq!(until.len(), "2026-01-01T00:00:00.000Z".len(), "{until}");
    assert!(until.ends_with('Z') && until > created, "{created} {until}");
    let lease = chrono::DateTime::parse_from_rfc3339(until).unwrap()
        - chrono::DateTime::parse_from_rfc3339(created).unwrap();
    assert!((299..=310).contains(&lease.num_seconds()), "{lease}");
}

#[test]
fn nothing_to_claim_is_no_output_and_exit_0() {
    let env = Env::new();
    let out = queue(&env, &["claim"]);
    assert_eq!(succeeded(&out), "");
    assert_eq!(stats(&env)["ready"], 0);
    assert!(
        !env.data_dir.exists(),
        "a queue command created the data dir"
    );

    capture(&env, "Bash", "only");
    let items = claim(&env, &[]);
    assert_eq!(items.len(), 1);
    assert_eq!(succeeded(&queue(&env, &["claim"])), "");
}

#[test]
fn an_ended_lease_gives_the_item_to_the_next_claim_and_the_first_consumer_cannot_touch_it() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let a = claim(&env, &["--lease", "1h", "--consumer", "A"]);
    assert!(claim(&env, &["--consumer", "B"]).is_empty(), "A holds it");
    assert_eq!(env.end_leases("claimed_by = 'A'"), 1);
    let b = claim(&env, &["--lease", "60s", "--consumer", "B"]);
    assert_eq!(ids(&b), ids(&a));
    assert_ne!(token(&b), token(&a));
    let id = ids(&a);

    // A answers late: refused, and nothing changes.
    for (verb, extra) in [
        ("ack", &[][..]),
        ("fail", &["--error", "late"][..]),
        ("release", &[]),
    ] {
        let line = refused(&answer(&env, verb, &token(&a), &id, extra));
        assert!(line.contains("not held under this lease"), "{line}");
        assert!(line.contains("claimed by B until"), "{line}");
        assert_eq!(row(&env, &id[0]), ("claimed".into(), Some("B".into()), 0));
    }

    let out = answer(&env, "ack", &token(&b), &id, &[]);
    assert_eq!(succeeded(&out), "acked 1 item\n");
    // Acked twice: nothing changes, and it says so.
    let again = succeeded(&answer(&env, "ack", &token(&b), &id, &[]));
    assert!(
        again.contains("already acked under this lease, nothing changed"),
        "{again}"
    );
    let line = refused(&answer(&env, "ack", &token(&a), &id, &[]));
    assert!(line.contains("(it is acked)"), "{line}");
    assert_eq!(row(&env, &id[0]), ("done".into(), Some("B".into()), 0));
    assert!(claim(&env, &[]).is_empty());
}

/// Until someone else claims the item, an answer after the lease ended still counts: nobody
/// else holds it, and the work is not done twice.
#[test]
fn a_late_answer_counts_while_nobody_else_has_claimed_the_item() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let items = claim(&env, &["--lease", "1h"]);
    assert_eq!(stats(&env)["expired"], 0);
    env.end_leases("TRUE");
    assert_eq!(stats(&env)["expired"], 1);
    let out = answer(&env, "ack", &token(&items), &ids(&items), &[]);
    assert_eq!(succeeded(&out), "acked 1 item\n");
    assert!(claim(&env, &[]).is_empty());
}

#[test]
fn concurrent_consumers_never_hold_the_same_item_and_ack_each_once() {
    let env = Env::new();
    let captured = fill(&env, 240);
    let consumers = ["c1", "c2", "c3", "c4"];
    let acked: Vec<Vec<String>> = std::thread::scope(|s| {
        let workers: Vec<_> = consumers
            .iter()
            .map(|name| s.spawn(|| drain(&env, name)))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // No lease ended, so an item claimed twice would have been held twice at once.
    let all: Vec<String> = acked.concat();
    assert_all_acked_once(&env, &all, captured.len());
    for (name, theirs) in consumers.iter().zip(&acked) {
        assert!(
            !theirs.is_empty(),
            "{name} got nothing: no concurrency tested"
        );
        for id in theirs {
            assert_eq!(row(&env, id).1.as_deref(), Some(*name));
        }
    }
}

#[test]
fn consumers_killed_mid_batch_lose_nothing() {
    let env = Env::new();
    let captured = fill(&env, 60);
    // One consumer claims ten, acks three, and dies.
    let doomed = claim(
        &env,
        &["--limit", "10", "--lease", "1h", "--consumer", "doomed"],
    );
    let mut acked = ids(&doomed[..3]);
    succeeded(&answer(&env, "ack", &token(&doomed), &acked, &[]));
    // Claims killed at assorted points of their run: before, during or after their commit.
    for i in 0..8 {
        let mut child = env
            .command()
            .args(["queue", "claim", "--limit", "5", "--lease", "1h"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        sleep(Duration::from_millis(i * 2));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let now = drain(&env, "survivor");
    let held_by_doomed: HashSet<String> = ids(&doomed[3..]).into_iter().collect();
    assert!(
        now.iter().all(|id| !held_by_doomed.contains(id)),
        "an item was handed out while its lease ran"
    );
    acked.extend(now);
    // The leases of the dead end (those of the claims killed after their commit too).
    assert!(env.end_leases("TRUE") >= held_by_doomed.len());
    let later = drain(&env, "survivor");
    assert!(
        held_by_doomed
            .iter()
            .all(|id| later.contains(id) || acked.contains(id)),
        "the dead consumer's items came back when its lease ended"
    );
    acked.extend(later);
    assert_all_acked_once(&env, &acked, captured.len());
}

/// Regression: `queue fail --error` stored the error as given, and a consumer's error may quote
/// the request it failed on, key and all (the issue found an Anthropic key in 21 rows).
#[test]
fn a_failure_is_stored_without_the_secrets_its_error_quotes() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let key = "sk-ant-api03-Zq81kdP0x9Lm3pZr8Tq7wNb2Yc5Vh6Jf4Ds0Xk29fLq7Rt5Vb8Yc1Wd4Hf6AA";
    let items = claim(&env, &[]);
    let error = format!("401 from https://api.anthropic.com: invalid x-api-key {key}");
    let out = answer(
        &env,
        "fail",
        &token(&items),
        &ids(&items),
        &["--error", &error, "--backoff", "1s"],
    );
    succeeded(&out);
    let stored: String = env
        .db()
        .query_row("SELECT last_error FROM pending_queue", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        stored,
        "401 from https://api.anthropic.com: invalid x-api-key [REDACTED:anthropic-key]"
    );
    assert!(!harness::contains(&harness::everything_on_disk(&env), key));
}

#[test]
fn a_failure_backs_off_and_the_last_attempt_fails_for_good_until_retried() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let backoff = ["--backoff", "1h,2h", "--max-attempts", "3"];
    for attempt in 1..=2 {
        let items = claim(&env, &[]);
        assert_eq!(items[0]["attempts"], attempt - 1);
        let error = format!("boom {attempt}");
        let out = answer(
            &env,
            "fail",
            &token(&items),
            &ids(&items),
            &[&["--error", &error][..], &backoff].concat(),
        );
        let said = succeeded(&out);
        assert!(
            said.contains(&format!("attempt {attempt} failed; claimable again from ")),
            "{said}"
        );
        assert!(claim(&env, &[]).is_empty(), "claimed during its backoff");
        assert_eq!(stats(&env)["retrying"], 1);
        assert_eq!(env.end_backoffs(), 1);
    }
    let items = claim(&env, &[]);
    assert_eq!(items[0]["attempts"], 2);
    assert_eq!(items[0]["last_error"], "boom 2");
    let id = ids(&items);
    let out = answer(
        &env,
        "fail",
        &token(&items),
        &id,
        &[&["--error", "boom 3"][..], &backoff].concat(),
    );
    assert!(succeeded(&out).contains("attempt 3 failed; failed for good"));
    let counts = stats(&env);
    assert_eq!(
        (counts["failed"].as_i64(), counts["ready"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(row(&env, &id[0]).0, "failed");
    // Whatever backoff it might still have, over: it is not claimed.
    assert_eq!(env.end_backoffs(), 0, "failed for good, yet due a retry");
    assert!(
        claim(&env, &[]).is_empty(),
        "failed for good is not retried"
    );

    let out = env
        .command()
        .args(["queue", "retry"])
        .args(&id)
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "put 1 item back in the queue\n");
    let items = claim(&env, &[]);
    assert_eq!(ids(&items), id);
    assert_eq!(items[0]["attempts"], 0);
    assert_eq!(items[0]["last_error"], "boom 3");
}

#[test]
fn the_default_backoff_starts_at_one_minute() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let items = claim(&env, &[]);
    let claimed_at = chrono::Utc::now();
    let out = answer(
        &env,
        "fail",
        &token(&items),
        &ids(&items),
        &["--error", "x"],
    );
    let said = succeeded(&out);
    let at = said.lines().next().unwrap().rsplit(' ').next().unwrap();
    let wait = chrono::DateTime::parse_from_rfc3339(at).unwrap().to_utc() - claimed_at;
    assert!((55..=65).contains(&wait.num_seconds()), "{said}");
    // Retry of an item that has not failed changes nothing.
    capture(&env, "Bash", "t2");
    let fresh = claim(&env, &[]);
    let out = env
        .command()
        .args(["queue", "retry"])
        .args(ids(&fresh))
        .output()
        .unwrap();
    assert!(refused(&out).contains("has not failed"));
    assert_eq!(
        succeeded(&queue(&env, &["retry", "--all"])),
        "put 1 item back in the queue\n"
    );
}

#[test]
fn release_gives_items_back_at_once_without_counting_an_attempt() {
    let env = Env::new();
    for id in ["t1", "t2", "t3"] {
        capture(&env, "Bash", id);
        sleep(Duration::from_millis(3));
    }
    let items = claim(&env, &["--limit", "3", "--lease", "60s"]);
    let back = ids(&items[1..]);
    let out = answer(&env, "release", &token(&items), &back, &[]);
    assert_eq!(succeeded(&out), "released 2 items\n");
    let again = succeeded(&answer(&env, "release", &token(&items), &back, &[]));
    assert!(again.contains("already released"), "{again}");
    let next = claim(&env, &["--limit", "3"]);
    assert_eq!(ids(&next), back);
    assert!(next.iter().all(|i| i["attempts"] == 0));
    // Claimed again since: the first lease no longer speaks for them.
    let line = refused(&answer(&env, "release", &token(&items), &back, &[]));
    assert!(line.contains("released 0 of 2"), "{line}");
}

#[test]
fn stats_counts_each_state_without_taking_the_write_lock() {
    let env = Env::new();
    for id in ["t1", "t2", "t3", "t4", "t5", "t6"] {
        capture(&env, "Bash", id);
        sleep(Duration::from_millis(3));
    }
    let expired = claim(
        &env,
        &["--limit", "1", "--lease", "1h", "--consumer", "slow"],
    );
    let held = claim(
        &env,
        &["--limit", "1", "--lease", "60s", "--consumer", "busy"],
    );
    let rest = claim(&env, &["--limit", "3", "--lease", "60s"]);
    let acked = ids(&rest[..1]);
    succeeded(&answer(&env, "ack", &token(&rest), &acked, &[]));
    let out = answer(
        &env,
        "fail",
        &token(&rest),
        &ids(&rest[1..2]),
        &["--error", "e"],
    );
    succeeded(&out);
    let out = answer(
        &env,
        "fail",
        &token(&rest),
        &ids(&rest[2..]),
        &["--error", "e", "--max-attempts", "1"],
    );
    succeeded(&out);
    assert_eq!(env.end_leases("claimed_by = 'slow'"), 1);
    assert_eq!(held.len() + expired.len(), 2);

    // A writer holds the lock meanwhile: stats still answers (and would wait 10 s, then fail,
    // if it wanted the lock).
    let (json, human) = env.while_locked(|| (stats(&env), succeeded(&queue(&env, &["stats"]))));
    assert_eq!(json["raw"], 1);
    assert_eq!(json["claimed"], 1);
    assert_eq!(json["expired"], 1);
    assert_eq!(json["retrying"], 1);
    assert_eq!(json["retry_due"], 0);
    assert_eq!(json["failed"], 1);
    assert_eq!(json["done"], 1);
    assert_eq!(json["ready"], 2);
    assert_eq!(json["consumers"], json!({"busy": 1}));
    assert!(
        json["oldest_raw"].is_string() && json["next_retry"].is_string(),
        "{json}"
    );
    for line in [
        "ready    2",
        "claimed  1",
        "(busy: 1)",
        "retrying 1",
        "failed   1",
        "done     1",
    ] {
        assert!(human.contains(line), "{line:?} in\n{human}");
    }
}

#[test]
fn hooks_running_during_claims_of_100_never_wait_into_spilling() {
    let env = Env::new();
    let before = fill(&env, 400);
    let hooks_done = AtomicBool::new(false);
    let per_thread = 100;
    let acked: Vec<String> = std::thread::scope(|s| {
        let consumers: Vec<_> = (0..3)
            .map(|c| {
                let (env, hooks_done) = (&env, &hooks_done);
                s.spawn(move || {
                    let name = format!("c{c}");
                    let mut acked = Vec::new();
                    loop {
                        let args = ["--limit", "100", "--lease", "60s", "--consumer", &name];
                        let items = claim(env, &args);
                        if items.is_empty() {
                            if hooks_done.load(Ordering::SeqCst) {
                                return acked;
                            }
                            sleep(Duration::from_millis(5));
                            continue;
                        }
                        succeeded(&answer(env, "ack", &token(&items), &ids(&items), &[]));
                        acked.extend(ids(&items));
                    }
                })
            })
            .collect();
        let hooks: Vec<_> = (0..2)
            .map(|h| {
                let env = &env;
                s.spawn(move || {
                    for i in 0..per_thread {
                        capture(env, "Edit", &format!("during-{h}-{i}"));
                    }
                })
            })
            .collect();
        for hook in hooks {
            hook.join().unwrap();
        }
        hooks_done.store(true, Ordering::SeqCst);
        consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect()
    });
    let log = env.log();
    assert!(
        !log.contains("database unavailable"),
        "a hook spilled:\n{log}"
    );
    assert!(env.spilled().is_empty(), "{:?}", env.spilled());
    assert_all_acked_once(&env, &acked, before.len() + 2 * per_thread);
}

#[test]
fn bad_input_is_one_line_and_a_non_zero_exit() {
    let env = Env::new();
    for args in [
        &["claim", "--limit", "0"][..],
        &["claim", "--limit", "1001"],
        &["claim", "--lease", "0s"],
        &["claim", "--lease", "25h"],
        &["claim", "--lease", "5"],
        &["claim", "--kind", "prompt"],
        &["claim", "--consumer", ""],
        &["claim", "--consumer", "two\nlines"],
        &["ack", "some-id"],
        &["ack", "--token", "t"],
        &["fail", "--token", "t", "some-id"],
        &[
            "fail",
            "--token",
            "t",
            "--error",
            "e",
            "--backoff",
            "1m,x",
            "some-id",
        ],
        &["retry"],
        &["retry", "--all", "some-id"],
    ] {
        let out = queue(&env, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
    capture(&env, "Bash", "t1");
    let line = refused(&answer(&env, "ack", "t", &["no-such-id".into()], &[]));
    assert!(line.contains("no item no-such-id"), "{line}");
    // However many items an answer names, the line names a few.
    let many: Vec<String> = (0..50).map(|i| format!("nope-{i}")).collect();
    let line = refused(&answer(&env, "ack", "t", &many, &[]));
    assert!(
        line.trim_end().ends_with("no item nope-2; and 47 more"),
        "{line}"
    );
}

#[test]
fn private_parts_of_an_error_never_reach_the_database() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    let items = claim(&env, &[]);
    let error = "could not parse <private>sk-live-1234</private> in the output";
    succeeded(&answer(
        &env,
        "fail",
        &token(&items),
        &ids(&items),
        &["--error", error],
    ));
    let stored: String = env
        .db()
        .query_row("SELECT last_error FROM pending_queue", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, "could not parse  in the output");
}

/// A database of the schema before the queue contract, with a real capture in it: the first
/// queue command brings it up to date and hands the item out.
#[test]
fn a_database_of_the_previous_schema_is_upgraded_by_the_first_queue_command() {
    let env = Env::new();
    capture(&env, "Bash", "t1");
    env.db()
        .execute_batch(
            "DROP TABLE memories; DROP TABLE summaries; DROP TABLE compress_calls;
             ALTER TABLE sessions DROP COLUMN reduced_at;
             DROP TABLE tombstones; DROP TABLE meta;
             DROP INDEX pending_queue_retries; DROP INDEX pending_queue_raw_summaries;
             DROP INDEX pending_queue_leases;
             DROP INDEX pending_queue_failures; DROP INDEX pending_queue_commands;
             ALTER TABLE pending_queue DROP COLUMN lease_token;
             ALTER TABLE pending_queue DROP COLUMN retry_at;
             DROP INDEX user_prompts_standing;
             ALTER TABLE user_prompts DROP COLUMN standing;
             ALTER TABLE user_prompts DROP COLUMN pinned_at;
             DROP TABLE project_moves; DROP TABLE project_ids;
             DROP TABLE forgotten;
             ALTER TABLE sessions DROP COLUMN agent;
             DROP TABLE given;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    assert_eq!(stats(&env)["raw"], 1);
    let items = claim(&env, &[]);
    assert_eq!(tool_use_ids(&items), ["t1"]);
    succeeded(&answer(&env, "ack", &token(&items), &ids(&items), &[]));
}

/// The example consumer of docs/queue.md, run as it is printed there. (Unix only: it finds
/// `claude-mem` on a PATH joined with `:`, and runs `python3`.)
#[cfg(unix)]
#[test]
fn the_documented_example_consumer_drains_the_queue() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/queue.md")).unwrap();
    let section = &doc[doc.find("\n## Consuming the queue\n").unwrap()..];
    let start = section.find("```python\n").unwrap() + "```python\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    if !harness::require_program("python3") {
        return;
    }
    let env = Env::new();
    let captured = fill(&env, 45);
    // The example runs `claude-mem` from PATH, with the test's scrubbed environment.
    let mut path = std::ffi::OsString::from(
        std::path::Path::new(env!("CARGO_BIN_EXE_claude-mem"))
            .parent()
            .unwrap(),
    );
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let out = env
        .command_of(std::path::Path::new("python3"))
        .env("PATH", path)
        .args(["-c", example])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().count(),
        captured.len(),
        "{}",
        stdout(&out)
    );
    assert_eq!(stats(&env)["done"], captured.len());
}
