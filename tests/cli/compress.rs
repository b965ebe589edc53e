//! `claude-mem compress`: captured sessions become typed memories and summaries, batched per
//! session, within a daily budget, never losing or doubling an item; the hooks start it
//! detached; search, show and timeline find what it made.
//!
//! Most tests use `CLAUDE_MEM_COMPRESS_CMD` with a small shell script as the model (it keeps
//! what it was handed and answers what the test put in place); the tests at the end run the
//! real Claude Code CLI as the compressor against the loopback mock of the Messages API.
#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::{self, ACK, Env, assert_ack, assert_clean};
use serde_json::{Value, json};

const PROJECT: &str = "/home/dev/shop";

/// The model the tests run instead of Claude: it keeps each call's digest, schema, system
/// prompt and environment in a folder of its own under `calls/`, waits while the file `hold`
/// exists (a test's way to keep it mid-call), then prints `reply` if that file exists, else
/// a valid answer: one memory
/// from every item of the digest, and a summary when the schema asks for one, with the usage
/// in `tokens` (1000 input tokens when absent).
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

#[test]
fn a_session_becomes_memories_and_a_summary_in_one_call_and_its_items_are_acked() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("Compressed 6 items of 1 session into 1 memory and 1 summary (1 model call)"),
        "{out}"
    );
    assert!(
        out.contains("Today: 1,100 of 300,000 tokens ($0.0015)"),
        "{out}"
    );

    let calls = calls(&model);
    assert_eq!(calls.len(), 1, "one call for the whole session");
    let digest = read(&calls[0], "digest");
    // Reads and listings as one list line, paths relative to the project, the long output as a
    // head and a tail, the edit as old and new text, and the turn's prompt and last message.
    for expected in [
        "Project: /home/dev/shop\n",
        "Turn 1, the user asked: Fix the discount rounding in billing\n",
        "#1 read src/billing.rs · #2 read src/order.rs · #3 grep \"round_discount\" in src → 1 \
         file: src/billing.rs\n",
        "#4 $ cargo test billing  (Run the billing tests)\n  FIRST LINE\n",
        "test billing::rounds ... FAILED\n",
        "#5 edit src/billing.rs\n  - round(item.discount)\n  + order.discount\n",
        "#6 Claude ended the turn with:\n  Done with turn 1.\n",
    ] {
        assert!(digest.contains(expected), "{expected:?} in:\n{digest}");
    }
    assert!(
        digest.len() < 4000,
        "{} bytes: the file contents and the middle of the output stay out",
        digest.len()
    );
    assert_eq!(read(&calls[0], "disabled"), "1", "its hooks record nothing");
    assert_eq!(
        PathBuf::from(read(&calls[0], "cwd").trim()),
        env.data_dir.canonicalize().unwrap(),
        "run away from any project's files"
    );
    let schema: Value = serde_json::from_str(&read(&calls[0], "schema")).unwrap();
    assert_eq!(schema["required"], json!(["observations", "summary"]));
    assert!(read(&calls[0], "system").contains("memories"));

    let memories = rows(
        &env,
        "SELECT type, title, files_modified, origin, model, prompt_number,
                json_array_length(queue_ids) FROM memories",
    );
    assert_eq!(
        memories,
        [json!([
            "bugfix",
            "Discounts rounded once per order",
            "[\"/home/dev/shop/src/billing.rs\"]",
            "compressor",
            "test-model",
            1,
            6
        ])]
    );
    // The memory names the queue items it came from.
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM pending_queue q, memories m, json_each(m.queue_ids) j
              WHERE j.value = q.id"
        ),
        6
    );
    let summary = rows(
        &env,
        "SELECT request, completed, files_read, files_edited, prompt_number FROM summaries",
    );
    assert_eq!(
        summary,
        [json!([
            "Fix the discount rounding",
            "Rounding moved to the order total",
            "[\"/home/dev/shop/src/billing.rs\",\"/home/dev/shop/src/order.rs\"]",
            "[\"/home/dev/shop/src/billing.rs\"]",
            1
        ])]
    );
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_eq!(
        rows(
            &env,
            "SELECT items, tokens, input_tokens, output_tokens, cost_usd, estimated, outcome
               FROM compress_calls"
        ),
        [json!([6, 1100, 1000, 100, 0.0015, 0, "stored"])]
    );

    // Nothing left: a second run calls nothing.
    let again = ok(&compress(&env, &[]));
    assert!(again.starts_with("Nothing to compress"), "{again}");
    assert_eq!(self::calls(&model).len(), 1);
}

#[test]
fn search_show_and_timeline_include_memories_and_summaries() {
    let (env, _model) = with_model();
    working_session(&env, "s1");
    ok(&compress(&env, &[]));
    let memory_id: String = env
        .db()
        .query_row("SELECT id FROM memories", [], |r| r.get(0))
        .unwrap();
    let search = |args: &[&str]| {
        ok(&env
            .command()
            .args(["search", "--all"])
            .args(args)
            .output()
            .unwrap())
    };
    let found = search(&["rounded", "cents", "--kind", "memory", "--json"]);
    let hit: Value = serde_json::from_str(found.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&hit["kind"], &hit["id"], &hit["title"]),
        (
            &json!("memory"),
            &json!(memory_id),
            &json!("Discounts rounded once per order")
        )
    );
    assert_eq!(hit["files"], json!(["/home/dev/shop/src/billing.rs"]));
    let found = search(&["order", "total", "--kind", "summary"]);
    assert!(found.contains("summary"), "{found}");
    assert!(
        search(&["rounded", "--file", "src/billing.rs"]).contains("memory"),
        "a memory is found by its files"
    );

    let show = ok(&env
        .command()
        .args(["show", &memory_id[memory_id.len() - 12..]])
        .output()
        .unwrap());
    // Labels and values, the columns' padding aside.
    let show: String = show
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n");
    for expected in [
        "memory ",
        "type bugfix",
        "made by test-model (compressor)",
        "modified src/billing.rs",
        "Discounts were rounded per item",
        "- round_discount lives in src/billing.rs",
    ] {
        assert!(show.contains(expected), "{expected:?} in:\n{show}");
    }
    let session: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["show", "s1", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(session["memories"][0]["type"], "bugfix");
    assert_eq!(
        session["summaries"][0]["next_steps"], "Release it",
        "{session}"
    );
    let text = ok(&env.command().args(["show", "s1"]).output().unwrap());
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("summary ") && text.contains("completed Rounding moved to the order total"),
        "{text}"
    );
    assert!(
        text.contains("bugfix Discounts rounded once per order"),
        "{text}"
    );

    let timeline = ok(&env
        .command()
        .args(["timeline", &memory_id, "--json"])
        .output()
        .unwrap());
    let kinds: Vec<String> = timeline
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        kinds.contains(&"memory".into()) && kinds.contains(&"summary".into()),
        "{kinds:?}"
    );
    // Deleted from the database (retention, forget), gone from the index too.
    env.db()
        .execute_batch("DELETE FROM memories; DELETE FROM summaries;")
        .unwrap();
    let gone = env
        .command()
        .args(["search", "--all", "rounded", "--kind", "memory"])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(1), "{}", stdout(&gone));
    assert!(gone.stdout.is_empty());
}

