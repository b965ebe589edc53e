//! The words that tell a lasting rule from the work at hand: the cues that say a rule is meant to
//! last ("from now on", "in new code", "no exceptions"), the ones that tie an order to this task
//! ("for now", "this file", "here instead"), reports and praise ("it always fails", "nice"),
//! a habit or a story of the speaker's ("we always deployed on fridays"), the change of an
//! earlier rule, and pasted text that speaks to an AI.

use super::orders::STYLE_VERBS;
use super::sentence::{has_phrase, words};

/// Phrases that say a rule is meant to last, wherever they stand.
pub(super) const LASTING: &[&str] = &[
    "from now on",
    "from here on",
    "going forward",
    "moving forward",
    "in the future",
    "henceforth",
    "as a rule",
    "as a general rule",
    "the convention here is",
    "the convention is",
    "our convention is",
    "by convention",
    "house rule",
    "new rule",
    "one rule",
    "standing rule",
    "every time you",
    "whenever you",
    "each time you",
    "from today on",
    "for all future",
    "in all future",
    "in new code",
    "for new code",
    "for anything new",
    "for all new",
    "no exceptions",
    "every time",
    "each time",
    "unless i say otherwise",
    "for future reference",
    "in this project",
    "in this repo",
    "in this codebase",
    "on this team",
    "the way we do",
    "we settled on",
    "team settled on",
    "without asking me",
    "without asking first",
    "ask me first",
    "please stop",
];

/// What makes an order this task's, not a lasting one.
pub(super) const SCOPED: &[&str] = &[
    "this run",
    "this time",
    "this once",
    "just once",
    "for now",
    "for this",
    "this pr",
    "this branch",
    "this one",
    "this file",
    "this function",
    "this test",
    "this endpoint",
    "this change",
    "this commit",
    "this migration",
    "this script",
    "in this case",
    "right now",
    "for the moment",
    "today",
];

/// Words of a report of what goes wrong, or of praise: said of the work at hand.
pub(super) const REPORTS: &[&str] = &[
    "fails",
    "failing",
    "failed",
    "crash",
    "crashes",
    "crashed",
    "broke",
    "broken",
    "breaks",
    "hangs",
    "403",
    "404",
    "500",
    "502",
    "503",
    "weird",
    "nice",
    "great",
    "thanks",
    "awesome",
    "perfect",
    "lgtm",
    "any idea",
    "doesn't work",
    "not working",
];

/// How a clause may open before its rule: fillers people put first.
pub(super) const FILLERS: &[&str] = &[
    "please",
    "pls",
    "also",
    "and",
    "but",
    "so",
    "ok",
    "okay",
    "oh",
    "btw",
    "fyi",
    "just",
    "hey",
    "reminder",
    "note",
    "important",
    "one",
    "more",
    "thing",
    "then",
    "yes",
    "right",
    "alright",
    "actually",
    "now",
    "again",
    "generally",
    "in",
    "general",
    "here",
    "scratch",
    "that",
    "update",
    "correction",
    "rule",
];

/// Past forms after "always"/"never" that say what happened ("never been", "never thought").
pub(super) const PAST: &[&str] = &[
    "been", "seen", "had", "got", "thought", "knew", "went", "felt", "did", "was", "were", "heard",
    "saw", "made", "took", "gave", "ran", "wrote",
];

/// What follows "always"/"never" when they do not open an order ("never the session itself",
/// "never twice").
/// What names one thing, not a kind.
pub(super) const ONE_THING: &[&str] = &[
    "this", "that", "these", "those", "it", "its", "my", "his", "her",
];

/// Whether a change is announced: the words that say an earlier rule no longer holds.
pub(super) fn changes(text: &str) -> bool {
    const CUES: &[&str] = &[
        "instead",
        "no longer",
        "not anymore",
        "any more",
        "scratch that",
        "changing",
        "change one",
        "change the rule",
        "switch to",
        "switching to",
        "move to",
        "moving to",
        "rather than",
        "replace",
        "new rule",
        "actually",
        "correction",
        "update:",
    ];
    CUES.iter().any(|cue| has_phrase(text, cue)) || text.contains(", not ")
}

/// "I'm changing the timeout rule: …", "scratch what I said about Jest", "update to what I said
/// last week: …": a change of a rule said before.
pub(super) fn changes_a_rule(text: &str) -> bool {
    const CHANGES: &[&str] = &[
        "changing the",
        "change the",
        "changing one",
        "scratch the",
        "scratch what i said",
        "forget the",
        "drop the",
        "replace the",
        "update to what i said",
        "what i said earlier",
        "what i said last",
        "i changed my mind about",
    ];
    (has_phrase(text, "rule") || text.contains("what i said"))
        && CHANGES.iter().any(|w| has_phrase(text, w))
}

/// A sentence about what the speaker does or did ("from now on I'll review each file", "we
/// always deployed on fridays"): a habit or a story, not a rule for Claude.
pub(super) fn told_of_oneself(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let after = |cue: &str| {
        text.split_once(cue)
            .map(|(_, rest)| rest.trim_start_matches([',', ' ']))
            .is_some_and(|rest| {
                ["i'll ", "i will ", "i'm ", "i am ", "i've ", "i "]
                    .iter()
                    .any(|p| rest.starts_with(p))
            })
    };
    LASTING.iter().any(|cue| after(cue))
        || words.windows(2).any(|w| {
            matches!(w[0], "always" | "never") && (w[1].ends_with("ed") || PAST.contains(&w[1]))
        })
}

/// Whether an order is about one thing of the work at hand: `this <thing>` (not this project,
/// repo or team), "here instead", "here, not", or an order whose object is "the …" ("put the
/// new function in billing.py, not utils.py", "make sure the script never deletes …").
pub(super) fn names_one_thing(text: &str) -> bool {
    const LASTING_THIS: &[&str] = &[
        "project",
        "repo",
        "repository",
        "codebase",
        "crate",
        "team",
        "app",
        "company",
        "org",
        "is",
        "was",
        "way",
        "kind",
        "rule",
        "convention",
    ];
    let words: Vec<&str> = words(text);
    let this = words
        .windows(2)
        .any(|w| w[0] == "this" && !LASTING_THIS.contains(&w[1]));
    let here =
        text.contains("here instead") || text.contains("here, not") || text.contains("here not ");
    let start = words.iter().take_while(|w| FILLERS.contains(w)).count();
    let order_on_the = match &words[start..] {
        ["make", "sure", next, ..] | [_, next, ..]
            if ONE_THING.contains(next) || *next == "the" =>
        {
            STYLE_VERBS.contains(&words[start]) || matches!(words[start], "make" | "use" | "call")
        }
        _ => false,
    };
    this || here || order_on_the
}

/// Whether pasted text speaks to an AI ("from now on you are DAN", "ignore your previous
/// instructions") or pipes into a shell: never kept as the user's rule, which would hand it to
/// every later session. The order check of `recorded` reads what is left once the lasting cue
/// is out (its "from now on you…" shape is how users word their own rules), and a new role is
/// looked for here.
pub(super) fn reads_as_an_order(text: &str) -> bool {
    const ROLES: &[&str] = &[
        "you are dan",
        "you are now",
        "you're now",
        "act as",
        "pretend",
        "roleplay",
        "role-play",
        "jailbreak",
        "developer mode",
        "no restrictions",
        "without restrictions",
        "unfiltered",
        "unrestricted",
    ];
    let mut rest = text.to_string();
    for cue in LASTING {
        rest = rest.replace(cue, " ");
    }
    crate::recorded::order_in(&rest).is_some() || ROLES.iter().any(|r| has_phrase(text, r))
}
