//! Claude Code's settings.json, a file that the user, other tools and Claude Code itself all
//! write. This module finds the file, reads it strictly, changes nothing but our own hook
//! entries, and replaces it atomically, so that no run of ours leaves it broken or drops a
//! change someone else made.

pub mod agents;
mod chain;
pub mod codex;
pub mod command;
pub mod copilot;
pub mod cursor;
mod diff;
mod document;
pub mod gemini;
pub mod given_back;
mod location;
mod lock;
pub mod mcp;
pub mod merge;
mod open;
pub mod opencode;
pub mod ours;
mod rebase;
mod replace;
mod shape;
mod write;

pub use location::{Target, settings_path};
pub use write::{Outcome, Written, update};
