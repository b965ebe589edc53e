//! `queue`: the consumer contract on the command line, a thin layer over `store::queue`.
//! Claimed items go out as JSON Lines; answers come back as ids and the lease token. An answer
//! that changed nothing for some item (not held under that lease, unknown id) is one line on
//! stderr and exit 3, after the rest were applied.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;
use rusqlite::Connection;

use crate::cli::{Answer, QueueCommand, QueueKind};
use crate::config::Config;
use crate::detach;
use crate::emit::Declined;
use crate::store::queue::{self, Backoff, Claim, Kind, Outcome, Stats};
use crate::store::{self, Store};

/// A consumer may wait for the write lock longer than a hook (whose budget is 1 s): it holds
/// nobody up. Each of its transactions is short, so hooks never wait long behind it.
const WAIT: Duration = Duration::from_secs(10);

pub fn run(command: QueueCommand) -> Result<String> {
    let config = Config::from_env();
    match command {
        QueueCommand::Claim {
            limit,
            lease,
            kind,
            consumer,
        } => {
            let consumer = consumer.unwrap_or_else(caller);
            let request = Claim {
                consumer: &consumer,
                limit: usize::from(limit),
                lease,
                kind: kind.map(|kind| match kind {
                    QueueKind::Observation => Kind::Observation,
                    QueueKind::Summary => Kind::Summary,
                }),
                session: None,
            };
            claim(&config, &request)
        }
        QueueCommand::Ack(answer) => settle(&config, &answer, Verb::Ack, |conn| {
            queue::ack(conn, &answer.token, &answer.ids, Utc::now())
        }),
        QueueCommand::Release(answer) => settle(&config, &answer, Verb::Release, |conn| {
            queue::release(conn, &answer.token, &answer.ids, Utc::now())
        }),
        QueueCommand::Fail {
            answer,
            error,
            backoff,
            max_attempts,
        } => {
            let backoff = Backoff {
                delays: backoff,
                max_attempts,
            };
            settle(&config, &answer, Verb::Fail, |conn| {
                queue::fail(
                    conn,
                    &config.redactor,
                    &answer.token,
                    &answer.ids,
                    &error,
                    &backoff,
                    Utc::now(),
                )
            })
        }
        QueueCommand::Retry { ids, all } => retry(&config, &ids, all),
        QueueCommand::Stats { json } => stats(&config, json),
    }
}

/// Who claims when no name is given: the process that ran this command, usually the
/// consumer's own loop.
fn caller() -> String {
    #[cfg(unix)]
    let pid = std::os::unix::process::parent_id();
    #[cfg(not(unix))]
    let pid = std::process::id();
    format!("pid {pid}")
}

/// Runs one queue write, then keeps the WAL bounded as a hook would (a consumer draining a
/// backlog while no hook runs would otherwise grow it without end), leaving to the maintenance
/// process what a hook would leave to it. `None` when nothing was ever captured: there is
/// nothing to claim or answer for, and nothing is created.
fn write<T>(config: &Config, work: impl FnOnce(&Connection) -> Result<T>) -> Result<Option<T>> {
    match std::fs::symlink_metadata(config.db_path()) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let mut store = Store::open(config, Instant::now() + WAIT)?;
    let done = work(store.conn())?;
    store.after_write();
    if store.maintenance().is_some() {
        detach::maintain(config);
    }
    Ok(Some(done))
}

