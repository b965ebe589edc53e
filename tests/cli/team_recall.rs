//! Per-prompt recall of the team's notes (the files `share` writes into a project's
//! `.claude-mem/`) through the real binary: a teammate's prompt that asks what a note answers
//! is handed it, said to be the team's, ranked and barred as their own items are; a prompt
//! about something else gets nothing; a note the session-start context listed is not given
//! again; the user's own shared files are recalled once, as theirs, and never as the team's
//! after a `forget`; and a hostile or huge folder is read only as far as its bounds.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::memory::{self, compress, session, summary};
use crate::harness::*;

const QUESTION: &str = "Which port does gunicorn bind to in production?";
const UNRELATED: &str = "Add a dark mode toggle to the settings page";
const TITLE: &str = "Gunicorn binds to port 8000 in production";
const NARRATIVE: &str = "In production gunicorn binds 0.0.0.0:8000 behind nginx; the address \
                         is set in deploy/gunicorn.conf.py.";
/// What the hook says under its head when it lists a team's note.
const TEAM_SAID: &str = "\"(team)\": a note a teammate shared in this project's .claude-mem/";
/// Whoever shared the notes: not the database of the person asking.
const TEAMMATE: &str = "5d1e0c9b7a6f48e2b3c4d5e6f7a8b9c0";
const MONTH: &str = "2026-11";

/// A project folder under `env`'s root, with a `.claude-mem/` for the team's files.
fn project(env: &Env) -> PathBuf {
    let project = env.root.path().join("shop");
    std::fs::create_dir_all(project.join(".claude-mem").join(MONTH)).unwrap();
    project
}

/// The id of team note `n`: UUID v7 shaped, a later `n` a newer note, its short id (the start
/// of its last group) its own.
fn note_id(n: u32) -> String {
    format!("0195f3a2-7c4b-7d3e-8f12-{n:04}5e6f7a8b")
}

/// A memory's file as `share` writes it, by a teammate, in the month's folder.
fn share_note(project: &Path, n: u32, title: &str, body: &str) {
    let id = note_id(n);
    let text = format!(
        "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: {title}\n\
         when: {MONTH}-20T10:{:02}:00.000Z\nsession: 5f0e9d3c\nfiles: [\"deploy/gunicorn.conf.py\"]\n\
         origin: {TEAMMATE}\n---\n\n{body}\n\n## Facts\n\n- one fact\n",
        n % 60
    );
    let path = project
        .join(".claude-mem")
        .join(MONTH)
        .join(format!("memory-{id}.md"));
    std::fs::write(path, text).unwrap();
}

/// Two notes of other matters.
fn other_notes(project: &Path) {
    share_note(
        project,
        4,
        "Discounts rounded once per order",
        "Per-item rounding lost cents; rounding moved to the order total.",
    );
    share_note(
        project,
        5,
        "CSV export streams its rows",
        "The export of invoices streams rows instead of building the file in memory.",
    );
}

fn recalling() -> Env {
    Env::new().with("CLAUDE_MEM_RECALL", "1")
}

/// Submits `text` as a prompt of `session` in `project`: what the hook handed Claude with it,
/// or `None` when it answered the acknowledgement.
fn asked(env: &Env, session: &str, project: &Path, text: &str) -> Option<String> {
    let event = memory::event(
        "UserPromptSubmit",
        session,
        project.to_str().unwrap(),
        json!({"prompt_id": format!("p-{}", text.len()), "prompt": text}),
    );
    let out = env.hook("prompt", &event);
    assert_clean(&out);
    if out.stdout == ACK.as_bytes() {
        return None;
    }
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("additionalContext")
            .to_string(),
    )
}

