//! The binary as built has the code the hooks run in one place (build.rs, `hot.ld`), and after
//! it what `search` runs: each page of code a short process touches first is a page fault, and
//! the layout is what keeps them few (docs/performance.md, "The code a hook runs, together").
//! The bench shows the time; this shows the layout did not silently stop applying, as it would
//! if a compiler changed how it names functions or the script's names stopped matching ours.

use std::fs;

/// The ELF file's sections by name, and its symbols with the index of their section.
struct Elf {
    sections: Vec<(String, u64, u64)>,
    symbols: Vec<(String, usize)>,
}

fn read_u16(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap()).into()
}

fn read_u32(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn name_at(bytes: &[u8], table: usize, at: usize) -> String {
    let start = table + at;
    let end = start + bytes[start..].iter().position(|&b| b == 0).unwrap();
    String::from_utf8_lossy(&bytes[start..end]).into_owned()
}

/// Reads a little-endian ELF64 file's section headers and symbol table.
fn elf(bytes: &[u8]) -> Elf {
    assert_eq!(&bytes[..5], b"\x7fELF\x02", "not an ELF64 file");
    let (offset, count, names) = (
        read_u64(bytes, 0x28) as usize,
        read_u16(bytes, 0x3c),
        read_u16(bytes, 0x3e),
    );
    let header = |i: usize| offset + i * 64;
    let names_at = read_u64(bytes, header(names) + 24) as usize;
    let mut sections = Vec::new();
    let mut symbols = Vec::new();
    for i in 0..count {
        let h = header(i);
        let size = read_u64(bytes, h + 32);
        sections.push((
            name_at(bytes, names_at, read_u32(bytes, h)),
            read_u64(bytes, h + 16),
            size,
        ));
        // SHT_SYMTAB: 24-byte entries, their names in the section its sh_link names.
        if read_u32(bytes, h + 4) == 2 {
            let (start, strings) = (
                read_u64(bytes, h + 24) as usize,
                read_u64(bytes, header(read_u32(bytes, h + 40)) + 24) as usize,
            );
            for entry in (start..start + size as usize).step_by(24) {
                let name = name_at(bytes, strings, read_u32(bytes, entry));
                symbols.push((name, read_u16(bytes, entry + 6)));
            }
        }
    }
    Elf { sections, symbols }
}

#[test]
fn the_code_a_capture_runs_is_in_the_hot_section() {
    let bytes = fs::read(env!("CARGO_BIN_EXE_claude-mem")).unwrap();
    let binary = elf(&bytes);
    let hot = binary
        .sections
        .iter()
        .position(|(name, _, _)| name == ".text.hot")
        .expect("the binary has no .text.hot: build.rs did not hand hot.ld to the linker");
    let section_of = |wanted: &dyn Fn(&str) -> bool| {
        binary
            .symbols
            .iter()
            .find(|(name, _)| wanted(name))
            .map(|(_, section)| *section)
    };
    // SQLite's parser (a C name), the hook's write (a Rust name, v0-mangled, its crate hash
    // left out by the script), the C library's start (an archive member).
    let parser = section_of(&|n| n == "sqlite3RunParser");
    let record =
        section_of(&|n| n.starts_with("_R") && n.ends_with("10claude_mem4hook6record6record"));
    let start = section_of(&|n| n == "__libc_start_main");
    // And what `search` runs that no hook does, after the hooks' code.
    let listing =
        section_of(&|n| n.starts_with("_R") && n.ends_with("10claude_mem3cmd6search5lines"));
    assert_eq!(
        (parser, record, start, listing),
        (Some(hot), Some(hot), Some(hot), Some(hot)),
        "sqlite3RunParser, hook::record::record, __libc_start_main and cmd::search::lines \
         belong in .text.hot"
    );
    // Most of the script's names stopped matching if it holds little more than these.
    let (_, _, size) = binary.sections[hot];
    assert!(size > 256 * 1024, ".text.hot holds only {size} bytes");
}
