//! Starting work a hook must not wait for (a large checkpoint, a backlog of spill files, the
//! compression of a session's items) in a process of its own: its own session and process
//! group, stdio closed, never waited for (see `child::detached`). At most one of each runs per
//! data dir: it holds a lock on a file there, which the kernel releases however it ends,
//! kill -9 included.

use std::process::Command;

use crate::config::Config;
use crate::{child, fsutil};

/// Starts `claude-mem maintain` for this data dir, unless one is running already.
pub fn maintain(config: &Config) {
    if !fsutil::is_locked(&config.maintain_lock()) {
        start(&["maintain", "--auto"]);
    }
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

fn start(args: &[&str]) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe);
    // The environment is the hook's own, so the data dir (and the old place an earlier
    // release used) are the same for both.
    command.args(args);
    // A process that cannot start now is started by a later hook.
    let _ = child::detached(command);
}
