//! The cold commands, one file each. Each returns what to print (a [`Report`]), or an error
//! that `emit` prints as one line with a non-zero exit.
//!
//! What the read commands share lives here: which project they are about, time bounds, and
//! opening the search index up to date (with a progress line while a first build runs).

mod completions;
mod doctor;
mod install;
mod maintain;
mod queue;
mod search;
mod sessions;
mod show;
mod status;
mod timeline;
mod uninstall;

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use chrono::{DateTime, Duration, Local, NaiveDate, NaiveTime, SecondsFormat, TimeZone, Utc};

use crate::cli::{Command, Scope};
use crate::config::Config;
use crate::emit::{self, Report, UsageError};
use crate::store::fts::{Index, Item};
use crate::store::read::{Kind, Reader, handle};

pub fn run(command: Command) -> Result<Report> {
    match command {
        // Reached only through clap (e.g. `claude-mem hook` with no name): main runs hooks.
        Command::Hook { .. } => Ok(Report::default()),
        Command::InstallHooks(args) => install::install(&args).map(Report::from),
        Command::UninstallHooks(args) => uninstall::uninstall(&args).map(Report::from),
        Command::Maintain => maintain::maintain().map(Report::from),
        Command::Queue(command) => queue::run(command).map(Report::from),
        Command::Search(args) => search::search(&args),
        Command::Show { id, json } => show::show(&id, json),
        Command::Sessions(args) => sessions::sessions(&args.scope),
        Command::Timeline {
            id,
            before,
            after,
            json,
        } => timeline::timeline(&id, before, after, json),
        Command::Status { json } => status::status(json),
        Command::Doctor { fix, json } => doctor::doctor(fix, json),
        Command::Completions { shell } => Ok(completions::completions(shell)),
    }
}

fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
}

/// A list's answer when nothing was ever captured.
fn nothing_captured(config: &Config) -> Report {
    Report {
        note: Some(no_database(config)),
        ..Report::default()
    }
}

fn no_database(config: &Config) -> String {
    if crate::layout::pending(config) {
        return format!(
            "the database is still where an earlier release kept it, {}: claude-mem maintain \
             moves it",
            config.legacy_db_path().display()
        );
    }
    format!(
        "nothing captured yet: there is no database at {} (claude-mem install-hooks registers \
         the hooks that fill it)",
        config.db_path().display()
    )
}

/// The database, for a command about one item: without one there is no item.
fn reader(config: &Config) -> Result<Reader> {
    Reader::open(config)?.ok_or_else(|| anyhow!(no_database(config)))
}

/// The project a read command is about, `None` for `--all`: `--project DIR`, else the one the
/// hooks would record here ($CLAUDE_PROJECT_DIR, else the current directory); in either case
/// the recorded project that is that directory or the closest one containing it, so that a
/// command run in a subdirectory finds its project.
fn project(scope: &Scope, config: &Config, reader: &Reader) -> Result<Option<String>> {
    if scope.all {
        return Ok(None);
    }
    let dir = match (&scope.project, &config.project_dir) {
        (Some(dir), _) => dir.clone(),
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => std::env::current_dir().map_err(|err| {
            anyhow!("cannot read the current directory ({err}); use --project DIR or --all")
        })?,
    };
    let dir = std::path::absolute(&dir)
        .map_err(|err| usage(format!("cannot use {} as a project ({err})", dir.display())))?;
    let closest = reader
        .projects()?
        .into_iter()
        .filter(|known| !known.is_empty() && dir.starts_with(Path::new(known)))
        .max_by_key(String::len);
    Ok(Some(closest.unwrap_or_else(|| {
        dir.to_string_lossy().trim_end_matches('/').to_string()
    })))
}

/// A note for an empty answer: where it looked, and how to look wider.
fn scope_hint(project: Option<&str>, what: &str) -> String {
    match project {
        Some(p) => format!("{what} in project {p} (--all looks in every project)"),
        None => what.to_string(),
    }
}

/// `--since` and `--until` of a scope as stored timestamps.
fn bounds(scope: &Scope) -> Result<(Option<String>, Option<String>)> {
    let since = scope
        .since
        .as_deref()
        .map(|v| time_bound("since", v, false));
    let until = scope.until.as_deref().map(|v| time_bound("until", v, true));
    Ok((since.transpose()?, until.transpose()?))
}

