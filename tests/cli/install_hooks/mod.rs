//! `install-hooks` and `uninstall-hooks` through the real binary, each test in its own temp
//! directory with the environment cleared (HOME, PATH and CLAUDE_CONFIG_DIR are what we say:
//! see `Sandbox`).
//!
//! Fixture pairs live in tests/fixtures/settings/<name>/: `before.json`, `after.json` (the
//! expected result of install-hooks for a Claude Code that knows PostToolUseFailure; `@BIN@`
//! stands for this binary's path) and, where the original already held claude-mem hooks,
//! `uninstalled.json`.

mod mcp;
mod not_files;
mod race;
mod refused_shapes;
mod schema;
mod what_is_ours;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use assert_cmd::Command;
use serde_json::Value;

use crate::harness::{Env, heavy};
use schema::Schema;

const FIXTURES: &[&str] = &[
    "empty",
    "realistic",
    "other-tools",
    "shared-group",
    "unicode-nested",
    "escapes",
    "old-path",
    "crlf",
];

/// Written with `\u00e9` and `\/` escapes: we write the characters themselves, as Claude Code
/// does, so only JSON equality (with key order) is promised for them, not byte equality.
const NOT_BYTE_EXACT: &[&str] = &["escapes"];

const NEW_CLAUDE: &str = "2.1.197 (Claude Code)";

/// The events we register and the hook each runs, for a Claude Code that knows them all.
const OURS: &[(&str, &str)] = &[
    ("SessionStart", "context"),
    ("UserPromptSubmit", "prompt"),
    ("PostToolUse", "capture"),
    ("PostToolUseFailure", "capture"),
    ("Stop", "summary"),
    ("SessionEnd", "cleanup"),
];

/// The harness's [`Env`] as install-hooks meets a user's machine: the data dir at its default
/// place under an empty HOME, and a PATH holding nothing but the sandbox's `bin/`, where a
/// test puts a fake `claude`. Its paths are canonical, as the binary prints them.
struct Sandbox {
    env: Env,
    root: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let env = Env::default_data_dir();
        let root = env.root.path().canonicalize().expect("canonical temp dir");
        fs::create_dir_all(root.join("bin")).expect("bin");
        let env = env.with("PATH", root.join("bin").to_str().expect("UTF-8 temp dir"));
        Sandbox { env, root }
    }

    /// Puts a fake `claude` on PATH that prints `version_output` for `--version`.
    fn with_claude(self, version_output: &str) -> Sandbox {
        write_script(&self.root.join("bin/claude"), version_output);
        self
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn user_settings(&self) -> PathBuf {
        self.home().join(".claude/settings.json")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_with(Path::new(env!("CARGO_BIN_EXE_claude-mem")), args)
    }

    /// Runs `binary` (this one, or a copy of it somewhere else).
    fn cmd_with(&self, binary: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::from_std(self.process(binary));
        cmd.args(args);
        cmd
    }

    /// `program` with the sandbox's environment, in its root, for a test to spawn.
    fn process(&self, program: &Path) -> std::process::Command {
        let mut cmd = self.env.command_of(program);
        cmd.env("HOME", self.home()).current_dir(&self.root);
        cmd
    }

    /// A copy of this binary at `relative` inside the sandbox.
    fn copy_binary(&self, relative: &str) -> PathBuf {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir for binary copy");
        crate::harness::copy_program(Path::new(env!("CARGO_BIN_EXE_claude-mem")), &path);
        path
    }

    /// `fixture`'s before.json as `settings.json` in the sandbox root.
    fn settings_from(&self, fixture: &str) -> PathBuf {
        let path = self.root.join("settings.json");
        fs::write(&path, read_fixture(fixture, "before.json")).expect("write settings");
        path
    }
}

/// A fake `claude` at `path` that prints `version_output` for `--version`.
fn write_script(path: &Path, version_output: &str) {
    crate::harness::write_program(path, format!("#!/bin/sh\necho '{version_output}'\n"));
}

fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

fn read_fixture(name: &str, file: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/settings")
        .join(name)
        .join(file);
    fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn has_fixture(name: &str, file: &str) -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/settings")
        .join(name)
        .join(file)
        .exists()
}

/// `after.json` with `@BIN@` replaced by `binary`'s path.
fn expected_after(name: &str, binary: &Path) -> String {
    let text = String::from_utf8(read_fixture(name, "after.json")).expect("UTF-8 fixture");
    text.replace("@BIN@", binary.to_str().expect("UTF-8 path"))
}