/// The MCP tools find memories and summaries (`search` with `kind`), and `get` answers them
/// whole: Claude reaches them as it reaches the rest of the memory.
#[test]
fn the_mcp_tools_find_and_get_memories_and_summaries() {
    let (env, _model) = with_model();
    working_session(&env, "s1");
    ok(&compress(&env, &[]));
    let memory: String = env
        .db()
        .query_row("SELECT id FROM memories", [], |r| r.get(0))
        .unwrap();
    let call = |id: i64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.330"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(
            2,
            "search",
            json!({"query": "rounded", "kind": "memory", "all_projects": true}),
        ),
        call(
            3,
            "search",
            json!({"query": "order total", "kind": "summary", "all_projects": true}),
        ),
        call(
            4,
            "get",
            json!({"ids": [&memory[memory.len() - 12..memory.len() - 4]]}),
        ),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let out = harness::run_with_input(env.command().arg("mcp"), input.as_bytes());
    let answers: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let text = |id: i64| {
        let answer = answers.iter().find(|a| a["id"] == id).unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let found = text(2);
    assert!(
        found.contains("memory") && found.contains("Discounts rounded once per order"),
        "{found}"
    );
    assert!(text(3).contains("summary"), "{}", text(3));
    let whole = text(4);
    for expected in [
        "Discounts were rounded per item",
        "round_discount lives in src/billing.rs",
    ] {
        assert!(whole.contains(expected), "{expected:?} in:\n{whole}");
    }
}

/// The next session's context tells of a compressed session by its summary and memories
/// (with the ids that get them), and of what is not compressed yet by the raw index.
#[test]
fn the_next_sessions_context_carries_the_memories() {
    let (env, _model) = with_model();
    working_session(&env, "s1");
    let stage = [(
        "Bash",
        json!({"command": "git add src/billing.rs"}),
        json!({"stdout": ""}),
    )];
    turn(&env, "s1", 2, "Stage it", &stage);
    ok(&compress(&env, &[]));
    let memory: String = env
        .db()
        .query_row("SELECT id FROM memories", [], |r| r.get(0))
        .unwrap();
    // A turn after the compression: not compressed yet.
    turn(
        &env,
        "s1",
        3,
        "Commit it",
        &[(
            "Bash",
            json!({"command": "git commit -am 'Round once per order'"}),
            json!({"stdout": "[main 1a2b3c4] Round once per order"}),
        )],
    );
    let start = event(
        "next",
        "SessionStart",
        json!({"source": "startup", "model": "claude-opus-4-8"}),
    );
    let out = env.hook("context", &start);
    assert_clean(&out);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let short = &memory[memory.len() - 12..memory.len() - 4];
    for expected in [
        "  asked: Fix the discount rounding\n",
        "  done: Rounding moved to the order total\n",
        "  learned: Discounts were rounded per item\n",
        "  next: Release it\n",
        &format!("  memories:\n    bugfix {short}: Discounts rounded once per order\n"),
        "  ran: `git commit -am 'Round once per order'`\n",
        "  Claude: Done with turn 3.\n",
    ] {
        assert!(context.contains(expected), "{expected:?} in:\n{context}");
    }
    // What the memories cover is not told again from the raw index.
    assert!(!context.contains("git add"), "{context}");
}

/// An answer that is invalid or partial, or an error of the model, fails the whole batch: an
/// attempt is counted, the items wait for their backoff, nothing of the answer is stored.
#[test]
fn an_invalid_or_partial_answer_or_a_model_error_fails_the_batch_and_stores_nothing() {
    let answer = |observation: Value, summary: bool| {
        let mut answer = json!({"observations": [observation]});
        if summary {
            answer["summary"] = json!({"request": "r", "investigated": "", "learned": "",
                                       "completed": "", "next_steps": ""});
        }
        json!({"is_error": false, "structured_output": answer,
               "usage": {"input_tokens": 700, "output_tokens": 20}})
        .to_string()
    };
    let good = json!({"type": "bugfix", "title": "t", "narrative": "n", "facts": [],
                      "concepts": [], "files_read": [], "files_modified": [], "sources": [1]});
    let with = |key: &str, value: Value| {
        let mut o = good.clone();
        o[key] = value;
        o
    };
    let cases = [
        (
            "an unknown type",
            answer(with("type", json!("chore")), true),
            "unknown type",
        ),
        (
            "an item the batch has not",
            answer(with("sources", json!([99])), true),
            "#99",
        ),
        (
            "no summary, though asked for",
            answer(good.clone(), false),
            "no summary",
        ),
        (
            "a cut answer",
            answer(good.clone(), true)[..60].to_string(),
            "printed no result",
        ),
        (
            "a model error",
            json!({"is_error": true, "api_error_status": 400, "result": "Prompt is too long",
                   "usage": {"input_tokens": 0, "output_tokens": 0}})
            .to_string(),
            "Prompt is too long",
        ),
    ];
    for (case, reply, why) in cases {
        let (env, model) = with_model();
        working_session(&env, "s1");
        fs::write(model.join("reply"), &reply).unwrap();
        let out = ok(&compress(&env, &[]));
        assert!(
            out.contains("1 batch failed, to be tried again later"),
            "{case}: {out}"
        );
        assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0, "{case}");
        assert_eq!(env.count("SELECT COUNT(*) FROM summaries"), 0, "{case}");
        assert_eq!(queue_states(&env), [json!(["failed", 1, 1])], "{case}");
        let errors = rows(&env, "SELECT DISTINCT last_error FROM pending_queue");
        assert!(
            errors.len() == 1 && errors[0][0].as_str().unwrap().contains(why),
            "{case}: {errors:?}"
        );
        // The call is on the ledger all the same, with what it reported (or, without a
        // report, its estimate).
        let (spent, outcome): (i64, String) = env
            .db()
            .query_row("SELECT tokens, outcome FROM compress_calls", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let reported = match case {
            "a model error" => 0,
            "a cut answer" => spent.max(1),
            _ => 720,
        };
        assert_eq!(spent, reported, "{case}");
        assert!(
            ["invalid", "failed"].contains(&outcome.as_str()),
            "{case}: {outcome}"
        );
    }
}

/// Regression: a model error's text went into `last_error` as the model wrote it; an error
/// that quotes a key (the issue found an Anthropic key in 21 rows) put the key on disk.
#[test]
fn a_model_error_quoting_a_key_is_stored_without_it() {
    let key = "sk-ant-api03-Zq81kdP0x9Lm3pZr8Tq7wNb2Yc5Vh6Jf4Ds0Xk29fLq7Rt5Vb8Yc1Wd4Hf6AA";
    let (env, model) = with_model();
    working_session(&env, "s1");
    let reply = json!({"is_error": true, "api_error_status": 400,
                       "result": format!("API Error: 400 invalid_request_error (ANTHROPIC_API_KEY={key})"),
                       "usage": {"input_tokens": 0, "output_tokens": 0}});
    fs::write(model.join("reply"), reply.to_string()).unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("1 batch failed"), "{out}");
    let errors = rows(&env, "SELECT DISTINCT last_error FROM pending_queue");
    let error = errors[0][0].as_str().unwrap();
    assert!(error.contains("[REDACTED:anthropic-key]"), "{error}");
    assert!(!harness::contains(&harness::everything_on_disk(&env), key));
}

