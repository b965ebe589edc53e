//! What is there, and in what state: the settings files that register our hooks, the data
//! dir's files, the spill folder, the log, Claude Code and its MCP registration. Plain data,
//! gathered without changing anything (the database's own state is read in `store`, the only
//! SQLite code). `status` summarizes it; `doctor` judges it and repairs what it safely can.

pub mod agents;
pub mod claude;
pub mod codex;
pub mod data;
pub mod hooks;
pub mod log;
pub mod spill;
