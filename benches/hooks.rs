//! Whole-process latency of the hooks, as ratios to a process that does nothing.
//!
//! Claude Code runs `claude-mem hook capture` after every tool call and waits for it, so what
//! counts is the whole process: exec, dynamic loading, reading stdin, SQLite, exit. Each case is
//! a child process timed from spawn to exit and compared with the floor, an empty `fn main() {}`
//! compiled by the same toolchain at `-C opt-level=3`. The machine is shared and noisy, so the
//! budgets are ratios of medians over interleaved rounds: each round runs every case once in a
//! shuffled order, so a busy moment slows the floor as much as the cases around it.
//!
//! Run: `cargo bench --bench hooks` (the recall database made and indexed, about a minute; 150
//! rounds after 10 warm-up, then the bursts; 20 to 40 s more on a quiet machine).
//! Quick look: `HOOKS_BENCH_ROUNDS=30 cargo bench --bench hooks`; `HOOKS_BENCH_SESSIONS=100`
//! makes the recall database ten times smaller; `HOOKS_BENCH_KEEP=1` keeps its folder (the
//! databases, events and installed builds) to inspect.
//! Other builds of the binary (a profile experiment, a prototype) run the same cases in the same
//! rounds, without budgets: `HOOKS_BENCH_COMPARE=label=/path/to/claude-mem,... cargo bench
//! --bench hooks`; one of another schema (from before a migration, which would refuse a newer
//! database and spill every event) makes a recall database of its own, with the same rows. On
//! Linux the binary links the C runtime statically (`.cargo/config.toml`), as `cargo install`
//! builds it; the floor stays a default (dynamically linked) build, the cost of starting any
//! Rust program, so ratios from different builds compare.
//!
//! Budgets (median of the case / median of the floor, on the 2-core dev machine; those of issue
//! 28 where it sets one): no-op (a PostToolUse of a skipped tool) at most 1.0x, 1 KB capture at
//! most 1.5x in a new database and with 100,000 rows stored, a summary (a Stop, the compressor
//! off) at most 1.6x, 5 MB capture at most
//! 40x (a Read, kept as a head and a tail, and an unknown tool's response cut at the default
//! payload cap); a 1 KB capture holding a `<private>` tag, which the privacy filter walks, or
//! secrets, which are redacted, at most 2.5x, and a 5 MB Read or Bash output with secrets at
//! most 40x. The prompt hook with per-prompt recall, on the corpus of the read benches (100,000
//! captures over 1,000 sessions in 6 projects, its search index built, a few earlier prompts
//! planted that the prompt is about, so that recall answers: its answer must list items), at
//! most 2.5x at the median and 3x at the 95th percentile (its p95 over the floor's) and 40 ms;
//! the same without recall, and the builds compared, run on copies of that database; and the same
//! with recall once 200 standing instructions are planted in that project (see `standing`),
//! without a budget of its own: what reading the rules for each prompt adds. The session-start
//! hook (`hook context`, a new session each run) in the database's busiest project, as it is and
//! with those 200 rules: its median at most 8x the floor's, its p95 at most 6x the floor's p95
//! and 40 ms (with room over what it took without rules when they were set: median 3.7x to 6.2x,
//! p95 3.0x to 4.4x, in three runs at load 1.6 to 10), and its context must list the rules when
//! they are there; the session start on that database with short sessions added up to 10,000
//! (see `many`), at most 3x at the median. The prompt with recall in a project with a team's folder (see `team`: 200
//! shared notes, their digest made before the runs), and in a hostile one (1,200 month folders,
//! 20,000 files, 300 of them 63 KB), each with the budget of the prompt with recall, every
//! answer listing a team's note. Codex's 1 KB capture (`--agent codex`, its event Claude
//! Code's), Cursor's 1 KB capture through its own hooks and through Claude Code's settings, each
//! at most 2.5x, and Cursor's 5 MB Read (its output a string of JSON, rewritten once) at most
//! 40x; Copilot's 1 KB capture (2.5x) and 5 MB Read (40x), its `tool_result` rewritten once;
//! Gemini's 1 KB capture (2.5x), renamed in place; every one answered with an empty stdout. Then bursts of 256 captures at once (see `burst`): none may spill, and their
//! 95th percentile is at most 500x. Last, hooks that must not be held up (see `held`): behind a
//! write lock another process holds, a hook returns within its wait budget and 5x; past a FIFO, a
//! link and a 3 GB file in the spill folder, within 2.5x. A missed budget, or a case that did not
//! do what it is meant to measure (see `verify`), exits non-zero so this can gate a change.
// The bench's output is its report: it prints, unlike the crate.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "hooks/burst.rs"]
mod burst;
#[path = "hooks/held.rs"]
mod held;
#[path = "hooks/many.rs"]
mod many;
#[path = "hooks/standing.rs"]
mod standing;
#[path = "hooks/team.rs"]
mod team;
// The generated database of the read benches, here for the prompt hook with recall.
#[allow(dead_code)]
mod corpus;

use std::error::Error;
use std::fs::{self, File};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const DEFAULT_ROUNDS: usize = 150;
const WARMUP_ROUNDS: usize = 10;
/// 5 MB cases run every this many rounds: each takes tens of milliseconds, and 30 samples are
/// enough for a median that far above the noise.
const BIG_EVERY: usize = 5;
/// Rows already in the database for the "does it stay flat" case: a user's after months.
const PREFILL_ROWS: i64 = 100_000;
/// Each run stores a new row: a repeated `tool_use_id` would hit the UNIQUE constraint and
/// measure the dedup path instead. Ids are written in place into the input file between runs.
const ID_PLACEHOLDER: &str = "toolu_bench_000000000000000000";
const ACK: &str = "{\"continue\":true,\"suppressOutput\":true}\n";

const NOOP_BUDGET: f64 = 1.0;
/// The prompt hook with recall, on the 100,000-capture database: its median over the floor's;
/// its p95 over the floor's p95, and at most this many milliseconds.
const RECALL_BUDGET: f64 = 2.5;
const RECALL_P95_BUDGET: f64 = 3.0;
const RECALL_P95_MS: f64 = 40.0;
/// What the prompt with recall must answer: the head of recall's list of items (the standing
/// instructions alone would answer with a context too), so that recall is what is timed.
const RECALLED: &str = "Earlier work in this project that matches this prompt";
/// The prompt the recall cases submit: words common in the corpus (each dropped after a
/// bounded lookup, the costly case) and a few that name the planted earlier work.
const RECALL_PROMPT: &str = "Why does upsert_session return early when the orders are empty?     The login timeout in the auth middleware of the checkout broke the session store again";
/// Earlier prompts planted in the first project, which the prompt is about.
const PLANTED: usize = 20;
/// Claude Code's 1 KB Bash capture, in a new database and with 100,000 rows stored.
const CAPTURE_1K_BUDGET: f64 = 1.5;
/// The other 1 KB captures: with secrets or a `<private>` tag, Codex's and Cursor's.
const OTHER_1K_BUDGET: f64 = 2.5;
/// A Stop: the turn's closing message stored for the compressor.
const SUMMARY_BUDGET: f64 = 1.6;
const CAPTURE_5M_BUDGET: f64 = 40.0;
/// The session-start hook on the 100,000-capture database, with 200 rules or none: its median
/// over the floor's, and its p95 over the floor's p95 and in milliseconds. It runs once a
/// session, not once a tool call, and reads more than any other hook (the recent sessions,
/// their errors, commands and files, the rules, the open threads).
const CONTEXT_BUDGET: f64 = 8.0;
/// The session-start hook on the database of [`many::SESSIONS`] sessions: its median over the
/// floor's (its p95 under the budgets above).
const CONTEXT_MANY_BUDGET: f64 = 3.0;
const CONTEXT_P95_BUDGET: f64 = 6.0;
const CONTEXT_P95_MS: f64 = 40.0;

fn main() -> ExitCode {
    match run().and_then(|ok| Ok(held::run()? && ok)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("hooks bench: {err}");
            ExitCode::FAILURE
        }
    }
}

