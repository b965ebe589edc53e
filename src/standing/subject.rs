//! Which rule replaces which: the words a rule is about (its content words, lightly stemmed,
//! each family of interchangeable tools as one word), and, over a project's list in the order
//! said, the newer rule on the same subject as the current one.
//!
//! A session start reads every rule of its project and compares each with the older ones (the
//! square of their number: 20,000 pairs for 200 rules), so a subject is its words' hashes,
//! sorted, and two subjects meet in one merge; the word lists are sorted and searched.

use super::sentence::lower;

/// An instruction as the project's list holds it, oldest first.
#[derive(Debug, Clone)]
pub struct Rule<'a> {
    pub text: &'a str,
    pub changes: bool,
}

/// The words a rule (or a prompt) is about, as sorted hashes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subject(Vec<u64>);

impl Subject {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// How many words two subjects share.
    pub fn shared(&self, other: &Subject) -> usize {
        let (mut a, mut b, mut n) = (0, 0, 0);
        while a < self.0.len() && b < other.0.len() {
            match self.0[a].cmp(&other.0[b]) {
                std::cmp::Ordering::Less => a += 1,
                std::cmp::Ordering::Greater => b += 1,
                std::cmp::Ordering::Equal => {
                    n += 1;
                    a += 1;
                    b += 1;
                }
            }
        }
        n
    }
}

/// For each rule of a project's list (oldest first), the index of the newer rule that replaced
/// it, if one did.
pub fn current(rules: &[Rule]) -> Vec<Option<usize>> {
    let subjects: Vec<Subject> = rules.iter().map(|r| subject(r.text)).collect();
    let mut replaced_by: Vec<Option<usize>> = vec![None; rules.len()];
    for (new, rule) in rules.iter().enumerate() {
        let best = (0..new)
            .filter(|old| replaced_by[*old].is_none())
            .map(|old| (old, subjects[new].shared(&subjects[old])))
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
fn replaces(rule: &Rule, n: usize, new: &Subject, old: &Subject) -> bool {
    let shorter = new.len().min(old.len()).max(1);
    if rule.changes {
        n >= 2 || (n == 1 && shorter <= 3)
    } else {
        n >= 2 && n * 4 >= shorter * 3
    }
}

/// The words a text is about: its content words, lightly stemmed, each family of
/// interchangeable tools as one word.
pub fn subject(text: &str) -> Subject {
    let mut words: Vec<u64> = lower(text)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 1 && !is_how(w))
        .filter_map(|word| match family(word) {
            Some(family) => Some(hash(family)),
            None => {
                let stem = stem(word);
                (!is_how(stem)).then(|| hash(stem))
            }
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    Subject(words)
}

/// FNV-1a: a word's hash, the same in every process.
fn hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn is_how(word: &str) -> bool {
    NOT_SUBJECT.binary_search(&word).is_ok()
}

fn family(word: &str) -> Option<&'static str> {
    FAMILIES
        .binary_search_by(|(member, _)| member.cmp(&word))
        .ok()
        .map(|at| FAMILIES[at].1)
}

/// Interchangeable things, each member with its family, sorted by member: a rule naming one is
/// about them all.
const FAMILIES: &[(&str, &str)] = &[
    ("autopep8", "=format"),
    ("ava", "=tests"),
    ("black", "=format"),
    ("bun", "=packages"),
    ("camel", "=case"),
    ("camelcase", "=case"),
    ("conda", "=packages"),
    ("double", "=quotes"),
    ("gofmt", "=format"),
    ("indent", "=indent"),
    ("indentation", "=indent"),
    ("indented", "=indent"),
    ("jasmine", "=tests"),
    ("jest", "=tests"),
    ("kebab", "=case"),
    ("mocha", "=tests"),
    ("nose", "=tests"),
    ("npm", "=packages"),
    ("pascalcase", "=case"),
    ("pip", "=packages"),
    ("pipenv", "=packages"),
    ("pnpm", "=packages"),
    ("poetry", "=packages"),
    ("prettier", "=format"),
    ("pytest", "=tests"),
    ("quote", "=quotes"),
    ("quotes", "=quotes"),
    ("ruff", "=format"),
    ("rustfmt", "=format"),
    ("semicolon", "=semicolons"),
    ("semicolons", "=semicolons"),
    ("single", "=quotes"),
    ("snake", "=case"),
    ("snake_case", "=case"),
    ("snakecase", "=case"),
    ("space", "=indent"),
    ("spaces", "=indent"),
    ("tab", "=indent"),
    ("tabs", "=indent"),
    ("unittest", "=tests"),
    ("uv", "=packages"),
    ("vitest", "=tests"),
    ("yapf", "=format"),
    ("yarn", "=packages"),
];

/// Words that say how, not what: the cues, stop words and the like. Sorted.
const NOT_SUBJECT: &[&str] = &[
    "a",
    "actually",
    "add",
    "again",
    "all",
    "also",
    "always",
    "an",
    "and",
    "any",
    "anymore",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "change",
    "changing",
    "convention",
    "create",
    "default",
    "do",
    "don",
    "each",
    "ever",
    "every",
    "for",
    "forget",
    "forward",
    "from",
    "future",
    "get",
    "go",
    "goe",
    "going",
    "have",
    "here",
    "i",
    "im",
    "in",
    "instead",
    "into",
    "is",
    "it",
    "just",
    "keep",
    "let",
    "let's",
    "lets",
    "like",
    "ll",
    "longer",
    "m",
    "make",
    "more",
    "must",
    "need",
    "never",
    "new",
    "no",
    "not",
    "now",
    "of",
    "ok",
    "okay",
    "old",
    "on",
    "one",
    "only",
    "onto",
    "or",
    "our",
    "over",
    "please",
    "prefer",
    "put",
    "rather",
    "re",
    "remember",
    "rule",
    "rules",
    "run",
    "s",
    "scratch",
    "should",
    "so",
    "stick",
    "stop",
    "sure",
    "switch",
    "t",
    "than",
    "that",
    "the",
    "there",
    "this",
    "time",
    "to",
    "too",
    "under",
    "use",
    "using",
    "ve",
    "want",
    "we",
    "when",
    "whenever",
    "with",
    "write",
    "you",
    "your",
];

/// A word without its plural, so that "tests" and "test" meet.
fn stem(w: &str) -> &str {
    let cut = |suffix: &str| w.len() > suffix.len() + 2 && w.ends_with(suffix);
    if cut("ies") {
        // "dependencies" and "dependency" meet as "dependenc".
        &w[..w.len() - 3]
    } else if cut("es") && (w.ends_with("ses") || w.ends_with("xes") || w.ends_with("ches")) {
        &w[..w.len() - 2]
    } else if (cut("s") && !w.ends_with("ss") && !w.ends_with("us"))
        || (w.len() > 3 && w.ends_with('y'))
    {
        &w[..w.len() - 1]
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_lists_are_sorted_for_their_search() {
        assert!(NOT_SUBJECT.windows(2).all(|w| w[0] < w[1]));
        assert!(FAMILIES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn a_family_is_one_word_and_plurals_meet() {
        assert_eq!(subject("use pnpm").shared(&subject("we use npm")), 1);
        assert_eq!(subject("test files").shared(&subject("the test file")), 2);
        assert_eq!(subject("always add tests").len(), 1);
    }
}
