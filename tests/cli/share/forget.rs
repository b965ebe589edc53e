//! `forget` of what this machine shared: the file `share` wrote of it leaves the project's
//! `.claude-mem/` folder with it (the user commits the deletion), or, when that is not safe,
//! stays with one line that says how to remove it; and, whatever the folder holds later (a
//! teammate's branch merged, an `origin:` edited), the user's own search, show, sessions,
//! session-start context and MCP tools never show it again as the team's.

use std::path::PathBuf;

use serde_json::json;

use super::{Person, git, have_git, ids};
use crate::harness::memory;

/// Where `person`'s file of item `id` (`memory` or `summary`, still in the database) is,
/// whether or not it is there.
fn file_of(person: &Person, kind: &str, id: &str) -> PathBuf {
    let table = if kind == "memory" {
        "memories"
    } else {
        "summaries"
    };
    let month: String = person
        .env
        .db()
        .query_row(
            &format!("SELECT substr(created_at, 1, 7) FROM {table} WHERE id = ?1"),
            [id],
            |r| r.get(0),
        )
        .unwrap();
    person.folder().join(month).join(format!("{kind}-{id}.md"))
}

/// Every view of the user's own that could show the memory `id`, whose texts carry `word`:
/// none does, as the team's or at all.
fn assert_shown_nowhere(person: &Person, id: &str, word: &str) {
    let short = &id[24..32];
    for query in [format!("{word}narrative"), format!("{word}title")] {
        let out = person.run(&["search", "--json", &query]);
        assert_eq!(out.status.code(), Some(1), "{query}: {out:?}");
    }
    let shown = person.run(&["show", short]);
    assert_ne!(shown.status.code(), Some(0), "{shown:?}");
    assert!(
        !String::from_utf8_lossy(&shown.stdout).contains(&format!("{word}narrative")),
        "{shown:?}"
    );
    let sessions = memory::ok(&person.run(&["sessions"]));
    assert!(!sessions.contains(&format!("{word}title")), "{sessions}");
    let context = person.context("later-1");
    assert!(!context.contains(&format!("{word}title")), "{context}");
    assert!(!context.contains(short), "{context}");
    let answers = person.mcp(&[
        ("search", json!({"query": format!("{word}narrative")})),
        ("get", json!({"ids": [short]})),
    ]);
    let (search, _) = &answers[0];
    assert!(search.starts_with("No results"), "{search}");
    let (get, _) = &answers[1];
    assert!(
        !get.contains(&format!("{word}fact")) && !get.contains("the team's"),
        "{get}"
    );
}

#[test]
fn forgetting_a_shared_memory_takes_its_file_back_and_it_never_returns_as_the_teams() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.share();
    alice.commit("alice shares");
    let (memory_id, summary_id) = ids(&alice);
    let file = file_of(&alice, "memory", &memory_id);
    let kept = std::fs::read_to_string(&file).unwrap();

    // Dry, it says the file goes with it, and nothing goes.
    let dry = memory::ok(&alice.run(&["forget", &memory_id, "--dry-run"]));
    assert!(
        dry.contains("shared file") && dry.contains("removed with it"),
        "{dry}"
    );
    assert!(file.exists());

    let said = memory::ok(&alice.run(&["forget", &memory_id, "--yes"]));
    assert!(
        said.contains(&format!(
            "Removed 1 shared file from {}: commit the deletion",
            alice.folder().display()
        )),
        "{said}"
    );
    assert!(!file.exists());
    // Only that file: the summary stays shared.
    assert!(file_of(&alice, "summary", &summary_id).exists());
    assert_shown_nowhere(&alice, &memory_id, "alpha");

    // A teammate's branch that still held it brings it back, its origin edited: still never
    // shown to Alice as the team's (the check is on the id, and no text of it was kept).
    std::fs::write(&file, kept.replace("origin: ", "origin: teammate-")).unwrap();
    assert_shown_nowhere(&alice, &memory_id, "alpha");
    assert!(alice.stored("alphanarrative").is_empty());
    // The summary, still hers, is found as her own.
    let own = memory::ok(&alice.run(&["search", "--json", "alpharequest"]));
    assert!(own.contains("\"source\":\"own\""), "{own}");
}

