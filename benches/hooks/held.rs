//! Hooks that must not be held up. One runs while another process holds the database's write
//! lock: it waits its budget (`CLAUDE_MEM_WAIT_MS`, [`WAIT_MS`] here), keeps its event in the
//! spill folder and returns. One finds a FIFO, a link and a 3 GB sparse file at the head of the
//! spill folder: it sets the first two aside and leaves the third to the maintenance process,
//! reading none of them, and stores its own event. Each is timed from spawn to exit in rounds
//! with the floor, so that a busy moment slows both alike. (These were `elapsed()` bounds in
//! tests/cli/capture.rs and hardening.rs; the tests keep what the hooks do, this how fast.)
//!
//! Budgets, for the binary under test: behind the lock, the median's time past the wait at
//! most [`HELD_BUDGET`] times the floor's median (a hook that overran its wait would miss it);
//! with the spill folder's junk, the median at most [`JUNK_BUDGET`] times the floor's (reading
//! the 3 GB file would take seconds). A run that did not do what its case is about (did not
//! spill behind the lock, did not store its event past the junk) is an error.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{ACK, Result, median};

/// Rounds of each case: the wait dominates the held case, so a few give a stable median.
const ROUNDS: usize = 20;
/// The wait budget the held case runs with, milliseconds.
const WAIT_MS: u64 = 200;
/// Behind a held lock: (median − the wait) / the floor's median.
const HELD_BUDGET: f64 = 5.0;
/// Past a FIFO, a link and a 3 GB file in the spill folder: median / the floor's median, as a
/// 1 KB capture's budget (the junk costs a hook no more than its own write).
const JUNK_BUDGET: f64 = 2.5;

/// The samples of the rounds, milliseconds.
struct Held {
    floor: Vec<f64>,
    held: Vec<f64>,
    junk: Vec<f64>,
}

/// Both cases in [`ROUNDS`] rounds with the floor, reported; whether both budgets were met.
pub fn run() -> Result<bool> {
    let tmp = tempfile::Builder::new()
        .prefix("hooks-bench-held-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let dir = tmp.path();
    let floor = super::install(dir, &super::floor(dir)?.0, "floor")?;
    let hook = super::install(
        dir,
        Path::new(env!("CARGO_BIN_EXE_claude-mem")),
        "claude-mem",
    )?;
    let event = serde_json::to_string(&super::bash_event(1024))?;
    let input = |case: &str, i: usize| -> Result<PathBuf> {
        let path = dir.join(format!("{case}-{i:03}.json"));
        fs::write(
            &path,
            event.replace(super::ID_PLACEHOLDER, &format!("toolu_{case}_{i}")),
        )?;
        Ok(path)
    };
    let held_data = dir.join("data-lock");
    let junk_data = dir.join("data-junk");
    for data in [&held_data, &junk_data] {
        expect_ack(
            hook_command(&hook, data, &input("setup", 0)?)?
                .output()?
                .stdout,
        )?;
        super::corpus::wait_for_maintenance(data);
    }
    let holder = rusqlite::Connection::open(held_data.join("memory.db"))?;
    holder.execute_batch("BEGIN IMMEDIATE")?;
    let mut samples = Held {
        floor: Vec::new(),
        held: Vec::new(),
        junk: Vec::new(),
    };
    for round in 0..ROUNDS {
        plant_junk(&junk_data.join("spill"), round)?;
        for turn in 0..3 {
            match (round + turn) % 3 {
                0 => {
                    let mut cmd = Command::new(&floor);
                    cmd.stdin(File::open(input("floor", round)?)?);
                    samples.floor.push(timed(&mut cmd)?.0);
                }
                1 => {
                    let mut cmd = hook_command(&hook, &held_data, &input("held", round)?)?;
                    cmd.env("CLAUDE_MEM_WAIT_MS", WAIT_MS.to_string());
                    samples.held.push(acked(&mut cmd)?);
                }
                _ => {
                    let mut cmd = hook_command(&hook, &junk_data, &input("junk", round)?)?;
                    samples.junk.push(acked(&mut cmd)?);
                }
            }
        }
        // The junk's maintenance process sets the 3 GB file aside before the next round.
        super::corpus::wait_for_maintenance(&junk_data);
    }
    holder.execute_batch("ROLLBACK")?;
    drop(holder);
    check(&held_data, &junk_data)?;
    Ok(report(&samples))
}

/// A FIFO, a link to /etc/passwd and a 3 GB sparse file, named as spill files that sort first.
fn plant_junk(spill: &Path, round: usize) -> Result<()> {
    fs::create_dir_all(spill)?;
    let name = |n: usize| {
        spill.join(format!(
            "00000000-0000-7000-8000-{:012x}.json",
            round * 3 + n
        ))
    };
    let made = Command::new("mkfifo").arg(name(1)).status()?;
    if !made.success() {
        return Err(format!("mkfifo {}: {made}", name(1).display()).into());
    }
    std::os::unix::fs::symlink("/etc/passwd", name(2))?;
    File::create(name(3))?.set_len(3 << 30)?;
    Ok(())
}

/// Every held run spilled its event (the case measured the wait, not a write); every junk run
/// stored its own, and each file planted was set aside.
fn check(held_data: &Path, junk_data: &Path) -> Result<()> {
    let log = fs::read_to_string(held_data.join("memory.log")).unwrap_or_default();
    let spilled = log.matches("event kept in").count();
    if spilled != ROUNDS {
        return Err(format!("behind the lock, {spilled} of {ROUNDS} runs spilled").into());
    }
    super::corpus::wait_for_maintenance(held_data);
    let conn = rusqlite::Connection::open(junk_data.join("memory.db"))?;
    let stored: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pending_queue WHERE tool_use_id LIKE 'toolu_junk_%'",
        [],
        |r| r.get(0),
    )?;
    let aside = fs::read_dir(junk_data.join("spill-quarantine")).map_or(0, Iterator::count);
    if stored != ROUNDS as i64 || aside != 3 * ROUNDS {
        return Err(format!(
            "past the junk, {stored} of {ROUNDS} runs stored their event and {aside} of {} \
             files were set aside",
            3 * ROUNDS
        )
        .into());
    }
    Ok(())
}

