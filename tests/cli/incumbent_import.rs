//! `claude-mem import --from-claude-mem` through the real binary, on databases made with
//! thedotmack/claude-mem's own schema (tests/fixtures/incumbent/: its current one and its first
//! with observations): everything comes over once, as we would have stored it, and its file is
//! only read.

use std::path::{Path, PathBuf};

use crate::harness::*;
use rusqlite::{Connection, params};

const SHOP: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const API: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const TOKEN: &str = "ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i";

fn schema(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/incumbent")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Its database where it keeps it (`~/.claude-mem/claude-mem.db`), in WAL mode as it runs it.
fn incumbent_db(env: &Env, schema_file: &str) -> (PathBuf, Connection) {
    let dir = env.home().join(".claude-mem");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("claude-mem.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
    conn.execute_batch(&schema(schema_file)).unwrap();
    (path, conn)
}

fn session(conn: &Connection, content: &str, memory: &str, project: &str) {
    conn.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at,
             started_at_epoch, completed_at, completed_at_epoch, status)
         VALUES (?1, ?2, ?3, '2026-10-01T09:00:00.000Z', 0, '2026-10-01T10:00:00.000Z', 0,
             'completed')",
        params![content, memory, project],
    )
    .unwrap();
}

/// A current database: two sessions (projects `shop` and `api`), their prompts, observations
/// (one narrative holding a token) and a summary.
fn current(conn: &Connection) {
    session(conn, SHOP, "mem-shop", "shop");
    session(conn, API, "mem-api", "api");
    for (session, n, text) in [
        (SHOP, 1, "Fix the flaky checkout test"),
        (
            SHOP,
            2,
            "Now the cart total <private>my salary is 9000</private> please",
        ),
        (API, 1, "Add rate limiting to the login route"),
    ] {
        conn.execute(
            "INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text,
                 created_at, created_at_epoch)
             VALUES (?1, ?2, ?3, '2026-10-01T09:01:00.000Z', 0)",
            params![session, n, text],
        )
        .unwrap();
    }
    for (memory, project, title, narrative) in [
        (
            "mem-shop",
            "shop",
            "Checkout test raced the clock",
            "The checkout test compared wall-clock times; it now uses a frozen clock.",
        ),
        (
            "mem-shop",
            "shop",
            "Cart total rounding",
            &format!("Rounding moved to the end. The deploy token {TOKEN} was in .env."),
        ),
        (
            "mem-api",
            "api",
            "Login rate limit",
            "Login allows 5 tries a minute per address, via a token bucket in Redis.",
        ),
    ] {
        conn.execute(
            "INSERT INTO observations (memory_session_id, project, type, title, subtitle,
                 narrative, facts, concepts, files_read, files_modified, prompt_number,
                 discovery_tokens, created_at, created_at_epoch, content_hash,
                 generated_by_model)
             VALUES (?1, ?2, 'bugfix', ?3, 'a subtitle', ?4, '[\"a fact\"]', '[\"gotcha\"]',
                 '[\"src/a.rs\"]', '[]', 1, 1200, '2026-10-01T09:05:00.000Z', 0, 'h1',
                 'claude-sonnet-4-6')",
            params![memory, project, title, narrative],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO session_summaries (memory_session_id, project, request, investigated,
             learned, completed, next_steps, notes, files_read, files_edited, prompt_number,
             created_at, created_at_epoch)
         VALUES ('mem-shop', 'shop', 'Fix checkout', 'the test', 'clocks drift',
             'froze the clock', 'cart rounding', NULL, '[\"src/a.rs\"]', '[\"src/a.rs\"]', 2,
             '2026-10-01T09:50:00.000Z', 0)",
        [],
    )
    .unwrap();
}

