//! A data set as the bench sees it: what to write into the memory, the same items as plain
//! documents for the reference, and the queries with the items that answer them.

use std::path::Path;

use serde_json::Value;

use crate::Result;

pub struct Set {
    pub name: &'static str,
    pub load: Load,
    /// Every stored item's text, under the key its search results are scored by.
    pub docs: Vec<Doc>,
    pub queries: Vec<Query>,
    pub unit: Unit,
    /// The projects the unrelated prompts are asked in.
    pub projects: Vec<String>,
}

/// How the set goes in: through the hooks, as Claude Code would run them, or an import.
pub enum Load {
    /// `(hook name, event)`, in order.
    Hooks(Vec<(&'static str, Value)>),
    /// A `claude-mem/1` export.
    Import(String),
}

/// What a result is scored as: its session (one turn each), or its turn (session and prompt
/// number: a LoCoMo turn, a remem memory).
#[derive(Clone, Copy)]
pub enum Unit {
    Session,
    Turn,
}

impl Unit {
    pub fn key(self, session_id: &str, prompt_number: Option<i64>) -> String {
        match self {
            Unit::Session => session_id.to_string(),
            Unit::Turn => turn(session_id, prompt_number.unwrap_or(0)),
        }
    }
}

pub fn turn(session_id: &str, prompt_number: i64) -> String {
    format!("{session_id}#{prompt_number}")
}

pub struct Doc {
    pub project: String,
    pub key: String,
    pub text: String,
}

pub struct Query {
    pub project: String,
    pub text: String,
    /// The keys of the items that answer it; none: nothing should come back.
    pub gold: Vec<String>,
    /// For the per-slice rows (remem's slices, LoCoMo's categories, question or task).
    pub slice: String,
}

impl Set {
    /// Every unrelated prompt, asked in each of the set's projects.
    pub fn add_unrelated(&mut self, prompts: &[String]) {
        for project in &self.projects {
            for text in prompts {
                self.queries.push(Query {
                    project: project.clone(),
                    text: text.clone(),
                    gold: Vec::new(),
                    slice: "unrelated".into(),
                });
            }
        }
    }
}

/// The unrelated prompts: one a line.
pub fn unrelated(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// A session id shaped like Claude Code's (a UUID), the same for the same name, whose last
/// group (what short ids are made of) differs between names.
pub fn session_id(name: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    uuid::Uuid::from_u128(u128::from(mix(hash)) << 64 | u128::from(mix(hash ^ 0x9e37))).to_string()
}
