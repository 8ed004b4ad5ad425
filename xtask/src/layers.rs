//! Tidy's fifth check: each crate's modules form layers, with no import circles, under a
//! crate root that nothing imports; so do the modules of each folder.
//!
//! A module is a top-level item of a crate's `src` (`read.rs`, or the folder `npz/` with
//! `npz.rs` or `npz/mod.rs`); the root is `lib.rs` (a library) or `main.rs` (a binary).
//! Module `a` uses module `b` when `a`'s non-test code names `crate::b` (or an item that
//! the root re-exports from `b`, such as `crate::Result`). A circle (`read` uses `array`
//! uses `read`) means the shared piece belongs in a module below both; each circle is
//! reported with the uses that make it. The root is the crate's face (its docs, modules,
//! re-exports, and `main` for a binary): a module that names an item the root defines
//! (`crate::two_cpus`) imports the root from below, and that item belongs in a module.
//!
//! Inside a folder module (`npz/`), its child modules (`npz/write.rs`, `npz/read/`) are
//! layered the same way: a child uses another when code anywhere inside it names it, by
//! `super::`, `self::` or `crate::` paths, or names what the folder's own file re-exports
//! from it (`pub use read::Reader;`). A `#[cfg(doc)]` import counts (link docs by path
//! instead: `[`Reader`]: super::Reader`).

use std::collections::{BTreeMap, BTreeSet};

use crate::lex::{code_lines, Line};

/// The files of a crate root, relative to `src`.
const ROOTS: &[&str] = &["lib.rs", "main.rs"];

/// Which module each file belongs to: the first component of its path under the crate's
/// `src`, `.rs` stripped; `None` for the crate root and for `src/bin` (other crates).
fn module_of(rel: &str) -> Option<&str> {
    if ROOTS.contains(&rel) {
        return None;
    }
    let first = rel.split('/').next()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (module != "bin").then_some(module)
}

/// The items the root `lines` defines at its top level (`fn two_cpus`, `pub struct X`,
/// `const N`), but for modules and re-exports: what no module should name.
fn root_items(lines: &[Line]) -> BTreeSet<String> {
    const KINDS: &[&str] = &["fn", "struct", "enum", "union", "trait", "type", "const", "static"];
    const QUALIFIERS: &[&str] = &["pub", "pub(crate)", "const", "async", "unsafe", "extern", "\"\"", "mut"];
    let mut out = BTreeSet::new();
    for line in &lines[..code_lines(lines).min(lines.len())] {
        if line.code.starts_with(char::is_whitespace) {
            continue;
        }
        let mut words = line.code.split_whitespace().skip_while(|w| QUALIFIERS.contains(w));
        let (Some(kind), Some(name)) = (words.next(), words.next()) else { continue };
        let name = ident(name);
        if KINDS.contains(&kind) && !name.is_empty() && name != "_" {
            out.insert(name.to_string());
        }
    }
    out
}

/// The names `lib.rs` re-exports, and from which module: `pub use read::{NpyReader, ..};`.
fn reexports(lib: &[Line], modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib {
        let code = line.code.trim();
        let Some(rest) = code.strip_prefix("pub use ") else { continue };
        let Some((module, names)) = rest.split_once("::") else { continue };
        if !modules.contains(module) {
            continue;
        }
        let names = names.trim_end_matches(';').trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.rsplit(" as ").next().unwrap_or(name);
            out.insert(name.to_string(), module.to_string());
        }
    }
    out
}

/// The identifier `s` starts with.
fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first path segments after each `crate::` in `code` (`crate::{a::X, b}` gives `a`
/// and `b`).
fn crate_paths(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = &rest[..at];
        rest = &rest[at + "crate::".len()..];
        // `$crate::` and `my_crate::` are not this crate's root.
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(|item| ident(item.trim())).filter(|s| !s.is_empty()));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// The crate root among `files`, lexed (empty if there is none).
fn root_of(files: &[(String, Vec<Line>)]) -> &[Line] {
    files.iter().find(|(rel, _)| ROOTS.contains(&rel.as_str())).map(|(_, lines)| lines.as_slice()).unwrap_or(&[])
}

/// The uses between modules: `module -> {modules it uses}`, from `files` (paths relative to
/// the crate's `src`, lexed).
pub fn uses(files: &[(String, Vec<Line>)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().filter_map(|(rel, _)| module_of(rel)).map(String::from).collect();
    let names = reexports(root_of(files), &modules);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, lines) in files {
        let Some(from) = module_of(rel) else { continue };
        let code = &lines[..code_lines(lines).min(lines.len())];
        for line in code {
            for name in crate_paths(&line.code) {
                let to = if modules.contains(name) { Some(name) } else { names.get(name).map(String::as_str) };
                if let Some(to) = to.filter(|to| *to != from) {
                    graph.entry(from.to_string()).or_default().insert(to.to_string());
                }
            }
        }
    }
    graph
}

/// The import circles of `graph`: its strongly connected components of two or more
/// modules (Tarjan's algorithm), each sorted.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|&x| x == v).expect("on the stack");
                let mut component: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.out.sort();
    walk.out
}

