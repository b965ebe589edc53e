//! Secrets known by their name: `DB_PASSWORD=…`, `"api_key": "…"`, `--token …`,
//! `Authorization: Basic …`. The name must say secret (a word of it is `password`, `secret`,
//! `token`, `key`…, and its last word is not one that names something else: `token_url`,
//! `max_tokens`, `public_key`) and the value must look like one: not a placeholder (`***`,
//! `${VAR}`, `<token>`, `changeme`), not code (`password=args.password`, `token: string`),
//! and, for the weaker words, long and random enough (digits and letters, some entropy). A
//! password word with nothing assigned may still be told its value in a sentence (`prose`).

use std::ops::Range;

use super::prose;
use super::tokens::{self, Step, run_end};
use crate::text::find;

/// How much a value must look like a secret to be taken for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Named password, secret, credential, private key: any real value is one.
    Strong,
    /// Named token, api key, auth: long and random.
    Weak,
    /// Named only `key`, which names many things that are not secrets: a long random token.
    Key,
    /// The credential of an Authorization header or a `Bearer`.
    Credential,
    /// The password of a URL.
    UrlPassword,
}

/// Longest name looked at around a word, and longest value taken.
const MAX_NAME: usize = 128;
const MAX_VALUE: usize = 1024;

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

/// The first `len` bytes of `bytes` (all when shorter): a scan that must not read a whole
/// long run at every anchor in it.
fn within(bytes: &[u8], len: usize) -> &[u8] {
    &bytes[..bytes.len().min(len)]
}

/// `at` (or the end of `bytes`), moved back to the start of a UTF-8 character.
fn boundary_before(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while at < bytes.len() && at > 0 && bytes[at] & 0xC0 == 0x80 {
        at -= 1;
    }
    at
}

/// The check of a secret word found at `at`: the whole name around it, then what is assigned.
pub fn assignment(bytes: &[u8], at: usize) -> Step {
    let floor = at.saturating_sub(MAX_NAME);
    let mut start = at
        - bytes[floor..at]
            .iter()
            .rev()
            .take_while(|&&b| name_byte(b))
            .count();
    let end = run_end(within(bytes, at + MAX_NAME), at, name_byte);
    let flag = bytes[start..].starts_with(b"--");
    while start < at && bytes[start] == b'-' {
        start += 1;
    }
    let miss = Step::miss(end.max(at + 1));
    let Ok(name) = std::str::from_utf8(&bytes[start..end]) else {
        return miss;
    };
    let Some((class, label)) = classify(name) else {
        return miss;
    };
    let xml = start > 0 && bytes[start - 1] == b'<' && bytes.get(end) == Some(&b'>');
    let value = if xml {
        xml_value(bytes, end + 1)
    } else {
        assigned_value(bytes, end, flag || spaced(bytes, start, name))
    };
    let Some((range, quoted)) = value else {
        return match prose::password(bytes, start, end) {
            Some(range) => Step::hit(range, label),
            None => miss,
        };
    };
    // `NAME=value` in the shell or a `.env` file assigns text, never code.
    let literal = quoted
        || (bytes.get(end) == Some(&b'=') && screaming(name))
        || (class == Class::Strong && plain_on_its_line(bytes, name, &range));
    if class == Class::Credential {
        return match credential(bytes, skip_scheme(bytes, range.start)) {
            Some(range) => Step::hit(range, label),
            None => miss,
        };
    }
    let text = std::str::from_utf8(&bytes[range.clone()]).unwrap_or("");
    if looks_secret(text, class, literal) {
        Step::hit(range, label)
    } else {
        miss
    }
}

