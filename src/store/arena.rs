//! SQLite's memory in a hook process: blocks of a few sizes, cut from chunks and kept for
//! reuse, never given back.
//!
//! A hook lives a few milliseconds, and a fifth of what it executed was SQLite asking the C
//! library's allocator for memory and giving it back (callgrind: 0.29 of a 1 KB capture's 1.65
//! million instructions, 0.41 of a Stop's 1.86, 0.70 of a recalling prompt's 3.46), most of it
//! while parsing the schema at open. Here a block's size is rounded up to one of a few classes; an
//! allocation takes the last block freed of its class or cuts a new one from a chunk, and a free
//! puts the block back for the next of its class: a few instructions each, and the memory a hook
//! touches stays close to what glibc's would be (a bump pointer that never reused a block touched a
//! third more pages, and a page fault costs what the instructions saved). The process's exit frees
//! the chunks. Blocks over [`LARGE`], and every block once the chunks hold [`CAP`], are the system
//! allocator's, so a hook handed a large payload does not hold it twice. Only hooks install it:
//! commands and the MCP server live long and keep the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;

/// The chunks blocks are cut from.
const CHUNK: usize = 64 * 1024;
/// Larger blocks are the system allocator's (a statement's large value, a long doclist).
const LARGE: usize = 32 * 1024;
/// Past this much in chunks, every new block is the system allocator's.
const CAP: usize = 64 * 1024 * 1024;
/// Each block is preceded by its size (its class's); the low bit says the system allocator
/// owns it.
const HEADER: usize = 8;
const SYSTEM: usize = 1;
/// SQLite asks for 8-byte alignment.
const ALIGN: usize = 8;
/// Classes: every 16 bytes up to 512, then four to each power of two up to [`LARGE`].
const SMALL: usize = 512;
const CLASSES: usize = SMALL / 16 + 4 * 6;

thread_local! {
    /// Where the next new block is cut, and where its chunk ends; the last freed block of each
    /// class, each holding the one freed before it; how much the chunks hold. Per thread, so
    /// no lock: a block freed by another thread joins that thread's lists.
    static NEXT: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    static END: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    static FREED: [Cell<*mut u8>; CLASSES] =
        const { [const { Cell::new(ptr::null_mut()) }; CLASSES] };
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

/// The class of a request of `n` bytes, and the size of its blocks; `None` past [`LARGE`].
/// Past [`SMALL`], four classes to each power of two: a page of SQLite's cache (4,096 bytes
/// and its header) wastes a sixth of its block, not nearly half.
fn class_of(n: usize) -> Option<(usize, usize)> {
    if n <= SMALL {
        let steps = n.max(1).div_ceil(16);
        Some((steps - 1, steps * 16))
    } else if n <= LARGE {
        // The highest power of two below n.
        let base = 1 << (usize::BITS - 1 - (n - 1).leading_zeros());
        let step = base / 4;
        let quarters = (n - base).div_ceil(step);
        let doublings = (base.trailing_zeros() - SMALL.trailing_zeros()) as usize;
        Some((
            SMALL / 16 + 4 * doublings + quarters - 1,
            base + quarters * step,
        ))
    } else {
        None
    }
}

/// The layout of a system block of `size` bytes and its header.
fn system_layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size + HEADER, ALIGN).ok()
}

/// A block of at least `n` bytes from the system allocator, marked as its.
fn from_system(n: usize) -> *mut u8 {
    let size = n.next_multiple_of(ALIGN);
    let Some(layout) = system_layout(size) else {
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

/// A block of at least `n` bytes: a freed one of its class, a new one cut from a chunk, or
/// the system allocator's when it is large or the chunks are full.
fn allocate(n: usize) -> *mut u8 {
    let Some((class, size)) = class_of(n) else {
        return from_system(n);
    };
    let freed = FREED.with(|lists| {
        let block = lists[class].get();
        if !block.is_null() {
            // SAFETY: a freed block holds the next freed block of its class in its first word.
            lists[class].set(unsafe { block.cast::<*mut u8>().read() });
        }
        block
    });
    if !freed.is_null() {
        return freed;
    }
    let need = size + HEADER;
    let mut next = NEXT.get();
    if next.is_null() || (END.get() as usize) - (next as usize) < need {
        let held = HELD.get();
        if held + CHUNK > CAP {
            return from_system(n);
        }
        // SAFETY: CHUNK is not zero and ALIGN a power of two.
        next = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, ALIGN)) };
        if next.is_null() {
            return from_system(n);
        }
        HELD.set(held + CHUNK);
        // SAFETY: the chunk is CHUNK bytes long.
        END.set(unsafe { next.add(CHUNK) });
    }
    // SAFETY: `next` has at least `need` bytes before END, and is 8-aligned (chunks are, and
    // every block and header is a multiple of 8).
    unsafe {
        next.cast::<usize>().write(size);
        let block = next.add(HEADER);
        NEXT.set(block.add(size));
        block
    }
}

