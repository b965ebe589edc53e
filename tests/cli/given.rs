//! `claude-mem given` through the real binary: what the session-start context and per-prompt
//! recall gave a session or a prompt, and why (each item's id, reason, score, bytes), read
//! back from the records the hooks wrote; those records going with what they name (`forget`,
//! retention) and travelling with an export; a wrong id refused in one line.

use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";
const EARLIER: &str = "5b2d7e31-0c4a-4e8f-9a61-2f7c3b9d1e04";
const NOW: &str = "9e4c1a77-3b2f-4d6e-8c05-7a1b2c3d4e5f";
const LOGIN: &str = "Fix the login timeout: sessions expire after 30 seconds in the auth \
                     middleware";
const ASK: &str = "How did we fix the login timeout in the auth middleware?";

fn event(name: &str, session: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({"session_id": session, "cwd": PROJECT, "hook_event_name": name,
                       "transcript_path": format!("/tmp/{session}.jsonl")});
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

/// Submits a prompt; what the hook handed Claude with it, if anything.
fn submit(env: &Env, session: &str, text: &str) -> Option<String> {
    let prompt = json!({"prompt_id": format!("p-{:x}", text.len()), "prompt": text});
    let out = env.hook("prompt", &event("UserPromptSubmit", session, prompt));
    assert_clean(&out);
    if out.stdout == ACK.as_bytes() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()?
            .to_string(),
    )
}

/// What the session-start context of `session` gave, if anything.
fn start(env: &Env, session: &str) -> Option<String> {
    let out = env.hook(
        "context",
        &event("SessionStart", session, json!({"source": "startup"})),
    );
    assert_clean(&out);
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()?
            .to_string(),
    )
}

/// The id every command prints for a row id: the start of its last group.
fn short(id: &str) -> &str {
    &id[24..32]
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `given ... --json`, a record a line.
fn given(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["given"];
    all.extend(args);
    all.push("--json");
    ok(run(env, &all))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The earlier session, indexed, and a prompt of a new one that recall answers: the recall text
/// and the new prompt's id.
fn recalled(env: &Env) -> (String, String) {
    assert!(submit(env, EARLIER, LOGIN).is_none());
    assert!(submit(env, EARLIER, "Add a dark mode toggle to the settings page").is_none());
    run(env, &["search", "--all", "index"]);
    // A maintenance process the hooks started may hold the index: recall then gives nothing.
    env.wait_for_maintenance();
    let text = submit(env, NOW, ASK).expect("recall");
    let prompt: String = env
        .db()
        .query_row(
            "SELECT id FROM user_prompts WHERE session_id = ?1",
            [NOW],
            |r| r.get(0),
        )
        .unwrap();
    (text, prompt)
}

#[test]
fn a_prompt_shows_the_items_its_recall_gave_and_why() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let (text, prompt) = recalled(&env);
    let records = given(&env, &[short(&prompt)]);
    assert!(!records.is_empty());
    let login: String = env
        .db()
        .query_row(
            "SELECT id FROM user_prompts WHERE prompt_text = ?1",
            [LOGIN],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(records[0]["item_id"], login.as_str(), "{records:?}");
    for r in &records {
        assert_eq!(
            (&r["session_id"], &r["prompt_id"], &r["giving"]),
            (&json!(NOW), &json!(prompt), &json!("recall"))
        );
        assert_eq!(r["prompt_number"], 1);
        assert_eq!(r["reason"], "match");
        let score = r["score"].as_f64().unwrap();
        assert!((0.4..=1.0).contains(&score), "{r}");
        // What it gave is in the text Claude got, and its size is that of its lines there.
        let short = r["short_id"].as_str().unwrap();
        let line = text.lines().find(|l| l.contains(short)).expect(short);
        assert!(r["bytes"].as_u64().unwrap() > line.len() as u64, "{r}");
        assert_eq!(r["kind"], "prompt");
        assert_eq!(r["item_session"], EARLIER);
    }
    assert!(text.contains(short(&login)), "{text}");
    // Without an id: the latest session of the project it is run in, the same records.
    let mut latest = env.command();
    latest
        .current_dir(env.tmp())
        .env("CLAUDE_PROJECT_DIR", PROJECT);
    let out = ok(latest.args(["given", "--json"]).output().unwrap());
    assert_eq!(out.lines().count(), records.len(), "{out}");
    // Aligned, a line an item, quiet in a pipe: no header, no colour.
    let table = ok(run(&env, &["given", NOW]));
    let first = table.lines().next().unwrap();
    assert!(
        first.contains("prompt #1") && first.contains(short(&login)),
        "{table}"
    );
    assert!(
        first.contains(" match ") && !table.contains('\x1b'),
        "{table}"
    );
}

#[test]
fn the_context_records_the_sessions_it_listed_and_recall_leaves_them_out() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    assert!(submit(&env, EARLIER, LOGIN).is_none());
    run(&env, &["search", "--all", "index"]);
    let context = start(&env, NOW).expect("a context");
    let records = given(&env, &[NOW]);
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(
        (&r["giving"], &r["item_id"], &r["reason"], &r["prompt_id"]),
        (
            &json!("context"),
            &json!(EARLIER),
            &json!("recent"),
            &Value::Null
        )
    );
    assert_eq!(r["kind"], "session");
    assert!(context.contains(short(EARLIER)), "{context}");
    // The prompt asks about what the context already listed: recall does not give it again,
    // so nothing more is recorded.
    assert_eq!(submit(&env, NOW, ASK), None);
    assert_eq!(given(&env, &[NOW]).len(), 1);
}

#[test]
fn forgetting_takes_the_records_that_name_what_it_forgot() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let (_, prompt) = recalled(&env);
    let login: String = env
        .db()
        .query_row(
            "SELECT id FROM user_prompts WHERE prompt_text = ?1",
            [LOGIN],
            |r| r.get(0),
        )
        .unwrap();
    assert!(env.count("SELECT COUNT(*) FROM given") > 0);
    ok(run(&env, &["forget", &login, "--yes"]));
    let named = format!("SELECT COUNT(*) FROM given WHERE item_id = '{login}'");
    assert_eq!(env.count(&named), 0);
    // The session that was given it: its records go with it.
    ok(run(&env, &["forget", NOW, "--yes"]));
    assert_eq!(env.count("SELECT COUNT(*) FROM given"), 0);
    let out = run(&env, &["given", &prompt]);
    assert!(!out.status.success() && out.stdout.is_empty(), "{out:?}");
}

