//! A prompt read as a person reads it: its sentences (not code blocks, not the dot of
//! `main.rs`), each sentence's clauses and words, lower case, with what stands in backticks or
//! quotes as one word (code, or someone else's words, never the user's cue).

use crate::text::find;

/// The sentences of a prompt: split at line ends and at `.`, `!`, `?` or `;` before a space
/// (so `main.rs`, `e.g.` inside a word and `v1.2` stay whole). Code blocks are left out.
pub(super) fn sentences(prompt: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in prompt.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, c) in line.char_indices() {
            // A mark after a space is a symbol ("propagate with ? and add context").
            let ends = matches!(c, '.' | '!' | '?' | ';')
                && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace())
                && i > 0
                && !bytes[i - 1].is_ascii_whitespace();
            if ends {
                let end = if c == '?' { i + 1 } else { i };
                push_sentence(&mut out, &line[start..end]);
                start = i + 1;
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

pub(super) fn push_sentence<'a>(out: &mut Vec<&'a str>, sentence: &'a str) {
    let sentence = sentence
        .trim()
        .trim_start_matches(['-', '*', '>', '•'])
        .trim();
    if !sentence.is_empty() {
        out.push(sentence);
    }
}

/// The clauses of a sentence: its start, and after each comma, colon, dash or "and".
pub(super) fn clauses(text: &str) -> impl Iterator<Item = &str> {
    let mut starts = vec![0];
    for (i, c) in text.char_indices() {
        if matches!(c, ',' | ':' | '(' | '—' | '–') {
            starts.push(i + c.len_utf8());
        }
    }
    for (i, _) in text.match_indices(" and ") {
        starts.push(i + 5);
    }
    for (i, _) in text.match_indices(" - ") {
        starts.push(i + 3);
    }
    starts.sort_unstable();
    starts.into_iter().map(move |at| text[at..].trim_start())
}

/// A clause's words, lower case, apostrophes kept (`don't`).
pub(super) fn words(clause: &str) -> Vec<&str> {
    clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

pub(super) fn lower(text: &str) -> String {
    text.to_lowercase().replace('’', "'")
}

/// `text` with what stands in backticks or double quotes as one word, `code`.
pub(super) fn without_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            Some(close) if c == close => open = None,
            Some(_) => {}
            None if c == '`' || c == '"' || c == '“' => {
                open = Some(if c == '“' { '”' } else { c });
                out.push_str("code");
            }
            None => out.push(c),
        }
    }
    out
}

/// Whether `phrase` stands in `text` as whole words.
pub(super) fn has_phrase(text: &str, phrase: &str) -> bool {
    find::subs(text.as_bytes(), phrase.as_bytes()).any(|at| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric)
            && (!after.is_some_and(char::is_alphanumeric) || phrase.ends_with(':'))
    })
}

/// Words that open a question even without its mark.
pub(super) fn is_question(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    matches!(
        first,
        "why"
            | "how"
            | "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "does"
            | "do"
            | "is"
            | "are"
            | "can"
            | "could"
            | "should"
            | "would"
            | "will"
            | "did"
    ) && !text.starts_with("do not")
        && !text.starts_with("do always")
}
