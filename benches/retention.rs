//! Hygiene at scale: `prune`, `forget`, `scrub`, `export` and `import` on the corpus of
//! 100,000 captures over 90 days (see corpus/), each a whole process on a copy of one data dir
//! (database and search index), some with a hook capturing every 50 ms meanwhile to see what
//! their write lock costs it (a hook spills its event after waiting 1 s).
//!
//! Run: `cargo bench --bench retention` (several minutes: the corpus, its index, five copies).
//! `RECALL_BENCH_SESSIONS=100` makes a corpus ten times smaller.
// The bench's output is its report: it prints, unlike the crate.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod corpus;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corpus::{DEFAULT_SESSIONS, PROJECTS, Result, generate, timed, timed_exiting};
use rusqlite::Connection;
use serde_json::json;

const PROBE_EVERY: Duration = Duration::from_millis(50);

/// `claude-mem <args>` on `data`, timed; anything but success is an error.
fn must(bin: &Path, data: &Path, args: &[&str]) -> Result<(Duration, String)> {
    timed_exiting(bin, data, args, &[0])
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("retention bench: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A line of the report: the command, how long it took, notes.
type Row = (String, Duration, String);

fn run() -> Result<()> {
    let sessions = match std::env::var("RECALL_BENCH_SESSIONS") {
        Ok(n) => n.parse()?,
        Err(_) => DEFAULT_SESSIONS,
    };
    let tmp = tempfile::Builder::new()
        .prefix("retention-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let bin = Path::new(env!("CARGO_BIN_EXE_claude-mem"));
    let base = tmp.path().join("base");
    let made = generate(bin, &base, sessions)?;
    let (indexed, _) = timed(bin, &base, &["search", "database is locked"])?;
    println!(
        "\nretention bench: {} captures in {} sessions; database {}, index {} (built in {:.1} s)\n",
        made.captures,
        made.sessions,
        mib(&base.join("memory.db")),
        mib(&base.join("memory-index.db")),
        indexed.as_secs_f64()
    );
    // Each on a copy of its own, made when its turn comes and removed after it.
    let copy = |name: &str| -> Result<PathBuf> {
        let to = tmp.path().join(name);
        copy_dir(&base, &to)?;
        Ok(to)
    };
    let mut rows = prune_export_import(bin, &copy("prune")?, tmp.path())?;
    rows.push(prune_before_v7(bin, &copy("old")?)?);
    rows.push(maintain_slice(bin, &copy("slice")?)?);
    rows.extend(forgets(bin, &copy("forget")?, &made.last_session)?);
    rows.extend(scrubs(bin, &copy("scrub")?)?);

    println!("{:<36} {:>9}  notes", "command", "seconds");
    for (name, took, notes) in rows {
        println!("{name:<36} {:>9.2}  {notes}", took.as_secs_f64());
    }
    Ok(())
}

/// prune (dry run, with a hook capturing meanwhile, again), a search after it, and an export
/// of what is left imported into a fresh data dir.
fn prune_export_import(bin: &Path, a: &Path, tmp: &Path) -> Result<Vec<Row>> {
    let mut rows: Vec<Row> = Vec::new();
    let (took, _) = must(bin, a, &["prune", "--dry-run"])?;
    rows.push(("prune --dry-run".into(), took, String::new()));
    let before = mib(&a.join("memory.db"));
    let (took, out, probe) = probed(bin, a, &["prune"])?;
    rows.push((
        "prune (reduces 2/3 of the calls)".into(),
        took,
        format!(
            "{before} -> {}; {probe}; {}",
            mib(&a.join("memory.db")),
            first_line(&out)
        ),
    ));
    let (took, _) = must(bin, a, &["prune"])?;
    rows.push(("prune again (nothing due)".into(), took, String::new()));
    let (took, _) = timed(bin, a, &["search", "cargo", "test"])?;
    rows.push(("search after prune".into(), took, String::new()));
    let file = tmp.join("export.jsonl");
    let (took, _) = must(bin, a, &["export", "--all", "-o", file.to_str().unwrap()])?;
    rows.push(("export --all".into(), took, mib(&file)));
    let fresh = tmp.join("imported");
    let (took, out) = must(bin, &fresh, &["import", file.to_str().unwrap()])?;
    rows.push((
        "import into a fresh data dir".into(),
        took,
        first_line(&out),
    ));
    remove(&fresh)?;
    remove(a)?;
    Ok(rows)
}

/// prune of a database made before v7: no incremental vacuum, so prune converts it.
fn prune_before_v7(bin: &Path, b: &Path) -> Result<Row> {
    Connection::open(b.join("memory.db"))?
        .execute_batch("PRAGMA auto_vacuum = NONE; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
    let before = mib(&b.join("memory.db"));
    let (took, out, probe) = probed(bin, b, &["prune"])?;
    let row = (
        "prune of a database made before v7".into(),
        took,
        format!(
            "{before} -> {}; {probe}; {}",
            mib(&b.join("memory.db")),
            converted(&out)
        ),
    );
    remove(b)?;
    Ok(row)
}

/// One slice of retention, as the maintenance process runs it.
fn maintain_slice(bin: &Path, c: &Path) -> Result<Row> {
    let (took, out) = must(bin, c, &["maintain"])?;
    remove(c)?;
    Ok((
        "maintain (one retention slice)".into(),
        took,
        out.lines().nth(1).unwrap_or("").to_string(),
    ))
}

/// forget of a session, of a sixth of the corpus and of the last week, with searches after.
fn forgets(bin: &Path, d: &Path, session: &str) -> Result<Vec<Row>> {
    let mut rows: Vec<Row> = Vec::new();
    let (took, out) = must(bin, d, &["forget", session, "--yes"])?;
    rows.push(("forget <session>".into(), took, first_line(&out)));
    let (took, _) = timed(bin, d, &["search", "database is locked"])?;
    rows.push(("search after it".into(), took, String::new()));
    let (took, out, probe) = probed(bin, d, &["forget", "--project", PROJECTS[1], "--yes"])?;
    rows.push((
        "forget --project (a sixth)".into(),
        took,
        format!("{probe}; {}", first_line(&out)),
    ));
    let (took, out) = must(bin, d, &["forget", "--all", "--since", "7d", "--yes"])?;
    rows.push(("forget --all --since 7d".into(), took, first_line(&out)));
    let (took, _) = timed(bin, d, &["search", "database is locked"])?;
    rows.push(("search after them".into(), took, String::new()));
    remove(d)?;
    Ok(rows)
}

/// scrub (dry run, then of 100 secrets planted in prompts).
fn scrubs(bin: &Path, g: &Path) -> Result<Vec<Row>> {
    let mut rows: Vec<Row> = Vec::new();
    let (took, _) = must(bin, g, &["scrub", "--dry-run"])?;
    rows.push(("scrub --dry-run".into(), took, String::new()));
    Connection::open(g.join("memory.db"))?.execute_batch(
        "UPDATE user_prompts SET prompt_text = prompt_text ||
             ' with ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i' WHERE rowid % 100 = 0;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )?;
    let (took, out, probe) = probed(bin, g, &["scrub"])?;
    rows.push((
        "scrub (100 secrets planted)".into(),
        took,
        format!("{probe}; {}", first_line(&out)),
    ));
    Ok(rows)
}

/// What a hook capturing every 50 ms saw while a command ran.
struct Probe {
    hooks: usize,
    slowest: Duration,
    spilled: usize,
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hooks meanwhile, slowest {} ms, {} spilled",
            self.hooks,
            self.slowest.as_millis(),
            self.spilled
        )
    }
}

/// `claude-mem <args>` on `data`, timed, while a hook captures every 50 ms.
fn probed(bin: &Path, data: &Path, args: &[&str]) -> Result<(Duration, String, Probe)> {
    let log = data.join("memory.log");
    let kept_before = kept_events(&log);
    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let (stop, bin, data) = (Arc::clone(&stop), bin.to_path_buf(), data.to_path_buf());
        std::thread::spawn(move || {
            let mut times = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                hook(&bin, &data, times.len());
                times.push(started.elapsed());
                std::thread::sleep(PROBE_EVERY);
            }
            times
        })
    };
    let (took, out) = must(bin, data, args)?;
    stop.store(true, Ordering::Relaxed);
    let times = prober.join().map_err(|_| "the probe panicked")?;
    let probe = Probe {
        hooks: times.len(),
        slowest: times.iter().max().copied().unwrap_or_default(),
        spilled: kept_events(&log) - kept_before,
    };
    Ok((took, out, probe))
}

