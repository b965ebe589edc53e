//! The store's own order: its parts in layers as ARCHITECTURE.md draws them (a base that the
//! hook's write path stands on, the cold parts above it), no cycle between them, real paths
//! inside it (`store/mod.rs` is the outside face only), and the hook's reach into it limited to
//! the parts and files a hook runs.
//!
//! Read from the source as whole paths (`crate::…`, `super::…`, `self::…` and a child module's
//! `name::…`, groups expanded), each resolved to the module file that defines what it names,
//! following `pub use` re-exports wherever they lead, so that a name the face or a `mod.rs`
//! re-exports counts as an import of the file that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::source::{code_only, is_ident, rust_files, tokens, without_tests};

/// The store's parts (folders and files under `src/store/`), lowest first. A part may import
/// the parts of its own layer and of the layers below it, never one above.
const STORE_LAYERS: &[(&str, &[&str])] = &[
    ("the base", &["arena", "base", "rows"]),
    ("the schema", &["sql"]),
    ("the write path", &["write"]),
    ("where the database lives", &["layout"]),
    ("the queue", &["queue"]),
    ("the readers", &["read"]),
    ("hygiene", &["hygiene"]),
    ("transfer", &["transfer"]),
];

/// What of the store a hook may run, however indirectly: the parts below the readers, and the
/// two reads a hook makes, the session-start context and per-prompt recall, with what they need
/// of the readers (never the index's upkeep, the queue, hygiene or transfer).
const HOOK_PARTS: &[&str] = &["arena", "base", "rows", "sql", "write", "layout"];
const HOOK_FILES: &[&str] = &[
    "read/context.rs",
    "read/standing.rs",
    "read/doc.rs",
    "read/fts/recall.rs",
    "read/fts/notes.rs",
    "read/fts/team_recall.rs",
    "read/fts/stems.rs",
    "read/fts/schema.rs",
    "read/fts/doclists.rs",
    "read/fts/common.rs",
    "read/fts/snippet.rs",
    "read/fts/tokenizer.rs",
    "read/fts/auxiliary.rs",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_cycle_between_the_parts_of_the_store() {
    let code = Code::read(&src());
    let graph = part_graph(&code);
    if let Some(cycle) = super::find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let files = &graph[&(w[0].clone(), w[1].clone())];
                format!("  {} -> {}  ({})", w[0], w[1], super::join(files))
            })
            .collect();
        panic!(
            "the store's parts import each other in a cycle:\n{}",
            steps.join("\n")
        );
    }
}

#[test]
fn every_import_in_the_store_runs_down_its_layers() {
    let upward = store_upward(&Code::read(&src()));
    assert!(
        upward.is_empty(),
        "imports that run up the store:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_store_names_its_parts_by_their_real_paths() {
    let code = Code::read(&src());
    let aliased = through_the_face(&code);
    assert!(aliased.is_empty(), "{}", aliased.join("\n"));
    let face = code.files[&vec!["store".to_string()]].clone();
    let statements = face.split(';').map(str::trim).filter(|s| !s.is_empty());
    let other: Vec<&str> = statements
        .filter(|s| {
            !(s.starts_with("mod ") || s.starts_with("pub mod ") || s.starts_with("pub use "))
        })
        .collect();
    assert!(
        other.is_empty(),
        "store/mod.rs is the outside face only (mod and pub use): {other:?}"
    );
}

#[test]
fn the_hook_reaches_only_what_a_hook_runs_of_the_store() {
    let reached = hook_reach(&Code::read(&src()));
    assert!(
        reached.is_empty(),
        "the hook path reaches parts of the store it must not run:\n{}",
        reached.join("\n")
    );
}

/// The checks above catch what they are for: an import planted up the store's table, and a
/// hook that reaches a cold part of the store through the face.
#[test]
fn a_planted_import_up_the_store_fails_the_checks() {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&src(), copy.path());
    let plant = |file: &str, line: &str| {
        let path = copy.path().join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(line);
        std::fs::write(&path, text).unwrap();
    };
    plant(
        "store/write/apply.rs",
        "\nuse crate::store::hygiene::forget::Target;\n",
    );
    plant(
        "hook/summary.rs",
        "\nfn planted() { let _ = crate::store::retention::due; }\n",
    );
    let code = Code::read(copy.path());
    let upward = store_upward(&code);
    assert!(
        upward
            .iter()
            .any(|u| u.contains("write (the write path) -> hygiene (hygiene)")),
        "{upward:?}"
    );
    assert!(super::find_cycle(&part_graph(&code)).is_some());
    let reached = hook_reach(&code);
    assert!(
        reached
            .iter()
            .any(|r| r.contains("store/hygiene/retention.rs")),
        "{reached:?}"
    );
}

