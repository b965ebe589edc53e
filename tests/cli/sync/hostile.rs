//! A remote that anyone can push to, without the key: chunks too large to read, thousands of
//! junk ones, remotes that git would read as options or run as programs. Each costs a sync
//! little, is said in a short line, and never stops the good chunks from coming.

use super::*;

/// Commits `files` (path and bytes) on top of the remote's branch, as anyone with push access
/// could: one commit, however many files.
fn plant(remote: &Remote, files: &[(String, Vec<u8>)]) {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let git_env = |args: &[&str], input: &[u8]| -> String {
        let out = run_with_input(
            Command::new("git")
                .arg("--git-dir")
                .arg(remote.path())
                .args(args)
                .env("GIT_INDEX_FILE", &index)
                .env("GIT_AUTHOR_NAME", "someone")
                .env("GIT_AUTHOR_EMAIL", "someone@example.com")
                .env("GIT_COMMITTER_NAME", "someone")
                .env("GIT_COMMITTER_EMAIL", "someone@example.com"),
            input,
        );
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let mut paths = String::new();
    for (n, (_, bytes)) in files.iter().enumerate() {
        let path = scratch.path().join(n.to_string());
        std::fs::write(&path, bytes).unwrap();
        paths.push_str(&format!("{}\n", path.display()));
    }
    let ids = git_env(&["hash-object", "-w", "--stdin-paths"], paths.as_bytes());
    let info: String = ids
        .lines()
        .zip(files)
        .map(|(id, (path, _))| format!("100644 {id}\t{path}\n"))
        .collect();
    assert_eq!(info.lines().count(), files.len());
    git_env(&["read-tree", "refs/heads/claude-mem"], b"");
    git_env(&["update-index", "--index-info"], info.as_bytes());
    let tree = git_env(&["write-tree"], b"");
    let commit = git_env(
        &["commit-tree", &tree, "-p", "refs/heads/claude-mem"],
        b"planted\n",
    );
    git_env(&["update-ref", "refs/heads/claude-mem", &commit], b"");
}

/// Whether the repository holds the object `id`.
fn holds(repo: &Path, id: &str) -> bool {
    Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["cat-file", "-e", id])
        .status()
        .unwrap()
        .success()
}

#[test]
fn chunks_past_the_cap_and_junk_chunks_are_set_aside_dropped_and_never_stop_a_sync() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    // One chunk a MiB past the cap (zeros: git keeps it small on disk, its size is what
    // counts), and 300 small ones that are no chunks, in two folders that look like machines.
    let big = "0123456789abcdef/00000001.cmc".to_string();
    let mut files = vec![(big.clone(), vec![0u8; 17 << 20])];
    for seq in 1..=300 {
        let junk = format!("junk {seq}").into_bytes();
        files.push((format!("fedcba9876543210/{seq:08}.cmc"), junk));
    }
    // And the header's bytes as a chunk: refused, but the header must stay.
    let header = blob(&remote.path(), "refs/heads/claude-mem:header");
    files.push(("fedcba9876543210/00000301.cmc".to_string(), header));
    plant(&remote, &files);
    let said = sync(&b);
    assert!(said.contains("received 2 sessions"), "{said}");
    assert!(
        said.contains("Set aside 302 chunks") && said.contains("over the 16 MiB cap"),
        "{said}"
    );
    assert!(said.len() < 400, "one short line: {said}");
    // Nothing of them stays here.
    let repo = b.data_dir.join("sync/repo.git");
    let big_id = remote.git(&["rev-parse", &format!("refs/heads/claude-mem:{big}")]);
    let junk_id = remote.git(&[
        "rev-parse",
        "refs/heads/claude-mem:fedcba9876543210/00000007.cmc",
    ]);
    assert!(
        !holds(&repo, big_id.trim()),
        "the chunk past the cap was dropped"
    );
    assert!(!holds(&repo, junk_id.trim()), "a junk chunk was dropped");
    // Every later sync succeeds, and takes in what the other machine sends.
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-000000000003",
        PROJECT,
        &["delta"],
    );
    sync(&a);
    let said = sync(&b);
    assert!(
        said.contains("received 1 session") && !said.contains("Set aside"),
        "{said}"
    );
    assert_eq!(records(&b)["sessions"].len(), 3);
    assert_no_duplicate(&b);
    // `status` says it in one short line; `sync status` says what, in a few words.
    let status = ok(&run(&b, &["status"]));
    let line = status.lines().find(|l| l.starts_with("sync ")).unwrap();
    assert!(
        line.contains("chunks set aside") && line.len() < 200,
        "{status}"
    );
    let shown: serde_json::Value =
        serde_json::from_str(&ok(&run(&b, &["sync", "status", "--json"]))).unwrap();
    let aside = shown["set_aside"].as_str().unwrap();
    assert!(
        aside.contains("302 chunks") && aside.len() < 300 && shown["error"].is_null(),
        "{shown}"
    );
    let kept = std::fs::metadata(b.data_dir.join("sync/status.json")).unwrap();
    assert!(kept.len() < 2048, "status.json: {} bytes", kept.len());
}

#[test]
fn a_chunk_changed_again_after_it_was_set_aside_and_dropped_is_fetched_and_set_aside() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (_a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    // The remote sends the second as a change to the first, which b dropped.
    let junk: Vec<u8> = (0..200_000u32).flat_map(u32::to_le_bytes).collect();
    let path = "0123456789abcdef/00000001.cmc".to_string();
    plant(&remote, &[(path.clone(), junk.clone())]);
    assert!(sync(&b).contains("Set aside 1 chunk"));
    let mut again = junk;
    again.extend_from_slice(b"and a little more");
    plant(&remote, &[(path, again)]);
    let said = sync(&b);
    assert!(said.contains("Set aside 1 chunk"), "{said}");
    assert_eq!(records(&b)["sessions"].len(), 2);
}
