//! What starting, waiting for and signalling a child takes of the system: process groups,
//! sessions and signals on Unix (through rustix, safely, but for the one `pre_exec`), a pidfd
//! to wait on on Linux; elsewhere a child is only started and killed.

use std::process::{Child, Command};
use std::time::Duration;

use super::{Signal, Ties};

/// The longest sleep between two looks at a child that may have exited, where no pidfd tells.
const MOST_PAUSE: Duration = Duration::from_millis(20);

/// Puts the child in a process group (or a session) of its own and ties it to us as asked.
#[cfg(unix)]
pub fn prepare(command: &mut Command, ties: Ties) {
    use std::os::unix::process::CommandExt;
    if !ties.session {
        // Without a `pre_exec` std may start the child with posix_spawn, which sets the group.
        command.process_group(0);
    }
    if !(ties.session || ties.parent_death.is_some() || ties.unblock_signals) {
        return;
    }
    // Whom the child must find as its parent once tied to it.
    let parent = ties.parent_death.map(|_| rustix::process::getpid());
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are sound. It makes system calls on the child's own state
    // (setsid, prctl, getppid, sigprocmask), allocates nothing (its error is an errno) and
    // takes no lock; `parent` is a plain integer copied into it.
    unsafe {
        command.pre_exec(move || {
            if ties.session {
                // Cannot fail in a child that does not lead a group, as a forked one does not.
                let _ = rustix::process::setsid();
            }
            #[cfg(target_os = "linux")]
            if let Some(signal) = ties.parent_death {
                rustix::process::set_parent_process_death_signal(Some(to_rustix(signal)))?;
                // We died before the flag was set: there is nothing left to tie it to.
                if rustix::process::getppid() != parent {
                    return Err(rustix::io::Errno::SRCH.into());
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = parent;
            if ties.unblock_signals {
                let mut none = std::mem::zeroed::<libc::sigset_t>();
                libc::sigemptyset(&mut none);
                libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            }
            Ok(())
        });
    }
}

#[cfg(not(unix))]
pub fn prepare(_command: &mut Command, _ties: Ties) {}

/// Sends `signal` to the child alone. Only while it is not reaped: its pid is its own then.
#[cfg(unix)]
pub fn signal(child: &Child, signal: Signal) {
    let _ =
        rustix::process::kill_process(rustix::process::Pid::from_child(child), to_rustix(signal));
}

#[cfg(not(unix))]
pub fn signal(_child: &Child, _signal: Signal) {}

/// Sends `signal` to the process group the child leads (every child is started leading one).
/// Only while the child is not reaped: no other group can have its id then.
#[cfg(unix)]
pub fn signal_group(child: &Child, signal: Signal) {
    let group = rustix::process::Pid::from_child(child);
    let _ = rustix::process::kill_process_group(group, to_rustix(signal));
}

#[cfg(not(unix))]
pub fn signal_group(_child: &Child, _signal: Signal) {}

#[cfg(unix)]
fn to_rustix(signal: Signal) -> rustix::process::Signal {
    match signal {
        Signal::Term => rustix::process::Signal::TERM,
        Signal::Kill => rustix::process::Signal::KILL,
    }
}

/// "Text file busy": the program's file is open for writing (being replaced) right now.
#[cfg(unix)]
pub fn is_text_busy(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(rustix::io::Errno::TXTBSY.raw_os_error())
}

#[cfg(not(unix))]
pub fn is_text_busy(_err: &std::io::Error) -> bool {
    false
}

/// What tells that a child has exited: on Linux a pidfd, readable from its exit on.
pub struct Exit {
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl Exit {
    pub fn of(child: &Child) -> Exit {
        #[cfg(target_os = "linux")]
        {
            use rustix::process::{Pid, PidfdFlags, pidfd_open};
            // Linux before 5.3 has none: the wait then looks every few milliseconds.
            let pidfd = pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok();
            Exit { pidfd }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = child;
            Exit {}
        }
    }

    /// Sleeps until the child may have exited, `left` at most: on the pidfd, or for `pause`,
    /// which doubles each time up to [`MOST_PAUSE`] (a short child is seen at once, a long one
    /// costs few wake-ups).
    pub fn wait(&self, left: Duration, pause: &mut Duration) {
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = &self.pidfd {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
            if let Ok(timeout) = Timespec::try_from(left) {
                // Woken early (EINTR) or not, the caller looks again.
                let _ = poll(&mut fds, Some(&timeout));
                return;
            }
        }
        std::thread::sleep(left.min(*pause));
        *pause = (*pause * 2).min(MOST_PAUSE);
    }
}

/// Sleeps until the process that started this one has exited, `most` at most. Nothing when it
/// has already (this one has been adopted by init) or where no pidfd tells.
#[cfg(target_os = "linux")]
pub fn after_parent(most: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::process::{PidfdFlags, getppid, pidfd_open};
    let Some(parent) = getppid().filter(|pid| !pid.is_init()) else {
        return;
    };
    let (Ok(pidfd), Ok(timeout)) = (
        pidfd_open(parent, PidfdFlags::empty()),
        Timespec::try_from(most),
    ) else {
        return;
    };
    let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
    let _ = poll(&mut fds, Some(&timeout));
}

#[cfg(not(target_os = "linux"))]
pub fn after_parent(_most: Duration) {}
