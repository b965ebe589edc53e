//! The page's view of an export's records, one session at a time, in the shape its script
//! reads: the session's turns (a prompt, its tool calls, Claude's answer), its summaries and its
//! memories. Texts are read and cut as the search index reads them (`store::read::doc`): a
//! tool call is its tool, the input it is remembered by and the start and end of its answer,
//! never its whole payload, so that a page of a long history is still one a browser opens.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::store::export::Record;
use crate::store::read::doc;
use crate::store::rows::{Memory, QueueItem, Session, Summary};
use crate::text::{bounded, clean};

/// How much of a tool call's answer the page keeps: its start and its end. Answers are most of
/// a page: at 600 and 200, 34 of the 55 MiB of a page of 100,000 calls.
const ANSWER_HEAD_CHARS: usize = 300;
const ANSWER_TAIL_CHARS: usize = 100;

/// One session as the page shows it.
#[derive(Debug, Serialize)]
pub struct Shown {
    id: String,
    project: Option<String>,
    agent: String,
    model: Option<String>,
    started: String,
    ended: Option<String>,
    /// Prompts the user marked private: only that they happened is recorded.
    private_turns: usize,
    turns: Vec<Turn>,
    summaries: Vec<Summarized>,
    memories: Vec<Remembered>,
}

/// A prompt and what came of it; `n` is `None` for calls recorded before any prompt.
#[derive(Debug, Default, Serialize)]
struct Turn {
    n: Option<i64>,
    at: Option<String>,
    prompt: Option<String>,
    calls: Vec<Call>,
    replies: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Call {
    tool: String,
    input: String,
    answer: String,
    failed: bool,
}

#[derive(Debug, Serialize)]
struct Summarized {
    at: String,
    request: String,
    investigated: String,
    learned: String,
    completed: String,
    next_steps: String,
    notes: Option<String>,
}

#[derive(Debug, Serialize)]
struct Remembered {
    at: String,
    kind: String,
    title: String,
    subtitle: Option<String>,
    narrative: String,
    facts: Vec<String>,
    concepts: Vec<String>,
    files: Vec<String>,
}

/// Gathers the records of one session; the export hands them over a session at a time.
#[derive(Debug, Default)]
pub struct Gather {
    session: Option<Shown>,
    turns: BTreeMap<Option<i64>, Turn>,
}

impl Gather {
    /// Takes the next record; a session's record hands back the session gathered before it.
    pub fn take(&mut self, record: &Record) -> Option<Shown> {
        match record {
            Record::Session(s) => {
                let done = self.finish();
                self.session = Some(shown(s));
                return done;
            }
            Record::Prompt(p) => {
                let turn = self.turn(Some(p.prompt_number));
                turn.at = Some(p.created_at.clone());
                turn.prompt = Some(doc::prose(&p.prompt_text).head);
            }
            Record::PrivateTurn(_) => {
                if let Some(s) = &mut self.session {
                    s.private_turns += 1;
                }
            }
            Record::Observation(q) => {
                let call = call(q);
                self.turn(q.prompt_number).calls.push(call);
            }
            Record::SummaryRequest(q) => {
                if let Some(reply) = doc::message(q.raw_output.get()) {
                    let reply = doc::prose(&reply).head;
                    self.turn(q.prompt_number).replies.push(reply);
                }
            }
            Record::Memory(m) => self.with_session(|s| s.memories.push(remembered(m))),
            Record::Summary(s) => self.with_session(|shown| shown.summaries.push(summarized(s))),
            Record::Event(_) => {}
        }
        None
    }

    /// The session gathered last, if any.
    pub fn finish(&mut self) -> Option<Shown> {
        let mut done = self.session.take()?;
        done.turns = std::mem::take(&mut self.turns).into_values().collect();
        Some(done)
    }

    fn turn(&mut self, n: Option<i64>) -> &mut Turn {
        self.turns.entry(n).or_insert_with(|| Turn {
            n,
            ..Turn::default()
        })
    }

