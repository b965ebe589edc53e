//! One sync: fetch the remote's branch, check its header with the key, take in the chunks of
//! other machines not taken in yet, then push what is new here on top of what was fetched. A
//! push whose lease fails (another machine pushed since the fetch) starts again from the
//! fetch, a few times; one that fails with the branch unchanged is an error.
//!
//! After a deletion (here, or announced by another machine) of a record whose line is in one of
//! this machine's chunks, those chunks are written again without it, and the commit is one
//! with no parent: the branch then reaches no older version of them. Other machines fetch it
//! like any other tip (the fetch is forced) and put their folders on top of it.
//!
//! Killed at any moment, a sync leaves nothing half-done that the next one does not finish: a
//! chunk is taken in whole before it is marked applied (taking it in again stores nothing
//! twice), and what was pushed is recorded only once the push landed (pushing it again writes
//! the same chunk numbers over).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use super::chunk::{self, Place};
use super::git::Git;
use super::key::{self, Key};
use super::ops::{self, Writer};
use super::remote::Layout;
use super::{NETWORK_TIMEOUT, Paths, Settings, status};
use crate::config::Config;
use crate::render::plural;
use crate::store::Store;
use crate::store::export::{self, Counts};
use crate::store::slices::Slicer;
use crate::store::sync::incoming::{self, Received};
use crate::store::sync::outgoing::{self, Pushed};
use crate::store::sync::{self as state, Table};

/// How many times a sync starts again when other machines push in between.
const ATTEMPTS: usize = 5;
/// How long a sync waits for the database's write lock.
const WAIT: Duration = Duration::from_secs(10);
/// Chunks read from the local repository at a time, at most.
const BATCH: usize = 256;
/// Bytes of chunks read from the local repository at a time, at most (a chunk alone may
/// bring it to [`chunk::MAX_SEALED`]).
const BATCH_BYTES: u64 = 8 << 20;
/// What is kept of why a chunk was refused: the note of thousands of them stays short.
const WHY_CHARS: usize = 100;

/// What one sync moved.
#[derive(Debug, Default)]
pub struct Moved {
    pub sent: Counts,
    /// Deletions sent.
    pub announced: i64,
    pub received: Received,
    /// Other machines on the remote.
    pub machines: usize,
    /// Chunks of this machine written again without deleted records.
    pub rewritten: usize,
    /// Chunks of other machines taken in again: written again there since.
    pub reread: usize,
    /// Chunks of other machines this sync refused (over the size cap, cut, changed, not
    /// ours) and set aside.
    pub set_aside: usize,
    /// Every chunk set aside so far, in one short sentence; `None`: none.
    pub aside: Option<String>,
}

impl Moved {
    pub fn is_nothing(&self) -> bool {
        self.sent.iter().sum::<i64>() + self.announced == 0
            && self.received.stored.iter().sum::<i64>() + self.received.deleted == 0
            && self.rewritten == 0
    }

    /// One line: what went each way.
    pub fn line(&self) -> String {
        let either = |counts: &Counts, deletions: i64| {
            let mut parts = Vec::new();
            if counts.iter().sum::<i64>() > 0 {
                parts.push(export::describe(counts));
            }
            if deletions > 0 {
                parts.push(plural(deletions, "deletion"));
            }
            if parts.is_empty() {
                "nothing".to_string()
            } else {
                parts.join(", ")
            }
        };
        let mut line = format!(
            "Sent {}; received {} ({} on the remote).",
            either(&self.sent, self.announced),
            either(&self.received.stored, self.received.deleted),
            match self.machines {
                0 => "no other machine".to_string(),
                n => plural(n as i64, "other machine"),
            }
        );
        if let (true, Some(aside)) = (self.set_aside > 0, &self.aside) {
            line.push_str(&format!(" {aside}."));
        }
        line
    }
}

/// Runs a sync, recording how it went for `status`. Chunks refused do not fail it: they are
/// set aside, said in its line and in `sync status`, and the rest is taken in.
pub fn guarded(
    config: &Config,
    paths: &Paths,
    settings: &Settings,
    key: &Key,
    background: bool,
) -> Result<Moved> {
    status::began(paths);
    let result = run(config, paths, settings, key, background);
    match &result {
        Ok(moved) => status::ended(paths, Ok((&moved.line(), moved.aside.as_deref()))),
        Err(err) => status::ended(paths, Err(&format!("{err:#}"))),
    }
    result
}

