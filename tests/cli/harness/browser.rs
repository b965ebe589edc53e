//! A real browser for the tests of the HTML page: Debian's Chromium (`/usr/bin/chromium`, the
//! `chromium` package) driven by the pinned `playwright-core` from npm, found and installed as
//! the agents' CLIs are (`claude_cli::Pinned`: `CLAUDE_MEM_E2E_PLAYWRIGHT` names one, `.ci/run`
//! installs both). Without either the test says why and passes as skipped, or fails under
//! `require::REQUIRE_ALL`. Nothing here serves the page: it is opened as a file.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::claude_cli::Pinned;
use super::wait_or_kill;

/// The playwright-core release the tests are pinned to (also in `.ci/run`, which installs it).
pub const PLAYWRIGHT_VERSION: &str = "1.65.1";
/// Debian's Chromium, where the `chromium` package puts it.
pub const CHROMIUM: &str = "/usr/bin/chromium";

const PLAYWRIGHT: Pinned = Pinned {
    name: "playwright-core",
    var: "CLAUDE_MEM_E2E_PLAYWRIGHT",
    package: "playwright-core",
    version: PLAYWRIGHT_VERSION,
    bin: "playwright-core",
    dir: "playwright-core",
    size: "10 MB",
};

/// Playwright's `node_modules` folder, or `None` (after saying why) when the test is skipped.
pub fn find() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let bin = PLAYWRIGHT.find(&FOUND)?;
    let runs = Command::new(CHROMIUM)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let missing = (!runs).then(|| {
        format!("no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)")
    });
    if !super::require(missing) {
        return None;
    }
    // node_modules/.bin/playwright-core: the package is beside .bin.
    Some(bin.parent()?.parent()?.to_path_buf())
}

/// Opens `page` in headless Chromium with a fresh profile under `scratch`, types `words` in its
/// search box, and tells what a person would have met (`tests/fixtures/browser/open_page.js`
/// says what).
pub fn open(modules: &Path, page: &Path, scratch: &Path, words: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/browser/open_page.js");
    let profile = scratch.join("chromium-profile");
    std::fs::create_dir_all(&profile).unwrap();
    // Into files, not pipes: nothing has to read them while it runs.
    let (seen, said) = (scratch.join("seen.json"), scratch.join("node.err"));
    let mut child = Command::new("node")
        .arg(script)
        .args([Path::new(CHROMIUM), page, &profile])
        .arg(words)
        .env("NODE_PATH", modules)
        .env("HOME", scratch)
        .stdin(Stdio::null())
        .stdout(File::create(&seen).unwrap())
        .stderr(File::create(&said).unwrap())
        .spawn()
        .expect("node runs");
    let status = wait_or_kill(&mut child, Duration::from_secs(90)).unwrap();
    let said = std::fs::read_to_string(&said).unwrap();
    assert!(
        status.is_some_and(|s| s.success()),
        "the browser run failed ({status:?}): {said}"
    );
    let seen = std::fs::read(&seen).unwrap();
    serde_json::from_slice(&seen).unwrap_or_else(|e| panic!("{e}: {said}"))
}
