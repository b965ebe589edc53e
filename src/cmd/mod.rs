//! The cold commands, one file each. Each returns the text to print, or an error that `emit`
//! prints as one line with a non-zero exit.

mod install;
mod maintain;
mod queue;
mod uninstall;

use anyhow::Result;

use crate::cli::Command;

pub fn run(command: Command) -> Result<String> {
    match command {
        // Reached only through clap (e.g. `claude-mem hook` with no name): main runs hooks.
        Command::Hook { .. } => Ok(String::new()),
        Command::InstallHooks(args) => install::install(&args),
        Command::UninstallHooks(args) => uninstall::uninstall(&args),
        Command::Maintain => maintain::maintain(),
        Command::Queue(command) => queue::run(command),
    }
}
