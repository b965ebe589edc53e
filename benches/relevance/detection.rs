//! Whether a prompt states a standing instruction, scored on its own: the held-out prompts
//! (benches/data/conventions-heldout.json, and a second set, conventions-heldout2.json, kept
//! apart from tuning; both written without reading the detector, so that it is measured on text
//! it was not tuned on) and, beside them, the conventions set's turns (those that carry rules
//! state one, the others none).
//!
//! Each prompt goes to the real binary's `hook prompt` as the first prompt of a session of its
//! own, in a project of its own: nothing said before can change what is found in it. Then
//! `conventions --all --json --replaced` lists every instruction found, each with the session
//! that said it, which is the prompt's. A rule prompt is detected when at least one instruction
//! came from it; every instruction from an ordinary prompt is a false positive.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::Result;
use crate::conventions::{Standing, plain};
use crate::product::Product;
use crate::set::{Load, Set, session_id};

/// A set of prompts, each labelled.
pub struct Labelled {
    pub name: &'static str,
    pub prompts: Vec<Said>,
}

pub struct Said {
    pub text: String,
    /// The words that state its instruction; `None` for an ordinary prompt.
    pub rule: Option<String>,
    /// Phrased so that a keyword detector may get it wrong (the held-out set marks these).
    pub hard: bool,
}

/// What was found in one prompt: the words of each instruction, and the time `hook prompt`
/// took.
pub struct Found {
    pub texts: Vec<String>,
    pub took: Duration,
}

/// A prompt the detector got wrong: a rule prompt where nothing was found, or an ordinary one
/// where something was.
pub struct Wrong {
    pub set: &'static str,
    pub prompt: String,
    pub rule: Option<String>,
    pub found: Vec<String>,
}

#[derive(Deserialize)]
struct File {
    rules: Vec<RuleIn>,
    ordinary: Vec<OrdinaryIn>,
}

#[derive(Deserialize)]
struct RuleIn {
    prompt: String,
    rule: String,
    #[serde(default)]
    hard: bool,
}

#[derive(Deserialize)]
struct OrdinaryIn {
    prompt: String,
    /// Why it states no standing instruction: required, so that each was thought about.
    why: String,
    #[serde(default)]
    hard: bool,
}

/// A held-out set, scored under `name`; each rule's words must be in its prompt.
pub fn heldout(path: &Path, name: &'static str) -> Result<Labelled> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: File = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut prompts = Vec::new();
    for rule in file.rules {
        if !plain(&rule.prompt).contains(&plain(&rule.rule)) {
            return Err(format!("{}: {:?} is not in its prompt", path.display(), rule.rule).into());
        }
        prompts.push(Said {
            text: rule.prompt,
            rule: Some(rule.rule),
            hard: rule.hard,
        });
    }
    for ordinary in file.ordinary {
        if ordinary.why.trim().is_empty() {
            return Err(format!("{}: {:?} has no `why`", path.display(), ordinary.prompt).into());
        }
        prompts.push(Said {
            text: ordinary.prompt,
            rule: None,
            hard: ordinary.hard,
        });
    }
    Ok(Labelled { name, prompts })
}

/// The conventions set's prompts: a turn that carries rules states them, the others none. Hard
/// are the prompts that hold one of its "not a rule" traps (an "always" or "never" that sets no
/// rule).
pub fn conventions(set: &Set, standing: &Standing) -> Labelled {
    let mut rules: HashMap<String, Vec<&str>> = HashMap::new();
    for rule in &standing.rules {
        let id = session_id(&rule.turn);
        rules.entry(id).or_default().push(&rule.text);
    }
    let traps: Vec<String> = standing
        .traps
        .iter()
        .filter(|t| t.kind == "not a rule")
        .map(|t| plain(&t.text))
        .collect();
    let events = match &set.load {
        Load::Hooks(events) => events.as_slice(),
        Load::Import(_) => &[],
    };
    let prompts = events
        .iter()
        .filter(|(name, _)| *name == "prompt")
        .map(|(_, event)| {
            let text = event["prompt"].as_str().unwrap_or_default().to_string();
            let id = event["prompt_id"].as_str().unwrap_or_default();
            let said = plain(&text);
            Said {
                rule: rules.get(id).map(|words| words.join(" / ")),
                hard: traps.iter().any(|t| said.contains(t.as_str())),
                text,
            }
        })
        .collect();
    Labelled {
        name: "conventions",
        prompts,
    }
}

/// Every prompt of every set through `hook prompt`, then what `conventions` lists for each.
pub fn measure(product: &Product, sets: &[Labelled]) -> Result<Vec<Vec<Found>>> {
    let mut by_session = HashMap::new();
    let mut found = Vec::new();
    for set in sets {
        let mut of_set = Vec::new();
        for (i, said) in set.prompts.iter().enumerate() {
            let name = format!("detection/{}/{i}", set.name);
            let session = session_id(&name);
            let event = json!({"session_id": session, "cwd": format!("/home/dev/{name}"),
                               "hook_event_name": "UserPromptSubmit",
                               "prompt_id": session_id(&format!("{name}/1")),
                               "permission_mode": "default", "prompt": said.text});
            let (took, _) = product.hook("prompt", &event)?;
            by_session.insert(session, (found.len(), i));
            of_set.push(Found {
                texts: Vec::new(),
                took,
            });
        }
        found.push(of_set);
    }
    let (_, out) = product.run(&["conventions", "--all", "--json", "--replaced"], &[0])?;
    for line in String::from_utf8(out.stdout)?.lines() {
        let listed: Value = serde_json::from_str(line)?;
        let session = listed["session_id"].as_str().unwrap_or_default();
        let &(set, i) = by_session.get(session).ok_or(format!(
            "conventions lists an instruction of no prompt: {line}"
        ))?;
        let text = listed["text"].as_str().unwrap_or_default();
        found[set][i].texts.push(text.to_string());
    }
    Ok(found)
}

/// The prompts of a set the detector got wrong, misses first.
pub fn wrong(set: &Labelled, found: &[Found]) -> Vec<Wrong> {
    let pairs = || set.prompts.iter().zip(found);
    let missed = pairs().filter(|(said, f)| said.rule.is_some() && f.texts.is_empty());
    let taken = pairs().filter(|(said, f)| said.rule.is_none() && !f.texts.is_empty());
    missed
        .chain(taken)
        .map(|(said, f)| Wrong {
            set: set.name,
            prompt: said.text.clone(),
            rule: said.rule.clone(),
            found: f.texts.clone(),
        })
        .collect()
}
