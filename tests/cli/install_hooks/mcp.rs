//! The MCP server's registration: install-hooks runs `claude mcp add --scope user`, once, and
//! uninstall-hooks `claude mcp remove`, with a fake `claude` that keeps its MCP servers in a
//! folder of the sandbox's HOME and records every call, as the real one answers them.

use std::fs;
use std::path::PathBuf;

use super::*;

/// `claude mcp add|get|remove` as Claude Code 2.1.330 answers them (its words, its exit codes),
/// with the servers kept as files `$HOME/mcp/<name>` (command, then args); every call is
/// appended to `$HOME/claude-calls`.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
PATH=/usr/bin:/bin
echo "$*" >> "$HOME/claude-calls"
servers="$HOME/mcp"
if [ "$1" = "--version" ]; then echo '2.1.330 (Claude Code)'; exit 0; fi
if [ "$1 $2 $3 $4 $6" = "mcp add --scope user --" ]; then
  if [ -f "$servers/$5" ]; then echo "MCP server $5 already exists in user config" >&2; exit 1; fi
  mkdir -p "$servers"; printf '%s\n%s\n' "$7" "$8" > "$servers/$5"
  echo "Added stdio MCP server $5 with command: $7 $8 to user config"; exit 0
fi
if [ "$1 $2" = "mcp get" ]; then
  if [ ! -f "$servers/$3" ]; then echo "No MCP server named \"$3\". Run \`claude mcp add\` to add one." >&2; exit 1; fi
  printf '%s:\n  Scope: User config (available in all your projects)\n  Status: ✓ Connected\n  Type: stdio\n  Command: %s\n  Args: %s\n  Environment:\n\nTo remove this server, run: claude mcp remove %s -s user\n' \
    "$3" "$(sed -n 1p "$servers/$3")" "$(sed -n 2p "$servers/$3")" "$3"
  exit 0
fi
if [ "$1 $2 $3 $4" = "mcp remove --scope user" ]; then
  if [ ! -f "$servers/$5" ]; then echo "No MCP server named \"$5\" in user scope" >&2; exit 1; fi
  rm "$servers/$5"; echo "Removed MCP server $5 from user config"; exit 0
fi
echo "fake claude: unexpected arguments: $*" >&2; exit 2
"#;

impl Sandbox {
    fn with_mcp_claude(self) -> Sandbox {
        crate::harness::write_program(&self.root.join("bin/claude"), FAKE_CLAUDE);
        self
    }

    fn calls_file(&self) -> PathBuf {
        self.home().join("claude-calls")
    }

    /// The `claude` calls made so far, but `--version`.
    fn mcp_calls(&self) -> Vec<String> {
        fs::read_to_string(self.calls_file())
            .unwrap_or_default()
            .lines()
            .filter(|l| *l != "--version")
            .map(String::from)
            .collect()
    }

    /// The user-scope server named claude-mem: its command and args.
    fn registered(&self) -> Option<(String, String)> {
        let text = fs::read_to_string(self.home().join("mcp/claude-mem")).ok()?;
        let mut lines = text.lines().map(String::from);
        Some((lines.next()?, lines.next().unwrap_or_default()))
    }

    fn marker(&self) -> PathBuf {
        self.home().join(".local/share/claude-mem/mcp-registered")
    }

    fn run(&self, args: &[&str]) -> String {
        let output = self.cmd(args).output().expect("run");
        assert!(output.status.success(), "{args:?}: {output:?}");
        stdout(&output)
    }
}

fn this() -> String {
    this_binary().display().to_string()
}

