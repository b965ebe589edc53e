//! A remote not as the machines left it: a chunk changed or cut, files of someone else's on the
//! branch, a branch of the same name that is not ours, the repository made again empty, or
//! the remote out of reach. Each is one clear line; what can be taken in is.

use super::*;

#[test]
fn a_changed_or_cut_chunk_is_set_aside_whole_and_the_rest_is_taken_in() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    // A third machine's records come through whatever happens to the first's.
    let c = machine();
    join(&c, &remote, &token);
    session(
        &c,
        "cccccccc-0000-4000-8000-000000000001",
        PROJECT,
        &["charlie"],
    );
    sync(&c);
    let path = format!("{}/00000001.cmc", a_machine(&remote, &c));
    let original = blob(&remote.path(), &format!("refs/heads/claude-mem:{path}"));
    let mut changed = original.clone();
    let middle = changed.len() / 2;
    changed[middle] ^= 0x01;
    let b = machine();
    join(&b, &remote, &token);
    for (bytes, what) in [
        (changed, "a changed byte"),
        (
            original[..original.len() / 2].to_vec(),
            "a chunk cut in half",
        ),
    ] {
        remote.change(&path, Some(&bytes));
        let said = sync(&b);
        assert!(
            said.contains("Set aside 1 chunk") && said.contains("does not authenticate"),
            "{what}: {said}"
        );
        let got = records(&b);
        assert!(
            got["sessions"].len() == 1
                && got["sessions"].contains("cccccccc-0000-4000-8000-000000000001"),
            "{what}: only the third machine's records: {got:?}"
        );
        let status = ok(&run(&b, &["sync", "status"]));
        assert!(status.contains("set aside"), "{status}");
    }
    // The first machine puts its own chunk back as it made it; then everything comes.
    sync(&a);
    assert_eq!(
        blob(&remote.path(), &format!("refs/heads/claude-mem:{path}")),
        original
    );
    let said = sync(&b);
    assert!(said.contains("received 2 sessions"), "{said}");
    assert_eq!(records(&b)["sessions"].len(), 3);
    let status = ok(&run(&b, &["sync", "status"]));
    assert!(
        !status.contains("last error") && !status.contains("set aside"),
        "{status}"
    );
}

/// The machine folder name on the remote that is not `other`'s.
fn a_machine(remote: &Remote, other: &Env) -> String {
    let theirs = ok(&run(other, &["sync", "status", "--json"]));
    let theirs: serde_json::Value = serde_json::from_str(&theirs).unwrap();
    let theirs = theirs["machine"].as_str().unwrap().to_string();
    remote
        .files()
        .iter()
        .filter_map(|f| f.split_once('/').map(|(m, _)| m.to_string()))
        .find(|m| *m != theirs)
        .unwrap()
}

#[test]
fn files_that_are_not_ours_on_the_branch_are_kept_and_never_read() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    remote.change("README.md", Some(b"notes of a person\n"));
    remote.change("0123456789abcdef/notes.txt", Some(b"not a chunk\n"));
    let b = machine();
    join(&b, &remote, &token);
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-000000000001",
        PROJECT,
        &["bravo2"],
    );
    let said = sync(&b);
    assert!(said.contains("received 2 sessions"), "{said}");
    sync(&a);
    let files = remote.files();
    assert!(files.contains(&"README.md".to_string()), "{files:?}");
    assert!(
        files.contains(&"0123456789abcdef/notes.txt".to_string()),
        "{files:?}"
    );
    assert_eq!(records(&a)["sessions"].len(), 3);
}

