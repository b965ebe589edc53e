//! The cold commands, one file each. Each returns what to print (a [`Report`]), or an error
//! that `emit` prints as one line with a non-zero exit.
//!
//! What the read commands share with the MCP server lives in `crate::recall` (and a search
//! request, in `search`); here only what is theirs alone: flags read as its arguments, and the
//! notes of an empty answer.

mod browse;
mod completions;
mod compress;
mod conventions;
mod doctor;
mod export;
mod forget;
mod given;
mod import;
mod install;
mod maintain;
mod mcp;
mod projects;
mod prune;
mod queue;
mod scrub;
mod search;
mod sessions;
mod share;
mod show;
mod status;
pub mod sync;
mod timeline;
mod uninstall;

use anyhow::Result;

use crate::cli::{Command, Projects, Range};
use crate::config::Config;
use crate::emit::{self, Report};
use crate::recall::{self, Recall, no_database, usage};

pub fn run(command: Command) -> Result<Report> {
    match command {
        // Reached only through clap (e.g. `claude-mem hook` with no name): main runs hooks.
        Command::Hook { .. } => Ok(Report::default()),
        Command::InstallHooks(args) => install::install(&args).map(Report::from),
        Command::UninstallHooks(args) => uninstall::uninstall(&args).map(Report::from),
        Command::Maintain {
            auto,
            team,
            checkpoint,
        } => maintain::maintain(auto, team.as_deref(), checkpoint).map(Report::from),
        Command::Queue(command) => queue::run(command).map(Report::from),
        Command::Search(args) => search::search(&args),
        Command::Show { id, json } => show::show(&id, json),
        Command::Sessions(args) => sessions::sessions(&args.scope),
        // Browse forgets with forget's own function (a command never names another).
        Command::Browse(args) => browse::browse(&args, forget::for_good),
        Command::Conventions(args) => conventions::conventions(&args),
        Command::Projects { action, json } => projects::projects(action.as_ref(), json),
        Command::Timeline {
            id,
            before,
            after,
            json,
        } => timeline::timeline(&id, before, after, json),
        Command::Given { id, json } => given::given(id.as_deref(), json),
        Command::Compress(args) => compress::compress(&args),
        Command::Status { json } => status::status(json),
        Command::Doctor { fix, json } => doctor::doctor(fix, json),
        Command::Completions { shell } => Ok(completions::completions(shell)),
        Command::Mcp => mcp::serve(),
        Command::Scrub { dry_run } => scrub::scrub(dry_run),
        Command::Prune(args) => prune::prune(&args),
        Command::Forget(args) => forget::forget(&args),
        Command::Export(args) => export::export(&args),
        Command::Import(args) => import::import(&args),
        Command::Sync { command } => sync::run(command),
        Command::Share(args) => share::share(&args),
    }
}

/// How a forget or a scrub ends once its rows are gone from the tables: the database files
/// rebuilt and the WAL emptied now (`maintain::for_good`), or, while a reader keeps old
/// copies of the pages in the WAL, the maintenance process asked to finish, for which the
/// store and the maintenance lock are let go. Adds what it did to `out`.
fn finish_for_good(
    config: &Config,
    store: crate::store::Store,
    lock: std::fs::File,
    recall: &mut crate::recall::Recall,
    slicer: &crate::store::slices::Slicer,
    out: &mut String,
) -> Result<()> {
    let wal_clean = crate::maintain::for_good(config, &store, recall, slicer, slicer.wait)
        .map_err(|err| not_rebuilt(config, out, &err))?;
    if !wal_clean {
        crate::marks::ask_scrub(config);
        drop(store);
        drop(lock);
        crate::detach::maintain(config);
        out.push_str(
            "A reader holds the database: the maintenance process removes the old copies left \
             in its WAL once it lets go.\n",
        );
    }
    Ok(())
}

/// The error of a forget or a scrub whose rows are gone from the tables but whose files could
/// not be rebuilt (a full disk): what it did (`done`, its lines), what may remain, and how to
/// finish. The rebuild stays asked for in the database, for `maintain` to do.
fn not_rebuilt(config: &Config, done: &str, err: &anyhow::Error) -> anyhow::Error {
    let done: Vec<&str> = done
        .lines()
        .map(|line| line.trim_end_matches('.'))
        .collect();
    anyhow::anyhow!(
        "{}; but old copies of what it removed may remain in the database files until they \
         are rebuilt ({err:#}): {}",
        done.join("; "),
        how_to_rebuild(config)
    )
}

/// What makes a rebuild that a full disk stopped possible: the space it needs (its copy and
/// the WAL it writes, each about the database's size), then `maintain`.
fn how_to_rebuild(config: &Config) -> String {
    let size = std::fs::metadata(config.db_path()).map_or(0, |m| m.len());
    format!(
        "free about {} on the disk of {}, then run `claude-mem maintain`",
        crate::render::bytes(size.saturating_mul(2)),
        config.data_dir.display()
    )
}

/// A list's answer when nothing was ever captured.
fn nothing_captured(config: &Config) -> Report {
    Report {
        note: Some(no_database(config)),
        ..Report::default()
    }
}

/// The project a read command is about, `None` for `--all` (see [`Recall::project`]).
fn project(projects: &Projects, recall: &Recall) -> Result<Option<String>> {
    recall.project(projects.project.as_deref(), projects.all)
}

/// A note for an empty answer: where it looked, and how to look wider.
fn scope_hint(project: Option<&str>, what: &str) -> String {
    match project {
        Some(p) => format!("{what} in project {p} (--all looks in every project)"),
        None => what.to_string(),
    }
}

/// `--since` and `--until` as stored timestamps.
fn bounds(range: &Range) -> Result<(Option<String>, Option<String>)> {
    recall::bounds(range.since.as_deref(), range.until.as_deref(), "--")
}

/// Whether to go on deleting for good what `what` lists: `yes` (the flag), or a person's yes
/// to the question on a terminal. Elsewhere, without `--yes`, a usage error: a script must say
/// it means it.
fn confirmed(command: &str, what: &str, question: &str, yes: bool) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !emit::can_ask() {
        return Err(usage(format!(
            "{command} deletes for good: run it on a terminal to be asked first, or add --yes"
        )));
    }
    Ok(emit::confirm(&format!("{what}{question} [y/N] "))?)
}

/// The policy in one line, for prune and status.
fn policy_text(policy: &crate::config::Retention) -> String {
    let payloads = match policy.payload_days {
        Some(days) => format!("tool calls reduced after {days} idle days"),
        None => "tool calls kept whole".into(),
    };
    let sessions = match policy.keep_days {
        Some(days) => format!("sessions deleted after {days}"),
        None => "sessions kept".into(),
    };
    let cap = match policy.max_db_bytes {
        Some(bytes) => format!("cap {}", crate::render::bytes(bytes)),
        None => "no size cap".into(),
    };
    format!("{payloads}, {sessions}, {cap}")
}
