//! A checked answer as the rows to store: each memory with the queue items it came from (its
//! sources), the turn and the time of the work; the summary with the files the batch's calls
//! read and changed. Every string the model wrote passes the same secret redaction as what the
//! hooks capture; paths it wrote relative to the project (as the digest shows them) are made
//! absolute again, as the queue's are, so that `search --file` finds both alike.

use super::answer::Answer;
use crate::privacy::secrets::Redactor;
use crate::store::compressed::{NewMemory, NewSummary};
use crate::store::queue::Item;
use crate::store::rows::{MemoryText, SummaryText};

/// The tools whose calls change files.
const CHANGES: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

pub fn rows(
    answer: &Answer,
    items: &[Item],
    project: Option<&str>,
    redactor: &Redactor,
) -> (Vec<NewMemory>, Option<NewSummary>) {
    let redact = |text: &str| redactor.redact(text).into_owned();
    let redact_all = |list: &[String]| list.iter().map(|t| redact(t)).collect::<Vec<_>>();
    let paths = |list: &[String]| {
        list.iter()
            .map(|p| redact(&absolute(p, project)))
            .collect::<Vec<_>>()
    };
    let memories = answer
        .observations
        .iter()
        .map(|o| {
            // Checked: every source is an item of the batch.
            let sources: Vec<&Item> = o.sources.iter().map(|&n| &items[n as usize - 1]).collect();
            let o = &o.memory;
            NewMemory {
                text: MemoryText {
                    kind: o.kind.clone(),
                    title: redact(&o.title),
                    narrative: redact(&o.narrative),
                    facts: redact_all(&o.facts),
                    concepts: o.concepts.clone(),
                    files_read: paths(&o.files_read),
                    files_modified: paths(&o.files_modified),
                },
                queue_ids: sources.iter().map(|i| i.id.clone()).collect(),
                prompt_number: sources.iter().filter_map(|i| i.prompt_number).min(),
                created_at: latest(sources.iter().copied()),
            }
        })
        .collect();
    let summary = answer.summary.as_ref().map(|s| NewSummary {
        text: SummaryText {
            request: redact(&s.request),
            investigated: redact(&s.investigated),
            learned: redact(&s.learned),
            completed: redact(&s.completed),
            next_steps: redact(&s.next_steps),
        },
        files_read: touched(items, &["Read"]),
        files_edited: touched(items, CHANGES),
        queue_ids: items.iter().map(|i| i.id.clone()).collect(),
        prompt_number: items.iter().filter_map(|i| i.prompt_number).max(),
        created_at: latest(items.iter()),
    });
    (memories, summary)
}

/// When the newest of `items` was captured: when the work a row tells of happened.
fn latest<'a>(items: impl Iterator<Item = &'a Item>) -> String {
    items
        .map(|i| i.created_at.as_str())
        .max()
        .unwrap_or_default()
        .to_string()
}

/// The files the calls of `tools` named, in order, once each.
fn touched(items: &[Item], tools: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for item in items {
        if item
            .tool_name
            .as_deref()
            .is_some_and(|t| tools.contains(&t))
        {
            for file in &item.files_touched {
                if !files.contains(file) {
                    files.push(file.clone());
                }
            }
        }
    }
    files
}

/// A path as the model wrote it (relative to the project, as the digest shows paths) made
/// absolute again.
fn absolute(path: &str, project: Option<&str>) -> String {
    match project {
        Some(project) if !path.starts_with('/') && !path.is_empty() => format!(
            "{}/{}",
            project.trim_end_matches('/'),
            path.trim_start_matches("./")
        ),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_back_absolute_and_others_stay() {
        assert_eq!(absolute("src/a.rs", Some("/p/")), "/p/src/a.rs");
        assert_eq!(absolute("./src/a.rs", Some("/p")), "/p/src/a.rs");
        assert_eq!(absolute("/etc/hosts", Some("/p")), "/etc/hosts");
        assert_eq!(absolute("src/a.rs", None), "src/a.rs");
    }
}
