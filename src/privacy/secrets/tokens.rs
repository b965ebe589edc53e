//! The exact checks of rules anchored at a token's prefix, a key block, a URL or a bearer
//! credential. Each looks only at the text around its anchor and says where the search may go
//! on, so that a text is read in linear time whatever it holds.

use std::ops::Range;

use super::anchors::{Anchor, Rule};
use super::command;
use super::names::{self, Class};
use crate::text::find;

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

fn hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn letters(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

fn base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"+/=".contains(&b)
}

/// Whether a token may start at `at`: not in the middle of a word. A URL-encoded character
/// (`%3D`, `%20`) ends a word: `?token%3Dghp_…` holds a token; so does an escape in a string
/// literal of code: `"\thf_…"`.
fn starts_word(bytes: &[u8], at: usize) -> bool {
    at == 0
        || !alnum(bytes[at - 1])
        || (at >= 3 && bytes[at - 3] == b'%' && hex(bytes[at - 2]) && hex(bytes[at - 1]))
        || (at >= 2 && bytes[at - 2] == b'\\' && b"ntr".contains(&bytes[at - 1]))
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
        Rule::Prefixed if anchor.text == "hvs." => vault(bytes, at, body),
        Rule::Prefixed => match shape(anchor.text) {
            Some((min, class, label)) => prefixed(bytes, at, body, min, class, label),
            None => Step::miss(body),
        },
        Rule::Telegram => telegram(bytes, at, floor),
        Rule::Discord => discord(bytes, at),
        Rule::TelegramUrl => telegram_url(bytes, body),
        Rule::DiscordWebhook => discord_webhook(bytes, at, body, floor),
        Rule::SecureString => command::secure_string(bytes, at, floor),
        Rule::Base64Pipe => command::base64_pipe(bytes, at, body, floor),
        Rule::CommandLine => command::password(anchor.text, bytes, at, floor),
        Rule::PgPass => command::pgpass(bytes, at, floor),
        Rule::Name => names::assignment(bytes, at),
    }
}

/// The characters a token is made of.
type Chars = fn(u8) -> bool;

/// The shape of a token known by its prefix alone (anchors of [`Rule::Prefixed`]): how many
/// characters of which set follow the prefix at least, and the rule's name. Lengths are the
/// real formats' (from gitleaks' rules and the services' documentation), a little lower where
/// a format has varied.
fn shape(prefix: &str) -> Option<(usize, Chars, &'static str)> {
    fn dotted(b: u8) -> bool {
        url_safe(b) || b == b'.'
    }
    Some(match prefix {
        "whsec_" => (32, base64, "webhook-secret"),
        "hf_" => (34, letters, "huggingface-token"),
        "hvb." => (138, url_safe, "vault-token"),
        "dop_v1_" => (64, hex, "digitalocean-token"),
        "GOCSPX-" => (28, url_safe, "google-oauth-secret"),
        "ya29." => (50, dotted, "google-oauth-token"),
        "1//0" => (40, url_safe, "google-oauth-token"),
        "SG." => (60, dotted, "sendgrid-key"),
        "xkeysib-" => (64, url_safe, "brevo-key"),
        "AGE-SECRET-KEY-1" => (58, alnum, "age-secret-key"),
        "shpat_" | "shpca_" | "shppa_" | "shpss_" => (32, hex, "shopify-token"),
        "gsk_" => (48, alnum, "groq-key"),
        "xai-" => (70, alnum, "xai-key"),
        "r8_" => (37, alnum, "replicate-token"),
        "pnu_" => (36, alnum, "prefect-key"),
        "sntryu_" => (64, hex, "sentry-token"),
        "sntrys_" => (60, |b| base64(b) || b == b'_', "sentry-token"),
        "glsa_" => (40, alnum_underscore, "grafana-token"),
        "glc_" => (32, base64, "grafana-token"),
        "PMAK-" => (58, url_safe, "postman-key"),
        "ntn_" => (40, alnum, "notion-token"),
        "pscale_" => (36, |b| dotted(b) || b == b'=', "planetscale-token"),
        "dp.pt." | "dp.st." | "dp.sa." => (40, alnum, "doppler-token"),
        "dckr_pat_" => (24, url_safe, "docker-token"),
        "sbp_" => (40, hex, "supabase-token"),
        "sb_secret_" => (24, url_safe, "supabase-token"),
        "ATATT3" => (100, |b| url_safe(b) || b == b'=', "atlassian-token"),
        "ATBB" => (28, alnum, "bitbucket-token"),
        "LTAI" => (20, alnum, "alibaba-key"),
        "HRKU-" => (60, url_safe, "heroku-key"),
        "sq0atp-" | "sq0csp-" => (22, url_safe, "square-token"),
        "key-" => (32, hex, "mailgun-key"),
        "sl." => (100, url_safe, "dropbox-token"),
        // A Discord user's token of the years before 2022, when it had two-factor login.
        "mfa." => (80, url_safe, "discord-token"),
        _ => return None,
    })
}

