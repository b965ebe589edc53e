//! The project's standing instructions among a coding task's search results. A task ("write a
//! rate limiter for the upload endpoint") rarely shares a word with the rules that apply to it
//! ("always add type hints to public functions"), so full text alone finds them for about half
//! of the tasks of the conventions set; the project's current rules are few (a dozen, said by
//! its people), and they bear on any work in it. So a search that reads as a task, in one
//! project, has up to [`SHOWN`] of them after its best match, the nearest to the task in
//! meaning first (the static model of `meaning`: with words alone, the rules a task needs were
//! in the first ten for 70% of the set's tasks, with the model 88%; docs/relevance.md). A
//! question ("how did we fix the deploy?") gets none: it asks what happened, not how to work.

use anyhow::Result;

use super::Recall;
use crate::store::fts::Hit;
use crate::store::fts::Item;
use crate::store::fts::rank::Standing;
use crate::store::read::standing::Instruction;
use crate::store::rows::Kind;

/// The most rules woven into a task's results.
pub const SHOWN: usize = 7;

/// The rules to weave into the results of `words`, searched in `project`, best first; none
/// when the words do not read as a task, or a search is not of one project.
pub fn for_task(recall: &Recall, project: Option<&str>, words: &str) -> Result<Vec<Hit>> {
    let Some(project) = project else {
        return Ok(Vec::new());
    };
    if !reads_as_a_task(words) {
        return Ok(Vec::new());
    }
    let current = recall.reader().standing(project)?;
    if current.is_empty() {
        return Ok(Vec::new());
    }
    let task = crate::meaning::of(words);
    let mut current: Vec<(f32, Instruction)> = current
        .into_iter()
        .filter(Instruction::is_current)
        .map(|i| (task.near(&crate::meaning::of(&i.text)), i))
        .collect();
    current.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(current
        .into_iter()
        .take(SHOWN)
        .map(|(_, i)| hit(i, project))
        .collect())
}

/// `hits` with `rules` woven in: what matched best first, then the rules, nearest in meaning
/// first, then the other hits. A rule already among the hits is shown once, in the rules.
pub fn weave(hits: Vec<Hit>, rules: Vec<Hit>) -> Vec<Hit> {
    let mut hits: Vec<Hit> = hits
        .into_iter()
        .filter(|h| !rules.iter().any(|r| r.item.id == h.item.id))
        .collect();
    let rest = hits.split_off(hits.len().min(1));
    hits.extend(rules);
    hits.extend(rest);
    hits
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

    fn found(id: &str) -> Hit {
        let said = Instruction {
            prompt: id.to_string(),
            session_id: "s".to_string(),
            prompt_number: 1,
            text: id.to_string(),
            subject: crate::standing::subject(id),
            said_at: String::new(),
            pinned_at: None,
            replaced_by: None,
            replaces: None,
        };
        hit(said, "/p")
    }

    fn ids(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.item.id.as_str()).collect()
    }

    #[test]
    fn the_rules_come_after_the_best_match_and_a_rule_found_among_the_hits_once() {
        let hits = ["a", "b", "r2", "c"].map(found).to_vec();
        let rules = ["r1", "r2", "r3"].map(found).to_vec();
        assert_eq!(ids(&weave(hits, rules)), ["a", "r1", "r2", "r3", "b", "c"]);
        let first = ["r1", "a"].map(found).to_vec();
        let rules = ["r2", "r1"].map(found).to_vec();
        assert_eq!(ids(&weave(first, rules)), ["a", "r2", "r1"]);
        assert_eq!(ids(&weave(Vec::new(), ["r1"].map(found).to_vec())), ["r1"]);
    }

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
