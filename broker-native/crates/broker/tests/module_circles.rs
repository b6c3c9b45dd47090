//! No import circle among the crate's modules, read from the source files.
//!
//! Every `crate::`, `super::` and `self::` path (in `use` trees and in code,
//! tests included) is resolved to the module that defines the item, through
//! `pub use` re-exports. An import from module A to module B is counted
//! between the two siblings that hold them under their nearest common
//! folder: `handlers/produce.rs -> cluster/replica.rs` is the top-level
//! edge `handlers -> cluster`, `cluster/node.rs -> cluster/fetcher.rs` the
//! edge `node -> fetcher` inside `cluster`. A module and its own ancestors
//! may use each other (a folder's `mod.rs` dispatches to its children, and
//! the children use what it declares). In every folder, the root included,
//! the sibling edges must form no circle, and a top-level module imports
//! only its own layer or lower ones (`LAYERS`, as docs/architecture.md
//! lists them). The group coordinator's crate (`crates/group`) is read the
//! same way for circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// One source file: its module path and its text.
struct SourceFile {
    module: ModPath,
    shown: String,
    text: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

/// Identifiers and the punctuation that use trees and paths need;
/// comments, strings and character literals are dropped.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == 'r' && (at(i + 1) == '"' || (at(i + 1) == '#' && at(i + 2) != '[')) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.push((Tok::Ident("r".into()), line));
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                line += usize::from(chars[j] == '\n');
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime.
            if at(i + 1) == '\\' {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' || at(i) == '.' {
                i += 1;
            }
            out.push((Tok::Other, line));
        } else {
            let tok = match c {
                ':' if at(i + 1) == ':' => {
                    i += 1;
                    Tok::PathSep
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                _ => Tok::Other,
            };
            out.push((tok, line));
            i += 1;
        }
    }
    out
}

fn ident(tok: Option<&(Tok, usize)>) -> Option<&str> {
    match tok {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// What one file names: the paths it uses, and the names its `use`
/// declarations bring in from where. Paths are left as written; `resolve` makes them
/// absolute.
struct Reading {
    /// (path as written, module it was written in, line)
    used: Vec<(ModPath, ModPath, usize)>,
    /// (module, imported name, path as written)
    exports: Vec<(ModPath, String, ModPath)>,
}

fn read(file: &SourceFile) -> Reading {
    let toks = tokens(&file.text);
    let mut reading = Reading {
        used: Vec::new(),
        exports: Vec::new(),
    };
    // Inline modules (`mod tests { .. }`) by the brace depth they opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let here = || {
            let mut m = file.module.clone();
            m.extend(inline.iter().map(|(name, _)| name.clone()));
            m
        };
        match &toks[i].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(name), Some((Tok::Open, _))) =
                    (ident(toks.get(i + 1)), toks.get(i + 2))
                {
                    inline.push((name.to_string(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(w) if w == "use" => {
                let module = here();
                let line = toks[i].1;
                let mut leaves = Vec::new();
                i = use_tree(&toks, i + 1, Vec::new(), &mut leaves);
                for (path, alias) in leaves {
                    // Private imports count too: a child module may name them
                    // through `super::`.
                    if let Some(name) = alias {
                        reading.exports.push((module.clone(), name, path.clone()));
                    }
                    reading.used.push((path, module.clone(), line));
                }
                continue;
            }
            Tok::Ident(w)
                if (w == "crate" || w == "super" || w == "self")
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep) =>
            {
                let line = toks[i].1;
                let mut path = vec![w.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::PathSep) {
                    match ident(toks.get(j + 1)) {
                        Some(s) => path.push(s.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                reading.used.push((path, here(), line));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    reading
}

/// Reads a use tree from `i`, pushing each leaf path with the name it is
/// bound to (None for a glob). Returns the index after the tree's end.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: ModPath,
    leaves: &mut Vec<(ModPath, Option<String>)>,
) -> usize {
    let mut path = prefix;
    if toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep) {
        i += 1;
    }
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                let mut name = path.last().cloned();
                if ident(toks.get(i)) == Some("as") {
                    name = ident(toks.get(i + 1)).map(str::to_string);
                    i += 2;
                }
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                    name = if ident(toks.get(i - 1)) == Some("self") {
                        path.last().cloned()
                    } else {
                        name
                    };
                }
                leaves.push((path, name));
                return i;
            }
            Some(Tok::Star) => {
                leaves.push((path, None));
                return i + 1;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        None => return i,
                        _ => i = use_tree(toks, i, path.clone(), leaves),
                    }
                }
            }
            _ => return i,
        }
    }
}

