//! Lays out the code a hook runs side by side in the binary (`hot.ld`), then what `search` runs
//! besides, on Linux x86-64 with the toolchain's own linker (LLD, the default there since Rust
//! 1.90).
//!
//! A hook is a new process each time, and each page of code it touches first is a page fault.
//! Left to the linker, the functions a capture runs are spread over 4.7 MB of the binary's
//! 17 MB: 74 of its 207 faults were code. Gathered, a capture has 160 faults and takes about
//! 0.15 ms less (docs/performance.md, "The code a hook runs, together"). The script only moves
//! code: a name it lists that no longer exists moves nothing, and the build is the same binary
//! otherwise.
//!
//! Another linker (mold, GNU ld), named in the target's `linker` or in RUSTFLAGS, gets nothing:
//! they read linker scripts differently, and a build must never fail for a layout.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=hot.ld");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    // Set when the layout applies, for the test that checks it (tests/cli/hot_code.rs).
    println!("cargo::rustc-check-cfg=cfg(hot_code)");
    let target = |key: &str| env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default();
    if target("OS") != "linux" || target("ARCH") != "x86_64" || target("ENV") != "gnu" {
        return;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let own_linker = env::var_os("RUSTC_LINKER").is_some()
        || flags.split('\x1f').any(|flag| {
            ["linker", "link-self-contained", "fuse-ld"]
                .iter()
                .any(|l| flag.contains(l))
        });
    if own_linker {
        return;
    }
    let Ok(dir) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    println!("cargo::rustc-link-arg-bins=-Wl,-T,{dir}/hot.ld");
    println!("cargo::rustc-cfg=hot_code");
}