/// A Discord bot token: a user id of 17 to 20 digits in base64 (23 to 27 characters), a dot,
/// 6 characters, a dot, and 27 to 40 more.
fn discord(bytes: &[u8], at: usize) -> Step {
    let id = run_end(bytes, at, alnum);
    let miss = Step::miss(id.max(at + 1));
    if !starts_word(bytes, at) || !(23..=27).contains(&(id - at)) {
        return miss;
    }
    let part =
        |from: usize| (bytes.get(from) == Some(&b'.')).then(|| run_end(bytes, from + 1, url_safe));
    let Some(stamp) = part(id).filter(|&end| end - id - 1 == 6) else {
        return miss;
    };
    match part(stamp).filter(|&end| (27..=40).contains(&(end - stamp - 1))) {
        Some(end) => Step::hit(at..end, "discord-token"),
        None => miss,
    }
}

/// A HashiCorp Vault token: `hvs.` and about 90 characters, or 24 for a root token (`vault
/// operator init` and a dev server print those), which must then mix letter cases: not a
/// name, `hvs.load_config_from_file`.
fn vault(bytes: &[u8], at: usize, body: usize) -> Step {
    let run = &bytes[body..run_end(bytes, body, url_safe)];
    let mixed = run.iter().any(u8::is_ascii_uppercase) && run.iter().any(u8::is_ascii_lowercase);
    prefixed(
        bytes,
        at,
        body,
        if mixed { 24 } else { 90 },
        url_safe,
        "vault-token",
    )
}

/// `/bot<id>:<secret>` in the Bot API's URLs (the colon may be URL-encoded): there the path
/// says what it is, and the secret is taken whatever its first character, from 30 characters.
/// `id` is where the bot's id starts, just after `/bot`.
fn telegram_url(bytes: &[u8], id: usize) -> Step {
    // The id's last digit may be the other Telegram rule's anchor.
    let miss = Step::miss(id);
    let digits = run_end(bytes, id, |b| b.is_ascii_digit());
    let colon = match &bytes[digits..] {
        [b':', ..] => 1,
        [b'%', b'3', b'A' | b'a', ..] => 3,
        _ => return miss,
    };
    let end = run_end(bytes, digits + colon, url_safe);
    if (5..=16).contains(&(digits - id))
        && end - digits - colon >= 30
        && !placeholder(&bytes[digits + colon..end])
    {
        Step::hit(id..end, "telegram-bot-token")
    } else {
        miss
    }
}