/// Regression: a model's auth error quoting the key ("Invalid API key · sk-ant-…") was printed
/// by `compress` as the model wrote it, and kept in the pause file and the log, which `status`
/// and `doctor` show. Every text of a model's error we print or keep is redacted, whether the
/// program said it in its result or on stderr, about the batch or not.
#[test]
fn a_model_error_quoting_a_key_is_never_printed_nor_kept_with_it() {
    let key = "sk-ant-api03-Zq81kdP0x9Lm3pZr8Tq7wNb2Yc5Vh6Jf4Ds0Xk29fLq7Rt5Vb8Yc1Wd4Hf6AA";
    let (env, model) = with_model();
    // A model that prints `reply`, or says `said` on stderr and dies.
    let script = model.join("errs.sh");
    harness::write_program(
        &script,
        "#!/bin/sh\ncat >/dev/null\nhere=$(dirname \"$0\")\n\
         if [ -f \"$here/said\" ]; then cat \"$here/said\" >&2; exit 1; fi\ncat \"$here/reply\"\n",
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    working_session(&env, "s1");
    let everything = |out: &Output| {
        let mut all = stdout(out);
        all.push_str(&String::from_utf8_lossy(&out.stderr));
        for command in [&["status"][..], &["status", "--json"], &["doctor"]] {
            let shown = env.command().args(command).output().unwrap();
            all.push_str(&stdout(&shown));
            all.push_str(&String::from_utf8_lossy(&shown.stderr));
        }
        assert!(!all.contains(key), "{all}");
        assert!(!harness::contains(&harness::everything_on_disk(&env), key));
        all
    };

    // In the result, about the login: the items wait, and the command says why.
    let reply = json!({"is_error": true, "api_error_status": 401,
                       "result": format!("Invalid API key · {key}"),
                       "usage": {"input_tokens": 0, "output_tokens": 0}});
    fs::write(model.join("reply"), reply.to_string()).unwrap();
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let shown = everything(&out);
    assert!(
        shown.contains("(Invalid API key · [REDACTED:anthropic-key])"),
        "{shown}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);

    // On stderr, without a result: about the login, then about nothing we know (the batch's).
    for said in [
        format!("401 authentication failed for {key}"),
        format!("no answer for {key}"),
    ] {
        fs::write(model.join("said"), said).unwrap();
        let shown = everything(&compress(&env, &[]));
        assert!(shown.contains("[REDACTED:anthropic-key]"), "{shown}");
    }
    assert_eq!(queue_states(&env), [json!(["failed", 1, 1])]);
}

/// Regression: a memory's type the model made up was quoted whole in the reason a batch
/// failed, which `compress` prints and the log keeps: 10 KB of it, key included. A short one
/// is quoted (and redacted), a long one told by its length.
#[test]
fn a_made_up_type_is_told_by_its_length_not_quoted_whole() {
    let key = "sk-ant-api03-Zq81kdP0x9Lm3pZr8Tq7wNb2Yc5Vh6Jf4Ds0Xk29fLq7Rt5Vb8Yc1Wd4Hf6AA";
    let (env, model) = with_model();
    working_session(&env, "s1");
    let kind = format!("{key} {}", "x".repeat(10_000));
    let reply = json!({"is_error": false, "structured_output": {"observations": [
        {"type": kind, "title": "t", "narrative": "n", "facts": [], "concepts": [],
         "files_read": [], "files_modified": [], "sources": [1]}]},
        "usage": {"input_tokens": 10, "output_tokens": 10}});
    fs::write(model.join("reply"), reply.to_string()).unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("1 batch failed"), "{out}");
    let told = format!(
        "has the unknown type of {} characters",
        kind.chars().count()
    );
    assert!(out.contains(&told), "{out}");
    assert!(out.len() < 1000, "{} bytes: {out}", out.len());
    assert!(!out.contains(key), "{out}");
    assert!(
        !env.log()
            .contains("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
    );
    assert!(!harness::contains(&harness::everything_on_disk(&env), key));
    assert_eq!(queue_states(&env), [json!(["failed", 1, 1])]);
}

/// After the last attempt the items are failed for good, and kept: `queue retry` brings them
/// back.
#[test]
fn after_the_last_attempt_the_items_are_kept_as_failed() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(
        model.join("reply"),
        "{\"is_error\": true, \"result\": \"bad\"}",
    )
    .unwrap();
    for attempt in 1..=5 {
        ok(&compress(&env, &[]));
        // The backoff ends now, as it would after its wait.
        env.db()
            .execute_batch(
                "UPDATE pending_queue SET retry_at = '2000-01-01T00:00:00.000Z'
                  WHERE retry_at IS NOT NULL",
            )
            .unwrap();
        assert_eq!(
            env.count("SELECT MIN(attempts) FROM pending_queue"),
            attempt
        );
    }
    assert_eq!(queue_states(&env), [json!(["failed", 5, 0])]);
    assert_eq!(calls(&model).len(), 5);
    let out = ok(&compress(&env, &[]));
    assert!(out.starts_with("Nothing to compress"), "{out}");
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 6, "kept");
    ok(&env
        .command()
        .args(["queue", "retry", "--all"])
        .output()
        .unwrap());
    fs::remove_file(model.join("reply")).unwrap();
    ok(&compress(&env, &[]));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
}

/// A login that fails, a rate limit, or no model program at all is not the items' fault: they
/// go back uncounted, compression pauses (the hooks start none meanwhile), and the command
/// says so with exit 1.
#[test]
fn errors_that_are_not_the_batchs_give_the_items_back_and_pause() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(
        model.join("reply"),
        json!({"is_error": true, "api_error_status": 429, "result": "Rate limited",
               "usage": {"input_tokens": 0, "output_tokens": 0}})
        .to_string(),
    )
    .unwrap();
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not about the items (Rate limited); 6 items wait"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    assert!(env.data_dir.join("compress.paused").exists());
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains("paused until") && status.contains("Rate limited"),
        "{status}"
    );

    let env = Env::new().with("PATH", "/nonexistent");
    working_session(&env, "s2");
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Claude Code found"), "{err}");
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// Regression: `compress --auto` (which the hooks start after a session) with no `claude` to
/// run read the whole queue before it found out (126,000 pages, 5.7 to 7.7 s on a 100,000-capture
/// database), and claimed and gave back a batch. The model program is looked for first: a run
/// without one pauses compression and reads nothing; the database is left byte for byte.
#[test]
fn compress_auto_without_claude_pauses_before_reading_the_queue() {
    let env = Env::new().with("PATH", "/nonexistent");
    working_session(&env, "s1");
    env.db()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let files = || {
        ["memory.db", "memory.db-wal"].map(|f| fs::read(env.data_dir.join(f)).unwrap_or_default())
    };
    let before = files();
    let out = compress(&env, &["--auto"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(files() == before, "the database was written");
    let paused = fs::read_to_string(env.data_dir.join("compress.paused")).unwrap();
    assert!(paused.contains("no Claude Code found"), "{paused}");
    assert!(
        env.log().contains("stopped: no Claude Code found"),
        "{}",
        env.log()
    );
    // By hand it says so, and how many items wait.
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no Claude Code found") && err.contains("6 items wait"),
        "{err}"
    );
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// What Claude Code 2.1.330 prints for `claude -p --output-format json` with no login
/// (`is_error: true`, `api_error_status: null`, "Not logged in · Please run /login").
const NOT_LOGGED_IN: &str = include_str!("../fixtures/compress/not-logged-in.json");

/// Issue 16: "Not logged in" has no API status, and was taken for a bad batch: an attempt
/// counted on every item at each run (the hooks start one after every session, so a lapsed
/// login failed them all for good), and exit 0. It is known by its words: the items go back
/// untouched, compression pauses, and the command exits 1 with one line saying what to do.
#[test]
fn not_logged_in_gives_the_items_back_pauses_and_exits_1() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("reply"), NOT_LOGGED_IN).unwrap();
    for _ in 0..6 {
        let out = compress(&env, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("(Not logged in · Please run /login); 6 items wait, no attempt counted")
                && err.contains(
                    "log in again (run claude, then /login), then run claude-mem compress"
                ),
            "{err}"
        );
        assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    }
    assert_eq!(
        rows(&env, "SELECT DISTINCT outcome FROM compress_calls"),
        [json!(["unreachable"])]
    );
    // Paused for an hour: the hooks' runs call nothing meanwhile.
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains("(Not logged in · Please run /login)"),
        "{status}"
    );
    let before = calls(&model).len();
    assert_clean(&compress(&env, &["--auto"]));
    assert_eq!(calls(&model).len(), before);
    // Logged in again: a run by hand compresses it all.
    fs::remove_file(model.join("reply")).unwrap();
    ok(&compress(&env, &[]));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert!(!env.data_dir.join("compress.paused").exists());
}

