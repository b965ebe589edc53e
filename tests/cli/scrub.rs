//! `claude-mem scrub` through the real binary: secrets stored under older rules (rows an
//! earlier release wrote, a pattern added since the hooks captured it) are redacted, and what
//! they were is then in no file of the data dir: database, WAL, search index and its WAL.

use std::path::PathBuf;
use std::process::Output;

use crate::harness::memory::*;
use crate::harness::*;
use serde_json::json;

const A: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const C: &str = "33333333-3333-4333-8333-cccccccccccc";
const TOKEN: &str = "ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i";
/// A secret of the user's own kind: only `CLAUDE_MEM_REDACT_EXTRA=acme_live_*` finds it.
const ACME: &str = "acme_live_7Hk2pQ9xL4";
/// The content of a secret file, which no other rule would find.
const ENV_FILE: &str = "greeting=quetzalcoatl77";

fn scrub(env: &Env, args: &[&str]) -> Output {
    env.command()
        .arg("scrub")
        .args(args)
        .env("CLAUDE_MEM_REDACT_EXTRA", "acme_live_*")
        .output()
        .unwrap()
}

fn nowhere(env: &Env, secret: &str) {
    assert_eq!(
        files_holding(env.root.path(), secret),
        Vec::<PathBuf>::new(),
        "{secret}"
    );
}

/// A call whose command holds [`ACME`], which only a pattern the user adds later finds.
fn acme_call(id: &str) -> Vec<u8> {
    event(
        "PostToolUse",
        A,
        PROJECT,
        json!({"prompt_id": "acme", "tool_name": "Bash", "tool_use_id": id,
               "tool_input": {"command": format!("deploy {ACME} lambdacmd")},
               "tool_response": {"stdout": "deployed", "stderr": ""}}),
    )
}

/// Secrets stored under older rules, in every place a row holds text, in the search index,
/// and in an event waiting in the spill folder.
fn stored_under_older_rules(env: &Env) {
    session(env, A, PROJECT, &["kappa"]);
    // Captured by the hooks before the user added the pattern that finds it.
    assert_ack(&env.hook("capture", &acme_call("acme-1")));
    // Written by an earlier release whose rules let them through.
    env.db()
        .execute_batch(&format!(
            "INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
             VALUES ('01950000-0000-7000-8000-000000000001', '{A}', 9,
                     'deploy omegaword with {TOKEN} now', '2026-01-01T00:00:00.000Z');
             INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                 raw_output, last_error, created_at, updated_at)
             VALUES ('01950000-0000-7000-8000-000000000002', '{A}', 'old-read', 'PostToolUse',
                     'Read', '{{\"tool_input\":{{\"file_path\":\"/home/dev/shop/.env\"}},
                     \"tool_response\":{{\"file\":{{\"content\":\"{ENV_FILE}\"}}}}}}',
                     'the consumer saw {TOKEN}', '2026-01-01T00:00:00.000Z',
                     '2026-01-01T00:00:00.000Z');
             UPDATE sessions SET last_assistant_message = 'Done with {TOKEN}';
             UPDATE event_log SET detail = '{{\"note\":\"{TOKEN}\"}}' WHERE event = 'stop';"
        ))
        .unwrap();
    // The index holds them too, and an event with one waits in the spill folder.
    assert_eq!(found(env, "omegaword"), ["prompt"]);
    assert_eq!(found(env, "lambdacmd"), ["Bash"]);
    drop(env.spill_captures(&[acme_call("acme-2")]));
    for secret in [TOKEN, ACME, ENV_FILE] {
        assert!(!files_holding(&env.data_dir, secret).is_empty(), "{secret}");
    }
}

/// After a scrub, what held a secret is found as before by the rest of its text, and holds
/// the secret's mark instead.
fn assert_found_by_the_rest_of_their_text(env: &Env) {
    assert_eq!(found(env, "omegaword"), ["prompt"]);
    // The two calls hold the same text once redacted: one result, standing for both.
    assert_eq!(found(env, "lambdacmd"), ["Bash"]);
    let out = run(env, &["search", "--all", "--json", "lambdacmd"]);
    let hit: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit["count"], 2, "{hit}");
    let stored: String = env
        .db()
        .query_row(
            "SELECT prompt_text FROM user_prompts WHERE prompt_number = 9",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "deploy omegaword with [REDACTED:github-token] now");
    assert!(contains(
        &std::fs::read(env.db_path()).unwrap(),
        "[REDACTED:secret-file]"
    ));
}

