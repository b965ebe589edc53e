//! Hygiene at the door, through the real binary: secrets never reach the disk whichever hook
//! carries them (database, WAL, spill file, log), near-misses are kept as written, known tools
//! are stored lean, and an excluded project leaves nothing behind.

// The recall test reports its figure.
#![allow(clippy::print_stderr)]

use crate::harness::*;
use serde_json::{Value, json};

fn corpus() -> Value {
    fixture_json("secrets/corpus.json")
}

/// The ways a text reaches a hook: as a prompt, a command, its output, an error, Claude's
/// message, a transcript's last message, or deep in an unknown tool's response.
const CARRIERS: &[&str] = &[
    "prompt",
    "command",
    "output",
    "error",
    "message",
    "transcript",
    "unknown tool",
];

/// Runs the hook that carries `text` the way `carrier` says, as turn `id`.
fn carry(env: &Env, carrier: &str, id: &str, text: &str) {
    let bash = |input: Value, response: Value| {
        hook_event(
            "PostToolUse",
            id,
            json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": input, "tool_response": response}),
        )
    };
    let (hook, input) = match carrier {
        "prompt" => (
            "prompt",
            hook_event("UserPromptSubmit", id, json!({"prompt": text})),
        ),
        "command" => (
            "capture",
            bash(json!({"command": text}), json!({"stdout": "ok"})),
        ),
        "output" => (
            "capture",
            bash(json!({"command": "cat x"}), json!({"stdout": text})),
        ),
        "error" => (
            "capture",
            hook_event(
                "PostToolUseFailure",
                id,
                json!({"tool_name": "Bash", "tool_use_id": id, "tool_input": {"command": "make"},
                       "error": format!("Exit code 1\n{text}"), "is_interrupt": false}),
            ),
        ),
        "message" => (
            "summary",
            hook_event("Stop", id, json!({"last_assistant_message": text})),
        ),
        "transcript" => {
            // Claude Code's file, outside the folders claude-mem writes (which are scanned).
            let path = env.root.path().join("home").join(format!("{id}.jsonl"));
            let line = json!({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}});
            std::fs::write(&path, format!("{line}\n")).unwrap();
            let path = path.to_str().unwrap();
            (
                "summary",
                hook_event("Stop", id, json!({"transcript_path": path})),
            )
        }
        "unknown tool" => (
            "capture",
            hook_event(
                "PostToolUse",
                id,
                json!({"tool_name": "mcp__db__query", "tool_use_id": id, "tool_input": {"sql": "select 1"},
                       "tool_response": {"rows": [{"note": text}]}}),
            ),
        ),
        _ => unreachable!("{carrier}"),
    };
    assert_ack(&env.hook(hook, &input));
}

