//! claude-mem: entry point. Parses arguments, dispatches, and turns the outcome into an exit
//! code through `emit`. The hook path is matched before clap, so a hook can never end in a
//! usage error (exit 2 blocks Claude Code) and pays nothing for argument parsing.
//!
//! On Linux with glibc the C library calls [`main`] itself, without Rust's own start-up (glibc
//! hands the arguments to std before `main`; musl does not, so a musl build keeps it). That
//! start-up reads /proc/self/maps to find the main thread's stack guard (for its "has
//! overflowed its stack" message) and sets up a signal stack, 0.08 ms of every hook on the dev
//! machine (an empty static process took 1.30 ms with it, 1.22 without). What of it claude-mem
//! needs, [`main`] does. A stack overflow still ends the process, by SIGSEGV.

#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

mod agent;
mod browse;
mod child;
mod claude;
mod cli;
mod clock;
mod cmd;
mod compress;
mod config;
mod detach;
mod doctor;
mod emit;
mod fsutil;
mod given;
mod glob;
mod health;
mod hook;
mod incumbent;
mod log;
mod maintain;
mod marks;
mod mcp;
mod meaning;
mod notice;
mod ops;
mod page;
mod privacy;
mod project;
mod recall;
mod recorded;
mod render;
mod settings;
mod sharing;
mod spill;
mod standing;
mod store;
mod sync;
mod team;
mod text;
mod transcript;

use clap::Parser;

/// The process's entry on Linux: standard streams that exist, SIGPIPE ignored (a write to a
/// closed pipe is then an error [`emit`] handles), and a panic turned into exit 101, as Rust's
/// start-up does.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    standard_streams();
    // SAFETY: setting a signal's disposition to SIG_IGN, before any thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    match std::panic::catch_unwind(run) {
        Ok(code) => emit::exit(code),
        Err(_) => emit::exit(emit::PANICKED),
    }
}

/// Opens /dev/null on each of stdin, stdout and stderr that is closed, as Rust's start-up
/// does: otherwise the first file a run opens (the log, a spill file) would take its number,
/// and a hook's answer would be written into it.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
fn standard_streams() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll reads and writes the three entries of `fds`, which it is given the length of.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } < 0 {
        return;
    }
    for pollfd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
        // SAFETY: opening a path given as a NUL-terminated constant; the descriptor it returns
        // is the lowest free one, the closed stream's, and is kept open for the whole run.
        let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if opened != pollfd.fd && opened >= 0 {
            // SAFETY: closing the descriptor just opened, which nothing else holds.
            unsafe { libc::close(opened) };
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", not(test))))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run())
}

/// Parses the arguments, runs what they name, and gives the exit code.
fn run() -> u8 {
    let args: Vec<_> = std::env::args_os().collect();
    // The compressor's keeper of its model program, which it starts itself.
    #[cfg(target_os = "linux")]
    if args.get(1).is_some_and(|a| a == compress::guard::ARG) {
        // The exit code of the program it stands in for, passed on as it is.
        return compress::guard::run(&args[2..]);
    }
    // `hook --help` is a person asking; Claude Code runs `hook <name>` only.
    let help = matches!(&args[2.min(args.len())..], [one] if one == "--help" || one == "-h");
    if args.get(1).is_some_and(|a| a == "hook") && !help {
        return emit::hook(&hook::run(&args[2..]));
    }
    // The checkpoint a hook starts, straight to its work: whatever it does before it waits
    // for the hook to exit takes CPU the hook needs to finish (see `maintain::copy_back`).
    if args.len() == 3 && args[1..] == detach::CHECKPOINT {
        return emit::command(cmd::run(cli::Command::Maintain {
            auto: false,
            team: None,
            checkpoint: true,
        }));
    }
    match cli::Cli::try_parse_from(&args) {
        Ok(cli) => emit::command(cmd::run(cli.command)),
        Err(err) => emit::usage(err, &cli::command_path(&args)),
    }
}
