//! The pre-filter: where in a text a rule may match at all.
//!
//! Every rule starts at a literal anchor: a token's prefix (`ghp_`, `AKIA`, `sk-ant-`), the
//! start of a block (`-----BEGIN`), `://` or a path of a URL (`/bot`, `/api/webhooks/`), a
//! command's word (`| base64`, `SecureString`), or a word that names a secret (`token`,
//! `password`), the latter in any letter case; two formats without a literal start at a
//! shape of three bytes instead (a digit, `:` and `A` in a Telegram bot token). A text is read
//! once, three bytes at a time
//! against a table of every anchor's first three bytes (8 KiB, built at compile time), and only
//! where they may start one are the anchors with that first byte compared. Ordinary text and
//! code go through at a few instructions a byte; no pattern is compiled at run time.

/// What a rule is about; each has its own exact check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    AwsAccessKey,
    GitHub,
    GitLab,
    Slack,
    SlackWebhook,
    Stripe,
    /// `sk-`: Anthropic (`sk-ant-`) or OpenAI.
    SkKey,
    GoogleApiKey,
    Npm,
    PyPi,
    Jwt,
    PrivateKeyBegin,
    PrivateKeyEnd,
    UrlPassword,
    Bearer,
    /// A token known by its prefix alone; its shape is in `tokens::shape`.
    Prefixed,
    /// A digit, `:` and `A`, in a Telegram bot token (`123456789:AA…`): the end of the bot's
    /// id, the digits before it its start.
    Telegram,
    /// A password given on a command line: `curl -u user:pass`, `mysql -pX`, `sshpass -p X`.
    CommandLine,
    /// A `.pgpass` line, `host:port:database:user:password`, found by its port field.
    PgPass,
    /// A Discord bot token, whose first part is a user id (digits) in base64: its anchor is
    /// every three characters such a part can start with, not a literal.
    Discord,
    /// `/bot` in the Bot API's URLs, `https://api.telegram.org/bot<id>:<secret>/…`.
    TelegramUrl,
    /// `/api/webhooks/` of a Discord webhook's URL, whose last part is its secret.
    DiscordWebhook,
    /// `SecureString` of PowerShell's `ConvertTo-SecureString '<password>' -AsPlainText`.
    SecureString,
    /// `| base64` after `echo -n 'user:password'`: a Basic credential being made.
    Base64Pipe,
    /// A word that names a secret, in a name that may be assigned a value.
    Name,
}

impl Rule {
    /// Whether the rule finds a value by where it is rather than by what it is (a name's value,
    /// a URL's password, a command line's): a token known by its prefix there is named for
    /// what it is.
    pub fn names_its_value(self) -> bool {
        matches!(self, Name | UrlPassword | CommandLine | PgPass | Bearer)
    }
}

pub struct Anchor {
    pub text: &'static str,
    /// Compared in any letter case.
    pub fold: bool,
    pub rule: Rule,
    /// For an anchor that is a shape rather than a literal: the bytes each of its three may be
    /// (`text` is one example).
    pub shape: Option<[&'static [u8]; 3]>,
}

const fn exact(text: &'static str, rule: Rule) -> Anchor {
    Anchor {
        text,
        fold: false,
        rule,
        shape: None,
    }
}

const fn word(text: &'static str) -> Anchor {
    Anchor {
        text,
        fold: true,
        rule: Rule::Name,
        shape: None,
    }
}

const fn shaped(example: &'static str, shape: [&'static [u8]; 3], rule: Rule) -> Anchor {
    Anchor {
        text: example,
        fold: false,
        rule,
        shape: Some(shape),
    }
}

/// How a Discord token starts: a user id (17 to 20 digits) in base64, whose first three
/// characters can only be these. (Any third character would make a search of base64 data a
/// quarter slower, for made-up tokens only.)
const SNOWFLAKE: [&[u8]; 3] = [b"MNO", b"DTjz", b"AEIMQUYcgk"];