/// What a case must leave behind, checked after its runs so that a fast number is never the
/// number of the wrong path (a spill, a dedup, an error).
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// The floor: exits 0, nothing else to check.
    Exit,
    /// A no-op hook: empty stdout, and the data dir is never created.
    Nothing,
    /// A capture: the ack, and one new row per run, truncated or not (`None`: not checked, for
    /// a compared build that may store it otherwise).
    Row { truncated: Option<bool> },
    /// A Stop: the ack, and one new summary item per run (its prompt id rewritten each run).
    Summary,
    /// A prompt: one new prompt per run, answered with recalled context (`Some(true)`), with
    /// the ack (`Some(false)`), or either (`None`, a compared build); that context with the
    /// standing instructions' head (`rules: Some(true)`), without it (`Some(false)`), or either.
    Prompt {
        recalls: Option<bool>,
        rules: Option<bool>,
    },
    /// A session start: one new session per run, answered with a context that lists the
    /// planted rules, newest first (`Some(true)`), or none (`Some(false)`); either answer, for
    /// a compared build (`None`).
    Context { rules: Option<bool> },
    /// A prompt in a project with a team's folder: one new prompt per run, answered with
    /// recalled context that lists a team's note.
    TeamPrompt,
    /// A session start in a project with a team's folder: one new session per run, answered
    /// with a context that lists the team's notes.
    TeamContext,
}

struct Case {
    name: String,
    bin: PathBuf,
    args: &'static [&'static str],
    env: Vec<(&'static str, String)>,
    input: PathBuf,
    /// Where the tool_use_id (a session start's session id) sits in `input`, for cases that
    /// store a row.
    id_at: Option<u64>,
    data_dir: PathBuf,
    /// The data dir the case's own starts as a copy of (the recall database, with rules or
    /// without), if not an empty one.
    from: Option<PathBuf>,
    /// The project whose team notes' digest the case's data dir is given before its runs.
    team: Option<PathBuf>,
    expect: Expect,
    big: bool,
    /// Only the binary under test has budgets; compared builds are there to be read.
    budget: Option<f64>,
    /// A budget on the 95th percentile (over the floor's, milliseconds), alone or with one on
    /// the median.
    budget_p95: Option<(f64, f64)>,
    rows_before: i64,
    runs: i64,
    samples: Vec<f64>,
    max_wal: u64,
    /// Another agent's capture (`--agent codex`, `--agent cursor`): a row, answered with an
    /// empty stdout instead of the ack.
    quiet: bool,
}

fn run() -> Result<bool> {
    let rounds = match std::env::var("HOOKS_BENCH_ROUNDS") {
        Ok(n) => n
            .parse()
            .map_err(|_| format!("HOOKS_BENCH_ROUNDS={n:?} is not a number"))?,
        Err(_) => DEFAULT_ROUNDS,
    };
    let tmp = tempfile::Builder::new()
        .prefix("hooks-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let dir = tmp.path();
    let (floor_bin, floor_note) = floor(dir)?;
    let floor_bin = install(dir, &floor_bin, "floor")?;
    let hook_bin = install(
        dir,
        Path::new(env!("CARGO_BIN_EXE_claude-mem")),
        "claude-mem",
    )?;
    let own = corpora(dir, &hook_bin, "own", true)?;
    let folders = team::plant(dir)?;
    let inputs = inputs(dir, &own.project, &folders)?;
    let mut cases = vec![Case {
        args: &[],
        data_dir: dir.join("data-floor"),
        ..Case::new(
            "floor: empty fn main",
            &floor_bin,
            &inputs.bash_1k,
            Expect::Exit,
        )
    }];
    cases.extend(hook_cases(&inputs, "", &hook_bin, &own)?);
    for (label, bin, data) in compared_builds(dir, &own)? {
        cases.extend(hook_cases(&inputs, &format!(" [{label}]"), &bin, &data)?);
    }
    let mut counter = 0u64;
    prepare(&mut cases, &mut counter)?;
    time_rounds(&mut cases, rounds, &mut counter)?;
    for case in &cases {
        check_after(case)?;
    }
    let mut bursts = bursts(dir, &hook_bin)?;
    let burst_inputs = burst::inputs(dir, &fs::read(&inputs.bash_1k)?, ID_PLACEHOLDER)?;
    burst::run(&mut bursts, dir, &burst_inputs)?;
    let cases_ok = report(&cases, rounds, &floor_note);
    let bursts_ok = burst::report(&bursts, median(&cases[0].samples));
    if std::env::var_os("HOOKS_BENCH_KEEP").is_some() {
        println!("\nkept {}", tmp.keep().display());
    }
    Ok(cases_ok && bursts_ok)
}

/// Writes the event files; the session starts are in `project`.
fn inputs(dir: &Path, project: &str, folders: &team::Folders) -> Result<Inputs> {
    let five = 5 * 1024 * 1024;
    Ok(Inputs {
        dir: dir.to_path_buf(),
        bash_1k: write_event(dir, "bash-1k.json", &bash_event(1024))?,
        todo_1k: write_event(dir, "todo-1k.json", &todo_event(1024))?,
        stop: write_event(dir, "stop.json", &stop_event())?,
        read_5m: write_event(dir, "read-5m.json", &read_event(five))?,
        mcp_5m: write_event(dir, "mcp-5m.json", &unknown_tool(read_event(five)))?,
        private_1k: write_event(dir, "private-1k.json", &with_private(bash_event(1024)))?,
        private_5m: write_event(dir, "private-5m.json", &with_private(read_event(five)))?,
        secrets_1k: write_event(dir, "secrets-1k.json", &with_secrets(bash_event(1024)))?,
        secrets_5m: write_event(dir, "secrets-5m.json", &with_secrets(read_event(five)))?,
        bash_secrets_5m: write_event(
            dir,
            "bash-secrets-5m.json",
            &with_secrets(bash_output_event(five)),
        )?,
        cursor_1k: write_event(dir, "cursor-1k.json", &cursor(bash_event(1024), "Shell"))?,
        cursor_5m: write_event(dir, "cursor-5m.json", &cursor(read_event(five), "Read"))?,
        copilot_1k: write_event(dir, "copilot-1k.json", &copilot(bash_event(1024)))?,
        copilot_5m: write_event(dir, "copilot-5m.json", &copilot(read_event(five)))?,
        gemini_1k: write_event(dir, "gemini-1k.json", &gemini(bash_event(1024)))?,
        opencode_1k: write_event(dir, "opencode-1k.json", &opencode(bash_event(1024)))?,
        prompt: write_event(dir, "prompt.json", &prompt_event(corpus::PROJECTS[0]))?,
        prompt_team: write_event(
            dir,
            "prompt-team.json",
            &prompt_event(&folders.team.to_string_lossy()),
        )?,
        prompt_hostile: write_event(
            dir,
            "prompt-hostile.json",
            &prompt_event(&folders.hostile.to_string_lossy()),
        )?,
        context: write_event(dir, "context.json", &context_event(project))?,
        context_months: write_event(
            dir,
            "context-months.json",
            &context_event(&folders.months.to_string_lossy()),
        )?,
    })
}

/// Gives each case its data and the place of its tool_use_id, and runs it once: the first run
/// creates the database, which is not what the budgets are about, and shows that the case does
/// what it says (exit 0, right stdout, silent stderr).
fn prepare(cases: &mut [Case], counter: &mut u64) -> Result<()> {
    for case in cases {
        if let Some(from) = &case.from {
            copy_data(from, &case.data_dir)?;
        }
        if let Some(project) = &case.team {
            team::digest(&case.bin, &case.data_dir, project)?;
        }
        if !matches!(case.expect, Expect::Exit | Expect::Nothing) {
            let input = fs::read(&case.input)?;
            let at = find(&input, ID_PLACEHOLDER.as_bytes());
            case.id_at = Some(at.map_err(|e| format!("{}: {e}", case.name))?);
        }
        verify(case, counter)?;
        if case.rows_before > 0 {
            prefill(&case.data_dir)?;
        }
    }
    Ok(())
}

/// The warm-up and the timed rounds, each running every case once in a shuffled order (the
/// big ones every [`BIG_EVERY`] rounds).
fn time_rounds(cases: &mut [Case], rounds: usize, counter: &mut u64) -> Result<()> {
    let null = File::options().write(true).open("/dev/null")?;
    let mut rng = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos() as u64 | 1;
    let mut order: Vec<usize> = (0..cases.len()).collect();
    for round in 0..WARMUP_ROUNDS + rounds {
        shuffle(&mut order, &mut rng);
        for &i in &order {
            let case = &mut cases[i];
            if case.big && round % BIG_EVERY != 0 {
                continue;
            }
            let took = time_once(case, &null, counter)?;
            if round >= WARMUP_ROUNDS {
                case.samples.push(took.as_secs_f64() * 1000.0);
            }
            if case.id_at.is_some() {
                case.max_wal = case.max_wal.max(wal_size(&case.data_dir));
            }
        }
    }
    Ok(())
}

/// A burst for the binary under test, and one for each compared build (the copy the rounds
/// ran).
fn bursts(dir: &Path, hook_bin: &Path) -> Result<Vec<burst::Burst>> {
    let mut bursts = vec![burst::Burst::new(
        &format!("burst of {} captures", burst::HOOKS),
        hook_bin,
        true,
    )];
    for (label, _) in compared()? {
        let name = format!("burst of {} captures [{label}]", burst::HOOKS);
        let bin = dir.join(format!("bin-{}", slug(&label)));
        bursts.push(burst::Burst::new(&name, &bin, false));
    }
    Ok(bursts)
}

/// The event files, each written once; every capture case gets its own copy because it
/// rewrites the tool_use_id in place.
struct Inputs {
    dir: PathBuf,
    bash_1k: PathBuf,
    todo_1k: PathBuf,
    /// A Stop with Claude's closing message.
    stop: PathBuf,
    read_5m: PathBuf,
    /// The 5 MB response of a tool without a lean shape: cut at the payload cap.
    mcp_5m: PathBuf,
    /// The same events with a `<private>` tag: the privacy filter walks them whole.
    private_1k: PathBuf,
    private_5m: PathBuf,
    /// The same events with secrets, which are redacted.
    secrets_1k: PathBuf,
    secrets_5m: PathBuf,
    /// A 5 MB Bash output with secrets: kept as a head and a tail, cut before it is redacted.
    bash_secrets_5m: PathBuf,
    /// Cursor's postToolUse of the 1 KB Bash call and of the 5 MB Read.
    cursor_1k: PathBuf,
    cursor_5m: PathBuf,
    /// Copilot's PostToolUse of the same two calls.
    copilot_1k: PathBuf,
    copilot_5m: PathBuf,
    /// Gemini's AfterTool of the 1 KB Bash call.
    gemini_1k: PathBuf,
    opencode_1k: PathBuf,
    /// A prompt about the work planted in the recall database.
    prompt: PathBuf,
    /// The same prompt in the project with the team's folder, and in the hostile one.
    prompt_team: PathBuf,
    prompt_hostile: PathBuf,
    /// A new session's start in the busiest project of the recall database.
    context: PathBuf,
    /// A new session's start in the project whose team shared for 1,200 months.
    context_months: PathBuf,
}

/// The recall database as one build made it (each schema has its own), and a copy of it with
/// the standing instructions planted; each case that runs on one gets a copy of its own.
#[derive(Clone)]
struct Corpora {
    recall: PathBuf,
    rules: PathBuf,
    /// The recall database with short sessions added up to [`many::SESSIONS`].
    many: PathBuf,
    /// The project with the most sessions, where the rules are planted.
    project: String,
}

impl Case {
    fn new(name: &str, bin: &Path, input: &Path, expect: Expect) -> Case {
        Case {
            name: name.to_string(),
            bin: bin.to_path_buf(),
            args: &["hook", "capture"],
            env: Vec::new(),
            input: input.to_path_buf(),
            id_at: None,
            data_dir: PathBuf::new(),
            from: None,
            team: None,
            expect,
            big: false,
            budget: None,
            budget_p95: None,
            rows_before: 0,
            runs: 0,
            samples: Vec::new(),
            max_wal: 0,
            quiet: false,
        }
    }
}

/// The hook cases for one build of the binary, the recall database and its rules from `data`;
/// `label` tells compared builds apart and turns the budgets off.
fn hook_cases(inputs: &Inputs, label: &str, bin: &Path, data: &Corpora) -> Result<Vec<Case>> {
    let build = Build {
        inputs,
        label,
        bin,
        data,
    };
    let mut cases = small_cases(&build)?;
    cases.extend(big_cases(&build)?);
    // A compared build may know no agent: its `--agent` runs would record nothing.
    if label.is_empty() {
        cases.extend(agent_cases(&build)?);
    }
    cases.extend(prompt_cases(&build)?);
    cases.extend(context_cases(&build)?);
    for case in &mut cases {
        case.name.push_str(label);
        case.data_dir = inputs.dir.join(format!("data-{}", slug(&case.name)));
    }
    Ok(cases)
}

/// One build of the binary, whose cases are being made.
struct Build<'a> {
    inputs: &'a Inputs,
    /// Empty for the binary under test, which alone has budgets.
    label: &'a str,
    bin: &'a Path,
    data: &'a Corpora,
}

