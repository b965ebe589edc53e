//! What the compressor made, found where the rest of the memory is: `search`, `show` and
//! `timeline`, the MCP tools, and the next session's context.

use crate::harness::assert_clean;

use super::*;

#[test]
fn search_show_and_timeline_include_memories_and_summaries() {
    let (env, _model) = with_model();
    working_session(&env, "s1");
    ok(&compress(&env, &[]));
    let memory_id: String = env
        .db()
        .query_row("SELECT id FROM memories", [], |r| r.get(0))
        .unwrap();
    assert_search_finds_them(&env, &memory_id);
    assert_show_tells_them(&env, &memory_id);
    assert_the_timeline_holds_them(&env, &memory_id);
    // Deleted from the database (retention, forget), gone from the index too.
    env.deleting_db()
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

/// `search` finds the memory (by its words and by its files) and the summary, each as its
/// kind.
fn assert_search_finds_them(env: &Env, memory_id: &str) {
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
}

/// `show` of the memory gives its labels and values; `show` of the session, as JSON and as
/// text, gives its memories and summaries.
fn assert_show_tells_them(env: &Env, memory_id: &str) {
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
}

/// The memory's `timeline` holds memories and summaries.
fn assert_the_timeline_holds_them(env: &Env, memory_id: &str) {
    let timeline = ok(&env
        .command()
        .args(["timeline", memory_id, "--json"])
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
