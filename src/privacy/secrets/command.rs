//! Passwords that tools take on their command line or in their own files, where no name says
//! secret: `curl -u user:pass`, `mysql -pX`, `sshpass -p X`, `docker login -p X`,
//! PowerShell's `ConvertTo-SecureString 'pass' -AsPlainText`, a Basic credential made with
//! `echo -n 'user:pass' | base64`, and `.pgpass` lines (`host:port:database:user:password`).
//! Each is found at its flag or command (or, for `.pgpass`, its port field) and confirmed by the
//! line it is on, read no further than a bounded reach.

use std::ops::Range;

use super::names::{Class, looks_secret};
use super::tokens::{Step, run_end};
use crate::text::find;

/// How far back a line is read for the command a flag belongs to.
const REACH: usize = 512;

/// The line before `at`: from its start (or `floor`, or `REACH` bytes back) to `at`.
fn line_before(bytes: &[u8], at: usize, floor: usize) -> &[u8] {
    let from = floor.max(at.saturating_sub(REACH)).min(at);
    let start = find::byte_back(b'\n', &bytes[from..at]).map_or(from, |i| from + i + 1);
    &bytes[start..at]
}

/// Whether the line before `at` runs one of `commands`.
fn runs(bytes: &[u8], at: usize, floor: usize, commands: &[&str]) -> bool {
    let line = line_before(bytes, at, floor);
    commands
        .iter()
        .any(|c| find::sub(line, c.as_bytes()).is_some())
}

/// A value given on a command line from `from`: quoted (`'…'`, `"…"`) or up to a space.
fn argument(bytes: &[u8], from: usize) -> Range<usize> {
    let limit = bytes.len().min(from + 1024);
    match bytes.get(from) {
        Some(&q @ (b'\'' | b'"')) => {
            let close = find::byte(q, &bytes[from + 1..limit]).map_or(limit, |i| from + 1 + i);
            from + 1..close
        }
        _ => {
            from..run_end(&bytes[..limit], from, |b| {
                !b.is_ascii_whitespace() && b != b';'
            })
        }
    }
}

fn hit_if_secret(bytes: &[u8], range: Range<usize>, resume: usize) -> Step {
    let text = std::str::from_utf8(&bytes[range.clone()]).unwrap_or("");
    if looks_secret(text, Class::UrlPassword, true) {
        Step::hit(range, "password")
    } else {
        Step::miss(resume)
    }
}

/// The check of a command-line anchor (`sshpass`, ` -p`, ` -u`, `--user`) found at `at`.
pub fn password(anchor: &str, bytes: &[u8], at: usize, floor: usize) -> Step {
    let after = at + anchor.len();
    let miss = Step::miss(after);
    let spaces = |from: usize| run_end(bytes, from, |b| b == b' ' || b == b'\t');
    match anchor {
        // `sshpass -p secret ssh host`, `sshpass -psecret …`.
        "sshpass" => {
            let flag = spaces(after);
            if flag == after || !bytes[flag..].starts_with(b"-p") {
                return miss;
            }
            hit_if_secret(bytes, argument(bytes, spaces(flag + 2)), after)
        }
        // `mysql -u root -pSecret db`: the password sticks to its flag (`-p secret` would ask
        // for one and take `secret` for the database). `docker login -u me -p secret`.
        " -p" => {
            let value = argument(bytes, after);
            if !value.is_empty() && runs(bytes, at, floor, &["mysql", "mariadb"]) {
                return hit_if_secret(bytes, value, after);
            }
            let value = argument(bytes, spaces(after));
            if value.start > after && runs(bytes, at, floor, &[" login"]) {
                return hit_if_secret(bytes, value, after);
            }
            miss
        }
        // `curl -u user:secret …`, `curl --user=user:secret`: the part after the colon.
        _ => {
            let from = match bytes.get(after) {
                Some(b'=') if anchor == "--user" => after + 1,
                Some(b' ' | b'\t') => spaces(after),
                Some(b'\'' | b'"') if anchor == " -u" => after,
                _ => return miss,
            };
            let value = argument(bytes, from);
            let Some(colon) = find::byte(b':', &bytes[value.clone()]) else {
                return miss;
            };
            if !runs(bytes, at, floor, &["curl"]) {
                return miss;
            }
            hit_if_secret(bytes, value.start + colon + 1..value.end, after)
        }
    }
}

