//! Per-prompt recall through the real binary: `hook prompt` answering a prompt with the earlier
//! work of its project that matches it, framed as recorded history, or with the plain
//! acknowledgement when nothing clears the bar; and each of its rules (a word in too many
//! items counting for nothing, never another project's, never the session's own, never what
//! the session-start context gave, never a private or redacted part, the budget, the switch,
//! an index that is not there or not ready).

use std::fs;
use std::time::{Duration, Instant};

use crate::harness::*;
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";
const OTHER: &str = "/home/dev/api";
const EARLIER: &str = "5b2d7e31-0c4a-4e8f-9a61-2f7c3b9d1e04";
const NOW: &str = "9e4c1a77-3b2f-4d6e-8c05-7a1b2c3d4e5f";
const LOGIN: &str = "Fix the login timeout: sessions expire after 30 seconds in the auth \
                     middleware";
const ASK: &str = "How did we fix the login timeout in the auth middleware?";

fn recalling() -> Env {
    Env::new().with("CLAUDE_MEM_RECALL", "1")
}

fn event(name: &str, session: &str, project: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({"session_id": session, "cwd": project, "hook_event_name": name,
                       "transcript_path": format!("/tmp/{session}.jsonl")});
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

/// Submits `text` as a prompt of `session` in `project`; the hook's whole answer.
fn submit(env: &Env, session: &str, project: &str, text: &str) -> std::process::Output {
    env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            session,
            project,
            json!({"prompt_id": format!("p-{:x}", text.len()), "prompt": text}),
        ),
    )
}

/// Records an earlier prompt (acknowledged: nothing to recall for it).
fn said(env: &Env, session: &str, project: &str, text: &str) {
    assert_clean(&submit(env, session, project, text));
}

/// What the hook handed Claude with `text`, or `None` when it answered the acknowledgement.
fn recalled(env: &Env, session: &str, project: &str, text: &str) -> Option<String> {
    let out = submit(env, session, project, text);
    assert_clean(&out);
    if out.stdout == ACK.as_bytes() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    Some(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("additionalContext")
            .to_string(),
    )
}

/// `count` prompts of `session` written straight into the database, the n-th saying `text(n)`.
fn planted(env: &Env, session: &str, count: i64, text: impl Fn(i64) -> String) {
    let db = env.db();
    for n in 0..count {
        db.execute(
            "INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
             VALUES (?1, ?2, ?3, ?4, '2026-11-20T10:00:00.000Z')",
            rusqlite::params![
                format!("01970000-0000-7000-8000-{n:012}"),
                session,
                n + 10,
                text(n)
            ],
        )
        .unwrap();
    }
}

