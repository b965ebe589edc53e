//! Driving the user's own `git`: their ssh agent, credential helpers and `insteadOf` rules
//! apply, and no library of ours speaks to their host with an auth of its own.
//!
//! Everything happens in a bare repository in the data dir (`sync/repo.git`, mode 0700) through
//! plumbing commands, so no work tree ever holds a file: `hash-object -w` writes a sealed
//! chunk, `mktree` and `commit-tree` make the commit, `fetch` and `push` talk to the remote by
//! its URL (no remote is configured, nothing in the user's repositories changes). Every commit
//! is made by `claude-mem <claude-mem@localhost>` with a UTC date and a fixed message, whatever
//! the user's identity, and never signed; the user's hooks, templates and background gc stay
//! out of this repository.
//!
//! Each run has a deadline, after which git and everything it started (ssh) are killed: a
//! remote that hangs never holds a sync for ever. In the background (the maintenance process)
//! nothing may ask a question no one will see: no credential prompt (`GIT_TERMINAL_PROMPT=0`),
//! no ssh passphrase or host-key question (`BatchMode`, unless the user set their own ssh
//! command), no askpass window.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::url::Credential;
use crate::child::{self, Failed, Pipes};

/// The branch on the remote that holds the sync data.
pub const BRANCH: &str = "refs/heads/claude-mem";
/// Where the last tip of that branch known here (fetched or pushed) is kept.
const TIP: &str = "refs/sync/remote";
/// Where a fetch puts the branch, for a moment.
const FETCHED: &str = "refs/sync/fetched";
/// The message of every commit: nothing of the user's.
const MESSAGE: &str = "claude-mem sync\n";
/// Variables of a caller that is itself run by git (a hook, `git rebase --exec`) that would
/// point our git at their repository.
const CALLER_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// A tree entry: its mode, type, object id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub kind: String,
    pub id: String,
    pub path: String,
}

pub struct Git {
    repo: PathBuf,
    /// Run by the maintenance process: nothing may prompt.
    background: bool,
    /// How long a command talking to the remote may take.
    timeout: Duration,
    /// `GIT_SSH_COMMAND` for batch mode, when the user set no ssh command of their own.
    batch_ssh: bool,
    /// The remote's user name and password, given to git by [`HELPER`].
    credential: Option<Credential>,
}

/// A credential helper that answers git from its environment, which only this user can read:
/// the password never is on a command line, in a file of git's, or in the URL.
const HELPER: &str = "!f() { test \"$1\" = get || return 0; \
    printf 'username=%s\\n' \"$CLAUDE_MEM_SYNC_USERNAME\"; \
    if test -n \"${CLAUDE_MEM_SYNC_PASSWORD+set}\"; then \
    printf 'password=%s\\n' \"$CLAUDE_MEM_SYNC_PASSWORD\"; fi; }; f";

/// Local commands (on the repository alone) get this long.
const LOCAL: Duration = Duration::from_secs(60);
/// What git's stdout may hold of a listing (a tree, sizes): far more than a remote of ours
/// needs, and bounded whatever a remote holds. Chunks are read with a cap of their own
/// ([`Git::blobs`]).
const MAX_STDOUT: usize = 64 << 20;
/// The largest blob read without a cap of its own: a header is under a hundred bytes.
const SMALL: u64 = 4096;
/// Enough for any message git prints.
const MAX_STDERR: usize = 1 << 20;

impl Git {
    /// The repository at `repo`, created (bare, without templates) when missing.
    pub fn open(repo: &Path, background: bool, timeout: Duration) -> Result<Git> {
        let mut git = Git {
            repo: repo.to_path_buf(),
            background,
            timeout,
            batch_ssh: false,
            credential: None,
        };
        if !repo.join("HEAD").is_file() {
            crate::fsutil::private_dir(repo)
                .with_context(|| format!("cannot create {}", repo.display()))?;
            git.local(&["init", "--quiet", "--bare", "--template="])
                .context("cannot set up the sync repository")?;
        }
        git.batch_ssh = background
            && std::env::var_os("GIT_SSH_COMMAND").is_none()
            && std::env::var_os("GIT_SSH").is_none()
            && git
                .local(&["config", "--get", "core.sshCommand"])
                .map_or(true, |out| out.is_empty());
        Ok(git)
    }

