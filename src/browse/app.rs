//! What `browse` shows and where the user is, as pure functions of the keys pressed: no
//! database, no terminal. A key changes the state and answers what the loop must do next
//! (open a place, load the current one again, forget something, quit), which `browse/mod.rs`
//! does with `source`.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::render::Color;
use crate::store::rows::Kind;

/// A screen the user can be on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The sessions of the project (or of every one), by day.
    Sessions,
    /// One session's prompts, tool calls and messages, in time order.
    Session(String),
    /// Search as you type.
    Search,
    /// One item whole, as `show` prints it.
    Item(Kind, String),
    /// The project's standing instructions.
    Rules,
}

/// A line of a list: cells of text, each maybe coloured, and what Enter opens and `d`
/// forgets; `None` for a heading (a day), which the selection passes over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub cells: Vec<(String, Option<Color>)>,
    pub target: Option<(Kind, String)>,
}

/// A screen's content and where the user is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub place: Place,
    pub title: String,
    /// A list's lines; empty for an item.
    pub rows: Vec<Row>,
    /// An item's text; empty for a list.
    pub text: Vec<String>,
    /// What a list says when it has no rows.
    pub empty: String,
    pub selected: usize,
    /// An item's first line shown.
    pub scroll: usize,
}

impl View {
    pub fn new(place: Place) -> View {
        View {
            place,
            title: String::new(),
            rows: Vec::new(),
            text: Vec::new(),
            empty: String::new(),
            selected: 0,
            scroll: 0,
        }
    }

    /// What Enter opens and `d` forgets here.
    pub fn target(&self) -> Option<&(Kind, String)> {
        match &self.place {
            Place::Item(..) => None,
            _ => self.rows.get(self.selected)?.target.as_ref(),
        }
    }

    /// The same content loaded again: the selection kept where it was, as near as it can.
    pub fn refreshed(&self, mut new: View) -> View {
        new.selected = self.selected.min(new.rows.len().saturating_sub(1));
        new.scroll = self.scroll.min(new.text.len().saturating_sub(1));
        new.settle(1);
        new
    }

    /// Moves the selection by `by` rows (or the text by `by` lines), past headings.
    fn step(&mut self, by: isize) {
        if matches!(self.place, Place::Item(..)) {
            let last = self.text.len().saturating_sub(1);
            self.scroll = self.scroll.saturating_add_signed(by).min(last);
            return;
        }
        let last = self.rows.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(by).min(last);
        self.settle(if by < 0 { -1 } else { 1 });
    }

    /// Off a heading: onto the nearest row with a target in direction `dir`, else the other way.
    pub fn settle(&mut self, dir: isize) {
        let Some(last) = self.rows.len().checked_sub(1) else {
            self.selected = 0;
            return;
        };
        let i = self.selected.min(last);
        let selectable = |i: &usize| self.rows[*i].target.is_some();
        let forward = (i..=last).find(selectable);
        let backward = (0..=i).rev().find(selectable);
        let found = if dir < 0 {
            backward.or(forward)
        } else {
            forward.or(backward)
        };
        self.selected = found.unwrap_or(i);
    }
}

/// The whole state: the screens the user went through (the last is shown), and what is asked
/// or said over them.
#[derive(Debug)]
pub struct App {
    pub views: Vec<View>,
    /// Every project's sessions and instructions, not the current one's (`a`).
    pub all: bool,
    /// The search's words as typed.
    pub query: String,
    pub help: bool,
    /// The question before a forget: what will go.
    pub asking: Option<String>,
    /// A line under the screen: what was done, or what went wrong.
    pub status: Option<String>,
    /// The lines a page holds, as last drawn (for Page Up and Page Down).
    pub page: usize,
}

/// What the loop does after a key.
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    Nothing,
    Quit,
    /// Load a place and show it over the current one.
    Open(Place),
    /// Load the current place again (the words or the scope changed).
    Reload,
    /// Ask, then forget this.
    Forget(Kind, String),
}