/// Brings the search index up to date, as a search (or the maintenance process) does.
fn index(env: &Env) {
    let out = env
        .command()
        .args(["search", "--all", "index"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
}

/// The short id of the stored prompt that holds `words`.
fn short_id_of(env: &Env, words: &str) -> String {
    let out = env
        .command()
        .args(["search", "--all", "--json", "--kind", "prompt", "--"])
        .args(words.split_whitespace())
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let hit: Value = serde_json::from_str(line.lines().next().expect("a hit")).unwrap();
    hit["short_id"].as_str().unwrap().to_string()
}

/// An earlier session that fixed the login timeout, indexed.
fn history(env: &Env) {
    said(env, EARLIER, PROJECT, LOGIN);
    said(
        env,
        EARLIER,
        PROJECT,
        "Add a dark mode toggle to the settings page",
    );
    index(env);
}

/// The prompt itself is stored whatever recall answered.
fn stored(env: &Env, session: &str, text: &str) -> bool {
    env.db()
        .query_row(
            "SELECT COUNT(*) FROM user_prompts WHERE session_id = ?1 AND prompt_text = ?2",
            [session, text],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        == 1
}

#[test]
fn a_prompt_about_earlier_work_gets_it_back_as_recorded_history() {
    let env = recalling();
    history(&env);
    let id = short_id_of(&env, "login timeout");
    let context = recalled(&env, NOW, PROJECT, ASK).expect("the earlier fix recalled");
    assert!(
        context.starts_with(&format!("<claude-mem-context>\n{FRAME}\n")),
        "{context}"
    );
    assert!(
        context.contains(&format!("- prompt {id}, ")) && context.contains(LOGIN),
        "{context}"
    );
    assert!(
        !context.contains("dark mode"),
        "only what matches: {context}"
    );
    assert!(context.ends_with("</claude-mem-context>"), "{context}");
    assert!(stored(&env, NOW, ASK), "the prompt is captured as before");
}

#[test]
fn small_talk_and_requests_without_a_subject_get_nothing() {
    let env = recalling();
    history(&env);
    assert!(recalled(&env, NOW, PROJECT, ASK).is_some());
    for text in [
        "thanks",
        "thanks, that's all for today",
        "good morning!",
        "run the tests again",
        "Write a haiku about autumn leaves",
        "What's the weather going to be like in Lisbon this weekend?",
        // One word in common is not enough.
        "Why is the timeout on the payment gateway so short?",
    ] {
        assert_eq!(recalled(&env, NOW, PROJECT, text), None, "{text}");
        assert!(stored(&env, NOW, text), "{text}");
    }
}

/// A word held by more than 500 items says too little: it is dropped from the lookup and from
/// the weight, so an item that shares only it and one other word with the prompt holds one
/// word. At 500 items the word still counts.
#[test]
fn a_word_in_more_than_500_items_counts_for_nothing() {
    for (others, answers) in [(499, true), (500, false)] {
        let env = recalling();
        said(
            &env,
            EARLIER,
            PROJECT,
            "Gizmo widgets need the frobnicate flag",
        );
        planted(&env, EARLIER, others, |n| format!("widget number {n}"));
        index(&env);
        assert_eq!(
            recalled(&env, NOW, PROJECT, "widget gizmo").is_some(),
            answers,
            "{} items hold the word",
            others + 1
        );
    }
}

/// A word found in more than 500 items is remembered beside the index (as a hash, in a file of
/// ours), so that later prompts do not walk its rows again; the answers are the same, and once
/// the index takes in a deletion the memo is thrown away: the word counts again when it is no
/// longer common.
#[test]
fn a_common_word_is_remembered_until_the_index_takes_in_a_deletion() {
    let env = recalling();
    said(
        &env,
        EARLIER,
        PROJECT,
        "Gizmo widgets need the frobnicate flag",
    );
    planted(&env, EARLIER, 500, |n| format!("widget number {n}"));
    index(&env);
    assert_eq!(recalled(&env, NOW, PROJECT, "widget gizmo"), None);
    let memo = env.data_dir.join("memory-index.common");
    let text = std::fs::read_to_string(&memo).expect("the common word remembered");
    assert!(!text.contains("widget"), "hashes, not words: {text}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&memo).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(recalled(&env, NOW, PROJECT, "widget gizmo"), None);
    let answer = recalled(&env, NOW, PROJECT, "frobnicate the gizmo widget").expect("rare words");
    assert!(answer.contains("Gizmo widgets"), "{answer}");
    env.deleting_db()
        .execute(
            "DELETE FROM user_prompts WHERE prompt_text LIKE 'widget number %' AND prompt_number > 20",
            [],
        )
        .unwrap();
    index(&env);
    assert!(
        recalled(&env, NOW, PROJECT, "widget gizmo").is_some(),
        "the word is in 12 items now"
    );
}

#[test]
fn never_from_another_project() {
    let env = recalling();
    said(&env, EARLIER, PROJECT, LOGIN);
    let theirs = "The login timeout of the auth middleware in the api is 90 seconds";
    said(&env, "0d3f5e6a-1111-4222-8333-944455566677", OTHER, theirs);
    index(&env);
    let context = recalled(&env, NOW, PROJECT, ASK).expect("this project's fix");
    assert!(context.contains(LOGIN), "{context}");
    assert!(!context.contains("90 seconds"), "{context}");
    let context = recalled(&env, NOW, OTHER, ASK).expect("the api's own");
    assert!(
        context.contains("90 seconds") && !context.contains("30 seconds"),
        "{context}"
    );
}

/// Another project's items that match a prompt better, however many, do not crowd out this
/// project's: only this project's are weighed (before, the best 200 of every project's were,
/// and this one's came after them).
#[test]
fn another_projects_many_matches_do_not_crowd_out_this_ones() {
    let env = recalling();
    let mine = "Gizmo widgets need the frobnicate flag";
    said(&env, EARLIER, PROJECT, mine);
    let theirs = "0d3f5e6a-1111-4222-8333-944455566677";
    said(&env, theirs, OTHER, "Set up the api");
    planted(&env, theirs, 250, |n| {
        format!("The api's gizmo widget {n} takes the frobnicate flag")
    });
    index(&env);
    let context = recalled(&env, NOW, PROJECT, "gizmo widget frobnicate").expect("ours");
    assert!(context.contains(mine), "{context}");
    assert!(!context.contains("The api's"), "{context}");
}

#[test]
fn never_an_item_of_the_current_session() {
    let env = recalling();
    said(&env, NOW, PROJECT, LOGIN);
    index(&env);
    assert_eq!(recalled(&env, NOW, PROJECT, ASK), None, "its own prompt");
    let context = recalled(&env, EARLIER, PROJECT, ASK).expect("another session's");
    assert!(context.contains(LOGIN), "{context}");
}

#[test]
fn never_what_the_session_start_context_already_gave() {
    let env = recalling();
    // The earlier session's first prompt is what the session-start context shows of it.
    said(&env, EARLIER, PROJECT, LOGIN);
    let later = "The login timeout fix in the auth middleware needs a test for refresh tokens";
    said(&env, EARLIER, PROJECT, later);
    index(&env);
    let shown = started(&env, NOW).expect("a context");
    assert!(shown.contains("asked: Fix the login timeout"), "{shown}");
    let context = recalled(&env, NOW, PROJECT, ASK).expect("what the start did not give");
    assert!(context.contains("refresh tokens"), "{context}");
    assert!(!context.contains("30 seconds"), "{context}");
    // Another session, not given it at its start, gets both.
    let context = recalled(&env, "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", PROJECT, ASK).unwrap();
    assert!(context.contains("30 seconds"), "{context}");
    env.wait_for_maintenance();
}

#[test]
fn never_a_private_or_redacted_part() {
    let env = recalling();
    said(
        &env,
        EARLIER,
        PROJECT,
        "Fix the login timeout in the auth middleware <private>the staging password is \
         tulip-velvet-42</private> with the token ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i",
    );
    index(&env);
    let context = recalled(
        &env,
        NOW,
        PROJECT,
        "login timeout auth middleware staging password token",
    )
    .expect("the public part recalled");
    assert!(context.contains("Fix the login timeout"), "{context}");
    assert!(!context.contains("tulip-velvet"), "{context}");
    assert!(!context.contains("ghp_k3Jd9QmZx7"), "{context}");
    // What a prompt keeps private is not looked for either.
    assert_eq!(
        recalled(
            &env,
            NOW,
            PROJECT,
            "<private>login timeout auth middleware</private> thanks"
        ),
        None
    );
}

#[test]
fn the_budget_in_characters_holds() {
    let env = recalling().with("CLAUDE_MEM_RECALL_CHARS", "600");
    for n in 0..12 {
        said(
            &env,
            &format!("5b2d7e31-0c4a-4e8f-9a61-2f7c3b9d1e{n:02}"),
            PROJECT,
            &format!(
                "{LOGIN}, attempt {n}: {}",
                "the token refresh 🦀 ".repeat(20)
            ),
        );
    }
    index(&env);
    let context = recalled(&env, NOW, PROJECT, ASK).expect("some of them");
    let units = context.encode_utf16().count();
    assert!(units <= 600 && units > 300, "{units}: {context}");
    // The default: about 1,500.
    let env = env.with("CLAUDE_MEM_RECALL_CHARS", "");
    let context = recalled(&env, NOW, PROJECT, ASK).unwrap();
    let units = context.encode_utf16().count();
    assert!(units <= 1500 && units > 1000, "{units}: {context}");
}

#[test]
fn recall_off_turns_it_off_and_status_says_which() {
    let env = recalling();
    history(&env);
    assert!(recalled(&env, NOW, PROJECT, ASK).is_some());
    let status = env.command().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("recall") && text.contains("on: prompts get up to 1,500"),
        "{text}"
    );
    let json: Value = serde_json::from_slice(
        &env.command()
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["recall"], json!({"on": true, "chars": 1500}));

    let off = env.with("CLAUDE_MEM_RECALL", "0");
    assert_eq!(recalled(&off, NOW, PROJECT, ASK), None);
    let status = off.command().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("off (CLAUDE_MEM_RECALL=0)"), "{text}");
    let json: Value = serde_json::from_slice(
        &off.command()
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["recall"]["on"], false);
}

#[test]
fn without_an_index_it_abstains_and_maintenance_builds_one_after_the_session() {
    let env = recalling();
    said(&env, EARLIER, PROJECT, LOGIN);
    assert_eq!(recalled(&env, NOW, PROJECT, ASK), None);
    assert!(
        !env.data_dir.join("memory-index.db").exists(),
        "a hook never builds the index"
    );
    let end = event("SessionEnd", EARLIER, PROJECT, json!({"reason": "exit"}));
    assert_clean(&env.hook("cleanup", &end));
    env.wait_for_maintenance();
    // The session that ended had the index built; the next ones keep it up to date.
    let context = recalled(&env, NOW, PROJECT, ASK).expect("recalled once indexed");
    assert!(context.contains(LOGIN), "{context}");
    let more = "The login timeout in the auth middleware is now read from the config file";
    said(&env, "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", PROJECT, more);
    let end = event(
        "SessionEnd",
        "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e",
        PROJECT,
        json!({"reason": "exit"}),
    );
    assert_clean(&env.hook("cleanup", &end));
    env.wait_for_maintenance();
    let context = recalled(&env, NOW, PROJECT, ASK).unwrap();
    assert!(context.contains("config file"), "{context}");
}

/// The process that copies the WAL back for the hooks holds a lock of its own: while one runs,
/// the maintenance process a session's end asks for still starts and builds the index.
#[cfg(unix)]
#[test]
fn a_checkpoint_under_way_does_not_keep_maintenance_from_starting() {
    let env = recalling();
    said(&env, EARLIER, PROJECT, LOGIN);
    let held = env.hold_lock("checkpoint.lock");
    let end = event("SessionEnd", EARLIER, PROJECT, json!({"reason": "exit"}));
    assert_clean(&env.hook("cleanup", &end));
    // Looked for by what it does: a process just started is not found by its arguments yet.
    let index = env.data_dir.join("memory-index.db");
    wait_until(
        Duration::from_secs(10),
        "the maintenance process to build the index",
        || index.exists(),
    );
    env.wait_for_maintenance();
    drop(held);
}

/// The index stayed behind a session that ended without its SessionEnd hook (Claude Code
/// killed, or the hook cancelled past its 1.5 s): that hook is what has maintenance bring the
/// index up to date, and the next start found an index and started none, so recall missed that
/// session's work all through the next. Now the next start catches it up; and after a session
/// that did end, it starts no maintenance for the index.
#[test]
fn the_index_left_behind_by_a_session_without_its_end_catches_up_at_the_next_start() {
    let env = recalling();
    let ended = "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e";
    said(
        &env,
        ended,
        PROJECT,
        "Add a dark mode toggle to the settings page",
    );
    end_session(&env, ended);
    // Killed after its second prompt: its first is what the next start's context shows of it.
    said(&env, EARLIER, PROJECT, "Set up the auth middleware");
    said(&env, EARLIER, PROJECT, LOGIN);
    start_session(&env, NOW);
    let context = recalled(&env, NOW, PROJECT, ASK).expect("the killed session's work");
    assert!(context.contains(LOGIN), "{context}");
    // A start after a session that did end has nothing to catch up.
    end_session(&env, NOW);
    let stamp = env.data_dir.join("index-synced");
    let synced = || fs::metadata(&stamp).and_then(|m| m.modified()).ok();
    let after_the_end = synced();
    assert!(after_the_end.is_some(), "maintenance says when it synced");
    start_session(&env, "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
    assert_eq!(synced(), after_the_end, "maintenance started for nothing");
}

/// What Claude Code does at a session's end; waits for the maintenance it starts.
fn end_session(env: &Env, session: &str) {
    let end = event("SessionEnd", session, PROJECT, json!({"reason": "exit"}));
    assert_clean(&env.hook("cleanup", &end));
    env.wait_for_maintenance();
}

/// What Claude Code does at a session's start; waits for any maintenance it starts.
fn start_session(env: &Env, session: &str) {
    let start = event(
        "SessionStart",
        session,
        PROJECT,
        json!({"source": "startup", "model": "claude-opus-4-8"}),
    );
    assert_clean(&env.hook("context", &start));
    env.wait_for_maintenance();
}

/// Another process holding the index, as a maintenance process does for a moment.
fn hold_index(env: &Env) -> rusqlite::Connection {
    let holder = rusqlite::Connection::open(env.data_dir.join("memory-index.db")).unwrap();
    holder
        .execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM meta WHERE 0;",
        )
        .unwrap();
    holder
}

#[test]
fn a_locked_index_means_no_answer_at_once() {
    let env = recalling();
    history(&env);
    let holder = hold_index(&env);
    let started = Instant::now();
    assert_eq!(recalled(&env, NOW, PROJECT, ASK), None);
    // The index's own readers wait up to two minutes for its lock; the hook does not wait.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(stored(&env, NOW, ASK));
    drop(holder);
    assert!(recalled(&env, NOW, PROJECT, ASK).is_some());
}

/// A prompt that found the index held logged "this SQLite has no FTS5 (SQLite error 5)", a WARN
/// that doctor counts, for what is only a moment's wait that recall does not take.
#[test]
fn a_held_index_is_not_logged_as_an_sqlite_without_fts5() {
    let env = recalling();
    history(&env);
    let holder = hold_index(&env);
    assert_eq!(recalled(&env, NOW, PROJECT, ASK), None);
    drop(holder);
    let log = fs::read_to_string(env.data_dir.join("memory.log")).unwrap_or_default();
    assert!(!log.contains("WARN"), "{log}");
}

#[test]
fn a_failing_recall_keeps_the_prompt_and_says_nothing_on_stderr() {
    let env = recalling();
    history(&env);
    let index = env.data_dir.join("memory-index.db");
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    std::fs::write(&index, vec![b'x'; 8192]).unwrap();
    let out = submit(&env, NOW, PROJECT, ASK);
    assert_ack(&out);
    assert!(stored(&env, NOW, ASK));
    assert!(env.log().contains("recall for a prompt"), "{}", env.log());
}

/// The index's segments (FTS5 keeps a segment's pages under its number shifted left 37 bits).
fn segments(env: &Env) -> i64 {
    let index = rusqlite::Connection::open(env.data_dir.join("memory-index.db")).unwrap();
    index
        .query_row(
            "SELECT count(DISTINCT id >> 37) FROM fts_data WHERE id >= 1 << 37 AND id >> 37 < 65536",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

/// Recall looks each word up in every segment of the index: the maintenance process merges
/// what the syncs left in several into one, and recall finds the same there.
#[test]
fn maintenance_merges_the_index_recall_reads() {
    let env = recalling();
    said(&env, EARLIER, PROJECT, LOGIN);
    for text in [
        "Add a dark mode toggle to the settings page",
        "The checkout page shows the wrong currency",
        "Rename the orders table to purchases",
    ] {
        index(&env);
        said(&env, EARLIER, PROJECT, text);
    }
    index(&env);
    assert!(segments(&env) > 2, "each sync left a segment");
    let before = recalled(&env, NOW, PROJECT, ASK).expect("recalled");
    let out = env.command().arg("maintain").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(segments(&env), 1);
    assert_eq!(recalled(&env, NOW, PROJECT, ASK), Some(before));
}

const BASKET_RUN: &str = "cargo test -p cart";
const BASKET_ERROR: &str = "Exit code 101\nthread 'main' panicked: cart::store: database is \
                            locked while saving the basket";
const BASKET_FIX: &str = "Fix the basket save: cart::store says database is locked, give it a \
                          busy timeout and retry";
const LAST: &str = "7d3a9c2e-1b4f-4e6a-9c8d-2f1e0a9b8c7d";

/// A run of `command` in `session`: failed with `error`, or succeeded.
fn ran(env: &Env, session: &str, id: &str, command: &str, error: Option<&str>) {
    let (name, extra) = match error {
        Some(error) => (
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": command},
                   "error": error, "is_interrupt": false}),
        ),
        None => (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": command},
                   "tool_response": {"stdout": "ok"}}),
        ),
    };
    assert_ack(&env.hook("capture", &event(name, session, PROJECT, extra)));
}

