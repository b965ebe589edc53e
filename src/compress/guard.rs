//! The model program's keeper (Linux): a small process of our own binary between the
//! compressor and the model program, so that nothing the program starts outlives its call.
//!
//! A process group is not enough: a child may start a session of its own (`setsid`, a daemon's
//! double fork) and leave the group, and when the compressor is killed with SIGKILL nothing runs
//! in it to kill anything. So the keeper
//! - dies with the compressor's death signal turned into a SIGTERM it waits for (set before it
//!   runs: `prctl(PR_SET_PDEATHSIG)` in the compressor's spawn), as it does at the deadline,
//!   when the compressor sends it SIGTERM;
//! - is a child subreaper (`PR_SET_CHILD_SUBREAPER`): whatever the program's processes leave
//!   behind when they die is adopted by the keeper, whatever session or group it is in;
//! - runs the program in a process group of its own, which also dies with the keeper;
//! - when the program exits, or a SIGTERM comes, kills the program's group and every process it
//!   has adopted, again until none is left, then exits with the program's status.
//!
//! What still escapes: a process handed to another parent (a service manager's
//! `systemd-run`), and everything when the keeper itself is killed with SIGKILL (then only the
//! program's direct process follows it).

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group};

use crate::child::{self, Ties};

/// The first argument that makes `claude-mem` the keeper: `claude-mem <ARG> PROGRAM ARGS...`.
pub const ARG: &str = "__keep-model";

/// The keeper's start as the compressor makes it: `/proc/self/exe` (this very binary, even if
/// the file was replaced since), and `None` when that cannot be had (no /proc): the program
/// then runs as it is. The compressor starts it with its death signal (see `process`).
pub fn around(program: &Command) -> Option<Command> {
    let exe = std::path::Path::new("/proc/self/exe");
    exe.exists().then_some(())?;
    let mut keeper = Command::new(exe);
    keeper
        .arg(ARG)
        .arg(program.get_program())
        .args(program.get_args());
    for (key, value) in program.get_envs() {
        match value {
            Some(value) => keeper.env(key, value),
            None => keeper.env_remove(key),
        };
    }
    if let Some(dir) = program.get_current_dir() {
        keeper.current_dir(dir);
    }
    Some(keeper)
}

/// Runs the keeper: `args` are the program and its arguments. Returns the program's exit code
/// (128 + the signal that killed it).
pub fn run(args: &[OsString]) -> u8 {
    let Some((program, args)) = args.split_first() else {
        return 2;
    };
    let signals = block_signals();
    // Any value but none sets the flag.
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    let mut command = Command::new(program);
    command.args(args);
    // The program must not inherit the mask that keeps our signals for `sigwait`.
    let ties = Ties {
        parent_death: Some(child::Signal::Kill),
        unblock_signals: true,
        ..Ties::default()
    };
    let Ok(program) = child::spawn(command, ties) else {
        return 127;
    };
    let pid = Pid::from_child(&program);
    let code = wait_for(pid, &signals);
    end_all(pid);
    code
}

/// The signals the keeper waits for, blocked so that none of them ends it before it has ended
/// the program: the program's end (SIGCHLD) and the request to stop.
fn block_signals() -> libc::sigset_t {
    // SAFETY: a local signal set, filled and installed as this (single-threaded) process's mask.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Waits until the program exits (its exit code) or a stop is asked for (143).
fn wait_for(program: Pid, signals: &libc::sigset_t) -> u8 {
    loop {
        if let Some(code) = reap(Some(program)) {
            return code;
        }
        let mut signal = 0;
        // SAFETY: waits for one of the signals of `signals`, a set `block_signals` filled,
        // writing the one that came into a local.
        unsafe {
            libc::sigwait(signals, &mut signal);
        }
        if signal != libc::SIGCHLD {
            return 128 + libc::SIGTERM as u8;
        }
    }
}

/// Reaps every child that has ended; the exit code of `program` if it was one of them.
fn reap(program: Option<Pid>) -> Option<u8> {
    let mut code = None;
    while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
        if Some(pid) == program {
            code = Some(match (status.exit_status(), status.terminating_signal()) {
                (Some(exit), _) => exit as u8,
                (None, signal) => 128u8.saturating_add(signal.unwrap_or(0) as u8),
            });
        }
    }
    code
}

/// Kills the program's group and every process the keeper has adopted (and the group each
/// leads), until it has no child left.
fn end_all(program: Pid) {
    // The group the program led (it was started with its own).
    let _ = kill_process_group(program, Signal::KILL);
    loop {
        for pid in children() {
            // A child of ours, and the group it leads if it leads one (no group has the id of
            // a live process that does not lead it).
            let _ = kill_process_group(pid, Signal::KILL);
            let _ = kill_process(pid, Signal::KILL);
        }
        reap(None);
        // A look without waiting: ECHILD once no child is left.
        if rustix::process::wait(WaitOptions::NOHANG).err() == Some(Errno::CHILD) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The processes whose parent is this one, from /proc.
fn children() -> Vec<Pid> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| Pid::from_raw(entry.file_name().to_str()?.parse().ok()?))
        .filter(|pid| {
            let pid = pid.as_raw_nonzero();
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // After the name in parentheses: the state, then the parent's pid.
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.split(' ').nth(1))
                    == Some(me.as_str())
            })
        })
        .collect()
}
