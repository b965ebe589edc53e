//! `maintain`: runs the maintenance pass (see `crate::maintain`) in the foreground and says
//! what it did.

use anyhow::Result;

use crate::config::Config;

pub fn maintain() -> Result<String> {
    let config = Config::from_env();
    let report = crate::maintain::run(&config)?;
    if report.busy {
        return Ok(
            "Another claude-mem maintain is running for this data dir; nothing done.\n".into(),
        );
    }
    let mut out = format!(
        "Applied {} spilled event{}; WAL {} -> {} bytes.\n",
        report.applied,
        if report.applied == 1 { "" } else { "s" },
        report.wal_before,
        report.wal_after
    );
    if report.waiting > 0 {
        out.push_str(&format!(
            "{} still waiting (the database did not take them); see the log in {}.\n",
            report.waiting,
            config.log_path().display()
        ));
    }
    Ok(out)
}
