//! `claude-mem forget` through the real binary: by each kind of id and by session, project and
//! time; what is forgotten is in no file afterwards (database, WAL, search index and its WAL,
//! spill folder, quarantine, reserve, private marks); on a terminal it asks first.

use std::path::Path;
#[cfg(target_os = "linux")]
use std::process::{Output, Stdio};

use crate::harness::memory::*;
use crate::harness::*;
use serde_json::json;

const A: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const C: &str = "33333333-3333-4333-8333-cccccccccccc";

fn capture(session: &str, word: &str) -> Vec<u8> {
    event(
        "PostToolUse",
        session,
        PROJECT,
        json!({"prompt_id": format!("{session}-late"), "tool_name": "Bash",
               "tool_use_id": format!("{session}-{word}"),
               "tool_input": {"command": format!("echo {word}")},
               "tool_response": {"stdout": word, "stderr": ""}}),
    )
}

/// A reserve chunk in use, as a full disk leaves one: the writes' lines, then spaces.
fn reserve_chunk(path: &Path, lines: &[&[u8]]) {
    let mut chunk = Vec::new();
    for line in lines {
        chunk.push(b'\n');
        chunk.extend_from_slice(line);
    }
    chunk.resize(256 * 1024, b' ');
    std::fs::write(path, chunk).unwrap();
}

#[cfg(unix)]
#[test]
fn a_forgotten_session_is_in_no_file() {
    let env = Env::new();
    session(&env, A, PROJECT, &["alpha1", "alpha2"]);
    session(&env, B, PROJECT, &["beta1"]);
    // A private turn of A leaves a mark beside the database.
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            A,
            PROJECT,
            json!({"prompt_id": "secret-turn", "prompt": "<private>alphahidden</private>"}),
        ),
    ));
    let marks = env.data_dir.join("private");
    assert_eq!(files_in(&marks).len(), 1);
    assert_eq!(found(&env, "alpha1command"), ["Bash"], "the index holds it");

    // Events of both sessions wait in the spill folder; a copy of A's was set aside, and a
    // full disk left A's (and B's) in reserve chunks.
    drop(env.spill_captures(&[capture(A, "alphaspill"), capture(B, "betaspill")]));
    let read = |word: &str| {
        let path = env
            .spilled()
            .into_iter()
            .find(|p| contains(&std::fs::read(p).unwrap(), word))
            .unwrap();
        (path.clone(), std::fs::read(path).unwrap())
    };
    let ((a_path, a), (_, b)) = (read("alphaspill"), read("betaspill"));
    let quarantine = env.data_dir.join("spill-quarantine");
    std::fs::create_dir_all(&quarantine).unwrap();
    std::fs::write(quarantine.join(a_path.file_name().unwrap()), &a).unwrap();
    let spill = env.data_dir.join("spill");
    for chunk in [".reserve-0", ".reserve-1"] {
        std::fs::remove_file(spill.join(chunk)).unwrap();
    }
    reserve_chunk(&spill.join(".reserve-0.used"), &[&a]);
    reserve_chunk(&spill.join(".reserve-1.used"), &[&a, &b]);

    let out = ok(&run(&env, &["forget", short(A), "--yes"]));
    assert_eq!(
        out,
        "Forgot 1 session, 2 prompts, 2 tool calls, 2 messages.\n\
         Removed 4 events waiting in the spill folder.\n"
    );
    for word in ["alpha", "aaaaaaaaaaaa"] {
        assert_eq!(
            files_holding(env.root.path(), word),
            Vec::<std::path::PathBuf>::new()
        );
    }
    assert!(files_in(&marks).is_empty(), "the private mark went too");
    // The other session is all there, its spilled event and its reserved one included.
    assert_eq!(found(&env, "beta1command"), ["Bash"]);
    assert!(contains(
        &std::fs::read(spill.join(".reserve-1.used")).unwrap(),
        "betaspill"
    ));
    assert!(
        spill.join(".reserve-0").exists(),
        "an emptied chunk is free again"
    );
    assert_eq!(env.spilled().len(), 1);
    assert!(found(&env, "alpha1command").is_empty());
    failed(&run(&env, &["show", short(A)]), 1);
}

