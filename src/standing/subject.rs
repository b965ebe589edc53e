//! Which rule replaces which: the words a rule is about (its content words, lightly stemmed,
//! each family of interchangeable tools as one word), and, over a project's list in the order
//! said, the newer rule on the same subject as the current one.

use super::sentence::lower;

/// An instruction as the project's list holds it, oldest first.
#[derive(Debug, Clone)]
pub struct Rule<'a> {
    pub text: &'a str,
    pub changes: bool,
}

/// For each rule of a project's list (oldest first), the index of the newer rule that replaced
/// it, if one did.
pub fn current(rules: &[Rule]) -> Vec<Option<usize>> {
    let subjects: Vec<Vec<String>> = rules.iter().map(|r| subject(r.text)).collect();
    let mut replaced_by: Vec<Option<usize>> = vec![None; rules.len()];
    for (new, rule) in rules.iter().enumerate() {
        let best = (0..new)
            .filter(|old| replaced_by[*old].is_none())
            .map(|old| (old, shared(&subjects[new], &subjects[old])))
            .filter(|(old, n)| replaces(rule, *n, &subjects[new], &subjects[*old]))
            .max_by_key(|(old, n)| (*n, *old));
        if let Some((old, _)) = best {
            replaced_by[old] = Some(new);
        }
    }
    replaced_by
}

/// Whether a newer rule sharing `n` subject words with an older one replaces it: with a change
/// announced, sharing one word of a short subject or two of a longer one; without, repeating
/// nearly all of the shorter subject.
pub(super) fn replaces(rule: &Rule, n: usize, new: &[String], old: &[String]) -> bool {
    let shorter = new.len().min(old.len()).max(1);
    if rule.changes {
        n >= 2 || (n == 1 && shorter <= 3)
    } else {
        n >= 2 && n * 4 >= shorter * 3
    }
}

pub(super) fn shared(a: &[String], b: &[String]) -> usize {
    a.iter().filter(|w| b.contains(w)).count()
}

/// The words a rule is about: its content words, lightly stemmed, each family of
/// interchangeable tools as one word.
pub fn subject(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in lower(text)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 1 && !NOT_SUBJECT.contains(w))
    {
        let word = FAMILIES
            .iter()
            .find(|(_, members)| members.contains(&word))
            .map_or_else(|| stem(word), |(family, _)| family.to_string());
        if !NOT_SUBJECT.contains(&word.as_str()) && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// Interchangeable things: a rule naming one is about them all.
pub(super) const FAMILIES: &[(&str, &[&str])] = &[
    (
        "=packages",
        &[
            "npm", "pnpm", "yarn", "bun", "pip", "poetry", "uv", "pipenv", "conda",
        ],
    ),
    (
        "=tests",
        &[
            "jest", "vitest", "mocha", "pytest", "unittest", "nose", "jasmine", "ava",
        ],
    ),
    (
        "=indent",
        &[
            "tabs",
            "tab",
            "spaces",
            "space",
            "indent",
            "indentation",
            "indented",
        ],
    ),
    (
        "=format",
        &[
            "prettier", "black", "rustfmt", "gofmt", "autopep8", "yapf", "ruff",
        ],
    ),
    (
        "=case",
        &[
            "camelcase",
            "snake_case",
            "snakecase",
            "kebab",
            "pascalcase",
            "camel",
            "snake",
        ],
    ),
    ("=quotes", &["quotes", "quote", "double", "single"]),
    ("=semicolons", &["semicolons", "semicolon"]),
];

/// Words that say how, not what: the cues, stop words and the like.
pub(super) const NOT_SUBJECT: &[&str] = &[
    "always",
    "never",
    "now",
    "on",
    "from",
    "forward",
    "going",
    "rule",
    "rules",
    "convention",
    "please",
    "make",
    "sure",
    "to",
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "in",
    "for",
    "with",
    "we",
    "you",
    "our",
    "your",
    "use",
    "using",
    "instead",
    "not",
    "no",
    "don",
    "do",
    "t",
    "it",
    "is",
    "are",
    "be",
    "should",
    "must",
    "that",
    "this",
    "here",
    "there",
    "than",
    "rather",
    "over",
    "only",
    "all",
    "any",
    "every",
    "each",
    "one",
    "changing",
    "change",
    "switch",
    "scratch",
    "actually",
    "let",
    "lets",
    "let's",
    "stop",
    "more",
    "longer",
    "anymore",
    "also",
    "just",
    "ok",
    "okay",
    "so",
    "but",
    "by",
    "at",
    "as",
    "into",
    "onto",
    "under",
    "go",
    "goe",
    "put",
    "i",
    "m",
    "im",
    "ll",
    "ve",
    "re",
    "s",
    "when",
    "whenever",
    "time",
    "future",
    "prefer",
    "default",
    "stick",
    "remember",
    "forget",
    "ever",
    "again",
    "new",
    "old",
    "add",
    "write",
    "keep",
    "run",
    "create",
    "have",
    "get",
    "need",
    "want",
    "like",
    "make",
    "too",
];

/// A word without its plural or a few common endings, so that "tests" and "test" meet.
pub(super) fn stem(word: &str) -> String {
    let w = word;
    let cut = |suffix: &str| w.len() > suffix.len() + 2 && w.ends_with(suffix);
    if cut("ies") {
        format!("{}y", &w[..w.len() - 3])
    } else if cut("es") && (w.ends_with("ses") || w.ends_with("xes") || w.ends_with("ches")) {
        w[..w.len() - 2].to_string()
    } else if cut("s") && !w.ends_with("ss") && !w.ends_with("us") {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}
