//! The compressor's processes: killed mid-call or with kill -9, at the model call's deadline,
//! with a model that leaves children behind, and two compressors at once; nothing lost or
//! stored twice, and no process of the model left running.

use std::process::{Child, Stdio};
use std::thread;
#[cfg(target_os = "linux")]
use std::time::Instant;

use super::*;

/// Waits for `path` to exist, at most `limit`.
fn wait_for(path: &Path, limit: Duration) {
    harness::wait_until(limit, path.display(), || path.exists());
}

fn spawn_compress(env: &Env, args: &[&str]) -> Child {
    env.command()
        .arg("compress")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A compressor killed during the model call leaves its items claimed; when the lease ends
/// they are claimed again and stored once.
#[test]
fn a_compressor_killed_mid_call_loses_nothing_and_stores_once() {
    let (env, model) = with_model();
    working_session(&env, "s1");
    fs::write(model.join("hold"), "").unwrap();
    let mut first = spawn_compress(&env, &[]);
    wait_for(&model.join("calls"), Duration::from_secs(10));
    let call = loop {
        if let Some(call) = calls(&model).pop() {
            break call;
        }
        thread::sleep(Duration::from_millis(10));
    };
    wait_for(&call.join("cwd"), Duration::from_secs(10));
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(queue_states(&env), [json!(["claimed", 0, 0])]);
    // Another compressor finds nothing to take while the lease runs.
    fs::remove_file(model.join("hold")).unwrap();
    let out = ok(&compress(&env, &[]));
    assert!(out.starts_with("Nothing to compress"), "{out}");
    // The ledger counted the killed call at its estimate.
    assert_eq!(
        rows(&env, "SELECT outcome, estimated FROM compress_calls"),
        [json!(["pending", 1])]
    );
    // The lease ends (written, not waited for): the items are claimed again.
    assert_eq!(env.end_leases("TRUE"), 6);
    let out = ok(&compress(&env, &[]));
    assert!(out.contains("Compressed 6 items"), "{out}");
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 1);
    assert_eq!(env.count("SELECT COUNT(*) FROM summaries"), 1);
}

/// The forms a model command takes: each of its processes appends its pid to `pids`, then
/// lives on (a sleep of its own length, to tell them apart in `ps`). Each form: what it is,
/// the command, how many processes it makes.
#[cfg(target_os = "linux")]
fn lingering_models(model: &Path) -> Vec<(&'static str, String, usize)> {
    let pids = model.join("pids");
    let p = pids.display();
    let script = |name: &str, body: &str| {
        let path = model.join(name);
        harness::write_program(&path, format!("#!/bin/sh\n{body}"));
        path.to_str().unwrap().to_string()
    };
    vec![
        (
            "a plain command",
            script(
                "plain.sh",
                &format!("echo $$ >> '{p}'\ncat >/dev/null\nsleep 301 &\necho $! >> '{p}'\nwait\n"),
            ),
            2,
        ),
        (
            "a pipeline",
            format!(
                "sh -c 'echo $$ >> \"{p}\"; cat >/dev/null; exec sleep 302' | \
                 sh -c 'echo $$ >> \"{p}\"; exec cat'"
            ),
            2,
        ),
        (
            "a script whose children start sessions of their own",
            script(
                "detaching.sh",
                &format!(
                    "echo $$ >> '{p}'\ncat >/dev/null\nsleep 303 &\necho $! >> '{p}'\n\
                     setsid sh -c 'echo $$ >> \"{p}\"; exec sleep 304' &\n\
                     setsid sh -c 'echo $$ >> \"{p}\"; exec sleep 305' </dev/null >/dev/null 2>&1 &\n\
                     wait\n"
                ),
            ),
            4,
        ),
    ]
}