/// Regression (issue 16): forget overwrote only the cells it deleted, while the hooks had left
/// older copies of them in the unused space of live pages (page splits, rows rewritten by the
/// next Stop) and in free pages: a forgotten session's prompts, commands, outputs and messages
/// stayed readable in the database. Three sessions interleaved over pages that split, the search
/// index built midway and at the end; forget the middle one: none of its texts is in any byte
/// of any file (database, WAL, shared memory, search index and its WAL, spill folder, log).
#[cfg(unix)]
#[test]
fn forget_left_old_copies_of_a_sessions_text_in_live_pages() {
    let env = Env::new();
    let sessions = [(A, "alpha"), (B, "beta"), (C, "gamma")];
    interleaved(&env, &sessions, 0..6);
    assert_eq!(found(&env, "beta03output"), ["Bash"]);
    interleaved(&env, &sessions, 6..12);
    assert_eq!(found(&env, "beta09output"), ["Bash"]);

    assert_eq!(
        ok(&run(&env, &["forget", short(B), "--yes"])),
        "Forgot 1 session, 12 prompts, 12 tool calls, 12 messages.\n"
    );
    let disk = everything_on_disk(&env);
    let left: Vec<String> = words_of("beta", 12)
        .into_iter()
        .filter(|w| contains(&disk, w))
        .collect();
    assert!(
        left.is_empty(),
        "{} of 48 left: {left:?} in {:?}",
        left.len(),
        left.iter()
            .flat_map(|w| files_holding(env.root.path(), w))
            .collect::<std::collections::BTreeSet<_>>()
    );
    assert!(
        !contains(&disk, "bbbbbbbbbbbb"),
        "the session id is left in {:?}",
        files_holding(env.root.path(), "bbbbbbbbbbbb")
    );
    // What stays is all there.
    for word in ["alpha", "gamma"] {
        assert!(
            words_of(word, 12).iter().all(|w| contains(&disk, w)),
            "{word}"
        );
    }
    assert_eq!(found(&env, "gamma11output"), ["Bash"]);
    assert!(found(&env, "beta11output").is_empty());
}

