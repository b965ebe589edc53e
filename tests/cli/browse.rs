//! `claude-mem browse` in a real pseudo-terminal (a tmux pane: keys in, the screen read back),
//! over a database the real hooks wrote: the first screen, search as you type, an item in
//! full, a forget that `search` then agrees with, the help, colour and `NO_COLOR`, a resize,
//! and the terminal given back as it was, on `q` and on SIGTERM; in a pipe, one line.

use crate::harness::memory::*;
use crate::harness::tui::{Tui, require_tmux};
use crate::harness::*;

const A: &str = "11111111-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "22222222-2222-4222-8222-bbbbbbbbbbbb";
const C: &str = "33333333-3333-4333-8333-cccccccccccc";
const OTHER: &str = "/home/dev/other";

/// Two sessions in [`PROJECT`] and one in another project, recorded by the hooks.
fn recorded() -> Env {
    let env = Env::new();
    session(&env, A, PROJECT, &["alpha", "beta"]);
    session(&env, B, PROJECT, &["gamma"]);
    session(&env, C, OTHER, &["delta"]);
    env
}

/// `browse` started in [`PROJECT`], its first screen shown.
fn browse(env: &Env, vars: &[(&str, &str)], size: (u16, u16)) -> Tui {
    let mut all = vec![("CLAUDE_PROJECT_DIR", PROJECT)];
    all.extend_from_slice(vars);
    let tui = Tui::start(env, &[], &all, size);
    tui.wait_for("Sessions of");
    tui
}

#[test]
fn browse_lists_searches_opens_forgets_and_quits() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    assert!(ok(&run(&env, &["search", "betaoutput"])).contains("betaoutput"));
    let tui = browse(&env, &[], (80, 24));
    // The project's sessions, by day, with their agent and first request; not the other's.
    let first = tui.wait_for("look at alpha");
    assert!(first.contains("look at gamma"), "{first}");
    assert!(first.contains("claude-code"), "{first}");
    assert!(!first.contains(OTHER), "{first}");
    // Every project's, each session's project beside it.
    tui.keys(&["a"]);
    tui.wait_for(OTHER);
    tui.keys(&["a"]);
    tui.wait("only this project's sessions again", |s| {
        !s.contains(OTHER) && s.contains("look at alpha")
    });

    tui.keys(&["/"]);
    tui.wait_for("Search:");
    tui.type_text("betaoutput");
    let found = tui.wait("the matching tool call", |s| {
        s.lines()
            .any(|l| l.contains("Bash") && l.contains("betaoutput"))
    });
    assert!(!found.contains("alphaoutput"), "{found}");

    tui.keys(&["Enter"]);
    tui.wait("the tool call in full", |s| {
        s.contains("PostToolUse") && s.contains("src/a.rs: betaoutput")
    });

    tui.keys(&["d"]);
    // The question names what goes.
    tui.wait("the question", |s| {
        s.contains("Forget?") && s.contains("This forgets") && s.contains("y forgets it")
    });
    let asked = tui.screen();
    assert!(asked.contains("tool call"), "{asked}");
    tui.keys(&["y"]);
    // Its screen closes: back on the search, which no longer finds it.
    let after = tui.wait("the search without the forgotten call", |s| {
        s.contains("Forgot 1 tool call") && s.contains("Search:")
    });
    assert!(
        !after
            .lines()
            .any(|l| l.contains("Bash") && l.contains("betaoutput")),
        "{after}"
    );
    // Esc alone: an Esc and a key sent at once read as Alt and the key, as in any terminal.
    tui.keys(&["Escape"]);
    tui.wait_for("Sessions of");
    tui.keys(&["q"]);
    let (code, same) = tui.ended();
    assert_eq!(code, 0);
    assert!(same, "the terminal's settings changed");
    let screen = tui.screen();
    assert!(
        screen.contains("READY"),
        "the screen before browse is back:\n{screen}"
    );
    assert!(!screen.contains("Sessions of"), "{screen}");

    let out = run(&env, &["search", "betaoutput"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(ok(&run(&env, &["search", "alphaoutput"])).contains("alphaoutput"));
}

#[test]
fn browse_opens_a_session_and_its_items() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let tui = browse(&env, &[], (80, 24));
    tui.wait_for("look at alpha");
    // The most recent session (B) is first: its timeline, then its prompt in full.
    tui.keys(&["Enter"]);
    // What each screen shows is waited for whole: a busy machine shows a screen half drawn.
    tui.wait("the session's prompt, tool call and message", |s| {
        s.contains("prompt #1") && s.contains("Bash") && s.contains("gammamessage")
    });
    tui.keys(&["Enter"]);
    tui.wait("the prompt in full", |s| {
        s.contains("please look at gammaprompt") && !s.contains("Session ")
    });
    tui.keys(&["Escape"]);
    // The timeline again, told by its header (the item's screen names its prompt too): a
    // second Escape sent before the first was read would reach the terminal as one key.
    tui.wait("the session's timeline again", |s| {
        s.contains("Session ") && s.contains("prompt #1")
    });
    tui.keys(&["Escape"]);
    tui.wait_for("Sessions of");
    tui.keys(&["c"]);
    tui.wait_for("Standing instructions of");
    tui.keys(&["q"]);
    assert_eq!(tui.ended(), (0, true));
}