/// Module path (from the crate root) to its code, without comments, strings and test items.
struct Code {
    /// The `src` folder read.
    root: PathBuf,
    files: BTreeMap<Vec<String>, String>,
    /// Module path to its file, as `src/store/read/fts/mod.rs`.
    names: BTreeMap<Vec<String>, String>,
    /// Per module, what its `pub use` items make it name: name to the path it stands for.
    exports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

impl Code {
    fn read(src: &Path) -> Code {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        let mut names = BTreeMap::new();
        for path in paths {
            let relative = path.strip_prefix(src).unwrap();
            let module = module_of(relative);
            let text = std::fs::read_to_string(&path).unwrap();
            files.insert(module.clone(), without_tests(&code_only(&text)));
            names.insert(module, format!("src/{}", relative.display()));
        }
        let mut code = Code {
            root: src.to_path_buf(),
            files,
            names,
            exports: BTreeMap::new(),
        };
        let exports = code
            .files
            .iter()
            .map(|(module, text)| (module.clone(), code.reexports(module, text)))
            .collect();
        code.exports = exports;
        code
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.files.contains_key(path)
    }

    /// The paths a module's code names, each from the crate root.
    fn paths(&self, module: &[String], text: &str) -> Vec<Vec<String>> {
        let words = tokens(text);
        let aliases = self.module_aliases(module, &words);
        let mut out = Vec::new();
        for i in 0..words.len() {
            if let Some((base, at)) = self.path_start(module, &aliases, &words, i) {
                out.extend(group(&words, at, &base).into_iter().map(|(path, _)| path));
            }
        }
        out
    }

    /// The modules a file's `use` items bring in by name (`use crate::store::{self, …}` makes
    /// `store::…` a path into the store).
    fn module_aliases(&self, module: &[String], words: &[String]) -> BTreeMap<String, Vec<String>> {
        let none = BTreeMap::new();
        let mut aliases = BTreeMap::new();
        for i in 0..words.len() {
            if words[i] != "use" {
                continue;
            }
            let Some((base, at)) = self.path_start(module, &none, words, i + 1) else {
                continue;
            };
            for (path, name) in group(words, at, &base) {
                if let Some(target) = self.resolve_module(&path) {
                    aliases.insert(name, target);
                }
            }
        }
        aliases
    }

    /// Where a path starts at word `i` and the module it starts from, if one does: `crate::`,
    /// a run of `super::`, `self::`, a child module's name or a module the file brought in.
    fn path_start(
        &self,
        module: &[String],
        aliases: &BTreeMap<String, Vec<String>>,
        words: &[String],
        i: usize,
    ) -> Option<(Vec<String>, usize)> {
        let word = words[i].as_str();
        // `$crate`, the middle of a path, or a visibility (`pub(in crate::store)`).
        let after_path = i > 0 && ["::", "$", "in"].contains(&words[i - 1].as_str());
        if after_path || words.get(i + 1).map(String::as_str) != Some("::") {
            return None;
        }
        let mut base = module.to_vec();
        match word {
            "crate" => Some((Vec::new(), i + 2)),
            "self" => Some((base, i + 2)),
            "super" => {
                let mut at = i;
                while words.get(at).is_some_and(|w| w == "super")
                    && words.get(at + 1).is_some_and(|w| w == "::")
                {
                    base.pop();
                    at += 2;
                }
                Some((base, at))
            }
            name if is_ident(name) => {
                base.push(name.to_string());
                if self.is_module(&base) {
                    Some((base, i + 2))
                } else {
                    aliases.get(name).map(|target| (target.clone(), i + 2))
                }
            }
            _ => None,
        }
    }

