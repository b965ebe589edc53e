//! `install-hooks` / `uninstall-hooks`.

use anyhow::{Result, bail};

use crate::cli::SettingsArgs;

pub fn install(_args: &SettingsArgs) -> Result<String> {
    bail!("install-hooks is not built yet")
}

pub fn uninstall(_args: &SettingsArgs) -> Result<String> {
    bail!("uninstall-hooks is not built yet")
}