impl Build<'_> {
    fn own(&self, budget: f64) -> Option<f64> {
        self.label.is_empty().then_some(budget)
    }

    /// A copy of `input` for one case: each rewrites the tool_use_id of its own in place.
    fn copy(&self, input: &Path, case: &str) -> Result<PathBuf> {
        let to = self
            .inputs
            .dir
            .join(format!("{}.json", slug(&format!("{case}{}", self.label))));
        // Two cases with one tag would time one case's event twice.
        if to.exists() {
            return Err(format!("two cases are tagged {case}").into());
        }
        fs::copy(input, &to)?;
        Ok(to)
    }

    /// A capture of `input`, a new row each run (`truncated` checked for this build only).
    fn capture(&self, name: &str, input: &Path, case: &str, truncated: bool) -> Result<Case> {
        let expect = Expect::Row {
            truncated: self.label.is_empty().then_some(truncated),
        };
        Ok(Case::new(name, self.bin, &self.copy(input, case)?, expect))
    }

    /// The prompt about the planted work, on a copy of the recall database (with the rules
    /// planted or not).
    fn prompt(&self, name: &str, case: &str, recalls: bool, rules: bool) -> Result<Case> {
        let own = self.label.is_empty();
        let expect = Expect::Prompt {
            recalls: own.then_some(recalls),
            rules: (own && recalls).then_some(rules),
        };
        Ok(Case {
            args: &["hook", "prompt"],
            from: Some(self.data.corpus(rules).clone()),
            ..Case::new(
                name,
                self.bin,
                &self.copy(&self.inputs.prompt, case)?,
                expect,
            )
        })
    }

    /// The prompt in a project with a team's folder (`input` says which), on a copy of the
    /// recall database, given the digest of the folder's notes before its runs (the binary under
    /// test only: a compared build from before the digest has none to make); with the budget
    /// of the prompt with recall.
    fn team_prompt(&self, name: &str, input: &Path, case: &str) -> Result<Case> {
        let own = self.label.is_empty();
        let expect = match own {
            true => Expect::TeamPrompt,
            false => Expect::Prompt {
                recalls: None,
                rules: None,
            },
        };
        let event: Value = serde_json::from_slice(&fs::read(input)?)?;
        let project = event["cwd"].as_str().map(PathBuf::from);
        Ok(Case {
            args: &["hook", "prompt"],
            from: Some(self.data.recall.clone()),
            team: project.filter(|_| own),
            budget_p95: own.then_some((RECALL_P95_BUDGET, RECALL_P95_MS)),
            ..Case::new(name, self.bin, &self.copy(input, case)?, expect)
        })
    }

    /// A new session's start in the busiest project, on a copy of `from` (one of the recall
    /// databases), whose context lists the planted rules or not.
    fn context(&self, name: &str, case: &str, from: &Path, rules: bool) -> Result<Case> {
        let expect = Expect::Context {
            rules: self.label.is_empty().then_some(rules),
        };
        Ok(Case {
            args: &["hook", "context"],
            from: Some(from.to_path_buf()),
            ..Case::new(
                name,
                self.bin,
                &self.copy(&self.inputs.context, case)?,
                expect,
            )
        })
    }
}