/// The text stored for turn `id` as `carrier` carried it.
fn stored(env: &Env, carrier: &str, id: &str) -> String {
    let db = env.db();
    let query = |sql: &str| -> String {
        db.query_row(sql, [id], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{carrier} {id}: {e}"))
    };
    let raw = |path: &str| {
        query(&format!(
            "SELECT json_extract(raw_output, '{path}') FROM pending_queue WHERE prompt_id = ?1"
        ))
    };
    match carrier {
        "prompt" => query("SELECT prompt_text FROM user_prompts WHERE prompt_id = ?1"),
        "command" => raw("$.tool_input.command"),
        "output" => raw("$.tool_response.stdout"),
        "error" => raw("$.error")
            .trim_start_matches("Exit code 1\n")
            .to_string(),
        "message" | "transcript" => raw("$.last_assistant_message"),
        "unknown tool" => raw("$.tool_response.rows[0].note"),
        _ => unreachable!("{carrier}"),
    }
}

/// Carries each text by every carrier, as turn `{prefix}{i}-{carrier}`; `check` is handed
/// the text's index, the carrier and what was stored.
fn carry_everywhere(
    env: &Env,
    texts: &[&str],
    prefix: &str,
    mut check: impl FnMut(usize, &str, String),
) {
    for (i, text) in texts.iter().enumerate() {
        for carrier in CARRIERS {
            let id = format!("{prefix}{i}-{}", carrier.replace(' ', "-"));
            carry(env, carrier, &id, text);
            check(i, carrier, stored(env, carrier, &id));
        }
    }
}

#[test]
fn no_secret_of_the_corpus_reaches_the_disk_whatever_carries_it() {
    let env = Env::new();
    let corpus = corpus();
    let secrets = corpus["secrets"].as_array().unwrap();
    assert!(secrets.len() >= 40);
    let field =
        |name: &str| -> Vec<&str> { secrets.iter().map(|c| c[name].as_str().unwrap()).collect() };
    let (texts, rules) = (field("text"), field("rule"));
    carry_everywhere(&env, &texts, "s", |i, carrier, kept| {
        let marker = format!("[REDACTED:{}]", rules[i]);
        let text = texts[i];
        assert!(
            kept.contains(&marker),
            "{carrier}: {text:?} stored as {kept:?}"
        );
    });
    let disk = everything_on_disk(&env);
    for secret in field("secret") {
        assert!(!contains(&disk, secret), "on disk: {secret}");
    }
}

/// Runs the hook that carries `text` in the event `event` of the corpus (see corpus.py) names,
/// as turn `id`: each secret where a user would have it.
fn produce(env: &Env, event: &str, id: &str, text: &str) {
    let tool = |name: &str, input: Value, response: Value| {
        hook_event(
            "PostToolUse",
            id,
            json!({"tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": response}),
        )
    };
    let input = match event {
        "read" => tool(
            "Read",
            json!({"file_path": "/home/dev/shop/config/settings.txt"}),
            json!({"type": "text", "file": {"filePath": "/home/dev/shop/config/settings.txt",
                   "content": text, "numLines": text.lines().count(), "startLine": 1}}),
        ),
        "write" => tool(
            "Write",
            json!({"file_path": "/home/dev/shop/src/client.py", "content": text}),
            json!({"type": "create", "filePath": "/home/dev/shop/src/client.py", "content": text}),
        ),
        "mcp" => return carry(env, "unknown tool", id, text),
        carrier => return carry(env, carrier, id, text),
    };
    assert_ack(&env.hook("capture", &input));
}

/// The measure: each secret of the corpus in the event a user would produce, through
/// the real hooks, then every byte of the data dir searched for it. The first corpus (84
/// secrets, kept apart) left 25 on disk; this one has a case for each format it missed.
#[test]
fn the_corpus_in_the_events_users_produce_leaves_no_secret_on_disk() {
    let env = Env::new();
    let corpus = corpus();
    let secrets = corpus["secrets"].as_array().unwrap();
    assert!(secrets.len() >= 150, "{}", secrets.len());
    for (i, case) in secrets.iter().enumerate() {
        let event = case["event"].as_str().unwrap();
        produce(
            &env,
            event,
            &format!("r{i}-{event}"),
            case["text"].as_str().unwrap(),
        );
    }
    let disk = everything_on_disk(&env);
    let left: Vec<String> = secrets
        .iter()
        .filter(|case| contains(&disk, case["secret"].as_str().unwrap()))
        .map(|case| format!("{} in {:?}", case["rule"], case["text"]))
        .collect();
    let recall = 1.0 - left.len() as f64 / secrets.len() as f64;
    eprintln!(
        "recall {:.1}% ({} of {} secrets left on disk)",
        recall * 100.0,
        left.len(),
        secrets.len()
    );
    // The issue asks for 95%; every format of this corpus has its rule, so none may be left.
    assert!(
        left.is_empty(),
        "recall {:.1}%, left on disk:\n{}",
        recall * 100.0,
        left.join("\n")
    );
}

#[test]
fn near_misses_are_stored_as_written() {
    let env = Env::new();
    let corpus = corpus();
    let kept: Vec<&str> = corpus["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(kept.len() >= 40);
    carry_everywhere(&env, &kept, "k", |i, carrier, stored| {
        assert_eq!(stored, kept[i], "{carrier}");
    });
    assert!(!contains(&everything_on_disk(&env), "[REDACTED"));
}

const TOKEN: &str = "ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i";

#[test]
fn secrets_stay_out_of_spill_files_the_log_and_json_members() {
    let env = Env::new()
        .with("CLAUDE_MEM_WAIT_MS", "100")
        // A bad setting is quoted in the log.
        .with("CLAUDE_MEM_SYNCHRONOUS", TOKEN);
    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t0", json!({"prompt": "hi"})),
    ));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let spilled = hook_event(
        "PostToolUse",
        "t1",
        json!({"tool_name": "mcp__github__create_issue", "tool_use_id": "spilled",
               "tool_input": {"api_key": "x8Kd92mQp4Lz7RtY3vNw", "title": format!("leak {TOKEN}")},
               "tool_response": {"ok": true}}),
    );
    assert_ack(&env.hook("capture", &spilled));
    assert_eq!(env.spilled().len(), 1);
    let disk = everything_on_disk(&env);
    assert!(!contains(&disk, TOKEN) && !contains(&disk, "x8Kd92mQp4Lz7RtY3vNw"));
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);

    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t2", json!({"prompt": "next"})),
    ));
    env.wait_for_maintenance();
    let input: String = env
        .db()
        .query_row(
            "SELECT json(json_extract(raw_output, '$.tool_input')) FROM pending_queue
              WHERE tool_use_id = 'spilled'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let input: Value = serde_json::from_str(&input).unwrap();
    assert_eq!(
        input,
        json!({"api_key": "[REDACTED:api-key]", "title": "leak [REDACTED:github-token]"})
    );
    let log = env.log();
    assert!(
        log.contains("CLAUDE_MEM_SYNCHRONOUS=\"[REDACTED:github-token]\""),
        "{log}"
    );
    assert!(!contains(&everything_on_disk(&env), TOKEN));
}