    fn with_session(&mut self, add: impl FnOnce(&mut Shown)) {
        if let Some(s) = &mut self.session {
            add(s);
        }
    }
}

fn shown(s: &Session) -> Shown {
    Shown {
        id: s.session_id.clone(),
        project: s.project_dir.clone(),
        agent: s.agent.clone(),
        model: s.model.clone(),
        started: s.started_at.clone(),
        ended: s.ended_at.clone(),
        private_turns: 0,
        turns: Vec::new(),
        summaries: Vec::new(),
        memories: Vec::new(),
    }
}

fn call(q: &QueueItem) -> Call {
    let tool = q.tool_name.as_deref().unwrap_or("a tool");
    let text = doc::tool_call(tool, q.raw_output.get());
    // The head is the tool's name, then the input fields that name the call.
    let input = text.head.split_once('\n').map_or("", |(_, rest)| rest);
    Call {
        tool: clean(tool),
        input: input.to_string(),
        answer: bounded(&text.body, ANSWER_HEAD_CHARS, ANSWER_TAIL_CHARS),
        failed: q.event == "PostToolUseFailure",
    }
}

fn summarized(s: &Summary) -> Summarized {
    Summarized {
        at: s.created_at.clone(),
        request: clean(&s.request),
        investigated: clean(&s.investigated),
        learned: clean(&s.learned),
        completed: clean(&s.completed),
        next_steps: clean(&s.next_steps),
        notes: s.notes.as_deref().map(clean),
    }
}

fn remembered(m: &Memory) -> Remembered {
    let mut files: Vec<String> = m.files_modified.iter().map(|f| clean(f)).collect();
    files.extend(
        m.files_read
            .iter()
            .filter(|f| !m.files_modified.contains(f))
            .map(|f| clean(f)),
    );
    Remembered {
        at: m.created_at.clone(),
        kind: clean(&m.kind),
        title: clean(&m.title),
        subtitle: m.subtitle.as_deref().map(clean),
        narrative: clean(&m.narrative),
        facts: m.facts.iter().map(|f| clean(f)).collect(),
        concepts: m.concepts.iter().map(|c| clean(c)).collect(),
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::export::parse;

    /// A session as `export` wrote it: a prompt, a private prompt, a call of the first prompt
    /// and Claude's answer, which came after the private one.
    const SESSION: &str = r#"{"type":"session","session_id":"s1","project_dir":"/home/dev/shop","cwd":"/home/dev/shop","transcript_path":"/x/s1.jsonl","source":null,"model":null,"status":"active","prompt_count":2,"last_assistant_message":"All green.","started_at":"2026-11-29T15:46:10.452Z","updated_at":"2026-11-29T16:11:13.604Z","ended_at":null,"end_reason":null,"reduced_at":null,"agent":"claude-code"}
{"type":"prompt","id":"01a227fc-3794-726c-831a-c707b7f310ba","session_id":"s1","prompt_id":"p1","prompt_number":1,"prompt_text":"hello <b>world</b> foo","truncated":false,"created_at":"2026-11-29T15:46:10.452Z"}
{"type":"private_turn","prompt_id":"p2","session_id":"s1","created_at":"2026-11-29T16:11:13.448Z"}
{"type":"observation","id":"01a22813-264c-7277-ba69-1e413010a486","session_id":"s1","tool_use_id":"t1","prompt_id":"p1","prompt_number":1,"event":"PostToolUse","tool_name":"Bash","project_dir":"/home/dev/shop","files_touched":[],"raw_output":{"tool_input":{"command":"cargo test","description":"Run tests"},"tool_response":{"stdout":"ok 3 passed"},"lean":1},"priority":0,"status":"raw","attempts":0,"claimed_by":null,"claimed_at":null,"lease_until":null,"last_error":null,"payload_bytes":279,"truncated":false,"created_at":"2026-11-29T16:11:13.356Z","updated_at":"2026-11-29T16:11:13.356Z","lease_token":null,"retry_at":null}
{"type":"summary_request","id":"01a22813-2744-7707-985e-240d78a351ed","session_id":"s1","tool_use_id":null,"prompt_id":"p1","prompt_number":2,"event":"Stop","tool_name":null,"project_dir":"/home/dev/shop","files_touched":[],"raw_output":{"last_assistant_message":"All green.","prompt_number":2,"project_dir":"/home/dev/shop","transcript_path":"/x/s1.jsonl"},"priority":1,"status":"raw","attempts":0,"claimed_by":null,"claimed_at":null,"lease_until":null,"last_error":null,"payload_bytes":10,"truncated":false,"created_at":"2026-11-29T16:11:13.604Z","updated_at":"2026-11-29T16:11:13.604Z","lease_token":null,"retry_at":null}"#;

    #[test]
    fn a_sessions_records_become_its_turns() {
        let mut gather = Gather::default();
        for line in SESSION.lines() {
            assert!(gather.take(&parse(line).unwrap()).is_none());
        }
        let shown = serde_json::to_value(gather.finish().unwrap()).unwrap();
        assert!(gather.finish().is_none());
        assert_eq!(shown["private_turns"], 1);
        assert_eq!(
            shown["turns"],
            serde_json::json!([
                {"n": 1, "at": "2026-11-29T15:46:10.452Z", "prompt": "hello <b>world</b> foo",
                 "calls": [{"tool": "Bash", "input": "cargo test\nRun tests",
                            "answer": "ok 3 passed", "failed": false}],
                 "replies": []},
                {"n": 2, "at": null, "prompt": null, "calls": [], "replies": ["All green."]}
            ])
        );
    }
}
