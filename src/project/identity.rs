//! What a project is called wherever it is checked out. Sync carries it with each session, so
//! that a machine whose checkout of the repository sits at another path files the sessions
//! another machine recorded under its own checkout, and `sessions` and `search` name a project
//! from another machine by it rather than by a path that means nothing here.
//!
//! In order: the normalised URL of the repository's main remote (read from `.git/config`), else
//! the hash of its first commit (the root of the first-parent history of `HEAD`, the same in
//! every clone and copy, asked of `git`), else nothing, and the project is known by its path.
//! Never asked on the hook path: sync and the maintenance process ask, once a folder a process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::small_text;
use crate::child::{self, Pipes};

/// What an identity made of a first commit starts with.
const COMMIT: &str = "commit/";

/// How long `git` may take to find the first commit (a long history without a commit graph
/// takes a while; sync and maintenance are not waited for by anyone).
const GIT_WAIT: Duration = Duration::from_secs(10);

/// The identity of the repository whose work tree's top is `root`, the same on every machine
/// whatever the path of the checkout: the URL of its `origin` remote (else of its first
/// remote), normalised (`git@github.com:Acme/Shop.git`, `https://user:token@github.com/Acme/Shop`
/// and `ssh://git@github.com/Acme/Shop/` are all `github.com/Acme/Shop`; a credential is never
/// part of it); else `commit/` and the hash of its first commit. `None` for a folder that is
/// not a repository's top, or an empty or shallow repository: the project is then known by its
/// path. Each folder is looked up once a process.
pub fn identity(root: &Path) -> Option<String> {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, Option<String>>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(found) = known.lock().ok().and_then(|k| k.get(root).cloned()) {
        return found;
    }
    let found = remote(root).or_else(|| first_commit(root));
    if let Ok(mut known) = known.lock() {
        known.insert(root.to_path_buf(), found.clone());
    }
    found
}

/// A short name for the project `dir` recorded with `identity`: the owner and name of a
/// hosted repository (`acme/shop`), else the last part of a remote's path, else the folder's
/// name.
pub fn name(identity: Option<&str>, dir: &str) -> String {
    let folder = || {
        Path::new(dir)
            .file_name()
            .map_or_else(|| dir.to_string(), |n| n.to_string_lossy().into_owned())
    };
    match identity {
        Some(id) if !id.starts_with(COMMIT) && !id.starts_with('/') => {
            let path = id.split_once('/').map_or(id, |(_, path)| path);
            if path.is_empty() {
                id.to_string()
            } else {
                path.to_string()
            }
        }
        Some(id) if id.starts_with('/') => id.rsplit('/').next().unwrap_or(id).to_string(),
        _ => folder(),
    }
}

/// How `status` says what a project is known by on every machine.
pub fn describe(identity: &str) -> String {
    match identity.strip_prefix(COMMIT) {
        Some(hash) => format!("its first commit {}", &hash[..hash.len().min(12)]),
        None => identity.to_string(),
    }
}

/// The hash of the first commit of `HEAD`'s first-parent history, from `git`. A shallow
/// clone's oldest commit is not the repository's first, so it has none.
fn first_commit(root: &Path) -> Option<String> {
    let git_dir = root.join(".git");
    if !git_dir.is_dir() || git_dir.join("shallow").exists() {
        return None;
    }
    let mut command = Command::new("git");
    // Only what finds git and the user's safe.directory: nothing of a caller's repository
    // (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, ...) may point it elsewhere.
    command.env_clear();
    for var in ["PATH", "HOME", "XDG_CONFIG_HOME"] {
        if let Some(value) = std::env::var_os(var) {
            command.env(var, value);
        }
    }
    command.arg("--git-dir").arg(&git_dir).args([
        "rev-list",
        "--first-parent",
        "--max-parents=0",
        "HEAD",
    ]);
    let pipes = Pipes {
        stdout: Some(4096),
        ..Pipes::default()
    };
    let out = child::run(command, pipes, GIT_WAIT).ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let hash = text.lines().next()?.trim();
    (out.status.success() && hash.len() >= 40 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("{COMMIT}{hash}"))
}

