//! `claude-mem sync` through the real binary and the real `git`, machines being data dirs of
//! their own and remotes bare repositories in the test's temp dir: machines that capture,
//! forget and sync in any order end with the same records; the remote holds ciphertext only,
//! and after a forget its branch no longer reaches what was forgotten (read back here with
//! the key, by a reader of the format written for the test); a wrong key, a key of another
//! remote, a changed or cut chunk, pushes at once, two syncs at once, a sync killed, an
//! unreachable remote each end in one clear line with nothing lost or doubled; no hook runs git.
//!
//! Here: the bare remote and the reader of its chunks, the machines and what they hold; one
//! file per area.

mod background;
mod checkouts;
mod ciphertext;
mod converge;
mod hostile;
mod keys;
mod races;
mod remotes;
mod rollback;
mod tampered;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

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

/// The alphabet of a token's base32.
const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The bytes of a token (`cmk1-` and base32 of key, remote prefix and checksum).
fn token_bytes(token: &str) -> Vec<u8> {
    let body = token.trim().strip_prefix("cmk1-").unwrap();
    let mut bytes = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0);
    for c in body.bytes() {
        let value = BASE32.iter().position(|a| *a == c).unwrap() as u32;
        buffer = (buffer << 5) | value;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
        }
    }
    bytes
}

/// A token of `bytes`: the reverse of [`token_bytes`].
fn token_of(bytes: &[u8]) -> String {
    let mut out = String::from("cmk1-");
    let (mut buffer, mut bits) = (0u32, 0);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(*byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(BASE32[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(BASE32[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The 32 key bytes of a token.
fn key_bytes(token: &str) -> [u8; 32] {
    token_bytes(token)[..32].try_into().unwrap()
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

/// How many objects a repository holds, loose or packed.
fn objects(repo: &Path) -> usize {
    git(repo, &["cat-file", "--batch-all-objects", "--batch-check"])
        .lines()
        .count()
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

/// Every object of `repo` is reachable from one of its refs: it keeps nothing older.
fn keeps_only_reachable(repo: &Path) -> bool {
    let reachable = git(repo, &["rev-list", "--objects", "--all"])
        .lines()
        .count();
    reachable == objects(repo)
}
