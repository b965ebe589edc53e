//! The corpus the read and retention benches run on: a realistic database of 100,000 captures
//! over 1,000 sessions, made once per run.
//!
//! One real hook creates the schema, then rows shaped like the real Claude Code fixtures
//! (prompts; Bash, Read, Edit, Write and Grep calls with their answers; Claude's closing
//! messages) are bulk-inserted, spread over 90 days and 6 projects.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub const DEFAULT_SESSIONS: usize = 1000;
pub const PROMPTS_PER_SESSION: usize = 10;
pub const CALLS_PER_PROMPT: usize = 10;
pub const PROJECTS: &[&str] = &[
    "/home/dev/shop",
    "/home/dev/api",
    "/home/dev/claude-mem",
    "/home/dev/infra",
    "/home/dev/web",
    "/home/dev/notes",
];
/// The newest capture is this long before the bench runs.
pub const SPAN_DAYS: i64 = 90;

pub struct Made {
    pub sessions: usize,
    pub prompts: usize,
    pub captures: usize,
    pub messages: usize,
    pub last_session: String,
    pub last_capture: String,
}

/// The binary with nothing of the caller's environment, in the first project.
pub fn in_project(bin: &Path, data: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .env_clear()
        .env("HOME", data.with_extension("home"))
        .env("CLAUDE_MEM_DATA_DIR", data)
        .env("CLAUDE_PROJECT_DIR", PROJECTS[0]);
    command
}

/// Runs the binary in the first project, as a user would from its directory. Exit 1 is a
/// search that found nothing: a result, not a failure.
pub fn timed(bin: &Path, data: &Path, args: &[&str]) -> Result<(Duration, String)> {
    timed_exiting(bin, data, args, &[0, 1])
}

