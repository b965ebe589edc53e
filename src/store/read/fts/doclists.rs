//! The rows that hold each of a few words, or that a word is in too many, in one statement.
//!
//! Per-prompt recall looks each of a prompt's words up on its own, up to [`recall::COMMON`]
//! rows and one more to tell that a word is too common to count. As one `MATCH` per word, every
//! row came back through SQLite's virtual machine and rusqlite, about 900 instructions a row,
//! and a prompt of common words reads thousands of rows: most of what recall cost. Here one
//! query matches the OR of the words and, on its first row, `cmem_doclists(fts, most)` (an FTS5
//! auxiliary function registered on the connection) walks each phrase's rows with FTS5's own
//! `xQueryPhrase`, in C, the same rows in the same order as a `MATCH` of that phrase alone,
//! and stops one row past `most`.
//!
//! [`recall::COMMON`]: super::recall::COMMON

use std::ffi::{c_int, c_void};

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension, ffi, params};

use super::auxiliary::{Answer, answer, ok};

/// Registers `cmem_doclists(fts, most)` on `conn`.
pub fn register(conn: &Connection) -> Result<()> {
    super::auxiliary::register(
        conn,
        &[(c"cmem_doclists", doclists)],
        "per-prompt recall's lookup",
    )
}

/// The rows (FTS rowids, ascending) of each of `words` (as the tokenizer reads each one alone,
/// a phrase), or `None` for a word in more than `most` rows.
pub fn read(index: &Connection, words: &[String], most: usize) -> Result<Vec<Option<Vec<i64>>>> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let query: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    let lists = index
        .query_row(
            "SELECT cmem_doclists(fts, ?2) FROM fts WHERE fts MATCH ?1 LIMIT 1",
            params![query.join(" OR "), most as i64],
            |r| Ok(decode(r.get_ref(0)?.as_blob()?)),
        )
        .optional()?;
    match lists {
        // No row holds any of the words.
        None => Ok(vec![Some(Vec::new()); words.len()]),
        Some(Some(lists)) if lists.len() == words.len() => Ok(lists),
        Some(_) => bail!(
            "the search index's lookup of {} words made no sense",
            words.len()
        ),
    }
}

/// Marks a phrase in more rows than the bound, in place of its number of rows.
const MORE: u32 = u32::MAX;

/// The function's result: for each phrase, its number of rows (u32, or [`MORE`]) then the rows
/// (i64), all little-endian; `None` when it is not that.
fn decode(blob: &[u8]) -> Option<Vec<Option<Vec<i64>>>> {
    let mut lists = Vec::new();
    let mut rest = blob;
    while let Some((count, tail)) = rest.split_first_chunk::<4>() {
        let count = u32::from_le_bytes(*count);
        if count == MORE {
            lists.push(None);
            rest = tail;
            continue;
        }
        let (rows, tail) = tail.split_at_checked(count as usize * 8)?;
        lists.push(Some(
            rows.chunks_exact(8)
                .map(|r| i64::from_le_bytes(r.try_into().unwrap_or_default()))
                .collect(),
        ));
        rest = tail;
    }
    rest.is_empty().then_some(lists)
}

/// What the walk of one phrase collects.
struct Rows {
    api: *const ffi::Fts5ExtensionApi,
    rows: Vec<i64>,
    /// The walk stops at this many rows.
    bound: usize,
}

/// The auxiliary function (see the module's doc).
unsafe extern "C" fn doclists(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 hands a valid API, context, result context and `n` arguments for the
    // duration of the call; `rows` outlives each `xQueryPhrase`, which calls `collect` with it.
    unsafe {
        answer(ctx, || {
            let api_ref = &*api;
            let (Some(phrase_count), Some(query_phrase)) =
                (api_ref.xPhraseCount, api_ref.xQueryPhrase)
            else {
                return Err(ffi::SQLITE_ERROR);
            };
            if n != 1 {
                return Err(ffi::SQLITE_MISUSE);
            }
            let most = usize::try_from(ffi::sqlite3_value_int64(*values)).unwrap_or(0);
            let mut rows = Rows {
                api,
                rows: Vec::with_capacity(most.saturating_add(1).min(4096)),
                bound: most.saturating_add(1),
            };
            let mut blob = Vec::new();
            for phrase in 0..phrase_count(fts) {
                rows.rows.clear();
                let data = (&raw mut rows).cast::<c_void>();
                ok(query_phrase(fts, phrase, data, Some(collect)))?;
                if rows.rows.len() > most {
                    blob.extend_from_slice(&MORE.to_le_bytes());
                    continue;
                }
                blob.extend_from_slice(&(rows.rows.len() as u32).to_le_bytes());
                for row in &rows.rows {
                    blob.extend_from_slice(&row.to_le_bytes());
                }
            }
            Ok(Answer::Blob(blob))
        });
    }
}

