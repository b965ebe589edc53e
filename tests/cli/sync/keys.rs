//! The key: a wrong one, one of another remote, a mistyped one, or none where the remote holds
//! data, each refused in one line with nothing imported and the remote unchanged; the right
//! one read from stdin.

use super::*;

/// A key that names the remote of `token` but is not its key, with a checksum of its own, so
/// that only the remote's header can tell.
fn forged(token: &str) -> String {
    let mut bytes = token_bytes(token);
    bytes.truncate(40);
    bytes[0] ^= 0xff;
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    token_of(&bytes)
}

#[test]
fn a_wrong_key_or_a_key_of_another_remote_imports_nothing_and_leaves_the_remote_unchanged() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (_a, token) = first_machine(&remote);
    let other = Remote::new();
    let c = machine();
    let other_token = start(&c, &other);
    let before = remote.snapshot();
    let b = machine();
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-000000000001",
        PROJECT,
        &["local"],
    );
    let mine = records(&b);
    let forged = forged(&token);
    let mut typo = token.clone().into_bytes();
    typo[10] = if typo[10] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap();
    for (key, says) in [
        (other_token.as_str(), "made for another remote"),
        (forged.as_str(), "does not open"),
        (typo.as_str(), "mistyped"),
        ("hunter2", "not a claude-mem sync key"),
    ] {
        let err = failed(&run(&b, &["sync", "setup", &remote.url(), "--key", key]), 1);
        assert!(err.contains(says), "{key}: {err}");
        assert_eq!(records(&b), mine, "nothing imported");
        assert!(!b.data_dir.join("sync/remote.json").exists());
        assert!(!b.data_dir.join("sync/key").exists(), "no key kept");
        assert_eq!(remote.snapshot(), before, "the remote unchanged");
        let not_set = failed(&run(&b, &["sync"]), 1);
        assert!(not_set.contains("not set up"), "{not_set}");
    }
    // The first machine of a remote with data needs its key; a key of a remote given to an
    // empty one is not its key.
    let err = failed(&run(&b, &["sync", "setup", &remote.url()]), 1);
    assert!(err.contains("already holds claude-mem sync data"), "{err}");
    let empty = Remote::new();
    let err = failed(
        &run(&b, &["sync", "setup", &empty.url(), "--key", &token]),
        1,
    );
    assert!(err.contains("holds no claude-mem sync data"), "{err}");
    assert_eq!(empty.git(&["for-each-ref"]), "");
    assert_eq!(remote.snapshot(), before);
    // The right key, read from stdin.
    ok(&run_with_input(
        b.command()
            .args(["sync", "setup", &remote.url(), "--key", "-"]),
        format!("{token}\n").as_bytes(),
    ));
    let said = sync(&b);
    assert!(said.contains("received 2 sessions"), "{said}");
}
