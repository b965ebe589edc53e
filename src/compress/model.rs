//! The model call: headless Claude Code, so that the user's own login (a subscription or a key)
//! pays, with no key for us to keep; or any program the user names instead.
//!
//! `claude -p` runs with a small model, no tools (`--tools ""`), no MCP servers
//! (`--strict-mcp-config`), no hooks (`disableAllHooks`; and `CLAUDE_MEM_DISABLED=1`, so that
//! our own record nothing of it), no CLAUDE.md (its instructions are not ours to follow, nor to
//! pay for), few retries (an API out of reach is known in seconds), its own system prompt, the
//! answer's schema (`--json-schema`: the model answers through a tool that the CLI checks
//! against it), at most one correction turn, nothing saved (`--no-session-persistence`), from
//! the data dir (no project's files in view). The digest
//! goes in on stdin; `--output-format json` prints one object with the answer
//! (`structured_output`), the usage and the cost. `CLAUDE_MEM_COMPRESS_CMD` replaces all of
//! that with a shell command that reads the digest on stdin and prints the same object; it
//! finds the instructions and the schema in `CLAUDE_MEM_COMPRESS_SYSTEM` and
//! `CLAUDE_MEM_COMPRESS_SCHEMA`.
//!
//! The call has a deadline, and nothing the program starts outlives the call (`process`).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::process;
use crate::config::{Config, MAX_CALL_COST_USD, MAX_CALL_TOKENS};
use crate::privacy::clean_text;
use crate::privacy::secrets::Redactor;
use crate::store::compressed::Usage;
use crate::text::bounded;

/// A correction turn when the first answer does not match the schema; no more.
const MAX_TURNS: &str = "2";
/// Retries of a failed request (`CLAUDE_CODE_MAX_RETRIES`): Claude Code's own 10, with a
/// backoff up to 32 s, kept it at a refused connection for about three minutes (178 s here,
/// 2.1.330, offline) before it said "Connection refused", long enough to meet our deadline and
/// count an attempt against the batch. Two take about two seconds and still ride out a passing
/// 429 or 529; what is left is known by its words (`cause`) and paused for.
const MAX_RETRIES: &str = "2";

/// What one call is asked.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub digest: &'a str,
    pub system: &'a str,
    pub schema: &'a Value,
}

/// What the program said, whatever it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// The structured answer, when there is one.
    pub answer: Option<Value>,
    pub usage: Option<Usage>,
    /// The model that answered, as reported.
    pub model: Option<String>,
    /// The program reported an error: its message.
    pub error: Option<String>,
    /// The HTTP status of an API error, when reported.
    pub api_status: Option<u16>,
}

/// A call that gave no reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// No program ran, so no model was reached: it could not be started (none found, not
    /// executable), or it exited 126 or 127 without a result (see [`never_ran`]).
    Unavailable(String),
    /// No answer before the deadline: the program was killed.
    Timeout,
    /// It ended without printing a result: its exit status and the end of its stderr.
    Broken(String),
}

/// Which program runs, for messages: `claude` or the user's command.
pub fn describe(config: &Config) -> String {
    match &config.compress.command {
        Some(command) => format!("CLAUDE_MEM_COMPRESS_CMD ({command})"),
        None => match crate::claude::locate() {
            Some(path) => format!("{} -p --model {}", path.display(), config.compress.model),
            None => "claude (not found)".into(),
        },
    }
}

pub fn call(config: &Config, request: &Request) -> Result<Reply, Failure> {
    let schema = request.schema.to_string();
    let mut command = match &config.compress.command {
        Some(line) => shell(line, request.system, &schema),
        None => claude(config, request.system, &schema)?,
    };
    command
        .env("CLAUDE_MEM_DISABLED", "1")
        .current_dir(work_dir(config));
    let out = process::run(command, request.digest, config.compress.timeout)?;
    let redactor = &config.redactor;
    if let Some(reply) = parse(&out.stdout, redactor) {
        return Ok(reply);
    }
    let said = last_line(&out.stderr, redactor)
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    if out.code.is_some_and(never_ran) {
        return Err(Failure::Unavailable(format!(
            "the model program could not run ({}: not found or not executable){said}",
            out.status,
        )));
    }
    Err(Failure::Broken(format!(
        "it exited with {} and printed no result{said}",
        out.status
    )))
}