/// A program that dies saying why on stderr, without the JSON: the same words count.
#[test]
fn a_command_that_cannot_reach_its_model_gives_the_items_back() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    let script = model.join("offline.sh");
    harness::write_program(
        &script,
        "#!/bin/sh\ncat >/dev/null\necho 'urlopen error [Errno 111] Connection refused' >&2\nexit 1\n",
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    let out = compress(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("check the network"), "{err}");
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// When the day's budget has no room for the next batch, its items wait (released, not
/// failed) and compression pauses until the next day; what was spent is on the ledger and in
/// `status`.
#[test]
fn the_daily_budget_stops_compression_and_the_rest_waits_for_tomorrow() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", "8000");
    fs::write(model.join("tokens"), "5000").unwrap();
    working_session(&env, "first");
    working_session(&env, "second");
    // Yesterday's spend does not count against today.
    env.db()
        .execute(
            "INSERT INTO compress_calls (id, day, batch, items, tokens, estimated, outcome,
                                         created_at, updated_at)
             VALUES ('old', '2000-01-01', 'b', 1, 999999, 0, 'stored', '', '')",
            [],
        )
        .unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("Compressed 6 items of 1 session"), "{out}");
    assert!(
        out.contains("Stopped: today's budget of 8,000 tokens is spent; 6 items wait for tomorrow"),
        "{out}"
    );
    assert_eq!(calls(&model).len(), 1);
    assert_eq!(
        rows(
            &env,
            "SELECT session_id, status, attempts FROM pending_queue GROUP BY 1, 2, 3"
        ),
        [json!(["first", "done", 0]), json!(["second", "raw", 0])]
    );
    assert!(env.data_dir.join("compress.paused").exists());
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains(
            "compress      today 5,100 of 8,000 tokens ($0.0015); 6 items waiting; paused until"
        ) && status.contains("the daily token budget is spent"),
        "{status}"
    );
    let json: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["status", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(json["compress"]["today"]["tokens"], 5100);
    assert_eq!(json["compress"]["daily_tokens"], 8000);
    assert_eq!(json["compress"]["waiting"], 6);
    // A hook's run does nothing while paused; a run by hand with a larger budget goes on.
    let auto = compress(&env, &["--auto"]);
    assert_clean(&auto);
    assert_eq!(calls(&model).len(), 1);
    let env = env.with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", "100000");
    ok(&compress(&env, &[]));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert!(!env.data_dir.join("compress.paused").exists());
}

/// Issue 16: usage numbers from a model program are not ours. 2^64 − 1 tokens was recorded as
/// −1 (and panicked a debug build); rows of 2^63 made SQLite's `sum` overflow, so every
/// `compress` and `status` failed for the rest of the day. A report is held to a billion
/// tokens of each kind, and the ledger is read safely whatever rows it already holds.
#[test]
fn absurd_usage_numbers_are_clamped_and_never_break_the_ledger() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("tokens"), u64::MAX.to_string()).unwrap();
    ok(&compress(&env, &[]));
    assert_eq!(
        rows(&env, "SELECT input_tokens, tokens FROM compress_calls"),
        [json!([1_000_000_000_i64, 1_000_000_100_i64])]
    );
    // Rows an earlier release stored: 2^64 − 1 as −1, 2^63 as −2^63, and worse.
    let day: String = env
        .db()
        .query_row("SELECT day FROM compress_calls", [], |r| r.get(0))
        .unwrap();
    for (n, tokens) in [-1, i64::MIN, i64::MAX, i64::MAX].into_iter().enumerate() {
        env.db()
            .execute(
                "INSERT INTO compress_calls (id, day, batch, items, tokens, estimated, outcome,
                                             created_at, updated_at)
                 VALUES (?1, ?2, 'b', 1, ?3, 0, 'stored', '', '')",
                rusqlite::params![format!("old{n}"), day, tokens],
            )
            .unwrap();
    }
    let json: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["status", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    let today = json["compress"]["today"]["tokens"].as_i64().unwrap();
    assert!(today >= 1_000_000_100, "{json}");
    ok(&env.command().arg("status").output().unwrap());
    // The budget is spent: the next session waits for tomorrow, said plainly.
    working_session(&env, "s2");
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("today's budget of 300,000 tokens is spent"),
        "{out}"
    );
    assert_eq!(calls(&model).len(), 1);
}

/// Waits for `path` to exist, at most `limit`.
/// Regression: `CLAUDE_MEM_COMPRESS_DAILY_TOKENS=18446744073709551615` was shown as a budget
/// of -1 tokens by `status` and `compress` (u64 shown as i64), a timeout that large made
/// `compress` panic (a lease of 1.25 times it overflowed), and a number past 64 bits was "not
/// a whole number" and became the default 300,000. Each is held to its most, which `doctor`
/// and `status` say.
#[test]
fn numbers_past_their_most_are_held_to_it_and_doctor_says_so() {
    for huge in ["18446744073709551615", "99999999999999999999999"] {
        let (env, _model) = with_model();
        let env = env
            .with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", huge)
            .with("CLAUDE_MEM_COMPRESS_BATCH_TOKENS", huge)
            .with("CLAUDE_MEM_COMPRESS_TIMEOUT", huge);
        working_session(&env, "s1");
        let out = ok(&compress(&env, &[]));
        assert!(
            out.contains("Today: ") && out.contains(" of 1,000,000,000,000 tokens"),
            "{out}"
        );
        let status = ok(&env.command().arg("status").output().unwrap());
        assert!(
            status.contains(" of 1,000,000,000,000 tokens")
                && status.contains(
                    "CLAUDE_MEM_COMPRESS_DAILY_TOKENS is more than 1,000,000,000,000; using \
                     1,000,000,000,000"
                ),
            "{status}"
        );
        assert!(!status.contains(" of -"), "{status}");
        let json: Value = serde_json::from_str(&ok(&env
            .command()
            .args(["status", "--json"])
            .output()
            .unwrap()))
        .unwrap();
        assert_eq!(json["compress"]["daily_tokens"], 1_000_000_000_000u64);
        let doctor = stdout(&env.command().arg("doctor").output().unwrap());
        assert!(
            doctor.contains("environment") && doctor.contains("is more than"),
            "{doctor}"
        );
    }
}