/// One capture, as Claude Code would hand it over.
fn hook(bin: &Path, data: &Path, n: usize) {
    let event = json!({"session_id": "probe", "cwd": PROJECTS[0],
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": format!("echo {n}")},
        "tool_response": {"stdout": format!("{n}"), "stderr": ""},
        "tool_use_id": format!("probe-{n}")});
    let child = Command::new(bin)
        .args(["hook", "capture"])
        .env_clear()
        .env("CLAUDE_MEM_DATA_DIR", data)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = std::io::Write::write_all(&mut stdin, event.to_string().as_bytes());
        }
        let _ = child.wait();
    }
}

/// Events hooks kept in the spill folder because the database did not take them in time.
fn kept_events(log: &Path) -> usize {
    fs::read_to_string(log)
        .map(|text| text.matches("event kept in").count())
        .unwrap_or(0)
}

/// Removes a data dir once nothing writes in it any more: a hook the probe ran may have
/// started the maintenance process, which takes in spilled events for a moment.
fn remove(dir: &Path) -> Result<()> {
    for _ in 0..100 {
        match fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::DirectoryNotEmpty => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(err) => return Err(err.into()),
        }
    }
    Err(format!("{} is still being written after 10 s", dir.display()).into())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn mib(path: &Path) -> String {
    let bytes = fs::metadata(path).map_or(0, |m| m.len());
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

fn converted(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("Converted"))
        .unwrap_or("")
        .to_string()
}
