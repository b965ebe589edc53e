//! Helpers for the end-to-end test against the real Claude Code CLI.

pub mod mock_api;
