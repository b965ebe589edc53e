//! Which rule replaces which: the words a rule is about (its content words, lightly stemmed,
//! each family of interchangeable tools as one word), and, over a project's list in the order
//! said, the newer rule on the same subject as the current one.
//!
//! A session start reads every rule of its project and weighs each against the older ones that
//! share a word with it, so a subject is its words' hashes, sorted and each once; the word
//! lists are looked up by hash too.

use super::sentence::lower;

/// An instruction as the project's list holds it, oldest first: what it is about (its text's
/// [`subject`], made once by whoever reads the rule), and whether it announces a change.
#[derive(Debug, Clone)]
pub struct Rule<'a> {
    pub subject: &'a Subject,
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
/// it, if one did: of the older rules still current that it may replace, the one sharing the
/// most words with it (the newest of those on a tie). A rule that shares no word replaces
/// nothing, so each is weighed only against those that share one, found through the older
/// rules' words (comparing every pair cost 40% of a session start with 200 rules).
pub fn current(rules: &[Rule]) -> Vec<Option<usize>> {
    let mut replaced_by: Vec<Option<usize>> = vec![None; rules.len()];
    // Each word with each rule that says it, by word and then by rule.
    let mut said_in: Vec<(u64, usize)> = rules
        .iter()
        .enumerate()
        .flat_map(|(n, rule)| rule.subject.0.iter().map(move |word| (*word, n)))
        .collect();
    said_in.sort_unstable();
    let mut shared = vec![0usize; rules.len()];
    let mut sharing: Vec<usize> = Vec::new();
    for (new, rule) in rules.iter().enumerate() {
        for word in &rule.subject.0 {
            let from = said_in.partition_point(|(w, _)| w < word);
            for &(_, old) in said_in[from..]
                .iter()
                .take_while(|(w, old)| w == word && *old < new)
            {
                if shared[old] == 0 {
                    sharing.push(old);
                }
                shared[old] += 1;
            }
        }
        let best = sharing
            .iter()
            .map(|&old| (old, shared[old]))
            .filter(|(old, _)| replaced_by[*old].is_none())
            .filter(|(old, n)| replaces(rule, *n, rules[*old].subject))
            .max_by_key(|(old, n)| (*n, *old));
        if let Some((old, _)) = best {
            replaced_by[old] = Some(new);
        }
        for old in sharing.drain(..) {
            shared[old] = 0;
        }
    }
    replaced_by
}

/// Whether a newer rule sharing `n` subject words with an older one replaces it: with a change
/// announced, sharing one word of a short subject or two of a longer one; without, repeating
/// nearly all of the shorter subject.
fn replaces(rule: &Rule, n: usize, old: &Subject) -> bool {
    let shorter = rule.subject.len().min(old.len()).max(1);
    if rule.changes {
        n >= 2 || (n == 1 && shorter <= 3)
    } else {
        n >= 2 && n * 4 >= shorter * 3
    }
}