/// `discord.com/api/webhooks/<id>/<secret>`: whoever has the URL posts as the webhook, so its
/// last part goes (the id stays). Found at `/api/webhooks/`; the host is read back to `floor`.
fn discord_webhook(bytes: &[u8], at: usize, body: usize, floor: usize) -> Step {
    let miss = Step::miss(body);
    let host = &bytes[floor.max(at.saturating_sub(32))..at];
    if find::sub(host, b"discord").is_none() {
        return miss;
    }
    let id = run_end(bytes, body, |b| b.is_ascii_digit());
    if !(17..=20).contains(&(id - body)) || bytes.get(id) != Some(&b'/') {
        return miss;
    }
    let secret = id + 1;
    let end = run_end(bytes, secret, url_safe);
    if end - secret >= 60 {
        Step::hit(secret..end, "discord-webhook")
    } else {
        miss
    }
}

/// `<digits>:A<34 characters>`, a Telegram bot's token (`123456789:AAH…`), found at the
/// last digit of the bot's id: the digits before it (5 to 16 in all, back to `floor`) are its
/// start.
fn telegram(bytes: &[u8], at: usize, floor: usize) -> Step {
    let colon = at + 1;
    let end = run_end(bytes, colon + 1, url_safe);
    let digits = bytes[floor.max(colon.saturating_sub(16))..colon]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = colon - digits;
    // In the Bot API's URLs the token follows `/bot`.
    let word = starts_word(bytes, start) || bytes[..start].ends_with(b"/bot");
    if (5..=16).contains(&digits) && word && end >= colon + 1 + 35 {
        Step::hit(start..end, "telegram-bot-token")
    } else {
        Step::miss(end.max(colon))
    }
}

/// A prefix followed by at least `min` bytes of `class`, read across seams (see
/// [`joined_run`]); the whole run, seams and all, is the secret.
fn prefixed(
    bytes: &[u8],
    at: usize,
    body: usize,
    min: usize,
    class: impl Fn(u8) -> bool,
    label: &'static str,
) -> Step {
    let run = joined_run(bytes, body, min, &class);
    if starts_word(bytes, at) && run.len >= min && !placeholder(&bytes[at..run.end]) {
        Step::hit(at..run.end, label)
    } else {
        // Nothing else can start inside the first run: every anchor needs a word start. A
        // piece after a seam may hold another token (a line of its own).
        Step::miss(run.first_end.max(at + 1))
    }
}

/// A token's characters read across seams.
struct Run {
    /// Where its characters before the first seam end.
    first_end: usize,
    /// Where the last piece read ends.
    end: usize,
    /// How many of its characters were read, seams left out.
    len: usize,
}

/// The run of `class` from `body`, read on across the seams that cut a token in code or on a
/// terminal while fewer than `min` of its characters are seen: a string literal closed and
/// another opened (`"ghp_" + "…"`, `'…' . '…'`, `"…" "…"`) or a line break (a terminal's
/// wrap). Past `min`, only a line break that ends a line as wide as a terminal is read on
/// (a longer token, `github_pat_…`, wrapped after its first 22 characters).
fn joined_run(bytes: &[u8], body: usize, min: usize, class: impl Fn(u8) -> bool) -> Run {
    let first_end = run_end(bytes, body, &class);
    let (mut end, mut len) = (first_end, first_end - body);
    loop {
        let next = match seam(bytes, end) {
            Some(next) if len < min || wraps(bytes, end) => next,
            _ => break,
        };
        let piece = run_end(bytes, next, &class);
        if piece == next {
            break;
        }
        len += piece - next;
        end = piece;
    }
    Run {
        first_end,
        end,
        len,
    }
}

/// How wide a line must be for its break to be taken for a terminal's wrap: 80 columns, the
/// narrowest terminal most people use.
const TERMINAL: usize = 80;

/// Whether `at` breaks a line at least [`TERMINAL`] bytes wide (or longer than can be read
/// back cheaply).
fn wraps(bytes: &[u8], at: usize) -> bool {
    let from = at.saturating_sub(4 * TERMINAL);
    let start = find::byte_back(b'\n', &bytes[from..at]).map_or(from, |i| from + i + 1);
    matches!(bytes.get(at), Some(b'\n' | b'\r')) && at - start >= TERMINAL
}

