//! The figures: per query, the keys of the first [`DEPTH`] results in rank order; per set and
//! system (and per slice), recall@5 and @10 (the share of a query's evidence found), hit@10,
//! MRR (of the first evidence within the first 10), the share of queries answered with
//! nothing, the share of queries that have no answer (unrelated prompts, abstention slices)
//! answered with nothing, and the latency of each answer.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::DEPTH;
use crate::set::Set;

/// What one query got back.
pub struct Answer {
    pub keys: Vec<String>,
    pub took: Duration,
}

pub struct Row {
    pub set: &'static str,
    pub system: &'static str,
    pub slice: String,
    pub figures: Option<Figures>,
}

pub struct Figures {
    /// Queries that have evidence.
    pub answerable: usize,
    pub recall5: f64,
    pub recall10: f64,
    pub hit10: f64,
    pub mrr: f64,
    pub none: f64,
    /// Queries that have none.
    pub unanswerable: usize,
    pub abstained: f64,
    pub p50: Duration,
    pub p95: Duration,
}

/// The row of all queries, then one per slice when there are several.
pub fn rows(set: &Set, system: &'static str, answers: &[Answer]) -> Vec<Row> {
    let all: Vec<usize> = (0..answers.len()).collect();
    let mut rows = vec![Row {
        set: set.name,
        system,
        slice: "all".into(),
        figures: Some(figures(set, answers, &all)),
    }];
    let slices: BTreeSet<&str> = set.queries.iter().map(|q| q.slice.as_str()).collect();
    if slices.len() > 1 {
        for slice in slices {
            let of: Vec<usize> = all
                .iter()
                .copied()
                .filter(|&i| set.queries[i].slice == slice)
                .collect();
            rows.push(Row {
                set: set.name,
                system,
                slice: slice.to_string(),
                figures: Some(figures(set, answers, &of)),
            });
        }
    }
    rows
}

fn figures(set: &Set, answers: &[Answer], of: &[usize]) -> Figures {
    let (mut answerable, mut unanswerable) = (0, 0);
    let (mut recall5, mut recall10, mut hit10, mut mrr, mut none, mut abstained) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut times: Vec<Duration> = Vec::new();
    for &i in of {
        let (query, answer) = (&set.queries[i], &answers[i]);
        times.push(answer.took);
        let top = &answer.keys[..answer.keys.len().min(DEPTH)];
        if query.gold.is_empty() {
            unanswerable += 1;
            abstained += f64::from(u8::from(top.is_empty()));
            continue;
        }
        answerable += 1;
        let gold: BTreeSet<&String> = query.gold.iter().collect();
        let found = |k: usize| {
            let within: BTreeSet<&String> = top.iter().take(k).collect();
            gold.intersection(&within).count() as f64 / gold.len() as f64
        };
        recall5 += found(5);
        recall10 += found(10);
        if let Some(rank) = top.iter().position(|k| gold.contains(k)) {
            hit10 += 1.0;
            mrr += 1.0 / (rank + 1) as f64;
        }
        none += f64::from(u8::from(top.is_empty()));
    }
    times.sort();
    let at = |q: f64| {
        times
            .get(((times.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    let per = |sum: f64, n: usize| if n == 0 { f64::NAN } else { sum / n as f64 };
    Figures {
        answerable,
        recall5: per(recall5, answerable),
        recall10: per(recall10, answerable),
        hit10: per(hit10, answerable),
        mrr: per(mrr, answerable),
        none: per(none, answerable),
        unanswerable,
        abstained: per(abstained, unanswerable),
        p50: at(0.5),
        p95: at(0.95),
    }
}

/// The report as a Markdown table, ready for docs/performance.md.
pub fn table(rows: &[Row], notes: &[String], took: f64) -> String {
    let mut out = String::from(
        "\n| set | system | slice | queries | recall@5 | recall@10 | hit@10 | MRR | no result \
         | abstains | p50 ms | p95 ms |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let _ = write!(out, "| {} | {} | {} ", row.set, row.system, row.slice);
        match &row.figures {
            None => out.push_str("| not implemented | | | | | | | | |\n"),
            Some(f) => {
                let ratio = |x: f64| {
                    if x.is_nan() {
                        "-".to_string()
                    } else {
                        format!("{x:.3}")
                    }
                };
                let share = |x: f64, n: usize| {
                    if x.is_nan() {
                        "-".to_string()
                    } else {
                        format!("{:.0}% of {n}", x * 100.0)
                    }
                };
                let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    f.answerable,
                    ratio(f.recall5),
                    ratio(f.recall10),
                    ratio(f.hit10),
                    ratio(f.mrr),
                    share(f.none, f.answerable),
                    share(f.abstained, f.unanswerable),
                    ms(f.p50),
                    ms(f.p95)
                );
            }
        }
    }
    for note in notes {
        let _ = writeln!(out, "\n{note}");
    }
    let _ = writeln!(out, "\n(bench run in {took:.0} s)");
    out
}

/// The report as one JSON object.
pub fn json(rows: &[Row], notes: &[String], took: f64) -> Value {
    let num = |x: f64| if x.is_nan() { Value::Null } else { json!(x) };
    let rows: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut out = json!({"set": row.set, "system": row.system, "slice": row.slice});
            match &row.figures {
                None => out["implemented"] = json!(false),
                Some(f) => {
                    out["implemented"] = json!(true);
                    out["queries"] = json!(f.answerable);
                    out["recall_at_5"] = num(f.recall5);
                    out["recall_at_10"] = num(f.recall10);
                    out["hit_at_10"] = num(f.hit10);
                    out["mrr"] = num(f.mrr);
                    out["no_result"] = num(f.none);
                    out["unanswerable"] = json!(f.unanswerable);
                    out["abstained"] = num(f.abstained);
                    out["p50_ms"] = json!(f.p50.as_secs_f64() * 1000.0);
                    out["p95_ms"] = json!(f.p95.as_secs_f64() * 1000.0);
                }
            }
            out
        })
        .collect();
    json!({"rows": rows, "notes": notes, "seconds": took})
}
