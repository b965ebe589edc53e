//! `hook summary` (Stop): a request for the consumer to summarize the turn that just ended.
//!
//! Stop fires after every turn, not once per session, so this never closes the session.

use std::path::Path;

use super::wire::Event;
use super::{Ctx, capped, meta};
use crate::ops::{Change, Write};
use crate::{privacy, transcript};

pub fn decide(event: &Event, ctx: &Ctx) -> Option<Write> {
    if Event::get(&event.hook_event_name)? != "Stop" || event.stop_hook_active == Some(true) {
        return None;
    }
    let session_id = Event::get(&event.session_id)?;
    let session = ctx.session(event, session_id);
    // Older Claude Code sends no last_assistant_message: read it from the transcript's end.
    let message = match Event::get(&event.last_assistant_message) {
        Some(message) => Some(message.to_string()),
        None => session
            .transcript_path
            .as_deref()
            .and_then(|path| transcript::last_assistant_text(Path::new(path))),
    };
    let redactor = &ctx.config.redactor;
    let last_assistant_message = message
        .map(|m| redactor.redact(&privacy::strip_message(&m)).into_owned())
        .filter(|m| !m.trim().is_empty())
        .map(|m| capped(ctx.config, &m).0);
    Some(ctx.write(
        session,
        Change::SummaryRequest {
            prompt_id: meta(&event.prompt_id),
            last_assistant_message,
        },
    ))
}
