//! Privacy at the edge, through the real binary: text inside `<private>` tags (and our own
//! `<claude-mem-context>`) never reaches the disk, whichever hook carries it and whatever path
//! the write takes (database, WAL, spill file, log); nor do the secrets issue 27 found stored
//! as typed (the corpus of every rule and its near-misses is `hygiene.rs`'s).

use crate::harness::*;
use serde_json::{Value, json};

fn event(name: &str, extra: Value) -> Vec<u8> {
    hook_event(name, "turn-1", extra)
}

fn capture(tool_use_id: &str, input: Value, response: Value) -> Vec<u8> {
    event(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_use_id": tool_use_id, "tool_input": input, "tool_response": response}),
    )
}

#[test]
fn private_text_never_reaches_the_disk() {
    let env = Env::new();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("prompt with a private part", event("UserPromptSubmit", json!({"prompt_id": "turn-0", "prompt": "keep-prompt <private>SECRET-A</private> done"}))),
        ("command", capture("c", json!({"command": "curl -H 'token: <private>SECRET-C</private>' keep-cmd"}), json!({}))),
        ("nested response, multiline", capture("d", json!({}), json!({"lines": ["keep-line", "x<private>\nSECRET-D\n</private>y"]}))),
        ("unclosed tag", capture("e", json!({}), json!({"stdout": "keep-before <private>SECRET-E and all the rest"}))),
        ("nested-looking tags", capture("f", json!({}), json!({"stdout": "<private>a <private>b</private> SECRET-F</private>keep-after"}))),
        ("tag name in capitals", capture("g", json!({}), json!({"stdout": "<PRIVATE>SECRET-G</PRIVATE>keep-g"}))),
        ("JSON inside a JSON string", capture("h", json!({"content": "{\"k\": \"<private>SECRET-H</private>\"}"}), json!({"keep": "h"}))),
        ("failure error", event("PostToolUseFailure", json!({"tool_name": "Bash", "tool_use_id": "i", "tool_input": {"command": "make"}, "error": "Exit code 2\n<private>SECRET-I</private>keep-i", "is_interrupt": false}))),
        ("assistant message", event("Stop", json!({"prompt_id": "turn-0", "last_assistant_message": "keep-msg <private>SECRET-J</private>"}))),
        ("a key", capture("k", json!({"<private>SECRET-K</private>": 1}), json!({}))),
        ("our own context", capture("l", json!({}), json!({"stdout": "<claude-mem-context>SECRET-L old memory</claude-mem-context>keep-l"}))),
        ("escaped angle bracket", br#"{"session_id":"s","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"m","tool_input":{"c":"\u003cprivate>SECRET-M\u003c/private>keep-m"},"tool_response":{}}"#.to_vec()),
    ];
    for (what, input) in &cases {
        let hook = match serde_json::from_slice::<Value>(input).unwrap()["hook_event_name"]
            .as_str()
            .unwrap()
        {
            "UserPromptSubmit" => "prompt",
            "Stop" => "summary",
            _ => "capture",
        };
        assert_ack(&env.hook(hook, input));
        let disk = everything_on_disk(&env);
        assert!(!contains(&disk, "SECRET"), "{what}: private text on disk");
    }
    // What was around the tags was kept: the rows are there, only the private parts are gone.
    let disk = everything_on_disk(&env);
    for kept in [
        "keep-prompt",
        "keep-cmd",
        "keep-line",
        "keep-before",
        "keep-after",
        "keep-g",
        "keep-i",
        "keep-msg",
        "keep-l",
        "keep-m",
    ] {
        assert!(contains(&disk, kept), "{kept} was lost");
    }
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE kind = 'observation'"),
        10
    );
}

