//! Standing instructions through the real binary: what the user told Claude to do from now on,
//! said in one session, is in the context of every later session of the project, in the user's
//! words, the current wording of each; `conventions` lists them, pins and unpins; `forget`
//! removes one; and never a private one, another project's, or the model's own words.

use std::process::Output;

use crate::harness::*;
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";
const OTHER: &str = "/home/dev/api";

fn event(name: &str, session: &str, project: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({"session_id": session, "cwd": project, "hook_event_name": name,
                       "transcript_path": format!("/tmp/{session}.jsonl")});
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

/// `text` said as a prompt of `session` in `project`; the hook's answer.
fn say(env: &Env, session: &str, project: &str, text: &str) -> Output {
    static SAID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SAID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = format!("p-{session}-{n}");
    let out = env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            session,
            project,
            json!({"prompt_id": id, "prompt": text}),
        ),
    );
    assert_clean(&out);
    out
}

/// What a new session of `project` is given at its start.
fn started(env: &Env, session: &str, project: &str) -> String {
    let out = env.hook(
        "context",
        &event(
            "SessionStart",
            session,
            project,
            json!({"source": "startup"}),
        ),
    );
    assert_clean(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The standing instructions a context gives (what comes before its list of sessions).
fn rules_of(context: &str) -> String {
    context
        .split("Recent sessions")
        .next()
        .unwrap_or_default()
        .to_string()
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

/// `conventions --json` of `project` (`--replaced` too with `replaced`).
fn listed(env: &Env, project: &str, replaced: bool) -> Vec<Value> {
    let mut args = vec!["conventions", "--json", "--project", project];
    if replaced {
        args.push("--replaced");
    }
    let out = run(env, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Forty rules, each about things of its own, newer than what the test said before.
fn fill_the_budget(env: &Env) {
    for n in 0..40 {
        say(
            env,
            "s1",
            PROJECT,
            &format!("From now on, keep widget{n} next to gadget{n} in folder{n}."),
        );
    }
}

#[test]
fn a_rule_said_once_is_in_every_later_session_of_the_project() {
    let env = Env::new();
    say(
        &env,
        "s1",
        PROJECT,
        "Fix the login bug, and from now on prefix private helpers with an underscore.",
    );
    say(&env, "s1", PROJECT, "it always crashes when I click save");
    let context = started(&env, "s2", PROJECT);
    assert!(
        context.contains("from now on prefix private helpers with an underscore"),
        "{context}"
    );
    assert!(context.contains("meant to last"), "{context}");
    assert!(
        !context.contains("always crashes"),
        "an aside is no rule: {context}"
    );
    let rules = listed(&env, PROJECT, false);
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["current"], true);
    assert!(
        rules[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Fix the login bug, and from now on")
    );
}

#[test]
fn an_updated_rule_is_given_in_its_new_wording_and_the_old_one_is_kept_as_replaced() {
    let env = Env::new();
    say(
        &env,
        "s1",
        PROJECT,
        "As a rule, test files go under tests/.",
    );
    say(
        &env,
        "s2",
        PROJECT,
        "I'm changing one rule: test files go under spec/, not tests/.",
    );
    let context = started(&env, "s3", PROJECT);
    let rules = rules_of(&context);
    assert!(rules.contains("test files go under spec/"), "{context}");
    assert!(rules.contains("(replaces what was said"), "{context}");
    assert!(
        !rules.contains("As a rule, test files go under tests/"),
        "{context}"
    );
    // Where the history shows the old rule (the first prompt of its session), it says so.
    assert!(
        context.contains("As a rule, test files go under tests/. (a rule since replaced)"),
        "{context}"
    );
    assert_eq!(listed(&env, PROJECT, false).len(), 1);
    let all = listed(&env, PROJECT, true);
    assert_eq!(all.len(), 2, "{all:?}");
    let old = all.iter().find(|r| r["current"] == false).unwrap();
    let new = all.iter().find(|r| r["current"] == true).unwrap();
    assert_eq!(old["replaced_by"], new["id"]);
    assert!(old["said_at"].as_str() <= new["said_at"].as_str());
}

#[test]
fn a_pinned_rule_stays_in_the_context_when_newer_ones_fill_its_budget() {
    let env = Env::new();
    say(
        &env,
        "s1",
        PROJECT,
        "From now on, keep every SQL statement in queries.sql.",
    );
    fill_the_budget(&env);
    let context = rules_of(&started(&env, "s2", PROJECT));
    assert!(
        !context.contains("queries.sql"),
        "the oldest is past the budget: {context}"
    );
    let oldest = listed(&env, PROJECT, false)
        .into_iter()
        .find(|r| r["text"].as_str().unwrap().contains("queries.sql"))
        .unwrap();
    let id = oldest["short_id"].as_str().unwrap();
    let out = run(&env, &["conventions", "pin", id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let context = rules_of(&started(&env, "s3", PROJECT));
    assert!(context.contains("queries.sql"), "{context}");
    assert!(context.contains(", pinned)"), "{context}");
    assert!(run(&env, &["conventions", "unpin", id]).status.success());
    assert!(!rules_of(&started(&env, "s4", PROJECT)).contains("queries.sql"));
}

#[test]
fn forget_of_a_rule_takes_it_out_of_every_later_context() {
    let env = Env::new();
    say(&env, "s1", PROJECT, "We use pnpm, not npm.");
    say(&env, "s1", PROJECT, "Never commit directly to main.");
    let pnpm = listed(&env, PROJECT, false)
        .into_iter()
        .find(|r| r["text"].as_str().unwrap().contains("pnpm"))
        .unwrap();
    let out = run(
        &env,
        &["forget", pnpm["short_id"].as_str().unwrap(), "--yes"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let context = started(&env, "s2", PROJECT);
    assert!(!context.contains("pnpm"), "{context}");
    assert!(
        context.contains("Never commit directly to main"),
        "{context}"
    );
    assert_eq!(listed(&env, PROJECT, false).len(), 1);
}

#[test]
fn a_private_rule_another_projects_rule_and_the_models_words_are_never_given() {
    let env = Env::new();
    say(
        &env,
        "s1",
        PROJECT,
        "<private>From now on, deploy with the staging key.</private>",
    );
    say(
        &env,
        "a1",
        OTHER,
        "Always run the migrations by hand in this repo.",
    );
    let stop = event(
        "Stop",
        "s1",
        PROJECT,
        json!({"stop_hook_active": false,
               "last_assistant_message": "Done. From now on I will always squash the commits."}),
    );
    assert_clean(&env.hook("summary", &stop));
    let context = started(&env, "s2", PROJECT);
    assert!(!context.contains("staging key"), "{context}");
    assert!(!context.contains("migrations by hand"), "{context}");
    assert!(!context.contains("squash"), "{context}");
    assert!(!context.contains("meant to last"), "{context}");
    assert!(listed(&env, PROJECT, true).is_empty());
    assert_eq!(listed(&env, OTHER, false).len(), 1);
    assert!(
        !String::from_utf8_lossy(&everything_on_disk(&env)).contains("staging key"),
        "a private rule reaches no file"
    );
}

#[test]
fn a_rule_that_bears_on_a_prompt_comes_with_it_when_the_start_left_it_out() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    say(
        &env,
        "s1",
        PROJECT,
        "Going forward, the rate limiter settings live in config/limits.toml.",
    );
    fill_the_budget(&env);
    let context = rules_of(&started(&env, "s2", PROJECT));
    assert!(
        !context.contains("limits.toml"),
        "past the start's budget: {context}"
    );
    let answer = say(
        &env,
        "s2",
        PROJECT,
        "Write a rate limiter for the upload endpoint and put its settings in the usual config.",
    );
    let v: Value = serde_json::from_slice(&answer.stdout).unwrap();
    let given = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(given.contains("limits.toml"), "{given}");
    let unrelated = say(&env, "s2", PROJECT, "thanks, that looks good");
    assert_eq!(unrelated.stdout, ACK.as_bytes());
}

/// A prompt is answered from what was said before it: a rule it states is not handed back to
/// it as an earlier one, nor the rule it replaces, which is history from then on.
#[test]
fn a_prompt_that_changes_a_rule_is_handed_neither_its_own_nor_the_one_it_replaces() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    say(
        &env,
        "s1",
        PROJECT,
        "Going forward, the rate limiter settings live in config/limits.toml.",
    );
    fill_the_budget(&env);
    started(&env, "s2", PROJECT);
    let answer = say(
        &env,
        "s2",
        PROJECT,
        "I'm changing one rule: the rate limiter settings live in deploy/limits.yaml instead.",
    );
    assert_eq!(
        answer.stdout,
        ACK.as_bytes(),
        "{}",
        String::from_utf8_lossy(&answer.stdout)
    );
    let current = listed(&env, PROJECT, false);
    assert!(
        current.iter().any(|r| r["text"]
            .as_str()
            .is_some_and(|t| t.contains("deploy/limits.yaml"))),
        "the prompt's rule is stored as the current one: {current:?}"
    );
}

#[test]
fn conventions_refuses_an_id_that_states_no_rule_in_one_line() {
    let env = Env::new();
    say(&env, "s1", PROJECT, "Fix the flaky checkout test please.");
    let out = run(&env, &["conventions", "pin", "s1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a session, not a prompt"));
    let prompt: String = env
        .db()
        .query_row("SELECT id FROM user_prompts", [], |r| r.get(0))
        .unwrap();
    let out = run(&env, &["conventions", "pin", &prompt]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("gives no standing instruction"), "{err}");
}

#[test]
fn rules_said_before_the_upgrade_are_found_by_it() {
    let env = Env::new();
    say(&env, "s1", PROJECT, "Fix the login bug.");
    // The database as release v8 left it, with a prompt that states a rule.
    env.db()
        .execute_batch(
            "DROP INDEX user_prompts_standing;
             ALTER TABLE user_prompts DROP COLUMN standing;
             ALTER TABLE user_prompts DROP COLUMN pinned_at;
             INSERT INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at)
             VALUES ('old-rule', 's1', 2, 'From now on, money is Decimal, never float.',
                     '2026-01-01T00:00:00.000Z');
             DROP TABLE project_moves; DROP TABLE project_ids;
             DROP TABLE forgotten;
             ALTER TABLE sessions DROP COLUMN agent;
             DROP TABLE given;
             PRAGMA user_version = 8;",
        )
        .unwrap();
    env.old_triggers();
    let context = started(&env, "s2", PROJECT);
    assert!(
        context.contains("money is Decimal, never float"),
        "{context}"
    );
    assert_eq!(env.count("PRAGMA user_version"), 14);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM user_prompts WHERE standing > 0"),
        1
    );
}

#[test]
fn a_task_searched_in_the_project_finds_its_rules_and_a_question_does_not() {
    let env = Env::new();
    say(
        &env,
        "s1",
        PROJECT,
        "Always add type hints to public functions.",
    );
    say(&env, "s1", PROJECT, "Fix the flaky login test please.");
    let search = |words: &str| -> Vec<Value> {
        let out = run(
            &env,
            &["search", "--json", "--project", PROJECT, "--", words],
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let task = search("write a rate limiter for the upload endpoint");
    let rule = task
        .iter()
        .find(|r| r["standing"] == true)
        .unwrap_or_else(|| panic!("no rule among {task:?}"));
    assert!(
        rule["title"].as_str().unwrap().contains("type hints"),
        "{rule}"
    );
    let question = search("how did we fix the flaky login test?");
    assert!(!question.is_empty());
    assert!(
        question.iter().all(|r| r["standing"] == false),
        "{question:?}"
    );
    let text = String::from_utf8(
        run(
            &env,
            &[
                "search",
                "--project",
                PROJECT,
                "--",
                "write a rate limiter for uploads",
            ],
        )
        .stdout,
    )
    .unwrap();
    assert!(text.contains("standing rule"), "{text}");
}

/// Nine rules, seven shown for a task: the two left out are the furthest from it in meaning,
/// not the oldest. The rule the task needs ("fix the flaky login test": where tests go) was
/// said first, so a list newest first would leave it out.
#[test]
fn a_task_gets_the_rules_nearest_it_in_meaning_when_there_are_more_than_are_shown() {
    let env = Env::new();
    let rules = [
        "From now on, test files go under spec/, not tests/.",
        "Every schema change gets its own alembic migration.",
        "Make sure to run ruff before you say you're done.",
        "Prefix private helpers with an underscore from now on.",
        "Always log through structlog, never print().",
        "We use uv, not poetry, for dependencies.",
        "Never use floats for money, use Decimal everywhere.",
        "Always add type hints to public functions.",
        "Never commit directly to main.",
    ];
    for (n, rule) in rules.iter().enumerate() {
        say(&env, &format!("s{n}"), PROJECT, rule);
    }
    let out = run(
        &env,
        &[
            "search",
            "--json",
            "--project",
            PROJECT,
            "--",
            "fix the flaky login test",
        ],
    );
    let shown: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["standing"] == true)
        .map(|r| r["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown.len(), 7, "{shown:?}");
    assert!(shown.iter().any(|r| r.contains("spec/")), "{shown:?}");
    assert!(
        !shown
            .iter()
            .any(|r| r.contains("type hints") || r.contains("commit directly")),
        "{shown:?}"
    );
}
