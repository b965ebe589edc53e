//! The conventions set (ours, benches/data/conventions.json): coding projects in which a lead
//! states the house rules over several Claude Code sessions, among ordinary requests, and later
//! changes some of them; then coding tasks, each asked in a new session of its project after all
//! of them, that the rules apply to but share few words with. It is the shape of issue 25: what
//! the user told Claude has to come back when Claude writes code.
//!
//! Each session goes through the hooks as Claude Code 2.1.197 sends them (tests/fixtures/hooks):
//! SessionStart, then per turn UserPromptSubmit, its tool calls (PostToolUse, or
//! PostToolUseFailure with its error) and Stop with Claude's last message, then SessionEnd. A
//! result is scored by its turn: the evidence of a task is the prompt that stated each rule that
//! applies to it, in its current version. The data also marks what must never reach a task as
//! a rule (the traps): Claude's own words, a `<private>` part, a secret, a prompt that says
//! "always" or "never" without setting a rule, and rules of another project.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::Result;
use crate::set::{Doc, Load, Query, Set, Unit, session_id, turn};

/// What the set knows beyond its queries: the rules, the traps, and per task (in the order of
/// the set's first queries) the rules that apply and the versions they replaced.
pub struct Standing {
    pub rules: Vec<Rule>,
    pub traps: Vec<Trap>,
    pub tasks: Vec<Task>,
}

pub struct Rule {
    pub project: String,
    /// The turn whose prompt stated it.
    pub turn: String,
    /// Its words as the user said them, a part of that prompt.
    pub text: String,
}

pub struct Trap {
    pub kind: String,
    pub text: String,
    /// The project whose tasks it must never reach.
    pub project: String,
    /// For a rule of another project: the turn that stated it, whose short id must not reach
    /// either.
    pub turn: Option<String>,
}

pub struct Task {
    pub project: String,
    /// Indices into `Standing::rules`, current versions.
    pub rules: Vec<usize>,
    /// (superseded, current): each earlier version of a rule the task lists.
    pub superseded: Vec<(usize, usize)>,
}

#[derive(Deserialize)]
struct File {
    projects: Vec<Project>,
}

#[derive(Deserialize)]
struct Project {
    name: String,
    dir: String,
    #[serde(default)]
    never: Vec<String>,
    sessions: Vec<Vec<Turn>>,
    tasks: Vec<TaskIn>,
}

#[derive(Deserialize)]
struct Turn {
    prompt: String,
    #[serde(default)]
    tools: Vec<Value>,
    #[serde(default)]
    claude: String,
    #[serde(default)]
    rules: Vec<RuleIn>,
    #[serde(default)]
    traps: Vec<TrapIn>,
}

#[derive(Deserialize)]
struct RuleIn {
    id: String,
    text: String,
    supersedes: Option<String>,
}

#[derive(Deserialize)]
struct TrapIn {
    kind: String,
    text: String,
}

#[derive(Deserialize)]
struct TaskIn {
    id: String,
    task: String,
    rules: Vec<String>,
    #[serde(default)]
    superseded: Vec<String>,
}

pub fn read(path: &Path) -> Result<(Set, Standing)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: File = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut loaded = Loaded::default();
    for project in &file.projects {
        loaded.sessions(project)?;
    }
    for project in &file.projects {
        loaded.never(project)?;
    }
    for project in &file.projects {
        for task in &project.tasks {
            loaded.task(project, task)?;
        }
    }
    let Loaded {
        events,
        docs,
        queries,
        rules,
        traps,
        tasks,
        ..
    } = loaded;
    let set = Set {
        name: "conventions",
        load: Load::Hooks(events),
        docs,
        queries,
        unit: Unit::Turn,
        projects: file.projects.iter().map(|p| p.dir.clone()).collect(),
    };
    Ok((
        set,
        Standing {
            rules,
            traps,
            tasks,
        },
    ))
}

#[derive(Default)]
struct Loaded {
    events: Vec<(&'static str, Value)>,
    docs: Vec<Doc>,
    queries: Vec<Query>,
    rules: Vec<Rule>,
    /// The index of each rule by its id, and the id of the rule that replaced it.
    ids: HashMap<String, usize>,
    replaced_by: HashMap<String, String>,
    traps: Vec<Trap>,
    tasks: Vec<Task>,
}

impl Loaded {
    /// A project's sessions as hook events, their documents, rules and traps.
    fn sessions(&mut self, project: &Project) -> Result<()> {
        for (n, turns) in project.sessions.iter().enumerate() {
            let id = session_id(&format!("conventions/{}/{}", project.name, n + 1));
            let session = Session::new(&id, &project.dir);
            self.events.push(("context", session.start()));
            for (i, said) in turns.iter().enumerate() {
                let key = turn(&id, i as i64 + 1);
                self.turn(project, &session, &key, said)?;
            }
            self.events.push(("cleanup", session.end(turns.len())));
        }
        Ok(())
    }