fn run(
    config: &Config,
    paths: &Paths,
    settings: &Settings,
    key: &Key,
    background: bool,
) -> Result<Moved> {
    let remote = settings.remote_id()?;
    let git = Git::open(&paths.repo(), background, NETWORK_TIMEOUT)?
        .with_credential(settings.credential.clone());
    crate::store::layout::settle(config)?;
    let store = Store::open(config, Instant::now() + WAIT)?;
    store.set_wait(WAIT)?;
    let conn = store.conn();
    state::attach(conn, &paths.state())?;
    let sync = Sync {
        config,
        conn,
        git: &git,
        key,
        remote: &remote,
        url: &settings.url,
        me: machine(conn)?,
    };
    let result = sync.attempts();
    state::detach(conn);
    result
}

/// This machine's id on the remote, drawn on its first sync.
fn machine(conn: &rusqlite::Connection) -> Result<String> {
    if let Some(id) = state::meta(conn, "machine")? {
        return Ok(id);
    }
    let id = key::random_hex(8)?;
    state::set_meta(conn, "machine", &id)?;
    Ok(id)
}

struct Sync<'a> {
    config: &'a Config,
    conn: &'a rusqlite::Connection,
    git: &'a Git,
    key: &'a Key,
    remote: &'a [u8; 16],
    url: &'a str,
    me: String,
}

