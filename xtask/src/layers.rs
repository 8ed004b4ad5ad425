//! Tidy's fifth check: each crate's modules form layers, with no import circles, under a
//! crate root that nothing imports.
//!
//! A module is a top-level item of a crate's `src` (`read.rs`, or the folder `npz/` with
//! `npz.rs` or `npz/mod.rs`); the root is `lib.rs` (a library) or `main.rs` (a binary).
//! Module `a` uses module `b` when `a`'s non-test code names `crate::b` (or an item that
//! the root re-exports from `b`, such as `crate::Result`). A circle (`read` uses `array`
//! uses `read`) means the shared piece belongs in a module below both; each circle is
//! reported with the uses that make it. The root is the crate's face (its docs, modules,
//! re-exports, and `main` for a binary): a module that names an item the root defines
//! (`crate::two_cpus`) imports the root from below, and that item belongs in a module.

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

/// Check 5 on the crate in directory `krate`, from its `files` (paths relative to its
/// `src`, lexed): one problem line per import circle, naming the uses inside it, and one
/// per use of an item the crate root defines.
pub fn check(krate: &str, files: &[(String, Vec<Line>)]) -> Vec<String> {
    let graph = uses(files);
    let mut problems: Vec<String> = circles(&graph)
        .into_iter()
        .map(|circle| {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from].iter().filter(|to| circle.contains(to)).map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            format!(
                "{krate}/src: modules {} import each other ({}): move what they share into a module below them",
                circle.join(", "),
                edges.join(", ")
            )
        })
        .collect();
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