fn claim(config: &Config, request: &Claim) -> Result<String> {
    let items = write(config, |conn| queue::claim(conn, request, Utc::now()))
        .context("cannot claim")?
        .unwrap_or_default();
    let mut out = String::new();
    for item in items {
        out.push_str(&serde_json::to_string(&item)?);
        out.push('\n');
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Verb {
    Ack,
    Fail,
    Release,
}

impl Verb {
    fn past(self) -> &'static str {
        match self {
            Verb::Ack => "acked",
            Verb::Fail => "failed",
            Verb::Release => "released",
        }
    }
}

fn settle(
    config: &Config,
    answer: &Answer,
    verb: Verb,
    apply: impl FnOnce(&Connection) -> Result<Vec<(String, Outcome)>>,
) -> Result<String> {
    let answers = write(config, apply)
        .with_context(|| format!("nothing {}", verb.past()))?
        .unwrap_or_else(|| unknown(&answer.ids));
    let mut out = String::new();
    let mut done = 0;
    let mut already = Vec::new();
    let mut refused = Vec::new();
    for (id, outcome) in &answers {
        match outcome {
            Outcome::Done => done += 1,
            Outcome::RetryAt { attempts, at } => {
                done += 1;
                out.push_str(&format!(
                    "{id}: attempt {attempts} failed; claimable again from {at}\n"
                ));
            }
            Outcome::GaveUp { attempts } => {
                done += 1;
                out.push_str(&format!(
                    "{id}: attempt {attempts} failed; failed for good \
                     (`claude-mem queue retry {id}` puts it back)\n"
                ));
            }
            Outcome::Already => already.push(id.as_str()),
            Outcome::NotHeld(now) => {
                refused.push(format!("{id} is not held under this lease (it is {now})"));
            }
            Outcome::NotFailed(_) | Outcome::Unknown => refused.push(format!("no item {id}")),
        }
    }
    let verb = verb.past();
    let mut summary = match (done, already.is_empty()) {
        (_, true) => format!("{verb} {}", items(done)),
        (0, false) => String::new(),
        _ => format!("{verb} {}; ", items(done)),
    };
    if !already.is_empty() {
        summary.push_str(&format!(
            "{} already {verb} under this lease, nothing changed: {}",
            items(already.len()),
            listed(&already)
        ));
    }
    if !refused.is_empty() {
        return Err(Declined(format!(
            "{verb} {done} of {}; not {verb}: {}",
            answers.len(),
            listed(&refused)
        ))
        .into());
    }
    out.push_str(&summary);
    out.push('\n');
    Ok(out)
}

fn retry(config: &Config, ids: &[String], all: bool) -> Result<String> {
    if all {
        let moved = write(config, |conn| queue::retry_all(conn, Utc::now()))
            .context("cannot retry")?
            .unwrap_or(0);
        return Ok(format!("put {} back in the queue\n", items(moved)));
    }
    let answers = write(config, |conn| queue::retry(conn, ids, Utc::now()))
        .context("cannot retry")?
        .unwrap_or_else(|| {
            ids.iter()
                .map(|id| (id.clone(), Outcome::Unknown))
                .collect()
        });
    let done = answers.iter().filter(|(_, o)| *o == Outcome::Done).count();
    let refused: Vec<String> = answers
        .iter()
        .filter_map(|(id, outcome)| match outcome {
            Outcome::NotFailed(now) => Some(format!("{id} has not failed (it is {now})")),
            Outcome::Done => None,
            _ => Some(format!("no item {id}")),
        })
        .collect();
    let summary = format!("put {} back in the queue", items(done));
    if !refused.is_empty() {
        return Err(Declined(format!("{summary}; {}", listed(&refused))).into());
    }
    Ok(format!("{summary}\n"))
}

fn stats(config: &Config, json: bool) -> Result<String> {
    let stats = match store::open_read_only(config, Instant::now() + WAIT)? {
        Some(conn) => queue::stats(&conn, Utc::now()).context("cannot count the queue")?,
        None => Stats::default(),
    };
    if json {
        return Ok(format!("{}\n", serde_json::to_string(&stats)?));
    }
    Ok(human(&stats))
}

fn human(s: &Stats) -> String {
    let mut ready = format!(
        "raw {}, leases ended {}, retries due {}",
        s.raw, s.expired, s.retry_due
    );
    if let Some(oldest) = &s.oldest_raw {
        ready.push_str(&format!("; oldest raw from {oldest}"));
    }
    let mut claimed = String::from("under a running lease");
    if !s.consumers.is_empty() {
        let by: Vec<String> = s
            .consumers
            .iter()
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        claimed.push_str(&format!(" ({})", by.join(", ")));
    }
    let retrying = s
        .next_retry
        .as_ref()
        .map_or(String::new(), |at| format!("; next from {at}"));
    let rows = [
        ("ready", s.ready, format!("claimable now ({ready})")),
        ("claimed", s.claimed, claimed),
        (
            "retrying",
            s.retrying,
            format!("waiting for their backoff{retrying}"),
        ),
        (
            "failed",
            s.failed,
            "for good (`claude-mem queue retry --all` puts them back)".into(),
        ),
        ("done", s.done, "acked".into()),
    ];
    let width = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(1);
    rows.iter()
        .map(|(name, n, what)| format!("{name:<9}{n:>width$}  {what}\n"))
        .collect()
}

/// What an answer finds without a database: none of the items.
fn unknown(ids: &[String]) -> Vec<(String, Outcome)> {
    ids.iter()
        .map(|id| (id.clone(), Outcome::Unknown))
        .collect()
}

/// The first few of a list, and how many more: the line stays readable however many items
/// one answer names.
fn listed<T: AsRef<str>>(list: &[T]) -> String {
    const SHOWN: usize = 3;
    let mut text: Vec<&str> = list.iter().take(SHOWN).map(AsRef::as_ref).collect();
    let more = format!("and {} more", list.len().saturating_sub(SHOWN));
    if list.len() > SHOWN {
        text.push(&more);
    }
    text.join("; ")
}

fn items(n: usize) -> String {
    format!("{n} item{}", if n == 1 { "" } else { "s" })
}