// Tests that load both cores (a swarm of runs, runs killed at every moment, the races) take
// turns (`heavy`). The races measure what a writer loses in the window docs/setup.md states;
// starved of CPU by a swarm beside them, a writer sat between its read and its write long
// enough to land in it now and then, and the test failed though nothing had changed.

fn this_binary() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_claude-mem"))
        .canonicalize()
        .expect("binary path")
}

fn parse(bytes: &[u8]) -> Value {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Value::Object(Default::default());
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", String::from_utf8_lossy(bytes)))
}

/// Compact text keeps key order, so equal text means equal JSON in the same order.
fn in_order(value: &Value) -> String {
    serde_json::to_string(value).expect("serialize")
}

/// Every (event, command) of a handler whose program is named claude-mem.
fn our_handlers(settings: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in hooks {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                let command = handler["command"].as_str().unwrap_or("");
                if command.contains("claude-mem\"") || command.contains("claude-mem ") {
                    found.push((event.clone(), command.to_string()));
                }
            }
        }
    }
    found
}

fn command_for(binary: &Path, hook: &str) -> String {
    format!("\"{}\" hook {hook}", binary.display())
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn path_arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

fn backdate(path: &Path) -> SystemTime {
    let past = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(past))
        .expect("set mtime");
    fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime")
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime")
}

/// Names in `dir` other than `keep`: what a run left behind.
fn extra_files(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| !keep.contains(&name.as_str()))
        .collect();
    names.sort();
    names
}

// ---- fixtures -------------------------------------------------------------------------------

#[test]
fn install_gives_the_expected_file_for_each_fixture() {
    for name in FIXTURES {
        let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
        let path = sandbox.settings_from(name);
        sandbox
            .cmd(&["install-hooks", "--settings", path_arg(&path)])
            .assert()
            .success();
        let after = fs::read_to_string(&path).expect("read");
        assert_eq!(
            after,
            expected_after(name, &this_binary()),
            "fixture {name}"
        );
    }
}

#[test]
fn every_fixture_before_and_after_install_is_valid_against_the_schema() {
    let schema = Schema::load();
    for name in FIXTURES {
        for file in ["before.json", "after.json", "uninstalled.json"] {
            if !has_fixture(name, file) {
                continue;
            }
            let text = String::from_utf8(read_fixture(name, file)).expect("UTF-8");
            let value = parse(text.replace("@BIN@", "/usr/bin/claude-mem").as_bytes());
            let errors = schema.errors(&value);
            assert!(errors.is_empty(), "{name}/{file}: {errors:#?}");
        }
    }
}

#[test]
fn the_schema_check_knows_every_keyword_and_rejects_what_claude_code_rejects() {
    let schema = Schema::load();
    assert!(
        schema.unknown_keywords().is_empty(),
        "keywords the test validator ignores: {:?}",
        schema.unknown_keywords()
    );
    let invalid = [
        r#"{"hooks": {"NotAnEvent": []}}"#,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "10"}]}]}}"#,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "id": "claude-mem"}]}]}}"#,
        r#"{"hooks": {"Stop": [{"matcher": "*"}]}}"#,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}"#,
        r#"{"hooks": []}"#,
        r#"{"cleanupPeriodDays": 0}"#,
        r#"{"permissions": {"allow": ["Bash(ls)", "Bash(ls)"]}}"#,
    ];
    for text in invalid {
        assert!(
            !schema.errors(&parse(text.as_bytes())).is_empty(),
            "accepted: {text}"
        );
    }
}

#[test]
fn a_second_install_changes_nothing_and_does_not_touch_the_file() {
    for name in FIXTURES {
        let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
        let path = sandbox.settings_from(name);
        let args = ["install-hooks", "--settings", path_arg(&path)];
        sandbox.cmd(&args).assert().success();
        let first = fs::read(&path).expect("read");
        let stamp = backdate(&path);

        let output = sandbox.cmd(&args).output().expect("run");
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(
            stdout(&output).contains("nothing changed"),
            "{name}: {}",
            stdout(&output)
        );
        assert_eq!(
            fs::read(&path).expect("read"),
            first,
            "{name}: bytes changed"
        );
        assert_eq!(mtime(&path), stamp, "{name}: file was rewritten");
    }
}

