//! FTS5 auxiliary functions: functions of a matching row that FTS5 calls with its own API (the
//! phrases found in the row, how many rows hold each). Ranking and per-prompt recall register
//! theirs here, each on the connection that reads the index.

use std::ffi::{CStr, c_int};
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
