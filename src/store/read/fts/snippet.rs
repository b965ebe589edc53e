//! A result's snippet: the words around the first match, on one line.
//!
//! FTS5's own `snippet()` starts its window at a match and runs forward, so a match at the end
//! of a text (an error after a command's output, the usual place) comes out as two or three
//! words. Instead the matched column is highlighted whole (it is bounded when indexed) and cut
//! here, with some words before the match and as many after as fit. Only the stretch of the
//! column the window can reach is made one line: the rest of a long output is never read.

/// Characters of a snippet, and of them at most this many before the first match.
const WIDTH: usize = 100;
const BEFORE: usize = 30;
/// Characters of a matched word given alone at most.
const WORD_CHARS: usize = 40;
/// Characters other than whitespace read on each side of the first match: the window can start
/// [`WIDTH`] characters before it (near the end of a text) and ends at most [`WIDTH`] after it.
const READ: usize = WIDTH + 2;

/// A column's text and its matches (byte ranges, in order, apart).
pub type Marked<'a> = (&'a str, &'a [(usize, usize)]);

/// From the columns as `highlight()` marked them (`\x02` and `\x03` around each match), the one
/// with the most matches, as one line around its first match, and where the matches are in it
/// (byte ranges).
pub fn snippet(columns: &[String]) -> (String, Vec<(usize, usize)>) {
    let unmarked: Vec<(String, Vec<(usize, usize)>)> = columns.iter().map(|c| unmark(c)).collect();
    let columns: Vec<Marked> = unmarked
        .iter()
        .map(|(text, spans)| (text.as_str(), spans.as_slice()))
        .collect();
    around(&columns)
}

/// The column with the most matches (the first of those, one with any text before one with
/// none), as one line around its first match, and where the matches are in that line.
pub fn around(columns: &[Marked]) -> (String, Vec<(usize, usize)>) {
    let mut best: Option<Marked> = None;
    for &column in columns {
        if best.is_none_or(|(text, spans)| column.1.len() > spans.len() || text.trim().is_empty()) {
            best = Some(column);
        }
    }
    let Some((text, spans)) = best else {
        return (String::new(), Vec::new());
    };
    let (first, first_end) = spans.first().copied().unwrap_or_default();
    let from = back(text, first);
    let to = ahead(text, first_end);
    let (line, matches) = one_line(text, spans, from, to);
    excerpt(line, matches)
}

/// The matched words of a column as `highlight()` marked it, lower case, each once, at most
/// `max` of them (each of at most [`WORD_CHARS`] characters): what says why a text matched
/// without quoting it.
pub fn matched(marked: &str, max: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for span in marked.split('\u{2}').skip(1) {
        let span = span.split('\u{3}').next().unwrap_or("");
        for word in span.split_whitespace() {
            let word: String = word.to_lowercase().chars().take(WORD_CHARS).collect();
            if words.len() < max && !words.contains(&word) {
                words.push(word);
            }
        }
    }
    words
}

/// A column as `highlight()` marked it: its text without the marks, and where they were.
fn unmark(marked: &str) -> (String, Vec<(usize, usize)>) {
    let mut text = String::with_capacity(marked.len());
    let mut spans = Vec::new();
    let mut start = 0;
    for piece in marked.split_inclusive(['\u{2}', '\u{3}']) {
        match piece.strip_suffix('\u{2}') {
            Some(piece) => {
                text.push_str(piece);
                start = text.len();
            }
            None => match piece.strip_suffix('\u{3}') {
                Some(piece) => {
                    text.push_str(piece);
                    spans.push((start, text.len()));
                }
                None => text.push_str(piece),
            },
        }
    }
    (text, spans)
}

/// Where to start reading `text` for a window around `first`: [`READ`] characters other than
/// whitespace before it, on one of them, or the start.
fn back(text: &str, first: usize) -> usize {
    text[..first]
        .char_indices()
        .rev()
        .filter(|(_, c)| !c.is_whitespace())
        .nth(READ - 1)
        .map_or(0, |(at, _)| at)
}

/// Where to stop reading `text` for a window around a match that ends at `end`: after
/// [`READ`] characters other than whitespace from there, or the end.
fn ahead(text: &str, end: usize) -> usize {
    text[end..]
        .char_indices()
        .filter(|(_, c)| !c.is_whitespace())
        .nth(READ)
        .map_or(text.len(), |(at, _)| end + at)
}

/// `text[from..to]` on one line (each run of whitespace one space, none at either end), and
/// where the `spans` within it are in that line.
fn one_line(
    text: &str,
    spans: &[(usize, usize)],
    from: usize,
    to: usize,
) -> (String, Vec<(usize, usize)>) {
    let mut line = String::with_capacity(to - from);
    let mut matches = Vec::new();
    let mut spans = spans
        .iter()
        .filter(|&&(a, b)| from <= a && a < b && b <= to)
        .peekable();
    let mut open = None;
    let mut space = false;
    for (at, c) in text[from..to].char_indices() {
        let at = from + at;
        if let Some(start) = open
            && spans.peek().is_some_and(|&&(_, b)| b == at)
        {
            matches.push((start, line.len()));
            spans.next();
            open = None;
        }
        if c.is_whitespace() {
            space = !line.is_empty();
            continue;
        }
        if space {
            line.push(' ');
            space = false;
        }
        if open.is_none() && spans.peek().is_some_and(|&&(a, _)| a == at) {
            open = Some(line.len());
        }
        line.push(c);
    }
    if let Some(start) = open {
        matches.push((start, line.len()));
    }
    (line, matches)
}

