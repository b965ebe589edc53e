//! The README and docs/ as a reader meets them: the README short, opening with the two set-up
//! commands CI runs too, every command of the binary in its table, and every link between the
//! README and docs/ landing on a page and a heading that exist. The examples the docs print are
//! run where their area is tested (queue.rs, compress.rs).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::Env;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced code blocks of a Markdown text, in order, without their fences.
fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        match (&mut open, line.trim_start().starts_with("```")) {
            (None, true) => open = Some(String::new()),
            (Some(block), true) => {
                blocks.push(std::mem::take(block));
                open = None;
            }
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

/// The text outside fenced code blocks (links and headings in code are not links or headings).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn the_readme_is_short_and_opens_with_the_two_set_up_commands() {
    let readme = read(&repo().join("README.md"));
    assert!(
        readme.len() < 15 * 1024,
        "README.md is {} bytes: keep it to what a user needs, move the rest to docs/",
        readme.len()
    );
    let set_up = readme.find("\n## Set-up\n").expect("a Set-up section");
    let blocks = code_blocks(&readme[set_up..]);
    assert!(
        blocks[0].contains("cargo install --locked --path .")
            && blocks[0].contains("\"$bin\" install-hooks"),
        "the first command installs and registers: {}",
        blocks[0]
    );
    assert_eq!(blocks[1].trim(), "cargo test --locked");
    assert!(
        !readme[..set_up].contains("```"),
        "nothing comes before the set-up commands but what claude-mem is"
    );
    // CI runs the README's test command, as it is printed.
    let ci = read(&repo().join(".ci/run"));
    assert!(
        ci.lines().any(|line| line.trim() == blocks[1].trim()),
        ".ci/run does not run `{}`",
        blocks[1].trim()
    );
}

#[test]
fn every_command_is_in_the_readme_table_with_a_link_into_docs() {
    let readme = read(&repo().join("README.md"));
    let table = &readme[readme.find("\n## Commands\n").expect("a Commands section")..];
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .collect();
    let env = Env::new();
    let help = env.command().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help");
    // `hook` is left out of the help (Claude Code runs it, not you) but not out of the table.
    let mut named = 0;
    for command in commands.chain(["hook"]) {
        named += 1;
        let row = rows
            .iter()
            .find(|row| row.starts_with(&format!("| `{command}")))
            .unwrap_or_else(|| panic!("`{command}` has no row in the README's Commands table"));
        assert!(
            row.contains("](docs/"),
            "`{command}`'s row links into docs/: {row}"
        );
    }
    assert!(named > 15, "{help}");
    let queue = rows
        .iter()
        .find(|row| row.starts_with("| `queue "))
        .unwrap();
    for sub in ["claim", "ack", "fail", "release", "retry", "stats"] {
        assert!(queue.contains(sub), "queue {sub}: {queue}");
    }
    let sync = rows.iter().find(|row| row.starts_with("| `sync")).unwrap();
    for sub in ["setup", "status", "key", "off"] {
        assert!(sync.contains(sub), "sync {sub}: {sync}");
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> HashSet<String> {
    prose(text)
        .lines()
        .filter_map(|line| {
            let hashes = line.len() - line.trim_start_matches('#').len();
            (1..=6).contains(&hashes).then(|| &line[hashes..])
        })
        .filter_map(|rest| rest.strip_prefix(' '))
        .map(anchor)
        .collect()
}

/// The relative targets of the Markdown links `[text](target)` of a text.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    prose
        .match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &prose[at + 2..];
            let end = rest.find(')')?;
            Some(rest[..end].to_string())
        })
        .filter(|target| !target.contains("://") && !target.contains(' '))
        .collect()
}

/// `path` with its `..` and `.` resolved by name, as a browser resolves a link (the target may
/// not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every link of the README, ARCHITECTURE.md and docs/ into one of them names a page that exists and,
/// when it names a heading, a heading of that page: pages moved or headings renamed break here,
/// not in front of a reader.
#[test]
fn links_between_the_readme_architecture_and_docs_land_on_a_heading() {
    let mut pages: Vec<PathBuf> = vec![repo().join("README.md"), repo().join("ARCHITECTURE.md")];
    for entry in fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            pages.push(path);
        }
    }
    assert!(pages.len() > 5, "{pages:?}");
    let root = normalize(repo());
    let docs = root.join("docs");
    let mut checked = 0;
    for page in &pages {
        let text = read(page);
        for target in links(&text) {
            let (file, heading) = target.split_once('#').unwrap_or((&target, ""));
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let dest = normalize(&dest);
            // Other files (the sources, the licence) are not this test's to check.
            let page_of_ours =
                dest == root.join("README.md") || dest == root.join("ARCHITECTURE.md");
            if !page_of_ours && !dest.starts_with(&docs) {
                continue;
            }
            let place = format!("{}: ({target})", page.display());
            assert!(dest.is_file(), "{place}: no such page");
            if !heading.is_empty() {
                assert!(
                    anchors(&read(&dest)).contains(heading),
                    "{place}: no such heading"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} links checked");
}
