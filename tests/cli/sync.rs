//! `claude-mem sync` through the real binary and the real `git`, machines being data dirs of
//! their own and remotes bare repositories in the test's temp dir: machines that capture,
//! forget and sync in any order end with the same records; the remote holds ciphertext only,
//! and after a forget its branch no longer reaches what was forgotten (read back here with
//! the key, by a reader of the format written for the test); a wrong key, a key of another
//! remote, a changed or cut chunk, pushes at once, two syncs at once, a sync killed, an
//! unreachable remote each end in one clear line with nothing lost or doubled; no hook runs git.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde_json::json;

use crate::harness::memory::*;
use crate::harness::*;

/// A bare repository to sync through, in a temp dir of its own.
struct Remote {
    dir: tempfile::TempDir,
}

impl Remote {
    fn new() -> Remote {
        let remote = Remote {
            dir: tempfile::tempdir().unwrap(),
        };
        git(&remote.path(), &["init", "--quiet", "--bare"]);
        remote
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("memory.git")
    }

    fn url(&self) -> String {
        self.path().display().to_string()
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.path(), args)
    }

    /// The refs and every object: what a push or a refusal may not have changed.
    fn snapshot(&self) -> String {
        let refs = self.git(&["for-each-ref"]);
        let objects = self.git(&["cat-file", "--batch-all-objects", "--batch-check"]);
        format!("{refs}\n{objects}")
    }

    /// Every object of the repository, reachable or not, as bytes.
    fn all_objects(&self) -> Vec<u8> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(self.path())
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    }

    /// The text of every chunk the branch reaches, in any commit of its history, opened with
    /// the key `token`: a reader of the format written here, not claude-mem's.
    fn reachable_text(&self, token: &str) -> String {
        let key = key_bytes(token);
        let listing = self.git(&["rev-list", "--objects", "refs/heads/claude-mem"]);
        let header = blob(&self.path(), "refs/heads/claude-mem:header");
        let remote: [u8; 16] = header[8..24].try_into().unwrap();
        let mut text = String::new();
        for line in listing.lines() {
            let Some((id, path)) = line.split_once(' ') else {
                continue;
            };
            let Some((machine, name)) = path.split_once('/') else {
                continue;
            };
            let seq: i64 = name.trim_end_matches(".cmc").parse().unwrap();
            let bytes = blob(&self.path(), id);
            text.push_str(&open_chunk(&key, &remote, machine, seq, &bytes));
        }
        text
    }

    /// The text of every chunk of the branch's tip (not its history), opened with the key.
    fn tip_text(&self, token: &str) -> String {
        let key = key_bytes(token);
        let header = blob(&self.path(), "refs/heads/claude-mem:header");
        let remote: [u8; 16] = header[8..24].try_into().unwrap();
        let mut text = String::new();
        for path in self.files() {
            let Some((machine, name)) = path.split_once('/') else {
                continue;
            };
            let Some(seq) = name.strip_suffix(".cmc") else {
                continue;
            };
            let bytes = blob(&self.path(), &format!("refs/heads/claude-mem:{path}"));
            text.push_str(&open_chunk(
                &key,
                &remote,
                machine,
                seq.parse().unwrap(),
                &bytes,
            ));
        }
        text
    }

    /// Replaces the blob at `path` of the branch's tip by `bytes` (or removes it: `None`), in
    /// a new commit on top, as someone with write access to the remote could.
    fn change(&self, path: &str, bytes: Option<&[u8]>) {
        let index = self.dir.path().join("index");
        let git_env = |args: &[&str], input: Option<&[u8]>| -> String {
            let out = run_with_input(
                Command::new("git")
                    .arg("--git-dir")
                    .arg(self.path())
                    .args(args)
                    .env("GIT_INDEX_FILE", &index)
                    .env("GIT_AUTHOR_NAME", "someone")
                    .env("GIT_AUTHOR_EMAIL", "someone@example.com")
                    .env("GIT_COMMITTER_NAME", "someone")
                    .env("GIT_COMMITTER_EMAIL", "someone@example.com"),
                input.unwrap_or_default(),
            );
            assert!(out.status.success(), "git {args:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git_env(&["read-tree", "refs/heads/claude-mem"], None);
        match bytes {
            Some(bytes) => {
                let id = git_env(&["hash-object", "-w", "--stdin"], Some(bytes));
                git_env(
                    &[
                        "update-index",
                        "--add",
                        "--cacheinfo",
                        &format!("100644,{id},{path}"),
                    ],
                    None,
                );
            }
            None => {
                git_env(&["update-index", "--remove", "--force-remove", path], None);
            }
        }
        let tree = git_env(&["write-tree"], None);
        let commit = git_env(
            &["commit-tree", &tree, "-p", "refs/heads/claude-mem"],
            Some(b"changed by hand\n"),
        );
        git_env(&["update-ref", "refs/heads/claude-mem", &commit], None);
        let _ = std::fs::remove_file(index);
    }

    /// The paths of the branch's tree.
    fn files(&self) -> Vec<String> {
        self.git(&["ls-tree", "-r", "--name-only", "refs/heads/claude-mem"])
            .lines()
            .map(String::from)
            .collect()
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn blob(repo: &Path, id: &str) -> Vec<u8> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["cat-file", "blob", id])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// The 32 key bytes of a token (`cmk1-` and base32 of key, remote prefix and checksum).
fn key_bytes(token: &str) -> [u8; 32] {
    let body = token.trim().strip_prefix("cmk1-").unwrap();
    let mut bytes = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0);
    for c in body.bytes() {
        let value = b"abcdefghijklmnopqrstuvwxyz234567"
            .iter()
            .position(|a| *a == c)
            .unwrap() as u32;
        buffer = (buffer << 5) | value;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
        }
    }
    bytes[..32].try_into().unwrap()
}

