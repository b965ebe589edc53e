//! Reading the event from stdin without ever waiting on it for long.
//!
//! Claude Code writes one JSON object and closes the pipe. Anything else must not hold Claude
//! Code up: a pipe left open after a complete event, an endless stream (`/dev/zero`), a stdin
//! that never sends anything, a terminal (a person typing `claude-mem hook context`). So the
//! read has an overall deadline, stops keeping bytes at a size limit, gives up at once on input
//! that cannot be an event, and when the writer pauses, looks whether a whole object has
//! already arrived.

use std::io::{self, IsTerminal};
use std::time::{Duration, Instant};

/// What stdin held.
pub enum Stdin {
    /// The bytes of the event (not yet parsed).
    Event(Vec<u8>),
    /// A person at a terminal: there is no event, and waiting for one would hang.
    Terminal,
}

/// Why no event could be read.
#[derive(Debug)]
pub enum Unread {
    Io(io::Error),
    /// The first byte that is not white space is not `{`: not an event (and possibly endless).
    NotAnObject,
    TooLarge(u64),
    /// The deadline passed before the event was complete.
    Incomplete(usize),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Io(err) => write!(f, "{err}"),
            Unread::NotAnObject => f.write_str("the input is not a JSON event object"),
            Unread::TooLarge(limit) => {
                write!(
                    f,
                    "the event is larger than {limit} bytes, the most a hook reads"
                )
            }
            Unread::Incomplete(bytes) => write!(
                f,
                "stdin sent {bytes} bytes but no complete event within {} s",
                DEADLINE.as_secs()
            ),
        }
    }
}

/// However stdin behaves, reading it ends by then.
pub const DEADLINE: Duration = Duration::from_secs(3);
/// A writer that pauses this long may be done without closing the pipe: see if the event is
/// whole.
#[cfg(unix)]
const IDLE: Duration = Duration::from_millis(25);
#[cfg(unix)]
const CHUNK: usize = 64 * 1024;

/// Reads one event, at most `limit` bytes of it, within [`DEADLINE`].
pub fn read(limit: u64) -> Result<Stdin, Unread> {
    if io::stdin().is_terminal() {
        return Ok(Stdin::Terminal);
    }
    let deadline = Instant::now() + DEADLINE;
    read_until(limit, deadline).map(Stdin::Event)
}

/// Reads and discards stdin until its end or the deadline, so that Claude Code's write never
/// meets a closed pipe; never waits on a terminal.
pub fn drain() {
    if io::stdin().is_terminal() {
        return;
    }
    let _ = discard_until(Instant::now() + DEADLINE);
}

#[cfg(unix)]
fn read_until(limit: u64, deadline: Instant) -> Result<Vec<u8>, Unread> {
    let mut input = Vec::with_capacity(CHUNK);
    loop {
        match wait_readable(deadline) {
            Readiness::Ready => {}
            Readiness::Idle if is_whole_object(&input) => return Ok(input),
            Readiness::Idle => continue,
            Readiness::TimedOut if is_whole_object(&input) => return Ok(input),
            Readiness::TimedOut => return Err(Unread::Incomplete(input.len())),
        }
        let before = input.len();
        // Grown only when little room is left: a reserve on every read would copy the buffer
        // into a new allocation each time (as much work as reading a 1 KB event, measured).
        if input.capacity() - input.len() < CHUNK / 4 {
            input.reserve(CHUNK);
        }
        match read_some(&mut input) {
            Ok(0) => return Ok(input),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => continue,
            Err(err) => return Err(Unread::Io(err)),
        }
        if before == 0 || input[..before].iter().all(u8::is_ascii_whitespace) {
            let first = input.iter().find(|b| !b.is_ascii_whitespace());
            if first.is_some_and(|b| *b != b'{') {
                return Err(Unread::NotAnObject);
            }
        }
        if input.len() as u64 > limit {
            let _ = discard_until(deadline);
            return Err(Unread::TooLarge(limit));
        }
    }
}

#[cfg(not(unix))]
fn read_until(limit: u64, _deadline: Instant) -> Result<Vec<u8>, Unread> {
    use std::io::Read;
    let mut input = Vec::with_capacity(16 * 1024);
    let mut stdin = io::stdin().lock();
    (&mut stdin)
        .take(limit + 1)
        .read_to_end(&mut input)
        .map_err(Unread::Io)?;
    if input.len() as u64 > limit {
        return Err(Unread::TooLarge(limit));
    }
    Ok(input)
}

#[cfg(unix)]
fn discard_until(deadline: Instant) -> io::Result<()> {
    let mut sink = Vec::with_capacity(CHUNK);
    loop {
        match wait_readable(deadline) {
            Readiness::Ready => {}
            Readiness::Idle => continue,
            Readiness::TimedOut => return Ok(()),
        }
        sink.clear();
        match read_some(&mut sink) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
            Err(err) => return Err(err),
        }
    }
}

#[cfg(not(unix))]
fn discard_until(_deadline: Instant) -> io::Result<()> {
    io::copy(&mut io::stdin().lock(), &mut io::sink()).map(drop)
}

#[cfg(unix)]
enum Readiness {
    Ready,
    /// Nothing arrived for [`IDLE`].
    Idle,
    TimedOut,
}

/// Waits until stdin has bytes (or its end) to read, the writer pauses, or the deadline.
#[cfg(unix)]
fn wait_readable(deadline: Instant) -> Readiness {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Readiness::TimedOut;
    }
    let wait = left.min(IDLE);
    let stdin = io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    // At most IDLE, well under what a timespec holds.
    let timeout = Timespec::try_from(wait).unwrap_or_default();
    match poll(&mut fds, Some(&timeout)) {
        Ok(0) if wait == left => Readiness::TimedOut,
        Ok(0) => Readiness::Idle,
        // An error, a hang-up or a closed descriptor: the read says which.
        _ => Readiness::Ready,
    }
}

/// One `read(2)` into the spare capacity of `buf` (which has some), without std's buffering
/// (which would hide bytes from `poll`).
#[cfg(unix)]
fn read_some(buf: &mut Vec<u8>) -> io::Result<usize> {
    Ok(rustix::io::read(
        io::stdin(),
        rustix::buffer::spare_capacity(buf),
    )?)
}

/// Whether `input` holds a whole JSON object: its braces close, outside strings. Only looked at
/// when the writer pauses, never on the way of an ordinary read.
fn is_whole_object(input: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut started = false;
    for &b in input {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                started = true;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return started;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_objects_are_told_from_parts() {
        assert!(is_whole_object(br#" {"a":"}{\"}","b":[1,{"c":2}]} "#));
        assert!(!is_whole_object(br#"{"a":"}"#));
        assert!(!is_whole_object(br#"{"a":[1,2"#));
        assert!(!is_whole_object(b""));
        assert!(!is_whole_object(b"   "));
    }
}
