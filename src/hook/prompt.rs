//! `hook prompt` (UserPromptSubmit): the user's prompt, numbered, without its private parts
//! and secrets.
//!
//! The answer, given once the prompt is recorded, may carry earlier work the prompt is about
//! (see `recall`), always as JSON `additionalContext`: plain stdout of this event would be
//! shown to Claude.

use super::wire::Event;
use super::{Ctx, capped, meta};
use crate::ops::{Change, Write};
use crate::privacy;

pub fn decide(event: &Event, ctx: &Ctx) -> Option<Write> {
    if Event::get(&event.hook_event_name)? != "UserPromptSubmit" {
        return None;
    }
    let session_id = Event::get(&event.session_id)?;
    let prompt = Event::get(&event.prompt)?;
    if privacy::is_internal(prompt) {
        return None;
    }
    let session = ctx.session(event, session_id);
    let prompt_id = meta(&event.prompt_id);
    let clean = privacy::strip_message(prompt);
    if clean.trim().is_empty() {
        // Only private parts and reminders were left out. If something private was there the
        // turn is private; if it was only reminders there is nothing to record.
        return (privacy::strip(prompt) != prompt)
            .then(|| ctx.write(session, Change::PrivatePrompt { prompt_id }));
    }
    // Stored as written (indentation of pasted code matters); only emptiness ignores spaces.
    let clean = ctx.config.redactor.redact(&clean);
    let (text, truncated) = capped(ctx.config, &clean);
    Some(ctx.write(
        session,
        Change::Prompt {
            prompt_id,
            text,
            truncated,
        },
    ))
}
