//! `claude-mem doctor` through the real binary: each check against a setup broken for it, and
//! `--fix` making a real repair, after which doctor finds nothing wrong there.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harness::{self, Env, assert_ack, assert_silent, hook_event, post_tool_use};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_claude-mem");

/// An environment whose Claude Code is the one the test says (none by default: a fixed answer
/// whatever this machine has).
fn env() -> Env {
    Env::new().with("CLAUDE_MEM_CLAUDE_BIN", "/nonexistent/claude")
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.command().args(args).output().unwrap()
}

/// `doctor --json` (plus `extra`): its exit code and its report.
fn doctor(env: &Env, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["doctor", "--json"];
    args.extend(extra);
    let out = run(env, &args);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap(), report)
}

/// The checks of one name.
fn checks<'a>(report: &'a Value, name: &str) -> Vec<&'a Value> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == name)
        .collect()
}

/// The one check of this name whose message mentions `about` (any, for "").
fn check<'a>(report: &'a Value, name: &str, about: &str) -> &'a Value {
    checks(report, name)
        .into_iter()
        .find(|c| c["message"].as_str().unwrap().contains(about))
        .unwrap_or_else(|| panic!("no {name} check about {about:?} in {report:#}"))
}

fn status(report: &Value, name: &str, about: &str) -> String {
    check(report, name, about)["status"]
        .as_str()
        .unwrap()
        .to_string()
}

