//! The open threads of the session-start context: earlier work on what the newest session left
//! open. An error that no later run fixed is where the next session is likely to start; when an
//! older session met the same error (its command failing the same way, a prompt about it, the
//! fix), that is the memory worth having at hand. Each such error is asked of the index as
//! per-prompt recall asks a prompt (`store::fts::recall`: the same relevance bar, never
//! waiting, nothing when the index is not ready; the index opened once for all of them), and
//! only older sessions than those the context lists answer.

use std::collections::HashSet;

use crate::config::Config;
use crate::log::Log;
use crate::store::fts::Item;
use crate::store::fts::recall::{Ask, Recalled, recall_each};
use crate::store::{RecentSession, Store};

/// Errors of the newest session asked about at most: the newest first.
const THREADS: usize = 2;
/// Items recalled per error at most.
const PER_THREAD: usize = 2;

/// The items of older sessions of `project` that match the errors the newest of `recent` left
/// unresolved, best first per error; none when it left none, or nothing clears the bar.
pub fn open(
    store: &Store,
    config: &Config,
    project: &str,
    current: &str,
    recent: &[RecentSession],
) -> Vec<Recalled> {
    let Some(newest) = recent.first() else {
        return Vec::new();
    };
    let listed: HashSet<&str> = recent.iter().map(|s| s.session_id.as_str()).collect();
    let keep = |item: &Item| !listed.contains(item.session_id.as_str());
    let unresolved = newest.failures.iter().filter(|f| f.later != Some(true));
    let asked: Vec<String> = unresolved
        .take(THREADS)
        .map(|failure| format!("{} {}", failure.call, failure.error))
        .collect();
    let asks: Vec<Ask> = asked
        .iter()
        .map(|prompt| Ask {
            prompt,
            project,
            session: current,
            keep: &keep,
            limit: PER_THREAD,
            team: None,
        })
        .collect();
    let answers = recall_each(config, store.conn(), &asks).unwrap_or_else(|err| {
        Log::new(config, "context").line("WARN", &format!("open threads: {err:#}"));
        Vec::new()
    });
    let mut found: Vec<Recalled> = Vec::new();
    for item in answers.into_iter().flatten() {
        if !found.iter().any(|f| f.item.id == item.item.id) {
            found.push(item);
        }
    }
    found
}
