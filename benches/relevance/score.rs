//! The figures: per query, the keys of the first [`DEPTH`] results in rank order; per set and
//! system (and per slice), recall@5 and @10 (the share of a query's evidence found), hit@10,
//! MRR (of the first evidence within the first 10), the share of queries answered with
//! nothing, the share of queries that have no answer (unrelated prompts, abstention slices)
//! answered with nothing, and the latency of each answer. For the conventions set also whether
//! the rules that apply to a task reach the model in a new session (see `reach`): the share of
//! tasks every one of their rules reached, the share at least one did, the share of replaced
//! rules that reached without the rule that replaced them, and the share of traps that reached.
//! For the held-out prompts and the conventions set's turns, whether a prompt's standing
//! instruction is found (see `detection`): recall (the share of rule prompts with at least one
//! found), precision (the share of instructions found that came from a rule prompt) and false
//! positives per 100 ordinary prompts, and the held-out prompts it got wrong.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::DEPTH;
use crate::detection::{Found, Labelled, Wrong};
use crate::reach::Outcome;
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

pub struct ReachRow {
    pub set: &'static str,
    pub system: &'static str,
    pub slice: String,
    pub figures: Reach,
}

pub struct Reach {
    /// Tasks that have rules.
    pub tasks: usize,
    pub every: f64,
    pub any: f64,
    /// Rules of those tasks that replaced an earlier one.
    pub updated: usize,
    pub stale_only: f64,
    /// Per kind of trap: how many, how many reached; `None` where it is not measured.
    pub traps: Option<Vec<(String, usize, usize)>>,
    pub p50: Duration,
    pub p95: Duration,
}

/// Whether the standing instructions of prompts are found: a row per set and slice, and the
/// held-out prompts the detector got wrong.
#[derive(Default)]
pub struct Detection {
    pub rows: Vec<DetectRow>,
    pub wrong: Vec<Wrong>,
}

pub struct DetectRow {
    pub set: &'static str,
    pub slice: &'static str,
    /// Prompts that state a standing instruction, and those that state none.
    pub rules: usize,
    pub ordinary: usize,
    pub recall: f64,
    /// Instructions found, and the share of them that came from a rule prompt.
    pub found: usize,
    pub precision: f64,
    /// Instructions found in ordinary prompts, and that per 100 of them.
    pub false_positives: usize,
    pub per_100: f64,
    pub p50: Duration,
    pub p95: Duration,
}

/// The row of all prompts, then, when the set marks hard ones, one of the plain and one of the
/// hard prompts.
pub fn detect_rows(set: &Labelled, found: &[Found]) -> Vec<DetectRow> {
    let all: Vec<usize> = (0..set.prompts.len()).collect();
    let mut rows = vec![detect_row(set, found, "all", &all)];
    let (hard, plain): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&i| set.prompts[i].hard);
    if !hard.is_empty() {
        rows.push(detect_row(set, found, "plain", &plain));
        rows.push(detect_row(set, found, "hard", &hard));
    }
    rows
}

fn detect_row(set: &Labelled, found: &[Found], slice: &'static str, of: &[usize]) -> DetectRow {
    let (rules, ordinary): (Vec<usize>, Vec<usize>) =
        of.iter().partition(|&&i| set.prompts[i].rule.is_some());
    let count = |of: &[usize]| of.iter().map(|&i| found[i].texts.len()).sum::<usize>();
    let detected = rules
        .iter()
        .filter(|&&i| !found[i].texts.is_empty())
        .count();
    let (true_found, false_positives) = (count(&rules), count(&ordinary));
    let per = |n: usize, of: usize| {
        if of == 0 {
            f64::NAN
        } else {
            n as f64 / of as f64
        }
    };
    let mut times: Vec<Duration> = of.iter().map(|&i| found[i].took).collect();
    times.sort();
    DetectRow {
        set: set.name,
        slice,
        rules: rules.len(),
        ordinary: ordinary.len(),
        recall: per(detected, rules.len()),
        found: true_found + false_positives,
        precision: per(true_found, true_found + false_positives),
        false_positives,
        per_100: per(false_positives * 100, ordinary.len()),
        p50: quantile(&times, 0.5),
        p95: quantile(&times, 0.95),
    }
}

/// The reach row of all tasks (with the traps, when given), then one per slice.
pub fn reach_rows(
    set: &Set,
    system: &'static str,
    outcomes: &[Outcome],
    traps: Option<&[(String, bool)]>,
) -> Vec<ReachRow> {
    let all: Vec<&Outcome> = outcomes.iter().collect();
    let mut rows = vec![ReachRow {
        set: set.name,
        system,
        slice: "all".into(),
        figures: reach(&all, traps.map(by_kind)),
    }];
    let slices: BTreeSet<&str> = outcomes.iter().map(|o| o.slice.as_str()).collect();
    for slice in slices {
        let of: Vec<&Outcome> = all.iter().copied().filter(|o| o.slice == slice).collect();
        rows.push(ReachRow {
            set: set.name,
            system,
            slice: slice.to_string(),
            figures: reach(&of, None),
        });
    }
    rows
}