/// Regression (issue 16): earlier versions stored the calls of claude-mem's own MCP tools, so a
/// `get` in one session kept the text of another: forgetting that one left it searchable and on
/// disk through these copies. The first hook after the upgrade deletes them (another server's
/// tools stay) and the maintenance process it starts rebuilds both files: no byte of them is
/// left, and forgetting the session they quoted leaves its text nowhere.
#[cfg(unix)]
#[test]
fn our_own_mcp_answers_stored_by_an_earlier_version_kept_a_forgotten_sessions_text() {
    let env = Env::new();
    let sessions = [(A, "alpha"), (B, "beta")];
    interleaved(&env, &sessions, 0..4);
    let stored = |n: usize, tool: &str, text: &str| {
        let raw = json!({"tool_input": {"ids": ["0a1b2c3d"]},
                         "tool_response": [{"type": "text", "text": text}], "lean": 1});
        env.db()
            .execute(
                "INSERT INTO pending_queue (id, session_id, tool_use_id, prompt_id, event,
                     tool_name, project_dir, raw_output, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, 'PostToolUse', ?5, ?6, ?7,
                         strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                         strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                rusqlite::params![
                    format!("01960000-0000-7000-8000-{n:012}"),
                    A,
                    format!("mcp-{n}"),
                    format!("{A}-p3"),
                    tool,
                    PROJECT,
                    raw.to_string()
                ],
            )
            .unwrap();
    };
    stored(
        1,
        "mcp__claude-mem__get",
        "beta01prompt beta01output ownanswer1",
    );
    stored(2, "mcp__claude-mem__search", "beta02message ownanswer2");
    stored(3, "mcp__claude-mem__timeline", "beta03command ownanswer3");
    stored(4, "mcp__memory__search", "otheranswer4");
    assert_eq!(found(&env, "ownanswer1"), ["mcp__claude-mem__get"]);
    // The database as the earlier version left it (before v8 to v11), its search index built.
    env.db()
        .execute_batch(
            "DROP INDEX user_prompts_standing;
             ALTER TABLE user_prompts DROP COLUMN standing;
             ALTER TABLE user_prompts DROP COLUMN pinned_at;
             DROP TABLE project_moves; DROP TABLE project_ids;
             DROP TABLE forgotten;
             ALTER TABLE sessions DROP COLUMN agent;
             DROP TABLE given;
             PRAGMA user_version = 7",
        )
        .unwrap();
    env.old_triggers();

    assert_ack(&env.hook("capture", &capture(A, "after")));
    let started = std::time::Instant::now();
    while env.count("SELECT COUNT(*) FROM meta WHERE key = 'rebuild'") > 0 {
        assert!(started.elapsed().as_secs() < 60, "no rebuild");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    env.wait_for_maintenance();
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_name LIKE 'mcp%'"),
        1
    );
    gone(&env, &["ownanswer1", "ownanswer2", "ownanswer3"]);
    assert_eq!(found(&env, "otheranswer4"), ["mcp__memory__search"]);

    ok(&run(&env, &["forget", short(B), "--yes"]));
    let disk = everything_on_disk(&env);
    for word in words_of("beta", 4) {
        assert!(!contains(&disk, &word), "{word} is on disk");
        assert!(found(&env, &word).is_empty(), "{word} is found");
    }
}

#[test]
fn a_prompt_takes_its_turn_along_and_a_call_or_message_only_itself() {
    let env = Env::new();
    session(&env, A, PROJECT, &["gamma1", "gamma2"]);
    let prompt = ids(&env, "SELECT id FROM user_prompts ORDER BY prompt_number")[0].clone();
    let out = ok(&run(&env, &["forget", short(&prompt), "--yes"]));
    assert_eq!(out, "Forgot 1 prompt, 1 tool call, 1 message.\n");
    assert_eq!(env.count("SELECT COUNT(*) FROM user_prompts"), 1);
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);

    let call = ids(
        &env,
        "SELECT id FROM pending_queue WHERE kind = 'observation'",
    )[0]
    .clone();
    assert_eq!(
        ok(&run(&env, &["forget", &call, "--yes"])),
        "Forgot 1 tool call.\n"
    );
    let message = ids(&env, "SELECT id FROM pending_queue WHERE kind = 'summary'")[0].clone();
    assert_eq!(
        ok(&run(&env, &["forget", short(&message), "--yes"])),
        "Forgot 1 message.\n"
    );
    assert_eq!(
        env.count("SELECT COUNT(*) FROM sessions WHERE last_assistant_message IS NULL"),
        1,
        "the session no longer repeats the message"
    );
    for word in ["gamma1", "gamma2command", "gamma2output", "gamma2message"] {
        assert_eq!(
            files_holding(&env.data_dir, word),
            Vec::<std::path::PathBuf>::new()
        );
    }
    assert_eq!(found(&env, "gamma2prompt"), ["prompt"]);
}

