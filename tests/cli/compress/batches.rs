//! A session into memories and a summary: one model call for the whole session (its digest,
//! schema and instructions as the model receives them, what is stored, the items acked), or
//! batches at the input cap, in order; and a dry run that shows the digests and changes nothing.

use super::*;

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
    assert_the_model_was_handed_the_session(&env, &calls[0]);
    assert_one_memory_and_one_summary_stored(&env);
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

/// What [`working_session`] gave the model in `call`: the digest (reads and listings as one
/// list line, paths relative to the project, the long output as a head and a tail, the edit as
/// old and new text, the turn's prompt and last message), with its hooks off, away from the
/// project, and our schema and instructions.
fn assert_the_model_was_handed_the_session(env: &Env, call: &Path) {
    let digest = read(call, "digest");
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
    assert_eq!(read(call, "disabled"), "1", "its hooks record nothing");
    assert_eq!(
        PathBuf::from(read(call, "cwd").trim()),
        env.data_dir.canonicalize().unwrap(),
        "run away from any project's files"
    );
    let schema: Value = serde_json::from_str(&read(call, "schema")).unwrap();
    assert_eq!(schema["required"], json!(["observations", "summary"]));
    assert!(read(call, "system").contains("memories"));
}

/// The memory and the summary [`MODEL`] answers for [`working_session`], as stored: the memory
/// names the six queue items it came from.
fn assert_one_memory_and_one_summary_stored(env: &Env) {
    let memories = rows(
        env,
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
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM pending_queue q, memories m, json_each(m.queue_ids) j
              WHERE j.value = q.id"
        ),
        6
    );
    let summary = rows(
        env,
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

/// Issue 26: with items held by another consumer or waiting for a retry, `compress --dry-run`
/// said "no captured items wait" and `status` counted only the raw ones, while `doctor`
/// counted them all. What waits is now one count in all three (every item neither done nor
/// failed for good), and `compress` says why it cannot take what it does not take.
#[test]
fn compress_doctor_and_status_count_the_same_items_waiting() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    let claim = |limit: &str| -> Vec<Value> {
        let out = ok(&env
            .command()
            .args(["queue", "claim", "--limit", limit, "--lease", "1h"])
            .args(["--consumer", "my-summarizer"])
            .output()
            .unwrap());
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // Of the session's 6 items: 2 failed by a consumer (tried again in an hour), 2 held by it,
    // 2 free.
    let failing = claim("2");
    let ids: Vec<&str> = failing.iter().map(|i| i["id"].as_str().unwrap()).collect();
    let token = failing[0]["lease_token"].as_str().unwrap();
    ok(&env
        .command()
        .args([
            "queue",
            "fail",
            "--token",
            token,
            "--error",
            "no answer",
            "--backoff",
            "1h",
        ])
        .args(&ids)
        .output()
        .unwrap());
    claim("2");

    let dry = ok(&compress(&env, &["--dry-run"]));
    assert!(
        dry.starts_with("=== batch 1 of session s1: 2 items, "),
        "{dry}"
    );
    assert!(
        dry.contains(
            "4 more items wait, not in these calls: 2 held by my-summarizer under a lease that \
             has not ended (claude-mem queue stats shows them); 2 to be tried again after a \
             failed batch, the next in "
        ),
        "{dry}"
    );
    assert_everywhere_waiting(&env, 6);

    // The free ones held too: nothing can be taken, and the dry run and a run say so, and
    // how many wait, without a model call.
    claim("2");
    let nothing = "Nothing to compress now: 6 items wait, none that this run can take: 4 held \
                   by my-summarizer under a lease that has not ended";
    let dry = ok(&compress(&env, &["--dry-run"]));
    assert!(dry.starts_with(nothing), "{dry}");
    let run = ok(&compress(&env, &[]));
    assert!(run.starts_with(nothing), "{run}");
    assert!(calls(&model).is_empty());
    assert_everywhere_waiting(&env, 6);
}

/// `doctor`, `status` and `status --json` say `n` items wait for compression.
fn assert_everywhere_waiting(env: &Env, n: i64) {
    let doctor: Value = serde_json::from_str(&stdout(
        &env.command().args(["doctor", "--json"]).output().unwrap(),
    ))
    .unwrap();
    let queue = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "queue")
        .unwrap();
    assert!(
        queue["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!("; {n} items waiting for compression in all")),
        "{queue}"
    );
    let status = ok(&env.command().arg("status").output().unwrap());
    assert!(
        status.contains(&format!("; {n} items waiting; ")),
        "{status}"
    );
    let json: Value = serde_json::from_str(&ok(&env
        .command()
        .args(["status", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(json["compress"]["waiting"], n, "{json}");
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
