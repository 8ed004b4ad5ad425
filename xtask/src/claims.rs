//! Tidy's check that ARCHITECTURE.md's checkable claims are true: that its map names every
//! module, and that what it says happens in one place happens nowhere else. Plain text
//! checks: Rust sources through [`crate::lex`] (comments and strings blanked), Python
//! sources by lines, comments left out.

use std::fs;
use std::path::Path;

use crate::lex::{lex, tokens};
use crate::project::Result;

/// A section of ARCHITECTURE.md (its `### ` title) and the folders whose modules it maps:
/// each file or folder directly in them must be named in that section.
const SECTIONS: &[(&str, &[&str])] = &[
    ("npy-core", &["npy-core/src"]),
    ("npy-derive", &["npy-derive/src"]),
    ("npy-arrow", &["npy-arrow/src"]),
    ("npy-store", &["npy-store/src"]),
    ("npy-datafusion", &["npy-datafusion/src"]),
    ("npy-ballista", &["npy-ballista/src"]),
    ("npy-cli", &["npy-cli/src"]),
    ("xtask and the root package", &["xtask/src"]),
    ("npy-js", &["npy-js/src", "npy-js/js", "npy-js/viewer"]),
    ("npy-r", &["npy-r/src/rust/src", "npy-r/R"]),
    ("npy-pyo3 and npy-python", &["npy-pyo3/src", "npy-python/src", "npy-python/python/npy"]),
];

/// Files a map need not name: crate roots, folder modules' roots, package markers, and
/// what is not code (styles, pictures, data, type stubs).
fn is_mapped(name: &str) -> bool {
    let roots = ["lib.rs", "main.rs", "mod.rs", "tests.rs", "__init__.py", "index.html", "tests", "bin"];
    let code = [".rs", ".js", ".mjs", ".py", ".R"];
    !roots.contains(&name) && (code.iter().any(|ext| name.ends_with(ext)) || !name.contains('.'))
}

/// A claim that something happens in one place: `words` (Rust tokens, or Python text) of
/// the sources under `dir` are found only in `allowed` (paths under the workspace root).
struct OnlyIn {
    claim: &'static str,
    dir: &'static str,
    words: &'static [&'static str],
    allowed: &'static [&'static str],
}

const ONLY_IN: &[OnlyIn] = &[
    OnlyIn {
        claim: "npy-store's `Source` is the one source of bytes: only it asks a store for a range",
        dir: "npy-store/src",
        words: &["get_range", "get_ranges", "get_opts", "File"],
        allowed: &["npy-store/src/source.rs"],
    },
    OnlyIn {
        claim: "npy-store's readers read local files through `Source`, never through a LocalFileSystem store",
        dir: "npy-store/src",
        words: &["LocalFileSystem"],
        allowed: &["npy-store/src/url.rs"],
    },
    OnlyIn {
        claim: "npy-cli's `report` is the only place that prints errors",
        dir: "npy-cli/src",
        words: &["eprintln", "eprint"],
        allowed: &["npy-cli/src/report.rs"],
    },
    OnlyIn {
        claim: "no zip structure is read in Python, but by `NpzFile.zip`",
        dir: "npy-python/python/npy",
        words: &["ZipFile("],
        allowed: &["npy-python/python/npy/_npyio.py"],
    },
    OnlyIn {
        claim: "no Python module lists a directory itself (npy-store's `find_files` does)",
        dir: "npy-python/python/npy",
        words: &["listdir(", "scandir(", "os.walk(", "glob(", "iglob("],
        allowed: &[],
    },
];

/// Every problem with ARCHITECTURE.md's checkable claims, a line each.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let map = fs::read_to_string(root.join("ARCHITECTURE.md")).map_err(|e| format!("ARCHITECTURE.md: {e}"))?;
    let mut problems = Vec::new();
    for (title, dirs) in SECTIONS {
        let Some(text) = section(&map, title) else {
            problems.push(format!("ARCHITECTURE.md: no section `### {title}`"));
            continue;
        };
        for dir in *dirs {
            for name in entries(&root.join(dir))? {
                if is_mapped(&name) && !names(text, &name) {
                    problems.push(format!("ARCHITECTURE.md: its section {title:?} does not name {dir}/{name}"));
                }
            }
        }
    }
    for only in ONLY_IN {
        for rel in files(root, only.dir)? {
            if only.allowed.contains(&rel.as_str()) {
                continue;
            }
            let text = fs::read_to_string(root.join(&rel)).map_err(|e| format!("{rel}: {e}"))?;
            for (line, word) in found(&rel, &text, only.words) {
                problems.push(format!("{rel}:{line}: `{word}` here, where ARCHITECTURE.md says {}", only.claim));
            }
        }
    }
    Ok(problems)
}