#[test]
fn a_token_in_a_prompt_is_not_handed_to_later_sessions() {
    let env = Env::new();
    let prompt = format!("use {TOKEN} to push the release");
    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t1", json!({"prompt": prompt})),
    ));
    let start = json!({"session_id": "next", "cwd": "/p", "hook_event_name": "SessionStart",
                       "source": "startup"});
    let out = env.hook("context", start.to_string().as_bytes());
    assert_clean(&out);
    let context = String::from_utf8_lossy(&out.stdout);
    assert!(
        context.contains("use [REDACTED:github-token] to push"),
        "{context}"
    );
    assert!(!context.contains(TOKEN));
}

#[test]
fn redaction_can_be_extended_or_turned_off() {
    let env = Env::new().with("CLAUDE_MEM_REDACT_EXTRA", "acme_*, hunter2, *bad");
    let prompt = format!("deploy with acme_8f3kd93hd and hunter2 and {TOKEN}");
    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t1", json!({"prompt": prompt})),
    ));
    assert_eq!(
        stored(&env, "prompt", "t1"),
        "deploy with [REDACTED:custom] and [REDACTED:custom] and [REDACTED:github-token]"
    );
    assert!(
        env.log()
            .contains("pattern 3 of 3 in CLAUDE_MEM_REDACT_EXTRA does not start with 3 plain")
    );

    let env = Env::new().with("CLAUDE_MEM_REDACT", "0");
    let prompt = format!("deploy with {TOKEN}");
    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t1", json!({"prompt": prompt})),
    ));
    assert_eq!(stored(&env, "prompt", "t1"), prompt, "off means off");
}

