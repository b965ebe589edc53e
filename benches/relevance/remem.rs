//! remem's golden set (benches/data/remem-golden.json, MIT, see remem-LICENSE): memories in
//! synthetic projects, brought in as `claude-mem import` brings memories (one session a
//! project, each memory a turn of it), and queries whose evidence names a memory by its
//! `topic_key` (or, lacking one, by text it contains). A query expecting abstention has none.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::Result;
use crate::set::{Doc, Load, Query, Set, Unit, session_id, turn};

pub fn read(path: &Path) -> Result<Set> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let golden: Value = serde_json::from_str(&text)?;
    let corpus = golden["corpus"]
        .as_array()
        .ok_or("golden.json has no corpus")?;
    let mut by_project: BTreeMap<&str, Vec<(usize, &Value)>> = BTreeMap::new();
    for (i, memory) in corpus.iter().enumerate() {
        let project = memory["project"]
            .as_str()
            .ok_or("a memory without project")?;
        by_project.entry(project).or_default().push((i, memory));
    }
    let (lines, docs, keys) = import(&by_project, corpus.len());
    let queries = golden["queries"]
        .as_array()
        .ok_or("golden.json has no queries")?
        .iter()
        .map(|q| query(q, corpus, &keys))
        .collect::<Result<_>>()?;
    Ok(Set {
        name: "remem golden",
        load: Load::Import(lines.join("\n") + "\n"),
        docs,
        queries,
        unit: Unit::Turn,
        projects: by_project.keys().map(|p| project_dir(p)).collect(),
    })
}

/// The export lines that bring the memories in (a header, then each project's session and
/// its memories, one a turn), the docs they make, and the key of each memory of the corpus.
fn import(
    by_project: &BTreeMap<&str, Vec<(usize, &Value)>>,
    memories_in_corpus: usize,
) -> (Vec<String>, Vec<Doc>, Vec<String>) {
    let header = json!({"format": "claude-mem/1", "exported_at": "2026-01-01T00:00:00.000Z",
                        "claude_mem": "relevance-bench", "filters": {}});
    let mut lines = vec![header.to_string()];
    let mut docs = Vec::new();
    let mut keys = vec![String::new(); memories_in_corpus];
    for (project, memories) in by_project {
        let dir = project_dir(project);
        let session = session_id(&format!("remem/{project}"));
        let started = at(memories.first().map(|(i, m)| (*i, *m)));
        lines.push(
            json!({"type": "session", "session_id": session, "project_dir": dir, "cwd": dir,
                   "transcript_path": null, "source": "startup", "model": null,
                   "status": "closed", "prompt_count": memories.len(),
                   "last_assistant_message": null, "started_at": started, "updated_at": started,
                   "ended_at": null, "end_reason": null, "reduced_at": null})
            .to_string(),
        );
        for (n, (i, memory)) in memories.iter().enumerate() {
            let number = n as i64 + 1;
            let key = turn(&session, number);
            let title = memory["title"].as_str().unwrap_or_default();
            let content = memory["content"].as_str().unwrap_or_default();
            lines.push(
                json!({"type": "memory", "id": session_id(&format!("remem/memory/{i}")),
                       "key": format!("remem/{i}"), "session_id": session, "project_dir": dir,
                       "prompt_number": number, "memory_type": memory["memory_type"],
                       "title": title, "subtitle": null, "narrative": content, "facts": [],
                       "concepts": [], "files_read": [], "files_modified": [], "queue_ids": [],
                       "origin": "import", "model": null, "extra": null,
                       "created_at": at(Some((*i, memory)))})
                .to_string(),
            );
            docs.push(Doc {
                project: dir.clone(),
                key: key.clone(),
                text: format!("{title}\n{content}"),
            });
            keys[*i] = key;
        }
    }
    (lines, docs, keys)
}

/// A query of the golden set, its evidence as the keys of the memories it names.
fn query(q: &Value, corpus: &[Value], keys: &[String]) -> Result<Query> {
    let project = q["project"].as_str().ok_or("a query without project")?;
    let mut gold = Vec::new();
    for evidence in q["evidence_refs"].as_array().into_iter().flatten() {
        let found = corpus
            .iter()
            .position(|m| match evidence["topic_key"].as_str() {
                Some(topic) => m["topic_key"].as_str() == Some(topic),
                None => {
                    m["project"].as_str() == Some(project)
                        && evidence["text_contains"]
                            .as_str()
                            .is_some_and(|t| m["content"].as_str().is_some_and(|c| c.contains(t)))
                }
            });
        gold.push(
            keys[found.ok_or_else(|| format!("{q}: its evidence is not in the corpus"))?].clone(),
        );
    }
    Ok(Query {
        project: project_dir(project),
        text: q["query"]
            .as_str()
            .ok_or("a query without text")?
            .to_string(),
        gold,
        slice: q["slice"].as_str().unwrap_or("other").to_string(),
    })
}

fn project_dir(project: &str) -> String {
    format!("/bench/remem/{project}")
}

/// When a memory was made: its `created_at_epoch`, else a minute apart in corpus order.
fn at(memory: Option<(usize, &Value)>) -> String {
    let (i, memory) = memory.unwrap_or((0, &Value::Null));
    let epoch = memory["created_at_epoch"]
        .as_i64()
        .unwrap_or(1_767_225_600 + 60 * i as i64);
    chrono::DateTime::from_timestamp(epoch, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
