//! The team's memory: the memories and session summaries that `claude-mem share` writes into a
//! project's `.claude-mem/` folder, one Markdown file each, for the team to commit with the
//! code; and the same files read back, in a teammate's clone, by search, the MCP tools, the
//! session-start context and per-prompt recall (through a digest of their terms, `digest`),
//! which show them as the team's and never store them; and a file of this machine's taken back
//! out when the user forgets its item (`unshare`).
//!
//! Below the store, as the hook reads the folder at session start. What a clone holds was
//! written by someone else: it is read as untrusted input (see `read`), and what of it reaches
//! Claude goes through the same checks as our own recorded history.

pub mod digest;
pub mod format;
pub mod read;
pub mod shared;
pub mod unshare;
pub mod write;

pub use format::{Note, NoteKind};

/// The folder of a project that holds the team's files.
pub const FOLDER: &str = ".claude-mem";
