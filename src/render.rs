//! How the read commands look, in the habits of ripgrep, fd and atuin: aligned columns,
//! relative times and colour on a terminal (never with `NO_COLOR`), plain stable text in a
//! pipe, and JSON for programs. Pure: it builds strings; `emit` writes them.
//!
//! Columns and lines are measured in the columns a terminal gives the text (its display
//! width, UAX #11: a CJK character takes two, a combining mark none), not in characters.

use chrono::{DateTime, Local, Utc};
use serde_json::Value;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

pub use crate::clock::parse_time;
use crate::emit;
use crate::text::{clean, flat};
pub use crate::text::{count, one_line, plural};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    Id,
    Time,
    Tool,
    Match,
    Header,
    Warn,
    Bad,
    Good,
}

impl Color {
    fn code(self) -> &'static str {
        match self {
            Color::Id => "33",
            Color::Time => "32",
            Color::Tool => "36",
            Color::Match => "1;31",
            Color::Header => "1",
            Color::Warn => "1;33",
            Color::Bad => "1;31",
            Color::Good => "32",
        }
    }
}

/// Whether output goes to a person (a terminal) and may be coloured, and the time it is now.
#[derive(Debug, Clone)]
pub struct Style {
    pub terminal: bool,
    pub color: bool,
    now: DateTime<Utc>,
}