fn import(env: &Env, args: &[&str]) -> std::process::Output {
    env.command().arg("import").args(args).output().unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A session of ours in /home/dev/shop: their project `shop` is that one.
fn our_shop_session(env: &Env) {
    let start = serde_json::json!({"session_id": "ours", "cwd": "/home/dev/shop",
        "hook_event_name": "SessionStart", "source": "startup"});
    assert_ack(&env.hook("context", start.to_string().as_bytes()));
}

/// What came over, as we would have stored it: their project name is our project's path where
/// one is known, private parts are gone, secrets redacted, their extra columns kept.
fn assert_stored_as_we_would_have_stored_it(env: &Env) {
    let db = env.db();
    let (project, model, extra): (String, String, String) = db
        .query_row(
            "SELECT project_dir, model, extra FROM memories WHERE title = 'Login rate limit'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(project, "api");
    assert_eq!(model, "claude-sonnet-4-6");
    let extra: serde_json::Value = serde_json::from_str(&extra).unwrap();
    assert_eq!(extra["content_hash"], "h1");
    assert_eq!(extra["discovery_tokens"], 1200);
    let shop: String = db
        .query_row(
            "SELECT project_dir FROM memories WHERE title = 'Cart total rounding'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(shop, "/home/dev/shop");
    let prompt: String = db
        .query_row(
            "SELECT prompt_text FROM user_prompts WHERE session_id = ?1 AND prompt_number = 2",
            [SHOP],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!prompt.contains("salary"), "{prompt}");
    let everything = everything_on_disk(env);
    assert!(!contains(&everything, TOKEN), "the token reached our files");
    assert!(
        !contains(&everything, "my salary"),
        "a private part reached our files"
    );
}

/// What came over is found as our own memory is.
fn assert_found_as_our_own_memory_is(env: &Env) {
    let search = env
        .command()
        .args(["search", "frozen", "clock", "--all"])
        .output()
        .unwrap();
    assert!(search.status.success(), "{search:?}");
    assert!(
        stdout(&search).contains("memory") && stdout(&search).contains("frozen clock"),
        "{}",
        stdout(&search)
    );
    let show = env.command().args(["show", SHOP]).output().unwrap();
    assert!(stdout(&show).contains("clocks drift"), "{}", stdout(&show));
}

#[test]
fn its_memory_comes_over_once_cleaned_and_its_file_is_only_read() {
    let env = Env::default_data_dir();
    our_shop_session(&env);
    let (path, conn) = incumbent_db(&env, "schema-v13.sql");
    current(&conn);
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let names_before = files_in(path.parent().unwrap());

    let out = import(&env, &["--from-claude-mem"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out),
        format!(
            "Imported from thedotmack/claude-mem ({}): 2 sessions, 3 prompts, 3 memories, \
             1 summary.\n",
            path.display()
        )
    );
    assert!(out.stderr.is_empty(), "{out:?}");

    // Their file and folder are as they were.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(files_in(path.parent().unwrap()), names_before);

    assert_stored_as_we_would_have_stored_it(&env);
    assert_found_as_our_own_memory_is(&env);

    let db = env.db();
    // Twice stores once.
    let tables = "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM user_prompts),
                         (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM summaries)";
    let counts = |db: &Connection| -> (i64, i64, i64, i64) {
        db.query_row(tables, [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
    };
    let first = counts(&db);
    assert_eq!(first, (3, 3, 3, 1));
    let again = import(&env, &["--from-claude-mem", path.to_str().unwrap()]);
    assert!(again.status.success(), "{again:?}");
    assert!(
        stdout(&again)
            .ends_with("0 sessions, 0 prompts, 0 memories, 0 summaries; 9 rows here already.\n"),
        "{}",
        stdout(&again)
    );
    assert_eq!(counts(&db), first);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// Its first schema with observations had only `text` and `type`: the text is the narrative,
/// its first line the title.
#[test]
fn an_old_database_of_it_imports_too() {
    let env = Env::default_data_dir();
    let (path, conn) = incumbent_db(&env, "schema-v4.sql");
    session(&conn, SHOP, "mem-shop", "shop");
    conn.execute(
        "INSERT INTO observations (memory_session_id, project, text, type, created_at,
             created_at_epoch)
         VALUES ('mem-shop', 'shop', 'Cache keys include the locale\nOtherwise French users
             saw English prices.', 'discovery', '2025-09-02T10:00:00.000Z', 0)",
        [],
    )
    .unwrap();
    drop(conn);

    let out = import(&env, &["--from-claude-mem", path.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).ends_with("1 session, 0 prompts, 1 memory, 0 summaries.\n"),
        "{}",
        stdout(&out)
    );
    let (title, narrative, kind, extra): (String, String, String, Option<String>) = env
        .db()
        .query_row(
            "SELECT title, narrative, type, extra FROM memories",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(title, "Cache keys include the locale");
    assert!(narrative.contains("French users"), "{narrative}");
    assert_eq!(kind, "discovery");
    assert_eq!(extra, None, "the text is the narrative, not kept twice");
}

#[test]
fn what_is_not_its_database_is_refused_in_one_line() {
    let env = Env::default_data_dir();
    let missing = import(&env, &["--from-claude-mem"]);
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    let line = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("--from-claude-mem DB"), "{line}");

    let text = env.tmp().join("notes.db");
    std::fs::write(&text, "not a database").unwrap();
    let out = import(&env, &["--from-claude-mem", text.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().count(),
        1,
        "{out:?}"
    );

    // Our own database is moved with export and import, not read as theirs.
    our_shop_session(&env);
    let ours = env.db_path();
    let out = import(&env, &["--from-claude-mem", ours.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("claude-mem export"),
        "{out:?}"
    );

    let both = import(&env, &["x.jsonl", "--from-claude-mem"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

/// While its worker runs, the newest rows are in its WAL: read as any reader would, and no file
/// of its is added or changed but by the worker.
#[test]
fn while_its_worker_runs_what_is_in_its_wal_comes_too() {
    let env = Env::default_data_dir();
    let (path, worker) = incumbent_db(&env, "schema-v13.sql");
    worker
        .execute_batch("PRAGMA wal_autocheckpoint = 0")
        .unwrap();
    current(&worker);
    let db_before = std::fs::read(&path).unwrap();
    let names_before = files_in(path.parent().unwrap());
    assert_eq!(names_before.len(), 3, "{names_before:?}");

    let out = import(&env, &["--from-claude-mem"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).ends_with("2 sessions, 3 prompts, 3 memories, 1 summary.\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read(&path).unwrap(), db_before);
    assert_eq!(files_in(path.parent().unwrap()), names_before);
    drop(worker);
}

/// A list column that is not valid JSON is kept as text, and its secrets are redacted all the same.
#[test]
fn a_malformed_list_of_it_still_loses_its_secrets() {
    let env = Env::default_data_dir();
    let (path, conn) = incumbent_db(&env, "schema-v13.sql");
    session(&conn, SHOP, "mem-shop", "shop");
    conn.execute(
        "INSERT INTO observations (memory_session_id, project, type, title, narrative, facts,
             concepts, files_read, files_modified, prompt_number, created_at, created_at_epoch)
         VALUES ('mem-shop', 'shop', 'change', 'Deploy script', 'It deploys.', ?1, '[]', '[]',
             '[]', 1, '2026-10-01T09:05:00.000Z', 0)",
        [format!("[\"deploy with {TOKEN}\", ")],
    )
    .unwrap();
    drop(conn);

    let out = import(&env, &["--from-claude-mem", path.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("1 memory"), "{}", stdout(&out));
    let facts: String = env
        .db()
        .query_row("SELECT facts FROM memories", [], |r| r.get(0))
        .unwrap();
    assert!(facts.contains("[REDACTED:"), "{facts}");
    assert!(
        !contains(&everything_on_disk(&env), TOKEN),
        "the token reached our files"
    );
}

/// `import --from-claude-mem <db>` on a file made by `sql`: how it ended, within 30 s (killed
/// after, as a hang), and what it said on stderr.
fn import_within(env: &Env, sql: &str) -> (Option<i32>, String) {
    let path = env.tmp().join("crafted.db");
    let _ = std::fs::remove_file(&path);
    Connection::open(&path).unwrap().execute_batch(sql).unwrap();
    let mut child = env
        .command()
        .args(["import", "--from-claude-mem", path.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if wait_or_kill(&mut child, std::time::Duration::from_secs(30))
        .unwrap()
        .is_none()
    {
        panic!("the import of a crafted database never finished: {sql}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Regression: a database whose `observations` is a recursive view was read for ever; a table
/// of 500 rows or more whose ids are text was read again and again. Both are refused before
/// anything is stored.
#[test]
fn a_crafted_database_is_refused_before_anything_is_stored() {
    let env = Env::new();
    let sessions = "CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, content_session_id TEXT,
                        memory_session_id TEXT, project TEXT);
                    INSERT INTO sdk_sessions VALUES (1, 's-1', 'm-1', 'shop');";
    let (code, err) = import_within(
        &env,
        &format!(
            "{sessions}
             CREATE VIEW observations AS
                 WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n)
                 SELECT id, 'm-1' AS memory_session_id, 'a title' AS title FROM n;"
        ),
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err,
        "claude-mem: error: this is not a thedotmack/claude-mem database: its observations is \
         a view, not a table\n"
    );
    let (code, err) = import_within(
        &env,
        &format!(
            "{sessions}
             CREATE VIRTUAL TABLE observations USING fts5(id, memory_session_id, title);"
        ),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("its observations is a virtual table"), "{err}");
    assert!(!env.db_path().exists() || env.count("SELECT COUNT(*) FROM memories") == 0);

    let (code, err) = import_within(
        &env,
        &format!(
            "{sessions}
             CREATE TABLE observations (id INTEGER PRIMARY KEY, memory_session_id TEXT,
                 title TEXT);
             CREATE TABLE user_prompts (id TEXT, content_session_id TEXT,
                 prompt_number INTEGER, prompt_text TEXT, created_at TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600)
             INSERT INTO user_prompts
                 SELECT printf('p-%03d', i), 's-1', i, 'prompt ' || i, '2026-10-01T09:00:00Z'
                   FROM n;"
        ),
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err,
        "claude-mem: error: this is not a thedotmack/claude-mem database: its user_prompts has \
         ids that are not whole numbers\n"
    );
    assert!(!env.db_path().exists() || env.count("SELECT COUNT(*) FROM user_prompts") == 0);
}
