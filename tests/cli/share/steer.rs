//! A clone's `.claude-mem/` is someone else's writing: what its files are named, the ids and
//! times they claim, how many of them fail to read and whose item they say they are must not
//! steer what the user is shown. And what `share` writes tells nothing of the user's machine.

use serde_json::{Value, json};

use super::{Person, have_git, ids};
use crate::harness::memory;

/// Writes a note's file into `person`'s folder, `month/kind-id.md`, as a hand would.
fn plant(person: &Person, month: &str, id: &str, title: &str, when: &str, body: &str) {
    let folder = person.folder().join(month);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join(format!("memory-{id}.md")),
        format!(
            "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: {title}\nwhen: {when}\n\
             session: 5f0e9d3c\nfiles: []\norigin: mallory\n---\n\n{body}\n"
        ),
    )
    .unwrap();
}

/// The month `person`'s one memory was made in, as its folder is named.
fn month_of(person: &Person) -> String {
    person
        .env
        .db()
        .query_row("SELECT substr(created_at, 1, 7) FROM memories", [], |r| {
            r.get(0)
        })
        .unwrap()
}

/// The results of `search --json` for `query`, in order.
fn search(person: &Person, query: &str) -> Vec<Value> {
    memory::ok(&person.run(&["search", "--json", query]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn shared_texts_name_no_path_outside_the_project() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    let project = alice.dir().to_string();
    alice
        .env
        .db()
        .execute(
            "UPDATE memories SET title = ?1, narrative = ?2, facts = ?3",
            [
                format!("Fixed {project}/src/a.rs"),
                format!("Copied from /home/alice/secret-client/x.rs into {project}/src/b.rs."),
                json!(["read ~/clients/secret-client/notes.md"]).to_string(),
            ],
        )
        .unwrap();
    alice
        .env
        .db()
        .execute(
            "UPDATE summaries SET learned = 'compared with /home/alice/secret-client/y.rs'",
            [],
        )
        .unwrap();
    alice.share();
    let all: String = alice.files().into_iter().map(|(_, text)| text).collect();
    for leak in ["secret-client", "/home/alice", &project] {
        assert!(!all.contains(leak), "{leak} was shared: {all}");
    }
    assert!(all.contains("title: Fixed src/a.rs"), "{all}");
    assert!(all.contains("into src/b.rs."), "{all}");
}

/// Plants, in `person`'s folder, 30 notes named as honest ones are (UUID v7 of times past, in
/// `month`, this month) and 12 named to sort before every honest name: `undated`, a month to
/// come, ids of `z`s and a UUID v7 of a time to come; all written within moments, as a clone
/// writes them.
fn plant_honest_and_hostile(person: &Person, month: &str) {
    for n in 0..30 {
        let id = format!("01900000-0000-7000-8000-0000000000{n:02}");
        let body = format!("Honest note {n}.");
        plant(
            person,
            month,
            &id,
            &format!("honest {n}"),
            &format!("{month}-01T00:00:00.000Z"),
            &body,
        );
    }
    let body = "Hostile note, here to be read first.";
    for n in 0..4 {
        plant(
            person,
            "undated",
            &format!("zzzz{n}"),
            &format!("hostile undated {n}"),
            "",
            body,
        );
        let future = format!("ffffffff-ffff-7fff-bfff-fffffffffff{n}");
        plant(
            person,
            "2999-01",
            &future,
            &format!("hostile future {n}"),
            "2999-01-01T00:00:00.000Z",
            body,
        );
        plant(
            person,
            month,
            &format!("zzzz-now-{n}"),
            &format!("hostile now {n}"),
            "",
            body,
        );
    }
}

#[test]
fn names_and_ids_of_the_files_own_choosing_do_not_put_them_first_at_session_start() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    alice.commit("alice shares");
    let bob = super::Person::clone_of(&alice);
    plant_honest_and_hostile(&bob, &month_of(&alice));
    // Per-prompt recall is off (the harness's default): the session start asks for the
    // notes' digest all the same, and lists none until it is made, in no order of the names.
    let first = bob.started("bob-1");
    assert!(!first.contains("From the team"), "{first}");
    bob.env.wait_for_maintenance();
    let context = bob.started("bob-2");
    let team = &context[context.find("From the team").expect(&context)..];
    // Eight of 44 notes listed, in an order the names do not choose: the chance that all
    // eight are of the 12 hostile ones is 3 in a million.
    assert_eq!(team.matches("\n- ").count(), 8, "{team}");
    assert!(
        team.contains("honest") || team.contains("alphatitle"),
        "{team}"
    );
}

#[test]
fn a_note_claiming_a_time_just_past_is_not_ranked_before_its_equals() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    alice.commit("alice shares");
    let bob = super::Person::clone_of(&alice);
    let month = month_of(&alice);
    // Twenty notes alike but for their time: ten claim a minute ago, ten the first of the month.
    let text = "Gammaword rounding moved to the order total.";
    let just_past = chrono_minute_ago();
    for n in 0..10 {
        let late = format!("01900000-0000-7000-8000-0000000001{n:02}");
        plant(
            &bob,
            &month,
            &late,
            "gammaword rounding late",
            &just_past,
            text,
        );
        let early = format!("01900000-0000-7000-8000-0000000002{n:02}");
        let first = format!("{month}-01T00:00:00.000Z");
        plant(
            &bob,
            &month,
            &early,
            "gammaword rounding early",
            &first,
            text,
        );
    }
    let found = search(&bob, "gammaword");
    assert_eq!(found.len(), 20, "{found:?}");
    // Ranked by their text alone: the chance that the ten claiming a time just past come
    // first is 5 in a million.
    let first_ten: Vec<&str> = found[..10]
        .iter()
        .map(|f| f["title"].as_str().unwrap())
        .collect();
    assert!(
        first_ten.iter().any(|t| t.ends_with("early")),
        "{first_ten:?}"
    );
}

