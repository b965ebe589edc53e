//! A project is its repository, through the real binary and a real `git`: sessions started at
//! a repository's top, in a subfolder and in a linked worktree share one memory (the prompt's
//! recall, the session list, search from any of those folders); a folder outside git keeps its
//! own, as before; a marker file or a configured root makes a folder a project of its own; and
//! `status` says which project the current folder is, and why.

use std::path::{Path, PathBuf};

use crate::harness::*;
use serde_json::{Value, json};

const EARLIER: &str = "5b2d7e31-0c4a-4e8f-9a61-2f7c3b9d1e04";
const FIX: &str = "Make gunicorn bind to port 8041 in production, behind the nginx proxy";
const ASK: &str = "Which port does gunicorn bind to in production behind nginx?";

/// A repository with a commit, a subfolder `invoices/` and a linked worktree beside it.
fn repository(env: &Env) -> (PathBuf, PathBuf, PathBuf) {
    let top = env.tmp().join("shop");
    let sub = top.join("invoices");
    std::fs::create_dir_all(&sub).unwrap();
    git_in(&top, &["init", "-q", "-b", "main"]);
    std::fs::write(sub.join("app.py"), "print('hi')\n").unwrap();
    git_in(&top, &["add", "."]);
    git_in(&top, &["commit", "-q", "-m", "first"]);
    let worktree = env.tmp().join("shop-feature");
    git_in(
        &top,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            worktree.to_str().unwrap(),
        ],
    );
    (top, sub, worktree)
}

fn event(name: &str, session: &str, cwd: &Path, extra: Value) -> Vec<u8> {
    memory::event(name, session, cwd.to_str().unwrap(), extra)
}

/// `text` as a prompt of `session` started in `cwd`; what recall handed Claude, if anything.
fn prompt(env: &Env, session: &str, cwd: &Path, text: &str) -> Option<String> {
    let out = env.hook(
        "prompt",
        &event(
            "UserPromptSubmit",
            session,
            cwd,
            json!({"prompt_id": format!("p-{session}-{}", text.len()), "prompt": text}),
        ),
    );
    assert_clean(&out);
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(String::from)
}

/// A command run in `cwd`, its stdout.
fn run_in(env: &Env, cwd: &Path, args: &[&str]) -> String {
    let out = env.command().args(args).current_dir(cwd).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The earlier session at the repository's top, indexed.
fn earlier_at(env: &Env, top: &Path) {
    assert_eq!(prompt(env, EARLIER, top, FIX), None);
    let out = env
        .command()
        .args(["search", "--all", "index"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
}

#[test]
fn a_subfolder_and_a_linked_worktree_share_the_repositorys_memory() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let (top, sub, worktree) = repository(&env);
    earlier_at(&env, &top);
    for (n, cwd) in [&sub, &worktree].into_iter().enumerate() {
        let session = format!("9e4c1a77-3b2f-4d6e-8c05-7a1b2c3d4e5{n}");
        let given = prompt(&env, &session, cwd, ASK)
            .unwrap_or_else(|| panic!("nothing recalled in {}", cwd.display()));
        assert!(given.contains("8041"), "{given}");
    }
    let projects: Vec<String> = env
        .db()
        .prepare("SELECT DISTINCT project_dir FROM sessions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(projects, [top.to_str().unwrap()]);
    for cwd in [&top, &sub, &worktree] {
        let found = run_in(&env, cwd, &["search", "--json", "gunicorn", "port"]);
        assert!(
            found.contains("8041"),
            "search in {}: {found}",
            cwd.display()
        );
        let sessions = run_in(&env, cwd, &["sessions", "--json"]);
        assert_eq!(sessions.lines().count(), 3, "{sessions}");
    }
}

/// Outside git, a command run below a folder sessions were recorded in reads that folder's
/// memory, and one run beside it does not.
#[test]
fn a_command_run_below_a_recorded_folder_outside_git_reads_its_memory() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let top = env.tmp().join("notes");
    let deep = top.join("drafts").join("2026");
    let beside = env.tmp().join("letters");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::create_dir_all(&beside).unwrap();
    earlier_at(&env, &top);
    let found = run_in(&env, &deep, &["search", "--json", "gunicorn", "port"]);
    assert!(found.contains("8041"), "{found}");
    let other = run_in(&env, &beside, &["search", "--json", "gunicorn", "port"]);
    assert!(!other.contains("8041"), "{other}");
}

#[test]
fn a_folder_outside_git_is_its_own_project_as_before() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let top = env.tmp().join("notes");
    let sub = top.join("drafts");
    std::fs::create_dir_all(&sub).unwrap();
    earlier_at(&env, &sub);
    let stored: String = env
        .db()
        .query_row("SELECT project_dir FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, sub.to_str().unwrap());
    assert_eq!(
        prompt(&env, "9e4c1a77-3b2f-4d6e-8c05-7a1b2c3d4e50", &top, ASK),
        None,
        "the parent folder is another project"
    );
    let found = run_in(&env, &sub, &["search", "--json", "gunicorn", "port"]);
    assert!(found.contains("8041"), "{found}");
}

#[test]
fn a_marker_file_or_a_configured_root_makes_a_subfolder_a_project_of_its_own() {
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let (top, sub, _) = repository(&env);
    std::fs::write(sub.join(".claude-mem-project"), "").unwrap();
    earlier_at(&env, &sub);
    assert_eq!(
        prompt(&env, "9e4c1a77-3b2f-4d6e-8c05-7a1b2c3d4e50", &top, ASK),
        None
    );
    let status = run_in(&env, &sub, &["status", "--json"]);
    let v: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["project"]["root"], sub.to_str().unwrap(), "{status}");
    assert_eq!(v["project"]["why"], "marker", "{status}");

    let configured = Env::new().with("CLAUDE_MEM_PROJECT_ROOTS", sub.to_str().unwrap());
    std::fs::remove_file(sub.join(".claude-mem-project")).unwrap();
    let status = run_in(&configured, &sub.join("."), &["status", "--json"]);
    let v: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["project"]["why"], "setting", "{status}");
    let status = run_in(&configured, &top, &["status"]);
    let line = status
        .lines()
        .find(|l| l.starts_with("project "))
        .unwrap_or_default();
    assert!(
        line.contains(&format!(
            "{} (the top of its git repository; known on every machine by its first commit ",
            top.display()
        )),
        "{status}"
    );
    git_in(
        &top,
        &["remote", "add", "origin", "git@github.com:Acme/Shop.git"],
    );
    let status = run_in(&configured, &top, &["status", "--json"]);
    let v: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["project"]["identity"], "github.com/Acme/Shop", "{status}");
}