fn fix(report: &Value, name: &str, about: &str) -> String {
    check(report, name, about)["fix"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn user_settings(env: &Env) -> PathBuf {
    env.home().join(".claude/settings.json")
}

fn install(env: &Env, args: &[&str]) {
    let out = run(env, &[&["install-hooks"], args].concat());
    assert!(out.status.success(), "{out:?}");
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Every hook command in a settings file.
fn commands(path: &Path) -> Vec<String> {
    let doc = read_json(path);
    let mut out = Vec::new();
    for groups in doc["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|h| h.values())
    {
        for group in groups.as_array().unwrap() {
            for handler in group["hooks"].as_array().unwrap() {
                out.push(handler["command"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

fn session_start(env: &Env) {
    let start = hook_event("SessionStart", "p", json!({"source": "startup"}));
    assert!(env.hook("context", &start).status.success());
}

#[test]
fn a_working_install_is_well_and_says_so_line_by_line() {
    let env = env();
    install(&env, &[]);
    session_start(&env);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        status(&report, "hooks", "5 of 6 hooks, running this binary"),
        "ok"
    );
    assert_eq!(status(&report, "database", ""), "ok");
    assert!(
        check(&report, "database", "")
            .to_string()
            .contains("quick_check ok")
    );
    for name in [
        "data",
        "wal",
        "disk",
        "spill",
        "log",
        "incumbent",
        "environment",
    ] {
        assert_eq!(status(&report, name, ""), "ok", "{name}: {report:#}");
    }
    // No Claude Code to ask: said, but nothing is broken by it.
    assert_eq!(status(&report, "claude-code", ""), "warn");

    // The text: one line per check, the status first, aligned, no colour in a pipe.
    let out = run(&env, &["doctor"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("ok    environment  "), "{text}");
    let column = first.find("the CLAUDE_MEM").unwrap();
    let fix = text
        .lines()
        .find(|l| l.trim_start().starts_with("fix: "))
        .unwrap();
    assert_eq!(
        fix.find("fix: "),
        Some(column),
        "the fix under the message: {text}"
    );
    // The MCP server is not registered (no Claude Code to register it with): a warning that
    // --fix would try to repair.
    assert!(
        text.ends_with(
            "Nothing is broken; 2 warnings. `claude-mem doctor --fix` repairs one of them.\n"
        ),
        "{text}"
    );
}

#[test]
fn hooks_registered_nowhere_fail_and_fix_registers_them_in_the_user_file() {
    let env = env();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "hooks", "nothing is recorded"), "fail");
    assert_eq!(
        check(&report, "hooks", "nothing is recorded")["fixable"],
        true
    );

    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    let fixed = &report["fixed"][0];
    assert_eq!(fixed["check"], "hooks");
    assert!(
        fixed["done"].as_str().unwrap().contains("5 hooks added"),
        "{fixed}"
    );
    assert_eq!(commands(&user_settings(&env)).len(), 5);
    assert_eq!(status(&report, "hooks", "settings.json"), "ok");
    assert_eq!(doctor(&env, &[]).0, 0);
}

#[test]
fn a_binary_that_is_gone_is_a_failure_and_fix_points_every_file_at_this_one() {
    let env = env();
    install(&env, &[]);
    install(&env, &["--local"]);
    let local = env.root.path().join(".claude/settings.local.json");
    for path in [user_settings(&env), local.clone()] {
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace(BIN, "/opt/gone/claude-mem")).unwrap();
    }
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    for file in ["settings.json:", "settings.local.json:"] {
        let hooks = check(&report, "hooks", file);
        assert_eq!(hooks["status"], "fail", "{hooks}");
        assert!(
            hooks
                .to_string()
                .contains("/opt/gone/claude-mem does not exist")
        );
    }

    let (_, report) = doctor(&env, &["--fix"]);
    let fixed: Vec<&Value> = report["fixed"].as_array().unwrap().iter().collect();
    assert!(
        fixed
            .iter()
            .any(|f| { f["done"].as_str().unwrap().contains("5 hooks repointed") })
    );
    for path in [user_settings(&env), local] {
        let commands = commands(&path);
        assert!(
            commands
                .iter()
                .all(|c| c.contains(BIN) && !c.contains("/opt/gone")),
            "{commands:?}"
        );
    }
    // Registered in two files: the repair's second round takes ours out of the local one.
    assert_eq!(
        status(&report, "hooks", "settings.json"),
        "ok",
        "{report:#}"
    );
}

#[test]
fn another_existing_copy_is_a_warning_and_is_left_alone() {
    let env = env();
    install(&env, &[]);
    let other = env.tmp().join("other/claude-mem");
    fs::create_dir_all(other.parent().unwrap()).unwrap();
    fs::copy(BIN, &other).unwrap();
    let settings = user_settings(&env);
    let text = fs::read_to_string(&settings).unwrap();
    fs::write(&settings, text.replace(BIN, other.to_str().unwrap())).unwrap();
    let before = fs::read(&settings).unwrap();

    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        status(&report, "hooks", "running another claude-mem"),
        "warn"
    );
    assert!(fix(&report, "hooks", "running another claude-mem").contains("install-hooks"));
    assert_eq!(fs::read(&settings).unwrap(), before, "not changed by --fix");
}

#[test]
fn a_missing_event_fails_and_fix_adds_it() {
    let env = env();
    install(&env, &[]);
    let settings = user_settings(&env);
    let mut doc = read_json(&settings);
    doc["hooks"].as_object_mut().unwrap().remove("Stop");
    fs::write(&settings, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        status(&report, "hooks", "missing Stop (hook summary)"),
        "fail"
    );
    let (code, _) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0);
    assert!(read_json(&settings)["hooks"]["Stop"].is_array());
}

#[test]
fn hooks_in_a_local_file_and_the_user_file_are_taken_out_of_the_local_one() {
    let env = env();
    install(&env, &[]);
    install(&env, &["--local"]);
    let local = env.root.path().join(".claude/settings.local.json");
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "hooks", "handled twice"), "fail");

    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(commands(&local).is_empty(), "ours left the local file");
    assert_eq!(commands(&user_settings(&env)).len(), 5, "the user's stay");
}

#[test]
fn hooks_in_the_shared_project_file_and_the_user_file_are_reported_not_changed() {
    let env = env();
    install(&env, &[]);
    install(&env, &["--project"]);
    let project = env.root.path().join(".claude/settings.json");
    let before = [
        fs::read(user_settings(&env)).unwrap(),
        fs::read(&project).unwrap(),
    ];
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 1);
    assert_eq!(
        check(&report, "hooks", "registered in 2 files")["fixable"],
        false
    );
    assert!(fix(&report, "hooks", "registered in 2 files").contains("uninstall-hooks --project"));
    let after = [
        fs::read(user_settings(&env)).unwrap(),
        fs::read(&project).unwrap(),
    ];
    assert!(before == after, "neither file changed");
}

#[test]
fn a_settings_file_claude_code_ignores_fails_and_is_left_byte_for_byte() {
    let env = env();
    install(&env, &[]);
    let settings = user_settings(&env);
    let mut text = fs::read_to_string(&settings).unwrap();
    text.insert_str(1, "\n  // a comment\n");
    fs::write(&settings, &text).unwrap();
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "hooks", "Claude Code ignores it"), "fail");
    assert_eq!(fs::read_to_string(&settings).unwrap(), text);
}

