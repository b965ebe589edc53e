//! Running another program: `git` for sync, `claude` to ask it something, the compressor's
//! model program (and its keeper), and the `maintain` and `compress` processes a hook starts
//! and leaves running. One place decides how a child starts, reads what it writes and ends it,
//! so that none of them can hold us up for good or outlive what it was started for:
//! - a child leads a process group of its own (one that must outlive us, a session of its own),
//!   so that whatever it starts in turn is killed with it;
//! - its stdout and stderr are read at once, each on a thread, so that neither pipe fills up
//!   and stalls it, and each only up to a cap (the rest is read and dropped), so that a child
//!   that writes without end cannot fill our memory; its input is written on a thread too;
//! - it has a deadline, past which it and its group are killed, and so it is when its handle is
//!   dropped before it ended (an early return, a panic).
//!
//! On Linux the wait sleeps on a pidfd, which wakes the moment the child exits; elsewhere it
//! looks every few milliseconds.

use std::io::{self, Read, Write};
use std::process::{self, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

mod os;

/// How long the output may stay open once the child has ended: a process it started that
/// still holds a pipe is not waited for.
const OUTPUT_GRACE: Duration = Duration::from_secs(5);

/// A signal we send a child, or have it sent when we die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Term,
    Kill,
}

/// How a child is tied to us, beyond the process group of its own every child has. Unix only:
/// elsewhere a child is started as it is.
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(not(unix), allow(dead_code))]
pub struct Ties {
    /// A session of its own instead, for a child that outlives us: no signal meant for our
    /// terminal, session or group reaches it.
    pub session: bool,
    /// Linux: the signal the child gets when the thread that started it ends
    /// (`PR_SET_PDEATHSIG`), however it ends; if we are gone before it is set, the child does
    /// not start.
    pub parent_death: Option<Signal>,
    /// The child starts with no signal blocked. A child inherits its parent's signal mask
    /// across exec (std does not reset it): a parent that blocks the signals it waits for
    /// (the model's keeper) must ask for this.
    pub unblock_signals: bool,
}

/// The child's stdio.
#[derive(Debug, Default)]
pub struct Pipes {
    /// Written to its stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub input: Option<Vec<u8>>,
    /// Kept of its stdout, in bytes; `None`: stdout is `/dev/null`.
    pub stdout: Option<usize>,
    /// Kept of its stderr, in bytes; `None`: stderr is `/dev/null`.
    pub stderr: Option<usize>,
}

/// What a child that ended wrote.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Stdout went past its cap: what came after was read and dropped (stderr, which says
    /// what went wrong, is cut without telling).
    pub cut: bool,
}

/// Why a child gave no output.
#[derive(Debug)]
pub enum Failed {
    /// It could not be started.
    Start(io::Error),
    /// It was still running at the deadline: it and its group were killed.
    Timeout,
    /// Waiting for it failed: it and its group were killed.
    Wait(io::Error),
    /// It ended with this status, but a process it started still holds its output.
    Held(ExitStatus),
}

/// Runs `command` until it ends or `timeout` passes, in a process group of its own, with its
/// stdio as `pipes` says. At the deadline it and its group are killed.
pub fn run(command: Command, pipes: Pipes, timeout: Duration) -> Result<Output, Failed> {
    let mut child = Child::start(command, pipes, Ties::default()).map_err(Failed::Start)?;
    match child.wait_until(Instant::now() + timeout) {
        Ok(Some(status)) => child
            .output(status, OUTPUT_GRACE)
            .ok_or(Failed::Held(status)),
        Ok(None) => {
            child.kill();
            Err(Failed::Timeout)
        }
        Err(err) => Err(Failed::Wait(err)),
    }
}

/// Starts `command` in a session of its own with its stdio closed (Claude Code waits for a
/// hook's pipes to close, so an inherited one would hold it up), and leaves it running: it is
/// never waited for nor killed. What a hook starts this way must not cost the hook: one fork
/// and exec, nothing more.
pub fn detached(command: Command) -> io::Result<()> {
    let ties = Ties {
        session: true,
        ..Ties::default()
    };
    leave_running(command, ties)
}

/// For a process a hook started: lets the hook finish first, waiting for it to exit (at most
/// `most`). A child starts on the CPU of the hook that started it, and the kernel let it run
/// there a whole time slice while the hook, woken as the child's program loaded, waited its
/// turn with the other CPU idle: 0.85 ms once in four checkpoints (`perf sched`, 2 cores), the
/// slowest twentieth of the prompts with recall. What the child does before it waits is then
/// only the start of its program and taking its lock.
pub fn after_parent(most: Duration) {
    os::after_parent(most);
}

