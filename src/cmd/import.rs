//! `import <FILE>`: reads back what `export` wrote (see `store::export`). The whole file is
//! checked first, so that a newer format or a bad line stores nothing and says which line;
//! then its records are stored in short transactions, each once. A run stopped half-way is
//! finished by running it again. `import --from-claude-mem [DB]` reads thedotmack/claude-mem's
//! database instead (see `store::incumbent`).

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::ImportArgs;
use crate::config::Config;
use crate::emit::Report;
use crate::store::Store;
use crate::store::export::{self, Importer, Record};
use crate::store::slices::Slicer;
use crate::{incumbent, render};

/// How long import waits for the write lock.
const WAIT: Duration = Duration::from_secs(10);
/// No line an export writes comes near this: a longer one is not read.
const MAX_LINE: u64 = 256 << 20;

pub fn import(args: &ImportArgs) -> Result<Report> {
    let config = Config::from_env();
    if let Some(path) = &args.from_claude_mem {
        return from_claude_mem(&config, path.as_deref());
    }
    let file = args.file.as_deref().context("name the file to import")?;
    let source = Source::open(file)?;
    let name = source.name.clone();
    let mut lines = source.lines()?;
    let Some((_, header)) = lines.next()? else {
        bail!("{name} is empty: not a claude-mem export");
    };
    export::parse_header(&header).map_err(|err| anyhow!("{name}: {err:#}"))?;
    let mut records = 0i64;
    while let Some((number, line)) = lines.next()? {
        if !line.trim().is_empty() {
            parse(&name, number, &line)?;
            records += 1;
        }
    }
    crate::store::layout::settle(&config)?;
    let store = Store::open(&config, Instant::now() + WAIT)?;
    let mut importer = Importer::new(&config.redactor);
    let mut lines = source.lines()?;
    lines.next()?;
    importer.run(store.conn(), &Slicer::command(WAIT), || {
        loop {
            match lines.next()? {
                Some((_, line)) if line.trim().is_empty() => continue,
                Some((number, line)) => return parse(&name, number, &line).map(Some),
                None => return Ok(None),
            }
        }
    })?;
    let present: i64 = importer.present.iter().sum();
    let ours = match importer.ours {
        0 => String::new(),
        n => format!(
            "; skipped {} of claude-mem's own MCP tools (an earlier version stored them)",
            render::plural(n, "call")
        ),
    };
    Ok(format!(
        "Imported {} from {name}{}{ours}.\n",
        export::describe(&importer.stored),
        match present {
            0 => String::new(),
            n if n == records - importer.ours => "; all of it was here already".into(),
            _ => format!(
                "; {} were here already",
                export::describe(&importer.present)
            ),
        }
    )
    .into())
}

fn from_claude_mem(config: &Config, path: Option<&Path>) -> Result<Report> {
    let path = match path {
        Some(path) => path.to_path_buf(),
        None => {
            let path = incumbent::incumbent_data_dir(config).join("claude-mem.db");
            if !path.exists() || incumbent::is_ours(config, &path) {
                bail!(
                    "no thedotmack/claude-mem database at {}: name it with --from-claude-mem DB",
                    path.display()
                );
            }
            path
        }
    };
    let imported = crate::store::incumbent::import(config, &path)?;
    let count =
        |c: crate::store::incumbent::Counted, what: &str| render::plural(c.new as i64, what);
    let present = [
        imported.sessions,
        imported.prompts,
        imported.memories,
        imported.summaries,
    ]
    .iter()
    .map(|c| c.present)
    .sum::<usize>();
    Ok(format!(
        "Imported from thedotmack/claude-mem ({}): {}, {}, {}, {}{}.\n",
        path.display(),
        count(imported.sessions, "session"),
        count(imported.prompts, "prompt"),
        count(imported.memories, "memory"),
        count(imported.summaries, "summary"),
        match present {
            0 => String::new(),
            n => format!("; {} here already", render::plural(n as i64, "row")),
        }
    )
    .into())
}

/// A record line, or an error naming the file and the line.
fn parse(name: &str, number: usize, line: &str) -> Result<Record> {
    export::parse(line).map_err(|err| {
        // serde's positions count within the line: the line number is the one that helps.
        let why = format!("{err:#}");
        let why = why.split(" at line 1 column ").next().unwrap_or(&why);
        anyhow!("{name} line {number}: {why}")
    })
}

/// Where the export is read from. It is read twice (checked whole, then stored): a file by
/// going back to its start, anything else (stdin, a pipe such as `/dev/stdin` or `<(cmd)`, a
/// FIFO) kept in memory as it is read once, each line within the bound a file's has.
struct Source {
    name: String,
    file: Option<File>,
    kept: Vec<u8>,
}

impl Source {
    fn open(path: &Path) -> Result<Source> {
        if path == Path::new("-") {
            return Source::stream("stdin".into(), std::io::stdin().lock());
        }
        let name = path.display().to_string();
        // A FIFO opens once something writes to it: like `cat`, import waits for the writer.
        let file = File::open(path).with_context(|| format!("cannot read {name}"))?;
        let meta = file
            .metadata()
            .with_context(|| format!("cannot read {name}"))?;
        if meta.is_dir() {
            bail!("{name} is a folder: name the file export wrote");
        }
        if meta.is_file() {
            return Ok(Source {
                name,
                file: Some(file),
                kept: Vec::new(),
            });
        }
        Source::stream(name, file)
    }

    fn stream(name: String, reader: impl Read) -> Result<Source> {
        let mut kept = Vec::new();
        let mut lines = Lines {
            reader: BufReader::new(reader),
            number: 0,
            name: &name,
        };
        while let Some(line) = lines.next_bytes()? {
            kept.extend_from_slice(&line);
            kept.push(b'\n');
        }
        Ok(Source {
            name,
            file: None,
            kept,
        })
    }

    fn lines(&self) -> Result<Lines<'_, Box<dyn BufRead + '_>>> {
        let reader: Box<dyn BufRead> = match &self.file {
            Some(file) => {
                let mut file = file;
                file.seek(SeekFrom::Start(0))
                    .with_context(|| format!("cannot read {}", self.name))?;
                Box::new(BufReader::new(file))
            }
            None => Box::new(Cursor::new(&self.kept)),
        };
        Ok(Lines {
            reader,
            number: 0,
            name: &self.name,
        })
    }
}

struct Lines<'a, R> {
    reader: R,
    number: usize,
    name: &'a str,
}

impl<R: BufRead> Lines<'_, R> {
    /// The next line and its number (from 1), without its line break.
    fn next(&mut self) -> Result<Option<(usize, String)>> {
        let Some(bytes) = self.next_bytes()? else {
            return Ok(None);
        };
        let line = String::from_utf8(bytes)
            .map_err(|_| anyhow!("{} line {}: not UTF-8", self.name, self.number))?;
        Ok(Some((self.number, line)))
    }

    /// The next line's bytes, without its line break.
    fn next_bytes(&mut self) -> Result<Option<Vec<u8>>> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut bytes)
            .with_context(|| format!("cannot read {}", self.name))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        if bytes.len() as u64 > MAX_LINE {
            bail!("{} line {}: longer than 256 MiB", self.name, self.number);
        }
        if bytes.ends_with(b"\n") {
            bytes.pop();
        }
        Ok(Some(bytes))
    }
}
