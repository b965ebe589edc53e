//! The `cmem` FTS5 tokenizer: words as developers search for them.
//!
//! SQLite's own tokenizers see `upsertSession` as one word and `merge.rs` as two, so `session`
//! finds nothing in the first and a camelCase identifier can only be found whole. This one
//! splits words (runs of letters and digits joined by `_`, or by `-` between two of them) at
//! underscores, dashes and camelCase humps, and also indexes each compound word whole, its
//! parts run together, at the position of its first part (a colocated token), so that `camel`,
//! `case`, `camelCase` and `camelcase` all find `camelCase`, and `upsert_session`,
//! `upsert-session`, `upsertSession`, `upsertsession` and "upsert session" find one another.
//! Dotted names and paths (`merge.rs`, `src/store`) are found by their parts and, as a phrase
//! of them, whole. Everything is lowercased and its accents folded (`café` is `cafe`, `ß` is
//! `ss`); Chinese, Japanese and Korean, written without spaces, are indexed by character and
//! pair of characters. It runs under SQLite's `porter` stemmer (`tokenize = 'porter cmem'`), so
//! `test` finds `tests` and `merge` finds `merged`.
//!
//! The index file cannot be searched by a connection that has not registered it: it is our
//! cache, read only by this binary.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use anyhow::{Result, bail};
use rusqlite::Connection;
use rusqlite::ffi;

use crate::text::{fold, is_cjk};