/// The module tree, with the names each module imports, resolving paths.
struct Crate {
    modules: BTreeSet<ModPath>,
    /// module -> imported name -> absolute path
    exports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

impl Crate {
    /// `path` as written in `module`, made absolute (no `crate`, `super`,
    /// `self`), or None when it names something outside the crate.
    fn absolute(&self, path: &[String], module: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (module.to_vec(), &path[1..]),
            "super" => {
                let mut base = module.to_vec();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                (base, rest)
            }
            child => {
                // A path from a child module in scope (2018 uniform paths).
                let mut child_path = module.to_vec();
                child_path.push(child.to_string());
                if !self.modules.contains(&child_path) {
                    return None;
                }
                (module.to_vec(), path)
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines what `path` (absolute) names.
    fn owner(&self, path: &[String]) -> ModPath {
        let mut owner: ModPath = Vec::new();
        let mut hops = 0;
        let mut path = path.to_vec();
        let mut i = 0;
        while i < path.len() {
            let mut next = owner.clone();
            next.push(path[i].clone());
            if self.modules.contains(&next) {
                owner = next;
                i += 1;
                continue;
            }
            match self.exports.get(&owner).and_then(|e| e.get(&path[i])) {
                Some(target) if hops < 16 => {
                    hops += 1;
                    let mut followed = target.clone();
                    followed.extend(path[i + 1..].iter().cloned());
                    path = followed;
                    owner = Vec::new();
                    i = 0;
                }
                _ => break,
            }
        }
        owner
    }
}

/// Every module file under `src`, with its module path.
fn source_files(src: &Path) -> Vec<SourceFile> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(src).expect("under src");
            let mut module: ModPath = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().map(String::as_str) == Some("mod") || module == ["lib"] {
                module.pop();
            }
            SourceFile {
                module,
                shown: relative.display().to_string(),
                text: std::fs::read_to_string(&path).expect("read source"),
            }
        })
        .collect()
}

/// An import between two siblings of `folder`, and where it is written.
#[derive(Debug)]
struct Edge {
    folder: ModPath,
    from: String,
    to: String,
    at: String,
}

fn edges(files: &[SourceFile]) -> Vec<Edge> {
    let readings: Vec<Reading> = files.iter().map(read).collect();
    let mut krate = Crate {
        modules: files.iter().map(|f| f.module.clone()).collect(),
        exports: BTreeMap::new(),
    };
    // Inline modules are modules too (re-exports may pass through them).
    for reading in &readings {
        for (_, module, _) in &reading.used {
            krate.modules.insert(module.clone());
        }
    }
    for reading in &readings {
        for (module, name, path) in &reading.exports {
            if let Some(target) = krate.absolute(path, module) {
                krate
                    .exports
                    .entry(module.clone())
                    .or_default()
                    .insert(name.clone(), target);
            }
        }
    }
    let mut out = Vec::new();
    for (file, reading) in files.iter().zip(&readings) {
        for (path, module, line) in &reading.used {
            let Some(target) = krate.absolute(path, module) else {
                continue;
            };
            let to = krate.owner(&target);
            let from = &file.module;
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // a module and its ancestor
            }
            out.push(Edge {
                folder: from[..common].to_vec(),
                from: from[common].clone(),
                to: to[common].clone(),
                at: format!("{}:{line} ({})", file.shown, path.join("::")),
            });
        }
    }
    out
}

/// The circles (strongly connected sets of two or more siblings) of each
/// folder's import graph, each with the imports that tie it.
fn circles(edges: &[Edge]) -> Vec<(ModPath, Vec<String>, Vec<String>)> {
    let mut by_folder: BTreeMap<&ModPath, Vec<&Edge>> = BTreeMap::new();
    for e in edges {
        by_folder.entry(&e.folder).or_default().push(e);
    }
    let mut found = Vec::new();
    for (folder, edges) in by_folder {
        let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in &edges {
            graph.entry(&e.from).or_default().insert(&e.to);
            graph.entry(&e.to).or_default();
        }
        let reach = |start: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![start];
            while let Some(n) = stack.pop() {
                for next in &graph[n] {
                    if seen.insert(*next) {
                        stack.push(next);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> =
            graph.keys().map(|n| (*n, reach(n))).collect();
        let mut placed = BTreeSet::new();
        for n in graph.keys() {
            if placed.contains(n) || !reaches[n].contains(n) {
                continue;
            }
            let members: Vec<&str> = graph
                .keys()
                .copied()
                .filter(|m| reaches[n].contains(m) && reaches[m].contains(n))
                .collect();
            placed.extend(members.iter().copied());
            let ties = edges
                .iter()
                .filter(|e| members.contains(&e.from.as_str()) && members.contains(&e.to.as_str()))
                .map(|e| format!("{} -> {}: {}", e.from, e.to, e.at))
                .collect();
            found.push((
                folder.clone(),
                members.iter().map(|m| m.to_string()).collect(),
                ties,
            ));
        }
    }
    found
}

fn crate_edges() -> Vec<Edge> {
    edges_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), 20)
}

/// The group coordinator's crate (`crates/group`), checked the same way.
fn group_crate_edges() -> Vec<Edge> {
    edges_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../group/src"),
        10,
    )
}

