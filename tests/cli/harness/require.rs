//! What a test needs from the machine beyond the binary (python3, root, the real Claude Code
//! CLI): where it is missing, the test says so and passes as skipped, so that `cargo test`
//! works on a developer's laptop; where `CLAUDE_MEM_TEST_REQUIRE_ALL=1` (CI sets it in
//! `.ci/run`), a missing tool fails the test instead, so that a skip cannot hide there.

use std::io::Write as _;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};

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
/// mounting a file system, making a device node). CI runs the tests as root on Linux. The
/// tests that need it are Linux's only (compiled out elsewhere, so that a run that requires
/// everything can hold on macOS too): they run other users' processes with util-linux's
/// `setpriv`, give files to uid 65534, mount a tmpfs and make Linux's `/dev/null` node.
#[cfg(target_os = "linux")]
pub fn require_root(doing: &str) -> bool {
    require((!super::is_root()).then(|| format!("{doing} needs root")))
}

/// A small tmpfs of `size` (as mount's `size=`, e.g. "8m") mounted on the empty folder `dir`
/// for `doing`, unmounted when the guard is dropped; `None` (skipped, see [`require`]) when
/// the tests do not run as root or the mount fails (a container without the right to mount).
#[cfg(target_os = "linux")]
pub fn require_tmpfs(dir: &Path, size: &str, doing: &str) -> Option<Unmount> {
    if !require_root(doing) {
        return None;
    }
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    let why = || format!("{doing}: could not mount a tmpfs on {}", dir.display());
    require((!mounted).then(why)).then(|| Unmount(dir.to_path_buf()))
}

/// A mount of [`require_tmpfs`]; unmounts it when dropped, whether the test passed or not.
#[cfg(target_os = "linux")]
pub struct Unmount(PathBuf);

#[cfg(target_os = "linux")]
impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}
