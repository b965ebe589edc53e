//! `export`: the memory as JSON Lines (see `store::export` for the format), to stdout or to a
//! file made private (mode 0600) and written whole or not at all; with `--html`, as a page of
//! the same records (`page`). Filters as for `search`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{bounds, nothing_captured};
use crate::cli::ExportArgs;
use crate::config::Config;
use crate::emit::{self, Report};
use crate::recall::{Recall, usage};
use crate::store::export::{self, Filter};
use crate::store::rows::Kind;

const WAIT: Duration = Duration::from_secs(5);

pub fn export(args: &ExportArgs) -> Result<Report> {
    let config = Config::from_env();
    let Some(mut recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    let (since, until) = bounds(&args.range)?;
    let session = match &args.session {
        Some(id) => match recall.resolve(id)? {
            (Kind::Session, id) => Some(id),
            (kind, _) => {
                return Err(usage(format!("{id} is a {}, not a session", kind.as_str())));
            }
        },
        None => None,
    };
    // A session is exported whole wherever its project is, unless a project is named.
    let project = match (&session, &args.projects.project) {
        (Some(_), None) => None,
        _ => super::project(&args.projects, &recall)?,
    };
    let filter = Filter {
        project,
        session,
        since,
        until,
    };
    let conn = crate::store::open_read_only(&config, Instant::now() + WAIT)?
        .context("the database went away")?;
    if let Some(path) = &args.html {
        let written = crate::page::write(&conn, &filter, path)?;
        return Ok(format!(
            "Exported {} to {} ({}), a page to open in a browser.\n",
            export::describe(&written.counts),
            path.display(),
            crate::render::bytes(written.bytes)
        )
        .into());
    }
    let Some(path) = &args.output else {
        let mut out = emit::stdout();
        return match export::export(&conn, &filter, &mut out) {
            Ok(counts) => Ok(Report {
                note: Some(format!("exported {}", export::describe(&counts))),
                ..Report::default()
            }),
            // The reader stopped early (`| head`): what it wanted, it got.
            Err(err) if is_broken_pipe(&err) => Ok(Report::default()),
            Err(err) => Err(err),
        };
    };
    let (counts, _) =
        crate::fsutil::write_whole(path, |out| export::export(&conn, &filter, &mut *out))?;
    Ok(format!(
        "Exported {} to {}.\n",
        export::describe(&counts),
        path.display()
    )
    .into())
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
