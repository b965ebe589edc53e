//! `sync setup`: joining a remote. On a remote with no claude-mem data it starts one: a new
//! key and remote id, and the header pushed; the token is handed back to be printed once. On a
//! remote that has data it takes the key given and checks it against the remote's header
//! before keeping anything: a key made for another remote, or one that does not open this
//! one, ends here with nothing stored, nothing imported and the remote unchanged. `sync off`
//! forgets the remote here (the remote itself, and every other machine, stay as they are),
//! all but the records this machine knows were deleted: joining again never brings them back.

use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::chunk;
use super::git::Git;
use super::key::{self, Key};
use super::remote::Layout;
use super::url::Credential;
use super::{NETWORK_TIMEOUT, Paths, Settings};
use crate::config::Config;
use crate::fsutil::{self, Durability};

/// What setup did.
pub enum Joined {
    /// A new remote: its key's token, to print once.
    Started { token: String },
    /// A remote with data, its key checked.
    Existing,
    /// Set up with this remote already.
    Already,
}

pub fn setup(config: &Config, url: &str, token: Option<&str>) -> Result<Joined> {
    let url = url.trim();
    if url.is_empty() {
        bail!("name the remote: a path, or a URL git takes (ssh, https, file://)");
    }
    let (url, credential) = super::url::split(url)?;
    let url = url.as_str();
    let key = token.map(Key::parse).transpose()?;
    if let Some(settings) = super::settings(config)? {
        if settings.url == url {
            return Ok(Joined::Already);
        }
        bail!(
            "sync is set up with {} on this machine: `claude-mem sync off` first to sync with \
             another remote",
            settings.url
        );
    }
    let paths = Paths::of(config);
    fsutil::our_dir(&config.data_dir)
        .with_context(|| format!("cannot use the data dir {}", config.data_dir.display()))?;
    fsutil::our_dir(&paths.dir).with_context(|| format!("cannot use {}", paths.dir.display()))?;
    let _lock = super::lock(&paths, Some(Duration::ZERO))?;
    // A state of an earlier remote says nothing of this one, but for what was deleted here.
    remove_state(&paths)?;
    let git = Git::open(&paths.repo(), false, NETWORK_TIMEOUT)?.with_credential(credential.clone());
    let tip = git
        .fetch(url)
        .map_err(|err| anyhow::anyhow!("cannot reach {url}: {err:#}"))?;
    let (remote, outcome, key) = match (tip, key) {
        (None, None) => {
            let (remote, key) = start(&git, url)?;
            let token = key.token();
            (remote, Joined::Started { token }, key)
        }
        (None, Some(_)) => bail!(
            "{url} holds no claude-mem sync data, so this key is not its key: name the remote the \
             key was made for, or leave out --key to start syncing with {url}"
        ),
        (Some(tip), given) => {
            let (remote, key) = join(&git, url, &tip, given)?;
            (remote, Joined::Existing, key)
        }
    };
    keep(&paths, url, credential.as_ref(), &remote, &key)?;
    Ok(outcome)
}

/// Starts sync data on a remote that has none: a new remote id and key, and the header
/// pushed.
fn start(git: &Git, url: &str) -> Result<([u8; 16], Key)> {
    let mut remote = [0u8; 16];
    key::random(&mut remote)?;
    let key = Key::generate(&remote)?;
    let header = git.write_blob(&chunk::seal_header(&key, &remote)?)?;
    let tree = Layout::default().tree(git, Some(&header), "", &Default::default())?;
    let commit = git.commit(&tree, None)?;
    git.push(url, &commit, None)
        .map_err(|err| anyhow::anyhow!("cannot push to {url}: {err:#}"))?;
    Ok((remote, key))
}

/// The remote id of sync data at `tip`, and the key `given`, once the key is known to be
/// this remote's: made for it, and opening its header.
fn join(git: &Git, url: &str, tip: &str, given: Option<Key>) -> Result<([u8; 16], Key)> {
    let layout = Layout::read(git, tip)?;
    let header = match &layout.header {
        Some(id) => git.small_blob(id)?,
        None => None,
    };
    let Some((remote, header)) = header.and_then(|h| Some((chunk::header_remote(&h)?, h))) else {
        bail!("{url} has a claude-mem branch that is not claude-mem sync data; left untouched");
    };
    let Some(key) = given else {
        bail!(
            "{url} already holds claude-mem sync data: give its key with --key (`claude-mem \
             sync key` prints it on a machine that syncs with it)"
        );
    };
    if !key.made_for(&remote) {
        bail!(
            "this key was made for another remote (remote {}…), not {url} (remote {}…): \
             nothing was imported, {url} is unchanged",
            key::hex(&key.remote),
            key::hex(&remote[..key::REMOTE_PREFIX])
        );
    }
    if !chunk::opens_header(&key, &header) {
        bail!(
            "the key does not open {url}'s data (the key names this remote, but it is \
             not its key, or its header was changed): nothing was imported, {url} is \
             unchanged"
        );
    }
    Ok((remote, key))
}

/// Keeps the remote's key and settings on this machine.
fn keep(
    paths: &Paths,
    url: &str,
    credential: Option<&Credential>,
    remote: &[u8; 16],
    key: &Key,
) -> Result<()> {
    let settings = Settings {
        url: url.to_string(),
        remote: key::hex(remote),
        credential: None,
    };
    match credential {
        Some(credential) => fsutil::write_atomic(
            &paths.dir,
            super::CREDENTIAL,
            &serde_json::to_vec(credential)?,
            Durability::PowerLoss,
        )
        .context("cannot keep the remote's credential")?,
        None => remove(&paths.credential())?,
    }
    fsutil::write_atomic(
        &paths.dir,
        "key",
        format!("{}\n", key.token()).as_bytes(),
        Durability::PowerLoss,
    )
    .context("cannot keep the key")?;
    // Last: its presence is what "set up" means.
    fsutil::write_atomic(
        &paths.dir,
        super::SYNC_SETTINGS,
        &serde_json::to_vec_pretty(&settings)?,
        Durability::PowerLoss,
    )
    .context("cannot keep the sync settings")?;
    Ok(())
}

/// Forgets the remote here: settings, key, state and repository. Returns the remote it was.
pub fn off(config: &Config) -> Result<Option<String>> {
    let Some(settings) = super::settings(config)? else {
        return Ok(None);
    };
    let paths = Paths::of(config);
    let _lock = super::lock(&paths, Some(Duration::from_secs(30)))?;
    std::fs::remove_file(paths.settings())
        .with_context(|| format!("cannot remove {}", paths.settings().display()))?;
    let _ = std::fs::remove_file(paths.key());
    remove(&paths.credential())?;
    let _ = std::fs::remove_file(paths.status());
    let _ = std::fs::remove_file(paths.tried());
    remove_state(&paths)?;
    Ok(Some(settings.url))
}

fn remove(path: &std::path::Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Forgets what this machine knew of a remote, but the records it knows were deleted.
fn remove_state(paths: &Paths) -> Result<()> {
    crate::store::sync::forget_remote(&paths.state())?;
    let repo = paths.repo();
    if repo.exists() {
        std::fs::remove_dir_all(&repo)
            .with_context(|| format!("cannot remove {}", repo.display()))?;
    }
    Ok(())
}
