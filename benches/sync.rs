//! Sync at scale: the corpus (see corpus/) sent through a bare repository on this machine, so
//! that what is timed is claude-mem and git, not a network. For 1,000 and 100,000 captures:
//! the first sync of a machine (setup, then everything sent), an incremental sync after 100
//! new captures made by the real hooks, the first sync of a second machine (everything taken
//! in), and the remote's size on disk after each.
//!
//! Run: `cargo bench --bench sync` (a few minutes: the large corpus, twice).
//! `SYNC_BENCH_SESSIONS=10` runs only the small corpus.
// The bench's output is its report: it prints, unlike the crate.
#![allow(clippy::print_stdout, clippy::print_stderr)]

// Shared with the other benches, which use the rest of it.
#[allow(dead_code)]
mod corpus;

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use corpus::{DEFAULT_SESSIONS, PROJECTS, Result, generate, timed_exiting};

/// Captures made between the first sync and the incremental one.
const NEW: usize = 100;
use serde_json::json;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("sync bench: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let sizes: Vec<usize> = match std::env::var("SYNC_BENCH_SESSIONS") {
        Ok(n) => vec![n.parse()?],
        Err(_) => vec![10, DEFAULT_SESSIONS],
    };
    let bin = Path::new(env!("CARGO_BIN_EXE_claude-mem"));
    println!(
        "{:>9}  {:>10}  {:>9}  {:>9}  {:>12}  {:>10}  {:>9}",
        "captures", "first sync", "remote", "+100 sync", "remote grew", "join sync", "database"
    );
    for sessions in sizes {
        let tmp = tempfile::Builder::new()
            .prefix("sync-bench-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
        let remote = tmp.path().join("remote.git");
        git(&["init", "--quiet", "--bare", &remote.display().to_string()])?;
        let url = remote.display().to_string();
        let a = tmp.path().join("a");
        let made = generate(bin, &a, sessions)?;
        let database = std::fs::metadata(a.join("memory.db"))?.len();
        let (setup, said) = must(bin, &a, &["sync", "setup", &url])?;
        let token = said
            .lines()
            .find(|l| l.starts_with("cmk1-"))
            .ok_or("setup printed no key")?
            .to_string();
        let (first, _) = must(bin, &a, &["sync"])?;
        let first_size = size(&remote);
        capture_100(bin, &a)?;
        let (more, said) = must(bin, &a, &["sync"])?;
        if !said.contains(&format!(" {NEW} tool calls")) {
            return Err(format!("the incremental sync sent: {said}").into());
        }
        let more_size = size(&remote);
        let b = tmp.path().join("b");
        must(bin, &b, &["sync", "setup", &url, "--key", &token])?;
        let (join, said) = must(bin, &b, &["sync"])?;
        let calls = |data: &Path| -> Result<i64> {
            let conn = rusqlite::Connection::open(data.join("memory.db"))?;
            Ok(conn.query_row(
                "SELECT count(*) FROM pending_queue WHERE event = 'PostToolUse'",
                [],
                |r| r.get(0),
            )?)
        };
        if calls(&b)? != (made.captures + NEW) as i64 || calls(&a)? != calls(&b)? {
            return Err(format!("the second machine received: {said}").into());
        }
        println!(
            "{:>9}  {:>10}  {:>9}  {:>9}  {:>12}  {:>10}  {:>9}",
            made.captures,
            secs(setup + first),
            mb(first_size),
            secs(more),
            format!(
                "{:.1} KB",
                more_size.saturating_sub(first_size) as f64 / 1e3
            ),
            secs(join),
            mb(database),
        );
    }
    println!(
        "(first sync: setup and the first `claude-mem sync` of a machine holding the corpus; \
         +100 sync: after 100 new captures through the hooks; join sync: a second machine's \
         first sync, everything taken in; remote: the bare repository's size on disk; \
         database: memory.db of the first machine)"
    );
    Ok(())
}

fn must(bin: &Path, data: &Path, args: &[&str]) -> Result<(Duration, String)> {
    timed_exiting(bin, data, args, &[0])
}

/// One session of the first project with [`NEW`] tool calls, through the real hooks.
fn capture_100(bin: &Path, data: &Path) -> Result<()> {
    let session = "bench-incremental";
    let hook = |name: &str, event: serde_json::Value| -> Result<()> {
        let mut child = corpus::in_project(bin, data)
            .args(["hook", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()?;
        child
            .stdin
            .take()
            .ok_or("no stdin")?
            .write_all(event.to_string().as_bytes())?;
        child.wait()?;
        Ok(())
    };
    let base = json!({"session_id": session, "cwd": PROJECTS[0],
                      "transcript_path": "/tmp/bench.jsonl"});
    let with = |extra: serde_json::Value| {
        let mut event = base.clone();
        if let (Some(event), Some(extra)) = (event.as_object_mut(), extra.as_object()) {
            event.extend(extra.clone());
        }
        event
    };
    hook(
        "context",
        with(json!({"hook_event_name": "SessionStart", "source": "startup"})),
    )?;
    hook(
        "prompt",
        with(
            json!({"hook_event_name": "UserPromptSubmit", "prompt_id": "p1",
                    "prompt": "run the tests and fix what fails"}),
        ),
    )?;
    for n in 0..NEW {
        hook(
            "capture",
            with(json!({"hook_event_name": "PostToolUse", "prompt_id": "p1",
                        "tool_name": "Bash", "tool_use_id": format!("toolu_inc_{n:04}"),
                        "tool_input": {"command": format!("cargo test case_{n}")},
                        "tool_response": {"stdout": format!("test case_{n} ... ok\n").repeat(20),
                                          "stderr": ""}})),
        )?;
    }
    Ok(())
}

fn git(args: &[&str]) -> Result<()> {
    let status = Command::new("git").args(args).status()?;
    if !status.success() {
        return Err(format!("git {args:?} failed").into());
    }
    Ok(())
}

/// Bytes under `dir`, every file.
fn size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size(&entry.path()),
            _ => entry.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
