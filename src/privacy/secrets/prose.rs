//! Passwords told in a sentence rather than assigned: "the staging admin password is
//! Xk7mQ2pL9" in a prompt, "use password Hg4kLm9xQ" in Claude's message. A sentence about a
//! password is far more often about the policy, the field or the manager (`the password
//! policy is strict`, `use password authentication`, `the password is stored in Vault`), so
//! only these shapes count, and only a value that cannot be a word of the sentence: quoted, or
//! letters mixed with digits or symbols. A letters-only password told unquoted in prose is
//! not caught.

use std::ops::Range;

use super::names::{Class, looks_secret};
use super::tokens::run_end;
use crate::text::find;

/// How far after the name a sentence is read for its value.
const REACH: usize = 160;

/// Words that tell the value: "the password is X", "the password was X".
const TELLS: &[&str] = &["is", "was", "is:", "was:"];

/// Words that hand over the value straight after the name: "use password X".
const HANDS: &[&str] = &["use", "using", "with", "try"];

/// Words of "the password for the staging db is X" between the name and its telling.
const FOR: &[&str] = &["for", "of", "on"];

/// The value told after the password word `bytes[start..end]`, when the sentence tells one
/// and it looks like a password.
pub fn password(bytes: &[u8], start: usize, end: usize) -> Option<Range<usize>> {
    let name = &bytes[start..end];
    if !["password", "passwd", "passphrase"]
        .iter()
        .any(|w| name.eq_ignore_ascii_case(w.as_bytes()))
    {
        return None;
    }
    let limit = bytes.len().min(end + REACH);
    let line = &bytes[..find::byte(b'\n', &bytes[end..limit]).map_or(limit, |i| end + i)];
    let from = if one_of(word_before(bytes, start), HANDS) {
        end
    } else {
        let mut words = Words { line, at: end };
        let mut word = words.next()?;
        if one_of(&line[word.clone()], FOR) {
            word = words
                .by_ref()
                .take(6)
                .find(|w| one_of(&line[w.clone()], TELLS))?;
        } else if !one_of(&line[word.clone()], TELLS) {
            return None;
        }
        word.end
    };
    value(line, from)
}

/// The value of a sentence from `from`: quoted, or a word without the punctuation that ends
/// the sentence.
fn value(line: &[u8], from: usize) -> Option<Range<usize>> {
    let at = run_end(line, from, |b| b == b' ' || b == b'\t');
    if let Some(&quote @ (b'"' | b'\'' | b'`')) = line.get(at) {
        let close = find::byte(quote, &line[at + 1..])? + at + 1;
        let text = std::str::from_utf8(&line[at + 1..close]).ok()?;
        return looks_secret(text, Class::Strong, true).then_some(at + 1..close);
    }
    let end = run_end(line, at, |b| !b.is_ascii_whitespace());
    let end = at
        + line[at..end]
            .iter()
            .rposition(|b| !b".,;:!?)".contains(b))
            .map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&line[at..end]).ok()?;
    let letters = text.bytes().any(|b| b.is_ascii_alphabetic());
    let others = text.bytes().any(|b| !b.is_ascii_alphabetic());
    let path = text.starts_with(['/', '~', '.']) || text.contains("://");
    let secret = text.len() >= 6 && letters && others && !path && !compound(text);
    (secret && looks_secret(text, Class::Strong, false)).then_some(at..end)
}

/// A word joined with a hyphen, which prose says of a password (`base64-encoded`,
/// `re-entered`, `12-characters`), or an algorithm's name (`SHA-256`, `AES-128`).
fn compound(text: &str) -> bool {
    let Some((head, last)) = text.rsplit_once('-') else {
        return false;
    };
    let word = text
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && last.len() >= 3
        && last.bytes().all(|b| b.is_ascii_lowercase());
    let algorithm = (2..=6).contains(&head.len())
        && head.bytes().all(|b| b.is_ascii_uppercase())
        && (1..=4).contains(&last.len())
        && last.bytes().all(|b| b.is_ascii_digit());
    word || algorithm
}

/// The words of a line from `at`, split at spaces.
struct Words<'a> {
    line: &'a [u8],
    at: usize,
}

impl Iterator for Words<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        let start = run_end(self.line, self.at, |b| b == b' ' || b == b'\t');
        let end = run_end(self.line, start, |b| !b.is_ascii_whitespace());
        self.at = end;
        (end > start).then_some(start..end)
    }
}

/// The word just before `at`, across spaces, read back no further than a few bytes.
fn word_before(bytes: &[u8], at: usize) -> &[u8] {
    let near = &bytes[at.saturating_sub(16)..at];
    let end = near
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    let start = near[..end]
        .iter()
        .rposition(|b| !b.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    &near[start..end]
}

fn one_of(word: &[u8], words: &[&str]) -> bool {
    words
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(text: &str) -> Option<&str> {
        let start = text.find("password")?;
        password(text.as_bytes(), start, start + "password".len()).map(|r| &text[r])
    }

    #[test]
    fn passwords_told_in_sentences() {
        for (text, value) in [
            ("the staging admin password is Xk7mQ2pL9", "Xk7mQ2pL9"),
            ("use password Hg4kLm9xQ for now.", "Hg4kLm9xQ"),
            (
                "The password for the staging db is: s3cr3t-Pa55!",
                "s3cr3t-Pa55",
            ),
            (
                "the password was 'correct horse battery'",
                "correct horse battery",
            ),
            ("log in with password `Tr0ub4dor&3`", "Tr0ub4dor&3"),
            ("the password is Winter-2024 for now", "Winter-2024"),
        ] {
            assert_eq!(told(text), Some(value), "{text}");
        }
    }

    #[test]
    fn sentences_about_passwords_are_no_secrets() {
        for text in [
            "the password policy is strict",
            "the password is stored in Vault",
            "use password authentication instead of keys",
            "the password is at least 12 characters long",
            "Password is required.",
            "the password is $DB_PASSWORD",
            "the password is https://vault.acme.dev/ui",
            "the password for the staging db is in 1Password",
            "use password managers",
            "the password is base64-encoded before it is sent",
            "the password is SHA-256 hashed",
            "the password is re-entered to confirm it",
        ] {
            assert_eq!(told(text), None, "{text}");
        }
    }
}