#[test]
fn install_then_uninstall_gives_back_the_original() {
    for name in FIXTURES {
        let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
        let path = sandbox.settings_from(name);
        sandbox
            .cmd(&["install-hooks", "--settings", path_arg(&path)])
            .assert()
            .success();
        sandbox
            .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
            .assert()
            .success();
        let result = fs::read(&path).expect("read");
        let original = if has_fixture(name, "uninstalled.json") {
            read_fixture(name, "uninstalled.json")
        } else {
            read_fixture(name, "before.json")
        };
        if original.is_empty() {
            assert_eq!(result, b"{}\n", "{name}: a file we filled from nothing");
        } else if NOT_BYTE_EXACT.contains(name) {
            assert_eq!(
                in_order(&parse(&result)),
                in_order(&parse(&original)),
                "{name}"
            );
        } else {
            assert_eq!(
                String::from_utf8_lossy(&result),
                String::from_utf8_lossy(&original),
                "{name}"
            );
        }
    }
}

// ---- where the file is ----------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn by_default_creates_a_private_settings_file_under_home() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let output = sandbox.cmd(&["install-hooks"]).output().expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    let path = sandbox.user_settings();
    let settings = parse(&fs::read(&path).expect("settings.json created"));
    assert_eq!(our_handlers(&settings).len(), OURS.len());
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&sandbox.home().join(".claude")), 0o700);

    let text = stdout(&output);
    assert!(text.contains(path_arg(&path)), "names the file: {text}");
    assert!(
        text.contains(path_arg(&this_binary())),
        "names the binary: {text}"
    );
    assert!(text.contains("added"), "{text}");
    assert!(text.contains("reloads its settings"), "{text}");
}

#[test]
fn claude_config_dir_moves_the_settings_file() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let config = sandbox.root.join("config");
    sandbox
        .cmd(&["install-hooks"])
        .env("CLAUDE_CONFIG_DIR", &config)
        .assert()
        .success();
    let settings = parse(&fs::read(config.join("settings.json")).expect("created there"));
    assert_eq!(our_handlers(&settings).len(), OURS.len());
    assert!(
        !sandbox.user_settings().exists(),
        "~/.claude/settings.json untouched"
    );
}

#[test]
fn project_and_local_flags_pick_the_project_files() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let project = sandbox.root.join("proj");
    fs::create_dir_all(&project).expect("project dir");
    let cases: [(&[&str], PathBuf); 4] = [
        (
            &["--project", "proj"],
            project.join(".claude/settings.json"),
        ),
        (
            &["--project", "proj", "--local"],
            project.join(".claude/settings.local.json"),
        ),
        (&["--project"], sandbox.root.join(".claude/settings.json")),
        (
            &["--local"],
            sandbox.root.join(".claude/settings.local.json"),
        ),
    ];
    for (flags, path) in cases {
        let mut args = vec!["install-hooks"];
        args.extend(flags);
        sandbox.cmd(&args).assert().success();
        let settings = parse(&fs::read(&path).unwrap_or_else(|_| panic!("{flags:?} -> {path:?}")));
        assert_eq!(our_handlers(&settings).len(), OURS.len(), "{flags:?}");
    }
    assert!(!sandbox.user_settings().exists(), "user file untouched");
}

// ---- PostToolUseFailure gating ---------------------------------------------------------------

#[test]
fn post_tool_use_failure_is_written_only_for_a_claude_code_known_to_accept_it() {
    let cases = [
        (Some("2.1.101 (Claude Code)"), true),
        (Some("2.1.330 (Claude Code)"), true),
        (Some("2.1.100 (Claude Code)"), false),
        (Some("1.0.88 (Claude Code)"), false),
        (Some("something else"), false),
        (None, false),
    ];
    for (version, expect_failure_hook) in cases {
        let sandbox = match version {
            Some(version) => Sandbox::new().with_claude(version),
            None => Sandbox::new(),
        };
        let output = sandbox.cmd(&["install-hooks"]).output().expect("run");
        assert!(output.status.success(), "{}", stderr(&output));
        let settings = parse(&fs::read(sandbox.user_settings()).expect("read"));
        let events: Vec<String> = our_handlers(&settings)
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(
            events.iter().any(|e| e == "PostToolUseFailure"),
            expect_failure_hook,
            "{version:?}: {events:?}"
        );
        assert_eq!(events.len(), OURS.len() - usize::from(!expect_failure_hook));
        let text = stdout(&output);
        assert_eq!(
            text.contains("not added"),
            !expect_failure_hook,
            "{version:?}: {text}"
        );
        if version.is_none() {
            assert!(
                text.contains("CLAUDE_MEM_CLAUDE_BIN"),
                "says how to fix it: {text}"
            );
        }
    }
}

