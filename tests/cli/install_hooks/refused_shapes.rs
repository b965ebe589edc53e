//! What install-hooks and uninstall-hooks refuse, leaving the file byte for byte, instead of
//! changing it silently: hook entries of a shape Claude Code rejects, and numbers that would
//! not be written back as they are written.

use super::assert_refused;

/// These used to be accepted: install added its hooks beside the broken entries, and
/// uninstall said there was nothing to remove.
#[test]
fn malformed_hook_entries_are_refused_naming_their_json_path() {
    let cases = [
        (
            r#"{"hooks": {"PostToolUse": [1, "x", null]}}"#,
            r#""hooks.PostToolUse[0]" value is a number (1), not a hook group object"#,
        ),
        (
            r#"{"hooks": {"Stop": [{"matcher": "*"}]}}"#,
            r#""hooks.Stop[0]" has no "hooks" array"#,
        ),
        (
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}, 7]}]}}"#,
            r#""hooks.Stop[0].hooks[1]" value is a number (7), not a handler object"#,
        ),
        (
            r#"{"hooks": {"Stop": [{"hooks": {"type": "command", "command": "x"}}]}}"#,
            r#""hooks.Stop[0].hooks" value is an object, not an array"#,
        ),
        (
            r#"{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "x", "timeout": "10"}]}]}}"#,
            r#""hooks.Notification[0].hooks[0].timeout" value is a string ("10")"#,
        ),
    ];
    for args in [["install-hooks"], ["uninstall-hooks"]] {
        for (content, says) in cases {
            assert_refused(&args, content, &[says, "Claude Code rejects"]);
        }
    }
}

/// `1e3` used to be written back as `1000.0`, and a 30-digit integer with its digits lost.
/// (Each file holds a hook of ours, so that uninstall too has something to write.)
#[test]
fn numbers_that_would_not_be_written_back_as_they_are_are_refused() {
    let ours = r#""hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/x/claude-mem hook summary"}]}]}"#;
    for args in [["install-hooks"], ["uninstall-hooks"]] {
        for (content, says) in [
            (
                format!("{{\n  \"cleanupPeriodDays\": 1e3,\n  {ours}\n}}\n"),
                "number 1e3 at line 2, column 24 would be written back as 1000.0",
            ),
            (
                format!("{{\"x\": {{\"id\": 123456789012345678901234567890}}, {ours}}}"),
                "number 123456789012345678901234567890 at line 1",
            ),
            (
                format!("{{\"x\": [2.50], {ours}}}"),
                "number 2.50 at line 1, column 8",
            ),
        ] {
            assert_refused(&args, &content, &[says]);
        }
    }
}

/// Nothing is written when there is nothing to change, so then such a number is no reason to
/// refuse.
#[test]
fn such_numbers_do_not_stop_a_command_that_changes_nothing() {
    let sandbox = super::Sandbox::new();
    let path = sandbox.root.join("settings.json");
    std::fs::write(&path, "{\"x\": 1e3}").expect("write");
    let output = sandbox
        .cmd(&["uninstall-hooks", "--settings", super::path_arg(&path)])
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", super::stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "{\"x\": 1e3}"
    );
}
