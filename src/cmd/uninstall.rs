//! `uninstall-hooks`: removes every claude-mem handler from a Claude Code settings file,
//! whatever binary path it carries, and nothing else.

use anyhow::Result;

use crate::cli::SettingsArgs;
use crate::settings::merge;
use crate::settings::{Written, settings_path, update};

pub fn uninstall(args: &SettingsArgs) -> Result<String> {
    let path = settings_path(args)?;
    let outcome = update(&path, args.dry_run, false, |root| {
        Ok(merge::uninstall(root))
    })?;
    let mut out = match &outcome.written {
        Written::Missing => {
            return Ok(format!(
                "Nothing to remove: {} does not exist.\n",
                path.display()
            ));
        }
        Written::Unchanged | Written::Created => {
            return Ok(format!(
                "Nothing to remove: there are no claude-mem hooks in {}.\n",
                path.display()
            ));
        }
        Written::Replaced { .. } => format!("Removed claude-mem hooks from {}:\n", path.display()),
        Written::WouldChange { diff } => format!(
            "Dry run: nothing was written. Uninstalling would change {} like this:\n{diff}\n\
             Hooks to remove:\n",
            path.display()
        ),
    };
    for change in &outcome.report {
        out.push_str(&format!("  {:<20} hook {}\n", change.event, change.hook));
    }
    out.extend(outcome.split_links_note(&path));
    if let Written::Replaced {
        backup: Some(backup),
    } = &outcome.written
    {
        out.push_str(&format!(
            "The file as it was before is kept in {}\n",
            backup.display()
        ));
    }
    Ok(out)
}
