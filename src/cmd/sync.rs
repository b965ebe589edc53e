//! `sync`: this machine's memory and the other machines' through a git remote, encrypted (see
//! `crate::sync`). `sync` pushes and pulls now and says what moved in one line; `sync setup`
//! joins a remote (starting it when it holds nothing); `sync status` says where and how it
//! went; `sync key` prints the key again; `sync off` forgets the remote here.

use std::io::Read;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::cli::SyncCommand;
use crate::config::Config;
use crate::emit::Report;
use crate::render::{self, Color, Style, Table, cell};
use crate::store::Store;
use crate::sync::setup::{self, Joined};
use crate::sync::{self, Paths, status};

pub fn run(command: Option<SyncCommand>) -> Result<Report> {
    let config = Config::from_env();
    match command {
        None => now(&config),
        Some(SyncCommand::Setup { remote, key }) => set_up(&config, &remote, key.as_deref()),
        Some(SyncCommand::Status { json }) => show_status(&config, json),
        Some(SyncCommand::Key) => key(&config),
        Some(SyncCommand::Off) => off(&config),
    }
}

fn now(config: &Config) -> Result<Report> {
    let moved = sync::now(config);
    // Records forgotten elsewhere were deleted here: the maintenance process rebuilds the
    // files so that no old copy of them stays (as after `forget`). A sync that failed may have
    // deleted some before it did; one that never began (not set up) did not.
    let deleted = match &moved {
        Ok(moved) => moved.received.deleted > 0,
        Err(_) => matches!(sync::settings(config), Ok(Some(_))),
    };
    if deleted {
        crate::detach::maintain(config);
    }
    Ok(format!("{}\n", moved?.line()).into())
}

fn set_up(config: &Config, given: &str, key: Option<&str>) -> Result<Report> {
    let remote = &sync::url::shown(given.trim());
    let key = match key {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .take(4096)
                .read_to_string(&mut text)
                .context("cannot read the key from stdin")?;
            Some(text)
        }
        other => other.map(str::to_string),
    };
    let out = match setup::setup(config, given, key.as_deref())? {
        Joined::Already => format!("Sync is set up with {remote} already.\n"),
        Joined::Existing => format!(
            "Set up sync with {remote}: the key opens its data.\n\
             Run `claude-mem sync` to take in what the other machines sent; it also runs after \
             sessions end{}.\n",
            every(config)
        ),
        Joined::Started { token } => format!(
            "Started sync with {remote}: it holds only what is encrypted with this key, made \
             here now:\n\n{token}\n\n\
             Keep it as you keep a password: whoever has it and the remote reads your memory, and \
             without it no machine can join. `claude-mem sync key` prints it again.\n\
             On another machine: claude-mem sync setup {remote} --key <KEY> (or --key - to paste \
             it), then claude-mem sync.\n\
             Run `claude-mem sync` to send this machine's memory now; it also runs after sessions \
             end{}.\n",
            every(config)
        ),
    };
    Ok(out.into())
}

/// When the background syncs, for a sentence.
fn every(config: &Config) -> String {
    match config.sync_interval {
        Some(every) => format!(
            ", every {} at most",
            render::duration(every.as_secs() as i64)
        ),
        None => " only by hand here (CLAUDE_MEM_SYNC_INTERVAL=0)".into(),
    }
}

fn key(config: &Config) -> Result<Report> {
    sync::required(config)?;
    let key = sync::load_key(config)?;
    Ok(Report {
        stdout: format!("{}\n", key.token()),
        note: Some("Keep it secret: with it and the remote, anyone reads your memory.".into()),
        ..Report::default()
    })
}

fn off(config: &Config) -> Result<Report> {
    Ok(match setup::off(config)? {
        None => "Sync is not set up on this machine; nothing to do.\n".to_string(),
        Some(url) => format!(
            "Sync with {url} is off on this machine; its key is gone from here. The remote and \
             the other machines are as they were.\n"
        ),
    }
    .into())
}

/// What `sync status` shows.
struct Shown {
    settings: Option<sync::Settings>,
    status: status::Status,
    /// Records and deletions waiting to go, when they could be counted.
    waiting: Option<Result<(i64, i64), String>>,
    machine: Option<String>,
}

