//! Byte searches that never ask the processor what it can do.
//!
//! The memchr crate's top-level functions choose AVX2 at run time, and the first of them in a
//! process asks the processor through a dozen CPUID instructions. Where a hypervisor traps
//! CPUID, each is a round trip out of the virtual machine: on the dev machine 12 µs apiece,
//! 0.1 ms of every hook that scans text, as much as a tenth of what an empty process costs.
//! SSE2 is part of x86-64 itself, so these search with it without asking; elsewhere they are
//! memchr's own, which asks nothing where vectors are part of the architecture (NEON on
//! aarch64). clippy.toml keeps memchr's asking functions out of src/.

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use memchr::arch::x86_64::sse2::{
    memchr::{One, Two},
    packedpair::Finder,
};

/// Where `needle` first occurs in `haystack`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub fn byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    One::new(needle).and_then(|one| one.find(haystack))
}

/// Where `needle` last occurs in `haystack`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub fn byte_back(needle: u8, haystack: &[u8]) -> Option<usize> {
    One::new(needle).and_then(|one| one.rfind(haystack))
}

/// Every place `needle` occurs in `haystack`, first to last.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub fn bytes(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    // SSE2 is compiled in (the cfg above), so `new` cannot refuse: no panic path for it.
    let one = One::new(needle);
    walk(haystack, 1, move |rest| one?.find(rest))
}

/// Every place either byte occurs in `haystack`, first to last.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub fn either(first: u8, second: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let two = Two::new(first, second);
    walk(haystack, 1, move |rest| two?.find(rest))
}

/// Where `needle` first occurs in `haystack` (at 0 when it is empty).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub fn sub(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&lead, _)) = needle.split_first() else {
        return Some(0);
    };
    if needle.len() > haystack.len() {
        return None;
    }
    match Finder::new(needle) {
        Some(pair) if haystack.len() >= pair.min_haystack_len() => pair.find(haystack, needle),
        // Too short a haystack for the vector search (or a needle of one byte): try each place
        // its first byte occurs.
        _ => bytes(lead, haystack).find(|&at| haystack[at..].starts_with(needle)),
    }
}

/// Where `needle` first occurs in `haystack`.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[allow(clippy::disallowed_methods)] // memchr's own: nothing to ask here
pub fn byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memchr(needle, haystack)
}

/// Where `needle` last occurs in `haystack`.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[allow(clippy::disallowed_methods)] // memchr's own: nothing to ask here
pub fn byte_back(needle: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memrchr(needle, haystack)
}

/// Every place `needle` occurs in `haystack`, first to last.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[allow(clippy::disallowed_methods)] // memchr's own: nothing to ask here
pub fn bytes(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(needle, haystack)
}

/// Every place either byte occurs in `haystack`, first to last.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[allow(clippy::disallowed_methods)] // memchr's own: nothing to ask here
pub fn either(first: u8, second: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr2_iter(first, second, haystack)
}

/// Where `needle` first occurs in `haystack` (at 0 when it is empty).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[allow(clippy::disallowed_methods)] // memchr's own: nothing to ask here
pub fn sub(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Every place `needle` occurs in `haystack`, first to last, none overlapping the one before.
pub fn subs<'h>(haystack: &'h [u8], needle: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    walk(haystack, needle.len().max(1), move |rest| sub(rest, needle))
}

/// Every place `find` answers in `haystack`, each search starting `step` bytes after the last
/// place found.
fn walk<'h>(
    haystack: &'h [u8],
    step: usize,
    find: impl Fn(&[u8]) -> Option<usize> + 'h,
) -> impl Iterator<Item = usize> + 'h {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + find(haystack.get(from..)?)?;
        from = at + step;
        Some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers of the plain, obviously right searches, over haystacks long and short
    /// (the vector searches take a different path under 16 or so bytes) and needles placed at
    /// every edge.
    #[test]
    fn every_search_answers_as_the_plain_one_does() {
        let long = "ab\\u00cd-----BEGIN PRIVATE KEY-----x<y[z\n".repeat(7);
        let haystacks: Vec<&[u8]> = vec![
            b"",
            b"a",
            b"-----",
            b"x-----",
            b"\\u00",
            b"discord.gg",
            b"the EXAMPLE key",
            long.as_bytes(),
            &long.as_bytes()[3..],
            &long.as_bytes()[..long.len() - 3],
        ];
        let needles: [&[u8]; 8] = [
            b"",
            b"-",
            b"-----",
            b"\\u00",
            b"PRIVATE KEY",
            b"EXAMPLE",
            b"discord",
            b"absent needle",
        ];
        for hay in &haystacks {
            for needle in needles {
                let plain = (0..=hay.len()).find(|&at| hay[at..].starts_with(needle));
                assert_eq!(sub(hay, needle), plain, "{hay:?} {needle:?}");
                let mut want = Vec::new();
                let mut at = 0;
                while let Some(i) = (at..=hay.len()).find(|&i| hay[i..].starts_with(needle)) {
                    want.push(i);
                    at = i + needle.len().max(1);
                }
                assert_eq!(
                    subs(hay, needle).collect::<Vec<_>>(),
                    want,
                    "{hay:?} {needle:?}"
                );
            }
            for b in [b'-', b'<', b'\n', b'q'] {
                let every: Vec<usize> = (0..hay.len()).filter(|&i| hay[i] == b).collect();
                assert_eq!(byte(b, hay), every.first().copied());
                assert_eq!(byte_back(b, hay), every.last().copied());
                assert_eq!(bytes(b, hay).collect::<Vec<_>>(), every);
                let two: Vec<usize> = (0..hay.len())
                    .filter(|&i| hay[i] == b || hay[i] == b'[')
                    .collect();
                assert_eq!(either(b, b'[', hay).collect::<Vec<_>>(), two);
            }
        }
    }
}