fn reach(of: &[&Outcome], traps: Option<Vec<(String, usize, usize)>>) -> Reach {
    let with_rules: Vec<&&Outcome> = of.iter().filter(|o| o.rules > 0).collect();
    let share = |count: usize, n: usize| {
        if n == 0 {
            f64::NAN
        } else {
            count as f64 / n as f64
        }
    };
    let stale: Vec<bool> = of
        .iter()
        .flat_map(|o| o.stale_only.iter().copied())
        .collect();
    let mut times: Vec<Duration> = of.iter().map(|o| o.took).collect();
    times.sort();
    Reach {
        tasks: with_rules.len(),
        every: share(
            with_rules.iter().filter(|o| o.every).count(),
            with_rules.len(),
        ),
        any: share(
            with_rules.iter().filter(|o| o.any).count(),
            with_rules.len(),
        ),
        updated: stale.len(),
        stale_only: share(stale.iter().filter(|&&s| s).count(), stale.len()),
        traps,
        p50: quantile(&times, 0.5),
        p95: quantile(&times, 0.95),
    }
}

/// (kind, how many, how many reached), kinds in order of first appearance.
fn by_kind(traps: &[(String, bool)]) -> Vec<(String, usize, usize)> {
    let mut kinds: Vec<(String, usize, usize)> = Vec::new();
    for (kind, hit) in traps {
        let at = match kinds.iter().position(|(k, _, _)| k == kind) {
            Some(at) => at,
            None => {
                kinds.push((kind.clone(), 0, 0));
                kinds.len() - 1
            }
        };
        kinds[at].1 += 1;
        kinds[at].2 += usize::from(*hit);
    }
    kinds
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted
        .get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or_default()
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
    let at = |q: f64| quantile(&times, q);
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

/// The report as Markdown tables, ready for docs/performance.md: the searches, then what
/// reached the model.
pub fn table(
    rows: &[Row],
    reached: &[ReachRow],
    detection: &Detection,
    notes: &[String],
    took: f64,
) -> String {
    let mut out = String::from(
        "\n| set | system | slice | queries | recall@5 | recall@10 | hit@10 | MRR | no result \
         | abstains | p50 ms | p95 ms |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let _ = write!(out, "| {} | {} | {} ", row.set, row.system, row.slice);
        match &row.figures {
            None => out.push_str("| not implemented | | | | | | | | |\n"),
            Some(f) => {
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
    reach_table(&mut out, reached);
    detect_table(&mut out, detection);
    for note in notes {
        let _ = writeln!(out, "\n{note}");
    }
    let _ = writeln!(out, "\n(bench run in {took:.0} s)");
    out
}

/// Whether the rules reach the model in a new session: a table, and the traps by kind.
fn reach_table(out: &mut String, rows: &[ReachRow]) {
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "\nRules that reach the model in a new session (start context or prompt recall):\n\n\
         | set | system | slice | tasks | every rule | at least one | replaced rule only \
         | traps reached | p50 ms | p95 ms |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let f = &row.figures;
        let traps = f.traps.as_ref().map_or("-".to_string(), |kinds| {
            let (n, hit) = kinds.iter().fold((0, 0), |(n, h), k| (n + k.1, h + k.2));
            share(hit as f64 / n.max(1) as f64, n)
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {traps} | {} | {} |",
            row.set,
            row.system,
            row.slice,
            f.tasks,
            share(f.every, f.tasks),
            share(f.any, f.tasks),
            share(f.stale_only, f.updated),
            ms(f.p50),
            ms(f.p95)
        );
    }
    for row in rows {
        if let Some(kinds) = &row.figures.traps {
            let each: Vec<String> = kinds
                .iter()
                .map(|(kind, n, hit)| format!("{kind} {hit} of {n}"))
                .collect();
            let _ = writeln!(
                out,
                "\n{}, {}: traps that reached the model (must be none): {}",
                row.set,
                row.system,
                each.join(", ")
            );
        }
    }
}

/// Whether prompts' standing instructions are found: a table, then the prompts it got wrong.
fn detect_table(out: &mut String, detection: &Detection) {
    if detection.rows.is_empty() {
        return;
    }
    out.push_str(
        "\nStanding instructions found in prompts, each the first of a new session \
         (`hook prompt`, then `conventions --all --replaced`):\n\n\
         | set | slice | rule prompts | ordinary prompts | recall | precision \
         | false positives per 100 ordinary | p50 ms | p95 ms |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in &detection.rows {
        let per_100 = if row.per_100.is_nan() {
            "-".to_string()
        } else {
            format!("{:.1} ({})", row.per_100, row.false_positives)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {per_100} | {} | {} |",
            row.set,
            row.slice,
            row.rules,
            row.ordinary,
            share(row.recall, row.rules),
            share(row.precision, row.found),
            ms(row.p50),
            ms(row.p95)
        );
    }
    let (missed, taken): (Vec<&Wrong>, Vec<&Wrong>) =
        detection.wrong.iter().partition(|w| w.rule.is_some());
    let sets: BTreeSet<&str> = detection.wrong.iter().map(|w| w.set).collect();
    for set in sets {
        let of = |list: &[&Wrong]| list.iter().filter(|w| w.set == set).count();
        let _ = writeln!(
            out,
            "\n{set}: rule prompts where nothing was found ({}):",
            of(&missed)
        );
        for w in missed.iter().filter(|w| w.set == set) {
            let rule = w.rule.as_deref().unwrap_or_default();
            let _ = writeln!(out, "- {} (rule: {})", one_line(&w.prompt), one_line(rule));
        }
        let _ = writeln!(
            out,
            "\n{set}: ordinary prompts taken for a rule ({}):",
            of(&taken)
        );
        for w in taken.iter().filter(|w| w.set == set) {
            let found = w.found.iter().map(|f| one_line(f)).collect::<Vec<_>>();
            let _ = writeln!(
                out,
                "- {} (found: {})",
                one_line(&w.prompt),
                found.join(" | ")
            );
        }
    }
}

/// A prompt on one line of at most 200 characters, quoted.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(200) {
        Some((at, _)) => format!("\"{}…\"", &flat[..at]),
        None => format!("\"{flat}\""),
    }
}

fn ratio(x: f64) -> String {
    if x.is_nan() {
        "-".to_string()
    } else {
        format!("{x:.3}")
    }
}

fn share(x: f64, n: usize) -> String {
    if x.is_nan() {
        "-".to_string()
    } else {
        format!("{:.0}% of {n}", x * 100.0)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// The report as one JSON object.
pub fn json(
    rows: &[Row],
    reached: &[ReachRow],
    detection: &Detection,
    notes: &[String],
    took: f64,
) -> Value {
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
    let reach: Vec<Value> = reached.iter().map(reach_json).collect();
    let (detected, wrong) = detect_json(detection);
    json!({"rows": rows, "reach": reach, "detection": detected, "detection_wrong": wrong,
           "notes": notes, "seconds": took})
}

/// The detection rows, and the prompts it got wrong with what was expected and found.
fn detect_json(detection: &Detection) -> (Vec<Value>, Vec<Value>) {
    let rows = detection
        .rows
        .iter()
        .map(|r| {
            json!({"set": r.set, "slice": r.slice, "rule_prompts": r.rules,
                   "ordinary_prompts": r.ordinary, "recall": num(r.recall),
                   "instructions_found": r.found, "precision": num(r.precision),
                   "false_positives": r.false_positives,
                   "false_positives_per_100_ordinary": num(r.per_100),
                   "p50_ms": r.p50.as_secs_f64() * 1000.0,
                   "p95_ms": r.p95.as_secs_f64() * 1000.0})
        })
        .collect();
    let wrong = detection
        .wrong
        .iter()
        .map(|w| {
            let kind = if w.rule.is_some() {
                "missed"
            } else {
                "false positive"
            };
            json!({"set": w.set, "kind": kind, "prompt": w.prompt, "rule": w.rule,
                   "found": w.found})
        })
        .collect();
    (rows, wrong)
}

fn reach_json(row: &ReachRow) -> Value {
    let f = &row.figures;
    let traps = f.traps.as_ref().map_or(Value::Null, |kinds| {
        kinds
            .iter()
            .map(|(kind, n, hit)| (kind.clone(), json!({"traps": n, "reached": hit})))
            .collect::<serde_json::Map<_, _>>()
            .into()
    });
    json!({"set": row.set, "system": row.system, "slice": row.slice, "tasks": f.tasks,
           "every_rule": num(f.every), "at_least_one_rule": num(f.any),
           "replaced_rules": f.updated, "replaced_rule_only": num(f.stale_only),
           "traps": traps, "p50_ms": f.p50.as_secs_f64() * 1000.0,
           "p95_ms": f.p95.as_secs_f64() * 1000.0})
}

fn num(x: f64) -> Value {
    if x.is_nan() { Value::Null } else { json!(x) }
}
