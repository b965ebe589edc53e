//! `claude-mem compress`: captured sessions become typed memories and summaries, batched per
//! session, within a daily budget, never losing or doubling an item; the hooks start it
//! detached; search, show and timeline find what it made.
//!
//! Most tests use `CLAUDE_MEM_COMPRESS_CMD` with a small shell script as the model (it keeps
//! what it was handed and answers what the test put in place); those of `real_cli` run the
//! real Claude Code CLI as the compressor against the loopback mock of the Messages API.
//! Here: the model stand-in and the sessions the tests record; one file per area.
#![cfg(unix)]

mod backoff;
mod batches;
mod budget;
mod failed;
mod found;
mod local_model;
mod paused;
mod processes;
mod real_cli;
mod started;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::harness::{self, Env, assert_ack};
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";

/// The model the tests run instead of Claude: it keeps each call's digest, schema, system
/// prompt and environment in a folder of its own under `calls/`, waits while the file `hold`
/// exists (a test's way to keep it mid-call), then prints `reply` if that file exists, else
/// a valid answer: one memory from every item of the digest, and a summary when the schema
/// asks for one, with the usage in `tokens` (1000 input tokens when absent).
const MODEL: &str = r#"#!/bin/sh
here=$(dirname "$0")
mkdir -p "$here/calls"
call=$(mktemp -d "$here/calls/call.XXXXXX")
cat > "$call/digest"
printf '%s' "$CLAUDE_MEM_COMPRESS_SCHEMA" > "$call/schema"
printf '%s' "$CLAUDE_MEM_COMPRESS_SYSTEM" > "$call/system"
printf '%s' "$CLAUDE_MEM_DISABLED" > "$call/disabled"
pwd > "$call/cwd"
while [ -f "$here/hold" ]; do sleep 0.01; done
if [ -f "$here/reply" ]; then cat "$here/reply"; exit 0; fi
items=$(grep -o '#[0-9][0-9]* ' "$call/digest" | sort -u | wc -l | tr -d ' ')
sources=$(seq -s, 1 "$items")
tokens=1000
[ -f "$here/tokens" ] && tokens=$(cat "$here/tokens")
summary=""
if grep -q '"summary"' "$call/schema"; then
  summary=',"summary":{"request":"Fix the discount rounding","investigated":"billing.rs","learned":"Discounts were rounded per item","completed":"Rounding moved to the order total","next_steps":"Release it"}'
fi
printf '{"type":"result","is_error":false,"structured_output":{"observations":[{"type":"bugfix","title":"Discounts rounded once per order","narrative":"Discounts were rounded per item, which lost cents; they are now rounded on the order total.","facts":["round_discount lives in src/billing.rs"],"concepts":["problem-solution"],"files_read":["src/billing.rs"],"files_modified":["src/billing.rs"],"sources":[%s]}]%s},"usage":{"input_tokens":%s,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"total_cost_usd":0.0015,"modelUsage":{"test-model":{}}}\n' "$sources" "$summary" "$tokens"
"#;

/// An environment whose model is [`MODEL`].
fn with_model() -> (Env, PathBuf) {
    let env = Env::new();
    let bin = env.root.path().join("model");
    fs::create_dir(&bin).unwrap();
    let script = bin.join("model.sh");
    harness::write_program(&script, MODEL);
    let command = script.to_str().unwrap().to_string();
    (env.with("CLAUDE_MEM_COMPRESS_CMD", &command), bin)
}

