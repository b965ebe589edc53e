//! What the tests of retention, forget, scrub and export share: sessions recorded by the real
//! hooks and made old on demand, compressed into memories by the real compressor (with a
//! stand-in for the model), the commands run as a person would run them, and ids.

use std::process::Output;

use serde_json::{Value, json};

use super::{Env, assert_ack};

pub const PROJECT: &str = "/home/dev/shop";

/// A turn whose four texts each carry a word of their own: `{word}prompt`, `{word}command`,
/// `{word}output` and `{word}message`.
pub fn turn(word: &str) -> [String; 4] {
    ["prompt", "command", "output", "message"].map(|part| format!("{word}{part}"))
}

/// A hook event of `session` in `project`, shaped like Claude Code's.
pub fn event(name: &str, session: &str, project: &str, extra: Value) -> Vec<u8> {
    let mut e = json!({
        "session_id": session,
        "transcript_path": format!("/home/dev/.claude/projects/x/{session}.jsonl"),
        "cwd": project,
        "hook_event_name": name,
    });
    e.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    e.to_string().into_bytes()
}

/// Records a session as the hooks do (without its end, which would start maintenance): a
/// start, then each turn's prompt, Bash call and Stop. The words of turn `n` are
/// [`turn`]`(word)` of `words[n]`.
pub fn session(env: &Env, session: &str, project: &str, words: &[&str]) {
    let hook = |name: &str, event_name: &str, extra: Value| {
        assert_ack(&env.hook(name, &event(event_name, session, project, extra)));
    };
    let start = event(
        "SessionStart",
        session,
        project,
        json!({"source": "startup"}),
    );
    let out = env.hook("context", &start);
    assert_eq!(out.status.code(), Some(0));
    for (n, word) in words.iter().enumerate() {
        let [prompt, command, output, message] = turn(word);
        let prompt_id = format!("{session}-p{n}");
        hook(
            "prompt",
            "UserPromptSubmit",
            json!({"prompt_id": prompt_id, "prompt": format!("please look at {prompt}")}),
        );
        hook(
            "capture",
            "PostToolUse",
            json!({"prompt_id": prompt_id, "tool_name": "Bash",
                   "tool_use_id": format!("{session}-t{n}"),
                   "tool_input": {"command": format!("grep -r {command} src")},
                   "tool_response": {"stdout": format!("src/a.rs: {output}"), "stderr": ""}}),
        );
        hook(
            "summary",
            "Stop",
            json!({"prompt_id": prompt_id, "last_assistant_message": format!("Done: {message}")}),
        );
    }
}

/// Moves everything of `session` `days` into the past, as if it had happened then.
pub fn age(env: &Env, session: &str, days: i64) {
    let shift = format!("'-{days} days'");
    let at = |column: &str| format!("{column} = strftime('%Y-%m-%dT%H:%M:%fZ', {column}, {shift})");
    env.db()
        .execute_batch(&format!(
            "UPDATE sessions SET {}, {}, ended_at = NULL WHERE session_id = '{session}';
             UPDATE user_prompts SET {} WHERE session_id = '{session}';
             UPDATE pending_queue SET {}, {} WHERE session_id = '{session}';
             UPDATE event_log SET {} WHERE session_id = '{session}';
             UPDATE memories SET {} WHERE session_id = '{session}';
             UPDATE summaries SET {} WHERE session_id = '{session}';",
            at("started_at"),
            at("updated_at"),
            at("created_at"),
            at("created_at"),
            at("updated_at"),
            at("created_at"),
            at("created_at"),
            at("created_at"),
        ))
        .unwrap();
}

/// A memory the model answers: its title, narrative and fact carry `{word}title`,
/// `{word}narrative` and `{word}fact`; it comes from the digest's items `sources` (numbered
/// from 1 in the order they were captured: a turn's tool call, then its message).
pub fn memory(word: &str, sources: &[u32]) -> Value {
    json!({"type": "discovery", "title": format!("{word}title"),
           "narrative": format!("{word}narrative"), "facts": [format!("{word}fact")],
           "concepts": ["how-it-works"], "files_read": ["src/a.rs"], "files_modified": [],
           "sources": sources})
}

/// A summary the model answers, each of its texts carrying `word`: `{word}request`,
/// `{word}investigated`, `{word}learned`, `{word}completed`, `{word}next`.
pub fn summary(word: &str) -> Value {
    json!({"request": format!("{word}request"), "investigated": format!("{word}investigated"),
           "learned": format!("{word}learned"), "completed": format!("{word}completed"),
           "next_steps": format!("{word}next")})
}

