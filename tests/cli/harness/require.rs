//! What a test needs from the machine beyond the binary (python3, root, the real Claude Code
//! CLI): where it is missing, the test says so and passes as skipped, so that `cargo test`
//! works on a developer's laptop; where `CLAUDE_MEM_TEST_REQUIRE_ALL=1` (CI sets it in
//! `.ci/run`), a missing tool fails the test instead, so that a skip cannot hide there.

use std::io::Write as _;

/// Set to 1, a test that lacks what it needs fails instead of passing as skipped.
pub const REQUIRE_ALL: &str = "CLAUDE_MEM_TEST_REQUIRE_ALL";

/// Whether the tests must fail rather than skip.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ALL).is_some_and(|v| v == "1")
}

/// Whether the test can go on; `missing` says what it lacks when it cannot. The caller
/// returns at once on `false`.
pub fn require(missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    assert!(!required(), "{test}: {why} (and {REQUIRE_ALL}=1)");
    // Straight to stderr: the harness keeps a passing test's `eprintln!` from the reader.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: {why}; {REQUIRE_ALL}=1 makes this a failure"
    );
    false
}

/// Whether `program --version` runs here.
pub fn require_program(program: &str) -> bool {
    let runs = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    require((!runs).then(|| format!("no `{program}` on PATH")))
}

/// Whether the tests run as root, which `doing` needs (giving files to another user,
/// mounting a file system, making a device node). CI runs as root.
#[cfg(unix)]
pub fn require_root(doing: &str) -> bool {
    require((!super::is_root()).then(|| format!("{doing} needs root")))
}
