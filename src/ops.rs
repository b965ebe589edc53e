//! The writes a hook asks of the store.
//!
//! A handler decides, purely, what to record and returns a [`Write`]; the store applies it in
//! one transaction. When the database cannot take it, the same value is serialized into a spill
//! file and applied by a later run. Every write carries its own id, which is the primary key of
//! what it inserts, so applying one twice (a replay after a crash) stores it once. The spill
//! format is this type's JSON: change it only by adding optional fields.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Write {
    /// UUID v7, the primary key of the row this write inserts.
    pub id: String,
    /// When the hook ran (ISO-8601 UTC).
    pub at: String,
    pub session: SessionRef,
    pub change: Change,
}

impl Write {
    /// A copy whose large text is cut to at most `max` bytes, marked truncated: for when only a
    /// little room is left (a reserve slot on a full disk). The cut payload of an observation
    /// keeps the capture's convention: the cut part becomes a JSON string holding its start.
    pub fn shrunk(&self, max: usize) -> Write {
        let mut write = self.clone();
        match &mut write.change {
            Change::Observation(o) if o.raw_output.len() > max => {
                o.raw_output = serde_json::json!({
                    "raw_output": truncate(&o.raw_output, max),
                    "truncated": ["raw_output"],
                })
                .to_string();
                o.truncated = true;
            }
            Change::Prompt {
                text, truncated, ..
            } if text.len() > max => {
                *text = truncate(text, max).to_string();
                *truncated = true;
            }
            Change::SummaryRequest {
                last_assistant_message: Some(message),
                ..
            } if message.len() > max => *message = truncate(message, max).to_string(),
            _ => {}
        }
        write
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The agent a session without one is of: the one claude-mem was first written for.
pub const CLAUDE_CODE: &str = "claude-code";

/// What every hook knows about its session; the first write to see a session creates its row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRef {
    pub session_id: String,
    pub project_dir: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    /// The coding agent the event came from, when not Claude Code (which a spill file written
    /// before agents were told apart also means); kept by the session's first write only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A tool call to remember (PostToolUse / PostToolUseFailure).
    Observation(Observation),
    /// A user prompt, already stripped of private parts.
    Prompt {
        prompt_id: Option<String>,
        text: String,
        truncated: bool,
    },
    /// A prompt that was private as a whole: only the fact that the turn is private is kept,
    /// so that the captures of that turn are dropped too.
    PrivatePrompt { prompt_id: Option<String> },
    /// SessionStart: what Claude Code says about the session.
    SessionStart {
        source: Option<String>,
        model: Option<String>,
    },
    /// Stop: a request for the consumer to summarize the session so far.
    SummaryRequest {
        prompt_id: Option<String>,
        last_assistant_message: Option<String>,
    },
    /// SessionEnd: the session is closed.
    SessionEnd { reason: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub event: String,
    pub tool_name: String,
    pub tool_use_id: Option<String>,
    pub prompt_id: Option<String>,
    /// JSON object: tool_input and tool_response (or error and is_interrupt), project_dir, cwd.
    pub raw_output: String,
    /// JSON array of paths.
    pub files_touched: String,
    pub priority: Priority,
    /// Size of the event as Claude Code sent it.
    pub payload_bytes: u64,
    pub truncated: bool,
}

/// Drain order of the queue. Stored as an integer so that `ORDER BY priority` drains high
/// first (as text, "high" < "low" < "normal").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    High,
    Normal,
    Low,
}

impl Priority {
    pub fn rank(self) -> i64 {
        match self {
            Priority::High => 0,
            Priority::Normal => 1,
            Priority::Low => 2,
        }
    }
}