#[test]
fn retention_prunes_the_records_with_the_sessions_they_name() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    recalled(&env);
    let end = event("SessionEnd", EARLIER, json!({"reason": "other"}));
    assert_clean(&env.hook("cleanup", &end));
    env.wait_for_maintenance();
    env.db()
        .execute(
            "UPDATE sessions SET started_at = '2020-01-01T00:00:00.000Z',
                 updated_at = '2020-01-01T00:00:00.000Z' WHERE session_id = ?1",
            [EARLIER],
        )
        .unwrap();
    assert!(env.count("SELECT COUNT(*) FROM given") > 0);
    ok(run(&env, &["prune", "--older-than", "1y", "--yes"]));
    let left = format!("SELECT COUNT(*) FROM sessions WHERE session_id = '{EARLIER}'");
    assert_eq!(env.count(&left), 0);
    assert_eq!(env.count("SELECT COUNT(*) FROM given"), 0);
    assert!(ok(run(&env, &["given", NOW, "--json"])).is_empty());
}

#[test]
fn an_export_carries_the_records_and_an_import_stores_them_once() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let (_, prompt) = recalled(&env);
    let before = given(&env, &[&prompt]);
    let file = env.tmp().join("memory.jsonl");
    ok(run(
        &env,
        &["export", "--all", "--output", file.to_str().unwrap()],
    ));
    let other = Env::new();
    for _ in 0..2 {
        ok(run(&other, &["import", file.to_str().unwrap()]));
    }
    let after = given(&other, &[&prompt]);
    assert_eq!(after, before);
    // A record no hook could write is refused, before anything is stored.
    let text = std::fs::read_to_string(&file).unwrap();
    let bad = env.tmp().join("bad.jsonl");
    std::fs::write(
        &bad,
        text.replace("\"reason\":\"match\"", "\"reason\":\"because\""),
    )
    .unwrap();
    let third = Env::new();
    let out = run(&third, &["import", bad.to_str().unwrap()]);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().count(),
        1,
        "{out:?}"
    );
}

