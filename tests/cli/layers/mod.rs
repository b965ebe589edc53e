//! The module graph of src/ stays in layers, as ARCHITECTURE.md draws it: every import runs
//! down (or within a layer), no two top-level modules import each other however far round,
//! nothing in the store imports what stands above it, and the hook path reaches no cold module.
//! Read from the source, as `use crate::…` and `crate::…` paths outside `#[cfg(test)]` items,
//! comments and strings; a new top-level module fails here until it is given a layer.

mod source;
mod store;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use source::{code_only, is_ident, rust_files, tokens, without_tests};

/// The layers, lowest first. A module may import the modules of its own layer and of the
/// layers below it, never one above.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundation",
        &[
            "child",
            "claude",
            "clock",
            "emit",
            "fsutil",
            "glob",
            "meaning",
            "ops",
            "privacy",
            "project",
            "recorded",
            "render",
            "standing",
            "text",
            "transcript",
        ],
    ),
    ("configuration", &["config"]),
    (
        "beside the database",
        &["detach", "given", "log", "marks", "notice", "team"],
    ),
    ("the database", &["store"]),
    ("the spill folder", &["spill"]),
    ("the agents", &["agent"]),
    ("the hot path", &["hook"]),
    (
        "cold work",
        &[
            "browse",
            "compress",
            "doctor",
            "health",
            "incumbent",
            "maintain",
            "mcp",
            "page",
            "recall",
            "settings",
            "sharing",
            "sync",
        ],
    ),
    ("the command line", &["cli", "cmd"]),
];

/// What a hook must never load, however indirectly: each costs start-up or does work a hook
/// leaves to a process of its own.
const COLD: &[&str] = &[
    "browse",
    "cli",
    "cmd",
    "compress",
    "doctor",
    "health",
    "incumbent",
    "maintain",
    "mcp",
    "meaning",
    "page",
    "recall",
    "settings",
    "sharing",
    "sync",
];

/// Who imports whom: (importer, imported) and the files where it does.
type Graph = BTreeMap<(String, String), BTreeSet<String>>;

#[test]
fn no_cycle_between_top_level_modules() {
    let graph = graph();
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let files = &graph[&(w[0].clone(), w[1].clone())];
                format!("  {} -> {}  ({})", w[0], w[1], join(files))
            })
            .collect();
        panic!(
            "the top-level modules import each other in a cycle:\n{}",
            steps.join("\n")
        );
    }
}

