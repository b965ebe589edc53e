//! Orders meant to last, as a clause opens: "always …", "never …", "make sure to …", "don't …
//! ever", "use X instead of Y", "prefer X over Y", "let's switch to X instead of Y".

use super::cues::{FILLERS, ONE_THING};

/// Whether a clause's words open with an imperative meant to last.
pub(super) fn opens_a_rule(words: &[&str]) -> bool {
    let start = words.iter().take_while(|w| FILLERS.contains(w)).count();
    let rest = &words[start..];
    let at = |i: usize| rest.get(i).copied().unwrap_or("");
    match (at(0), at(1), at(2)) {
        ("never", "mind" | "minded", _) => false,
        // "indent with 2 spaces, always": the rule before, said to last.
        ("always", "", _) => true,
        ("always" | "never", next, _) => !next.is_empty() && !NOT_AN_ORDER.contains(&next),
        ("don't" | "dont", "ever" | "forget", _) => true,
        ("do", "not", "ever" | "forget") => true,
        ("remember" | "make" | "be", _, _) if follows_with(rest, &["to", "sure"]) => true,
        ("you" | "we" | "u", "should" | "must" | "need" | "have", "always" | "never") => true,
        ("you" | "we", "always" | "never", next) => !next.is_empty(),
        ("you" | "we", "should" | "must", "not") => clause_has(rest, &["ever", "again"]),
        ("let's" | "lets", "always" | "never", _) => true,
        ("use" | "we", _, _) => prefers_one(rest),
        ("prefer", _, _) => clause_has(rest, &["over", "to", "instead", "rather"]),
        ("stop", "using", _) | ("no", "more", _) => true,
        // A preference of a kind, not of one thing: "i prefer `type` over `interface`", never
        // "i prefer the early return version".
        ("i", "prefer", next) | ("i'd", "prefer" | "rather", next) => {
            !ONE_THING.contains(&next) && next != "the" && next != "you"
                || (next == "you" && clause_has(rest, &["didn't", "never", "always", "don't"]))
        }
        ("stick", "to" | "with", _) => true,
        ("default", "to", _) => true,
        ("switch" | "move" | "migrate", "to", _) => clause_has(rest, &["instead", "from"]),
        ("let's" | "lets", "use", _) => prefers_one(rest),
        ("let's" | "lets", "switch" | "move" | "migrate", _) => {
            clause_has(rest, &["instead", "from"])
        }
        ("don't" | "dont", _, _) if clause_has(rest, &["ever"]) => true,
        // "log with logrus, fields not format strings"; not "call the endpoint X instead".
        (verb, object, _) if STYLE_VERBS.contains(&verb) => {
            !ONE_THING.contains(&object)
                && object != "the"
                && clause_has(rest, &["not", "instead", "rather"])
        }
        // Of a kind, not of one thing: "the API must always…", never "this endpoint must…".
        (one, "should" | "must", "always" | "never") => !ONE_THING.contains(&one),
        (one, _, "should" | "must") if matches!(at(3), "always" | "never") => {
            !ONE_THING.contains(&one)
        }
        _ => false,
    }
}

pub(super) const NOT_AN_ORDER: &[&str] = &[
    "fun",
    "good",
    "great",
    "nice",
    "love",
    "loved",
    "happy",
    "glad",
    "so",
    "such",
    "tried",
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "twice",
    "once",
    "again",
    "someone",
    "something",
    "anyone",
    "anything",
    "more",
    "less",
    "here",
    "there",
    "enough",
];

/// Orders about how code is written, which last when they set one way against another ("log
/// with logrus, fields not format strings").
pub(super) const STYLE_VERBS: &[&str] = &[
    "log", "name", "format", "indent", "prefix", "suffix", "wrap", "return", "handle", "import",
    "export", "store", "keep", "write", "put", "call", "raise", "throw", "test", "document",
];

/// "use X instead of Y", "use X, not Y", "we use X rather than Y", "use X over Y".
pub(super) fn prefers_one(words: &[&str]) -> bool {
    let at = words
        .iter()
        .take(3)
        .position(|w| *w == "use" || *w == "using");
    // "use the staging db for this run, not prod" is about one thing.
    let of_a_kind = at.is_some_and(|at| {
        words
            .get(at + 1)
            .is_some_and(|w| !ONE_THING.contains(w) && *w != "the")
    });
    of_a_kind
        && clause_has(
            words,
            &["instead", "not", "rather", "over", "never", "only"],
        )
}

pub(super) fn follows_with(words: &[&str], any: &[&str]) -> bool {
    words.iter().skip(1).take(2).any(|w| any.contains(w))
}

pub(super) fn clause_has(words: &[&str], any: &[&str]) -> bool {
    words.iter().any(|w| any.contains(w))
}