/// A `claude` that answers `--version` with `version`.
#[cfg(unix)]
fn fake_claude(env: &Env, version: &str) -> PathBuf {
    let path = env.tmp().join("claude");
    harness::write_program(
        &path,
        format!("#!/bin/sh\necho '{version} (Claude Code)'\n"),
    );
    path
}

#[cfg(unix)]
#[test]
fn claude_code_too_old_for_a_registered_event_fails_and_a_new_one_gets_it_added() {
    let env = Env::new();
    let new = fake_claude(&env, "2.1.330");
    let env = env.with("CLAUDE_MEM_CLAUDE_BIN", new.to_str().unwrap());
    // Registered without PostToolUseFailure (no Claude Code then), now a new one is there.
    let no_claude = env
        .command()
        .env("CLAUDE_MEM_CLAUDE_BIN", "/nonexistent/claude")
        .arg("install-hooks")
        .output()
        .unwrap();
    assert!(no_claude.status.success());
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0);
    assert_eq!(
        status(&report, "hooks", "missing PostToolUseFailure"),
        "warn"
    );
    assert_eq!(status(&report, "claude-code", "2.1.330"), "ok");
    doctor(&env, &["--fix"]);
    assert!(read_json(&user_settings(&env))["hooks"]["PostToolUseFailure"].is_array());

    // An old Claude Code with that event in its settings ignores the whole file.
    fake_claude(&env, "2.0.14");
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    let registered = "PostToolUseFailure is registered in";
    assert_eq!(status(&report, "claude-code", registered), "fail");
    assert!(fix(&report, "claude-code", registered).contains("claude update"));
}

#[test]
fn the_mcp_server_is_read_from_claude_json_never_written() {
    let env = env();
    install(&env, &[]);
    let state = env.home().join(".claude.json");
    let (_, report) = doctor(&env, &[]);
    assert_eq!(status(&report, "mcp", "not registered"), "warn");

    let registered = |command: &str| {
        json!({"numStartups": 3, "mcpServers": {"claude-mem": {"type": "stdio",
               "command": command, "args": ["mcp"], "env": {}}}})
        .to_string()
    };
    fs::write(&state, registered(BIN)).unwrap();
    let (_, report) = doctor(&env, &["--fix"]);
    assert_eq!(status(&report, "mcp", "running this binary"), "ok");
    fs::write(&state, registered("/opt/gone/claude-mem")).unwrap();
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "mcp", "cannot be run"), "fail");
    assert_eq!(
        fs::read_to_string(&state).unwrap(),
        registered("/opt/gone/claude-mem")
    );

    // Too big to read: said, not read.
    let file = fs::File::create(&state).unwrap();
    file.set_len(65 << 20).unwrap();
    let (_, report) = doctor(&env, &[]);
    assert_eq!(status(&report, "mcp", "not checked"), "warn");
}

/// Without the MCP server registered, `--fix` registers it the official way: through the
/// Claude Code CLI (`claude mcp add --scope user`), which here is a script that keeps the
/// registration in `~/.claude.json` as the real one does.
#[cfg(unix)]
#[test]
fn an_mcp_server_not_registered_is_registered_by_fix() {
    let env = Env::new();
    let claude = env.tmp().join("claude");
    harness::write_program(
        &claude,
        r#"#!/bin/sh
case "$1 $2" in
  "--version ") echo '2.1.330 (Claude Code)' ;;
  "mcp add") echo "$*" >> "$HOME/mcp-calls"
             printf '{"mcpServers":{"claude-mem":{"type":"stdio","command":"%s","args":["mcp"]}}}' "$7" > "$HOME/.claude.json" ;;
  *) exit 1 ;;