/// The name the index's `CREATE VIRTUAL TABLE` refers to (`tokenize = 'porter cmem'`).
const NAME: &CStr = c"cmem";
/// Longer tokens are hashes, base64 and minified code: noise that bloats the index. A SHA-256
/// in hex (64) still fits.
pub(super) const MAX_TOKEN_BYTES: usize = 64;

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
pub(super) unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api> {
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
            // Preparing reads the schema: another process holding the file (a maintenance
            // process closing the index) is not a missing FTS5. SQLite's error stays in the
            // chain, where per-prompt recall tells a busy index apart.
            let error = ffi::Error::new(rc);
            if matches!(
                error.code,
                ffi::ErrorCode::DatabaseBusy | ffi::ErrorCode::DatabaseLocked
            ) {
                return Err(rusqlite::Error::SqliteFailure(error, None).into());
            }
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
/// until it returns false. A query gets the parts only: its compound words then match the
/// parts in the index, and a word typed whole matches the colocated whole.
pub fn each_token(
    text: &str,
    query: bool,
    emit: &mut dyn FnMut(&str, usize, usize, bool) -> bool,
) -> bool {
    let mut folded = String::new();
    let mut token = |piece: &str, start: usize, end: usize, colocated: bool| -> bool {
        fold(piece, &mut folded);
        folded.is_empty() || folded.len() > MAX_TOKEN_BYTES || emit(&folded, start, end, colocated)
    };
    for (at, word) in words(text) {
        let more = if word.chars().next().is_some_and(is_cjk) {
            cjk(word, at, query, &mut token)
        } else {
            compound(word, at, query, &mut token)
        };
        if !more {
            return false;
        }
    }
    true
}

type Token<'a> = dyn FnMut(&str, usize, usize, bool) -> bool + 'a;

/// A word of letters and digits joined by `_` or `-`: its parts (split there and at camelCase
/// humps), and in the index also the whole, its parts run together, at the first part's
/// position (and each camelCase segment's whole at its own first part).
fn compound(word: &str, at: usize, query: bool, token: &mut Token) -> bool {
    let segments: Vec<(usize, &str)> = word
        .split(['_', '-'])
        .scan(0, |from, segment| {
            let start = *from;
            *from += segment.len() + 1;
            Some((start, segment))
        })
        .filter(|(_, segment)| !segment.is_empty())
        .collect();
    let whole: String = if segments.len() > 1 && !query {
        segments.iter().map(|(_, s)| *s).collect()
    } else {
        String::new()
    };
    let mut first = true;
    for (from, segment) in &segments {
        let mut parts = humps(segment).peekable();
        let mut first_hump = true;
        while let Some((a, b)) = parts.next() {
            if !token(&segment[a..b], at + from + a, at + from + b, false) {
                return false;
            }
            if first && !whole.is_empty() && !token(&whole, at, at + word.len(), true) {
                return false;
            }
            if first_hump
                && !query
                && parts.peek().is_some()
                && !token(segment, at + from, at + from + segment.len(), true)
            {
                return false;
            }
            first = false;
            first_hump = false;
        }
    }
    true
}

/// A run of Chinese, Japanese or Korean characters, which are written without spaces: found by
/// its characters. The index holds each character and, colocated with it, the pair it starts;
/// a query of two characters or more is the phrase of its pairs, so that `日本` finds `日本語`
/// and `本語` does too, and one character finds every word it is in.
fn cjk(run: &str, at: usize, query: bool, token: &mut Token) -> bool {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let end_of = |i: usize| chars.get(i + 1).map_or(run.len(), |&(b, _)| b);
    if query && chars.len() > 1 {
        return chars.windows(2).enumerate().all(|(i, pair)| {
            token(
                &run[pair[0].0..end_of(i + 1)],
                at + pair[0].0,
                at + end_of(i + 1),
                false,
            )
        });
    }
    for (i, &(b, _)) in chars.iter().enumerate() {
        if !token(&run[b..end_of(i)], at + b, at + end_of(i), false) {
            return false;
        }
        if !query
            && i + 1 < chars.len()
            && !token(&run[b..end_of(i + 1)], at + b, at + end_of(i + 1), true)
        {
            return false;
        }
    }
    true
}

/// Runs of letters and digits joined by `_` or by a `-` between two of them (`merge_settings`,
/// `merge-settings`, not `--flag`), with their byte offsets; a run of CJK characters is a run
/// of its own. ASCII, most of what is indexed, is classified without decoding.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Cjk,
        Other,
    }
    let class = |at: usize| -> (Class, usize) {
        let b = text.as_bytes()[at];
        if b.is_ascii() {
            let word = b.is_ascii_alphanumeric() || b == b'_';
            return (if word { Class::Word } else { Class::Other }, 1);
        }
        let c = text[at..].chars().next().unwrap_or(' ');
        let class = if is_cjk(c) {
            Class::Cjk
        } else if c.is_alphanumeric() || ('\u{300}'..='\u{36F}').contains(&c) {
            // Combining accents belong to the letter before them (text in decomposed form).
            Class::Word
        } else {
            Class::Other
        };
        (class, c.len_utf8())
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        let kind = loop {
            if at >= text.len() {
                return None;
            }
            let (kind, len) = class(at);
            if kind != Class::Other {
                break kind;
            }
            at += len;
        };
        let start = at;
        while at < text.len() {
            let (next, len) = class(at);
            let joined = kind == Class::Word
                && text.as_bytes()[at] == b'-'
                && at + 1 < text.len()
                && class(at + 1).0 == Class::Word;
            if next != kind && !joined {
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
    fn splits_identifiers_and_keeps_them_whole() {
        assert_eq!(
            tokens("fn upsertSession(x_y)", false),
            [
                "fn@fn",
                "upsert@upsert",
                "+upsertsession@upsertSession",
                "session@Session",
                "x@x",
                "+xy@x_y",
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
            tokens("merge-settings --all a - b fooBar_baz", false),
            [
                "merge@merge",
                "+mergesettings@merge-settings",
                "settings@settings",
                "all@all",
                "a@a",
                "b@b",
                "foo@foo",
                "+foobarbaz@fooBar_baz",
                "+foobar@fooBar",
                "bar@Bar",
                "baz@baz"
            ]
        );
        assert_eq!(
            tokens("upsertSession merge-settings", true),
            [
                "upsert@upsert",
                "session@Session",
                "merge@merge",
                "settings@settings"
            ]
        );
    }

    #[test]
    fn folds_case_and_accents_and_skips_noise() {
        assert_eq!(
            tokens("Ärger — ÉCOLE Straße Œuvre naïve Łódź cafe\u{301}", false),
            [
                "arger@Ärger",
                "ecole@ÉCOLE",
                "strasse@Straße",
                "oeuvre@Œuvre",
                "naive@naïve",
                "lodz@Łódź",
                "cafe@cafe\u{301}"
            ]
        );
        let hash = "a".repeat(65);
        assert_eq!(tokens(&format!("x {hash} y"), false), ["x@x", "y@y"]);
        assert!(tokens("__ -- ::", false).is_empty());
    }

    #[test]
    fn cjk_is_found_by_its_characters() {
        assert_eq!(
            tokens("日本語abc 한국", false),
            [
                "日@日",
                "+日本@日本",
                "本@本",
                "+本語@本語",
                "語@語",
                "abc@abc",
                "한@한",
                "+한국@한국",
                "국@국"
            ]
        );
        assert_eq!(tokens("日本語", true), ["日本@日本", "本語@本語"]);
        assert_eq!(tokens("日", true), ["日@日"]);
    }

    /// What the tokenizer makes of a text is what the index holds: a change to it must come
    /// with a new index format (`FORMAT` in schema.rs), or indexes built before answer queries
    /// tokenized the new way from terms made the old way.
    #[test]
    fn a_change_of_tokens_is_a_new_index_format() {
        let sample = "Café upsertSession merge-settings x_y 日本語 src/merge.rs ß";
        assert_eq!(
            (
                super::super::schema::FORMAT,
                tokens(sample, false).join(" ")
            ),
            (
                4,
                "cafe@Café upsert@upsert +upsertsession@upsertSession session@Session \
                 merge@merge +mergesettings@merge-settings settings@settings x@x +xy@x_y y@y \
                 日@日 +日本@日本 本@本 +本語@本語 語@語 src@src merge@merge rs@rs ss@ß"
                    .to_string()
            ),
            "the tokenizer changed: raise FORMAT so that indexes are rebuilt, then update this"
        );
    }
}
