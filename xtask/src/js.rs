//! `cargo xtask js`: builds the JavaScript package `npy-js/` from a fresh clone, installing
//! what it needs as it goes, and prints the size of its WebAssembly module.
//!
//! 1. the `wasm32-unknown-unknown` target (`rustup target add`, when missing);
//! 2. Debian's `clang` for libzstd's C (`apt-get install clang` when run as root, else the
//!    command to run is the error);
//! 3. `wasm-bindgen-cli` at exactly the version of the `wasm-bindgen` crate in `Cargo.lock`,
//!    installed with `cargo install` into `target/tools` (once; not `--locked`: its lock
//!    file names a `webpki-roots` the registry no longer serves);
//! 4. `cargo build -p npy-js --target wasm32-unknown-unknown --profile wasm`;
//! 5. `wasm-bindgen --target web` into `npy-js/wasm/`, one module that serves Node and
//!    browsers (the package's two entry points instantiate it each their way), with
//!    `--experimental-reset-state-function`, which the package calls to replace an
//!    instance after a panic;
//! 6. `npm ci` in `npy-js/` (its dev dependencies: puppeteer-core, TypeScript and the
//!    readers the bench compares), when `package-lock.json` changed since the last one.
//!
//! `cargo xtask js --test` then checks it (see [`check`]): the build for wasm with no
//! warnings, the module's size, the TypeScript declarations, the Node tests (against NumPy,
//! whose venv it makes, and the Rust suite's hostile files, which it writes, each judged by
//! `npy check --strict` of the `npy` it builds), the browser
//! tests of the package and of the viewer page in Debian's Chromium (installed as root
//! where missing), and the README's JavaScript as written.
//!
//! `cargo xtask js --viewer` builds it and serves the viewer page (`npy-js/viewer/`) on
//! 127.0.0.1.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::project::{self, Result};
use crate::provision::{self, WASM_TARGET};

/// The package's directory.
pub fn package_dir() -> PathBuf {
    provision::js_package_dir()
}

/// The module `wasm-bindgen` writes, which the package loads.
pub fn module_path() -> PathBuf {
    package_dir().join("wasm").join("npy_js_bg.wasm")
}

/// Builds the package (see the module); returns the module's size after gzip.
pub fn build() -> Result<u64> {
    let bindgen = provision::js(&[])?;
    project::step(&format!("cargo build -p npy-js --target {WASM_TARGET} --profile wasm"));
    project::run(project::cargo().args(["build", "-p", "npy-js", "--target", WASM_TARGET, "--profile", "wasm"]))?;
    let built = project::target_dir().join(WASM_TARGET).join("wasm").join("npy_js.wasm");
    let out = package_dir().join("wasm");
    project::step(&format!("wasm-bindgen --target web {}", built.display()));
    project::fresh_dir(&out)?;
    project::run(
        Command::new(&bindgen)
            .args(["--target", "web", "--experimental-reset-state-function", "--remove-name-section", "--out-dir"])
            .arg(&out)
            .arg(&built),
    )?;
    let size = gzipped_size(&module_path())?;
    let raw = fs::metadata(module_path()).map_err(|e| format!("{}: {e}", module_path().display()))?.len();
    println!("npy-js: {} ({raw} bytes, {size} after gzip -9)", module_path().display());
    Ok(size)
}

/// The most bytes the module may take after gzip (400 KB): the bench's goal, checked here
/// too, since a size (unlike a time) is the same on every run.
pub const MAX_GZIPPED: u64 = 400_000;

