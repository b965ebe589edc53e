//! Bursts of parallel captures. Claude Code runs the PostToolUse hooks of parallel tool calls
//! at once, and a burst of 256 on a fresh data dir is the hardest case for the write lock: all
//! but one hook wait for it. Each hook is timed from spawn to exit; a hook that ran out of its
//! wait budget kept its event in the spill folder and said so in the log.
//!
//! Budgets, for the binary under test: no hook of any burst spilled, and the 95th percentile of
//! a burst's hooks (the median over the bursts) at most `P95_BUDGET` times the floor's median
//! (about 500 ms on the 2-core dev machine).

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use rustix::process::{Pid, WaitOptions, wait};

use super::{Result, percentile};

pub const HOOKS: usize = 256;
pub const BURSTS: usize = 5;
const P95_BUDGET: f64 = 500.0;

pub struct Burst {
    pub name: String,
    pub bin: PathBuf,
    /// Only the binary under test has budgets.
    pub budgeted: bool,
    p50: Vec<f64>,
    p95: Vec<f64>,
    max: f64,
    spilled: usize,
}

impl Burst {
    pub fn new(name: &str, bin: &Path, budgeted: bool) -> Burst {
        Burst {
            name: name.to_string(),
            bin: bin.to_path_buf(),
            budgeted,
            p50: Vec::new(),
            p95: Vec::new(),
            max: 0.0,
            spilled: 0,
        }
    }
}

/// One input file per hook of a burst, each with its own `tool_use_id` in place of
/// `placeholder`.
pub fn inputs(dir: &Path, event: &[u8], placeholder: &str) -> Result<Vec<PathBuf>> {
    let text = std::str::from_utf8(event)?;
    (0..HOOKS)
        .map(|i| {
            let path = dir.join(format!("burst-{i:03}.json"));
            let id = format!("toolu_burst_{i:0width$}", width = placeholder.len() - 12);
            fs::write(&path, text.replace(placeholder, &id))?;
            Ok(path)
        })
        .collect()
}

/// Runs `BURSTS` rounds, each build once per round, each burst on a fresh data dir.
pub fn run(bursts: &mut [Burst], dir: &Path, inputs: &[PathBuf]) -> Result<()> {
    for round in 0..BURSTS {
        for (i, burst) in bursts.iter_mut().enumerate() {
            let data_dir = dir.join(format!("burst-data-{round}-{i}"));
            let (mut ms, spilled) = once(&burst.bin, &data_dir, inputs)?;
            ms.sort_by(f64::total_cmp);
            burst.p50.push(percentile(&ms, 0.5));
            burst.p95.push(percentile(&ms, 0.95));
            burst.max = burst.max.max(ms[ms.len() - 1]);
            burst.spilled += spilled;
            super::corpus::wait_for_maintenance(&data_dir);
            let _ = fs::remove_dir_all(&data_dir);
        }
    }
    Ok(())
}

/// Milliseconds each hook took, and how many spilled their event.
fn once(bin: &Path, data_dir: &Path, inputs: &[PathBuf]) -> Result<(Vec<f64>, usize)> {
    let mut started = HashMap::new();
    for input in inputs {
        let mut cmd = Command::new(bin);
        cmd.args(["hook", "capture"])
            .env_clear()
            .env("HOME", data_dir.with_extension("home"))
            .env("CLAUDE_MEM_DATA_DIR", data_dir)
            .env("CLAUDE_MEM_COMPRESS", "off")
            .stdin(File::open(input)?)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let at = Instant::now();
        // Reaped below by pid, in the order they end: dropping a Child neither waits nor kills.
        started.insert(Pid::from_child(&cmd.spawn()?), at);
    }
    let mut ms = Vec::with_capacity(inputs.len());
    while !started.is_empty() {
        // Any child, once one has ended (without WNOHANG a wait always names one).
        let (pid, status) = wait(WaitOptions::empty())?.ok_or("wait named no child")?;
        if let Some(at) = started.remove(&pid) {
            ms.push(at.elapsed().as_secs_f64() * 1000.0);
            if status.exit_status() != Some(0) {
                return Err(format!("{}: a hook of the burst failed", bin.display()).into());
            }
        }
    }
    let spilled = ["memory.log", "claude-mem.log"]
        .iter()
        .filter_map(|name| fs::read_to_string(data_dir.join(name)).ok())
        .map(|log| log.matches("event kept in").count())
        .sum();
    Ok((ms, spilled))
}

/// Prints the bursts' table; returns whether every budget was met.
pub fn report(bursts: &[Burst], floor: f64) -> bool {
    println!();
    println!(
        "bursts: {HOOKS} captures at once on a fresh data dir, {BURSTS} rounds, builds \
         interleaved; each hook timed from spawn to exit"
    );
    println!();
    println!(
        "{:<46} {:>9} {:>9} {:>9} {:>8}  {:<16}",
        "case", "p50 ms", "p95 ms", "max ms", "spilled", "budget"
    );
    let mut ok = true;
    for burst in bursts {
        let p95 = percentile(&burst.p95, 0.5);
        let verdict = if !burst.budgeted {
            String::new()
        } else if burst.spilled == 0 && p95 / floor <= P95_BUDGET {
            format!("p95 <= {P95_BUDGET}x PASS")
        } else {
            ok = false;
            format!("p95 <= {P95_BUDGET}x FAIL")
        };
        println!(
            "{:<46} {:>9.0} {:>9.0} {:>9.0} {:>8}  {:<16}",
            burst.name,
            percentile(&burst.p50, 0.5),
            p95,
            burst.max,
            burst.spilled,
            verdict
        );
    }
    println!();
    println!(
        "p50, p95: medians over the bursts; spilled: hooks that ran out of their budget (none may)"
    );
    ok
}