#[test]
fn a_project_or_a_time_range_goes_and_nothing_else() {
    let env = Env::new();
    let (old, new, other) = (
        "33333333-3333-4333-8333-333333333333",
        "44444444-4444-4444-8444-444444444444",
        "55555555-5555-4555-8555-555555555555",
    );
    session(&env, old, "/p1", &["old1"]);
    age(&env, old, 10);
    session(&env, new, "/p1", &["new1"]);
    session(&env, other, "/p2", &["new2"]);
    // The old session was resumed today.
    assert_ack(&env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            old,
            "/p1",
            json!({"prompt_id": "late", "prompt": "and late1prompt too"}),
        ),
    ));

    let out = ok(&run(
        &env,
        &["forget", "--since", "2d", "--project", "/p1", "--yes"],
    ));
    assert_eq!(
        out,
        "Forgot 1 session, 2 prompts, 1 tool call, 1 message.\n"
    );
    assert_eq!(found(&env, "old1prompt"), ["prompt"]);
    assert!(found(&env, "late1prompt").is_empty());
    assert!(found(&env, "new1command").is_empty());
    assert_eq!(found(&env, "new2command"), ["Bash"]);

    let out = ok(&run(&env, &["forget", "--project", "/p2", "--yes"]));
    assert_eq!(out, "Forgot 1 session, 1 prompt, 1 tool call, 1 message.\n");
    assert!(found(&env, "new2command").is_empty());
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 1);
    for word in ["late1", "new1", "new2"] {
        assert_eq!(
            files_holding(&env.data_dir, word),
            Vec::<std::path::PathBuf>::new()
        );
    }
    assert_eq!(
        ok(&run(&env, &["forget", "--since", "1h", "--all", "--yes"])),
        "Nothing to forget.\n"
    );
}

/// Asserts that no file of the data dir (or the temp dir) holds any of `words`, and that
/// search finds none.
fn gone(env: &Env, words: &[&str]) {
    let disk = everything_on_disk(env);
    for word in words {
        assert!(!contains(&disk, word), "{word} is on disk");
        assert!(found(env, word).is_empty(), "{word} is found");
    }
}

#[cfg(unix)]
#[test]
fn a_forgotten_session_takes_its_memories_and_summaries() {
    let env = Env::new();
    session(&env, A, PROJECT, &["zeta1", "zeta2"]);
    compress(
        &env,
        A,
        &[memory("zeta1", &[1, 2]), memory("zeta2", &[3, 4])],
        summary("zetasum"),
    );
    session(&env, B, PROJECT, &["eta1"]);
    compress(&env, B, &[memory("eta1", &[1, 2])], summary("etasum"));
    assert_eq!(found(&env, "zeta1narrative"), ["memory"]);
    assert_eq!(found(&env, "zetasumlearned"), ["summary"]);

    let dry = ok(&run(&env, &["forget", short(A), "--dry-run"]));
    assert!(
        dry.starts_with(
            "This forgets 1 session, 2 prompts, 2 tool calls, 2 messages, 2 memories, \
             1 summary:\n  session aaaaaaaa"
        ) && dry.contains("  2 prompts, 2 tool calls, 2 messages, 2 memories, 1 summary\n"),
        "{dry}"
    );
    assert_eq!(
        ok(&run(&env, &["forget", short(A), "--yes"])),
        "Forgot 1 session, 2 prompts, 2 tool calls, 2 messages, 2 memories, 1 summary.\n"
    );
    gone(
        &env,
        &[
            "zeta1title",
            "zeta2narrative",
            "zeta1fact",
            "zetasumrequest",
            "zetasumlearned",
            "zetasumnext",
        ],
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 1);
    assert_eq!(found(&env, "eta1narrative"), ["memory"]);
    assert_eq!(found(&env, "etasumlearned"), ["summary"]);
}