/// At most [`WIDTH`] characters of `text` around its first match, cut between words: up to
/// [`BEFORE`] before it, more when the text ends soon after it. What the window reaches of a
/// line is all there when `text` is a stretch of it with [`READ`] characters or more on each
/// side of its first match that was cut.
fn excerpt(text: String, matches: Vec<(usize, usize)>) -> (String, Vec<(usize, usize)>) {
    if text.chars().count() <= WIDTH {
        return (text, matches);
    }
    let first = matches.first().map_or(0, |m| m.0);
    let back = |from: usize, n: usize| {
        text[..from]
            .char_indices()
            .rev()
            .nth(n - 1)
            .map_or(0, |(i, _)| i)
    };
    // Near the end, the window moves back so that it is full.
    let mut start = back(first, BEFORE).min(back(text.len(), WIDTH));
    if start > 0
        && let Some(space) = text[start..first].find(' ')
    {
        start += space + 1;
    }
    let mut end = text[start..]
        .char_indices()
        .nth(WIDTH)
        .map_or(text.len(), |(i, _)| start + i);
    if end < text.len()
        && let Some(space) = text[start..end].rfind(' ').filter(|&s| start + s > first)
    {
        end = start + space;
    }
    let lead = if start > 0 { "…" } else { "" };
    let tail = if end < text.len() { "…" } else { "" };
    let shift = |at: usize| at - start + lead.len();
    let kept = matches
        .into_iter()
        .filter(|&(a, b)| a >= start && b <= end)
        .map(|(a, b)| (shift(a), shift(b)))
        .collect();
    (format!("{lead}{}{tail}", &text[start..end]), kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown((text, matches): (String, Vec<(usize, usize)>)) -> String {
        let mut out = text.clone();
        for &(a, b) in matches.iter().rev() {
            out.insert(b, ']');
            out.insert(a, '[');
        }
        out
    }

    #[test]
    fn a_short_column_is_whole_on_one_line() {
        assert_eq!(
            shown(snippet(&[
                "the \u{2}merge\u{3}\n  of \u{2}settings\u{3}".into()
            ])),
            "the [merge] of [settings]"
        );
    }

    #[test]
    fn a_match_at_the_end_keeps_the_words_before_it() {
        let body: String = (0..40).map(|i| format!("line{i} ok\n")).collect();
        let marked = format!("{body}error: \u{2}database\u{3} is \u{2}locked\u{3}");
        let found = snippet(&["Bash\ncargo test".into(), marked]);
        let length = found.0.chars().count();
        assert!(
            (WIDTH - 10..=WIDTH + 1).contains(&length),
            "a full window: {}",
            found.0
        );
        let text = shown(found);
        assert!(
            text.starts_with('…') && text.ends_with("line39 ok error: [database] is [locked]"),
            "{text}"
        );
    }

    #[test]
    fn matched_words_are_the_marked_ones_once_each() {
        let marked = "first run \u{2}npx\u{3} -y \u{2}Walrus\u{3}-fix; \u{2}walrus turnstile\u{3}";
        assert_eq!(matched(marked, 5), ["npx", "walrus", "turnstile"]);
        assert_eq!(matched(marked, 1), ["npx"]);
        assert!(matched("no marks here", 5).is_empty());
    }

    /// Read from the stretch around its first match, a column makes the snippet it makes read
    /// whole: long and short texts, runs of whitespace, matches at the start, in the middle,
    /// at the end, and long ones.
    #[test]
    fn the_window_read_is_the_window_of_the_whole_text() {
        let words = [
            "error:",
            "database",
            "is",
            "locked",
            "ok",
            "a",
            "日本語",
            "café",
            "--",
        ];
        let gaps = [" ", "\n", "   ", "\n\n\t", " \u{3000} "];
        let mut next = crate::text::made_up::picker(0x2545_f491_4f6c_dd1d);
        for round in 0..2000 {
            let mut text = String::from(gaps[next(gaps.len())]);
            let mut spans = Vec::new();
            let length = [3, 30, 150, 600][round % 4];
            let long_match = next(10) == 0;
            for _ in 0..next(length) {
                let start = text.len();
                text.push_str(words[next(words.len())]);
                if next(12) == 0 {
                    if long_match {
                        for _ in 0..next(60) {
                            text.push_str(gaps[next(gaps.len())]);
                            text.push_str(words[next(words.len())]);
                        }
                    }
                    spans.push((start, text.len()));
                }
                text.push_str(gaps[next(gaps.len())]);
            }
            let (line, matches) = one_line(&text, &spans, 0, text.len());
            let whole = excerpt(line, matches);
            assert_eq!(around(&[(&text, &spans)]), whole, "{text:?} {spans:?}");
            if !spans.is_empty() {
                let head = ("Bash", &[][..]);
                assert_eq!(
                    around(&[head, (&text, &spans)]),
                    whole,
                    "{text:?} {spans:?}"
                );
            }
        }
    }

    #[test]
    fn a_match_at_the_start_runs_on_after_it() {
        let tail: String = (0..40).map(|i| format!(" word{i}")).collect();
        let text = shown(snippet(&[format!("\u{2}merge\u{3}{tail}")]));
        assert!(
            text.starts_with("[merge] word0 word1") && text.ends_with('…'),
            "{text}"
        );
        assert!(!text.ends_with(" …"), "cut between words: {text}");
    }
}
