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
//!    readers the bench compares), when `package-lock.json` changed since the last one;
//! 7. the viewer's service worker's list of the files it keeps (`npy-js/viewer/sw.js`, see
//!    [`write_service_worker`]), rewritten from the files there are when they changed.
//!
//! `cargo xtask js --test` then checks it (see [`check`]): the service worker's list as
//! the build writes it, the build for wasm with no warnings, the module's size, the TypeScript declarations, the Node tests (against NumPy,
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
    if write_service_worker(&package_dir())? {
        println!("npy-js: viewer/sw.js's list of files rewritten (commit it)");
    }
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
    // Before the build, which would rewrite it: the committed list is the one it writes.
    project::step("npy-js/viewer/sw.js lists the files the viewer loads");
    check_service_worker(&package_dir())?;
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

/// The service worker of the viewer, which keeps the files it lists for the page to open
/// offline; under the package's directory.
const SERVICE_WORKER: &str = "viewer/sw.js";

/// The lines around the service worker's list, which [`write_service_worker`] writes.
const LIST_BEGIN: &str = "// BEGIN the files kept: written by `cargo xtask js` (xtask/src/js.rs), not by hand.";
const LIST_END: &str = "// END the files kept.";

/// What the viewer's page loads, relative to the viewer's directory, as the service worker
/// keeps it: the page (`./`), the viewer's HTML, CSS, modules and data (`.html`, `.css`,
/// `.js`, `.json`; not the worker itself), the package's modules but its Node entry
/// (`../js/*.js` but `node.js`), and the WebAssembly module the build writes with its
/// bindings (`../wasm/npy_js.js`, `../wasm/npy_js_bg.wasm`). Sorted in each directory.
pub fn kept_files(package: &Path) -> Result<Vec<String>> {
    let listed = |dir: &str, keep: &dyn Fn(&str) -> bool| -> Result<Vec<String>> {
        let path = package.join(dir);
        let entries = fs::read_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_file() && keep(&name) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    };
    let page = |name: &str| {
        let extension = Path::new(name).extension().and_then(|e| e.to_str()).unwrap_or("");
        ["html", "css", "js", "json"].contains(&extension)
            && Some(name) != Path::new(SERVICE_WORKER).file_name().and_then(|n| n.to_str())
    };
    let package_module = |name: &str| name.ends_with(".js") && name != "node.js";
    let mut files = vec!["./".to_string()];
    files.extend(listed("viewer", &page)?);
    files.extend(listed("js", &package_module)?.into_iter().map(|name| format!("../js/{name}")));
    files.extend(["../wasm/npy_js.js".to_string(), "../wasm/npy_js_bg.wasm".to_string()]);
    Ok(files)
}

/// The service worker's list as written: its cache's version (`npy-viewer-vN`) and files.
#[derive(Debug, PartialEq, Eq)]
struct Listed {
    version: u32,
    files: Vec<String>,
    /// The text before and after the list's lines.
    before: String,
    after: String,
}

/// Reads the list from the service worker's text (`name`, for errors).
fn read_list(text: &str, name: &str) -> Result<Listed> {
    let (before, rest) =
        text.split_once(&format!("{LIST_BEGIN}\n")).ok_or(format!("{name}: no line `{LIST_BEGIN}`"))?;
    let (list, after) = rest.split_once(&format!("{LIST_END}\n")).ok_or(format!("{name}: no line `{LIST_END}`"))?;
    let mut version = None;
    let mut files = Vec::new();
    for line in list.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("const CACHE = \"npy-viewer-v").and_then(|v| v.strip_suffix("\";")) {
            version = Some(v.parse::<u32>().map_err(|e| format!("{name}: the cache's version `{v}`: {e}"))?);
        } else if let Some(file) = line.strip_prefix('"').and_then(|f| f.strip_suffix("\",")) {
            files.push(file.to_string());
        } else if !matches!(line, "const FILES = [" | "];") {
            return Err(format!("{name}: unexpected line in the list: `{line}`"));
        }
    }
    let version = version.ok_or(format!("{name}: no `const CACHE = \"npy-viewer-vN\";` in the list"))?;
    Ok(Listed { version, files, before: before.to_string(), after: after.to_string() })
}

/// The service worker's text with its list as `listed` says.
fn write_list(listed: &Listed) -> String {
    let mut out =
        format!("{}{LIST_BEGIN}\nconst CACHE = \"npy-viewer-v{}\";\nconst FILES = [\n", listed.before, listed.version);
    for file in &listed.files {
        out.push_str(&format!("  \"{file}\",\n"));
    }
    out.push_str(&format!("];\n{LIST_END}\n{}", listed.after));
    out
}