use Rule::*;

/// Longer anchors before the shorter ones they start with (`sk_live_` before `sk-`, which
/// differ anyway, but `-----BEGIN` and `-----END` must not be taken for each other).
pub const ANCHORS: &[Anchor] = &[
    exact("AKIA", AwsAccessKey),
    exact("ASIA", AwsAccessKey),
    exact("ABIA", AwsAccessKey),
    exact("ACCA", AwsAccessKey),
    exact("A3T", AwsAccessKey),
    exact("github_pat_", GitHub),
    exact("ghp_", GitHub),
    exact("gho_", GitHub),
    exact("ghu_", GitHub),
    exact("ghs_", GitHub),
    exact("ghr_", GitHub),
    exact("glpat-", GitLab),
    exact("gldt-", GitLab),
    exact("glptt-", GitLab),
    exact("glrt-", GitLab),
    exact("glcbt-", GitLab),
    exact("glsoat-", GitLab),
    exact("glft-", GitLab),
    exact("glimt-", GitLab),
    exact("glagent-", GitLab),
    exact("glffct-", GitLab),
    exact("GR1348941", GitLab),
    exact("xoxb-", Slack),
    exact("xoxp-", Slack),
    exact("xoxa-", Slack),
    exact("xoxr-", Slack),
    exact("xoxs-", Slack),
    exact("xoxe-", Slack),
    exact("xoxe.", Slack),
    exact("xapp-", Slack),
    exact("hooks.slack.com/", SlackWebhook),
    exact("sk_live_", Stripe),
    exact("sk_test_", Stripe),
    exact("sk_prod_", Stripe),
    exact("rk_live_", Stripe),
    exact("rk_test_", Stripe),
    exact("rk_prod_", Stripe),
    exact("sk-", SkKey),
    exact("AIza", GoogleApiKey),
    exact("npm_", Npm),
    exact("pypi-AgEIcHlwaS5vcmc", PyPi),
    exact("whsec_", Prefixed),
    exact("hf_", Prefixed),
    exact("hvs.", Prefixed),
    exact("hvb.", Prefixed),
    exact("dop_v1_", Prefixed),
    exact("GOCSPX-", Prefixed),
    exact("ya29.", Prefixed),
    exact("1//0", Prefixed),
    exact("SG.", Prefixed),
    exact("xkeysib-", Prefixed),
    exact("AGE-SECRET-KEY-1", Prefixed),
    exact("shpat_", Prefixed),
    exact("shpca_", Prefixed),
    exact("shppa_", Prefixed),
    exact("shpss_", Prefixed),
    exact("gsk_", Prefixed),
    exact("xai-", Prefixed),
    exact("r8_", Prefixed),
    exact("pnu_", Prefixed),
    exact("sntryu_", Prefixed),
    exact("sntrys_", Prefixed),
    exact("glsa_", Prefixed),
    exact("glc_", Prefixed),
    exact("PMAK-", Prefixed),
    exact("ntn_", Prefixed),
    exact("pscale_", Prefixed),
    exact("dp.pt.", Prefixed),
    exact("dp.st.", Prefixed),
    exact("dp.sa.", Prefixed),
    exact("dckr_pat_", Prefixed),
    exact("sbp_", Prefixed),
    exact("sb_secret_", Prefixed),
    exact("ATATT3", Prefixed),
    exact("ATBB", Prefixed),
    exact("LTAI", Prefixed),
    exact("HRKU-", Prefixed),
    exact("sq0atp-", Prefixed),
    exact("sq0csp-", Prefixed),
    exact("key-", Prefixed),
    exact("sl.", Prefixed),
    exact("mfa.", Prefixed),
    exact("/bot", TelegramUrl),
    exact("/api/webhooks/", DiscordWebhook),
    exact("| base64", Base64Pipe),
    exact("|base64", Base64Pipe),
    // The last digit of a Telegram bot's id, and the start of its secret.
    shaped("1:A", [b"0123456789", b":", b"A"], Telegram),
    shaped("MTA", SNOWFLAKE, Discord),
    exact("sshpass", CommandLine),
    exact(" -p", CommandLine),
    exact(" -u", CommandLine),
    exact("--user", CommandLine),
    exact(":5432:", PgPass),
    exact(":6432:", PgPass),
    exact(":5433:", PgPass),
    exact(":6543:", PgPass),
    exact(":25060:", PgPass),
    exact(":*:", PgPass),
    exact("eyJ", Jwt),
    exact("-----BEGIN", PrivateKeyBegin),
    exact("-----END", PrivateKeyEnd),
    exact("://", UrlPassword),
    Anchor {
        text: "bearer",
        fold: true,
        rule: Bearer,
        shape: None,
    },
    // PowerShell's names are in any letter case; `sec` is a word's anchor already, so this one
    // adds no candidate to a text's search.
    Anchor {
        text: "securestring",
        fold: true,
        rule: SecureString,
        shape: None,
    },
    // Words of secret names; longer names (password, apikey, authorization) contain them.
    word("pass"),
    word("pwd"),
    word("secret"),
    word("token"),
    word("key"),
    word("auth"),
    word("credential"),
    word("creds"),
    word("salt"),
    word("pepper"),
    word("hmac"),
];

