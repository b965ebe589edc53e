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

/// How much of a tool call's answer the page keeps: its start and its end.
const ANSWER_HEAD_CHARS: usize = 600;
const ANSWER_TAIL_CHARS: usize = 200;

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
    title: String,
    input: String,
    answer: String,
    failed: bool,
    at: String,
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
        title: text.title,
        input: input.to_string(),
        answer: bounded(&text.body, ANSWER_HEAD_CHARS, ANSWER_TAIL_CHARS),
        failed: q.event == "PostToolUseFailure",
        at: q.created_at.clone(),
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