    /// What a module's `pub use` items name: each name (or its `as` alias) to its path.
    fn reexports(&self, module: &[String], text: &str) -> BTreeMap<String, Vec<String>> {
        let words = tokens(text);
        let mut out = BTreeMap::new();
        for i in 0..words.len() {
            if words[i] != "pub" {
                continue;
            }
            let mut at = i + 1;
            if words.get(at).is_some_and(|w| w == "(") {
                while words.get(at).is_some_and(|w| w != ")") {
                    at += 1;
                }
                at += 1;
            }
            if words.get(at).is_none_or(|w| w != "use") {
                continue;
            }
            if let Some((base, start)) = self.path_start(module, &BTreeMap::new(), &words, at + 1) {
                out.extend(group(&words, start, &base).into_iter().map(|(p, n)| (n, p)));
            }
        }
        out
    }

    /// The module that defines what `path` names, following re-exports.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        self.resolve_within(path, 8)
    }

    /// The module `path` names, following re-exports, when it names a module.
    fn resolve_module(&self, path: &[String]) -> Option<Vec<String>> {
        let (last, init) = path.split_last()?;
        let parent = self.resolve(init);
        let mut whole = parent.clone();
        whole.push(last.clone());
        if self.is_module(&whole) {
            return Some(whole);
        }
        let target = self.exports.get(&parent)?.get(last)?;
        self.resolve_module(target)
    }

    fn resolve_within(&self, path: &[String], hops: usize) -> Vec<String> {
        let mut module: Vec<String> = Vec::new();
        for (k, segment) in path.iter().enumerate() {
            let mut deeper = module.clone();
            deeper.push(segment.clone());
            if self.is_module(&deeper) {
                module = deeper;
                continue;
            }
            let target = self.exports.get(&module).and_then(|e| e.get(segment));
            return match target {
                Some(target) if hops > 0 => {
                    let mut whole = target.clone();
                    whole.extend_from_slice(&path[k + 1..]);
                    self.resolve_within(&whole, hops - 1)
                }
                _ => module,
            };
        }
        module
    }

    /// The store's modules each store file imports (other than itself), with the file.
    /// The file a module is, for messages.
    fn file(&self, module: &[String]) -> String {
        self.names
            .get(module)
            .cloned()
            .unwrap_or_else(|| format!("src/{}", module.join("/")))
    }

    fn store_edges(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let mut edges = Vec::new();
        for (module, text) in self.files.iter().filter(|(m, _)| in_store(m)) {
            for path in self.paths(module, text) {
                let target = self.resolve(&path);
                if target.first().is_some_and(|t| t == "store") && &target != module {
                    edges.push((module.clone(), target));
                }
            }
        }
        edges
    }
}

/// A path and the name it gives, from word `at` on, in module `base`: `a::b::C`, `a::{b, c::D}`
/// nested, `self` in a group as the group's own path, `as` aliases, a glob as its module.
fn group(words: &[String], at: usize, base: &[String]) -> Vec<(Vec<String>, String)> {
    let mut path = base.to_vec();
    let mut at = at;
    loop {
        match words.get(at).map(String::as_str) {
            Some("{") => {
                let mut out = Vec::new();
                let mut depth = 0;
                let mut item_at = at + 1;
                for k in at..words.len() {
                    match words[k].as_str() {
                        "{" => depth += 1,
                        "}" | "," if depth == 1 => {
                            if k > item_at {
                                out.extend(group(words, item_at, &path));
                            }
                            item_at = k + 1;
                            if words[k] == "}" {
                                break;
                            }
                        }
                        "}" => depth -= 1,
                        _ => {}
                    }
                }
                return out;
            }
            Some("self") => {
                let name = path.last().cloned().unwrap_or_default();
                return vec![(path, name)];
            }
            Some("*") => return vec![(path, String::new())],
            Some(name) if is_ident(name) => {
                path.push(name.to_string());
                if words.get(at + 1).is_some_and(|w| w == "::") {
                    at += 2;
                    continue;
                }
                let alias = (words.get(at + 1).is_some_and(|w| w == "as"))
                    .then(|| words.get(at + 2).cloned())
                    .flatten();
                let name = alias.unwrap_or_else(|| name.to_string());
                return vec![(path, name)];
            }
            _ => return Vec::new(),
        }
    }
}

