//! Standing instructions planted in the busiest project of the recall database, for the
//! session-start and prompt cases with rules: [`RULES`] prompts that each state one, as a
//! project gathers them over months ("always validate request ids in the auth middleware…",
//! "we use the staging cluster for load tests of the order API").
//!
//! They are made from a few dozen phrasings, each with eight things of its own and the
//! project's components, so that they are distinct rules: a later rule replaces an earlier one
//! only when it is about nearly the same words (see `src/standing.rs`), which a few of them are,
//! as in a real project. They are stored as the prompt hook stores them: each through `hook
//! prompt` (which reads it as a rule and marks it), five to a session, then dated across the
//! span of the corpus but its last ten days, so that the sessions the context lists are the
//! corpus's own in both variants and the rules are what differs. The binary under test must
//! list at least [`MIN_CURRENT`] of them as current (`conventions --json`), or the case would
//! not measure a project with that many rules.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::Result;
use super::corpus::{self, SPAN_DAYS};

/// Prompts planted, each stating one rule.
pub const RULES: usize = 200;
/// Of those, how many the binary under test must list as current.
pub const MIN_CURRENT: usize = 150;
/// Rules said in one planted session.
const PER_SESSION: usize = 5;
/// The newest rule is this many days older than the corpus's end.
const QUIET_DAYS: i64 = 10;
/// What the session-start context (`src/hook/standing.rs`'s `HEAD`) and a prompt's answer
/// (its `PROMPT_HEAD`) open their rules with.
pub const HEAD: &str = "What the user asked for in earlier sessions of this project, meant to last";

/// The project's parts, which the rules are about.
const COMPONENTS: &[&str] = &[
    "auth middleware",
    "session store",
    "billing service",
    "checkout flow",
    "order API",
    "invoice renderer",
    "cart module",
    "config loader",
    "payment gateway",
    "search indexer",
    "retry queue",
    "email worker",
    "CLI parser",
    "metrics exporter",
    "rate limiter",
    "migration runner",
    "webhook handler",
    "admin dashboard",
    "report generator",
    "upload service",
    "notification scheduler",
    "pricing engine",
    "audit trail",
    "sync daemon",
    "feature toggles",
];