#[test]
fn secrets_stored_under_older_rules_are_redacted_and_gone_from_every_file() {
    let env = Env::new();
    stored_under_older_rules(&env);

    let dry = ok(&scrub(&env, &["--dry-run"]));
    assert!(
        dry.starts_with(
            "Would scrub 1 prompt, 2 tool calls, 1 error, 1 session, 1 event: 6 secrets redacted"
        ),
        "{dry}"
    );
    assert!(
        !files_holding(&env.data_dir, TOKEN).is_empty(),
        "a dry run changes nothing"
    );

    let done = ok(&scrub(&env, &[]));
    assert!(
        done.starts_with(
            "Scrubbed 1 prompt, 3 tool calls, 1 error, 1 session, 1 event: 7 secrets redacted ("
        ),
        "{done}"
    );
    for secret in [TOKEN, ACME, ENV_FILE] {
        nowhere(&env, secret);
    }
    assert!(
        env.spilled().is_empty(),
        "the spilled event was scrubbed in the database"
    );
    assert_found_by_the_rest_of_their_text(&env);

    assert!(
        ok(&scrub(&env, &[])).starts_with("Nothing to scrub"),
        "a second scrub finds nothing"
    );
}

/// Regression (issue 16): scrub rewrote each row that held a secret, but a secret in Claude's
/// message at a Stop had also been copied into the session row, which every Stop rewrites: the
/// old copies of that row stayed in the unused space of its page, and the secret with them.
/// Three sessions interleaved over pages that split, a secret in several Stop messages of each,
/// the search index built; after scrub, no byte of any file holds any of them.
#[cfg(unix)]
#[test]
fn scrub_left_a_dead_copy_of_the_session_row() {
    let env = Env::new();
    let sessions = [(A, "alpha"), (B, "beta"), (C, "gamma")];
    interleaved(&env, &sessions, 0..4);
    let mut secrets = Vec::new();
    for n in 0..4 {
        for (session, word) in sessions {
            let secret = format!("acme_live_{word}{n}Zq7");
            let message = format!(
                "Deployed with {secret}: {}",
                "all checks passed. ".repeat(n)
            );
            assert_ack(&env.hook(
                "summary",
                &event(
                    "Stop",
                    session,
                    PROJECT,
                    json!({"prompt_id": format!("{session}-p3"),
                           "last_assistant_message": message}),
                ),
            ));
            secrets.push(secret);
        }
    }
    interleaved(&env, &sessions, 4..8);
    assert_eq!(found(&env, "acme_live_beta2Zq7"), ["message"]);

    let done = ok(&scrub(&env, &[]));
    assert!(
        done.starts_with("Scrubbed 12 messages: 12 secrets redacted ("),
        "{done}"
    );
    let disk = everything_on_disk(&env);
    let left: Vec<&String> = secrets.iter().filter(|s| contains(&disk, s)).collect();
    assert!(
        left.is_empty(),
        "{} of {} left: {left:?} in {:?}",
        left.len(),
        secrets.len(),
        left.iter()
            .flat_map(|s| files_holding(env.root.path(), s))
            .collect::<std::collections::BTreeSet<_>>()
    );
    assert!(words_of("beta", 8).iter().all(|w| contains(&disk, w)));
    assert!(found(&env, "acme_live_beta2Zq7").is_empty());
}

/// What the compressor made of captures that held a secret before the rule that finds it:
/// every text of a memory and a summary is redacted, the search index follows.
#[cfg(unix)]
#[test]
fn secrets_in_memories_and_summaries_are_redacted_and_gone_from_every_file() {
    let env = Env::new();
    session(&env, A, PROJECT, &["nu1"]);
    let mut planted = memory("nu1", &[1, 2]);
    planted["title"] = json!(format!("nu1title {ACME}"));
    planted["narrative"] = json!(format!("Deployed with {ACME}: nu1narrative"));
    planted["facts"] = json!([format!("the key is {ACME}"), "nu1fact"]);
    let mut leaky = summary("nusum");
    leaky["learned"] = json!(format!("nusumlearned {ACME}"));
    compress(&env, A, &[planted], leaky);
    assert_eq!(found(&env, "nu1narrative"), ["memory"]);
    assert!(!files_holding(&env.data_dir, ACME).is_empty());

    let dry = ok(&scrub(&env, &["--dry-run"]));
    assert!(
        dry.starts_with("Would scrub 1 memory, 1 summary: 4 secrets redacted"),
        "{dry}"
    );
    let done = ok(&scrub(&env, &[]));
    assert!(
        done.starts_with("Scrubbed 1 memory, 1 summary: 4 secrets redacted ("),
        "{done}"
    );
    nowhere(&env, ACME);
    assert_eq!(
        ids(&env, "SELECT narrative FROM memories"),
        ["Deployed with [REDACTED:custom]: nu1narrative"]
    );
    // Found as before by the rest of their text.
    assert_eq!(found(&env, "nu1narrative"), ["memory"]);
    assert_eq!(found(&env, "nu1fact"), ["memory"]);
    assert_eq!(found(&env, "nusumlearned"), ["summary"]);
}

