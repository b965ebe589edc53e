//! The product as a user has it: the real binary, one process per hook, command or query, in
//! a data dir of the bench's own with nothing of the caller's environment.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::score::Answer;
use crate::set::{Load, Set, Unit, session_id, turn};
use crate::{DEPTH, Result};

pub struct Product {
    bin: PathBuf,
    root: PathBuf,
    /// Items stored by the sets loaded before.
    before: Cell<usize>,
}

/// What a set left in the memory: how many items it added, how many of its documents are not
/// there under their key, the key of each item's short id (what `hook prompt`'s context is
/// read by), and the short id of each prompt by its turn (`session#number`).
pub struct Stored {
    pub items: usize,
    pub missing: usize,
    pub short_ids: HashMap<String, String>,
    pub prompts: HashMap<String, String>,
}

/// A copy of a data dir, put back before each question that must not see the ones before.
pub struct Snapshot {
    dir: PathBuf,
}

impl Product {
    pub fn new(bin: &Path, root: &Path) -> Product {
        Product {
            bin: bin.to_path_buf(),
            root: root.to_path_buf(),
            before: Cell::new(0),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("TMPDIR", &self.root)
            .env("CLAUDE_MEM_DATA_DIR", self.root.join("data"))
            // The compressor would run `claude -p`: this bench measures what hooks stored.
            .env("CLAUDE_MEM_COMPRESS", "off")
            .stdin(Stdio::null());
        command
    }

    pub fn run(&self, args: &[&str], codes: &[i32]) -> Result<(Duration, Output)> {
        let started = Instant::now();
        let out = self.command().args(args).output()?;
        let took = started.elapsed();
        if !out.status.code().is_some_and(|c| codes.contains(&c)) {
            return Err(format!(
                "claude-mem {} failed: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        Ok((took, out))
    }

    pub fn hook(&self, name: &str, event: &Value) -> Result<(Duration, Vec<u8>)> {
        let mut child = self
            .command()
            .args(["hook", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let started = Instant::now();
        child
            .stdin
            .take()
            .ok_or("no stdin")?
            .write_all(event.to_string().as_bytes())?;
        let out = child.wait_with_output()?;
        let took = started.elapsed();
        if !out.status.success() || !out.stderr.is_empty() {
            return Err(format!(
                "hook {name} broke its contract: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        Ok((took, out.stdout))
    }

    /// Writes the set through its write path, then reads it all back (`export --all`) to
    /// check that every document is there as an item under the key it is scored by.
    pub fn load(&self, set: &Set) -> Result<Stored> {
        match &set.load {
            Load::Hooks(events) => {
                for (name, event) in events {
                    self.hook(name, event)?;
                    // A SessionEnd starts the maintenance process (the search index brought up
                    // to date); a user's next session starts minutes later, after it is done.
                    // It is given a moment to take its lock first.
                    if *name == "cleanup" {
                        std::thread::sleep(Duration::from_millis(20));
                        self.settle()?;
                    }
                }
            }
            Load::Import(lines) => {
                let file = self.root.join("import.jsonl");
                std::fs::write(&file, lines)?;
                self.run(&["import", &file.to_string_lossy()], &[0])?;
            }
        }
        let (_, out) = self.run(&["export", "--all"], &[0])?;
        let mut short_ids = HashMap::new();
        let mut prompts = HashMap::new();
        let mut keys = std::collections::HashSet::new();
        let mut items = 0;
        for line in String::from_utf8(out.stdout)?.lines().skip(1) {
            let record: Value = serde_json::from_str(line)?;
            let (id, session) = match record["type"].as_str() {
                Some("session") => {
                    if let (Unit::Session, Some(id)) = (set.unit, record["session_id"].as_str()) {
                        short_ids.insert(short_id(id).to_string(), id.to_string());
                    }
                    continue;
                }
                Some("prompt" | "observation" | "summary_request" | "memory" | "summary") => {
                    match (record["id"].as_str(), record["session_id"].as_str()) {
                        (Some(id), Some(session)) => (id, session),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            if record["type"] == "prompt" {
                let number = record["prompt_number"].as_i64().unwrap_or(0);
                prompts.insert(turn(session, number), short_id(id).to_string());
            }
            let key = set.unit.key(session, record["prompt_number"].as_i64());
            items += 1;
            keys.insert(key.clone());
            short_ids.insert(short_id(id).to_string(), key);
        }
        let missing = set.docs.iter().filter(|d| !keys.contains(&d.key)).count();
        Ok(Stored {
            items: items - self.before.replace(items),
            missing,
            short_ids,
            prompts,
        })
    }

    /// Waits until no maintenance process holds the data dir (its lock is free), at most a
    /// minute: what it does (the index, the spill folder) is then done, and nothing writes
    /// the data dir behind the bench's back.
    pub fn settle(&self) -> Result<()> {
        let lock = self.root.join("data/maintain.lock");
        let started = Instant::now();
        loop {
            let Ok(file) = std::fs::File::open(&lock) else {
                return Ok(());
            };
            match file.try_lock() {
                Ok(()) => return Ok(file.unlock()?),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(err)) => return Err(err.into()),
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err("the maintenance process still runs after a minute".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The data dir as it is now, copied aside once no maintenance process runs.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.settle()?;
        let dir = self.root.join("snapshot");
        copy_dir(&self.root.join("data"), &dir)?;
        Ok(Snapshot { dir })
    }

    /// Puts the data dir back as it was at `snapshot`. The copy of the search index's stamp
    /// is touched last: the index is as up to date as it was, so the session-start hook starts
    /// no maintenance process to catch it up.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<()> {
        self.settle()?;
        let data = self.root.join("data");
        std::fs::remove_dir_all(&data)?;
        copy_dir(&snapshot.dir, &data)?;
        let stamp = data.join("index-synced");
        if stamp.exists() {
            std::fs::File::options()
                .append(true)
                .open(&stamp)?
                .set_modified(std::time::SystemTime::now())?;
        }
        Ok(())
    }

    /// Every query through `search`, each a whole process and timed. The first search of a
    /// data dir builds the index: it runs once before, unscored.
    pub fn search_all(&self, set: &Set) -> Result<Vec<Answer>> {
        let project = set.projects.first().map_or("/", String::as_str);
        self.run(&["search", "--project", project, "--", "index"], &[0, 1])?;
        let limit = DEPTH.to_string();
        let mut answers = Vec::new();
        for query in &set.queries {
            let mut args = vec!["search", "--json", "--limit", &limit, "--project"];
            args.push(&query.project);
            args.push("--");
            args.extend(query.text.split_whitespace());
            // A question longer than a search takes (exit 2, one line) finds nothing.
            let (took, out) = self.run(&args, &[0, 1, 2])?;
            let mut keys = Vec::new();
            for line in String::from_utf8(out.stdout)?.lines() {
                let hit: Value = serde_json::from_str(line)?;
                let session = hit["session_id"].as_str().unwrap_or_default();
                keys.push(set.unit.key(session, hit["prompt_number"].as_i64()));
            }
            answers.push(Answer { keys, took });
        }
        Ok(answers)
    }

    /// Every query as a prompt to `hook prompt` in a session of its own, and the items its
    /// `additionalContext` names. The questions are not indexed (a hook never writes the index
    /// and nothing brings it up to date while they are asked), so one never answers the next.
    pub fn prompt_all(&self, set: &Set, stored: &Stored) -> Result<Vec<Answer>> {
        let mut answers = Vec::new();
        for (i, query) in set.queries.iter().enumerate() {
            let session = session_id(&format!("question/{}/{i}", set.name));
            let event = json!({"session_id": session, "cwd": query.project,
                               "hook_event_name": "UserPromptSubmit",
                               "prompt_id": session_id(&format!("{session}/prompt")),
                               "prompt": query.text});
            let (took, stdout) = self.hook("prompt", &event)?;
            let keys = named(&context(&stdout))
                .filter_map(|id| stored.short_ids.get(id).cloned())
                .collect();
            answers.push(Answer { keys, took });
        }
        Ok(answers)
    }
}

/// The start of an id's last group: the short id every command prints.
fn short_id(id: &str) -> &str {
    let last = id.rsplit('-').next().unwrap_or(id);
    &last[..last.len().min(8)]
}

/// `from` copied to `to` (which must not exist), files and folders with their permissions.
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir(to)?;
    std::fs::set_permissions(to, std::fs::metadata(from)?.permissions())?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else {
            return Err(format!("{}: not a file or a folder", entry.path().display()).into());
        }
    }
    Ok(())
}

/// `hookSpecificOutput.additionalContext` of a hook's answer, or nothing.
pub fn context(stdout: &[u8]) -> String {
    serde_json::from_slice::<Value>(stdout)
        .ok()
        .and_then(|v| {
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .map(String::from)
        })
        .unwrap_or_default()
}

/// The short ids a text names, in order: runs of exactly 8 lowercase hex digits.
pub fn named(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() == 8 && w.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}
