//! Syncs at once and syncs cut short: machines pushing together, two syncs on one machine, a
//! push that loses the race, and a sync killed at every moment, which the next one finishes;
//! nothing lost or sent twice.

use std::process::Stdio;

use super::*;

#[test]
fn machines_pushing_at_once_lose_nothing() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let others: Vec<Env> = (0..3).map(|_| machine()).collect();
    for (n, env) in others.iter().enumerate() {
        join(env, &remote, &token);
        for s in 0..3 {
            session(
                env,
                &format!("{n:08}-{s:04}-4000-8000-000000000000"),
                PROJECT,
                &[&format!("race{n}x{s}")],
            );
        }
    }
    let children: Vec<_> = others
        .iter()
        .map(|env| {
            env.command()
                .arg("sync")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        ok(&child.wait_with_output().unwrap());
    }
    for env in others.iter().chain([&a]) {
        sync(env);
    }
    let all = records(&a);
    assert_eq!(all["sessions"].len(), 2 + 9);
    for env in &others {
        assert_eq!(records(env), all);
    }
}

#[test]
fn two_syncs_at_once_on_one_machine_send_each_record_once() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    for s in 0..4 {
        session(
            &a,
            &format!("aaaaaaaa-{s:04}-4000-8000-000000000000"),
            PROJECT,
            &[&format!("twice{s}")],
        );
    }
    let children: Vec<_> = (0..2)
        .map(|_| {
            a.command()
                .arg("sync")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let said: Vec<String> = children
        .into_iter()
        .map(|c| ok(&c.wait_with_output().unwrap()))
        .collect();
    assert_eq!(
        said.iter()
            .filter(|s| s.contains("Sent 4 sessions"))
            .count(),
        1,
        "one sends, the other waits and finds nothing new: {said:?}"
    );
    let chunks = remote
        .files()
        .iter()
        .filter(|f| f.ends_with(".cmc"))
        .count();
    assert_eq!(chunks, 1);
    let b = machine();
    join(&b, &remote, &token);
    let got = sync(&b);
    assert!(
        got.contains("received 4 sessions, 4 prompts, 4 tool calls"),
        "{got}"
    );
}

/// Whether a `git` runs that process `pid` started.
#[cfg(target_os = "linux")]
fn runs_git(pid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let Some((head, tail)) = stat.rsplit_once(") ") else {
            return false;
        };
        head.ends_with("(git") && tail.split(' ').nth(1) == Some(pid.to_string().as_str())
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_sync_killed_at_any_moment_is_finished_by_the_next_one() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    let b = machine();
    join(&b, &remote, &token);
    let repo = a.data_dir.join("sync/repo.git");
    let tip = || remote.git(&["rev-parse", "refs/heads/claude-mem"]);
    let mut total = 0;
    for round in 0..8usize {
        for s in 0..3 {
            let id = format!("{round:08}-{s:04}-4000-8000-00000000000a");
            session(&a, &id, PROJECT, &[&format!("killed{round}x{s}")]);
            total += 1;
        }
        // Killed at a moment that comes later each round: at once, while git fetches, once
        // a chunk is sealed into the repository, once the push landed (before it is recorded
        // here), and not at all.
        let (was, held) = (tip(), objects(&repo));
        let mut child = a
            .command()
            .arg("sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let reached: Box<dyn Fn() -> bool> = match round % 5 {
            0 => Box::new(|| true),
            1 => Box::new(move || runs_git(pid)),
            2 => Box::new(|| objects(&repo) > held),
            3 => Box::new(|| tip() != was),
            _ => Box::new(|| false),
        };
        wait_until(
            std::time::Duration::from_secs(60),
            "the sync reaches its moment",
            || reached() || matches!(child.try_wait(), Ok(Some(_))),
        );
        let _ = child.kill();
        let _ = child.wait();
        // The other machine takes in what landed, killed now and then while git runs.
        let mut other = b
            .command()
            .arg("sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if round % 2 == 1 {
            let pid = other.id();
            wait_until(
                std::time::Duration::from_secs(60),
                "the other sync runs git",
                || runs_git(pid) || matches!(other.try_wait(), Ok(Some(_))),
            );
            let _ = other.kill();
        }
        let _ = other.wait();
    }
    sync(&a);
    sync(&b);
    let got = records(&b);
    assert_eq!(got["sessions"].len(), total);
    assert_eq!(got, records(&a));
    assert_no_duplicate(&b);
    // Each record once on the remote: a chunk pushed but not recorded was written again
    // under its own number, not sent a second time in another.
    let text = remote.tip_text(&token);
    for round in 0..8 {
        for s in 0..3 {
            let word = format!("killed{round}x{s}prompt");
            assert_eq!(text.matches(&word).count(), 1, "{word}");
        }
    }
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), got);
}

#[cfg(unix)]
#[test]
fn a_push_that_loses_the_race_fetches_takes_in_and_pushes_again() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    // The remote holds the next push in its pre-receive hook until told to go on.
    let hooks = remote.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    write_program(
        &hooks.join("pre-receive"),
        "#!/bin/sh\ncat > /dev/null\nd=$(dirname \"$0\")\nif [ -f \"$d/hold\" ]; then\n  rm \"$d/hold\"; touch \"$d/held\"\n  while [ ! -f \"$d/go\" ]; do sleep 0.01; done\nfi\n",
    );
    std::fs::write(hooks.join("hold"), "").unwrap();
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000a9",
        PROJECT,
        &["slowpoke"],
    );
    session(
        &b,
        "bbbbbbbb-0000-4000-8000-0000000000a9",
        PROJECT,
        &["quickly"],
    );
    let slow = a
        .command()
        .arg("sync")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        std::time::Duration::from_secs(60),
        "the first push held by the remote",
        || hooks.join("held").exists(),
    );
    // Meanwhile the other machine pushes; then the held push goes on, and loses.
    let said = sync(&b);
    assert!(said.starts_with("Sent 1 session"), "{said}");
    std::fs::write(hooks.join("go"), "").unwrap();
    let said = ok(&slow.wait_with_output().unwrap());
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("Sent 1 session") && said.contains("received 1 session"),
        "it fetched again, took in the other's and pushed on top: {said}"
    );
    sync(&b);
    assert_eq!(records(&a), records(&b));
    assert_eq!(records(&a)["sessions"].len(), 4);
    let c = machine();
    join(&c, &remote, &token);
    sync(&c);
    assert_eq!(records(&c), records(&a));
}
