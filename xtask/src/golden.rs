//! `cargo xtask golden [--check]`: the project's own NumPy-made fixtures.
//!
//! `xtask/golden.py` writes small `.npy` files (object arrays and one `.npz` too),
//! `manifest.json`, `dtype_spellings.json` (how NumPy reads each descr spelling) and
//! `scalar_text.json` (NumPy's `str()` of single scalars) with NumPy, and Dask's npy stacks
//! in `stack/` (blocks, `info` pickles, originals and JSON sidecars), deterministically.
//! `golden` runs it into `tests/data` (after removing the `.npy` and `.npz` files there and
//! every file of `stack/`, so renamed fixtures do not linger); `golden --check` runs it into
//! `<target>/xtask/golden` and fails unless every file there is byte-identical to
//! `tests/data`, which shows the committed fixtures are exactly what NumPy (and Dask) make.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::project::{self, Result};

/// What `golden` does.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Rewrite `tests/data`.
    Write,
    /// Compare a fresh run with `tests/data`.
    Check,
}

/// Runs `cargo xtask golden` or `cargo xtask golden --check`.
pub fn run(mode: Mode) -> Result<()> {
    project::step("python with numpy");
    let python = project::python_with_numpy()?;
    match mode {
        Mode::Write => write(&python),
        Mode::Check => check(&python),
    }
}

/// Where the committed fixtures live.
pub fn data_dir() -> PathBuf {
    project::root().join("tests").join("data")
}

/// Rewrites `tests/data` with `python`.
fn write(python: &Path) -> Result<()> {
    let data = data_dir();
    project::step("golden: remove old fixtures from tests/data");
    fs::create_dir_all(&data)
        .and_then(|()| clear(&data, Level::Top))
        .map_err(|e| format!("cannot clear {}: {e}", data.display()))?;
    project::step("golden: write fixtures into tests/data");
    generate(python, &data)
}

/// Fails unless a fresh run of `golden.py` gives exactly `tests/data`.
pub fn check(python: &Path) -> Result<()> {
    let fresh = project::target_dir().join("xtask").join("golden");
    project::fresh_dir(&fresh)?;
    project::step(&format!("golden: write fixtures into {}", fresh.display()));
    generate(python, &fresh)?;
    project::step("golden: compare with tests/data");
    let data = data_dir();
    let new = fixture_files(&fresh)?;
    let old = fixture_files(&data)?;
    let mut problems = Vec::new();
    for rel in &new {
        if !old.contains(rel) {
            problems.push(format!("missing from tests/data: {rel}"));
        } else if read(&project::join(&fresh, rel))? != read(&project::join(&data, rel))? {
            problems.push(format!("differs from what numpy writes: tests/data/{rel}"));
        }
    }
    for rel in old.iter().filter(|rel| !new.contains(rel)) {
        problems.push(format!("not made by golden.py: tests/data/{rel}"));
    }
    if problems.is_empty() {
        println!("tests/data matches numpy ({} files)", new.len());
        return Ok(());
    }
    for problem in &problems {
        println!("  {problem}");
    }
    Err(format!(
        "tests/data is not what numpy writes ({} problems); run `cargo xtask golden` and commit \
         tests/data",
        problems.len()
    ))
}

/// Runs `golden.py` with `out` as its output directory.
fn generate(python: &Path, out: &Path) -> Result<()> {
    let script = project::root().join("xtask").join("golden.py");
    project::run(Command::new(python).arg(script).arg(out))
}

/// The `.npy` and `.npz` files under `dir`, every other file under its [`STACK_DIR`] and
/// the JSON files golden.py writes at its top; none if `dir` is missing.
fn fixture_files(dir: &Path) -> Result<Vec<String>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let rel = format!("{rel}/{}", entry.file_name().to_string_lossy());
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &rel, out)?;
            } else if !(rel.ends_with(".npy") || rel.ends_with(".npz")) {
                out.push(rel);
            }
        }
        Ok(())
    }
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut files = project::array_files(dir)?;
    let stacks = dir.join(STACK_DIR);
    if stacks.is_dir() {
        walk(&stacks, STACK_DIR, &mut files).map_err(|e| format!("cannot list {}: {e}", stacks.display()))?;
    }
    for name in TOP_FILES {
        if dir.join(name).exists() {
            files.push(name.to_string());
        }
    }
    Ok(files)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The files golden.py writes at the top of its output besides the arrays.
const TOP_FILES: &[&str] = &["manifest.json", "dtype_spellings.json", "scalar_text.json"];

/// The directory of the Dask npy stacks golden.py writes: every file under it is golden.py's
/// (blocks, `info` pickles without an extension, `.json` sidecars).
const STACK_DIR: &str = "stack";

/// What [`clear`] is clearing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    /// `tests/data` itself.
    Top,
    /// A directory below it.
    Below,
    /// [`STACK_DIR`] or a directory below it: every file goes.
    Stacks,
}

/// Removes the `.npy` and `.npz` files, [`TOP_FILES`] and every file of [`STACK_DIR`] under
/// `dir` and the directories that become empty, leaving a top-level `tmp/` alone.
fn clear(dir: &Path, level: Level) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            let below = match level {
                Level::Top if name == "tmp" => continue,
                Level::Top if name == STACK_DIR => Level::Stacks,
                Level::Stacks => Level::Stacks,
                _ => Level::Below,
            };
            clear(&path, below)?;
            if fs::read_dir(&path)?.next().is_none() {
                fs::remove_dir(&path)?;
            }
        } else if level == Level::Stacks
            || name.ends_with(".npy")
            || name.ends_with(".npz")
            || (level == Level::Top && TOP_FILES.contains(&name.as_ref()))
        {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}