/// The same, failing unless the exit code is one of `codes`.
pub fn timed_exiting(
    bin: &Path,
    data: &Path,
    args: &[&str],
    codes: &[i32],
) -> Result<(Duration, String)> {
    let started = Instant::now();
    let out = in_project(bin, data)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    let took = started.elapsed();
    if !out.status.code().is_some_and(|code| codes.contains(&code)) {
        return Err(format!(
            "claude-mem {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok((took, String::from_utf8(out.stdout)?))
}

/// Waits (up to a minute) until no maintenance process holds the data dir's lock: hooks start
/// one detached, and a database copied or timed while it writes is not the one measured.
pub fn wait_for_maintenance(data: &Path) {
    let Ok(lock) = std::fs::File::open(data.join("maintain.lock")) else {
        return;
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        // std's lock is a `flock` on Unix, as claude-mem takes it.
        if lock.try_lock().is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Creates the schema with one real hook, then fills it.
pub fn generate(bin: &Path, data: &Path, sessions: usize) -> Result<Made> {
    create_schema(bin, data)?;
    let mut conn = Connection::open(data.join("memory.db"))?;
    let tx = conn.transaction()?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let now = chrono::Utc::now().timestamp_millis();
    let span = SPAN_DAYS * 86_400_000;
    let mut made = Made {
        sessions,
        prompts: 0,
        captures: 0,
        messages: 0,
        last_session: String::new(),
        last_capture: String::new(),
    };
    for s in 0..sessions {
        let session_id =
            uuid::Uuid::from_u128(rng.next() as u128 | ((rng.next() as u128) << 64)).to_string();
        let project = PROJECTS[s % PROJECTS.len()];
        let mut at = now - span + (span / sessions as i64) * s as i64;
        let started = ts(at);
        tx.execute(
            "INSERT INTO sessions (session_id, project_dir, cwd, transcript_path, source, model,
                 status, prompt_count, started_at, updated_at)
             VALUES (?1, ?2, ?2, ?3, 'startup', 'claude-opus-4-8', 'closed', ?4, ?5, ?5)",
            params![
                session_id,
                project,
                format!("/home/dev/.claude/projects/x/{session_id}.jsonl"),
                PROMPTS_PER_SESSION as i64,
                started
            ],
        )?;
        for p in 0..PROMPTS_PER_SESSION {
            let turn = (session_id.as_str(), project, p as i64 + 1);
            at = insert_turn(&tx, &mut rng, &mut made, turn, at)?;
        }
        tx.execute(
            "UPDATE sessions SET updated_at = ?2, ended_at = ?2, end_reason = 'other'
             WHERE session_id = ?1",
            params![session_id, ts(at)],
        )?;
        if project == PROJECTS[0] {
            made.last_session = session_id;
        }
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(made)
}

/// Runs one SessionStart hook on the empty data dir, which creates the database.
pub fn create_schema(bin: &Path, data: &Path) -> Result<()> {
    let mut hook = Command::new(bin)
        .args(["hook", "context"])
        .env_clear()
        .env("CLAUDE_MEM_DATA_DIR", data)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    let start = json!({"session_id": "bench-setup", "cwd": PROJECTS[0],
                       "hook_event_name": "SessionStart", "source": "startup"});
    std::io::Write::write_all(
        hook.stdin.as_mut().ok_or("no stdin")?,
        start.to_string().as_bytes(),
    )?;
    hook.wait()?;
    // With no index yet, that hook started the maintenance process to build one: it must not
    // run into the rows written next, nor into what a bench times or copies after.
    wait_for_maintenance(data);
    Ok(())
}

/// Where a turn's rows go.
struct Turn<'a> {
    session_id: &'a str,
    project: &'a str,
    prompt_id: String,
    number: i64,
}

/// Turn `number` of a session in `project`, from `at` on: its prompt, its tool calls with
/// their answers, Claude's closing message. Returns the time of the last.
fn insert_turn(
    tx: &rusqlite::Transaction,
    rng: &mut Rng,
    made: &mut Made,
    (session_id, project, number): (&str, &str, i64),
    mut at: i64,
) -> Result<i64> {
    at += 20_000;
    let turn = Turn {
        session_id,
        project,
        prompt_id: id(rng, at),
        number,
    };
    tx.execute(
        "INSERT INTO user_prompts (id, session_id, prompt_id, prompt_number, prompt_text,
             created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            id(rng, at),
            turn.session_id,
            turn.prompt_id,
            turn.number,
            prompt(rng),
            ts(at)
        ],
    )?;
    made.prompts += 1;
    for c in 0..CALLS_PER_PROMPT {
        at += 3_000 + (rng.next() % 5_000) as i64;
        made.last_capture = insert_call(tx, rng, &turn, c, at)?;
        made.captures += 1;
    }
    at += 5_000;
    let message = message(rng);
    tx.execute(
        "INSERT INTO pending_queue (id, kind, session_id, prompt_id, prompt_number, event,
             project_dir, raw_output, priority, payload_bytes, created_at, updated_at)
         VALUES (?1, 'summary', ?2, ?3, ?4, 'Stop', ?5, ?6, 1, ?7, ?8, ?8)",
        params![
            id(rng, at),
            turn.session_id,
            turn.prompt_id,
            turn.number,
            turn.project,
            json!({"last_assistant_message": message, "prompt_number": turn.number,
                   "project_dir": turn.project})
            .to_string(),
            message.len() as i64,
            ts(at)
        ],
    )?;
    made.messages += 1;
    Ok(at)
}

/// The `c`th tool call of a turn, at `at`; its capture's id.
fn insert_call(
    tx: &rusqlite::Transaction,
    rng: &mut Rng,
    turn: &Turn,
    c: usize,
    at: i64,
) -> Result<String> {
    let (tool, input, response) = call(rng, turn.project, c);
    let files = match input.get("file_path") {
        Some(path) => json!([path]).to_string(),
        None => "[]".into(),
    };
    let raw = json!({"tool_input": input, "tool_response": response,
                     "project_dir": turn.project, "cwd": turn.project})
    .to_string();
    let capture_id = id(rng, at);
    tx.execute(
        "INSERT INTO pending_queue (id, session_id, tool_use_id, prompt_id,
             prompt_number, event, tool_name, project_dir, raw_output, files_touched,
             priority, payload_bytes, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 'PostToolUse', ?6, ?7, ?8, ?9, 1, ?10, ?11, ?11)",
        params![
            capture_id,
            turn.session_id,
            format!("toolu_{:020x}", rng.next()),
            turn.prompt_id,
            turn.number,
            tool,
            turn.project,
            raw,
            files,
            raw.len() as i64,
            ts(at)
        ],
    )?;
    Ok(capture_id)
}

pub fn ts(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A UUID v7 of the time `ms`, as the hooks make them.
pub fn id(rng: &mut Rng, ms: i64) -> String {
    let ts =
        uuid::Timestamp::from_unix_time((ms / 1000) as u64, ((ms % 1000) * 1_000_000) as u32, 0, 0);
    let mut bytes = *uuid::Uuid::new_v7(ts).as_bytes();
    // The clock's counter is shared; the random tail is ours, so runs are reproducible.
    bytes[8..].copy_from_slice(&rng.next().to_be_bytes());
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes).to_string()
}

pub struct Rng(u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const MODULES: &[&str] = &[
    "merge", "session", "store", "spill", "capture", "config", "orders", "billing", "auth",
    "render", "upsert", "privacy", "checkout", "cart", "invoice",
];
const IDENTS: &[&str] = &[
    "upsert_session",
    "mergeSettings",
    "parseEvent",
    "apply_write",
    "HttpClient",
    "recent_sessions",
    "forget_turn",
    "OrderTotal",
    "computeDiscount",
    "read_stdin",
    "camelCaseHelper",
    "WalCheckpoint",
    "retry_with_jitter",
];
const ERRORS: &[&str] = &[
    "error: database is locked",
    "thread 'main' panicked at src/store/mod.rs:212:9: called `Result::unwrap()` on an `Err` value",
    "error[E0308]: mismatched types: expected `&str`, found `String`",
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "FAILED tests/orders.rs - assertion `left == right` failed",
    "connection refused (os error 111)",
];

fn prompt(rng: &mut Rng) -> String {
    let m = rng.pick(MODULES);
    let f = rng.pick(IDENTS);
    match rng.next() % 5 {
        0 => format!("Fix the failing test in src/{m}.rs: {}", rng.pick(ERRORS)),
        1 => format!("Refactor {f} so that it no longer clones the whole payload"),
        2 => format!("Why does {f} return early when the {m} is empty? Look at src/{m}.rs."),
        3 => format!(
            "Add a test for {f} covering the case where the {m} has no rows, then run cargo test"
        ),
        _ => format!("Please review the changes to {m} and update the README section about it"),
    }
}

fn message(rng: &mut Rng) -> String {
    let m = rng.pick(MODULES);
    let f = rng.pick(IDENTS);
    format!(
        "Done. I changed `{f}` in src/{m}.rs so that it checks the {m} first, added a \
         regression test, and ran `cargo test`: all 124 tests pass. The remaining warning \
         about `{}` is unrelated.",
        rng.pick(IDENTS)
    )
}

/// One tool call shaped like Claude Code's: (tool, tool_input, tool_response).
fn call(rng: &mut Rng, project: &str, i: usize) -> (&'static str, Value, Value) {
    let m = rng.pick(MODULES);
    let f = rng.pick(IDENTS);
    let path = format!("{project}/src/{m}.rs");
    let source: String = (0..40)
        .map(|l| format!("    let {f}_{l} = {m}::apply(&mut tx, {l})?; // {m} step {l}\n"))
        .collect();
    match (i + rng.next() as usize) % 5 {
        0 => {
            let failing = rng.next().is_multiple_of(4);
            let stdout: String = (0..30)
                .map(|t| format!("test {m}::tests::{f}_{t} ... ok\n"))
                .collect();
            let stderr = if failing { rng.pick(ERRORS) } else { "" };
            (
                "Bash",
                json!({"command": format!("cargo test -p {m} {f} 2>&1 | tail -40"),
                       "description": format!("Run the {m} tests")}),
                json!({"stdout": stdout, "stderr": stderr, "interrupted": false,
                       "isImage": false, "noOutputExpected": false}),
            )
        }
        1 => (
            "Read",
            json!({"file_path": path}),
            json!({"type": "text", "file": {"filePath": path, "content": source,
                   "numLines": 40, "startLine": 1, "totalLines": 40}}),
        ),
        2 => (
            "Edit",
            json!({"file_path": path, "old_string": format!("fn {f}(x: &str)"),
                   "new_string": format!("fn {f}(x: &str, limit: usize)"), "replace_all": false}),
            json!({"filePath": path, "oldString": format!("fn {f}(x: &str)"),
                   "newString": format!("fn {f}(x: &str, limit: usize)"), "originalFile": source,
                   "structuredPatch": [{"oldStart": 12, "oldLines": 1, "newStart": 12,
                       "newLines": 1, "lines": [format!("-fn {f}(x: &str)"),
                                                format!("+fn {f}(x: &str, limit: usize)")]}],
                   "userModified": false, "replaceAll": false}),
        ),
        3 => (
            "Write",
            json!({"file_path": format!("{project}/tests/{m}_{f}.rs"), "content": source}),
            json!({"type": "create", "filePath": format!("{project}/tests/{m}_{f}.rs"),
                   "content": source, "structuredPatch": [], "originalFile": null}),
        ),
        _ => (
            "Grep",
            json!({"pattern": f, "path": format!("{project}/src"), "output_mode": "content"}),
            json!({"mode": "content", "numFiles": 3, "filenames": [],
                   "content": format!("src/{m}.rs:12:fn {f}(x: &str)\nsrc/lib.rs:40:    {f}(&y)\n"),
                   "numLines": 2}),
        ),
    }
}
