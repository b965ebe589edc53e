//! File-system helpers shared by the store, the spill folder and the settings writer: private
//! directories and files (prompts and tool output are private data), and atomic replacement.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Creates `dir` (and its parents) with mode 0700 where it is missing.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Like [`private_dir`], for a folder under the shared temp dir, whose name anyone can guess:
/// refuses one that is a symlink or that others can enter, so nobody else can plant it and
/// read what we put there.
pub fn private_temp_dir(dir: &Path) -> io::Result<()> {
    private_dir(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if !meta.is_dir() || meta.permissions().mode() & 0o077 != 0 {
            return Err(io::Error::other(format!(
                "{} is not a private folder (a symlink, or open to others); not using it",
                dir.display()
            )));
        }
    }
    #[cfg(not(unix))]
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    Ok(())
}

/// Opens a new file with mode 0600; fails if it exists.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new one, never a part:
/// a temp file in the same folder, fsync, rename over, fsync the folder.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = create_private(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, dir.join(name))?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename durable. Best effort: not every platform can open a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}
