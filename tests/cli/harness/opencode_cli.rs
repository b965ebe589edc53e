//! The real OpenCode CLI the end-to-end test drives: the one `CLAUDE_MEM_E2E_OPENCODE` names
//! (`.ci/run` installs the pinned release and sets it; then it must work), else the pinned
//! release installed under `target/<host tuple>/e2e/`. As for Claude Code's (see
//! `claude_cli`), a plain `cargo test` touches no network: `CLAUDE_MEM_E2E_INSTALL=1` installs
//! it from npm (`opencode-ai` and its native packages, about 350 MB unpacked), and without it
//! the test says why and passes as skipped, or fails under `require::REQUIRE_ALL`.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::claude_cli::Pinned;

/// The OpenCode release the test is pinned to (also in `.ci/run`, which installs it).
pub const OPENCODE_VERSION: &str = "1.18.33";

const OPENCODE: Pinned = Pinned {
    name: "OpenCode",
    var: "CLAUDE_MEM_E2E_OPENCODE",
    package: "opencode-ai",
    version: OPENCODE_VERSION,
    bin: "opencode",
    dir: "opencode",
    size: "350 MB",
};

/// The CLI to drive, or `None` (after saying why) when the test has to be skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    OPENCODE.find(&FOUND)
}
