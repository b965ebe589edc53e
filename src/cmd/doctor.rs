//! `doctor`: one line per check (see `crate::doctor`), what `--fix` did, and a closing line;
//! exit 1 only when a check failed.

use anyhow::Result;
use serde_json::{Value, json};

use crate::config::Config;
use crate::doctor::{Check, Repaired, Verdict, examine};
use crate::emit::Report;
use crate::render::{self, Color, Style, Table, cell};

pub fn doctor(fix: bool, json: bool) -> Result<Report> {
    let (checks, repaired) = examine(&Config::from_env(), fix);
    let failed = checks.iter().any(|c| c.verdict == Verdict::Fail);
    let stdout = if json {
        render::json_line(&to_json(&checks, &repaired, fix))
    } else {
        text(&checks, &repaired, fix, &Style::detect())
    };
    Ok(Report {
        stdout,
        // Exit 1 without an error line: the report says what failed.
        found_nothing: failed,
        note: None,
    })
}

fn text(checks: &[Check], repaired: &[Repaired], fixing: bool, style: &Style) -> String {
    let mut t = Table::default();
    for r in repaired {
        let (label, color, what) = match &r.outcome {
            Ok(did) => ("fixed", Color::Good, did),
            Err(why) => ("error", Color::Bad, why),
        };
        t.row(vec![
            cell(label).color(color),
            cell(r.name),
            cell(what.as_str()),
        ]);
    }
    for check in checks {
        let v = check.verdict;
        t.row(vec![
            cell(v.as_str()).color(v.color()),
            cell(check.name).color(Color::Header),
            cell(check.message.as_str()),
        ]);
        for detail in &check.details {
            t.row(vec![cell(""), cell(""), cell(format!("  {detail}"))]);
        }
        if let Some(fix) = check.fix.as_ref().filter(|_| v != Verdict::Ok) {
            t.row(vec![cell(""), cell(""), cell(format!("fix: {fix}"))]);
        }
    }
    let mut out = t.render(style);
    out.push_str(&summary(checks, fixing));
    out
}

/// The closing line: what is wrong in all, and whether `--fix` would help.
fn summary(checks: &[Check], fixing: bool) -> String {
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count() as i64;
    let (fails, warns) = (count(Verdict::Fail), count(Verdict::Warn));
    if fails + warns == 0 {
        return "All is well.\n".into();
    }
    let mut line = match (fails, warns) {
        (0, w) => format!("Nothing is broken; {}.", render::plural(w, "warning")),
        (f, 0) => format!("{} failed.", render::plural(f, "check")),
        (f, w) => format!(
            "{} failed, {}.",
            render::plural(f, "check"),
            render::plural(w, "warning")
        ),
    };
    let repairable = checks
        .iter()
        .filter(|c| c.verdict != Verdict::Ok && c.repair.is_some())
        .count();
    if repairable > 0 && !fixing {
        line.push_str(&format!(
            " `claude-mem doctor --fix` repairs {} of them.",
            if repairable == 1 {
                "one".into()
            } else {
                repairable.to_string()
            }
        ));
    }
    line.push('\n');
    line
}

fn to_json(checks: &[Check], repaired: &[Repaired], fixing: bool) -> Value {
    let checks: Vec<Value> = checks
        .iter()
        .map(|c| {
            json!({
                "check": c.name,
                "status": c.verdict.as_str(),
                "message": c.message,
                "details": c.details,
                "fix": c.fix.as_ref().filter(|_| c.verdict != Verdict::Ok),
                "fixable": c.verdict != Verdict::Ok && c.repair.is_some(),
            })
        })
        .collect();
    let repaired: Vec<Value> = repaired
        .iter()
        .map(|r| match &r.outcome {
            Ok(did) => json!({"check": r.name, "done": did, "error": null}),
            Err(why) => json!({"check": r.name, "done": null, "error": why}),
        })
        .collect();
    let status = checks
        .iter()
        .map(|c| c["status"].as_str().unwrap_or("ok"))
        .max_by_key(|s| ["ok", "warn", "fail"].iter().position(|v| v == s))
        .unwrap_or("ok");
    json!({
        "status": status,
        "checks": checks,
        "fixed": if fixing { Some(repaired) } else { None },
    })
}