/// A bit per hash of three bytes, set for every anchor's first three bytes (in every letter
/// case for anchors compared in any case). 128 Ki bits (16 KiB): a text's bytes are checked
/// against it, and a false alarm (one in hundreds of positions) costs a comparison. With the
/// prefixes and shapes of this release, 64 Ki bits doubled the false alarms in source code.
///
/// Prefixes whose first three bytes are common in text (`lin_api_`, `pplx-`, `dapi`, `pul-`,
/// `ops_`, `rubygems_`: "line", "apply", "adapter", "pull", "loops", "ruby") are not anchors:
/// they made every search of a build log or prose 10 to 15% slower, and are still found by the
/// names they are assigned to (`LINEAR_API_KEY=lin_api_…`).
static TRIPLES: [u64; 2048] = triples();

/// Where three bytes fall in [`TRIPLES`]: a multiplicative hash of their 24 bits to 17 bits.
const fn slot(key: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> 15) as usize
}

const fn key(a: u8, b: u8, c: u8) -> u32 {
    (a as u32) << 16 | (b as u32) << 8 | c as u32
}

const fn triples() -> [u64; 2048] {
    let mut bits = [0u64; 2048];
    let mut i = 0;
    while i < ANCHORS.len() {
        if let Some(shape) = ANCHORS[i].shape {
            set_shape(&mut bits, shape);
            i += 1;
            continue;
        }
        let text = ANCHORS[i].text.as_bytes();
        // Every letter case of the three bytes (only the anchor's own for exact anchors).
        let mut case = 0;
        while case < 8 {
            let mut bytes = [text[0], text[1], text[2]];
            let mut k = 0;
            while k < 3 {
                if ANCHORS[i].fold {
                    bytes[k] = if case >> k & 1 == 1 {
                        bytes[k].to_ascii_uppercase()
                    } else {
                        bytes[k].to_ascii_lowercase()
                    };
                }
                k += 1;
            }
            let at = slot(key(bytes[0], bytes[1], bytes[2]));
            bits[at / 64] |= 1 << (at % 64);
            case += 1;
        }
        i += 1;
    }
    bits
}

/// Sets the bit of every three bytes `shape` allows.
const fn set_shape(bits: &mut [u64; 2048], shape: [&[u8]; 3]) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    while a < shape[0].len() {
        while b < shape[1].len() {
            while c < shape[2].len() {
                let at = slot(key(shape[0][a], shape[1][b], shape[2][c]));
                bits[at / 64] |= 1 << (at % 64);
                c += 1;
            }
            c = 0;
            b += 1;
        }
        b = 0;
        a += 1;
    }
}