/// A minute before now, as a note's `when` says a time.
fn chrono_minute_ago() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let out = std::process::Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("@{}", now - 60),
            "+%Y-%m-%dT%H:%M:%S.000Z",
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_team_file_named_for_the_users_own_prompt_does_not_make_it_the_teams() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    let prompt = memory::ids(&alice.env, "SELECT id FROM user_prompts")
        .pop()
        .unwrap();
    let month = month_of(&alice);
    plant(
        &alice,
        &month,
        &prompt,
        "alphaprompt",
        "",
        "please look at alphaprompt",
    );
    let found = search(&alice, "alphaprompt");
    assert!(!found.is_empty());
    for hit in &found {
        assert_eq!(hit["source"], "own", "{found:?}");
    }
    let short = &prompt[24..32];
    let shown = memory::ok(&alice.run(&["show", short]));
    assert!(!shown.contains("the team's"), "{shown}");
}

#[test]
fn a_hostile_folder_is_read_once_a_process_and_said_in_one_line_of_the_log() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    let folder = alice.folder();
    // 1,200 month folders, each with a file named as a note that is none.
    for m in 0..1_200 {
        let month = folder.join(format!("{}-{:02}", 1900 + m / 12, 1 + m % 12));
        std::fs::create_dir(&month).unwrap();
        let id = format!("0190{m:04}-0000-7000-8000-000000000000");
        std::fs::write(month.join(format!("memory-{id}.md")), "not a note").unwrap();
    }
    let said = |log: &str| log.lines().filter(|l| l.contains("team's file")).count();
    memory::ok(&alice.run(&["search", "alphanarrative"]));
    let log = alice.env.log();
    assert_eq!(said(&log), 1, "{log}");
    // All but the oldest: the month of Alice's own files is among the 1,200 months listed.
    assert!(log.contains("skipped 1199 of the team's files"), "{log}");

    // An MCP server's many searches and gets read the folder once.
    let calls: Vec<(&str, Value)> = (0..5)
        .flat_map(|n| {
            [
                ("search", json!({"query": format!("alphanarrative {n}")})),
                ("get", json!({"ids": ["01900001", "01900002"]})),
            ]
        })
        .collect();
    alice.mcp(&calls);
    assert_eq!(said(&alice.env.log()), 2, "{}", alice.env.log());

    // The digest's maker and a session start say it in one line each too, and the session
    // start lists the user's own (not the team's).
    let context = alice.context("alice-2");
    alice.env.wait_for_maintenance();
    assert!(!context.contains("From the team"), "{context}");
    let log = alice.env.log();
    let mut by_process = std::collections::HashMap::new();
    for line in log.lines().filter(|l| l.contains("team's file")) {
        let pid = line.split_whitespace().find(|w| w.starts_with("pid="));
        *by_process.entry(pid).or_insert(0) += 1;
    }
    assert!(by_process.len() >= 3, "{log}");
    assert!(by_process.values().all(|&n| n == 1), "{log}");
    let (memory_id, _) = ids(&alice);
    assert!(!context.contains("not a note"), "{memory_id}: {context}");
}

