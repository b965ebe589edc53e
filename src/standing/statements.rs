//! Conventions said as statements rather than orders: of everything of a kind ("every outbound
//! call needs a timeout", "all timestamps are stored in UTC"), a prohibition ("no print()
//! anywhere"), what "we" do ("we use poetry"), asking first ("ask me before adding a
//! dependency"), what a kind of thing is or does ("tests use jest", "library code never
//! prints"), or a tool named against another ("pnpm, not npm").

use super::cues::{FILLERS, ONE_THING};

/// A convention said as a statement rather than an order: of everything of a kind ("every
/// outbound call needs a timeout", "all timestamps are stored in UTC"), a prohibition ("no
/// print() anywhere", "no ORM: …"), what "we" do ("we use poetry"), asking first ("ask me
/// before adding a dependency"), or what a kind of thing is or does, said of the kind itself
/// and not of one of them ("tests use jest", "flags are kebab-case", "library code never
/// prints": never "the sidebar always scrolls back", "it always fails").
pub(super) fn declares_a_rule(words: &[&str], own: &[&str], text: &str) -> bool {
    let start = words.iter().take_while(|w| FILLERS.contains(w)).count();
    let rest = &words[start..];
    let Some(first) = rest.first() else {
        return false;
    };
    match *first {
        "every" | "each" | "all" | "any" | "anything" | "everything" | "nothing" => {
            obliges(&rest[1..])
        }
        "no" => prohibits(rest, text),
        "we" | "we're" => {
            matches!(
                rest.get(1).copied(),
                Some("use" | "using" | "support" | "target" | "prefer" | "follow" | "deploy")
            ) || rest.get(1..3) == Some(&["are", "using"])
        }
        "ask" | "check" => {
            rest.get(1..3)
                .is_some_and(|w| w[0] == "me" && w[1] == "before")
                || rest.get(1) == Some(&"before")
        }
        _ => {
            let own = own.get(start..).unwrap_or_default();
            of_a_kind(own) || named_against_another(own, text)
        }
    }
}

/// A tool or a way named against another, with no verb: "pnpm, not npm", "gofumpt, not
/// gofmt", "ruff over black+isort for formatting", "tabs over spaces".
pub(super) fn named_against_another(own: &[&str], text: &str) -> bool {
    const DOING: &[&str] = &[
        "put", "return", "use", "call", "fix", "add", "make", "move", "rename", "change", "set",
        "go", "try", "check", "run", "write", "delete", "remove", "keep", "let's", "lets",
    ];
    let short = !own.is_empty() && own.len() <= 4;
    // The sentence opens with the name ("not the footer" after "fix the header," does not).
    let first_is_a_name = own.first().is_some_and(|w| {
        !DOING.contains(w)
            && !ONE_THING.contains(w)
            && !matches!(*w, "the" | "not" | "no")
            && text.trim_start().starts_with(w)
    });
    short && first_is_a_name && (text.contains(", not ") || own.contains(&"over"))
}

/// Verbs that say what a thing of a kind must have or do.
pub(super) const OBLIGING: &[&str] = &[
    "must", "should", "needs", "need", "gets", "get", "goes", "go", "takes", "take", "lives",
    "live", "belongs", "belong", "stays", "stay", "requires", "require", "uses", "use",
];

/// Within a few words, an obliging verb, or "is"/"are" with what says how it is kept.
pub(super) fn obliges(words: &[&str]) -> bool {
    let near = &words[..words.len().min(8)];
    near.iter().enumerate().any(|(i, w)| {
        OBLIGING.contains(w)
            || (matches!(*w, "has" | "have") && near.get(i + 1) == Some(&"to"))
            || (matches!(*w, "is" | "are") && near.get(i + 1).is_some_and(|n| kept_as(n)))
    })
}

/// What follows "is"/"are" in a convention: a participle or a style ("stored", "named",
/// "kebab-case", "table-driven"), never a state ("failing", "green", "broken").
pub(super) fn kept_as(word: &str) -> bool {
    (word.ends_with("ed") && word.len() > 4 && !matches!(word, "failed" | "broked" | "crashed"))
        || word.ends_with("-case")
        || word.ends_with("-driven")
        || word.ends_with("-only")
        || word.ends_with("case")
        || matches!(
            word,
            "idempotent" | "immutable" | "pure" | "async" | "written" | "kept"
        )
}

