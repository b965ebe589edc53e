//! The exact checks of rules anchored at a token's prefix, a key block, a URL or a bearer
//! credential. Each looks only at the text around its anchor and says where the search may go
//! on, so that a text is read in linear time whatever it holds.

use std::ops::Range;

use super::anchors::{Anchor, Rule};
use super::names::{self, Class};

/// A secret found: the bytes to replace, and the rule's name for the marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub range: Range<usize>,
    pub label: &'static str,
}

/// What a check concluded at an anchor: perhaps a hit, and where the search goes on.
pub struct Step {
    pub hit: Option<Hit>,
    pub resume: usize,
}

impl Step {
    pub fn miss(resume: usize) -> Step {
        Step { hit: None, resume }
    }

    pub fn hit(range: Range<usize>, label: &'static str) -> Step {
        let resume = range.end;
        Step {
            hit: Some(Hit { range, label }),
            resume,
        }
    }
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn alnum_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Base64url, as in most tokens.
fn url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Where a run of bytes of `class` starting at `from` ends.
pub fn run_end(bytes: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    from + bytes[from.min(bytes.len())..]
        .iter()
        .take_while(|&&b| class(b))
        .count()
}

/// Whether a token may start at `at`: not in the middle of a word.
fn starts_word(bytes: &[u8], at: usize) -> bool {
    at == 0 || !alnum(bytes[at - 1])
}

/// The check of `anchor`, found at `at`.
/// `floor` is where the last secret found ended: a check that reads backwards stops there.
pub fn check(anchor: &Anchor, bytes: &[u8], at: usize, floor: usize) -> Step {
    let body = at + anchor.text.len();
    match anchor.rule {
        Rule::AwsAccessKey => aws_access_key(bytes, at),
        Rule::GitHub if anchor.text == "github_pat_" => {
            prefixed(bytes, at, body, 22, alnum_underscore, "github-token")
        }
        Rule::GitHub => prefixed(bytes, at, body, 36, alnum, "github-token"),
        Rule::GitLab => prefixed(bytes, at, body, 20, url_safe, "gitlab-token"),
        Rule::Slack => prefixed(
            bytes,
            at,
            body,
            10,
            |b| url_safe(b) || b == b'.',
            "slack-token",
        ),
        Rule::SlackWebhook => {
            let end = run_end(bytes, body, |b| url_safe(b) || b == b'/' || b == b'+');
            if end - body >= 20 {
                Step::hit(body..end, "slack-webhook")
            } else {
                Step::miss(end.max(at + 1))
            }
        }
        Rule::Stripe => prefixed(bytes, at, body, 10, alnum, "stripe-key"),
        Rule::SkKey => sk_key(bytes, at, body),
        Rule::GoogleApiKey => prefixed(bytes, at, body, 35, url_safe, "google-api-key"),
        Rule::Npm => prefixed(bytes, at, body, 36, alnum, "npm-token"),
        Rule::PyPi => prefixed(bytes, at, body, 50, url_safe, "pypi-token"),
        Rule::Jwt => jwt(bytes, at),
        Rule::PrivateKeyBegin => private_key(bytes, at),
        Rule::PrivateKeyEnd => private_key_tail(bytes, at, floor),
        Rule::UrlPassword => url_password(bytes, at),
        Rule::Bearer => bearer(bytes, at, body),
        Rule::Name => names::assignment(bytes, at),
    }
}

/// A prefix followed by at least `min` bytes of `class`; the whole run is the secret.
fn prefixed(
    bytes: &[u8],
    at: usize,
    body: usize,
    min: usize,
    class: impl Fn(u8) -> bool,
    label: &'static str,
) -> Step {
    let end = run_end(bytes, body, &class);
    if starts_word(bytes, at) && end - body >= min {
        Step::hit(at..end, label)
    } else {
        // Nothing else can start inside the run: every anchor needs a word start.
        Step::miss(end.max(at + 1))
    }
}

/// `AKIA` (or another of AWS's prefixes) and 16 characters of base32: exactly 20.
fn aws_access_key(bytes: &[u8], at: usize) -> Step {
    let end = run_end(bytes, at, alnum);
    let id = &bytes[at..end];
    let base32 = |b: &u8| b.is_ascii_uppercase() || (b'2'..=b'7').contains(b);
    if starts_word(bytes, at) && id.len() == 20 && id[4..].iter().all(base32) {
        Step::hit(at..end, "aws-access-key")
    } else {
        Step::miss(end.max(at + 1))
    }
}

/// `sk-ant-…` is Anthropic's; another long random `sk-…` is OpenAI's (or one of the many
/// services that copied its format).
fn sk_key(bytes: &[u8], at: usize, body: usize) -> Step {
    let end = run_end(bytes, body, url_safe);
    let key = &bytes[body..end];
    if !starts_word(bytes, at) || key.len() < 32 {
        return Step::miss(end.max(at + 1));
    }
    if key.starts_with(b"ant-") {
        return Step::hit(at..end, "anthropic-key");
    }
    let random = key.iter().any(u8::is_ascii_digit)
        && key.iter().any(u8::is_ascii_uppercase)
        && key.iter().any(u8::is_ascii_lowercase);
    if random {
        Step::hit(at..end, "openai-key")
    } else {
        Step::miss(end)
    }
}

/// Three base64url parts joined by dots, the first two JSON objects (`eyJ` is `{"`).
fn jwt(bytes: &[u8], at: usize) -> Step {
    let header = run_end(bytes, at, url_safe);
    let miss = Step::miss(header.max(at + 1));
    if !starts_word(bytes, at) || header - at < 10 || bytes.get(header) != Some(&b'.') {
        return miss;
    }
    let payload = run_end(bytes, header + 1, url_safe);
    if payload - header - 1 < 10 || !bytes[header + 1..].starts_with(b"ey") {
        return miss;
    }
    let mut end = payload;
    if bytes.get(payload) == Some(&b'.') {
        let signature = run_end(bytes, payload + 1, url_safe);
        if signature > payload + 1 {
            end = run_end(bytes, signature, |b| b == b'=');
        }
    }
    Step::hit(at..end, "jwt")
}

/// Where the closing dashes of a `-----BEGIN …-----` or `-----END …-----` line end, the line's
/// keyword ending at `keyword`, when it is a private key's.
fn key_line(bytes: &[u8], keyword: usize) -> Option<usize> {
    let rest = &bytes[keyword..bytes.len().min(keyword + 100)];
    let close = memchr::memmem::find(rest, b"-----")?;
    memchr::memmem::find(&rest[..close], b"PRIVATE KEY")?;
    Some(keyword + close + 5)
}

/// A private key block, through its END line; without one, everything after the BEGIN line
/// (a cut text, fail closed).
fn private_key(bytes: &[u8], at: usize) -> Step {
    let begin = at + "-----BEGIN".len();
    let Some(line_end) = key_line(bytes, begin) else {
        return Step::miss(begin);
    };
    let end = memchr::memmem::find(&bytes[line_end..], b"-----END")
        .and_then(|i| key_line(bytes, line_end + i + "-----END".len()))
        .unwrap_or(bytes.len());
    Step::hit(at..end, "private-key")
}

/// An END line no BEGIN was seen for (the start of the block was cut off): the key's lines
/// before it go with it, back to the first character that cannot be in a key's body (or to the
/// end of the last secret found, so that a text is never read back twice).
fn private_key_tail(bytes: &[u8], at: usize, floor: usize) -> Step {
    let end_keyword = at + "-----END".len();
    let Some(end) = key_line(bytes, end_keyword) else {
        return Step::miss(end_keyword);
    };
    let body = |b: &u8| b.is_ascii_alphanumeric() || b"+/=\\ \t\r\n:-,".contains(b);
    let start = at
        - bytes[floor..at]
            .iter()
            .rev()
            .take_while(|b| body(b))
            .count();
    Step::hit(start..end, "private-key")
}

/// `scheme://user:password@host`: the password goes, the rest stays.
fn url_password(bytes: &[u8], at: usize) -> Step {
    let after = at + 3;
    let miss = Step::miss(after);
    if at == 0 || !alnum(bytes[at - 1]) {
        return miss;
    }
    let authority = &bytes[after..bytes.len().min(after + 512)];
    let len = authority
        .iter()
        .position(|b| b.is_ascii_whitespace() || b"/?#\"'<>\\`".contains(b))
        .unwrap_or(authority.len());
    let Some(at_sign) = memchr::memrchr(b'@', &authority[..len]) else {
        return miss;
    };
    let Some(colon) = memchr::memchr(b':', &authority[..at_sign]) else {
        return miss;
    };
    let password = after + colon + 1..after + at_sign;
    let text = std::str::from_utf8(&bytes[password.clone()]).unwrap_or("");
    if names::looks_secret(text, Class::UrlPassword, true) {
        Step::hit(password, "url-password")
    } else {
        Step::miss(after + at_sign)
    }
}

/// `Bearer <credential>`, wherever it is written (a header, a curl command, a log line).
fn bearer(bytes: &[u8], at: usize, body: usize) -> Step {
    let spaces = run_end(bytes, body, |b| b == b' ' || b == b'\t');
    if !starts_word(bytes, at) || spaces == body {
        return Step::miss(body);
    }
    match names::credential(bytes, spaces) {
        Some(range) => Step::hit(range, "bearer-token"),
        None => Step::miss(spaces),
    }
}