#[test]
fn an_id_that_is_not_a_session_or_a_prompt_is_refused_in_one_line() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    assert!(submit(&env, EARLIER, LOGIN).is_none());
    assert_clean(&env.hook(
        "capture",
        &post_tool_use(EARLIER, "Bash", "toolu_1", json!({"command": "cargo test"})),
    ));
    let call: String = env
        .db()
        .query_row("SELECT id FROM pending_queue", [], |r| r.get(0))
        .unwrap();
    for id in [call.as_str(), "ffffffffffff"] {
        let out = run(&env, &["given", id]);
        assert!(!out.status.success() && out.stdout.is_empty(), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A session given nothing: said so, exit 0, nothing on stdout.
    let out = run(&env, &["given", EARLIER]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

/// The transactions committed to the WAL of `env`'s database since it was last emptied: its
/// frames that end a commit (a non-zero size of the database after it), of the WAL's current
/// salt.
fn commits(env: &Env) -> usize {
    let wal = std::fs::read(env.data_dir.join("memory.db-wal")).unwrap_or_default();
    if wal.len() < 32 {
        return 0;
    }
    let be = |at: usize| u32::from_be_bytes(wal[at..at + 4].try_into().unwrap());
    let frame = 24 + be(8) as usize;
    let salt = &wal[16..24];
    wal[32..]
        .chunks_exact(frame)
        .take_while(|f| &f[8..16] == salt)
        .filter(|f| u32::from_be_bytes(f[4..8].try_into().unwrap()) != 0)
        .count()
}

/// Empties the WAL into the database, so that [`commits`] counts from here, and holds off the
/// maintenance process the hooks may start (it writes too) until the lock returned is let go.
fn checkpointed(env: &Env) -> std::fs::File {
    env.wait_for_maintenance();
    let held = env.hold_maintenance();
    let busy: i64 = env
        .db()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(busy, 0);
    assert_eq!(commits(env), 0);
    held
}

/// What an answer gave is written in the transaction of the event it answers: a prompt that
/// recall answers, and a session start with a context, commit once each (the records are a
/// few inserts, not a second transaction and its commit).
#[test]
fn an_answer_and_what_it_gave_are_one_commit() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    assert!(submit(&env, EARLIER, LOGIN).is_none());
    run(&env, &["search", "--all", "index"]);
    let held = checkpointed(&env);
    start(&env, NOW).expect("a context");
    assert_eq!(commits(&env), 1, "the session start");
    drop(held);
    assert_eq!(given(&env, &[NOW]).len(), 1);
    assert!(submit(&env, EARLIER, "Add a dark mode toggle to the settings page").is_none());
    run(&env, &["search", "--all", "index"]);
    let _held = checkpointed(&env);
    let other = "0d6f2b1c-8e4a-4c3b-9f70-1a2b3c4d5e6f";
    submit(&env, other, ASK).expect("recall");
    assert_eq!(commits(&env), 1, "the prompt");
    let prompt: String = env
        .db()
        .query_row(
            "SELECT id FROM user_prompts WHERE session_id = ?1",
            [other],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!given(&env, &[short(&prompt)]).is_empty());
}

/// Records that cannot be written cost nothing captured: the prompt is stored and answered,
/// and the log says what was not recorded.
#[test]
fn a_prompt_whose_records_fail_is_stored_and_answered() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    assert!(submit(&env, EARLIER, LOGIN).is_none());
    run(&env, &["search", "--all", "index"]);
    env.wait_for_maintenance();
    env.db()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON given
             BEGIN SELECT RAISE(ABORT, 'records refused'); END",
        )
        .unwrap();
    let text = submit(&env, NOW, ASK).expect("answered all the same");
    assert!(text.contains("Earlier work"), "{text}");
    let stored = format!("SELECT COUNT(*) FROM user_prompts WHERE session_id = '{NOW}'");
    assert_eq!(env.count(&stored), 1);
    assert_eq!(env.count("SELECT COUNT(*) FROM given"), 0);
    assert!(env.spilled().is_empty());
    assert!(
        env.log()
            .contains("what recall gave was not recorded: records refused"),
        "{}",
        env.log()
    );
}
