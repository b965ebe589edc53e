//! What the session-start context gave a session, so that per-prompt recall does not hand the
//! same items again: the sessions it listed (their first prompt, summary and closing message
//! were shown) and the memories it named. One small file per session in the data dir, written
//! by `hook context`, read by `hook prompt`, removed when the session ends. It keeps hashes of
//! the ids, not the ids: what `forget` deletes leaves no id of it here.

use std::io::Read;
use std::path::PathBuf;

use crate::config::{Config, fnv1a};
use crate::fsutil::{self, Access, Durability};

/// The most of a file read back: far more than a context of 9,500 characters can name.
const READ_LIMIT: u64 = 64 * 1024;

/// What a session was given: hashes of ids (see [`key`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Given {
    /// The sessions listed.
    pub sessions: Vec<u64>,
    /// The items named by id (memories).
    pub items: Vec<u64>,
}

/// What an id is kept as.
pub fn key(id: &str) -> u64 {
    fnv1a(id.as_bytes())
}

impl Given {
    pub fn has_session(&self, id: &str) -> bool {
        self.sessions.contains(&key(id))
    }

    pub fn has_item(&self, id: &str) -> bool {
        self.items.contains(&key(id))
    }
}

fn path(config: &Config, session_id: &str) -> PathBuf {
    config
        .given_dir()
        .join(format!("{:016x}", fnv1a(session_id.as_bytes())))
}

/// Records what `session_id` was given, replacing what an earlier start of it was (a resume
/// or a compaction gives anew). Best effort: without the file, recall may repeat an item.
pub fn record(config: &Config, session_id: &str, given: &Given) {
    let dir = config.given_dir();
    let mut text = String::new();
    for (tag, ids) in [("session", &given.sessions), ("item", &given.items)] {
        for id in ids {
            text.push_str(&format!("{tag} {id:016x}\n"));
        }
    }
    let name = format!("{:016x}", fnv1a(session_id.as_bytes()));
    let _ = fsutil::our_dir(&dir)
        .and_then(|_| fsutil::write_atomic(&dir, &name, text.as_bytes(), Durability::Kill));
}

/// What `session_id` was given; nothing when no context was given (or it is unreadable).
pub fn read(config: &Config, session_id: &str) -> Given {
    let mut text = String::new();
    let read = fsutil::open_ours(&path(config, session_id), Access::Read)
        .and_then(|file| file.take(READ_LIMIT).read_to_string(&mut text));
    let mut given = Given::default();
    if read.is_err() {
        return given;
    }
    for line in text.lines() {
        let (tag, hash) = line.split_once(' ').unwrap_or_default();
        let Ok(hash) = u64::from_str_radix(hash, 16) else {
            continue;
        };
        match tag {
            "session" => given.sessions.push(hash),
            "item" => given.items.push(hash),
            _ => {}
        }
    }
    given
}

/// Removes a session's file at its end.
pub fn forget_session(config: &Config, session_id: &str) {
    let _ = std::fs::remove_file(path(config, session_id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_recorded_reads_back_and_goes_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::in_dir(dir.path());
        assert_eq!(read(&config, "s-1"), Given::default());
        let item = "0195f3a2-7c4b-7d3e-8f12-3ebc8321ae44";
        let given = Given {
            sessions: vec![key("s-0")],
            items: vec![key(item)],
        };
        record(&config, "s-1", &given);
        let back = read(&config, "s-1");
        assert_eq!(back, given);
        assert!(back.has_session("s-0") && back.has_item(item) && !back.has_item("s-0"));
        let file = std::fs::read_dir(config.given_dir())
            .unwrap()
            .next()
            .unwrap();
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        assert!(
            !text.contains("3ebc8321") && !text.contains("s-0"),
            "{text}"
        );
        assert_eq!(read(&config, "s-2"), Given::default());
        forget_session(&config, "s-1");
        assert_eq!(read(&config, "s-1"), Given::default());
    }
}
