//! For tests that make up texts by the hundred (to hold a fast way of reading them against the
//! plain one): numbers that look random and are the same in every run, so that a failure
//! names a text that fails again.

/// A picker of numbers below its argument, from `seed` (xorshift64: not for anything but tests).
pub fn picker(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below as u64) as usize
    }
}