impl Build<'_> {
    /// A new session's start in the project whose team's folder holds 1,200 months, on a copy
    /// of the recall database, given the digest of the folder's notes before its runs (as
    /// [`Build::team_prompt`]).
    fn team_context(&self, name: &str, case: &str) -> Result<Case> {
        let own = self.label.is_empty();
        let expect = match own {
            true => Expect::TeamContext,
            false => Expect::Context { rules: None },
        };
        let event: Value = serde_json::from_slice(&fs::read(&self.inputs.context_months)?)?;
        let project = event["cwd"].as_str().map(PathBuf::from);
        Ok(Case {
            args: &["hook", "context"],
            from: Some(self.data.recall.clone()),
            team: project.filter(|_| own),
            ..Case::new(
                name,
                self.bin,
                &self.copy(&self.inputs.context_months, case)?,
                expect,
            )
        })
    }
}

impl Corpora {
    fn corpus(&self, rules: bool) -> &PathBuf {
        if rules { &self.rules } else { &self.recall }
    }
}

/// The no-ops and the 1 KB captures.
fn small_cases(b: &Build) -> Result<Vec<Case>> {
    let inputs = b.inputs;
    Ok(vec![
        Case {
            budget: b.own(NOOP_BUDGET),
            ..Case::new(
                "no-op: TodoWrite (skipped tool)",
                b.bin,
                &inputs.todo_1k,
                Expect::Nothing,
            )
        },
        Case {
            env: vec![("CLAUDE_MEM_DISABLED", "1".into())],
            ..Case::new(
                "no-op: CLAUDE_MEM_DISABLED=1",
                b.bin,
                &inputs.bash_1k,
                Expect::Nothing,
            )
        },
        Case {
            budget: b.own(CAPTURE_1K_BUDGET),
            ..b.capture("capture 1 KB Bash", &inputs.bash_1k, "1k", false)?
        },
        Case {
            budget: b.own(CAPTURE_1K_BUDGET),
            rows_before: PREFILL_ROWS,
            ..b.capture(
                "capture 1 KB, 100k rows in db",
                &inputs.bash_1k,
                "100k",
                false,
            )?
        },
        // Without the compressor, which a Stop starts once 100 items wait: the write is what
        // is measured, not a process started.
        Case {
            args: &["hook", "summary"],
            env: vec![("CLAUDE_MEM_COMPRESS", "0".into())],
            budget: b.own(SUMMARY_BUDGET),
            ..Case::new(
                "summary (a Stop)",
                b.bin,
                &b.copy(&inputs.stop, "st")?,
                Expect::Summary,
            )
        },
        Case {
            budget: b.own(OTHER_1K_BUDGET),
            ..b.capture(
                "capture 1 KB with secrets",
                &inputs.secrets_1k,
                "1ks",
                false,
            )?
        },
        Case {
            budget: b.own(OTHER_1K_BUDGET),
            ..b.capture(
                "capture 1 KB with a <private> tag",
                &inputs.private_1k,
                "1kp",
                false,
            )?
        },
    ])
}

/// The other agents' captures, each under the same budget as Claude Code's: Codex's event is
/// Claude Code's, passed through; Cursor's is rewritten once (its tool output a string of
/// JSON, decoded), and Copilot's (its `tool_result`), which the 5 MB cases measure; Gemini's is
/// renamed in place; OpenCode's (our plugin's) passes through, its output kept whole.
fn agent_cases(b: &Build) -> Result<Vec<Case>> {
    let inputs = b.inputs;
    const CODEX: &[&str] = &["hook", "capture", "--agent", "codex"];
    const CURSOR: &[&str] = &["hook", "capture", "--agent", "cursor"];
    const COPILOT: &[&str] = &["hook", "capture", "--agent", "copilot"];
    const GEMINI: &[&str] = &["hook", "capture", "--agent", "gemini"];
    const OPENCODE: &[&str] = &["hook", "capture", "--agent", "opencode"];
    const THROUGH_CLAUDE: &[&str] = &["hook", "capture"];
    let (small, large) = (OTHER_1K_BUDGET, CAPTURE_5M_BUDGET);
    // (name, event, data dir's tag, arguments, budget, whether it is a big case): a table.
    #[rustfmt::skip]
    let cases = [
        ("capture 1 KB Bash, Codex", &inputs.bash_1k, "1kx", CODEX, small, false),
        ("capture 1 KB Shell, Cursor", &inputs.cursor_1k, "1kc", CURSOR, small, false),
        ("capture 1 KB Shell, Cursor through Claude Code's settings", &inputs.cursor_1k, "1kcc", THROUGH_CLAUDE, small, false),
        ("capture 5 MB Read, Cursor", &inputs.cursor_5m, "5mcu", CURSOR, large, true),
        ("capture 1 KB Bash, Copilot", &inputs.copilot_1k, "1kcp", COPILOT, small, false),
        ("capture 5 MB Read, Copilot", &inputs.copilot_5m, "5mcp", COPILOT, large, true),
        ("capture 1 KB Bash, Gemini", &inputs.gemini_1k, "1kg", GEMINI, small, false),
        ("capture 1 KB bash, OpenCode", &inputs.opencode_1k, "1ko", OPENCODE, small, false),
    ];
    cases
        .into_iter()
        .map(|(name, input, tag, args, budget, big)| {
            Ok(Case {
                args,
                quiet: true,
                big,
                budget: b.own(budget),
                ..b.capture(name, input, tag, false)?
            })
        })
        .collect()
}

/// The 5 MB captures, run every [`BIG_EVERY`] rounds.
fn big_cases(b: &Build) -> Result<Vec<Case>> {
    let inputs = b.inputs;
    let big = |case: Case, budget: Option<f64>| Case {
        big: true,
        budget,
        ..case
    };
    let own = b.own(CAPTURE_5M_BUDGET);
    Ok(vec![
        big(
            b.capture("capture 5 MB Read, lean", &inputs.read_5m, "5m", false)?,
            own,
        ),
        big(
            b.capture(
                "capture 5 MB Read with secrets",
                &inputs.secrets_5m,
                "5ms",
                false,
            )?,
            own,
        ),
        big(
            b.capture(
                "capture 5 MB Bash with secrets",
                &inputs.bash_secrets_5m,
                "5mb",
                false,
            )?,
            own,
        ),
        big(
            b.capture(
                "capture 5 MB MCP, capped at 1 MiB",
                &inputs.mcp_5m,
                "5mc",
                true,
            )?,
            own,
        ),
        big(
            b.capture(
                "capture 5 MB Read with a <private> tag",
                &inputs.private_5m,
                "5mp",
                false,
            )?,
            None,
        ),
        big(
            Case {
                env: vec![("CLAUDE_MEM_MAX_PAYLOAD_BYTES", "0".into())],
                ..b.capture(
                    "capture 5 MB MCP whole (no cap)",
                    &inputs.mcp_5m,
                    "5mw",
                    false,
                )?
            },
            None,
        ),
    ])
}

/// The prompt hook on the 100,000-capture database, with recall and without; with recall
/// again once the rules are planted, read by it for each prompt (no budget of its own: the
/// figures say what the rules add).
fn prompt_cases(b: &Build) -> Result<Vec<Case>> {
    Ok(vec![
        Case {
            budget: b.own(RECALL_BUDGET),
            budget_p95: b
                .label
                .is_empty()
                .then_some((RECALL_P95_BUDGET, RECALL_P95_MS)),
            ..b.prompt("prompt with recall, 100k captures", "pr", true, false)?
        },
        Case {
            env: vec![("CLAUDE_MEM_RECALL", "0".into())],
            ..b.prompt("prompt, recall off, 100k captures", "po", false, false)?
        },
        b.prompt(
            &format!("prompt with recall, {} rules planted", standing::RULES),
            "prs",
            true,
            true,
        )?,
        b.team_prompt(
            &format!("prompt with recall, {} team notes", team::NOTES),
            &b.inputs.prompt_team,
            "prt",
        )?,
        b.team_prompt(
            "prompt with recall, hostile team folder",
            &b.inputs.prompt_hostile,
            "prh",
        )?,
    ])
}