/// The words a text is about: its content words, lightly stemmed, each family of
/// interchangeable tools as one word. Each word is looked up by its hash in the lists below,
/// made hashes when this is compiled (a search of the words themselves was half of the cost).
pub fn subject(text: &str) -> Subject {
    let mut words: Vec<u64> = lower(text)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 1)
        .filter_map(|word| {
            let whole = hash(word);
            if is_how(whole) {
                return None;
            }
            if let Some(family) = family(whole) {
                return Some(family);
            }
            let stem = stem(word);
            let stem = if stem.len() == word.len() {
                whole
            } else {
                hash(stem)
            };
            (!is_how(stem)).then_some(stem)
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    Subject(words)
}

/// FNV-1a: a word's hash, the same in every process.
const fn hash(word: &str) -> u64 {
    let bytes = word.as_bytes();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut at = 0;
    while at < bytes.len() {
        h = (h ^ bytes[at] as u64).wrapping_mul(0x0100_0000_01b3);
        at += 1;
    }
    h
}

fn is_how(word: u64) -> bool {
    NOT_SUBJECT_HASHES.binary_search(&word).is_ok()
}

fn family(word: u64) -> Option<u64> {
    FAMILY_HASHES
        .binary_search_by(|(member, _)| member.cmp(&word))
        .ok()
        .map(|at| FAMILY_HASHES[at].1)
}

const NOT_SUBJECT_HASHES: [u64; NOT_SUBJECT.len()] = sorted_hashes(NOT_SUBJECT);
const FAMILY_HASHES: [(u64, u64); FAMILIES.len()] = family_hashes();

/// The hashes of `words`, sorted for a binary search.
const fn sorted_hashes<const N: usize>(words: &[&str]) -> [u64; N] {
    let mut out = [0; N];
    let mut at = 0;
    while at < N {
        out[at] = hash(words[at]);
        // Insertion sort: the only kind a constant can run without a closure.
        let mut j = at;
        while j > 0 && out[j - 1] > out[j] {
            (out[j - 1], out[j]) = (out[j], out[j - 1]);
            j -= 1;
        }
        at += 1;
    }
    out
}

/// [`FAMILIES`] as hashes, sorted by member.
const fn family_hashes<const N: usize>() -> [(u64, u64); N] {
    let mut out = [(0, 0); N];
    let mut at = 0;
    while at < N {
        out[at] = (hash(FAMILIES[at].0), hash(FAMILIES[at].1));
        let mut j = at;
        while j > 0 && out[j - 1].0 > out[j].0 {
            (out[j - 1], out[j]) = (out[j], out[j - 1]);
            j -= 1;
        }
        at += 1;
    }
    out
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
    fn the_word_lists_are_sorted_and_no_two_words_share_a_hash() {
        assert!(NOT_SUBJECT.windows(2).all(|w| w[0] < w[1]));
        assert!(FAMILIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(NOT_SUBJECT_HASHES.windows(2).all(|w| w[0] < w[1]));
        assert!(FAMILY_HASHES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(is_how(hash("always")) && !is_how(hash("tabs")));
        assert_eq!(family(hash("pnpm")), Some(hash("=packages")));
    }

    /// Every pair weighed, as `current` once did: what it must still answer.
    fn every_pair(rules: &[Rule]) -> Vec<Option<usize>> {
        let subjects: Vec<&Subject> = rules.iter().map(|r| r.subject).collect();
        let mut replaced_by: Vec<Option<usize>> = vec![None; rules.len()];
        for (new, rule) in rules.iter().enumerate() {
            let best = (0..new)
                .filter(|old| replaced_by[*old].is_none())
                .map(|old| (old, subjects[new].shared(subjects[old])))
                .filter(|(old, n)| replaces(rule, *n, subjects[*old]))
                .max_by_key(|(old, n)| (*n, *old));
            if let Some((old, _)) = best {
                replaced_by[old] = Some(new);
            }
        }
        replaced_by
    }

    #[test]
    fn weighing_only_the_rules_sharing_a_word_changes_no_answer() {
        const WORDS: [&str; 12] = [
            "tests", "main", "tabs", "spaces", "commit", "branch", "docs", "npm", "pnpm",
            "release", "logger", "parser",
        ];
        let mut next = crate::text::made_up::picker(0x9e37_79b9_7f4a_7c15);
        let mut replacing = 0;
        for _ in 0..50 {
            let texts: Vec<String> = (0..60)
                .map(|_| {
                    let words: Vec<&str> = (0..1 + next(4)).map(|_| WORDS[next(12)]).collect();
                    format!("always use {}", words.join(" "))
                })
                .collect();
            let subjects: Vec<Subject> = texts.iter().map(|text| subject(text)).collect();
            let rules: Vec<Rule> = subjects
                .iter()
                .map(|subject| Rule {
                    subject,
                    changes: next(3) == 0,
                })
                .collect();
            let answer = current(&rules);
            assert_eq!(answer, every_pair(&rules), "{texts:?}");
            replacing += answer.iter().flatten().count();
        }
        assert!(
            replacing > 500,
            "too few rules replaced to tell: {replacing}"
        );
    }

    #[test]
    fn a_family_is_one_word_and_plurals_meet() {
        assert_eq!(subject("use pnpm").shared(&subject("we use npm")), 1);
        assert_eq!(subject("test files").shared(&subject("the test file")), 2);
        assert_eq!(subject("always add tests").len(), 1);
    }
}
