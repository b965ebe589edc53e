//! The command line outside the hook path: help and version work, and bad input to a command
//! is one clear line on stderr with a non-zero exit.

use crate::harness::{self, Env, memory};

#[test]
fn bad_command_input_is_one_line_and_non_zero() {
    let env = Env::new();
    for args in [
        &["bogus"][..],
        &["install-hooks", "--settings", "x.json", "--project"][..],
        &["install-hooks", "--nope"][..],
    ] {
        let out = env.command().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("claude-mem: error: "), "{stderr}");
    }
}

#[test]
fn help_and_version_go_to_stdout() {
    let env = Env::new();
    let help = env.command().arg("--help").output().unwrap();
    assert!(help.status.success() && help.stderr.is_empty());
    let help = String::from_utf8(help.stdout).unwrap();
    for command in ["hook", "install-hooks", "uninstall-hooks"] {
        assert!(help.contains(command), "{help}");
    }
    let version = env.command().arg("--version").output().unwrap();
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8(version.stdout).unwrap().trim(),
        format!("claude-mem {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Regression: a bare `claude-mem` printed its one-line description as an "error" with exit 2.
#[test]
fn bare_claude_mem_shows_the_short_help() {
    let env = Env::new();
    let out = env.command().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Usage: claude-mem <COMMAND>"), "{help}");
    for command in ["install-hooks", "status", "doctor", "search"] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command}: {help}"
        );
    }
}

/// Regression: clap's "did you mean" tips were cut off with the lines after the first.
#[test]
fn a_typo_gets_a_suggestion_and_the_help_of_its_command() {
    let env = Env::new();
    for (args, tip, help) in [
        (
            &["instal-hooks"][..],
            "'install-hooks'",
            "claude-mem --help",
        ),
        (
            &["install-hooks", "--dryrun"][..],
            "'--dry-run'",
            "claude-mem install-hooks --help",
        ),
        (
            &["queue", "claim", "--limt", "3"][..],
            "'--limit'",
            "claude-mem queue claim --help",
        ),
        (&["search"][..], "<WORDS>", "claude-mem search --help"),
    ] {
        let out = env.command().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(tip), "{args:?}: {stderr}");
        assert!(
            stderr.trim_end().ends_with(&format!("(see {help})")),
            "{stderr}"
        );
    }
}

/// Regression: `claude-mem hook --help` printed nothing (the hook path took `--help` for an
/// unknown hook name).
#[test]
fn hook_help_helps_and_hook_is_not_in_the_main_list() {
    let env = Env::new();
    for flag in ["--help", "-h"] {
        let out = env.command().args(["hook", flag]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stderr.is_empty());
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("Run by Claude Code, not by you"), "{help}");
        assert!(
            help.contains("Usage: claude-mem hook [OPTIONS] <NAME>"),
            "{help}"
        );
        assert!(help.contains("--agent <AGENT>"), "{help}");
    }
    let help = env.command().arg("--help").output().unwrap().stdout;
    let help = String::from_utf8(help).unwrap();
    assert!(!help.contains("\n  hook "), "{help}");
    // What Claude Code runs is unchanged: an unknown hook is a silent no-op, never help.
    let out = env.hook("bogus", b"{}");
    harness::assert_silent(&out);
    assert!(!env.data_dir.exists());
}