/// Whether an exit code says that no model was reached because nothing ran: 127 is what `sh`
/// (and our keeper, `guard`) exit with when the program is not found, 126 when it is found but
/// cannot be run; a wrapper whose target is gone says the same through its own shell. Such a
/// call spent nothing and is not the batch's fault: it costs no tokens and no attempt.
fn never_ran(code: i32) -> bool {
    matches!(code, 126 | 127)
}

/// Why no call can be made, when that is known without making one: no `claude` found (and
/// no `CLAUDE_MEM_COMPRESS_CMD`). A few `stat`s.
pub fn unavailable(config: &Config) -> Option<String> {
    if config.compress.command.is_some() || crate::claude::locate().is_some() {
        return None;
    }
    Some(format!(
        "no Claude Code found (put `claude` on PATH, set {}, or set CLAUDE_MEM_COMPRESS_CMD)",
        crate::claude::CLAUDE_BIN_VAR
    ))
}

fn claude(config: &Config, system: &str, schema: &str) -> Result<Command, Failure> {
    let claude = crate::claude::locate()
        .ok_or_else(|| Failure::Unavailable(unavailable(config).unwrap_or_default()))?;
    let mut command = Command::new(claude);
    command
        .args(["-p", "--model", &config.compress.model])
        .args(["--tools", ""])
        .arg("--strict-mcp-config")
        .args(["--system-prompt", system])
        .args(["--json-schema", schema])
        .arg("--no-session-persistence")
        .args(["--output-format", "json"])
        .args(["--max-turns", MAX_TURNS])
        .args(["--settings", r#"{"disableAllHooks":true}"#])
        .env("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1")
        .env("CLAUDE_CODE_MAX_RETRIES", MAX_RETRIES);
    Ok(command)
}

fn shell(line: &str, system: &str, schema: &str) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", line])
        .env("CLAUDE_MEM_COMPRESS_SYSTEM", system)
        .env("CLAUDE_MEM_COMPRESS_SCHEMA", schema);
    command
}

/// Where the program runs: the data dir, where no project's CLAUDE.md or files are in view.
fn work_dir(config: &Config) -> PathBuf {
    if config.data_dir.is_dir() {
        config.data_dir.clone()
    } else {
        std::env::temp_dir()
    }
}

/// The result object of `--output-format json` (the last line that is a JSON object), or of a
/// command that prints the same.
fn parse(stdout: &str, redactor: &Redactor) -> Option<Reply> {
    let result: Value = stdout
        .lines()
        .rev()
        .filter(|line| line.trim_start().starts_with('{'))
        .find_map(|line| serde_json::from_str::<Value>(line).ok())
        .or_else(|| serde_json::from_str(stdout.trim()).ok())?;
    if !result.is_object() {
        return None;
    }
    let answer = match result.get("structured_output") {
        Some(value) if !value.is_null() => Some(value.clone()),
        // A program that only fills `result`: the answer as JSON text.
        _ => result
            .get("result")
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str::<Value>(text.trim()).ok())
            .filter(Value::is_object),
    };
    let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
    let error = is_error.then(|| {
        let text = result
            .get("result")
            .and_then(Value::as_str)
            .or_else(|| result.get("subtype").and_then(Value::as_str))
            .unwrap_or("an error without a message");
        told(text, redactor, 300)
    });
    Some(Reply {
        answer: if is_error { None } else { answer },
        usage: result.get("usage").map(|u| usage(u, &result)),
        model: result
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|models| models.keys().next().cloned()),
        error,
        api_status: result
            .get("api_error_status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok()),
    })
}

/// The usage as reported, each number within what a call can use (`config::MAX_CALL_TOKENS`,
/// `MAX_CALL_COST_USD`): a program's report is not ours, and 2^64 − 1 tokens must neither wrap
/// around nor overflow the day's sum. A float counts as its whole part; a negative number, or
/// anything else, as nothing.
fn usage(usage: &Value, result: &Value) -> Usage {
    let n = |key: &str| {
        let value = usage.get(key);
        value
            .and_then(Value::as_u64)
            .or_else(|| value.and_then(Value::as_f64).map(|f| f.max(0.0) as u64))
            .unwrap_or(0)
            .min(MAX_CALL_TOKENS)
    };
    Usage {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_input_tokens"),
        cache_write: n("cache_creation_input_tokens"),
        cost_usd: result
            .get("total_cost_usd")
            .and_then(Value::as_f64)
            .map(|c| c.clamp(0.0, MAX_CALL_COST_USD)),
        estimated: false,
    }
}