#[test]
fn forgetting_a_shared_session_takes_back_its_memory_and_summary() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.record("s-beta", "beta");
    alice.share();
    alice.commit("alice shares");
    let said = memory::ok(&alice.run(&["forget", "--session", "s-alpha", "--yes"]));
    assert!(said.contains("Removed 2 shared files from"), "{said}");
    let left: Vec<String> = alice.files().into_iter().map(|(path, _)| path).collect();
    assert_eq!(
        left.len(),
        3,
        "beta's memory, summary and the README: {left:?}"
    );
    assert!(left.iter().all(|p| p.ends_with("README.md") || {
        let text = std::fs::read_to_string(alice.folder().join(p)).unwrap();
        text.contains("beta")
    }));
    // git sees the deletions, for the user to commit.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&alice.project)
        .output()
        .unwrap();
    let status = String::from_utf8(status.stdout).unwrap();
    assert_eq!(
        status.lines().filter(|l| l.starts_with(" D")).count(),
        2,
        "{status}"
    );
    git(&alice.project, &["commit", "-qam", "forget alpha"]);
}

#[test]
fn a_file_that_is_not_safe_to_remove_stays_with_a_line_that_says_how() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.record("s-beta", "beta");
    alice.record("s-gamma", "gamma");
    alice.share();
    let db = alice.env.db();
    let memory_of = |session: &str| -> String {
        db.query_row(
            "SELECT id FROM memories WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap()
    };
    let (alpha, beta, gamma) = (
        memory_of("s-alpha"),
        memory_of("s-beta"),
        memory_of("s-gamma"),
    );
    drop(db);

    // Edited by a teammate since it was shared.
    let edited = file_of(&alice, "memory", &alpha);
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, format!("{text}\nA teammate's note on it.\n")).unwrap();
    let said = memory::ok(&alice.run(&["forget", &alpha, "--yes"]));
    assert!(
        said.contains(&format!(
            "Left {}: it is not what share wrote of it (edited since it was shared?); delete \
             it yourself and commit the deletion.",
            edited.display()
        )),
        "{said}"
    );
    assert!(said.starts_with("Forgot 1 memory."), "{said}");
    assert!(edited.exists());
    assert_shown_nowhere(&alice, &alpha, "alpha");

    // Naming another database as its origin (another machine of hers, or a teammate's
    // edit), but otherwise as share wrote it: the item is hers by its id, and the file goes.
    let theirs = file_of(&alice, "memory", &beta);
    let text = std::fs::read_to_string(&theirs).unwrap();
    let origin = text
        .lines()
        .find(|l| l.starts_with("origin: "))
        .unwrap()
        .to_string();
    std::fs::write(&theirs, text.replace(&origin, "origin: desktop-db")).unwrap();
    let said = memory::ok(&alice.run(&["forget", &beta, "--yes"]));
    assert!(said.contains("Removed 1 shared file"), "{said}");
    assert!(!theirs.exists());
    assert_shown_nowhere(&alice, &beta, "beta");

    // A month's folder that is a link: nothing is removed through it.
    let gamma_file = file_of(&alice, "memory", &gamma);
    let month = gamma_file.parent().unwrap().to_path_buf();
    let away = alice.env.root.path().join("away");
    std::fs::rename(&month, &away).unwrap();
    std::os::unix::fs::symlink(&away, &month).unwrap();
    let said = memory::ok(&alice.run(&["forget", &gamma, "--yes"]));
    assert!(
        said.contains("is not a folder (a link or a file); delete it yourself"),
        "{said}"
    );
    assert!(away.join(gamma_file.file_name().unwrap()).exists());
}
