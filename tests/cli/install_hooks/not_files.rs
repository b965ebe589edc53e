//! What is not a regular file, where a settings file, its backup or our lock file belongs:
//! refused at once, in one line that says what it is, and left as it was. A FIFO used to make
//! the command block forever, and `/dev/null` (as root) was replaced by a regular file.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

use super::{NEW_CLAUDE, Sandbox, path_arg, read_fixture, stderr};
use crate::harness::mkfifo;

/// Runs `command` on `settings`, checks that it fails within seconds (not blocked) with one
/// line, and returns that line.
fn refusal(sandbox: &Sandbox, command: &str, settings: &Path) -> String {
    let output = sandbox
        .cmd(&[command, "--settings", path_arg(settings)])
        .timeout(Duration::from_secs(5))
        .output()
        .expect("run");
    let message = stderr(&output);
    assert!(!output.status.success(), "{command} accepted it");
    assert_eq!(
        message.lines().count(),
        1,
        "{command}: one line: {message:?}"
    );
    message
}

/// Runs each command on `settings` and checks that it fails at once with one line naming
/// `named` and saying `what`.
fn assert_refused_quickly(sandbox: &Sandbox, settings: &Path, named: &Path, what: &str) {
    for command in ["install-hooks", "uninstall-hooks"] {
        let message = refusal(sandbox, command, settings);
        assert!(message.contains(path_arg(named)), "{command}: {message}");
        assert!(message.contains(what), "{command}: {message}");
        assert!(
            message.contains("not a regular file"),
            "{command}: {message}"
        );
    }
}

#[test]
fn a_fifo_socket_or_directory_as_the_settings_file_is_refused_at_once() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let fifo = sandbox.root.join("fifo.json");
    mkfifo(&fifo, 0o666);
    assert_refused_quickly(&sandbox, &fifo, &fifo, "a FIFO");
    assert!(fs::metadata(&fifo).expect("fifo").file_type().is_fifo());

    let socket = sandbox.root.join("socket.json");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("socket");
    assert_refused_quickly(&sandbox, &socket, &socket, "a socket");

    let dir = sandbox.root.join("dir.json");
    fs::create_dir(&dir).expect("dir");
    assert_refused_quickly(&sandbox, &dir, &dir, "a directory");

    // Through a symlink, what counts is what it points at.
    let link = sandbox.root.join("settings.json");
    std::os::unix::fs::symlink(&fifo, &link).expect("symlink");
    assert_refused_quickly(&sandbox, &link, &fifo, "a FIFO");
}

/// A device node (made here, as root only: replacing the real /dev/null is what this stops).
#[cfg(target_os = "linux")]
#[test]
fn a_device_node_as_the_settings_file_is_refused_and_stays_a_device() {
    // Only root can make a device node; without one there is nothing to test here.
    if !crate::harness::require_root("making a device node") {
        return;
    }
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let null = sandbox.root.join("null");
    let made = std::process::Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .output()
        .expect("mknod");
    assert!(
        made.status.success(),
        "mknod failed as root: {}",
        stderr(&made)
    );
    assert_refused_quickly(&sandbox, &null, &null, "a character device");
    let kind = fs::symlink_metadata(&null)
        .expect("still there")
        .file_type();
    assert!(kind.is_char_device(), "replaced: {kind:?}");
}

/// A FIFO where our lock file goes (anyone who can write the directory can make one): the
/// command used to open it to read the owner's pid, and block.
#[test]
fn a_fifo_planted_as_the_lock_file_is_refused_at_once() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("realistic");
    let lock = sandbox.root.join(".settings.json.claude-mem.lock");
    mkfifo(&lock, 0o666);
    for command in ["install-hooks", "uninstall-hooks"] {
        if command == "uninstall-hooks" {
            // Something to remove, so that uninstall gets as far as the lock.
            fs::remove_file(&lock).expect("unplant");
            sandbox
                .cmd(&["install-hooks", "--settings", path_arg(&path)])
                .assert()
                .success();
            mkfifo(&lock, 0o666);
        }
        let before = fs::read(&path).expect("read");
        let message = refusal(&sandbox, command, &path);
        assert!(message.contains(path_arg(&lock)), "{message}");
        assert!(message.contains("a FIFO"), "{message}");
        assert_eq!(fs::read(&path).expect("read"), before, "{command}");
    }
}

/// A FIFO or a directory where the backup goes is no backup: the command used to go on and
/// write the file with no copy of the original kept.
#[test]
fn something_planted_as_the_backup_is_refused() {
    for plant in ["fifo", "dir"] {
        let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
        let path = sandbox.settings_from("realistic");
        let backup = sandbox.root.join("settings.json.claude-mem.bak");
        match plant {
            "fifo" => mkfifo(&backup, 0o666),
            _ => fs::create_dir(&backup).expect("dir"),
        }
        let message = refusal(&sandbox, "install-hooks", &path);
        assert!(message.contains(path_arg(&backup)), "{plant}: {message}");
        assert!(message.contains("not a regular file"), "{message}");
        assert_eq!(
            fs::read(&path).expect("read"),
            read_fixture("realistic", "before.json")
        );
    }
}

/// Replacing a hard-linked file by a rename splits it from its twin, which keeps the old
/// contents: the output says so (and a dry run says it would), instead of nothing.
#[test]
fn a_hard_linked_settings_file_is_split_and_the_output_says_so() {
    let sandbox = Sandbox::new().with_claude(NEW_CLAUDE);
    let path = sandbox.settings_from("realistic");
    let twin = sandbox.root.join("twin.json");
    fs::hard_link(&path, &twin).expect("hard link");
    for (args, says) in [
        (&["install-hooks", "--dry-run"][..], "would be replaced"),
        (&["install-hooks"][..], "was replaced"),
    ] {
        let mut all = args.to_vec();
        all.extend(["--settings", path_arg(&path)]);
        let output = sandbox.cmd(&all).output().expect("run");
        assert!(output.status.success(), "{}", stderr(&output));
        let report = super::stdout(&output);
        let line = report
            .lines()
            .find(|l| l.contains("hard link"))
            .unwrap_or_else(|| panic!("{args:?}: nothing about the hard link: {report}"));
        assert!(line.contains(says), "{line}");
        assert!(line.contains("2 hard links"), "{line}");
        assert!(line.contains(path_arg(&path)), "{line}");
    }
    assert_eq!(
        fs::read(&twin).expect("twin"),
        read_fixture("realistic", "before.json")
    );
}
