//! What every command needs: where the workspace is, how to run `cargo` and
//! other programs, and a Python with the packages pinned in `xtask/requirements.txt`.

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

/// The Python packages of the venv, pinned exactly (`name==version` lines).
pub fn requirements_file() -> PathBuf {
    root().join("xtask").join("requirements.txt")
}

/// A Python 3 that has the packages of `xtask/requirements.txt`, at their pinned versions.
///
/// `$NPY_PYTHON` when set (a Python of the user's own: used as is, but only if its
/// packages are the pinned versions). Otherwise the venv at `<target>/numpy-venv`, made
/// with `python3 -m venv` the first time and filled with `pip install -r
/// xtask/requirements.txt` whenever the requirements differ from the copy the last
/// install left in the venv (`xtask-requirements.txt`), or its packages from the pins.
/// Says which Python it uses.
///
/// # Errors
/// If the requirements are not exact pins, `python3` is missing, the venv or the install
/// fails, or the Python's packages are not the pinned versions.
pub fn python_with_numpy() -> Result<PathBuf> {
    let file = requirements_file();
    let text = fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let pins = parse_pins(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let listed = pins.iter().map(|(name, version)| format!("{name} {version}")).collect::<Vec<_>>().join(", ");

    if let Some(python) = env::var_os("NPY_PYTHON") {
        let python = PathBuf::from(python);
        let wrong = wrong_versions(&python, &pins).map_err(|e| format!("NPY_PYTHON: {e}"))?;
        if !wrong.is_empty() {
            return Err(format!(
                "NPY_PYTHON is {}, whose packages are not the versions {} pins: {}; install them (`{} -m pip install -r {}`), or unset NPY_PYTHON to let xtask make its venv",
                python.display(),
                file.display(),
                wrong.join(", "),
                python.display(),
                file.display()
            ));
        }
        println!("using {} from NPY_PYTHON ({listed})", python.display());
        return Ok(python);
    }

    let venv = target_dir().join("numpy-venv");
    let python = if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python") };
    let stamp = venv.join("xtask-requirements.txt");
    let installed = fs::read_to_string(&stamp).is_ok_and(|old| old == text);
    if installed && wrong_versions(&python, &pins).is_ok_and(|wrong| wrong.is_empty()) {
        println!("using {} ({listed})", python.display());
        return Ok(python);
    }
    if !python.exists() {
        println!("creating a venv at {} for {listed}", venv.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv)).map_err(|e| {
            format!(
                "{e}; Python 3 with venv is needed to make the golden fixtures and to check files against NumPy (on Debian/Ubuntu: apt install python3-venv), or set NPY_PYTHON to a Python that has {listed}"
            )
        })?;
    }
    println!("installing {listed} into {} (from {})", venv.display(), file.display());
    // The stamp goes first, so an install that fails half-way is redone next time.
    if stamp.exists() {
        fs::remove_file(&stamp).map_err(|e| format!("cannot remove {}: {e}", stamp.display()))?;
    }
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(&file)
        .stdin(Stdio::null()))
    .map_err(|e| format!("{e}; pip needs to reach PyPI the first time (or set NPY_PYTHON)"))?;
    let wrong = wrong_versions(&python, &pins)?;
    if !wrong.is_empty() {
        return Err(format!("after pip install, {} still has {}", python.display(), wrong.join(", ")));
    }
    fs::write(&stamp, &text).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    println!("using {} ({listed})", python.display());
    Ok(python)
}

/// The `(name, version)` pins of a requirements file: one `name==version` a line, `#`
/// comments and blank lines allowed; anything looser (`numpy`, `numpy>=2`) is refused, so
/// every run installs the same packages.
fn parse_pins(text: &str) -> Result<Vec<(String, String)>> {
    let mut pins = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let pin = line.split_once("==").filter(|(name, version)| {
            let name_ok = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-[],".contains(c))
                && name.starts_with(|c: char| c.is_ascii_alphanumeric());
            let version_ok =
                !version.is_empty() && version.chars().all(|c| c.is_ascii_alphanumeric() || "._+!".contains(c));
            name_ok && version_ok
        });
        match pin {
            Some((name, version)) => pins.push((name.to_string(), version.to_string())),
            None => return Err(format!("line {}: '{line}' is not an exact pin `name==version`", i + 1)),
        }
    }
    if !pins.iter().any(|(name, _)| name == "numpy") {
        return Err("numpy is not pinned".to_string());
    }
    Ok(pins)
}