fn wait_for(path: &Path, limit: Duration) {
    harness::wait_until(limit, path.display(), || path.exists());
}

fn spawn_compress(env: &Env, args: &[&str]) -> Child {
    env.command()
        .arg("compress")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A compressor killed during the model call leaves its items claimed; when the lease ends
/// they are claimed again and stored once.
#[test]
fn a_compressor_killed_mid_call_loses_nothing_and_stores_once() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("hold"), "").unwrap();
    let mut first = spawn_compress(&env, &[]);
    wait_for(&model.join("calls"), Duration::from_secs(10));
    let call = loop {
        if let Some(call) = calls(&model).pop() {
            break call;
        }
        thread::sleep(Duration::from_millis(10));
    };
    wait_for(&call.join("cwd"), Duration::from_secs(10));
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(queue_states(&env), [json!(["claimed", 0, 0])]);
    // Another compressor finds nothing to take while the lease runs.
    fs::remove_file(model.join("hold")).unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.starts_with("Nothing to compress"), "{out}");
    // The ledger counted the killed call at its estimate.
    assert_eq!(
        rows(&env, "SELECT outcome, estimated FROM compress_calls"),
        [json!(["pending", 1])]
    );
    // The lease ends (written, not waited for): the items are claimed again.
    assert_eq!(env.end_leases("TRUE"), 6);
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("Compressed 6 items"), "{out}");
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 1);
    assert_eq!(env.count("SELECT COUNT(*) FROM summaries"), 1);
}

/// The forms a model command takes: each of its processes appends its pid to `pids`, then
/// lives on (a sleep of its own length, to tell them apart in `ps`). Each form: what it is,
/// the command, how many processes it makes.
#[cfg(target_os = "linux")]
fn lingering_models(model: &Path) -> Vec<(&'static str, String, usize)> {
    let pids = model.join("pids");
    let p = pids.display();
    let script = |name: &str, body: &str| {
        let path = model.join(name);
        harness::write_program(&path, format!("#!/bin/sh\n{body}"));
        path.to_str().unwrap().to_string()
    };
    vec![
        (
            "a plain command",
            script(
                "plain.sh",
                &format!("echo $$ >> '{p}'\ncat >/dev/null\nsleep 301 &\necho $! >> '{p}'\nwait\n"),
            ),
            2,
        ),
        (
            "a pipeline",
            format!(
                "sh -c 'echo $$ >> \"{p}\"; cat >/dev/null; exec sleep 302' | \
                 sh -c 'echo $$ >> \"{p}\"; exec cat'"
            ),
            2,
        ),
        (
            "a script whose children start sessions of their own",
            script(
                "detaching.sh",
                &format!(
                    "echo $$ >> '{p}'\ncat >/dev/null\nsleep 303 &\necho $! >> '{p}'\n\
                     setsid sh -c 'echo $$ >> \"{p}\"; exec sleep 304' &\n\
                     setsid sh -c 'echo $$ >> \"{p}\"; exec sleep 305' </dev/null >/dev/null 2>&1 &\n\
                     wait\n"
                ),
            ),
            4,
        ),
    ]
}

