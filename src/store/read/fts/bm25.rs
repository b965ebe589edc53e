//! FTS5's `bm25()` as an auxiliary function of ours, `cmem_bm25()`: the same score to the bit
//! (the arithmetic of SQLite 3.54's `fts5Bm25Function`, in its order), which also keeps what
//! it counted for the query.
//!
//! bm25 weighs each phrase of a query by how many rows of the index hold it, counted once per
//! query by visiting every such row, and the ranking weighs the query's terms by the same
//! counts (`rank::weights`). Asked of the index a second time (`cmem_rarity`), the count was 71
//! of the 430 million instructions of an MCP `search` of `cargo test` (two words most of
//! 100,000 captures hold) and 41 of 204 million for `merge settings`. So a search's query of
//! its candidates ranks by this function, and the ranking takes the counts it made
//! ([`take_counts`]).

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use rusqlite::{Connection, ffi};

use super::auxiliary::{Answer, answer, first_match, ok};
use super::lengths::Table;

/// bm25's constants, as FTS5 has them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What a query's bm25 counted: the rows of the index, and how many hold each phrase of the
/// expression, in FTS5's order of the phrases.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub rows: i64,
    pub held: Vec<i64>,
}

thread_local! {
    /// The counts of the last query that [`bm25`] scored on this thread (SQLite calls it on
    /// the thread that steps the statement).
    static COUNTED: RefCell<Option<Counts>> = const { RefCell::new(None) };
    /// How many rows hold each phrase of the next query [`bm25`] scores, when they are known
    /// (see `held.rs`).
    static KNOWN: RefCell<Option<Vec<i64>>> = const { RefCell::new(None) };
    /// The rows' lengths, when the index keeps them (see `lengths.rs`).
    static LENGTHS: RefCell<Option<Rc<Table>>> = const { RefCell::new(None) };
    /// The phrases found in the row [`bm25`] scored last (bit n for phrase n, the first 64).
    static MATCHED: Cell<u64> = const { Cell::new(0) };
}

/// Tells [`bm25`] how many rows hold each phrase of the next query it scores on this thread, so
/// that it does not count them; `None` takes back what was told and not used.
pub fn know(held: Option<Vec<i64>>) {
    KNOWN.with(|known| *known.borrow_mut() = held);
}

/// Tells [`bm25`] the lengths of the rows it scores on this thread, for a query whose calls
/// give none (`None`: it looks each up in FTS5's own table).
pub fn lengths(table: Option<Rc<Table>>) {
    LENGTHS.with(|lengths| *lengths.borrow_mut() = table);
}

/// The phrases of the query found in the row [`bm25`] scored last on this thread, bit n for
/// phrase n: what `cmem_matched(fts)` answers, read as bm25 reads every phrase's matches anyway
/// (asked of FTS5 again, in a second function of each row, it cost a thirtieth of a search).
pub fn matched() -> u64 {
    MATCHED.with(Cell::get)
}

/// The counts of the query [`bm25`] last scored on this thread, once; `None` when it scored
/// none since they were last taken (take them before a query too: a query that matches
/// nothing scores nothing).
pub fn take_counts() -> Option<Counts> {
    COUNTED.with(|counted| counted.borrow_mut().take())
}

/// What is computed once per query, as FTS5 keeps it: the average row's tokens, each phrase's
/// IDF, the rows' lengths when the index keeps them, and room for a row's columns' weights and
/// frequencies.
struct Query {
    lengths: Option<Rc<Table>>,
    weights: Vec<f64>,
    avgdl: f64,
    idf: Vec<f64>,
    freq: Vec<f64>,
}

