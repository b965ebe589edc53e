//! Why compression waits, and what the user can do about it. A model error that is about the
//! login, the account, the service or the network is not the batch's fault: counting it
//! against the items would spend their attempts on something no batch can change (a lapsed
//! login would fail every item for good within the day). Such errors are recognised by what the
//! program says, since Claude Code reports some of them without an API status ("Not logged in
//! · Please run /login" has `api_error_status: null`), and by the status when there is one.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The day's token budget is spent.
    Budget,
    /// No model program could be started.
    Unavailable,
    /// Not logged in, a key or a token refused.
    Login,
    /// No credit left, a usage limit reached, the organization disabled.
    Account,
    /// Rate limited, overloaded, the service failing: it passes.
    Service,
    /// Nothing reached the service.
    Network,
    /// Batch after batch failed (answers invalid, the program failing): something is wrong
    /// beyond a batch.
    Failing,
}

/// Words of the errors, lower-cased, in the order they are tried. Claude Code 2.1.330 says,
/// offline and against an API answering each error: "Not logged in · Please run /login",
/// "Invalid API key · Fix external API key", "Credit balance is too low", "Failed to
/// authenticate. API Error: 403 Your organization has been disabled.", "API Error: Request
/// rejected (429) · … rate limit", "API Error: 529 Overloaded. …", "API Error: Connection
/// refused — … (ECONNREFUSED)"; the API's own error types are there too.
const WORDS: &[(&str, Cause)] = &[
    ("credit balance", Cause::Account),
    ("usage limit", Cause::Account),
    ("spend limit", Cause::Account),
    ("organization has been disabled", Cause::Account),
    ("not logged in", Cause::Login),
    ("/login", Cause::Login),
    ("invalid api key", Cause::Login),
    ("x-api-key", Cause::Login),
    ("authenticat", Cause::Login),
    ("oauth token", Cause::Login),
    ("token has expired", Cause::Login),
    ("token has been revoked", Cause::Login),
    ("rate limit", Cause::Service),
    ("rate_limit", Cause::Service),
    ("overloaded", Cause::Service),
    ("connection refused", Cause::Network),
    ("connection error", Cause::Network),
    ("econnrefused", Cause::Network),
    ("econnreset", Cause::Network),
    ("enotfound", Cause::Network),
    ("etimedout", Cause::Network),
    ("getaddrinfo", Cause::Network),
    ("network is unreachable", Cause::Network),
];

/// What an error is about, when it is not the batch: by its words first (a 400 may be a credit
/// balance), then by the API status (401, 403, 429, 529 and other 5xx).
pub fn of_error(text: &str, status: Option<u16>) -> Option<Cause> {
    let text = text.to_lowercase();
    if let Some((_, cause)) = WORDS.iter().find(|(word, _)| text.contains(word)) {
        return Some(*cause);
    }
    match status? {
        401 | 403 => Some(Cause::Login),
        429 | 500.. => Some(Cause::Service),
        _ => None,
    }
}

impl Cause {
    /// The word kept in the pause file.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Budget => "budget",
            Cause::Unavailable => "unavailable",
            Cause::Login => "login",
            Cause::Account => "account",
            Cause::Service => "service",
            Cause::Network => "network",
            Cause::Failing => "failing",
        }
    }

    pub fn parse(word: &str) -> Option<Cause> {
        [
            Cause::Budget,
            Cause::Unavailable,
            Cause::Login,
            Cause::Account,
            Cause::Service,
            Cause::Network,
            Cause::Failing,
        ]
        .into_iter()
        .find(|c| c.as_str() == word)
    }

    /// How long the hooks start no compressor after such an error, the first time: long when
    /// only the user can end it, short when it passes by itself (`pause` doubles it while it
    /// goes on).
    pub fn pause(self) -> Duration {
        match self {
            Cause::Unavailable | Cause::Login | Cause::Account => Duration::from_secs(3600),
            Cause::Budget | Cause::Service | Cause::Network | Cause::Failing => {
                Duration::from_secs(15 * 60)
            }
        }
    }

    /// Whether it lasts until the user does something.
    pub fn needs_you(self) -> bool {
        matches!(self, Cause::Unavailable | Cause::Login | Cause::Account)
    }

    /// What to do, in a few words.
    pub fn remedy(self) -> &'static str {
        match self {
            Cause::Budget => {
                "it resumes tomorrow; CLAUDE_MEM_COMPRESS_DAILY_TOKENS sets the daily budget"
            }
            Cause::Unavailable => {
                "install Claude Code (or set CLAUDE_MEM_CLAUDE_BIN), or set \
                 CLAUDE_MEM_COMPRESS_CMD, to a program that is there and runs; then run \
                 claude-mem compress"
            }
            Cause::Login => "log in again (run claude, then /login), then run claude-mem compress",
            Cause::Account => {
                "add credit to the account or wait for the usage limit to reset, then run \
                 claude-mem compress"
            }
            Cause::Service => {
                "it passes: the hooks try again after the pause, claude-mem compress tries now"
            }
            Cause::Network => {
                "check the network (or the proxy); the hooks try again after the pause, \
                 claude-mem compress tries now"
            }
            Cause::Failing => {
                "see why in claude-mem queue stats and the log (a model program that answers \
                 no JSON, a model too small for the schema); the hooks try again after the \
                 pause, claude-mem compress tries now"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Claude Code 2.1.330 printed in `result` for each, with its `api_error_status`.
    #[test]
    fn the_cli_s_own_words_say_what_an_error_is_about() {
        let said = [
            (
                "Not logged in · Please run /login",
                None,
                Some(Cause::Login),
            ),
            (
                "Invalid API key · Fix external API key",
                Some(401),
                Some(Cause::Login),
            ),
            ("Credit balance is too low", Some(400), Some(Cause::Account)),
            (
                "Failed to authenticate. API Error: 403 Your organization has been disabled.",
                Some(403),
                Some(Cause::Account),
            ),
            (
                "API Error: Request rejected (429) · Number of request tokens has exceeded \
                 your per-minute rate limit",
                Some(429),
                Some(Cause::Service),
            ),
            (
                "API Error: 529 Overloaded. This is a server-side issue, usually temporary",
                Some(529),
                Some(Cause::Service),
            ),
            (
                "API Error: Connection refused — a firewall or proxy may be blocking it \
                 (ECONNREFUSED)",
                None,
                Some(Cause::Network),
            ),
            ("Internal server error", Some(500), Some(Cause::Service)),
            // The batch's own: too long, an answer that never met the schema.
            ("Prompt is too long", Some(400), None),
            ("error_max_turns", None, None),
        ];
        for (text, status, cause) in said {
            assert_eq!(of_error(text, status), cause, "{text}");
        }
    }

    #[test]
    fn a_cause_reads_back_from_its_word() {
        for cause in [Cause::Budget, Cause::Login, Cause::Network] {
            assert_eq!(Cause::parse(cause.as_str()), Some(cause));
        }
        assert_eq!(Cause::parse("other"), None);
    }
}