#[test]
fn claude_mem_claude_bin_names_a_claude_that_is_not_on_path() {
    let sandbox = Sandbox::new();
    let claude = sandbox.root.join("elsewhere/claude");
    fs::create_dir_all(claude.parent().expect("dir")).expect("dir");
    write_script(&claude, NEW_CLAUDE);
    sandbox
        .cmd(&["install-hooks"])
        .env("CLAUDE_MEM_CLAUDE_BIN", &claude)
        .assert()
        .success();
    let settings = parse(&fs::read(sandbox.user_settings()).expect("read"));
    assert_eq!(our_handlers(&settings).len(), OURS.len());
}

#[test]
fn a_later_install_with_a_newer_claude_adds_the_failure_hook() {
    let sandbox = Sandbox::new().with_claude("2.1.90 (Claude Code)");
    sandbox.cmd(&["install-hooks"]).assert().success();
    write_script(&sandbox.root.join("bin/claude"), NEW_CLAUDE);
    let output = sandbox.cmd(&["install-hooks"]).output().expect("run");
    let settings = parse(&fs::read(sandbox.user_settings()).expect("read"));
    assert_eq!(
        our_handlers(&settings).len(),
        OURS.len(),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("added"));
}

// ---- what is ours ---------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_moved_binary_updates_our_entries_in_place() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("other-tools");
    let args = ["install-hooks", "--settings", path_arg(&path)];
    sandbox.cmd(&args).assert().success();

    let moved = sandbox.copy_binary("opt/new place/claude-mem");
    let output = sandbox.cmd_with(&moved, &args).output().expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("updated"), "{}", stdout(&output));
    // The same file as installing from the new place in the first place: nothing duplicated,
    // nothing moved.
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        expected_after("other-tools", &moved)
    );
    let settings = parse(&fs::read(&path).expect("read"));
    for (event, hook) in OURS {
        let ours: Vec<_> = our_handlers(&settings)
            .into_iter()
            .filter(|(e, _)| e == event)
            .collect();
        assert_eq!(ours, [(event.to_string(), command_for(&moved, hook))]);
    }

    // Uninstall from the original binary removes entries carrying the new path too.
    sandbox
        .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    assert_eq!(
        fs::read(&path).expect("read"),
        read_fixture("other-tools", "before.json")
    );
}

#[test]
fn uninstall_removes_exactly_the_claude_mem_handlers() {
    let sandbox = Sandbox::new();
    let path = sandbox.root.join("settings.json");
    let original = r#"{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          { "type": "command", "command": "\"/usr/local/bin/claude-mem\" hook capture" },
          { "type": "command", "command": "other-tool hook x" },
          { "type": "command", "command": "claude-mem-extra hook" },
          { "type": "command", "command": "/usr/bin/claude-mem status" }
        ]
      },
      { "hooks": [ { "type": "command", "command": "C:/Users/x/claude-mem.exe hook capture" } ] }
    ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "/home/u/.cargo/bin/claude-mem hook summary" } ] } ],
    "PreCompact": [],
    "Notification": [ { "hooks": [] } ]
  },
  "model": "opus"
}"#;
    fs::write(&path, original).expect("write");
    let output = sandbox
        .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = r#"{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          { "type": "command", "command": "other-tool hook x" },
          { "type": "command", "command": "claude-mem-extra hook" },
          { "type": "command", "command": "/usr/bin/claude-mem status" }
        ]
      }
    ],
    "PreCompact": [],
    "Notification": [ { "hooks": [] } ]
  },
  "model": "opus"
}"#;
    let result = parse(&fs::read(&path).expect("read"));
    assert_eq!(in_order(&result), in_order(&parse(expected.as_bytes())));
    assert_eq!(
        stdout(&output).matches("hook capture").count(),
        2,
        "{}",
        stdout(&output)
    );
}

#[test]
fn uninstall_of_a_missing_file_has_nothing_to_remove_and_creates_nothing() {
    let sandbox = Sandbox::new();
    let output = sandbox.cmd(&["uninstall-hooks"]).output().expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Nothing to remove"),
        "{}",
        stdout(&output)
    );
    assert!(!sandbox.home().join(".claude").exists());
}

