//! LoCoMo, read from where the user put it: `locomo10.json` (a list of samples, each with its
//! `conversation` and `qa`), or the folder of `data/locomo10.zip` unpacked (one conversation a
//! file, its sessions and `qa` at the top). Each conversation is a project; each of its
//! sessions a Claude Code session; each turn a prompt, "Speaker: text", with the caption of a
//! photo it shared. Questions of category 5 (adversarial: the evidence is the other speaker's)
//! are left out, as in the published retrieval figures; evidence ids that name no turn are
//! dropped, and a question left with none is skipped.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::Result;
use crate::set::{Doc, Load, Query, Set, Unit, session_id, turn};

pub fn read(path: &Path, limit: Option<usize>) -> Result<Set> {
    let mut conversations = samples(path)?;
    if let Some(n) = limit {
        conversations.truncate(n);
    }
    let (mut events, mut docs, mut queries, mut projects) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (name, conversation, qa) in &conversations {
        let project = format!("/bench/locomo/{name}");
        let mut turns = HashMap::new();
        for (n, session) in sessions(conversation) {
            let id = session_id(&format!("locomo/{name}/{n}"));
            // The hook numbers a session's prompts from 1 in the order they come.
            let mut number = 0;
            for said in session {
                let (Some(dia), Some(text)) = (said["dia_id"].as_str(), utterance(said)) else {
                    continue;
                };
                number += 1;
                let key = turn(&id, number);
                turns.insert(dia.to_string(), key.clone());
                events.push((
                    "prompt",
                    json!({"session_id": id, "cwd": project, "hook_event_name": "UserPromptSubmit",
                           "prompt_id": session_id(&key), "prompt": text}),
                ));
                docs.push(Doc {
                    project: project.clone(),
                    key,
                    text,
                });
            }
        }
        for q in qa {
            let category = q["category"].as_i64().unwrap_or(0);
            let Some(question) = q["question"].as_str() else {
                continue;
            };
            let gold: Vec<String> = evidence(q)
                .iter()
                .filter_map(|id| turns.get(id).cloned())
                .collect();
            if category == 5 || gold.is_empty() {
                continue;
            }
            queries.push(Query {
                project: project.clone(),
                text: question.to_string(),
                gold,
                slice: format!("category {category}"),
            });
        }
        projects.push(project);
    }
    if queries.is_empty() {
        return Err(format!("{} holds no LoCoMo question", path.display()).into());
    }
    Ok(Set {
        name: "LoCoMo",
        load: Load::Hooks(events),
        docs,
        queries,
        unit: Unit::Turn,
        projects,
    })
}

type Sample = (String, Map<String, Value>, Vec<Value>);

/// `(name, conversation, qa)` of each conversation, in the order of the file or of the names.
fn samples(path: &Path) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let stem = file.file_stem().unwrap_or_default().to_string_lossy();
            out.extend(parse(&file, &format!("conv-{stem}"))?);
        }
    } else {
        out = parse(path, "conv")?;
    }
    if out.is_empty() {
        return Err(format!("{}: no LoCoMo conversation found", path.display()).into());
    }
    Ok(out)
}

fn parse(file: &Path, name: &str) -> Result<Vec<Sample>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let items = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let Value::Object(mut sample) = item else {
            continue;
        };
        let qa = match sample.remove("qa") {
            Some(Value::Array(qa)) => qa,
            _ => Vec::new(),
        };
        let name = match sample.get("sample_id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None if i == 0 => name.to_string(),
            None => format!("{name}-{i}"),
        };
        let conversation = match sample.remove("conversation") {
            Some(Value::Object(c)) => c,
            _ => sample,
        };
        out.push((name, conversation, qa));
    }
    Ok(out)
}

/// The sessions `session_N` (lists of turns), in order of N.
fn sessions(conversation: &Map<String, Value>) -> Vec<(u32, &Vec<Value>)> {
    let mut out: Vec<_> = conversation
        .iter()
        .filter_map(|(key, value)| {
            let n = key.strip_prefix("session_")?.parse().ok()?;
            Some((n, value.as_array()?))
        })
        .collect();
    out.sort_by_key(|(n, _)| *n);
    out
}

fn utterance(said: &Value) -> Option<String> {
    let speaker = said["speaker"].as_str()?;
    let mut text = format!("{speaker}: {}", said["text"].as_str()?);
    if let Some(caption) = said["blip_caption"].as_str() {
        text.push_str(&format!(" [shares {caption}]"));
    }
    Some(text)
}

/// The evidence ids of a question: `D3:1`, also when several share one string ("D8:6; D9:17").
fn evidence(q: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for text in q["evidence"].as_array().into_iter().flatten() {
        for id in text
            .as_str()
            .unwrap_or_default()
            .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        {
            if let Some((d, t)) = id.strip_prefix('D').and_then(|r| r.split_once(':'))
                && !d.is_empty()
                && d.bytes().all(|b| b.is_ascii_digit())
                && t.bytes().all(|b| b.is_ascii_digit())
            {
                ids.push(id.to_string());
            }
        }
    }
    ids
}