/// A name in the style of environment variables: `DB_PASSWORD`, `PGPASSWORD`.
fn screaming(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A letters-only value alone at the end of its line, assigned to an upper-case name
/// (`GPG_PASSPHRASE: correcthorse`, as YAML or a `.env` with spaces writes it) or to a
/// passphrase (`key_passphrase: correcthorse`): text. Code would have a call, a path or a
/// comma there; a name of code (`passphrase`, `gpg_passphrase`, `userPassphrase`, `Buffer`)
/// is left out.
fn plain_on_its_line(bytes: &[u8], name: &str, value: &Range<usize>) -> bool {
    let text = &bytes[value.clone()];
    let rest = &bytes[value.end..];
    let blanks = run_end(rest, 0, |b| b == b' ' || b == b'\t' || b == b'\r');
    let ends_line = rest.get(blanks).is_none_or(|&b| b == b'\n');
    let letters = !text.is_empty() && text.iter().all(u8::is_ascii_alphabetic);
    let code = text[..1.min(text.len())].iter().any(u8::is_ascii_uppercase)
        || text
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let passphrase = words(name).last().is_some_and(|w| w == "passphrase");
    ends_line && letters && (screaming(name) || (passphrase && !code))
}

/// A name given its value after a space: `password` as a `.netrc` writes it, where the line
/// (or the lines just before) name a `machine` or a `login`, and any secret name after
/// `configure set` (`aws configure set aws_secret_access_key …`).
fn spaced(bytes: &[u8], start: usize, name: &str) -> bool {
    let before = &bytes[start.saturating_sub(MAX_NAME)..start];
    let has = |w: &[u8]| find::sub(before, w).is_some();
    before.ends_with(b"configure set ")
        || ((name == "password" || name == "passwd")
            && (has(b"login ") || has(b"machine ") || has(b"default ")))
}

/// A JSON member whose key names a secret and whose string value looks like one: the label to
/// replace the value with.
pub fn member(key: &str, value: &str) -> Option<&'static str> {
    let (class, label) = classify(key)?;
    let value = if class == Class::Credential {
        let bytes = value.as_bytes();
        let range = credential(bytes, skip_scheme(bytes, 0))?;
        &value[range]
    } else {
        value
    };
    looks_secret(value, class, true).then_some(label)
}

/// The value assigned after a name that ends at `end`: `=`, `:`, `:=` or `=>`, with spaces and
/// quotes around (also escaped quotes, as in JSON held in a string), or, after a `--flag`, a
/// space. The value's range, and whether it was quoted.
fn assigned_value(bytes: &[u8], end: usize, flag: bool) -> Option<(Range<usize>, bool)> {
    let mut at = end;
    // The closing quote of a quoted name, escaped or not.
    while at < end + 2 && matches!(bytes.get(at), Some(b'"' | b'\'' | b'\\')) {
        at += 1;
    }
    let spaces = |from: usize| run_end(bytes, from, |b| b == b' ' || b == b'\t');
    at = spaces(at);
    let operator = match &bytes[at.min(bytes.len())..] {
        [b':', b'=', ..] | [b'=', b'>', ..] => 2,
        [b'=', b'=', ..] | [b':', b':', ..] => return None,
        [b'=' | b':', ..] => 1,
        _ if flag && at > end => 0,
        _ => return None,
    };
    at = spaces(at + operator);
    let escaped = bytes.get(at) == Some(&b'\\');
    let quote = bytes.get(at + usize::from(escaped)).copied();
    if let Some(q @ (b'"' | b'\'' | b'`')) = quote {
        let from = at + usize::from(escaped) + 1;
        let limit = boundary_before(bytes, from + MAX_VALUE);
        let close = bytes[from..limit]
            .iter()
            .position(|&b| b == q || b == b'\n')
            .map_or(limit, |i| from + i);
        let close = if escaped && close > from && bytes[close - 1] == b'\\' {
            close - 1
        } else {
            close
        };
        return Some((from..close, true));
    }
    let stop = |b: u8| b.is_ascii_whitespace() || b"\"'`,;)]}<>&".contains(&b);
    let limit = boundary_before(bytes, at + MAX_VALUE);
    let close = bytes[at..limit]
        .iter()
        .position(|&b| stop(b))
        .map_or(limit, |i| at + i);
    Some((at..close, false))
}