#[test]
fn uninstall_after_install_into_a_missing_file_leaves_an_empty_object() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    sandbox.cmd(&["install-hooks"]).assert().success();
    sandbox.cmd(&["uninstall-hooks"]).assert().success();
    assert_eq!(
        fs::read_to_string(sandbox.user_settings()).expect("read"),
        "{}\n"
    );
}

#[cfg(unix)]
#[test]
fn the_installed_commands_run_through_sh_even_from_an_awkward_path() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let binary = sandbox.copy_binary("odd \"dir\" $HOME `x`/claude-mem");
    sandbox
        .cmd_with(&binary, &["install-hooks"])
        .assert()
        .success();
    let settings = parse(&fs::read(sandbox.user_settings()).expect("read"));
    let handlers = our_handlers(&settings);
    assert_eq!(handlers.len(), OURS.len());
    for (event, command) in handlers {
        // Exit 127 if sh could not find the program; a hook always exits 0.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env_clear()
            .env("HOME", sandbox.home())
            .env("CLAUDE_MEM_DATA_DIR", sandbox.root.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("sh");
        assert!(status.success(), "{event}: {command} -> {status}");
    }
}

// ---- refusals -------------------------------------------------------------------------------

/// Runs `args` on a settings file holding `content` and checks that it fails with a message
/// containing each of `says`, leaving the file exactly as it was and nothing beside it.
fn assert_refused(args: &[&str], content: &str, says: &[&str]) {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.root.join("settings.json");
    fs::write(&path, content).expect("write");
    let stamp = backdate(&path);
    let mut all = args.to_vec();
    all.extend(["--settings", path_arg(&path)]);
    let output = sandbox.cmd(&all).output().expect("run");
    assert!(!output.status.success(), "{args:?} accepted {content:?}");
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert!(message.contains("settings.json unchanged"), "{message}");
    for part in says {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
    assert_eq!(fs::read_to_string(&path).expect("read"), content);
    assert_eq!(mtime(&path), stamp);
    assert_eq!(
        extra_files(&sandbox.root, &["settings.json", "home", "tmp", "bin"]),
        Vec::<String>::new()
    );
}

#[test]
fn files_claude_code_would_ignore_are_refused_untouched() {
    for args in [["install-hooks"], ["uninstall-hooks"]] {
        assert_refused(
            &args,
            "{\n  // mine\n  \"model\": \"opus\"\n}\n",
            &["comment at line 2, column 3", "Claude Code ignores"],
        );
        assert_refused(
            &args,
            "{\n  \"model\": \"opus\",\n}\n",
            &["trailing comma at line 2, column 18", "Claude Code ignores"],
        );
        assert_refused(
            &args,
            "{\n  \"model\": \"opus\"\n  \"x\": 1\n}\n",
            &["not valid JSON", "line 3 column 3"],
        );
        assert_refused(&args, "[1, 2]\n", &["top level is an array, not an object"]);
        // Writing it back would silently drop the first "model" (Claude Code reads the last).
        assert_refused(
            &args,
            "{\n  \"model\": \"opus\",\n  \"model\": \"sonnet\"\n}\n",
            &["key \"model\" twice", "line 3"],
        );
        assert_refused(&args, "\u{feff}{}\n", &["byte order mark"]);
        assert_refused(
            &args,
            "{\"hooks\": [\"x\"]}\n",
            &["\"hooks\" value is an array, not an object"],
        );
    }
    assert_refused(
        &["install-hooks"],
        "{\"hooks\": {\"Stop\": {\"hooks\": []}}}\n",
        &["\"hooks.Stop\" value is an object, not an array"],
    );
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_refused_untouched_even_for_root() {
    for args in [["install-hooks"], ["uninstall-hooks"]] {
        let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
        let path = sandbox.settings_from("old-path");
        set_mode(&path, 0o444);
        let output = sandbox
            .cmd(&[args[0], "--settings", path_arg(&path)])
            .output()
            .expect("run");
        assert!(!output.status.success());
        assert!(stderr(&output).contains("read-only"), "{}", stderr(&output));
        assert_eq!(
            fs::read(&path).expect("read"),
            read_fixture("old-path", "before.json")
        );
        assert_eq!(mode(&path), 0o444);
        assert_eq!(
            extra_files(&sandbox.root, &["settings.json", "home", "tmp", "bin"]),
            Vec::<String>::new()
        );
    }
}

/// A file the system itself will not let us write: immutable (`chattr +i`) as root, whose
/// write bits do not stop it; a read-only directory otherwise.
#[cfg(unix)]
#[test]
fn a_file_the_system_will_not_let_us_write_is_refused_untouched() {
    use std::os::unix::fs::MetadataExt;
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("realistic");
    let root = fs::metadata(&path).expect("metadata").uid() == 0;

    struct Restore<'a>(&'a Path, bool);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            if self.1 {
                let _ = std::process::Command::new("chattr")
                    .arg("-i")
                    .arg(self.0)
                    .status();
            } else {
                set_mode(self.0.parent().expect("dir"), 0o755);
            }
        }
    }
    let _restore = Restore(&path, root);
    if root {
        let chattr = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&path)
            .output();
        assert!(
            chattr.as_ref().is_ok_and(|o| o.status.success()),
            "as root this test needs `chattr +i` (ext4/xfs/btrfs): {chattr:?}"
        );
    } else {
        set_mode(&sandbox.root, 0o555);
    }
    let output = sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .output()
        .expect("run");
    assert!(!output.status.success());
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("settings.json unchanged"), "{message}");
    assert_eq!(
        fs::read(&path).expect("read"),
        read_fixture("realistic", "before.json")
    );
}