/// `xQueryPhrase`'s callback, once per row of the phrase: keeps its rowid, and stops the walk
/// at the bound.
unsafe extern "C" fn collect(
    _api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the `Rows` that `doclists` passed, alive and not otherwise borrowed
    // during the walk; its API is FTS5's.
    let rows = unsafe { &mut *data.cast::<Rows>() };
    // SAFETY: `rows.api` is the extension API FTS5 handed `doclists`, valid for the whole
    // query; reading one of its function pointers.
    let Some(rowid) = (unsafe { (*rows.api).xRowid }) else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: `fts` is the context FTS5 passed this callback, for the row it stands on.
    rows.rows.push(unsafe { rowid(fts) });
    if rows.rows.len() >= rows.bound {
        ffi::SQLITE_DONE
    } else {
        ffi::SQLITE_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of `docs` (head, body), rowids from 1.
    fn index(docs: &[(&str, &str)]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        super::super::tokenizer::register(&conn).unwrap();
        register(&conn).unwrap();
        super::super::create(&conn, None, 0).unwrap();
        for (head, body) in docs {
            conn.execute("INSERT INTO fts (head, body) VALUES (?1, ?2)", [head, body])
                .unwrap();
        }
        conn
    }

    /// What one `MATCH` of the word alone finds, `None` past `most` rows.
    fn matched(conn: &Connection, word: &str, most: usize) -> Option<Vec<i64>> {
        let mut stmt = conn
            .prepare("SELECT rowid FROM fts WHERE fts MATCH ?1 LIMIT ?2")
            .unwrap();
        let rows: Vec<i64> = stmt
            .query_map(params![format!("\"{word}\""), most as i64 + 1], |r| {
                r.get(0)
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        (rows.len() <= most).then_some(rows)
    }

    #[test]
    fn each_word_finds_the_rows_its_own_match_finds_or_that_it_is_in_too_many() {
        let mut docs = Vec::new();
        for i in 0..40 {
            let body = match i % 4 {
                0 => "the login timeout expired",
                1 => "cargo test failed in upsertSession",
                2 => "merged the branch; tests pass",
                _ => "東京 café notes",
            };
            docs.push((if i % 5 == 0 { "login" } else { "misc" }, body));
        }
        let conn = index(&docs);
        // What was deleted is found by neither.
        conn.execute("DELETE FROM fts WHERE rowid IN (3, 9)", [])
            .unwrap();
        let words: Vec<String> = [
            "login", "timeout", "tests", "upsert", "session", "東京", "cafe", "merge", "absent",
            "expired",
        ]
        .map(String::from)
        .to_vec();
        for most in [0, 1, 5, 9, 10, 11, 1000] {
            let lists = read(&conn, &words, most).unwrap();
            let one_by_one: Vec<_> = words.iter().map(|w| matched(&conn, w, most)).collect();
            assert_eq!(lists, one_by_one, "most {most}");
        }
        let lists = read(&conn, &words, 15).unwrap();
        assert_eq!(lists[0].as_ref().map(Vec::len), Some(15));
        assert_eq!(read(&conn, &words, 14).unwrap()[0], None);
    }

    #[test]
    fn words_no_row_holds_find_nothing() {
        let conn = index(&[("login", "timeout")]);
        let words = ["absent", "missing"].map(String::from).to_vec();
        assert_eq!(read(&conn, &words, 10).unwrap(), vec![Some(Vec::new()); 2]);
        assert_eq!(read(&conn, &[], 10).unwrap(), Vec::new());
    }

    #[test]
    fn a_word_the_tokenizer_drops_finds_nothing_and_keeps_the_others_in_place() {
        let conn = index(&[("login", "timeout"), ("timeout", "later")]);
        // Longer than a token may be: the tokenizer leaves it out of the index and the query.
        let long = "a".repeat(80);
        let words = ["timeout".to_string(), long.clone(), "login".to_string()].to_vec();
        let lists = read(&conn, &words, 10).unwrap();
        assert_eq!(
            lists,
            vec![Some(vec![1, 2]), matched(&conn, &long, 10), Some(vec![1])]
        );
    }
}