/// `<password>value</password>`.
fn xml_value(bytes: &[u8], from: usize) -> Option<(Range<usize>, bool)> {
    let limit = boundary_before(bytes, from + MAX_VALUE);
    let close = find::byte(b'<', &bytes[from..limit])?;
    Some((from..from + close, true))
}

/// After `Authorization:`, the scheme word (`Bearer`, `Basic`, `Token`…) is not the secret.
fn skip_scheme(bytes: &[u8], from: usize) -> usize {
    let word = run_end(within(bytes, from + 16), from, |b| {
        b.is_ascii_alphabetic() || b == b'-'
    });
    let scheme = std::str::from_utf8(&bytes[from..word]).unwrap_or("");
    let known = [
        "bearer",
        "basic",
        "token",
        "api-token",
        "digest",
        "bot",
        "oauth",
        "jwt",
        "key",
        "apikey",
        "sso-key",
    ];
    let spaces = run_end(bytes, word, |b| b == b' ' || b == b'\t');
    if spaces > word && known.iter().any(|k| scheme.eq_ignore_ascii_case(k)) {
        spaces
    } else {
        from
    }
}

/// A credential at `from` (after `Bearer `): its range when it looks like one.
pub fn credential(bytes: &[u8], from: usize) -> Option<Range<usize>> {
    let end = run_end(within(bytes, from + MAX_VALUE), from, |b| {
        b.is_ascii_alphanumeric() || b"_-.=~+/@:".contains(&b)
    });
    let text = std::str::from_utf8(&bytes[from..end]).ok()?;
    looks_secret(text, Class::Credential, true).then_some(from..end)
}

/// The words of a name, lower case: split at `_`, `-`, `.` and where camelCase turns.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split(['_', '-', '.']).filter(|p| !p.is_empty()) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let turns = prev.is_some_and(|p| {
                (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase()
                    || p.is_ascii_uppercase()
                        && c.is_ascii_uppercase()
                        && next.is_some_and(char::is_ascii_lowercase)
            });
            if turns && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        words.push(word);
    }
    words
}

/// Last words that make a name about something else than the secret itself.
const NOT_THE_SECRET: &[&str] = &[
    "url",
    "uri",
    "urls",
    "endpoint",
    "path",
    "file",
    "filename",
    "dir",
    "name",
    "id",
    "ids",
    "length",
    "len",
    "size",
    "count",
    "max",
    "min",
    "limit",
    "type",
    "kind",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "timeout",
    "header",
    "field",
    "param",
    "env",
    "var",
    "prefix",
    "mode",
    "policy",
    "required",
    "enabled",
    "disabled",
    "regex",
    "pattern",
    "label",
    "hint",
    "placeholder",
    "format",
    "version",
    "provider",
    "hash",
    "algorithm",
    "index",
    "usage",
    "budget",
    "rate",
    "encoding",
    "location",
    "source",
    "ref",
    "arn",
    "schema",
    "rotation",
    "rounds",
    "iterations",
    "bits",
];

/// Words of names that count or bound something (`max_tokens`, `total_tokens`).
const COUNTS: &[&str] = &["max", "min", "num", "total", "remaining", "used"];

/// What comes before `key` in names of keys that are not secrets.
const NOT_SECRET_KEYS: &[&str] = &[
    "public",
    "primary",
    "foreign",
    "sort",
    "partition",
    "cache",
    "idempotency",
    "unique",
    "row",
    "map",
    "dict",
    "object",
    "lookup",
    "composite",
    "range",
    "group",
    "index",
    "natural",
    "translation",
    "i18n",
    "cursor",
    "storage",
    "react",
    "hot",
    "shortcut",
    "keyboard",
];

