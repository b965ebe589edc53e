//! What each screen of `browse` shows, read through the same queries the read commands use:
//! the sessions as `sessions` lists them, a session's turns as `show` reads them, a search as
//! `search` runs it (`recall::search`, the same ranked index), an item whole as `show` prints
//! it (`recall::whole`), the standing instructions as `conventions` lists them. Here they are
//! made into rows and lines, without colour codes: the screen colours the cells itself.

use std::path::Path;

use anyhow::Result;
use chrono::Local;

use super::app::{Place, Row, View};
use crate::recall::names::Names;
use crate::recall::search::{Found, Request};
use crate::recall::{Recall, team, whole};
use crate::render::{self, Color, Style, parse_time};
use crate::store::read::given::Answer;
use crate::store::read::{SessionFilter, SessionOverview, Turn};
use crate::store::rows::{Kind, short_id};

/// The most recent sessions the list holds.
const SESSIONS: usize = 500;
/// The results a search shows.
const RESULTS: usize = 100;
/// The most of a text a line shows: more than the widest terminal, which cuts the rest.
const LINE: usize = 400;

/// The database a `browse` reads, and which project it is about.
pub struct Source {
    pub recall: Recall,
    /// The project it was started in (`None`: it was asked for every one).
    pub project: Option<String>,
    style: Style,
}

impl Source {
    pub fn new(recall: Recall, project: Option<String>) -> Source {
        // Relative times as on a terminal, but no colour codes: the screen draws colours.
        let mut style = Style::detect();
        style.terminal = true;
        style.color = false;
        Source {
            recall,
            project,
            style,
        }
    }

    /// The database opened again, after a forget rebuilt its files.
    pub fn reopen(&mut self) -> Result<()> {
        if let Some(recall) = Recall::open(&self.recall.config.clone())? {
            self.recall = recall;
        }
        Ok(())
    }

    /// The screen of `place`; `all` for every project, `query` the search's words.
    pub fn load(&mut self, place: &Place, all: bool, query: &str) -> Result<View> {
        let project = if all { None } else { self.project.clone() };
        let mut view = View::new(place.clone());
        match place {
            Place::Sessions => self.sessions(&mut view, project)?,
            Place::Session(id) => self.session(&mut view, id)?,
            Place::Search => self.search(&mut view, project, query)?,
            Place::Item(kind, id) => self.item(&mut view, *kind, id)?,
            Place::Rules => self.rules(&mut view, project)?,
        }
        view.settle(1);
        Ok(view)
    }

    fn scope(project: Option<&str>) -> String {
        match project {
            Some(p) => render::path(p),
            None => "every project".to_string(),
        }
    }

    /// The sessions, most recently active first, under a heading for each day.
    fn sessions(&self, view: &mut View, project: Option<String>) -> Result<()> {
        let reader = self.recall.reader();
        let all = project.is_none();
        view.title = format!("Sessions of {}", Self::scope(project.as_deref()));
        view.empty = "No sessions here yet. a shows every project's.".into();
        let sessions = reader.sessions(&SessionFilter {
            project,
            since: None,
            until: None,
            limit: SESSIONS,
            offset: 0,
            agent: None,
        })?;
        let names = if all {
            Some(Names::load(reader)?)
        } else {
            None
        };
        let mut day = String::new();
        for s in &sessions {
            let this = local_day(&s.last_at);
            if this != day {
                view.rows.push(Row {
                    cells: vec![(this.clone(), Some(Color::Header))],
                    target: None,
                });
                day = this;
            }
            let (_, summaries) = reader.compressed(&s.session_id)?;
            let about = summaries
                .last()
                .map(|sum| {
                    if sum.completed.is_empty() {
                        sum.request.clone()
                    } else {
                        sum.completed.clone()
                    }
                })
                .or_else(|| s.first_prompt.clone())
                .unwrap_or_default();
            view.rows.push(self.session_row(s, &about, names.as_ref()));
        }
        Ok(())
    }