impl Style {
    pub fn detect() -> Style {
        let terminal = emit::stdout_is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            terminal,
            color: terminal && !no_color,
            now: Utc::now(),
        }
    }

    /// Plain text with exact times, whatever stdout is: for a program, such as the model an
    /// MCP tool answers.
    pub fn plain() -> Style {
        Style {
            terminal: false,
            color: false,
            now: Utc::now(),
        }
    }

    pub fn paint(&self, text: &str, color: Color) -> String {
        if self.color && !text.is_empty() {
            format!("\u{1b}[{}m{text}\u{1b}[0m", color.code())
        } else {
            text.to_string()
        }
    }

    /// When something happened: "5m ago" for a person, the timestamp for a program.
    pub fn ago(&self, ts: &str) -> String {
        let Some(at) = parse_time(ts) else {
            return ts.to_string();
        };
        if !self.terminal {
            return iso(ts);
        }
        self.relative(at)
            .unwrap_or_else(|| at.with_timezone(&Local).format("%Y-%m-%d").to_string())
    }

    /// "5m ago", or "in 5m" for a time ahead of the clock (a due date, another machine's
    /// clock); `None` a month or more away, where a date says more.
    fn relative(&self, at: DateTime<Utc>) -> Option<String> {
        let secs = (self.now - at).num_seconds();
        let span = secs.unsigned_abs();
        let span = match span {
            0..60 => format!("{span}s"),
            60..3600 => format!("{}m", span / 60),
            3600..172_800 => format!("{}h", span / 3600),
            172_800..2_592_000 => format!("{}d", span / 86_400),
            _ => return None,
        };
        Some(if secs < 0 {
            format!("in {span}")
        } else {
            format!("{span} ago")
        })
    }

    /// A time of day in a list of one session's items ("14:02:31"), the timestamp in a pipe.
    pub fn clock(&self, ts: &str) -> String {
        match parse_time(ts) {
            Some(at) if self.terminal => at.with_timezone(&Local).format("%H:%M:%S").to_string(),
            _ => iso(ts),
        }
    }

    /// A full local date and time with how long ago (or ahead), for a record's header.
    pub fn moment(&self, ts: &str) -> String {
        match parse_time(ts) {
            Some(at) if self.terminal => {
                let when = at.with_timezone(&Local).format("%Y-%m-%d %H:%M:%S");
                match self.relative(at) {
                    Some(relative) => format!("{when} ({relative})"),
                    None => when.to_string(),
                }
            }
            _ => iso(ts),
        }
    }

    /// `text` with the byte ranges `matches` painted.
    pub fn highlight(&self, text: &str, matches: &[(usize, usize)]) -> String {
        let mut out = String::with_capacity(text.len() + matches.len() * 12);
        let mut at = 0;
        for &(start, end) in matches {
            if start < at || end > text.len() {
                continue;
            }
            out.push_str(&text[at..start]);
            out.push_str(&self.paint(&text[start..end], Color::Match));
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// Rows of cells; every column but the last is padded to its widest cell (in display width),
/// so the last (free text) never ends in spaces.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    color: Option<Color>,
    right: bool,
}

pub fn cell(text: impl Into<String>) -> Cell {
    Cell {
        text: text.into(),
        color: None,
        right: false,
    }
}

impl Cell {
    pub fn color(mut self, color: Color) -> Cell {
        self.color = Some(color);
        self
    }

    pub fn right(mut self) -> Cell {
        self.right = true;
        self
    }
}

impl Table {
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub fn render(&self, style: &Style) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.text.width())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = " ".repeat(widths[c] - cell.text.width());
                let last = c + 1 == row.len();
                let text = match cell.color {
                    Some(color) => style.paint(&cell.text, color),
                    None => cell.text.clone(),
                };
                match (cell.right, last) {
                    (true, _) => line.push_str(&format!("{pad}{text}")),
                    (false, false) => line.push_str(&format!("{text}{pad}")),
                    (false, true) => line.push_str(&text),
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `text` in lines of at most `width` columns, the first after `first`, the others after
/// `rest` (each prefix with its own trailing space, if any), each line ending in a newline.
/// Lines break between words, never inside a `quoted command` (a word or command longer than
/// the line gets one of its own).
pub fn wrap(first: &str, text: &str, rest: &str, width: usize) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut open = false;
    for word in text.split_whitespace() {
        match words.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
        open ^= word.matches('`').count() % 2 == 1;
    }
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in words {
        let fits = line.width() + 1 + word.width() <= width;
        if !empty && !fits {
            out.push_str(line.trim_end());
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(&word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// `text` as one line of at most `columns` columns of a terminal, control sequences removed:
/// a cell of a table. (`one_line` bounds characters, for what is kept or read by a program.)
pub fn fit(text: &str, columns: usize) -> String {
    let flat = flat(text);
    if flat.width() <= columns {
        return flat;
    }
    let mut cut = String::new();
    let mut used = 0;
    for c in flat.chars() {
        used += c.width().unwrap_or(0);
        if used + 1 > columns {
            break;
        }
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// A length of time: "45s", "12m", "1h05m", "3d4h".
pub fn duration(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d{}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// Seconds from `from` to `to`, when both are timestamps.
pub fn seconds_between(from: &str, to: &str) -> Option<i64> {
    Some((parse_time(to)? - parse_time(from)?).num_seconds())
}

/// A stored timestamp to the second: `2026-11-20T10:05:00Z`.
pub fn iso(ts: &str) -> String {
    match parse_time(ts) {
        Some(at) => at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => ts.to_string(),
    }
}

/// A byte count for people: "812 B", "12.3 KiB", "4.0 MiB".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// One JSON Lines line.
pub fn json_line(value: &Value) -> String {
    format!("{value}\n")
}

/// A path for display: the home directory as `~`.
pub fn path(p: &str) -> String {
    match dirs::home_dir().and_then(|h| h.to_str().map(String::from)) {
        Some(home) if home.len() > 1 && p.starts_with(&format!("{home}/")) => {
            format!("~{}", &p[home.len()..])
        }
        _ => p.to_string(),
    }
}

/// A JSON value as indented `key: value` lines, multi-line strings as indented blocks: a
/// tool's input and answer, readable.
pub fn readable(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match v {
                    Value::Object(m) if !m.is_empty() => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        readable(v, indent + 2, out);
                    }
                    Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        readable(v, indent + 2, out);
                    }
                    Value::String(s) if s.contains('\n') => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        block(s, indent + 2, out);
                    }
                    _ => out.push_str(&format!("{pad}{key}: {}\n", scalar(v))),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&format!("{pad}-\n"));
                readable(item, indent + 2, out);
            }
        }
        Value::String(s) => block(s, indent, out),
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

/// Text indented by `indent`, control sequences removed.
pub fn block(text: &str, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for line in clean(text).trim_end().lines() {
        out.push_str(format!("{pad}{line}").trim_end());
        out.push('\n');
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => clean(s),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(terminal: bool, color: bool) -> Style {
        Style {
            terminal,
            color,
            now: parse_time("2026-11-20T12:00:00.000Z").unwrap(),
        }
    }

    #[test]
    fn times_are_relative_for_people_and_exact_for_programs() {
        let ts = "2026-11-20T09:30:00.123Z";
        assert_eq!(style(true, false).ago(ts), "2h ago");
        assert_eq!(style(false, false).ago(ts), "2026-11-20T09:30:00Z");
        assert_eq!(style(true, false).ago("2026-11-17T12:00:00Z"), "3d ago");
        assert_eq!(style(true, false).ago("2026-11-20T12:05:00Z"), "in 5m");
        assert_eq!(style(true, false).ago("2026-11-20T12:00:00Z"), "0s ago");
        assert_eq!(duration(3900), "1h05m");
        assert_eq!(duration(42), "42s");
    }

    #[test]
    fn tables_align_and_colour_only_when_asked() {
        let mut table = Table::default();
        table.row(vec![
            cell("a").color(Color::Id),
            cell("1").right(),
            cell("x"),
        ]);
        table.row(vec![cell("bbb"), cell("22").right(), cell("")]);
        assert_eq!(table.render(&style(true, false)), "a     1  x\nbbb  22\n");
        let coloured = table.render(&style(true, true));
        assert!(
            coloured.starts_with("\u{1b}[33ma\u{1b}[0m  "),
            "{coloured:?}"
        );
    }

    #[test]
    fn columns_line_up_by_display_width_not_characters() {
        let mut table = Table::default();
        // Two columns each: wide characters (CJK, an emoji), then a letter and its combining
        // accent (one column for two characters).
        for first in ["日本", "🦀x", "e\u{301}abc", "abcd"] {
            table.row(vec![cell(first), cell("|")]);
        }
        assert_eq!(
            table.render(&style(false, false)),
            "日本  |\n🦀x   |\ne\u{301}abc  |\nabcd  |\n"
        );
    }

    #[test]
    fn wide_text_wraps_and_is_cut_by_the_columns_it_takes() {
        // 12 characters, 24 columns: two lines of 10 columns, a third of 4.
        let text = "設定 ファイル を 読む 前に 確認";
        let wrapped = wrap("", text, "", 10);
        assert_eq!(wrapped, "設定\nファイル\nを 読む\n前に 確認\n");
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(fit("日本語", 6), "日本語");
        assert_eq!(fit("abc\n  def", 7), "abc def");
        assert_eq!(fit("abcdefgh", 5), "abcd…");
    }

    #[test]
    fn wrapped_lines_fit_and_keep_commands_whole() {
        let text = "not added: cannot tell the version of /opt/claude (it does not run); run \
                    `claude-mem doctor --fix` later";
        let wrapped = wrap("  Hook  ", text, "    ", 40);
        assert!(wrap("A: ", "b c", "", 40) == "A: b c\n");
        assert_eq!(
            wrapped,
            "  Hook  not added: cannot tell the\n    version of /opt/claude (it does not\n    \
             run); run `claude-mem doctor --fix`\n    later\n"
        );
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 40),
            "{wrapped}"
        );
        assert_eq!(wrap("", "short", "", 40), "short\n");
    }

    #[test]
    fn numbers_and_sizes() {
        assert_eq!(count(100_000), "100,000");
        assert_eq!(count(999), "999");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(plural(1, "prompt"), "1 prompt");
        assert_eq!(plural(2, "memory"), "2 memories");
        assert_eq!(plural(1, "summary"), "1 summary");
        assert_eq!(plural(0, "summary request"), "0 summary requests");
        assert_eq!(plural(3, "key"), "3 keys");
        assert_eq!(one_line("a\n  b\u{1b}[31m c", 4), "a b…");
    }
}
