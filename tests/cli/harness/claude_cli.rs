//! The real Claude Code CLI the tests drive: the one `CLAUDE_MEM_E2E_CLAUDE` names (`.ci/run`
//! installs the pinned release and sets it; then it must work), else the pinned release
//! installed under `target/e2e/`. A plain `cargo test` touches no network: the install (about
//! 175 MB from npm) is made only when asked, with `CLAUDE_MEM_E2E_INSTALL=1`, once for all the
//! tests that need it. Without the CLI, or where it cannot be installed (no npm, no network),
//! `find` says which test, why, and how to run it, and the test passes as skipped, or fails
//! under `require::REQUIRE_ALL`.
// The install notices are for the person reading the test output.
#![allow(clippy::print_stderr)]

use std::env;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

pub use super::wait::wait_or_kill;

/// The Claude Code release the tests are pinned to (also in `.ci/run`, which installs it).
pub const CLAUDE_CODE_VERSION: &str = "2.1.330";
/// Path of a `claude` executable to use instead of the cached install; set, it must work.
const CLAUDE_VAR: &str = "CLAUDE_MEM_E2E_CLAUDE";
/// Set to 1, a missing cached install is made from npm (the network, 175 MB); unset, the tests
/// that need it skip.
const INSTALL_VAR: &str = "CLAUDE_MEM_E2E_INSTALL";
/// A first install downloads about 175 MB (11 s here); from npm's cache it takes seconds.
const INSTALL_LIMIT: Duration = Duration::from_secs(240);

/// The Claude Code CLI of the tests.
const CLAUDE: Pinned = Pinned {
    name: "Claude Code",
    var: CLAUDE_VAR,
    package: "@anthropic-ai/claude-code",
    version: CLAUDE_CODE_VERSION,
    bin: "claude",
    dir: "claude-code",
    size: "175 MB",
};

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    // Every test of the run asks; the first one installs, the others wait for it.
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    CLAUDE.find(&FOUND)
}

/// A coding agent's CLI that the tests pin and install from npm: Claude Code's, Codex's.
pub(super) struct Pinned {
    /// As a person names it.
    pub name: &'static str,
    /// The variable that names an executable to use instead of the cached install; set, it
    /// must work.
    pub var: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    /// The executable in the package's `node_modules/.bin`.
    pub bin: &'static str,
    /// The install's folder under `target/<host tuple>/e2e/`, before `-<version>`.
    pub dir: &'static str,
    /// About how much an install downloads, for the skip message.
    pub size: &'static str,
}

impl Pinned {
    /// The CLI, found once a run (`found`), or `None` after saying why the test skips.
    pub(super) fn find(
        &self,
        found: &'static OnceLock<Result<PathBuf, String>>,
    ) -> Option<PathBuf> {
        let found = found.get_or_init(|| self.locate());
        let missing = found.as_ref().err().map(|why| {
            format!(
                "no real {} CLI: {why}. To run it: {INSTALL_VAR}=1 cargo test installs it from \
                 npm (about {}), or {}=/path/to/{} names one",
                self.name, self.size, self.var, self.bin
            )
        });
        super::require(missing)
            .then(|| found.clone().ok())
            .flatten()
    }

    fn locate(&self) -> Result<PathBuf, String> {
        let (name, version) = (self.name, self.version);
        if let Some(path) = env::var_os(self.var) {
            // CI asked for this one: not finding it is a failure, not a skip.
            let path = PathBuf::from(path);
            let found = self.version_of(&path).unwrap_or_else(|err| {
                panic!("{}={} does not run: {err}", self.var, path.display())
            });
            eprintln!("e2e: {name} {found} from {}", self.var);
            return Ok(path);
        }
        let dir = self.cache_dir();
        let bin = dir.join("node_modules/.bin").join(self.bin);
        if !bin.exists() && env::var_os(INSTALL_VAR).is_none_or(|v| v != "1") {
            // Installed through a staging folder renamed into place: no half install is found.
            return Err(format!(
                "{name} {version} is not installed in {}",
                dir.display()
            ));
        }
        // Another test run (or `.ci/run`) may be installing it this moment: take turns.
        let _turn = install_lock(&dir)?;
        if !bin.exists() {
            npm_install_package(&dir, &format!("{}@{version}", self.package))
                .map_err(|why| format!("{name} {version} could not be installed: {why}"))?;
        }
        match self.version_of(&bin) {
            // "2.1.330 (Claude Code)", "codex-cli 0.169.0".
            Ok(found) if found.split_whitespace().any(|word| word == version) => Ok(bin),
            Ok(found) => Err(format!(
                "{} is {found}, not {name} {version}; delete {}",
                bin.display(),
                dir.display()
            )),
            Err(err) => Err(format!(
                "{} does not run ({err}); delete {} to reinstall",
                bin.display(),
                dir.display()
            )),
        }
    }

