//! Machines that capture, forget and sync in any order end with the same records, each once:
//! a seeded run of three machines, a session that goes on after its tool calls were received
//! (never compressed again nor sent back), and what retention deletes.

use serde_json::json;

use super::*;

/// A tiny PRNG (xorshift64*), so that the simulation is the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// What the simulation recorded of a session: its id, its turns' words, and whether the
/// compressor made a memory and a summary of it.
struct Recorded {
    id: String,
    words: Vec<String>,
    compressed: bool,
}

impl Recorded {
    /// The words of its memory and summary.
    fn made(&self) -> Vec<String> {
        if !self.compressed {
            return Vec::new();
        }
        let w = &self.words[0];
        ["title", "narrative", "fact", "request", "learned"]
            .iter()
            .map(|part| format!("{w}{part}"))
            .collect()
    }
}

/// The id of the first row `sql` finds holding `needle`, if this machine has one.
fn find(env: &Env, sql: &str, needle: &str) -> Option<String> {
    env.db()
        .query_row(sql, [format!("%{needle}%")], |r| r.get(0))
        .ok()
}

/// A seeded run of sessions, forgets and syncs, each on a machine picked at random: what it
/// recorded, the words it forgot, and how many steps of each kind it took.
struct Simulation {
    rng: Rng,
    recorded: Vec<Recorded>,
    forgotten: BTreeSet<String>,
    captures: usize,
    forgets: usize,
    syncs: usize,
}

impl Simulation {
    /// Forty steps on `machines`.
    fn of(machines: &[Env]) -> Simulation {
        let mut run = Simulation {
            rng: Rng(0x5eed_cafe_f00d_0019),
            recorded: Vec::new(),
            forgotten: BTreeSet::new(),
            captures: 0,
            forgets: 0,
            syncs: 0,
        };
        for step in 0..40 {
            let at = run.rng.below(3);
            let env = &machines[at];
            match run.rng.below(10) {
                0..4 => run.session(env, step, at),
                4..6 if !run.recorded.is_empty() => run.forget(env),
                _ => run.sync(env),
            }
        }
        run
    }

    /// A session: one or two turns, the one-turn ones compressed two times out of three.
    fn session(&mut self, env: &Env, step: usize, at: usize) {
        let word = format!("w{step:02}m{at}");
        let turns = 1 + self.rng.below(2);
        let words: Vec<String> = (0..turns).map(|n| format!("{word}t{n}")).collect();
        let id = format!("{step:08}-0000-4000-8000-00000000000{at}");
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        session(env, &id, PROJECT, &refs);
        let compressed = turns == 1 && self.rng.below(3) > 0;
        if compressed {
            compress(env, &id, &[memory(&words[0], &[1])], summary(&words[0]));
        }
        self.recorded.push(Recorded {
            id,
            words,
            compressed,
        });
        self.captures += 1;
    }

    /// Forgets a session, a turn or a tool call of a recorded session, with every word that
    /// goes with it; a sync instead when this machine does not have it.
    fn forget(&mut self, env: &Env) {
        let r = &self.recorded[self.rng.below(self.recorded.len())];
        let n = self.rng.below(r.words.len());
        let [prompt, command, output, message] = turn(&r.words[n]);
        let (target, gone): (Option<String>, Vec<String>) = match self.rng.below(3) {
            0 => (
                find(
                    env,
                    "SELECT session_id FROM sessions WHERE session_id LIKE ?1",
                    &r.id,
                ),
                r.words
                    .iter()
                    .flat_map(|w| turn(w))
                    .chain(r.made())
                    .collect(),
            ),
            1 => (
                find(
                    env,
                    "SELECT id FROM user_prompts WHERE prompt_text LIKE ?1",
                    &prompt,
                ),
                vec![prompt, command, output, message]
                    .into_iter()
                    .chain(if n == 0 { r.made() } else { Vec::new() })
                    .collect(),
            ),
            _ => (
                find(
                    env,
                    "SELECT id FROM pending_queue WHERE tool_name = 'Bash'
                       AND raw_output LIKE ?1",
                    &command,
                ),
                vec![command, output]
                    .into_iter()
                    .chain(if n == 0 { r.made() } else { Vec::new() })
                    .collect(),
            ),
        };
        let Some(target) = target else {
            self.sync(env);
            return;
        };
        ok(&run(env, &["forget", &target, "--yes"]));
        self.forgotten.extend(gone);
        self.forgets += 1;
    }

