//! What every command needs: where the workspace is, how to run `cargo` and
//! other programs, and a Python that has NumPy.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Errors are messages for the person running the command.
pub type Result<T> = std::result::Result<T, String>;

/// The workspace root: the parent of this crate's directory.
pub fn root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` if set, else `<root>/target`.
pub fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root().join(dir),
        None => root().join("target"),
    }
}

/// A `cargo` command run in the workspace root, using the same cargo that
/// runs xtask (`$CARGO`) when there is one.
pub fn cargo() -> Command {
    let program = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(program);
    cmd.current_dir(root());
    cmd
}

/// Prints the `==> name` line that starts a stage.
pub fn step(name: &str) {
    println!("==> {name}");
}

/// Runs `cmd` with inherited output and fails unless it exits successfully.
pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

/// The command line of `cmd`, for messages.
pub fn show(cmd: &Command) -> String {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Makes `dir` an empty directory, removing whatever was there.
pub fn fresh_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// Creates the parent directory of `file`.
pub fn create_parent(file: &Path) -> Result<()> {
    match file.parent() {
        Some(dir) => fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display())),
        None => Ok(()),
    }
}

/// The `.npy` and `.npz` files under `dir`, as sorted relative paths with `/`.
///
/// A top-level `tmp/` directory is skipped: `tests/data/tmp` is scratch space
/// for tests (git-ignored), not fixtures.
pub fn array_files(dir: &Path) -> Result<Vec<String>> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{prefix}{name}");
            if entry.file_type()?.is_dir() {
                if rel != "tmp" {
                    walk(&entry.path(), &format!("{rel}/"), out)?;
                }
            } else if name.ends_with(".npy") || name.ends_with(".npz") {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    files.sort();
    Ok(files)
}

/// `dir` joined with a relative path that uses `/`.
pub fn join(dir: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(dir.to_path_buf(), |path, part| path.join(part))
}

/// A Python 3 that can `import numpy`.
///
/// Uses `python3` if it has NumPy. Otherwise creates (once) a venv at
/// `<target>/numpy-venv`, installs NumPy into it with pip, and uses its
/// Python. Says which one it uses.
///
/// # Errors
/// If `python3` is missing, or the venv or the NumPy install fails.
pub fn python_with_numpy() -> Result<PathBuf> {
    let system = PathBuf::from("python3");
    match numpy_version(&system) {
        Err(e) => {
            return Err(format!(
                "python3 not found ({e}); Python 3 with NumPy (or with pip and venv, so \
                 NumPy can be installed) is needed to make the golden fixtures and to check \
                 files against NumPy"
            ))
        }
        Ok(Some(version)) => {
            println!("using python3 (numpy {version})");
            return Ok(system);
        }
        Ok(None) => {}
    }
    let venv = target_dir().join("numpy-venv");
    let python = if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python") };
    if let Ok(Some(version)) = numpy_version(&python) {
        println!("using {} (numpy {version})", python.display());
        return Ok(python);
    }
    println!("python3 has no numpy: creating a venv at {} and installing numpy into it", venv.display());
    run(Command::new(&system).args(["-m", "venv"]).arg(&venv))
        .map_err(|e| format!("{e}; cannot create a venv (on Debian/Ubuntu: apt install python3-venv)"))?;
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "numpy"])
        .stdin(Stdio::null()))?;
    match numpy_version(&python) {
        Ok(Some(version)) => {
            println!("using {} (numpy {version})", python.display());
            Ok(python)
        }
        _ => Err(format!("{} still cannot import numpy", python.display())),
    }
}

/// NumPy's version as seen by `python`: `Ok(None)` if the import fails,
/// `Err` if `python` cannot be run at all.
fn numpy_version(python: &Path) -> io::Result<Option<String>> {
    let output = Command::new(python)
        .args(["-c", "import numpy; print(numpy.__version__)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Ok(output.status.success().then_some(version))
}