/// `--since` / `--until` as a stored timestamp: a duration ago (`90s`, `30m`, `12h`, `2d`,
/// `1w`), a local date (`2026-11-01`: its start, or its end for `--until`), or an RFC 3339
/// time.
fn time_bound(flag: &str, value: &str, end_of_day: bool) -> Result<String> {
    let now = Utc::now();
    let value = value.trim();
    let at = if let Some(ago) = duration_ago(value) {
        Some(now - ago)
    } else if let Ok(date) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        let day = if end_of_day {
            date.succ_opt().unwrap_or(date)
        } else {
            date
        };
        Local
            .from_local_datetime(&day.and_time(NaiveTime::MIN))
            .earliest()
            .map(|t| t.with_timezone(&Utc))
    } else {
        DateTime::parse_from_rfc3339(value)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    at.map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
        .ok_or_else(|| {
            usage(format!(
                "--{flag} {value:?} is neither a duration (30m, 12h, 2d, 1w) nor a date \
                 (2026-11-01)"
            ))
        })
}

fn duration_ago(value: &str) -> Option<Duration> {
    let split = value.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = value.split_at(split);
    let n: i64 = n.parse().ok()?;
    match unit {
        "s" => Duration::try_seconds(n),
        "m" | "min" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    }
}

/// The search index, brought up to date with the database first (a progress line on a
/// terminal while that takes a moment).
fn synced_index(config: &Config, reader: &Reader) -> Result<Index> {
    let index = Index::open(config)?;
    let mut progress = emit::Progress::new("indexing");
    index.sync(reader, &mut |done, total| progress.update(done, total))?;
    Ok(index)
}

/// What `id` names: a whole id as stored, or a unique prefix (6 characters at least) of an
/// id or of the short id printed for it. Ambiguity is an error naming the candidates. `index`
/// is the search index when the caller has already brought it up to date.
fn resolve(
    config: &Config,
    reader: &Reader,
    index: Option<&Index>,
    id: &str,
) -> Result<(Kind, String)> {
    if let Some(kind) = reader.kind_of(id)? {
        return Ok((kind, id.to_string()));
    }
    if id.chars().count() < 6 {
        return Err(usage(format!(
            "{id:?} is too short to be an id: give at least 6 characters"
        )));
    }
    let found = match index {
        Some(index) => index.resolve(id)?,
        None => synced_index(config, reader)?.resolve(id)?,
    };
    match found.as_slice() {
        [] => Err(anyhow!(
            "no session, prompt, tool call or message has the id {id}"
        )),
        [one] => Ok((one.kind, one.id.clone())),
        many => Err(anyhow!(
            "{id} is ambiguous: it starts {}; give more of it",
            candidates(many)
        )),
    }
}

fn candidates(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| {
            let what = match (&i.kind, &i.tool_name) {
                (Kind::Observation, Some(tool)) => tool.as_str(),
                (kind, _) => kind.as_str(),
            };
            format!(
                "{} ({what}, {})",
                handle(&i.id),
                crate::render::iso(&i.created_at)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_read_durations_and_dates() {
        let two_days = time_bound("since", "2d", false).unwrap();
        let expected = Utc::now() - Duration::days(2);
        let got = DateTime::parse_from_rfc3339(&two_days).unwrap();
        assert!((got.with_timezone(&Utc) - expected).num_seconds().abs() < 5);
        let start = time_bound("since", "2026-11-01", false).unwrap();
        let end = time_bound("until", "2026-11-01", true).unwrap();
        let day = DateTime::parse_from_rfc3339(&end).unwrap()
            - DateTime::parse_from_rfc3339(&start).unwrap();
        assert!((23..=25).contains(&day.num_hours()), "{start} {end}");
        assert_eq!(
            time_bound("since", "2026-11-01T10:00:00Z", false).unwrap(),
            "2026-11-01T10:00:00.000Z"
        );
        for bad in ["yesterday", "2x", "-3d", "2026-13-01", ""] {
            let err = time_bound("since", bad, false).unwrap_err();
            assert!(err.downcast_ref::<UsageError>().is_some(), "{bad}");
        }
    }
}
