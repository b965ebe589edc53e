//! What `share` takes: what was made since a time (as search's `--since` reads it), the
//! sessions, memories and summaries named, and never the summary of a session that did
//! nothing (no memory made of it, no file changed) unless it is named or `--all-summaries`
//! asks; `--dry-run` lists the files it would write. What is not taken this time is left as
//! it is in the folder.

use serde_json::{Value, json};

use super::{Person, have_git};
use crate::harness::assert_ack;
use crate::harness::memory::{self, age, compress, memory, summary};

/// Turn `turn` of a session of `person`'s project recorded by the hooks (the first starts the
/// session): a prompt, then `tool` (a tool name and its input) if any, then Claude's answer;
/// compressed into no memory and a summary, its texts carrying `word`.
fn recorded(person: &Person, session: &str, turn: u32, word: &str, tool: Option<(&str, Value)>) {
    let hook = |name: &str, event: &str, extra: Value| {
        let out = person
            .env
            .hook(name, &memory::event(event, session, person.dir(), extra));
        assert_ack(&out);
    };
    let start = memory::event(
        "SessionStart",
        session,
        person.dir(),
        json!({"source": "startup"}),
    );
    if turn == 0 {
        assert_eq!(person.env.hook("context", &start).status.code(), Some(0));
    }
    let prompt_id = format!("{session}-p{turn}");
    hook(
        "prompt",
        "UserPromptSubmit",
        json!({"prompt_id": prompt_id, "prompt": format!("what about {word}prompt?")}),
    );
    if let Some((name, input)) = tool {
        hook(
            "capture",
            "PostToolUse",
            json!({"prompt_id": prompt_id, "tool_name": name, "tool_use_id": format!("{session}-t{turn}"),
                   "tool_input": input, "tool_response": {"success": true}}),
        );
    }
    hook(
        "summary",
        "Stop",
        json!({"prompt_id": prompt_id, "last_assistant_message": format!("It is {word}message")}),
    );
    compress(&person.env, session, &[], summary(word));
}

