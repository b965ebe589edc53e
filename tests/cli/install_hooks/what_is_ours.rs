//! Our hook where it is not a whole handler of its own: chained with a user's command in one
//! command line, or in exec form (`command` plus `args`).

use std::fs;

use serde_json::{Value, json};

use super::{
    NEW_CLAUDE, Sandbox, command_for, in_order, parse, path_arg, stderr, stdout, this_binary,
};

/// One Stop handler running `command`, as a settings file.
fn stop_handler(command: &str) -> String {
    json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]}})
        .to_string()
}

/// Runs `command` on a settings file holding `content`: what it printed, and the file after.
fn run(command: &str, content: &str) -> (String, String) {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.root.join("settings.json");
    fs::write(&path, content).expect("write");
    let output = sandbox
        .cmd(&[command, "--settings", path_arg(&path)])
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    (stdout(&output), fs::read_to_string(&path).expect("read"))
}

fn stop_commands(settings: &Value) -> Vec<String> {
    settings["hooks"]["Stop"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .map(|handler| handler["command"].as_str().unwrap_or("").to_string())
        .collect()
}

/// `uninstall-hooks` used to delete the whole handler, the user's command with it.
#[test]
fn uninstall_takes_only_our_part_out_of_a_chained_command() {
    let ours = r#""/opt/old/claude-mem" hook summary"#;
    let cases = [
        (format!("{ours} && notify-send done"), "notify-send done"),
        (format!("notify-send a; {ours}"), "notify-send a"),
        (format!("x && {ours} && y"), "x && y"),
    ];
    for (command, left) in cases {
        let (report, after) = run("uninstall-hooks", &stop_handler(&command));
        assert_eq!(stop_commands(&parse(after.as_bytes())), [left], "{command}");
        assert!(report.contains(&format!("{left:?}")), "{report}");
    }
}

/// Where taking our part out would change what the user's part does, the line stays, and the
/// report says which event, which command and why, in one line.
#[test]
fn uninstall_keeps_a_command_it_cannot_take_apart_and_says_so() {
    let ours = r#""/opt/old/claude-mem" hook summary"#;
    for (command, why) in [
        (format!("{ours} || notify-send failed"), "`||`"),
        (format!("{ours} | tee -a log"), "`|`"),
        (format!("{ours} && echo $(date)"), "cannot take apart"),
    ] {
        let original = stop_handler(&command);
        let (report, after) = run("uninstall-hooks", &original);
        assert_eq!(after, original);
        let line = report
            .lines()
            .find(|l| l.contains("kept"))
            .unwrap_or_else(|| panic!("no line says it was kept: {report}"));
        assert!(line.contains("Stop"), "{line}");
        assert!(line.contains(&format!("{command:?}")), "{line}");
        assert!(line.contains(why), "{line}");
        assert!(!report.contains("no claude-mem hooks"), "{report}");
    }
}

/// install-hooks counts a chained entry as present (no second handler), and repoints only the
/// program path inside it: the user's part stays as it was, wherever ours is in the line.
#[test]
fn install_repoints_our_part_of_a_chained_command_and_keeps_the_rest() {
    for (command, expected) in [
        (
            r#"/opt/old/claude-mem hook summary && notify-send done"#,
            format!(
                "{} && notify-send done",
                command_for(&this_binary(), "summary")
            ),
        ),
        (
            r#"notify-send a; "/opt/old/claude-mem" hook summary"#,
            format!("notify-send a; {}", command_for(&this_binary(), "summary")),
        ),
    ] {
        let (report, after) = run("install-hooks", &stop_handler(command));
        assert_eq!(
            stop_commands(&parse(after.as_bytes())),
            [expected],
            "{command}"
        );
        let line = report
            .lines()
            .find(|l| l.contains("Stop"))
            .map(str::to_string)
            .unwrap_or_default();
        assert!(line.contains("updated"), "{command}: {line}");
    }
}

/// An exec-form handler of ours (`command` is the program, `args` its arguments) used to go
/// unrecognised: install added a second handler, and uninstall left it.
#[test]
fn an_exec_form_handler_of_ours_is_ours() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.root.join("settings.json");
    let exec = json!({"type": "command", "command": "/opt/old/claude-mem", "args": ["hook", "summary"], "timeout": 10});
    fs::write(
        &path,
        json!({"hooks": {"Stop": [{"hooks": [exec]}]}, "model": "opus"}).to_string(),
    )
    .expect("write");
    let output = sandbox
        .cmd(&["install-hooks", "--settings", path_arg(&path)])
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    let settings = parse(&fs::read(&path).expect("read"));
    let stops = settings["hooks"]["Stop"].as_array().expect("Stop");
    assert_eq!(stops.len(), 1, "a second handler: {settings:#}");
    assert_eq!(
        in_order(&stops[0]["hooks"][0]),
        in_order(
            &json!({"type": "command", "command": this_binary(), "args": ["hook", "summary"], "timeout": 10})
        )
    );

    sandbox
        .cmd(&["uninstall-hooks", "--settings", path_arg(&path)])
        .assert()
        .success();
    assert_eq!(
        in_order(&parse(&fs::read(&path).expect("read"))),
        in_order(&json!({"model": "opus"}))
    );
}
