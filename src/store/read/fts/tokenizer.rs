//! The `cmem` FTS5 tokenizer: words as developers search for them.
//!
//! SQLite's own tokenizers see `upsertSession` as one word and `merge.rs` as two, so `session`
//! finds nothing in the first and a camelCase identifier can only be found whole. This one
//! splits words (runs of letters, digits and `_`) at underscores and at camelCase humps, and
//! also indexes each camelCase word whole at the position of its first part (a colocated
//! token), so that `camel`, `case`, `camelCase` and `camelcase` all find `camelCase`, and
//! `upsert_session`, `upsertSession` and "upsert session" find one another. Everything is
//! lowercased. It runs under SQLite's `porter` stemmer (`tokenize = 'porter cmem'`), so `test`
//! finds `tests` and `merge` finds `merged`.
//!
//! The index file cannot be searched by a connection that has not registered it: it is our
//! cache, read only by this binary.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use anyhow::{Result, bail};
use rusqlite::Connection;
use rusqlite::ffi;

/// The name the index's `CREATE VIRTUAL TABLE` refers to (`tokenize = 'porter cmem'`).
const NAME: &CStr = c"cmem";
/// Longer tokens are hashes, base64 and minified code: noise that bloats the index. A SHA-256
/// in hex (64) still fits.
const MAX_TOKEN_BYTES: usize = 64;

/// Makes the tokenizer known to `conn` (each connection needs it before it uses the table).
pub fn register(conn: &Connection) -> Result<()> {
    let mut tokenizer = ffi::fts5_tokenizer {
        xCreate: Some(create),
        xDelete: Some(delete),
        xTokenize: Some(tokenize),
    };
    // SAFETY: the handle stays valid while `conn` is borrowed; the statement is finalized
    // before returning; FTS5 copies `tokenizer` during the call.
    unsafe {
        let api = fts5_api(conn.handle())?;
        let Some(create_tokenizer) = (*api).xCreateTokenizer else {
            bail!("this SQLite's FTS5 cannot register tokenizers");
        };
        let rc = create_tokenizer(api, NAME.as_ptr(), ptr::null_mut(), &mut tokenizer, None);
        if rc != ffi::SQLITE_OK {
            bail!("cannot register the search tokenizer (SQLite error {rc})");
        }
    }
    Ok(())
}

/// FTS5's API object, which SQLite hands out through `SELECT fts5(?)` bound to a pointer.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt = ptr::null_mut();
    // SAFETY: `db` is an open connection; `api` outlives the statement.
    unsafe {
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            bail!("this SQLite has no FTS5 (SQLite error {rc})");
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        bail!("this SQLite has no FTS5 API");
    }
    Ok(api)
}

/// The tokenizer has no state: every instance is this one byte.
static INSTANCE: u8 = 0;

unsafe extern "C" fn create(
    _user_data: *mut c_void,
    _args: *mut *const c_char,
    _n_args: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    // SAFETY: FTS5 passes a valid place for the instance.
    unsafe { *out = (&raw const INSTANCE).cast_mut().cast() };
    ffi::SQLITE_OK
}

unsafe extern "C" fn delete(_instance: *mut ffi::Fts5Tokenizer) {}

type TokenCallback = unsafe extern "C" fn(
    ctx: *mut c_void,
    flags: c_int,
    token: *const c_char,
    len: c_int,
    start: c_int,
    end: c_int,
) -> c_int;