esac
"#,
    );
    let env = env.with("CLAUDE_MEM_CLAUDE_BIN", claude.to_str().unwrap());
    install(&env, &["--no-mcp"]);
    let (_, report) = doctor(&env, &[]);
    assert_eq!(status(&report, "mcp", "not registered"), "warn");
    assert!(fix(&report, "mcp", "not registered").contains("doctor --fix"));
    let (_, report) = doctor(&env, &["--fix"]);
    assert_eq!(status(&report, "mcp", "running this binary"), "ok");
    let calls = fs::read_to_string(env.home().join("mcp-calls")).unwrap();
    assert_eq!(
        calls.trim(),
        format!("mcp add --scope user claude-mem -- {BIN} mcp")
    );
    assert!(env.data_dir.join("mcp-registered").exists());
}

#[cfg(unix)]
#[test]
fn data_open_to_other_users_fails_and_fix_closes_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = env();
    session_start(&env);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let spill = env.data_dir.join("spill");
    fs::set_permissions(env.db_path(), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(&spill, fs::Permissions::from_mode(0o755)).unwrap();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    let open = check(&report, "data", "open to other users");
    assert_eq!(open["status"], "fail");
    for what in ["memory.db 644", "spill/ 755"] {
        assert!(open["message"].as_str().unwrap().contains(what), "{open}");
    }

    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(mode(&env.db_path()), 0o600);
    assert_eq!(mode(&spill), 0o700);
    assert_eq!(status(&report, "data", ""), "ok");
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_of_another_user_in_the_data_dir_fails_and_is_not_touched() {
    if !harness::require_root("giving a file to another user") {
        return;
    }
    let env = env();
    session_start(&env);
    let planted = env.data_dir.join("planted");
    fs::write(&planted, "x").unwrap();
    harness::chown(&planted, harness::NOBODY);
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 1);
    assert!(check(&report, "data", "planted belongs to uid 65534")["fix"].is_string());
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fs::metadata(&planted).unwrap().uid(), harness::NOBODY);
}

/// Fills the database with `n` captures whose payloads say their number, checkpointed into the
/// main file, and overwrites one of its table pages in the middle with garbage. Returns the
/// numbers of the captures on that page.
fn damage_a_page(env: &Env, n: usize) -> Vec<usize> {
    session_start(env);
    let conn = env.db();
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..n {
        conn.execute(
            "INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name,
                 raw_output, created_at, updated_at)
             VALUES (?1, 's', ?2, 'PostToolUse', 'Bash', ?3, ?4, ?4)",
            rusqlite::params![
                format!("row-{i:06}"),
                format!("toolu_{i}"),
                format!("{{\"marker\":\"marker-{i:06} {}\"}}", "y".repeat(300)),
                format!("2026-01-01T00:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
            ],
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    drop(conn);
    let mut bytes = fs::read(env.db_path()).unwrap();
    let page = 4096;
    let middle = format!("marker-{:06}", n / 2);
    let at = (1..bytes.len() / page)
        .find(|p| {
            let data = &bytes[p * page..(p + 1) * page];
            // A table's leaf page (0x0d) that holds the middle capture.
            data[0] == 0x0d && harness::contains(data, &middle)
        })
        .expect("the page holding the middle capture");
    let lost: Vec<usize> = (0..n)
        .filter(|i| {
            harness::contains(
                &bytes[at * page..(at + 1) * page],
                &format!("marker-{i:06}"),
            )
        })
        .collect();
    for (i, b) in bytes[at * page..(at + 1) * page].iter_mut().enumerate() {
        *b = (i * 7 + 13) as u8;
    }
    fs::write(env.db_path(), &bytes).unwrap();
    lost
}

#[test]
fn a_damaged_database_is_moved_aside_and_what_can_be_read_comes_back() {
    let env = env();
    install(&env, &[]);
    let n = 2000;
    let lost = damage_a_page(&env, n);
    assert!(!lost.is_empty() && lost.len() < 50, "{lost:?}");
    let damaged = fs::read(env.db_path()).unwrap();

    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "database", "damaged"), "fail");
    assert_eq!(check(&report, "database", "damaged")["fixable"], true);

    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    let fixed = report["fixed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "database")
        .unwrap();
    assert!(
        fixed["done"]
            .as_str()
            .unwrap()
            .contains("moved the damaged database to"),
        "{fixed}"
    );
    assert_eq!(status(&report, "database", ""), "ok");

    // The old file is kept as it was, beside the new one.
    let aside: Vec<PathBuf> = harness::files_in(&env.data_dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("memory.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(fs::read(&aside[0]).unwrap() == damaged);

    // Every capture of the good pages is back; those of the damaged page are not.
    let ids: Vec<String> = env
        .db()
        .prepare("SELECT id FROM pending_queue ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let expected: Vec<String> = (0..n)
        .filter(|i| !lost.contains(i))
        .map(|i| format!("row-{i:06}"))
        .collect();
    assert_eq!(ids, expected);
    assert_eq!(
        env.count("SELECT COUNT(*) FROM sessions WHERE session_id = 's'"),
        1
    );
    // And the hooks write into the new database.
    assert_ack(&env.hook(
        "capture",
        &post_tool_use("s", "Bash", "toolu_after", json!({"command": "ls"})),
    ));
    env.wait_for_maintenance();
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id = 'toolu_after'"),
        1
    );
}

#[test]
fn a_database_that_is_not_ours_fails_and_is_left_alone() {
    let env = env();
    fs::create_dir_all(&env.data_dir).unwrap();
    let conn = rusqlite::Connection::open(env.db_path()).unwrap();
    conn.execute_batch("PRAGMA application_id = 42; CREATE TABLE theirs (x);")
        .unwrap();
    drop(conn);
    let before = fs::read(env.db_path()).unwrap();
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 1);
    let database = check(&report, "database", "not a claude-mem database");
    assert_eq!(database["fixable"], false);
    assert_eq!(fs::read(env.db_path()).unwrap(), before);
}

#[cfg(unix)]
#[test]
fn spilled_events_are_counted_explained_and_applied_by_fix() {
    let env = env();
    install(&env, &[]);
    session_start(&env);
    let inputs: Vec<Vec<u8>> = (0..3)
        .map(|i| {
            post_tool_use(
                "s",
                "Bash",
                &format!("toolu_spilled_{i}"),
                json!({"command": "ls"}),
            )
        })
        .collect();
    let maintenance = env.spill_captures(&inputs);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "young and few: a warning");
    assert_eq!(status(&report, "spill", "3 events waiting"), "warn");
    assert!(
        check(&report, "spill", "3 events waiting")
            .to_string()
            .contains("database is locked")
    );
    drop(maintenance);
    env.wait_for_maintenance();
    // Whatever the maintenance the hooks started did meanwhile, --fix leaves nothing waiting.
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(status(&report, "spill", ""), "ok");
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id LIKE 'toolu_spilled_%'"),
        3
    );
}