/// The one id `sql` selects in `person`'s database.
fn id(person: &Person, sql: &str) -> String {
    person.env.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn holds(person: &Person, name: &str) -> bool {
    person.files().iter().any(|(path, _)| path.ends_with(name))
}

#[test]
fn share_takes_what_was_made_since_a_time_or_the_ids_named() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    alice.record("s-beta", "beta");
    age(&alice.env, "s-beta", 10);
    let memory_of = |s: &str| {
        id(
            &alice,
            &format!("SELECT id FROM memories WHERE session_id = '{s}'"),
        )
    };
    let summary_of = |s: &str| {
        id(
            &alice,
            &format!("SELECT id FROM summaries WHERE session_id = '{s}'"),
        )
    };
    let (alpha, beta) = (memory_of("s-alpha"), memory_of("s-beta"));

    // Dry: the files it would write, one a line, and nothing written.
    let dry = memory::ok(&alice.run(&["share", "--since", "2d", "--dry-run"]));
    let lines: Vec<&str> = dry.lines().collect();
    assert_eq!(lines.len(), 3, "{dry}");
    assert!(
        lines[0].starts_with("write   ")
            && lines[0].contains(&format!("/memory-{alpha}.md"))
            && lines[0].ends_with("  alphatitle"),
        "{dry}"
    );
    assert!(
        lines[1].contains(&format!("/summary-{}.md", summary_of("s-alpha"))),
        "{dry}"
    );
    assert!(
        lines[2].starts_with("would share 1 memory and 1 summary"),
        "{dry}"
    );
    assert!(!alice.folder().exists());

    // Since two days ago: the session of ten days ago stays out.
    let said = memory::ok(&alice.run(&["share", "--since", "2d"]));
    assert!(said.contains("shared 1 memory and 1 summary"), "{said}");
    assert!(holds(&alice, &format!("memory-{alpha}.md")));
    assert!(!holds(&alice, &format!("memory-{beta}.md")));

    // A memory by the id a command printed: only it is written, the rest left as it is.
    let said = memory::ok(&alice.run(&["share", memory::short(&beta)]));
    assert!(
        said.contains("shared 1 memory and 0 summaries")
            && said.contains(
                "1 written, 0 unchanged, 0 removed; 2 files of yours kept (not \
                              chosen this time)"
            ),
        "{said}"
    );
    assert!(holds(&alice, &format!("memory-{beta}.md")));
    assert!(holds(&alice, &format!("memory-{alpha}.md")));
    // A session brings its memory and summary.
    let json: Value =
        serde_json::from_str(&memory::ok(&alice.run(&["share", "--json", "s-beta"]))).unwrap();
    assert_eq!(
        (json["memories"].clone(), json["summaries"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        (json["written"].clone(), json["unchanged"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(json["files"][0]["change"], "write", "{json}");
    assert_eq!(alice.files().len(), 5);
}

#[test]
fn what_share_does_not_take_is_refused_in_one_line() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    let (alpha, _) = super::ids(&alice);
    let call = id(
        &alice,
        "SELECT id FROM pending_queue WHERE tool_name = 'Bash' LIMIT 1",
    );
    let err = memory::failed(&alice.run(&["share", &call]), 2);
    assert!(
        err.contains("share takes a session, memory or summary id"),
        "{err}"
    );
    let err = memory::failed(&alice.run(&["share", "--since", "someday"]), 2);
    assert!(err.contains("--since"), "{err}");
    memory::failed(&alice.run(&["share", "--since", "2d", &alpha]), 2);
    // Of another project.
    memory::session(&alice.env, "s-far", "/home/dev/elsewhere", &["far"]);
    compress(&alice.env, "s-far", &[memory("far", &[1])], summary("far"));
    let far = id(&alice, "SELECT id FROM memories WHERE session_id = 's-far'");
    let err = memory::failed(&alice.run(&["share", &far]), 1);
    assert!(err.contains(&format!("is not of {}", alice.dir())), "{err}");
    assert!(!alice.folder().exists());
}

#[test]
fn summaries_of_sessions_that_did_nothing_stay_out_unless_asked_for() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("alpha");
    // A question asked and answered: no tool call, no memory.
    recorded(&alice, "s-ask", 0, "ask", None);
    // A file changed, of which the compressor made no memory; then, compressed apart, a
    // question in the same session: its summary lists no file, but its session did something.
    let edit = json!({"file_path": format!("{}/src/a.rs", alice.dir()),
                      "old_string": "a", "new_string": "b"});
    recorded(&alice, "s-edit", 0, "edit", Some(("Edit", edit)));
    recorded(&alice, "s-edit", 1, "then", None);
    let asked = id(
        &alice,
        "SELECT id FROM summaries WHERE session_id = 's-ask'",
    );

    let said = alice.share();
    assert!(
        said.contains("shared 1 memory and 3 summaries")
            && said.ends_with(
                "; 1 summary of sessions that did nothing left out (--all-summaries shares \
                 them)\n"
            ),
        "{said}"
    );
    assert!(!holds(&alice, &format!("summary-{asked}.md")));
    alice.commit("share");
    // A teammate's session-start context: what was done, not the question.
    let bob = Person::clone_of(&alice);
    let context = bob.context("bob-1");
    assert!(
        context.contains("editrequest") && context.contains("alphatitle"),
        "{context}"
    );
    assert!(!context.contains("askrequest"), "{context}");

    // Named, it is shared; so is every one with --all-summaries.
    let said = memory::ok(&alice.run(&["share", &asked]));
    assert!(said.contains("shared 0 memories and 1 summary"), "{said}");
    assert!(holds(&alice, &format!("summary-{asked}.md")));
    let json: Value = serde_json::from_str(&memory::ok(&alice.run(&[
        "share",
        "--all-summaries",
        "--json",
    ])))
    .unwrap();
    assert_eq!(json["summaries"], 4, "{json}");
    assert_eq!(json["left_out"], 0, "{json}");
    // A plain share again leaves out the question, and leaves its file as it is.
    let said = alice.share();
    assert!(said.contains("0 removed; 1 file of yours"), "{said}");
    assert!(holds(&alice, &format!("summary-{asked}.md")));
}