/// `claude-mem hook capture` on `data` with `input` as stdin, the environment scrubbed.
fn hook_command(hook: &Path, data: &Path, input: &Path) -> Result<Command> {
    let mut cmd = Command::new(hook);
    cmd.args(["hook", "capture"])
        .env_clear()
        .env("HOME", data.with_extension("home"))
        .env("CLAUDE_MEM_DATA_DIR", data)
        .env("CLAUDE_MEM_COMPRESS", "off")
        .stdin(File::open(input)?);
    Ok(cmd)
}

/// Runs `cmd`: milliseconds from spawn to exit, and its stdout.
fn timed(cmd: &mut Command) -> Result<(f64, Vec<u8>)> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    let started = Instant::now();
    let out = cmd.spawn()?.wait_with_output()?;
    let took = started.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        return Err(format!("{cmd:?}: exited with {}", out.status).into());
    }
    Ok((took, out.stdout))
}

/// A hook run, timed, that must answer with the ack.
fn acked(cmd: &mut Command) -> Result<f64> {
    let (took, stdout) = timed(cmd)?;
    expect_ack(stdout)?;
    Ok(took)
}

fn expect_ack(stdout: Vec<u8>) -> Result<()> {
    if stdout != ACK.as_bytes() {
        return Err(format!("a hook answered {:?}", String::from_utf8_lossy(&stdout)).into());
    }
    Ok(())
}

/// Prints the two cases against the floor; returns whether both budgets were met.
fn report(held: &Held) -> bool {
    let floor = median(&held.floor);
    let past_wait = (median(&held.held) - WAIT_MS as f64) / floor;
    let junk = median(&held.junk) / floor;
    let held_ok = past_wait <= HELD_BUDGET;
    let junk_ok = junk <= JUNK_BUDGET;
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    println!();
    println!("held up: {ROUNDS} rounds with the floor (median {floor:.3} ms)");
    println!();
    println!(
        "{:<58} {:>10} {:>7}  {:<14}",
        "case", "median ms", "ratio", "budget"
    );
    println!(
        "{:<58} {:>10.3} {:>6.2}x  <= {HELD_BUDGET:<4} {}",
        format!("capture behind a held write lock (past its {WAIT_MS} ms wait)"),
        median(&held.held),
        past_wait,
        verdict(held_ok)
    );
    println!(
        "{:<58} {:>10.3} {:>6.2}x  <= {JUNK_BUDGET:<4} {}",
        "capture past a FIFO, a link and a 3 GB file in the spill",
        median(&held.junk),
        junk,
        verdict(junk_ok)
    );
    held_ok && junk_ok
}