/// Waits until `n` pids are in the model's `pids` file.
#[cfg(target_os = "linux")]
fn pids_of(model: &Path, n: usize) -> Vec<i32> {
    let started = Instant::now();
    loop {
        let pids: Vec<i32> = fs::read_to_string(model.join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the model started {pids:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` runs (a zombie has ended).
#[cfg(target_os = "linux")]
fn running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Kills what is left of these when the test ends, passed or not.
#[cfg(target_os = "linux")]
struct Survivors(Vec<i32>);

#[cfg(target_os = "linux")]
impl Drop for Survivors {
    fn drop(&mut self) {
        for pid in &self.0 {
            if running(*pid) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Waits up to 5 s for every one of `pids` to end; those still running.
#[cfg(target_os = "linux")]
fn still_running(pids: &[i32]) -> Vec<i32> {
    let started = Instant::now();
    while pids.iter().any(|p| running(*p)) && started.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(20));
    }
    pids.iter().copied().filter(|p| running(*p)).collect()
}

#[cfg(target_os = "linux")]
fn assert_all_end(pids: &[i32], form: &str) {
    let left = still_running(pids);
    assert!(
        left.is_empty(),
        "{form}: still running: {left:?} of {pids:?}"
    );
}

/// Issue 16: a compressor killed with kill -9 left its model program running when
/// `CLAUDE_MEM_COMPRESS_CMD` was set (only the direct child died with it): every process
/// the command started now ends with the compressor, whatever form the command takes.
#[cfg(target_os = "linux")]
#[test]
fn a_compressor_killed_with_kill_9_leaves_no_process_of_its_model_running() {
    let (_scripts_live_here, model) = with_model();
    let mut survived = Vec::new();
    for (form, command, n) in lingering_models(&model) {
        let _ = fs::remove_file(model.join("pids"));
        let env = Env::new().with("CLAUDE_MEM_COMPRESS_CMD", &command);
        working_session(&env, "s1");
        let mut compressor = spawn_compress(&env, &[]);
        let pids = pids_of(&model, n);
        let _survivors = Survivors(pids.clone());
        compressor.kill().unwrap();
        compressor.wait().unwrap();
        let left = still_running(&pids);
        if !left.is_empty() {
            survived.push(format!("{form}: {left:?} of {pids:?}"));
        }
    }
    assert!(survived.is_empty(), "still running: {survived:#?}");
}

/// Issue 16: at the deadline the model's process group was killed, but a child that started
/// a session of its own lived on, and the compressor waited for the output it still held.
/// Now every process of the command ends at the deadline, and the batch fails as a timeout.
#[cfg(target_os = "linux")]
#[test]
fn at_the_deadline_no_process_of_the_model_survives_and_the_batch_fails() {
    let (_scripts_live_here, model) = with_model();
    for (form, command, n) in lingering_models(&model) {
        let _ = fs::remove_file(model.join("pids"));
        let env = Env::new()
            .with("CLAUDE_MEM_COMPRESS_CMD", &command)
            .with("CLAUDE_MEM_COMPRESS_TIMEOUT", "2");
        working_session(&env, "s1");
        let started = Instant::now();
        let mut compressor = spawn_compress(&env, &[]);
        let pids = pids_of(&model, n);
        let _survivors = Survivors(pids.clone());
        let status = harness::claude_cli::wait_or_kill(&mut compressor, Duration::from_secs(30))
            .unwrap()
            .unwrap_or_else(|| panic!("{form}: the compressor still ran after 30 s"));
        assert!(status.success(), "{form}: {status}");
        assert!(started.elapsed() < Duration::from_secs(15), "{form}");
        assert_all_end(&pids, form);
        let error: String = env
            .db()
            .query_row("SELECT DISTINCT last_error FROM pending_queue", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(error, "the model gave no answer within 2 s", "{form}");
    }
}

/// A model that answers and leaves children behind (one in a session of its own, holding its
/// output): the answer is stored at once, not when they end, and they end with the call.
#[cfg(target_os = "linux")]
#[test]
fn a_model_that_answers_and_leaves_children_behind_is_stored_and_they_end() {
    let (env, model) = with_model();
    let p = model.join("pids");
    let p = p.display();
    let script = model.join("answers.sh");
    // The script notes both pids before it answers: a child noting its own could be killed
    // with the call before it ran, on a loaded machine, and the test would wait for it.
    harness::write_program(
        &script,
        format!(
            "#!/bin/sh\nsleep 306 &\necho $! >> '{p}'\n\
             setsid sh -c 'exec sleep 307' &\necho $! >> '{p}'\n\
             exec {}\n",
            model.join("model.sh").display()
        ),
    );
    let env = env.with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap());
    working_session(&env, "s1");
    let started = Instant::now();
    let mut compressor = spawn_compress(&env, &[]);
    let pids = pids_of(&model, 2);
    let _survivors = Survivors(pids.clone());
    let status = harness::claude_cli::wait_or_kill(&mut compressor, Duration::from_secs(30))
        .unwrap()
        .expect("the compressor still ran after 30 s");
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_all_end(&pids, "left behind");
}

/// Two compressors at once, over several sessions: every item is compressed by exactly one
/// of them, once.
#[test]
fn two_compressors_at_once_never_compress_the_same_item() {
    let (env, model) = with_model();
    for session in ["a", "b", "c", "d"] {
        working_session(&env, session);
    }
    // Each holds its first batch in the model until the other has one there too.
    fs::write(model.join("hold"), "").unwrap();
    let runs = [spawn_compress(&env, &[]), spawn_compress(&env, &[])];
    harness::wait_until(Duration::from_secs(60), "two model calls at once", || {
        calls(&model).len() == 2
    });
    fs::remove_file(model.join("hold")).unwrap();
    let outputs: Vec<String> = runs
        .into_iter()
        .map(|run| ok(&run.wait_with_output().unwrap()))
        .collect();
    let done: Vec<usize> = outputs
        .iter()
        .map(|out| {
            out.split("Compressed ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .map_or(0, |n| n.parse().unwrap())
        })
        .collect();
    assert_eq!(done.iter().sum::<usize>(), 24, "{outputs:?}");
    assert_eq!(queue_states(&env), [json!(["done", 0, 0])]);
    assert_eq!(env.count("SELECT COUNT(*) FROM memories"), 4);
    // Each item is in exactly one memory.
    assert_eq!(
        env.count(
            "SELECT COUNT(*) FROM (SELECT j.value FROM memories m, json_each(m.queue_ids) j
                                    GROUP BY j.value HAVING COUNT(*) > 1)"
        ),
        0
    );
    assert_eq!(
        env.count("SELECT COUNT(DISTINCT j.value) FROM memories m, json_each(m.queue_ids) j"),
        24
    );
    assert_eq!(calls(&model).len(), 4);
}