#[test]
fn a_remote_whose_branch_is_not_ours_is_left_untouched_and_other_branches_stay() {
    if !require_program("git") {
        return;
    }
    // Someone's `claude-mem` branch of their own.
    let theirs = Remote::new();
    let seed = Remote::new();
    let a = machine();
    let token = start(&a, &seed);
    seed.change("header", Some(b"not a header\n"));
    seed.git(&[
        "push",
        "--quiet",
        &theirs.url(),
        "refs/heads/claude-mem:refs/heads/claude-mem",
    ]);
    let before = theirs.snapshot();
    let b = machine();
    let url = theirs.url();
    for key in [None, Some(token.as_str())] {
        let mut args = vec!["sync", "setup", url.as_str()];
        args.extend(key.map(|key| ["--key", key]).into_iter().flatten());
        let err = failed(&run(&b, &args), 1);
        assert!(err.contains("not claude-mem sync data"), "{err}");
        assert_eq!(theirs.snapshot(), before);
        assert!(!b.data_dir.join("sync/remote.json").exists());
    }
    // A machine set up with it before: its sync says so and changes nothing.
    let err = failed(&run(&a, &["sync"]), 1);
    assert!(err.contains("is not claude-mem's"), "{err}");
    // A repository of code: the sync branch beside its branches, which stay as they were.
    let code = Remote::new();
    seed.git(&[
        "push",
        "--quiet",
        &code.url(),
        "refs/heads/claude-mem:refs/heads/main",
    ]);
    let main = code.git(&["rev-parse", "refs/heads/main"]);
    let c = machine();
    session(
        &c,
        "cccccccc-0000-4000-8000-0000000000f1",
        PROJECT,
        &["coded"],
    );
    start(&c, &code);
    sync(&c);
    assert_eq!(code.git(&["rev-parse", "refs/heads/main"]), main);
    assert!(code.files().iter().any(|f| f.ends_with(".cmc")));
}

#[test]
fn a_remote_made_again_gets_its_branch_back_as_docs_sync_md_says() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    let dropped = "aaaaaaaa-0000-4000-8000-000000000001";
    ok(&run(&a, &["forget", dropped, "--yes"]));
    sync(&a);
    // The repository deleted and made again, empty, under the same name.
    std::fs::remove_dir_all(remote.path()).unwrap();
    git(&remote.path(), &["init", "--quiet", "--bare"]);
    let err = failed(&run(&a, &["sync"]), 1);
    assert!(
        err.contains("no longer holds claude-mem sync data") && err.contains("docs/sync.md"),
        "{err}"
    );
    // The command of docs/sync.md, with this machine's data dir.
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sync.md"),
    )
    .unwrap();
    let printed = docs
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("git --git-dir ~/.local/share/claude-mem/sync/repo.git push "))
        .unwrap();
    let args: Vec<String> = printed
        .split_whitespace()
        .skip(1)
        .map(|word| {
            word.replace(
                "~/.local/share/claude-mem",
                &a.data_dir.display().to_string(),
            )
            .replace("git@github.com:you/claude-memory.git", &remote.url())
        })
        .collect();
    let out = Command::new("git").args(&args).output().unwrap();
    assert!(out.status.success(), "{printed}: {out:?}");
    sync(&a);
    sync(&b);
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), records(&a));
    assert_eq!(records(&b), records(&a));
    assert_eq!(records(&c)["sessions"].len(), 1);
    assert!(keeps_only_reachable(&remote.path()));
    assert!(!remote.reachable_text(&token).contains("alphaprompt"));
}

#[test]
fn an_unreachable_remote_is_one_line_and_shows_in_status_and_doctor() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, _token) = first_machine(&remote);
    let moved = remote.dir.path().join("elsewhere.git");
    std::fs::rename(remote.path(), &moved).unwrap();
    let err = failed(&run(&a, &["sync"]), 1);
    assert!(
        err.contains("cannot reach") && err.contains(&remote.url()),
        "{err}"
    );
    let status = ok(&run(&a, &["sync", "status"]));
    assert!(
        status.contains("last error") && status.contains("cannot reach"),
        "{status}"
    );
    let main = ok(&run(&a, &["status"]));
    assert!(main.contains("failing since"), "{main}");
    assert_doctor_warns_it_cannot_reach(&a);
    // Back: the next sync clears it.
    std::fs::rename(&moved, remote.path()).unwrap();
    sync(&a);
    let status = ok(&run(&a, &["sync", "status"]));
    assert!(!status.contains("last error"), "{status}");
    // Setting up with a remote that is not there says so, and keeps nothing.
    let b = machine();
    let nowhere = remote.dir.path().join("nowhere.git").display().to_string();
    let err = failed(&run(&b, &["sync", "setup", &nowhere]), 1);
    assert!(err.contains("cannot reach"), "{err}");
    assert!(!b.data_dir.join("sync/remote.json").exists());
}
