//! SQLite's memory in a hook process: handed out from an arena and not given back.
//!
//! A hook lives a few milliseconds, and a fifth of what it executes was SQLite asking the C
//! library's allocator for memory and giving it back (callgrind: 0.29 of a 1 KB capture's 1.65
//! million instructions, 0.41 of a Stop's 1.86, 0.70 of a recalling prompt's 3.46), most of it
//! while parsing the schema at open. Here an allocation is a header and a bump of a pointer,
//! and a free gives back only the newest block; the process's exit frees the rest. Blocks over
//! [`LARGE`] and everything past [`CAP`] come from the system allocator and go back to it, so
//! a hook handed a large payload does not hold it twice. Only hooks install it: commands and
//! the MCP server live long and keep the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;

/// The arena grows by chunks of this size.
const CHUNK: usize = 256 * 1024;
/// Larger blocks are the system allocator's (a statement's large value, a long doclist).
const LARGE: usize = 32 * 1024;
/// Past this much in chunks, every block is the system allocator's.
const CAP: usize = 64 * 1024 * 1024;
/// Each block is preceded by its size; the low bit says the system allocator owns it.
const HEADER: usize = 8;
const SYSTEM: usize = 1;
/// SQLite asks for 8-byte alignment.
const ALIGN: usize = 8;

thread_local! {
    /// Where the next block goes, where the chunk ends, the newest block (the one a free or a
    /// growing realloc can take back), and how much the chunks hold in all. Per thread, so no
    /// lock: a block freed by another thread is simply left.
    static NEXT: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    static END: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    static NEWEST: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Makes SQLite allocate from the arena, and stops its memory statistics (a lock taken around
/// each allocation). Must run before the process's first SQLite call; afterwards SQLite
/// refuses the change, and the system allocator stays, which is only slower.
pub fn for_this_process() {
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(arena_malloc),
        xFree: Some(arena_free),
        xRealloc: Some(arena_realloc),
        xSize: Some(arena_size),
        xRoundup: Some(arena_roundup),
        xInit: Some(arena_init),
        xShutdown: Some(arena_shutdown),
        pAppData: ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_MALLOC takes a pointer to an sqlite3_mem_methods, which SQLite
    // copies before returning; SQLITE_CONFIG_MEMSTATUS takes an int. Both are refused with
    // SQLITE_MISUSE, changing nothing, once SQLite has been initialized.
    unsafe {
        if ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const methods) == ffi::SQLITE_OK {
            let off: c_int = 0;
            ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, off);
        }
    }
}

fn rounded(n: c_int) -> Option<usize> {
    let n = usize::try_from(n).ok()?.max(1);
    n.checked_add(ALIGN - 1).map(|n| n & !(ALIGN - 1))
}

/// A block of `size` bytes from the system allocator, marked as its.
fn from_system(size: usize) -> *mut u8 {
    let Ok(layout) = Layout::from_size_align(size + HEADER, ALIGN) else {
        return ptr::null_mut();
    };
    // SAFETY: the layout's size is at least HEADER, never zero.
    let base = unsafe { System.alloc(layout) };
    if base.is_null() {
        return base;
    }
    // SAFETY: `base` holds HEADER + size bytes, aligned to 8.
    unsafe {
        base.cast::<usize>().write(size | SYSTEM);
        base.add(HEADER)
    }
}

/// A block of `size` bytes (a multiple of 8) from the arena, or from the system allocator
/// when it is large or the arena is full.
fn allocate(size: usize) -> *mut u8 {
    if size > LARGE {
        return from_system(size);
    }
    let need = size + HEADER;
    let mut next = NEXT.get();
    if next.is_null() || (END.get() as usize) - (next as usize) < need {
        let held = HELD.get();
        if held + CHUNK > CAP {
            return from_system(size);
        }
        let Ok(layout) = Layout::from_size_align(CHUNK, ALIGN) else {
            return from_system(size);
        };
        // SAFETY: CHUNK is not zero.
        next = unsafe { System.alloc(layout) };
        if next.is_null() {
            return from_system(size);
        }
        HELD.set(held + CHUNK);
        // SAFETY: the chunk is CHUNK bytes long.
        END.set(unsafe { next.add(CHUNK) });
    }
    // SAFETY: `next` has at least `need` bytes before END, and is 8-aligned (chunks are, and
    // every block is a multiple of 8).
    unsafe {
        next.cast::<usize>().write(size);
        let block = next.add(HEADER);
        NEXT.set(block.add(size));
        NEWEST.set(block);
        block
    }
}