/// The package's checks, after [`build`]; `python` has NumPy. The hostile files are the
/// Rust suite's (`target/hostile`), and the `npy` whose `check --strict` judges them for
/// the tests (`NPY_CLI`): CI's, which its test step built and whose hostile step wrote the
/// files, when `ci_npy` names it; else both made here first (`cargo build -p npy-cli`,
/// the tool's default features, and the hostile tests).
pub fn check(python: &Path, ci_npy: Option<&Path>) -> Result<()> {
    // Everything first: clang before the wasm clippy, which builds libzstd's C.
    provision::js(provision::JS_CHECKS)?;
    project::step(&format!("cargo clippy -p npy-core -p npy-js --target {WASM_TARGET} --all-features -- -D warnings"));
    project::run(project::cargo().args([
        "clippy",
        "-p",
        "npy-core",
        "-p",
        "npy-js",
        "--target",
        WASM_TARGET,
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    let size = build()?;
    if size > MAX_GZIPPED {
        return Err(format!("the module takes {size} bytes after gzip, over the {MAX_GZIPPED} allowed"));
    }
    let dir = package_dir();
    project::step("tsc -p npy-js (index.d.ts against the JSDoc by index.check.ts, the examples, the JavaScript)");
    project::run(Command::new("node").current_dir(&dir).args(["node_modules/typescript/bin/tsc", "-p", "."]))?;
    let npy = match ci_npy {
        Some(npy) => npy.to_path_buf(),
        None => {
            project::step("cargo test --test hostile --test hostile_npz (the hostile files)");
            project::run(project::cargo().args(["test", "--test", "hostile", "--test", "hostile_npz"]))?;
            project::step("cargo build -p npy-cli (the `npy check --strict` the hostile test compares with)");
            project::run(project::cargo().args(["build", "-p", "npy-cli"]))?;
            project::target_dir().join("debug").join(format!("npy{}", std::env::consts::EXE_SUFFIX))
        }
    };
    // The viewer's test and README.md's JavaScript read the main job's file.
    ensure_traces()?;
    // package.json's `test` script, the one place that names the files and the timeout:
    // `node --test --test-timeout=60000 tests/*.test.js` (files named by the shell's glob,
    // as every Node from 20 on takes them; 60 s a test at most).
    project::step("npm test (npy-js)");
    project::run(Command::new("npm").current_dir(&dir).args(["test"]).env("NPY_PYTHON", python).env("NPY_CLI", &npy))?;
    readme()
}

/// README.md's JavaScript, run as written: its first program in a project where `npm
/// install <checkout>/npy-js` put the package, from the checkout's root (it reads the
/// main job's file); and its commands, the build's and the viewer's, as `xtask` takes them.
fn readme() -> Result<()> {
    // The README's two commands are what CI runs: this check and the build it starts.
    let commands = crate::docs::block("README.md", "sh", "the JavaScript commands", |b| b.contains("cargo xtask js"))?;
    if crate::docs::commands(&commands) != ["cargo xtask js", "cargo xtask js --test"] {
        return Err(format!(
            "README.md's JavaScript commands are not `cargo xtask js` and `cargo xtask js --test`:\n{commands}"
        ));
    }
    // The viewer's one command (tests/serve.test.js runs the server it starts).
    let viewer = crate::docs::block("README.md", "sh", "the viewer's command", |b| b.contains("--viewer"))?;
    if crate::docs::commands(&viewer) != ["cargo xtask js --viewer"] {
        return Err(format!("README.md's viewer command is not `cargo xtask js --viewer`:\n{viewer}"));
    }
    let program = crate::docs::block("README.md", "js", "a first JavaScript program", |b| b.contains("from \"npy\""))?;
    let project_dir = project::target_dir().join("js-readme");
    project::fresh_dir(&project_dir)?;
    project::step("npm install <checkout>/npy-js (in target/js-readme)");
    project::run(
        Command::new("npm")
            .current_dir(&project_dir)
            .args(["install", "--no-audit", "--no-fund", "--no-save"])
            .arg(package_dir()),
    )?;
    let path = project_dir.join("first.mjs");
    fs::write(&path, program).map_err(|e| format!("{}: {e}", path.display()))?;
    project::step("node first.mjs (README.md's JavaScript, from the checkout's root)");
    project::run(Command::new("node").current_dir(project::root()).arg(&path))
}

/// Runs the main job when its file (`target/seismic/traces.npy`) is missing.
fn ensure_traces() -> Result<()> {
    if project::target_dir().join("seismic").join("traces.npy").exists() {
        return Ok(());
    }
    project::step("cargo run --release --example seismic (the file the viewer's test and README.md's JavaScript read)");
    project::run(
        project::cargo().args(["run", "--release", "-p", "npy-seismic", "--example", "seismic"]).env("NPY_CI", "1"),
    )
}

/// Serves the viewer page (`npy-js/viewer/serve.mjs`) until stopped: `args` are its
/// `--port N` and `--files DIR`.
pub fn viewer(args: &[&str]) -> Result<()> {
    project::step("node npy-js/viewer/serve.mjs (stop it with Ctrl-C)");
    project::run(Command::new("node").arg(package_dir().join("viewer").join("serve.mjs")).args(args))
}

/// The bytes of `path` after `gzip -9`: what a server sends the module as.
pub fn gzipped_size(path: &Path) -> Result<u64> {
    let out =
        Command::new("gzip").args(["-9", "-c"]).arg(path).output().map_err(|e| format!("cannot run gzip: {e}"))?;
    if !out.status.success() {
        return Err(format!("gzip -9 {} failed", path.display()));
    }
    Ok(out.stdout.len() as u64)
}