/// Beside each prompt, what its recall gave (each item's short id, score and reason), and at
/// the top what the session start gave: the records `claude-mem given` prints.
#[test]
fn browse_shows_what_the_session_start_and_each_prompt_were_given() {
    if !require_tmux() {
        return;
    }
    let env = Env::new().with("CLAUDE_MEM_RECALL", "1");
    let prompt = |session: &str, n: usize, text: &str| {
        let extra = serde_json::json!({"prompt_id": format!("{session}-p{n}"), "prompt": text});
        let out = env.hook(
            "prompt",
            &event("UserPromptSubmit", session, PROJECT, extra),
        );
        assert_clean(&out);
        out
    };
    let login = "Fix the login timeout: sessions expire after 30 seconds in the auth middleware";
    assert_ack(&prompt(A, 0, login));
    assert_ack(&prompt(A, 1, "Add a dark mode toggle to the settings page"));
    // Any search catches the index up with the database; finding nothing is fine.
    run(&env, &["search", "--all", "index"]);
    // A maintenance process the hooks started may hold the index: recall then gives nothing.
    env.wait_for_maintenance();
    let asked = prompt(
        B,
        0,
        "How did we fix the login timeout in the auth middleware?",
    );
    assert_ne!(asked.stdout, ACK.as_bytes(), "recall answered nothing");
    let login_id: String = env
        .db()
        .query_row(
            "SELECT id FROM user_prompts WHERE prompt_text = ?1",
            [login],
            |r| r.get(0),
        )
        .unwrap();
    // A later session's start lists the earlier ones (and recall then leaves them out).
    let start = event(
        "SessionStart",
        C,
        PROJECT,
        serde_json::json!({"source": "startup"}),
    );
    assert_clean(&env.hook("context", &start));
    assert_ack(&prompt(C, 0, "Rename the invoice exporter"));

    let tui = browse(&env, &[], (120, 24));
    tui.keys(&["Enter"]);
    tui.wait_for("session start gave");
    tui.keys(&["Escape"]);
    tui.wait_for("Sessions of");
    tui.keys(&["j", "Enter"]);
    let screen = tui.wait_for("recall gave");
    let line = screen.lines().find(|l| l.contains("recall gave")).unwrap();
    assert!(
        line.contains(&login_id[24..32]) && line.contains(" match"),
        "{screen}"
    );
    let prompt_at = screen
        .lines()
        .position(|l| l.contains("prompt #1"))
        .unwrap();
    let given_at = screen
        .lines()
        .position(|l| l.contains("recall gave"))
        .unwrap();
    assert_eq!(given_at, prompt_at + 1, "{screen}");
    tui.keys(&["q"]);
    assert_eq!(tui.ended().0, 0);
}

