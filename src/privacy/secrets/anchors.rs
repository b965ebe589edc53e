//! The pre-filter: where in a text a rule may match at all.
//!
//! Every rule starts at a literal anchor: a token's prefix (`ghp_`, `AKIA`, `sk-ant-`), the
//! start of a block (`-----BEGIN`), `://` of a URL, or a word that names a secret (`token`,
//! `password`), the latter in any letter case. A text is read once, two bytes at a time
//! against a table of every anchor's first two bytes (8 KiB, built at compile time), and only
//! where a pair is known are the anchors that start with it compared. Ordinary text and code
//! go through at a few instructions a byte; no pattern is compiled at run time.

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
    /// A word that names a secret, in a name that may be assigned a value.
    Name,
}

pub struct Anchor {
    pub text: &'static str,
    /// Compared in any letter case.
    pub fold: bool,
    pub rule: Rule,
}

const fn exact(text: &'static str, rule: Rule) -> Anchor {
    Anchor {
        text,
        fold: false,
        rule,
    }
}

const fn word(text: &'static str) -> Anchor {
    Anchor {
        text,
        fold: true,
        rule: Rule::Name,
    }
}

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
    exact("eyJ", Jwt),
    exact("-----BEGIN", PrivateKeyBegin),
    exact("-----END", PrivateKeyEnd),
    exact("://", UrlPassword),
    Anchor {
        text: "bearer",
        fold: true,
        rule: Bearer,
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
];

/// Bit `a * 256 + b` is set when some anchor starts with the bytes `a`, `b` (in every letter
/// case for anchors compared in any case).
static PAIRS: [u64; 1024] = pairs();

const fn pairs() -> [u64; 1024] {
    let mut bits = [0u64; 1024];
    let mut i = 0;
    while i < ANCHORS.len() {
        let text = ANCHORS[i].text.as_bytes();
        let (a, b) = (text[0], text[1]);
        if ANCHORS[i].fold {
            let cases = [
                (a.to_ascii_lowercase(), b.to_ascii_lowercase()),
                (a.to_ascii_lowercase(), b.to_ascii_uppercase()),
                (a.to_ascii_uppercase(), b.to_ascii_lowercase()),
                (a.to_ascii_uppercase(), b.to_ascii_uppercase()),
            ];
            let mut c = 0;
            while c < cases.len() {
                let pair = (cases[c].0 as usize) << 8 | cases[c].1 as usize;
                bits[pair / 64] |= 1 << (pair % 64);
                c += 1;
            }
        } else {
            let pair = (a as usize) << 8 | b as usize;
            bits[pair / 64] |= 1 << (pair % 64);
        }
        i += 1;
    }
    bits
}

/// The next position at or after `from` where some anchor's first two bytes are.
pub fn next_candidate(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while at + 1 < bytes.len() {
        let pair = usize::from(bytes[at]) << 8 | usize::from(bytes[at + 1]);
        if PAIRS[pair / 64] & (1 << (pair % 64)) != 0 {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// The anchors that start at `at`, in table order.
pub fn anchors_at(bytes: &[u8], at: usize) -> impl Iterator<Item = &'static Anchor> + '_ {
    let rest = &bytes[at..];
    ANCHORS.iter().filter(move |anchor| {
        let text = anchor.text.as_bytes();
        rest.len() >= text.len()
            && if anchor.fold {
                rest[..text.len()].eq_ignore_ascii_case(text)
            } else {
                rest[0] == text[0] && rest[..text.len()] == *text
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anchor_is_a_candidate_where_it_starts() {
        for anchor in ANCHORS {
            let text = format!("  {}  ", anchor.text.to_uppercase());
            let bytes = text.as_bytes();
            if anchor.fold {
                assert_eq!(next_candidate(bytes, 0), Some(2), "{}", anchor.text);
                assert!(anchors_at(bytes, 2).any(|a| a.text == anchor.text));
            }
            let text = format!("  {}  ", anchor.text);
            assert_eq!(
                next_candidate(text.as_bytes(), 0),
                Some(2),
                "{}",
                anchor.text
            );
            assert!(anchors_at(text.as_bytes(), 2).any(|a| a.text == anchor.text));
        }
    }

    #[test]
    fn exact_anchors_keep_their_case() {
        assert!(anchors_at(b"akia", 0).next().is_none());
        assert!(anchors_at(b"GHP_", 0).next().is_none());
        assert_eq!(anchors_at(b"TOKEN", 0).next().unwrap().rule, Rule::Name);
    }
}
