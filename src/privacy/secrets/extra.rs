//! The user's own patterns (`CLAUDE_MEM_REDACT_EXTRA`): a small syntax, no regex engine.
//!
//! Patterns are separated by commas. In a pattern, `*` stands for one or more token characters
//! (letters, digits and `_ - . + / =`) and takes as many as there are; `?` stands for exactly
//! one; every other character stands for itself, in its letter case. A pattern starts with at
//! least three plain characters, which are searched for (so a pattern costs one substring
//! search per text). `acme_*` removes `acme_8f3kd93hd`, `hunter2` removes that very word,
//! `ACME??-*` removes `ACME01-x81kd`. A match becomes `[REDACTED:custom]`.

use std::ops::Range;

use crate::text::find;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// One or more token characters, as many as there are.
    Run,
    /// One token character.
    One,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    lead: String,
    rest: Vec<Part>,
}

/// Plain characters a pattern must start with.
const MIN_LEAD: usize = 3;

fn token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-.+/=".contains(&b)
}

impl Pattern {
    /// Parses one pattern; the error says why it cannot be used, without quoting it (a
    /// pattern may be a secret itself: `hunter2`).
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let mut parts: Vec<Part> = Vec::new();
        for c in text.chars() {
            match (c, parts.last_mut()) {
                ('*', _) => parts.push(Part::Run),
                ('?', _) => parts.push(Part::One),
                (c, Some(Part::Text(text))) => text.push(c),
                (c, _) => parts.push(Part::Text(c.to_string())),
            }
        }
        match parts.first() {
            Some(Part::Text(lead)) if lead.chars().count() >= MIN_LEAD => Ok(Pattern {
                lead: lead.clone(),
                rest: parts[1..].to_vec(),
            }),
            _ => Err(format!(
                "does not start with {MIN_LEAD} plain characters (before any `*` or `?`)"
            )),
        }
    }

    /// Whether `bytes` hold the plain start of the pattern: a pre-check that may say yes
    /// where the pattern does not match.
    pub fn lead_in(&self, bytes: &[u8]) -> bool {
        find::sub(bytes, self.lead.as_bytes()).is_some()
    }

    /// Every match in `text`, in order, not overlapping.
    pub fn find(&self, text: &str) -> Vec<Range<usize>> {
        let bytes = text.as_bytes();
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(i) = find::sub(&bytes[from..], self.lead.as_bytes()) {
            let start = from + i;
            match self.rest_matches(bytes, start + self.lead.len()) {
                Some(end) => {
                    found.push(start..end);
                    from = end;
                }
                None => from = start + 1,
            }
        }
        found
    }

    fn rest_matches(&self, bytes: &[u8], mut at: usize) -> Option<usize> {
        for part in &self.rest {
            match part {
                Part::Text(text) => {
                    bytes[at..].starts_with(text.as_bytes()).then_some(())?;
                    at += text.len();
                }
                Part::One => {
                    bytes.get(at).copied().filter(|&b| token(b))?;
                    at += 1;
                }
                Part::Run => {
                    let run = bytes[at..].iter().take_while(|&&b| token(b)).count();
                    (run > 0).then_some(())?;
                    at += run;
                }
            }
        }
        Some(at)
    }
}

/// The patterns of a comma list, and a line for the log about each that cannot be used, which
/// names it by its place in the list, never by its text.
pub fn parse_list(list: &str) -> (Vec<Pattern>, Vec<String>) {
    let mut patterns = Vec::new();
    let mut warnings = Vec::new();
    let items: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .collect();
    for (n, item) in items.iter().enumerate() {
        match Pattern::parse(item) {
            Ok(pattern) => patterns.push(pattern),
            Err(why) => warnings.push(format!(
                "pattern {} of {} in CLAUDE_MEM_REDACT_EXTRA {why}; ignored",
                n + 1,
                items.len()
            )),
        }
    }
    (patterns, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> Vec<String> {
        Pattern::parse(pattern)
            .unwrap()
            .find(text)
            .into_iter()
            .map(|r| text[r].to_string())
            .collect()
    }

    #[test]
    fn patterns_match_as_documented() {
        assert_eq!(
            matches("acme_*", "key acme_8f3kd93hd. and acme_"),
            ["acme_8f3kd93hd."]
        );
        assert_eq!(
            matches("hunter2", "pw hunter2 hunter22"),
            ["hunter2", "hunter2"]
        );
        assert_eq!(
            matches("ACME??-*", "ACME01-x81kd ACMEx-1 ACME1-xx"),
            ["ACME01-x81kd"]
        );
        assert_eq!(
            matches("int-*.corp", "int-db01.corp int-.corp"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn patterns_must_start_with_plain_text() {
        let (patterns, warnings) = parse_list("acme_*, *x, ?ab, ab*, ,  hunter2 ");
        assert_eq!(patterns.len(), 2);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].starts_with("pattern 2 of 5 in CLAUDE_MEM_REDACT_EXTRA does not start"),
            "{warnings:?}"
        );
        assert!(
            !warnings
                .iter()
                .any(|w| w.contains("*x") || w.contains("ab*"))
        );
    }
}