fn edges_under(src: &Path, at_least: usize) -> Vec<Edge> {
    let files = source_files(src);
    assert!(
        files.len() > at_least,
        "read {} files under {}",
        files.len(),
        src.display()
    );
    edges(&files)
}

fn report(found: &[(ModPath, Vec<String>, Vec<String>)]) -> String {
    found
        .iter()
        .map(|(folder, members, ties)| {
            let folder = if folder.is_empty() {
                "src".to_string()
            } else {
                format!("src/{}", folder.join("/"))
            };
            format!(
                "in {folder}: {} import each other\n  {}",
                members.join(", "),
                ties.join("\n  ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The layers of docs/architecture.md ("Layers inside the broker crate"),
/// from the ground up. A top-level module imports only modules of its own
/// layer or of lower ones.
const LAYERS: &[&[&str]] = &[
    &["error", "config", "stats", "blocking", "clock"],
    &[
        "topic_config",
        "producer_ids",
        "codec",
        "security",
        "metrics",
    ],
    &["storage"],
    &["pause", "background", "apis", "cluster"],
    &["admin"],
    &["broker"],
    &["handlers"],
    &["server"],
    &["lifecycle"],
    &["launcher"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn top_level_modules_import_only_their_own_or_lower_layers() {
    let mut wrong = BTreeSet::new();
    for e in crate_edges().iter().filter(|e| e.folder.is_empty()) {
        match (layer_of(&e.from), layer_of(&e.to)) {
            (Some(from), Some(to)) if to <= from => {}
            (None, _) | (_, None) => {
                wrong.insert(format!(
                    "{} -> {}: {} (place each module in a layer: LAYERS here and docs/architecture.md)",
                    e.from, e.to, e.at
                ));
            }
            _ => {
                wrong.insert(format!("{} -> {} runs up: {}", e.from, e.to, e.at));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn top_level_modules_import_each_other_in_no_circle() {
    let found: Vec<_> = circles(&crate_edges())
        .into_iter()
        .filter(|(folder, _, _)| folder.is_empty())
        .collect();
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn the_group_crates_modules_import_each_other_in_no_circle() {
    let found = circles(&group_crate_edges());
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn sibling_modules_inside_a_folder_import_each_other_in_no_circle() {
    let found: Vec<_> = circles(&crate_edges())
        .into_iter()
        .filter(|(folder, _, _)| !folder.is_empty())
        .collect();
    assert!(found.is_empty(), "{}", report(&found));
}

fn sample(files: &[(&str, &str)]) -> Vec<SourceFile> {
    files
        .iter()
        .map(|(path, text)| {
            let mut module: ModPath = path
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            SourceFile {
                module,
                shown: path.to_string(),
                text: text.to_string(),
            }
        })
        .collect()
}

#[test]
fn the_reader_finds_a_circle_through_use_groups_re_exports_and_super() {
    let files = sample(&[
        ("lib.rs", "pub mod a; pub mod b; pub use a::Thing;"),
        ("a/mod.rs", "mod x; mod y; pub use x::Thing;"),
        (
            "a/x.rs",
            "use super::{y::{self, Other}, *};\n// crate::b::nothing\npub struct Thing;",
        ),
        (
            "a/y.rs",
            "pub struct Other; fn f() { let s = \"crate::b::Q\"; super::x::Thing; }",
        ),
        ("b.rs", "use crate::Thing;"),
    ]);
    let found = circles(&edges(&files));
    let folders: Vec<&ModPath> = found.iter().map(|(f, _, _)| f).collect();
    assert_eq!(folders, vec![&vec!["a".to_string()]], "{}", report(&found));
    assert_eq!(found[0].1, vec!["x", "y"]);
    // `crate::Thing` is a::x::Thing: b imports a, and nothing imports b.
    let top: Vec<_> = edges(&files)
        .into_iter()
        .filter(|e| e.folder.is_empty())
        .collect();
    assert_eq!(top.len(), 1);
    assert_eq!((top[0].from.as_str(), top[0].to.as_str()), ("b", "a"));
}

#[test]
fn a_test_module_using_its_parent_is_no_edge() {
    let files = sample(&[
        ("lib.rs", "pub mod a; pub mod b;"),
        (
            "a.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests { use super::*; use crate::b; }",
        ),
        (
            "b.rs",
            "pub fn g() { crate::a::f(); let c = 'x'; let l: &'static str = \"\"; }",
        ),
    ]);
    let found = circles(&edges(&files));
    assert_eq!(found.len(), 1, "the test module's `crate::b` still counts");
    let only_parent = sample(&[
        ("lib.rs", "pub mod a; pub mod b;"),
        (
            "a.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests { use super::*; }",
        ),
        ("b.rs", "pub fn g() { crate::a::f(); }"),
    ]);
    assert!(circles(&edges(&only_parent)).is_empty());
}
