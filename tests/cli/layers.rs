//! The module graph of src/ stays in layers, as ARCHITECTURE.md draws it: every import runs
//! down (or within a layer), no two top-level modules import each other however far round,
//! nothing in the store imports what stands above it, and the hook path reaches no cold module.
//! Read from the source, as `use crate::…` and `crate::…` paths outside `#[cfg(test)]` items,
//! comments and strings; a new top-level module fails here until it is given a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
            "ops",
            "privacy",
            "recorded",
            "render",
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
    ("the hot path", &["hook"]),
    (
        "cold work",
        &[
            "compress",
            "health",
            "incumbent",
            "maintain",
            "mcp",
            "recall",
            "settings",
            "sync",
        ],
    ),
    ("the command line", &["cli", "cmd"]),
];

/// What a hook must never load, however indirectly: each costs start-up or does work a hook
/// leaves to a process of its own.
const COLD: &[&str] = &[
    "cli",
    "cmd",
    "compress",
    "health",
    "incumbent",
    "maintain",
    "mcp",
    "recall",
    "settings",
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
    let graph = graph();
    let mut reached: BTreeMap<String, String> = BTreeMap::new();
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
    let cold: Vec<&String> = COLD.iter().filter_map(|m| reached.get(*m)).collect();
    assert!(
        cold.is_empty(),
        "the hook path reaches cold modules: {cold:?}"
    );
}

/// What the store does for sync (`store::sync`, in `store/transfer/`) is cold work inside the
/// database layer, which the graph of top-level modules cannot tell apart from the hook's write
/// path: the hook's files, the files beside the database it reads, and the parts of the store
/// a hook runs must not name it, nor the top-level `sync` (git, keys, the network).
#[test]
fn the_hook_path_names_no_sync_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for part in ["hook", "spill", "store/write"] {
        rust_files(&src.join(part), &mut files);
    }
    for file in ["marks.rs", "detach.rs", "store/read/context.rs"] {
        files.push(src.join(file));
    }
    let mut named = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let words = tokens(&without_tests(&code_only(&text)));
        for (i, word) in words.iter().enumerate() {
            let std_sync = i >= 2 && words[i - 1] == "::" && words[i - 2] == "std";
            if (word == "sync" && !std_sync) || word == "transfer" {
                named.push(format!("{} names `{word}`", file.display()));
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    assert!(named.is_empty(), "{}", named.join("\n"));
}

/// The imports that run from a module (chosen by `from`) to a layer above its own.
fn upward(graph: &Graph, from: impl Fn(&str) -> bool) -> Vec<String> {
    let layer = |module: &str| {
        LAYERS
            .iter()
            .position(|(_, modules)| modules.contains(&module))
            .unwrap_or_else(|| panic!("src/{module} has no layer in tests/cli/layers.rs"))
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    let mut modules = BTreeSet::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
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

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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

fn is_ident(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::`, and every other character as a word of its own.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// The code without comments, string and character literals (each left as an empty `""` or a
/// space), so that a path quoted in a doc comment or a message is not an import.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    while i < chars.len() {
        let c = chars[i];
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if !after_ident && (c == 'r' || (c == 'b' && chars.get(i + 1) == Some(&'r'))) && {
            let mut k = i + if c == 'b' { 2 } else { 1 };
            while chars.get(k) == Some(&'#') {
                k += 1;
            }
            chars.get(k) == Some(&'"')
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let mut k = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars[k] == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1;
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while k < chars.len() && !at(k, &close) {
                k += 1;
            }
            i = k + close.chars().count();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1b}'), not a lifetime ('a).
            let end = if chars.get(i + 1) == Some(&'\\') {
                (i + 2..chars.len().min(i + 12)).find(|&k| chars[k] == '\'')
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match end {
                Some(end) => {
                    i = end + 1;
                    out.push(' ');
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The code without the items under `#[cfg(test)]` (or `#[cfg(all(test, …))]`): tests may
/// reach anywhere.
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    loop {
        let Some(start) = ["#[cfg(test)]", "#[cfg(all(test"]
            .iter()
            .filter_map(|attr| out.find(attr))
            .min()
        else {
            return out;
        };
        let bytes = out.as_bytes();
        // The attribute itself, then the item: up to its `;`, or its `{ … }` block.
        let mut i = start + 2;
        let mut brackets = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'[' => brackets += 1,
                b']' if brackets == 0 => break,
                b']' => brackets -= 1,
                _ => {}
            }
            i += 1;
        }
        while i < bytes.len() && bytes[i] != b';' && bytes[i] != b'{' {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            let mut depth = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            // `use a::{b, c};` ends after its group.
            let rest = out[i + 1..].trim_start();
            if rest.starts_with(';') {
                i = out.len() - rest.len();
            }
        }
        out.replace_range(start..(i + 1).min(out.len()), "");
    }
}

fn join(files: &BTreeSet<String>) -> String {
    files.iter().cloned().collect::<Vec<_>>().join(", ")
}
