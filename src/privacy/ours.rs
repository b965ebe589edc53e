//! The memory never feeds on itself: the answers of our own MCP server's tools are the memory
//! (a `get` holds a whole earlier session), so a hook never captures them, as it never keeps
//! the context we injected (`<claude-mem-context>`). A copy of them would outlive a forget of
//! what they quote, fill search results with the memory's own answers and cost the compressor
//! tokens.

/// The server's name in Claude Code: its tools are `mcp__claude-mem__search`, ….
pub const SERVER_NAME: &str = "claude-mem";

/// Whether a tool of Claude Code's is one of this server's: `mcp__claude-mem__search` and the
/// others as install-hooks registers the server, or `mcp__plugin_<plugin>_claude-mem__…` should
/// a plugin bundle it. A server registered under another name is not recognised (its tools can be listed in
/// `CLAUDE_MEM_SKIP_TOOLS`). Schema v8 deletes what earlier versions stored by the same rule.
pub fn is_our_tool(tool_name: &str) -> bool {
    tool_name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.strip_prefix(SERVER_NAME).or_else(|| plugin_tool(rest)))
        .is_some_and(|rest| rest.starts_with("__"))
}

/// What follows `plugin_<plugin>_claude-mem` in a plugin's tool name (`rest` is after `mcp__`).
fn plugin_tool(rest: &str) -> Option<&str> {
    let rest = rest.strip_prefix("plugin_")?;
    let at = rest.find(&format!("_{SERVER_NAME}__"))?;
    Some(&rest[at + 1 + SERVER_NAME.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same rule as schema v8's GLOBs (see `store::sql`'s test).
    #[test]
    fn our_tools_are_those_of_the_server_named_claude_mem() {
        for ours in [
            "mcp__claude-mem__search",
            "mcp__claude-mem__get",
            "mcp__claude-mem__timeline",
            "mcp__claude-mem__a_later_tool",
            "mcp__plugin_memory_claude-mem__get",
            "mcp__plugin__claude-mem__get",
        ] {
            assert!(is_our_tool(ours), "{ours}");
        }
        for theirs in [
            "Bash",
            "mcp__memory__search",
            "mcp__claude-memory__search",
            "mcp__Claude-Mem__search",
            "mcp__claude-mem",
            "mcp__plugin_claude-mem_mcp-search__search",
            "mcp__plugin_claude-mem__search",
            "claude-mem__search",
        ] {
            assert!(!is_our_tool(theirs), "{theirs}");
        }
    }
}
