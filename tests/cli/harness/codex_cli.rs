//! The real Codex CLI the end-to-end test drives: the one `CLAUDE_MEM_E2E_CODEX` names
//! (`.ci/run` installs the pinned release and sets it; then it must work), else the pinned
//! release installed under `target/<host tuple>/e2e/`. As for Claude Code's (see
//! `claude_cli`), a plain `cargo test` touches no network: `CLAUDE_MEM_E2E_INSTALL=1` installs
//! it from npm (`@openai/codex`, about 400 MB unpacked with its native binary), and without it
//! the test says why and passes as skipped, or fails under `require::REQUIRE_ALL`.
// The install notices are for the person reading the test output.
#![allow(clippy::print_stderr)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::claude_cli::{install_lock, npm_install_package};
use super::wait::wait_or_kill;

/// The Codex release the test is pinned to (also in `.ci/run`, which installs it).
pub const CODEX_VERSION: &str = "0.169.0";
const CODEX_VAR: &str = "CLAUDE_MEM_E2E_CODEX";
const INSTALL_VAR: &str = "CLAUDE_MEM_E2E_INSTALL";

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = FOUND.get_or_init(locate);
    let missing = found.as_ref().err().map(|why| {
        format!(
            "no real Codex CLI: {why}. To run it: {INSTALL_VAR}=1 cargo test installs it from \
             npm (about 400 MB), or {CODEX_VAR}=/path/to/codex names one"
        )
    });
    super::require(missing)
        .then(|| found.clone().ok())
        .flatten()
}

fn locate() -> Result<PathBuf, String> {
    if let Some(path) = env::var_os(CODEX_VAR) {
        let path = PathBuf::from(path);
        let version = version_of(&path)
            .unwrap_or_else(|err| panic!("{CODEX_VAR}={} does not run: {err}", path.display()));
        eprintln!("e2e: {version} from {CODEX_VAR}");
        return Ok(path);
    }
    let dir = cache_dir();
    let codex = dir.join("node_modules/.bin/codex");
    if !codex.exists() && env::var_os(INSTALL_VAR).is_none_or(|v| v != "1") {
        return Err(format!(
            "Codex {CODEX_VERSION} is not installed in {}",
            dir.display()
        ));
    }
    let _turn = install_lock(&dir)?;
    if !codex.exists() {
        npm_install_package(&dir, &format!("@openai/codex@{CODEX_VERSION}"))
            .map_err(|why| format!("Codex {CODEX_VERSION} could not be installed: {why}"))?;
    }
    match version_of(&codex) {
        Ok(version) if version.ends_with(CODEX_VERSION) => Ok(codex),
        Ok(version) => Err(format!(
            "{} is {version}, not Codex {CODEX_VERSION}; delete {}",
            codex.display(),
            dir.display()
        )),
        Err(err) => Err(format!(
            "{} does not run ({err}); delete {} to reinstall",
            codex.display(),
            dir.display()
        )),
    }
}

/// `target/<host tuple>/e2e/codex-<version>`, beside Claude Code's.
fn cache_dir() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    target.join("e2e").join(format!("codex-{CODEX_VERSION}"))
}

/// `codex --version`, e.g. "codex-cli 0.169.0", with none of the developer's environment.
fn version_of(codex: &Path) -> Result<String, String> {
    let child = Command::new(codex)
        .arg("--version")
        .env_clear()
        .env("PATH", env::var_os("PATH").unwrap_or_default())
        .env(
            "HOME",
            cache_dir().parent().expect("the cache dir has a parent"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut child = child;
    let status = wait_or_kill(&mut child, Duration::from_secs(60)).map_err(|e| e.to_string())?;
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
    }
    match status {
        Some(status) if status.success() => Ok(out.trim().to_string()),
        Some(status) => Err(format!("--version exited with {status}")),
        None => Err("--version hung".into()),
    }
}