/// `cmem_bm25(fts, w0, w1, ...)`: `bm25(fts, w0, w1, ...)`, bit for bit. A value past the
/// columns' weights is the row's length in tokens ([`tokens`], kept in `docs`), which FTS5
/// would otherwise look up in its own table for each row: an eighth of a search of two common
/// words.
pub(super) unsafe extern "C" fn bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 hands a valid API, context and result context for the duration of the
    // call, and `n` values; the query's data lives in FTS5's keeping until the query ends.
    unsafe {
        answer(ctx, || {
            let api = &*api;
            let (Some(phrase_first), Some(phrase_next), Some(column_size), Some(column_count)) = (
                api.xPhraseFirst,
                api.xPhraseNext,
                api.xColumnSize,
                api.xColumnCount,
            ) else {
                return Err(ffi::SQLITE_ERROR);
            };
            let columns = column_count(fts);
            let weight = |column: c_int| {
                if n > column {
                    ffi::sqlite3_value_double(*values.offset(column as isize))
                } else {
                    1.0
                }
            };
            let query = &mut *query(api, fts)?;
            // Read once a row, not once a match: the same function may be called with other
            // weights in the same query.
            query.weights.clear();
            query.weights.extend((0..columns).map(weight));
            // Each phrase's matches in their order (that of `xInst`, less the other phrases'),
            // without merging the phrases' lists into one as `xInst` does: the same sums.
            let mut matched = 0u64;
            for (phrase, freq) in query.freq.iter_mut().enumerate() {
                *freq = 0.0;
                let (mut iter, mut column) = first_match(phrase_first, fts, phrase as c_int)?;
                if column >= 0 && phrase < 64 {
                    matched |= 1 << phrase;
                }
                let mut offset = 0;
                while column >= 0 {
                    *freq += query.weights.get(column as usize).copied().unwrap_or(1.0);
                    phrase_next(fts, &mut iter, &mut column, &mut offset);
                }
            }
            MATCHED.with(|last| last.set(matched));
            let d = if n > columns {
                ffi::sqlite3_value_double(*values.offset(columns as isize))
            } else if let Some(d) = known_length(api, fts, query.lengths.as_deref()) {
                d
            } else {
                let mut tokens: c_int = 0;
                ok(column_size(fts, -1, &mut tokens))?;
                f64::from(tokens)
            };
            let mut score = 0.0;
            for (idf, freq) in query.idf.iter().zip(&query.freq) {
                score +=
                    idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1.0 - B + B * d / query.avgdl)));
            }
            // FTS5's `-1.0 * score`: the same bits.
            Ok(Answer::Real(-score))
        });
    }
}

/// The length of the row FTS5 stands on, when the index keeps the lengths (see [`lengths`]).
///
/// # Safety
/// `api` and `fts` are what FTS5 handed the function, for the duration of its call.
unsafe fn known_length(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    lengths: Option<&Table>,
) -> Option<f64> {
    let row_id = api.xRowid?;
    // SAFETY: the caller's promise.
    lengths?.get(unsafe { row_id(fts) })
}