    /// Gives git this user name and password for the remote's host.
    pub fn with_credential(mut self, credential: Option<Credential>) -> Git {
        self.credential = credential;
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        for var in CALLER_VARS {
            command.env_remove(var);
        }
        let hooks = format!("core.hooksPath={}", self.repo.join("no-hooks").display());
        command
            .arg("--git-dir")
            .arg(&self.repo)
            .args(["-c", &hooks, "-c", "commit.gpgSign=false"])
            .args([
                "-c",
                "gc.autoDetach=false",
                "-c",
                "maintenance.autoDetach=false",
            ])
            .args(["-c", "core.quotePath=false"])
            // No gc of git's own: it cannot leave out the refused chunks, which a ref reaches
            // ([`Git::repack`] does), and would fail on one left out before.
            .args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"]);
        if let Some(credential) = &self.credential {
            // The user's helpers first go (one would be asked before ours, another would keep
            // the password); ours answers for the remote's host alone.
            command
                .args(["-c", "credential.helper="])
                .arg("-c")
                .arg(format!("credential.{}.helper={HELPER}", credential.scope))
                .env("CLAUDE_MEM_SYNC_USERNAME", &credential.username);
            match &credential.password {
                Some(password) => command.env("CLAUDE_MEM_SYNC_PASSWORD", password),
                None => command.env_remove("CLAUDE_MEM_SYNC_PASSWORD"),
            };
        }
        command.args(args);
        let now = chrono::Utc::now().timestamp();
        for role in ["AUTHOR", "COMMITTER"] {
            command
                .env(format!("GIT_{role}_NAME"), "claude-mem")
                .env(format!("GIT_{role}_EMAIL"), "claude-mem@localhost")
                // UTC: the user's time zone is not written into the remote.
                .env(format!("GIT_{role}_DATE"), format!("{now} +0000"));
        }
        if self.background {
            command
                .env("GIT_TERMINAL_PROMPT", "0")
                .env("SSH_ASKPASS_REQUIRE", "never")
                .env("GCM_INTERACTIVE", "never");
            if self.batch_ssh {
                command.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
            }
        }
        command
    }

    /// Runs a command on the repository alone.
    fn local(&self, args: &[&str]) -> Result<Vec<u8>> {
        self.run(args, None, LOCAL)
    }

    /// Runs git with `args`, `input` on its stdin; its stdout, or an error with what it said.
    fn run(&self, args: &[&str], input: Option<&[u8]>, timeout: Duration) -> Result<Vec<u8>> {
        self.run_capped(args, input, timeout, MAX_STDOUT)
    }

    /// [`Git::run`], keeping at most `cap` bytes of its stdout (more is an error).
    fn run_capped(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        timeout: Duration,
        cap: usize,
    ) -> Result<Vec<u8>> {
        let pipes = Pipes {
            input: input.map(<[u8]>::to_vec),
            stdout: Some(cap),
            stderr: Some(MAX_STDERR),
        };
        let out =
            child::run(self.command(args), pipes, timeout).map_err(|failed| match failed {
                Failed::Start(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    anyhow!("git is not installed (no `git` on PATH); sync needs it")
                }
                Failed::Start(err) => anyhow!("cannot run git: {err}"),
                Failed::Timeout => anyhow!(
                    "git {}: gave no answer within {} s; stopped",
                    args[0],
                    timeout.as_secs()
                ),
                Failed::Wait(err) => anyhow!("git {}: cannot wait for it: {err}", args[0]),
                Failed::Held(status) => anyhow!(
                    "git {}: exited ({status}), but a process it started still holds its output",
                    args[0]
                ),
            })?;
        if !out.status.success() {
            return Err(anyhow!(
                "{}",
                said(&out.stderr).unwrap_or_else(|| out.status.to_string())
            ));
        }
        if out.cut {
            bail!(
                "git {} printed more than {} KiB; not read",
                args[0],
                cap >> 10
            );
        }
        Ok(out.stdout)
    }

