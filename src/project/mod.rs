//! Which project a folder belongs to. To its people a project is its repository: Claude Code
//! started in `invoices/` or in a linked worktree of the repository is still working on the
//! repository, and must get the same memory as at its top. So a folder belongs to, in order:
//! - a configured root that contains it (`CLAUDE_MEM_PROJECT_ROOTS`, the innermost), or the
//!   nearest folder above it holding a `.claude-mem-project` file: the user's word overrides;
//! - the top of the git work tree it is in, a linked worktree's being its main repository's;
//! - else itself, as before repositories were recognized.
//!
//! Found by reading what git leaves in the tree (`.git`, a worktree's `gitdir:` and
//! `commondir` files), never by running git: the hooks ask on every write. What it reads
//! belongs to the user's checkout and is read bounded; nothing is written.

mod identity;

use std::path::{Path, PathBuf};

pub use identity::{describe as describe_identity, identity, name};

/// The file that makes its folder a project of its own, whatever repository it is in.
pub const MARKER: &str = ".claude-mem-project";

/// The most folders walked up from where a session starts.
const DEPTH: usize = 64;

/// Bytes read of a `.git` file or a `commondir` file (a path and a newline).
const SMALL_FILE: u64 = 4096;

/// A folder's project and why it is that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub root: PathBuf,
    pub why: Why,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A root named in `CLAUDE_MEM_PROJECT_ROOTS`.
    Setting,
    /// A folder holding [`MARKER`].
    Marker,
    /// The top of a git work tree.
    Repository,
    /// A linked worktree (`git worktree add`), which belongs to the repository it was added
    /// from: the worktree's own top.
    Worktree(PathBuf),
    /// No repository, marker or setting: the folder itself.
    Folder,
}

impl Why {
    /// Its name in `status --json`.
    pub fn key(&self) -> &'static str {
        match self {
            Why::Setting => "setting",
            Why::Marker => "marker",
            Why::Repository => "repository",
            Why::Worktree(_) => "worktree",
            Why::Folder => "folder",
        }
    }

    /// Why, in a few words for `status`.
    pub fn describe(&self) -> String {
        match self {
            Why::Setting => "named in CLAUDE_MEM_PROJECT_ROOTS".into(),
            Why::Marker => format!("it holds {MARKER}"),
            Why::Repository => "the top of its git repository".into(),
            Why::Worktree(top) => {
                format!("the repository of the linked worktree {}", top.display())
            }
            Why::Folder => "the folder itself (not in a git repository)".into(),
        }
    }
}

/// The project of `dir` (an absolute path), with the configured `roots`.
pub fn of(dir: &Path, roots: &[PathBuf]) -> Project {
    if let Some(root) = roots
        .iter()
        .filter(|root| dir.starts_with(root))
        .max_by_key(|root| root.as_os_str().len())
    {
        return Project {
            root: root.clone(),
            why: Why::Setting,
        };
    }
    for level in dir.ancestors().take(DEPTH) {
        if is_file(&level.join(MARKER)) {
            return Project {
                root: level.to_path_buf(),
                why: Why::Marker,
            };
        }
        let git = level.join(".git");
        match std::fs::symlink_metadata(&git) {
            Ok(meta) if meta.is_dir() => {
                return Project {
                    root: level.to_path_buf(),
                    why: Why::Repository,
                };
            }
            Ok(meta) if meta.is_file() => return linked(level, &git),
            _ => {}
        }
    }
    Project {
        root: dir.to_path_buf(),
        why: Why::Folder,
    }
}

/// A work tree whose `.git` is a file: a linked worktree (its git dir names a common dir, the
/// main repository's `.git`) belongs to the main work tree; a submodule, or what cannot be
/// read, is a repository of its own.
fn linked(level: &Path, git: &Path) -> Project {
    let own = Project {
        root: level.to_path_buf(),
        why: Why::Repository,
    };
    let Some(gitdir) = small(git).and_then(|text| {
        text.lines()
            .next()
            .and_then(|line| line.strip_prefix("gitdir:"))
            .map(|path| level.join(path.trim()))
    }) else {
        return own;
    };
    let Some(common) = small(&gitdir.join("commondir")).map(|text| gitdir.join(text.trim())) else {
        return own;
    };
    let common = normal(&common);
    match (common.file_name(), common.parent()) {
        (Some(name), Some(main)) if name == ".git" && main.join(".git").is_dir() => Project {
            root: main.to_path_buf(),
            why: Why::Worktree(level.to_path_buf()),
        },
        _ => own,
    }
}

/// The text of a small regular file, if it is one.
fn small(path: &Path) -> Option<String> {
    small_text(path, SMALL_FILE)
}

/// The text of a regular file of at most `most` bytes, if it is one.
fn small_text(path: &Path, most: u64) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > most {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(most)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
}

/// `path` with its `.` and `..` parts resolved by name, as git writes `commondir` (`../..`).
fn normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktrees_relative_common_dir_is_resolved_by_name() {
        assert_eq!(
            normal(Path::new("/r/.git/worktrees/wt/../..")),
            PathBuf::from("/r/.git")
        );
    }

    #[test]
    fn a_folder_with_nothing_above_it_is_its_own_project() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(of(&dir, &[]).why, Why::Folder);
        std::fs::write(tmp.path().join("a").join(MARKER), "").unwrap();
        assert_eq!(
            of(&dir, &[]),
            Project {
                root: tmp.path().join("a"),
                why: Why::Marker
            }
        );
        assert_eq!(of(&dir, std::slice::from_ref(&dir)).root, dir);
    }
}
