//! The text of a chunk, before it is sealed: the op log of one machine, in the export format.
//!
//! A header line `{"format": "claude-mem/1", "claude_mem": VERSION, "machine": ID, "seq": N}`
//! (an export header, read by the export's reader, plus where the chunk belongs), then one line
//! per record exactly as `export` writes it, and one per deletion: `{"type": "gone", "of":
//! TABLE, "id": ID}`. A chunk is read whole and checked line by line before anything of it is
//! applied: one bad line refuses it all.

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::store::export::{self, FORMAT_NAME, FORMAT_VERSION, Record};
use crate::store::sync::Table;
use crate::store::sync::incoming::Line;

/// A chunk is closed past this much text (a record larger alone has a chunk to itself): small
/// enough to hold in memory on either side, large enough that a first sync of years makes
/// tens of files, not thousands.
pub const CHUNK_BYTES: usize = 8 << 20;

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    claude_mem: String,
    machine: String,
    seq: i64,
}

#[derive(Serialize, Deserialize)]
struct Gone {
    #[serde(rename = "type")]
    kind: String,
    of: String,
    id: String,
}

/// A chunk's text being written.
pub struct Writer {
    pub text: Vec<u8>,
    pub lines: usize,
}

impl Writer {
    pub fn new(machine: &str, seq: i64) -> Result<Writer> {
        let header = Header {
            format: format!("{FORMAT_NAME}/{FORMAT_VERSION}"),
            claude_mem: env!("CARGO_PKG_VERSION").into(),
            machine: machine.into(),
            seq,
        };
        let mut text = serde_json::to_vec(&header)?;
        text.push(b'\n');
        Ok(Writer { text, lines: 0 })
    }

    pub fn record(&mut self, record: &Record) -> Result<()> {
        self.text.extend_from_slice(record.line()?.as_bytes());
        self.lines += 1;
        Ok(())
    }

    pub fn gone(&mut self, table: Table, id: &str) -> Result<()> {
        let line = Gone {
            kind: "gone".into(),
            of: table.name().into(),
            id: id.into(),
        };
        self.text.extend(serde_json::to_vec(&line)?);
        self.text.push(b'\n');
        self.lines += 1;
        Ok(())
    }

    pub fn full(&self) -> bool {
        self.text.len() >= CHUNK_BYTES
    }
}

/// Reads a chunk's text whole, checking that it says it is `machine`'s chunk `seq`.
pub fn read(text: &[u8], machine: &str, seq: i64) -> Result<Vec<Line>> {
    let text = std::str::from_utf8(text).context("not UTF-8")?;
    let mut lines = text.lines();
    let first = lines.next().context("empty")?;
    export::parse_header(first)?;
    let header: Header =
        serde_json::from_str(first).context("no machine and number in its header")?;
    if header.machine != machine || header.seq != seq {
        bail!(
            "it says it is chunk {} of machine {}",
            header.seq,
            header.machine
        );
    }
    let mut out = Vec::new();
    for (number, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = if line.starts_with("{\"type\":\"gone\"") {
            let gone: Gone = serde_json::from_str(line)?;
            let table = Table::from_name(&gone.of).ok_or_else(|| {
                anyhow!(
                    "a deletion of {:?}, which this claude-mem does not know",
                    gone.of
                )
            })?;
            Ok(Line::Gone(table, gone.id))
        } else {
            export::parse(line).map(|r| Line::Record(Box::new(r)))
        };
        out.push(parsed.map_err(|err| anyhow!("line {}: {err:#}", number + 2))?);
    }
    Ok(out)
}