/// Regression: `install-hooks --project ./typo` created `typo/.claude/settings.json`.
#[test]
fn install_hooks_refuses_a_project_directory_that_does_not_exist() {
    let env = Env::new();
    for args in [
        &["install-hooks", "--project", "typo"][..],
        &["uninstall-hooks", "--project", "typo", "--local"][..],
    ] {
        let out = env.command().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("no such directory"), "{stderr}");
        assert!(!env.root.path().join("typo").exists());
    }
    std::fs::create_dir(env.root.path().join("real")).unwrap();
    let out = env
        .command()
        .args(["install-hooks", "--project", "real"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(env.root.path().join("real/.claude/settings.json").exists());
}

/// Issue 26: `elvish` was among the shells `completions` takes, but neither its help's first
/// line nor docs/setup.md named it. Every shell it takes now is named in both, with where its
/// script goes, and each gets a script of every command and flag.
#[test]
fn completions_for_each_shell_it_names() {
    let env = Env::new();
    let help = env
        .command()
        .args(["completions", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let values = help
        .split("[possible values: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no possible values: {help}"));
    let shells: Vec<&str> = values.split(", ").collect();
    let first = help.lines().next().unwrap();
    let setup = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/setup.md"),
    )
    .unwrap();
    let section = &setup[setup.find("## Shell completions").unwrap()..];
    let section = &section[..section[3..].find("\n## ").unwrap_or(section.len())];
    for shell in &shells {
        assert!(first.contains(shell), "{shell} is not in: {first}");
        assert!(
            help.contains(&format!("for {shell}, ")),
            "the help says not where {shell}'s script goes: {help}"
        );
        assert!(
            section.contains(&format!("| {shell} |")),
            "docs/setup.md says not where {shell}'s script goes: {section}"
        );
        let marker = match *shell {
            "bash" => "complete -F",
            "zsh" => "#compdef claude-mem",
            "fish" => "complete -c claude-mem",
            "elvish" => "edit:completion:arg-completer[claude-mem]",
            "powershell" => "Register-ArgumentCompleter",
            other => panic!("a shell this test does not know: {other}"),
        };
        let out = env.command().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("install-hooks"), "{shell}");
        assert!(script.contains("dry-run"), "{shell}");
        // A command's arguments are made when it runs: `help sync` completes `key` still.
        if *shell == "bash" {
            assert!(
                script.contains("claude__mem__subcmd__help__subcmd__sync,key"),
                "{script}"
            );
        }
    }
    assert_eq!(shells.len(), 5, "{help}");
    let out = env
        .command()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Regression: without Claude Code on PATH, install-hooks printed one line of about 260
/// characters about PostToolUseFailure and not how to add it later with doctor.
#[test]
fn install_output_without_claude_code_is_short_and_says_how_to_add_the_hook_later() {
    let env = Env::new();
    // No `claude` on PATH (nor in the test's HOME).
    let out = env
        .command()
        .env("PATH", env.tmp())
        .arg("install-hooks")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // The binary's path is the user's to choose, and a command to copy names it whole: count
    // it as a typical install path (~/.cargo/bin/claude-mem), not as where cargo built it.
    let typical = text.replace(
        env!("CARGO_BIN_EXE_claude-mem"),
        "/home/someone/.cargo/bin/claude-mem",
    );
    for line in typical.lines() {
        assert!(line.chars().count() <= 100, "{} chars: {line}", line.len());
    }
    assert!(text.contains("PostToolUseFailure"), "{text}");
    assert!(text.contains("claude-mem doctor --fix"), "{text}");
}

/// What a usage error of `args` printed: exit 2 and one line on stderr, nothing on stdout,
/// never a panic.
fn usage_error(env: &Env, args: &[&str]) -> String {
    let out = env
        .command()
        .args(args)
        .env("CLAUDE_PROJECT_DIR", memory::PROJECT)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("claude-mem: error: "), "{stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    stderr
}

/// Regression: `--since 9999999999w` panicked (exit 101, a backtrace on stderr) in every
/// command that takes a time; `1mo` and `1y` were refused.
#[test]
fn a_time_too_far_back_is_one_line_and_months_and_years_are_durations() {
    let env = Env::new();
    memory::session(&env, "s-1", memory::PROJECT, &["alpha"]);
    for (args, flag) in [
        (&["search", "alpha", "--since"][..], "--since"),
        (&["search", "alpha", "--until"][..], "--until"),
        (&["sessions", "--since"][..], "--since"),
        (&["forget", "--yes", "--since"][..], "--since"),
        (&["export", "--since"][..], "--since"),
        (&["prune", "--older-than"][..], "--older-than"),
    ] {
        for when in ["9999999999w", "99999999999999999999y", "5000y"] {
            let mut all = args.to_vec();
            all.push(when);
            let err = usage_error(&env, &all);
            assert!(err.contains(flag) && err.contains(when), "{all:?}: {err}");
        }
    }
    assert_eq!(env.count("SELECT COUNT(*) FROM sessions"), 1);
    for args in [
        &["sessions", "--since", "1y"][..],
        &["search", "alphaprompt", "--since", "6mo"][..],
        &["prune", "--older-than", "1mo", "--dry-run"][..],
    ] {
        memory::ok(&memory::run(&env, args));
    }
}

/// Regression: `--limit 0` ended with exit 1 and no word of why.
#[test]
fn a_limit_of_zero_is_a_usage_error() {
    let env = Env::new();
    memory::session(&env, "s-1", memory::PROJECT, &["alpha"]);
    for args in [
        &["search", "alpha", "--limit", "0"][..],
        &["sessions", "--limit", "0"][..],
    ] {
        let err = usage_error(&env, args);
        assert!(
            err.contains("--limit") && err.contains("1 or more"),
            "{err}"
        );
    }
}

/// Regression: `show --help` left `<ID>` without a word, the tagline still said "Capture
/// layer", and the help of `forget` and `timeline` named no memories nor summaries.
#[test]
fn help_says_what_claude_mem_is_and_what_every_id_may_name() {
    let env = Env::new();
    let help = |args: &[&str]| {
        let out = env.command().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let main = help(&["--help"]);
    assert!(main.starts_with("Memory for Claude Code"), "{main}");
    assert!(!main.contains("Capture layer"), "{main}");
    let show = help(&["show", "--help"]);
    let id = show.split("  <ID>\n").nth(1).unwrap_or_default();
    assert!(
        id.trim_start()
            .starts_with("A session, prompt, tool call, message, memory or summary"),
        "{show}"
    );
    for command in ["forget", "timeline"] {
        let text = help(&[command, "--help"]);
        assert!(
            text.contains("memory or summary id"),
            "{command} --help: {text}"
        );
    }
}

/// Regression: with a Claude Code that does not run (a path in CLAUDE_MEM_CLAUDE_BIN that is
/// not there), the note on PostToolUseFailure was one line of 181 characters, and the
/// compression note one of 400.
#[test]
fn install_notes_about_a_claude_code_that_does_not_run_fit_in_100_columns() {
    let env = Env::new();
    let out = env
        .command()
        .env("PATH", env.tmp())
        .env("CLAUDE_MEM_CLAUDE_BIN", "/home/someone/.local/bin/claude")
        .env("CLAUDE_MEM_COMPRESS", "on")
        .arg("install-hooks")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let typical = text.replace(
        env!("CARGO_BIN_EXE_claude-mem"),
        "/home/someone/.cargo/bin/claude-mem",
    );
    for line in typical.lines() {
        // A command to copy stays whole, on a line of its own.
        let command = line.starts_with("    /") && line.contains(" mcp add ");
        assert!(
            command || line.chars().count() <= 100,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(
        text.contains("PostToolUseFailure   hook capture  not added: cannot tell the version"),
        "{text}"
    );
    assert!(text.contains("`claude-mem doctor --fix`"), "{text}");
    assert!(text.contains("CLAUDE_MEM_COMPRESS=off"), "{text}");
}
