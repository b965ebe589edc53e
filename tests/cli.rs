//! The command line outside the hook path: help and version work, and bad input to a command
//! is one clear line on stderr with a non-zero exit.

mod common;

use common::Env;

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