/// The session-start hook on the 100,000-capture database, in its busiest project, as it is
/// and with the rules planted; each with the budget of [`CONTEXT_BUDGET`] and
/// [`CONTEXT_P95_BUDGET`].
fn context_cases(b: &Build) -> Result<Vec<Case>> {
    let budget = |case: Case| Case {
        budget: b.own(CONTEXT_BUDGET),
        budget_p95: b
            .own(CONTEXT_P95_BUDGET)
            .map(|times| (times, CONTEXT_P95_MS)),
        ..case
    };
    let data = b.data;
    Ok(vec![
        budget(b.context("session start, 100k captures", "cx", &data.recall, false)?),
        Case {
            budget: b.own(CONTEXT_MANY_BUDGET),
            ..budget(b.context(
                &format!("session start, {} sessions", many::SESSIONS),
                "cxn",
                &data.many,
                false,
            )?)
        },
        budget(b.context(
            &format!("session start, {} rules planted", standing::RULES),
            "cxs",
            &data.rules,
            true,
        )?),
        budget(b.team_context("session start, team folder of 1,200 months", "cxm")?),
    ])
}

/// The floor binary and how it was made. `/bin/true` is a C program with a different start-up,
/// so it is only a fallback and the report says so.
fn floor(dir: &Path) -> Result<(PathBuf, String)> {
    let src = dir.join("floor.rs");
    fs::write(&src, "fn main() {}\n")?;
    let bin = dir.join("floor");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let built = Command::new(&rustc)
        .args(["-C", "opt-level=3", "-o"])
        .arg(&bin)
        .arg(&src)
        .status();
    if built.is_ok_and(|s| s.success()) {
        let version = Command::new(&rustc).arg("-V").output()?;
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        Ok((bin, format!("empty fn main, {version}, -C opt-level=3")))
    } else {
        Ok((
            PathBuf::from("/bin/true"),
            "/bin/true (rustc unavailable: the floor is NOT an empty Rust binary)".into(),
        ))
    }
}

/// A copy of `bin` in the bench's folder, run instead of the original. The binary as the linker
/// left it started 0.1 to 0.2 ms slower here than a byte-identical copy of it (measured, same
/// file system; the page cache holds a freshly linked file differently), and an installed
/// binary is a copy. Floor and hooks are copied alike so the ratios compare like with like.
fn install(dir: &Path, bin: &Path, name: &str) -> Result<PathBuf> {
    let to = dir.join(format!("bin-{name}"));
    fs::copy(bin, &to).map_err(|err| format!("cannot copy {}: {err}", bin.display()))?;
    Ok(to)
}

/// `HOOKS_BENCH_COMPARE=label=path,...`: other builds timed in the same rounds.
fn compared() -> Result<Vec<(String, PathBuf)>> {
    let Ok(list) = std::env::var("HOOKS_BENCH_COMPARE") else {
        return Ok(Vec::new());
    };
    list.split(',')
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (label, path) = item
                .split_once('=')
                .ok_or_else(|| format!("HOOKS_BENCH_COMPARE item {item:?} is not label=path"))?;
            Ok((label.to_string(), PathBuf::from(path)))
        })
        .collect()
}

/// The command for one run: scrubbed environment (a stray `RUST_BACKTRACE` or
/// `CLAUDE_MEM_*` of the caller would change what is measured), stdin from a file.
///
/// Stdin is a file, not a pipe fed by the bench: with two cores, a feeding thread competes with
/// the child it feeds and its scheduling lands in the timing. A hook reads stdin to the end
/// either way; a file just delivers it at memory speed, as a pipe filled by an idle Claude Code
/// would.
fn command(case: &Case, counter: &mut u64) -> Result<Command> {
    if let Some(at) = case.id_at {
        *counter += 1;
        let id = format!("toolu_bench_{:018}", *counter);
        let mut file = File::options().write(true).open(&case.input)?;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(id.as_bytes())?;
    }
    if matches!(case.expect, Expect::Context { .. } | Expect::TeamContext) {
        index_caught_up(&case.data_dir)?;
    }
    let mut cmd = Command::new(&case.bin);
    cmd.args(case.args)
        .env_clear()
        .env("HOME", case.data_dir.with_extension("home"))
        .env("CLAUDE_MEM_DATA_DIR", &case.data_dir)
        .envs(case.env.iter().map(|(k, v)| (k, v)))
        .stdin(File::open(&case.input)?);
    Ok(cmd)
}

/// Says that the search index holds what the database does, as the maintenance process that
/// the last session's end started says it: a session starts after one ended. Without it, each
/// run would find the previous run's write newer than the index and start the maintenance
/// process, as a session does after one that ended without its SessionEnd hook.
fn index_caught_up(data_dir: &Path) -> Result<()> {
    let stamp = File::options()
        .create(true)
        .append(true)
        .open(data_dir.join("index-synced"))?;
    stamp.set_modified(SystemTime::now())?;
    Ok(())
}

fn time_once(case: &mut Case, null: &File, counter: &mut u64) -> Result<Duration> {
    let mut cmd = command(case, counter)?;
    let answer = case.data_dir.with_extension("answer");
    let stdout = match case.expect {
        Expect::Context { .. } | Expect::TeamPrompt | Expect::TeamContext => File::create(&answer)?,
        _ => null.try_clone()?,
    };
    cmd.stdout(stdout).stderr(null.try_clone()?);
    let started = Instant::now();
    let status = cmd.spawn()?.wait()?;
    let took = started.elapsed();
    if !status.success() {
        return Err(format!("{}: exited with {status}", case.name).into());
    }
    case.runs += 1;
    if matches!(
        case.expect,
        Expect::Context { .. } | Expect::TeamPrompt | Expect::TeamContext
    ) {
        check_answer(case, &fs::read_to_string(&answer)?)?;
    }
    Ok(took)
}

/// Every session start's answer is checked, not only the first's, and every answer to a prompt
/// with a team's folder (a digest gone stale would have it start the process that makes one):
/// it went to a file (a pipe would have the bench read it while the hook runs), read once the
/// run is timed.
fn check_answer(case: &Case, stdout: &str) -> Result<()> {
    expected(case, stdout).map_err(|want| {
        format!(
            "{}: run {} answered {stdout:?}, expected stdout {want}",
            case.name, case.runs
        )
        .into()
    })
}

/// Whether `stdout` is what `case` must answer: nothing for another agent's capture, else what
/// [`answered`] wants of its kind; `Err` says what was wanted.
fn expected(case: &Case, stdout: &str) -> std::result::Result<(), String> {
    if case.quiet {
        (stdout.is_empty())
            .then_some(())
            .ok_or_else(|| "empty".to_string())
    } else {
        answered(case.expect, stdout)
    }
}

