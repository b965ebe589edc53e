//! Waiting for what a test can see happen, never for a length of time: a condition polled
//! until a generous deadline, a sandbox's detached processes found by their environment, a
//! process seen asleep in a system call, a file seen opened or changed. A fixed sleep passes
//! on a fast machine and fails (or, worse, passes for the wrong reason) on a slow one.

use std::fmt::Display;
use std::io;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
use rustix::fs::inotify;

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `done` until it holds; fails the test, naming `what`, when it has not after `limit`.
pub fn wait_until(limit: Duration, what: impl Display, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not after {limit:?}");
        std::thread::sleep(POLL);
    }
}

/// Waits for `child` at most `limit`; kills it on overrun and answers `None`.
pub fn wait_or_kill(child: &mut Child, limit: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            child.kill()?;
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// The pids of the running processes `claude-mem <command> …` whose environment holds
/// `HOME=<home>`: each test has a HOME of its own, so these are the processes its hooks
/// started detached (`maintain`, `compress`), which no handle of the test's reaches. A
/// zombie has ended and is not counted (its environment can no longer be read).
#[cfg(target_os = "linux")]
pub fn processes_of(home: &Path, command: &str) -> Vec<u32> {
    let marker = format!("HOME={}", home.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let proc = Path::new("/proc").join(pid.to_string());
            let cmdline = std::fs::read(proc.join("cmdline")).unwrap_or_default();
            let mut args = cmdline.split(|b| *b == 0);
            let ours = args
                .next()
                .is_some_and(|exe| exe == b"claude-mem" || exe.ends_with(b"/claude-mem"));
            ours && args.next() == Some(command.as_bytes())
                && std::fs::read(proc.join("environ"))
                    .unwrap_or_default()
                    .split(|b| *b == 0)
                    .any(|var| var == marker.as_slice())
        })
        .collect()
}

/// Whether process `pid` is asleep in `nanosleep` or `clock_nanosleep` right now (Linux:
/// `/proc/<pid>/syscall`, readable for a child of the test process): a process waiting
/// for a lock by looking again every few milliseconds spends most of its time there.
#[cfg(target_os = "linux")]
pub fn asleep(pid: u32) -> bool {
    let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    let number = text.split_whitespace().next().and_then(|n| n.parse().ok());
    number == Some(libc::SYS_nanosleep) || number == Some(libc::SYS_clock_nanosleep)
}

/// Counts what happens to a file, or in a directory (Linux: inotify), to see that a process
/// has reached the point where it opens or changes it, however long that took.
#[cfg(target_os = "linux")]
pub struct Watch {
    fd: std::os::fd::OwnedFd,
    seen: std::cell::Cell<usize>,
}

#[cfg(target_os = "linux")]
impl Watch {
    /// The times `path` is opened.
    pub fn opens(path: &Path) -> Watch {
        Watch::of(path, inotify::WatchFlags::OPEN)
    }

    /// Everything done to `dir` and the files in it: opened, read, written, closed, created,
    /// renamed, deleted.
    pub fn everything_in(dir: &Path) -> Watch {
        Watch::of(dir, inotify::WatchFlags::ALL_EVENTS)
    }

    fn of(path: &Path, mask: inotify::WatchFlags) -> Watch {
        let fd = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)
            .unwrap_or_else(|e| panic!("inotify: {e}"));
        inotify::add_watch(&fd, path, mask)
            .unwrap_or_else(|e| panic!("watch {}: {e}", path.display()));
        Watch {
            fd,
            seen: std::cell::Cell::new(0),
        }
    }

    /// The events seen so far, waiting up to a millisecond for the next.
    pub fn seen(&self) -> usize {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let a_millisecond = Timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // Whether anything came or not, what is there is read below, without waiting.
        let _ = poll(
            &mut [PollFd::new(&self.fd, PollFlags::IN)],
            Some(&a_millisecond),
        );
        let mut buf = [std::mem::MaybeUninit::uninit(); 4096];
        let mut events = inotify::Reader::new(&self.fd, &mut buf);
        // Until the queue is empty (EAGAIN: the descriptor does not block).
        while events.next().is_ok() {
            self.seen.set(self.seen.get() + 1);
        }
        self.seen.get()
    }
}