#[test]
fn a_private_prompt_drops_its_whole_turn() {
    let env = Env::new();
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            json!({"prompt_id": "turn-0", "prompt": "public first"}),
        ),
    ));
    let private = event(
        "UserPromptSubmit",
        json!({"prompt": "  <private>SECRET-P: deploy with key abc</private>\n"}),
    );
    assert_ack(&env.hook("prompt", &private));
    assert_ack(&env.hook(
        "capture",
        &capture(
            "during",
            json!({"command": "deploy SECRET-Q"}),
            json!({"stdout": "SECRET-R"}),
        ),
    ));
    assert_ack(&env.hook(
        "summary",
        &event(
            "Stop",
            json!({"last_assistant_message": "Deployed with SECRET-S"}),
        ),
    ));
    // The next, public turn is captured again.
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            json!({"prompt_id": "turn-2", "prompt": "public again"}),
        ),
    ));
    assert_ack(&env.hook("capture", &event("PostToolUse", json!({"prompt_id": "turn-2", "tool_name": "Bash", "tool_use_id": "after", "tool_input": {}, "tool_response": {}}))));

    assert!(!contains(&everything_on_disk(&env), "SECRET"));
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 2);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE prompt_id = 'turn-1'"),
        0
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'after'"),
        1
    );
    // A capture knows the number of its turn's prompt.
    assert_eq!(
        env.count("SELECT prompt_number FROM pending_queue WHERE tool_use_id = 'after'"),
        3
    );
    // The turn still counts: the public prompts are 1 and 3.
    assert_eq!(
        env.count("SELECT group_concat(prompt_number) = '1,3' FROM user_prompts"),
        1
    );
}

#[test]
fn private_text_stays_out_of_spill_files_and_truncated_events() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "100");
    assert_ack(&env.hook("capture", &capture("first", json!({}), json!({}))));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let spilled = capture(
        "spilled",
        json!({"command": "<private>SECRET-T</private>keep-t"}),
        json!({}),
    );
    assert_ack(&env.hook("capture", &spilled));
    assert_eq!(env.spilled().len(), 1);
    assert!(!contains(&everything_on_disk(&env), "SECRET"));
    holder.execute_batch("ROLLBACK").unwrap();

    // A private part larger than the cap, and enough after it to be cut all the same.
    let big = format!(
        "keep-big <private>SECRET-U {} SECRET-V</private>{}",
        "z".repeat(2 * 1024 * 1024),
        "a".repeat(2 * 1024 * 1024)
    );
    // A tool without a lean shape: the payload cap cuts it (a Bash output would be bound to a
    // head and a tail long before).
    let big = event(
        "PostToolUse",
        json!({"tool_name": "mcp__shell__run", "tool_use_id": "big", "tool_input": {},
               "tool_response": {"stdout": big}}),
    );
    assert_ack(&env.hook("capture", &big));
    assert_eq!(
        env.count("SELECT truncated FROM pending_queue WHERE tool_use_id = 'big'"),
        1
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'spilled'"),
        1
    );
    let disk = everything_on_disk(&env);
    assert!(!contains(&disk, "SECRET"));
    assert!(contains(&disk, "keep-big") && contains(&disk, "keep-t"));
}

/// Regression: a private prompt whose write was spilled (database locked) used to be applied
/// after the captures of its turn, which were then stored in full.
#[test]
fn a_spilled_private_prompt_still_drops_its_turn() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "100");
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            json!({"prompt_id": "turn-0", "prompt": "hello"}),
        ),
    ));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let private = event(
        "UserPromptSubmit",
        json!({"prompt": "<private>my password is SECRET-W</private>"}),
    );
    assert_ack(&env.hook("prompt", &private));
    // The turn's tool call, while still locked: it waits in the spill folder as well.
    assert_ack(&env.hook(
        "capture",
        &capture("locked", json!({"command": "login SECRET-X"}), json!({})),
    ));
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_ack(&env.hook(
        "capture",
        &capture("unlocked", json!({"command": "login SECRET-Y"}), json!({})),
    ));
    assert_ack(&env.hook(
        "summary",
        &event(
            "Stop",
            json!({"last_assistant_message": "Logged in with SECRET-Z"}),
        ),
    ));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE prompt_id = 'turn-1'"),
        0
    );
    // The private turn's own events were dropped before any write; the next turn's write takes
    // in the spilled prompt.
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            json!({"prompt_id": "turn-2", "prompt": "public again"}),
        ),
    ));
    env.wait_for_maintenance();
    assert!(env.spilled().is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM private_turns"), 1);
    assert!(!contains(&everything_on_disk(&env), "SECRET"));
}

