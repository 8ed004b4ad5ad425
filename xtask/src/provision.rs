//! One place that provisions the machine: every program a step of `cargo xtask ci` runs
//! (or a test, a check script or the bench it starts), where it comes from, and why it is
//! needed ([`TOOLS`]); and the tools built or fetched for the steps (the wasm target,
//! `wasm-bindgen-cli`, the venv, the npm packages), in [`ci`].
//!
//! CI's first step calls [`ci`]: it finds every program of [`TOOLS`] on `PATH`; installs the
//! Debian packages of those missing with one `apt-get update` and one `apt-get install`
//! (run as root, as CI is; otherwise it names the command); then fails naming every
//! program still missing, before any long step runs. The later steps only use what it
//! provided. `cargo xtask js` and `bench` call [`ensure`] with the programs they need, the
//! same way. `cargo xtask tidy` fails when a step, a test or a script runs a program this
//! list does not name (check 8 of [`crate::tidy`]).
//!
//! To add a program: one line of [`TOOLS`], and the step that runs it.

use std::env;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::project::{self, Result};

/// Where a program comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A Debian package, installed with `apt-get` when the program is missing.
    Debian(&'static str),
    /// The Rust toolchain `rust-toolchain.toml` pins, which rustup installs (`.ci/run`
    /// does, and cargo on its first run in the checkout).
    Rustup,
    /// A crate of crates.io, installed with `cargo install --locked` when missing (the
    /// machine image has cargo-nextest; a build of it takes a few minutes).
    Crate(&'static str),
    /// What the machine must have, with the version it needs: it cannot be installed
    /// here (Debian's Node.js is too old; Python is the machine's own).
    Prerequisite(&'static str),
    /// An R package from Debian (`r-cran-*`): `program` is the name R loads it by, and it
    /// is there when R's `requireNamespace` finds it (CRAN is not reachable here).
    RLibrary(&'static str),
}

/// A program the steps run.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The name it is run by, found on `PATH`.
    pub program: &'static str,
    /// Where it comes from.
    pub origin: Origin,
    /// Who runs it, and why.
    pub why: &'static str,
}

use Origin::{Crate, Debian, Prerequisite, RLibrary, Rustup};

/// Every program a step runs, by name. A step that runs another one fails tidy.
pub const TOOLS: &[Tool] = &[
    Tool { program: "cargo", origin: Rustup, why: "builds, checks and tests every crate" },
    Tool { program: "rustc", origin: Rustup, why: "tells where the wasm target's library is" },
    Tool { program: "rustup", origin: Rustup, why: "adds the wasm32-unknown-unknown target" },
    Tool {
        program: "cargo-nextest",
        origin: Crate("cargo-nextest"),
        why: "runs the Rust tests, each in its own process, two at a time, with a timeout",
    },
    Tool {
        program: "python3",
        origin: Prerequisite("Python 3.11 or later, with venv and pip (Debian: apt install python3-venv)"),
        why: "makes the venv of xtask/requirements.txt: NumPy and the consumers the checks compare with",
    },
    Tool {
        program: "node",
        origin: Prerequisite("Node.js 20 or later, with npm"),
        why: "runs the JavaScript package's tests, tsc and its bench",
    },
    Tool {
        program: "npm",
        origin: Prerequisite("npm, with Node.js 20 or later"),
        why: "installs npy-js's dev dependencies",
    },
    Tool {
        program: "cc",
        origin: Prerequisite("a C compiler and linker (Debian: apt install gcc), which rustc links xtask with"),
        why: "links every Rust program and builds libzstd's and zlib's C for the machine",
    },
    Tool { program: "clang", origin: Debian("clang"), why: "builds libzstd's C for WebAssembly (the cc crate)" },
    Tool { program: "chromium", origin: Debian("chromium"), why: "the browser tests of npy-js and of its viewer" },
    Tool { program: "zstd", origin: Debian("zstd"), why: "decompresses the browser's Zstandard members for NumPy" },
    Tool { program: "gzip", origin: Debian("gzip"), why: "the WebAssembly module's size after gzip -9" },
    Tool {
        program: "R",
        origin: Debian("r-base-core"),
        why: "builds and installs the npy R package (R CMD INSTALL --build), for its tests and the bench",
    },
    Tool {
        program: "Rscript",
        origin: Debian("r-base-core"),
        why: "runs the R package's tests, README's R program and the bench's npy-r/bench/bench.R",
    },
    Tool { program: "testthat", origin: RLibrary("r-cran-testthat"), why: "runs the R package's tests" },
    Tool {
        program: "bit64",
        origin: RLibrary("r-cran-bit64"),
        why: "integer64, which the R tests read 64-bit integers as",
    },
    Tool { program: "jsonlite", origin: RLibrary("r-cran-jsonlite"), why: "reads NumPy's values in the R tests" },
    Tool { program: "bash", origin: Debian("bash"), why: "runs the READMEs' commands as written" },
    Tool { program: "sh", origin: Debian("dash"), why: "npy-cli's tests of a FIFO's writer" },
    Tool { program: "timeout", origin: Debian("coreutils"), why: "bounds each npy run on a hostile file" },
    Tool { program: "du", origin: Debian("coreutils"), why: "CI's report of what target/ holds" },
    Tool { program: "df", origin: Debian("coreutils"), why: "CI's report of the free disk" },
    Tool { program: "id", origin: Debian("coreutils"), why: "tells whether apt-get can run (as root)" },
    Tool { program: "mkfifo", origin: Debian("coreutils"), why: "tests that a FIFO is refused, not waited on" },
    Tool { program: "sleep", origin: Debian("coreutils"), why: "the peak-memory tests' measure of a small process" },
    Tool { program: "prlimit", origin: Debian("util-linux"), why: "the hostile step's 2 GiB address-space limit" },
    Tool { program: "mount", origin: Debian("mount"), why: "the full-disk tests' tmpfs (as root)" },
    Tool { program: "umount", origin: Debian("mount"), why: "the full-disk tests' tmpfs, removed" },
    Tool { program: "apt-get", origin: Debian("apt"), why: "installs the Debian packages of this list" },
];

/// The tool named `program` (a program of [`TOOLS`]).
///
/// # Panics
/// If [`TOOLS`] does not list it: a caller names a tool by a constant of this list.
pub fn tool(program: &str) -> &'static Tool {
    TOOLS.iter().find(|t| t.program == program).unwrap_or_else(|| panic!("provision::TOOLS lists no {program}"))
}

/// Where `program` is on `PATH`, if it is there and executable.
pub fn find(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether apt-get can install here: run as root, with apt-get on `PATH`.
fn can_install() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    root && find("apt-get").is_some()
}

/// Makes sure every program of `tools` is on `PATH`: installs the Debian packages of the
/// missing ones with one `apt-get update` and one `apt-get install` (as root), then fails
/// naming each one still missing (or too old), with where it comes from and why it is
/// needed.
pub fn ensure(tools: &[&Tool]) -> Result<()> {
    let missing =
        |tools: &[&Tool]| -> Vec<Tool> { tools.iter().filter(|t| problem(t).is_some()).map(|t| **t).collect() };
    let first = missing(tools);
    let mut packages: Vec<&str> = first
        .iter()
        .filter_map(|t| match t.origin {
            Debian(package) if find(t.program).is_none() => Some(package),
            RLibrary(package) => Some(package),
            _ => None,
        })
        .collect();
    packages.sort_unstable();
    packages.dedup();
    let mut install_failed = None;
    if !packages.is_empty() && can_install() {
        install_failed = install(&packages).err();
    }
    for tool in &first {
        if let Crate(name) = tool.origin {
            project::step(&format!("cargo install --locked {name}"));
            if let Err(e) = project::run(project::cargo().args(["install", "--locked", name])) {
                install_failed = Some(e);
            }
        }
    }
    let left = missing(&first.iter().collect::<Vec<_>>());
    if left.is_empty() {
        return Ok(());
    }
    Err(report(&left, install_failed.as_deref()))
}

/// What is wrong with `tool` here: missing from `PATH`, or (Node.js) too old; an R
/// package R does not find.
fn problem(tool: &Tool) -> Option<String> {
    if let RLibrary(_) = tool.origin {
        let Some(rscript) = find("Rscript") else { return Some("R is not installed".into()) };
        let check = format!("quit(status = if (requireNamespace('{}', quietly = TRUE)) 0 else 1)", tool.program);
        let found = Command::new(rscript).args(["--vanilla", "-e", &check]).output().is_ok_and(|o| o.status.success());
        return (!found).then(|| "R does not find it".into());
    }
    let Some(path) = find(tool.program) else {
        return Some("not on PATH".into());
    };
    if tool.program == "node" {
        let out = Command::new(&path).arg("--version").output().ok()?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let major: Option<u32> =
            version.strip_prefix('v').and_then(|v| v.split('.').next()).and_then(|m| m.parse().ok());
        if major.is_none_or(|m| m < 20) {
            return Some(format!("{version} at {}, and the package needs 20 or later", path.display()));
        }
    }
    None
}

/// `apt-get update`, then one `apt-get install` of `packages`, without recommends.
fn install(packages: &[&str]) -> Result<()> {
    project::step("apt-get update");
    project::run(Command::new("apt-get").args(["update", "-q"]).env("DEBIAN_FRONTEND", "noninteractive"))?;
    project::step(&format!("apt-get install {}", packages.join(" ")));
    project::run(
        Command::new("apt-get")
            .args(["install", "-y", "-q", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// The error that names every tool of `left` and how to get it.
fn report(left: &[Tool], install_failed: Option<&str>) -> String {
    let mut text = format!("{} program(s) the steps need are missing:", left.len());
    let mut debian = Vec::new();
    for tool in left {
        let how = match tool.origin {
            Debian(package) => {
                debian.push(package);
                format!("Debian package {package}")
            }
            Rustup => "rustup (rust-toolchain.toml's toolchain)".to_string(),
            Crate(name) => format!("`cargo install --locked {name}`"),
            Prerequisite(what) => what.to_string(),
            RLibrary(package) => {
                debian.push(package);
                format!("Debian package {package} (an R package)")
            }
        };
        let what = problem(tool).unwrap_or_default();
        let _ = write!(text, "\n  {} ({what}): {how}; {}", tool.program, tool.why);
    }
    if !debian.is_empty() {
        debian.sort_unstable();
        debian.dedup();
        let _ = write!(text, "\ninstall them with `apt-get update && apt-get install -y {}` as root", debian.join(" "));
    }
    if let Some(e) = install_failed {
        let _ = write!(text, "\n(installing failed: {e})");
    }
    text
}

/// The target the JavaScript package's module is built for, which [`js`] adds.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The JavaScript package's directory, where [`js`] runs `npm ci`.
pub fn js_package_dir() -> PathBuf {
    project::root().join("npy-js")
}

/// The programs the JavaScript package's build needs ([`js`]); its checks need Chromium
/// and zstd too ([`JS_CHECKS`]).
pub const JS_BUILD: &[&str] = &["cargo", "rustc", "rustup", "clang", "node", "npm", "gzip"];

/// The programs the JavaScript package's checks need beside [`JS_BUILD`]'s.
pub const JS_CHECKS: &[&str] = &["chromium", "zstd", "python3"];

/// Everything CI's steps use, provisioned before the first long step: every program of
/// [`TOOLS`], then the tools built or fetched for the steps: the wasm target,
/// `wasm-bindgen-cli` and npy-js's npm packages ([`js`]), and the venv of
/// `xtask/requirements.txt` (returned: its Python).
pub fn ci() -> Result<PathBuf> {
    // The venv is made by a child (`xtask venv`, its output in a log) while apt-get and the
    // wasm tools run: its downloads and installs took a minute of a cold run.
    let log = project::target_dir().join("provision-venv.log");
    let venv = Venv::start(&log)?;
    // A missing program ends the step at once (the child killed as `venv` drops).
    ensure(&TOOLS.iter().collect::<Vec<_>>())?;
    js(&[])?;
    venv.wait()?;
    project::python_with_numpy()
}

/// `xtask venv` running as a child, its output in a log; killed if dropped unwaited.
struct Venv {
    child: Option<std::process::Child>,
    log: PathBuf,
}

impl Venv {
    fn start(log: &std::path::Path) -> Result<Venv> {
        let exe = env::current_exe().map_err(|e| format!("cannot find xtask's own program: {e}"))?;
        project::create_parent(log)?;
        let out = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
        project::step(&format!("xtask venv, beside the rest (its output: {})", log.display()));
        let child = Command::new(exe)
            .arg("venv")
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start xtask venv: {e}"))?;
        Ok(Venv { child: Some(child), log: log.to_path_buf() })
    }

    /// Waits for the venv; its log is the error when it failed.
    fn wait(mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let status = child.wait().map_err(|e| format!("waiting for xtask venv: {e}"))?;
        if status.success() {
            return Ok(());
        }
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!("making the venv failed ({status}); the end of {}:\n{}", self.log.display(), tail.join("\n")))
    }
}

impl Drop for Venv {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What the JavaScript package's build needs ([`JS_BUILD`]'s programs and `extra`), the
/// wasm target, `wasm-bindgen-cli` at the crate's version and npy-js's npm packages;
/// returns the `wasm-bindgen` program.
pub fn js(extra: &[&str]) -> Result<PathBuf> {
    let tools: Vec<&Tool> = JS_BUILD.iter().chain(extra).map(|p| tool(p)).collect();
    ensure(&tools)?;
    wasm_target()?;
    let bindgen = wasm_bindgen()?;
    npm_ci()?;
    Ok(bindgen)
}

/// Adds the wasm target to the toolchain when its standard library is missing.
fn wasm_target() -> Result<()> {
    let target = WASM_TARGET;
    let out = Command::new("rustc")
        .current_dir(project::root())
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let libdir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if out.status.success() && libdir.is_dir() {
        return Ok(());
    }
    project::step(&format!("rustup target add {target}"));
    project::run(Command::new("rustup").current_dir(project::root()).args(["target", "add", target]))
}

/// The version of the `wasm-bindgen` crate `Cargo.lock` pins.
fn bindgen_version() -> Result<String> {
    let lock = project::root().join("Cargo.lock");
    let text = std::fs::read_to_string(&lock).map_err(|e| format!("{}: {e}", lock.display()))?;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\"" {
            if let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                return Ok(version.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock pins no wasm-bindgen".into())
}

/// `wasm-bindgen` at the crate's version, in `target/tools/bin`: built by `cargo install`
/// the first time (prebuilt downloads are not used), without optimizations: it runs for
/// a second on one module, and its optimized build took twice as long.
fn wasm_bindgen() -> Result<PathBuf> {
    let version = bindgen_version()?;
    let root = project::target_dir().join("tools");
    let bin = root.join("bin").join("wasm-bindgen");
    let installed =
        Command::new(&bin).arg("--version").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if installed.is_some_and(|v| v.split_whitespace().nth(1) == Some(version.as_str())) {
        return Ok(bin);
    }
    project::step(&format!("cargo install wasm-bindgen-cli --version ={version} --debug --root {}", root.display()));
    project::run(
        project::cargo()
            .args(["install", "wasm-bindgen-cli", "--version", &format!("={version}"), "--debug", "--root"])
            .arg(&root),
    )?;
    Ok(bin)
}

/// `npm ci` in npy-js when its lock file changed since the last one (a stamp in
/// `node_modules` holds the lock file it installed).
fn npm_ci() -> Result<()> {
    let dir = js_package_dir();
    let lock = std::fs::read(dir.join("package-lock.json")).map_err(|e| format!("npy-js/package-lock.json: {e}"))?;
    let stamp = dir.join("node_modules").join(".npy-lock");
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        return Ok(());
    }
    project::step("npm ci (npy-js)");
    project::run(Command::new("npm").current_dir(&dir).args(["ci", "--no-audit", "--no-fund"]))?;
    std::fs::write(&stamp, lock).map_err(|e| format!("{}: {e}", stamp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_is_listed_once() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.program).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a program listed twice");
        assert!(TOOLS.iter().all(|t| !t.why.is_empty()));
    }

    #[test]
    fn a_missing_program_is_named_with_its_package_and_why() {
        let ghost = Tool { program: "npy-no-such-program", origin: Debian("npy-ghost"), why: "a test's ghost" };
        let text = report(&[ghost], Some("`apt-get update` failed"));
        assert!(text.starts_with("1 program(s) the steps need are missing:"), "{text}");
        assert!(text.contains("npy-no-such-program (not on PATH): Debian package npy-ghost; a test's ghost"), "{text}");
        assert!(text.contains("apt-get install -y npy-ghost"), "{text}");
        assert!(text.ends_with("(installing failed: `apt-get update` failed)"), "{text}");
    }

    #[test]
    fn programs_on_path_are_found() {
        assert!(find("sh").is_some());
        assert!(find("npy-no-such-program").is_none());
        assert!(problem(tool("sh")).is_none());
    }
}
