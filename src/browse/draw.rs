//! How `browse` looks: a title line, the screen's list or text, and a line of keys (or what
//! was just done) at the bottom; the help and the question before a forget over them. Drawn
//! from the state alone, at whatever size the terminal has, each time anew (ratatui sends only
//! what changed). Colour only when allowed (never with `NO_COLOR`); the selection is shown in
//! reverse video, which needs none.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, List, ListItem, ListState, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::app::{App, KEYS, Place, Row, View};
use crate::render::Color;

/// Draws the whole screen; `color` when colour is allowed.
pub fn draw(frame: &mut Frame, app: &mut App, color: bool) {
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    app.page = usize::from(body.height.saturating_sub(1)).max(1);
    let view = app.view();
    let title = match view.place {
        Place::Search => format!("Search: {}▏", app.query),
        _ => view.title.clone(),
    };
    frame.render_widget(Paragraph::new(Line::from(Span::styled(title, bold()))), top);
    if let Place::Item(..) = view.place {
        text(frame, view, body);
    } else {
        list(frame, view, body, color);
    }
    let footer = app
        .status
        .clone()
        .unwrap_or_else(|| hints(&view.place).into());
    frame.render_widget(Paragraph::new(footer), bottom);
    if app.help {
        help(frame);
    }
    if let Some(what) = &app.asking {
        asking(frame, what);
    }
}

fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The keys of this screen, most used first (`?` lists them all).
fn hints(place: &Place) -> &'static str {
    match place {
        Place::Search => "type words · ↑↓ move · Enter open · Esc back · Ctrl-C quit",
        Place::Item(..) => "↑↓ scroll · d forget · / search · Esc back · ? help · q quit",
        _ => "↑↓ move · Enter open · / search · d forget · a all · ? help · q quit",
    }
}

/// A list, its columns aligned, the selection in reverse video.
fn list(frame: &mut Frame, view: &View, area: Rect, color: bool) {
    if view.rows.is_empty() {
        frame.render_widget(Paragraph::new(view.empty.as_str()), area);
        return;
    }
    let widths = widths(&view.rows);
    let items: Vec<ListItem> = view
        .rows
        .iter()
        .map(|row| ListItem::new(line(row, &widths, color)))
        .collect();
    let list = List::new(items).highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = ListState::default().with_selected(Some(view.selected));
    frame.render_stateful_widget(list, area, &mut state);
}

/// The width of each column but the last (which takes the rest), over the rows that are not
/// headings.
fn widths(rows: &[Row]) -> Vec<usize> {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows.iter().filter(|r| r.target.is_some()) {
        for (i, (text, _)) in row.cells.iter().enumerate().take(row.cells.len() - 1) {
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(text.width()),
                None => widths.push(text.width()),
            }
        }
    }
    widths
}

fn line(row: &Row, widths: &[usize], color: bool) -> Line<'static> {
    if row.target.is_none() {
        let text: String = row.cells.iter().map(|(t, _)| t.as_str()).collect();
        return Line::from(Span::styled(text, bold()));
    }
    let last = row.cells.len() - 1;
    let spans: Vec<Span> = row
        .cells
        .iter()
        .enumerate()
        .map(|(i, (text, paint))| {
            let mut text = text.clone();
            if i < last {
                let pad = widths
                    .get(i)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(text.width());
                text.push_str(&" ".repeat(pad + 2));
            }
            Span::styled(text, style(*paint, color))
        })
        .collect();
    Line::from(spans)
}

/// The terminal's style of one of `render`'s colours: its colour only when allowed.
fn style(paint: Option<Color>, color: bool) -> Style {
    use ratatui::style::Color as C;
    let Some(paint) = paint else {
        return Style::new();
    };
    let base = match paint {
        Color::Header | Color::Match | Color::Warn | Color::Bad => bold(),
        _ => Style::new(),
    };
    if !color {
        return base;
    }
    base.fg(match paint {
        Color::Id | Color::Warn => C::Yellow,
        Color::Time | Color::Good => C::Green,
        Color::Tool => C::Cyan,
        Color::Match | Color::Bad => C::Red,
        Color::Header => return base,
    })
}

/// An item's text from its first line shown, wrapped at the terminal's width.
fn text(frame: &mut Frame, view: &View, area: Rect) {
    let lines: Vec<Line> = view
        .text
        .iter()
        .skip(view.scroll)
        .map(|l| Line::from(l.as_str()))
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// A box of `height` lines in the middle of the screen, at most `width` wide.
fn middle(frame: &Frame, width: u16, height: u16) -> Rect {
    let area = frame.area();
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Every key, with what it does.
fn help(frame: &mut Frame) {
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<15}"), bold()),
                Span::raw(*what),
            ])
        })
        .collect();
    let area = middle(frame, 72, KEYS.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Keys (any key closes) ")),
        area,
    );
}

/// The question before a forget: what will go, and how to say yes.
fn asking(frame: &mut Frame, what: &str) {
    let mut lines: Vec<Line> = what.lines().map(|l| Line::from(l.to_string())).collect();
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "y forgets it for good; any other key keeps it.",
        bold(),
    )));
    let area = middle(frame, 78, lines.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" Forget? ")),
        area,
    );
}