    fn session_row(&self, s: &SessionOverview, about: &str, names: Option<&Names>) -> Row {
        let mut cells = vec![
            (hour(&s.started_at), Some(Color::Time)),
            (short_id(&s.session_id).to_string(), Some(Color::Id)),
            (s.agent.clone(), Some(Color::Tool)),
            (render::plural(s.prompts, "prompt"), None),
            (render::plural(s.tool_calls, "tool call"), None),
        ];
        if let Some(names) = names {
            cells.push((names.shown(s.project_dir.as_deref()), None));
        }
        cells.push((render::fit(about, LINE), None));
        Row {
            cells,
            target: Some((Kind::Session, s.session_id.clone())),
        }
    }

    /// A session's prompts in order, each followed by what its recall gave, its tool calls and
    /// messages; what the session start gave first, and what the compressor made of it last.
    fn session(&self, view: &mut View, id: &str) -> Result<()> {
        let reader = self.recall.reader();
        let Some(session) = reader.session(id)? else {
            anyhow::bail!("session {} is no longer in the database", short_id(id));
        };
        let sum = &session.summary;
        view.title = format!(
            "Session {} · {} · {} · {}",
            short_id(id),
            sum.agent,
            self.style.moment(&sum.started_at),
            render::path(sum.project_dir.as_deref().unwrap_or("-"))
        );
        view.empty = "This session holds nothing.".into();
        let given = reader.given(id)?;
        let at_start = given.iter().filter(|a| a.prompt_id.is_none());
        view.rows.extend(at_start.map(|a| self.given(a)));
        for turn in &session.turns {
            view.rows.extend(self.turn(turn, &given));
        }
        let (memories, summaries) = reader.compressed(id)?;
        for m in &memories {
            view.rows
                .push(self.line(&m.created_at, &m.id, Kind::Memory, "memory", &m.title));
        }
        for s in &summaries {
            view.rows
                .push(self.line(&s.created_at, &s.id, Kind::Summary, "summary", &s.request));
        }
        Ok(())
    }

    fn turn(&self, turn: &Turn, given: &[Answer]) -> Vec<Row> {
        let mut rows = Vec::new();
        if let Some(p) = &turn.prompt {
            let what = format!("prompt #{}", p.prompt_number);
            rows.push(self.line(&p.created_at, &p.id, Kind::Prompt, &what, &p.prompt_text));
            let to_it = given.iter().filter(|a| a.prompt_id.as_ref() == Some(&p.id));
            rows.extend(to_it.map(|a| self.given(a)));
        }
        for c in &turn.calls {
            let what = if c.failed {
                format!("{} (failed)", c.tool_name)
            } else {
                c.tool_name.clone()
            };
            rows.push(self.line(&c.created_at, &c.id, Kind::Observation, &what, &c.title));
        }
        for m in &turn.messages {
            rows.push(self.line(&m.created_at, &m.id, Kind::Message, "message", &m.text));
        }
        rows
    }

    /// What an answer gave (as `claude-mem given` lists it), on a line of its own under the
    /// prompt it answered: each item's short id, its score if recall scored it, and why it
    /// cleared the bar. A line to read, not to open: the items are in the session's lists.
    fn given(&self, answer: &Answer) -> Row {
        let what = if answer.prompt_id.is_some() {
            "recall gave"
        } else {
            "session start gave"
        };
        let items: Vec<String> = answer
            .items
            .iter()
            .map(|i| match i.score {
                Some(score) => format!("{} {score:.2} {}", short_id(&i.item_id), i.reason),
                None => format!("{} {}", short_id(&i.item_id), i.reason),
            })
            .collect();
        let bytes: i64 = answer.items.iter().map(|i| i.bytes).sum();
        let text = format!(
            "{} ({bytes} B): {}",
            render::plural(items.len() as i64, "item"),
            items.join(", ")
        );
        Row {
            cells: vec![
                (self.style.clock(&answer.at), Some(Color::Time)),
                (String::new(), None),
                (what.to_string(), Some(Color::Match)),
                (render::fit(&text, LINE), None),
            ],
            target: None,
        }
    }

    /// One item of a session: when, its id, what it is, and its text on one line.
    fn line(&self, at: &str, id: &str, kind: Kind, what: &str, text: &str) -> Row {
        Row {
            cells: vec![
                (self.style.clock(at), Some(Color::Time)),
                (short_id(id).to_string(), Some(Color::Id)),
                (render::fit(what, 24), Some(Color::Tool)),
                (render::fit(text, LINE), None),
            ],
            target: Some((kind, id.to_string())),
        }
    }

