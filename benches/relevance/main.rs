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
//! Run: `cargo bench --bench relevance` (`-- --json` for one JSON object instead of the
//! table). `RELEVANCE_BENCH_CONVERSATIONS=N` takes the first N LoCoMo conversations;
//! `RELEVANCE_BENCH_KEEP=1` keeps the data dir to inspect.
// The bench's output is its report: it prints, unlike the crate.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod coding;
mod locomo;
mod product;
mod reference;
mod remem;
mod score;
mod set;

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use product::Product;
use score::Row;
use set::Set;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Results scored per query: what `--limit` asks for.
pub const DEPTH: usize = 10;

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
    let mut sets = Vec::new();
    let mut notes = Vec::new();
    match std::env::var_os("CLAUDE_MEM_BENCH_LOCOMO") {
        Some(path) => {
            let limit =
                match std::env::var("RELEVANCE_BENCH_CONVERSATIONS") {
                    Ok(n) => Some(n.parse().map_err(|_| {
                        format!("RELEVANCE_BENCH_CONVERSATIONS={n:?}: not a number")
                    })?),
                    Err(_) => None,
                };
            sets.push(locomo::read(Path::new(&path), limit)?);
        }
        None => notes.push(
            "LoCoMo skipped: CLAUDE_MEM_BENCH_LOCOMO is not set (docs/performance.md, \
             \"Retrieval quality\", says how to get it)"
                .to_string(),
        ),
    }
    sets.push(remem::read(&data.join("remem-golden.json"))?);
    sets.push(coding::read(
        &data,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks"),
    )?);

    let tmp = tempfile::Builder::new()
        .prefix("relevance-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let product = Product::new(Path::new(env!("CARGO_BIN_EXE_claude-mem")), tmp.path());
    let mut rows = Vec::new();
    for set in &mut sets {
        set.add_unrelated(&unrelated);
        rows.extend(measure(&product, set, &mut notes)?);
    }
    let took = started.elapsed().as_secs_f64();
    if json {
        println!("{}", score::json(&rows, &notes, took));
    } else {
        println!("{}", score::table(&rows, &notes, took));
    }
    if std::env::var_os("RELEVANCE_BENCH_KEEP").is_some() {
        println!("kept {}", tmp.keep().display());
    }
    Ok(())
}

/// Loads one set and scores it: the product's search, the FTS5 reference, `hook prompt`.
fn measure(product: &Product, set: &Set, notes: &mut Vec<String>) -> Result<Vec<Row>> {
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
    let fts5 = reference::search_all(set)?;
    rows.extend(score::rows(set, "FTS5 OR reference", &fts5));
    let prompt = product.prompt_all(set, &stored)?;
    rows.extend(score::rows(set, "hook prompt recall", &prompt));
    Ok(rows)
}