/// Every key, as `?` lists them and docs/browse.md documents them.
pub const KEYS: &[(&str, &str)] = &[
    ("↑ ↓  k j", "move"),
    ("PgUp PgDn", "move a page"),
    ("Home End  g G", "first, last"),
    ("Enter", "open: a session's timeline, an item in full"),
    ("Esc", "back (from search: leave it)"),
    ("/", "search as you type"),
    ("c", "the project's standing instructions"),
    ("a", "this project or every project"),
    ("d", "forget the selected item or session (y confirms)"),
    ("?", "this help"),
    ("q  Ctrl-C", "quit"),
];

impl App {
    pub fn new(first: View) -> App {
        App {
            views: vec![first],
            all: false,
            query: String::new(),
            help: false,
            asking: None,
            status: None,
            page: 10,
        }
    }

    pub fn view(&self) -> &View {
        self.views.last().expect("there is always a view")
    }

    pub fn view_mut(&mut self) -> &mut View {
        self.views.last_mut().expect("there is always a view")
    }

    /// What `key` does here.
    pub fn key(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::Nothing;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        self.status = None;
        if self.help {
            self.help = false;
            return Effect::Nothing;
        }
        if let Some(effect) = self.moved(key.code) {
            return effect;
        }
        if self.view().place == Place::Search {
            return self.typed(key.code, ctrl);
        }
        self.command(key.code)
    }

    /// The keys that move, the same on every screen.
    fn moved(&mut self, code: KeyCode) -> Option<Effect> {
        let typing = self.view().place == Place::Search;
        let page = self.page.max(1) as isize;
        let view = self.view_mut();
        match code {
            KeyCode::Up => view.step(-1),
            KeyCode::Down => view.step(1),
            KeyCode::Char('k') if !typing => view.step(-1),
            KeyCode::Char('j') if !typing => view.step(1),
            KeyCode::PageUp => view.step(-page),
            KeyCode::PageDown => view.step(page),
            KeyCode::Home => view.step(isize::MIN / 2),
            KeyCode::End => view.step(isize::MAX / 2),
            KeyCode::Char('g') if !typing => view.step(isize::MIN / 2),
            KeyCode::Char('G') if !typing => view.step(isize::MAX / 2),
            KeyCode::Enter => {
                return Some(match view.target() {
                    Some((Kind::Session, id)) if view.place != Place::Session(id.clone()) => {
                        Effect::Open(Place::Session(id.clone()))
                    }
                    Some((kind, id)) => Effect::Open(Place::Item(*kind, id.clone())),
                    None => Effect::Nothing,
                });
            }
            KeyCode::Esc => return Some(self.back()),
            _ => return None,
        }
        Some(Effect::Nothing)
    }

    /// A key on the search screen: the words typed.
    fn typed(&mut self, code: KeyCode, ctrl: bool) -> Effect {
        match code {
            KeyCode::Char('u') if ctrl => self.query.clear(),
            KeyCode::Char(c) if !ctrl => self.query.push(c),
            KeyCode::Backspace if self.query.pop().is_some() => {}
            _ => return Effect::Nothing,
        }
        Effect::Reload
    }

    /// A command key on a list or an item.
    fn command(&mut self, code: KeyCode) -> Effect {
        let place = self.view().place.clone();
        match code {
            KeyCode::Char('q') => Effect::Quit,
            KeyCode::Char('?') => {
                self.help = true;
                Effect::Nothing
            }
            KeyCode::Char('/') => Effect::Open(Place::Search),
            KeyCode::Char('c') if place != Place::Rules => Effect::Open(Place::Rules),
            KeyCode::Char('a') if matches!(place, Place::Sessions | Place::Rules) => {
                self.all = !self.all;
                Effect::Reload
            }
            KeyCode::Char('d') => match (&place, self.view().target()) {
                (Place::Item(kind, id), _) | (_, Some((kind, id))) => {
                    Effect::Forget(*kind, id.clone())
                }
                _ => Effect::Nothing,
            },
            _ => Effect::Nothing,
        }
    }

    /// Back to the screen before; from the first, nothing (`q` quits).
    fn back(&mut self) -> Effect {
        if self.views.len() > 1 {
            self.views.pop();
        }
        Effect::Nothing
    }

    /// Shows a place just loaded over the current one.
    pub fn open(&mut self, view: View) {
        self.views.push(view);
    }