/// "no X" with what makes it a prohibition: anywhere, outside, ever, only, please, allowed,
/// instead, or a colon after it.
pub(super) fn prohibits(words: &[&str], text: &str) -> bool {
    const NOT_A_RULE: &[&str] = &[
        "idea",
        "luck",
        "problem",
        "problems",
        "worries",
        "thanks",
        "way",
        "rush",
        "need",
        "change",
        "changes",
        "errors",
        "error",
        "difference",
        "output",
        "response",
    ];
    let Some(what) = words.get(1) else {
        return false;
    };
    // "No, only when the cache is cold": an answer.
    let answer = text.trim_start().starts_with("no,");
    !answer
        && !NOT_A_RULE.contains(what)
        && ([
            "anywhere", "outside", "ever", "only", "please", "allowed", "instead", "except",
        ]
        .iter()
        .any(|w| words.contains(w))
            || text
                .split_once(&format!("no {what}"))
                .is_some_and(|(_, after)| {
                    after.trim_start().starts_with(':')
                        || after.split_whitespace().nth(1) == Some(":")
                }))
}

/// What a kind of thing is or does, said of the kind: one to three words with no article or
/// pronoun before them, then a verb of conventions.
pub(super) fn of_a_kind(words: &[&str]) -> bool {
    const NOT_A_KIND: &[&str] = &[
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "it's",
        "i",
        "i'm",
        "my",
        "he",
        "she",
        "they",
        "them",
        "there",
        "here",
        "a",
        "an",
        "you",
        "your",
        "our",
        "his",
        "her",
        "what",
        "why",
        "how",
        "when",
        "if",
        "so",
        "then",
        "now",
        "just",
        "also",
        "still",
        "yesterday",
        "today",
        "sometimes",
        "usually",
        "ok",
        "okay",
        "yes",
        "no",
        "not",
        "in",
        "on",
        "at",
        "of",
        "for",
        "to",
        "with",
        "by",
        "from",
        "about",
        "into",
        "after",
        "before",
        "let's",
        "lets",
    ];
    const VERBS: &[&str] = &[
        "use", "uses", "go", "goes", "live", "lives", "come", "comes", "never", "always", "must",
        "should", "belong", "belongs",
    ];
    if words.first().is_none_or(|w| NOT_A_KIND.contains(w)) {
        return false;
    }
    (1..=3).any(|n| {
        let (subject, verb, next) = (&words[..n.min(words.len())], words.get(n), words.get(n + 1));
        !subject.iter().any(|w| NOT_A_KIND.contains(w))
            && subject.last().is_some_and(|w| a_kind(w))
            && match verb.copied() {
                Some("are" | "is") => next.is_some_and(|w| kept_as(w)),
                Some(v) => VERBS.contains(&v) && next.is_some(),
                None => false,
            }
    }) || tied_kind(words)
}

/// Whether a word names a kind of things: a plural ("tests", "flags", "queries"), or what is
/// spoken of as a whole ("code", "config", "logging"); not "follow should survive rotation".
fn a_kind(word: &str) -> bool {
    const WHOLES: &[&str] = &[
        "code",
        "config",
        "configuration",
        "logging",
        "data",
        "output",
        "input",
        "state",
        "styling",
        "formatting",
        "documentation",
        "docs",
        "css",
        "sql",
        "infra",
        "everything",
        "nothing",
        "anything",
        "each",
        "every",
        "all",
    ];
    (word.len() > 3 && word.ends_with('s') && !word.ends_with("ss")) || WHOLES.contains(&word)
}

/// A longer kind, tied by a preposition ("errors shown to users must not leak"): with a modal
/// only.
fn tied_kind(words: &[&str]) -> bool {
    const MODALS: &[&str] = &["must", "should", "never", "always", "mustn't", "shouldn't"];
    const TIED: &[&str] = &[
        "in", "on", "to", "of", "for", "with", "by", "from", "shown", "sent",
    ];
    (4..=6).any(|n| {
        let (subject, verb) = (&words[..n.min(words.len())], words.get(n));
        subject.iter().skip(1).any(|w| TIED.contains(w))
            && !subject
                .iter()
                .any(|w| ONE_THING.contains(w) || *w == "the" || *w == "i")
            && verb.is_some_and(|v| MODALS.contains(v))
    })
}