/// A chunk's text: after `cmchunk1`, a 24-byte nonce and XChaCha20-Poly1305 of deflated text,
/// bound to `cmchunk1`, the remote's id and `machine/seq`.
fn open_chunk(key: &[u8; 32], remote: &[u8; 16], machine: &str, seq: i64, bytes: &[u8]) -> String {
    assert_eq!(&bytes[..8], b"cmchunk1");
    let nonce: [u8; 24] = bytes[8..32].try_into().unwrap();
    let mut aad = b"cmchunk1".to_vec();
    aad.extend_from_slice(remote);
    aad.extend_from_slice(format!("{machine}/{seq}").as_bytes());
    let packed = XChaCha20Poly1305::new(&(*key).into())
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: &bytes[32..],
                aad: &aad,
            },
        )
        .expect("the chunk opens with the key");
    let mut text = String::new();
    flate2::read::DeflateDecoder::new(&packed[..])
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// A machine: a data dir of its own, syncing only when told (no background sync).
fn machine() -> Env {
    Env::new().with("CLAUDE_MEM_SYNC_INTERVAL", "0")
}

/// Sets up the first machine of `remote`; the key's token it printed.
fn start(env: &Env, remote: &Remote) -> String {
    let said = ok(&run(env, &["sync", "setup", &remote.url()]));
    let tokens: Vec<&str> = said.lines().filter(|l| l.starts_with("cmk1-")).collect();
    assert_eq!(tokens.len(), 1, "the key on a line of its own: {said}");
    assert_eq!(
        ok(&run(env, &["sync", "key"])).trim(),
        tokens[0],
        "sync key prints it again"
    );
    tokens[0].to_string()
}

fn join(env: &Env, remote: &Remote, token: &str) {
    let said = ok(&run(env, &["sync", "setup", &remote.url(), "--key", token]));
    assert!(said.contains("the key opens its data"), "{said}");
}

/// `claude-mem sync`, which must succeed; its one line.
fn sync(env: &Env) -> String {
    let said = ok(&run(env, &["sync"]));
    assert_eq!(said.lines().count(), 1, "{said}");
    said
}

/// The ids of every record, by table.
fn records(env: &Env) -> BTreeMap<&'static str, BTreeSet<String>> {
    let db = env.db();
    let mut out = BTreeMap::new();
    for (table, id) in [
        ("sessions", "session_id"),
        ("user_prompts", "id"),
        ("private_turns", "prompt_id"),
        ("pending_queue", "id"),
        ("event_log", "id"),
        ("memories", "id"),
        ("summaries", "id"),
    ] {
        let mut stmt = db.prepare(&format!("SELECT {id} FROM {table}")).unwrap();
        let ids = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        out.insert(table, ids);
    }
    out
}

/// Each text of the memory once: no prompt, tool call or memory stored twice under two ids.
fn assert_no_duplicate(env: &Env) {
    for sql in [
        "SELECT prompt_text, count(*) FROM user_prompts GROUP BY 1 HAVING count(*) > 1",
        "SELECT raw_output, count(*) FROM pending_queue GROUP BY 1 HAVING count(*) > 1",
        "SELECT title, count(*) FROM memories GROUP BY 1 HAVING count(*) > 1",
        "SELECT request, count(*) FROM summaries GROUP BY 1 HAVING count(*) > 1",
    ] {
        let doubled = ids(env, sql);
        assert!(doubled.is_empty(), "{sql}: {doubled:?}");
    }
}

