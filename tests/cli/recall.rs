//! The read side through the real binary: `search`, `show`, `sessions`, `timeline`, `status`
//! on databases the real hooks wrote, the search index they keep beside it, and the habits of
//! their output (exit codes, JSON, no colour in a pipe).

use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";
const SESSION: &str = "7c1f3a52-94d0-4c1e-b7a2-5f0e9d3c8a61";

/// A hook event of `SESSION` in `PROJECT`, shaped like Claude Code's.
fn event(name: &str, session: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({
        "session_id": session,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-shop/{session}.jsonl"),
        "cwd": PROJECT,
        "permission_mode": "default",
        "hook_event_name": name,
    });
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

fn prompt(env: &Env, session: &str, prompt_id: &str, text: &str) {
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            session,
            json!({"prompt_id": prompt_id, "prompt": text}),
        ),
    ));
}

fn capture(env: &Env, session: &str, prompt_id: &str, tool: &str, input: Value, response: Value) {
    let id = format!("toolu_{:016x}", fastid(&input.to_string()));
    assert_ack(&env.hook(
        "capture",
        &event(
            "PostToolUse",
            session,
            json!({"prompt_id": prompt_id, "tool_name": tool, "tool_input": input,
                   "tool_response": response, "tool_use_id": id}),
        ),
    ));
}

fn stop(env: &Env, session: &str, prompt_id: &str, message: &str) {
    assert_ack(&env.hook(
        "summary",
        &event(
            "Stop",
            session,
            json!({"prompt_id": prompt_id, "stop_hook_active": false,
                   "last_assistant_message": message}),
        ),
    ));
}