#[cfg(unix)]
#[test]
fn a_day_old_backlog_fails_and_a_quarantined_file_is_a_warning() {
    let env = env();
    install(&env, &[]);
    session_start(&env);
    let _maintenance = env.hold_maintenance();
    let spill = env.data_dir.join("spill");
    let old = spill.join(format!("{}.json", harness::spill_stem(1)));
    fs::write(&old, "{}").unwrap();
    let private = |p: &Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    };
    private(&old, 0o600);
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(two_days_ago)
        .unwrap();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(status(&report, "spill", "1 event waiting"), "fail");

    fs::remove_file(&old).unwrap();
    let quarantine = env.data_dir.join("spill-quarantine");
    fs::create_dir_all(&quarantine).unwrap();
    private(&quarantine, 0o700);
    let bad = quarantine.join(format!("{}.json", harness::spill_stem(2)));
    fs::write(&bad, "{").unwrap();
    private(&bad, 0o600);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(status(&report, "spill", "1 set aside"), "warn");
}

#[test]
fn a_wal_left_behind_by_a_reader_is_truncated_by_fix() {
    let env = env();
    install(&env, &[]);
    session_start(&env);
    let reader = env.db();
    reader
        .execute_batch("BEGIN; SELECT COUNT(*) FROM sessions;")
        .unwrap();
    let writer = env.db();
    writer.execute_batch("BEGIN").unwrap();
    for i in 0..1000 {
        writer
            .execute(
                "INSERT INTO event_log (id, event, created_at) VALUES (?1, 'x', ?2)",
                rusqlite::params![format!("e{i}"), "y".repeat(1000)],
            )
            .unwrap();
    }
    writer.execute_batch("COMMIT").unwrap();
    reader.execute_batch("COMMIT").unwrap();
    let (_, report) = doctor(&env, &[]);
    assert_eq!(status(&report, "wal", "a reader"), "warn");
    let (_, report) = doctor(&env, &["--fix"]);
    assert_eq!(status(&report, "wal", ""), "ok", "{report:#}");
    drop((reader, writer));
}