/// A tiny PRNG (xorshift64*), so that the simulation is the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// What the simulation recorded of a session: its id, its turns' words, and whether the
/// compressor made a memory and a summary of it.
struct Recorded {
    id: String,
    words: Vec<String>,
    compressed: bool,
}

impl Recorded {
    /// The words of its memory and summary.
    fn made(&self) -> Vec<String> {
        if !self.compressed {
            return Vec::new();
        }
        let w = &self.words[0];
        ["title", "narrative", "fact", "request", "learned"]
            .iter()
            .map(|part| format!("{w}{part}"))
            .collect()
    }
}

/// The id of the first row `sql` finds holding `needle`, if this machine has one.
fn find(env: &Env, sql: &str, needle: &str) -> Option<String> {
    env.db()
        .query_row(sql, [format!("%{needle}%")], |r| r.get(0))
        .ok()
}

#[cfg(unix)]
#[test]
fn three_machines_converge_through_random_captures_forgets_and_syncs() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let machines = [machine(), machine(), machine()];
    let token = start(&machines[0], &remote);
    for m in &machines[1..] {
        join(m, &remote, &token);
    }
    let mut rng = Rng(0x5eed_cafe_f00d_0019);
    let mut recorded: Vec<Recorded> = Vec::new();
    let mut forgotten: BTreeSet<String> = BTreeSet::new();
    let (mut captures, mut forgets, mut syncs) = (0, 0, 0);
    for step in 0..40 {
        let at = rng.below(3);
        let env = &machines[at];
        match rng.below(10) {
            // A session: one or two turns, the one-turn ones compressed half of the time.
            0..4 => {
                let word = format!("w{step:02}m{at}");
                let turns = 1 + rng.below(2);
                let words: Vec<String> = (0..turns).map(|n| format!("{word}t{n}")).collect();
                let id = format!("{step:08}-0000-4000-8000-00000000000{at}");
                let refs: Vec<&str> = words.iter().map(String::as_str).collect();
                session(env, &id, PROJECT, &refs);
                let compressed = turns == 1 && rng.below(3) > 0;
                if compressed {
                    compress(env, &id, &[memory(&words[0], &[1])], summary(&words[0]));
                }
                recorded.push(Recorded {
                    id,
                    words,
                    compressed,
                });
                captures += 1;
            }
            // Forget a session, a turn or a tool call this machine has.
            4..6 if !recorded.is_empty() => {
                let r = &recorded[rng.below(recorded.len())];
                let n = rng.below(r.words.len());
                let [prompt, command, output, message] = turn(&r.words[n]);
                let (target, gone): (Option<String>, Vec<String>) = match rng.below(3) {
                    0 => (
                        find(
                            env,
                            "SELECT session_id FROM sessions WHERE session_id LIKE ?1",
                            &r.id,
                        ),
                        r.words
                            .iter()
                            .flat_map(|w| turn(w))
                            .chain(r.made())
                            .collect(),
                    ),
                    1 => (
                        find(
                            env,
                            "SELECT id FROM user_prompts WHERE prompt_text LIKE ?1",
                            &prompt,
                        ),
                        vec![prompt, command, output, message]
                            .into_iter()
                            .chain(if n == 0 { r.made() } else { Vec::new() })
                            .collect(),
                    ),
                    _ => (
                        find(
                            env,
                            "SELECT id FROM pending_queue WHERE tool_name = 'Bash'
                               AND raw_output LIKE ?1",
                            &command,
                        ),
                        vec![command, output]
                            .into_iter()
                            .chain(if n == 0 { r.made() } else { Vec::new() })
                            .collect(),
                    ),
                };
                let Some(target) = target else {
                    sync(env);
                    syncs += 1;
                    continue;
                };
                ok(&run(env, &["forget", &target, "--yes"]));
                forgotten.extend(gone);
                forgets += 1;
            }
            _ => {
                sync(env);
                syncs += 1;
            }
        }
    }
    assert!(
        captures >= 8 && forgets >= 4 && syncs >= 8,
        "a run that exercises each: {captures} captures, {forgets} forgets, {syncs} syncs"
    );
    // Two rounds: every push in, then every machine takes in all and writes its chunks again.
    for _ in 0..2 {
        for env in &machines {
            sync(env);
        }
    }
    let first = records(&machines[0]);
    let made = recorded.iter().filter(|r| r.compressed).count();
    assert!(
        first["sessions"].len() >= 4 && first["memories"].len() + first["summaries"].len() > 0,
        "{made} compressed, {} forgotten: {first:?}",
        forgotten.len()
    );
    let mut waiting = BTreeSet::new();
    for env in &machines {
        assert_eq!(records(env), first, "every machine holds the same records");
        assert_no_duplicate(env);
        // A tool call waits for the compressor of the machine that captured it, no other.
        for id in ids(env, "SELECT id FROM pending_queue WHERE status = 'raw'") {
            assert!(waiting.insert(id.clone()), "{id} waits on two machines");
        }
    }
    assert!(!waiting.is_empty());
    // Forgotten: in no file of any machine (once the rebuilds that syncs started are done),
    // and in no chunk the remote's branch reaches.
    let reachable = remote.reachable_text(&token);
    for env in &machines {
        env.wait_for_maintenance();
        let disk = everything_on_disk(env);
        for word in &forgotten {
            assert!(
                !contains(&disk, word),
                "{word} is still in {:?}",
                files_holding(&env.data_dir, word)
            );
        }
    }
    for word in &forgotten {
        assert!(
            !reachable.contains(word.as_str()),
            "{word} is still on the remote's branch"
        );
    }
    // What stays is there (the reader above reads what it should).
    let kept: Vec<&Recorded> = recorded
        .iter()
        .filter(|r| !forgotten.contains(&format!("{}prompt", r.words[0])))
        .collect();
    assert!(!kept.is_empty());
    for r in kept {
        assert!(
            reachable.contains(&format!("{}prompt", r.words[0])),
            "{}",
            r.words[0]
        );
    }
    // The remote holds ciphertext only: no word, no project path, in any object.
    let objects = remote.all_objects();
    for r in &recorded {
        for word in r.words.iter().flat_map(|w| turn(w)).chain(r.made()) {
            assert!(
                !contains(&objects, &word),
                "{word} in plain text on the remote"
            );
        }
    }
    for leak in [PROJECT, "shop", "/home/dev", "prompt_text", "session_id"] {
        assert!(!contains(&objects, leak), "{leak} on the remote");
    }
    let log = remote.git(&[
        "log",
        "--format=%an <%ae> %cn <%ce> %ad %s",
        "refs/heads/claude-mem",
    ]);
    for line in log.lines() {
        assert!(
            line.starts_with("claude-mem <claude-mem@localhost> claude-mem <claude-mem@localhost>")
                && line.ends_with("+0000 claude-mem sync"),
            "{line}"
        );
    }
    assert_eq!(
        remote.git(&["for-each-ref", "--format=%(refname)"]).trim(),
        "refs/heads/claude-mem"
    );
}

