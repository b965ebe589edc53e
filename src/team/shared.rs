//! What this machine's `share` wrote into a project's `.claude-mem/`: the ids of the files it
//! wrote under this database's origin, kept in the data dir's `team/` (one file per project,
//! named as its digest is), never in the folder, which whoever can commit to the project may
//! edit. `share` takes a file whose item is gone for this machine's only when this record or a
//! forget says so, and the digest leaves these notes out: an `origin:` line is anyone's to
//! write, so it decides neither.

use std::collections::BTreeSet;
use std::io::Read;

use crate::config::Config;
use crate::fsutil::{self, Access, Durability};

/// Larger is not ours: 36-byte ids, a line each, of a project's hundred thousand items.
const MAX_BYTES: u64 = 16 << 20;

fn name(project: &str) -> String {
    format!("{}.shared", super::digest::name(project))
}

/// The ids this machine's `share` wrote into `project`'s folder; none when there is no record
/// (or one that is not a file of ours).
pub fn read(config: &Config, project: &str) -> BTreeSet<String> {
    let Ok(file) = fsutil::open_ours(&config.team_dir().join(name(project)), Access::Read) else {
        return BTreeSet::new();
    };
    let mut text = String::new();
    if file.take(MAX_BYTES).read_to_string(&mut text).is_err() {
        return BTreeSet::new();
    }
    text.lines().map(String::from).collect()
}

/// Keeps `ids` as the record of `project`, replacing the one before whole.
pub fn write(config: &Config, project: &str, ids: &BTreeSet<String>) -> std::io::Result<()> {
    let dir = config.team_dir();
    fsutil::our_dir(&dir)?;
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    fsutil::write_atomic(&dir, &name(project), text.as_bytes(), Durability::Kill)
}

/// The record of `project` after a share that did `done`, from the one before, `before`: the
/// ids it wrote added, those it removed taken out.
pub fn after(
    config: &Config,
    project: &str,
    mut before: BTreeSet<String>,
    done: &super::write::Outcome,
) -> std::io::Result<()> {
    let old = before.clone();
    before.extend(done.written_ids.iter().cloned());
    for id in &done.removed_ids {
        before.remove(id);
    }
    if before == old {
        return Ok(());
    }
    write(config, project, &before)
}
