//! `completions`: a shell's completion script for every command and flag, generated from the
//! same clap definitions as the help, so the two never disagree.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::emit::Report;

pub fn completions(shell: Shell) -> Report {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "claude-mem", &mut script);
    String::from_utf8_lossy(&script).into_owned().into()
}
