//! What the remote holds: ciphertext only, object by object (no word, path or id of ours in a
//! blob, tree or commit); secrets redacted by today's rules on the way out; and after a forget,
//! no chunk the branch reaches holds it, and no data dir keeps an older one.

use serde_json::json;

use super::*;

/// A machine with two sessions (`id` compressed) and a file of the user's, named in a read
/// and an edit of `id`.
fn a_machine_with_a_file_of_the_users(id: &str) -> Env {
    let a = machine();
    session(&a, id, PROJECT, &["zanzibar"]);
    compress(&a, id, &[memory("zanzibar", &[1])], summary("zanzibar"));
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000c2",
        PROJECT,
        &["zanzibar2"],
    );
    // A file of the user's, named in a read and an edit.
    let file = format!("{PROJECT}/src/quetzal_ledger.rs");
    for (tool, input) in [
        ("Read", json!({"file_path": file})),
        (
            "Edit",
            json!({"file_path": file, "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let mut capture: serde_json::Value =
            serde_json::from_slice(&post_tool_use(id, tool, &format!("toolu_{tool}"), input))
                .unwrap();
        capture["cwd"] = json!(PROJECT);
        assert_ack(&a.hook("capture", capture.to_string().as_bytes()));
    }
    a
}

/// No object of the remote, blob, tree or commit, holds any of `needles`; every commit is
/// claude-mem's own, unsigned, on its one branch.
fn assert_no_object_holds(remote: &Remote, needles: &[&str]) {
    let listing = remote.git(&[
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname) %(objecttype)",
    ]);
    let mut kinds = BTreeSet::new();
    for line in listing.lines() {
        let (object, kind) = line.split_once(' ').unwrap();
        kinds.insert(kind.to_string());
        let bytes = Command::new("git")
            .arg("--git-dir")
            .arg(remote.path())
            .args(["cat-file", kind, object])
            .output()
            .unwrap()
            .stdout;
        for needle in needles {
            assert!(!contains(&bytes, needle), "{needle} in {kind} {object}");
        }
        if kind == "commit" {
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                text.contains("author claude-mem <claude-mem@localhost>")
                    && text.contains("committer claude-mem <claude-mem@localhost>")
                    && text.ends_with("\n\nclaude-mem sync\n")
                    && !text.contains("gpgsig"),
                "{text}"
            );
        }
    }
    assert_eq!(
        kinds,
        ["blob", "commit", "tree"].map(String::from).into(),
        "{listing}"
    );
    assert_eq!(
        remote.git(&["for-each-ref", "--format=%(refname)"]).trim(),
        "refs/heads/claude-mem"
    );
}

#[test]
fn the_remote_holds_no_plaintext_object_by_object() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let id = "aaaaaaaa-0000-4000-8000-0000000000cc";
    let a = a_machine_with_a_file_of_the_users(id);
    let token = start(&a, &remote);
    sync(&a);
    let b = machine();
    join(&b, &remote, &token);
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-0000000000cc",
        "/home/dev/yucatan",
        &["okapi"],
    );
    sync(&b);
    // A forget: a compaction's commit too.
    let prompt = ids(
        &a,
        "SELECT id FROM user_prompts WHERE prompt_text LIKE '%zanzibar2%'",
    );
    ok(&run(&a, &["forget", &prompt[0], "--yes"]));
    sync(&a);
    sync(&b);
    assert_eq!(
        records(&b)["user_prompts"].len(),
        2,
        "the records went through"
    );
    let needles = [
        "zanzibar",
        "okapi",
        "quetzal",
        "ledger",
        "yucatan",
        "/home/dev",
        "shop",
        id,
        "bbbbbbbb-0000",
        "grep -r",
        "Bash",
        "prompt_text",
    ];
    assert_no_object_holds(&remote, &needles);
    // What was read is what is there: the key opens it.
    let text = remote.tip_text(&token);
    assert!(text.contains("zanzibarprompt") && text.contains("quetzal_ledger"));
}

#[test]
fn a_secret_stored_under_older_rules_is_redacted_on_the_way_out() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let id = "aaaaaaaa-0000-4000-8000-0000000000dd";
    session(&a, id, PROJECT, &["acme_8f3kd93hd"]);
    compress(
        &a,
        id,
        &[memory("acme_8f3kd93hd", &[1])],
        summary("acme_8f3kd93hd"),
    );
    let token = start(&a, &remote);
    // A rule added since it was stored: what leaves follows it, what is kept here is as it was.
    let out = a
        .command()
        .env("CLAUDE_MEM_REDACT_EXTRA", "acme_*")
        .arg("sync")
        .output()
        .unwrap();
    ok(&out);
    assert!(
        a.count("SELECT count(*) FROM user_prompts WHERE prompt_text LIKE '%acme_8f3kd93hd%'") == 1
    );
    let text = remote.tip_text(&token);
    assert!(!text.contains("acme_8f3kd93hd"), "{text}");
    assert!(
        text.matches("[REDACTED:custom]").count() >= 6,
        "prompt, command, output, message, memory and summary: {text}"
    );
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(records(&b)["memories"].len(), 1);
    assert!(!contains(&everything_on_disk(&b), "acme_8f3kd93hd"));
}

#[test]
fn after_a_forget_no_reachable_chunk_holds_it_and_no_data_dir_keeps_an_older_chunk() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let dropped = "aaaaaaaa-0000-4000-8000-0000000000e1";
    session(&a, dropped, PROJECT, &["dropme"]);
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000e2",
        PROJECT,
        &["keepme"],
    );
    let token = start(&a, &remote);
    sync(&a);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert!(remote.reachable_text(&token).contains("dropmeprompt"));
    ok(&run(&a, &["forget", dropped, "--yes"]));
    let said = sync(&a);
    assert!(said.starts_with("Sent 6 deletions;"), "{said}");
    let said = sync(&b);
    assert!(said.contains("received 6 deletions"), "{said}");
    assert!(records(&b)["sessions"].len() == 1);
    let reachable = remote.reachable_text(&token);
    assert!(!reachable.contains("dropme"), "{reachable}");
    assert!(reachable.contains("keepmeprompt"));
    // Neither data dir keeps an older chunk, sealed or not.
    for env in [&a, &b] {
        assert!(keeps_only_reachable(&env.data_dir.join("sync/repo.git")));
    }
    // The remote keeps the older chunks, unreachable, until it collects them: what
    // docs/sync.md tells the owner of a server to run.
    assert!(!keeps_only_reachable(&remote.path()));
    remote.git(&["reflog", "expire", "--expire=now", "--all"]);
    remote.git(&["gc", "--quiet", "--prune=now"]);
    assert!(keeps_only_reachable(&remote.path()));
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), records(&a));
}
