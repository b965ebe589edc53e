//! Finding and removing tagged parts of a text: `<name>…</name>`, nested, in any letter case.
//!
//! A text may end inside an element: what is open then is handed back, so that the next text of
//! the same document (the next string of a JSON document) starts inside it. Scans are linear
//! whatever the input: each `<` is looked at once.

use crate::text::find;

/// An element left open at the end of a text: its name and how deeply it is nested in itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Open {
    name: &'static str,
    depth: usize,
}

/// Removes every element named in `names` from `text`. `open` is the element the texts before
/// left open (everything up to its close is removed) and, on return, the one this text leaves
/// open. `None` when nothing was removed.
pub fn strip(text: &str, names: &[&'static str], open: &mut Option<Open>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut kept_from = 0;
    if let Some(element) = open.take() {
        match close_of(bytes, 0, element) {
            Ok(end) => kept_from = end,
            Err(still) => {
                *open = Some(still);
                return (!text.is_empty()).then(String::new);
            }
        }
    }
    let mut at = kept_from;
    while let Some(offset) = find::byte(b'<', &bytes[at..]) {
        let pos = at + offset;
        let Some((name, open_len)) = names
            .iter()
            .find_map(|n| open_tag(bytes, pos, n).map(|l| (*n, l)))
        else {
            at = pos + 1;
            continue;
        };
        if out.capacity() == 0 {
            out.reserve(text.len());
        }
        out.push_str(&text[kept_from..pos]);
        match close_of(bytes, pos + open_len, Open { name, depth: 1 }) {
            Ok(end) => {
                kept_from = end;
                at = end;
            }
            Err(still) => {
                *open = Some(still);
                kept_from = text.len();
                break;
            }
        }
    }
    if kept_from == 0 {
        return None;
    }
    out.push_str(&text[kept_from..]);
    Some(out)
}

/// Length of an opening tag `<name>` at `pos`, if there is one. No attributes: `<private key>`
/// is a phrase people write, not a mark, and a bounded tag keeps the scan linear.
fn open_tag(bytes: &[u8], pos: usize, name: &str) -> Option<usize> {
    let rest = &bytes[pos + 1..];
    (starts_with_ignore_case(rest, name) && rest.get(name.len()) == Some(&b'>'))
        .then_some(name.len() + 2)
}

/// Length of a closing tag `</name>` at `pos`, if there is one.
fn close_tag(bytes: &[u8], pos: usize, name: &str) -> Option<usize> {
    let rest = &bytes[pos + 1..];
    if rest.first() != Some(&b'/') || !starts_with_ignore_case(&rest[1..], name) {
        return None;
    }
    let after = &rest[1 + name.len()..];
    let spaces = after.iter().take_while(|b| b.is_ascii_whitespace()).count();
    (after.get(spaces) == Some(&b'>')).then_some(name.len() + spaces + 3)
}

/// Where `element`, open at `from`, ends, counting nested tags of its name; or how it is still
/// open at the end of `bytes`.
fn close_of(bytes: &[u8], from: usize, element: Open) -> Result<usize, Open> {
    let Open { name, mut depth } = element;
    let mut at = from;
    while let Some(offset) = find::byte(b'<', &bytes[at..]) {
        let pos = at + offset;
        if let Some(len) = close_tag(bytes, pos, name) {
            depth -= 1;
            if depth == 0 {
                return Ok(pos + len);
            }
            at = pos + len;
        } else if let Some(len) = open_tag(bytes, pos, name) {
            depth += 1;
            at = pos + len;
        } else {
            at = pos + 1;
        }
    }
    Err(Open { name, depth })
}

fn starts_with_ignore_case(haystack: &[u8], name: &str) -> bool {
    haystack.len() >= name.len() && haystack[..name.len()].eq_ignore_ascii_case(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["private"];

    /// Strips each text in turn, as the strings of one document.
    fn in_order(texts: &[&str]) -> (Vec<String>, Option<Open>) {
        let mut open = None;
        let out = texts
            .iter()
            .map(|t| strip(t, NAMES, &mut open).unwrap_or_else(|| t.to_string()))
            .collect();
        (out, open)
    }

    #[test]
    fn an_element_left_open_runs_on_into_the_next_texts() {
        let (out, open) = in_order(&["a <private>x", "y", "z</private> b", "c"]);
        assert_eq!(out, ["a ", "", " b", "c"]);
        assert_eq!(open, None);
    }

    #[test]
    fn nesting_is_counted_across_texts() {
        let (out, open) = in_order(&["<private>a<PRIVATE>", "</private>b", "</private>c"]);
        assert_eq!(out, ["", "", "c"]);
        assert_eq!(open, None);
        let (out, open) = in_order(&["k<private>", "", "</private"]);
        assert_eq!(out, ["k", "", ""]);
        assert_eq!(
            open,
            Some(Open {
                name: "private",
                depth: 1
            })
        );
    }

    #[test]
    fn a_text_that_removes_nothing_is_none() {
        let mut open = None;
        assert_eq!(strip("a </private> <b>", NAMES, &mut open), None);
        open = Some(Open {
            name: "private",
            depth: 1,
        });
        assert_eq!(strip("", NAMES, &mut open), None);
        assert!(open.is_some());
    }
}
