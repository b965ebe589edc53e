//! Runs the model program for one call: the digest on its stdin, its output read, a deadline,
//! and nothing it started left running afterwards, whether it answered, missed the deadline,
//! or the compressor was killed meanwhile.
//!
//! On Linux the program runs under its keeper (`guard`), which ends every process of it, those
//! that left its process group included, when the program exits, at the deadline (the
//! compressor asks it with SIGTERM) and when the compressor dies (even by SIGKILL). Elsewhere
//! the program leads a process group of its own, killed at the deadline: what it leaves
//! running when it exits, a process that starts a session of its own, and everything but the
//! program when the compressor is killed, outlive it there.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use super::model::Failure;

/// More than any answer needs; a larger output is cut (and will not parse).
const MAX_STDOUT: u64 = 16 << 20;
const MAX_STDERR: u64 = 64 << 10;
/// How long the keeper has to end the program's processes at the deadline before it is
/// killed itself.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long the output may stay open once the keeper has ended: a process that escaped it
/// and holds the output is not waited for.
const OUTPUT_GRACE: Duration = Duration::from_secs(5);

/// What a program that ended said.
pub struct Output {
    /// How it ended, for messages.
    pub status: String,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program` with `input` on its stdin until it ends or `timeout` passes.
pub fn run(program: Command, input: &str, timeout: Duration) -> Result<Output, Failure> {
    let (mut command, kept) = contained(program);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|err| Failure::Unavailable(format!("cannot start it: {err}")))?;
    let (stdout, stderr) = feed(&mut child, input);
    let status = wait(&mut child, timeout, kept)?;
    let output = |pipe: Receiver<String>| {
        let text = if kept {
            pipe.recv_timeout(OUTPUT_GRACE).ok()
        } else {
            pipe.recv().ok()
        };
        text.ok_or_else(|| {
            Failure::Broken(format!(
                "it exited with {status}, but a process it started still holds its output"
            ))
        })
    };
    Ok(Output {
        stdout: output(stdout)?,
        stderr: output(stderr)?,
        status,
    })
}

/// The program under its keeper where there is one (then `true`), else as it is; either way
/// in a process group of its own.
fn contained(program: Command) -> (Command, bool) {
    #[cfg(target_os = "linux")]
    if let Some(mut keeper) = super::guard::around(&program) {
        std::os::unix::process::CommandExt::process_group(&mut keeper, 0);
        return (keeper, true);
    }
    let mut program = program;
    own_group(&mut program);
    (program, false)
}

/// Writes the input to the child's stdin and reads its output, each in a thread so that
/// neither pipe can fill up and stall the other; each output comes whole once its pipe closes.
fn feed(child: &mut Child, input: &str) -> (Receiver<String>, Receiver<String>) {
    let mut stdin = child.stdin.take().expect("stdin was piped");
    let input = input.to_string();
    thread::spawn(move || {
        // A program that stops reading early is its own business.
        let _ = stdin.write_all(input.as_bytes());
    });
    let read = |pipe: Box<dyn Read + Send>, cap: u64| {
        let (send, receive) = mpsc::channel();
        thread::spawn(move || {
            let _ = send.send(read_capped(pipe, cap));
        });
        receive
    };
    let stdout = child.stdout.take().expect("stdout was piped");
    let stderr = child.stderr.take().expect("stderr was piped");
    (
        read(Box::new(stdout), MAX_STDOUT),
        read(Box::new(stderr), MAX_STDERR),
    )
}

fn read_capped(pipe: impl Read, cap: u64) -> String {
    let mut bytes = Vec::new();
    let mut pipe = pipe.take(cap);
    let _ = pipe.read_to_end(&mut bytes);
    // Drain the rest so that the child never blocks on a full pipe.
    let _ = std::io::copy(&mut pipe.into_inner(), &mut std::io::sink());
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Waits for the child until `timeout`; past it, stops it and all it started.
fn wait(child: &mut Child, timeout: Duration, kept: bool) -> Result<String, Failure> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status.to_string()),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                if !(kept && stopped(child)) {
                    kill_group(child);
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(Failure::Timeout);
            }
            Err(err) => return Err(Failure::Broken(format!("cannot wait for it: {err}"))),
        }
    }
}

/// Asks the keeper to end the program (SIGTERM); whether it did, within [`STOP_GRACE`].
#[cfg(unix)]
fn stopped(child: &mut Child) -> bool {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: signals our own child, not yet reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let until = Instant::now() + STOP_GRACE;
    while Instant::now() < until {
        if !matches!(child.try_wait(), Ok(None)) {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    false
}

#[cfg(not(unix))]
fn stopped(_child: &mut Child) -> bool {
    false
}

/// The child leads a process group of its own, so that what it started in it can be killed
/// with it; on Linux the child is killed when the compressor dies.
#[cfg(unix)]
fn own_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of the calling (child) process.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn own_group(_command: &mut Command) {}

/// Kills the process group the child leads (it was started with one of its own). Only while
/// the child is not reaped: its pid, and so its group's id, cannot be anyone else's then.
#[cfg(unix)]
fn kill_group(child: &Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: signals the process group the child leads.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_child: &Child) {}