/// The module path of the file `rel` (relative to `src`): `npz/write.rs` is `npz::write`,
/// `npz.rs` and `npz/mod.rs` are `npz`, the crate root is the empty path.
fn module_path(rel: &str) -> Vec<String> {
    if ROOTS.contains(&rel) {
        return Vec::new();
    }
    let mut parts: Vec<String> = rel.split('/').map(String::from).collect();
    if parts.last().is_some_and(|last| last == "mod.rs") {
        parts.pop();
    } else if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    parts
}

/// Every path `code` names from `crate::`, `super::` or `self::`, resolved to absolute
/// module paths from the module `at` (`super::super::x` in `a::b::c` is `a::x`); a group
/// (`super::{x::Y, z}`) gives one path per item. Paths that leave the crate are dropped.
fn absolute_paths(code: &str, at: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts = ["crate::", "super::", "self::"].iter().find(|p| rest.starts_with(**p));
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'$' | b':'));
        let Some(&start) = starts.filter(|_| boundary) else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let mut base: Vec<String> = match start {
            "crate::" => Vec::new(),
            "self::" => at.to_vec(),
            _ => at[..at.len().saturating_sub(1)].to_vec(),
        };
        let mut tail = &rest[start.len()..];
        let mut left = start == "super::" && at.is_empty();
        while let Some(more) = tail.strip_prefix("super::") {
            left |= base.pop().is_none();
            tail = more;
        }
        i += rest.len() - tail.len();
        if left {
            continue;
        }
        // The segments `a::b::c`, up to a group or anything else.
        loop {
            let segment = ident(tail);
            if segment.is_empty() {
                break;
            }
            base.push(segment.to_string());
            match tail[segment.len()..].strip_prefix("::") {
                Some(more) if more.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '{') => tail = more,
                _ => {
                    tail = "";
                    break;
                }
            }
        }
        if let Some(group) = tail.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let first = ident(item.trim());
                if !first.is_empty() && first != "self" {
                    out.push([base.clone(), vec![first.to_string()]].concat());
                }
            }
        } else if !base.is_empty() {
            out.push(base);
        }
    }
    out
}