// ---- how the file is written ----------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_symlinked_settings_file_keeps_its_link_and_its_target_changes() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let dotfiles = sandbox.root.join("dotfiles");
    fs::create_dir_all(&dotfiles).expect("dotfiles");
    let target = dotfiles.join("claude-settings.json");
    fs::write(&target, read_fixture("realistic", "before.json")).expect("target");
    set_mode(&target, 0o640);
    let link = sandbox.user_settings();
    fs::create_dir_all(link.parent().expect("dir")).expect(".claude");
    std::os::unix::fs::symlink("../../dotfiles/claude-settings.json", &link).expect("symlink");

    sandbox.cmd(&["install-hooks"]).assert().success();
    assert_eq!(
        fs::read_link(&link).expect("still a link"),
        Path::new("../../dotfiles/claude-settings.json")
    );
    assert_eq!(
        fs::read_to_string(&target).expect("target"),
        expected_after("realistic", &this_binary())
    );
    assert_eq!(mode(&target), 0o640);
    // Nothing of ours left in the dotfiles repository; the backup is beside the link.
    assert_eq!(
        extra_files(&dotfiles, &["claude-settings.json"]),
        Vec::<String>::new()
    );
    assert_eq!(
        fs::read(link.with_file_name("settings.json.claude-mem.bak")).expect("backup"),
        read_fixture("realistic", "before.json")
    );

    sandbox.cmd(&["uninstall-hooks"]).assert().success();
    assert!(
        fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read(&target).expect("target"),
        read_fixture("realistic", "before.json")
    );
}

#[cfg(unix)]
#[test]
fn the_mode_is_kept_and_the_first_backup_is_never_overwritten() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("unicode-nested");
    set_mode(&path, 0o640);
    let backup = sandbox.root.join("settings.json.claude-mem.bak");

    let output = sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .output()
        .expect("run");
    assert!(
        stdout(&output).contains(path_arg(&backup)),
        "{}",
        stdout(&output)
    );
    assert_eq!(mode(&path), 0o640);
    let original = read_fixture("unicode-nested", "before.json");
    assert_eq!(fs::read(&backup).expect("backup"), original);

    sandbox
        .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    assert_eq!(mode(&path), 0o640);
    assert_eq!(
        fs::read(&backup).expect("backup"),
        original,
        "first backup kept"
    );
}

#[test]
fn dry_run_shows_the_change_and_writes_nothing() {
    // Into a missing file: not even the directory appears.
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let output = sandbox
        .cmd(&["install-hooks", "--dry-run"])
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("Dry run"), "{text}");
    assert!(text.contains("+    \"SessionStart\": ["), "{text}");
    assert!(!sandbox.home().join(".claude").exists());

    // Into an existing file, and out of it.
    let path = sandbox.settings_from("other-tools");
    let stamp = backdate(&path);
    for args in [
        ["install-hooks", "--dry-run"],
        ["uninstall-hooks", "--dry-run"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--settings", path_arg(&path)]);
        sandbox.cmd(&all).assert().success();
        assert_eq!(
            fs::read(&path).expect("read"),
            read_fixture("other-tools", "before.json")
        );
        assert_eq!(mtime(&path), stamp);
    }
    sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    let stamp = backdate(&path);
    let installed = fs::read(&path).expect("read");
    let output = sandbox
        .cmd(&[
            "uninstall-hooks",
            "--dry-run",
            "--settings",
            path_arg(&path),
        ])
        .output()
        .expect("run");
    assert!(
        stdout(&output).contains("-            \"command\": \""),
        "{}",
        stdout(&output)
    );
    assert_eq!(fs::read(&path).expect("read"), installed);
    assert_eq!(mtime(&path), stamp);
    assert_eq!(
        extra_files(
            &sandbox.root,
            &[
                "settings.json",
                "settings.json.claude-mem.bak",
                "home",
                "tmp",
                "bin"
            ]
        ),
        Vec::<String>::new()
    );
}