/// `ConvertTo-SecureString 'pass' -AsPlainText` (or `-String 'pass'` anywhere on the line,
/// or `'pass' | ConvertTo-SecureString -AsPlainText`), found at `SecureString`: the literal
/// goes. A variable or an expression (`$pw`, `(Read-Host …)`) is no secret, and without
/// `-AsPlainText` the value is already encrypted.
pub fn secure_string(bytes: &[u8], at: usize, floor: usize) -> Step {
    let after = at + "SecureString".len();
    let miss = Step::miss(after);
    let before = line_before(bytes, at, floor);
    let command = b"convertto-";
    if before.len() < command.len()
        || !before[before.len() - command.len()..].eq_ignore_ascii_case(command)
    {
        return miss;
    }
    let line = &bytes[after..line_end(bytes, after)];
    let find = |name: &[u8]| {
        line.windows(name.len())
            .position(|w| w.eq_ignore_ascii_case(name))
    };
    if find(b"-asplaintext").is_none() {
        return miss;
    }
    let spaces = |from: usize| run_end(bytes, from, |b| b == b' ' || b == b'\t');
    // `-String` names the value wherever it is; without it, the value comes first.
    let from = spaces(find(b"-string ").map_or(after, |i| after + i + "-string ".len()));
    let value = if bytes.get(from).is_some_and(|&b| b != b'-') {
        argument(bytes, from)
    } else {
        // Piped in: the quoted literal before `| ConvertTo-`.
        let start = at - before.len();
        let pipe = trim_end(before, before.len() - command.len());
        if pipe == 0 || before[pipe - 1] != b'|' {
            return miss;
        }
        match quoted_before(before, trim_end(before, pipe - 1)) {
            Some(inner) => start + inner.start..start + inner.end,
            None => return miss,
        }
    };
    hit_if_secret(bytes, value, after)
}

/// `echo -n 'user:pass' | base64` (or `printf`, a bare or quoted argument), found at `|`
/// (`body` is where `base64` ends): the part after the colon goes. The output, which holds
/// the credential encoded, is only found after `Authorization: Basic`.
pub fn base64_pipe(bytes: &[u8], at: usize, body: usize, floor: usize) -> Step {
    let miss = Step::miss(body);
    if bytes.get(body).is_some_and(|&b| b.is_ascii_alphanumeric()) {
        return miss;
    }
    let line = line_before(bytes, at, floor);
    let start = at - line.len();
    let end = trim_end(line, line.len());
    let (value, command) = match quoted_before(line, end) {
        Some(inner) => {
            let command = inner.start - 1;
            (inner, command)
        }
        None => {
            let word = line[..end]
                .iter()
                .rposition(u8::is_ascii_whitespace)
                .map_or(0, |i| i + 1);
            (word..end, word)
        }
    };
    // The command before the value: `echo` or `printf`, after any flags (`-n`, `-ne`).
    let told = line[..command]
        .split(u8::is_ascii_whitespace)
        .rev()
        .find(|word| !word.is_empty() && !word.starts_with(b"-"))
        .map(|word| {
            // `AUTH=$(printf …`: the command is the word's last part.
            let from = word.iter().rposition(|b| b"=(;|&`".contains(b));
            &word[from.map_or(0, |i| i + 1)..]
        });
    if !matches!(told, Some(b"echo" | b"printf")) {
        return miss;
    }
    // `user:pass`: a user's name, then no space (not JSON, `{"alg":"HS256"}`).
    let text = &line[value.clone()];
    let user = text
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b"_.-@".contains(&b))
        .count();
    if user == 0 || text.get(user) != Some(&b':') || text.iter().any(u8::is_ascii_whitespace) {
        return miss;
    }
    hit_if_secret(
        bytes,
        start + value.start + user + 1..start + value.end,
        body,
    )
}

/// Where the line that goes on at `from` ends (or `REACH` bytes on).
fn line_end(bytes: &[u8], from: usize) -> usize {
    let limit = bytes.len().min(from + REACH);
    find::byte(b'\n', &bytes[from..limit]).map_or(limit, |i| from + i)
}

/// `line[..end]` without its trailing spaces: where they start.
fn trim_end(line: &[u8], end: usize) -> usize {
    line[..end]
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1)
}

/// The inside of the quoted literal that ends `line[..end]`, if it ends with a quote.
fn quoted_before(line: &[u8], end: usize) -> Option<Range<usize>> {
    let quote = *line[..end].last().filter(|&&b| b == b'\'' || b == b'"')?;
    let open = find::byte_back(quote, &line[..end - 1])?;
    Some(open + 1..end - 1)
}

/// A `.pgpass` line found at the colon before its port (`:5432:` and the other usual ports of
/// PostgreSQL and its poolers, `:*:`): five fields on one line, the last the password.
pub fn pgpass(bytes: &[u8], at: usize, floor: usize) -> Step {
    let miss = Step::miss(at + 1);
    let host = line_before(bytes, at, floor);
    if host.is_empty()
        || host.len() > 255
        || host
            .iter()
            .any(|&b| b == b':' || b.is_ascii_whitespace() || b"=\"'<>(),;".contains(&b))
    {
        return miss;
    }
    let limit = bytes.len().min(at + REACH);
    let end = find::byte(b'\n', &bytes[at..limit]).map_or(limit, |i| at + i);
    let end = if end > at && bytes[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    let line = &bytes[at + 1..end];
    let fields: Vec<&[u8]> = line.split(|&b| b == b':').collect();
    // port, database, user, password
    if fields.len() != 4 || fields[..3].iter().any(|f| f.is_empty()) {
        return miss;
    }
    let password = end - fields[3].len()..end;
    hit_if_secret(bytes, password, end.max(at + 1))
}
