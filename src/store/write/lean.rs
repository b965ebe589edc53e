//! SQLite's memory set-up for a process that makes one short write and exits.
//!
//! By default every connection carves 120 KB of lookaside slots and 20 page-cache slots up
//! front, writing a link into each, and counts every allocation under a mutex. A hook uses a
//! fraction of that memory, but each 4 KB page it touches is a page fault, about 2 µs on a
//! virtual machine: the default set-up cost a 1 KB capture some 60 faults before its first
//! statement. A hook takes memory as it needs it instead.

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;

/// Zero slots, zero size, off: the options' integer arguments, typed as SQLite reads them.
const NONE: c_int = 0;

/// Sets SQLite's process-wide memory options for a hook. Takes effect only before SQLite
/// initializes, that is before the process opens its first connection; later calls are
/// refused by SQLite and change nothing, so calling it twice is harmless.
pub fn for_one_write() {
    // SAFETY: sqlite3_config is called with the argument types each option documents; before
    // initialization nothing else uses SQLite in this (single-threaded) hook process, and
    // after it SQLite returns SQLITE_MISUSE without acting.
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_LOOKASIDE, NONE, NONE);
        ffi::sqlite3_config(
            ffi::SQLITE_CONFIG_PAGECACHE,
            ptr::null_mut::<c_void>(),
            NONE,
            NONE,
        );
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, NONE);
    }
}