    fn sync(&mut self, env: &Env) {
        sync(env);
        self.syncs += 1;
    }
}

#[cfg(unix)]
#[test]
fn three_machines_converge_through_random_captures_forgets_and_syncs() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let machines = [machine(), machine(), machine()];
    let token = start(&machines[0], &remote);
    for m in &machines[1..] {
        join(m, &remote, &token);
    }
    let run = Simulation::of(&machines);
    let (captures, forgets, syncs) = (run.captures, run.forgets, run.syncs);
    assert!(
        captures >= 8 && forgets >= 4 && syncs >= 8,
        "a run that exercises each: {captures} captures, {forgets} forgets, {syncs} syncs"
    );
    // Two rounds: every push in, then every machine takes in all and writes its chunks again.
    for _ in 0..2 {
        for env in &machines {
            sync(env);
        }
    }
    assert_every_machine_holds_the_same_records(&machines, &run);
    let reachable = remote.reachable_text(&token);
    assert_the_forgotten_is_nowhere(&machines, &run.forgotten, &reachable);
    // What stays is there (the reader above reads what it should).
    let kept: Vec<&Recorded> = run
        .recorded
        .iter()
        .filter(|r| !run.forgotten.contains(&format!("{}prompt", r.words[0])))
        .collect();
    assert!(!kept.is_empty());
    for r in kept {
        assert!(
            reachable.contains(&format!("{}prompt", r.words[0])),
            "{}",
            r.words[0]
        );
    }
    assert_the_remote_holds_ciphertext_only(&remote, &run.recorded);
}

/// Every machine holds the same records, each once, and a tool call waits for the compressor
/// of the machine that captured it, no other.
fn assert_every_machine_holds_the_same_records(machines: &[Env], run: &Simulation) {
    let first = records(&machines[0]);
    let made = run.recorded.iter().filter(|r| r.compressed).count();
    assert!(
        first["sessions"].len() >= 4 && first["memories"].len() + first["summaries"].len() > 0,
        "{made} compressed, {} forgotten: {first:?}",
        run.forgotten.len()
    );
    let mut waiting = BTreeSet::new();
    for env in machines {
        assert_eq!(records(env), first, "every machine holds the same records");
        assert_no_duplicate(env);
        for id in ids(env, "SELECT id FROM pending_queue WHERE status = 'raw'") {
            assert!(waiting.insert(id.clone()), "{id} waits on two machines");
        }
    }
    assert!(!waiting.is_empty());
}

/// Forgotten: in no file of any machine (once the rebuilds that syncs started are done), and
/// in no chunk the remote's branch reaches (`reachable`).
fn assert_the_forgotten_is_nowhere(
    machines: &[Env],
    forgotten: &BTreeSet<String>,
    reachable: &str,
) {
    for env in machines {
        env.wait_for_maintenance();
        let disk = everything_on_disk(env);
        for word in forgotten {
            assert!(
                !contains(&disk, word),
                "{word} is still in {:?}",
                files_holding(&env.data_dir, word)
            );
        }
    }
    for word in forgotten {
        assert!(
            !reachable.contains(word.as_str()),
            "{word} is still on the remote's branch"
        );
    }
}

