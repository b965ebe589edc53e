//! Whose words a stored text is: the user's (a prompt), Claude's (its messages, and what the
//! compressor, a Claude too, wrote: memories, summaries) or a third party's (what a tool
//! answered: a page fetched, a search's results, a file read, a command's output, an MCP
//! server's result; and a teammate's note from the project's `.claude-mem/`). Third-party text
//! is what an attacker can write without the user or Claude saying a word, so the readers that
//! put text beside a prompt name it rather than quote it.
//!
//! Derived from what a row already records, its kind, rather than stored: a tool call's input
//! is what Claude asked of the tool, and its answer is always the tool's, whichever tool it was
//! (an Edit answers with the file's lines around the change, a Task with a subagent's reading),
//! so no tool's answer is Claude's own and no list of tools can go stale. A team's note is
//! known by where it was read from, not by its kind.

/// Whose words a stored text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The user's: a prompt.
    User,
    /// Claude's: its message closing a turn, a tool call's input, the compressor's memories and
    /// summaries.
    Claude,
    /// Anyone's: what a tool answered, a teammate's shared note.
    ThirdParty,
}
