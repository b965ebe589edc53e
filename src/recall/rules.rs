//! The project's standing instructions among a coding task's search results. A task ("write a
//! rate limiter for the upload endpoint") rarely shares a word with the rules that apply to it
//! ("always add type hints to public functions"), so full text alone finds them for about half
//! of the tasks of the conventions set; the project's current rules are few (a dozen, said by
//! its people), and they bear on any work in it. So a search that reads as a task, in one
//! project, has up to [`SHOWN`] of them woven into its results: every other place from the
//! second, those sharing the most words with the task first, then the newest. A question ("how
//! did we fix the deploy?") gets none: it asks what happened, not how to work.

use anyhow::Result;

use super::Recall;
use crate::store::fts::Hit;
use crate::store::fts::Item;
use crate::store::fts::rank::Standing;
use crate::store::read::standing::Instruction;
use crate::store::rows::Kind;

/// The most rules woven into a task's results.
pub const SHOWN: usize = 5;

/// The rules to weave into the results of `words`, searched in `project`, best first; none
/// when the words do not read as a task, or a search is not of one project.
pub fn for_task(recall: &Recall, project: Option<&str>, words: &str) -> Result<Vec<Hit>> {
    let Some(project) = project else {
        return Ok(Vec::new());
    };
    if !reads_as_a_task(words) {
        return Ok(Vec::new());
    }
    let about = crate::standing::subject(words);
    let mut current: Vec<Instruction> = recall
        .reader()
        .standing(project)?
        .into_iter()
        .filter(Instruction::is_current)
        .collect();
    // Newest first, then the most words shared first (a stable sort keeps the newest first
    // among equals).
    current.reverse();
    current.sort_by_key(|i| std::cmp::Reverse(crate::standing::subject(&i.text).shared(&about)));
    Ok(current
        .into_iter()
        .take(SHOWN)
        .map(|i| hit(i, project))
        .collect())
}

/// `hits` with `rules` woven in, every other place from the second (what matched best stays
/// first); a rule already among the hits stays where it is.
pub fn weave(hits: Vec<Hit>, rules: Vec<Hit>) -> Vec<Hit> {
    let mut rules: Vec<Hit> = rules
        .into_iter()
        .filter(|r| !hits.iter().any(|h| h.item.id == r.item.id))
        .collect();
    rules.reverse();
    let mut out = Vec::with_capacity(hits.len() + rules.len());
    for hit in hits {
        out.push(hit);
        out.extend(rules.pop());
    }
    out.extend(rules.into_iter().rev());
    out
}

fn hit(rule: Instruction, project: &str) -> Hit {
    Hit {
        item: Item {
            kind: Kind::Prompt,
            id: rule.prompt,
            session_id: rule.session_id,
            project_dir: Some(project.to_string()),
            tool_name: None,
            files: Vec::new(),
            prompt_number: Some(rule.prompt_number),
            title: rule.text.clone(),
            created_at: rule.said_at,
        },
        snippet: rule.text,
        matches: Vec::new(),
        score: 0.0,
        count: 1,
        standing: Standing {
            tier: 0,
            relevance: 0.0,
        },
    }
}

/// Whether a search reads as a task to do rather than a question about what happened: not a
/// question, and an order ("add a CSV export…") or a statement of work ("a DAG that refreshes
/// the rates every morning") of a few words.
fn reads_as_a_task(words: &str) -> bool {
    const QUESTIONS: &[&str] = &[
        "how", "why", "what", "when", "where", "which", "who", "whose", "did", "does", "do", "is",
        "are", "was", "were", "can", "could", "should", "would", "will", "has", "have",
    ];
    let lower = words.to_lowercase();
    let first = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .find(|w| !w.is_empty())
        .unwrap_or_default();
    !lower.contains('?') && !QUESTIONS.contains(&first) && lower.split_whitespace().count() >= 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reads_as_one_and_a_question_does_not() {
        assert!(reads_as_a_task(
            "write a rate limiter for the upload endpoint"
        ));
        assert!(reads_as_a_task(
            "a DAG that refreshes the exchange rates every morning"
        ));
        assert!(!reads_as_a_task("how did we fix the deploy"));
        assert!(!reads_as_a_task(
            "which shell command failed with exit code 3?"
        ));
        assert!(!reads_as_a_task("merge conflicts"));
    }
}
