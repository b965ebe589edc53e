//! The command line, as clap types only. Doc comments here are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Capture layer of a memory system for Claude Code: hooks that write each session's prompts
/// and tool calls straight into a local SQLite queue.
#[derive(Debug, Parser)]
#[command(name = "claude-mem", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a hook; Claude Code does this on its lifecycle events (one JSON event on stdin).
    ///
    /// Names: context (SessionStart), prompt (UserPromptSubmit), capture (PostToolUse,
    /// PostToolUseFailure), summary (Stop), cleanup (SessionEnd). A hook always exits 0.
    Hook {
        /// Which hook.
        name: String,
    },
    /// Register claude-mem's hooks in Claude Code's settings.json.
    ///
    /// The file is ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json when that is
    /// set, unless a flag names another. Everything else in it is kept; running this again
    /// changes nothing, and entries left by a binary that moved are pointed at this one.
    /// PostToolUseFailure is added only when `claude --version` (the `claude` on PATH, or the
    /// one $CLAUDE_MEM_CLAUDE_BIN names) is 2.1.101 or later: older versions ignore a whole
    /// settings file over an event they do not know.
    InstallHooks(SettingsArgs),
    /// Apply events waiting in the spill folder and shrink the WAL, now.
    ///
    /// The hooks start this on their own, detached, when there is more of either than a hook
    /// should spend time on (a backlog left by an outage, a WAL grown behind a long reader).
    /// Waits up to a minute for a reader to let go; does nothing while another one runs.
    Maintain,
    /// Remove claude-mem's hooks (and nothing else) from Claude Code's settings.json.
    ///
    /// Removes every handler whose command runs a program named claude-mem with `hook`, from
    /// whatever path, and the groups and events that this leaves empty. In a command line that
    /// chains ours with another command, only our part goes; a line it cannot take apart
    /// exactly is kept and reported.
    UninstallHooks(SettingsArgs),
}

/// Which settings file to change, and how.
#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// Use <DIR>/.claude/settings.json (DIR defaults to the current directory).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "settings")]
    pub project: Option<PathBuf>,
    /// Use .claude/settings.local.json of the project (current directory, or --project DIR).
    #[arg(long, conflicts_with = "settings")]
    pub local: bool,
    /// Use this settings file.
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}