    fn turn(&mut self, project: &Project, session: &Session, key: &str, said: &Turn) -> Result<()> {
        let prompt_id = session_id(key);
        self.events
            .push(("prompt", session.prompt(&prompt_id, &said.prompt)));
        let kept = without_private(&said.prompt);
        let private = kept.trim().is_empty();
        let doc = |text: String| Doc {
            project: project.dir.clone(),
            key: key.to_string(),
            text,
        };
        if !private {
            self.docs.push(doc(kept));
        }
        for (n, tool) in said.tools.iter().enumerate() {
            let call = session.tool(&prompt_id, &format!("{key}/{n}"), &project.dir, tool)?;
            if !private {
                self.docs.push(doc(crate::coding::text_of(&call.1)));
            }
            self.events.push(call);
        }
        self.events
            .push(("summary", session.stop(&prompt_id, &said.claude)));
        if !private && !said.claude.is_empty() {
            self.docs.push(doc(said.claude.clone()));
        }
        for rule in &said.rules {
            self.rule(project, key, &said.prompt, rule)?;
        }
        for trap in &said.traps {
            let within = match trap.kind.as_str() {
                "model's words" => &said.claude,
                "private" | "secret" | "not a rule" => &said.prompt,
                other => {
                    return Err(format!("{key}: a trap of no kind the bench knows: {other}").into());
                }
            };
            if !plain(within).contains(&plain(&trap.text)) {
                return Err(format!("{key}: trap {:?} is not in its turn", trap.text).into());
            }
            self.traps.push(Trap {
                kind: trap.kind.clone(),
                text: trap.text.clone(),
                project: project.dir.clone(),
                turn: None,
            });
        }
        Ok(())
    }

    fn rule(&mut self, project: &Project, key: &str, prompt: &str, rule: &RuleIn) -> Result<()> {
        if !plain(prompt).contains(&plain(&rule.text)) {
            return Err(format!("rule {}: {:?} is not in its prompt", rule.id, rule.text).into());
        }
        if let Some(earlier) = &rule.supersedes {
            if !self.ids.contains_key(earlier) {
                return Err(
                    format!("rule {} replaces {earlier}, not stated before", rule.id).into(),
                );
            }
            self.replaced_by.insert(earlier.clone(), rule.id.clone());
        }
        let index = self.rules.len();
        if self.ids.insert(rule.id.clone(), index).is_some() {
            return Err(format!("rule {} is stated twice", rule.id).into());
        }
        self.rules.push(Rule {
            project: project.dir.clone(),
            turn: key.to_string(),
            text: rule.text.clone(),
        });
        Ok(())
    }

    /// The rules of other projects that must never reach this one's tasks.
    fn never(&mut self, project: &Project) -> Result<()> {
        for id in &project.never {
            let rule = &self.rules[*self.ids.get(id).ok_or(format!("never: no rule {id}"))?];
            if rule.project == project.dir {
                return Err(format!("never: {id} is {}'s own rule", project.name).into());
            }
            self.traps.push(Trap {
                kind: "other project".into(),
                text: rule.text.clone(),
                project: project.dir.clone(),
                turn: Some(rule.turn.clone()),
            });
        }
        Ok(())
    }

    /// A task as a query (its gold the turns that stated its rules), checked against the rules:
    /// each of its project, current, and its superseded versions the ones the data names.
    fn task(&mut self, project: &Project, task: &TaskIn) -> Result<()> {
        let mut rules = Vec::new();
        let mut superseded = Vec::new();
        for id in &task.rules {
            let &index = self
                .ids
                .get(id)
                .ok_or(format!("{}: no rule {id}", task.id))?;
            if self.rules[index].project != project.dir || self.replaced_by.contains_key(id) {
                return Err(
                    format!("{}: {id} is not a current rule of its project", task.id).into(),
                );
            }
            rules.push(index);
            let earlier = self.replaced_by.iter().filter(|(_, by)| *by == id);
            for (old, _) in earlier {
                superseded.push((self.ids[old], index));
            }
        }
        superseded.sort_unstable();
        let mut named: Vec<usize> = task
            .superseded
            .iter()
            .filter_map(|id| self.ids.get(id).copied())
            .collect();
        named.sort_unstable();
        if named != superseded.iter().map(|(old, _)| *old).collect::<Vec<_>>() {
            return Err(format!(
                "{}: superseded should name what its rules replaced",
                task.id
            )
            .into());
        }
        let slice = match (rules.len(), superseded.is_empty()) {
            (0, _) => "control (no rules)",
            (_, false) => "updated rule",
            (1, true) => "one rule",
            _ => "several rules",
        };
        self.queries.push(Query {
            project: project.dir.clone(),
            text: task.task.clone(),
            gold: rules.iter().map(|&r| self.rules[r].turn.clone()).collect(),
            slice: slice.into(),
        });
        self.tasks.push(Task {
            project: project.dir.clone(),
            rules,
            superseded,
        });
        Ok(())
    }
}

/// One Claude Code session: the fields every event of it carries.
pub struct Session {
    id: String,
    cwd: String,
    transcript: String,
}

impl Session {
    pub fn new(id: &str, cwd: &str) -> Session {
        Session {
            id: id.to_string(),
            cwd: cwd.to_string(),
            transcript: format!(
                "/home/dev/.claude/projects/{}/{id}.jsonl",
                cwd.replace(['/', '_', '.'], "-")
            ),
        }
    }