/// Runs `claude-mem compress --session <session>` with a model that answers `memories` and
/// `summary` (the batch ends a turn, so the compressor asks for one), and checks it stored
/// them. The answer's file is removed after, so that no file holds its words but the data dir.
#[cfg(unix)]
pub fn compress(env: &Env, session: &str, memories: &[Value], summary: Value) {
    let answer = env.root.path().join("answer.json");
    let reply = json!({"structured_output": {"observations": memories, "summary": summary},
                       "usage": {"input_tokens": 1000, "output_tokens": 100}});
    std::fs::write(&answer, reply.to_string()).unwrap();
    let out = env
        .command()
        .args(["compress", "--session", session])
        .env(
            "CLAUDE_MEM_COMPRESS_CMD",
            format!("cat >/dev/null; cat '{}'", answer.display()),
        )
        .output()
        .unwrap();
    std::fs::remove_file(&answer).unwrap();
    let said = ok(&out);
    assert!(
        said.contains(&format!(
            "into {} and 1 summary",
            match memories.len() {
                1 => "1 memory".to_string(),
                n => format!("{n} memories"),
            }
        )),
        "{said}"
    );
}

/// `claude-mem <args>` in [`PROJECT`].
pub fn run(env: &Env, args: &[&str]) -> Output {
    env.command()
        .args(args)
        .env("CLAUDE_PROJECT_DIR", PROJECT)
        .output()
        .unwrap()
}

/// The output of a run that must succeed: exit 0, nothing on stderr.
pub fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The one line a failed run printed, after checking its exit code.
pub fn failed(out: &Output, code: i32) -> String {
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

/// The ids `sql` selects, in order.
pub fn ids(env: &Env, sql: &str) -> Vec<String> {
    let db = env.db();
    let mut stmt = db.prepare(sql).unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The id every command prints for a row id (a UUID v7): the start of its last group.
pub fn short(id: &str) -> &str {
    &id[24..32]
}

/// What `claude-mem search --all <words>` finds: the kinds (or tools) of the results.
pub fn found(env: &Env, words: &str) -> Vec<String> {
    let out = run(env, &["search", "--all", "--json", words]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let hit: Value = serde_json::from_str(l).unwrap();
            hit["tool"]
                .as_str()
                .unwrap_or(hit["kind"].as_str().unwrap())
                .to_string()
        })
        .collect()
}

/// Records `sessions` (id, word) as the hooks do, their turns interleaved (turn 1 of each, then
/// turn 2 of each, ...), each turn a prompt, a Bash call with a long output and a Stop, so that
/// the rows of every session are spread over pages that split while the others grow. The words
/// of turn `n` of a session are [`turn`]`("{word}{n:02}")`; each text carries its word at both
/// ends, and the outputs run from 300 bytes to 5 KB (some need overflow pages). The sessions
/// start with turn 0.
pub fn interleaved(env: &Env, sessions: &[(&str, &str)], turns: std::ops::Range<usize>) {
    let hook = |name: &str, event_name: &str, session: &str, extra: Value| {
        assert_ack(&env.hook(name, &event(event_name, session, PROJECT, extra)));
    };
    if turns.start == 0 {
        for (session, _) in sessions {
            let start = event(
                "SessionStart",
                session,
                PROJECT,
                json!({"source": "startup"}),
            );
            assert_eq!(env.hook("context", &start).status.code(), Some(0));
        }
    }
    let mut seed = 7 + turns.start as u64;
    for n in turns {
        for (i, (session, word)) in sessions.iter().enumerate() {
            let [prompt, command, output, message] = turn(&format!("{word}{n:02}"));
            let prompt_id = format!("{session}-p{n}");
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let filler = filler(300 + (seed >> 33) as usize % 4700, seed);
            hook(
                "prompt",
                "UserPromptSubmit",
                session,
                json!({"prompt_id": prompt_id,
                       "prompt": format!("{prompt} please look at {} {prompt}", &filler[..80])}),
            );
            hook(
                "capture",
                "PostToolUse",
                session,
                json!({"prompt_id": prompt_id, "tool_name": "Bash",
                       "tool_use_id": format!("{session}-t{n}-{i}"),
                       "tool_input": {"command": format!("grep -r {command} src # {command}")},
                       "tool_response": {"stdout": format!("{output} {filler} {output}"),
                                         "stderr": ""}}),
            );
            hook(
                "summary",
                "Stop",
                session,
                json!({"prompt_id": prompt_id,
                       "last_assistant_message":
                           format!("{message} {} {message}", &filler[..filler.len().min(600)])}),
            );
        }
    }
}

/// Every word [`interleaved`] gave the first `turns` turns of a session recorded as `word`.
pub fn words_of(word: &str, turns: usize) -> Vec<String> {
    (0..turns)
        .flat_map(|n| turn(&format!("{word}{n:02}")))
        .collect()
}

/// `len` bytes of words that look like a command's output and hold no marker of [`turn`].
fn filler(len: usize, mut seed: u64) -> String {
    const WORDS: &[&str] = &[
        "src/lib.rs:",
        "fn",
        "let",
        "match",
        "Ok(())",
        "error[E0308]:",
        "warning:",
        "-->",
        "12",
        "348",
        "|",
        "=",
        "note:",
        "expected",
        "found",
        "struct",
        "impl",
        "pub",
        "mod",
        "test",
        "passed;",
        "failed;",
        "0x7f3a",
        "ms",
        "Compiling",
        "Finished",
        "\n",
    ];
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(WORDS[(seed >> 33) as usize % WORDS.len()]);
        out.push(' ');
    }
    out.truncate(len);
    out
}