/// The session-start context of a new session in `project`.
fn started(env: &Env, session: &str, project: &Path) -> String {
    let start = memory::event(
        "SessionStart",
        session,
        project.to_str().unwrap(),
        json!({"source": "startup"}),
    );
    let out = env.hook("context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Brings the search index up to date, as a search (or the maintenance process) does.
fn index(env: &Env, project: &Path) {
    let out = env
        .command()
        .args(["search", "--all", "index"])
        .current_dir(project)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
}

/// Starts a session in `project` as Claude Code does, which has the digest of the team's notes
/// made in the background, and waits for it: its context.
fn start(env: &Env, session: &str, project: &Path) -> String {
    let context = started(env, session, project);
    env.wait_for_maintenance();
    context
}

#[test]
fn a_teammates_note_is_handed_as_the_teams_with_the_question_it_answers() {
    let env = recalling();
    let shop = project(&env);
    // The answer is older than the eight notes a session start lists (this machine had it an
    // hour before them); the newest, which it lists, answers it too.
    share_note(&shop, 1, TITLE, NARRATIVE);
    came(&shop, 1, 3600);
    // Notes that came within one minute are listed in an order of this machine's, not the
    // newest first: these came half an hour before the newest.
    for n in 2..10 {
        share_note(
            &shop,
            n,
            &format!("Invoice template {n} tidied"),
            "Whitespace in the invoice template.",
        );
        came(&shop, n, 1800);
    }
    share_note(
        &shop,
        10,
        "Gunicorn workers in production",
        "Four gunicorn workers per core in production; the port is in deploy/.",
    );
    // The teammate's own history, indexed: the notes are weighed among their items.
    for own in [
        "How do we run the database migrations on staging?",
        "Rename the invoice PDF files by customer",
    ] {
        assert_eq!(asked(&env, "bob-0", &shop, own), None);
    }
    index(&env, &shop);
    // The digest the prompts asked for orders the list: a session start before it is made
    // falls back to the files' names.
    env.wait_for_maintenance();

    let listed = start(&env, "bob-1", &shop);
    assert!(
        listed.contains("From the team") && listed.contains("Gunicorn workers"),
        "{listed}"
    );
    assert!(!listed.contains(TITLE), "{listed}");
    let context = asked(&env, "bob-1", &shop, QUESTION).expect("the note is handed");
    let short = &note_id(1)[24..32];
    assert!(
        context.contains(&format!(
            "- memory (team) {short}, {MONTH}-20 10:01 UTC: \"{TITLE}\"\n"
        )),
        "{context}"
    );
    assert!(context.contains(TEAM_SAID), "{context}");
    assert!(context.starts_with(&format!("<claude-mem-context>\n{FRAME}\n")));
    // What the session start listed is not handed again; the rest does not match.
    assert!(!context.contains(&note_id(10)[24..32]), "{context}");
    assert!(!context.contains("Invoice"), "{context}");
    // Nothing of the notes is kept in the teammate's files.
    assert_eq!(files_holding(&env.data_dir, "nginx"), Vec::<PathBuf>::new());

    // A prompt about something else: nothing.
    assert_eq!(asked(&env, "bob-1", &shop, UNRELATED), None);
}

#[test]
fn a_teammate_without_history_of_their_own_is_handed_the_note() {
    let env = recalling();
    let shop = project(&env);
    share_note(&shop, 1, TITLE, NARRATIVE);
    other_notes(&shop);
    // Their first session, in a clone: no database until it starts, and no digest of the
    // notes to list them in, so the start lists none; the prompt is handed the note.
    let first = start(&env, "bob-1", &shop);
    assert!(!first.contains("From the team"), "{first}");
    let context = asked(&env, "bob-1", &shop, QUESTION).expect("the note is handed");
    assert!(context.contains(&format!("(team) {}", &note_id(1)[24..32])));
    assert_eq!(asked(&env, "bob-1", &shop, UNRELATED), None);
    // Listed at the start of the next, the note is not handed again in that session.
    let listed = start(&env, "bob-2", &shop);
    assert!(listed.contains(&note_id(1)[24..32]), "{listed}");
    assert_eq!(asked(&env, "bob-2", &shop, QUESTION), None);
}

/// A memory of `env`'s own about gunicorn's port in `shop`, compressed from a recorded session,
/// shared by `share`; its id.
fn own_shared_memory(env: &Env, shop: &Path) -> String {
    session(env, "s-alpha", shop.to_str().unwrap(), &["alpha"]);
    let memory = json!({"type": "decision", "title": TITLE, "narrative": NARRATIVE,
                        "facts": ["the bind address is in deploy/gunicorn.conf.py"],
                        "concepts": ["how-it-works"], "files_read": [], "files_modified": [],
                        "sources": [1]});
    compress(env, "s-alpha", &[memory], summary("alpha"));
    let out = env
        .command()
        .arg("share")
        .current_dir(shop)
        .output()
        .unwrap();
    memory::ok(&out);
    env.db()
        .query_row("SELECT id FROM memories", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn the_users_own_shared_notes_are_theirs_once_and_not_the_teams_after_forget() {
    let env = recalling();
    let shop = project(&env);
    let id = own_shared_memory(&env, &shop);
    let file = shop
        .join(".claude-mem")
        .join(format!("{}/memory-{id}.md", &id_month(&env)));
    assert!(file.exists(), "share wrote {}", file.display());
    index(&env, &shop);

    let context = asked(&env, "alice-2", &shop, QUESTION).expect("her memory is recalled");
    let short = &id[24..32];
    assert_eq!(context.matches(short).count(), 1, "{context}");
    assert!(
        context.contains(&format!("- memory {short}, ")) && !context.contains("(team)"),
        "{context}"
    );

    // Forgotten: forget takes its file out of the folder, and a teammate's branch brings it
    // back (it is still in the digest that prompt had made): never the team's.
    env.wait_for_maintenance();
    let shared = std::fs::read(&file).unwrap();
    let out = env
        .command()
        .args(["forget", &id, "--yes"])
        .current_dir(&shop)
        .output()
        .unwrap();
    memory::ok(&out);
    assert!(!file.exists(), "forget removes the file it shared");
    std::fs::write(&file, shared).unwrap();
    for caught_up in [false, true] {
        if caught_up {
            index(&env, &shop);
        }
        let context = asked(&env, &format!("alice-3-{caught_up}"), &shop, QUESTION);
        assert!(
            context.as_deref().is_none_or(|c| !c.contains(TITLE)),
            "{context:?}"
        );
    }
}

/// The month folder `share` wrote the memory of `env` into.
fn id_month(env: &Env) -> String {
    env.db()
        .query_row("SELECT substr(created_at, 1, 7) FROM memories", [], |r| {
            r.get(0)
        })
        .unwrap()
}

#[test]
fn a_hostile_folder_is_skipped_and_a_huge_one_read_only_as_far_as_its_newest_files() {
    let env = recalling();
    let shop = project(&env);
    let month = shop.join(".claude-mem").join(MONTH);
    // The answer, the oldest of 520 notes: past the 500 newest the digest holds.
    share_note(&shop, 1, TITLE, NARRATIVE);
    for n in 2..=520 {
        share_note(
            &shop,
            n,
            &format!("Invoice template {n} tidied"),
            "Whitespace in the invoice template.",
        );
    }
    // Hostile files among the newest: a link out, a FIFO, a binary and a huge file.
    let outside = env.root.path().join("outside.md");
    std::fs::write(&outside, format!("gunicorn production port {NARRATIVE}")).unwrap();
    std::os::unix::fs::symlink(&outside, month.join(format!("memory-{}.md", note_id(901))))
        .unwrap();
    mkfifo(&month.join(format!("memory-{}.md", note_id(902))), 0o644);
    std::fs::write(
        month.join(format!("memory-{}.md", note_id(903))),
        "---\nclaude-mem: memory\n\0gunicorn production port",
    )
    .unwrap();
    std::fs::write(
        month.join(format!("memory-{}.md", note_id(904))),
        format!(
            "---\nclaude-mem: memory\nid: {}\n---\n{}",
            note_id(904),
            "gunicorn production port ".repeat(5_000)
        ),
    )
    .unwrap();
    start(&env, "bob-0", &shop);
    assert_eq!(asked(&env, "bob-1", &shop, QUESTION), None);

    // Newer, it is handed once its digest is made again (this prompt finds it stale and has
    // it made); none of the hostile files is.
    env.wait_for_maintenance();
    share_note(&shop, 800, TITLE, NARRATIVE);
    asked(&env, "bob-2", &shop, QUESTION);
    env.wait_for_maintenance();
    let context = asked(&env, "bob-3", &shop, QUESTION).expect("the newest note is handed");
    assert!(context.contains(&format!("(team) {}", &note_id(800)[24..32])));
    for hostile in [901, 902, 903, 904] {
        assert!(
            !context.contains(&note_id(hostile)[24..32]),
            "{hostile}: {context}"
        );
    }
}

#[test]
fn a_teammates_note_naming_the_users_origin_is_still_handed_as_the_teams() {
    let env = recalling();
    let shop = project(&env);
    own_shared_memory(&env, &shop);
    let origin: String = env
        .db()
        .query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
            r.get(0)
        })
        .unwrap();
    // A teammate's note whose `origin:` line names the user's database.
    let id = note_id(7);
    let text = format!(
        "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: Redis evicts with allkeys-lru\n\
         when: {MONTH}-20T10:07:00.000Z\nsession: 5f0e9d3c\nfiles: []\norigin: {origin}\n---\n\n\
         The redis cache evicts with the allkeys-lru policy, set in deploy/redis.conf.\n"
    );
    let month = shop.join(".claude-mem").join(MONTH);
    std::fs::create_dir_all(&month).unwrap();
    std::fs::write(month.join(format!("memory-{id}.md")), text).unwrap();
    index(&env, &shop);
    start(&env, "alice-2", &shop);
    let context = asked(
        &env,
        "alice-3",
        &shop,
        "Which eviction policy does the redis cache use?",
    )
    .expect("the teammate's note is handed");
    assert!(
        context.contains(&format!("memory (team) {}", &id[24..32])),
        "{context}"
    );
}

/// Writes a note into `project`'s month folder with a name that sorts first (a UUID v7 of now)
/// and sets its file's time to `ago` before now: it came with the clone.
fn named_first(project: &Path, n: u32, ago: std::time::Duration) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let ms = now.as_millis() as u64 - 1000 - u64::from(n);
    let id = format!(
        "{:08x}-{:04x}-7d3e-8f12-{n:04}5e6f7a8b",
        ms >> 16,
        ms & 0xffff
    );
    let month = chrono_month();
    let dir = project.join(".claude-mem").join(&month);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("memory-{id}.md"));
    std::fs::write(
        &path,
        format!(
            "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: Named to be first {n}\n\
             when: {month}-01T00:00:00.000Z\nsession: 5f0e9d3c\nfiles: []\norigin: {TEAMMATE}\n\
             ---\n\nA note named to sort first.\n"
        ),
    )
    .unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(std::time::SystemTime::now() - ago)
        .unwrap();
}

