//! The shape Claude Code requires of the `hooks` object, checked before anything is changed.
//!
//! Claude Code skips a hook entry it cannot read (before v2.1.122 it ignored the whole file
//! over one), so a malformed entry is a hook that silently never runs; and install or
//! uninstall working around it would hide that. So a file whose hooks break the shape of
//! Claude Code's schema (tests/fixtures/claude-code-settings.schema.json) is refused, naming
//! the JSON path of the first bad value. Only what the schema requires is checked: unknown
//! event names, keys and handler types are what newer Claude Codes add, and are let through.

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::document::kind;

pub fn check(root: &Map<String, Value>) -> Result<()> {
    let Some(hooks) = root.get("hooks") else {
        return Ok(());
    };
    for (event, groups) in object("hooks", hooks, "an object")? {
        let path = format!("hooks.{event}");
        for (i, group) in array(&path, groups)?.iter().enumerate() {
            check_group(&format!("{path}[{i}]"), group)?;
        }
    }
    Ok(())
}

fn check_group(path: &str, group: &Value) -> Result<()> {
    let group = object(path, group, "a hook group object")?;
    if let Some(matcher) = group.get("matcher") {
        string(&format!("{path}.matcher"), matcher)?;
    }
    let Some(handlers) = group.get("hooks") else {
        bail!("its {path:?} has no \"hooks\" array{REJECTED}");
    };
    let path = format!("{path}.hooks");
    for (i, handler) in array(&path, handlers)?.iter().enumerate() {
        check_handler(&format!("{path}[{i}]"), handler)?;
    }
    Ok(())
}

fn check_handler(path: &str, handler: &Value) -> Result<()> {
    let handler = object(path, handler, "a handler object")?;
    let Some(kind) = handler.get("type") else {
        bail!("its {path:?} has no \"type\"{REJECTED}");
    };
    let required: &[&str] = match string(&format!("{path}.type"), kind)? {
        "command" => &["command"],
        "prompt" | "agent" => &["prompt"],
        "http" => &["url"],
        "mcp_tool" => &["server", "tool"],
        _ => &[],
    };
    for field in required {
        let Some(value) = handler.get(*field) else {
            bail!("its {path:?} has no {field:?}{REJECTED}");
        };
        if string(&format!("{path}.{field}"), value)?.is_empty() {
            bail!("its \"{path}.{field}\" value is empty{REJECTED}");
        }
    }
    if let Some(timeout) = handler.get("timeout")
        && !timeout.as_f64().is_some_and(|seconds| seconds > 0.0)
    {
        bail!(
            "its \"{path}.timeout\" value is {}, not a number of seconds above 0{REJECTED}",
            describe(timeout)
        );
    }
    if let Some(args) = handler.get("args") {
        let path = format!("{path}.args");
        for (i, arg) in array(&path, args)?.iter().enumerate() {
            string(&format!("{path}[{i}]"), arg)?;
        }
    }
    Ok(())
}

const REJECTED: &str = ", which Claude Code rejects; fix or remove it and run again";

fn object<'a>(path: &str, value: &'a Value, expected: &str) -> Result<&'a Map<String, Value>> {
    match value {
        Value::Object(map) => Ok(map),
        other => bail!(
            "its {path:?} value is {}, not {expected}{REJECTED}",
            describe(other)
        ),
    }
}

fn array<'a>(path: &str, value: &'a Value) -> Result<&'a Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => bail!(
            "its {path:?} value is {}, not an array{REJECTED}",
            describe(other)
        ),
    }
}

fn string<'a>(path: &str, value: &'a Value) -> Result<&'a str> {
    match value {
        Value::String(text) => Ok(text),
        other => bail!(
            "its {path:?} value is {}, not a string{REJECTED}",
            describe(other)
        ),
    }
}

/// `a number (1)`, `a string ("x")`, `an object`: the kind, and a short value where it helps.
fn describe(value: &Value) -> String {
    match value {
        Value::Number(_) | Value::Bool(_) => format!("{} ({value})", kind(value)),
        Value::String(text) if text.chars().count() <= 40 => format!("a string ({text:?})"),
        other => kind(other).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(json: &str) -> String {
        let root: Map<String, Value> = serde_json::from_str(json).unwrap();
        check(&root).map_or_else(|err| err.to_string(), |()| "ok".into())
    }

    #[test]
    fn names_the_path_and_what_is_there() {
        let cases = [
            (
                r#"{"hooks": {"PostToolUse": [1, "x", null]}}"#,
                r#""hooks.PostToolUse[0]" value is a number (1), not a hook group object"#,
            ),
            (
                r#"{"hooks": {"Stop": {"hooks": []}}}"#,
                r#""hooks.Stop" value is an object, not an array"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"matcher": "*"}]}}"#,
                r#""hooks.Stop[0]" has no "hooks" array"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": {}}]}}"#,
                r#""hooks.Stop[0].hooks" value is an object, not an array"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": ["x"]}]}}"#,
                r#""hooks.Stop[0].hooks[0]" value is a string ("x"), not a handler object"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"matcher": 3, "hooks": []}]}}"#,
                r#""hooks.Stop[0].matcher" value is a number (3), not a string"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}"#,
                r#""hooks.Stop[0].hooks[0]" has no "type""#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}"#,
                r#""hooks.Stop[0].hooks[0]" has no "command""#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ""}]}]}}"#,
                r#""hooks.Stop[0].hooks[0].command" value is empty"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}"#,
                r#""hooks.Stop[0].hooks[0].timeout" value is a number (0), not a number of seconds"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "args": [1]}]}]}}"#,
                r#""hooks.Stop[0].hooks[0].args[0]" value is a number (1), not a string"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}"#,
                r#""hooks.Stop[0].hooks[0]" has no "url""#,
            ),
        ];
        for (json, says) in cases {
            let message = error(json);
            assert!(message.contains(says), "{json}: {message}");
            assert!(message.contains("Claude Code rejects"), "{message}");
        }
    }

    #[test]
    fn lets_through_what_newer_claude_codes_add() {
        for json in [
            r#"{}"#,
            r#"{"hooks": {}}"#,
            r#"{"hooks": {"SomeNewEvent": [{"hooks": [{"type": "new-kind", "x": 1}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "onFailure": "block", "timeout": 0.5}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "args": ["a"]}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": []}], "PreCompact": []}}"#,
        ] {
            assert_eq!(error(json), "ok", "{json}");
        }
    }
}