/// A machine with three sessions, synced to `remote`; the key's token.
fn first_machine(remote: &Remote) -> (Env, String) {
    let a = machine();
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-000000000001",
        PROJECT,
        &["alpha"],
    );
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-000000000002",
        PROJECT,
        &["bravo"],
    );
    let token = start(&a, remote);
    sync(&a);
    (a, token)
}

#[test]
fn a_wrong_key_or_a_key_of_another_remote_imports_nothing_and_leaves_the_remote_unchanged() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (_a, token) = first_machine(&remote);
    let other = Remote::new();
    let c = machine();
    let other_token = start(&c, &other);
    let before = remote.snapshot();
    let b = machine();
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-000000000001",
        PROJECT,
        &["local"],
    );
    let mine = records(&b);
    // A key that names this remote but is not its key: its own checksum, so only the remote's
    // header can tell.
    let forged = {
        let body = token.strip_prefix("cmk1-").unwrap();
        let mut bytes = Vec::new();
        let (mut buffer, mut bits) = (0u32, 0);
        for c in body.bytes() {
            let v = b"abcdefghijklmnopqrstuvwxyz234567"
                .iter()
                .position(|a| *a == c)
                .unwrap() as u32;
            buffer = (buffer << 5) | v;
            bits += 5;
            if bits >= 8 {
                bits -= 8;
                bytes.push((buffer >> bits) as u8);
            }
        }
        bytes.truncate(40);
        bytes[0] ^= 0xff;
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        let mut out = String::from("cmk1-");
        let (mut buffer, mut bits) = (0u32, 0);
        for byte in bytes {
            buffer = (buffer << 8) | u32::from(byte);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                out.push(
                    b"abcdefghijklmnopqrstuvwxyz234567"[((buffer >> bits) & 31) as usize] as char,
                );
            }
        }
        if bits > 0 {
            out.push(
                b"abcdefghijklmnopqrstuvwxyz234567"[((buffer << (5 - bits)) & 31) as usize] as char,
            );
        }
        out
    };
    let mut typo = token.clone().into_bytes();
    typo[10] = if typo[10] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap();
    for (key, says) in [
        (other_token.as_str(), "made for another remote"),
        (forged.as_str(), "does not open"),
        (typo.as_str(), "mistyped"),
        ("hunter2", "not a claude-mem sync key"),
    ] {
        let err = failed(&run(&b, &["sync", "setup", &remote.url(), "--key", key]), 1);
        assert!(err.contains(says), "{key}: {err}");
        assert_eq!(records(&b), mine, "nothing imported");
        assert!(!b.data_dir.join("sync/remote.json").exists());
        assert!(!b.data_dir.join("sync/key").exists(), "no key kept");
        assert_eq!(remote.snapshot(), before, "the remote unchanged");
        let not_set = failed(&run(&b, &["sync"]), 1);
        assert!(not_set.contains("not set up"), "{not_set}");
    }
    // The first machine of a remote with data needs its key; a key of a remote given to an
    // empty one is not its key.
    let err = failed(&run(&b, &["sync", "setup", &remote.url()]), 1);
    assert!(err.contains("already holds claude-mem sync data"), "{err}");
    let empty = Remote::new();
    let err = failed(
        &run(&b, &["sync", "setup", &empty.url(), "--key", &token]),
        1,
    );
    assert!(err.contains("holds no claude-mem sync data"), "{err}");
    assert_eq!(empty.git(&["for-each-ref"]), "");
    assert_eq!(remote.snapshot(), before);
    // The right key, read from stdin.
    ok(&run_with_input(
        b.command()
            .args(["sync", "setup", &remote.url(), "--key", "-"]),
        format!("{token}\n").as_bytes(),
    ));
    let said = sync(&b);
    assert!(said.contains("received 2 sessions"), "{said}");
}

