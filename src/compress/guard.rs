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
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// The first argument that makes `claude-mem` the keeper: `claude-mem <ARG> PROGRAM ARGS...`.
pub const ARG: &str = "__keep-model";

/// The keeper's start as the compressor makes it: `/proc/self/exe` (this very binary, even if
/// the file was replaced since), with the compressor's death signal set, and `None` when that
/// cannot be had (no /proc): the program then runs as it is.
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
    // SAFETY: getpid is async-signal-safe.
    let compressor = unsafe { libc::getpid() };
    // SAFETY: prctl and getppid only read and set flags of the calling (child) process.
    unsafe {
        keeper.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // The compressor died before the flag was set: nothing to keep.
            if libc::getppid() != compressor {
                return Err(io::Error::other("the compressor is gone"));
            }
            Ok(())
        });
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
    // SAFETY: sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    let mut command = Command::new(program);
    command.args(args).process_group(0);
    // SAFETY: only async-signal-safe calls on the child's own state.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let mut none = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        });
    }
    let Ok(child) = command.spawn() else {
        return 127;
    };
    let pid = child.id() as libc::pid_t;
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
fn wait_for(pid: libc::pid_t, signals: &libc::sigset_t) -> u8 {
    loop {
        if let Some(code) = reap(Some(pid)) {
            return code;
        }
        let mut signal = 0;
        // SAFETY: waits for one of the blocked signals of `signals`.
        unsafe {
            libc::sigwait(signals, &mut signal);
        }
        if signal != libc::SIGCHLD {
            return 128 + libc::SIGTERM as u8;
        }
    }
}

/// Reaps every child that has ended; the exit code of `program` if it was one of them.
fn reap(program: Option<libc::pid_t>) -> Option<u8> {
    let mut code = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own children, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return code;
        }
        if Some(pid) == program {
            code = Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status) as u8
            } else {
                128u8.saturating_add(libc::WTERMSIG(status) as u8)
            });
        }
    }
}

/// Kills the program's group and every process the keeper has adopted (and the group each
/// leads), until it has no child left.
fn end_all(program: libc::pid_t) {
    // SAFETY: signals the group the program led (it was started with its own).
    unsafe {
        libc::kill(-program, libc::SIGKILL);
    }
    loop {
        for pid in children() {
            // SAFETY: signals a child of ours, and the group it leads if it leads one (no
            // group has the id of a live process that does not lead it).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
            }
        }
        reap(None);
        // SAFETY: a non-blocking probe: ECHILD once no child is left.
        let left = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if left < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The processes whose parent is this one, from /proc.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // After the name in parentheses: the state, then the parent's pid.
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.split(' ').nth(1))
                    == Some(me.as_str())
            })
        })
        .collect()
}
