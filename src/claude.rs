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
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let mut child = spawn_version(claude).map_err(|err| format!("it does not run: {err}"))?;
    let mut stdout = child.stdout.take().expect("stdout was piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.by_ref().take(64 * 1024).read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`--version` gave no answer within {} s",
                    VERSION_TIMEOUT.as_secs()
                ));
            }
        }
    }
    let text = reader.join().unwrap_or_default();
    Version::find(&text).ok_or_else(|| {
        let first = text.lines().next().unwrap_or("").trim();
        format!("`--version` printed {first:?}")
    })
}

/// Starts `claude --version`. A program being replaced (an update in progress) refuses to start
/// for a moment with "Text file busy": that is worth two more tries, not a wrong answer.
fn spawn_version(claude: &Path) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        let spawned = Command::new(claude)
            .arg("--version")
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        match spawned {
            Err(err) if is_text_busy(&err) && tries < 2 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

#[cfg(unix)]
fn is_text_busy(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(libc::ETXTBSY)
}

#[cfg(not(unix))]
fn is_text_busy(_err: &std::io::Error) -> bool {
    false
}

/// Runs `claude args…`; its stdout when it succeeds, else what it said (stderr's first line).
pub fn run(claude: &Path, args: &[String], timeout: Duration) -> Result<String, String> {
    let mut child = Command::new(claude)
        .args(args)
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("{} does not run: {err}", claude.display()))?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(1 << 20).read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`claude {}` gave no answer within {} s",
                    args.join(" "),
                    timeout.as_secs()
                ));
            }
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if status.success() {
        return Ok(stdout);
    }
    let said = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(format!(
        "`claude {}` failed ({status}): {said}",
        args.join(" ")
    ))
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
