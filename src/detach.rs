//! Starting work a hook must not wait for (a checkpoint, a backlog of spill files, the
//! compression of a session's items) in a process of its own: its own session and process
//! group (only a group for the checkpoint, a moment's work), stdio closed, never waited for
//! (see `child::detached`). At most one of each runs per data dir: it holds a lock on a file
//! there, which the kernel releases however it ends, kill -9 included.

use std::process::Command;
use std::time::Duration;

use crate::config::Config;
use crate::{child, fsutil};

/// Starts `claude-mem maintain` for this data dir, unless one is running already.
pub fn maintain(config: &Config) {
    if !fsutil::is_locked(&config.maintain_lock()) {
        start(&["maintain", "--auto"]);
    }
}

/// The checkpoint's command line: `claude-mem maintain --checkpoint`.
pub const CHECKPOINT: [&str; 2] = ["maintain", "--checkpoint"];
/// How long the checkpoint waits for the hook that started it to exit (see
/// `child::after_parent`): the hook's last step after starting it is writing its answer.
pub const PARENT_WAIT: Duration = Duration::from_millis(20);

/// Starts `claude-mem maintain --checkpoint` for this data dir, unless one is running already;
/// returns whether one runs now, started or not.
pub fn checkpoint(config: &Config) -> bool {
    fsutil::is_locked(&config.checkpoint_lock())
        || command(&CHECKPOINT).is_some_and(|command| child::detached_briefly(command).is_ok())
}

/// Starts `claude-mem compress --auto` for this data dir, unless compression is paused (the
/// day's budget is spent, no model could be reached, it backs off after failures: one `stat`)
/// or one is running already. The caller has checked that compression is on and that items
/// wait.
pub fn compress(config: &Config) {
    if !crate::marks::compress_paused(config) && !fsutil::is_locked(&config.compress_lock()) {
        start(&["compress", "--auto"]);
    }
}

/// Starts `claude-mem maintain --team <project>`, which makes the digest of the project's team
/// notes that per-prompt recall reads (see `team::digest`), unless one is making it already.
pub fn team_digest(config: &Config, project: &str) {
    let lock = crate::team::digest::lock_path(config, project);
    if fsutil::our_dir(&config.team_dir()).is_ok() && !fsutil::is_locked(&lock) {
        start(&["maintain", "--team", project]);
    }
}

/// One that cannot start now is started by a later hook.
fn start(args: &[&str]) {
    if let Some(command) = command(args) {
        let _ = child::detached(command);
    }
}

/// This program with `args`. The environment is the hook's own, so the data dir (and the old
/// place an earlier release used) are the same for both.
fn command(args: &[&str]) -> Option<Command> {
    let mut command = Command::new(std::env::current_exe().ok()?);
    command.args(args);
    Some(command)
}
