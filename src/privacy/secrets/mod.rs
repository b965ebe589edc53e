//! Secret redaction: what looks like a credential never reaches the disk.
//!
//! Rules learnt from gitleaks' rule list and atuin's secrets filter, written as plain code:
//! tokens known by their prefix (AWS, GitHub, GitLab, Slack, Stripe, Anthropic, OpenAI,
//! Google, npm, PyPI, Hugging Face, Vault, … see `tokens::shape`; also when code splits one
//! over two string literals or a terminal wraps it), Telegram and Discord bot tokens and
//! Discord webhooks, JWTs, private key blocks, passwords in URLs, on command lines (`command`:
//! `curl -u`, `ConvertTo-SecureString`, `echo 'user:pass' | base64`, …) and in
//! `.netrc`/`.pgpass` lines, `Bearer` and `Authorization` credentials, values assigned to
//! names that say secret, and passwords told in a sentence (`prose`). A match becomes
//! `[REDACTED:<rule>]` and the rest of the text stays, so a memory keeps its meaning.
//!
//! [`Redactor::redact`] is a pure function of a text, for the hooks and for a later scrub of
//! what is stored: `Redactor::default()` applies the built-in rules, and the user's settings
//! (off, or extra patterns) make another `Redactor`. The search is led by
//! literal anchors (see `anchors`): a text with none of them costs one pass over its bytes.

mod anchors;
mod command;
mod extra;
mod files;
mod names;
mod prose;
mod tokens;

use std::borrow::Cow;
use std::ops::Range;

pub use extra::{Pattern, parse_list};
pub use files::is_secret_file;

use crate::text::find;
use tokens::Hit;

/// What replaces the content of a file that is a secret by its name.
pub const SECRET_FILE: &str = "[REDACTED:secret-file]";

/// The redaction rules in force: the built-in ones unless turned off, and the user's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    off: bool,
    extra: Vec<Pattern>,
}

impl Redactor {
    pub fn new(on: bool, extra: Vec<Pattern>) -> Redactor {
        Redactor { off: !on, extra }
    }

    /// Whether any rule is in force (`CLAUDE_MEM_REDACT=0` turns them all off).
    pub fn on(&self) -> bool {
        !self.off
    }

    /// `text` with every secret replaced by `[REDACTED:<rule>]`; borrowed when none is found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.off {
            return Cow::Borrowed(text);
        }
        let hits = self.hits(text);
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(apply(text, &hits, 0..text.len()))
    }

    /// Each of `keeps`, a part of `text`, with its secrets redacted, the secrets searched for in
    /// `text[window]` only (which holds every part): for the parts kept of a long text, which is
    /// not read whole. A secret that crosses an end of a part is replaced whole, so no part of
    /// it is kept. `window`'s ends must be character boundaries.
    pub fn redact_parts(
        &self,
        text: &str,
        window: Range<usize>,
        keeps: &[Range<usize>],
    ) -> Vec<String> {
        if self.off {
            return keeps
                .iter()
                .map(|keep| text[keep.clone()].to_string())
                .collect();
        }
        let offset = window.start;
        let mut hits = self.hits(&text[window]);
        for hit in &mut hits {
            hit.range = hit.range.start + offset..hit.range.end + offset;
        }
        keeps
            .iter()
            .map(|keep| apply(text, &hits, keep.clone()))
            .collect()
    }

    /// Every secret in `text`, the built-in rules' and the user's, in order.
    fn hits(&self, text: &str) -> Vec<Hit> {
        let mut hits = find(text);
        for pattern in &self.extra {
            let taken = hits.clone();
            hits.extend(
                pattern
                    .find(text)
                    .into_iter()
                    .filter(|r| !taken.iter().any(|h| overlaps(&h.range, r)))
                    .map(|range| Hit {
                        range,
                        label: "custom",
                    }),
            );
        }
        hits.sort_by_key(|h| h.range.start);
        hits
    }

    /// The value of a JSON member (`"password": "…"`) when its key says secret and the value
    /// looks like one: the marker that replaces it whole.
    pub fn member(&self, key: &str, value: &str) -> Option<String> {
        if self.off {
            return None;
        }
        names::member(key, value).map(|label| format!("[REDACTED:{label}]"))
    }

    /// Cheap check on JSON text: whether a string of it may hold a secret within its first
    /// `keep` bytes. Sound with respect to JSON escapes: text where an escape could hide an
    /// anchor (an escaped printable character, `\/`) counts as a maybe.
    pub fn might_hold(&self, json: &str, keep: usize) -> bool {
        if self.off {
            return false;
        }
        let bytes = &json.as_bytes()[..json.len().min(keep.saturating_add(64))];
        anchors::next_candidate(bytes, 0).is_some_and(|first| {
            let mut at = first;
            loop {
                if anchors::anchors_at(bytes, at).next().is_some() {
                    return true;
                }
                match anchors::next_candidate(bytes, at + 1) {
                    Some(next) => at = next,
                    None => return false,
                }
            }
        }) || hides_by_escape(bytes)
            || self.extra.iter().any(|p| p.lead_in(bytes))
    }
}

