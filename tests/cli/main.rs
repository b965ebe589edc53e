//! The integration tests: one binary, one module per area, each test driving the real
//! `claude-mem` binary in a sandbox of its own (see `harness`). One binary, not one per file:
//! twenty each compiled and linked the harness and its dependencies again, 28 s from clean on
//! 2 cores against 17 s for one. Unit tests live beside the code in src/.

// What every area shares: the sandbox, the hook runs, the checks, the tools a test needs.
mod harness;

// `browse`, the terminal UI, in a real pseudo-terminal: keys in, the screen read back.
mod browse;
// Other coding agents (Codex, Cursor) on the same binary and memory, each session as its agent's.
mod agents;
// Hooks capturing tool calls: the queue, no-ops, and nothing lost when the database is busy.
mod capture;
// The command line outside the hooks: help, version, one clear line for bad input.
mod command_line;
// GitHub Copilot CLI's events, answers and hooks file, from payloads the real CLI sent.
mod copilot;
// Standing instructions: rules the user stated, given to every later session of the project.
mod conventions;
// The compressor: sessions into typed memories within a budget, with a stand-in or the real CLI.
mod compress;
// `doctor` and `doctor --fix`, each check against a setup broken for it.
mod doctor;
// The README and docs/: short where it must be, every command listed, every link landing.
mod docs;
// The real Claude Code CLI, offline against a mock API, running the hooks we install.
mod e2e_claude_code;
// The real Codex CLI, offline against a stand-in of the Responses API, running our Codex hooks.
mod e2e_codex;
// The real GitHub Copilot CLI, offline against the same stand-in, running our Copilot hooks.
mod e2e_copilot;
// The real Gemini CLI, offline against a stand-in of Gemini's API, running our Gemini hooks.
mod e2e_gemini;
// The real OpenCode CLI, offline against the same stand-in, running our OpenCode plugin.
mod e2e_opencode;
// `export` and `import`: round trips, formats, and the privacy rules on what is read.
mod export;
// `export --html`: the page in a real browser, offline, searched, with nothing redacted in it.
#[cfg(unix)]
mod export_html;
// `forget`: by id, session, project and time, and the bytes gone from every file.
mod forget;
// Gemini CLI's events, answers and settings, from the payloads its source builds.
mod gemini;
// What the session-start context and per-prompt recall gave, and why: `given`.
mod given;
// The hook path against hostile neighbours, full disks, stuck readers and careless callers.
mod hardening;
// Secrets redacted at the door whichever hook carries them; excluded projects leave nothing.
mod hygiene;
// `import --from-claude-mem`: the incumbent's databases brought over once, only read.
mod incumbent_import;
// `install-hooks` and `uninstall-hooks` on real settings files, refusals and races.
mod install_hooks;
// The code the hooks run, laid out together in the binary (build.rs, hot.ld).
#[cfg(hot_code)]
mod hot_code;
// The module graph of src/ in layers, without cycles; the hook path away from cold modules.
mod layers;
// Where the files live, beside the incumbent, and moving an earlier release's files.
mod layout;
// The session lifecycle hooks, their payloads, no-ops and ordering races.
mod lifecycle;
// The MCP server spoken to over stdio as Claude Code does.
mod mcp;
// OpenCode: the events our plugin sends, its answers, and install-hooks --agent opencode.
mod opencode;
// `<private>` text never reaching the disk, whatever path the write takes.
mod privacy;
// Per-prompt recall: earlier work handed with a prompt, or nothing, and its rules.
mod prompt_recall;
// Whose words an item is: third-party text named, not quoted, beside a prompt; the order check.
mod provenance;
// A project is its repository: its top, subfolders and linked worktrees share one memory.
mod project;
// The queue contract: claims, acks, fails and releases by consumers running at once.
mod queue;
// status: which agents our hooks and MCP server are registered with.
mod registered;
// The read side: search, show, sessions, timeline, status and their output habits.
mod recall;
// Retention: prune, the size cap, the file that shrinks, what status says is due.
mod retention;
// `share`: a project's memories in its .claude-mem/ folder, found by a teammate in a clone.
mod share;
// `scrub`: secrets stored under older rules redacted out of every file.
mod scrub;
// `sync`: machines through a git remote, encrypted; converging, refusing, never in a hook.
mod sync;
// The team's notes in per-prompt recall: handed as the team's, within the folder's bounds.
mod team_recall;
