//! One project on every machine: two machines with checkouts of one repository at different
//! paths, synced, see each other's sessions in their own checkouts, whichever recorded a
//! session in its checkout first.

use std::path::{Path, PathBuf};

use super::*;

/// The code's repository, bare, and a clone of it at `path`.
fn clone(origin: &Path, path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    git_in(
        path.parent().unwrap(),
        &[
            "clone",
            "--quiet",
            origin.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
    );
    path.to_path_buf()
}

/// A bare repository with one commit, to clone.
fn origin(dir: &Path) -> PathBuf {
    let work = dir.join("seed");
    std::fs::create_dir_all(&work).unwrap();
    git_in(&work, &["init", "--quiet", "-b", "main"]);
    std::fs::write(work.join("README"), "shop\n").unwrap();
    git_in(&work, &["add", "."]);
    git_in(&work, &["commit", "--quiet", "-m", "first"]);
    let bare = dir.join("shop.git");
    git_in(
        dir,
        &[
            "clone",
            "--quiet",
            "--bare",
            work.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    bare
}

/// The sessions `sessions --json` lists when run in `dir`.
fn sessions_in(env: &Env, dir: &Path) -> BTreeSet<String> {
    let out = env
        .command()
        .args(["sessions", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect()
}

const OF_A: &str = "aaaaaaaa-0000-4000-8000-0000000000a1";
const OF_B: &str = "bbbbbbbb-0000-4000-8000-0000000000b1";

#[test]
fn checkouts_at_different_paths_see_each_others_sessions() {
    let remote = Remote::new();
    let code = tempfile::tempdir().unwrap();
    let origin = origin(code.path());
    let a = machine();
    let b = machine();
    let at_a = clone(&origin, &a.tmp().join("work/shop"));
    let at_b = clone(&origin, &b.tmp().join("src/elsewhere/shop-b"));
    session(&a, OF_A, at_a.to_str().unwrap(), &["alpha"]);
    let token = start(&a, &remote);
    sync(&a);
    // One file system stands for two machines: each checkout is away while the other
    // machine works, as it would be on another machine.
    let away = |path: &Path| std::fs::rename(path, path.with_extension("away")).unwrap();
    let back = |path: &Path| std::fs::rename(path.with_extension("away"), path).unwrap();
    away(&at_a);

    // B has no session in its checkout yet: A's stays under A's path until it has one.
    join(&b, &remote, &token);
    sync(&b);
    assert!(sessions_in(&b, &at_b).is_empty());
    session(&b, OF_B, at_b.to_str().unwrap(), &["bravo"]);
    // The maintenance process the session's end started, or one run by hand once it is done.
    b.wait_for_maintenance();
    let out = b.command().arg("maintain").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let both: BTreeSet<String> = [OF_A, OF_B].map(String::from).into();
    assert_eq!(
        sessions_in(&b, &at_b),
        both,
        "B's checkout, after maintenance"
    );

    // A, which has its checkout, files B's session under it as it syncs.
    sync(&b);
    back(&at_a);
    away(&at_b);
    sync(&a);
    back(&at_b);
    assert_eq!(sessions_in(&a, &at_a), both, "A's checkout, after its sync");
    assert_no_duplicate(&a);
    assert_no_duplicate(&b);
}

/// A repository with one commit and no remote, at `path`.
fn repository(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path).unwrap();
    git_in(path, &["init", "--quiet", "-b", "main"]);
    std::fs::write(path.join("README"), "shop\n").unwrap();
    git_in(path, &["add", "."]);
    git_in(path, &["commit", "--quiet", "-m", "first"]);
    path.to_path_buf()
}

#[test]
fn copies_of_a_repository_without_a_remote_are_one_project_by_their_first_commit() {
    let remote = Remote::new();
    let a = machine();
    let b = machine();
    let at_a = repository(&a.tmp().join("work/shop"));
    let at_b = b.tmp().join("src/shop-copy");
    std::fs::create_dir_all(at_b.parent().unwrap()).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .args([&at_a, &at_b])
        .status()
        .unwrap();
    assert!(copied.success());
    session(&a, OF_A, at_a.to_str().unwrap(), &["alpha"]);
    let token = start(&a, &remote);
    sync(&a);
    std::fs::rename(&at_a, at_a.with_extension("away")).unwrap();

    // Before B files them under its copy, A's sessions are shown by the repository's name,
    // not by a path of A's.
    join(&b, &remote, &token);
    sync(&b);
    let out = b.command().args(["sessions", "--all"]).output().unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.contains(" shop "), "{listed}");
    assert!(
        !listed.contains("work/shop"),
        "A's path shown on B: {listed}"
    );

    session(&b, OF_B, at_b.to_str().unwrap(), &["bravo"]);
    b.wait_for_maintenance();
    let out = b.command().arg("maintain").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let both: BTreeSet<String> = [OF_A, OF_B].map(String::from).into();
    assert_eq!(sessions_in(&b, &at_b), both);
    assert_no_duplicate(&b);
}