#[test]
fn the_log_s_warnings_of_the_day_are_summarized() {
    let env = env();
    install(&env, &[]);
    session_start(&env);
    for _ in 0..2 {
        assert_silent(&env.hook("capture", b"not json"));
    }
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "a warning breaks nothing");
    let log = check(&report, "log", "2 warnings in the last day");
    assert_eq!(log["status"], "warn");
    let detail = log["details"][0].as_str().unwrap();
    assert!(
        detail.starts_with("2x WARN hook capture: could not read the event"),
        "{detail}"
    );
}

#[test]
fn the_incumbent_and_bad_variables_are_said_plainly() {
    // thedotmack/claude-mem's folder is ~/.claude-mem when CLAUDE_MEM_DATA_DIR is not set.
    let env = Env::default_data_dir()
        .with("CLAUDE_MEM_CLAUDE_BIN", "/nonexistent/claude")
        .with("CLAUDE_MEM_WAIT_MS", "soon");
    install(&env, &[]);
    fs::create_dir_all(env.home().join(".claude-mem")).unwrap();
    fs::write(env.home().join(".claude-mem/worker.pid"), "123").unwrap();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0);
    let installed = "thedotmack/claude-mem is installed too";
    assert_eq!(status(&report, "incumbent", installed), "warn");
    assert!(fix(&report, "incumbent", installed).contains("claude plugin disable"));
    assert!(fix(&report, "incumbent", installed).contains("import --from-claude-mem"));
    assert_eq!(status(&report, "environment", "CLAUDE_MEM_WAIT_MS"), "warn");
}

/// An environment whose compressor's model is a script that prints the content of `reply`
/// (kept in the returned folder), and two captured tool calls waiting for it.
#[cfg(unix)]
fn with_compression() -> (Env, PathBuf) {
    let env = env();
    let model = env.root.path().join("model");
    fs::create_dir(&model).unwrap();
    let script = model.join("model.sh");
    harness::write_program(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\ncat '{}'\n",
            model.join("reply").display()
        ),
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    install(&env, &[]);
    for id in ["t1", "t2"] {
        let input = json!({"command": format!("echo {id}")});
        assert_ack(&env.hook("capture", &post_tool_use("s", "Bash", id, input)));
    }
    (env, model)
}

fn compress(env: &Env) -> Output {
    run(env, &["compress"])
}

/// Issue 16: compression paused because the login lapsed said "Nothing is broken". Now the
/// `compress` check fails, says why and until when, and what to do; once the pause is over it
/// still fails while the last call could not reach a model.
#[cfg(unix)]
#[test]
fn doctor_fails_compression_paused_for_a_lapsed_login_and_says_to_log_in() {
    let (env, model) = with_compression();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(
        (code, status(&report, "compress", "no model call yet")),
        (0, "ok".into())
    );
    assert_eq!(status(&report, "queue", "2 items waiting"), "ok");
    fs::write(
        model.join("reply"),
        json!({"type": "result", "is_error": true, "api_error_status": null,
               "result": "Not logged in · Please run /login"})
        .to_string(),
    )
    .unwrap();
    assert_eq!(compress(&env).status.code(), Some(1));
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    let paused = "paused until ";
    assert_eq!(status(&report, "compress", paused), "fail");
    let message = check(&report, "compress", paused)["message"].to_string();
    assert!(
        message.contains("Not logged in · Please run /login; 2 items waiting"),
        "{message}"
    );
    assert!(fix(&report, "compress", paused).contains("run claude, then /login"));
    // The hour is over; nothing has tried since.
    fs::remove_file(env.data_dir.join("compress.paused")).unwrap();
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1);
    let refused = "could not reach a model: Not logged in";
    assert_eq!(status(&report, "compress", refused), "fail");
    assert!(fix(&report, "compress", refused).contains("/login"));
    // Logged in again: it works, and doctor says so.
    fs::write(
        model.join("reply"),
        r#"{"structured_output": {"observations": []}}"#,
    )
    .unwrap();
    assert!(compress(&env).status.success());
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(status(&report, "compress", "stored its batch"), "ok");
    assert_eq!(status(&report, "queue", "0 items waiting"), "ok");
}