/// Each row that names a project, as `(table, session, project)`, sorted.
fn projects_of_rows(env: &Env) -> Vec<(String, String, Option<String>)> {
    let db = env.db();
    let mut rows = Vec::new();
    for table in ["sessions", "pending_queue"] {
        let mut stmt = db
            .prepare(&format!("SELECT session_id, project_dir FROM {table}"))
            .unwrap();
        let found = stmt
            .query_map([], |r| Ok((table.to_string(), r.get(0)?, r.get(1)?)))
            .unwrap();
        rows.extend(found.map(Result::unwrap));
    }
    let prompts: i64 = db
        .query_row("SELECT COUNT(*) FROM user_prompts", [], |r| r.get(0))
        .unwrap();
    rows.push(("user_prompts".into(), prompts.to_string(), None));
    rows.sort();
    rows
}

/// A session an earlier release recorded under `invoices/` (a project was the folder Claude
/// Code started in): recorded here before the folder above it became a repository.
fn recorded_under_a_subfolder(env: &Env) -> (PathBuf, PathBuf) {
    let top = env.tmp().join("shop");
    let sub = top.join("invoices");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(prompt(env, EARLIER, &sub, FIX), None);
    let capture = event(
        "PostToolUse",
        EARLIER,
        &sub,
        json!({"tool_name": "Bash", "tool_use_id": "t1",
               "tool_input": {"command": "grep -rn bind gunicorn.conf.py"},
               "tool_response": {"stdout": "bind = '0.0.0.0:8041'", "stderr": ""}}),
    );
    assert_clean(&env.hook("capture", &capture));
    git_in(&top, &["init", "-q", "-b", "main"]);
    (top, sub)
}

#[test]
fn sessions_recorded_under_a_subfolder_join_their_repository_and_the_move_undoes() {
    let env = Env::new();
    let (top, sub) = recorded_under_a_subfolder(&env);
    let before = projects_of_rows(&env);
    let listed = run_in(&env, &top, &["projects", "--json"]);
    let v: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(v["project"], sub.to_str().unwrap(), "{listed}");
    assert_eq!(v["joins"], top.to_str().unwrap(), "{listed}");

    let out = env.command().args(["projects", "join"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("moved 1 session"),
        "{out:?}"
    );
    let joined = projects_of_rows(&env);
    assert_eq!(joined.len(), before.len(), "nothing lost or duplicated");
    assert!(
        joined
            .iter()
            .filter(|r| r.0 != "user_prompts")
            .all(|r| r.2.as_deref() == top.to_str()),
        "{joined:?}"
    );
    let found = run_in(&env, &top, &["search", "--json", "gunicorn", "bind"]);
    assert!(found.contains("8041"), "search from the top: {found}");

    let out = env.command().args(["projects", "unjoin"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(projects_of_rows(&env), before, "put back exactly");
    let named = sub.to_str().unwrap();
    let found = run_in(
        &env,
        &top,
        &["search", "--json", "--project", named, "gunicorn", "bind"],
    );
    assert!(found.contains("8041"), "search of the subfolder: {found}");
}

#[test]
fn maintenance_joins_once_and_an_unjoin_stays_undone() {
    let env = Env::new();
    let (top, sub) = recorded_under_a_subfolder(&env);
    let maintain = || {
        let out = env.command().arg("maintain").output().unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    maintain();
    let stored = |env: &Env| -> String {
        env.db()
            .query_row("SELECT project_dir FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(stored(&env), top.to_str().unwrap());
    let out = env.command().args(["projects", "unjoin"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    maintain();
    assert_eq!(stored(&env), sub.to_str().unwrap());
}