#[test]
fn every_import_runs_down_the_layers() {
    let upward = upward(&graph(), |_| true);
    assert!(
        upward.is_empty(),
        "imports that run upward:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_store_imports_nothing_above_it() {
    let upward = upward(&graph(), |module| module == "store");
    assert!(
        upward.is_empty(),
        "the store imports upward:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_hook_path_reaches_no_cold_module() {
    let reached = reached_from_hook(&graph());
    let cold: Vec<&String> = COLD.iter().filter_map(|m| reached.get(*m)).collect();
    assert!(
        cold.is_empty(),
        "the hook path reaches cold modules: {cold:?}"
    );
}

/// The top-level modules the hook reaches, however indirectly, each with the path it takes.
fn reached_from_hook(graph: &Graph) -> BTreeMap<String, String> {
    let mut reached: BTreeMap<String, String> = BTreeMap::new();
    reached.insert("hook".into(), "hook".into());
    let mut todo = vec![("hook".to_string(), "hook".to_string())];
    while let Some((module, via)) = todo.pop() {
        for ((from, to), _) in graph.range((module.clone(), String::new())..) {
            if *from != module {
                break;
            }
            if !reached.contains_key(to) {
                let path = format!("{via} -> {to}");
                reached.insert(to.clone(), path.clone());
                todo.push((to.clone(), path));
            }
        }
    }
    reached
}

/// `cmd/` is one file per command, each only reading its arguments and wording its answer:
/// no folder, and no command that reaches into another (what two need is below them, or in
/// `cmd/mod.rs`).
#[test]
fn each_command_is_one_file_that_names_no_other() {
    let cmd = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let mut files = Vec::new();
    rust_files(&cmd, &mut files);
    let commands: BTreeSet<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|name| name != "mod")
        .collect();
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&cmd).unwrap();
        if relative.components().count() > 1 {
            found.push(format!("src/cmd/{} is in a folder", relative.display()));
            continue;
        }
        let words = tokens(&without_tests(&code_only(
            &std::fs::read_to_string(file).unwrap(),
        )));
        let own = file.file_stem().unwrap().to_string_lossy();
        // `super::x`, `crate::cmd::x`, and the first word of each item of `super::{…}`.
        let mut named = Vec::new();
        for i in 2..words.len() {
            let parent = (words[i - 2] == "super" || words[i - 2] == "cmd") && words[i - 1] == "::";
            if parent && words[i] == "{" {
                let group = words[i + 1..].iter().take_while(|w| *w != "}");
                let mut first = true;
                for word in group {
                    if first && is_ident(word) {
                        named.push(word.clone());
                    }
                    first = word == ",";
                }
            } else if parent {
                named.push(words[i].clone());
            }
        }
        for name in named {
            if commands.contains(&name) && name != own {
                found.push(format!(
                    "src/cmd/{} names the command `{name}`",
                    relative.display()
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The imports that run from a module (chosen by `from`) to a layer above its own.
fn upward(graph: &Graph, from: impl Fn(&str) -> bool) -> Vec<String> {
    let layer = |module: &str| {
        LAYERS
            .iter()
            .position(|(_, modules)| modules.contains(&module))
            .unwrap_or_else(|| panic!("src/{module} has no layer in tests/cli/layers/mod.rs"))
    };
    graph
        .iter()
        .filter(|((a, b), _)| from(a) && layer(b) > layer(a))
        .map(|((a, b), files)| {
            format!(
                "  {a} ({}) -> {b} ({})  in {}",
                LAYERS[layer(a)].0,
                LAYERS[layer(b)].0,
                join(files)
            )
        })
        .collect()
}

/// A cycle as a path that ends where it starts, if the graph has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in graph.keys() {
        next.entry(a).or_default().push(b);
    }
    // Depth first; a module met again while still on the path closes a cycle.
    fn visit<'a>(
        module: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[at..].iter().map(|m| m.to_string()).collect();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for to in next.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(to, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    next.keys()
        .find_map(|module| visit(module, &next, &mut Vec::new(), &mut done))
}

/// The top-level module graph of src/, every module checked to have a layer.
fn graph() -> Graph {
    graph_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The top-level module graph of the `src` folder at `src`.
fn graph_of(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    let mut modules = BTreeSet::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let mut path: Vec<String> = relative
            .iter()
            .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if path == ["main"] {
            continue;
        }
        if path.last().is_some_and(|last| last == "mod") {
            path.pop();
        }
        let top = path[0].clone();
        modules.insert(top.clone());
        let text = std::fs::read_to_string(&file).unwrap();
        for imported in imports(&without_tests(&code_only(&text)), path.len()) {
            if imported != top {
                graph
                    .entry((top.clone(), imported))
                    .or_default()
                    .insert(relative.display().to_string());
            }
        }
    }
    let listed: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|(_, modules)| modules.iter().map(|m| m.to_string()))
        .collect();
    let unlisted: Vec<&String> = modules.difference(&listed).collect();
    let gone: Vec<&String> = listed.difference(&modules).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "LAYERS must list every top-level module of src/: missing {unlisted:?}, not in src/ {gone:?}"
    );
    graph
}

/// The top-level modules a file's code names: `crate::x…`, `use crate::{x, y::…}`, and
/// `super::…` paths that climb to the crate root from a file `depth` modules down.
fn imports(code: &str, depth: usize) -> BTreeSet<String> {
    let words = tokens(code);
    let mut found = BTreeSet::new();
    for (i, word) in words.iter().enumerate() {
        let root_at = if word == "crate" && (i == 0 || words[i - 1] != "$") {
            Some(i + 1)
        } else if word == "super" && (i == 0 || words[i - 1] != "::") {
            // A run of `super::` from here: the root once it climbs `depth` levels.
            let mut at = i;
            let mut climbed = 0;
            while words.get(at).is_some_and(|w| w == "super")
                && words.get(at + 1) == Some(&"::".into())
            {
                climbed += 1;
                at += 2;
            }
            (climbed >= depth).then_some(at - 1)
        } else {
            None
        };
        let Some(at) = root_at else { continue };
        if words.get(at).map(String::as_str) != Some("::") {
            continue;
        }
        match words.get(at + 1).map(String::as_str) {
            Some("{") => {
                // The first word of each item of the group at its own depth.
                let mut depth = 0;
                let mut first = true;
                for word in &words[at + 1..] {
                    match word.as_str() {
                        "{" => {
                            depth += 1;
                            if depth == 1 {
                                first = true;
                            }
                        }
                        "}" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        "," if depth == 1 => first = true,
                        w if depth == 1 && first => {
                            first = false;
                            if is_ident(w) && w != "self" {
                                found.insert(w.to_string());
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some(name) if is_ident(name) => {
                found.insert(name.to_string());
            }
            _ => {}
        }
    }
    found
}

fn join(files: &BTreeSet<String>) -> String {
    files.iter().cloned().collect::<Vec<_>>().join(", ")
}