/// Regression: taking in spilled events left the connection waiting for nothing, so a hook
/// holding the write lock for a moment made scrub fail with "database is locked".
#[cfg(target_os = "linux")]
#[test]
fn scrub_waits_for_a_writer_that_holds_the_lock_a_moment() {
    let env = Env::new();
    session(&env, A, PROJECT, &["mu"]);
    env.db()
        .execute(
            &format!("UPDATE user_prompts SET prompt_text = 'use {TOKEN}'"),
            [],
        )
        .unwrap();
    drop(env.spill_captures(&[event(
        "PostToolUse",
        A,
        PROJECT,
        json!({"tool_name": "Bash", "tool_use_id": "spilled",
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}}),
    )]));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let child = env
        .command()
        .arg("scrub")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once scrub holds the maintenance lock, the one sleep it can be in is the wait for
    // the write lock (a look every millisecond).
    wait_until(
        std::time::Duration::from_secs(60),
        "scrub waiting for the write lock",
        || {
            let lock = std::fs::File::open(env.data_dir.join("maintain.lock")).unwrap();
            !try_flock(&lock) && wait::asleep(child.id())
        },
    );
    holder.execute_batch("ROLLBACK").unwrap();
    let done = ok(&child.wait_with_output().unwrap());
    assert!(
        done.starts_with("Scrubbed 1 prompt: 1 secret redacted"),
        "{done}"
    );
    nowhere(&env, TOKEN);
}

/// Regression: the error text of a compression call (which may quote the model's answer) was
/// left as stored.
#[test]
fn a_compression_calls_error_is_scrubbed_too() {
    let env = Env::new();
    session(&env, A, PROJECT, &["nu1"]);
    env.db()
        .execute(
            "INSERT INTO compress_calls (id, day, batch, items, tokens, estimated, outcome,
                 error, created_at, updated_at)
             VALUES ('c1', '2026-11-20', 'b1', 3, 900, 0, 'failed', ?1,
                 '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z')",
            [format!(
                "the model answered with an error: cannot use {ACME}"
            )],
        )
        .unwrap();
    assert!(!files_holding(&env.data_dir, ACME).is_empty());

    let done = ok(&scrub(&env, &[]));
    assert!(
        done.starts_with("Scrubbed 1 error: 1 secret redacted ("),
        "{done}"
    );
    nowhere(&env, ACME);
    assert_eq!(
        ids(&env, "SELECT error FROM compress_calls"),
        ["the model answered with an error: cannot use [REDACTED:custom]"]
    );
}

/// Regression: the compression pause file (`compress.paused`) keeps the model's error as its
/// reason, and an earlier build wrote it without redacting it: scrub left it as it was. A pause
/// still in force is rewritten redacted and holds; one that is over goes; a file that is not a
/// pause file of ours goes.
#[cfg(unix)]
#[test]
fn scrub_rewrites_the_compression_pause_without_its_secrets() {
    let env = Env::new();
    session(&env, A, PROJECT, &["xi1"]);
    let paused = env.data_dir.join("compress.paused");
    let later = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    std::fs::write(
        &paused,
        format!("{later} login\nInvalid API key {ACME} · Please run /login\n"),
    )
    .unwrap();
    let dry = ok(&scrub(&env, &["--dry-run"]));
    assert!(
        dry.contains("Would redact the reason kept with the compression pause"),
        "{dry}"
    );
    assert!(!files_holding(&env.data_dir, ACME).is_empty());

    let done = ok(&scrub(&env, &[]));
    assert!(
        done.contains("Redacted the reason kept with the compression pause"),
        "{done}"
    );
    nowhere(&env, ACME);
    assert_eq!(
        std::fs::read_to_string(&paused).unwrap(),
        format!("{later} login\nInvalid API key [REDACTED:custom] · Please run /login\n")
    );
    let status = env.command().args(["status", "--json"]).output().unwrap();
    assert!(
        contains(&status.stdout, "[REDACTED:custom]"),
        "the pause holds"
    );

    // Over, with a secret in it: removed. Not ours to read: removed.
    std::fs::write(&paused, format!("1000 login\nkey {ACME}\n")).unwrap();
    let done = ok(&scrub(&env, &[]));
    assert!(
        done.contains("Removed the ended compression pause"),
        "{done}"
    );
    assert!(!paused.exists());
    std::os::unix::fs::symlink(env.root.path().join("elsewhere"), &paused).unwrap();
    let done = ok(&scrub(&env, &[]));
    assert!(done.contains("Removed compress.paused"), "{done}");
    assert!(std::fs::symlink_metadata(&paused).is_err());
}