/// Rewrites the service worker's list (`package`'s `viewer/sw.js`) when it is not
/// [`kept_files`], its cache's version one up, so that browsers drop the old cache; returns
/// whether it did.
pub fn write_service_worker(package: &Path) -> Result<bool> {
    let path = package.join(SERVICE_WORKER);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut listed = read_list(&text, &path.display().to_string())?;
    let files = kept_files(package)?;
    if listed.files == files {
        return Ok(false);
    }
    listed.files = files;
    listed.version += 1;
    fs::write(&path, write_list(&listed)).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(true)
}

/// Fails unless the service worker's list (`package`'s `viewer/sw.js`) is [`kept_files`],
/// naming the files missing from it and those it lists that are not there.
pub fn check_service_worker(package: &Path) -> Result<()> {
    let path = package.join(SERVICE_WORKER);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let listed = read_list(&text, &path.display().to_string())?;
    let files = kept_files(package)?;
    if listed.files == files {
        return Ok(());
    }
    let missing: Vec<&str> = files.iter().filter(|f| !listed.files.contains(f)).map(String::as_str).collect();
    let extra: Vec<&str> = listed.files.iter().filter(|f| !files.contains(f)).map(String::as_str).collect();
    Err(format!(
        "{}'s list of files is not the one `cargo xtask js` writes (missing: {}; not there: {}; else the order): run `cargo xtask js` and commit it",
        path.display(),
        if missing.is_empty() { "none".to_string() } else { missing.join(", ") },
        if extra.is_empty() { "none".to_string() } else { extra.join(", ") },
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A package directory under the system's temporary directory: a viewer and a package
    /// of a few files each, and a service worker listing `listed` at version 7.
    fn package(name: &str, listed: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-js-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for sub in ["viewer", "js"] {
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        for file in ["index.html", "viewer.css", "viewer.js", "rows.js", "colormaps.json", "serve.mjs", "shot.png"] {
            fs::write(dir.join("viewer").join(file), "").unwrap();
        }
        for file in ["index.js", "node.js", "api.js"] {
            fs::write(dir.join("js").join(file), "").unwrap();
        }
        let listed = Listed {
            version: 7,
            files: listed.iter().map(|f| f.to_string()).collect(),
            before: "// The worker.\n".into(),
            after: "const ASSETS = FILES;\n".into(),
        };
        fs::write(dir.join(SERVICE_WORKER), write_list(&listed)).unwrap();
        dir
    }

    const ALL: &[&str] = &[
        "./",
        "colormaps.json",
        "index.html",
        "rows.js",
        "viewer.css",
        "viewer.js",
        "../js/api.js",
        "../js/index.js",
        "../wasm/npy_js.js",
        "../wasm/npy_js_bg.wasm",
    ];

    #[test]
    fn the_list_is_the_page_s_files() {
        let dir = package("all", ALL);
        assert_eq!(kept_files(&dir).unwrap(), ALL);
        check_service_worker(&dir).unwrap();
        assert!(!write_service_worker(&dir).unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_module_missing_from_the_list_fails_the_check_until_the_build_writes_it() {
        let omitted: Vec<&str> = ALL.iter().copied().filter(|f| *f != "rows.js").collect();
        let dir = package("omitted", &omitted);
        let error = check_service_worker(&dir).unwrap_err();
        assert!(error.contains("missing: rows.js; not there: none"), "{error}");
        assert!(write_service_worker(&dir).unwrap());
        check_service_worker(&dir).unwrap();
        let text = fs::read_to_string(dir.join(SERVICE_WORKER)).unwrap();
        let listed = read_list(&text, "sw.js").unwrap();
        assert_eq!((listed.version, listed.files.len()), (8, ALL.len()));
        assert!(text.starts_with("// The worker.\n") && text.ends_with("const ASSETS = FILES;\n"), "{text}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_committed_list_is_the_one_the_build_writes() {
        check_service_worker(&package_dir()).unwrap();
    }

    #[test]
    fn a_list_naming_a_file_not_there_fails_the_check() {
        let mut listed = ALL.to_vec();
        listed.push("../js/gone.js");
        let dir = package("extra", &listed);
        let error = check_service_worker(&dir).unwrap_err();
        assert!(error.contains("missing: none; not there: ../js/gone.js"), "{error}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
