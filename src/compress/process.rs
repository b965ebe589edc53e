//! Runs the model program for one call: the digest on its stdin, its output read, a deadline,
//! and nothing it started left running afterwards, whether it answered, missed the deadline,
//! or the compressor was killed meanwhile.
//!
//! On Linux the program runs under its keeper (`guard`), which ends every process of it, those
//! that left its process group included, when the program exits, at the deadline (the
//! compressor asks it with SIGTERM) and when the compressor dies (even by SIGKILL). Elsewhere
//! the program leads a process group of its own, killed at the deadline: what it leaves
//! running when it exits, a process that starts a session of its own, and everything but the
//! program when the compressor is killed, outlive it there. Starting, reading and killing are
//! `child`'s.

use std::process::Command;
use std::time::{Duration, Instant};

use super::model::Failure;
use crate::child::{Child, Pipes, Signal, Ties};

/// More than any answer needs; a larger output is cut (and will not parse).
const MAX_STDOUT: usize = 16 << 20;
const MAX_STDERR: usize = 64 << 10;
/// How long the keeper has to end the program's processes at the deadline before it is
/// killed itself.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long the output may stay open once the program has ended: a process that escaped the
/// keeper and holds the output is not waited for.
const OUTPUT_GRACE: Duration = Duration::from_secs(5);

/// What a program that ended said.
pub struct Output {
    /// How it ended, for messages.
    pub status: String,
    /// Its exit code, when it exited rather than being killed.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program` with `input` on its stdin until it ends or `timeout` passes.
pub fn run(program: Command, input: &str, timeout: Duration) -> Result<Output, Failure> {
    let (command, kept) = contained(program);
    let pipes = Pipes {
        input: Some(input.as_bytes().to_vec()),
        stdout: Some(MAX_STDOUT),
        stderr: Some(MAX_STDERR),
    };
    // The keeper dies with the compressor as a SIGTERM it handles (it then ends the program's
    // processes); a program without one, at once.
    let ties = Ties {
        parent_death: Some(if kept { Signal::Term } else { Signal::Kill }),
        ..Ties::default()
    };
    let mut child = Child::start(command, pipes, ties)
        .map_err(|err| Failure::Unavailable(format!("cannot start it: {err}")))?;
    let status = match child.wait_until(Instant::now() + timeout) {
        Ok(Some(status)) => status,
        Ok(None) => {
            if !(kept && child.terminate(STOP_GRACE)) {
                child.kill();
            }
            return Err(Failure::Timeout);
        }
        Err(err) => return Err(Failure::Broken(format!("cannot wait for it: {err}"))),
    };
    let out = child.output(status, OUTPUT_GRACE).ok_or_else(|| {
        Failure::Broken(format!(
            "it exited with {status}, but a process it started still holds its output"
        ))
    })?;
    Ok(Output {
        status: status.to_string(),
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The program under its keeper where there is one (then `true`), else as it is.
fn contained(program: Command) -> (Command, bool) {
    #[cfg(target_os = "linux")]
    if let Some(keeper) = super::guard::around(&program) {
        return (keeper, true);
    }
    (program, false)
}