unsafe extern "C" fn tokenize(
    _instance: *mut ffi::Fts5Tokenizer,
    ctx: *mut c_void,
    flags: c_int,
    text: *const c_char,
    len: c_int,
    callback: Option<TokenCallback>,
) -> c_int {
    let Some(callback) = callback else {
        return ffi::SQLITE_MISUSE;
    };
    if text.is_null() || len <= 0 {
        return ffi::SQLITE_OK;
    }
    // SAFETY: FTS5 hands `len` readable bytes that live for the call.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len as usize) };
    let query = flags & ffi::FTS5_TOKENIZE_QUERY != 0;
    // A panic must not unwind into C.
    catch_unwind(AssertUnwindSafe(|| {
        let mut rc = ffi::SQLITE_OK;
        let mut offset = 0;
        // Text that is not UTF-8 (SQLite does not check) is read as its valid stretches.
        for chunk in bytes.utf8_chunks() {
            let valid = chunk.valid();
            each_token(valid, query, &mut |token, start, end, colocated| {
                let flags = if colocated {
                    ffi::FTS5_TOKEN_COLOCATED
                } else {
                    0
                };
                // SAFETY: `token` lives for the call; offsets are within `text`.
                rc = unsafe {
                    callback(
                        ctx,
                        flags,
                        token.as_ptr().cast(),
                        token.len() as c_int,
                        (offset + start) as c_int,
                        (offset + end) as c_int,
                    )
                };
                rc == ffi::SQLITE_OK
            });
            if rc != ffi::SQLITE_OK {
                break;
            }
            offset += valid.len() + chunk.invalid().len();
        }
        rc
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

/// Calls `emit(token, start, end, colocated)` for each token of `text` (byte offsets into it)
/// until it returns false. A query gets the parts only: its camelCase words then match the
/// parts in the index, and a word typed in lower case matches the colocated whole.
pub fn each_token(
    text: &str,
    query: bool,
    emit: &mut dyn FnMut(&str, usize, usize, bool) -> bool,
) -> bool {
    let mut lower = String::new();
    let mut token = |piece: &str, start: usize, colocated: bool| -> bool {
        lower.clear();
        if piece.is_ascii() {
            lower.push_str(piece);
            lower.make_ascii_lowercase();
        } else {
            lower.extend(piece.chars().flat_map(char::to_lowercase));
        }
        lower.len() > MAX_TOKEN_BYTES || emit(&lower, start, start + piece.len(), colocated)
    };
    for (word_start, word) in words(text) {
        let mut at = word_start;
        for segment in word.split('_') {
            let mut parts = humps(segment).peekable();
            let mut first = true;
            while let Some((from, to)) = parts.next() {
                if !token(&segment[from..to], at + from, false) {
                    return false;
                }
                if first && !query && parts.peek().is_some() && !token(segment, at, true) {
                    return false;
                }
                first = false;
            }
            at += segment.len() + 1;
        }
    }
    true
}

/// Runs of letters, digits and `_`, with their byte offsets. ASCII, most of what is indexed,
/// is classified without decoding.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let class = |at: usize| -> (bool, usize) {
        let b = text.as_bytes()[at];
        if b.is_ascii() {
            return (b.is_ascii_alphanumeric() || b == b'_', 1);
        }
        let c = text[at..].chars().next().unwrap_or(' ');
        (c.is_alphanumeric(), c.len_utf8())
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            if at >= text.len() {
                return None;
            }
            let (word, len) = class(at);
            if word {
                break;
            }
            at += len;
        }
        let start = at;
        while at < text.len() {
            let (word, len) = class(at);
            if !word {
                break;
            }
            at += len;
        }
        Some((start, &text[start..at]))
    })
}

/// The camelCase parts of a word without underscores, as byte ranges: a part starts at an upper
/// case letter after a lower case letter or a digit (`camel|Case`, `v2|Beta`), and before the
/// last capital of a run followed by lower case (`HTTP|Server`).
fn humps(segment: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    // Most words have no capital after their first letter: one part, found without decoding.
    let simple = segment
        .bytes()
        .skip(1)
        .all(|b| !b.is_ascii_uppercase() && b.is_ascii());
    let mut chars = segment.char_indices().peekable();
    let mut prev: Option<char> = None;
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= segment.len() {
            return None;
        }
        if simple {
            start = segment.len();
            return Some((0, segment.len()));
        }
        while let Some((at, c)) = chars.next() {
            let next_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = at > start
                && c.is_uppercase()
                && prev.is_some_and(|p| {
                    p.is_lowercase() || p.is_numeric() || (p.is_uppercase() && next_lower)
                });
            prev = Some(c);
            if boundary {
                let part = (start, at);
                start = at;
                return Some(part);
            }
        }
        let part = (start, segment.len());
        start = segment.len();
        Some(part)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str, query: bool) -> Vec<String> {
        let mut out = Vec::new();
        each_token(text, query, &mut |token, start, end, colocated| {
            let mark = if colocated { "+" } else { "" };
            out.push(format!("{mark}{token}@{}", &text[start..end]));
            true
        });
        out
    }

    #[test]
    fn splits_identifiers_and_keeps_camel_case_words_whole() {
        assert_eq!(
            tokens("fn upsertSession(x_y)", false),
            [
                "fn@fn",
                "upsert@upsert",
                "+upsertsession@upsertSession",
                "session@Session",
                "x@x",
                "y@y"
            ]
        );
        assert_eq!(
            tokens("HTTPServer merge.rs v2Beta", false),
            [
                "http@HTTP",
                "+httpserver@HTTPServer",
                "server@Server",
                "merge@merge",
                "rs@rs",
                "v2@v2",
                "+v2beta@v2Beta",
                "beta@Beta"
            ]
        );
        assert_eq!(
            tokens("upsertSession", true),
            ["upsert@upsert", "session@Session"]
        );
    }

    #[test]
    fn lowercases_any_script_and_skips_noise() {
        assert_eq!(
            tokens("Ärger — ÉCOLE 日本語", false),
            ["ärger@Ärger", "école@ÉCOLE", "日本語@日本語"]
        );
        let hash = "a".repeat(65);
        assert_eq!(tokens(&format!("x {hash} y"), false), ["x@x", "y@y"]);
        assert!(tokens("__ -- ::", false).is_empty());
    }
}
