//! `maintain`: runs the maintenance pass (see `crate::maintain`) in the foreground and says
//! what it did; or, started by a hook with `--team`, makes a project's digest of its team
//! notes (see `crate::team::digest`); or, started by a hook with `--checkpoint`, copies the
//! WAL back (see `crate::maintain::copy_back`).

use anyhow::Result;

use crate::config::Config;
use crate::render;

pub fn maintain(auto: bool, team: Option<&str>, checkpoint: bool) -> Result<String> {
    let config = Config::from_env();
    if checkpoint {
        let wal = crate::maintain::copy_back(&config)?;
        return Ok(format!("WAL {} -> {} bytes.\n", wal.0, wal.1));
    }
    if let Some(project) = team {
        return Ok(match crate::recall::team::digest(&config, project)? {
            Some(notes) => format!(
                "Made the digest of {} of {project}.\n",
                render::plural(notes as i64, "team note")
            ),
            None => format!("The digest of the team notes of {project} needs no making.\n"),
        });
    }
    let mut report = crate::maintain::run(&config, auto)?;
    // Sync, when due, after the rest (it waits on the network, the rest must not wait for
    // it); what it deleted (records forgotten on another machine) is rebuilt out right after.
    if auto && crate::sync::background(&config) {
        report = crate::maintain::run(&config, auto)?;
    }
    if report.busy {
        return Ok(
            "Another claude-mem maintain is running for this data dir; nothing done.\n".into(),
        );
    }
    if let Some(Err(why)) = &report.rebuilt {
        anyhow::bail!(
            "the database could not be rebuilt, so old copies of deleted rows may remain in it \
             ({why}): {} again",
            super::how_to_rebuild(&config)
        );
    }
    let mut out = format!(
        "Applied {} spilled event{}; WAL {} -> {} bytes.\n",
        report.applied,
        if report.applied == 1 { "" } else { "s" },
        report.wal_before,
        report.wal_after
    );
    if report.rebuilt.is_some() {
        out.push_str("Rebuilt the database and the search index: what was deleted left no copy.\n");
    }
    if let Some(r) = report
        .retention
        .as_ref()
        .filter(|r| r.deleted.sessions + r.reduced.rows > 0 || r.freed_bytes > 0)
    {
        out.push_str(&format!(
            "Retention: deleted {}, reduced {}, gave back {}{}.\n",
            render::plural(r.deleted.sessions, "session"),
            render::plural(r.reduced.rows, "tool call"),
            render::bytes(r.freed_bytes),
            if r.finished {
                ""
            } else {
                "; more at the next session end (or claude-mem prune)"
            }
        ));
    }
    if report.waiting > 0 {
        out.push_str(&format!(
            "{} still waiting (the database did not take them); see the log in {}.\n",
            report.waiting,
            config.log_path().display()
        ));
    }
    Ok(out)
}