/// The remote holds ciphertext only (no word of `recorded`, no project path, in any object),
/// on its one branch, every commit claude-mem's own.
fn assert_the_remote_holds_ciphertext_only(remote: &Remote, recorded: &[Recorded]) {
    let objects = remote.all_objects();
    for r in recorded {
        for word in r.words.iter().flat_map(|w| turn(w)).chain(r.made()) {
            assert!(
                !contains(&objects, &word),
                "{word} in plain text on the remote"
            );
        }
    }
    for leak in [PROJECT, "shop", "/home/dev", "prompt_text", "session_id"] {
        assert!(!contains(&objects, leak), "{leak} on the remote");
    }
    let log = remote.git(&[
        "log",
        "--format=%an <%ae> %cn <%ce> %ad %s",
        "refs/heads/claude-mem",
    ]);
    for line in log.lines() {
        assert!(
            line.starts_with("claude-mem <claude-mem@localhost> claude-mem <claude-mem@localhost>")
                && line.ends_with("+0000 claude-mem sync"),
            "{line}"
        );
    }
    assert_eq!(
        remote.git(&["for-each-ref", "--format=%(refname)"]).trim(),
        "refs/heads/claude-mem"
    );
}

#[test]
fn received_tool_calls_are_not_compressed_again_nor_sent_back_and_a_session_that_goes_on_follows() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let token = start(&a, &remote);
    let id = "aaaaaaaa-0000-4000-8000-00000000000f";
    session(&a, id, PROJECT, &["ongoing"]);
    sync(&a);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(
        b.count("SELECT count(*) FROM pending_queue WHERE status = 'raw'"),
        0
    );
    assert!(a.count("SELECT count(*) FROM pending_queue WHERE status = 'raw'") > 0);
    let back = sync(&b);
    assert!(back.starts_with("Sent nothing"), "{back}");
    let again = sync(&a);
    assert!(again.contains("received nothing"), "{again}");
    // The session goes on and ends on the first machine; the second follows.
    let more = event(
        "UserPromptSubmit",
        id,
        PROJECT,
        json!({"prompt_id": "later", "prompt": "one more thing"}),
    );
    assert_ack(&a.hook("prompt", &more));
    let end = event("SessionEnd", id, PROJECT, json!({"reason": "other"}));
    assert_ack(&a.hook("cleanup", &end));
    a.wait_for_maintenance();
    let sent = sync(&a);
    assert!(sent.contains("Sent 1 session, 1 prompt"), "{sent}");
    sync(&b);
    let (status, prompts, message): (String, i64, Option<String>) = b
        .db()
        .query_row(
            "SELECT status, prompt_count, last_assistant_message FROM sessions WHERE session_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), prompts), ("closed", 2));
    assert!(message.unwrap_or_default().contains("ongoingmessage"));
}

/// `sync status --json`'s records and deletions waiting to go.
fn waiting(env: &Env) -> (i64, i64) {
    let status: serde_json::Value =
        serde_json::from_str(&ok(&run(env, &["sync", "status", "--json"]))).unwrap();
    (
        status["waiting"]["records"].as_i64().unwrap(),
        status["waiting"]["deletions"].as_i64().unwrap(),
    )
}

#[test]
fn what_retention_deletes_goes_everywhere_and_status_says_what_waits() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let a = machine();
    let old = "aaaaaaaa-0000-4000-8000-0000000000f7";
    session(&a, old, PROJECT, &["ancient"]);
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-0000000000f8",
        PROJECT,
        &["recent"],
    );
    let token = start(&a, &remote);
    let (sending, deletions) = waiting(&a);
    assert!(sending > 10 && deletions == 0, "{sending} {deletions}");
    sync(&a);
    assert_eq!(waiting(&a), (0, 0));
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    assert_eq!(records(&b)["sessions"].len(), 2);
    // A year and more later, retention deletes the old session here.
    age(&a, old, 400);
    ok(&run(&a, &["prune"]));
    let (sending, deletions) = waiting(&a);
    assert!(sending == 0 && deletions > 0, "{sending} {deletions}");
    let said = sync(&a);
    assert!(
        said.contains(&format!("Sent {deletions} deletions")),
        "{said}"
    );
    let said = sync(&b);
    assert!(said.contains("deletions"), "{said}");
    assert_eq!(records(&b), records(&a));
    assert_eq!(records(&b)["sessions"].len(), 1);
    assert!(!remote.reachable_text(&token).contains("ancientprompt"));
}
