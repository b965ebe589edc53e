//! `install-hooks`: registers this binary's hooks in a Claude Code settings file, by absolute
//! path, merging into whatever the file already holds; and its MCP server with Claude Code.

use std::path::Path;

use anyhow::Result;

use crate::agent::Agent;
use crate::claude::{CLAUDE_BIN_VAR, ClaudeCode};
use crate::cli::SettingsArgs;
use crate::config::Config;
use crate::incumbent;
use crate::render;
use crate::settings::agents::{self, FileEdit};
use crate::settings::given_back::Edit;
use crate::settings::mcp;
use crate::settings::merge::{Change, Registration, Status};
use crate::settings::ours::{self, Registered};
use crate::settings::{Outcome, Written, settings_path};
use crate::store::layout::{self, Settled};

/// The longest line install-hooks prints, but for a command to copy, which stays whole.
const WIDTH: usize = 100;

pub fn install(args: &SettingsArgs) -> Result<String> {
    if let Some(agent) = args
        .agent
        .map(|a| a.agent())
        .filter(|a| *a != Agent::ClaudeCode)
    {
        return another_agent(agent, args);
    }
    let path = settings_path(&args.target())?;
    let claude = ClaudeCode::detect();
    let Registered {
        outcome,
        skipped,
        exe,
    } = ours::register(&path, args.dry_run, &claude)?;

    let mut out = headline(&outcome.written, &path);
    out.push_str(&hook_lines(&outcome, &skipped));
    out.push_str(&to_add_later(&skipped, &claude));
    out.push_str(&format!("Binary: {}\n", exe.display()));
    out.extend(outcome.split_links_note(&path));
    out.push_str(&after_writing(&outcome.written));
    out.push_str(&data_notes(args.dry_run)?);
    out.push_str(&mcp_server(args, &claude, &exe));
    Ok(out)
}

/// The first line: what became of the settings file.
fn headline(written: &Written, path: &Path) -> String {
    match written {
        Written::Unchanged | Written::Missing => format!(
            "claude-mem hooks are already installed in {}; nothing changed.\n",
            path.display()
        ),
        Written::Created => format!("Created {} with claude-mem hooks:\n", path.display()),
        Written::Replaced { .. } => format!("Installed claude-mem hooks in {}:\n", path.display()),
        Written::WouldChange { diff } => format!(
            "Dry run: nothing was written. Installing would change {} like this:\n{diff}\n",
            path.display()
        ),
    }
}

/// A line a hook: in the order of HOOKS, skipped ones in their place with why, then handlers
/// of ours on events this version does not register (repointed all the same).
fn hook_lines(outcome: &Outcome<Vec<Change>>, skipped: &[(&Registration, String)]) -> String {
    let dry = matches!(outcome.written, Written::WouldChange { .. });
    let mut out = String::new();
    for (registration, _) in ours::HOOKS {
        let change = outcome
            .report
            .iter()
            .find(|c| c.event == registration.event && c.hook == registration.hook);
        match (
            change,
            skipped.iter().find(|(r, _)| r.event == registration.event),
        ) {
            (Some(change), _) => out.push_str(&line(change, dry)),
            (None, Some((_, why))) => out.push_str(&render::wrap(
                &format!(
                    "  {:<20} hook {:<8} ",
                    registration.event, registration.hook
                ),
                &format!("not added: {why}"),
                "    ",
                WIDTH,
            )),
            (None, None) => {}
        }
    }
    out.extend(
        outcome
            .report
            .iter()
            .filter(|c| {
                !ours::HOOKS
                    .iter()
                    .any(|(r, _)| r.event == c.event && r.hook == c.hook)
            })
            .map(|change| line(change, dry)),
    );
    out
}

/// How to add a skipped hook later: the Claude Code it needs, then install-hooks again.
fn to_add_later(skipped: &[(&Registration, String)], claude: &ClaudeCode) -> String {
    let later = ours::HOOKS
        .iter()
        .filter(|(r, _)| skipped.iter().any(|(s, _)| s.event == r.event))
        .find_map(|(_, since)| *since);
    let Some(since) = later else {
        return String::new();
    };
    render::wrap(
        "  ",
        &format!(
            "To add it later: {}, then run `claude-mem install-hooks` again or \
             `claude-mem doctor --fix`.",
            claude.to_allow(since)
        ),
        "  ",
        WIDTH,
    )
}

/// Where the file as it was is kept, and that Claude Code picks the change up, once written.
fn after_writing(written: &Written) -> String {
    let mut out = String::new();
    match written {
        Written::Unchanged | Written::Missing | Written::WouldChange { .. } => return out,
        Written::Replaced {
            backup: Some(backup),
        } => out.push_str(&format!(
            "The file as it was before is kept in {}\n",
            backup.display()
        )),
        _ => {}
    }
    out.push_str(
        "Claude Code picks the hooks up by itself (it reloads its settings files while it\n\
         runs); a session that does not show them needs a restart.\n",
    );
    out
}