fn last_line(text: &str, redactor: &Redactor) -> Option<String> {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| told(l.trim(), redactor, 200))
}

/// A program's words about an error as we print and keep them (on stderr, in the log, the
/// pause file, the ledger, an item's `last_error`): they may quote a key ("Invalid API key ·
/// sk-ant-…") or a capture, so they pass the hooks' privacy and secret rules first, here where
/// they enter. Those search far more than is kept, so that the cut to `max` characters never
/// splits a secret into a part no rule knows.
pub(super) fn told(text: &str, redactor: &Redactor, max: usize) -> String {
    let searched = bounded(text, 16 * max, 0);
    bounded(&clean_text(redactor, &searched), max, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The shape the pinned CLI (2.1.330) prints, checked against the mock of the API.
    #[test]
    fn the_cli_result_gives_the_answer_the_usage_and_the_cost() {
        let out = json!({"type": "result", "subtype": "success", "is_error": false,
            "result": "{\"a\":7}", "structured_output": {"a": 7}, "total_cost_usd": 0.0002,
            "usage": {"input_tokens": 1234, "output_tokens": 56, "cache_read_input_tokens": 10,
                      "cache_creation_input_tokens": 0},
            "modelUsage": {"claude-haiku-5-5": {"inputTokens": 1234}}, "api_error_status": null});
        let reply = parse(&format!("a warning line\n{out}\n"), &Redactor::default()).unwrap();
        assert_eq!(reply.answer, Some(json!({"a": 7})));
        assert_eq!(reply.model.as_deref(), Some("claude-haiku-5-5"));
        let usage = reply.usage.unwrap();
        assert_eq!((usage.tokens(), usage.cost_usd), (1300, Some(0.0002)));
        assert_eq!(reply.error, None);
    }

    #[test]
    fn an_error_result_has_no_answer() {
        let out = json!({"is_error": true, "subtype": "success", "api_error_status": 400,
            "result": "Prompt is too long", "usage": {"input_tokens": 0, "output_tokens": 0}});
        let reply = parse(&out.to_string(), &Redactor::default()).unwrap();
        assert_eq!(
            (reply.answer, reply.error.as_deref(), reply.api_status),
            (None, Some("Prompt is too long"), Some(400))
        );
        // A schema that could not be met: no structured output, an error subtype.
        let out = json!({"is_error": true, "subtype": "error_max_turns"});
        assert_eq!(
            parse(&out.to_string(), &Redactor::default())
                .unwrap()
                .error
                .as_deref(),
            Some("error_max_turns")
        );
        assert_eq!(parse("not json", &Redactor::default()), None);
    }

    #[test]
    fn absurd_usage_is_held_within_what_a_call_can_use() {
        let out = json!({"structured_output": {}, "total_cost_usd": 1e300,
            "usage": {"input_tokens": u64::MAX, "output_tokens": 1e30,
                      "cache_read_input_tokens": -5, "cache_creation_input_tokens": "many"}});
        let usage = parse(&out.to_string(), &Redactor::default())
            .unwrap()
            .usage
            .unwrap();
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write
            ),
            (MAX_CALL_TOKENS, MAX_CALL_TOKENS, 0, 0)
        );
        assert_eq!(usage.tokens(), 2 * MAX_CALL_TOKENS);
        assert_eq!(usage.cost_usd, Some(MAX_CALL_COST_USD));
        let out = json!({"usage": {"input_tokens": 12.7}, "total_cost_usd": -1});
        let usage = parse(&out.to_string(), &Redactor::default())
            .unwrap()
            .usage
            .unwrap();
        assert_eq!((usage.input, usage.cost_usd), (12, Some(0.0)));
    }

    #[test]
    fn a_command_may_answer_in_result_alone() {
        let out = json!({"result": "{\"observations\": []}"});
        assert_eq!(
            parse(&out.to_string(), &Redactor::default())
                .unwrap()
                .answer,
            Some(json!({"observations": []}))
        );
    }
}