/// Regression: when an event was over the size cap, its cut text was stripped as raw JSON, so
/// tags hidden behind JSON escapes got through; and a name written with an escape skipped the
/// check entirely.
#[test]
fn escaped_tags_are_found_in_cut_and_whole_events() {
    let env = Env::new().with("CLAUDE_MEM_MAX_PAYLOAD_BYTES", "4096");
    let padding = "p".repeat(20_000);
    let raw = format!(
        r#"{{"session_id":"s","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"esc",
            "tool_input":{{"command":"\u003cprivate>SECRET-1\u003c/private>keep-1 <\u0070rivate>SECRET-2</private>"}},
            "tool_response":{{"stdout":"<\u0070rivate>SECRET-3</private>keep-3 {padding}"}}}}"#
    );
    assert_ack(&env.hook("capture", raw.as_bytes()));
    assert_eq!(
        env.count("SELECT truncated FROM pending_queue WHERE tool_use_id = 'esc'"),
        1
    );
    let disk = everything_on_disk(&env);
    assert!(!contains(&disk, "SECRET"));
    assert!(contains(&disk, "keep-1") && contains(&disk, "keep-3"));
}

/// A capture whose tool_input is `tool_input` exactly as written (escapes, duplicate keys and
/// all), which `json!` could not express.
fn raw_capture(tool_use_id: &str, tool_input: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"s","cwd":"/p","hook_event_name":"PostToolUse","prompt_id":"turn-1","tool_name":"Bash","tool_use_id":"{tool_use_id}","tool_input":{tool_input},"tool_response":{{"stdout":"keep-{tool_use_id}"}}}}"#
    )
    .into_bytes()
}

/// The raw_output stored for `tool_use_id`, as text.
fn stored_raw(env: &Env, tool_use_id: &str) -> String {
    env.db()
        .query_row(
            "SELECT raw_output FROM pending_queue WHERE tool_use_id = ?1",
            [tool_use_id],
            |r| r.get(0),
        )
        .unwrap()
}

/// The tool_input stored for `tool_use_id`, which must still be JSON.
fn stored_input(env: &Env, tool_use_id: &str) -> Value {
    serde_json::from_str::<Value>(&stored_raw(env, tool_use_id)).unwrap()["tool_input"].take()
}

/// Captures each case and checks that no `SECRET` reached any file, that the row was stored,
/// and that its `keep-` text was kept.
fn assert_captured_without_secrets(env: &Env, cases: &[(&str, String)]) {
    for (id, tool_input) in cases {
        assert_ack(&env.hook("capture", &raw_capture(id, tool_input)));
        let disk = everything_on_disk(env);
        assert!(!contains(&disk, "SECRET"), "{id}: private text on disk");
        assert!(contains(&disk, &format!("keep-{id}")), "{id}: row lost");
    }
}