/// `store/read/fts/recall.rs` as `[store, read, fts, recall]`; a `mod.rs` as its folder.
fn module_of(relative: &Path) -> Vec<String> {
    let mut module: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if module
        .last()
        .is_some_and(|last| last == "mod" || last == "main")
    {
        module.pop();
    }
    module
}

/// A module inside the store, not its face.
fn in_store(module: &[String]) -> bool {
    module.len() > 1 && module[0] == "store"
}

fn part(module: &[String]) -> &str {
    &module[1]
}

fn layer(part: &str) -> usize {
    STORE_LAYERS
        .iter()
        .position(|(_, parts)| parts.contains(&part))
        .unwrap_or_else(|| panic!("src/store/{part} has no layer in tests/cli/layers/store.rs"))
}

/// Which part of the store imports which, and in which files.
fn part_graph(code: &Code) -> super::Graph {
    let mut graph = super::Graph::new();
    for (from, to) in code.store_edges() {
        if in_store(&to) && part(&from) != part(&to) {
            graph
                .entry((part(&from).to_string(), part(&to).to_string()))
                .or_default()
                .insert(code.file(&from));
        }
    }
    graph
}

/// The imports inside the store that run to a part above the importer's, every part checked
/// to have a layer.
fn store_upward(code: &Code) -> Vec<String> {
    let parts: BTreeSet<&str> = code
        .files
        .keys()
        .filter(|m| in_store(m))
        .map(|m| part(m))
        .collect();
    let listed: BTreeSet<&str> = STORE_LAYERS
        .iter()
        .flat_map(|(_, p)| p.iter().copied())
        .collect();
    assert_eq!(
        parts, listed,
        "STORE_LAYERS must list every part of src/store/"
    );
    part_graph(code)
        .iter()
        .filter(|((a, b), _)| layer(b) > layer(a))
        .map(|((a, b), files)| {
            format!(
                "  {a} ({}) -> {b} ({})  in {}",
                STORE_LAYERS[layer(a)].0,
                STORE_LAYERS[layer(b)].0,
                super::join(files)
            )
        })
        .collect()
}

/// Paths inside the store that name a part through the face's re-exports instead of its
/// real path.
fn through_the_face(code: &Code) -> Vec<String> {
    let mut found = Vec::new();
    for (module, text) in code.files.iter().filter(|(m, _)| in_store(m)) {
        for path in code.paths(module, text) {
            if path.len() > 1 && path[0] == "store" && !code.is_module(&path[..2]) {
                found.push(format!(
                    "{} names `{}` through store/mod.rs: name its real path",
                    code.file(module),
                    path.join("::")
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The files of the store that the hook path reaches and must not, each with the imports
/// that lead there.
fn hook_reach(code: &Code) -> Vec<String> {
    let hot = super::reached_from_hook(&super::graph_of(&code.root));
    let mut todo: Vec<(Vec<String>, String)> = Vec::new();
    for (module, text) in &code.files {
        if module.first().is_some_and(|m| hot.contains_key(m)) && module[0] != "store" {
            for path in code.paths(module, text) {
                let target = code.resolve(&path);
                // The face itself is only names: what they stand for is resolved.
                if in_store(&target) {
                    todo.push((
                        target,
                        format!("{} -> {}", code.file(module), path.join("::")),
                    ));
                }
            }
        }
    }
    let edges = code.store_edges();
    let mut seen: BTreeMap<Vec<String>, String> = BTreeMap::new();
    while let Some((module, via)) = todo.pop() {
        if seen.contains_key(&module) {
            continue;
        }
        for (_, to) in edges.iter().filter(|(from, _)| *from == module) {
            todo.push((to.clone(), format!("{via} -> {}", code.file(to))));
        }
        seen.insert(module, via);
    }
    seen.into_iter()
        .filter(|(module, _)| !hook_may_run(module))
        .map(|(module, via)| format!("  {}  ({via})", code.file(&module)))
        .collect()
}

fn hook_may_run(module: &[String]) -> bool {
    if !in_store(module) {
        return false;
    }
    let relative = module[1..].join("/");
    HOOK_PARTS.contains(&part(module)) || HOOK_FILES.contains(&format!("{relative}.rs").as_str())
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