// ---- concurrency and crashes ----------------------------------------------------------------

#[cfg(unix)]
#[test]
fn concurrent_installs_leave_a_valid_file_with_one_set_of_entries() {
    let _turn = heavy();
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("other-tools");
    let other = sandbox.copy_binary("other/claude-mem");
    let children: Vec<_> = (0..8)
        .map(|i| {
            let binary = if i % 2 == 0 {
                this_binary()
            } else {
                other.clone()
            };
            sandbox
                .process(&binary)
                .args(["install-hooks", "--settings", path_arg(&path)])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let settings = parse(&fs::read(&path).expect("read"));
    let handlers = our_handlers(&settings);
    assert_eq!(handlers.len(), OURS.len(), "{handlers:#?}");
    let winner = if handlers[0].1.contains("other/") {
        other
    } else {
        this_binary()
    };
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        expected_after("other-tools", &winner)
    );
}

/// A write by someone else (Claude Code) between our read and our rename is merged, not lost.
/// Holding our lock file keeps the install between its first read and its write.
#[cfg(target_os = "linux")]
#[test]
fn a_change_made_while_install_runs_is_merged_not_overwritten() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("realistic");
    let lock = sandbox.root.join(".settings.json.claude-mem.lock");
    fs::write(&lock, std::process::id().to_string()).expect("hold the lock");
    let opens = crate::harness::wait::Watch::opens(&lock);
    let mut child = sandbox
        .process(&this_binary())
        .args(["install-hooks", "--settings", path_arg(&path)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // It reads the lock (whose owner is alive), and reads it again after a pause: it waits.
    crate::harness::wait_until(Duration::from_secs(60), "install reading the lock", || {
        opens.seen() >= 2 || child.try_wait().expect("poll").is_some()
    });
    assert!(
        child.try_wait().expect("poll").is_none(),
        "install did not wait for the lock"
    );

    let mut changed = parse(&fs::read(&path).expect("read"));
    changed["addedMeanwhile"] = Value::Bool(true);
    fs::write(
        &path,
        serde_json::to_string_pretty(&changed).expect("json") + "\n",
    )
    .expect("write");
    fs::remove_file(&lock).expect("release the lock");

    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "{}", stderr(&output));
    let settings = parse(&fs::read(&path).expect("read"));
    assert_eq!(
        settings["addedMeanwhile"],
        Value::Bool(true),
        "their change was lost"
    );
    assert_eq!(our_handlers(&settings).len(), OURS.len());
}

/// Killing an install at any moment leaves the old file or the new one, never a broken one,
/// and the next install still works. (Linux: a dead run's lock is taken over at once there.)
#[cfg(target_os = "linux")]
#[test]
fn an_install_killed_at_any_moment_never_leaves_a_broken_file() {
    let _turn = heavy();
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.root.join("settings.json");
    let old = read_fixture("realistic", "before.json");
    let new = expected_after("realistic", &this_binary()).into_bytes();
    let install = || {
        sandbox
            .process(&this_binary())
            .args(["install-hooks", "--settings", path_arg(&path)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn")
    };
    // Round k kills the install as soon as it has done its k-th thing in the folder (opened,
    // read, written, created, renamed, deleted a file), until a round where it finished first:
    // kills at every step it takes, however fast or slow this machine is.
    let mut outcomes = [0, 0];
    for round in 0.. {
        assert!(round < 10_000, "the install never finished: {outcomes:?}");
        fs::write(&path, &old).expect("reset");
        let steps = crate::harness::wait::Watch::everything_in(&sandbox.root);
        let mut child = install();
        let mut finished = false;
        while steps.seen() < round {
            if child.try_wait().expect("poll").is_some() {
                finished = true;
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        let now = fs::read(&path).expect("settings.json still there");
        parse(&now);
        match now {
            bytes if bytes == old => outcomes[0] += 1,
            bytes if bytes == new => outcomes[1] += 1,
            bytes => panic!(
                "round {round}: neither old nor new:\n{}",
                String::from_utf8_lossy(&bytes)
            ),
        }
        if finished {
            break;
        }
    }
    // Both ends were reached, so the kills landed before, during and after the write.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "old/new: {outcomes:?}");

    fs::write(&path, &old).expect("reset");
    sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .timeout(Duration::from_secs(5))
        .assert()
        .success();
    assert_eq!(fs::read(&path).expect("read"), new);
}

// ---- regressions found in review ------------------------------------------------------------

/// A project's settings.local.json is personal and kept out of git by its exact name; a backup
/// beside it would be an untracked file that `git add -A` commits, tokens and all.
#[test]
fn the_backup_of_a_local_settings_file_stays_out_of_the_project() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let dir = sandbox.root.join("proj/.claude");
    fs::create_dir_all(&dir).expect("project");
    let original = "{\n  \"env\": {\n    \"API_TOKEN\": \"secret\"\n  }\n}\n";
    fs::write(dir.join("settings.local.json"), original).expect("write");
    sandbox
        .cmd(&["install-hooks", "--project", "proj", "--local"])
        .assert()
        .success();
    assert_eq!(
        extra_files(&dir, &["settings.local.json"]),
        Vec::<String>::new()
    );
    let backups = sandbox
        .home()
        .join(".local/share/claude-mem/settings-backups");
    let kept: Vec<_> = fs::read_dir(&backups).expect("backups").collect();
    assert_eq!(kept.len(), 1);
    let kept = kept.into_iter().next().unwrap().expect("entry").path();
    assert_eq!(fs::read_to_string(kept).expect("backup"), original);
}

/// A user who sets one of our variables for a hook writes `CLAUDE_MEM_DEBUG=1 <path> hook ...`:
/// still ours, repointed with its prefix kept, never duplicated, and removed by uninstall.
#[test]
fn our_command_behind_an_environment_prefix_is_still_ours() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.root.join("settings.json");
    let before = r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"CLAUDE_MEM_DEBUG=1 /old/claude-mem hook cleanup","timeout":10}]}]}}"#;
    fs::write(&path, before).expect("write");
    sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    let settings = parse(&fs::read(&path).expect("read"));
    let ends = settings["hooks"]["SessionEnd"].as_array().expect("array");
    assert_eq!(ends.len(), 1, "duplicated: {settings:#}");
    let command = ends[0]["hooks"][0]["command"].as_str().expect("command");
    assert_eq!(
        command,
        format!(
            "CLAUDE_MEM_DEBUG=1 {}",
            command_for(&this_binary(), "cleanup")
        )
    );
    sandbox
        .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    assert_eq!(
        parse(&fs::read(&path).expect("read")),
        serde_json::json!({})
    );
}

