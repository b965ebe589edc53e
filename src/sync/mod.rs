//! Sync: one memory across a person's machines, through a git remote they already have, with
//! no server of ours and nothing readable on the remote.
//!
//! Each machine appends its records (sessions, prompts, tool calls, Claude's messages,
//! memories, summaries, and deletions) to an op log of its own on the remote: chunks in the
//! export format, compressed and encrypted (`ops`, `chunk`), in a folder only it writes
//! (`remote`). A sync fetches, takes in the chunks of the other machines it has not taken in
//! (`run`, applied idempotently by id: `store::sync::incoming`), then pushes what is new here
//! (`store::sync::outgoing`) in a new chunk; a push that loses the race to another machine
//! fetches again and puts its folder on top. After a deletion, the chunks that held what was
//! deleted are written again without it, in a new history (see `run`), so that the branch no
//! longer reaches it.
//!
//! Who runs it: `claude-mem sync` (`cmd::sync`), and the maintenance process after a session
//! ends, at most every `CLAUDE_MEM_SYNC_INTERVAL` ([`background`]); no hook ever runs git or
//! waits on the network (a hook only looks at two files' times: `marks::sync_due`).
//!
//! Files, in `sync/` of the data dir (mode 0700): `remote.json` (the URL and the remote's id),
//! `key` (the secret key's token, 0600), `state.db` (`store::sync`), `repo.git` (a bare
//! repository that holds what was fetched and pushed), `lock`, `status.json`, `tried`.

pub mod chunk;
mod git;
pub mod key;
mod ops;
mod remote;
mod run;
pub mod setup;
pub mod status;
pub mod url;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::fsutil;
use crate::marks::{SYNC_SETTINGS, SYNC_TRIED};
use key::Key;

pub use run::Moved;

/// How long git may take to fetch or push. A first push of years of memory is tens of MB.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(600);
/// How long `claude-mem sync` waits for a sync already running here.
const LOCK_WAIT: Duration = Duration::from_secs(120);

/// The files of `Config::sync_dir`.
pub struct Paths {
    pub dir: PathBuf,
}

impl Paths {
    pub fn of(config: &Config) -> Paths {
        Paths {
            dir: config.sync_dir(),
        }
    }
    pub fn settings(&self) -> PathBuf {
        self.dir.join(SYNC_SETTINGS)
    }
    pub fn key(&self) -> PathBuf {
        self.dir.join("key")
    }
    pub fn credential(&self) -> PathBuf {
        self.dir.join(CREDENTIAL)
    }
    pub fn state(&self) -> PathBuf {
        self.dir.join("state.db")
    }
    pub fn repo(&self) -> PathBuf {
        self.dir.join("repo.git")
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join("lock")
    }
    pub fn status(&self) -> PathBuf {
        self.dir.join("status.json")
    }
    pub fn tried(&self) -> PathBuf {
        self.dir.join(SYNC_TRIED)
    }
}

/// The file of the user name and password taken out of the remote's URL.
const CREDENTIAL: &str = "credential";

/// Where this machine syncs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// The remote, as git takes it, without a user name or password.
    pub url: String,
    /// The remote's random id (hex), from its header.
    pub remote: String,
    /// The user name and password of an http(s) remote, kept apart (`sync/credential`).
    #[serde(skip)]
    pub credential: Option<url::Credential>,
}

impl Settings {
    pub fn remote_id(&self) -> Result<[u8; 16]> {
        key::unhex(&self.remote)
            .and_then(|bytes| bytes.try_into().ok())
            .context("sync/remote.json is damaged: run `claude-mem sync setup` again")
    }
}

/// The settings, `None` when sync is not set up here.
pub fn settings(config: &Config) -> Result<Option<Settings>> {
    let path = Paths::of(config).settings();
    let file = match fsutil::open_ours(&path, fsutil::Access::Read) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut settings: Settings = serde_json::from_reader(std::io::BufReader::new(file))
        .with_context(|| {
            format!(
                "{} is damaged: run `claude-mem sync setup` again",
                path.display()
            )
        })?;
    // An earlier release kept the URL as given, a token in it maybe: it is taken out here.
    let (url, in_url) = url::split(&settings.url)?;
    settings.url = url;
    settings.credential = match in_url {
        Some(credential) => Some(credential),
        None => credential(config)?,
    };
    Ok(Some(settings))
}