/// The next position at or after `from` where some anchor's first three bytes may be. Each
/// position is hashed on its own (no chain from one byte to the next), so the loop pipelines.
pub fn next_candidate(bytes: &[u8], from: usize) -> Option<usize> {
    let end = bytes.len().checked_sub(2)?;
    (from..end).find(|&at| {
        let slot = slot(key(bytes[at], bytes[at + 1], bytes[at + 2]));
        TRIPLES[slot / 64] & (1 << (slot % 64)) != 0
    })
}

/// Bit `i` of entry `b` is set when anchor `i` starts with byte `b` (in either case for
/// anchors compared in any case): a candidate is compared with a handful of anchors, not all.
static FIRST: [u128; 256] = first_bytes();

const fn first_bytes() -> [u128; 256] {
    assert!(ANCHORS.len() <= 128, "an anchor's bit must fit in a u128");
    let mut masks = [0u128; 256];
    let mut i = 0;
    while i < ANCHORS.len() {
        let first = ANCHORS[i].text.as_bytes()[0];
        if let Some(shape) = ANCHORS[i].shape {
            let mut k = 0;
            while k < shape[0].len() {
                masks[shape[0][k] as usize] |= 1 << i;
                k += 1;
            }
        } else if ANCHORS[i].fold {
            masks[first.to_ascii_lowercase() as usize] |= 1 << i;
            masks[first.to_ascii_uppercase() as usize] |= 1 << i;
        } else {
            masks[first as usize] |= 1 << i;
        }
        i += 1;
    }
    masks
}

/// The anchors that start at `at`, in table order.
pub fn anchors_at(bytes: &[u8], at: usize) -> impl Iterator<Item = &'static Anchor> + '_ {
    let rest = &bytes[at..];
    let mut mask = rest.first().map_or(0, |&b| FIRST[usize::from(b)]);
    std::iter::from_fn(move || {
        while mask != 0 {
            let anchor = &ANCHORS[mask.trailing_zeros() as usize];
            mask &= mask - 1;
            let text = anchor.text.as_bytes();
            let found = if let Some(shape) = anchor.shape {
                rest.len() >= 3 && (0..3).all(|k| shape[k].contains(&rest[k]))
            } else {
                rest.len() >= text.len()
                    && if anchor.fold {
                        rest[..text.len()].eq_ignore_ascii_case(text)
                    } else {
                        rest[..text.len()] == *text
                    }
            };
            if found {
                return Some(anchor);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anchor_is_a_candidate_where_it_starts() {
        // Every position is looked at: a false alarm before the anchor does not hide it.
        for anchor in ANCHORS {
            let text = format!("  {}  ", anchor.text.to_uppercase());
            let bytes = text.as_bytes();
            if anchor.fold {
                assert_eq!(next_candidate(bytes, 2), Some(2), "{}", anchor.text);
                assert!(anchors_at(bytes, 2).any(|a| a.text == anchor.text));
            }
            let text = format!("  {}  ", anchor.text);
            assert_eq!(
                next_candidate(text.as_bytes(), 2),
                Some(2),
                "{}",
                anchor.text
            );
            assert!(anchors_at(text.as_bytes(), 2).any(|a| a.text == anchor.text));
        }
        for (text, rule) in [("0:A", Rule::Telegram), ("OzQ", Rule::Discord)] {
            assert_eq!(next_candidate(text.as_bytes(), 0), Some(0), "{text}");
            assert!(
                anchors_at(text.as_bytes(), 0).any(|a| a.rule == rule),
                "{text}"
            );
        }
    }

    #[test]
    fn exact_anchors_keep_their_case() {
        assert!(anchors_at(b"akia", 0).next().is_none());
        assert!(anchors_at(b"GHP_", 0).next().is_none());
        assert_eq!(anchors_at(b"TOKEN", 0).next().unwrap().rule, Rule::Name);
    }
}