    /// Where the pinned CLI is installed, by the tests when asked or by `.ci/run` (which also
    /// names it in the CLI's variable): `target/<host tuple>/e2e/<dir>-<version>`.
    fn cache_dir(&self) -> PathBuf {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
        target
            .join("e2e")
            .join(format!("{}-{}", self.dir, self.version))
    }

    /// `<bin> --version`, with none of the developer's environment.
    fn version_of(&self, bin: &Path) -> Result<String, String> {
        let mut child = Command::new(bin)
            .arg("--version")
            .env_clear()
            .env("PATH", env::var_os("PATH").unwrap_or_default())
            .env(
                "HOME",
                self.cache_dir()
                    .parent()
                    .expect("the cache dir has a parent"),
            )
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let status =
            wait_or_kill(&mut child, Duration::from_secs(60)).map_err(|e| e.to_string())?;
        // One short line: it fits in the pipe, so waiting before reading cannot deadlock.
        let mut out = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_string(&mut out);
        }
        match status {
            Some(status) if status.success() => Ok(out.trim().to_string()),
            Some(status) => Err(format!("--version exited with {status}")),
            None => Err("--version hung".into()),
        }
    }
}

/// An exclusive lock on a file beside the install `dir`, waited for; held until dropped.
#[cfg(unix)]
pub(super) fn install_lock(dir: &Path) -> Result<File, String> {
    let parent = dir.parent().expect("the cache dir has a parent");
    fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let name = dir
        .file_name()
        .expect("the cache dir has a name")
        .to_string_lossy();
    let path = dir.with_file_name(format!("{name}.lock"));
    let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("lock {}: {e}", path.display()))?;
    Ok(file)
}

#[cfg(not(unix))]
pub(super) fn install_lock(_dir: &Path) -> Result<(), String> {
    Ok(())
}

/// Installs npm's `package` (`name@version`) into `dir` through a staging folder, so an
/// interrupted install never leaves a half-filled `dir` behind. The caller holds the install
/// lock.
pub(super) fn npm_install_package(dir: &Path, package: &str) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy();
    let staging = dir.with_file_name(format!("{name}.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(|e| e.to_string())?;
    let log_path = staging.join("npm.log");
    let log = File::create(&log_path).map_err(|e| e.to_string())?;
    eprintln!("e2e: installing {package} into {}", dir.display());
    let spawned = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
        ])
        // Offline, fail at once instead of retrying for minutes.
        .args(["--fetch-retries=0", "--fetch-timeout=30000"])
        // The package asks for a newer Node than it needs: the CLI is a native executable.
        .arg("--engine-strict=false")
        .arg("--prefix")
        .arg(&staging)
        .arg(package)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn();
    let outcome = match spawned {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err("npm is not on PATH".into()),
        Err(err) => Err(format!("npm did not start: {err}")),
        Ok(mut child) => match wait_or_kill(&mut child, INSTALL_LIMIT) {
            Ok(Some(status)) if status.success() => Ok(()),
            Ok(Some(status)) => {
                let log = fs::read_to_string(&log_path).unwrap_or_default();
                let errors: Vec<&str> = log
                    .lines()
                    .filter(|l| l.to_ascii_lowercase().contains("err"))
                    .take(3)
                    .collect();
                Err(format!(
                    "npm install exited with {status}: {}",
                    errors.join(" / ")
                ))
            }
            Ok(None) => Err(format!("npm install took longer than {INSTALL_LIMIT:?}")),
            Err(err) => Err(err.to_string()),
        },
    };
    let outcome = outcome.and_then(|()| {
        fs::rename(&staging, dir)
            .map_err(|err| format!("could not move the install into place: {err}"))
    });
    let _ = fs::remove_dir_all(&staging);
    outcome
}