#[test]
fn browse_help_lists_every_key() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let tui = browse(&env, &[], (80, 24));
    tui.keys(&["?"]);
    let help = tui.wait("the help drawn whole", |s| s.contains("└"));
    for key in [
        "↑ ↓  k j",
        "PgUp PgDn",
        "Home End  g G",
        "Enter",
        "Esc",
        "/",
        "c",
        "a",
        "d",
        "?",
        "q  Ctrl-C",
    ] {
        assert!(
            help.lines()
                .any(|l| l.trim_start_matches(['│', ' ']).starts_with(key)),
            "{key} is not in the help:\n{help}"
        );
    }
    assert!(
        help.contains("forget the selected item or session (y confirms)"),
        "{help}"
    );
    tui.keys(&["x"]);
    tui.wait("the help closed", |s| !s.contains("Keys"));
    tui.keys(&["q"]);
    assert_eq!(tui.ended(), (0, true));
}

#[test]
fn browse_colours_only_without_no_color() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let coloured = browse(&env, &[], (80, 24));
    coloured.wait_for("look at alpha");
    let escapes = coloured.screen_with_escapes();
    assert!(
        escapes.contains("\u{1b}[38;5;3m") || escapes.contains("\u{1b}[33m"),
        "no yellow ids: {escapes:?}"
    );
    drop(coloured);

    let plain = browse(&env, &[("NO_COLOR", "1")], (80, 24));
    plain.wait_for("look at alpha");
    let escapes = plain.screen_with_escapes();
    let colour = (30..=37)
        .map(|c| format!("\u{1b}[{c}m"))
        .chain(["\u{1b}[38;".to_string(), ";3".to_string()])
        .find(|code| escapes.contains(code.as_str()));
    assert_eq!(colour, None, "a colour with NO_COLOR: {escapes:?}");
    // The selection still shows, in reverse video.
    assert!(
        escapes.contains("\u{1b}[7m") || escapes.contains("\u{1b}[0;7m"),
        "{escapes:?}"
    );
}

#[test]
fn browse_draws_again_when_resized() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let tui = browse(&env, &[], (80, 24));
    let last_row = |screen: &str, row: usize| {
        screen
            .lines()
            .nth(row)
            .is_some_and(|l| l.contains("q quit"))
    };
    tui.wait("the keys on row 24", |s| last_row(s, 23));
    tui.resize(100, 30);
    tui.wait("the keys on row 30", |s| last_row(s, 29));
    tui.resize(60, 12);
    let small = tui.wait("the keys on row 12", |s| {
        s.lines().count() == 12 && s.lines().nth(11).is_some_and(|l| l.contains("Enter open"))
    });
    assert!(small.lines().all(|l| l.chars().count() <= 60), "{small}");
    tui.keys(&["q"]);
    assert_eq!(tui.ended(), (0, true));
}

#[cfg(target_os = "linux")]
#[test]
fn browse_gives_the_terminal_back_on_sigterm() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let tui = browse(&env, &[], (80, 24));
    let pids = env.running("browse");
    assert_eq!(pids.len(), 1, "{pids:?}");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let (code, same) = tui.ended();
    assert_eq!(code, 1);
    assert!(same, "the terminal's settings changed");
    let screen = tui.screen();
    assert!(screen.contains("READY"), "{screen}");
    assert!(screen.contains("ended by a signal"), "{screen}");
    assert!(!screen.contains("Sessions of"), "{screen}");
}

/// A closed terminal (its window closed, its tmux server killed) ends browse: nothing is
/// left reading a hung-up terminal.
#[cfg(target_os = "linux")]
#[test]
fn browse_ends_when_its_terminal_closes() {
    if !require_tmux() {
        return;
    }
    let env = recorded();
    let tui = browse(&env, &[], (80, 24));
    assert_eq!(env.running("browse").len(), 1);
    drop(tui);
    wait_until(
        std::time::Duration::from_secs(30),
        "browse to end with its terminal",
        || env.running("browse").is_empty(),
    );
}

#[test]
fn browse_in_a_pipe_refuses_in_one_line() {
    let env = recorded();
    let out = run(&env, &["browse"]);
    let err = failed(&out, 1);
    assert!(err.contains("stdout is not one"), "{err}");
    assert!(out.stdout.is_empty());
}
