//! The pre-filter: where in a text a rule may match at all.
//!
//! Every rule starts at a literal anchor: a token's prefix (`ghp_`, `AKIA`, `sk-ant-`), the
//! start of a block (`-----BEGIN`), `://` of a URL, or a word that names a secret (`token`,
//! `password`), the latter in any letter case. A text is read once, three bytes at a time
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

/// A bit per hash of three bytes, set for every anchor's first three bytes (in every letter
/// case for anchors compared in any case). 64 Ki bits: a text's bytes are checked against it,
/// and a false alarm (one in hundreds of positions) costs a comparison.
static TRIPLES: [u64; 1024] = triples();

/// Where three bytes fall in [`TRIPLES`]: a multiplicative hash of their 24 bits to 16 bits.
const fn slot(key: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

const fn key(a: u8, b: u8, c: u8) -> u32 {
    (a as u32) << 16 | (b as u32) << 8 | c as u32
}

const fn triples() -> [u64; 1024] {
    let mut bits = [0u64; 1024];
    let mut i = 0;
    while i < ANCHORS.len() {
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
static FIRST: [u64; 256] = first_bytes();

const fn first_bytes() -> [u64; 256] {
    assert!(ANCHORS.len() <= 64, "an anchor's bit must fit in a u64");
    let mut masks = [0u64; 256];
    let mut i = 0;
    while i < ANCHORS.len() {
        let first = ANCHORS[i].text.as_bytes()[0];
        if ANCHORS[i].fold {
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
            let found = rest.len() >= text.len()
                && if anchor.fold {
                    rest[..text.len()].eq_ignore_ascii_case(text)
                } else {
                    rest[..text.len()] == *text
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