/// Where a token goes on after a seam at `at`: a line break, or a closing quote, at most a few
/// spaces and operators (`+`, `.`, `..`, `&`, `||`, a line continuation), and the same quote.
fn seam(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'\n' => Some(at + 1),
        b'\r' if bytes.get(at + 1) == Some(&b'\n') => Some(at + 2),
        quote @ (b'"' | b'\'' | b'`') => {
            let near = &bytes[..bytes.len().min(at + 10)];
            let gap = run_end(near, at + 1, |b| b" \t\r\n+.&|\\".contains(&b));
            (bytes.get(gap) == Some(&quote)).then_some(gap + 1)
        }
        _ => None,
    }
}

/// A token that documentation prints, not a secret: AWS's `AKIAIOSFODNN7EXAMPLE`, Stripe's
/// published test key, or `x`s standing for the characters (`ghp_xxxx…`).
pub fn placeholder(token: &[u8]) -> bool {
    const DOCUMENTED: &[&[u8]] = &[
        b"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        b"sk_test_BQokikJOvBiI2HlWgH4olfQ2",
        b"rk_test_4eC39HqLyjWDarjtT1zdp7dc",
    ];
    let repeated = token
        .windows(8)
        .any(|w| w.iter().all(|&b| b == w[0] && matches!(b, b'x' | b'X')));
    find::sub(token, b"EXAMPLE").is_some()
        || find::sub(token, b"example").is_some()
        || repeated
        || DOCUMENTED.contains(&token)
}

/// `AKIA` (or another of AWS's prefixes) and 16 characters of base32: exactly 20.
fn aws_access_key(bytes: &[u8], at: usize) -> Step {
    let end = run_end(bytes, at, alnum);
    let id = &bytes[at..end];
    let base32 = |b: &u8| b.is_ascii_uppercase() || (b'2'..=b'7').contains(b);
    if starts_word(bytes, at) && id.len() == 20 && id[4..].iter().all(base32) && !placeholder(id) {
        Step::hit(at..end, "aws-access-key")
    } else {
        Step::miss(end.max(at + 1))
    }
}

/// `sk-ant-…` is Anthropic's; another long random `sk-…` is OpenAI's (or one of the many
/// services that copied its format: DeepSeek, OpenRouter, …).
fn sk_key(bytes: &[u8], at: usize, body: usize) -> Step {
    let run = joined_run(bytes, body, 32, url_safe);
    let (key, end) = (&bytes[body..run.end], run.end);
    if !starts_word(bytes, at) || run.len < 32 {
        return Step::miss(run.first_end.max(at + 1));
    }
    if key.starts_with(b"ant-") {
        return Step::hit(at..end, "anthropic-key");
    }
    // A long random part (OpenAI's, DeepSeek's 32 hex digits, OpenRouter's `or-v1-…`), not
    // words joined by dashes (`sk-button-primary-2xl-…`).
    let random = key
        .split(|&b| b == b'-' || b == b'_')
        .any(|part| part.len() >= 20 && part.iter().any(u8::is_ascii_digit))
        && !placeholder(key);
    if random {
        Step::hit(at..end, "openai-key")
    } else {
        Step::miss(run.first_end)
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
    let close = find::sub(rest, b"-----")?;
    find::sub(&rest[..close], b"PRIVATE KEY")?;
    Some(keyword + close + 5)
}

/// A private key block, through its END line; without one, everything after the BEGIN line
/// (a cut text, fail closed).
fn private_key(bytes: &[u8], at: usize) -> Step {
    let begin = at + "-----BEGIN".len();
    let Some(line_end) = key_line(bytes, begin) else {
        return Step::miss(begin);
    };
    let end = find::sub(&bytes[line_end..], b"-----END")
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
    let Some(at_sign) = find::byte_back(b'@', &authority[..len]) else {
        return miss;
    };
    let Some(colon) = find::byte(b':', &authority[..at_sign]) else {
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
