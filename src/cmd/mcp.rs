//! `mcp`: the memory as tools for Claude, over the Model Context Protocol (stdio): the protocol
//! is `crate::mcp`, the tools `crate::mcp::memory`.

use std::io;

use anyhow::{Result, anyhow};

use crate::config::Config;
use crate::emit::{self, Report};
use crate::log::Log;
use crate::mcp::{self, memory::Memory};

pub fn serve() -> Result<Report> {
    let memory = Memory::new(Config::from_env());
    // A tool that panics is answered with an error and the server goes on; the message goes
    // to the log, not to stderr.
    let log = Log::new(&memory.config, "mcp");
    std::panic::set_hook(Box::new(move |info| {
        log.important("PANIC", &info.to_string())
    }));
    mcp::serve(&mut io::stdin().lock(), &mut emit::mcp_message, &memory)
        .map_err(|err| anyhow!("the MCP server could not read its input: {err}"))?;
    Ok(Report::default())
}