/// Whether JSON text writes a printable ASCII character as an escape (`\u0041`, `\/`), which
/// Claude Code never does but which could hide an anchor from a search of the text as written.
fn hides_by_escape(bytes: &[u8]) -> bool {
    find::subs(bytes, b"\\u00").any(|at| {
        let hex = bytes
            .get(at + 4..at + 6)
            .and_then(|h| std::str::from_utf8(h).ok());
        hex.and_then(|h| u8::from_str_radix(h, 16).ok())
            .is_some_and(|b| (0x20..0x7f).contains(&b))
    }) || find::sub(bytes, b"\\/").is_some()
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// `text[keep]` with each of `hits` (in order) that overlaps it replaced by its marker.
fn apply(text: &str, hits: &[Hit], keep: Range<usize>) -> String {
    let mut out = String::with_capacity(keep.len());
    let mut kept = keep.start;
    for hit in hits.iter().filter(|h| overlaps(&h.range, &keep)) {
        // Checks end on ASCII bytes, but a bound on a value's length may not: widen (the
        // secret goes whole) rather than split a character.
        let mut end = hit.range.end;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let start = hit.range.start.max(kept);
        out.push_str(&text[kept..start]);
        out.push_str("[REDACTED:");
        out.push_str(hit.label);
        out.push(']');
        kept = end.max(kept).min(keep.end);
    }
    out.push_str(&text[kept..keep.end]);
    out
}

/// The built-in rules' hits in `text`, in order and not overlapping.
///
/// A check that finds nothing says how far its reading went (a token's run of characters, a
/// name): the anchors of its kind are not tried again within that reach, which keeps the
/// search linear, but those of the other kind are (a name may end a run that was no token,
/// `glpat-x_password=…`; a token may sit in a name that was no secret, `X_ghp_…`).
fn find(text: &str) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits: Vec<Hit> = Vec::new();
    let mut at = 0;
    let (mut tokens_from, mut names_from) = (0, 0);
    while let Some(candidate) = anchors::next_candidate(bytes, at) {
        at = candidate + 1;
        let floor = hits.last().map_or(0, |h| h.range.end);
        for anchor in anchors::anchors_at(bytes, candidate) {
            let name = anchor.rule == anchors::Rule::Name;
            if candidate < if name { names_from } else { tokens_from } {
                continue;
            }
            let step = tokens::check(anchor, bytes, candidate, floor);
            let Some(mut hit) = step.hit else {
                let from = if name {
                    &mut names_from
                } else {
                    &mut tokens_from
                };
                *from = (*from).max(step.resume);
                continue;
            };
            if anchor.rule.names_its_value()
                && let Some(token) = known_token(bytes, hit.range.start)
            {
                hit.label = token.label;
                // A token cut by a seam (a wrapped line) goes whole, not just its first piece.
                hit.range.end = hit.range.end.max(token.range.end);
            }
            at = at.max(hit.range.end);
            if hit.range.start < hit.range.end {
                hits.push(hit);
            }
            break;
        }
        // Keep on char boundaries: anchors and checks are ASCII, so this only skips.
        while at < bytes.len() && !text.is_char_boundary(at) {
            at += 1;
        }
    }
    hits
}