/// The normalised URL of `origin`, else of the first remote in `.git/config`.
fn remote(root: &Path) -> Option<String> {
    let config = small_text(&root.join(".git").join("config"), CONFIG_FILE)?;
    let mut remote: Option<&str> = None;
    let mut first: Option<String> = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            remote = line
                .strip_prefix("[remote \"")
                .and_then(|rest| rest.strip_suffix("\"]"));
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (Some(name), "url") = (remote, key.trim()) else {
            continue;
        };
        let url = normalised(value.trim())?;
        if name == "origin" {
            return Some(url);
        }
        first.get_or_insert(url);
    }
    first
}

/// Bytes read of a repository's `config`.
const CONFIG_FILE: u64 = 64 * 1024;

/// A remote's URL without its scheme, credentials, `.git` or trailing slash, its host in lower
/// case; a local path stays a path.
fn normalised(url: &str) -> Option<String> {
    let url = url.trim_matches('"');
    let (host_and_path, scp) = match url.split_once("://") {
        Some((_, rest)) => (rest, false),
        // `git@host:owner/repo`: scp-like, when the part before `:` has no `/`.
        None => match url.split_once(':') {
            Some((host, _)) if !host.contains('/') && !url.starts_with('/') => (url, true),
            _ => {
                return Some(
                    url.trim_end_matches('/')
                        .trim_end_matches(".git")
                        .to_string(),
                );
            }
        },
    };
    let without_user = match host_and_path.split_once('@') {
        Some((user, rest)) if !user.contains('/') => rest,
        _ => host_and_path,
    };
    let (host, path) = if scp {
        without_user.split_once(':')?
    } else {
        without_user.split_once('/').unwrap_or((without_user, ""))
    };
    // A port is not part of what the repository is.
    let host = host.split(':').next().unwrap_or(host).to_lowercase();
    let path = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .trim_end_matches('/');
    (!host.is_empty()).then(|| format!("{host}/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remotes_url_is_the_same_however_it_is_written_and_never_holds_a_credential() {
        for url in [
            "git@github.com:Acme/Shop.git",
            "https://user:tok3n@GitHub.com/Acme/Shop",
            "ssh://git@github.com:22/Acme/Shop/",
            "https://github.com/Acme/Shop.git",
        ] {
            assert_eq!(
                normalised(url).as_deref(),
                Some("github.com/Acme/Shop"),
                "{url}"
            );
        }
        assert_eq!(
            normalised("/srv/git/shop.git").as_deref(),
            Some("/srv/git/shop")
        );
    }

    #[test]
    fn the_remote_is_origins_url_else_the_first_remotes() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(".git")).unwrap();
        assert_eq!(remote(tmp.path()), None);
        let config = "[core]\n\tbare = false\n[remote \"fork\"]\n\turl = git@github.com:me/shop.git\n\
                      [remote \"origin\"]\n\turl = https://github.com/acme/shop\n";
        std::fs::write(tmp.path().join(".git/config"), config).unwrap();
        assert_eq!(remote(tmp.path()).as_deref(), Some("github.com/acme/shop"));
        let fork_only = "[remote \"fork\"]\n\turl = git@github.com:me/shop.git\n";
        std::fs::write(tmp.path().join(".git/config"), fork_only).unwrap();
        assert_eq!(remote(tmp.path()).as_deref(), Some("github.com/me/shop"));
    }

    #[test]
    fn a_project_is_named_by_its_repository_else_its_folder() {
        let dir = "/home/bob/src/shop-b";
        assert_eq!(name(Some("github.com/acme/shop"), dir), "acme/shop");
        assert_eq!(name(Some("/srv/git/shop"), dir), "shop");
        assert_eq!(name(Some("commit/0123abcd"), dir), "shop-b");
        assert_eq!(name(None, dir), "shop-b");
    }
}