impl Sync<'_> {
    fn attempts(&self) -> Result<Moved> {
        let mut moved = Moved::default();
        let mut failed: Option<(String, anyhow::Error)> = None;
        for _ in 0..ATTEMPTS {
            let tip = self.fetch()?.with_context(|| {
                format!(
                    "{} no longer holds claude-mem sync data (its claude-mem branch is gone): \
                     if the repository was made again, push the branch back from this machine \
                     (docs/sync.md#making-sure-the-host-keeps-nothing-older)",
                    self.url
                )
            })?;
            if let Some((old, err)) = failed.take() {
                if old == tip {
                    return Err(err);
                }
                // Another machine pushed in between: once more, a moment later.
                jitter();
            }
            let layout = Layout::read(self.git, &tip)?;
            self.check_header(&layout)?;
            outgoing::note_deleted(self.conn)?;
            self.pull(&layout, &mut moved)?;
            match self.push(&layout, &tip, &mut moved) {
                Ok(()) => {
                    // Older versions of chunks written again (here or there) leave the data
                    // dir too, and so do the chunks set aside.
                    let mut droppable = state::droppable(self.conn)?;
                    for id in layout.root_blobs() {
                        droppable.remove(id);
                    }
                    if moved.rewritten + moved.reread + moved.set_aside > 0
                        || moved.received.deleted > 0
                        || self.git.holds_any(&droppable)?
                    {
                        self.git.repack(&droppable)?;
                    }
                    moved.aside = aside_note(self.conn)?;
                    return Ok(moved);
                }
                Err(err) => failed = Some((tip, err)),
            }
        }
        Err(failed
            .map_or_else(|| anyhow!("no push landed"), |(_, err)| err)
            .context(format!(
                "other machines kept pushing to {} meanwhile; try again",
                self.url
            )))
    }

    fn fetch(&self) -> Result<Option<String>> {
        self.git
            .fetch(self.url)
            .map_err(|err| anyhow!("cannot reach {}: {err:#}", self.url))
    }

    /// The header must be this remote's, and open with the key.
    fn check_header(&self, layout: &Layout) -> Result<()> {
        let url = self.url;
        let bytes = layout
            .header
            .as_deref()
            .map(|id| self.git.small_blob(id))
            .transpose()?
            .flatten()
            .with_context(|| format!("{url}'s claude-mem branch has no header: it is not claude-mem sync data; left untouched"))?;
        match chunk::header_remote(&bytes) {
            None => bail!("{url}'s header is not claude-mem's: left untouched"),
            Some(id) if id != *self.remote => bail!(
                "{url} is another claude-mem remote now (it was set up again since): \
                 `claude-mem sync off`, then `claude-mem sync setup {url} --key <its key>`"
            ),
            Some(_) if !chunk::opens_header(self.key, &bytes) => bail!(
                "the key kept here does not open {url}'s data (its header was changed, or \
                 the key file was): nothing was read or sent"
            ),
            Some(_) => Ok(()),
        }
    }

    /// Takes in every chunk of the other machines not taken in as it is now, but those set
    /// aside as they are now: each sized before it is read, in batches of bounded bytes.
    fn pull(&self, layout: &Layout, moved: &mut Moved) -> Result<()> {
        let applied = state::applied(self.conn)?;
        let aside = state::aside(self.conn)?;
        moved.machines = layout.machines.keys().filter(|m| **m != self.me).count();
        let todo: Vec<Todo> = layout
            .machines
            .iter()
            .filter(|(machine, _)| **machine != self.me)
            .flat_map(|(machine, chunks)| {
                chunks.iter().map(move |(seq, blob)| (machine, *seq, blob))
            })
            .filter(|(machine, seq, blob)| {
                let place = ((*machine).clone(), *seq);
                applied.get(&place) != Some(*blob) && aside.get(&place) != Some(*blob)
            })
            .collect();
        moved.reread += todo
            .iter()
            .filter(|(machine, seq, _)| applied.contains_key(&((*machine).clone(), *seq)))
            .count();
        let ids: Vec<&str> = todo.iter().map(|(_, _, blob)| blob.as_str()).collect();
        let sizes = self.git.sizes(&ids)?;
        let mut refused = Vec::new();
        let mut readable = Vec::new();
        for todo in todo {
            match sizes.get(todo.2.as_str()).copied().flatten() {
                Some(size) if size <= chunk::MAX_SEALED => readable.push((todo, size)),
                Some(size) => refused.push(refuse(
                    todo,
                    &format!(
                        "{} MiB, over the {} MiB cap: not read",
                        size.div_ceil(1 << 20),
                        chunk::MAX_SEALED >> 20
                    ),
                )),
                None => refused.push(refuse(todo, "not a file fetched")),
            }
        }
        moved.set_aside += refused.len();
        state::set_aside(self.conn, &refused)?;
        for batch in batches(&readable) {
            self.take_in(batch, moved)?;
        }
        Ok(())
    }

    /// Reads a batch of chunks and takes in each that opens; the others are set aside.
    fn take_in(&self, batch: &[(Todo, u64)], moved: &mut Moved) -> Result<()> {
        let ids: Vec<&str> = batch
            .iter()
            .map(|((_, _, blob), _)| blob.as_str())
            .collect();
        // Each blob, and its line of `cat-file`.
        let cap = batch.iter().map(|(_, size)| *size as usize + 128).sum();
        let mut blobs = self.git.blobs(&ids, cap)?;
        let slicer = Slicer::command(WAIT);
        let mut refused = Vec::new();
        for &((machine, seq, blob), _) in batch {
            let place = Place {
                remote: self.remote,
                machine,
                seq,
            };
            let lines = blobs
                .remove(blob.as_str())
                .context("it is missing from what was fetched")
                .and_then(|bytes| chunk::open(self.key, &place, &bytes))
                .and_then(|text| ops::read(&text, machine, seq));
            let lines = match lines {
                Ok(lines) => lines,
                Err(err) => {
                    refused.push(refuse((machine, seq, blob), &format!("{err:#}")));
                    continue;
                }
            };
            let got = incoming::apply(
                self.conn,
                &self.config.redactor,
                machine,
                seq,
                lines,
                &slicer,
            )?;
            moved.received.add(&got);
            state::mark_applied(self.conn, machine, seq, blob)?;
        }
        moved.set_aside += refused.len();
        state::set_aside(self.conn, &refused)
    }

    /// Seals a chunk's text for its place and writes it into the repository; its blob.
    fn seal(&self, writer: Writer, seq: i64) -> Result<String> {
        let place = Place {
            remote: self.remote,
            machine: &self.me,
            seq,
        };
        self.git
            .write_blob(&chunk::seal(self.key, &place, &writer.text)?)
    }

    /// Pushes what is new here, and this machine's chunks written again, on top of `tip`.
    fn push(&self, layout: &Layout, tip: &str, moved: &mut Moved) -> Result<()> {
        let Some(mut outbox) = self.outbox(layout)? else {
            return Ok(());
        };
        let mut new = self.write_new(&outbox)?;
        let emptied = self.write_again(&outbox, &mut new.chunks)?;
        for seq in &emptied {
            outbox.mine.remove(seq);
        }
        outbox.mine.extend(new.chunks.iter().cloned());
        let tree = layout.tree(self.git, None, &self.me, &outbox.mine)?;
        // A new history when chunks were written again: the branch no longer reaches their
        // older versions.
        let parent = outbox.rewrite.is_empty().then_some(tip);
        let commit = self.git.commit(&tree, parent)?;
        self.git
            .push(self.url, &commit, Some(tip))
            .map_err(|err| anyhow!("cannot push to {}: {err:#}", self.url))?;
        outgoing::pushed(
            self.conn,
            &Pushed {
                sent: &new.sent,
                announced: &new.announced,
                chunks: &new.chunks,
                emptied: &emptied,
                next_seq: new.next_seq,
            },
        )?;
        moved.sent = new.counts;
        moved.announced = new.announced.len() as i64;
        moved.rewritten = outbox.rewrite.len();
        Ok(())
    }

    /// What there is to push; `None` when nothing, and the remote holds this machine's chunks
    /// as they are here.
    fn outbox(&self, layout: &Layout) -> Result<Option<Outbox>> {
        let conn = self.conn;
        let next_seq: i64 = state::meta(conn, "next_seq")?
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let table = state::chunks(conn)?;
        let mine: BTreeMap<i64, String> = table
            .iter()
            .map(|(seq, blob, _)| (*seq, blob.clone()))
            .collect();
        let vanished = outgoing::vanished(conn)?;
        let mut rewrite: BTreeSet<i64> = table
            .iter()
            .filter(|(_, _, dirty)| *dirty)
            .map(|(seq, _, _)| *seq)
            .collect();
        rewrite.extend(vanished.iter().filter_map(|(_, _, chunk)| *chunk));
        rewrite.retain(|seq| mine.contains_key(seq));
        let mut resend: Vec<(Table, String)> = outgoing::changed_sessions(conn)?
            .into_iter()
            .map(|id| (Table::Session, id))
            .collect();
        resend.extend(
            outgoing::renumbered(conn)?
                .into_iter()
                .map(|id| (Table::Queue, id)),
        );
        let mut fresh = Vec::new();
        for table in Table::ALL {
            fresh.extend(
                outgoing::new_ids(conn, table)?
                    .into_iter()
                    .map(|id| (table, id)),
            );
        }
        let on_remote = layout.machines.get(&self.me).cloned().unwrap_or_default();
        let nothing = vanished.is_empty()
            && resend.is_empty()
            && fresh.is_empty()
            && rewrite.is_empty()
            && on_remote == mine;
        Ok((!nothing).then_some(Outbox {
            next_seq,
            mine,
            vanished,
            rewrite,
            resend,
            fresh,
        }))
    }

    /// The new chunks: deletions first, then the records sent again and the new ones, a
    /// chunk sealed each time one is full.
    fn write_new(&self, outbox: &Outbox) -> Result<NewChunks> {
        let mut new = NewChunks {
            next_seq: outbox.next_seq,
            ..NewChunks::default()
        };
        let mut writer = Writer::new(&self.me, new.next_seq)?;
        let roll = |writer: &mut Writer, new: &mut NewChunks, force: bool| -> Result<()> {
            if writer.lines > 0 && (force || writer.full()) {
                let seq = new.next_seq;
                let full = std::mem::replace(writer, Writer::new(&self.me, seq + 1)?);
                new.chunks.push((seq, self.seal(full, seq)?));
                new.next_seq += 1;
            }
            Ok(())
        };
        for (table, id, _) in &outbox.vanished {
            writer.gone(*table, id)?;
            new.announced.push((*table, id.clone(), new.next_seq));
            roll(&mut writer, &mut new, false)?;
        }
        let redactor = &self.config.redactor;
        for (table, id) in outbox.resend.iter().chain(&outbox.fresh) {
            let Some(out) = outgoing::out(self.conn, redactor, *table, id)? else {
                continue;
            };
            writer.record(&out.record)?;
            export::tally(&mut new.counts, &out.record);
            new.sent.push((out.table, out.id, out.ver, new.next_seq));
            roll(&mut writer, &mut new, false)?;
        }
        roll(&mut writer, &mut new, true)?;
        Ok(new)
    }

    /// Writes this machine's chunks to rewrite again, without what left or moved on, adding
    /// them to `chunks`; the chunks left with nothing, which are not written.
    fn write_again(&self, outbox: &Outbox, chunks: &mut Vec<(i64, String)>) -> Result<Vec<i64>> {
        let leaving: HashSet<(Table, String)> = outbox
            .vanished
            .iter()
            .map(|(table, id, _)| (*table, id.clone()))
            .chain(outbox.resend.iter().cloned())
            .collect();
        let mut emptied = Vec::new();
        for old in &outbox.rewrite {
            let (records, gone) =
                outgoing::chunk_lines(self.conn, &self.config.redactor, *old, &leaving)?;
            if records.is_empty() && gone.is_empty() {
                emptied.push(*old);
                continue;
            }
            let mut again = Writer::new(&self.me, *old)?;
            for (table, id) in &gone {
                again.gone(*table, id)?;
            }
            for out in &records {
                again.record(&out.record)?;
            }
            chunks.push((*old, self.seal(again, *old)?));
        }
        Ok(emptied)
    }
}