/// Waits until `n` pids are in the model's `pids` file.
#[cfg(target_os = "linux")]
fn pids_of(model: &Path, n: usize) -> Vec<i32> {
    let started = Instant::now();
    loop {
        let pids: Vec<i32> = fs::read_to_string(model.join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the model started {pids:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` runs (a zombie has ended).
#[cfg(target_os = "linux")]
fn running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Kills what is left of these when the test ends, passed or not.
#[cfg(target_os = "linux")]
struct Survivors(Vec<i32>);

#[cfg(target_os = "linux")]
impl Drop for Survivors {
    fn drop(&mut self) {
        for pid in &self.0 {
            if running(*pid) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Waits up to 5 s for every one of `pids` to end; those still running.
#[cfg(target_os = "linux")]
fn still_running(pids: &[i32]) -> Vec<i32> {
    let started = Instant::now();
    while pids.iter().any(|p| running(*p)) && started.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(20));
    }
    pids.iter().copied().filter(|p| running(*p)).collect()
}

#[cfg(target_os = "linux")]
fn assert_all_end(pids: &[i32], form: &str) {
    let left = still_running(pids);
    assert!(
        left.is_empty(),
        "{form}: still running: {left:?} of {pids:?}"
    );
}

/// Issue 16: a compressor killed with kill -9 left its model program running when
/// `CLAUDE_MEM_COMPRESS_CMD` was set (only the direct child died with it): every process
/// the command started now ends with the compressor, whatever form the command takes.
#[cfg(target_os = "linux")]
#[test]
fn a_compressor_killed_with_kill_9_leaves_no_process_of_its_model_running() {
    let (_scripts_live_here, model) = with_model();
    let mut survived = Vec::new();
    for (form, command, n) in lingering_models(&model) {
        let _ = fs::remove_file(model.join("pids"));
        let env = Env::new().with("CLAUDE_MEM_COMPRESS_CMD", &command);
        working_session(&env, "s1");
        let mut compressor = spawn_compress(&env, &[]);
        let pids = pids_of(&model, n);
        let _survivors = Survivors(pids.clone());
        compressor.kill().unwrap();
        compressor.wait().unwrap();
        let left = still_running(&pids);
        if !left.is_empty() {
            survived.push(format!("{form}: {left:?} of {pids:?}"));
        }
    }
    assert!(survived.is_empty(), "still running: {survived:#?}");
}

/// Issue 16: at the deadline the model's process group was killed, but a child that started
/// a session of its own lived on, and the compressor waited for the output it still held.
/// Now every process of the command ends at the deadline, and the batch fails as a timeout.
#[cfg(target_os = "linux")]
#[test]
fn at_the_deadline_no_process_of_the_model_survives_and_the_batch_fails() {
    let (_scripts_live_here, model) = with_model();
    for (form, command, n) in lingering_models(&model) {
        let _ = fs::remove_file(model.join("pids"));
        let env = Env::new()
            .with("CLAUDE_MEM_COMPRESS_CMD", &command)
            .with("CLAUDE_MEM_COMPRESS_TIMEOUT", "2");
        working_session(&env, "s1");
        let started = Instant::now();
        let mut compressor = spawn_compress(&env, &[]);
        let pids = pids_of(&model, n);
        let _survivors = Survivors(pids.clone());
        let status = harness::claude_cli::wait_or_kill(&mut compressor, Duration::from_secs(30))
            .unwrap()
            .unwrap_or_else(|| panic!("{form}: the compressor still ran after 30 s"));
        assert!(status.success(), "{form}: {status}");
        assert!(started.elapsed() < Duration::from_secs(15), "{form}");
        assert_all_end(&pids, form);
        let error: String = env
            .db()
            .query_row("SELECT DISTINCT last_error FROM pending_queue", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(error, "the model gave no answer within 2 s", "{form}");
    }
}

/// A model that answers and leaves children behind (one in a session of its own, holding its
/// output): the answer is stored at once, not when they end, and they end with the call.
#[cfg(target_os = "linux")]
#[test]
fn a_model_that_answers_and_leaves_children_behind_is_stored_and_they_end() {
    let (env, model) = with_model();
    let p = model.join("pids");
    let p = p.display();
    let script = model.join("answers.sh");
    harness::write_program(
        &script,
        format!(
            "#!/bin/sh\nsleep 306 &\necho $! >> '{p}'\n\
             setsid sh -c 'echo $$ >> \"{p}\"; exec sleep 307' &\n\
             exec {}\n",
            model.join("model.sh").display()
        ),
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    working_session(&env, "s1");
    let started = Instant::now();
    let mut compressor = spawn_compress(&env, &[]);
    let pids = pids_of(&model, 2);
    let _survivors = Survivors(pids.clone());
    let status = harness::claude_cli::wait_or_kill(&mut compressor, Duration::from_secs(30))
        .unwrap()
        .expect("the compressor still ran after 30 s");
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_all_end(&pids, "left behind");
}

/// Two compressors at once, over several sessions: every item is compressed by exactly one
/// of them, once.
#[test]
fn two_compressors_at_once_never_compress_the_same_item() {
    let (env, model) = with_model();
    for session in ["a", "b", "c", "d"] {
        working_session(&env, session);
    }
    // Each holds its first batch in the model until the other has one there too.
    fs::write(model.join("hold"), "").unwrap();
    let runs = [spawn_compress(&env, &[]), spawn_compress(&env, &[])];
    harness::wait_until(Duration::from_secs(60), "two model calls at once", || {
        calls(&model).len() == 2
    });
    fs::remove_file(model.join("hold")).unwrap();
    let outputs: Vec<String> = runs
        .into_iter()
        .map(|run| ok(&run.wait_with_output().unwrap()))
        .collect();
    let done: Vec<usize> = outputs
        .iter()
        .map(|out| {
            out.split("Compressed ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .map_or(0, |n| n.parse().unwrap())
        })
        .collect();
    assert_eq!(done.iter().sum::<usize>(), 24, "{outputs:?}");
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 4);
    // Each item is in exactly one memory.
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM (SELECT j.value FROM memories m, json_each(m.queue_ids) j
                                    GROUP BY j.value HAVING COUNT(*) > 1)"
        ),
        0
    );
    assert_eq!(
        env.count("SELECT COUNT(DISTINCT j.value) FROM memories m, json_each(m.queue_ids) j"),
        24
    );
    assert_eq!(calls(&model).len(), 4);
}

#[test]
fn a_dry_run_prints_the_digests_and_estimates_and_changes_nothing() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    let out = ok(&compress(&env, &["--dry-run"]));
    assert!(
        out.starts_with("=== batch 1 of session s1: 6 items, about "),
        "{out}"
    );
    assert!(
        out.contains("#1 read src/billing.rs · #2 read src/order.rs"),
        "{out}"
    );
    assert!(
        out.contains("6 items of 1 session in 1 call: about ")
            && out.contains("One call per tool call: 6 calls, about "),
        "{out}"
    );
    assert!(calls(&model).is_empty());
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM compress_calls"), 0);
}

/// A large session is cut into batches at the input cap, in capture order; later batches see
/// what earlier ones stored.
#[test]
fn a_session_over_the_input_cap_is_cut_into_batches_in_order() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS_BATCH_TOKENS", "1500");
    for n in 1..=4 {
        let calls: Vec<(&str, Value, Value)> = (0..3)
            .map(|i| {
                (
                    "Bash",
                    json!({"command": format!("cargo test part_{n}_{i}")}),
                    json!({"stdout": source(40)}),
                )
            })
            .collect();
        turn(&env, "big", n, &format!("Turn number {n}"), &calls);
    }
    let out = ok(&compress(&env, &[]));
    let calls = calls(&model);
    assert!(calls.len() > 1, "{out}");
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    let digests: Vec<String> = calls.iter().map(|c| read(c, "digest")).collect();
    assert!(digests[0].contains("Turn 1, the user asked: Turn number 1"));
    assert!(
        digests[1].contains("Already recorded from this session:\n- bugfix: Discounts rounded"),
        "{}",
        digests[1]
    );
    // Every item went to exactly one call, in order.
    let mut seen: Vec<String> = Vec::new();
    for digest in &digests {
        seen.extend(
            digest
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .filter_map(|l| l.split_once(" $ cargo test "))
                .map(|(_, name)| name.to_string()),
        );
    }
    let expected: Vec<String> = (1..=4)
        .flat_map(|n| (0..3).map(move |i| format!("part_{n}_{i}")))
        .collect();
    assert_eq!(seen, expected);
}

/// SessionEnd starts the compressor detached: the hook answers at once (while the compressor
/// is still at work) and the session's items become memories. With CLAUDE_MEM_COMPRESS=off
/// nothing starts.
#[test]
fn session_end_starts_the_compressor_detached_unless_turned_off() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS", "on");
    working_session(&env, "s1");
    fs::write(model.join("hold"), "").unwrap();
    let end = event("s1", "SessionEnd", json!({"reason": "other"}));
    let out = env.hook("cleanup", &end);
    assert_eq!(String::from_utf8_lossy(&out.stdout), ACK);
    assert_clean(&out);
    // The hook is back (its pipes closed: the compressor holds none of them) while the
    // compressor it started is still in its model call.
    wait_until(|| !calls(&model).is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0);
    fs::remove_file(model.join("hold")).unwrap();
    wait_until(|| {
        env.log()
            .contains("6 items into 1 memories and 1 summaries in 1 calls")
    });
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 1);
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);

    let (env, model) = with_model();
    working_session(&env, "s1");
    assert_ack(&env.hook("cleanup", &end));
    assert_started_no_compressor(&env, &model);
    assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
}

/// After the hooks of a test have returned, that they started no compressor: one they had
/// started would be running now (a hook returns once its child is started), or have taken
/// its lock and called the model.
fn assert_started_no_compressor(env: &Env, model: &Path) {
    #[cfg(target_os = "linux")]
    assert_eq!(env.running("compress"), Vec::<u32>::new());
    assert!(!env.data_dir.join("compress.lock").exists());
    assert!(calls(model).is_empty());
}

/// Waits until `done` holds, at most a minute. (Taking the compressor's lock to see whether
/// it runs would keep the one just started from running.)
fn wait_until(done: impl FnMut() -> bool) {
    harness::wait_until(Duration::from_secs(60), "the compressor", done);
}

/// A Stop starts it only once enough waits (100 items): a short turn does not.
#[test]
fn a_stop_starts_the_compressor_once_the_backlog_passes_the_threshold() {
    let (env, model) = with_model();
    let env = env.with("CLAUDE_MEM_COMPRESS", "on");
    working_session(&env, "s1");
    // 6 items are no backlog.
    assert_started_no_compressor(&env, &model);
    let many: Vec<(&str, Value, Value)> = (0..100)
        .map(|i| {
            (
                "Bash",
                json!({"command": format!("echo {i}")}),
                json!({"stdout": "ok"}),
            )
        })
        .collect();
    turn(&env, "s1", 2, "Run many commands", &many);
    wait_until(|| env.log().contains(" items into "));
    assert!(!calls(&model).is_empty());
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
}

/// The example of `CLAUDE_MEM_COMPRESS_CMD` in docs/compression.md, run as it is printed there,
/// against a stand-in for ollama's API: what it sends (the instructions, the digest, the schema
/// as the format) and what comes of its answer.
#[test]
fn the_documented_example_command_compresses_with_a_local_model() {
    if !harness::require_program("python3") {
        return;
    }
    let doc =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/compression.md")).unwrap();
    let section = &doc[doc.find("\n## The model\n").unwrap()..];
    let start = section.find("```python\n").unwrap() + "```python\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let env = Env::new();
    let script = env.root.path().join("claude-mem-ollama");
    harness::write_program(&script, example);
    let ollama = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let env = env
        .with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap())
        .with("OLLAMA_HOST", &ollama.local_addr().unwrap().to_string());
    let requests = thread::spawn(move || fake_ollama(ollama.accept().unwrap().0));
    working_session(&env, "s1");
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("into 1 memory and 1 summary (1 model call)"),
        "{out}"
    );
    let request = requests.join().unwrap();
    assert_eq!(request["model"], "qwen2.5-coder:7b");
    assert_eq!(
        request["format"]["required"],
        json!(["observations", "summary"])
    );
    assert!(
        request["system"]
            .as_str()
            .unwrap()
            .contains("You write memories")
    );
    assert!(
        request["prompt"]
            .as_str()
            .unwrap()
            .contains("#1 read src/billing.rs")
    );
    assert_eq!(
        rows(
            &env,
            "SELECT input_tokens, output_tokens, outcome FROM compress_calls"
        ),
        [json!([321, 45, "stored"])]
    );
}

/// Answers one `POST /api/generate` as ollama does (the answer as JSON text in `response`,
/// the token counts beside it); returns the request's body.
fn fake_ollama(stream: std::net::TcpStream) -> Value {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let request: Value = serde_json::from_slice(&body).unwrap();
    let answer = json!({"observations": [{"type": "discovery", "title": "Rounding is per item",
        "narrative": "n", "facts": [], "concepts": [], "files_read": [], "files_modified": [],
        "sources": [1]}], "summary": {"request": "r", "investigated": "", "learned": "",
        "completed": "", "next_steps": ""}});
    let reply = json!({"model": "qwen2.5-coder:7b", "response": answer.to_string(),
                       "done": true, "prompt_eval_count": 321, "eval_count": 45})
    .to_string();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{reply}",
        reply.len()
    )
    .unwrap();
    request
}

#[test]
fn install_hooks_says_what_compression_uses_and_how_to_turn_it_off() {
    let env = Env::new().with("CLAUDE_MEM_COMPRESS", "on");
    let out = ok(&env.command().arg("install-hooks").output().unwrap());
    // The note is wrapped to 100 columns: read it as one line.
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains(
            "Compression: after each session, claude-mem compress turns its captured tool calls \
             into short memories with your Claude Code account (claude -p with model haiku"
        ) && out.contains("at most 300,000 tokens a day")
            && out.contains("set CLAUDE_MEM_COMPRESS=off"),
        "{out}"
    );
}

/// The real Claude Code CLI as the compressor, against the mock of the API: what it sends
/// (a small model, no tools but the answer's, our schema, our instructions, our digest, none
/// of the user's CLAUDE.md), and what comes of the scripted answers.
mod real_cli {
    use super::*;
    use crate::harness::claude_cli;
    use crate::harness::mock_api::{MockApi, Reply};

    struct Cli {
        env: Env,
        mock: MockApi,
    }

    fn cli() -> Option<Cli> {
        let Cli { env, mock } = logged_out()?;
        let env = env.with("ANTHROPIC_API_KEY", "sk-ant-compress-dummy");
        Some(Cli { env, mock })
    }

    /// The CLI with no login at all (and the mock as its API all the same, so that a login it
    /// found elsewhere would reach nothing real).
    fn logged_out() -> Option<Cli> {
        let claude = claude_cli::find()?;
        let mock = MockApi::start(Duration::from_secs(600)).unwrap();
        let env = Env::new()
            .with("CLAUDE_MEM_CLAUDE_BIN", claude.to_str().unwrap())
            .with("ANTHROPIC_BASE_URL", &mock.base_url())
            .with("DISABLE_TELEMETRY", "1")
            .with("DISABLE_AUTOUPDATER", "1")
            .with("DISABLE_ERROR_REPORTING", "1")
            .with("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        let env = if harness::is_root() {
            env.with("IS_SANDBOX", "1")
        } else {
            env
        };
        // Instructions of the user's that the compressor must neither follow nor pay for.
        fs::create_dir_all(env.home().join(".claude")).unwrap();
        fs::write(
            env.home().join(".claude/CLAUDE.md"),
            "USER-CLAUDE-MD-MARKER\n",
        )
        .unwrap();
        Some(Cli { env, mock })
    }

    fn answer() -> Value {
        json!({"observations": [{"type": "bugfix", "title": "Discounts rounded once per order",
            "narrative": "Discounts were rounded per item; now once on the order total.",
            "facts": ["round_discount is in src/billing.rs"], "concepts": ["problem-solution"],
            "files_read": ["src/billing.rs"], "files_modified": ["src/billing.rs"],
            "sources": [4, 5]}],
            "summary": {"request": "Fix the discount rounding", "investigated": "billing",
                        "learned": "per-item rounding lost cents", "completed": "fixed",
                        "next_steps": ""}})
    }

    #[test]
    fn the_cli_is_asked_for_our_schema_with_a_small_model_and_no_tools() {
        let Some(Cli { env, mock }) = cli() else {
            return;
        };
        working_session(&env, "s1");
        mock.set_structured(vec![Reply::structured(answer())]);
        let out = ok(&compress(&env, &[]));
        assert!(
            out.contains("Compressed 6 items of 1 session into 1 memory and 1 summary"),
            "{out}"
        );

        let requests = mock.requests();
        let asks: Vec<_> = requests.iter().filter(|r| r.wants_structure()).collect();
        assert_eq!(asks.len(), 1, "one call: {requests:#?}");
        let body = &asks[0].body;
        assert!(
            body["model"].as_str().unwrap().contains("haiku"),
            "{}",
            body["model"]
        );
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["defer_loading"] != true)
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["StructuredOutput"], "no tool but the answer's");
        let schema = &body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "StructuredOutput")
            .unwrap()["input_schema"];
        assert_eq!(schema["required"], json!(["observations", "summary"]));
        assert_eq!(
            schema["properties"]["observations"]["items"]["properties"]["type"]["enum"],
            json!([
                "bugfix",
                "feature",
                "refactor",
                "change",
                "discovery",
                "decision"
            ])
        );
        assert!(asks[0].has_text_with(&["You write memories of a Claude Code session"]));
        assert!(asks[0].has_text_with(&[
            "Turn 1, the user asked: Fix the discount rounding in billing",
            "#1 read src/billing.rs · #2 read src/order.rs",
        ]));
        assert!(
            !asks[0].has_text_with(&["USER-CLAUDE-MD-MARKER"]),
            "the user's CLAUDE.md went to the compressor"
        );
        assert!(!asks[0].has_text_with(&[PROJECT, "Primary working directory"]));

        let memory = rows(
            &env,
            "SELECT type, files_modified, json_array_length(queue_ids), model FROM memories",
        );
        assert_eq!(memory.len(), 1);
        assert_eq!(memory[0][0], "bugfix");
        assert_eq!(memory[0][1], "[\"/home/dev/shop/src/billing.rs\"]");
        assert_eq!(memory[0][2], 2);
        assert!(
            memory[0][3].as_str().unwrap().contains("haiku"),
            "{memory:?}"
        );
        assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
        // The spend as the CLI reported it: the mock's usage (12 in, 8 out) and a cost.
        let spend = rows(
            &env,
            "SELECT input_tokens, output_tokens, estimated, cost_usd > 0, outcome FROM compress_calls",
        );
        assert_eq!(spend, [json!([12, 8, 0, 1, "stored"])]);
    }

    /// A working session in Claude Code with the hooks installed: when it ends, its
    /// SessionEnd starts the compressor, which asks the CLI, and the session's memories are
    /// stored (the compressor's own session is recorded nowhere); the next session's context,
    /// as it reaches the model, carries them.
    #[test]
    fn a_session_that_ends_is_compressed_by_the_cli_and_the_next_one_is_told() {
        let Some(Cli { env, mock }) = cli() else {
            return;
        };
        let env = env.with("CLAUDE_MEM_COMPRESS", "on");
        let claude = claude_cli::find().unwrap();
        let project = env.root.path().join("project");
        fs::create_dir(&project).unwrap();
        let project = project.canonicalize().unwrap();
        ok(&env.command().arg("install-hooks").output().unwrap());
        mock.set_script(vec![
            Reply::ToolUse {
                id: "toolu_bash".into(),
                name: "Bash".into(),
                input: json!({"command": "echo fixed > fixed.txt", "description": "Mark it"}),
            },
            Reply::ToolUse {
                id: "toolu_write".into(),
                name: "Write".into(),
                input: json!({"file_path": project.join("NOTES.md"),
                              "content": "Discounts are rounded once per order.\n"}),
            },
            Reply::Text("Fixed: discounts are rounded once per order.".into()),
        ]);
        let mut first = answer();
        first["observations"][0]["sources"] = json!([1, 2]);
        mock.set_structured(vec![Reply::structured(first)]);
        let session = |prompt: &str| {
            let mut session = env.command_of(&claude);
            session
                .args(["-p", prompt, "--dangerously-skip-permissions"])
                .args(["--output-format", "json"])
                .current_dir(&project)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let mut child = session.spawn().unwrap();
            let status = claude_cli::wait_or_kill(&mut child, Duration::from_secs(120)).unwrap();
            assert!(
                status.is_some_and(|s| s.success()),
                "claude -p failed: {status:?}"
            );
        };
        session("Fix the discount rounding");

        wait_until(|| env.count("SELECT COUNT(*) FROM memories") > 0);
        let memories = rows(
            &env,
            "SELECT type, title, json_array_length(queue_ids) FROM memories",
        );
        assert_eq!(
            memories,
            [json!(["bugfix", "Discounts rounded once per order", 2])]
        );
        wait_until(|| env.count("SELECT COUNT(*) FROM pending_queue WHERE status <> 'done'") == 0);
        assert_eq!(env.count("SELECT COUNT(*) FROM summaries"), 1);
        let ask = mock
            .requests()
            .into_iter()
            .find(|r| r.wants_structure())
            .expect("the compressor asked the CLI");
        assert!(ask.has_text_with(&["#1 $ echo fixed > fixed.txt  (Mark it)"]));
        assert!(ask.has_text_with(&["Fixed: discounts are rounded once per order."]));
        assert_eq!(
            env.count("SELECT COUNT(*) FROM sessions"),
            1,
            "the compressor's own claude -p session was recorded"
        );

        mock.set_script(vec![Reply::Text(
            "We rounded discounts once per order.".into(),
        )]);
        let mut second = answer();
        second["observations"] = json!([]);
        mock.set_structured(vec![Reply::structured(second)]);
        let before = mock.requests().len();
        session("What did we change last time?");
        let told = mock.requests()[before..].iter().any(|r| {
            r.is_main_turn()
                && !r.wants_structure()
                && r.has_text_with(&[
                    "<claude-mem-context>",
                    "  memories:\n    bugfix ",
                    ": Discounts rounded once per order\n",
                    "  asked: Fix the discount rounding\n",
                ])
        });
        assert!(told, "the next session's context did not carry the memory");
        // The compressor its end started is done before the mock goes away.
        wait_until(|| env.count("SELECT COUNT(*) FROM summaries") == 2);
    }

    /// Issue 16 with the real CLI: no login is not the batch's fault.
    #[test]
    fn without_a_login_the_items_wait_untouched_and_the_command_says_to_log_in() {
        let Some(Cli { env, mock }) = logged_out() else {
            return;
        };
        working_session(&env, "s1");
        let out = compress(&env, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("Not logged in") && err.contains("run claude, then /login"),
            "{err}"
        );
        assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
        assert!(mock.requests().is_empty(), "{:#?}", mock.requests());
    }

    /// Regression: with its API out of reach, Claude Code retried a refused connection for
    /// about three minutes before it said so; under the compressor's deadline that became a
    /// timeout, an attempt counted against items that had done nothing wrong. Now it says so
    /// in seconds, and the items wait untouched.
    #[test]
    fn an_api_out_of_reach_is_known_in_seconds_and_the_items_wait_untouched() {
        let Some(Cli { env, mock: _mock }) = cli() else {
            return;
        };
        // A loopback port nothing listens on: every connection is refused.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let env = env
            .with("ANTHROPIC_BASE_URL", &format!("http://127.0.0.1:{closed}"))
            .with("CLAUDE_MEM_COMPRESS_TIMEOUT", "90");
        working_session(&env, "s1");
        let started = Instant::now();
        let out = compress(&env, &[]);
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}{}", stdout(&out));
        assert!(
            err.contains("Connection refused") && err.contains("check the network"),
            "{err}"
        );
        assert_eq!(queue_states(&env), [json!(["raw", 0, 0])]);
        // About two seconds here; the deadline is 90.
        assert!(took < Duration::from_secs(30), "took {took:?}");
    }

    #[test]
    fn a_malformed_answer_or_an_api_error_fails_the_batch() {
        let Some(Cli { env, mock }) = cli() else {
            return;
        };
        working_session(&env, "s1");
        let mut bad = answer();
        bad["observations"][0]["type"] = json!("chore");
        // The CLI checks the answer against the schema and asks once more; both are wrong.
        mock.set_structured(vec![Reply::structured(bad.clone()), Reply::structured(bad)]);
        let out = ok(&compress(&env, &[]));
        assert!(out.contains("1 batch failed"), "{out}");
        assert_eq!(queue_states(&env), [json!(["failed", 1, 1])]);
        assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0);

        env.db()
            .execute_batch(
                "UPDATE pending_queue SET retry_at = '2000-01-01T00:00:00.000Z'
                  WHERE retry_at IS NOT NULL",
            )
            .unwrap();
        mock.set_structured(vec![Reply::Error {
            status: 400,
            message: "prompt is too long".into(),
        }]);
        let out = ok(&compress(&env, &[]));
        assert!(out.contains("1 batch failed"), "{out}");
        assert_eq!(queue_states(&env), [json!(["failed", 2, 1])]);
        let error: String = env
            .db()
            .query_row("SELECT DISTINCT last_error FROM pending_queue", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(error.contains("rompt is too long"), "{error}");
    }
}