/// The query's data, computed at its first row (and its counts kept for [`take_counts`]),
/// then kept by FTS5 for the rest.
///
/// # Safety
/// `api` and `fts` are what FTS5 handed the function, for the duration of its call.
unsafe fn query(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<*mut Query, c_int> {
    let (
        Some(get),
        Some(set),
        Some(phrase_count),
        Some(row_count),
        Some(total_size),
        Some(query_phrase),
    ) = (
        api.xGetAuxdata,
        api.xSetAuxdata,
        api.xPhraseCount,
        api.xRowCount,
        api.xColumnTotalSize,
        api.xQueryPhrase,
    )
    else {
        return Err(ffi::SQLITE_ERROR);
    };
    // SAFETY: the caller's promise; what FTS5 keeps for this function and query is a `Query`
    // of ours (set below), and each counter outlives the `xQueryPhrase` that counts into it.
    unsafe {
        let kept = get(fts, 0).cast::<Query>();
        if !kept.is_null() {
            return Ok(kept);
        }
        let mut rows: i64 = 0;
        ok(row_count(fts, &mut rows))?;
        let mut tokens: i64 = 0;
        ok(total_size(fts, -1, &mut tokens))?;
        let phrases = usize::try_from(phrase_count(fts)).unwrap_or(0);
        let known = KNOWN
            .with(|known| known.borrow_mut().take())
            .filter(|known| known.len() == phrases);
        let mut idf = Vec::with_capacity(phrases);
        let mut held = Vec::with_capacity(phrases);
        for phrase in 0..phrases {
            let mut hits: i64 = 0;
            if let Some(known) = &known {
                hits = known[phrase];
            } else {
                let counter = (&raw mut hits).cast::<c_void>();
                ok(query_phrase(fts, phrase as c_int, counter, Some(count_row)))?;
            }
            let mut value = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
            if value <= 0.0 {
                value = 1e-6;
            }
            idf.push(value);
            held.push(hits);
        }
        COUNTED.with(|counted| *counted.borrow_mut() = Some(Counts { rows, held }));
        let query = Box::into_raw(Box::new(Query {
            lengths: LENGTHS.with(|lengths| lengths.borrow().clone()),
            weights: Vec::new(),
            avgdl: tokens as f64 / rows as f64,
            idf,
            freq: vec![0.0; phrases],
        }));
        // On failure FTS5 has already freed it (through `free_query`).
        ok(set(fts, query.cast(), Some(free_query)))?;
        Ok(query)
    }
}

/// The length in tokens of the row `rowid` of the FTS5 table `fts` of `conn` (its columns'
/// together), as FTS5 keeps it: a varint a column in `fts_docsize`.
pub(super) fn tokens(conn: &Connection, rowid: i64) -> rusqlite::Result<i64> {
    let sizes: Vec<u8> = conn
        .prepare_cached("SELECT sz FROM fts_docsize WHERE id = ?1")?
        .query_row([rowid], |r| r.get(0))?;
    let mut total = 0;
    let mut rest = sizes.as_slice();
    while let Some((value, tail)) = super::schema::varint(rest) {
        total += value as i64;
        rest = tail;
    }
    Ok(total)
}

/// Counts the rows `xQueryPhrase` visits.
unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    rows: *mut c_void,
) -> c_int {
    // SAFETY: `rows` is the counter handed to `xQueryPhrase`, alive for its call.
    unsafe { *rows.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// Frees a query's data when FTS5 is done with it.
unsafe extern "C" fn free_query(query: *mut c_void) {
    // SAFETY: FTS5 hands back the pointer `query` made with `Box::into_raw`, once.
    drop(unsafe { Box::from_raw(query.cast::<Query>()) });
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    /// Queries of words, phrases, prefixes, required phrases and of one word.
    const EXPRESSIONS: [&str; 5] = [
        r#""cargo" OR "test" OR "cargo test""#,
        r#""fix" OR "locked" OR "database""#,
        r#""database is locked" AND ("database is locked" OR "merg"*)"#,
        r#""merge""#,
        r#""settings" OR "nothing holds this""#,
    ];

    /// A table of a few texts, our functions registered.
    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        super::super::tokenizer::register(&conn).unwrap();
        super::super::rank::register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE fts USING fts5(head, body, tokenize = 'porter cmem');",
        )
        .unwrap();
        let texts = [
            (
                "cargo test",
                "running 12 tests test a ... ok test b ... FAILED",
            ),
            ("Bash", "error: database is locked while merging settings"),
            (
                "merge settings",
                "the merge of settings drops keys when the file is missing",
            ),
            (
                "Read src/merge.rs",
                "fn merge_settings(a: &Settings) -> Settings { a.clone() }",
            ),
            (
                "prompt",
                "why is the database locked? fix the locked database",
            ),
            ("", "cargo build && cargo test --locked"),
        ];
        for (head, body) in texts {
            conn.execute("INSERT INTO fts (head, body) VALUES (?1, ?2)", [head, body])
                .unwrap();
        }
        conn
    }

    /// Every row's score is FTS5's own to the bit, and the counts are those `cmem_rarity`
    /// makes.
    #[test]
    fn scores_as_fts5_does_and_keeps_its_counts() {
        let conn = table();
        for expression in EXPRESSIONS {
            let _ = take_counts();
            let mut stmt = conn
                .prepare(
                    "SELECT bm25(fts, 2.0, 1.0), cmem_bm25(fts, 2.0, 1.0), bm25(fts),
                            cmem_bm25(fts), cmem_rarity(fts)
                       FROM fts WHERE fts MATCH ?1",
                )
                .unwrap();
            let rows: Vec<(f64, f64, f64, f64, String)> = stmt
                .query_map([expression], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert!(!rows.is_empty(), "{expression}");
            for (theirs, ours, theirs_plain, ours_plain, _) in &rows {
                assert_eq!(theirs.to_bits(), ours.to_bits(), "{expression}");
                assert_eq!(theirs_plain.to_bits(), ours_plain.to_bits(), "{expression}");
            }
            let counts = take_counts().expect("the query's counts");
            let said = format!(
                "{} {}",
                counts.rows,
                counts
                    .held
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            assert_eq!(said, rows[0].4, "{expression}");
            assert_eq!(take_counts(), None, "taken once");
        }
    }

    /// Given each row's length (as `docs` keeps it), and told the counts, the same bits as
    /// FTS5's; told that no row holds any phrase, other bits.
    #[test]
    fn told_the_lengths_and_the_counts_it_scores_the_same() {
        let conn = table();
        for expression in EXPRESSIONS {
            let _ = take_counts();
            let rows: Vec<(f64, i64)> = conn
                .prepare("SELECT bm25(fts, 2.0, 1.0), rowid FROM fts WHERE fts MATCH ?1")
                .unwrap()
                .query_map([expression], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let one = |held: Option<Vec<i64>>, rowid: i64| {
                know(held);
                let length = tokens(&conn, rowid).unwrap();
                conn.query_row(
                    "SELECT cmem_bm25(fts, 2.0, 1.0, ?2) FROM fts WHERE fts MATCH ?1 AND rowid = ?3",
                    rusqlite::params![expression, length, rowid],
                    |r| r.get::<_, f64>(0),
                )
                .unwrap()
            };
            let counts = {
                one(None, rows[0].1);
                take_counts().expect("the query's counts")
            };
            for &(theirs, rowid) in &rows {
                assert_eq!(theirs.to_bits(), one(None, rowid).to_bits(), "{expression}");
                let told = one(Some(counts.held.clone()), rowid);
                assert_eq!(theirs.to_bits(), told.to_bits(), "{expression}");
                assert_eq!(take_counts().as_ref(), Some(&counts));
            }
            let none = vec![0; counts.held.len()];
            assert_ne!(rows[0].0.to_bits(), one(Some(none), rows[0].1).to_bits());
        }
    }
}
