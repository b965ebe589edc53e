//! claude-mem: entry point. Parses arguments, dispatches, and turns the outcome into an exit
//! code through `emit`. The hook path is matched before clap, so a hook can never end in a
//! usage error (exit 2 blocks Claude Code) and pays nothing for argument parsing.

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

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    // The compressor's keeper of its model program, which it starts itself.
    #[cfg(target_os = "linux")]
    if args.get(1).is_some_and(|a| a == compress::guard::ARG) {
        return emit::passed_on(compress::guard::run(&args[2..]));
    }
    // `hook --help` is a person asking; Claude Code runs `hook <name>` only.
    let help = matches!(&args[2.min(args.len())..], [one] if one == "--help" || one == "-h");
    if args.get(1).is_some_and(|a| a == "hook") && !help {
        return emit::hook(&hook::run(&args[2..]));
    }
    match cli::Cli::try_parse_from(&args) {
        Ok(cli) => emit::command(cmd::run(cli.command)),
        Err(err) => emit::usage(err, &cli::command_path(&args)),
    }
}