/// Installed once with a Claude Code that knows PostToolUseFailure, then again where no Claude
/// Code is found: the entry stays and is reported as present, not as "not added".
#[test]
fn a_hook_registered_earlier_is_reported_present_when_claude_is_not_found() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    sandbox.cmd(&["install-hooks"]).assert().success();
    fs::remove_file(sandbox.root.join("bin/claude")).expect("remove claude");
    let output = sandbox.cmd(&["install-hooks"]).output().expect("run");
    assert!(output.status.success());
    let report = stdout(&output);
    assert!(!report.contains("not added"), "{report}");
    let line = report
        .lines()
        .find(|l| l.contains("PostToolUseFailure"))
        .expect("a line");
    assert!(line.contains("already present"), "{report}");
    let settings = parse(&fs::read(sandbox.user_settings()).expect("read"));
    assert_eq!(our_handlers(&settings).len(), OURS.len());
}

/// A run killed between creating its temp file and renaming it leaves the temp file; the next
/// run that writes removes it once it is old enough to belong to no live run.
#[test]
fn temp_files_of_a_killed_run_are_cleaned_up() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("realistic");
    let left = sandbox.root.join(".settings.json.claude-mem-AbCdEf.tmp");
    fs::write(&left, "{\"half\": ").expect("write");
    backdate(&left);
    let fresh = sandbox.root.join(".settings.json.claude-mem-XyZ123.tmp");
    fs::write(&fresh, "{").expect("write");
    sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    assert!(!left.exists(), "the stale temp file is still there");
    assert!(fresh.exists(), "a fresh temp file may belong to a live run");
}