/// The text of ARCHITECTURE.md's section `### title`, to the next heading.
fn section<'a>(map: &'a str, title: &str) -> Option<&'a str> {
    let start = map.find(&format!("\n### {title}\n"))? + 1;
    let body = &map[start + 5 + title.len()..];
    let end = body.find("\n#").map_or(body.len(), |i| i + 1);
    Some(&body[..end])
}

/// Whether `text` names the module file or folder `name`: as `` `stem` ``, `` `name` ``,
/// a path ending in it, or a folder path through it.
fn names(text: &str, name: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    [format!("`{stem}`"), format!("`{name}`"), format!("/{name}`"), format!("`{stem}/"), format!("/{stem}/")]
        .iter()
        .any(|p| text.contains(p.as_str()))
}

/// The names of the files and folders directly in `dir`, sorted.
fn entries(dir: &Path) -> Result<Vec<String>> {
    let list = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = list.filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string())).collect();
    names.retain(|n| !n.starts_with('.') && n != "__pycache__");
    names.sort();
    Ok(names)
}

/// The Rust and Python sources under `dir` (relative to `root`), tests left out.
fn files(root: &Path, dir: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_string()];
    while let Some(dir) = stack.pop() {
        for name in entries(&root.join(&dir))? {
            let rel = format!("{dir}/{name}");
            if root.join(&rel).is_dir() {
                if name != "tests" {
                    stack.push(rel);
                }
            } else if (name.ends_with(".rs") && name != "tests.rs") || name.ends_with(".py") {
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Where `words` stand in the code of `text` (file `rel`): a Rust file's tokens before its
/// trailing `#[cfg(test)]` module, a Python file's lines but comments.
fn found(rel: &str, text: &str, words: &[&'static str]) -> Vec<(usize, &'static str)> {
    if rel.ends_with(".py") {
        let code = text.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with('#'));
        return code
            .flat_map(|(i, l)| words.iter().filter(move |w| l.contains(**w)).map(move |w| (i + 1, *w)))
            .collect();
    }
    let lines = lex(text);
    let end = lines.iter().position(|l| l.code.trim() == "#[cfg(test)]").unwrap_or(lines.len());
    let lines = &lines[..end];
    let toks = tokens(lines);
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        for w in words {
            // `File` alone counts only as `Body::File`, the one kind of answer told apart.
            let hit = match *w {
                "File" => t.text == "File" && k >= 3 && toks[k - 3].text == "Body" && toks[k - 1].text == ":",
                w => t.text == w,
            };
            if hit {
                out.push((t.line + 1, *w));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_end_at_the_next_heading() {
        let map = "# A\n\n### npy-js\n`array` and `viewer/`\n### npy-r\n`read`\n## Next\n";
        assert_eq!(section(map, "npy-js"), Some("`array` and `viewer/`\n"));
        assert_eq!(section(map, "npy-r"), Some("`read`\n"));
        assert_eq!(section(map, "npy-cli"), None);
    }

    #[test]
    fn a_module_is_named_by_stem_file_or_path() {
        let text = "`header` (...), `open.js`, `npz/filter.rs`, `shards/` and `python/npy/`";
        for name in ["header.rs", "open.js", "filter.rs", "shards", "npy"] {
            assert!(names(text, name), "{name}");
        }
        for name in ["head.rs", "pen.js", "rows.rs"] {
            assert!(!names(text, name), "{name}");
        }
    }

    #[test]
    fn words_count_in_code_only() {
        let rust = "// get_range( in a comment\nlet s = \"get_opts\";\nstore.get_opts(x);\nmatch b { Body::File(f) => 1, File => 2 }\n#[cfg(test)]\nmod tests { fn f() { get_range(); } }\n";
        assert_eq!(found("a.rs", rust, &["get_range", "get_opts", "File"]), [(3, "get_opts"), (4, "File")]);
        let python = "# os.listdir(x)\nnames = os.listdir(d)\n";
        assert_eq!(found("a.py", python, &["listdir("]), [(2, "listdir(")]);
    }
}
