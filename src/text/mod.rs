//! Text as we keep and show it, wherever it is shown: one line, bounded, cleaned of terminal
//! control sequences (tool output is full of them, and they must never reach a terminal from a
//! snippet), counts with separators. Below the store, since the index, the readers, the
//! compressor and the renderer all cut and clean text the same way.

pub mod find;
mod fold;
#[cfg(test)]
pub mod made_up;

pub use fold::{fold, is_cjk};

/// `text` as one line of at most `max` characters, control sequences removed.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = flat(text);
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `text` as one line, its runs of white space one space each, control sequences removed.
pub fn flat(text: &str) -> String {
    // Most texts are one line already (a session start flattens hundreds): kept as they are.
    let single = !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
        && text
            .chars()
            .all(|c| c == ' ' || !(c.is_whitespace() || c.is_control()));
    if single {
        return text.to_string();
    }
    clean(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A count with thousands separators: "100,000".
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// `n thing` or `n things` (`n memory` or `n memories`).
pub fn plural(n: i64, thing: &str) -> String {
    if n == 1 {
        return format!("{} {thing}", count(n));
    }
    // memory, summary, entry: -ies; day, key: -s.
    match thing.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => {
            format!("{} {stem}ies", count(n))
        }
        _ => format!("{} {thing}s", count(n)),
    }
}

/// `text` whole when it is short, else its first `head` and last `tail` characters.
pub fn bounded(text: &str, head: usize, tail: usize) -> String {
    // Never fewer bytes than characters: a short text is whole without counting.
    if text.len() <= head + tail {
        return text.to_string();
    }
    let count = text.chars().count();
    if count <= head + tail {
        return text.to_string();
    }
    let cut = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(at, _)| at);
    let start = &text[..cut(head)];
    if tail == 0 {
        return format!("{start}…");
    }
    format!("{start}\n…\n{}", &text[cut(count - tail)..])
}

/// Removes terminal escape sequences and turns other control characters (but newlines and
/// tabs) into spaces.
pub fn clean(text: &str) -> String {
    // C0 controls, DEL, and the lead byte of C1 controls (U+0080..U+009F).
    let suspect = |b: &u8| (*b < 0x20 && *b != b'\n' && *b != b'\t') || *b == 0x7f || *b == 0xc2;
    if !text.as_bytes().iter().any(suspect) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI (`ESC [ ... final`) and OSC (`ESC ] ... BEL or ESC \`), else one char.
                match chars.next() {
                    Some('[') => {
                        for c in chars.by_ref() {
                            if ('\u{40}'..='\u{7e}').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