/// What the session-start context of a new session says, if anything.
fn started(env: &Env, session: &str) -> Option<String> {
    let out = env.hook(
        "context",
        &event(
            "SessionStart",
            session,
            PROJECT,
            json!({"source": "startup"}),
        ),
    );
    assert_clean(&out);
    if out.stdout.is_empty() || out.stdout == ACK.as_bytes() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
}

/// An older session met the basket error and fixed it; the newest session (the only one the
/// context lists) met it again and ended with it unresolved, unless `fixed_again`.
fn basket_history(env: &Env, fixed_again: bool) {
    ran(env, EARLIER, "t-old-1", BASKET_RUN, Some(BASKET_ERROR));
    said(env, EARLIER, PROJECT, BASKET_FIX);
    ran(env, EARLIER, "t-old-2", BASKET_RUN, None);
    said(
        env,
        LAST,
        PROJECT,
        "Add a coupon field to the checkout form",
    );
    ran(env, LAST, "t-last-1", BASKET_RUN, Some(BASKET_ERROR));
    if fixed_again {
        ran(env, LAST, "t-last-2", BASKET_RUN, None);
    }
    index(env);
}

/// Issue 18 (item 5): the session-start context gives the project's open threads by the same
/// relevance: an error the newest session left unresolved brings back the older session that
/// met it and fixed it, never an item of a session the context lists, and what it gave is not
/// given again by per-prompt recall.
#[test]
fn an_error_the_last_session_left_open_brings_back_the_earlier_fix() {
    let env = recalling().with("CLAUDE_MEM_CONTEXT_SESSIONS", "1");
    basket_history(&env, false);
    let fix = short_id_of(&env, "basket save busy timeout");
    let context = started(&env, NOW).expect("a context");
    let (listing, threads) = context
        .split_once("Earlier work that matches the errors the newest session left unresolved")
        .unwrap_or_else(|| panic!("no open threads: {context}"));
    assert!(
        listing.contains("session "),
        "the newest session first: {context}"
    );
    assert!(
        threads.contains(&format!("- prompt {fix}, ")) && threads.contains("busy timeou"),
        "the earlier fix: {context}"
    );
    assert!(
        !threads.contains("coupon") && !threads.contains(&LAST[24..32]),
        "an item of the listed session: {context}"
    );
    // Per-prompt recall does not give it again.
    let asked = "How did we fix database is locked when saving the basket in cart::store?";
    if let Some(again) = recalled(&env, NOW, PROJECT, asked) {
        assert!(!again.contains(&fix), "given twice: {again}");
    }
    env.wait_for_maintenance();
}

