//! `completions`: a shell's completion script for every command and flag, generated from the
//! same clap definitions as the help, so the two never disagree.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::emit::Report;

pub fn completions(shell: Shell) -> Report {
    // Each command's arguments are made when it runs (`cli::Command`), so that clap mirrors
    // under `help` the commands as they were before they were made: their own commands (`sync
    // key`) missing. So the commands are made first, in a tree built whole, and put in a new
    // one, whose `help` mirrors them made.
    let mut made = Cli::command();
    made.build();
    let mut command = Cli::command()
        .mut_subcommands(|sub| made.find_subcommand(sub.get_name()).cloned().unwrap_or(sub));
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "claude-mem", &mut script);
    String::from_utf8_lossy(&script).into_owned().into()
}