/// The size and owner word before `block`.
///
/// # Safety
/// `block` was returned by [`allocate`] or [`from_system`] and is not freed.
unsafe fn header(block: *mut u8) -> usize {
    // SAFETY: every block is preceded by its header (the caller's promise).
    unsafe { block.sub(HEADER).cast::<usize>().read() }
}

unsafe extern "C" fn arena_malloc(n: c_int) -> *mut c_void {
    rounded(n).map_or(ptr::null_mut(), allocate).cast()
}

unsafe extern "C" fn arena_free(p: *mut c_void) {
    let block = p.cast::<u8>();
    if block.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what this allocator gave it.
    let word = unsafe { header(block) };
    if word & SYSTEM != 0 {
        let size = word & !SYSTEM;
        // SAFETY: the block came from `from_system` with this layout (checked there).
        unsafe {
            System.dealloc(
                block.sub(HEADER),
                Layout::from_size_align_unchecked(size + HEADER, ALIGN),
            );
        }
    } else if block == NEWEST.get() {
        // SAFETY: the newest block and its header lie in the current chunk.
        NEXT.set(unsafe { block.sub(HEADER) });
        NEWEST.set(ptr::null_mut());
    }
}

unsafe extern "C" fn arena_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    let block = p.cast::<u8>();
    let Some(size) = rounded(n) else {
        return ptr::null_mut();
    };
    // SAFETY: SQLite reallocates only what this allocator gave it, never null.
    let word = unsafe { header(block) };
    let old = word & !SYSTEM;
    if size <= old {
        return p;
    }
    // The newest block grows where it is while the chunk has room.
    if word & SYSTEM == 0
        && block == NEWEST.get()
        && (END.get() as usize) - (block as usize) >= size
    {
        // SAFETY: the block's header precedes it, and the chunk holds `size` bytes from it.
        unsafe {
            block.sub(HEADER).cast::<usize>().write(size);
            NEXT.set(block.add(size));
        }
        return p;
    }
    let moved = allocate(size);
    if !moved.is_null() {
        // SAFETY: both blocks hold at least `old` bytes and do not overlap (`moved` is new).
        unsafe {
            ptr::copy_nonoverlapping(block, moved, old);
            arena_free(p);
        }
    }
    moved.cast()
}

unsafe extern "C" fn arena_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks only about what this allocator gave it.
    let size = unsafe { header(p.cast()) } & !SYSTEM;
    c_int::try_from(size).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn arena_roundup(n: c_int) -> c_int {
    rounded(n)
        .and_then(|n| c_int::try_from(n).ok())
        .unwrap_or(n)
}

unsafe extern "C" fn arena_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn arena_shutdown(_: *mut c_void) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// What SQLite relies on: blocks aligned, as large as asked, keeping their bytes when
    /// they grow, whether they grow in place, move, or are the system allocator's.
    #[test]
    fn blocks_keep_their_bytes_as_they_grow_and_move() {
        // SAFETY: each pointer passed back came from these functions and is not yet freed.
        unsafe {
            let mut blocks = Vec::new();
            for (i, n) in [1, 7, 8, 100, 4096, 40_000, 300_000]
                .into_iter()
                .enumerate()
            {
                let p = arena_malloc(n).cast::<u8>();
                assert!(!p.is_null());
                assert_eq!(p as usize % ALIGN, 0);
                assert!(arena_size(p.cast()) >= n);
                ptr::write_bytes(p, i as u8 + 1, n as usize);
                blocks.push((p, n, i as u8 + 1));
            }
            // The newest grows in place; an older one moves; a large one stays the system's.
            for (p, n, fill) in blocks.iter_mut() {
                let grown = arena_realloc((*p).cast(), *n * 2 + 16).cast::<u8>();
                assert!(!grown.is_null());
                assert!(arena_size(grown.cast()) >= *n * 2 + 16);
                let kept = std::slice::from_raw_parts(grown, *n as usize);
                assert!(
                    kept.iter().all(|b| b == fill),
                    "block of {n} lost its bytes"
                );
                *p = grown;
            }
            for (p, _, _) in blocks {
                arena_free(p.cast());
            }
            arena_free(ptr::null_mut());
            assert_eq!(arena_malloc(-1), ptr::null_mut());
        }
    }

    /// A freed newest block is handed out again; an older one is left where it is.
    #[test]
    fn only_the_newest_block_is_taken_back() {
        // SAFETY: as above.
        unsafe {
            let a = arena_malloc(64);
            let b = arena_malloc(64);
            arena_free(a);
            let c = arena_malloc(64);
            assert_ne!(c, a);
            arena_free(c);
            assert_eq!(arena_malloc(64), c);
            assert_ne!(b, c);
        }
    }
}