#[test]
fn no_open_threads_when_the_error_was_fixed_matches_nothing_or_recall_is_off() {
    const HEAD: &str = "Earlier work that matches the errors";
    let fixed = recalling().with("CLAUDE_MEM_CONTEXT_SESSIONS", "1");
    basket_history(&fixed, true);
    let context = started(&fixed, NOW).expect("a context");
    assert!(
        !context.contains(HEAD),
        "a fixed error is no thread: {context}"
    );

    let unrelated = recalling().with("CLAUDE_MEM_CONTEXT_SESSIONS", "1");
    said(&unrelated, EARLIER, PROJECT, LOGIN);
    ran(
        &unrelated,
        LAST,
        "t-1",
        "npm run lint",
        Some("src/x.js: 'y' is not defined"),
    );
    index(&unrelated);
    let context = started(&unrelated, NOW).expect("a context");
    assert!(
        !context.contains(HEAD),
        "nothing earlier matches: {context}"
    );

    let off = Env::new()
        .with("CLAUDE_MEM_RECALL", "0")
        .with("CLAUDE_MEM_CONTEXT_SESSIONS", "1");
    basket_history(&off, false);
    let context = started(&off, NOW).expect("a context");
    assert!(!context.contains(HEAD), "recall is off: {context}");
    for env in [fixed, unrelated, off] {
        env.wait_for_maintenance();
    }
}
