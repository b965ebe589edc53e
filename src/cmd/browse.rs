//! `browse`: starts the terminal UI (`crate::browse`) on stdout, which must be a terminal:
//! in a pipe it refuses in one line, as it has nothing to print there.

use anyhow::{Result, bail};

use super::nothing_captured;
use crate::browse::{self, End, Forget};
use crate::cli::BrowseArgs;
use crate::config::Config;
use crate::emit::{self, Report};
use crate::recall::Recall;

pub fn browse(args: &BrowseArgs, forget: Forget) -> Result<Report> {
    let Some(out) = emit::terminal() else {
        bail!(
            "browse draws on a terminal, and stdout is not one: run it in a terminal \
             (search, sessions and show print to pipes)"
        );
    };
    let config = Config::from_env();
    let Some(recall) = Recall::open(&config)? else {
        return Ok(nothing_captured(&config));
    };
    let projects = &args.projects;
    match browse::run(
        recall,
        out,
        projects.project.as_deref(),
        projects.all,
        forget,
    )? {
        End::Quit => Ok(Report::default()),
        End::Signal => bail!("browse ended by a signal; the terminal is as it was"),
    }
}
