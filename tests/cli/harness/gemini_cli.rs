//! The real Gemini CLI the end-to-end test drives: the one `CLAUDE_MEM_E2E_GEMINI` names
//! (`.ci/run` installs the pinned release and sets it; then it must work), else the pinned
//! release installed under `target/<host tuple>/e2e/`. As for Claude Code's (see
//! `claude_cli`), a plain `cargo test` touches no network: `CLAUDE_MEM_E2E_INSTALL=1` installs
//! it from npm (`@google/gemini-cli`, a bundle of JavaScript run by Node, about 100 MB
//! unpacked), and without it the test says why and passes as skipped, or fails under
//! `require::REQUIRE_ALL`.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::claude_cli::Pinned;

/// The Gemini CLI release the test is pinned to (also in `.ci/run`, which installs it).
pub const GEMINI_VERSION: &str = "0.61.0";

const GEMINI: Pinned = Pinned {
    name: "Gemini",
    var: "CLAUDE_MEM_E2E_GEMINI",
    package: "@google/gemini-cli",
    version: GEMINI_VERSION,
    bin: "gemini",
    dir: "gemini-cli",
    size: "100 MB",
};

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    GEMINI.find(&FOUND)
}