/// The token known by its prefix that starts at `at`, if one does: a value assigned to
/// `api_key` (or a URL's password, a command line's) that is an Anthropic key is named for
/// what it is.
fn known_token(bytes: &[u8], at: usize) -> Option<Hit> {
    anchors::anchors_at(bytes, at)
        .filter(|anchor| anchor.rule != anchors::Rule::Name)
        .find_map(|anchor| tokens::check(anchor, bytes, at, at).hit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn redact(text: &str) -> Cow<'_, str> {
        Redactor::default().redact(text)
    }

    fn corpus() -> Value {
        serde_json::from_str(include_str!("../../../tests/fixtures/secrets/corpus.json")).unwrap()
    }

    #[test]
    fn every_secret_of_the_corpus_is_redacted_by_its_rule() {
        let corpus = corpus();
        let mut failures = Vec::new();
        for case in corpus["secrets"].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            let secret = case["secret"].as_str().unwrap();
            let marker = format!("[REDACTED:{}]", case["rule"].as_str().unwrap());
            let out = redact(text);
            if out.contains(secret) || !out.contains(&marker) {
                failures.push(format!("{text:?}\n  -> {out:?} (want {marker})"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn near_misses_of_the_corpus_are_kept() {
        let corpus = corpus();
        let mut failures = Vec::new();
        for text in corpus["kept"].as_array().unwrap() {
            let text = text.as_str().unwrap();
            if let Cow::Owned(out) = redact(text) {
                failures.push(format!("{text:?}\n  -> {out:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn only_the_secret_goes_the_rest_of_the_text_stays() {
        let cases = [
            (
                "DB_PASSWORD=s3cr3t-Value x",
                "DB_PASSWORD=[REDACTED:password] x",
            ),
            (
                "postgres://app:pw-9k2Lq@db:5432/x",
                "postgres://app:[REDACTED:url-password]@db:5432/x",
            ),
            ("é AKIAZ7QK2M4N5P6R7S2T é", "é [REDACTED:aws-access-key] é"),
            (
                "a -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- b",
                "a [REDACTED:private-key] b",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want);
        }
    }

    #[test]
    fn a_run_that_is_no_token_can_end_in_a_name_and_a_name_can_hold_a_token() {
        assert_eq!(
            redact("glpat-x_password=Zq81kdP0x9"),
            "glpat-x_password=[REDACTED:password]"
        );
        assert_eq!(
            redact("TOKEN_ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i_X: 1"),
            "TOKEN_[REDACTED:github-token]_X: 1"
        );
    }

    #[test]
    fn a_token_cut_by_a_seam_goes_whole_and_the_next_line_is_read_on_its_own() {
        assert_eq!(
            redact("t = 'ghp_k3Jd9QmZx7Lw2RtY' \\\n  '5vB8nC1pF4sH6gA0eU2i' # x"),
            "t = '[REDACTED:github-token]' # x"
        );
        // A piece after a seam that makes no token is a text of its own.
        assert_eq!(
            redact("prefix ghp_\nAKIAZ7QK2M4N5P6R7S2T"),
            "prefix ghp_\n[REDACTED:aws-access-key]"
        );
        // A token of its full length does not take the next line.
        assert_eq!(
            redact("ghp_k3Jd9QmZx7Lw2RtY5vB8nC1pF4sH6gA0eU2i\nnext"),
            "[REDACTED:github-token]\nnext"
        );
        // Unless its line is as wide as a terminal: then it was wrapped.
        let pat = format!("github_pat_11{}_{}", "Ab3".repeat(7), "k9Zq".repeat(15));
        let pasted = format!("$ gh auth status --show-token\n  Token: {pat}\n");
        let wrapped = format!("{}\n{}", &pasted[..30 + 80], &pasted[30 + 80..]);
        let out = redact(&wrapped);
        assert!(!out.contains("k9Zqk9Zq"), "{out}");
        let key = format!("sk-ant-api03-{}AA", "Xy7_".repeat(23));
        let wrapped = format!("{}{}\n{}", "see ".repeat(10), &key[..40], &key[40..]);
        assert_eq!(
            redact(&wrapped),
            format!("{}[REDACTED:anthropic-key]", "see ".repeat(10))
        );
    }

    #[test]
    fn a_long_value_is_cut_on_a_character_boundary() {
        let value = format!("{}aééé", "a1".repeat(511));
        let text = format!("password={value} end");
        let out = redact(&text);
        assert!(out.starts_with("password=[REDACTED:password]"), "{out}");
        assert!(!out.contains("a1a1"));
    }

    #[test]
    fn adversarial_texts_take_linear_time() {
        // Quadratic behaviour would take minutes on texts of this size.
        for unit in [
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "password=",
            "a://b:",
            "keykey",
            "Bearer ",
            "eyJhbGciOiJI.",
            "sk-",
            "mysql -p",
            "curl -u a:",
            "sshpass -p ",
            "h:5432:",
            "1:AA",
            "MTAx",
            "machine login password ",
            "ConvertTo-SecureString ",
            "echo -n 'a:b' | base64",
            "/bot12345:",
            "discord/api/webhooks/",
            "\"ghp_\" + \"",
            "ghp_ab\n",
            "the password is ",
            "use password ",
            "password for a b c d e f g ",
        ] {
            let text = unit.repeat(400_000 / unit.len());
            let started = std::time::Instant::now();
            let _ = redact(&text);
            assert!(started.elapsed().as_secs() < 5, "{unit}");
        }
    }

    #[test]
    fn the_users_patterns_and_the_off_switch() {
        let (extra, _) = parse_list("acme_*");
        let redactor = Redactor::new(true, extra.clone());
        assert_eq!(
            redactor.redact("key acme_9f8e7d6c and ghp_1234"),
            "key [REDACTED:custom] and ghp_1234"
        );
        let off = Redactor::new(false, extra);
        let text = "DB_PASSWORD=s3cr3t-Value acme_9f8e7d6c";
        assert!(matches!(off.redact(text), Cow::Borrowed(_)));
        assert!(!off.might_hold(text, usize::MAX));
    }

    #[test]
    fn json_members_named_secret() {
        let redactor = Redactor::default();
        assert_eq!(
            redactor.member("api_key", "x8Kd92mQp4Lz7RtY").as_deref(),
            Some("[REDACTED:api-key]")
        );
        assert_eq!(
            redactor.member("password", "hunter2-x").as_deref(),
            Some("[REDACTED:password]")
        );
        assert_eq!(redactor.member("api_key", "${API_KEY}"), None);
        assert_eq!(redactor.member("description", "x8Kd92mQp4Lz7RtY"), None);
    }

    #[test]
    fn the_json_pre_check_sees_through_escapes() {
        let redactor = Redactor::default();
        assert!(redactor.might_hold(r#"{"a":"ghp_x"}"#, usize::MAX));
        assert!(redactor.might_hold(r#"{"a":"\u0067hp_x"}"#, usize::MAX));
        assert!(redactor.might_hold(r#"{"a":"https:\/\/u:p@h"}"#, usize::MAX));
        assert!(!redactor.might_hold(r#"{"a":"plain\ntext \u001b"}"#, usize::MAX));
        // Only what is kept matters.
        let late = format!(r#"{{"a":"{}","b":"ghp_x"}}"#, "plain ".repeat(30));
        assert!(!redactor.might_hold(&late, 4));
    }
}