/// The pins `python` does not satisfy, as `name X (pinned Y)` (`-` when not installed);
/// `Err` if `python` cannot be run or cannot `import numpy`.
fn wrong_versions(python: &Path, pins: &[(String, String)]) -> Result<Vec<String>> {
    const SCRIPT: &str = "\
import sys, importlib.metadata as md
import numpy
for name in sys.argv[1:]:
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, '-')
";
    // A distribution's name without its extras (`dask[array]` is `dask`).
    let names: Vec<&str> = pins.iter().map(|(name, _)| name.split('[').next().unwrap_or(name)).collect();
    let output = Command::new(python)
        .args(["-c", SCRIPT])
        .args(&names)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("(no message)");
        return Err(format!("{} cannot import numpy: {last}", python.display()));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let found: Vec<(&str, &str)> = stdout.lines().filter_map(|line| line.split_once(' ')).collect();
    let mut wrong = Vec::new();
    for ((_, pinned), name) in pins.iter().zip(&names) {
        let version = found.iter().find(|(n, _)| n == name).map_or("-", |(_, v)| v);
        if version != pinned {
            wrong.push(format!("{name} {version} (pinned {pinned})"));
        }
    }
    Ok(wrong)
}

/// The workspace's member crates, as cargo sees them (`cargo metadata --no-deps`):
/// directories relative to the root, sorted; the root package itself (examples, tests and
/// benches, which tidy walks on their own) left out.
///
/// # Errors
/// If `cargo metadata` fails or its answer has no member under the root.
pub fn members() -> Result<Vec<String>> {
    let out = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({})", out.status));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata's answer: {e}"))?;
    member_dirs(&metadata, &root())
}

/// The member directories of a `cargo metadata` answer, relative to `root`.
fn member_dirs(metadata: &serde_json::Value, root: &Path) -> Result<Vec<String>> {
    let ids = metadata["workspace_members"].as_array().ok_or("cargo metadata: no workspace_members")?;
    let packages = metadata["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let mut members = Vec::new();
    for package in packages.iter().filter(|p| ids.contains(&p["id"])) {
        let manifest = package["manifest_path"].as_str().ok_or("cargo metadata: a package without manifest_path")?;
        let dir = Path::new(manifest).parent().and_then(|d| d.strip_prefix(root).ok());
        match dir {
            Some(dir) if dir.as_os_str().is_empty() => {}
            Some(dir) => members.push(dir.to_string_lossy().replace('\\', "/")),
            None => return Err(format!("member {manifest} is not under {}", root.display())),
        }
    }
    if members.is_empty() {
        return Err("cargo metadata lists no member crates".into());
    }
    members.sort();
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_exact_lines() {
        let text = "# comment\n\nnumpy==2.4.6\ndask[array]==2025.1.0  # with extras\n";
        let pins = parse_pins(text).unwrap();
        assert_eq!(
            pins,
            [("numpy".to_string(), "2.4.6".to_string()), ("dask[array]".to_string(), "2025.1.0".to_string())]
        );
    }

    #[test]
    fn loose_requirements_are_refused() {
        for (text, want) in [
            ("numpy\n", "line 1: 'numpy' is not an exact pin"),
            ("numpy==2.4.6\npyarrow>=20\n", "line 2: 'pyarrow>=20' is not an exact pin"),
            ("numpy==\n", "line 1: 'numpy==' is not an exact pin"),
            ("numpy == 2.4.6\n", "line 1: 'numpy == 2.4.6' is not an exact pin"),
            ("numpy==2.4.6; python_version>'3'\n", "is not an exact pin"),
            ("pyarrow==20.0.0\n", "numpy is not pinned"),
        ] {
            let e = parse_pins(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_requirements_file_pins_numpy() {
        let text = fs::read_to_string(requirements_file()).unwrap();
        let pins = parse_pins(&text).unwrap();
        assert!(pins.iter().any(|(name, _)| name == "numpy"), "{pins:?}");
    }

    #[test]
    fn members_of_the_workspace() {
        let root = Path::new("/ws");
        let metadata = serde_json::json!({
            "workspace_members": ["a 0.1.0", "core 0.1.0", "root 0.1.0"],
            "packages": [
                {"id": "core 0.1.0", "manifest_path": "/ws/npy-core/Cargo.toml"},
                {"id": "root 0.1.0", "manifest_path": "/ws/Cargo.toml"},
                {"id": "a 0.1.0", "manifest_path": "/ws/xtask/Cargo.toml"},
                {"id": "dep 1.0.0", "manifest_path": "/registry/dep/Cargo.toml"},
            ],
        });
        assert_eq!(member_dirs(&metadata, root).unwrap(), ["npy-core", "xtask"]);
        let outside = serde_json::json!({
            "workspace_members": ["x"], "packages": [{"id": "x", "manifest_path": "/elsewhere/Cargo.toml"}],
        });
        assert!(member_dirs(&outside, root).unwrap_err().contains("not under"));
        // This workspace's own list holds npy-core and xtask.
        let ours = members().unwrap();
        assert!(ours.iter().any(|m| m == "npy-core") && ours.iter().any(|m| m == "xtask"), "{ours:?}");
    }
}