#[test]
fn a_changed_or_cut_chunk_is_refused_whole_and_the_rest_is_taken_in() {
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
        let err = failed(&run(&b, &["sync"]), 1);
        assert!(
            err.contains("refused") && err.contains("does not authenticate"),
            "{what}: {err}"
        );
        let got = records(&b);
        assert!(
            got["sessions"].len() == 1
                && got["sessions"].contains("cccccccc-0000-4000-8000-000000000001"),
            "{what}: only the third machine's records: {got:?}"
        );
        let status = ok(&run(&b, &["sync", "status"]));
        assert!(status.contains("last error"), "{status}");
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
    assert!(!status.contains("last error"), "{status}");
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
fn machines_pushing_at_once_lose_nothing() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let others: Vec<Env> = (0..3).map(|_| machine()).collect();
    for (n, env) in others.iter().enumerate() {
        join(env, &remote, &token);
        for s in 0..3 {
            session(
                env,
                &format!("{n:08}-{s:04}-4000-8000-000000000000"),
                PROJECT,
                &[&format!("race{n}x{s}")],
            );
        }
    }
    let children: Vec<_> = others
        .iter()
        .map(|env| {
            env.command()
                .arg("sync")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        ok(&child.wait_with_output().unwrap());
    }
    for env in others.iter().chain([&a]) {
        sync(env);
    }
    let all = records(&a);
    assert_eq!(all["sessions"].len(), 2 + 9);
    for env in &others {
        assert_eq!(records(env), all);
    }
}

#[test]
fn two_syncs_at_once_on_one_machine_send_each_record_once() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    for s in 0..4 {
        session(
            &a,
            &format!("aaaaaaaa-{s:04}-4000-8000-000000000000"),
            PROJECT,
            &[&format!("twice{s}")],
        );
    }
    let children: Vec<_> = (0..2)
        .map(|_| {
            a.command()
                .arg("sync")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let said: Vec<String> = children
        .into_iter()
        .map(|c| ok(&c.wait_with_output().unwrap()))
        .collect();
    assert_eq!(
        said.iter()
            .filter(|s| s.contains("Sent 4 sessions"))
            .count(),
        1,
        "one sends, the other waits and finds nothing new: {said:?}"
    );
    let chunks = remote
        .files()
        .iter()
        .filter(|f| f.ends_with(".cmc"))
        .count();
    assert_eq!(chunks, 1);
    let b = machine();
    join(&b, &remote, &token);
    let got = sync(&b);
    assert!(
        got.contains("received 4 sessions, 4 prompts, 4 tool calls"),
        "{got}"
    );
}

/// Whether a `git` runs that process `pid` started.
#[cfg(target_os = "linux")]
fn runs_git(pid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let Some((head, tail)) = stat.rsplit_once(") ") else {
            return false;
        };
        head.ends_with("(git") && tail.split(' ').nth(1) == Some(pid.to_string().as_str())
    })
}

