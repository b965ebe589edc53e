//! Whether a rule reaches the model: for each task of the conventions set, a new session of its
//! project starts (`hook context`, SessionStart from `startup`) and the task is its first prompt
//! (`hook prompt`), as a user would open Claude Code and ask. A rule reaches the model when its
//! words (as the user said them, case and spacing aside) or the short id of the prompt that
//! stated it are in either answer's `additionalContext`. Each task starts from the data dir as
//! the set's sessions left it (a copy put back before each), so no task sees another's session.
//!
//! Also what must not reach: each trap of the set (Claude's own words, a `<private>` part, a
//! secret, a prompt that is not a rule, another project's rule) counts as reached when it is in
//! the context of any task of the project it must stay out of.

use std::collections::HashSet;
use std::time::Duration;

use crate::Result;
use crate::conventions::{Session, Standing, plain};
use crate::product::{Product, Stored, context, named};
use crate::score::Answer;
use crate::set::{Set, session_id};

/// What one task's session was given: both contexts, lowered and with their spacing made
/// one, the short ids they name, and the time of both hooks.
pub struct Given {
    text: String,
    ids: HashSet<String>,
    took: Duration,
}

/// One task as scored: its slice, whether every and whether any of its rules reached the
/// model, for each rule it lists that replaced another whether only the replaced one reached,
/// and the time it took.
pub struct Outcome {
    pub slice: String,
    pub rules: usize,
    pub every: bool,
    pub any: bool,
    pub stale_only: Vec<bool>,
    pub took: Duration,
}

/// Each task through a new session of its project, from the data dir as it is now; the data
/// dir is left as it was.
pub fn ask_all(product: &Product, set: &Set, standing: &Standing) -> Result<Vec<Given>> {
    let snapshot = product.snapshot()?;
    let mut given = Vec::new();
    for (i, task) in standing.tasks.iter().enumerate() {
        product.restore(&snapshot)?;
        let name = format!("task/{}/{i}", set.name);
        let session = Session::new(&session_id(&name), &task.project);
        let (started, start) = product.hook("context", &session.start())?;
        let prompt = session.prompt(&session_id(&format!("{name}/1")), &set.queries[i].text);
        let (asked, answer) = product.hook("prompt", &prompt)?;
        let both = format!("{}\n{}", context(&start), context(&answer));
        given.push(Given {
            ids: named(&both).map(String::from).collect(),
            text: plain(&both),
            took: started + asked,
        });
    }
    product.restore(&snapshot)?;
    Ok(given)
}

/// The tasks scored by what the product gave them.
pub fn product(set: &Set, standing: &Standing, stored: &Stored, given: &[Given]) -> Vec<Outcome> {
    outcomes(
        set,
        standing,
        |task, rule| {
            reached(
                &given[task],
                &standing.rules[rule].text,
                Some(&standing.rules[rule].turn),
                stored,
            )
        },
        |task| given[task].took,
    )
}

/// The tasks scored as if the reference's first `depth` results were given with the prompt
/// (what a per-prompt recall without a bar, on plain FTS5, would hand the model).
pub fn reference(set: &Set, standing: &Standing, answers: &[Answer], depth: usize) -> Vec<Outcome> {
    outcomes(
        set,
        standing,
        |task, rule| {
            answers[task]
                .keys
                .iter()
                .take(depth)
                .any(|k| *k == standing.rules[rule].turn)
        },
        |task| answers[task].took,
    )
}

fn outcomes(
    set: &Set,
    standing: &Standing,
    reached: impl Fn(usize, usize) -> bool,
    took: impl Fn(usize) -> Duration,
) -> Vec<Outcome> {
    standing
        .tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let got: Vec<bool> = task.rules.iter().map(|&r| reached(i, r)).collect();
            Outcome {
                slice: set.queries[i].slice.clone(),
                rules: got.len(),
                every: got.iter().all(|&g| g),
                any: got.iter().any(|&g| g),
                stale_only: task
                    .superseded
                    .iter()
                    .map(|&(old, current)| reached(i, old) && !reached(i, current))
                    .collect(),
                took: took(i),
            }
        })
        .collect()
}

/// Each trap's kind, and whether it reached a task of the project it must stay out of.
pub fn traps(standing: &Standing, stored: &Stored, given: &[Given]) -> Vec<(String, bool)> {
    standing
        .traps
        .iter()
        .map(|trap| {
            let hit = standing
                .tasks
                .iter()
                .zip(given)
                .filter(|(task, _)| task.project == trap.project)
                .any(|(_, given)| reached(given, &trap.text, trap.turn.as_ref(), stored));
            (trap.kind.clone(), hit)
        })
        .collect()
}

fn reached(given: &Given, text: &str, turn: Option<&String>, stored: &Stored) -> bool {
    given.text.contains(&plain(text))
        || turn
            .and_then(|t| stored.prompts.get(t))
            .is_some_and(|id| given.ids.contains(id))
}