/// The size and owner word before `block`.
///
/// # Safety
/// `block` was returned by [`allocate`] and is not freed.
unsafe fn header(block: *mut u8) -> usize {
    // SAFETY: every block is preceded by its header (the caller's promise).
    unsafe { block.sub(HEADER).cast::<usize>().read() }
}

unsafe extern "C" fn arena_malloc(n: c_int) -> *mut c_void {
    usize::try_from(n).map_or(ptr::null_mut(), allocate).cast()
}

unsafe extern "C" fn arena_free(p: *mut c_void) {
    let block = p.cast::<u8>();
    if block.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what this allocator gave it.
    let word = unsafe { header(block) };
    let size = word & !SYSTEM;
    if word & SYSTEM != 0 {
        if let Some(layout) = system_layout(size) {
            // SAFETY: the block came from `from_system` with this layout.
            unsafe { System.dealloc(block.sub(HEADER), layout) };
        }
    } else if let Some((class, _)) = class_of(size) {
        FREED.with(|lists| {
            // SAFETY: the block holds at least 16 bytes, no longer in use: its first word
            // keeps the list's previous head.
            unsafe { block.cast::<*mut u8>().write(lists[class].get()) };
            lists[class].set(block);
        });
    }
}

unsafe extern "C" fn arena_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    let Ok(n) = usize::try_from(n) else {
        return ptr::null_mut();
    };
    // SAFETY: SQLite reallocates only what this allocator gave it, never null.
    let word = unsafe { header(p.cast()) };
    let old = word & !SYSTEM;
    if n <= old {
        return p;
    }
    if word & SYSTEM != 0
        && n > LARGE
        && let Some(layout) = system_layout(old)
    {
        // The system allocator grows a large block where it can (glibc remaps it).
        let size = n.next_multiple_of(ALIGN);
        // SAFETY: the block came from `from_system` with this layout; the new size is not
        // zero and, below 2 GiB, cannot overflow when aligned.
        unsafe {
            let base = System.realloc(p.cast::<u8>().sub(HEADER), layout, size + HEADER);
            if base.is_null() {
                return ptr::null_mut();
            }
            base.cast::<usize>().write(size | SYSTEM);
            return base.add(HEADER).cast();
        }
    }
    let moved = allocate(n);
    if !moved.is_null() {
        // SAFETY: both blocks hold at least `old` bytes and do not overlap (`moved` is not
        // in use, `p` is).
        unsafe {
            ptr::copy_nonoverlapping(p.cast::<u8>(), moved, old);
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
    let Ok(wanted) = usize::try_from(n) else {
        return n;
    };
    let size = class_of(wanted).map_or(wanted.next_multiple_of(ALIGN), |(_, size)| size);
    c_int::try_from(size).unwrap_or(n)
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

    /// A freed block is the next of its class handed out; classes do not mix, and every
    /// request fits its class.
    #[test]
    fn a_freed_block_is_handed_out_again_for_its_class() {
        // SAFETY: as above.
        unsafe {
            let a = arena_malloc(64);
            let b = arena_malloc(100);
            arena_free(a);
            assert_eq!(arena_malloc(60), a, "the same class");
            arena_free(b);
            assert_ne!(arena_malloc(64), b, "another class");
            assert_eq!(arena_malloc(112), b);
        }
        let mut last = (0, 0);
        for n in 1..=LARGE {
            let (class, size) = class_of(n).unwrap();
            assert!(
                size >= n && size % 16 == 0 && class < CLASSES,
                "{n}: {class}, {size}"
            );
            assert!(class == last.0 && size == last.1 || class == last.0 + 1 || n == 1);
            last = (class, size);
        }
        assert_eq!(last.0, CLASSES - 1);
        assert_eq!(class_of(32_769), None);
    }
}