fn verify(case: &mut Case, counter: &mut u64) -> Result<()> {
    let out = command(case, counter)?.output()?;
    case.runs += 1;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answered = expected(case, &stdout);
    if !out.status.success() || answered.is_err() || !out.stderr.is_empty() {
        return Err(format!(
            "{}: expected exit 0 and stdout {}, got {} with stdout {stdout:?}, stderr {:?}",
            case.name,
            answered.err().unwrap_or_else(|| "as it was".into()),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}

/// Whether a run's stdout is what its case must answer; if not, what was expected.
fn answered(expect: Expect, stdout: &str) -> std::result::Result<(), String> {
    let context = stdout.contains("additionalContext");
    let rules = stdout.contains(standing::HEAD);
    let (ok, want) = match expect {
        Expect::Exit | Expect::Prompt { recalls: None, .. } | Expect::Context { rules: None } => {
            (true, String::new())
        }
        Expect::Nothing => (stdout.is_empty(), "empty".into()),
        Expect::Row { .. }
        | Expect::Summary
        | Expect::Prompt {
            recalls: Some(false),
            ..
        } => (stdout == ACK, format!("{ACK:?}")),
        Expect::Prompt {
            recalls: Some(true),
            rules: want_rules,
        } => (
            context && stdout.contains(RECALLED) && want_rules.is_none_or(|w| w == rules),
            format!("with additionalContext listing items, the rules' head {want_rules:?}"),
        ),
        Expect::Context { rules: Some(true) } => {
            let newest = standing::newest();
            (
                context && rules && stdout.contains(&newest),
                format!("with additionalContext, the rules' head and {newest:?}"),
            )
        }
        Expect::Context { rules: Some(false) } => (
            context && !rules,
            "with additionalContext and no rules".into(),
        ),
        Expect::TeamPrompt => (
            context && stdout.contains(team::SAID),
            format!("with additionalContext that lists a {:?}", team::SAID),
        ),
        Expect::TeamContext => (
            context && stdout.contains(team::FROM_THE_TEAM),
            format!(
                "with additionalContext that lists {:?}",
                team::FROM_THE_TEAM
            ),
        ),
    };
    if ok { Ok(()) } else { Err(want) }
}

/// Checks that every run did what the case is about: no files for a no-op, one row per run
/// (none deduplicated, none spilled) for a capture.
fn check_after(case: &Case) -> Result<()> {
    match case.expect {
        Expect::Exit => Ok(()),
        Expect::Nothing if case.data_dir.exists() => {
            Err(format!("{}: a no-op created {}", case.name, case.data_dir.display()).into())
        }
        Expect::Nothing => Ok(()),
        Expect::Context { .. } | Expect::TeamContext => {
            let conn = rusqlite::Connection::open(database(&case.data_dir))?;
            let started: i64 = conn.query_row(
                "SELECT COUNT(*) FROM sessions WHERE session_id LIKE 'toolu_bench_%'",
                [],
                |r| r.get(0),
            )?;
            if started != case.runs {
                return Err(format!(
                    "{}: {} runs recorded {started} sessions",
                    case.name, case.runs
                )
                .into());
            }
            Ok(())
        }
        Expect::Summary => {
            let conn = rusqlite::Connection::open(database(&case.data_dir))?;
            let rows: i64 = conn.query_row(
                "SELECT COUNT(*) FROM pending_queue
                  WHERE kind = 'summary' AND prompt_id LIKE 'toolu_bench_%'",
                [],
                |r| r.get(0),
            )?;
            if rows != case.runs {
                return Err(
                    format!("{}: {} runs stored {rows} summaries", case.name, case.runs).into(),
                );
            }
            Ok(())
        }
        Expect::Prompt { .. } | Expect::TeamPrompt => {
            let conn = rusqlite::Connection::open(database(&case.data_dir))?;
            let rows: i64 = conn.query_row(
                "SELECT COUNT(*) FROM user_prompts WHERE prompt_id LIKE 'toolu_bench_%'",
                [],
                |r| r.get(0),
            )?;
            if rows != case.runs {
                return Err(
                    format!("{}: {} runs stored {rows} prompts", case.name, case.runs).into(),
                );
            }
            Ok(())
        }
        Expect::Row { truncated } => {
            let spill = case.data_dir.join("spill");
            if fs::read_dir(&spill).is_ok_and(|mut d| d.next().is_some()) {
                return Err(format!("{}: runs spilled into {}", case.name, spill.display()).into());
            }
            let conn = rusqlite::Connection::open(database(&case.data_dir))?;
            let (rows, cut): (i64, i64) = conn.query_row(
                // Copilot and Gemini send no call id: ours holds their timestamp, the placeholder.
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE truncated) FROM pending_queue
                 WHERE tool_use_id LIKE '%toolu_bench_%'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let want_cut = match truncated {
                Some(true) => rows,
                Some(false) => 0,
                None => cut,
            };
            if rows != case.runs || cut != want_cut {
                return Err(format!(
                    "{}: {} runs stored {rows} rows, {cut} truncated (expected {want_cut})",
                    case.name, case.runs
                )
                .into());
            }
            Ok(())
        }
    }
}

/// Fills the database with copies of the row the first run stored, spread over sessions, then
/// checkpoints so the timed runs start from a small WAL as they would in steady use.
fn prefill(data_dir: &Path) -> Result<()> {
    let conn = rusqlite::Connection::open(database(data_dir))?;
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name, project_dir,
             raw_output, files_touched, priority, payload_bytes, created_at, updated_at)
         SELECT printf('00000000-0000-7000-8000-%012d', i), printf('prefill-session-%03d', i % 200),
             printf('prefill_%06d', i), event, tool_name, project_dir, raw_output, files_touched,
             priority, payload_bytes, created_at, updated_at
         FROM n, (SELECT * FROM pending_queue LIMIT 1)",
        [PREFILL_ROWS],
    )?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(())
}

fn wal_size(data_dir: &Path) -> u64 {
    let mut wal = database(data_dir).into_os_string();
    wal.push("-wal");
    fs::metadata(wal).map_or(0, |m| m.len())
}

/// The database a build wrote in `data_dir`: `memory.db`, or `claude-mem.db` for a compared
/// build of a release before the layout change.
fn database(data_dir: &Path) -> PathBuf {
    let old = data_dir.join("claude-mem.db");
    if old.exists() {
        old
    } else {
        data_dir.join("memory.db")
    }
}

/// Prints the table; returns whether every budget was met.
fn report(cases: &[Case], rounds: usize, floor_note: &str) -> bool {
    let floor = median(&cases[0].samples);
    println!();
    println!(
        "hooks bench: {rounds} rounds after {WARMUP_ROUNDS} warm-up, cases shuffled in each \
         round; 5 MB cases every {BIG_EVERY}th round"
    );
    println!("floor: {floor_note}");
    println!();
    println!(
        "{:<46} {:>5} {:>10} {:>9} {:>7}  {:<14} {:>9}",
        "case", "runs", "median ms", "p90 ms", "ratio", "budget", "max WAL"
    );
    let mut ok = true;
    let floor_p95 = percentile(&cases[0].samples, 0.95);
    for case in cases {
        let med = median(&case.samples);
        let ratio = med / floor;
        let (verdict, pass) = verdict(case, ratio, floor_p95);
        ok &= pass;
        let wal = match case.id_at {
            Some(_) => format!("{} KiB", case.max_wal / 1024),
            None => String::new(),
        };
        println!(
            "{:<46} {:>5} {:>10.3} {:>9.3} {:>6.2}x  {:<14} {:>9}",
            case.name,
            case.samples.len(),
            med,
            percentile(&case.samples, 0.9),
            ratio,
            verdict,
            wal
        );
    }
    println!();
    println!("ratio = median / floor median; max WAL = largest -wal file seen after a run");
    println!(
        "{}",
        if ok {
            "all budgets met"
        } else {
            "BUDGET MISSED"
        }
    );
    ok
}

/// A case's budgets against its figures (`ratio`: its median over the floor's), and whether it
/// met them: on the median, on the 95th percentile, or both.
fn verdict(case: &Case, ratio: f64, floor_p95: f64) -> (String, bool) {
    let p95 = percentile(&case.samples, 0.95);
    let mut parts = Vec::new();
    let mut pass = true;
    if let Some(budget) = case.budget {
        pass &= ratio <= budget;
        parts.push(format!("<= {budget:<4}"));
    }
    if let Some((times, ms)) = case.budget_p95 {
        pass &= p95 / floor_p95 <= times && p95 <= ms;
        parts.push(format!(
            "p95 {:.2}x <= {times}, {p95:.1} <= {ms} ms",
            p95 / floor_p95
        ));
    }
    if !parts.is_empty() {
        parts.push(if pass { "PASS" } else { "FAIL" }.into());
        return (parts.join(" "), pass);
    }
    // Without a budget (recall off, a compared build), the same figures to read.
    match case.expect {
        Expect::Prompt { .. } | Expect::Context { .. } => {
            (format!("p95 {:.2}x, {p95:.1} ms", p95 / floor_p95), true)
        }
        _ => (String::new(), true),
    }
}

fn median(samples: &[f64]) -> f64 {
    percentile(samples, 0.5)
}

/// Nearest-rank percentile.
fn percentile(samples: &[f64], q: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n => sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
    }
}

