//! Rust source read as text, which is all the layer tests need: the files of a folder, the
//! code without comments, strings and test items, and the code as words.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn is_ident(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::`, and every other character as a word of its own.
pub fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// The code without comments, string and character literals (each left as an empty `""` or a
/// space), so that a path quoted in a doc comment or a message is not an import.
pub fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    while i < chars.len() {
        let c = chars[i];
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if !after_ident && (c == 'r' || (c == 'b' && chars.get(i + 1) == Some(&'r'))) && {
            let mut k = i + if c == 'b' { 2 } else { 1 };
            while chars.get(k) == Some(&'#') {
                k += 1;
            }
            chars.get(k) == Some(&'"')
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let mut k = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars[k] == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1;
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while k < chars.len() && !at(k, &close) {
                k += 1;
            }
            i = k + close.chars().count();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1b}'), not a lifetime ('a).
            let end = if chars.get(i + 1) == Some(&'\\') {
                (i + 2..chars.len().min(i + 12)).find(|&k| chars[k] == '\'')
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match end {
                Some(end) => {
                    i = end + 1;
                    out.push(' ');
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The code without the items under `#[cfg(test)]` (or `#[cfg(all(test, …))]`): tests may
/// reach anywhere.
pub fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    loop {
        let Some(start) = ["#[cfg(test)]", "#[cfg(all(test"]
            .iter()
            .filter_map(|attr| out.find(attr))
            .min()
        else {
            return out;
        };
        let bytes = out.as_bytes();
        // The attribute itself, then the item: up to its `;`, or its `{ … }` block.
        let mut i = start + 2;
        let mut brackets = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'[' => brackets += 1,
                b']' if brackets == 0 => break,
                b']' => brackets -= 1,
                _ => {}
            }
            i += 1;
        }
        while i < bytes.len() && bytes[i] != b';' && bytes[i] != b'{' {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            let mut depth = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            // `use a::{b, c};` ends after its group.
            let rest = out[i + 1..].trim_start();
            if rest.starts_with(';') {
                i = out.len() - rest.len();
            }
        }
        out.replace_range(start..(i + 1).min(out.len()), "");
    }
}