/// Regression: an escape anywhere in a tag but right after `<` hid it from the pre-check, so
/// the text was stored whole.
#[test]
fn escapes_anywhere_in_a_tag_are_seen() {
    let env = Env::new();
    let cases = [
        ("r", r#"{"c":"<p\u0072ivate>SECRET-1</private>keep-r-in"}"#),
        ("e", r#"{"c":"<privat\u0065>SECRET-2</private>"}"#),
        ("gt", r#"{"c":"<private\u003eSECRET-3</private>"}"#),
        (
            "caps",
            r#"{"c":"\u003CPRIV\u0041TE\u003ESECRET-4\u003c/private>"}"#,
        ),
        (
            "ctx",
            r#"{"c":"<claude-mem-conte\u0078t>SECRET-5</claude-mem-context>"}"#,
        ),
        ("key", r#"{"<pr\u0069vate>SECRET-6</private>k":1}"#),
    ];
    let cases: Vec<(&str, String)> = cases.iter().map(|(i, t)| (*i, t.to_string())).collect();
    assert_captured_without_secrets(&env, &cases);
    assert_eq!(stored_input(&env, "r")["c"], "keep-r-in");
    assert_eq!(stored_input(&env, "key")["k"], 1);
}

/// Regression: tool_input was parsed into a tree that keeps only the last of two equal keys,
/// found nothing to strip, and stored the original text with the first, private, value.
#[test]
fn every_value_of_a_repeated_key_is_stripped() {
    let env = Env::new();
    let cases = [(
        "dup",
        r#"{"command":"echo <private>SECRET-pw</private>","command":"ls"}"#.to_string(),
    )];
    assert_captured_without_secrets(&env, &cases);
}

/// Regression: when tool_input held something serde_json cannot build a tree of (a number out
/// of range, nesting deeper than 128), it was stripped as raw text, and escaped tags survived.
#[test]
fn escaped_tags_are_stripped_where_no_tree_can_be_built() {
    let env = Env::new();
    let tag = r#""\u003cprivate>SECRET-1\u003c/private>keep""#;
    let deep = format!("{}{tag}{}", "[".repeat(300), "]".repeat(300));
    let cases = [
        ("huge", format!(r#"{{"n":1e400,"c":{tag}}}"#)),
        ("deep", format!(r#"{{"c":{deep}}}"#)),
    ];
    assert_captured_without_secrets(&env, &cases);
    // Copied as written: the number, and the nesting.
    assert!(
        stored_raw(&env, "huge").starts_with(r#"{"tool_input":{"n":1e400,"c":"keep"},"#),
        "{}",
        stored_raw(&env, "huge")
    );
    let deep_kept = format!(r#""c":{}"keep"{}"#, "[".repeat(300), "]".repeat(300));
    assert!(stored_raw(&env, "deep").contains(&deep_kept));
}

/// Regression: a tag opened in one string and closed in another stored what lay between.
/// Private state now runs through the document in order until the tag closes; a tag that never
/// closes removes everything after it: each string (keys too) is emptied, each number and
/// boolean becomes null, and the JSON keeps its shape.
#[test]
fn a_tag_left_open_in_one_string_covers_the_next_ones() {
    let env = Env::new();
    let cases = [
        (
            "across",
            r#"{"command":"keep-across <private>SECRET-1","description":"SECRET-2</private> kept"}"#
                .to_string(),
        ),
        (
            "path",
            r#"{"description":"keep-path <private>","file_path":"/p/SECRET-8.md","n":"</private>"}"#
                .to_string(),
        ),
        (
            "never",
            r#"{"a":"keep-never <private>SECRET-3","SECRET-4":"SECRET-5","n":[987654321,true,{"SECRET-6":"SECRET-7"}]}"#
                .to_string(),
        ),
    ];
    assert_captured_without_secrets(&env, &cases);
    // The key `description` lies between the tags too.
    assert_eq!(
        stored_input(&env, "across"),
        json!({"command": "keep-across ", "": " kept"})
    );
    assert_eq!(stored_input(&env, "path")["file_path"], Value::Null);
    assert_eq!(
        env.count("SELECT files_touched = '[]' FROM pending_queue WHERE tool_use_id = 'path'"),
        1
    );
    assert!(!contains(&everything_on_disk(&env), "987654321"));
    let raw = stored_raw(&env, "never");
    assert!(
        raw.starts_with(r#"{"tool_input":{"a":"keep-never ","":"","":[null,null,{"":""}]},"#),
        "{raw}"
    );
}

/// One turn of session `id` in project /p: its prompt, a file written, Claude's reply.
fn turn(env: &Env, id: &str, prompt: &str, file: &str, reply: &str) {
    let of_session = |name: &str, mut extra: Value| {
        extra["session_id"] = id.into();
        extra["prompt_id"] = format!("{id}-p").into();
        event(name, extra)
    };
    let write = json!({"tool_name": "Write", "tool_use_id": format!("{id}-w"),
                       "tool_input": {"file_path": file, "content": "x"}, "tool_response": {}});
    for (hook, input) in [
        (
            "prompt",
            of_session("UserPromptSubmit", json!({"prompt": prompt})),
        ),
        ("capture", of_session("PostToolUse", write)),
        (
            "summary",
            of_session("Stop", json!({"last_assistant_message": reply})),
        ),
    ] {
        assert_ack(&env.hook(hook, &input));
    }
}

/// The additionalContext a new session of project /p is handed.
fn context_for_a_new_session(env: &Env) -> String {
    let start = event(
        "SessionStart",
        json!({"session_id": "new", "source": "startup"}),
    );
    let out = env.hook("context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("an answer with context");
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Regression: a stored prompt, reply or file name holding `</claude-mem-context>` closed the
/// context wrapper early, so the rest of the context was no longer ours to strip when Claude
/// echoed it back (and a reopening tag could swallow what followed).
#[test]
fn stored_text_cannot_close_the_context_wrapper() {
    let env = Env::new();
    turn(
        &env,
        "old",
        "why does </claude-mem-context> end it? keep-asked",
        "/p/</claude-mem-context>.md",
        "It closes the wrapper </Claude-Mem-Context> early, keep-said",
    );
    let text = context_for_a_new_session(&env);
    let lower = text.to_lowercase();
    assert_eq!(lower.matches("</claude-mem-context").count(), 1, "{text}");
    assert_eq!(lower.matches("<claude-mem-context").count(), 1, "{text}");
    assert!(text.starts_with("<claude-mem-context>\n"), "{text}");
    assert!(text.ends_with("</claude-mem-context>"), "{text}");
    assert!(
        text.contains("keep-asked") && text.contains("keep-said") && text.contains(".md"),
        "{text}"
    );
}

/// Regression: the context budget counted Rust characters, but Claude Code counts JavaScript
/// string length (UTF-16 code units) and cuts at 10,000: text full of emoji, two units each,
/// went over the budget.
#[test]
fn the_context_budget_counts_what_claude_code_counts() {
    let env = Env::new();
    let crab = |n: usize| "🦀".repeat(n);
    for i in 0..8 {
        let file = format!("/p/{}-{i}.md", crab(40));
        turn(&env, &format!("s-{i}"), &crab(400), &file, &crab(400));
    }
    let text = context_for_a_new_session(&env);
    let units = text.encode_utf16().count();
    assert!(units <= 6000, "{units} UTF-16 units over the default 6000");
    assert!(
        text.contains("session s-7"),
        "the newest session is listed: {text}"
    );
}

/// Regression: the purge of a turn whose prompt turned out to be private as a whole deleted its
/// rows, but a deleted row leaves older copies in the unused space of live pages (a page split
/// keeps copies of the cells it moved; the session row, rewritten at every Stop, keeps its old
/// cells): a private turn's output stayed readable in the database. Here a session's tool calls
/// and Stops are stored before their prompts (as when the prompts' writes waited), interleaved
/// with two other sessions over pages that split, the search index built midway; then the
/// prompts arrive, each private as a whole. None of the turns' texts may be in any file once
/// the maintenance process the purges started is done.
#[cfg(unix)]
#[test]
fn a_private_turns_purge_left_old_copies_in_live_pages() {
    use crate::harness::memory::{PROJECT, event as session_event, found, interleaved, words_of};
    const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
    let env = Env::new();
    let others = [
        ("11111111-1111-4111-8111-aaaaaaaaaaaa", "alpha"),
        ("33333333-3333-4333-8333-cccccccccccc", "gamma"),
    ];
    let hook = |name: &str, event_name: &str, extra: Value| {
        assert_ack(&env.hook(name, &session_event(event_name, B, PROJECT, extra)));
    };
    let mut seed = 11u64;
    for n in 0..12 {
        interleaved(&env, &others, n..n + 1);
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let filler: String = (0..300 + (seed >> 33) as usize % 4700)
            .map(|i| (b'a' + ((seed >> (i % 50)) % 26) as u8) as char)
            .collect();
        let prompt_id = format!("{B}-p{n}");
        hook(
            "capture",
            "PostToolUse",
            json!({"prompt_id": prompt_id, "tool_name": "Bash", "tool_use_id": format!("b-{n}"),
                   "tool_input": {"command": format!("cat beta{n:02}command")},
                   "tool_response": {"stdout": format!("beta{n:02}output {filler} beta{n:02}output"),
                                     "stderr": ""}}),
        );
        hook(
            "summary",
            "Stop",
            json!({"prompt_id": prompt_id,
                   "last_assistant_message": format!("beta{n:02}message {}", &filler[..200])}),
        );
        if n == 6 {
            assert_eq!(found(&env, "beta03output"), ["Bash"]);
        }
    }
    for n in 0..12 {
        hook(
            "prompt",
            "UserPromptSubmit",
            json!({"prompt_id": format!("{B}-p{n}"),
                   "prompt": format!("<private>beta{n:02}prompt</private>")}),
        );
    }
    // A prompt that found a rebuild under way (started by the purges before it) was kept in
    // the spill folder: the maintenance process takes it in after its rebuild, and rebuilds
    // again.
    let started = std::time::Instant::now();
    let rows_of_b = format!("SELECT COUNT(*) FROM pending_queue WHERE session_id = '{B}'");
    while env.count("SELECT COUNT(*) FROM meta WHERE key = 'rebuild'") > 0
        || env.count(&rows_of_b) > 0
        || !env.spilled().is_empty()
    {
        assert!(
            started.elapsed().as_secs() < 60,
            "no rebuild: {}",
            env.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    env.wait_for_maintenance();
    let disk = everything_on_disk(&env);
    let left: Vec<String> = words_of("beta", 12)
        .into_iter()
        .filter(|w| contains(&disk, w))
        .collect();
    assert!(
        left.is_empty(),
        "{} left: {left:?} in {:?} LOG {}",
        left.len(),
        left.iter()
            .flat_map(|w| files_holding(env.root.path(), w))
            .collect::<std::collections::BTreeSet<_>>(),
        env.log()
    );
    assert!(words_of("gamma", 12).iter().all(|w| contains(&disk, w)));
}

/// Regression: a private prompt without prompt_id (Claude Code before 2.1.196) removes its
/// turn's captures by time; in a session of 100,000 such captures the prompt hook took 451 ms
/// doing it. The hook now removes a bounded part and names the turn in the database; a
/// consumer's claim removes the rest before it hands out anything, and the maintenance process
/// does otherwise; then the file is rebuilt. Here the turn's 1,000 captures are stored before
/// its prompt (as by a Claude Code that sends its events out of order).
#[cfg(unix)]
#[test]
fn a_private_prompt_removes_a_long_turn_in_bounded_steps() {
    let env = Env::new();
    let without_id = |name: &str, extra: Value| {
        let mut e = json!({"session_id": "s", "cwd": "/p", "hook_event_name": name});
        e.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        e.to_string().into_bytes()
    };
    assert_ack(&env.hook(
        "prompt",
        &without_id("UserPromptSubmit", json!({"prompt": "hello"})),
    ));
    let mut db = env.db();
    let tx = db.transaction().unwrap();
    for n in 0..1000 {
        tx.execute(
            "INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                 raw_output, created_at, updated_at)
             VALUES (printf('late-%04d', ?1), 's', printf('late-%04d', ?1), 'PostToolUse',
                 'Bash', printf('{\"stdout\":\"SECRET-%04d\"}', ?1),
                 strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 minute'), 'x')",
            [n],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    drop(db);
    let maintenance = env.hold_maintenance();
    assert_ack(&env.hook(
        "prompt",
        &without_id(
            "UserPromptSubmit",
            json!({"prompt": "<private>SECRET-P</private>"}),
        ),
    ));
    let left = || env.count("SELECT COUNT(*) FROM pending_queue WHERE id LIKE 'late-%'");
    assert_eq!(left(), 800, "the hook removes 200");
    // A consumer is handed none of them.
    let claimed = env
        .command()
        .args(["queue", "claim", "--limit", "1000"])
        .output()
        .unwrap();
    assert_eq!(claimed.status.code(), Some(0));
    assert!(!contains(&claimed.stdout, "SECRET"));
    assert_eq!(left(), 0);
    drop(maintenance);
    let out = env.command().arg("maintain").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!contains(&everything_on_disk(&env), "SECRET"));
}

/// The hook that carries an event, and the event.
type Carried = (&'static str, Vec<u8>);

/// A tool's capture, as Claude Code sends it.
fn tool(name: &str, input: Value, response: Value) -> Vec<u8> {
    event(
        "PostToolUse",
        json!({"tool_name": name, "tool_use_id": "t", "tool_input": input, "tool_response": response}),
    )
}

fn bash(command: &str, stdout: &str) -> Carried {
    let input = tool(
        "Bash",
        json!({"command": command}),
        json!({"stdout": stdout}),
    );
    ("capture", input)
}

fn write(content: &str) -> Carried {
    let path = "/home/dev/shop/src/notify.py";
    let input = tool(
        "Write",
        json!({"file_path": path, "content": content}),
        json!({"type": "create", "filePath": path, "content": content}),
    );
    ("capture", input)
}

fn read(content: &str) -> Carried {
    let path = "/home/dev/shop/.github/release.yml";
    let input = tool(
        "Read",
        json!({"file_path": path}),
        json!({"type": "text", "file": {"filePath": path, "content": content, "numLines": 3, "startLine": 1}}),
    );
    ("capture", input)
}

fn prompt(text: &str) -> Carried {
    let input = event("UserPromptSubmit", json!({"prompt": text}));
    ("prompt", input)
}

fn message(text: &str) -> Carried {
    let input = event("Stop", json!({"last_assistant_message": text}));
    ("summary", input)
}

/// Runs each hook in a data dir of its own: it answers as always, its secret is on no file
/// (database, WAL, log), and the marker that replaced it is (the row was kept, not dropped).
fn assert_redacted(cases: &[(Carried, &str, &str)]) {
    for ((hook, input), secret, rule) in cases {
        let env = Env::new();
        assert_ack(&env.hook(hook, input));
        let disk = everything_on_disk(&env);
        assert!(!contains(&disk, secret), "{secret} on disk");
        let marker = format!("[REDACTED:{rule}]");
        assert!(contains(&disk, &marker), "{secret}: no {marker} on disk");
    }
}

#[test]
fn a_vault_root_token_is_redacted() {
    assert_redacted(&[
        (
            bash("vault login hvs.6j4cuewowBGit65rheNoceI7", "Success!"),
            "6j4cuewowBGit65rheNoceI7",
            "vault-token",
        ),
        (
            bash(
                "vault operator init",
                "Unseal Key 1: q2V0aGlz\n\nInitial Root Token: hvs.Qm9vZ2xlYm9vZ2xlYm9vZ2xl\n",
            ),
            "Qm9vZ2xlYm9vZ2xlYm9vZ2xl",
            "vault-token",
        ),
    ]);
}

#[test]
fn a_telegram_bot_token_in_a_bot_api_url_is_redacted() {
    assert_redacted(&[
        (
            write(
                "URL = f\"https://api.telegram.org/bot7012345678:lb5x4En99GjTeSqBeKTnRYTangmhKrOUPQR/sendMessage\"",
            ),
            "lb5x4En99GjTeSqBeKTnRYTangmhKrOUPQR",
            "telegram-bot-token",
        ),
        (
            bash(
                "tail access.log",
                "GET /bot439782007%3AAAURVYHZ29UZ_i0Fch17yxVisI1Xy_cm-mg/getUpdates 401",
            ),
            "AAURVYHZ29UZ_i0Fch17yxVisI1Xy_cm-mg",
            "telegram-bot-token",
        ),
    ]);
}

#[test]
fn a_password_given_to_convertto_securestring_is_redacted() {
    assert_redacted(&[
        (
            bash(
                "$pw = ConvertTo-SecureString 'Winter2024!x' -AsPlainText -Force",
                "",
            ),
            "Winter2024!x",
            "password",
        ),
        (
            bash(
                "$pw = 'Summer2025#q' | ConvertTo-SecureString -AsPlainText -Force",
                "",
            ),
            "Summer2025#q",
            "password",
        ),
        (
            write("$c = ConvertTo-SecureString -String \"Aut7mn2026q\" -AsPlainText -Force"),
            "Aut7mn2026q",
            "password",
        ),
    ]);
}

#[test]
fn a_credential_piped_to_base64_is_redacted() {
    assert_redacted(&[
        (
            bash(
                "echo -n 'admin:Tr0ub4dor&3' | base64",
                "YWRtaW46VHIwdWI0ZG9yJjM=",
            ),
            "Tr0ub4dor&3",
            "password",
        ),
        (
            bash("AUTH=$(printf \"ci-bot:s3cr3tPass9\" | base64 -w0)", ""),
            "s3cr3tPass9",
            "password",
        ),
    ]);
}

#[test]
fn a_password_told_in_a_sentence_is_redacted() {
    assert_redacted(&[
        (
            prompt("the staging admin password is Xk7mQ2pL9, the user is admin"),
            "Xk7mQ2pL9",
            "password",
        ),
        (
            message("It is up on port 8080. Log in as `admin` and use password Hg4kLm9xQ for now."),
            "Hg4kLm9xQ",
            "password",
        ),
    ]);
}

#[test]
fn a_token_split_over_literals_or_wrapped_by_the_terminal_is_redacted() {
    assert_redacted(&[
        (
            write("const token = \"ghp_\" + \"k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i\";"),
            "k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i",
            "github-token",
        ),
        (
            bash(
                "gh auth token",
                "ghp_AlmPTy27Qa6GfN0tQL\nNAW8eHVuUHLVhTDn3T\n",
            ),
            "NAW8eHVuUHLVhTDn3T",
            "github-token",
        ),
        (
            bash(
                "env | grep GITHUB",
                "GITHUB_TOKEN=ghp_Zq81kdP0x9Lw2RtY5v\nB8nC1pF4sH6gA0eU2iKd\n",
            ),
            "B8nC1pF4sH6gA0eU2iKd",
            "github-token",
        ),
    ]);
}

#[test]
fn hugging_face_and_discord_tokens_inside_code_are_redacted() {
    assert_redacted(&[
        (
            write("f.write(\"HF_HOME=/data\\n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\\n\")"),
            "bSaXFdySsreTAkoPzCzKnPFsTqYYpoddCa",
            "huggingface-token",
        ),
        (
            write("HF = 'hf_' + 'DJeLpyMSUXHWgZFYgWsiWLePtaCpClMJxt'"),
            "DJeLpyMSUXHWgZFYgWsiWLePtaCpClMJxt",
            "huggingface-token",
        ),
        (
            write(
                "f.write(\"[discord]\\tMTQwOTUyMDIxMTg5NjE5MTU4NA.yUv1K2.lnjmAP7mIvwTPOvXB9CuJQYaihW8lbks2UUNwP\")",
            ),
            "lnjmAP7mIvwTPOvXB9CuJQYaihW8lbks2UUNwP",
            "discord-token",
        ),
        (
            write(
                "HOOK = \"https://discord.com/api/webhooks/1234567890123456789/oj4axJrR7-kzj8lG1GhgHxpaub7xzTkEo3gnox-rm2cBTAsMb7SkWGJrIPn4gdU9vuVt\"",
            ),
            "oj4axJrR7-kzj8lG1GhgHxpaub7xzTkEo3gnox-rm2cBTAsMb7SkWGJrIPn4gdU9vuVt",
            "discord-webhook",
        ),
    ]);
}

#[test]
fn a_letters_only_passphrase_is_redacted() {
    assert_redacted(&[
        (
            read("env:\n  GPG_PASSPHRASE: correcthorsebatterystaple\n  GPG_KEY_ID: 3AA5C343"),
            "correcthorsebatterystaple",
            "password",
        ),
        (
            read("signing:\n  key_passphrase: tangerinelighthousewaltz\n  key_id: release"),
            "tangerinelighthousewaltz",
            "password",
        ),
    ]);
}