/// Dates note `n`'s file in `shop` `ago_secs` back, as when this machine got it then.
fn came(shop: &Path, n: u32, ago_secs: u64) {
    let file = shop
        .join(".claude-mem")
        .join(MONTH)
        .join(format!("memory-{}.md", note_id(n)));
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(ago_secs))
        .unwrap();
}

/// This month, as the month folders are named (UTC).
fn chrono_month() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_note_this_machine_saw_last_is_listed_first_whatever_the_names_say() {
    let env = recalling();
    let shop = project(&env);
    // Ten notes of a clone, named as the newest there can be (a time of now).
    for n in 0..10 {
        named_first(&shop, n, std::time::Duration::from_secs(3600));
    }
    start(&env, "bob-1", &shop);
    // A teammate's note pulled since: its name says an older time, its file is new here.
    let month = chrono_month();
    let id = "0195f3a2-7c4b-7d3e-8f12-00995e6f7a8b";
    let dir = shop.join(".claude-mem").join(&month);
    std::fs::write(
        dir.join(format!("memory-{id}.md")),
        format!(
            "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: Pulled since\n\
             when: {month}-01T00:00:00.000Z\nsession: 5f0e9d3c\nfiles: []\norigin: {TEAMMATE}\n\
             ---\n\nA teammate's note pulled since.\n"
        ),
    )
    .unwrap();
    start(&env, "bob-2", &shop);
    let listed = start(&env, "bob-3", &shop);
    let pulled = listed.find("Pulled since").expect(&listed);
    let named = listed.find("Named to be first").expect(&listed);
    assert!(pulled < named, "{listed}");
}