    /// After a forget of `id`: the screens of what is gone are closed (an item, a session,
    /// or a session's item); the caller loads the others again.
    pub fn forgotten(&mut self, id: &str) {
        let gone = |v: &View| match &v.place {
            Place::Item(_, item) | Place::Session(item) => item == id,
            _ => false,
        };
        while self.views.len() > 1 && self.views.last().is_some_and(gone) {
            self.views.pop();
        }
    }
}

/// Whether the answer to the question before a forget is yes: `y`, nothing else.
pub fn confirmed(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char('y' | 'Y'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(app: &mut App, code: KeyCode) -> Effect {
        app.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn row(target: Option<(Kind, &str)>) -> Row {
        Row {
            cells: vec![("x".into(), None)],
            target: target.map(|(k, id)| (k, id.to_string())),
        }
    }

    fn sessions() -> App {
        let mut view = View::new(Place::Sessions);
        view.rows = vec![
            row(None),
            row(Some((Kind::Session, "s1"))),
            row(None),
            row(Some((Kind::Session, "s2"))),
        ];
        view.settle(1);
        App::new(view)
    }

    #[test]
    fn the_selection_passes_over_the_days() {
        let mut app = sessions();
        assert_eq!(app.view().selected, 1);
        press(&mut app, KeyCode::Char('j'));
        assert_eq!(app.view().selected, 3);
        press(&mut app, KeyCode::Down);
        assert_eq!(app.view().selected, 3);
        press(&mut app, KeyCode::Up);
        assert_eq!(app.view().selected, 1);
        press(&mut app, KeyCode::Char('k'));
        assert_eq!(app.view().selected, 1);
        press(&mut app, KeyCode::End);
        assert_eq!(app.view().selected, 3);
        press(&mut app, KeyCode::Home);
        assert_eq!(app.view().selected, 1);
    }

    #[test]
    fn enter_opens_a_session_and_esc_comes_back() {
        let mut app = sessions();
        let open = press(&mut app, KeyCode::Enter);
        assert_eq!(open, Effect::Open(Place::Session("s1".into())));
        let mut timeline = View::new(Place::Session("s1".into()));
        timeline.rows = vec![row(Some((Kind::Prompt, "p1")))];
        app.open(timeline);
        assert_eq!(
            press(&mut app, KeyCode::Enter),
            Effect::Open(Place::Item(Kind::Prompt, "p1".into()))
        );
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.view().place, Place::Sessions);
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.view().place, Place::Sessions);
    }

    #[test]
    fn search_takes_every_letter_as_a_word() {
        let mut app = sessions();
        assert_eq!(
            press(&mut app, KeyCode::Char('/')),
            Effect::Open(Place::Search)
        );
        app.open(View::new(Place::Search));
        for c in "jq d".chars() {
            assert_eq!(press(&mut app, KeyCode::Char(c)), Effect::Reload);
        }
        assert_eq!(app.query, "jq d");
        assert_eq!(press(&mut app, KeyCode::Backspace), Effect::Reload);
        assert_eq!(app.query, "jq ");
        let clear = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(app.key(clear), Effect::Reload);
        assert_eq!(app.query, "");
    }

    #[test]
    fn d_forgets_what_is_selected_or_shown() {
        let mut app = sessions();
        assert_eq!(
            press(&mut app, KeyCode::Char('d')),
            Effect::Forget(Kind::Session, "s1".into())
        );
        app.open(View::new(Place::Item(Kind::Observation, "o1".into())));
        assert_eq!(
            press(&mut app, KeyCode::Char('d')),
            Effect::Forget(Kind::Observation, "o1".into())
        );
        app.forgotten("o1");
        assert_eq!(app.view().place, Place::Sessions);
    }

    #[test]
    fn help_closes_on_any_key_and_q_quits() {
        let mut app = sessions();
        press(&mut app, KeyCode::Char('?'));
        assert!(app.help);
        assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::Nothing);
        assert!(!app.help);
        assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::Quit);
        assert!(confirmed(&KeyEvent::new(
            KeyCode::Char('y'),
            KeyModifiers::NONE
        )));
        assert!(!confirmed(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    }
}