/// Issue 16: failing batches, items waiting for a retry and items failed for good all said
/// "Nothing is broken". Batches failing are a warning, then a failure from three in a row;
/// items of failed batches are a warning whose fix is `queue retry --all`.
#[cfg(unix)]
#[test]
fn doctor_reports_failing_batches_and_their_items_with_the_fix() {
    let (env, model) = with_compression();
    fs::write(
        model.join("reply"),
        r#"{"is_error": true, "result": "bad"}"#,
    )
    .unwrap();
    let retry_now = || {
        env.db()
            .execute_batch(
                "UPDATE pending_queue SET retry_at = '2000-01-01T00:00:00.000Z'
                  WHERE retry_at IS NOT NULL",
            )
            .unwrap()
    };
    assert!(compress(&env).status.success());
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0);
    let one = "the last model call failed; the latest, ";
    assert_eq!(status(&report, "compress", one), "warn");
    assert!(
        check(&report, "compress", one)["message"]
            .as_str()
            .unwrap()
            .ends_with(" ago: bad")
    );
    let waiting = "2 items wait to be tried again after a failed batch, the next at ";
    assert_eq!(status(&report, "queue", waiting), "warn");
    assert!(fix(&report, "queue", waiting).contains("claude-mem queue retry --all"));
    for _ in 0..2 {
        retry_now();
        compress(&env);
    }
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        status(&report, "compress", "the last 3 model calls failed"),
        "fail"
    );
    for _ in 0..2 {
        retry_now();
        compress(&env);
    }
    let (_, report) = doctor(&env, &[]);
    let dead = "2 items failed 5 times and are kept as failed: nothing compresses them";
    assert_eq!(status(&report, "queue", dead), "warn");
    assert!(fix(&report, "queue", dead).contains("claude-mem queue retry --all"));
    // The text: the check, then its fix under it.
    let out = String::from_utf8(run(&env, &["doctor"]).stdout).unwrap();
    let at = out.find("queue        2 items failed 5 times").unwrap();
    assert!(
        out[at..]
            .lines()
            .nth(1)
            .unwrap()
            .trim_start()
            .starts_with("fix: once the cause is fixed"),
        "{out}"
    );
}

/// The day's budget spent is a pause worth knowing, not a failure.
#[cfg(unix)]
#[test]
fn doctor_warns_when_the_daily_budget_is_spent() {
    let (env, model) = with_compression();
    let env = env.with("CLAUDE_MEM_COMPRESS_DAILY_TOKENS", "1000");
    fs::write(
        model.join("reply"),
        r#"{"structured_output": {"observations": []}}"#,
    )
    .unwrap();
    assert!(compress(&env).status.success());
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    let spent = "the daily token budget is spent (today 0 of 1,000 tokens)";
    assert_eq!(status(&report, "compress", spent), "warn");
    assert!(fix(&report, "compress", spent).contains("CLAUDE_MEM_COMPRESS_DAILY_TOKENS"));
}

/// Regression: spill files a newer claude-mem wrote (`<id>.v2.json`, which this version renames
/// so and never applies) were counted as events waiting for the database, and doctor offered
/// `maintain`, which never applies them. They are a warning of their own: they wait for the
/// newer claude-mem, and the fix is to upgrade.
#[cfg(unix)]
#[test]
fn events_of_a_newer_claude_mem_wait_for_it_not_for_maintain() {
    use std::os::unix::fs::PermissionsExt;
    let env = env();
    install(&env, &[]);
    session_start(&env);
    let spill = env.data_dir.join("spill");
    for n in 1..=2 {
        let file = spill.join(format!("{}.v2.json", harness::spill_stem(n)));
        fs::write(&file, r#"{"format": 2}"#).unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    }
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(status(&report, "spill", "nothing waiting"), "ok");
    let newer = "2 events written by a newer claude-mem wait for it";
    assert_eq!(status(&report, "spill", newer), "warn");
    assert!(fix(&report, "spill", newer).starts_with("upgrade claude-mem"));
    let status = env.command().args(["status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["spill"]["waiting"], 0, "{status:#}");
}
