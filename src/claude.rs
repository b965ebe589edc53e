//! The `claude` program: where it is, which version it is, and running it to ask something
//! (`claude mcp add`, …) without ever waiting on it for good. Install-hooks, doctor, the MCP
//! registration and the compressor all find it here, the same way.
//!
//! Which Claude Code the user has matters first so that we never write an event name it would
//! reject.
//! Before v2.1.101 an event name Claude Code did not know made it ignore the whole settings
//! file, hooks and permissions included. So an event that not every version knows is written
//! only when `claude --version` says it is safe; when no Claude Code can be found, it is left
//! out, and running install-hooks again later adds it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::child::{self, Failed, Pipes};

/// Names the claude executable to ask, instead of looking on PATH.
pub const CLAUDE_BIN_VAR: &str = "CLAUDE_MEM_CLAUDE_BIN";

/// A `claude --version` that has not answered by then is taken as no answer.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// The first `X.Y.Z` word of `claude --version`'s output (`2.1.330 (Claude Code)`).
    fn find(text: &str) -> Option<Version> {
        text.split_whitespace().find_map(|word| {
            let mut parts = word.split('.').map(|p| p.parse::<u64>().ok());
            let version = Version(parts.next()??, parts.next()??, parts.next()??);
            parts.next().is_none().then_some(version)
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// What we know about the user's Claude Code.
pub enum ClaudeCode {
    Found {
        path: PathBuf,
        version: Version,
    },
    /// There is a `claude`, but it did not tell us its version.
    Unknown {
        path: PathBuf,
        why: String,
    },
    Missing,
}

impl ClaudeCode {
    pub fn detect() -> ClaudeCode {
        let Some(path) = locate() else {
            return ClaudeCode::Missing;
        };
        match ask_version(&path) {
            Ok(version) => ClaudeCode::Found { path, version },
            Err(why) => ClaudeCode::Unknown { path, why },
        }
    }

    /// `Ok` when an event (or field) that Claude Code knows since `since` may be written;
    /// otherwise why not, as a short phrase for a report line.
    pub fn allows(&self, since: Version) -> Result<(), String> {
        match self {
            ClaudeCode::Found { version, .. } if *version >= since => Ok(()),
            ClaudeCode::Found { version, .. } => Err(format!(
                "Claude Code {version} would ignore the whole settings file over it (needs \
                 {since})"
            )),
            ClaudeCode::Unknown { path, why } => Err(format!(
                "cannot tell the version of {} ({why}); it needs {since}",
                path.display()
            )),
            ClaudeCode::Missing => Err(format!("no Claude Code found (it needs {since} or later)")),
        }
    }

    /// What makes an event that `allows` refused safe to add: a phrase for "To add it later:
    /// ..., then run install-hooks again".
    pub fn to_allow(&self, since: Version) -> String {
        match self {
            ClaudeCode::Found { .. } => {
                format!("update Claude Code to {since} or later (`claude update`)")
            }
            ClaudeCode::Unknown { path, .. } => {
                format!("make `{} --version` answer", path.display())
            }
            ClaudeCode::Missing => format!("put `claude` on PATH (or set {CLAUDE_BIN_VAR})"),
        }
    }
}

pub fn locate() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CLAUDE_BIN_VAR).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let names: &[&str] = if cfg!(windows) {
        &["claude.exe", "claude.cmd"]
    } else {
        &["claude"]
    };
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    // The native installer's and the old local installer's places, often not on PATH.
    let home = dirs::home_dir()
        .map(|home| {
            vec![
                home.join(".local").join("bin"),
                home.join(".claude").join("local"),
            ]
        })
        .unwrap_or_default();
    on_path
        .iter()
        .chain(&home)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = path.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

fn ask_version(claude: &Path) -> Result<Version, String> {
    let mut command = Command::new(claude);
    command.arg("--version").env("DISABLE_AUTOUPDATER", "1");
    let pipes = Pipes {
        stdout: Some(64 << 10),
        ..Pipes::default()
    };
    let text = match child::run(command, pipes, VERSION_TIMEOUT) {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(Failed::Start(err)) => return Err(format!("it does not run: {err}")),
        Err(Failed::Timeout) => {
            return Err(format!(
                "`--version` gave no answer within {} s",
                VERSION_TIMEOUT.as_secs()
            ));
        }
        Err(Failed::Wait(err)) => {
            return Err(format!("`--version` could not be waited for: {err}"));
        }
        Err(Failed::Held(status)) => {
            return Err(format!(
                "`--version` exited ({status}) but left a process holding its output"
            ));
        }
    };
    Version::find(&text).ok_or_else(|| {
        let first = text.lines().next().unwrap_or("").trim();
        format!("`--version` printed {first:?}")
    })
}

/// Runs `claude args…`; its stdout when it succeeds, else what it said (stderr's first line).
pub fn run(claude: &Path, args: &[String], timeout: Duration) -> Result<String, String> {
    let mut command = Command::new(claude);
    command.args(args).env("DISABLE_AUTOUPDATER", "1");
    let pipes = Pipes {
        stdout: Some(1 << 20),
        stderr: Some(1 << 20),
        ..Pipes::default()
    };
    let asked = || format!("`claude {}`", args.join(" "));
    let out = child::run(command, pipes, timeout).map_err(|failed| match failed {
        Failed::Start(err) => format!("{} does not run: {err}", claude.display()),
        Failed::Timeout => format!("{} gave no answer within {} s", asked(), timeout.as_secs()),
        Failed::Wait(err) => format!("{} could not be waited for: {err}", asked()),
        Failed::Held(status) => format!(
            "{} exited ({status}) but left a process holding its output",
            asked()
        ),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        return Ok(stdout.into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(format!("{} failed ({}): {said}", asked(), out.status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_version_claude_prints() {
        assert_eq!(
            Version::find("2.1.330 (Claude Code)\n"),
            Some(Version(2, 1, 330))
        );
        assert_eq!(Version::find("claude 1.0.62"), Some(Version(1, 0, 62)));
        assert_eq!(Version::find("2.1 (Claude Code)"), None);
        assert_eq!(Version::find("v2.1.3.4"), None);
        assert_eq!(Version::find(""), None);
        assert!(Version(2, 1, 101) > Version(2, 1, 99));
        assert!(Version(2, 2, 0) > Version(2, 1, 330));
    }
}
