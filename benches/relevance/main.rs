//! How well memory comes back: public data sets with real queries and labelled evidence are
//! written through the product's own write path, then each query is put to the product as a
//! user (or Claude Code) would, and what comes back is scored.
//!
//! Sets:
//! - LoCoMo (snap-research/locomo): 10 long two-speaker conversations, each turn a prompt of a
//!   session of its own conversation's project (`hook prompt`, one process a turn); its
//!   questions of categories 1-4 with turn-level evidence. Its text has no licence to
//!   redistribute, so it is read from `CLAUDE_MEM_BENCH_LOCOMO` (docs/performance.md says how
//!   to get it) and the set is skipped, with a line saying so, when that is not set.
//! - remem's `eval/golden.json` (MIT, in benches/data): 105 memories in 15 projects, brought in
//!   by `claude-mem import` as memories; 71 queries in slices (paraphrase, temporal, knowledge
//!   update, multi-hop, abstention, ...).
//! - coding (ours, in benches/data and tests/fixtures/hooks): this repository's history as
//!   Claude Code sessions, one per commit (its subject the prompt, an Edit of the first hunk of
//!   up to two files, `git diff --stat`, its message Claude's last message), and the real
//!   Claude Code fixture sessions, each event run through its hook; 47 queries written by hand.
//! - conventions (ours, in benches/data): coding projects where a lead states standing rules
//!   over sessions, and later changes some, each session through every hook from SessionStart
//!   to SessionEnd; coding tasks asked after them, each with the turns that stated the rules
//!   that apply (their current version); traps that must never reach the model as a rule.
//!   Scored by turn; its data dir is a separate one.
//!
//! Scored per set: `search --json --limit 10 --project P -- WORDS` as a whole process, and the
//! same corpus in plain SQLite FTS5 (porter unicode61, OR of the query's non-stopword terms,
//! bm25), the reference the issue measured outside the product. Each set also asks prompts
//! unrelated to it (benches/data/unrelated.txt): a good answer to those is nothing.
//!
//! Per-prompt recall: each question is also submitted as a prompt to `hook prompt` (recall on,
//! its default bar and budget), and what its `additionalContext` names is scored the same way.
//! An item counts as recalled when its short id (8 characters, as every command prints them)
//! appears in the context, ranked by where it first appears; hit@10 is then the share of
//! questions with a gold item in the injection, and "abstains" the share of unrelated prompts
//! answered with nothing. The hook reads the index the searches left and never writes it, so
//! the questions, each in a session of its own, are not indexed and never answer each other.
//!
//! Reaching the model (the conventions set, see `reach`): each task in a new session of its
//! project (`hook context` from startup, then the task to `hook prompt`), from the data dir as
//! the sessions left it; a rule reaches the model when its words or its prompt's short id are
//! in either context. Beside it, the reference's first 5 results as if given with the prompt.
//!
//! Finding standing instructions (see `detection`): the held-out prompts (ours, in
//! benches/data, written without reading the detector) and the conventions set's turns, each
//! prompt the first of a session of its own in a project of its own; recall over the prompts
//! that state one, precision over the instructions found, false positives per 100 ordinary
//! prompts, and the held-out prompts it got wrong. Its data dir is a separate one.
//!
//! Run: `cargo bench --bench relevance` (`-- --json` for one JSON object instead of the
//! table). `RELEVANCE_BENCH_CONVERSATIONS=N` takes the first N LoCoMo conversations;
//! `RELEVANCE_BENCH_SETS=conventions,coding` scores only the sets named (the first word of each
//! name, any letter case: `heldout` is the held-out prompts, and `conventions` also scores
//! the detection on its turns); `heldout2`, the second held-out set, is kept apart from
//! tuning and scored only when named there, with no list of the prompts it got wrong;
//! `RELEVANCE_BENCH_KEEP=1` keeps the data dirs to inspect.
// The bench's output is its report: it prints, unlike the crate.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod coding;
mod conventions;
mod detection;
mod locomo;
mod product;
mod reach;
mod reference;
mod remem;
mod score;
mod set;

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use conventions::Standing;
use detection::Labelled;
use product::Product;
use score::{Detection, ReachRow, Row};
use set::Set;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Results scored per query: what `--limit` asks for.
pub const DEPTH: usize = 10;

