//! The real Codex CLI the end-to-end test drives: the one `CLAUDE_MEM_E2E_CODEX` names
//! (`.ci/run` installs the pinned release and sets it; then it must work), else the pinned
//! release installed under `target/<host tuple>/e2e/`. As for Claude Code's (see
//! `claude_cli`), a plain `cargo test` touches no network: `CLAUDE_MEM_E2E_INSTALL=1` installs
//! it from npm (`@openai/codex`, about 400 MB unpacked with its native binary), and without it
//! the test says why and passes as skipped, or fails under `require::REQUIRE_ALL` (the finding
//! and installing is `claude_cli::Pinned`).

use std::path::PathBuf;
use std::sync::OnceLock;

use super::claude_cli::Pinned;

/// The Codex release the test is pinned to (also in `.ci/run`, which installs it).
pub const CODEX_VERSION: &str = "0.169.0";

const CODEX: Pinned = Pinned {
    name: "Codex",
    var: "CLAUDE_MEM_E2E_CODEX",
    package: "@openai/codex",
    version: CODEX_VERSION,
    bin: "codex",
    dir: "codex",
    size: "400 MB",
};

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    CODEX.find(&FOUND)
}