/// Regression: a `CLAUDE_MEM_REDACT_EXTRA` pattern that could not be used was quoted in the
/// log, and a pattern may be the very secret to keep out (`hunter2*`, `s3cr3t-?`).
#[test]
fn an_unusable_redact_extra_pattern_is_logged_by_its_place_not_its_text() {
    let env = Env::new().with(
        "CLAUDE_MEM_REDACT_EXTRA",
        "acme_*, ?Zq81kdP0x9, *Lm3pZr8Tq7",
    );
    assert_ack(&env.hook(
        "prompt",
        &hook_event("UserPromptSubmit", "t1", json!({"prompt": "hello"})),
    ));
    let log = env.log();
    for place in ["pattern 2 of 3", "pattern 3 of 3"] {
        assert!(
            log.contains(&format!(
                "{place} in CLAUDE_MEM_REDACT_EXTRA does not start"
            )),
            "{log}"
        );
    }
    let disk = everything_on_disk(&env);
    assert!(!contains(&disk, "Zq81kdP0x9") && !contains(&disk, "Lm3pZr8Tq7"));
}

#[test]
fn a_secret_file_is_recorded_but_not_its_content() {
    let env = Env::new();
    let dotenv = "FEATURE_FLAG=on-ENV-CONTENT\nDATABASE_HOST=db.internal\n";
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEA-PEM-CONTENT\n";
    let tool = |id: &str, name: &str, input: Value, response: Value| {
        hook_event(
            "PostToolUse",
            id,
            json!({"tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": response}),
        )
    };
    let calls = [
        tool(
            "read",
            "Read",
            json!({"file_path": "/p/.env"}),
            json!({"type": "text", "file": {"filePath": "/p/.env", "content": dotenv, "numLines": 2}}),
        ),
        tool(
            "write",
            "Write",
            json!({"file_path": "/p/certs/server.key", "content": key}),
            json!({"type": "create", "filePath": "/p/certs/server.key", "content": key}),
        ),
        tool(
            "edit",
            "Edit",
            json!({"file_path": "/p/.env.local", "old_string": "on-ENV-CONTENT", "new_string": "off-ENV-CONTENT"}),
            json!({"filePath": "/p/.env.local", "oldString": "on-ENV-CONTENT", "newString": "off-ENV-CONTENT",
                   "originalFile": dotenv, "structuredPatch": [{"lines": ["-FEATURE_FLAG=on-ENV-CONTENT"]}]}),
        ),
    ];
    for call in &calls {
        assert_ack(&env.hook("capture", call));
    }
    let disk = everything_on_disk(&env);
    assert!(!contains(&disk, "ENV-CONTENT") && !contains(&disk, "PEM-CONTENT"));
    let raw = |id: &str| -> Value {
        let text: String = env
            .db()
            .query_row(
                "SELECT raw_output FROM pending_queue WHERE tool_use_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let secret = "[REDACTED:secret-file]";
    assert_eq!(
        raw("read")["tool_response"],
        json!({"type": "text", "file": {"content": secret, "numLines": 2}})
    );
    assert_eq!(
        raw("write")["tool_input"],
        json!({"file_path": "/p/certs/server.key", "content": secret})
    );
    assert_eq!(raw("edit")["tool_input"]["new_string"], secret);
    assert!(
        raw("edit")["tool_response"]
            .get("structuredPatch")
            .is_none()
    );
    // The calls themselves are remembered, with the files they touched.
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM pending_queue, json_each(files_touched)
                    WHERE value IN ('/p/.env', '/p/certs/server.key', '/p/.env.local')"
        ),
        3
    );
}