/// [`detached`] for a child that lives a moment (a checkpoint, whose process exits in
/// milliseconds unless readers are in its way): in a process group of its own rather than a
/// session, which lets std start it with `posix_spawn` (the parent's pages are not copied:
/// 0.1 to 0.2 ms less for the hook than a fork). No signal meant for our terminal or our
/// group reaches it either.
pub fn detached_briefly(command: Command) -> io::Result<()> {
    leave_running(command, Ties::default())
}

fn leave_running(mut command: Command, ties: Ties) -> io::Result<()> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    spawn(command, ties).map(drop)
}

/// Starts `command` in a process group of its own (or a session) with these ties, its stdio as
/// the command says, and hands back std's handle: for a parent that reaps its children itself
/// (the model's keeper). Dropping the handle neither waits for nor kills the child.
pub fn spawn(mut command: Command, ties: Ties) -> io::Result<process::Child> {
    os::prepare(&mut command, ties);
    command.spawn()
}

/// A running child, killed with its group if dropped before it ended.
pub struct Child {
    process: process::Child,
    exit: os::Exit,
    stdout: Option<Receiver<Captured>>,
    stderr: Option<Receiver<Captured>>,
    /// Reaped: its pid (and so its group's id) may be anyone's now, and is never signalled.
    reaped: bool,
}

impl Child {
    /// Starts `command` in a process group of its own (see [`Ties`] for more), its stdio as
    /// `pipes` says, the input written and the outputs read on threads of their own.
    pub fn start(mut command: Command, pipes: Pipes, ties: Ties) -> io::Result<Child> {
        let piped = |wanted: bool| {
            if wanted {
                Stdio::piped()
            } else {
                Stdio::null()
            }
        };
        command
            .stdin(piped(pipes.input.is_some()))
            .stdout(piped(pipes.stdout.is_some()))
            .stderr(piped(pipes.stderr.is_some()));
        os::prepare(&mut command, ties);
        let process = spawn_retrying(&mut command)?;
        let mut child = Child {
            exit: os::Exit::of(&process),
            process,
            stdout: None,
            stderr: None,
            reaped: false,
        };
        // From here on an error drops `child`, which kills it.
        if let (Some(input), Some(mut stdin)) = (pipes.input, child.process.stdin.take()) {
            thread::Builder::new().spawn(move || {
                // A child that stops reading early is its own business.
                let _ = stdin.write_all(&input);
            })?;
        }
        if let (Some(cap), Some(pipe)) = (pipes.stdout, child.process.stdout.take()) {
            child.stdout = Some(read(pipe, cap)?);
        }
        if let (Some(cap), Some(pipe)) = (pipes.stderr, child.process.stderr.take()) {
            child.stderr = Some(read(pipe, cap)?);
        }
        Ok(child)
    }

