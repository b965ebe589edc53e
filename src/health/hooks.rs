//! Where Claude Code's settings files register our hooks, and which program each one runs.
//!
//! Claude Code reads the user's file (`~/.claude/settings.json`, or the one in
//! `$CLAUDE_CONFIG_DIR`), the project's shared `.claude/settings.json` and its personal
//! `.claude/settings.local.json`, and runs the hooks of all of them. Read leniently: a file
//! that is not plain JSON is reported, not refused (install-hooks refuses it when writing).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::claude::{ClaudeCode, Version};
use crate::config::Config;
use crate::settings::command::{Program, is_our_program, parse_ours};
use crate::settings::merge::{self, Registration};
use crate::settings::{Target, settings_path};

/// Which of Claude Code's settings files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's: every project.
    User,
    /// The project's `.claude/settings.json`, usually shared with a team through git.
    Project,
    /// The project's `.claude/settings.local.json`: personal, never committed.
    Local,
}

/// One settings file and the state of each of our hooks in it.
pub struct HookFile {
    pub path: PathBuf,
    pub scope: Scope,
    /// `None`: the file does not exist. `Some(Err)`: it cannot be read as JSON.
    pub hooks: Option<Result<Vec<HookState>, String>>,
}

impl HookFile {
    /// The hooks of ours it registers (none when it is missing or unreadable).
    pub fn registered(&self) -> impl Iterator<Item = &HookState> {
        let states = match &self.hooks {
            Some(Ok(states)) => states.as_slice(),
            _ => &[],
        };
        states.iter().filter(|s| s.registered)
    }
}

pub struct HookState {
    pub event: &'static str,
    pub hook: &'static str,
    pub registered: bool,
    /// The program of each handler of ours for it that names one plainly (as written in the
    /// file: quoted in a shell command, bare in an exec-form one).
    pub programs: Vec<String>,
}

/// What a program path in a settings file runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    ThisBinary,
    /// Another executable claude-mem (a second install, a development build).
    OtherCopy(PathBuf),
    /// Nothing: the binary was removed or moved (a stale path after a reinstall).
    Missing(PathBuf),
    /// A file that cannot be run.
    NotExecutable(PathBuf),
}

/// The user's settings file (when there is a home to find it in), and the project's two when
/// they exist. `hooks` is what we register, each with the Claude Code version that knows it.
pub fn files(config: &Config, hooks: &[(Registration, Option<Version>)]) -> Vec<HookFile> {
    let args = |project: Option<PathBuf>, local: bool| Target {
        project,
        local,
        settings: None,
    };
    let project = config
        .project_dir
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let mut paths: Vec<(PathBuf, Scope)> = settings_path(&args(None, false))
        .into_iter()
        .map(|p| (p, Scope::User))
        .collect();
    for (local, scope) in [(false, Scope::Project), (true, Scope::Local)] {
        let path = project
            .as_ref()
            .and_then(|dir| settings_path(&args(Some(dir.clone()), local)).ok());
        if let Some(path) = path.filter(|p| p.exists() && !paths.iter().any(|(q, _)| q == p)) {
            paths.push((path, scope));
        }
    }
    paths
        .into_iter()
        .map(|(path, scope)| HookFile {
            hooks: read_hooks(&path, hooks),
            path,
            scope,
        })
        .collect()
}

fn read_hooks(
    path: &Path,
    hooks: &[(Registration, Option<Version>)],
) -> Option<Result<Vec<HookState>, String>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => return Some(Err(format!("cannot read it ({err})"))),
    };
    let root: Map<String, Value> = match serde_json::from_slice(&bytes) {
        Ok(root) => root,
        Err(err) => {
            return Some(Err(format!(
                "not plain JSON ({err}): Claude Code ignores it"
            )));
        }
    };
    Some(Ok(hooks
        .iter()
        .map(|(registration, _)| HookState {
            event: registration.event,
            hook: registration.hook,
            registered: merge::is_registered(&root, registration),
            programs: programs(&root, registration.event, registration.hook),
        })
        .collect()))
}

/// The programs of the handlers of ours for `hook` on `event`: an exec-form handler's
/// `command`, or the program word of a shell command line that is ours alone.
fn programs(root: &Map<String, Value>, event: &str, hook: &str) -> Vec<String> {
    let groups = root
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array);
    groups
        .into_iter()
        .flatten()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(|handler| {
            let command = handler.get("command")?.as_str()?;
            match handler.get("args").and_then(Value::as_array) {
                Some(args) => (is_our_program(command)
                    && args.first().and_then(Value::as_str) == Some("hook")
                    && args.get(1).and_then(Value::as_str) == Some(hook))
                .then(|| command.to_string()),
                None => {
                    let ours = parse_ours(command)?;
                    (ours.hook == hook)
                        .then(|| command[ours.program_start..ours.program_end].to_string())
                }
            }
        })
        .collect()
}

/// Whether a program as written in a settings file runs `exe`.
pub fn runs(program: &str, exe: Option<&Path>) -> bool {
    let Some(exe) = exe else {
        return false;
    };
    if Program::of(exe).is_ok_and(|p| p.shell == program || p.exec == program) {
        return true;
    }
    let path = unquote(program);
    match (fs::canonicalize(&path), fs::canonicalize(exe)) {
        (Ok(a), Ok(b)) => a == b,
        _ => Path::new(&path) == exe,
    }
}

/// What a program as written in a settings file runs, this binary being `exe`.
pub fn what_runs(program: &str, exe: Option<&Path>) -> Runs {
    if runs(program, exe) {
        return Runs::ThisBinary;
    }
    let path = PathBuf::from(unquote(program));
    match fs::metadata(&path) {
        Err(_) => Runs::Missing(path),
        Ok(meta) if !is_executable(&meta) => Runs::NotExecutable(path),
        Ok(_) => Runs::OtherCopy(path),
    }
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(meta: &fs::Metadata) -> bool {
    meta.is_file()
}

/// A shell word as sh reads it: `"..."` (with `\` escapes) or `'...'` or bare.
pub fn unquote(word: &str) -> String {
    if let Some(inner) = word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        return inner.to_string();
    }
    let Some(inner) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) else {
        return word.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next @ ('"' | '\\' | '$' | '`'))) => {
                out.push(next);
                chars.next();
            }
            (c, _) => out.push(c),
        }
    }
    out
}

/// Events of ours registered only with a recent enough Claude Code that no file has, with why
/// that is fine (or `None` when it is not: the installed Claude Code knows the event).
pub fn missing_optional(
    files: &[HookFile],
    hooks: &[(Registration, Option<Version>)],
    claude: &ClaudeCode,
) -> Vec<(&'static str, Option<String>)> {
    let mut missing = Vec::new();
    for (registration, since) in hooks {
        let Some(since) = since else { continue };
        let anywhere = files
            .iter()
            .any(|f| f.registered().any(|s| s.event == registration.event));
        if !anywhere {
            missing.push((registration.event, claude.allows(*since).err()));
        }
    }
    missing
}
