//! Where the files live, beside thedotmack/claude-mem (issue "Operate": living beside the
//! incumbent). Both tools used `~/.claude-mem/claude-mem.db`: with the incumbent's database
//! there, every hook refused it and every event went to the spill folder for good. Now our
//! files have a folder and names of their own, and an earlier release's files move there once.

use std::path::Path;

use crate::harness::*;
use rusqlite::Connection;
use serde_json::json;

fn capture(id: &str) -> Vec<u8> {
    post_tool_use("s", "Bash", id, json!({"command": format!("echo {id}")}))
}

/// A database as the first release made it: schema v1, our application_id, one capture, with
/// its WAL still beside it (closed without a checkpoint, as every hook leaves it).
fn release_one_database(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         {}
         PRAGMA application_id = {}; PRAGMA user_version = 1;
         INSERT INTO sessions (session_id, project_dir, started_at, updated_at)
         VALUES ('old-session', '/work/proj', '2026-11-01T00:00:00.000Z',
                 '2026-11-01T00:00:00.000Z');
         INSERT INTO pending_queue (id, session_id, tool_use_id, event, tool_name, raw_output,
                                    created_at, updated_at)
         VALUES ('old-row', 'old-session', 'old-capture', 'PostToolUse', 'Bash', '{{}}',
                 '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z');",
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema/v1.sql")
        )
        .unwrap(),
        0x636d_656d
    ))
    .unwrap();
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .unwrap();
}

/// thedotmack/claude-mem's database: its own tables, no application_id of ours, WAL mode with
/// a WAL and shared memory left beside it (its worker stopped without a checkpoint).
fn incumbent_database(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, content_session_id TEXT);
         CREATE TABLE observations (id INTEGER PRIMARY KEY, title TEXT);
         PRAGMA wal_checkpoint(TRUNCATE);
         INSERT INTO observations (title) VALUES ('theirs');",
    )
    .unwrap();
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .unwrap();
}

/// Every file of a folder with its bytes, to show nothing in it changed.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = files_in(dir)
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn an_earlier_releases_files_move_to_their_own_folder_once() {
    let env = Env::default_data_dir();
    let legacy = env.home().join(".claude-mem");
    release_one_database(&legacy.join("claude-mem.db"));
    std::fs::create_dir_all(legacy.join("spill")).unwrap();
    let waiting = json!({"format": 1, "write": {
        "id": "01900000-0000-7000-8000-000000000000", "at": "2026-11-01T00:00:01.000Z",
        "session": {"session_id": "old-session", "project_dir": null, "cwd": null, "transcript_path": null},
        "change": {"kind": "session_end", "reason": "other"}}});
    std::fs::write(
        legacy.join("spill/01900000-0000-7000-8000-000000000000.json"),
        waiting.to_string(),
    )
    .unwrap();
    std::fs::write(legacy.join("claude-mem.log"), "an old line\n").unwrap();
    std::fs::create_dir_all(legacy.join("backups")).unwrap();
    std::fs::write(legacy.join("backups/x.claude-mem.bak"), "{}").unwrap();

    // The first hook leaves the move to maintenance and keeps its own event meanwhile.
    assert_ack(&env.hook("capture", &capture("first")));
    env.wait_for_maintenance();
    assert_ack(&env.hook("capture", &capture("second")));
    env.wait_for_maintenance();

    assert_eq!(env.db_path(), env.data_dir.join("memory.db"));
    assert_eq!(
        env.count("SELECT COUNT(*) FROM pending_queue WHERE tool_use_id IN ('old-capture', 'first', 'second')"),
        3
    );
    assert_eq!(
        env.count("SELECT status = 'closed' FROM sessions WHERE session_id = 'old-session'"),
        1
    );
    assert_eq!(
        env.count("PRAGMA user_version"),
        14,
        "the moved database was upgraded"
    );
    assert!(env.log().starts_with("an old line\n"), "log: {}", env.log());
    assert!(
        env.data_dir
            .join("settings-backups/x.claude-mem.bak")
            .exists()
    );
    assert!(
        !legacy.exists(),
        "the old folder is left behind: {:?}",
        files_in(&legacy)
    );
}

#[test]
fn with_claude_mem_data_dir_the_old_names_are_renamed_in_place() {
    let env = Env::new();
    release_one_database(&env.data_dir.join("claude-mem.db"));
    assert_ack(&env.hook("capture", &capture("first")));
    env.wait_for_maintenance();
    assert_ack(&env.hook("capture", &capture("second")));
    env.wait_for_maintenance();
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 3);
    assert!(!env.data_dir.join("claude-mem.db").exists());
    assert!(!env.data_dir.join("claude-mem.db-wal").exists());
}

/// Regression: with the incumbent's database at `~/.claude-mem/claude-mem.db`, every hook
/// refused it and every event went to the spill folder for good.
#[test]
fn the_incumbents_database_is_never_touched_and_ours_lives_in_its_own_folder() {
    let env = Env::default_data_dir();
    let theirs = env.home().join(".claude-mem/claude-mem.db");
    incumbent_database(&theirs);
    std::fs::write(env.home().join(".claude-mem/worker.pid"), "4242").unwrap();
    let before = snapshot(&env.home().join(".claude-mem"));
    assert_eq!(
        before.len(),
        4,
        "database, WAL, shared memory and pid: {before:?}"
    );

    let out = env.hook("capture", &capture("first"));
    assert_clean(&out);
    assert!(notice(&out).is_none(), "{:?}", notice(&out));
    env.wait_for_maintenance();
    for i in 0..3 {
        assert_ack(&env.hook("capture", &capture(&format!("next-{i}"))));
    }
    env.wait_for_maintenance();
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 4);
    assert!(env.spilled().is_empty());
    assert_eq!(
        snapshot(&env.home().join(".claude-mem")),
        before,
        "their files changed"
    );

    // install-hooks says plainly that both are installed, and what that means.
    let out = env.command().arg("install-hooks").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("thedotmack/claude-mem is installed too"),
        "{text}"
    );
    assert!(text.contains("Both record every tool call"), "{text}");
    assert!(
        text.contains("claude-mem import --from-claude-mem"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Memory: {}", env.data_dir.display())),
        "{text}"
    );
}

#[test]
fn install_hooks_moves_an_earlier_release_at_once_and_says_so() {
    let env = Env::default_data_dir();
    release_one_database(&env.home().join(".claude-mem/claude-mem.db"));
    let out = env.command().arg("install-hooks").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Moved the memory of an earlier claude-mem"),
        "{text}"
    );
    assert!(
        !text.contains("thedotmack"),
        "our own old files are not the incumbent: {text}"
    );
    assert_eq!(env.count("SELECT COUNT(*) FROM pending_queue"), 1);
}

/// A read command on an earlier release's files moves them first, then shows what they hold.
#[test]
fn a_read_command_moves_an_earlier_release_and_reads_it() {
    let env = Env::default_data_dir();
    release_one_database(&env.home().join(".claude-mem/claude-mem.db"));
    let out = env
        .command()
        .args(["search", "--all", "--json", "echo"])
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.db_path().exists(), "the database was not moved");
    assert!(!env.home().join(".claude-mem").exists());
    let out = env
        .command()
        .args(["sessions", "--all", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("old-session"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
