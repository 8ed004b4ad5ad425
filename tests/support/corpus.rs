//! NumPy's reference corpus beside the workspace (`../shared/corpus/public`), for the
//! test files that check against it. In CI (`CI` set, as CI services and `.ci/run` do) it
//! must be there: a missing corpus fails the test that asks. Elsewhere that test is
//! skipped, with a note on stderr that `cargo test` shows.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The corpus directory; `None` (after a note naming `tests`, what is skipped) where it
/// is absent outside CI.
///
/// # Panics
/// Under `CI` when the corpus is absent.
#[allow(dead_code)] // not every test binary that includes this file reads the corpus
pub fn corpus(tests: &str) -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The workspace root (the directory with Cargo.lock), from this package or a member.
    let root = manifest.ancestors().find(|d| d.join("Cargo.lock").is_file()).unwrap_or(manifest);
    let dir = root.join("../shared/corpus/public");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "CI needs NumPy's corpus at {}", dir.display());
    // Once per test binary, and past the test harness's capture of `eprintln!` (which
    // shows a passing test's output only with `--nocapture`): straight to stderr.
    static NOTE: Once = Once::new();
    NOTE.call_once(|| {
        let _ = writeln!(std::io::stderr(), "note: {} is absent; {tests} skipped", dir.display());
    });
    None
}

/// Every file under `dir` (its subdirectories too) with one of these extensions, sorted.
#[allow(dead_code)] // not every test binary that includes this file walks a directory
pub fn files_with_extensions(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| extensions.iter().any(|e| x == *e)) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}
