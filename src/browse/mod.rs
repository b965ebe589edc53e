//! `browse`: the memory in a terminal UI, in the habits of atuin and lazygit. Another
//! renderer over the read side the commands share (`source`: the same queries as `sessions`,
//! `search`, `show` and `conventions`), with the state a pure function of the keys (`app`),
//! the drawing apart from it (`draw`), and the terminal's set-up and restore in a guard of its
//! own (`term`). No server and no port; it reads the database read-only (it never holds a
//! write lock a hook would wait on) and writes only what the user asks: a forget, through the
//! very function `forget` runs, handed in by `cmd`.
//!
//! What it draws goes to the terminal through `emit::Terminal`, the stdout handle `emit` gives
//! out only when stdout is a terminal: `emit` stays the one writer of stdout.

pub mod app;
mod draw;
mod source;
mod term;

use std::path::Path;

use anyhow::Result;
use ratatui::crossterm::event::{Event, KeyEventKind};

use crate::emit;
use crate::recall::Recall;
use crate::render::Style;
use crate::store::forget::Target;
use crate::store::rows::Kind;
use app::{App, Effect, Place};
use source::Source;
use term::Screen;

/// How a forget is done: `forget`'s own function (see `cmd::forget::for_good`), which shows
/// its `ask` what will go and goes on only on its `None`.
pub type Forget =
    fn(&mut Recall, Target, &mut dyn FnMut(&str) -> Result<Option<String>>) -> Result<String>;

/// How `browse` ended.
pub enum End {
    /// The user quit.
    Quit,
    /// A signal (SIGTERM, SIGINT) asked it to end; the terminal is restored.
    Signal,
}

/// Browses the memory in `recall` on `out` until the user quits: the sessions of the project
/// of `project` (of the current directory when `None`), or of every project with `all`.
pub fn run(
    recall: Recall,
    out: emit::Terminal,
    project: Option<&Path>,
    all: bool,
    forget: Forget,
) -> Result<End> {
    let here = recall.project(project, false)?;
    let mut source = Source::new(recall, here);
    let first = source.load(&Place::Sessions, all, "")?;
    let mut app = App::new(first);
    app.all = all;
    let color = Style::detect().color;
    let mut screen = Screen::open(out)?;
    let mut browse = Browse {
        screen: &mut screen,
        source: &mut source,
        app: &mut app,
        color,
        forget,
    };
    browse.run()
}

/// The loop's parts.
struct Browse<'a> {
    screen: &'a mut Screen,
    source: &'a mut Source,
    app: &'a mut App,
    color: bool,
    forget: Forget,
}

impl Browse<'_> {
    /// Draws, takes the keys typed meanwhile, does what they ask, and draws again. Keys that
    /// come together (typing fast in a search) are taken together: the search runs once,
    /// for their last words.
    fn run(&mut self) -> Result<End> {
        loop {
            self.draw()?;
            let Some(mut event) = self.screen.next()? else {
                return Ok(End::Signal);
            };
            let mut reload = false;
            loop {
                match self.effect(&event) {
                    Effect::Reload => reload = true,
                    Effect::Quit => return Ok(End::Quit),
                    effect => {
                        if std::mem::take(&mut reload) {
                            self.reload();
                        }
                        self.act(effect)?;
                    }
                }
                match self.screen.pending()? {
                    Some(next) => event = next,
                    None => break,
                }
            }
            if reload {
                self.reload();
            }
            if self.screen.stopped() {
                return Ok(End::Signal);
            }
        }
    }

    fn draw(&mut self) -> Result<()> {
        let (app, color) = (&mut *self.app, self.color);
        self.screen
            .terminal
            .draw(|frame| draw::draw(frame, app, color))?;
        Ok(())
    }

    fn effect(&mut self, event: &Event) -> Effect {
        match event {
            Event::Key(key) => self.app.key(*key),
            // A resize is drawn anew at the new size; nothing else changes.
            _ => Effect::Nothing,
        }
    }

    fn act(&mut self, effect: Effect) -> Result<()> {
        match effect {
            Effect::Open(place) => {
                if place == Place::Search {
                    self.app.query.clear();
                }
                match self.source.load(&place, self.app.all, &self.app.query) {
                    Ok(view) => self.app.open(view),
                    Err(err) => self.app.status = Some(one_line(&format!("{err:#}"))),
                }
            }
            Effect::Forget(kind, id) => self.forget(kind, id)?,
            Effect::Nothing | Effect::Reload | Effect::Quit => {}
        }
        Ok(())
    }

    /// The current screen loaded again (its words or its scope changed).
    fn reload(&mut self) {
        let app = &mut *self.app;
        let place = app.view().place.clone();
        match self.source.load(&place, app.all, &app.query) {
            Ok(view) => {
                let fresh = app.view().refreshed(view);
                *app.view_mut() = fresh;
            }
            Err(err) => app.status = Some(one_line(&format!("{err:#}"))),
        }
    }

    /// Forgets what `d` named, once the user, shown what will go, says yes; then the screens
    /// of what went are closed and the others loaded again.
    fn forget(&mut self, kind: Kind, id: String) -> Result<()> {
        let (screen, app, color) = (&mut *self.screen, &mut *self.app, self.color);
        let mut ask = |what: &str| -> Result<Option<String>> {
            app.asking = Some(what.to_string());
            let yes = loop {
                screen
                    .terminal
                    .draw(|frame| draw::draw(frame, app, color))?;
                match screen.next()? {
                    None => break false,
                    Some(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                        break app::confirmed(&key);
                    }
                    Some(_) => {}
                }
            };
            app.asking = None;
            Ok((!yes).then(|| "Nothing forgotten.".to_string()))
        };
        let done = (self.forget)(
            &mut self.source.recall,
            Target::of(kind, id.clone()),
            &mut ask,
        );
        let status = match done {
            Ok(done) => done,
            Err(err) => format!("{err:#}"),
        };
        self.app.status = Some(one_line(&status));
        self.source.reopen()?;
        self.app.forgotten(&id);
        for i in 0..self.app.views.len() {
            let place = self.app.views[i].place.clone();
            if let Ok(view) = self.source.load(&place, self.app.all, &self.app.query) {
                self.app.views[i] = self.app.views[i].refreshed(view);
            }
        }
        Ok(())
    }
}

/// A command's answer of several lines as one status line.
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}