/// The reference's results counted as given with a prompt: what per-prompt recall gives at most.
const GIVEN_WITH_A_PROMPT: usize = 5;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("relevance bench: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let json = std::env::args().any(|a| a == "--json");
    let started = Instant::now();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    let unrelated = set::unrelated(&data.join("unrelated.txt"))?;
    let mut notes = Vec::new();
    let mut sets = read_sets(&data, &mut notes)?;
    let labelled = read_labelled(&data)?;

    let tmp = tempfile::Builder::new()
        .prefix("relevance-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let bin = Path::new(env!("CARGO_BIN_EXE_claude-mem"));
    let product = Product::new(bin, tmp.path());
    let (mut rows, mut reached) = (Vec::new(), Vec::new());
    for (set, standing) in &mut sets {
        set.add_unrelated(&unrelated);
        let (more, reach) = match standing {
            // A data dir of its own: it is copied before each task.
            Some(standing) => {
                let root = tmp.path().join(set.name);
                std::fs::create_dir(&root)?;
                measure(&Product::new(bin, &root), set, Some(standing), &mut notes)?
            }
            None => measure(&product, set, None, &mut notes)?,
        };
        rows.extend(more);
        reached.extend(reach);
    }
    let detection = detect(bin, tmp.path(), &labelled)?;
    let took = started.elapsed().as_secs_f64();
    if json {
        println!("{}", score::json(&rows, &reached, &detection, &notes, took));
    } else {
        println!(
            "{}",
            score::table(&rows, &reached, &detection, &notes, took)
        );
    }
    if std::env::var_os("RELEVANCE_BENCH_KEEP").is_some() {
        println!("kept {}", tmp.keep().display());
    }
    Ok(())
}

/// Whether `RELEVANCE_BENCH_SETS` names a set, or names none.
fn wanted(name: &str) -> bool {
    std::env::var("RELEVANCE_BENCH_SETS").is_err() || named(name)
}

/// Whether `RELEVANCE_BENCH_SETS` names a set: a set kept apart from tuning is scored only when
/// asked for by name, so that a plain run while tuning never shows its figures.
fn named(name: &str) -> bool {
    std::env::var("RELEVANCE_BENCH_SETS")
        .is_ok_and(|only| only.split(',').any(|w| w.trim().eq_ignore_ascii_case(name)))
}

/// The sets to score, each with what the conventions set knows beyond its queries.
fn read_sets(data: &Path, notes: &mut Vec<String>) -> Result<Vec<(Set, Option<Standing>)>> {
    let mut sets = Vec::new();
    match std::env::var_os("CLAUDE_MEM_BENCH_LOCOMO") {
        Some(_) if !wanted("locomo") => {}
        Some(path) => {
            let limit =
                match std::env::var("RELEVANCE_BENCH_CONVERSATIONS") {
                    Ok(n) => Some(n.parse().map_err(|_| {
                        format!("RELEVANCE_BENCH_CONVERSATIONS={n:?}: not a number")
                    })?),
                    Err(_) => None,
                };
            sets.push((locomo::read(Path::new(&path), limit)?, None));
        }
        None => notes.push(
            "LoCoMo skipped: CLAUDE_MEM_BENCH_LOCOMO is not set (docs/performance.md, \
             \"Retrieval quality\", says how to get it)"
                .to_string(),
        ),
    }
    if wanted("remem") {
        sets.push((remem::read(&data.join("remem-golden.json"))?, None));
    }
    if wanted("coding") {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks");
        sets.push((coding::read(data, &fixtures)?, None));
    }
    if wanted("conventions") {
        let (set, standing) = conventions::read(&data.join("conventions.json"))?;
        sets.push((set, Some(standing)));
    }
    Ok(sets)
}

/// The prompts whose standing instructions are looked for: the held-out ones, then, for
/// comparison, the conventions set's turns.
fn read_labelled(data: &Path) -> Result<Vec<Labelled>> {
    let mut labelled = Vec::new();
    if wanted("heldout") {
        labelled.push(detection::heldout(
            &data.join("conventions-heldout.json"),
            "heldout",
        )?);
    }
    // Kept apart from tuning, to be measured once at the end: only when named, misses not listed.
    if named("heldout2") {
        labelled.push(detection::heldout(
            &data.join("conventions-heldout2.json"),
            "heldout2",
        )?);
    }
    if wanted("conventions") {
        let (set, standing) = conventions::read(&data.join("conventions.json"))?;
        labelled.push(detection::conventions(&set, &standing));
    }
    Ok(labelled)
}

/// Each labelled prompt through the product in a data dir of its own, scored.
fn detect(bin: &Path, tmp: &Path, labelled: &[Labelled]) -> Result<Detection> {
    if labelled.is_empty() {
        return Ok(Detection::default());
    }
    let root = tmp.join("detection");
    std::fs::create_dir(&root)?;
    let started = Instant::now();
    let found = detection::measure(&Product::new(bin, &root), labelled)?;
    eprintln!(
        "detection: {} prompts in {:.1} s",
        labelled.iter().map(|l| l.prompts.len()).sum::<usize>(),
        started.elapsed().as_secs_f64()
    );
    let mut detection = Detection::default();
    for (set, found) in labelled.iter().zip(&found) {
        detection.rows.extend(score::detect_rows(set, found));
        // Not heldout2's: prompts listed as missed would be tuned on.
        if set.name == "heldout" {
            detection.wrong.extend(detection::wrong(set, found));
        }
    }
    Ok(detection)
}

/// Loads one set and scores it: the product's search, the FTS5 reference, `hook prompt`; and
/// for the conventions set, what reaches the model in a new session.
fn measure(
    product: &Product,
    set: &Set,
    standing: Option<&Standing>,
    notes: &mut Vec<String>,
) -> Result<(Vec<Row>, Vec<ReachRow>)> {
    let loading = Instant::now();
    let stored = product.load(set)?;
    eprintln!(
        "{}: {} items stored in {:.1} s; {} queries",
        set.name,
        stored.items,
        loading.elapsed().as_secs_f64(),
        set.queries.len()
    );
    if stored.missing > 0 {
        notes.push(format!(
            "{}: {} of {} documents are not stored under the key they are scored by",
            set.name,
            stored.missing,
            set.docs.len()
        ));
    }
    let mut rows = Vec::new();
    let search = product.search_all(set)?;
    rows.extend(score::rows(set, "claude-mem search", &search));
    // Before the questions go to `hook prompt`, which records them in the data dir.
    let given = standing
        .map(|standing| reach::ask_all(product, set, standing))
        .transpose()?;
    let fts5 = reference::search_all(set)?;
    rows.extend(score::rows(set, "FTS5 OR reference", &fts5));
    let prompt = product.prompt_all(set, &stored)?;
    rows.extend(score::rows(set, "hook prompt recall", &prompt));
    let mut reached = Vec::new();
    if let (Some(standing), Some(given)) = (standing, given) {
        let outcomes = reach::product(set, standing, &stored, &given);
        let traps = reach::traps(standing, &stored, &given);
        reached.extend(score::reach_rows(
            set,
            "hook context + hook prompt",
            &outcomes,
            Some(&traps),
        ));
        let outcomes = reach::reference(set, standing, &fts5, GIVEN_WITH_A_PROMPT);
        reached.extend(score::reach_rows(
            set,
            "FTS5 OR reference, first 5 given",
            &outcomes,
            None,
        ));
    }
    Ok((rows, reached))
}
