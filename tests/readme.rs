//! The Rust examples of the README, of npy-core's README (the library's manual) and of
//! npy-core's crate-level docs (the first screen of its docs) must compile in a user's
//! crate, whose only dependency is npy-core. Doc-tests compile them (npy-core's
//! `ReadmeDoctests` and `CoreReadmeDoctests` include the two READMEs), but with npy-core's
//! dev-dependencies in reach, so an example that calls `tempfile::tempdir()` passes there
//! and fails for the user. This checks that every path in them starts at `npy_core`, the
//! standard library, a primitive type, a type (`Vec::new`) or a name a `use` brought in.

use std::path::Path;

/// Path roots a user's crate has without dependencies besides npy-core.
const ALLOWED: &[&str] = &[
    "npy_core", "std", "core", "alloc", "self", "super", "crate", "bool", "char", "str", "u8", "u16", "u32", "u64",
    "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64",
];

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The Rust code blocks of a Markdown text: ```` ```rust ```` (and bare ```` ``` ````
/// when `bare_is_rust`, as in rustdoc), with the line each starts on.
fn code_blocks(markdown: &str, bare_is_rust: bool) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let lang = info.split(',').next().unwrap_or_default().trim();
                    let rust = lang == "rust" || (bare_is_rust && lang.is_empty());
                    open = Some((i + 1, rust, String::new()));
                }
            }
            Some((start, rust, code)) => {
                if trimmed.starts_with("```") {
                    if *rust {
                        blocks.push((*start, std::mem::take(code)));
                    }
                    open = None;
                } else {
                    code.push_str(line);
                    code.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "a code block is not closed");
    blocks
}

/// The text of a file's `//!` comments, as rustdoc reads it.
fn crate_docs(source: &str) -> String {
    let lines = source.lines().map(str::trim_start).filter_map(|line| line.strip_prefix("//!"));
    lines.map(|line| format!("{}\n", line.strip_prefix(' ').unwrap_or(line))).collect()
}

/// `code` without comments and string and char literals (each replaced by a space).
fn strip(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if rest.starts_with("//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let body: String = chars[i + 2 + hashes..].iter().collect();
            let end = body.find(&close).expect("a raw string is not closed");
            i += 2 + hashes + body[..end].chars().count() + close.chars().count();
            out.push(' ');
        } else if chars[i] == '"' || (chars[i] == '\'' && chars.get(i + 2) == Some(&'\'')) {
            let quote = chars[i];
            i += 1;
            while i < chars.len() && chars[i] != quote {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if chars[i] == '\'' && chars.get(i + 1) == Some(&'\\') {
            // An escaped char literal: '\n', '\'', '\u{..}'.
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The first segment of every path in `code` that starts with a lower-case name (types
/// start upper-case), and every name a `use` declaration brings in.
fn roots_and_imports(code: &str) -> (Vec<String>, Vec<String>) {
    let code = strip(code);
    let (mut roots, mut imports) = (Vec::new(), Vec::new());
    for stmt in code.split(';') {
        let stmt = stmt.trim_start();
        if let Some(tree) = stmt.strip_prefix("use ").or_else(|| stmt.strip_prefix("pub use ")) {
            // The first name is the path's root, checked as every root is.
            imports.extend(idents(tree).skip(1).map(|(_, name)| name.to_string()));
        }
    }
    for (at, name) in idents(&code) {
        let before = code[..at].trim_end();
        let after = code[at + name.len()..].trim_start();
        let method = before.ends_with('.'); // `x.get::<i64>()`
        if after.starts_with("::")
            && !before.ends_with("::")
            && !method
            && name.starts_with(|c: char| c.is_ascii_lowercase())
        {
            roots.push(name.to_string());
        }
    }
    (roots, imports)
}

/// The identifiers of `code` with their byte offsets.
fn idents(code: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = None;
    let mut found = Vec::new();
    for (i, c) in code.char_indices().chain(std::iter::once((code.len(), ' '))) {
        let ident_char = c.is_alphanumeric() || c == '_';
        match start {
            None if ident_char && !c.is_ascii_digit() => start = Some(i),
            Some(s) if !ident_char => {
                found.push((s, &code[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    found.into_iter()
}

/// What a block names that a user's crate would not have.
fn foreign_roots(code: &str) -> Vec<String> {
    let (roots, imports) = roots_and_imports(code);
    let mut foreign: Vec<String> =
        roots.into_iter().filter(|root| !ALLOWED.contains(&root.as_str()) && !imports.contains(root)).collect();
    foreign.dedup();
    foreign
}

/// Every block of `blocks` (from `what`, at least `min` of them) names no crate but
/// npy-core and std.
fn only_npy_core_and_std(what: &str, blocks: &[(usize, String)], min: usize) {
    assert!(blocks.len() >= min, "{what} has {} Rust blocks", blocks.len());
    let bad: Vec<String> = blocks
        .iter()
        .filter_map(|(line, code)| {
            let foreign = foreign_roots(code);
            (!foreign.is_empty()).then(|| format!("{what}, block at line {line}: {foreign:?}"))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "examples a user's crate cannot compile (add no dependency but npy-core):\n{}",
        bad.join("\n")
    );
}

#[test]
fn readme_examples_use_only_npy_core_and_std() {
    only_npy_core_and_std("README.md", &code_blocks(&read("README.md"), false), 1);
}

#[test]
fn npy_core_readme_examples_use_only_npy_core_and_std() {
    only_npy_core_and_std("npy-core/README.md", &code_blocks(&read("npy-core/README.md"), false), 5);
}

#[test]
fn crate_root_examples_use_only_npy_core_and_std() {
    let docs = crate_docs(&read("npy-core/src/lib.rs"));
    only_npy_core_and_std("npy-core/src/lib.rs's crate docs", &code_blocks(&docs, true), 3);
}

#[test]
fn the_check_finds_other_crates_and_ignores_the_rest() {
    let code = r##"
use npy_core::npz::{Reader, Writer};
use serde_json::Value;
let dir = tempfile::tempdir()?; // a comment naming other::path
let s = "in::a::string";
let r = r#x"raw::string"#x;
let v: Vec<f64> = Vec::<f64>::new();
let w = Writer::create(std::env::temp_dir().join("a.npz"))?;
let n = f64::from(1u8) + npz_helper::value() + v.iter().sum::<f64>();
let c = '\'';
# Ok::<(), npy_core::Error>(())
"##
    .replace("#x", "#");
    assert_eq!(foreign_roots(&code), ["serde_json", "tempfile", "npz_helper"]);
    let docs =
        crate_docs("//! Text\n//! ```\n//! let x = a::b();\n//! ```\n//! ```text\n//! c::d\n//! ```\nfn f() {}\n");
    let blocks = code_blocks(&docs, true);
    assert_eq!(blocks, [(2, "let x = a::b();\n".to_string())]);
}
