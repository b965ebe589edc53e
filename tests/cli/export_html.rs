//! `claude-mem export --html` through the real binary: the page opens in a real browser
//! (headless Chromium, as a file) with nothing in its console and no request made, its search
//! finds an item, and it holds nothing the export would have redacted; it holds what `export`
//! selects, is written as `export -o` writes (mode 0600, whole) and never over a link, a folder
//! or a FIFO.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::harness::memory::*;
use crate::harness::*;

const A: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const OTHER: &str = "/home/dev/other";
const TOKEN: &str = "ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i";
/// Text the user marked private: part of a prompt, and a whole prompt.
const HIDDEN: &str = "zebrahidden";
const ALL_HIDDEN: &str = "yakhidden";
/// A command that, were it markup, would end the data's element, run a script and fetch.
const MARKUP: &str =
    "echo '</script><script>document.title=1</script><img src=\"http://127.0.0.1:9/x.png\">'";

/// Two sessions of two projects recorded by the hooks, one with a secret, a private part, a
/// private prompt and markup in a command, compressed into a memory and a summary.
fn recorded(env: &Env) {
    session(env, A, PROJECT, &["alpha", "bravo"]);
    session(env, B, OTHER, &["charlie"]);
    let hook = |name: &str, event_name: &str, extra: Value| {
        assert_ack(&env.hook(name, &event(event_name, A, PROJECT, extra)));
    };
    hook(
        "prompt",
        "UserPromptSubmit",
        json!({"prompt_id": "p-secret",
               "prompt": format!("deploy with {TOKEN} and <private>{HIDDEN}</private> please")}),
    );
    hook(
        "capture",
        "PostToolUse",
        json!({"prompt_id": "p-secret", "tool_name": "Bash", "tool_use_id": "t-markup",
               "tool_input": {"command": MARKUP},
               "tool_response": {"stdout": format!("token {TOKEN}"), "stderr": ""}}),
    );
    hook(
        "summary",
        "Stop",
        json!({"prompt_id": "p-secret", "last_assistant_message": "Deployed."}),
    );
    hook(
        "prompt",
        "UserPromptSubmit",
        json!({"prompt_id": "p-private", "prompt": format!("<private>{ALL_HIDDEN}</private>")}),
    );
    compress(env, A, &[memory("kilo", &[1])], summary("lima"));
}

fn export_html(env: &Env, page: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec!["export", "--html", page.to_str().unwrap()];
    args.extend(more);
    run(env, &args)
}

#[test]
fn the_page_opens_offline_with_a_clean_console_and_its_search_finds_an_item() {
    let Some(modules) = browser::find() else {
        return;
    };
    let env = Env::new();
    recorded(&env);
    let page = env.root.path().join("memory.html");
    let said = ok(&export_html(&env, &page, &["--all"]));
    assert!(
        said.starts_with("Exported 2 sessions, 4 prompts, 1 private turn, 4 tool calls")
            && said.contains(" to ")
            && said.contains("memory.html (")
            && said.ends_with("KiB), a page to open in a browser.\n"),
        "{said}"
    );
    let mode = std::fs::metadata(&page).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Nothing the export redacted, in the page or in the export it is a view of.
    let html = std::fs::read_to_string(&page).unwrap();
    let lines = ok(&run(&env, &["export", "--all"]));
    for gone in [TOKEN, HIDDEN, ALL_HIDDEN] {
        assert!(!html.contains(gone), "{gone} is in the page");
        assert!(!lines.contains(gone), "{gone} is in the export");
    }
    assert!(lines.contains("kilonarrative") && html.contains("kilonarrative"));
    // The markup is data: the page's three script elements are the only ones.
    assert_eq!(html.matches("<script").count(), 3, "{html}");
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none';"));

    let seen = browser::open(&modules, &page, env.root.path(), "KILOnarrative");
    assert_eq!(seen["console"], json!([]), "the console");
    assert_eq!(seen["errors"], json!([]), "the page's errors");
    assert_eq!(seen["requests"], json!([]), "requests the page tried");
    assert_eq!(seen["title"], "claude-mem: all projects");
    let before = &seen["before"];
    assert_eq!(before["status"], "2 sessions.");
    let text = before["text"].as_str().unwrap();
    for shown in [
        "please look at alphaprompt",
        "grep -r bravocommand src",
        "Done: charliemessage",
        "kilotitle",
        "limalearned",
        "1 private prompt, not recorded",
        "[REDACTED",
        &MARKUP[5..60],
    ] {
        assert!(text.contains(shown), "{shown:?} is not shown in:\n{text}");
    }
    let after = &seen["after"];
    assert_eq!(after["status"], "1 item in 1 session match.");
    let text = after["text"].as_str().unwrap();
    assert!(
        text.contains("kilotitle") && text.contains("kilonarrative"),
        "{text}"
    );
    for gone in ["alphaprompt", "charlie", "limalearned"] {
        assert!(!text.contains(gone), "{gone:?} is still shown:\n{text}");
    }
    assert_eq!(after["marked"], json!(["kilonarrative"]));
}

#[test]
fn the_page_holds_what_export_selects() {
    let env = Env::new();
    session(&env, A, PROJECT, &["alpha"]);
    session(&env, B, OTHER, &["charlie"]);
    let page = env.root.path().join("page.html");
    // An old file of the user's is replaced whole, and made private.
    std::fs::write(&page, "old page").unwrap();
    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (args, shown, left_out) in [
        (&[][..], "alphaprompt", "charlieprompt"),
        (&["--project", OTHER][..], "charlieprompt", "alphaprompt"),
        (
            &["--all", "--session", &B[..8]][..],
            "charlieprompt",
            "alphaprompt",
        ),
    ] {
        let said = ok(&export_html(&env, &page, args));
        assert!(
            said.starts_with("Exported 1 session, 1 prompt, 1 tool call"),
            "{said}"
        );
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{args:?}");
        assert!(html.contains(shown) && !html.contains(left_out), "{args:?}");
        let mode = std::fs::metadata(&page).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{args:?}");
    }
}

#[test]
fn neither_the_page_nor_the_export_replaces_a_link_a_folder_or_a_fifo() {
    let env = Env::new();
    session(&env, A, PROJECT, &["alpha"]);
    let root = env.root.path();
    let mine = root.join("mine.html");
    std::fs::write(&mine, "mine").unwrap();
    let link = root.join("link.html");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    let folder = root.join("folder.html");
    std::fs::create_dir(&folder).unwrap();
    let fifo = root.join("fifo.html");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let files = || {
        let mut files = files_in(root);
        files.sort();
        files
    };
    let before = files();
    for (path, says) in [
        (&link, "is a symbolic link: not replaced"),
        (&folder, "is a folder: not replaced"),
        (&fifo, "is not a regular file: not replaced"),
    ] {
        // `--html FILE` and `-o FILE` (JSON Lines) alike.
        let lines = run(&env, &["export", "-o", path.to_str().unwrap()]);
        for err in [failed(&export_html(&env, path, &[]), 1), failed(&lines, 1)] {
            assert!(
                err.contains(path.to_str().unwrap()) && err.contains(says),
                "{err}"
            );
        }
    }
    assert_eq!(files(), before, "a file was left behind");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(folder.read_dir().unwrap().next().is_none());
    // One place to write to.
    let out = export_html(&env, &mine, &["-o", "other.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--html") && err.contains("--output"), "{err}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
}
