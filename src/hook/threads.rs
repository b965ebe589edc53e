//! The open threads of the session-start context: earlier work on what the newest session left
//! open. An error that no later run fixed is where the next session is likely to start; when an
//! older session met the same error (its command failing the same way, a prompt about it, the
//! fix), that is the memory worth having at hand. Each such error is asked of the index as
//! per-prompt recall asks a prompt (`store::fts::recall`: the same relevance bar, never
//! waiting, nothing when the index is not ready), and only older sessions than those the
//! context lists answer.

use std::collections::HashSet;

use crate::config::Config;
use crate::log::Log;
use crate::store::fts::Item;
use crate::store::fts::recall::{Ask, Recalled, recall};
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
    let mut found: Vec<Recalled> = Vec::new();
    let unresolved = newest.failures.iter().filter(|f| f.later != Some(true));
    for failure in unresolved.take(THREADS) {
        let asked = format!("{} {}", failure.call, failure.error);
        let ask = Ask {
            prompt: &asked,
            project,
            session: current,
            keep: &keep,
            limit: PER_THREAD,
        };
        match recall(config, store.conn(), &ask) {
            Ok(items) => {
                for item in items {
                    if !found.iter().any(|f| f.item.id == item.item.id) {
                        found.push(item);
                    }
                }
            }
            Err(err) => {
                Log::new(config, "context").line("WARN", &format!("open threads: {err:#}"));
                break;
            }
        }
    }
    found
}