/// The raw_output stored for a capture of `event`.
fn lean_of(env: &Env, event: &Value) -> Value {
    assert_ack(&env.hook("capture", event.to_string().as_bytes()));
    let text: String = env
        .db()
        .query_row(
            "SELECT raw_output FROM pending_queue WHERE tool_use_id = ?1",
            [event["tool_use_id"].as_str().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn real_captures_are_stored_in_their_lean_shape() {
    let env = Env::new();
    let expected = [
        (
            "hooks/PostToolUse-1.json",
            json!({"tool_input": {"command": "echo hello-from-mock > marker.txt",
                                  "description": "Write marker file"},
                   "tool_response": {}, "lean": 1}),
        ),
        (
            "hooks/PostToolUse-2.json",
            json!({"tool_input": {"file_path": "/home/dev/file_tools/notes.txt",
                                  "content": "alpha\nbeta\n"},
                   "tool_response": {"type": "create"}, "lean": 1}),
        ),
        (
            "hooks/PostToolUse-3.json",
            json!({"tool_input": {"file_path": "/home/dev/file_tools/notes.txt"},
                   "tool_response": {"type": "text", "file": {"content": "alpha\nbeta\n",
                                     "numLines": 3, "startLine": 1, "totalLines": 3}},
                   "lean": 1}),
        ),
        (
            "hooks/PostToolUse-4.json",
            json!({"tool_input": {"file_path": "/home/dev/file_tools/notes.txt",
                                  "old_string": "beta", "new_string": "gamma"},
                   "tool_response": {"structuredPatch": [{"oldStart": 1, "oldLines": 2,
                                     "newStart": 1, "newLines": 2,
                                     "lines": [" alpha", "-beta", "+gamma"]}]},
                   "lean": 1}),
        ),
        (
            "hooks/PostToolUseFailure-1.json",
            json!({"tool_input": {"command": "echo failing-on-purpose >&2; exit 3",
                                  "description": "Fail on purpose"},
                   "error": "Exit code 3\nfailing-on-purpose", "is_interrupt": false, "lean": 1}),
        ),
    ];
    for (name, want) in expected {
        assert_eq!(lean_of(&env, &fixture_json(name)), want, "{name}");
    }
    // An unknown tool keeps its payload.
    let agent = fixture_json("hooks/PostToolUse-6.json");
    let stored = lean_of(&env, &agent);
    assert_eq!(stored["tool_response"], agent["tool_response"]);
}

fn tool_call(id: &str, tool: &str, input: Value, response: Value) -> Value {
    json!({"session_id": "mix", "cwd": "/home/dev/shop", "hook_event_name": "PostToolUse",
           "tool_name": tool, "tool_use_id": id, "tool_input": input, "tool_response": response})
}

/// About `bytes` of source code, line by line.
fn source(bytes: usize, seed: usize) -> String {
    let mut text = String::new();
    let mut i = seed;
    while text.len() < bytes {
        text.push_str(&format!(
            "    let total_{i} = order.items().map(|item| item.price * {i}).sum::<u64>();\n"
        ));
        i += 1;
    }
    text
}

#[test]
fn long_outputs_keep_a_head_and_a_tail_and_other_shapes() {
    let env = Env::new();
    let stdout = format!("FIRST LINE\n{}LAST LINE\n", source(100_000, 0));
    let bash = tool_call(
        "bash",
        "Bash",
        json!({"command": "cargo test", "run_in_background": false}),
        json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false,
               "returnCodeInterpretation": "tests passed"}),
    );
    let stored = lean_of(&env, &bash);
    let kept = stored["tool_response"]["stdout"].as_str().unwrap();
    assert!(
        kept.starts_with("FIRST LINE\n") && kept.ends_with("LAST LINE\n"),
        "{kept}"
    );
    assert!(
        kept.len() < 4200 && kept.contains(" bytes cut …]\n"),
        "{}",
        kept.len()
    );
    assert_eq!(stored["tool_input"], json!({"command": "cargo test"}));
    assert_eq!(
        stored["tool_response"]["returnCodeInterpretation"],
        "tests passed"
    );
    assert_eq!(stored["tool_response"].as_object().unwrap().len(), 2);

    let image = tool_call(
        "image",
        "Read",
        json!({"file_path": "/home/dev/shop/logo.png"}),
        json!({"type": "image", "file": {"base64": "iVBORw0KGgo".repeat(1000), "type": "image/png",
               "originalSize": 11000}}),
    );
    assert_eq!(
        lean_of(&env, &image)["tool_response"],
        json!({"type": "image", "file": {"type": "image/png", "originalSize": 11000}})
    );

    let multi = tool_call(
        "multi",
        "MultiEdit",
        json!({"file_path": "/home/dev/shop/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
        json!({"filePath": "/home/dev/shop/a.rs", "edits": [{"old_string": "a", "new_string": "b"}],
               "originalFile": source(50_000, 1), "structuredPatch": [{"lines": ["-a", "+b"]}],
               "userModified": false}),
    );
    assert_eq!(
        lean_of(&env, &multi)["tool_response"],
        json!({"structuredPatch": [{"lines": ["-a", "+b"]}]})
    );
}

/// A long output is cut first, then what is kept is redacted: the part cut away is not searched
/// (on a 5 MB output that was most of the hook's time), so it cannot change what is kept.
/// Regression: a key block left open in the middle (a log that printed part of a key) was
/// taken to run to the end, and the tail of the output went with it.
#[test]
fn a_long_output_is_cut_before_it_is_redacted() {
    let env = Env::new();
    let key = "MIIEpAIBAAKCAQEA7nE3xq2Lk9PzRt5Vb8Yc1Wd4Hf6Jg0Ks3Ma7Nb2Qc5Re8Tf1";
    let stdout = format!(
        "FIRST LINE\n{}-----BEGIN RSA PRIVATE KEY-----\n{key}\n(output truncated)\n{}LAST LINE: build ok\n",
        source(50_000, 0),
        source(100_000, 1)
    );
    let call = tool_call(
        "open-key",
        "Bash",
        json!({"command": "./deploy.sh --verbose"}),
        json!({"stdout": stdout, "stderr": ""}),
    );
    let kept = lean_of(&env, &call)["tool_response"]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(kept.starts_with("FIRST LINE\n"), "{kept}");
    assert!(kept.ends_with("LAST LINE: build ok\n"), "{kept}");
    assert!(!contains(&everything_on_disk(&env), &key[..20]));
}

/// Filler without a space or line break, as in a minified file: a cut there falls anywhere.
fn minified(bytes: usize) -> String {
    "k=1;".repeat(bytes / 4)
}

/// A long output is cut to a head and a tail before its secrets are looked for (not the whole
/// of it); a secret that crosses a cut must still go whole, not leave the part on its side.
#[test]
fn a_secret_across_the_cut_of_a_long_output_leaves_no_part_of_it() {
    let env = Env::new();
    let token = "ghp_Zq81kdP0x9Lm3pZr8Tq7wNb2Yc5Vh6Jf4Ds0";
    let phrase = "sunset violin crater maple orbit lantern 7Kq9";
    let key = (0..40)
        .map(|i| format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:013}"))
        .collect::<Vec<_>>()
        .join("\n");
    let key_block = format!("-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----");
    let (near, long) = (10_000, 200_000);
    let outputs = [
        // A token across the head's cut (2 KiB in), in text with no space to cut at.
        format!(
            "FIRST\n{}{token}{}\n{}",
            minified(2024),
            minified(near),
            minified(long)
        ),
        // A passphrase, spaces and all, across the head's cut.
        format!(
            "FIRST\n{}PASSPHRASE=\"{phrase}\"{}\n{}",
            minified(1996),
            minified(near),
            minified(long)
        ),
        // A key block across the tail's cut (2 KiB from the end), cut at one of its lines.
        format!(
            "FIRST\n{}\n{key_block}\n{}\nLAST",
            minified(long),
            minified(1000)
        ),
        // A token across the tail's cut.
        format!(
            "{}\n{}{token}{}",
            minified(long),
            minified(near),
            minified(2028)
        ),
        // Both, in text with no space or line break at all: it is searched whole.
        format!(
            "{}{token}{}{token}{}",
            minified(2024),
            minified(long),
            minified(2028)
        ),
    ];
    for (i, stdout) in outputs.iter().enumerate() {
        let call = tool_call(
            &format!("cut-{i}"),
            "Bash",
            json!({"command": "npm run build"}),
            json!({"stdout": stdout, "stderr": ""}),
        );
        let kept = lean_of(&env, &call)["tool_response"]["stdout"]
            .as_str()
            .unwrap()
            .to_string();
        let markers = kept.matches("[REDACTED:").count();
        assert!(
            kept.contains(" bytes cut …]") && markers == 1 + usize::from(i == 4),
            "{i}: {kept}"
        );
    }
    let disk = everything_on_disk(&env);
    let line = |n: usize| key.lines().nth(n).unwrap().to_string();
    for part in [
        &token[..12],
        &token[token.len() - 12..],
        &phrase[..14],
        &phrase[phrase.len() - 14..],
        &line(5),
        &line(30),
        &line(39),
    ] {
        assert!(!contains(&disk, part), "on disk: {part}");
    }
}

/// A realistic session: the 308 KB file read and edited twice, files written, tests
/// run, searches, and a tool claude-mem does not know.
fn session_mix() -> Vec<Value> {
    let big = source(308 * 1024, 0);
    let mut calls = vec![tool_call(
        "read-big",
        "Read",
        json!({"file_path": "/home/dev/shop/src/orders.rs"}),
        json!({"type": "text", "file": {"filePath": "/home/dev/shop/src/orders.rs",
               "content": big, "numLines": 4000, "startLine": 1, "totalLines": 4000}}),
    )];
    for (i, (old, new)) in [("total_10", "sum_10"), ("total_20", "sum_20")]
        .iter()
        .enumerate()
    {
        let hunk = json!([{"oldStart": 11, "oldLines": 1, "newStart": 11, "newLines": 1,
                           "lines": [format!("-{old}"), format!("+{new}")]}]);
        calls.push(tool_call(
            &format!("edit-{i}"),
            "Edit",
            json!({"file_path": "/home/dev/shop/src/orders.rs", "old_string": old,
                   "new_string": new, "replace_all": false}),
            json!({"filePath": "/home/dev/shop/src/orders.rs", "oldString": old,
                   "newString": new, "originalFile": big, "structuredPatch": hunk,
                   "userModified": false, "replaceAll": false}),
        ));
    }
    for (i, size) in [3_000, 8_000, 15_000].iter().enumerate() {
        let path = format!("/home/dev/shop/src/new_{i}.rs");
        let content = source(*size, i * 100);
        calls.push(tool_call(
            &format!("write-{i}"),
            "Write",
            json!({"file_path": path, "content": content}),
            json!({"type": "create", "filePath": path, "content": content,
                   "structuredPatch": [], "originalFile": null}),
        ));
    }
    for (i, size) in [5_000, 12_000, 30_000, 2_000, 20_000].iter().enumerate() {
        let path = format!("/home/dev/shop/src/mod_{i}.rs");
        calls.push(tool_call(
            &format!("read-{i}"),
            "Read",
            json!({"file_path": path}),
            json!({"type": "text", "file": {"filePath": path, "content": source(*size, i),
                   "numLines": size / 70, "startLine": 1, "totalLines": size / 70}}),
        ));
    }
    for (i, size) in [600, 4_000, 18_000, 9_000].iter().enumerate() {
        calls.push(tool_call(
            &format!("bash-{i}"),
            "Bash",
            json!({"command": "cargo test 2>&1 | tail -200", "description": "Run the tests"}),
            json!({"stdout": source(*size, i), "stderr": "", "interrupted": false,
                   "isImage": false, "noOutputExpected": false}),
        ));
    }
    calls.push(tool_call(
        "grep",
        "Grep",
        json!({"pattern": "total_", "output_mode": "content"}),
        json!({"mode": "content", "numFiles": 3, "filenames": [], "content": source(3_000, 7),
               "numLines": 40}),
    ));
    calls.push(tool_call(
        "mcp",
        "mcp__tracker__get_issue",
        json!({"id": 42}),
        json!({"title": "Rounding of discounts", "body": source(2_000, 9)}),
    ));
    calls
}

#[test]
fn a_realistic_session_is_stored_in_a_third_of_the_bytes_or_less() {
    let env = Env::new();
    let mut before = 0;
    for call in session_mix() {
        // What the previous release stored: both pieces as sent, and the project twice.
        before += json!({"tool_input": call["tool_input"], "tool_response": call["tool_response"],
                         "project_dir": "/home/dev/shop", "cwd": "/home/dev/shop"})
        .to_string()
        .len() as i64;
        assert_ack(&env.hook("capture", call.to_string().as_bytes()));
    }
    let after = env.count("SELECT SUM(length(raw_output)) FROM pending_queue");
    let rows = env.count("SELECT COUNT(*) FROM pending_queue");
    assert_eq!(rows, session_mix().len() as i64);
    assert!(
        after * 3 <= before,
        "{rows} captures: {before} bytes before, {after} after"
    );
    // What is left of the case: no original file, each Write's content once.
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE raw_output LIKE '%originalFile%'"),
        0
    );
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM pending_queue WHERE tool_name = 'Write'
                AND json_extract(raw_output, '$.tool_response.content') IS NULL
                AND length(json_extract(raw_output, '$.tool_input.content')) > 1000"
        ),
        3
    );
    // The session-start context still lists the files changed.
    let start = json!({"session_id": "after", "cwd": "/home/dev/shop",
                       "hook_event_name": "SessionStart", "source": "startup"});
    let out = env.hook("context", start.to_string().as_bytes());
    let context = String::from_utf8_lossy(&out.stdout);
    assert!(
        context.contains("src/orders.rs") && context.contains("src/new_2.rs"),
        "{context}"
    );
}