fn gather(config: &Config) -> Result<Shown> {
    let settings = sync::settings(config)?;
    let paths = Paths::of(config);
    let mut shown = Shown {
        status: status::read(&paths),
        waiting: None,
        machine: None,
        settings,
    };
    if shown.settings.is_some() && config.db_path().exists() {
        let counted = (|| -> Result<(i64, i64)> {
            let store = Store::open(config, Instant::now() + Duration::from_secs(5))?;
            let conn = store.conn();
            crate::store::sync::attach(conn, &paths.state())?;
            shown.machine = crate::store::sync::meta(conn, "machine")?;
            let waiting = crate::store::sync::outgoing::waiting(conn);
            crate::store::sync::detach(conn);
            waiting
        })();
        shown.waiting = Some(counted.map_err(|err| format!("{err:#}")));
    }
    Ok(shown)
}

fn show_status(config: &Config, json: bool) -> Result<Report> {
    let shown = gather(config)?;
    if json {
        return Ok(render::json_line(&status_json_of(config, &shown)).into());
    }
    let style = Style::detect();
    let Some(settings) = &shown.settings else {
        return Ok(
            "Sync is not set up on this machine: claude-mem sync setup <REMOTE> (see \
                   docs/sync.md).\n"
                .to_string()
                .into(),
        );
    };
    let s = &shown.status;
    let mut t = Table::default();
    let mut line = |label: &str, value: String, color: Option<Color>| {
        let value = match color {
            Some(c) => cell(value).color(c),
            None => cell(value),
        };
        t.row(vec![cell(label).color(Color::Header), value]);
    };
    line("remote", settings.url.clone(), None);
    if let Some(machine) = &shown.machine {
        line("machine", machine.clone(), None);
    }
    line(
        "last sync",
        match (&s.synced_at, &s.moved) {
            (Some(at), Some(moved)) => format!("{}: {moved}", style.moment(at)),
            _ => "never".into(),
        },
        None,
    );
    if let Some(aside) = &s.set_aside {
        line("set aside", aside.clone(), Some(Color::Warn));
    }
    if let (Some(error), Some(at)) = (&s.error, &s.failed_at) {
        line(
            "last error",
            format!("{}: {error}", style.moment(at)),
            Some(Color::Bad),
        );
    }
    match &shown.waiting {
        Some(Ok((0, 0))) => line("waiting", "nothing".into(), None),
        Some(Ok((records, deletions))) => line(
            "waiting",
            [
                (*records > 0).then(|| render::plural(*records, "record")),
                (*deletions > 0).then(|| render::plural(*deletions, "deletion")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
            None,
        ),
        Some(Err(err)) => line("waiting", format!("cannot count: {err}"), Some(Color::Warn)),
        None => line("waiting", "nothing (nothing captured yet)".into(), None),
    }
    line(
        "background",
        match config.sync_interval {
            Some(every) => format!(
                "after sessions end, every {} at most (CLAUDE_MEM_SYNC_INTERVAL)",
                render::duration(every.as_secs() as i64)
            ),
            None => "off (CLAUDE_MEM_SYNC_INTERVAL=0): only claude-mem sync".into(),
        },
        None,
    );
    Ok(t.render(&style).into())
}

fn status_json_of(config: &Config, shown: &Shown) -> Value {
    let s = &shown.status;
    let (records, deletions) = match &shown.waiting {
        Some(Ok((r, d))) => (Some(*r), Some(*d)),
        _ => (None, None),
    };
    json!({
        "set_up": shown.settings.is_some(),
        "remote": shown.settings.as_ref().map(|s| &s.url),
        "machine": shown.machine,
        "synced_at": s.synced_at,
        "moved": s.moved,
        "tried_at": s.tried_at,
        "error": s.error,
        "failed_at": s.failed_at,
        "set_aside": s.set_aside,
        "waiting": {"records": records, "deletions": deletions},
        "interval_seconds": config.sync_interval.map(|d| d.as_secs()),
    })
}