/// The calls the model received, oldest first: each call's folder.
fn calls(model: &Path) -> Vec<PathBuf> {
    let mut calls: Vec<PathBuf> = fs::read_dir(model.join("calls"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    calls.sort_by_key(|p| fs::metadata(p).unwrap().modified().unwrap());
    calls
}

fn read(call: &Path, what: &str) -> String {
    fs::read_to_string(call.join(what)).unwrap()
}

fn event(session: &str, name: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({"session_id": session, "cwd": PROJECT, "hook_event_name": name,
                       "transcript_path": "/nowhere.jsonl"});
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

/// One turn of a session through the hooks: its prompt, the calls, and Claude's last message.
fn turn(env: &Env, session: &str, n: usize, prompt: &str, calls: &[(&str, Value, Value)]) {
    let prompt_id = format!("{session}-p{n}");
    assert_ack(&env.hook(
        "prompt",
        &event(
            session,
            "UserPromptSubmit",
            json!({"prompt": prompt, "prompt_id": prompt_id}),
        ),
    ));
    for (i, (tool, input, response)) in calls.iter().enumerate() {
        assert_ack(&env.hook(
            "capture",
            &event(
                session,
                "PostToolUse",
                json!({"prompt_id": prompt_id, "tool_name": tool, "tool_input": input,
                       "tool_response": response, "tool_use_id": format!("{prompt_id}-t{i}")}),
            ),
        ));
    }
    assert_ack(&env.hook(
        "summary",
        &event(
            session,
            "Stop",
            json!({"prompt_id": prompt_id, "stop_hook_active": false,
                   "last_assistant_message": format!("Done with turn {n}.")}),
        ),
    ));
}

fn source(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("    let total_{i} = order.items().map(|i| i.price).sum::<u64>();\n"))
        .collect()
}

/// A session of a working kind: files read, a test run with a long output, an edit, a search.
fn working_session(env: &Env, session: &str) {
    let read = |path: &str| {
        (
            "Read",
            json!({"file_path": format!("{PROJECT}/{path}")}),
            json!({"type": "text", "file": {"filePath": format!("{PROJECT}/{path}"),
                   "content": source(80), "numLines": 80, "startLine": 1, "totalLines": 80}}),
        )
    };
    turn(
        env,
        session,
        1,
        "Fix the discount rounding in billing",
        &[
            read("src/billing.rs"),
            read("src/order.rs"),
            (
                "Grep",
                json!({"pattern": "round_discount", "path": format!("{PROJECT}/src")}),
                json!({"mode": "files_with_matches", "numFiles": 1,
                       "filenames": [format!("{PROJECT}/src/billing.rs")]}),
            ),
            (
                "Bash",
                json!({"command": "cargo test billing", "description": "Run the billing tests"}),
                json!({"stdout": format!("FIRST LINE\n{}test billing::rounds ... FAILED\n",
                                         source(300)), "stderr": ""}),
            ),
            (
                "Edit",
                json!({"file_path": format!("{PROJECT}/src/billing.rs"),
                       "old_string": "round(item.discount)", "new_string": "order.discount"}),
                json!({"structuredPatch": [{"lines": ["-round(item.discount)", "+order.discount"]}]}),
            ),
        ],
    );
}

fn compress(env: &Env, args: &[&str]) -> Output {
    env.command().arg("compress").args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}; stderr: {}; stdout: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        stdout(out)
    );
    stdout(out)
}

/// Rows of a query, each as a JSON array of its columns.
fn rows(env: &Env, sql: &str) -> Vec<Value> {
    let db = env.db();
    let mut stmt = db.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok(Value::Array(
            (0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => Value::Null,
                    rusqlite::types::ValueRef::Integer(v) => json!(v),
                    rusqlite::types::ValueRef::Real(v) => json!(v),
                    rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                    rusqlite::types::ValueRef::Blob(_) => Value::Null,
                })
                .collect(),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn queue_states(env: &Env) -> Vec<Value> {
    rows(
        env,
        "SELECT status, attempts, retry_at IS NOT NULL FROM pending_queue GROUP BY 1, 2, 3",
    )
}

/// Waits until `done` holds, at most a minute. (Taking the compressor's lock to see whether
/// it runs would keep the one just started from running.)
fn wait_until(done: impl FnMut() -> bool) {
    harness::wait_until(Duration::from_secs(60), "the compressor", done);
}