/// Fisher-Yates with xorshift64: the order only has to vary, not be unpredictable.
fn shuffle(items: &mut [usize], state: &mut u64) {
    for i in (1..items.len()).rev() {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        items.swap(i, (*state % (i as u64 + 1)) as usize);
    }
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Result<u64> {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| at as u64)
        .ok_or_else(|| "the id placeholder is missing from an input".into())
}

fn write_event(dir: &Path, name: &str, event: &Value) -> Result<PathBuf> {
    let path = dir.join(name);
    fs::write(&path, serde_json::to_vec(event)?)?;
    Ok(path)
}

/// The fields Claude Code sends with every PostToolUse, in its order.
fn post_tool_use(tool: &str, input: Value, response: Value) -> Value {
    json!({
        "session_id": "0c6e3e4f-5b0e-4f3a-9d8e-2b7f1a9c4d21",
        "transcript_path":
            "/home/dev/.claude/projects/-home-dev-shop/0c6e3e4f-5b0e-4f3a-9d8e-2b7f1a9c4d21.jsonl",
        "cwd": "/home/dev/shop",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_response": response,
        "tool_use_id": ID_PLACEHOLDER,
    })
}

/// Claude Code's PostToolUse `event` as Cursor sends it: the conversation, the workspace, an
/// empty cwd, Cursor's name of the tool and its output as a string of JSON.
fn cursor(event: Value, tool: &str) -> Value {
    json!({
        "conversation_id": "5d1f6a3e-8c2b-4e7f-a1d9-3b6c8e2f4a10",
        "generation_id": "9a7b5c3d-1e2f-4a6b-8c0d-2e4f6a8b0c1d",
        "model": "claude-sonnet-4",
        "hook_event_name": "postToolUse",
        "cursor_version": "1.7.2",
        "workspace_roots": ["/home/dev/shop"],
        "user_email": "dev@example.com",
        "transcript_path": null,
        "cwd": "",
        "tool_name": tool,
        "tool_input": event["tool_input"],
        "tool_output": event["tool_response"].to_string(),
        "tool_use_id": ID_PLACEHOLDER,
        "duration": 1200,
    })
}

/// Claude Code's PostToolUse `event` as GitHub Copilot CLI sends it: Claude Code's fields, a
/// timestamp (which names the call: Copilot sends no id) and the output as `tool_result`.
fn copilot(event: Value) -> Value {
    json!({
        "hook_event_name": "PostToolUse",
        "session_id": "3f6e2d1c-7b4a-4c9e-8d2f-1a5b7c9e0d3f",
        "timestamp": ID_PLACEHOLDER,
        "cwd": "/home/dev/shop",
        "tool_name": event["tool_name"],
        "tool_input": event["tool_input"],
        "tool_result": {"result_type": "success",
                        "text_result_for_llm": event["tool_response"].to_string()},
    })
}

/// Claude Code's PostToolUse `event` as Gemini CLI sends it (AfterTool): Claude Code's fields,
/// a timestamp (which names the call: Gemini sends no id), Gemini's shell tool and result.
fn gemini(event: Value) -> Value {
    json!({
        "session_id": "8c2e4a6b-1d3f-4e5a-9b7c-0d2e4f6a8b1c",
        "transcript_path": "/home/dev/.gemini/tmp/shop/chats/session.json",
        "cwd": "/home/dev/shop",
        "hook_event_name": "AfterTool",
        "timestamp": ID_PLACEHOLDER,
        "tool_name": "run_shell_command",
        "tool_input": event["tool_input"],
        "tool_response": {"llmContent": event["tool_response"].to_string(),
                          "returnDisplay": event["tool_response"]["stdout"]},
    })
}

/// Claude Code's PostToolUse `event` as our OpenCode plugin sends it (`tool.execute.after`):
/// Claude Code's fields, OpenCode's `bash` tool, its call id, and its output as OpenCode gives it.
fn opencode(event: Value) -> Value {
    json!({
        "session_id": "ses_4b2e8a1c6d3fFq9ZkT2mW7xYpL",
        "cwd": "/home/dev/shop",
        "hook_event_name": "PostToolUse",
        "tool_name": "bash",
        "tool_input": event["tool_input"],
        "tool_use_id": event["tool_use_id"],
        "tool_response": {"title": event["tool_input"]["description"],
                          "output": event["tool_response"]["stdout"],
                          "metadata": {"exit": 0}},
    })
}

/// A Bash call running tests, its output grown line by line to about `size` bytes of event.
fn bash_event(size: usize) -> Value {
    let input = json!({
        "command": "cargo test -p shop-core orders 2>&1 | tail -20",
        "description": "Run the order tests",
    });
    let event = |stdout: &str| {
        let response = json!({"stdout": stdout, "stderr": "", "interrupted": false,
                              "isImage": false});
        post_tool_use("Bash", input.clone(), response)
    };
    let mut stdout = String::from("running 24 tests\n");
    for i in 0.. {
        let line = format!("test orders::tests::total_with_discount_{i} ... ok\n");
        if event(&format!("{stdout}{line}")).to_string().len() > size {
            break;
        }
        stdout.push_str(&line);
    }
    event(&stdout)
}

/// A Bash call whose output (a verbose build log) is about `size` bytes of event.
fn bash_output_event(size: usize) -> Value {
    let mut stdout = String::with_capacity(size);
    let mut i = 0;
    // A line break takes two bytes in JSON.
    while stdout.len() + i < size - 400 {
        stdout.push_str(&format!(
            "   Compiling shop-core v0.{i}.0 (/home/dev/shop/crates/core) in {i} ms\n"
        ));
        i += 1;
    }
    post_tool_use(
        "Bash",
        json!({"command": "cargo build -vv 2>&1", "description": "Build verbosely"}),
        json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}),
    )
}

/// `event` with a private part at the start of its first string: a token in a Bash command,
/// a key at the top of a file read.
fn with_private(mut event: Value) -> Value {
    let first = match event["tool_name"].as_str() {
        Some("Bash") => &mut event["tool_input"]["command"],
        _ => &mut event["tool_response"]["file"]["content"],
    };
    let text = first.as_str().unwrap_or_default();
    *first = format!("<private>token: sk-0123456789abcdef</private>{text}").into();
    event
}

/// `event` with secrets where a user's session has them: a token in the command, a password
/// and a key in the output (the first string of the file, for a Read).
fn with_secrets(mut event: Value) -> Value {
    let secrets = "export GITHUB_TOKEN=ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i\n\
                   DATABASE_URL=postgres://app:Zq81kdP0x@db:5432/shop\n\
                   AWS_ACCESS_KEY_ID=AKIAZ7QK2M4N5P6R7S2T\n";
    let first = match event["tool_name"].as_str() {
        Some("Bash") => &mut event["tool_response"]["stdout"],
        _ => &mut event["tool_response"]["file"]["content"],
    };
    let text = first.as_str().unwrap_or_default();
    *first = format!("{secrets}{text}").into();
    if let Some(command) = event["tool_input"].get_mut("command") {
        *command = format!("GH_TOKEN=ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i {command}").into();
    }
    event
}

/// `event` as the response of an MCP tool, which has no lean shape: stored as sent.
fn unknown_tool(mut event: Value) -> Value {
    event["tool_name"] = "mcp__files__read_file".into();
    event
}

