//! Helpers for the tests against the real Claude Code CLI.
#![allow(dead_code)] // each test binary uses a different part

pub mod claude_cli;
pub mod mock_api;
