//! The team's notes for the prompt cases with a `.claude-mem/` folder: a project folder of the
//! bench's own holding what `share` writes, as a team's clone would, and a hostile one.
//!
//! The team's folder holds [`NOTES`] memories over eight months, each made of the corpus's
//! components and a few sentences (1 to 2 KB, as the compressor writes them), [`ANSWERS`] of
//! them about the login timeout the bench's prompt asks about, so that recall hands team
//! notes. The hostile one holds 1,200 empty month folders, and in the newest month 20,000 files
//! named as notes, the newest 300 of them valid notes of 63 KB holding the prompt's words
//! (what the digest and recall must bound), the rest small. A third, of a team that shared a
//! note a month for a hundred years, holds 1,200 month folders of one note each: the session
//! start lists the newest of them. Each case's digest is made before
//! its runs, once the folders have been still for longer than the digest's racy window, as
//! after a `git pull` a session start has it made.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::Result;

/// Memories in the team's folder, and of them about the prompt.
pub const NOTES: usize = 200;
const ANSWERS: usize = 3;
/// Hostile: month folders, note-named files in the newest, and of them the large valid ones.
const MONTHS: usize = 1_200;
const FILES: usize = 20_000;
const LARGE: usize = 300;
/// What a line of the answer says of a team's note.
pub const SAID: &str = "memory (team)";
/// What a session start's context says above the team's notes.
pub const FROM_THE_TEAM: &str = "From the team";

const COMPONENTS: &[&str] = &[
    "billing service",
    "checkout flow",
    "order API",
    "invoice renderer",
    "cart module",
    "config loader",
    "payment gateway",
    "search indexer",
    "retry queue",
    "email worker",
    "rate limiter",
    "migration runner",
    "webhook handler",
    "report generator",
    "upload service",
    "pricing engine",
];
const SENTENCES: &[&str] = &[
    "The {a} now retries twice with a jittered backoff before it gives up.",
    "Moved the {a} settings into the shared config file so that staging matches production.",
    "The {a} kept a connection per request; it uses the pool now and the p99 fell by half.",
    "Found that the {a} swallowed errors from the database; they are logged and counted now.",
    "Decided to keep the {a} synchronous: the queue added latency without saving anything.",
    "The flaky test of the {a} raced on the clock; it takes the time from a fake now.",
    "Renamed the {a} metrics to the team's scheme and updated the dashboards.",
    "The {a} rounds amounts once per order, at the total, not per line.",
];
const ANSWER: &str = "The login timeout in the auth middleware expired sessions after 30 \
                      seconds; upsert_session returned early on empty orders and the \
                      checkout lost the session store entry. The timeout is configurable now.";

/// The folders the cases run in: the team's project, the hostile one and the one of 1,200
/// months.
pub struct Folders {
    pub team: PathBuf,
    pub hostile: PathBuf,
    pub months: PathBuf,
}

/// Plants both projects under `dir` and waits until they are older than the racy window.
pub fn plant(dir: &Path) -> Result<Folders> {
    let started = Instant::now();
    let team = dir.join("team-shop");
    for n in 0..NOTES {
        let month = format!("2026-{:02}", 1 + n * 8 / NOTES);
        let text = match n % (NOTES / ANSWERS) == NOTES / ANSWERS - 1 {
            true => ANSWER.to_string(),
            false => body(n),
        };
        let title = format!("{} note {n}", COMPONENTS[n % COMPONENTS.len()]);
        note(&team, &month, n, &title, &text)?;
    }
    let hostile = dir.join("hostile-shop");
    for m in 0..MONTHS {
        fs::create_dir_all(hostile.join(".claude-mem").join(format!(
            "{}-{:02}",
            1900 + m / 12,
            1 + m % 12
        )))?;
    }
    let large = format!("{ANSWER} ").repeat(63 * 1024 / (ANSWER.len() + 1));
    for n in 0..FILES {
        let text = if n >= FILES - LARGE { &large } else { ANSWER };
        note(&hostile, "2026-11", n, "a hostile note", text)?;
    }
    let months = dir.join("months-shop");
    for m in 0..MONTHS {
        let month = format!("{}-{:02}", 1926 + m / 12, 1 + m % 12);
        note(&months, &month, m, &format!("monthly note {m}"), &body(m))?;
    }
    // Each a project of its own, as a clone is: the bench's folder is inside this repository,
    // whose top would otherwise be their project.
    for project in [&team, &hostile, &months] {
        fs::write(project.join(".claude-mem-project"), "")?;
    }
    // The digest of a folder changed within its racy window (2 to 3 s, in whole seconds) is
    // made again by the next prompt: wait it out, as the runs are not to make one.
    std::thread::sleep(Duration::from_millis(3_100));
    eprintln!(
        "team folders: {NOTES} notes, and {FILES} files in {} months, in {:.0} s",
        MONTHS + 1,
        started.elapsed().as_secs_f64()
    );
    Ok(Folders {
        team,
        hostile,
        months,
    })
}

/// Makes the digest of `project`'s team notes in `data`, as the process a hook starts does.
pub fn digest(bin: &Path, data: &Path, project: &Path) -> Result<()> {
    let out = Command::new(bin)
        .args(["maintain", "--team"])
        .arg(project)
        .env_clear()
        .env("HOME", data.with_extension("home"))
        .env("CLAUDE_MEM_DATA_DIR", data)
        .output()?;
    if !out.status.success() {
        return Err(format!("maintain --team: {out:?}").into());
    }
    Ok(())
}

/// A memory of 1 to 2 KB about the components, from the sentences.
fn body(n: usize) -> String {
    let mut text = String::new();
    for k in 0..12 + n % 10 {
        let component = COMPONENTS[(n * 7 + k) % COMPONENTS.len()];
        text.push_str(&SENTENCES[(n + k * 3) % SENTENCES.len()].replace("{a}", component));
        text.push(if k % 4 == 3 { '\n' } else { ' ' });
    }
    text
}

/// Writes note `n` into `project`'s folder of `month`, as `share` writes one.
fn note(project: &Path, month: &str, n: usize, title: &str, text: &str) -> Result<()> {
    let id = format!("019{n:05}-7c4b-7d3e-8f12-3ebc8321ae44");
    let folder = project.join(".claude-mem").join(month);
    fs::create_dir_all(&folder)?;
    fs::write(
        folder.join(format!("memory-{id}.md")),
        format!(
            "---\nclaude-mem: memory\nid: {id}\ntype: decision\ntitle: {title}\n\
             when: {month}-20T10:00:00.000Z\nsession: 5f0e9d3c\nfiles: [\"src/auth.rs\"]\n\
             origin: 5d1e0c9b7a6f48e2b3c4d5e6f7a8b9c0\n---\n\n{text}\n\n## Facts\n\n\
             - shared by a teammate\n"
        ),
    )?;
    Ok(())
}