    /// Fetches the sync branch of `url`; its tip, `None` when the remote has no such branch.
    /// The last tip known here stays in [`TIP`] whatever the remote says: a branch lost there
    /// (a repository made again) can be pushed back from it (see docs/sync.md).
    pub fn fetch(&self, url: &str) -> Result<Option<String>> {
        // Gone first: a pattern that matches nothing leaves an old ref in place. A pattern,
        // because a remote without the branch is no error (one with no sync data yet).
        let _ = self.local(&["update-ref", "-d", FETCHED]);
        let refspec = format!("+{BRANCH}*:{FETCHED}*");
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            url,
            &refspec,
        ];
        if let Err(err) = self.run(&args, None, self.timeout) {
            // The remote may send a chunk as a change to one refused and dropped here, which
            // this repository cannot take in: then everything, as a first fetch would (the
            // refused ones are dropped again after the sync).
            let said = format!("{err:#}");
            if !said.contains("unpack-objects failed") && !said.contains("index-pack failed") {
                return Err(err);
            }
            args.insert(1, "--refetch");
            self.run(&args, None, self.timeout)?;
        }
        let Some(tip) = self
            .local(&["rev-parse", "--verify", "--quiet", FETCHED])
            .ok()
            .map(|out| text(&out).trim().to_string())
            .filter(|tip| !tip.is_empty())
        else {
            return Ok(None);
        };
        self.local(&["update-ref", TIP, &tip])?;
        self.local(&["update-ref", "-d", FETCHED])?;
        Ok(Some(tip))
    }

    /// The entries of `commit`'s tree, every folder walked, the folders listed too.
    pub fn tree(&self, commit: &str) -> Result<Vec<Entry>> {
        let out = self.local(&["ls-tree", "-r", "-t", "-z", "--full-tree", commit])?;
        out.split(|b| *b == 0)
            .filter(|line| !line.is_empty())
            .map(|line| {
                let line = text(line);
                let (meta, path) = line.split_once('\t').context("an ls-tree line")?;
                let mut parts = meta.split(' ');
                let (Some(mode), Some(kind), Some(id)) = (parts.next(), parts.next(), parts.next())
                else {
                    bail!("an ls-tree line: {line}");
                };
                Ok(Entry {
                    mode: mode.into(),
                    kind: kind.into(),
                    id: id.into(),
                    path: path.into(),
                })
            })
            .collect()
    }

    /// The size of each of these blobs, by id, without reading them: `None` for an object
    /// that is not here or is not a blob.
    pub fn sizes(&self, ids: &[&str]) -> Result<HashMap<String, Option<u64>>> {
        let mut found = HashMap::new();
        if ids.is_empty() {
            return Ok(found);
        }
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let out = self.run(
            &["cat-file", "--batch-check"],
            Some(input.as_bytes()),
            LOCAL,
        )?;
        for line in text(&out).lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let size = match fields[..] {
                [_, "blob", size] => Some(size.parse()?),
                [_, _, _] | [_, "missing"] => None,
                _ => bail!("cat-file said {line}"),
            };
            found.insert(fields[0].to_string(), size);
        }
        Ok(found)
    }

    /// Whether any of these objects is here.
    pub fn holds_any(&self, ids: &HashSet<String>) -> Result<bool> {
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        Ok(self.sizes(&ids)?.values().any(Option::is_some))
    }

    /// The blob `id` when it is at most [`SMALL`] bytes (a header); `None` when it is larger
    /// or not here, never read then.
    pub fn small_blob(&self, id: &str) -> Result<Option<Vec<u8>>> {
        match self.sizes(&[id])?.remove(id).flatten() {
            Some(size) if size <= SMALL => Ok(self.blobs(&[id], SMALL as usize + 128)?.remove(id)),
            _ => Ok(None),
        }
    }

    /// The contents of these blobs, by id, read by one `cat-file --batch`, which may print at
    /// most `cap` bytes (the blobs' sizes, from [`Git::sizes`], and a line each).
    pub fn blobs(&self, ids: &[&str], cap: usize) -> Result<HashMap<String, Vec<u8>>> {
        let mut found = HashMap::new();
        if ids.is_empty() {
            return Ok(found);
        }
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let out = self.run_capped(&["cat-file", "--batch"], Some(input.as_bytes()), LOCAL, cap)?;
        let mut rest = &out[..];
        while !rest.is_empty() {
            let end = rest.iter().position(|b| *b == b'\n').context("cat-file")?;
            let head = text(&rest[..end]);
            rest = &rest[end + 1..];
            let fields: Vec<&str> = head.split(' ').collect();
            match fields[..] {
                [id, "blob", size] => {
                    let size: usize = size.parse()?;
                    let body = rest.get(..size).context("cat-file cut short")?;
                    found.insert(id.to_string(), body.to_vec());
                    rest = rest.get(size + 1..).unwrap_or_default();
                }
                [_, "missing"] => {}
                _ => bail!("cat-file said {head}"),
            }
        }
        Ok(found)
    }

    /// Keeps, in one pack, every object a ref here reaches but `refused`, and deletes every
    /// other object file: the older versions of chunks written again (ours, and other
    /// machines' fetched before they wrote theirs again), so that the data dir keeps no copy
    /// of what was forgotten, sealed or not; and the chunks refused, so that a remote's
    /// garbage does not stay in the data dir. `git gc` would not do: it keeps whatever a ref
    /// reaches, and fails on an object left out before.
    pub fn repack(&self, refused: &HashSet<String>) -> Result<()> {
        self.pack_without(refused)
            .context("cannot drop the older and the refused chunks from the sync repository")
    }

    fn pack_without(&self, refused: &HashSet<String>) -> Result<()> {
        let listing = self.run(
            &["rev-list", "--objects", "--all", "--missing=print"],
            None,
            self.timeout,
        )?;
        // `?id`: left out before.
        let keep: String = text(&listing)
            .lines()
            .filter(|line| !line.starts_with('?'))
            .filter_map(|line| line.split(' ').next())
            .filter(|id| !refused.contains(*id))
            .map(|id| format!("{id}\n"))
            .collect();
        let objects = self.repo.join("objects");
        let base = objects.join("pack").join("pack");
        let base = base.to_str().context("the data dir's path is not UTF-8")?;
        let out = self.run(
            &["pack-objects", "-q", base],
            Some(keep.as_bytes()),
            self.timeout,
        )?;
        let made = format!("pack-{}.", text(&out).trim());
        for entry in std::fs::read_dir(objects.join("pack"))? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("pack-") && !name.starts_with(&made) {
                std::fs::remove_file(objects.join("pack").join(&*name))?;
            }
        }
        // Loose objects: each of what was kept is in the pack now.
        for entry in std::fs::read_dir(&objects)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                std::fs::remove_dir_all(entry.path())?;
            }
        }
        Ok(())
    }

    pub fn write_blob(&self, bytes: &[u8]) -> Result<String> {
        let out = self.run(&["hash-object", "-w", "--stdin"], Some(bytes), LOCAL)?;
        Ok(text(&out).trim().to_string())
    }

    /// A tree of these entries (names without folders).
    pub fn mktree(&self, entries: &[Entry]) -> Result<String> {
        let input: String = entries
            .iter()
            .map(|e| format!("{} {} {}\t{}\0", e.mode, e.kind, e.id, e.path))
            .collect();
        let out = self.run(&["mktree", "-z"], Some(input.as_bytes()), LOCAL)?;
        Ok(text(&out).trim().to_string())
    }

    /// A commit of `tree` on top of `parent` (none: a history of its own).
    pub fn commit(&self, tree: &str, parent: Option<&str>) -> Result<String> {
        let mut args = vec!["commit-tree", "--no-gpg-sign", tree];
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        let out = self.run(&args, Some(MESSAGE.as_bytes()), LOCAL)?;
        Ok(text(&out).trim().to_string())
    }

    /// Makes `commit` the remote's branch, only if the branch is still at `expected` (`None`:
    /// absent): a machine that pushed meanwhile makes this fail, never lose its work.
    pub fn push(&self, url: &str, commit: &str, expected: Option<&str>) -> Result<()> {
        let lease = format!("--force-with-lease={BRANCH}:{}", expected.unwrap_or(""));
        let refspec = format!("{commit}:{BRANCH}");
        self.run(
            &["push", "--quiet", "--no-verify", &lease, url, &refspec],
            None,
            self.timeout,
        )?;
        self.local(&["update-ref", TIP, commit])?;
        Ok(())
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The line of git's stderr that says what went wrong: its last `fatal:`/`error:` line, else
/// its last line.
fn said(stderr: &[u8]) -> Option<String> {
    let text = text(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .map(|l| l.to_string())
}
