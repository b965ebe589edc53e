//! FTS5 auxiliary functions: functions of a matching row that FTS5 calls with its own API (the
//! phrases found in the row, how many rows hold each). Ranking and per-prompt recall register
//! theirs here, each on the connection that reads the index, and answer through [`answer`],
//! which keeps a panic from unwinding into SQLite.

use std::ffi::{CStr, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use anyhow::{Result, bail};
use rusqlite::Connection;
use rusqlite::ffi;

/// An FTS5 auxiliary function.
pub type Auxiliary = unsafe extern "C" fn(
    *const ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    *mut ffi::sqlite3_context,
    c_int,
    *mut *mut ffi::sqlite3_value,
);

/// Registers each `(name, function)` on `conn`; `what` names them in an error.
pub fn register(conn: &Connection, functions: &[(&CStr, Auxiliary)], what: &str) -> Result<()> {
    // SAFETY: as in `tokenizer::register`; FTS5 keeps the function pointers, which are static,
    // and copies the names.
    unsafe {
        let api = super::tokenizer::fts5_api(conn.handle())?;
        let Some(create_function) = (*api).xCreateFunction else {
            bail!("this SQLite's FTS5 cannot register functions");
        };
        for (name, function) in functions {
            let rc = create_function(api, name.as_ptr(), ptr::null_mut(), Some(*function), None);
            if rc != ffi::SQLITE_OK {
                bail!("cannot register {what} (SQLite error {rc})");
            }
        }
    }
    Ok(())
}

/// What an auxiliary function answers for a row.
pub enum Answer {
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Sets the result of an auxiliary function's call to what `body` answers, or to its SQLite
/// error code (`SQLITE_ERROR` for a panic, which must not unwind into C).
///
/// # Safety
/// `ctx` is the result context FTS5 handed the function, for the duration of its call.
pub unsafe fn answer(ctx: *mut ffi::sqlite3_context, body: impl FnOnce() -> Result<Answer, c_int>) {
    let answer = catch_unwind(AssertUnwindSafe(body)).unwrap_or(Err(ffi::SQLITE_ERROR));
    // SAFETY: `ctx` is valid (the caller's promise); SQLite copies text and blobs.
    unsafe {
        match answer {
            Ok(Answer::Int(n)) => ffi::sqlite3_result_int64(ctx, n),
            Ok(Answer::Real(x)) => ffi::sqlite3_result_double(ctx, x),
            Ok(Answer::Text(text)) => ffi::sqlite3_result_text(
                ctx,
                text.as_ptr().cast(),
                text.len() as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Ok(Answer::Blob(blob)) => ffi::sqlite3_result_blob(
                ctx,
                blob.as_ptr().cast(),
                blob.len() as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// An FTS5 API call's code as a `Result`, for `?` in an auxiliary function's body.
pub fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// FTS5's `xPhraseFirst`.
pub type PhraseFirst = unsafe extern "C" fn(
    *mut ffi::Fts5Context,
    c_int,
    *mut ffi::Fts5PhraseIter,
    *mut c_int,
    *mut c_int,
) -> c_int;

/// The first match of phrase `phrase` in the row FTS5 stands on, through `first` (its
/// `xPhraseFirst`): an iterator over the others, and the match's column, negative when the
/// row has none.
///
/// # Safety
/// `first` and `fts` are what FTS5 handed an auxiliary function, for the duration of its call.
pub unsafe fn first_match(
    first: PhraseFirst,
    fts: *mut ffi::Fts5Context,
    phrase: c_int,
) -> Result<(ffi::Fts5PhraseIter, c_int), c_int> {
    let mut iter = ffi::Fts5PhraseIter {
        a: ptr::null(),
        b: ptr::null(),
    };
    let (mut column, mut offset) = (0, 0);
    // SAFETY: the caller's promise; the iterator and outputs live through the call.
    ok(unsafe { first(fts, phrase, &mut iter, &mut column, &mut offset) })?;
    Ok((iter, column))
}