    /// The search's results for `words`, ranked as `search` ranks them.
    fn search(&self, view: &mut View, project: Option<String>, words: &str) -> Result<()> {
        view.title = format!("Search {}: {words}", Self::scope(project.as_deref()));
        view.empty = if words.trim().is_empty() {
            "Type words to search for.".into()
        } else {
            "No results.".into()
        };
        if words.trim().is_empty() {
            return Ok(());
        }
        let request = Request {
            words,
            project: project.as_deref().map(Path::new),
            all: project.is_none(),
            session: None,
            since: None,
            until: None,
            tool: None,
            file: None,
            kind: None,
            agent: None,
            limit: RESULTS,
            offset: 0,
        };
        let page = match request.check("--")?.find(&self.recall.config)? {
            Found::Page(page, _) => page,
            Found::NoWords | Found::NoDatabase => return Ok(()),
        };
        if let Some(near) = &page.did_you_mean {
            view.title = format!(
                "Search {}: {words} (showing {near})",
                Self::scope(project.as_deref())
            );
        }
        for hit in &page.hits {
            let item = &hit.item;
            let what = if page.rules.contains(&item.id) {
                "standing rule".to_string()
            } else if page.team.contains(&item.id) {
                format!("{} ({})", item.kind.as_str(), team::SOURCE)
            } else {
                item.tool_name
                    .clone()
                    .unwrap_or_else(|| item.kind.as_str().into())
            };
            view.rows.push(Row {
                cells: vec![
                    (self.style.ago(&item.created_at), Some(Color::Time)),
                    (short_id(&item.id).to_string(), Some(Color::Id)),
                    (render::fit(&what, 24), Some(Color::Tool)),
                    (render::fit(&hit.snippet, LINE), None),
                ],
                target: Some((item.kind, item.id.clone())),
            });
        }
        Ok(())
    }

    /// An item whole, as `show` prints it (a team's note too, as `show` finds one).
    fn item(&self, view: &mut View, kind: Kind, id: &str) -> Result<()> {
        let reader = self.recall.reader();
        view.title = format!("{} {}", kind.as_str(), short_id(id));
        let text = if reader.kind_of(id)?.is_some() {
            whole::render(reader, kind, id, false, &self.style)?
        } else {
            match team::find(&self.recall.config, Some(&self.recall), id)?.as_slice() {
                [note] => team::shown(note, false),
                _ => anyhow::bail!("{id} is no longer in the database"),
            }
        };
        view.text = text.lines().map(str::to_string).collect();
        Ok(())
    }

    /// The current standing instructions, newest first, as `conventions` lists them.
    fn rules(&self, view: &mut View, project: Option<String>) -> Result<()> {
        let reader = self.recall.reader();
        view.title = format!(
            "Standing instructions of {}",
            Self::scope(project.as_deref())
        );
        view.empty = "No standing instructions here.".into();
        let projects = match &project {
            Some(p) => vec![p.clone()],
            None => reader.projects()?,
        };
        for p in projects {
            let mut list = reader.standing(&p)?;
            list.retain(|i| i.is_current());
            for i in list.into_iter().rev() {
                let mut cells = vec![
                    (self.style.ago(&i.said_at), Some(Color::Time)),
                    (short_id(&i.prompt).to_string(), Some(Color::Id)),
                    (
                        if i.pinned_at.is_some() {
                            "pinned"
                        } else {
                            "current"
                        }
                        .into(),
                        None,
                    ),
                ];
                if project.is_none() {
                    cells.push((render::path(&p), None));
                }
                cells.push((render::fit(&i.text, LINE), None));
                view.rows.push(Row {
                    cells,
                    target: Some((Kind::Prompt, i.prompt.clone())),
                });
            }
        }
        Ok(())
    }
}

/// The local day a time falls on, as a heading: "Sunday 29 November 2026".
fn local_day(ts: &str) -> String {
    parse_time(ts)
        .map(|at| at.with_timezone(&Local).format("%A %-d %B %Y").to_string())
        .unwrap_or_else(|| ts.to_string())
}

/// The local time of day a session started: "14:02".
fn hour(ts: &str) -> String {
    parse_time(ts)
        .map(|at| at.with_timezone(&Local).format("%H:%M").to_string())
        .unwrap_or_default()
}
