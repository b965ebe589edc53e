//! How a project is shown beside a session or a result when they are listed across projects.
//! A folder of this machine is shown as its path, where the user can go. A folder only another
//! machine has (its sessions came through sync, and no checkout here has taken them in yet) is
//! shown by the name of its repository (`acme/shop`), from the identity sync brought with it:
//! its path means nothing here.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use crate::render;
use crate::store::read::Reader;

/// The identities of other machines' folders, read once for a listing.
pub struct Names {
    identities: HashMap<String, String>,
}

impl Names {
    pub fn load(reader: &Reader) -> Result<Names> {
        Ok(Names {
            identities: reader.project_identities()?,
        })
    }

    /// The project recorded as `dir` as a listing shows it.
    pub fn shown(&self, dir: Option<&str>) -> String {
        match dir {
            None => "-".to_string(),
            Some(dir) if self.is_elsewhere(dir) => self.name(dir),
            Some(dir) => render::path(dir),
        }
    }

    /// The short name of the project recorded as `dir`: its repository's, else its folder's.
    pub fn name(&self, dir: &str) -> String {
        crate::project::name(self.identities.get(dir).map(String::as_str), dir)
    }

    /// Recorded by another machine at a path that is not a folder here.
    fn is_elsewhere(&self, dir: &str) -> bool {
        self.identities.contains_key(dir) && !Path::new(dir).is_dir()
    }
}