/// How rules are said (`{a}` a component, `{o}` a thing), each with the eight things it is said
/// of.
const PHRASINGS: &[(&str, &str)] = &[
    (
        "Always validate {o} in the {a} through the shared validator",
        "request ids, email addresses, currency codes, page sizes, file names, \
         webhook signatures, date ranges, locale tags",
    ),
    (
        "Never hardcode {o} inside the {a}.",
        "API keys, hostnames, retry counts, timeouts, tax rates, port numbers, \
         bucket names, feature names",
    ),
    (
        "From now on, every change to the {a} gets a changelog entry that names the {o}.",
        "affected endpoints, migrated tables, renamed flags, new settings, removed fields, \
         changed defaults, bumped crates, touched queues",
    ),
    (
        "Going forward, keep {o} in the {a} below the agreed limit",
        "function bodies, file lengths, query counts, allocation sizes, payload sizes, \
         nesting depths, argument lists, import lists",
    ),
    (
        "Make sure to document the {o} of the {a} in its README",
        "environment variables, exit codes, error messages, config keys, metrics names, \
         HTTP headers, cron schedules, SQL views",
    ),
    (
        "Every {o} in the {a} needs a regression test",
        "bug fix, parser branch, status transition, rounding rule, permission check, \
         error path, retry branch, cache eviction",
    ),
    (
        "All {o} in the {a} are stored in UTC",
        "created timestamps, expiry dates, audit times, schedule slots, billing periods, \
         login times, report windows, job deadlines",
    ),
    (
        "Ask me before adding {o} to the {a}.",
        "new dependencies, background threads, database columns, public endpoints, \
         global state, new config flags, unsafe blocks, extra caches",
    ),
    (
        "No {o} outside the {a} module please",
        "raw SQL, direct HTTP calls, env lookups, file writes, clock reads, random seeds, \
         thread spawns, panics",
    ),
    (
        "As a rule, the {a} owns its {o} and other modules go through its API.",
        "database tables, worker pools, config section, message topics, lock files, \
         temp folders, metrics registry, schema files",
    ),
    (
        "Don't ever log {o} from the {a}",
        "request bodies, card numbers, session tokens, password hashes, email contents, \
         phone numbers, street addresses, OAuth codes",
    ),
    (
        "In the future, benchmark the {a} whenever its {o} change shape",
        "hot loops, index layouts, serialization formats, query plans, cache sizes, \
         batch sizes, buffer pools, connection pools",
    ),
    (
        "The convention here is that {o} in the {a} are snake_case",
        "column names, JSON keys, metric labels, file names, queue names, CLI flags, \
         template variables, event names",
    ),
    (
        "Whenever you touch the {a}, rerun the {o} suite before you push",
        "contract test, load test, fuzz, snapshot, end-to-end, property test, \
         migration test, accessibility",
    ),
    (
        "Please always link the design doc for {o} in the {a} pull requests",
        "schema changes, protocol changes, new retries, permission changes, \
         billing changes, state machines, new queues, API versions",
    ),
    (
        "Let's always pin {o} used by the {a} to exact versions",
        "Docker images, GitHub actions, Terraform providers, Helm charts, base images, \
         font packages, protobuf tools, code generators",
    ),
    (
        "Remember to update the runbook of the {a} when {o} move",
        "alert thresholds, on-call rotations, dashboard panels, backup jobs, \
         failover steps, log retention, rollout stages, health checks",
    ),
    (
        "Each time you edit the {a}, regenerate its {o} fixtures",
        "golden file, recorded HTTP, sample invoice, seed data, mock server, \
         snapshot image, example config, CSV export",
    ),
    (
        "Default to read-only database handles for {o} in the {a}",
        "report queries, health probes, admin views, search lookups, export jobs, \
         audit reads, preview pages, analytics batches",
    ),
    (
        "Stick to the {a} error type for {o}",
        "validation failures, network timeouts, parse errors, permission denials, \
         quota errors, conflict responses, missing records, upstream outages",
    ),
    (
        "Fix the flaky check in the {a} first. Also, from now on, \
         {o} in that code get a trace span",
        "outbound calls, lock waits, retries, cache misses, disk reads, queue pushes, \
         slow queries, DNS lookups",
    ),
    (
        "Good catch on the last diff. Going forward, sort {o} alphabetically in the {a}",
        "import lines, match arms, feature lists, route tables, enum variants, \
         settings keys, test cases, translation keys",
    ),
    (
        "Thanks. One more thing: never merge {a} work without a green {o} job",
        "lint, coverage, security scan, license check, docs build, mutation test, \
         benchmark, type check",
    ),
    (
        "We use the staging cluster for {o} of the {a}",
        "load tests, canary rollouts, schema rehearsals, chaos drills, soak tests, \
         replay tests, upgrade trials, backup restores",
    ),
    (
        "Prefer plain functions over trait objects for {o} in the {a}",
        "price rules, format helpers, retry policies, sort orders, parsers, hash helpers, \
         id generators, unit conversions",
    ),
];

/// The planted prompts, oldest first: each phrasing in turn, with a thing of its own and a
/// component that moves on, so that neighbours differ.
pub fn rules() -> Vec<String> {
    (0..RULES)
        .map(|i| {
            let (n, j) = (i % PHRASINGS.len(), i / PHRASINGS.len());
            let (phrasing, things) = PHRASINGS[n];
            let things: Vec<&str> = things.split(", ").collect();
            let component = COMPONENTS[(n * 7 + j * 3) % COMPONENTS.len()];
            phrasing
                .replace("{a}", component)
                .replace("{o}", things[j % things.len()])
        })
        .collect()
}

/// The newest rule, which the session-start context lists first.
pub fn newest() -> String {
    rules().pop().unwrap_or_default()
}