/// A TodoWrite call (a tool skipped by default), about `size` bytes.
fn todo_event(size: usize) -> Value {
    let event = |n: usize| {
        let todos: Vec<Value> = (0..n)
            .map(|i| {
                json!({"content": format!("Fix the rounding of discount {i}"),
                       "status": "pending", "activeForm": format!("Fixing discount {i}")})
            })
            .collect();
        post_tool_use(
            "TodoWrite",
            json!({"todos": todos}),
            json!({"oldTodos": [], "newTodos": todos}),
        )
    };
    let n = (1..)
        .find(|&n| event(n + 1).to_string().len() > size)
        .unwrap_or(1);
    event(n)
}

/// A Read of a large source file: about `size` bytes, mostly escaped text (quotes, newlines,
/// and `<`, which makes the privacy filter look closer), as a big tool response really is.
fn read_event(size: usize) -> Value {
    let mut content = String::with_capacity(size);
    let mut escaped = 0;
    let mut i = 0;
    // The event's size is the escaped text's: `"` and newlines take two bytes in JSON.
    while escaped < size - 400 {
        let line =
            format!("    let order_{i} = Order::<Item>::new(\"sku-{i}\", Money::cents({i}));\n");
        escaped += line.len() + line.matches(['"', '\n']).count();
        content.push_str(&line);
        i += 1;
    }
    let path = "/home/dev/shop/tests/fixtures/orders.rs";
    post_tool_use(
        "Read",
        json!({"file_path": path}),
        json!({"type": "text", "file": {"filePath": path, "content": content,
               "numLines": i, "startLine": 1, "totalLines": i}}),
    )
}

/// The UserPromptSubmit of a session that is not in the corpus, in `project`; its prompt_id
/// is rewritten each run.
fn prompt_event(project: &str) -> Value {
    json!({
        "session_id": "bench-recall-0000-4000-8000-000000000001",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-shop/bench-recall.jsonl",
        "cwd": project,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt_id": ID_PLACEHOLDER,
        "prompt": RECALL_PROMPT,
    })
}

/// The Stop of a turn (its prompt id rewritten each run), as Claude Code sends it.
fn stop_event() -> Value {
    json!({
        "session_id": "0c6e3e4f-5b0e-4f3a-9d8e-2b7f1a9c4d21",
        "transcript_path":
            "/home/dev/.claude/projects/-home-dev-shop/0c6e3e4f-5b0e-4f3a-9d8e-2b7f1a9c4d21.jsonl",
        "cwd": "/home/dev/shop",
        "prompt_id": ID_PLACEHOLDER,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Done: the order tests pass again. The discount was applied \
            twice when a coupon and a member price met; total_with_discount now applies the \
            larger one only, and a test covers it.",
        "background_tasks": [],
        "session_crons": [],
    })
}

/// The SessionStart of a new session in `project` (its id rewritten each run), as Claude Code
/// sends it when `claude` starts there.
fn context_event(project: &str) -> Value {
    json!({
        "session_id": ID_PLACEHOLDER,
        "transcript_path": "/home/dev/.claude/projects/-home-dev-shop/bench-context.jsonl",
        "cwd": project,
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
}

/// The recall database made by `bin` (in `dir`, its folders named by `tag`), and a copy of it
/// with the rules planted in its busiest project through `bin`'s prompt hook, indexed as the
/// first is. `check`, for the binary under test: it must list them as current.
fn corpora(dir: &Path, bin: &Path, tag: &str, check: bool) -> Result<Corpora> {
    let recall = recall_database(dir, bin, tag)?;
    let project = busiest(&recall)?;
    let started = Instant::now();
    let rules = dir.join(format!("rules-{tag}"));
    copy_data(&recall, &rules)?;
    standing::plant(bin, &rules, &project)?;
    index(bin, &rules)?;
    let current = match check {
        true => standing::current(bin, &rules, &project)?.to_string(),
        false => "not counted".into(),
    };
    eprintln!(
        "rules planted in {project}: {} prompts, current {current}, in {:.0} s",
        standing::RULES,
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let many = dir.join(format!("many-{tag}"));
    copy_data(&recall, &many)?;
    let added = many::add(&many)?;
    index(bin, &many)?;
    eprintln!(
        "{added} short sessions added, {} in all, indexed, in {:.0} s",
        many::SESSIONS,
        started.elapsed().as_secs_f64()
    );
    Ok(Corpora {
        recall,
        rules,
        many,
        project,
    })
}

/// The project of the recall database with the most sessions (of those tied, the one used
/// first).
fn busiest(data: &Path) -> Result<String> {
    let conn = rusqlite::Connection::open(data.join("memory.db"))?;
    Ok(conn.query_row(
        "SELECT project_dir FROM sessions GROUP BY project_dir
          ORDER BY COUNT(*) DESC, MIN(started_at) LIMIT 1",
        [],
        |r| r.get(0),
    )?)
}

/// The builds `HOOKS_BENCH_COMPARE` names, each installed, with the recall database of its
/// schema: the binary under test's when they share it, else one that build makes (a build from
/// before a migration refuses a newer database and would only spill).
fn compared_builds(dir: &Path, own: &Corpora) -> Result<Vec<(String, PathBuf, Corpora)>> {
    let mut made = vec![(schema_version(&own.recall)?, own.clone())];
    let mut builds = Vec::new();
    for (label, bin) in compared()? {
        let bin = install(dir, &bin, &slug(&label))?;
        let empty = dir.join(format!("schema-{}", slug(&label)));
        corpus::create_schema(&bin, &empty)?;
        let schema = schema_version(&empty)?;
        let data = match made.iter().find(|(v, _)| *v == schema) {
            Some((_, data)) => data.clone(),
            None => {
                let data = corpora(dir, &bin, &format!("v{schema}"), false)?;
                made.push((schema, data.clone()));
                data
            }
        };
        builds.push((label, bin, data));
    }
    Ok(builds)
}

fn schema_version(data_dir: &Path) -> Result<i64> {
    let conn = rusqlite::Connection::open(database(data_dir))?;
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// The corpus of the read benches with [`PLANTED`] earlier prompts about the login timeout in
/// its first project, and its search index built by a search and merged by the maintenance
/// process, as a user's would be with recall on.
fn recall_database(dir: &Path, bin: &Path, tag: &str) -> Result<PathBuf> {
    let sessions = match std::env::var("HOOKS_BENCH_SESSIONS") {
        Ok(n) => n
            .parse()
            .map_err(|_| format!("HOOKS_BENCH_SESSIONS={n:?} is not a number"))?,
        Err(_) => corpus::DEFAULT_SESSIONS,
    };
    let data = dir.join(format!("recall-{tag}"));
    let started = Instant::now();
    let made = corpus::generate(bin, &data, sessions)?;
    let conn = rusqlite::Connection::open(data.join("memory.db"))?;
    for n in 0..PLANTED {
        conn.execute(
            "INSERT INTO user_prompts (id, session_id, prompt_id, prompt_number, prompt_text,
                 created_at)
             VALUES (printf('00000000-0000-7000-8000-%012d', ?1), ?2, printf('planted-%d', ?1),
                     100 + ?1, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day'))",
            rusqlite::params![
                n as i64,
                made.last_session,
                format!(
                    "The login timeout in the auth middleware expires sessions after {n}0 \
                     seconds: make it configurable"
                )
            ],
        )?;
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    drop(conn);
    index(bin, &data)?;
    eprintln!(
        "recall database: {} captures, indexed, in {:.0} s",
        made.captures,
        started.elapsed().as_secs_f64()
    );
    Ok(data)
}

/// Brings the search index of `data` up to date with a search, then has the maintenance
/// process merge what the syncs left in segments, as recall keeps it. One the search started
/// would make this one leave at once, and copying the index while it writes gave a damaged
/// copy: each is waited for.
fn index(bin: &Path, data: &Path) -> Result<()> {
    corpus::timed(bin, data, &["search", "--all", "login"])?;
    corpus::wait_for_maintenance(data);
    corpus::timed(bin, data, &["maintain"])?;
    corpus::wait_for_maintenance(data);
    Ok(())
}

/// A copy of the recall database (and its index) as a case's data dir.
fn copy_data(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for name in ["memory.db", "memory-index.db"] {
        fs::copy(from.join(name), to.join(name))?;
    }
    Ok(())
}
