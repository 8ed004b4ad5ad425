//! Tidy's check 8: every program a step, a test, a check script or the bench starts by name
//! is one [`crate::provision::TOOLS`] lists, so that CI's first step provides it. A program
//! started by a name in the code is found by its call's shape, in Rust
//! (`Command::new("zstd")`), Python (`subprocess.run(["zstd", ...])`, `shutil.which("zstd")`)
//! and JavaScript (`execFileSync("gzip", ...)`, `spawn("zstd", ...)`); one started from a
//! variable (the venv's Python, the built `npy`, `process.execPath`) is the project's own.

use std::fs;
use std::path::{Path, PathBuf};

use crate::project::{self, Result};

/// The directories whose sources start programs: xtask, every crate's tests and sources,
/// the root package's tests and benches, the Python package's tests and bench, the
/// JavaScript package's tests, bench and viewer.
const DIRS: &[&str] = &["xtask", "tests", "benches", "npy-js/tests", "npy-js/bench", "npy-js/viewer", "npy-python"];

/// Calls that start the program their first string names, by the file's language.
const RUST_CALLS: &[&str] = &["Command::new(\""];
const PYTHON_CALLS: &[&str] = &[
    "subprocess.run([\"",
    "subprocess.Popen([\"",
    "subprocess.call([\"",
    "subprocess.check_call([\"",
    "subprocess.check_output([\"",
    "shutil.which(\"",
];
const JS_CALLS: &[&str] = &["execFileSync(\"", "execFile(\"", "spawn(\"", "spawnSync(\"", "execSync(\""];

/// The programs `text` starts by name, with their lines, for a file named `name`.
pub fn programs(name: &str, text: &str) -> Vec<(usize, String)> {
    let calls = if name.ends_with(".rs") {
        RUST_CALLS
    } else if name.ends_with(".py") {
        PYTHON_CALLS
    } else if name.ends_with(".js") || name.ends_with(".mjs") {
        JS_CALLS
    } else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for call in calls {
            let mut rest = line;
            while let Some(at) = rest.find(call) {
                rest = &rest[at + call.len()..];
                // The program's name: up to the closing quote, and its first word (`execSync`
                // takes a command line).
                let program = rest.split('"').next().unwrap_or_default();
                let program = program.split_whitespace().next().unwrap_or_default();
                if !program.is_empty() {
                    found.push((i + 1, program.to_string()));
                }
            }
        }
    }
    found
}

/// Every source file under `dirs` of `root`, but `target`, `node_modules` and hidden
/// directories.
fn sources(root: &Path, dirs: &[&str]) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                    walk(&entry.path(), out)?;
                }
            } else if [".rs", ".py", ".js", ".mjs"].iter().any(|ext| name.ends_with(ext)) {
                out.push(entry.path());
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for dir in dirs {
        let dir = root.join(dir);
        if dir.is_dir() {
            walk(&dir, &mut files).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        }
    }
    // Every crate's own tests and sources (npy-core's tests make FIFOs with mkfifo).
    for krate in project::members()? {
        for sub in ["src", "tests"] {
            let dir = root.join(&krate).join(sub);
            if dir.is_dir() {
                walk(&dir, &mut files).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Check 8: `path:line: what is wrong` for each program started by name that
/// [`crate::provision::TOOLS`] does not list.
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for path in sources(root, DIRS)? {
        let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        problems.extend(unlisted(&rel, &text));
    }
    Ok(problems)
}

/// The problems of one file: programs it starts that the provisioning list does not name.
fn unlisted(rel: &str, text: &str) -> Vec<String> {
    let listed = |program: &str| crate::provision::TOOLS.iter().any(|t| t.program == program);
    programs(rel, text)
        .into_iter()
        .filter(|(_, program)| !listed(program))
        .map(|(line, program)| {
            format!("{rel}:{line}: runs `{program}`, which xtask/src/provision.rs's TOOLS does not list (add it there)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_by_their_calls_shape_in_each_language() {
        let rust = "let a = Command::new(\"zstd\").arg(x);\nlet b = Command::new(&python);\nCommand::new(\"tar\")";
        assert_eq!(programs("x.rs", rust), [(1, "zstd".to_string()), (3, "tar".to_string())]);
        let python =
            "subprocess.run([\"zstd\", \"-d\"], check=True)\nsubprocess.run([sys.executable])\nshutil.which(\"R\")";
        assert_eq!(programs("x.py", python), [(1, "zstd".to_string()), (3, "R".to_string())]);
        let js = "execFileSync(\"gzip\", [\"-9\"]); spawn(process.execPath, []); execSync(\"tar -x f\")";
        assert_eq!(programs("x.mjs", js), [(1, "gzip".to_string()), (1, "tar".to_string())]);
        assert!(programs("notes.txt", "Command::new(\"zstd\")").is_empty());
    }

    #[test]
    fn a_program_the_list_lacks_fails_naming_file_line_and_program() {
        // A planted step that runs a program nobody provisions.
        let planted = "fn step() {\n    project::run(Command::new(\"unlisted-tool\").arg(\"x\"))\n}\n";
        let problems = unlisted("xtask/src/planted.rs", planted);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("xtask/src/planted.rs:2: runs `unlisted-tool`"), "{problems:?}");
        // A listed one passes.
        assert!(unlisted("x.rs", "Command::new(\"zstd\")").is_empty());
    }

    #[test]
    fn every_program_this_workspace_starts_is_listed() {
        let root = project::root();
        let problems = check(&root).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
        // The scan reaches the programs of each language's sources.
        let mut seen = std::collections::BTreeSet::new();
        for path in sources(&root, DIRS).unwrap() {
            let text = fs::read_to_string(&path).unwrap();
            seen.extend(programs(&path.to_string_lossy(), &text).into_iter().map(|(_, p)| p));
        }
        for program in ["zstd", "gzip", "mkfifo", "node", "id", "apt-get"] {
            assert!(seen.contains(program), "{program} not found among {seen:?}");
        }
    }
}