/// What comes before `key` in names of keys that are secrets whatever their value looks like
/// (`signing_key`, `ENCRYPTION_KEY`): a long random value is enough.
const SECRET_KEYS: &[&str] = &[
    "signing",
    "encryption",
    "master",
    "session",
    "cookie",
    "jwt",
    "webhook",
    "app",
    "client",
    "license",
];

/// How a name says secret, and the label of what it holds; `None` when it does not.
pub fn classify(name: &str) -> Option<(Class, &'static str)> {
    let words = words(name);
    let last = words.last()?;
    if NOT_THE_SECRET.contains(&last.as_str()) || words.iter().any(|w| COUNTS.contains(&w.as_str()))
    {
        return None;
    }
    let aws = words.iter().any(|w| w == "aws");
    let mut found = None;
    for (i, word) in words.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| words[p].as_str());
        let this = match word.as_str() {
            "password" | "passwd" | "passphrase" | "pwd" | "pass" | "sshpass" => {
                (Class::Strong, "password")
            }
            // `PGPASSWORD`, `MYSQLPASSWORD`: one word ending in password.
            w if w.ends_with("password") || w.ends_with("passwd") => (Class::Strong, "password"),
            "salt" | "pepper" => (Class::Strong, "salt"),
            // Alone it may name the algorithm (`hmac: sha256`): a long random value only.
            "hmac" => (Class::Weak, "hmac-key"),
            "key" if prev.is_some_and(|p| SECRET_KEYS.contains(&p)) => (Class::Weak, "key"),
            "secret" | "secrets" | "clientsecret" | "secretkey" if aws => {
                (Class::Strong, "aws-secret-key")
            }
            "secret" | "secrets" | "clientsecret" | "secretkey" => (Class::Strong, "secret"),
            "credential" | "credentials" | "creds" => (Class::Strong, "credential"),
            "privatekey" => (Class::Strong, "private-key"),
            "key" if prev == Some("private") => (Class::Strong, "private-key"),
            "key" if prev == Some("api") => (Class::Weak, "api-key"),
            "key" if prev.is_some_and(|p| NOT_SECRET_KEYS.contains(&p)) => continue,
            "key" => (Class::Key, "key"),
            "apikey" => (Class::Weak, "api-key"),
            "token" | "tokens" | "authtoken" | "accesstoken" | "refreshtoken" => {
                (Class::Weak, "token")
            }
            "accesskey" => (Class::Weak, "access-key"),
            "auth" => (Class::Weak, "auth"),
            "authorization" => (Class::Credential, "authorization"),
            _ => continue,
        };
        // The strongest word of the name decides, the last of equals (`PASSWORD_SALT`).
        if found.is_none_or(|(class, _)| strength(this.0) >= strength(class)) {
            found = Some(this);
        }
    }
    found
}

fn strength(class: Class) -> u8 {
    match class {
        Class::Key => 0,
        Class::Weak => 1,
        Class::Credential | Class::UrlPassword => 2,
        Class::Strong => 3,
    }
}

/// Values that are words of code or documentation, not secrets.
const NOT_SECRETS: &[&str] = &[
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "string",
    "str",
    "number",
    "int",
    "integer",
    "bool",
    "boolean",
    "any",
    "object",
    "optional",
    "required",
    "password",
    "passwd",
    "passphrase",
    "secret",
    // Python's types for one (`DB_PASSWORD: SecretStr`).
    "secretstr",
    "secretbytes",
    "token",
    "changeme",
    "change_me",
    "example",
    "sample",
    "test",
    "dummy",
    "placeholder",
    "redacted",
    "hidden",
    "masked",
    "empty",
    "default",
    "value",
    "pass",
    "secure",
    "env",
    "unset",
    "not set",
    "todo",
    // What a log or an error says of one (`DB_PASSWORD: missing`).
    "missing",
    "invalid",
    "incorrect",
    "expired",
    "unknown",
];

