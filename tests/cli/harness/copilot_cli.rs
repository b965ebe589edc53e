//! The real GitHub Copilot CLI the end-to-end test drives: the one `CLAUDE_MEM_E2E_COPILOT`
//! names (`.ci/run` installs the pinned release and sets it; then it must work), else the
//! pinned release installed under `target/<host tuple>/e2e/`. As for Claude Code's (see
//! `claude_cli`), a plain `cargo test` touches no network: `CLAUDE_MEM_E2E_INSTALL=1` installs
//! it from npm (`@github/copilot` and its native package, about 190 MB unpacked), and without
//! it the test says why and passes as skipped, or fails under `require::REQUIRE_ALL`.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::claude_cli::Pinned;

/// The Copilot CLI release the test is pinned to (also in `.ci/run`, which installs it).
pub const COPILOT_VERSION: &str = "1.0.102";

const COPILOT: Pinned = Pinned {
    name: "GitHub Copilot CLI",
    var: "CLAUDE_MEM_E2E_COPILOT",
    package: "@github/copilot",
    version: COPILOT_VERSION,
    bin: "copilot",
    dir: "copilot",
    size: "190 MB",
};

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    COPILOT.find(&FOUND)
}
