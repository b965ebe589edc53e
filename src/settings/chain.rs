//! Our hook inside a longer shell command line, such as
//! `"/usr/bin/claude-mem" hook summary && notify-send done`: where it is, and how to take only
//! our part out.
//!
//! A command line is split into its simple commands at the list operators (`&&`, `||`, `;`,
//! newline, `|`, `&`), quotes and escapes respected. Anything this does not follow exactly
//! (subshells, command substitution, `${...}`, here-documents, comments, compound commands) is
//! not split: our hook is then recognised only at the start of the line, as before, and left in
//! place by uninstall. Our part is taken out only where that is exact because our hook always
//! exits 0: `ours && rest` and `ours; rest` run `rest` as `rest` alone does, and `rest && ours`
//! and `rest; ours` end when `rest` does.

use std::ops::Range;

use super::command::{Ours, parse_ours};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sep {
    And,
    Or,
    Pipe,
    Background,
    /// `;` or a line break.
    Then,
}

impl Sep {
    /// Whether our command can be taken out from beside this operator without changing what
    /// the rest of the line does.
    fn detachable(self) -> bool {
        matches!(self, Sep::And | Sep::Then)
    }

    fn text(self) -> &'static str {
        match self {
            Sep::And => "&&",
            Sep::Or => "||",
            Sep::Pipe => "|",
            Sep::Background => "&",
            Sep::Then => ";",
        }
    }
}

/// The simple commands of a line (trimmed byte ranges) and the operators between them: `seps[i]`
/// follows `parts[i]`. A `;` or line break at the very end ends the last part.
#[derive(Debug)]
struct List {
    parts: Vec<Range<usize>>,
    seps: Vec<Sep>,
}

/// Words that open or close a compound command: a line holding one is not split.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "{", "}", "!", "[[", "]]",
];

fn split(line: &str) -> Option<List> {
    let bytes = line.as_bytes();
    let mut parts = Vec::new();
    let mut seps = Vec::new();
    let mut start = 0;
    let mut word_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let next = bytes.get(i + 1).copied();
        let mut sep = None;
        let mut width = 1;
        match bytes[i] {
            b'\'' => i += line[i + 1..].find('\'')? + 1,
            b'"' => i = closing_quote(line, i + 1)?,
            b'\\' if next.is_some() => i += 1,
            b'\\' | b'`' | b'(' | b')' => return None,
            b'$' if matches!(next, Some(b'(' | b'{' | b'\'')) => return None,
            b'#' if word_start => return None,
            b'<' if next == Some(b'<') => return None,
            // Redirections that hold an operator character: `>&2`, `<&0`, `>|`, `&>`.
            b'<' | b'>' if matches!(next, Some(b'&' | b'|')) => i += 1,
            b'&' if next == Some(b'>') => i += 1,
            b'&' if next == Some(b'&') => (sep, width) = (Some(Sep::And), 2),
            b'&' => sep = Some(Sep::Background),
            b'|' if next == Some(b'|') => (sep, width) = (Some(Sep::Or), 2),
            b'|' if next == Some(b'&') => (sep, width) = (Some(Sep::Pipe), 2),
            b'|' => sep = Some(Sep::Pipe),
            b';' if next == Some(b';') => return None,
            b';' | b'\n' => sep = Some(Sep::Then),
            _ => {}
        }
        if let Some(sep) = sep {
            let part = trimmed(line, start..i);
            if part.is_empty() && sep == Sep::Then && seps.last() == Some(&Sep::Then) {
                // `x;` then a line break: one end of a command, not two.
                (start, i, word_start) = (i + width, i + width, true);
                continue;
            }
            parts.push(part);
            seps.push(sep);
            start = i + width;
            i += width;
            word_start = true;
            continue;
        }
        word_start = bytes[i].is_ascii_whitespace();
        i += 1;
    }
    let last = trimmed(line, start..line.len());
    if last.is_empty() && seps.last() == Some(&Sep::Then) {
        // A line that ends with `;`: the `;` ends the last command, it joins nothing.
        seps.pop();
    } else {
        parts.push(last);
    }
    let well_formed = parts.iter().all(|part| {
        let first = line[part.clone()].split_whitespace().next();
        first.is_some_and(|word| !RESERVED.contains(&word))
    });
    well_formed.then_some(List { parts, seps })
}

/// The index of the `"` that closes a double-quoted string opened before `from`.
fn closing_quote(line: &str, from: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some(i),
            b'\\' => i += 1,
            b'`' => return None,
            b'$' if matches!(bytes.get(i + 1), Some(b'(' | b'{')) => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

fn trimmed(line: &str, range: Range<usize>) -> Range<usize> {
    let text = &line[range.clone()];
    let start = range.start + (text.len() - text.trim_start().len());
    let end = range.end - (text.len() - text.trim_end().len());
    start..end.max(start)
}

/// Every command of ours in the line, with offsets into the whole line. In a line this cannot
/// split, every word is tried as the start of one.
pub fn find_ours(line: &str) -> Vec<Ours<'_>> {
    let Some(list) = split(line) else {
        return scan_ours(line);
    };
    list.parts
        .iter()
        .filter_map(|part| {
            let ours = parse_ours(&line[part.clone()])?;
            Some(Ours {
                program_start: part.start + ours.program_start,
                program_end: part.start + ours.program_end,
                hook: ours.hook,
            })
        })
        .collect()
}