#[cfg(unix)]
#[test]
fn a_memory_or_summary_goes_by_its_id_and_with_the_rows_it_was_made_from() {
    let env = Env::new();
    session(&env, A, PROJECT, &["theta1", "theta2", "theta3"]);
    compress(
        &env,
        A,
        &[
            memory("theta1", &[1, 2]),
            memory("theta2", &[3, 4]),
            memory("theta3", &[5, 6]),
        ],
        summary("thetasum"),
    );
    let memory_of = |word: &str| {
        ids(
            &env,
            &format!("SELECT id FROM memories WHERE title = '{word}title'"),
        )[0]
        .clone()
    };
    let summary = ids(&env, "SELECT id FROM summaries")[0].clone();
    assert_eq!(
        ok(&run(&env, &["forget", short(&summary), "--yes"])),
        "Forgot 1 summary.\n"
    );
    assert_eq!(
        ok(&run(&env, &["forget", &memory_of("theta3"), "--yes"])),
        "Forgot 1 memory.\n"
    );
    gone(&env, &["thetasumlearned", "theta3narrative"]);
    // A prompt takes its turn, and the memory made from it.
    let prompt = ids(&env, "SELECT id FROM user_prompts ORDER BY prompt_number")[0].clone();
    let dry = ok(&run(&env, &["forget", short(&prompt), "--dry-run"]));
    assert!(
        dry.contains(&format!(
            "  prompt {} and its turn: 1 tool call, 1 message, 1 memory\n",
            short(&prompt)
        )),
        "{dry}"
    );
    assert_eq!(
        ok(&run(&env, &["forget", short(&prompt), "--yes"])),
        "Forgot 1 prompt, 1 tool call, 1 message, 1 memory.\n"
    );
    gone(&env, &["theta1narrative"]);
    // A tool call takes the memory made from it.
    let call = ids(
        &env,
        "SELECT id FROM pending_queue WHERE kind = 'observation' ORDER BY created_at",
    )[0]
    .clone();
    let dry = ok(&run(&env, &["forget", &call, "--dry-run"]));
    assert!(
        dry.contains(&format!(
            "  tool call {}, and what was made of it: 1 memory\n",
            short(&call)
        )),
        "{dry}"
    );
    assert_eq!(
        ok(&run(&env, &["forget", &call, "--yes"])),
        "Forgot 1 tool call, 1 memory.\n"
    );
    gone(&env, &["theta2narrative"]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 0);
    assert_eq!(found(&env, "theta3prompt"), ["prompt"]);
}

#[cfg(unix)]
#[test]
fn a_range_takes_the_memories_made_in_it_and_those_made_from_what_goes() {
    let env = Env::new();
    let (old, new) = (
        "33333333-3333-4333-8333-333333333333",
        "44444444-4444-4444-8444-444444444444",
    );
    session(&env, old, "/p1", &["old1"]);
    compress(&env, old, &[memory("old1", &[1, 2])], summary("oldsum"));
    age(&env, old, 10);
    // The old session was resumed today, and that turn compressed too.
    for (hook, name, extra) in [
        (
            "prompt",
            "UserPromptSubmit",
            json!({"prompt": "and late1prompt too"}),
        ),
        (
            "capture",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "late",
                   "tool_input": {"command": "ls late1command"},
                   "tool_response": {"stdout": "x", "stderr": ""}}),
        ),
        (
            "summary",
            "Stop",
            json!({"last_assistant_message": "late1message"}),
        ),
    ] {
        let mut extra = extra;
        extra["prompt_id"] = json!("late");
        assert_ack(&env.hook(hook, &event(name, old, "/p1", extra)));
    }
    compress(&env, old, &[memory("late1", &[1, 2])], summary("latesum"));
    session(&env, new, "/p1", &["new1"]);
    compress(&env, new, &[memory("new1", &[1, 2])], summary("newsum"));

    let out = ok(&run(
        &env,
        &["forget", "--since", "2d", "--project", "/p1", "--yes"],
    ));
    assert_eq!(
        out,
        "Forgot 1 session, 2 prompts, 2 tool calls, 2 messages, 2 memories, 2 summaries.\n"
    );
    gone(
        &env,
        &[
            "late1narrative",
            "latesumlearned",
            "new1narrative",
            "newsumlearned",
        ],
    );
    assert_eq!(found(&env, "old1narrative"), ["memory"]);
    assert_eq!(found(&env, "oldsumlearned"), ["summary"]);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let env = Env::new();
    session(&env, A, PROJECT, &["eps"]);
    let prompt = ids(&env, "SELECT id FROM user_prompts")[0].clone();
    for (args, code, says) in [
        (vec!["forget"], 2, "required"),
        (vec!["forget", "--all", "--yes"], 2, "required"),
        (
            vec!["forget", A, "--project", "/p", "--yes"],
            2,
            "cannot be used",
        ),
        (
            vec!["forget", "--since", "yesterday", "--yes"],
            2,
            "--since",
        ),
        (vec!["forget", "nosuchid", "--yes"], 1, "no session"),
        (
            vec!["forget", "--session", &prompt, "--yes"],
            2,
            "not a session",
        ),
    ] {
        let err = failed(&run(&env, &args), code);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 2);
}

