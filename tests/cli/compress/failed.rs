//! A batch that fails (an answer invalid or partial, an error of the model): an attempt counted,
//! nothing of it stored, the items failed for good after the last attempt and kept; and no key
//! an error quotes is stored, printed or logged.

use super::*;

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