    /// Waits until the child exits (its status) or `deadline` passes (`None`: still running).
    pub fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(status) = self.process.try_wait()? {
                self.reaped = true;
                return Ok(Some(status));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.exit.wait(left, &mut pause);
        }
    }

    /// Asks the child itself, not its group, to end (SIGTERM); whether it did within `grace`.
    /// For a child that ends its own processes when asked (the model's keeper).
    pub fn terminate(&mut self, grace: Duration) -> bool {
        if !self.reaped {
            os::signal(&self.process, Signal::Term);
        }
        !matches!(self.wait_until(Instant::now() + grace), Ok(None))
    }

    /// Kills the child's process group and the child (in case it left the group), and reaps it.
    pub fn kill(&mut self) {
        if self.reaped {
            return;
        }
        os::signal_group(&self.process, Signal::Kill);
        let _ = self.process.kill();
        let _ = self.process.wait();
        self.reaped = true;
    }

    /// What the child that ended with `status` wrote: each output once its pipe closes, which a
    /// process it started and that still holds it may delay; that is waited for `grace` at most
    /// (then `None`).
    pub fn output(mut self, status: ExitStatus, grace: Duration) -> Option<Output> {
        let until = Instant::now() + grace;
        let take = |pipe: Option<Receiver<Captured>>| match pipe {
            None => Some(Captured::default()),
            Some(pipe) => pipe
                .recv_timeout(until.saturating_duration_since(Instant::now()))
                .ok(),
        };
        let stdout = take(self.stdout.take())?;
        let stderr = take(self.stderr.take())?;
        Some(Output {
            status,
            cut: stdout.cut,
            stdout: stdout.bytes,
            stderr: stderr.bytes,
        })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts the command. A program being replaced (an update in progress) refuses to start for a
/// moment with "Text file busy": that is worth two more tries, not a failure.
fn spawn_retrying(command: &mut Command) -> io::Result<process::Child> {
    let mut tries = 0;
    loop {
        match command.spawn() {
            Err(err) if os::is_text_busy(&err) && tries < 2 => {
                tries += 1;
                thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// What was kept of one output.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    cut: bool,
}

/// Reads `pipe` to its end on a thread, keeping its first `cap` bytes; they come whole once the
/// pipe closes.
fn read(pipe: impl Read + Send + 'static, cap: usize) -> io::Result<Receiver<Captured>> {
    let (send, receive) = mpsc::channel();
    thread::Builder::new().spawn(move || {
        let mut pipe = pipe;
        let mut bytes = Vec::new();
        let _ = (&mut pipe).take(cap as u64).read_to_end(&mut bytes);
        // Read to its end so that the child never blocks on a full pipe.
        let rest = io::copy(&mut pipe, &mut io::sink()).unwrap_or(0);
        let _ = send.send(Captured {
            bytes,
            cut: rest > 0,
        });
    })?;
    Ok(receive)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::Path;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    /// This test's parent (cargo, or whoever runs it) outlives it: the wait lasts as long as
    /// asked, no less, and ends then.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_waits_for_its_parent_as_long_as_asked() {
        let started = Instant::now();
        after_parent(Duration::from_millis(60));
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(60) && waited < Duration::from_secs(5),
            "waited {waited:?}"
        );
    }

    #[test]
    fn input_goes_in_and_both_outputs_come_back_each_up_to_its_cap() {
        let pipes = |stdout| Pipes {
            input: Some(b"hello".to_vec()),
            stdout: Some(stdout),
            stderr: Some(3),
        };
        let script = "cat; echo oops >&2";
        let out = run(sh(script), pipes(64), Duration::from_secs(10)).unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr, b"oop");
        assert!(!out.cut);
        let out = run(sh(script), pipes(4), Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"hell");
        assert!(out.cut);
    }

    #[test]
    fn a_child_that_writes_without_end_is_cut_and_not_waited_for_past_its_deadline() {
        let pipes = Pipes {
            stdout: Some(1 << 10),
            ..Pipes::default()
        };
        let started = Instant::now();
        let failed = run(sh("yes"), pipes, Duration::from_millis(300)).unwrap_err();
        assert!(matches!(failed, Failed::Timeout), "{failed:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn at_the_deadline_what_the_child_started_in_its_group_is_killed_too() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > '{}'; wait", pid.display());
        let failed = run(sh(&script), Pipes::default(), Duration::from_millis(500)).unwrap_err();
        assert!(matches!(failed, Failed::Timeout), "{failed:?}");
        let pid: i32 = std::fs::read_to_string(&pid)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Killed, then reaped by init: gone within a moment.
        let gone = (0..200).any(|_| {
            thread::sleep(Duration::from_millis(10));
            !Path::new(&format!("/proc/{pid}")).exists() || zombie(pid)
        });
        if !gone {
            // Not left behind for the rest of the run.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        assert!(gone, "the grandchild {pid} survived its group's kill");
    }

    /// Killed but not yet reaped by whoever adopted it.
    fn zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, r)| r.starts_with('Z'))
        })
    }

    #[test]
    fn a_child_dropped_before_it_ended_is_killed() {
        let mut child = Child::start(sh("sleep 300"), Pipes::default(), Ties::default()).unwrap();
        let pid = child.process.id() as i32;
        assert!(matches!(child.wait_until(Instant::now()), Ok(None)));
        drop(child);
        assert!(!Path::new(&format!("/proc/{pid}")).exists() || zombie(pid));
    }

    #[test]
    fn a_child_that_ends_but_leaves_its_output_held_is_not_waited_for_past_the_grace() {
        let mut child = Child::start(
            sh("sleep 2 & exit 3"),
            Pipes {
                stdout: Some(16),
                ..Pipes::default()
            },
            Ties::default(),
        )
        .unwrap();
        let status = child.wait_until(Instant::now() + Duration::from_secs(10));
        let status = status.unwrap().expect("sh exits at once");
        assert_eq!(status.code(), Some(3));
        assert!(child.output(status, Duration::from_millis(100)).is_none());
    }
}