/// Whether `value`, assigned to a name of `class`, looks like a secret. `quoted` values are
/// literals; unquoted ones may be code (`token=args.token`).
pub fn looks_secret(value: &str, class: Class, quoted: bool) -> bool {
    let value = value.trim();
    let chars = value.chars().count();
    let lower = value.to_ascii_lowercase();
    if chars == 0
        || value.starts_with(['$', '%', '{', '<', '[', '('])
        || value.chars().all(|c| "*xX•.-_#?".contains(c))
        || NOT_SECRETS.contains(&lower.as_str())
        || [
            "example",
            "placeholder",
            "changeme",
            "your_",
            "your-",
            "xxxx",
            "****",
            "redacted",
        ]
        .iter()
        .any(|p| lower.contains(p))
    {
        return false;
    }
    if (!quoted && looks_like_code(value)) || tokens::placeholder(value.as_bytes()) {
        return false;
    }
    let letters = value.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = value.bytes().any(|b| b.is_ascii_digit());
    // A passphrase may hold spaces; a token or key never does (that is prose about one).
    if class != Class::Strong && value.contains(char::is_whitespace) {
        return false;
    }
    match class {
        Class::Strong => chars >= 6,
        Class::UrlPassword => chars >= 3,
        Class::Credential => {
            let mixed = value.bytes().any(|b| b.is_ascii_uppercase())
                && value.bytes().any(|b| b.is_ascii_lowercase());
            chars >= 8 && (digits || mixed)
        }
        Class::Weak => chars >= 12 && letters && digits && entropy(value) >= 3.0,
        Class::Key => {
            let token = value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-+/=.".contains(&b));
            chars >= 16 && token && letters && digits && entropy(value) >= 3.2
        }
    }
}

/// An expression rather than a literal: a call, an index, a dotted path, or a plain
/// identifier without digits (`password=password`).
fn looks_like_code(value: &str) -> bool {
    let ident = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // A dotted path (`args.password`, `config.v2.token`), not random parts joined by dots
    // (`Xkq9fQ.Lm3pZr8.Tq7wNb2`), which have digits in most of them.
    let dotted = || {
        let parts = value.split('.').count();
        let random = value
            .split('.')
            .filter(|p| p.bytes().any(|b| b.is_ascii_digit()))
            .count();
        value.split('.').all(ident) && (random < 2 || random * 2 < parts)
    };
    value.contains(['(', '['])
        || (value.contains('.') && dotted())
        || (ident(value) && !value.bytes().any(|b| b.is_ascii_digit()))
}

/// Shannon entropy of the characters, in bits per character.
pub fn entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in text.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = text.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(words("githubToken"), ["github", "token"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("x-api-key"), ["x", "api", "key"]);
        assert_eq!(
            words("spring.datasource.password"),
            ["spring", "datasource", "password"]
        );
    }

    #[test]
    fn names_that_say_secret() {
        for name in [
            "password",
            "DB_PASSWORD",
            "passwd",
            "client_secret",
            "GITHUB_TOKEN",
            "apiKey",
            "api_key",
            "X-Api-Key",
            "private_key",
            "AWS_SECRET_ACCESS_KEY",
            "SECRET_KEY_BASE",
            "auth_token",
            "OPENAI_KEY",
            "Authorization",
            "credentials",
            "PGPASSWORD",
            "PASSWORD_SALT",
            "hmac_key",
            "SIGNING_KEY",
            "pepper",
        ] {
            assert!(classify(name).is_some(), "{name}");
        }
        for name in [
            "token_url",
            "max_tokens",
            "public_key",
            "primary_key",
            "tokenizer",
            "passthrough",
            "bypass",
            "password_length",
            "keyboard",
            "monkey",
            "author",
            "secret_name",
            "compass",
            "input_tokens_count",
            "BCRYPT_SALT_ROUNDS",
            "hmac_algorithm",
            "saltstack",
        ] {
            assert_eq!(classify(name), None, "{name}");
        }
    }
}