/// How many objects a repository holds, loose or packed.
fn objects(repo: &Path) -> usize {
    git(repo, &["cat-file", "--batch-all-objects", "--batch-check"])
        .lines()
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn a_sync_killed_at_any_moment_is_finished_by_the_next_one() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    let b = machine();
    join(&b, &remote, &token);
    let repo = a.data_dir.join("sync/repo.git");
    let tip = || remote.git(&["rev-parse", "refs/heads/claude-mem"]);
    let mut total = 0;
    for round in 0..8usize {
        for s in 0..3 {
            let id = format!("{round:08}-{s:04}-4000-8000-00000000000a");
            session(&a, &id, PROJECT, &[&format!("killed{round}x{s}")]);
            total += 1;
        }
        // Killed at a moment that comes later each round: at once, while git fetches, once
        // a chunk is sealed into the repository, once the push landed (before it is recorded
        // here), and not at all.
        let (was, held) = (tip(), objects(&repo));
        let mut child = a
            .command()
            .arg("sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let reached: Box<dyn Fn() -> bool> = match round % 5 {
            0 => Box::new(|| true),
            1 => Box::new(move || runs_git(pid)),
            2 => Box::new(|| objects(&repo) > held),
            3 => Box::new(|| tip() != was),
            _ => Box::new(|| false),
        };
        wait_until(
            std::time::Duration::from_secs(60),
            "the sync reaches its moment",
            || reached() || matches!(child.try_wait(), Ok(Some(_))),
        );
        let _ = child.kill();
        let _ = child.wait();
        // The other machine takes in what landed, killed now and then while git runs.
        let mut other = b
            .command()
            .arg("sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if round % 2 == 1 {
            let pid = other.id();
            wait_until(
                std::time::Duration::from_secs(60),
                "the other sync runs git",
                || runs_git(pid) || matches!(other.try_wait(), Ok(Some(_))),
            );
            let _ = other.kill();
        }
        let _ = other.wait();
    }
    sync(&a);
    sync(&b);
    let got = records(&b);
    assert_eq!(got["sessions"].len(), total);
    assert_eq!(got, records(&a));
    assert_no_duplicate(&b);
    // Each record once on the remote: a chunk pushed but not recorded was written again
    // under its own number, not sent a second time in another.
    let text = remote.tip_text(&token);
    for round in 0..8 {
        for s in 0..3 {
            let word = format!("killed{round}x{s}prompt");
            assert_eq!(text.matches(&word).count(), 1, "{word}");
        }
    }
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), got);
}

