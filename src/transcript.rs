//! Reading Claude's last message from a session transcript (JSONL), for Claude Code versions
//! whose Stop event does not carry `last_assistant_message`, and for GitHub Copilot CLI, whose
//! Stop never does (its `events.jsonl` holds `{"type":"assistant.message","data":{"content"}}`).
//!
//! Transcripts grow to many megabytes; the last message is at the end. So the file is read
//! backwards in blocks, line by line, and only up to a bound. The path comes from the event:
//! it is opened like a file of ours (no symlink, never blocking on a FIFO, a regular file of
//! this user's), since a hook must not hang on whatever it is handed.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use crate::fsutil::{self, Access};

const BLOCK: u64 = 64 * 1024;
/// How far from the end to look before giving up.
const MAX_SCAN: u64 = 8 * 1024 * 1024;

/// The text of the last assistant entry that has text, if one is within reach.
pub fn last_assistant_text(path: &Path) -> Option<String> {
    let mut file = fsutil::open_ours(path, Access::Read).ok()?;
    let len = file.metadata().ok()?.len();
    let mut end = len;
    // Bytes of a line that started before the block we have read.
    let mut carry: Vec<u8> = Vec::new();
    while end > 0 && len - end < MAX_SCAN {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0; (end - start) as usize];
        file.seek(SeekFrom::Start(start)).ok()?;
        file.read_exact(&mut block).ok()?;
        block.extend_from_slice(&carry);
        // Every complete line in this block, last first; the first piece may be partial.
        let mut lines = block.rsplit(|&b| b == b'\n').peekable();
        while let Some(line) = lines.next() {
            if lines.peek().is_none() && start > 0 {
                carry = line.to_vec();
                break;
            }
            if let Some(text) = assistant_text(line) {
                return Some(text);
            }
        }
        end = start;
    }
    None
}

fn assistant_text(line: &[u8]) -> Option<String> {
    // Cheap filter before parsing: most lines are tool results and attachments.
    if !line.windows(10).any(|w| w == b"\"assistant") {
        return None;
    }
    let entry: Value = serde_json::from_slice(line).ok()?;
    let content = match entry.get("type")?.as_str()? {
        "assistant" => entry.get("message")?.get("content")?,
        "assistant.message" => entry.get("data")?.get("content")?,
        _ => return None,
    };
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;

    #[test]
    fn finds_the_last_text_across_block_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = File::create(&path).unwrap();
        let filler = format!(
            "{{\"type\":\"user\",\"pad\":\"{}\"}}\n",
            "x".repeat(100_000)
        );
        let first =
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"first"}]}}"#;
        let last = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"the end"},{"type":"tool_use","name":"Bash"}]}}"#;
        let tool =
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}"#;
        write!(file, "{first}\n{filler}{last}\n{filler}{tool}\n").unwrap();
        assert_eq!(last_assistant_text(&path).as_deref(), Some("the end"));
    }

    #[test]
    fn reads_copilots_events_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let lines = [
            r#"{"type":"assistant.message","data":{"content":"Done: it ran."}}"#,
            r#"{"type":"assistant.turn_end","data":{"turnId":"1"}}"#,
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        assert_eq!(last_assistant_text(&path).as_deref(), Some("Done: it ran."));
    }

    #[test]
    fn missing_file_or_no_assistant_is_none() {
        assert_eq!(last_assistant_text(Path::new("/nonexistent/t.jsonl")), None);
    }
}
