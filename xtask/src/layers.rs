//! Tidy's fifth check: npy-core's modules form layers, with no import circles.
//!
//! A module is a top-level item of `npy-core/src` (`read.rs`, or the folder `npz/` with
//! `npz.rs` or `npz/mod.rs`). Module `a` uses module `b` when `a`'s non-test code names
//! `crate::b` (or an item that `lib.rs` re-exports from `b`, such as `crate::Result`). A
//! circle (`read` uses `array` uses `read`) means the shared piece belongs in a module
//! below both; each circle is reported with the uses that make it.

use std::collections::{BTreeMap, BTreeSet};

use crate::tidy::{code_lines, Line};

/// Which module each file belongs to: the first component of its path under
/// `npy-core/src`, `.rs` stripped; `None` for the crate root.
fn module_of(rel: &str) -> Option<&str> {
    let first = rel.split('/').next()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (module != "lib").then_some(module)
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

/// The uses between modules: `module -> {modules it uses}`, from `files` (paths relative to
/// `npy-core/src`, lexed).
pub fn uses(files: &[(String, Vec<Line>)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().filter_map(|(rel, _)| module_of(rel)).map(String::from).collect();
    let lib = files.iter().find(|(rel, _)| rel == "lib.rs").map(|(_, lines)| lines.as_slice()).unwrap_or(&[]);
    let names = reexports(lib, &modules);
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

/// Check 5: one problem line per import circle, naming the uses inside it.
pub fn check(files: &[(String, Vec<Line>)]) -> Vec<String> {
    let graph = uses(files);
    circles(&graph)
        .into_iter()
        .map(|circle| {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from].iter().filter(|to| circle.contains(to)).map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            format!(
                "npy-core/src: modules {} import each other ({}): move what they share into a module below them",
                circle.join(", "),
                edges.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tidy::lex;

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
        assert!(check(&f).is_empty());
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
        let found = check(&f);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("modules array, object, read import each other"), "{}", found[0]);
        assert!(found[0].contains("read -> array") && found[0].contains("object -> read"), "{}", found[0]);
        assert!(!found[0].contains("dtype"), "{}", found[0]);
    }
}