/// The uses between the modules of each folder of the crate: for the folder module `d`
/// (`npz`), which of its child modules (`npz::write`, `npz::workers`) names which other,
/// by path from anywhere inside it (`super::workers`, `crate::npz::workers`, a child of
/// its own included), or through a name `d`'s own file re-exports from a child (`pub use
/// write::Writer;`, named as `super::Writer`). Keyed by the folder's path.
fn folder_uses(files: &[(String, Vec<Line>)]) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let paths: Vec<Vec<String>> = files.iter().map(|(rel, _)| module_path(rel)).collect();
    // Each folder and its children: the modules one level below it that some file is in.
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for path in &paths {
        for depth in 1..path.len() {
            children.entry(path[..depth].to_vec()).or_default().insert(path[depth].clone());
        }
    }
    // The names each folder's own file re-exports from its children.
    let mut reexported: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for ((_, lines), path) in files.iter().zip(&paths) {
        let Some(kids) = children.get(path) else { continue };
        let kids: BTreeSet<String> = kids.clone();
        for line in &lines[..code_lines(lines).min(lines.len())] {
            let code = line.code.trim();
            let Some(rest) =
                ["pub use ", "pub(crate) use ", "pub(super) use "].iter().find_map(|p| code.strip_prefix(p))
            else {
                continue;
            };
            let rest = rest.strip_prefix("self::").unwrap_or(rest);
            let Some((child, names)) = rest.split_once("::") else { continue };
            if !kids.contains(child) {
                continue;
            }
            let names = names.trim_end_matches(';').trim_start_matches('{').trim_end_matches('}');
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let name = ident(name.rsplit(" as ").next().unwrap_or(name));
                reexported.entry(path.clone()).or_default().insert(name.to_string(), child.to_string());
            }
        }
    }
    let mut out: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for ((_, lines), path) in files.iter().zip(&paths) {
        let code: Vec<&str> = lines[..code_lines(lines).min(lines.len())].iter().map(|l| l.code.as_str()).collect();
        let code = code.join(" ");
        for named in absolute_paths(&code, path) {
            // Every folder holding both this file (below one child) and what it names.
            for depth in 1..path.len() {
                let folder = &path[..depth];
                let from = &path[depth];
                if named.len() <= depth || named[..depth] != *folder {
                    continue;
                }
                let kids = &children[folder];
                let to = if kids.contains(&named[depth]) {
                    Some(named[depth].clone())
                } else {
                    reexported.get(folder).and_then(|r| r.get(&named[depth])).cloned()
                };
                if let Some(to) = to.filter(|to| to != from) {
                    out.entry(folder.to_vec()).or_default().entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    out
}

/// One problem line per import circle of `graph`, the modules of `place`.
fn circle_problems(place: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    circles(graph)
        .into_iter()
        .map(|circle| {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from].iter().filter(|to| circle.contains(to)).map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            format!(
                "{place}: modules {} import each other ({}): move what they share into a module below them",
                circle.join(", "),
                edges.join(", ")
            )
        })
        .collect()
}

/// Check 5 on the crate in directory `krate`, from its `files` (paths relative to its
/// `src`, lexed): one problem line per import circle, among the crate's modules or among
/// the modules of one of its folders, naming the uses inside it, and one per use of an
/// item the crate root defines.
pub fn check(krate: &str, files: &[(String, Vec<Line>)]) -> Vec<String> {
    let mut problems = circle_problems(&format!("{krate}/src"), &uses(files));
    for (folder, graph) in folder_uses(files) {
        problems.extend(circle_problems(&format!("{krate}/src/{}", folder.join("/")), &graph));
    }
    let root = files.iter().find(|(rel, _)| ROOTS.contains(&rel.as_str())).map_or("lib.rs", |(rel, _)| rel);
    let modules: BTreeSet<String> = files.iter().filter_map(|(rel, _)| module_of(rel)).map(String::from).collect();
    let items: BTreeSet<String> = root_items(root_of(files)).difference(&modules).cloned().collect();
    for (rel, lines) in files.iter().filter(|(rel, _)| module_of(rel).is_some()) {
        for (n, line) in lines[..code_lines(lines).min(lines.len())].iter().enumerate() {
            let named: BTreeSet<&str> =
                crate_paths(&line.code).into_iter().filter(|name| items.contains(*name)).collect();
            for name in named {
                problems.push(format!(
                    "{krate}/src/{rel}:{}: uses `crate::{name}`, which the crate root {root} defines: the root is \
                     the crate's face, move `{name}` into a module",
                    n + 1
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    fn files(src: &[(&str, &str)]) -> Vec<(String, Vec<Line>)> {
        src.iter().map(|(rel, text)| (rel.to_string(), lex(text))).collect()
    }

    #[test]
    fn uses_follow_paths_groups_and_reexports() {
        let f = files(&[
            ("lib.rs", "mod error;\nmod read;\npub use error::{Error, Result};\npub use read::NpyReader;\n"),
            ("error.rs", "pub struct Error;\n"),
            ("read.rs", "use crate::{error::Error, dtype};\nfn f() -> crate::Result<()> { Ok(()) }\n"),
            ("dtype.rs", "// crate::read in a comment\nconst S: &str = \"crate::read\";\n"),
            ("npz/mod.rs", "use crate::NpyReader;\n#[cfg(test)]\nmod tests {\n    use crate::dtype;\n}\n"),
        ]);
        let g = uses(&f);
        assert_eq!(g["read"], BTreeSet::from(["error".to_string(), "dtype".to_string()]));
        assert_eq!(g["npz"], BTreeSet::from(["read".to_string()]));
        assert!(!g.contains_key("dtype"), "comments and strings are not uses");
        assert!(check("npy-core", &f).is_empty());
    }

    #[test]
    fn circles_are_reported_with_their_uses() {
        let f = files(&[
            ("lib.rs", ""),
            ("read.rs", "use crate::array::Array;\n"),
            ("array.rs", "use crate::object::Object;\n"),
            ("object.rs", "use crate::read::NpyReader;\nuse crate::dtype::DType;\n"),
            ("dtype.rs", ""),
        ]);
        let found = check("npy-core", &f);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("npy-core/src: modules"), "{}", found[0]);
        assert!(found[0].contains("modules array, object, read import each other"), "{}", found[0]);
        assert!(found[0].contains("read -> array") && found[0].contains("object -> read"), "{}", found[0]);
        assert!(!found[0].contains("dtype"), "{}", found[0]);
    }

    /// A binary crate: `main.rs` is the root, modules in files and folders (`copy.rs` with
    /// `copy/npz.rs` is one module), and a circle through a folder's file is found.
    #[test]
    fn circles_in_a_binary_crate() {
        let f = files(&[
            ("main.rs", "mod copy;\nmod npz;\nmod progress;\nfn main() {}\n"),
            ("copy.rs", "mod archive;\nuse crate::progress;\n"),
            ("copy/archive.rs", "fn f() { crate::npz::is_npz(); }\n"),
            ("npz.rs", "pub fn is_npz() {}\nfn g() { crate::copy::header_bytes(); }\n"),
            ("progress.rs", ""),
        ]);
        let found = check("npy-cli", &f);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("npy-cli/src: modules copy, npz import each other"), "{}", found[0]);
        assert!(found[0].contains("copy -> npz") && found[0].contains("npz -> copy"), "{}", found[0]);
        assert!(!found[0].contains("progress"), "{}", found[0]);
    }

    /// Circles among the modules of a folder: by `super::`, by the crate path, through a
    /// name the folder's file re-exports, and from a grandchild; none across folders.
    #[test]
    fn circles_inside_a_folder() {
        let f = files(&[
            ("lib.rs", "mod npz;\nmod object;\n"),
            ("npz.rs", "mod workers;\nmod write;\npub use write::Writer;\n"),
            ("npz/write.rs", "use super::workers::Workers;\npub struct Writer;\n"),
            ("npz/workers.rs", "use super::{Writer, read};\nfn f() { crate::npz::read::g(); }\n"),
            ("npz/read.rs", "use crate::object::pickle::Pickle;\n"),
            ("object/mod.rs", "mod pickle;\nmod check;\n"),
            ("object/pickle/mod.rs", "mod decode;\n"),
            ("object/pickle/decode.rs", "use super::super::check::Checked;\nfn f() { self::inner(); }\n"),
            (
                "object/check.rs",
                "use crate::object::pickle::decode;\n#[cfg(test)]\nmod tests {\n    use super::super::check;\n}\n",
            ),
        ]);
        let found = check("npy-core", &f);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("npy-core/src/npz: modules workers, write import each other"), "{}", found[0]);
        assert!(found[0].contains("workers -> write") && found[0].contains("write -> workers"), "{}", found[0]);
        assert!(!found[0].contains("read"), "{}", found[0]);
        assert!(found[1].starts_with("npy-core/src/object: modules check, pickle import each other"), "{}", found[1]);
        let uses = folder_uses(&f);
        assert_eq!(uses[&vec!["npz".to_string()]]["workers"], BTreeSet::from(["read".into(), "write".into()]));
        assert!(!uses.contains_key(&vec!["object".to_string(), "pickle".to_string()]), "{uses:?}");
        assert_eq!(
            absolute_paths(
                "use super::{a::B, c}; x::super::y; self::z::W; crate::p::{q, r::S}",
                &["m".into(), "n".into()]
            ),
            [
                vec!["m".to_string(), "a".into()],
                vec!["m".into(), "c".into()],
                vec!["m".into(), "n".into(), "z".into(), "W".into()],
                vec!["p".into(), "q".into()],
                vec!["p".into(), "r".into()],
            ]
        );
        assert!(absolute_paths("super::x", &[]).is_empty());
    }

    /// A module that names an item the root defines (not a module, not a re-export).
    #[test]
    fn items_of_the_root_are_not_imported() {
        let f = files(&[
            ("lib.rs", "mod npz;\nmod read;\npub use read::Reader;\npub(crate) fn two_cpus() -> bool { true }\nconst _: () = ();\n"),
            ("read.rs", "pub struct Reader;\n"),
            ("npz/write.rs", "use crate::Reader;\n\nfn f() {\n    if crate::two_cpus() || crate::two_cpus() {}\n}\n#[cfg(test)]\nmod tests {\n    fn t() { crate::two_cpus(); }\n}\n"),
        ]);
        assert_eq!(
            check("npy-core", &f),
            ["npy-core/src/npz/write.rs:4: uses `crate::two_cpus`, which the crate root lib.rs defines: the root is \
              the crate's face, move `two_cpus` into a module"]
        );
        assert_eq!(
            root_items(&lex(
                "pub(crate) fn two_cpus() {}\npub const fn f() {}\nstruct S;\nmod m;\nuse x::Y;\n    fn inner() {}\n"
            )),
            BTreeSet::from(["two_cpus".to_string(), "f".to_string(), "S".to_string()])
        );
    }
}