    fn event(&self, name: &str, prompt_id: Option<&str>) -> Value {
        let mut event = json!({"session_id": self.id, "transcript_path": self.transcript,
                               "cwd": self.cwd});
        if let Some(id) = prompt_id {
            event["prompt_id"] = json!(id);
        }
        event["hook_event_name"] = json!(name);
        event
    }

    pub fn start(&self) -> Value {
        let mut event = self.event("SessionStart", None);
        event["source"] = json!("startup");
        event["model"] = json!("claude-opus-4-8");
        event
    }

    pub fn prompt(&self, prompt_id: &str, prompt: &str) -> Value {
        let mut event = self.event("UserPromptSubmit", Some(prompt_id));
        event["permission_mode"] = json!("default");
        event["prompt"] = json!(prompt);
        event
    }

    fn stop(&self, prompt_id: &str, message: &str) -> Value {
        let mut event = self.event("Stop", Some(prompt_id));
        event["permission_mode"] = json!("default");
        event["effort"] = json!({"level": "high"});
        event["stop_hook_active"] = json!(false);
        event["last_assistant_message"] = json!(message);
        event["background_tasks"] = json!([]);
        event["session_crons"] = json!([]);
        event
    }

    fn end(&self, prompts: usize) -> Value {
        let last = session_id(&turn(&self.id, prompts as i64));
        let mut event = self.event("SessionEnd", Some(&last));
        event["reason"] = json!("prompt_input_exit");
        event
    }

    /// A tool call of the data (`{"tool": "Bash", "command", "stdout"}`, `{"tool": "Edit",
    /// "file_path", "old_string", "new_string"}`, `{"tool": "Write", "file_path", "content"}`,
    /// `{"tool": "Read", "file_path", "content"}`; a Bash call with `error` failed) as Claude
    /// Code reports it, paths made absolute in the project.
    fn tool(
        &self,
        prompt_id: &str,
        name: &str,
        dir: &str,
        tool: &Value,
    ) -> Result<(&'static str, Value)> {
        let field = |f: &str| tool[f].as_str().unwrap_or_default();
        let path = match field("file_path") {
            "" => String::new(),
            p => format!("{dir}/{p}"),
        };
        let (input, response) = match field("tool") {
            "Bash" => (
                json!({"command": field("command"), "description": field("description")}),
                json!({"stdout": field("stdout"), "stderr": "", "interrupted": false,
                       "isImage": false, "noOutputExpected": false}),
            ),
            "Edit" => (
                json!({"file_path": path, "old_string": field("old_string"),
                       "new_string": field("new_string"), "replace_all": false}),
                json!({"filePath": path, "oldString": field("old_string"),
                       "newString": field("new_string"), "originalFile": null,
                       "structuredPatch": [], "userModified": false, "replaceAll": false}),
            ),
            "Write" => (
                json!({"file_path": path, "content": field("content")}),
                json!({"type": "create", "filePath": path, "content": field("content"),
                       "structuredPatch": [], "originalFile": null, "userModified": false}),
            ),
            "Read" => {
                let lines = field("content").lines().count();
                (
                    json!({"file_path": path}),
                    json!({"type": "text", "file": {"filePath": path, "content": field("content"),
                        "numLines": lines, "startLine": 1, "totalLines": lines}}),
                )
            }
            other => return Err(format!("{name}: a tool the set does not know: {other}").into()),
        };
        let failed = tool.get("error").is_some();
        let mut event = self.event(
            if failed {
                "PostToolUseFailure"
            } else {
                "PostToolUse"
            },
            Some(prompt_id),
        );
        event["permission_mode"] = json!("default");
        event["effort"] = json!({"level": "high"});
        event["tool_name"] = tool["tool"].clone();
        event["tool_input"] = input;
        if failed {
            event["error"] = tool["error"].clone();
            event["is_interrupt"] = json!(false);
        } else {
            event["tool_response"] = response;
        }
        event["tool_use_id"] = json!(format!(
            "toolu_{}",
            &session_id(name).replace('-', "")[..24]
        ));
        event["duration_ms"] = json!(40 + name.len() * 7 % 900);
        Ok(("capture", event))
    }
}

/// A text with its `<private>…</private>` parts left out, as the hooks store it.
fn without_private(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("<private>") {
        out.push_str(&rest[..at]);
        rest = match rest[at..].find("</private>") {
            Some(end) => &rest[at + end + "</private>".len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// A text lowered, its runs of white space one space: how a rule's words are looked for.
pub fn plain(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
