//! What a model call came to, decided from its reply alone: a checked answer to store, a
//! failure of the batch (an attempt counted), or a reason to give the batch back untouched and
//! pause (the model cannot be reached, or refuses for a reason no batch can change: see
//! `cause`). Also what the call spent.

use std::time::Duration;

use super::answer::{self, Answer};
use super::cause::{self, Cause};
use super::model::{Failure, Reply};
use crate::store::compressed::Usage;

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Store(Answer),
    Fail(String),
    /// Not the batch's fault: why, and the error.
    GiveBack(Cause, String),
}

/// A verdict, and what to enter in the ledger for the call.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    pub usage: Usage,
    /// The model that answered, as reported.
    pub model: Option<String>,
    /// The ledger's outcome: stored (until the store says otherwise), invalid, failed,
    /// timeout, unavailable or unreachable.
    pub outcome: &'static str,
    pub error: Option<String>,
    /// Whether a model was reached at all (a call to count).
    pub called: bool,
}

/// What the batch is asked, for checking its answer.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub items: usize,
    pub wants_summary: bool,
    /// Tokens the call was estimated to use: what counts when it reported nothing.
    pub estimate: u64,
    pub timeout: Duration,
}

pub fn judge(reply: Result<Reply, Failure>, asked: Asked) -> Judged {
    let estimated = Usage {
        input: asked.estimate,
        estimated: true,
        ..Usage::default()
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(failure) => return failed(failure, &asked, estimated),
    };
    let usage = reply.usage.clone().unwrap_or(estimated);
    let model = reply.model.clone();
    if let Some(error) = reply.error {
        let (verdict, outcome) = match cause::of_error(&error, reply.api_status) {
            Some(cause) => (Verdict::GiveBack(cause, error.clone()), "unreachable"),
            None => (
                Verdict::Fail(format!("the model answered with an error: {error}")),
                "failed",
            ),
        };
        return Judged::called(verdict, usage, model, outcome, Some(error));
    }
    let checked = reply
        .answer
        .as_ref()
        .ok_or_else(|| "the model gave no structured answer".to_string())
        .and_then(|value| answer::check(value, asked.items, asked.wants_summary));
    match checked {
        Ok(answer) => Judged::called(Verdict::Store(answer), usage, model, "stored", None),
        Err(why) => Judged::called(
            Verdict::Fail(format!("invalid answer: {why}")),
            usage,
            model,
            "invalid",
            Some(why),
        ),
    }
}

/// A call that brought no reply: the model program could not run, took too long or broke.
fn failed(failure: Failure, asked: &Asked, estimated: Usage) -> Judged {
    match failure {
        Failure::Unavailable(why) => Judged {
            called: false,
            ..Judged::called(
                Verdict::GiveBack(Cause::Unavailable, why.clone()),
                Usage::default(),
                None,
                "unavailable",
                Some(why),
            )
        },
        Failure::Timeout => {
            let why = format!(
                "the model gave no answer within {} s",
                asked.timeout.as_secs()
            );
            Judged::called(
                Verdict::Fail(why.clone()),
                estimated,
                None,
                "timeout",
                Some(why),
            )
        }
        // Its last words may say that it never reached a model (it spent nothing then).
        // Otherwise it may have died mid-answer: what it spent is not known, so the estimate
        // counts, as for a timeout.
        Failure::Broken(why) => match cause::of_error(&why, None) {
            Some(cause) => Judged::called(
                Verdict::GiveBack(cause, why.clone()),
                Usage::default(),
                None,
                "unreachable",
                Some(why),
            ),
            None => Judged::called(
                Verdict::Fail(format!("the model program failed: {why}")),
                estimated,
                None,
                "failed",
                Some(why),
            ),
        },
    }
}

impl Judged {
    /// The verdict on a call that reached (or may have reached) a model.
    fn called(
        verdict: Verdict,
        usage: Usage,
        model: Option<String>,
        outcome: &'static str,
        error: Option<String>,
    ) -> Judged {
        Judged {
            verdict,
            usage,
            model,
            outcome,
            error,
            called: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: Asked = Asked {
        items: 2,
        wants_summary: false,
        estimate: 900,
        timeout: Duration::from_secs(300),
    };

    fn error(status: Option<u16>) -> Reply {
        Reply {
            error: Some("boom".into()),
            api_status: status,
            ..Reply::default()
        }
    }

    #[test]
    fn an_api_error_is_the_batchs_unless_it_is_about_the_account_or_the_service() {
        for status in [400, 413, 422] {
            let judged = judge(Ok(error(Some(status))), ASKED);
            assert!(matches!(judged.verdict, Verdict::Fail(_)), "{status}");
        }
        for status in [401, 403, 429, 500, 529] {
            let judged = judge(Ok(error(Some(status))), ASKED);
            assert!(
                matches!(judged.verdict, Verdict::GiveBack(_, _)),
                "{status}"
            );
            assert_eq!(judged.outcome, "unreachable");
        }
        // An error without a status (a schema the model could not meet) is the batch's.
        assert!(matches!(
            judge(Ok(error(None)), ASKED).verdict,
            Verdict::Fail(_)
        ));
    }

    #[test]
    fn what_a_call_spent_is_what_it_reported_else_its_estimate() {
        let reported = Reply {
            usage: Some(Usage {
                input: 10,
                output: 5,
                ..Usage::default()
            }),
            answer: Some(serde_json::json!({"observations": []})),
            ..Reply::default()
        };
        let judged = judge(Ok(reported), ASKED);
        assert_eq!((judged.usage.tokens(), judged.outcome), (15, "stored"));
        let timeout = judge(Err(Failure::Timeout), ASKED);
        assert_eq!(
            (timeout.usage.tokens(), timeout.usage.estimated),
            (900, true)
        );
        let missing = judge(Err(Failure::Unavailable("none".into())), ASKED);
        assert_eq!((missing.usage.tokens(), missing.called), (0, false));
    }
}