#[test]
fn install_registers_the_server_once_and_uninstall_removes_it() {
    let sandbox = Sandbox::new().with_mcp_claude();
    let out = sandbox.run(&["install-hooks"]);
    assert!(
        out.contains(&format!(
            "MCP server: registered with Claude Code as claude-mem (user scope):\n    {} mcp\n",
            this()
        )),
        "{out}"
    );
    assert!(out.contains("mcp__claude-mem__search"), "{out}");
    assert_eq!(
        sandbox.mcp_calls(),
        [format!("mcp add --scope user claude-mem -- {} mcp", this())]
    );
    assert_eq!(sandbox.registered(), Some((this(), "mcp".into())));
    assert!(sandbox.marker().is_file(), "the session start's marker");

    let again = sandbox.run(&["install-hooks"]);
    assert!(
        again.contains(
            "MCP server: claude-mem is already registered with Claude Code; nothing changed."
        ),
        "{again}"
    );
    assert_eq!(sandbox.registered(), Some((this(), "mcp".into())));
    assert!(sandbox.marker().is_file());

    let out = sandbox.run(&["uninstall-hooks"]);
    assert!(
        out.contains("MCP server: removed claude-mem from Claude Code (user scope)."),
        "{out}"
    );
    assert!(
        sandbox
            .mcp_calls()
            .contains(&"mcp remove --scope user claude-mem".to_string())
    );
    assert_eq!(sandbox.registered(), None);
    assert!(!sandbox.marker().exists());
    let again = sandbox.run(&["uninstall-hooks"]);
    assert!(
        again.contains("MCP server: claude-mem is not registered; nothing to remove."),
        "{again}"
    );
    assert!(
        !sandbox.home().join(".claude.json").exists(),
        "Claude Code's own state file is never written by us"
    );
}

#[test]
fn a_registration_of_a_moved_binary_is_pointed_at_this_one() {
    let sandbox = Sandbox::new().with_mcp_claude();
    let old = sandbox.copy_binary("old/claude-mem");
    let out = sandbox.cmd_with(&old, &["install-hooks"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        sandbox.registered(),
        Some((old.display().to_string(), "mcp".into()))
    );
    let out = sandbox.run(&["install-hooks"]);
    assert!(
        out.contains(&format!(
            "MCP server: claude-mem now runs this binary; it ran\n    {}\n",
            old.display()
        )),
        "{out}"
    );
    assert_eq!(sandbox.registered(), Some((this(), "mcp".into())));
}

#[test]
fn a_server_of_that_name_that_is_not_ours_is_left_alone() {
    let sandbox = Sandbox::new().with_mcp_claude();
    fs::create_dir_all(sandbox.home().join("mcp")).unwrap();
    fs::write(
        sandbox.home().join("mcp/claude-mem"),
        "/usr/local/bin/node\n/opt/other-memory/server.js\n",
    )
    .unwrap();
    let out = sandbox.run(&["install-hooks"]);
    assert!(
        out.contains("Claude Code has a server named claude-mem that is not ours:\n    /usr/local/bin/node /opt/other-memory/server.js\n  Left as it is;"),
        "{out}"
    );
    assert!(!sandbox.marker().exists());
    let out = sandbox.run(&["uninstall-hooks"]);
    assert!(
        out.contains("the server named claude-mem is not ours; left as it is"),
        "{out}"
    );
    assert_eq!(
        sandbox.registered(),
        Some((
            "/usr/local/bin/node".into(),
            "/opt/other-memory/server.js".into()
        ))
    );
    assert!(
        !sandbox
            .mcp_calls()
            .iter()
            .any(|c| c.starts_with("mcp remove")),
        "{:?}",
        sandbox.mcp_calls()
    );
}

#[test]
fn without_claude_code_the_command_to_run_is_printed() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["install-hooks"]);
    assert!(
        out.contains(&format!(
            "  Register it with:\n    claude mcp add --scope user claude-mem -- {} mcp\n",
            this()
        )),
        "{out}"
    );
    assert!(!sandbox.marker().exists());
}

#[test]
fn no_mcp_dry_runs_and_other_settings_files_run_no_mcp_command() {
    let sandbox = Sandbox::new().with_mcp_claude();
    let out = sandbox.run(&["install-hooks", "--no-mcp"]);
    assert!(
        out.contains("MCP server: not registered (--no-mcp)."),
        "{out}"
    );
    let dry = sandbox.run(&["install-hooks", "--dry-run"]);
    assert!(
        dry.contains(&format!(
            "Dry run: would register the MCP server:\n    {} mcp add --scope user claude-mem -- {} mcp",
            sandbox.root.join("bin/claude").display(),
            this()
        )),
        "{dry}"
    );
    let project = sandbox.root.join("proj");
    fs::create_dir_all(&project).unwrap();
    let out = sandbox.run(&["install-hooks", "--project", path_arg(&project)]);
    assert!(out.contains("(user settings only: no --project"), "{out}");
    let out = sandbox.run(&["uninstall-hooks", "--no-mcp"]);
    assert!(
        out.contains("MCP server: left registered (--no-mcp)."),
        "{out}"
    );
    assert_eq!(sandbox.mcp_calls(), Vec::<String>::new());
    assert!(!sandbox.marker().exists());
    assert_eq!(sandbox.registered(), None);
}