/// A chunk of another machine to take in: its machine, number and blob.
type Todo<'a> = (&'a String, i64, &'a String);

/// A chunk refused, with why in a few words.
fn refuse((machine, seq, blob): Todo, why: &str) -> state::Refused {
    state::Refused {
        machine: machine.clone(),
        seq,
        blob: blob.clone(),
        why: crate::text::one_line(why, WHY_CHARS),
    }
}

/// The chunks, sized, in batches of at most [`BATCH`] chunks and [`BATCH_BYTES`] bytes (a
/// chunk larger alone is a batch of its own).
fn batches<'a, 'b>(sized: &'b [(Todo<'a>, u64)]) -> Vec<&'b [(Todo<'a>, u64)]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, size)) in sized.iter().enumerate() {
        if i > start && (i - start == BATCH || bytes + size > BATCH_BYTES) {
            out.push(&sized[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < sized.len() {
        out.push(&sized[start..]);
    }
    out
}

/// The chunks set aside so far, in one sentence: how many, and the first of them.
fn aside_note(conn: &rusqlite::Connection) -> Result<Option<String>> {
    Ok(state::aside_note(conn)?.map(|(count, first)| {
        format!(
            "Set aside {} of other machines that cannot be taken in (chunk {} of machine {}: {})",
            plural(count, "chunk"),
            first.seq,
            first.machine,
            first.why
        )
    }))
}

/// What a push sends, read before anything is written.
struct Outbox {
    next_seq: i64,
    /// This machine's chunks as the sync state records them: number and blob.
    mine: BTreeMap<i64, String>,
    /// Records deleted here: table, id, and this machine's chunk that holds their line.
    vanished: Vec<(Table, String, Option<i64>)>,
    /// This machine's chunks to write again: marked dirty, or holding a deleted record.
    rewrite: BTreeSet<i64>,
    /// Records sent before that changed since (sessions) or were numbered since (captures).
    resend: Vec<(Table, String)>,
    fresh: Vec<(Table, String)>,
}

/// The chunks a push writes, and what they hold, for the state once the push landed.
#[derive(Default)]
struct NewChunks {
    sent: Vec<(Table, String, Option<String>, i64)>,
    announced: Vec<(Table, String, i64)>,
    /// Number and blob of each chunk written (new ones, then the ones written again).
    chunks: Vec<(i64, String)>,
    counts: Counts,
    /// The number of the next new chunk.
    next_seq: i64,
}

/// A pause of 50 to 560 ms before trying again, so that machines that collided do not collide
/// again in step.
fn jitter() {
    let mut byte = [0u8; 1];
    let _ = key::random(&mut byte);
    std::thread::sleep(Duration::from_millis(50 + 2 * u64::from(byte[0])));
}