#[test]
fn an_excluded_project_leaves_nothing_behind() {
    let home_project = |env: &Env| env.root.path().join("home/work/secret-app/sub");
    let run_all = |env: &Env, cwd: &str| {
        let events = [
            (
                "context",
                json!({"hook_event_name": "SessionStart", "source": "startup"}),
            ),
            (
                "prompt",
                json!({"hook_event_name": "UserPromptSubmit", "prompt": format!("x {TOKEN}")}),
            ),
            (
                "capture",
                json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "b",
                               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}}),
            ),
            (
                "summary",
                json!({"hook_event_name": "Stop", "last_assistant_message": "done"}),
            ),
            (
                "cleanup",
                json!({"hook_event_name": "SessionEnd", "reason": "other"}),
            ),
        ];
        for (hook, mut event) in events {
            event["session_id"] = json!("s");
            event["cwd"] = json!(cwd);
            assert_silent(&env.hook(hook, event.to_string().as_bytes()));
        }
    };
    // By the event's cwd, with `~` and a `*`.
    let env = Env::new().with("CLAUDE_MEM_EXCLUDE", "/nowhere, ~/work/secret-*");
    run_all(&env, home_project(&env).to_str().unwrap());
    assert!(!env.data_dir.exists(), "no data dir");
    assert!(tmp_is_empty(&env));
    // By CLAUDE_PROJECT_DIR, which wins over the cwd.
    let env = Env::new()
        .with("CLAUDE_MEM_EXCLUDE", "/srv/**/private")
        .with("CLAUDE_PROJECT_DIR", "/srv/clients/acme/private");
    run_all(&env, "/tmp/elsewhere");
    assert!(!env.data_dir.exists() && tmp_is_empty(&env));
    // Elsewhere, the same hooks capture as usual: the project decides, not where a command
    // ran inside it.
    let env = Env::new()
        .with("CLAUDE_MEM_EXCLUDE", "/tmp/*")
        .with("CLAUDE_PROJECT_DIR", "/home/dev/public");
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                       "cwd": "/tmp/scratch", "prompt": "hello"});
    assert_ack(&env.hook("prompt", event.to_string().as_bytes()));
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
}