/// Registers the MCP server with Claude Code and says what happened (lines of at most 100
/// characters, a command on a line of its own).
fn mcp_server(args: &SettingsArgs, claude: &ClaudeCode, exe: &Path) -> String {
    if let Some(why) = mcp::left_alone(&args.target(), args.no_mcp) {
        return format!("MCP server: not registered ({why}).\n");
    }
    let name = mcp::SERVER_NAME;
    let tools = "  Claude's tools: mcp__claude-mem__search, mcp__claude-mem__timeline, \
                 mcp__claude-mem__get\n";
    let config = Config::from_env();
    match mcp::register(&config, claude, exe, args.dry_run) {
        mcp::Registered::Added => format!(
            "MCP server: registered with Claude Code as {name} (user scope):\n    {} mcp\n{tools}",
            exe.display()
        ),
        mcp::Registered::Repointed { from } => {
            format!("MCP server: {name} now runs this binary; it ran\n    {from}\n{tools}")
        }
        mcp::Registered::Already => {
            format!("MCP server: {name} is already registered with Claude Code; nothing changed.\n")
        }
        mcp::Registered::WouldRun { command } => {
            format!("Dry run: would register the MCP server:\n    {command}\n")
        }
        mcp::Registered::NotOurs { command } => format!(
            "MCP server: not registered: Claude Code has a server named {name} that is not ours:\n    \
             {command}\n  Left as it is; after `claude mcp remove --scope user {name}`, \
             install-hooks adds ours.\n"
        ),
        mcp::Registered::NoClaude { command } => format!(
            "MCP server: not registered: no Claude Code found (`claude` on PATH, or \
             {CLAUDE_BIN_VAR}).\n  Register it with:\n    {command}\n"
        ),
        mcp::Registered::Failed { why, command } => format!(
            "{}  Register it with:\n    {command}\n",
            render::wrap(
                "MCP server: ",
                &format!("not registered: {why}"),
                "  ",
                WIDTH
            )
        ),
    }
}

/// Where the memory lives, the files of an earlier release moved there (not on a dry run),
/// and a word about thedotmack/claude-mem when it is installed too.
fn data_notes(dry_run: bool) -> Result<String> {
    let config = Config::from_env();
    let mut out = String::new();
    if dry_run {
        if layout::pending(&config) {
            out.push_str(&format!(
                "Would look at {} and move it to {} if it is claude-mem's own.\n",
                config.legacy_db_path().display(),
                config.db_path().display()
            ));
        }
    } else {
        match layout::settle(&config)? {
            Settled::Moved { from } => out.push_str(&format!(
                "Moved the memory of an earlier claude-mem from {} to {}.\n",
                from.display(),
                config.data_dir.display()
            )),
            Settled::NotOurs { legacy_db } => out.push_str(&format!(
                "{} belongs to thedotmack/claude-mem: left as it is.\n",
                legacy_db.display()
            )),
            Settled::Nothing => {}
        }
    }
    out.push_str(&format!("Memory: {}\n", config.data_dir.display()));
    out.push_str(&compression_note(&config));
    out.extend(incumbent::detect(&config).explain());
    Ok(out)
}

/// What compression will use and cost, and how to turn it off: it spends the user's own
/// Claude Code account, so they hear it here first.
fn compression_note(config: &Config) -> String {
    let c = &config.compress;
    let cap = render::count(c.daily_tokens as i64);
    if !c.auto {
        return "Compression: off after sessions (CLAUDE_MEM_COMPRESS=off); `claude-mem \
                compress` runs it by hand.\n"
            .into();
    }
    let model = match &c.command {
        Some(command) => format!("the program CLAUDE_MEM_COMPRESS_CMD names ({command})"),
        None => format!(
            "your Claude Code account (claude -p with model {}: your subscription or API key, \
             whichever Claude Code is logged in with)",
            c.model
        ),
    };
    render::wrap(
        "Compression: ",
        &format!(
            "after each session, claude-mem compress turns its captured tool calls into short \
             memories with {model}, at most {cap} tokens a day \
             (CLAUDE_MEM_COMPRESS_DAILY_TOKENS). To turn it off, set CLAUDE_MEM_COMPRESS=off \
             where Claude Code runs (its settings' \"env\", or your shell)."
        ),
        "",
        WIDTH,
    )
}

fn line(change: &Change, dry: bool) -> String {
    let status = match (&change.status, dry) {
        (Status::Added, false) => "added",
        (Status::Added, true) => "to add",
        (Status::Updated, false) => "updated to this binary",
        (Status::Updated, true) => "to update to this binary",
        // Install reports nothing else.
        _ => "already present",
    };
    format!("  {:<20} hook {:<8} {status}\n", change.event, change.hook)
}

/// `install-hooks --agent codex|cursor|copilot|gemini`: the agent's files, a line each, then what the user
/// must still do (Codex runs only hooks they reviewed).
fn another_agent(agent: Agent, args: &SettingsArgs) -> Result<String> {
    let config = Config::from_env();
    let done = agents::register(&config, agent, args.dry_run, args.no_mcp)?;
    let mut out = String::new();
    for file in &done.files {
        out.push_str(&file_line(file));
    }
    out.push_str(&format!("Binary: {}\n", done.exe.display()));
    if agent == Agent::Codex && !args.dry_run {
        let hooks = done.files.iter().find(|f| f.what == "hooks");
        let untrusted = hooks.map_or(0, |f| crate::health::codex::untrusted(&f.path).len());
        if untrusted > 0 {
            out.push_str(&render::wrap(
                "",
                &format!(
                    "One step is left: Codex runs only the hooks you have reviewed, and skips \
                     the others without a word. Start `codex`, type /hooks, and trust the \
                     {untrusted} claude-mem hooks. `claude-mem doctor` says whether they are."
                ),
                "",
                WIDTH,
            ));
        }
    }
    Ok(out)
}

/// What became of one of the agent's files.
fn file_line(file: &FileEdit) -> String {
    let path = file.path.display();
    let what = file.what;
    match &file.edit {
        Edit::Unchanged => format!("{what}: already in {path}; nothing changed.\n"),
        Edit::Created => format!("{what}: created {path}.\n"),
        Edit::Changed => format!("{what}: added to {path}.\n"),
        Edit::WouldWrite(text) => {
            format!("Dry run: nothing was written. {what}: {path} would read:\n{text}")
        }
        Edit::GivenBack | Edit::Removed | Edit::WouldRemove => String::new(),
    }
}
