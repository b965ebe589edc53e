//! `show <id>`: one item whole and readable, or as one JSON object (see `recall::whole`).

use anyhow::Result;

use crate::config::Config;
use crate::emit::Report;
use crate::recall::{Recall, team, whole};
use crate::render::Style;

pub fn show(id: &str, json: bool) -> Result<Report> {
    let config = Config::from_env();
    let mut recall = Recall::open_for_item(&config)?;
    let (kind, id) = match recall.resolve(id) {
        Ok(found) => found,
        Err(err) => {
            return match team::find(&config, Some(&recall), id)?.as_slice() {
                [note] => Ok(team::shown(note, json).into()),
                _ => Err(err),
            };
        }
    };
    Ok(whole::render(recall.reader(), kind, &id, json, &Style::detect())?.into())
}