fn scan_ours(line: &str) -> Vec<Ours<'_>> {
    let boundary = |c: char| c.is_whitespace() || ";&|(){}`$".contains(c);
    let starts = std::iter::once(0).chain(
        line.char_indices()
            .filter(|&(_, c)| boundary(c))
            .map(|(i, c)| i + c.len_utf8()),
    );
    let mut found: Vec<Ours<'_>> = Vec::new();
    for start in starts {
        let covered = found.last().is_some_and(|last| start < last.program_end);
        if let Some(ours) = parse_ours(&line[start..]).filter(|_| !covered) {
            found.push(Ours {
                program_start: start + ours.program_start,
                program_end: start + ours.program_end,
                hook: ours.hook,
            });
        }
    }
    found
}

/// What uninstall does with a command line.
#[derive(Debug, PartialEq, Eq)]
pub enum Removal {
    NotOurs,
    /// The whole line is ours: the handler goes.
    Whole,
    /// Our part was taken out; this is what is left.
    Rest(String),
    /// Ours, but it cannot be taken out exactly; why, as a phrase.
    Kept(String),
}

pub fn remove_ours(line: &str) -> Removal {
    if find_ours(line).is_empty() {
        return Removal::NotOurs;
    }
    let mut rest = line.to_string();
    loop {
        let Some(list) = split(&rest) else {
            return Removal::Kept(
                "it is part of a longer shell command that claude-mem cannot take apart exactly \
                 (a subshell, a substitution or a compound command)"
                    .into(),
            );
        };
        let Some(at) =
            (0..list.parts.len()).find(|&i| parse_ours(&rest[list.parts[i].clone()]).is_some())
        else {
            return Removal::Rest(rest);
        };
        let before = at.checked_sub(1).map(|i| list.seps[i]);
        let after = list.seps.get(at).copied();
        if let Some(sep) = [before, after]
            .into_iter()
            .flatten()
            .find(|s| !s.detachable())
        {
            return Removal::Kept(format!(
                "it is joined to the rest by `{}`, so taking it out would change what the rest \
                 does",
                sep.text()
            ));
        }
        let part = list.parts[at].clone();
        let cut = match (before, after) {
            (None, None) => return Removal::Whole,
            // `ours && rest`, `ours; rest`: up to the next command.
            (_, Some(Sep::And)) | (None, Some(_)) => part.start..list.parts[at + 1].start,
            // `rest && ours`, `rest; ours`: from the end of the one before.
            (Some(_), _) => list.parts[at - 1].end..part.end,
        };
        rest.replace_range(cut, "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = r#""/usr/bin/claude-mem" hook summary"#;

    #[test]
    fn takes_out_only_our_part_where_that_is_exact() {
        let cases = [
            (format!("{OURS} && notify-send done"), "notify-send done"),
            (format!("notify-send a; {OURS}"), "notify-send a"),
            (format!("x && {OURS} && y"), "x && y"),
            (format!("x; {OURS} && y"), "x; y"),
            (format!("x && {OURS}; y"), "x; y"),
            (format!("{OURS}; y"), "y"),
            (format!("x;\n{OURS}\n"), "x\n"),
            (format!("a || b && {OURS}"), "a || b"),
            (format!("{OURS} && a | b"), "a | b"),
            (format!("x >&2 && {OURS} 2>/dev/null"), "x >&2"),
            (format!("'a; b' && {OURS}"), "'a; b'"),
        ];
        for (line, rest) in cases {
            assert_eq!(remove_ours(&line), Removal::Rest(rest.into()), "{line}");
        }
        for line in [
            OURS.to_string(),
            format!("{OURS};"),
            format!("{OURS} 2>&1 >/dev/null"),
            format!("CLAUDE_MEM_DEBUG=1 {OURS}; {OURS}"),
        ] {
            assert_eq!(remove_ours(&line), Removal::Whole, "{line}");
        }
    }

    #[test]
    fn keeps_what_cannot_be_taken_apart_exactly() {
        for line in [
            format!("{OURS} || true"),
            format!("{OURS} | tee log"),
            format!("x || {OURS}"),
            format!("{OURS} & wait"),
            format!("{OURS} && echo $(date)"),
            format!("{OURS} && (cd x; y)"),
            format!("if x; then {OURS}; fi"),
            format!("{OURS} # note; x"),
            format!("{OURS} && x \\"),
        ] {
            assert!(
                matches!(remove_ours(&line), Removal::Kept(_)),
                "{line}: {:?}",
                remove_ours(&line)
            );
        }
        for line in [
            "notify-send done",
            "echo 'claude-mem hook x'",
            "x; claude-mem status",
        ] {
            assert_eq!(remove_ours(line), Removal::NotOurs, "{line}");
        }
    }

    #[test]
    fn finds_ours_anywhere_in_a_list_and_at_the_start_of_anything() {
        fn hooks(line: &str) -> Vec<&str> {
            find_ours(line).iter().map(|o| o.hook).collect()
        }
        assert_eq!(
            hooks(&format!("x; {OURS} && /a/claude-mem hook capture")),
            ["summary", "capture"]
        );
        assert_eq!(hooks(&format!("{OURS} && echo $(date)")), ["summary"]);
        let line = format!("x && {OURS}");
        let ours = &find_ours(&line)[0];
        assert_eq!(
            &line[ours.program_start..ours.program_end],
            r#""/usr/bin/claude-mem""#
        );
    }
}
