//! A result's snippet: the words around the first match, on one line.
//!
//! FTS5's own `snippet()` starts its window at a match and runs forward, so a match at the end
//! of a text (an error after a command's output, the usual place) comes out as two or three
//! words. Instead the matched column is highlighted whole (it is bounded when indexed) and cut
//! here, with some words before the match and as many after as fit.

/// Characters of a snippet, and of them at most this many before the first match.
const WIDTH: usize = 100;
const BEFORE: usize = 30;
/// Characters of a matched word given alone at most.
const WORD_CHARS: usize = 40;

/// From the columns as `highlight()` marked them (`\x02` and `\x03` around each match), the one
/// with the most matches, as one line around its first match, and where the matches are in it
/// (byte ranges).
pub fn snippet(columns: &[String]) -> (String, Vec<(usize, usize)>) {
    let mut best = (String::new(), Vec::new());
    for column in columns {
        let marked = marks(column);
        if marked.1.len() > best.1.len() || best.0.is_empty() {
            best = marked;
        }
    }
    excerpt(best.0, best.1)
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

/// The text on one line, without the markers, and where they were.
fn marks(marked: &str) -> (String, Vec<(usize, usize)>) {
    let mut text = String::with_capacity(marked.len());
    let mut matches = Vec::new();
    let mut start = 0;
    let mut space = false;
    for c in marked.chars() {
        if space && !c.is_whitespace() && c != '\u{3}' {
            text.push(' ');
            space = false;
        }
        match c {
            '\u{2}' => start = text.len(),
            '\u{3}' => matches.push((start, text.len())),
            c if c.is_whitespace() => space = !text.is_empty(),
            c => text.push(c),
        }
    }
    (text, matches)
}

/// At most [`WIDTH`] characters of `text` around its first match, cut between words: up to
/// [`BEFORE`] before it, more when the text ends soon after it.
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