#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_it_asks_first_and_elsewhere_it_needs_yes() {
    let env = Env::new();
    session(&env, A, PROJECT, &["delta"]);
    let err = failed(&run(&env, &["forget", short(A)]), 2);
    assert!(err.contains("--yes"), "{err}");
    let dry = ok(&run(&env, &["forget", short(A), "--dry-run"]));
    assert!(
        dry.starts_with(
            "This forgets 1 session, 1 prompt, 1 tool call, 1 message:\n  session aaaaaaaa"
        ) && dry.ends_with("Nothing was deleted (--dry-run).\n"),
        "{dry}"
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 1);

    let (out, shown) = on_terminal(&env, &["forget", short(A)], "n\n");
    assert_eq!(ok(&out), "Nothing forgotten.\n");
    assert!(
        shown.contains("session aaaaaaaa") && shown.contains("Forget this? [y/N]"),
        "{shown}"
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 1);

    let (out, _) = on_terminal(&env, &["forget", short(A)], "y\n");
    assert_eq!(
        ok(&out),
        "Forgot 1 session, 1 prompt, 1 tool call, 1 message.\n"
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 0);
}

/// Runs `claude-mem <args>` with a terminal as stdin and stderr, `answer` typed in advance;
/// returns its output and what the terminal showed.
#[cfg(target_os = "linux")]
fn on_terminal(env: &Env, args: &[&str], answer: &str) -> (Output, String) {
    use std::io::{Read, Write};
    let (master, tty) = pty();
    (&master).write_all(answer.as_bytes()).unwrap();
    let child = {
        let mut command = env.command();
        command
            .args(args)
            .env("CLAUDE_PROJECT_DIR", PROJECT)
            .stdin(tty.try_clone().unwrap())
            .stderr(tty)
            .stdout(Stdio::piped());
        command.spawn().unwrap()
    };
    let out = child.wait_with_output().unwrap();
    // Every end of the terminal but this one is closed now: read to the end (EIO).
    let mut shown = Vec::new();
    let _ = (&master).read_to_end(&mut shown);
    (out, String::from_utf8_lossy(&shown).into_owned())
}

/// Regression: forget and scrub end with a rebuild, which holds the write lock for seconds on
/// a large database (5.9 s on 568 MiB); meanwhile every hook waited its whole budget before it
/// kept its event in the spill folder, a second added to every tool call. A rebuild now holds a
/// lock on `rebuild.lock`, and a hook that finds it held keeps its event at once, and says so in
/// the log as information (it was a warning, as if something were wrong). Here the test holds
/// both locks, as a rebuild does, and the hook's budget is far longer than it may take.
#[cfg(unix)]
#[test]
fn hooks_do_not_wait_their_budget_while_a_rebuild_holds_the_database() {
    let env = Env::new().with("CLAUDE_MEM_WAIT_MS", "20000");
    assert_ack(&env.hook("capture", &capture(A, "before")));
    let _maintenance = env.hold_maintenance();
    let mark = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(env.data_dir.join("rebuild.lock"))
        .unwrap();
    assert!(try_flock(&mark));
    let holder = env.db();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut child = env.spawn_hook("capture", &capture(A, "during"));
    let started = std::time::Instant::now();
    // Done while the lock is still held: it did not wait for it.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "the hook waited for the rebuild"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert!(status.success());
    assert_eq!(env.spilled().len(), 1);
    // Expected while a rebuild runs: said, not warned about.
    let log = env.log();
    let kept = log
        .lines()
        .find(|l| l.contains("a rebuild holds it"))
        .unwrap_or_else(|| panic!("no log line says why the event was kept: {log}"));
    assert!(kept.contains(" INFO "), "{kept}");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    drop(_maintenance);

    // A mark a rebuild left when it died is held by no one: hooks write as usual.
    drop(mark);
    assert_ack(&env.hook("capture", &capture(A, "after")));
    env.wait_for_maintenance();
    assert!(env.spilled().is_empty());
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id LIKE '%-during'"),
        1
    );
}