/// The credential kept apart from the URL, if any.
fn credential(config: &Config) -> Result<Option<url::Credential>> {
    let path = Paths::of(config).credential();
    match fsutil::open_ours(&path, fsutil::Access::Read) {
        Ok(file) => serde_json::from_reader(std::io::Read::take(file, 64 << 10))
            .map(Some)
            .with_context(|| format!("{} is damaged", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The settings, or the error that says how to set sync up.
pub fn required(config: &Config) -> Result<Settings> {
    settings(config)?.context(
        "sync is not set up on this machine: `claude-mem sync setup <REMOTE>` (see docs/sync.md)",
    )
}

/// The key kept in the data dir.
pub fn load_key(config: &Config) -> Result<Key> {
    let path = Paths::of(config).key();
    // The token in clear: wiped once read, and sized so that reading it never grows (and
    // copies) it.
    let mut text = zeroize::Zeroizing::new(String::with_capacity(4096));
    let file = fsutil::open_ours(&path, fsutil::Access::Read)
        .with_context(|| format!("cannot read the sync key {}", path.display()))?;
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 4096), &mut text)?;
    Key::parse(&text).with_context(|| format!("{} is damaged", path.display()))
}

/// Syncs now: `claude-mem sync`, waiting for a sync already running here.
pub fn now(config: &Config) -> Result<Moved> {
    let settings = required(config)?;
    let key = load_key(config)?;
    let paths = Paths::of(config);
    let _lock = lock(&paths, Some(LOCK_WAIT))?;
    run::guarded(config, &paths, &settings, &key, false)
}

/// Syncs from the maintenance process, when it is due: never waits for another sync, never
/// asks anything, and leaves what went wrong in `status.json` and the log. Returns whether it
/// deleted records here (forgotten elsewhere): the database is then to be rebuilt.
pub fn background(config: &Config) -> bool {
    if !crate::marks::sync_due(config) {
        return false;
    }
    let asked = crate::marks::sync_asked(config);
    crate::marks::sync_answered(config);
    // After a session (not asked by a session start, which wants what the others did now),
    // the compressor the session's end started may still be making its memories: they travel
    // with it when the sync waits for it, a bounded time.
    if !asked {
        wait_for_compression(config);
    }
    let log = crate::log::Log::new(config, "sync");
    let attempt = || -> Result<Option<Moved>> {
        let settings = required(config)?;
        let key = load_key(config)?;
        let paths = Paths::of(config);
        let Ok(_lock) = lock(&paths, None) else {
            return Ok(None);
        };
        run::guarded(config, &paths, &settings, &key, true).map(Some)
    };
    match attempt() {
        Ok(Some(moved)) => {
            if !moved.is_nothing() {
                log.line("INFO", &moved.line());
            }
            // What came in is indexed by another maintenance pass, for the next prompt's
            // recall; what was deleted is rebuilt out of the files.
            moved.received.deleted > 0 || moved.received.stored.iter().any(|&n| n > 0)
        }
        Ok(None) => false,
        Err(err) => {
            log.line("WARN", &format!("sync: {err:#}"));
            false
        }
    }
}

/// The longest a sync after a session waits for the compressor to finish with it.
pub const COMPRESSION_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Waits, up to [`COMPRESSION_WAIT`], while a compressor runs for this data dir.
fn wait_for_compression(config: &Config) {
    let until = std::time::Instant::now() + COMPRESSION_WAIT;
    // The compressor is started a moment after the maintenance process, by the same hook.
    std::thread::sleep(std::time::Duration::from_millis(300));
    while crate::fsutil::is_locked(&config.compress_lock()) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// The lock that keeps two syncs of this data dir apart: waits up to `wait` for the other
/// (`None`: not at all).
fn lock(paths: &Paths, wait: Option<Duration>) -> Result<std::fs::File> {
    let deadline = std::time::Instant::now() + wait.unwrap_or_default();
    loop {
        if let Some(file) = fsutil::try_lock(&paths.lock()) {
            return Ok(file);
        }
        if std::time::Instant::now() >= deadline {
            anyhow::bail!(
                "another sync of this data dir is running (`claude-mem sync`, or the maintenance \
                 process's); try again once it ends"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