fn session(i: usize) -> String {
    format!("bench-rules-{:04}-4000-8000-000000000000", i / PER_SESSION)
}

/// Says each rule in `project` through `bin`'s prompt hook (recall off: only the write is
/// wanted), then dates them.
pub fn plant(bin: &Path, data: &Path, project: &str) -> Result<()> {
    for (i, rule) in rules().into_iter().enumerate() {
        let event = json!({
            "session_id": session(i),
            "transcript_path": format!("/home/dev/.claude/projects/x/{}.jsonl", session(i)),
            "cwd": project,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt_id": format!("bench-rule-{i:03}"),
            "prompt": rule,
        });
        prompt_hook(bin, data, &event)?;
    }
    backdate(data)
}

fn prompt_hook(bin: &Path, data: &Path, event: &Value) -> Result<()> {
    let mut hook = Command::new(bin)
        .args(["hook", "prompt"])
        .env_clear()
        .env("HOME", data.with_extension("home"))
        .env("CLAUDE_MEM_DATA_DIR", data)
        .env("CLAUDE_MEM_RECALL", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    hook.stdin
        .take()
        .ok_or("no stdin")?
        .write_all(event.to_string().as_bytes())?;
    let out = hook.wait_with_output()?;
    if !out.status.success() || !out.stderr.is_empty() {
        return Err(format!(
            "planting a rule: hook prompt exited {} with stderr {:?}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}

/// Spreads the rules over the corpus's span but its last [`QUIET_DAYS`], oldest first, and
/// closes their sessions as the corpus's are; then checkpoints, so that a copy of the file
/// holds them.
fn backdate(data: &Path) -> Result<()> {
    let conn = rusqlite::Connection::open(data.join("memory.db"))?;
    let now = chrono::Utc::now().timestamp_millis();
    let start = now - SPAN_DAYS * 86_400_000;
    let step = (SPAN_DAYS - QUIET_DAYS) * 86_400_000 / RULES as i64;
    for i in 0..RULES {
        conn.execute(
            "UPDATE user_prompts SET created_at = ?2 WHERE session_id = ?1 AND prompt_id = ?3",
            rusqlite::params![
                session(i),
                corpus::ts(start + step * i as i64),
                format!("bench-rule-{i:03}")
            ],
        )?;
    }
    conn.execute(
        "UPDATE sessions SET
             started_at = (SELECT MIN(created_at) FROM user_prompts p
                            WHERE p.session_id = sessions.session_id),
             updated_at = (SELECT MAX(created_at) FROM user_prompts p
                            WHERE p.session_id = sessions.session_id),
             ended_at = (SELECT MAX(created_at) FROM user_prompts p
                          WHERE p.session_id = sessions.session_id),
             status = 'closed', end_reason = 'other'
         WHERE session_id LIKE 'bench-rules-%'",
        [],
    )?;
    let planted: i64 = conn.query_row(
        "SELECT COUNT(*) FROM user_prompts WHERE session_id LIKE 'bench-rules-%'",
        [],
        |r| r.get(0),
    )?;
    if planted != RULES as i64 {
        return Err(format!("{planted} of the {RULES} planted rules were stored").into());
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(())
}

/// How many of the planted rules `bin` lists as current in `project`; an error below
/// [`MIN_CURRENT`].
pub fn current(bin: &Path, data: &Path, project: &str) -> Result<usize> {
    let (_, listed) = corpus::timed_exiting(
        bin,
        data,
        &["conventions", "--json", "--project", project],
        &[0],
    )?;
    let mut current = 0;
    for line in listed.lines() {
        let rule: Value = serde_json::from_str(line)?;
        let planted = rule["session_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("bench-rules-"));
        if planted && rule["current"] == true {
            current += 1;
        }
    }
    if current < MIN_CURRENT {
        return Err(format!(
            "only {current} of the {RULES} planted rules are current (at least {MIN_CURRENT} \
             must be): the rules no longer read as distinct"
        )
        .into());
    }
    Ok(current)
}