/// `doctor`'s sync line is a warning that the remote cannot be reached.
fn assert_doctor_warns_it_cannot_reach(env: &Env) {
    let doctor = run(env, &["doctor"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    let line = said
        .lines()
        .find(|l| l.contains(" sync "))
        .unwrap_or_default();
    assert!(
        line.starts_with("warn") && line.contains("cannot reach"),
        "{said}"
    );
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

#[test]
fn received_tool_calls_are_not_compressed_again_nor_sent_back_and_a_session_that_goes_on_follows() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    let id = "aaaaaaaa-0000-4000-8000-00000000000f";
    session(&a, id, PROJECT, &["ongoing"]);
    sync(&a);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(
        b.count("SELECT count(*) FROM pending_queue WHERE status = 'raw'"),
        0
    );
    assert!(a.count("SELECT count(*) FROM pending_queue WHERE status = 'raw'") > 0);
    let back = sync(&b);
    assert!(back.starts_with("Sent nothing"), "{back}");
    let again = sync(&a);
    assert!(again.contains("received nothing"), "{again}");
    // The session goes on and ends on the first machine; the second follows.
    let more = event(
        "UserPromptSubmit",
        id,
        PROJECT,
        json!({"prompt_id": "later", "prompt": "one more thing"}),
    );
    assert_ack(&a.hook("prompt", &more));
    let end = event("SessionEnd", id, PROJECT, json!({"reason": "other"}));
    assert_ack(&a.hook("cleanup", &end));
    a.wait_for_maintenance();
    let sent = sync(&a);
    assert!(sent.contains("Sent 1 session, 1 prompt"), "{sent}");
    sync(&b);
    let (status, prompts, message): (String, i64, Option<String>) = b
        .db()
        .query_row(
            "SELECT status, prompt_count, last_assistant_message FROM sessions WHERE session_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), prompts), ("closed", 2));
    assert!(message.unwrap_or_default().contains("ongoingmessage"));
}

/// A `git` first on PATH that notes which process ran it, then runs the real one.
#[cfg(target_os = "linux")]
fn recording_git(env: &Env) -> (PathBuf, String) {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let bin = env.root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = env.root.path().join("git-calls");
    write_program(
        &bin.join("git"),
        format!(
            "#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline >> '{}'\necho >> '{}'\nexec '{real}' \"$@\"\n",
            calls.display(),
            calls.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (calls, path)
}

/// Moves the time of the last sync an hour and a minute back, as if that long had passed.
fn an_hour_later(env: &Env) {
    last_sync_at(
        env,
        std::time::SystemTime::now() - std::time::Duration::from_secs(3660),
    );
}

/// Sets the time of the last sync.
fn last_sync_at(env: &Env, at: std::time::SystemTime) {
    let tried = env.data_dir.join("sync/tried");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&tried)
        .unwrap();
    file.set_modified(at).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn no_hook_runs_git_and_the_maintenance_process_syncs_after_a_session_ends_at_most_every_interval()
{
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = Env::new().with("CLAUDE_MEM_SYNC_INTERVAL", "1h");
    let (calls, path) = recording_git(&a);
    let token = start(&a, &remote);
    // A whole session through the hooks, a `git` first on PATH that notes who runs it.
    let session = |id: &str| {
        let hook = |name: &str, event_name: &str, extra: serde_json::Value| {
            let out = a
                .command()
                .env("PATH", &path)
                .args(["hook", name])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(&event(event_name, id, PROJECT, extra))?;
                    child.wait_with_output()
                })
                .unwrap();
            assert_clean(&out);
        };
        hook("context", "SessionStart", json!({"source": "startup"}));
        hook(
            "prompt",
            "UserPromptSubmit",
            json!({"prompt_id": "p", "prompt": "hello"}),
        );
        hook(
            "capture",
            "PostToolUse",
            json!({"prompt_id": "p", "tool_name": "Bash", "tool_use_id": format!("t{id}"),
                   "tool_input": {"command": "ls"}, "tool_response": {"stdout": "x", "stderr": ""}}),
        );
        hook(
            "summary",
            "Stop",
            json!({"prompt_id": "p", "last_assistant_message": "done"}),
        );
        hook("cleanup", "SessionEnd", json!({"reason": "other"}));
        a.wait_for_maintenance();
        let seen = std::fs::read_to_string(&calls).unwrap_or_default();
        std::fs::write(&calls, "").unwrap();
        for caller in seen.lines().filter(|l| !l.is_empty()) {
            assert!(!caller.contains(" hook "), "a hook ran git: {caller}");
            assert!(caller.contains("maintain --auto"), "{caller}");
        }
        !seen.is_empty()
    };
    std::fs::write(&calls, "").unwrap();
    assert!(
        session("aaaaaaaa-0000-4000-8000-0000000000b1"),
        "the maintenance process synced after the session ended"
    );
    let b = machine();
    join(&b, &remote, &token);
    let got = sync(&b);
    assert!(got.contains("received 1 session"), "{got}");
    // Another session ends within the hour: no sync.
    assert!(
        !session("aaaaaaaa-0000-4000-8000-0000000000b2"),
        "synced again before CLAUDE_MEM_SYNC_INTERVAL passed"
    );
    // The clock went back a day: the last sync is in the future, which is no reason to wait
    // a day for the next.
    last_sync_at(
        &a,
        std::time::SystemTime::now() + std::time::Duration::from_secs(86_400),
    );
    assert!(
        session("aaaaaaaa-0000-4000-8000-0000000000b5"),
        "a clock that jumped back stopped the background sync"
    );
    // An hour later, with the remote gone: the failure shows in status and doctor, and no
    // hook is any the wiser.
    an_hour_later(&a);
    let moved = remote.dir.path().join("elsewhere.git");
    std::fs::rename(remote.path(), &moved).unwrap();
    assert!(session("aaaaaaaa-0000-4000-8000-0000000000b3"));
    let main = ok(&run(&a, &["status"]));
    assert!(
        main.contains("failing since") && main.contains("cannot reach"),
        "{main}"
    );
    assert_doctor_warns_it_cannot_reach(&a);
    // Back, an hour later again: the next session's end sends both sessions.
    std::fs::rename(&moved, remote.path()).unwrap();
    an_hour_later(&a);
    assert!(session("aaaaaaaa-0000-4000-8000-0000000000b4"));
    assert!(!ok(&run(&a, &["status"])).contains("failing"));
    let got = sync(&b);
    assert!(got.contains("received 4 sessions"), "{got}");
}

#[test]
fn the_remote_holds_no_plaintext_object_by_object() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let id = "aaaaaaaa-0000-4000-8000-0000000000cc";
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

/// Every object of `repo` is reachable from one of its refs: it keeps nothing older.
fn keeps_only_reachable(repo: &Path) -> bool {
    let reachable = git(repo, &["rev-list", "--objects", "--all"])
        .lines()
        .count();
    reachable == objects(repo)
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

#[cfg(unix)]
#[test]
fn a_push_that_loses_the_race_fetches_takes_in_and_pushes_again() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    // The remote holds the next push in its pre-receive hook until told to go on.
    let hooks = remote.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    write_program(
        &hooks.join("pre-receive"),
        "#!/bin/sh\ncat > /dev/null\nd=$(dirname \"$0\")\nif [ -f \"$d/hold\" ]; then\n  rm \"$d/hold\"; touch \"$d/held\"\n  while [ ! -f \"$d/go\" ]; do sleep 0.01; done\nfi\n",
    );
    std::fs::write(hooks.join("hold"), "").unwrap();
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000a9",
        PROJECT,
        &["slowpoke"],
    );
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-0000000000a9",
        PROJECT,
        &["quickly"],
    );
    let slow = a
        .command()
        .arg("sync")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        std::time::Duration::from_secs(60),
        "the first push held by the remote",
        || hooks.join("held").exists(),
    );
    // Meanwhile the other machine pushes; then the held push goes on, and loses.
    let said = sync(&b);
    assert!(said.starts_with("Sent 1 session"), "{said}");
    std::fs::write(hooks.join("go"), "").unwrap();
    let said = ok(&slow.wait_with_output().unwrap());
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("Sent 1 session") && said.contains("received 1 session"),
        "it fetched again, took in the other's and pushed on top: {said}"
    );
    sync(&b);
    assert_eq!(records(&a), records(&b));
    assert_eq!(records(&a)["sessions"].len(), 4);
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), records(&a));
}