#[test]
fn a_forgotten_memory_is_taken_back_whatever_origin_its_file_names() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    let (memory_id, _) = ids(&alice);
    let month = month_of(&alice);
    let file = alice
        .folder()
        .join(&month)
        .join(format!("memory-{memory_id}.md"));
    let shared = std::fs::read_to_string(&file).unwrap();
    let edited = |text: &str| {
        let origin = text.lines().find(|l| l.starts_with("origin: ")).unwrap();
        text.replace(origin, "origin: a-teammate")
    };
    // A teammate claims it: `forget` takes it back all the same.
    std::fs::write(&file, edited(&shared)).unwrap();
    let said = memory::ok(&alice.run(&["forget", &memory_id, "--yes"]));
    assert!(said.contains("Removed 1 shared file"), "{said}");
    assert!(!file.exists());
    // A branch merged later brings it back, claimed: her next `share` takes it back too.
    std::fs::write(&file, edited(&shared)).unwrap();
    let said = alice.share();
    assert!(said.contains("1 removed"), "{said}");
    assert!(!file.exists());
}

/// Writes a teammate's memory file naming `origin` into `person`'s folder: its id.
fn forged(person: &Person, origin: &str) -> String {
    let id = "0195f3a2-7c4b-7d3e-8f12-00015e6f7a8b";
    let month = month_of(person);
    std::fs::write(
        person.folder().join(&month).join(format!("memory-{id}.md")),
        format!(
            "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: A teammate's decision\n\
             when: {month}-02T10:00:00.000Z\nsession: 5f0e9d3c\nfiles: []\norigin: {origin}\n\
             ---\n\nThe teammate's own words.\n"
        ),
    )
    .unwrap();
    id.to_string()
}

#[test]
fn a_teammates_file_naming_the_users_origin_is_not_taken_by_share() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    let origin: String = alice
        .env
        .db()
        .query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
            r.get(0)
        })
        .unwrap();
    // A teammate's file (merged from their branch) whose `origin:` line names Alice's
    // database: not hers, whatever the line says.
    let theirs = forged(&alice, &origin);
    let said = alice.share();
    assert!(
        alice.holds(&theirs),
        "share removed a teammate's file: {said}"
    );
    assert!(said.contains("0 removed"), "{said}");
    // What Alice's share wrote is still hers: gone from her database, its file goes.
    let (mine, _) = ids(&alice);
    alice.env.db().execute("DELETE FROM memories", []).unwrap();
    let said = alice.share();
    assert!(!alice.holds(&mine), "{said}");
    assert!(alice.holds(&theirs), "{said}");
}