fn fastid(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A session of real-looking work: two turns with Read, Grep, Edit and a failing Bash.
fn shop(env: &Env) {
    assert_clean(&env.hook(
        "context",
        &event(
            "SessionStart",
            SESSION,
            json!({"source": "startup", "model": "claude-opus-4-8"}),
        ),
    ));
    prompt(
        env,
        SESSION,
        "p-1",
        "The settings merge drops keys; look at merge.rs and fix it",
    );
    capture(
        env,
        SESSION,
        "p-1",
        "Read",
        json!({"file_path": "/home/dev/shop/src/settings/merge.rs"}),
        json!({"type": "text", "file": {"filePath": "/home/dev/shop/src/settings/merge.rs",
               "content": "pub fn mergeSettings(ours: &Map, theirs: &Map) -> Map {\n    todo!()\n}\n",
               "numLines": 3, "startLine": 1, "totalLines": 3}}),
    );
    capture(
        env,
        SESSION,
        "p-1",
        "Grep",
        json!({"pattern": "upsert_session", "path": "/home/dev/shop/src", "output_mode": "content"}),
        json!({"mode": "content", "numFiles": 1, "filenames": [],
               "content": "src/store/mod.rs:388:fn upsert_session(tx: &Transaction, write: &Write)",
               "numLines": 1}),
    );
    capture(
        env,
        SESSION,
        "p-1",
        "Edit",
        json!({"file_path": "/home/dev/shop/src/settings/merge.rs", "old_string": "todo!()",
               "new_string": "ours.clone()", "replace_all": false}),
        json!({"filePath": "/home/dev/shop/src/settings/merge.rs", "oldString": "todo!()",
               "newString": "ours.clone()", "originalFile": "OLD-FILE-BODY",
               "structuredPatch": [], "userModified": false, "replaceAll": false}),
    );
    stop(
        env,
        SESSION,
        "p-1",
        "Fixed mergeSettings: it now keeps the keys it does not know.",
    );
    prompt(env, SESSION, "p-2", "Run the tests");
    assert_ack(&env.hook(
        "capture",
        &event(
            "PostToolUseFailure",
            SESSION,
            json!({"prompt_id": "p-2", "tool_name": "Bash", "tool_use_id": "toolu_fail_1",
                   "tool_input": {"command": "cargo test -p shop 2>&1 | tail -5",
                                  "description": "Run the tests"},
                   "error": "Exit code 101\nthread 'main' panicked: error: database is locked\ntest result: FAILED. 41 passed; 1 failed",
                   "is_interrupt": false}),
        ),
    ));
    stop(
        env,
        SESSION,
        "p-2",
        "One test fails: the database is locked while a reader holds it.",
    );
}

/// `claude-mem <args>` in the shop project.
fn run(env: &Env, args: &[&str]) -> Output {
    env.command()
        .args(args)
        .env("CLAUDE_PROJECT_DIR", PROJECT)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A search's results as JSON values.
fn search(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let out = run(env, &all);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {out:?}"
    );
    assert!(
        out.stderr.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What each result is (the tool, or the kind), in rank order.
fn found(env: &Env, args: &[&str]) -> Vec<String> {
    search(env, args)
        .iter()
        .map(|h| {
            h["tool"]
                .as_str()
                .unwrap_or(h["kind"].as_str().unwrap())
                .to_string()
        })
        .collect()
}

/// The same, sorted: for when the rank is not the point.
fn found_sorted(env: &Env, args: &[&str]) -> Vec<String> {
    let mut found = found(env, args);
    found.sort();
    found
}

#[test]
fn developers_find_files_identifiers_errors_and_prefixes() {
    let env = Env::new();
    shop(&env);
    // A file name, whole or its stem.
    assert_eq!(
        found_sorted(&env, &["merge.rs"]),
        ["Edit", "Read", "prompt"]
    );
    assert_eq!(
        found_sorted(&env, &["merge"]),
        ["Edit", "Read", "message", "prompt"]
    );
    // An identifier with underscores, whole or by one of its words.
    assert_eq!(found(&env, &["upsert_session"]), ["Grep"]);
    assert_eq!(found(&env, &["session"]), ["Grep"]);
    // camelCase: whole, in lower case, or by one of its humps.
    for query in ["mergeSettings", "mergesettings", "Settings"] {
        let hits = found(&env, &[query]);
        assert!(hits.contains(&"Read".to_string()), "{query}: {hits:?}");
        assert!(hits.contains(&"message".to_string()), "{query}: {hits:?}");
    }
    capture(
        &env,
        SESSION,
        "p-2",
        "Bash",
        json!({"command": "rg -n camelCaseHelper src"}),
        json!({"stdout": "src/render.rs:12:fn camelCaseHelper() {}", "stderr": ""}),
    );
    for query in [
        "camel",
        "Case",
        "camelCase",
        "camelcasehelper",
        "helper",
        "camelc*",
    ] {
        assert_eq!(found(&env, &[query]), ["Bash"], "{query}");
    }
    // An error message, as a phrase (quoted, or one shell argument with spaces).
    assert_eq!(
        found_sorted(&env, &["\"database is locked\""]),
        ["Bash", "message"]
    );
    assert_eq!(
        found_sorted(&env, &["database is locked"]),
        ["Bash", "message"]
    );
    // Not as stored: see `a_question_in_quotes_that_no_item_holds_is_searched_as_its_words`.
    // Prefixes, and word forms.
    assert!(found(&env, &["upse*"]).contains(&"Grep".to_string()));
    assert!(found(&env, &["panick*"]).contains(&"Bash".to_string()));
    assert_eq!(found(&env, &["test"]), found(&env, &["tests"]));
    // Something only in the old file an Edit answers with is not what anyone searches for.
    assert!(found(&env, &["OLD-FILE-BODY"]).is_empty());
}

#[test]
fn results_say_what_when_where_and_snippet_the_match() {
    let env = Env::new();
    shop(&env);
    let hits = search(&env, &["locked"]);
    let bash = hits.iter().find(|h| h["tool"] == "Bash").unwrap();
    assert_eq!(bash["kind"], "observation");
    assert_eq!(bash["tool"], "Bash");
    assert_eq!(bash["session_id"], SESSION);
    assert_eq!(bash["project"], PROJECT);
    assert_eq!(bash["title"], "cargo test -p shop 2>&1 | tail -5");
    assert!(
        bash["snippet"]
            .as_str()
            .unwrap()
            .contains("database is locked"),
        "{bash}"
    );
    let id = bash["id"].as_str().unwrap();
    assert_eq!(bash["short_id"].as_str().unwrap(), &id[24..32]);

    // The same, for a person reading a pipe: one line, id first, no colour, no trailing noise.
    let out = run(&env, &["search", "locked"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with(&id[24..32])).unwrap();
    assert!(
        line.contains(" Bash ") && line.contains(&SESSION[24..32]),
        "{text}"
    );
    assert!(
        line.ends_with("database is locked test result: FAILED. 41 passed; 1 failed"),
        "{line}"
    );
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn whatever_is_typed_gives_results_or_none_never_a_syntax_error() {
    let env = Env::new();
    shop(&env);
    for query in [
        "foo-bar",
        "\"unbalanced",
        "a:b",
        "NOT",
        "AND",
        "OR merge",
        "NEAR(",
        "(",
        ")",
        "*",
        "\"",
        "-",
        "merge*settings",
        "^merge",
        "col:merge",
        "'",
        "\\",
        "{}",
        "merge\"s",
        "日本語",
    ] {
        let out = run(&env, &["search", "--", query]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{query}: {out:?}");
        assert!(
            out.stderr.is_empty(),
            "{query}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        found(&env, &["NOT"]),
        ["message"],
        "NOT is a word like any other"
    );
    assert_eq!(found(&env, &["\"merge.rs"]).len(), 3);
}

#[test]
fn nothing_found_is_exit_1_and_silent_in_a_pipe() {
    let env = Env::new();
    // Before anything was captured.
    let out = run(&env, &["search", "merge"]);
    assert_eq!(
        (out.status.code(), out.stdout.len(), out.stderr.len()),
        (Some(1), 0, 0)
    );
    assert!(!env.data_dir.exists(), "a read command creates nothing");
    shop(&env);
    let out = run(&env, &["search", "zebra"]);
    assert_eq!(
        (out.status.code(), out.stdout.len(), out.stderr.len()),
        (Some(1), 0, 0)
    );
}

#[test]
fn filters_narrow_the_results() {
    let env = Env::new();
    shop(&env);
    let other = "0b5e2d1c-3f4a-4e8b-9c7d-6a5b4c3d2e1f";
    let mut e: Value = serde_json::from_slice(&event(
        "UserPromptSubmit",
        other,
        json!({"prompt_id": "q-1", "prompt": "merge the api routes"}),
    ))
    .unwrap();
    e["cwd"] = json!("/home/dev/api");
    assert_ack(&env.hook("prompt", e.to_string().as_bytes()));

    // The current project by default (here: CLAUDE_PROJECT_DIR), every one with --all.
    assert!(!found(&env, &["merge"]).is_empty());
    assert!(search(&env, &["routes"]).is_empty());
    assert_eq!(found(&env, &["routes", "--all"]), ["prompt"]);
    assert_eq!(
        found(&env, &["routes", "--project", "/home/dev/api"]),
        ["prompt"]
    );
    // A command run in a subdirectory of a project searches that project.
    let out = env
        .command()
        .args(["search", "--json", "merge"])
        .env("CLAUDE_PROJECT_DIR", "/home/dev/shop/src/deeper")
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 4, "{out:?}");

    assert_eq!(found(&env, &["merge", "--tool", "read"]), ["Read"]);
    assert_eq!(found(&env, &["merge", "--kind", "message"]), ["message"]);
    assert_eq!(
        found(&env, &["merge", "--kind", "prompt", "--all"]).len(),
        2
    );
    assert!(search(&env, &["merge", "--kind", "summary"]).is_empty());
    let by_file = found_sorted(&env, &["merge", "--file", "settings/merge.rs"]);
    assert_eq!(by_file, ["Edit", "Read"]);
    assert!(
        search(&env, &["merge", "--file", "ge.rs"]).is_empty(),
        "a path's end is whole names"
    );
    assert_eq!(
        found(
            &env,
            &["merge", "--file", "/home/dev/shop/src/settings/merge.rs"]
        )
        .len(),
        2
    );
    assert_eq!(
        found(&env, &["merge", "--all", "--session", &SESSION[24..32]]).len(),
        4
    );
    assert_eq!(
        found(&env, &["merge", "--all", "--session", other]),
        ["prompt"]
    );
    assert!(search(&env, &["merge", "--since", "2099-01-01"]).is_empty());
    assert_eq!(
        search(&env, &["merge", "--since", "1h", "--until", "2099-01-01"]).len(),
        4
    );
    assert!(search(&env, &["merge", "--until", "1h"]).is_empty());

    // Paging: the pages follow the ranking and do not overlap; each result has its bm25.
    let all = search(&env, &["merge"]);
    let first = search(&env, &["merge", "--limit", "2"]);
    let second = search(&env, &["merge", "--limit", "2", "--offset", "2"]);
    assert_eq!(first, all[..2]);
    assert_eq!(second, all[2..4]);
    let scores: Vec<f64> = all.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.iter().all(|s| *s < 0.0), "{scores:?}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let env = Env::new();
    shop(&env);
    // More phrases than a query takes.
    let many: Vec<String> = (0..17).map(|n| format!("\"w{n}\"")).collect();
    let words: Vec<&str> = ["search"]
        .into_iter()
        .chain(many.iter().map(String::as_str))
        .collect();
    for args in [
        &["search", "x", "--since", "yesterday"][..],
        &["search", "x", "--until", "2026-13-45"][..],
        &["search", "x", "--kind", "note"][..],
        &["search", "x", "--all", "--project", "/p"][..],
        &["search"][..],
        &["show", "abc"][..],
        &["timeline"][..],
        &["sessions", "--limit", "many"][..],
        &["search", &"merge ".repeat(201)][..],
        &words[..],
    ] {
        let out = run(&env, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("claude-mem: error: "), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// Regression: before anything was captured, a query longer than a search takes was answered
/// as if nothing were found (exit 1, silent in a pipe), not refused as it is once there is a
/// database: the query is checked before the database is looked for.
#[test]
fn a_query_too_long_is_a_usage_error_before_anything_is_captured() {
    let env = Env::new();
    let many: Vec<String> = (0..17).map(|n| format!("\"w{n}\"")).collect();
    let long = "merge ".repeat(201);
    for words in [
        vec![long.as_str()],
        many.iter().map(String::as_str).collect(),
    ] {
        let out = run(&env, &[&["search"][..], &words].concat());
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("claude-mem: error: the query "),
            "{stderr}"
        );
    }
    assert!(!env.data_dir.exists(), "a read command creates nothing");
}

/// The titles of a search's results, in rank order.
fn titles(env: &Env, args: &[&str]) -> Vec<String> {
    search(env, args)
        .iter()
        .map(|h| h["title"].as_str().unwrap().to_string())
        .collect()
}

/// Prompts, one a session of its own, in order.
fn prompts(env: &Env, texts: &[&str]) {
    for (n, text) in texts.iter().enumerate() {
        let session = format!("0c1f3a52-94d0-4c1e-b7a2-5f0e9d3c8{n:03}");
        prompt(env, &session, &format!("p-{n}"), text);
    }
}

/// Regression (issue 18): every word had to match, so a question found nothing. Now the words
/// are alternatives ranked by bm25 and by how many of them a result holds; the whole query as
/// typed comes first, then results with all its words, then the rest; stop words do not count
/// and word forms still match.
#[test]
fn questions_find_what_answers_them_best_first() {
    let env = Env::new();
    prompts(
        &env,
        &[
            "timeout timeout on checkout",
            "We fixed the login timeout by refreshing the session token before it expired",
            "timeout then login",
            "how did we do it? what was the plan for them?",
        ],
    );
    let question = titles(
        &env,
        &["how", "did", "we", "fix", "the", "login", "timeout?"],
    );
    assert_eq!(
        question,
        [
            "We fixed the login timeout by refreshing the session token before it expired",
            "timeout then login",
            "timeout timeout on checkout",
        ],
        "all words (fix as fixed) first; stop words find nothing"
    );
    assert_eq!(
        titles(&env, &["login", "timeout"])[..2],
        [
            "We fixed the login timeout by refreshing the session token before it expired",
            "timeout then login",
        ],
        "the exact phrase above a shorter text with both words"
    );
    // A query of nothing but stop words searches for them.
    assert_eq!(
        titles(&env, &["what", "was", "the", "plan"]),
        ["how did we do it? what was the plan for them?"]
    );
}

/// Regression (issue 18): only camelCase words were indexed whole; `upsertsession` missed
/// `upsert_session`, `mergesettings` missed `merge-settings`. Dotted names and paths are found
/// by their parts and whole.
#[test]
fn code_names_are_found_by_their_parts_and_whole() {
    let env = Env::new();
    prompts(
        &env,
        &[
            "rename upsert_session",
            "drop the merge-settings flag",
            "read src/store/read/mod.rs and config.toml",
            "call getSessionById",
        ],
    );
    let first = |query: &str| titles(&env, &[query]).first().cloned().unwrap_or_default();
    for (query, title) in [
        ("upsertsession", "rename upsert_session"),
        ("upsert-session", "rename upsert_session"),
        ("upsertSession", "rename upsert_session"),
        ("mergesettings", "drop the merge-settings flag"),
        ("merge_settings", "drop the merge-settings flag"),
        ("settings", "drop the merge-settings flag"),
        (
            "src/store/read/mod.rs",
            "read src/store/read/mod.rs and config.toml",
        ),
        ("store/read", "read src/store/read/mod.rs and config.toml"),
        ("config.toml", "read src/store/read/mod.rs and config.toml"),
        ("toml", "read src/store/read/mod.rs and config.toml"),
        ("get_session_by_id", "call getSessionById"),
        ("sessionbyid", ""),
    ] {
        assert_eq!(first(query), title, "{query}");
    }
}

/// Regression (issue 18): `cafe` missed `café`, `strasse` missed `Straße`, and a CJK word was
/// found only whole (`日本` missed `日本語`).
#[test]
fn accents_and_case_fold_and_cjk_is_found_by_its_characters() {
    let env = Env::new();
    prompts(
        &env,
        &[
            "Le CAFÉ de la Straße",
            "日本語のテストを書く",
            "한국어 문서",
        ],
    );
    for query in ["cafe", "Café", "CAFE", "strasse", "STRASSE"] {
        assert_eq!(titles(&env, &[query]), ["Le CAFÉ de la Straße"], "{query}");
    }
    for query in ["日本", "日本語", "テスト", "書く"] {
        assert_eq!(titles(&env, &[query]), ["日本語のテストを書く"], "{query}");
    }
    assert_eq!(titles(&env, &["한국"]), ["한국어 문서"]);
    assert!(titles(&env, &["日英"]).is_empty());
}

/// Regression (issue 18): a misspelt word found nothing and suggested nothing. Now the stored
/// word nearest to it is searched for instead, and said (`did_you_mean`).
#[test]
fn a_misspelt_word_is_answered_with_the_word_stored() {
    let env = Env::new();
    prompts(&env, &["deploy the staging server", "deployed again"]);
    let hits = search(&env, &["delpoy"]);
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(
        hits.iter().all(|h| h["did_you_mean"] == "deploy"),
        "{hits:?}"
    );
    // The next page too (it found nothing before): nothing matches the word on any page.
    let next = search(&env, &["--limit", "1", "--offset", "1", "delpoy"]);
    assert_eq!(next.len(), 1, "{next:?}");
    assert_eq!(next[0]["did_you_mean"], "deploy");
    assert_eq!(next[0]["id"], hits[1]["id"]);
    let exact = search(&env, &["deploy"]);
    assert_eq!(exact.len(), 2);
    assert!(exact.iter().all(|h| h["did_you_mean"].is_null()));
    // Nothing near: nothing found, as before.
    let out = run(&env, &["search", "--json", "xylophone"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

/// Regression (issue 25): a question typed in quotes, as people type it, was one exact phrase
/// and found nothing, every time. A quoted phrase of several words that no item holds is
/// searched as its words, as if typed without the quotes, and that is said: on a terminal, and
/// as `searched_as_words` in `--json`. A phrase that some item holds stays exact.
#[test]
fn a_question_in_quotes_that_no_item_holds_is_searched_as_its_words() {
    let env = Env::new();
    shop(&env);
    prompt(&env, SESSION, "p-3", "is the database still locked?");
    let question = "how did we fix the settings merge";
    let hits = search(&env, &[question]);
    let bare: Vec<&str> = question.split(' ').collect();
    assert_eq!(found(&env, &[question]), found(&env, &bare));
    assert_eq!(
        found_sorted(&env, &[question]),
        ["Edit", "Read", "message", "prompt"]
    );
    assert!(
        hits.iter().all(|h| h["searched_as_words"] == true),
        "{hits:?}"
    );
    assert_eq!(run(&env, &["search", question]).status.code(), Some(0));
    #[cfg(unix)]
    {
        let said = on_terminal(&env, &["search", question], true);
        assert!(
            said.contains(&format!(
                "no results for the phrase \"{question}\"; showing results for the words instead"
            )),
            "{said}"
        );
    }
    // Words in another order than stored are searched as words too.
    assert_eq!(
        found_sorted(&env, &["\"locked database\""]),
        ["Bash", "message", "prompt"]
    );
    // A phrase that matches stays exact: the prompt that holds its words apart is not found.
    let exact = search(&env, &["database is locked"]);
    assert_eq!(
        found_sorted(&env, &["database is locked"]),
        ["Bash", "message"]
    );
    assert!(exact.iter().all(|h| h["searched_as_words"] == false));
    assert_eq!(found_sorted(&env, &["database", "is", "locked"]).len(), 3);
    // A phrase that matches beside one that does not: the first stays required.
    assert_eq!(
        found(&env, &["database is locked", "how did it go"]),
        found(&env, &["database is locked", "how", "did", "it", "go"])
    );
}

/// A question in quotes is the same kind of search on every page: its words on each (it
/// matches nothing as a phrase on the first page, not only past the last).
#[test]
fn every_page_of_a_question_in_quotes_is_of_its_words() {
    let env = Env::new();
    prompts(
        &env,
        &[
            "deploy to staging failed",
            "deploy again after the fix",
            "the deploy host was down",
        ],
    );
    let question = "how did we fix the deploy";
    let pages: Vec<Vec<Value>> = (0..3)
        .map(|n| {
            search(
                &env,
                &["--limit", "1", "--offset", &n.to_string(), question],
            )
        })
        .collect();
    let all = search(&env, &[question]);
    assert_eq!(all.len(), 3);
    for (n, page) in pages.iter().enumerate() {
        assert_eq!(page.len(), 1, "page {n}: {page:?}");
        assert_eq!(page[0]["id"], all[n]["id"], "page {n}");
        assert_eq!(page[0]["searched_as_words"], true, "page {n}");
    }
    let past = run(&env, &["search", "--offset", "3", question]);
    assert_eq!(past.status.code(), Some(1), "{past:?}");
    // A phrase with results stays a phrase past its last page.
    let phrase = run(&env, &["search", "--offset", "1", "deploy to staging"]);
    assert_eq!(phrase.status.code(), Some(1), "{phrase:?}");
}

/// A Bash call of `command` answering `stdout`, its own tool use.
fn bash(env: &Env, prompt_id: &str, use_id: &str, command: &str, stdout: &str) {
    assert_ack(&env.hook(
        "capture",
        &event(
            "PostToolUse",
            SESSION,
            json!({"prompt_id": prompt_id, "tool_name": "Bash", "tool_use_id": use_id,
                   "tool_input": {"command": command},
                   "tool_response": {"stdout": stdout, "stderr": ""}}),
        ),
    ));
}

/// Regression (issue 18): what the compressor wrote ranked like a command's output, old work
/// like new, and the same command with the same output, run again, filled the results.
#[test]
fn memories_and_recent_work_weigh_more_and_repeats_are_one() {
    let env = Env::new();
    shop(&env);
    bash(&env, "p-2", "toolu_rb", "./scripts/rollback.sh", "done");
    let file = env.root.path().join("memory.jsonl");
    let lines = [
        json!({"format": "claude-mem/1"}),
        json!({"type": "memory", "id": "01950000-0000-7000-8000-0000000000a1",
            "key": "import/elsewhere/1", "session_id": SESSION, "project_dir": PROJECT,
            "prompt_number": 1, "memory_type": "decision",
            "title": "Run the rollback script before every release",
            "subtitle": null, "narrative": "It restores the schema.", "facts": [],
            "concepts": [], "files_read": [], "files_modified": [], "queue_ids": [],
            "origin": "import", "model": null, "extra": null,
            "created_at": clock_now()}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = run(&env, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let found = search(&env, &["rollback"]);
    assert_eq!(
        found
            .iter()
            .map(|h| h["kind"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["memory", "observation"]
    );

    for n in 0..3 {
        bash(
            &env,
            &format!("p-{n}"),
            &format!("toolu_st{n}"),
            "git status",
            "nothing to commit",
        );
    }
    let status = search(&env, &["git", "status"]);
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(status[0]["count"], 3);

    // The same word, one text captured long ago: the recent one first although it is longer.
    prompts(
        &env,
        &["canary release notes", "canary release notes, draft"],
    );
    env.db()
        .execute(
            "UPDATE user_prompts SET created_at = '2025-01-01T00:00:00.000Z'
              WHERE prompt_text = 'canary release notes'",
            [],
        )
        .unwrap();
    assert_eq!(
        titles(&env, &["canary"]),
        ["canary release notes, draft", "canary release notes"]
    );
}

/// Now, as the database writes times.
fn clock_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Changing the tokenizer changes the index: an index of an earlier format is built anew on
/// the first search after an upgrade (here one whose documents are gone, as a stale one
/// would answer), not read as if it were current.
#[test]
fn an_index_of_an_earlier_format_is_rebuilt() {
    let env = Env::new();
    prompts(&env, &["Le café"]);
    assert_eq!(titles(&env, &["cafe"]), ["Le café"]);
    let index = rusqlite::Connection::open(env.data_dir.join("memory-index.db")).unwrap();
    index
        .execute_batch("DELETE FROM docs; PRAGMA user_version = 2;")
        .unwrap();
    drop(index);
    assert_eq!(titles(&env, &["cafe"]), ["Le café"]);
}

#[test]
fn a_deleted_row_leaves_no_trace_in_the_index() {
    let env = Env::new();
    shop(&env);
    // A capture of turn p-3, then that turn's prompt turns out to be private: the hook purges
    // the capture from the database.
    capture(
        &env,
        SESSION,
        "p-3",
        "Bash",
        json!({"command": "cat ~/.netrc", "description": "zanzibarquux"}),
        json!({"stdout": "machine example.com password zanzibarquux", "stderr": ""}),
    );
    assert_eq!(found(&env, &["zanzibarquux"]), ["Bash"]);
    let index = env.data_dir.join("memory-index.db");
    assert!(
        contains(&std::fs::read(&index).unwrap(), "zanzibarquux"),
        "the test sees terms"
    );
    prompt(&env, SESSION, "p-3", "<private>read my netrc</private>");
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE prompt_id = 'p-3'"),
        0
    );

    assert!(found(&env, &["zanzibarquux"]).is_empty());
    for suffix in ["", "-wal", "-shm"] {
        let mut path = index.clone().into_os_string();
        path.push(suffix);
        let bytes = std::fs::read(&path).unwrap_or_default();
        assert!(!contains(&bytes, "zanzibarquux"), "{path:?}");
        assert!(!contains(&bytes, "netrc"), "{path:?}");
    }
}

/// Schema v14: the file holds no trigger, which every hook would parse at open (five were 10%
/// of a 1 KB capture); the commands make the tombstones' triggers on their own connections, so
/// what `forget` deletes still leaves the index (a hook's purge: the test above).
#[test]
fn the_file_holds_no_trigger_and_a_forget_still_leaves_the_index() {
    let env = Env::new();
    shop(&env);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'"),
        0
    );
    assert_eq!(found(&env, &["upsert_session"]), ["Grep"]);
    let out = run(&env, &["forget", "--session", SESSION, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(found(&env, &["upsert_session"]).is_empty());
    assert!(found(&env, &["merge"]).is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 0);
}

#[test]
fn a_reused_rowid_is_indexed_again() {
    let env = Env::new();
    shop(&env);
    capture(
        &env,
        SESSION,
        "p-2",
        "Bash",
        json!({"command": "echo first-gnu"}),
        json!({}),
    );
    assert_eq!(found(&env, &["gnu"]), ["Bash"]);
    // Forget the newest row (as retention or forget will): SQLite hands its rowid to the next.
    let db = env.deleting_db();
    let rowid: i64 = db
        .query_row("SELECT max(rowid) FROM pending_queue", [], |r| r.get(0))
        .unwrap();
    db.execute("DELETE FROM pending_queue WHERE rowid = ?1", [rowid])
        .unwrap();
    drop(db);
    capture(
        &env,
        SESSION,
        "p-2",
        "Bash",
        json!({"command": "echo second-gnat"}),
        json!({}),
    );
    assert_eq!(
        env.count("SELECT max(rowid) FROM pending_queue"),
        rowid,
        "the rowid was reused"
    );
    assert!(found(&env, &["gnu"]).is_empty());
    assert_eq!(found(&env, &["gnat"]), ["Bash"]);
}

#[test]
fn tombstones_pruned_before_the_index_saw_them_make_it_rebuild() {
    let env = Env::new();
    shop(&env);
    assert_eq!(found(&env, &["upsert_session"]), ["Grep"]);
    // Two forgets, then whoever prunes tombstones prunes all but the newest before any reader
    // ran: the index missed the first.
    let db = env.deleting_db();
    for tool in ["Grep", "Read"] {
        db.execute("DELETE FROM pending_queue WHERE tool_name = ?1", [tool])
            .unwrap();
    }
    db.execute(
        "DELETE FROM tombstones WHERE seq < (SELECT max(seq) FROM tombstones)",
        [],
    )
    .unwrap();
    drop(db);
    assert!(found(&env, &["upsert_session"]).is_empty());
    assert_eq!(
        found(&env, &["panicked"]),
        ["Bash"],
        "the rest is there again"
    );
}

#[test]
fn show_prints_any_item_by_any_of_its_ids() {
    let env = Env::new();
    shop(&env);
    let bash = &search(&env, &["panicked"])[0];
    let id = bash["id"].as_str().unwrap();
    for handle in [id, &id[24..32], &id[24..30], &id[24..], &id[..23]] {
        let out = run(&env, &["show", handle]);
        assert_eq!(out.status.code(), Some(0), "{handle}: {out:?}");
        let text = stdout(&out);
        assert!(
            text.starts_with(&format!("Bash {}\n", &id[24..32])),
            "{text}"
        );
        assert!(
            text.contains("command: cargo test -p shop 2>&1 | tail -5"),
            "{text}"
        );
        assert!(
            text.contains("thread 'main' panicked: error: database is locked"),
            "{text}"
        );
    }
    let json: Value = serde_json::from_slice(&run(&env, &["show", id, "--json"]).stdout).unwrap();
    assert_eq!(json["kind"], "observation");
    assert_eq!(json["event"], "PostToolUseFailure");
    assert_eq!(
        json["raw_output"]["tool_input"]["description"],
        "Run the tests"
    );

    let message = &search(&env, &["reader", "--kind", "message"])[0];
    let text = stdout(&run(&env, &["show", message["short_id"].as_str().unwrap()]));
    assert!(
        text.contains("One test fails: the database is locked"),
        "{text}"
    );

    let prompt = &search(&env, &["keys", "--kind", "prompt"])[0];
    let text = stdout(&run(&env, &["show", prompt["short_id"].as_str().unwrap()]));
    assert!(text.contains("The settings merge drops keys"), "{text}");
    assert!(
        text.contains("Read") && text.contains("Grep") && text.contains("Edit"),
        "{text}"
    );
    assert!(!text.contains("Run the tests"), "only its own turn: {text}");
}

#[test]
fn show_of_a_session_lists_its_turns_in_order() {
    let env = Env::new();
    shop(&env);
    let out = run(&env, &["show", &SESSION[..8]]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    assert!(
        text.starts_with(&format!("session {}\n", &SESSION[24..32])),
        "{text}"
    );
    assert!(text.contains("claude-opus-4-8"));
    assert!(
        text.contains("2 prompts, 4 tool calls, 1 file changed"),
        "{text}"
    );
    assert!(at("#1 ") < at("The settings merge drops keys"));
    assert!(at("The settings merge drops keys") < at("Read"));
    assert!(at("Read") < at("Grep") && at("Grep") < at("Edit"));
    assert!(at("Edit") < at("Fixed mergeSettings"));
    assert!(at("Fixed mergeSettings") < at("#2 "));
    assert!(at("#2 ") < at("Bash (failed)"));

    let json: Value =
        serde_json::from_slice(&run(&env, &["show", SESSION, "--json"]).stdout).unwrap();
    assert_eq!(json["kind"], "session");
    assert_eq!(json["id"], SESSION);
    let turns = json["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["prompt"]["prompt_number"], 1);
    let tools: Vec<&str> = turns[0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Read", "Grep", "Edit"]);
    assert_eq!(turns[1]["tool_calls"][0]["failed"], true);
    assert_eq!(
        json["files_changed"],
        json!(["/home/dev/shop/src/settings/merge.rs"])
    );
}

/// Regression: an ambiguous prefix listed all the items it names (up to 50) on one line.
#[test]
fn an_ambiguous_id_lists_a_few_of_its_items_one_a_line() {
    let env = Env::new();
    shop(&env);
    // Prompts whose ids end alike: their short ids are the same.
    let db = env.db();
    for n in 1..=7 {
        db.execute(
            "INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
             VALUES (?1, ?2, ?3, 'twin', ?4)",
            rusqlite::params![
                format!("01970000-000{n}-7000-8000-abcdef00000{n}"),
                SESSION,
                n + 2,
                format!("2026-11-20T10:0{n}:00.000Z")
            ],
        )
        .unwrap();
    }
    drop(db);
    let out = run(&env, &["show", "abcdef00"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0], "claude-mem: error: abcdef00 is ambiguous: it starts 7 items; give more of it:",
        "{stderr}"
    );
    assert_eq!(
        lines[1], "  abcdef000001  2026-11-20T10:01:00Z  prompt",
        "{stderr}"
    );
    assert_eq!(
        lines[5], "  abcdef000005  2026-11-20T10:05:00Z  prompt",
        "{stderr}"
    );
    assert_eq!(lines[6], "  and 2 more", "{stderr}");
    assert_eq!(lines.len(), 7, "{stderr}");
    assert_eq!(run(&env, &["show", "abcdef000002"]).status.code(), Some(0));

    let out = run(&env, &["show", "ffffff00"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no session, prompt"), "{stderr}");
}

/// Regression: `sessions --project` of a project nothing was recorded in printed nothing and
/// exited 0.
#[test]
fn sessions_of_a_project_never_recorded_is_one_line() {
    let env = Env::new();
    shop(&env);
    let out = run(&env, &["sessions", "--project", "/home/dev/shpo"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "claude-mem: error: no session was ever recorded in /home/dev/shpo (--all lists the \
         sessions of every project)\n"
    );
    // A project that has sessions, none of them in the time asked: nothing to list, exit 0.
    let out = run(
        &env,
        &["sessions", "--project", PROJECT, "--until", "2000-01-01"],
    );
    assert_eq!(
        (out.status.code(), out.stdout.len()),
        (Some(0), 0),
        "{out:?}"
    );
    assert!(out.stderr.is_empty(), "a pipe gets no note: {out:?}");
}

/// Regression: run from `/`, the project was named "" (`no results in project  (--all …)`,
/// `"project": ""` in an export's header).
#[cfg(unix)]
#[test]
fn the_root_folder_is_a_project_named_slash() {
    let env = Env::new();
    shop(&env);
    let at_root = |args: &[&str]| {
        let mut cmd = env.command();
        cmd.args(args).current_dir("/");
        cmd
    };
    let out = at_root(&["export"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let header: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(header["filters"]["project"], "/", "{header}");
    let (code, shown) = on_pty(at_root(&["sessions"]), "");
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(
        shown,
        "no sessions in project / (--all looks in every project)\n"
    );
}

/// Regression: `status` showed a time ahead of the clock (the next retention look, a capture
/// from a machine whose clock runs ahead) as "(0s ago)".
#[cfg(unix)]
#[test]
fn a_time_ahead_of_the_clock_says_in_how_long() {
    let env = Env::new();
    shop(&env);
    env.db()
        .execute(
            "UPDATE pending_queue SET created_at =
                 strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+3 hours', '+5 minutes')",
            [],
        )
        .unwrap();
    let mut cmd = env.command();
    cmd.arg("status")
        .env("CLAUDE_PROJECT_DIR", PROJECT)
        .env("NO_COLOR", "1");
    let (code, shown) = on_pty(cmd, "");
    assert_eq!(code, Some(0), "{shown}");
    let capture = shown
        .lines()
        .find(|l| l.starts_with("last capture"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(capture.ends_with("(in 3h)"), "{capture}");
    let retention = shown
        .lines()
        .find(|l| l.starts_with("retention"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        retention.contains("next due ") && retention.contains(" (in "),
        "{retention}"
    );
}

#[test]
fn sessions_lists_recent_work_of_the_project() {
    let env = Env::new();
    shop(&env);
    let out = run(&env, &["sessions"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "no header in a pipe: {text}");
    let line = text.lines().next().unwrap();
    assert!(line.starts_with(&SESSION[24..32]), "{line}");
    assert!(
        line.ends_with("The settings merge drops keys; look at merge.rs and fix it"),
        "{line}"
    );

    let out = run(&env, &["sessions", "--json"]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["id"], SESSION);
    assert_eq!(s["project"], PROJECT);
    assert_eq!(
        (s["prompts"].as_i64(), s["tool_calls"].as_i64()),
        (Some(2), Some(4))
    );
    assert_eq!(
        s["files_changed"],
        json!(["/home/dev/shop/src/settings/merge.rs"])
    );
    assert!(s["duration_seconds"].as_i64().unwrap() >= 0);

    let elsewhere = env
        .command()
        .args(["sessions"])
        .env("CLAUDE_PROJECT_DIR", "/home/dev/api")
        .output()
        .unwrap();
    assert_eq!(
        (elsewhere.status.code(), elsewhere.stdout.len()),
        (Some(0), 0)
    );
    let all = env.command().args(["sessions", "--all"]).output().unwrap();
    assert!(stdout(&all).contains("/home/dev/shop"), "{all:?}");
}

/// Regression: tables padded cells by characters, so a project named in CJK (two columns a
/// character on a terminal) pushed the columns after it out of line.
#[test]
fn table_columns_line_up_by_the_width_text_takes_on_screen() {
    let env = Env::new();
    let projects = ["/home/dev/shop", "/home/dev/お店", "/home/dev/cafe\u{301}"];
    for (n, project) in projects.iter().enumerate() {
        let session = format!("7c1f3a52-94d0-4c1e-b7a2-{n}f0e9d3c8a71");
        let prompt = json!({"session_id": session, "cwd": project,
                            "hook_event_name": "UserPromptSubmit", "prompt_id": "p-1",
                            "prompt": "設定ファイルを直して"});
        assert_ack(&env.hook("prompt", prompt.to_string().as_bytes()));
    }
    let out = env.command().args(["sessions", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 3, "{text}");
    // The columns a line takes before its first request: wide characters (the only ones here
    // are kana and kanji) take two, `e` and its combining accent one.
    let columns = |line: &str| -> usize {
        let before = &line[..line.find("設定").unwrap_or_else(|| panic!("{text}"))];
        before
            .chars()
            .map(|c| match c {
                '\u{3040}'..='\u{9fff}' => 2,
                '\u{300}'..='\u{36f}' => 0,
                _ => 1,
            })
            .sum()
    };
    let starts: Vec<usize> = text.lines().map(columns).collect();
    assert!(starts.iter().all(|&s| s == starts[0]), "{starts:?}\n{text}");
}

#[test]
fn timeline_shows_the_items_around_one() {
    let env = Env::new();
    shop(&env);
    let grep = &search(&env, &["upsert_session"])[0];
    let id = grep["id"].as_str().unwrap();
    let out = run(
        &env,
        &[
            "timeline",
            &id[24..32],
            "--before",
            "1",
            "--after",
            "2",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let items: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let what: Vec<&str> = items
        .iter()
        .map(|i| i["tool"].as_str().unwrap_or(i["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(what, ["Read", "Grep", "Edit", "message"]);
    assert_eq!(items[1]["anchor"], true);
    assert_eq!(items[0]["anchor"], false);

    let text = stdout(&run(&env, &["timeline", SESSION, "--after", "3"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with('>') && lines[0].contains("started in /home/dev/shop"),
        "{text}"
    );
    assert!(lines[1].contains("prompt #1"), "{text}");
}

#[test]
fn status_says_where_everything_is() {
    // No Claude Code to ask (whatever this machine has): PostToolUseFailure is not registered.
    let env = Env::new().with("CLAUDE_MEM_CLAUDE_BIN", "/nonexistent/claude");
    // Before anything: it still answers.
    let out = run(&env, &["status"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("not created yet"), "{text}");
    assert!(text.contains("hooks are not registered"), "{text}");
    assert!(!env.data_dir.exists());

    let settings = env.root.path().join("home/.claude/settings.json");
    assert!(
        env.command()
            .arg("install-hooks")
            .output()
            .unwrap()
            .status
            .success()
    );
    shop(&env);
    assert_eq!(run(&env, &["search", "merge"]).status.code(), Some(0));
    let text = stdout(&run(&env, &["status"]));
    assert!(
        text.contains("~/.claude/settings.json: 5 of 6 hooks"),
        "{text}"
    );
    assert!(text.contains("running this binary"), "{text}");
    assert!(text.contains("PostToolUseFailure not added: "), "{text}");
    assert!(!text.contains("missing"), "{text}");
    assert!(text.contains("schema v14"), "{text}");
    assert!(text.contains("pending_queue 6"), "{text}");
    assert!(text.contains("raw 6"), "{text}");
    assert!(text.contains("nothing waiting"), "{text}");
    assert!(text.contains("no warnings in the last day"), "{text}");

    // A hook that runs another binary, one missing, a warning in the log.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    let stop = doc["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let moved = stop.replace(env!("CARGO_BIN_EXE_claude-mem"), "/opt/old/claude-mem");
    doc["hooks"]["Stop"][0]["hooks"][0]["command"] = json!(moved);
    doc["hooks"].as_object_mut().unwrap().remove("SessionEnd");
    std::fs::write(&settings, doc.to_string()).unwrap();
    assert_silent(&env.hook("capture", b"not json"));
    let json: Value = serde_json::from_slice(&run(&env, &["status", "--json"]).stdout).unwrap();
    let hooks = &json["hooks"][0]["hooks"];
    let state = |event: &str| {
        hooks
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["event"] == event)
            .map(|h| h["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state("Stop").as_deref(), Some("other_binary"));
    assert_eq!(state("SessionEnd").as_deref(), Some("missing"));
    assert_eq!(state("PostToolUse").as_deref(), Some("this_binary"));
    assert_eq!(json["database"]["schema_version"], 14);
    assert_eq!(json["database"]["tables"]["sessions"], 1);
    assert_eq!(json["log"]["warnings_last_day"], 1);
    assert!(json["index"]["items"].as_i64().unwrap() >= 8, "{json}");
    let text = stdout(&run(&env, &["status"]));
    assert!(
        text.contains("running another binary: /opt/old/claude-mem"),
        "{text}"
    );
    assert!(text.contains("missing SessionEnd (hook cleanup)"), "{text}");
    assert!(text.contains("1 warning in the last day"), "{text}");
}

#[test]
fn readers_never_write_the_database_nor_wait_for_its_writers() {
    let env = Env::new();
    shop(&env);
    let db_files = || {
        ["", "-wal"]
            .map(|s| std::fs::read(format!("{}{s}", env.db_path().display())).unwrap_or_default())
    };
    let before = db_files();
    // A writer holds the lock with an uncommitted row.
    let writer = env.db();
    writer
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
             VALUES ('uncommitted', 'x', 1, 'merge uncommitted', '2026-01-01T00:00:00Z');",
        )
        .unwrap();
    let started = std::time::Instant::now();
    assert!(
        db_files() == before,
        "the uncommitted row is not in the files yet"
    );
    for args in [
        &["search", "merge"][..],
        &["sessions"][..],
        &["show", SESSION][..],
        &["timeline", SESSION][..],
        &["status"][..],
    ] {
        let out = run(&env, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        assert!(!stdout(&out).contains("uncommitted"));
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    writer.execute_batch("ROLLBACK").unwrap();
    assert!(
        db_files() == before,
        "the database and its WAL are as they were"
    );
}

#[test]
fn the_index_is_a_cache_rebuilt_when_lost_damaged_or_stale() {
    let env = Env::new();
    shop(&env);
    let index = env.data_dir.join("memory-index.db");
    let expected = search(&env, &["merge"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&index).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_file(&index).unwrap();
    assert_eq!(search(&env, &["merge"]), expected);
    std::fs::write(
        &index,
        b"this is not a database, it is a damaged cache file",
    )
    .unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    assert_eq!(search(&env, &["merge"]), expected);

    // A new database in the same place (the old one deleted): nothing of the old one is found.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", env.db_path().display()));
    }
    prompt(&env, SESSION, "p-9", "a fresh start");
    assert!(search(&env, &["merge"]).is_empty());
    assert_eq!(found(&env, &["fresh"]), ["prompt"]);
}

#[cfg(unix)]
#[test]
fn an_index_file_that_is_not_ours_is_refused_at_once_and_left_alone() {
    let env = Env::new();
    shop(&env);
    let index = env.data_dir.join("memory-index.db");
    let elsewhere = env.root.path().join("elsewhere.db");
    std::fs::write(&elsewhere, b"someone else's file").unwrap();
    let plant: [&dyn Fn(); 2] = [
        &|| std::os::unix::fs::symlink(&elsewhere, &index).unwrap(),
        // A FIFO nobody writes would block a plain open.
        &|| mkfifo(&index, 0o600),
    ];
    for plant in plant {
        let _ = std::fs::remove_file(&index);
        plant();
        let mut child = env
            .command()
            .args(["search", "merge"])
            .env("CLAUDE_PROJECT_DIR", PROJECT)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if wait_or_kill(&mut child, std::time::Duration::from_secs(20))
            .unwrap()
            .is_none()
        {
            panic!("the search hung on the planted index file");
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("is not a regular file"), "{stderr}");
    }
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"someone else's file");
}

#[test]
fn two_readers_building_the_index_at_once_agree() {
    let env = Env::new();
    shop(&env);
    for i in 0..40 {
        capture(
            &env,
            SESSION,
            "p-2",
            "Bash",
            json!({"command": format!("make target-{i}")}),
            json!({}),
        );
    }
    let spawn = || {
        env.command()
            .args(["search", "--json", "--limit", "100", "make"])
            .env("CLAUDE_PROJECT_DIR", PROJECT)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    assert_eq!(stdout(&a).lines().count(), 40);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn a_schema_v1_database_is_read_then_migrated_and_reindexed() {
    let env = Env::new();
    std::fs::create_dir_all(&env.data_dir).unwrap();
    let db = env.db();
    db.execute_batch(include_str!("../fixtures/schema/v1.sql"))
        .unwrap();
    db.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA application_id = 1668113773; PRAGMA user_version = 1;
         INSERT INTO sessions (session_id, project_dir, started_at, updated_at, prompt_count)
         VALUES ('old-session', '/home/dev/shop', '2026-01-01T00:00:00.000Z',
                 '2026-01-01T00:00:00.000Z', 1);
         INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
         VALUES ('old-prompt', 'old-session', 1, 'merge the old things', '2026-01-01T00:00:00.000Z');",
    )
    .unwrap();
    drop(db);
    assert_eq!(found(&env, &["old"]), ["prompt"]);
    // A hook of this version migrates it; a forget after that reaches the index.
    shop(&env);
    assert_eq!(env.count("PRAGMA user_version"), 14);
    env.deleting_db()
        .execute("DELETE FROM user_prompts WHERE id = 'old-prompt'", [])
        .unwrap();
    assert!(found(&env, &["old"]).is_empty());
    assert!(!found(&env, &["merge"]).is_empty());
}

#[cfg(unix)]
#[test]
fn a_first_search_over_many_captures_shows_progress_on_a_terminal_only() {
    let env = Env::new();
    shop(&env);
    // Enough rows that building the index takes a moment: copies of a real capture.
    env.db()
        .execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000)
             INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                 project_dir, raw_output, files_touched, payload_bytes, created_at, updated_at)
             SELECT printf('copy-%d', i), session_id, printf('copy_%d', i), event, tool_name,
                 project_dir, raw_output, files_touched, payload_bytes, created_at, updated_at
               FROM n, (SELECT * FROM pending_queue WHERE tool_name = 'Read')",
            [],
        )
        .unwrap();
    let shown = on_terminal(&env, &["search", "mergeSettings"], false);
    assert!(shown.contains("% indexing "), "{shown:?}");
    assert!(
        shown.contains("\r\u{1b}[2K"),
        "the bar is erased: {shown:?}"
    );
    // In a pipe (every other test), stderr stays empty: see `search`.
}

/// The output of `claude-mem <args>` run on a terminal (stdout and stderr together), which
/// must succeed.
#[cfg(unix)]
fn on_terminal(env: &Env, args: &[&str], no_color: bool) -> String {
    let mut cmd = env.command();
    cmd.args(args)
        .env("CLAUDE_PROJECT_DIR", PROJECT)
        .env("TERM", "xterm");
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let (code, shown) = on_pty(cmd, "");
    assert_eq!(code, Some(0), "{shown}");
    shown
}

#[cfg(unix)]
#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let env = Env::new();
    shop(&env);
    let coloured = on_terminal(&env, &["search", "merge"], false);
    assert!(coloured.contains("\u{1b}[33m"), "{coloured:?}");
    assert!(
        coloured.contains("s ago"),
        "relative times on a terminal: {coloured:?}"
    );
    let plain = on_terminal(&env, &["search", "merge"], true);
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(plain.contains("s ago"), "{plain:?}");
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Regression (issue 18): a result was ranked by its own words alone, so a conversation's
/// turn lost to any shorter text with the same word, although the turn before it was about
/// the rest of the question. Now a result gains a share of its neighbour's relevance (the item
/// before or after it in its session, when that is a result too).
#[test]
fn a_result_in_the_context_of_the_question_ranks_above_one_out_of_it() {
    assert_eq!(
        beach_after_puppy(&[]),
        PUPPY_FIRST,
        "the beach of the puppy's conversation above the shorter beach of another"
    );
}

/// What `puppy beach` finds: a conversation that says "We adopted a puppy", then `between`,
/// then "she runs along the beach", after five one-prompt sessions, one of them about beach
/// towels.
fn beach_after_puppy(between: &[&str]) -> Vec<String> {
    let env = Env::new();
    prompts(
        &env,
        &[
            "beach towels on sale",
            "repaint the kitchen",
            "renew the car insurance",
            "book the dentist",
            "water the plants",
        ],
    );
    let session = "5d2e6a10-94d0-4c1e-b7a2-5f0e9d3c8a61";
    let turns = std::iter::once("We adopted a puppy last spring")
        .chain(between.iter().copied())
        .chain(["Every morning she runs along the beach with us"]);
    for (n, text) in turns.enumerate() {
        prompt(&env, session, &format!("p-{n}"), text);
    }
    titles(&env, &["puppy", "beach"])
}

const PUPPY_FIRST: [&str; 3] = [
    "We adopted a puppy last spring",
    "Every morning she runs along the beach with us",
    "beach towels on sale",
];

/// Regression (issue 18): a result's share of the query counted each word alike, so a short
/// turn holding the speaker's name (in most turns of the conversation) and one word of the
/// question ranked above a longer turn that holds the question's two rare words. Each word
/// now weighs its rarity.
#[test]
fn a_name_in_every_turn_weighs_less_than_the_rare_words_of_a_question() {
    let env = Env::new();
    let session = "3a7c2e10-94d0-4c1e-b7a2-5f0e9d3c8a62";
    let long = "Jon: my pottery glaze came out of the kiln without a crack".to_string()
        + &" and then we talked about the weather, the traffic, the long queue at the shop"
            .repeat(3);
    let turns = [
        "Maria: the glaze!",
        long.as_str(),
        "Maria: I went running",
        "Maria: we had pasta",
        "Maria: the dog is fine",
        "Maria: I read a book",
        "Jon: it rained all day",
        "Jon: hello there",
    ];
    for (n, text) in turns.iter().enumerate() {
        prompt(&env, session, &format!("p-{n}"), text);
    }
    let found = titles(
        &env,
        &["which", "glaze", "did", "maria", "use", "for", "pottery?"],
    );
    assert!(
        found[0].starts_with("Jon: my pottery glaze"),
        "the turn with pottery and glaze first: {found:?}"
    );
}

/// Regression (issue 18): a turn gained only from the turns just before and after it, so the
/// answer two turns after the question ("so cute!" between them) gained nothing from it.
#[test]
fn a_turn_two_after_the_one_that_asks_is_read_with_it() {
    assert_eq!(
        beach_after_puppy(&["Oh, so cute! What is her name?"]),
        PUPPY_FIRST,
        "the beach two turns after the puppy above the shorter beach of another"
    );
}