/// `sync status --json`'s records and deletions waiting to go.
fn waiting(env: &Env) -> (i64, i64) {
    let status: serde_json::Value =
        serde_json::from_str(&ok(&run(env, &["sync", "status", "--json"]))).unwrap();
    (
        status["waiting"]["records"].as_i64().unwrap(),
        status["waiting"]["deletions"].as_i64().unwrap(),
    )
}

#[test]
fn what_retention_deletes_goes_everywhere_and_status_says_what_waits() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let old = "aaaaaaaa-0000-4000-8000-0000000000f7";
    session(&a, old, PROJECT, &["ancient"]);
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000f8",
        PROJECT,
        &["recent"],
    );
    let token = start(&a, &remote);
    let (sending, deletions) = waiting(&a);
    assert!(sending > 10 && deletions == 0, "{sending} {deletions}");
    sync(&a);
    assert_eq!(waiting(&a), (0, 0));
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(records(&b)["sessions"].len(), 2);
    // A year and more later, retention deletes the old session here.
    age(&a, old, 400);
    ok(&run(&a, &["prune"]));
    let (sending, deletions) = waiting(&a);
    assert!(sending == 0 && deletions > 0, "{sending} {deletions}");
    let said = sync(&a);
    assert!(
        said.contains(&format!("Sent {deletions} deletions")),
        "{said}"
    );
    let said = sync(&b);
    assert!(said.contains("deletions"), "{said}");
    assert_eq!(records(&b), records(&a));
    assert_eq!(records(&b)["sessions"].len(), 1);
    assert!(!remote.reachable_text(&token).contains("ancientprompt"));
}

/// Regression: `claude-mem sync` on a machine where sync was never set up started the
/// maintenance process, which made a data dir and a database.
#[cfg(target_os = "linux")]
#[test]
fn sync_where_it_is_not_set_up_is_one_line_and_makes_nothing() {
    let a = machine();
    for args in [&["sync"][..], &["sync", "key"]] {
        let err = failed(&run(&a, args), 1);
        assert!(
            err.contains("not set up") && err.contains("sync setup"),
            "{err}"
        );
    }
    let said = ok(&run(&a, &["sync", "status"]));
    assert!(said.contains("not set up"), "{said}");
    let said = ok(&run(&a, &["sync", "off"]));
    assert!(said.contains("nothing to do"), "{said}");
    a.wait_for_maintenance();
    assert!(!a.data_dir.exists(), "{:?}", files_in(&a.data_dir));
}