/// A forget on a full disk: the rows go, but the rebuild that takes their old copies out of
/// the file needs free space about twice the database's size. The person must learn that the
/// forget is not finished, and how to finish it: exit 1, one line saying what was deleted, what
/// may remain and what to do; once space is back, `claude-mem maintain` finishes it. Needs root
/// to mount a small tmpfs; CI runs as root.
#[cfg(target_os = "linux")]
#[test]
fn a_forget_that_cannot_rebuild_says_what_remains_and_how_to_finish() {
    let base = Env::new();
    let disk = base.root.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let Some(_unmount) = require_tmpfs(
        &disk,
        "8m",
        "mounting a small file system for the full-disk case",
    ) else {
        return;
    };
    let env = Env {
        data_dir: disk.join("data"),
        ..base
    };
    session(&env, A, PROJECT, &["alpha1", "alpha2"]);
    session(&env, B, PROJECT, &["beta1"]);
    // B holds most of the database: its rebuild needs more room than the disk has left.
    let filler = "b".repeat(4000);
    let mut db = env.db();
    let tx = db.transaction().unwrap();
    for n in 0..250 {
        tx.execute(
            "INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                 raw_output, created_at, updated_at)
             VALUES (?1, ?2, ?1, 'PostToolUse', 'Bash', ?3, '2026-01-01T00:00:00Z', 'x')",
            rusqlite::params![format!("bulk-{n}"), B, format!("{{\"o\":\"{filler}{n}\"}}")],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(db);
    assert_eq!(found(&env, "alpha1output").len(), 1);
    // The disk fills up, but for 150 KiB.
    let full = disk.join("full");
    let mut file = std::fs::File::create(&full).unwrap();
    while std::io::Write::write_all(&mut file, &[0u8; 64 * 1024]).is_ok() {}
    let len = file.metadata().unwrap().len();
    file.set_len(len.saturating_sub(150 * 1024)).unwrap();
    drop(file);

    let out = run(&env, &["forget", short(A), "--yes"]);
    let said = failed(&out, 1);
    assert!(
        said.starts_with("claude-mem: error: Forgot 1 session"),
        "{said}"
    );
    assert!(said.contains("old copies"), "{said}");
    assert!(said.contains("disk is full"), "{said}");
    assert!(said.contains("then run `claude-mem maintain`"), "{said}");
    assert_eq!(
        env.count(&format!(
            "SELECT COUNT(*) FROM pending_queue WHERE session_id = '{A}'"
        )),
        0,
        "the rows are deleted"
    );

    std::fs::remove_file(&full).unwrap();
    // Maintenance started by a hook may have failed meanwhile, and waits an hour before it
    // tries again; a person's `maintain` does not wait.
    std::fs::write(env.data_dir.join("rebuild-failed"), "").unwrap();
    let done = ok(&run(&env, &["maintain"]));
    assert!(done.contains("Rebuilt the database"), "{done}");
    let disk_bytes = everything_on_disk(&env);
    for word in words_of("alpha", 2) {
        assert!(!contains(&disk_bytes, &word), "{word} is on disk");
    }
}
