//! `hook cleanup` (SessionEnd): the session is closed. All SessionEnd hooks share a very small
//! time budget, so this is one UPDATE and a passive checkpoint, nothing more.

use super::wire::Event;
use super::{Ctx, meta};
use crate::ops::{Change, Write};

pub fn decide(event: &Event, ctx: &Ctx) -> Option<Write> {
    if Event::get(&event.hook_event_name)? != "SessionEnd" {
        return None;
    }
    let session_id = Event::get(&event.session_id)?;
    Some(ctx.write(
        ctx.session(event, session_id),
        Change::SessionEnd {
            reason: meta(&event.reason),
        },
    ))
}
