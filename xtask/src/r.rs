//! R: the npy R package (`npy-r/`, its Rust glue a member of the workspace), installed into a
//! library of the xtask's own, and the `Rscript` that runs R programs against it. The steps
//! that use R start it through here ([`install_r_package`], [`rscript`]); `R` and `Rscript`
//! are Debian's `r-base-core` ([`crate::provision::TOOLS`]), provisioned by [`library`].
//!
//! CI's R step ([`ci`]) builds the binary package, runs its tests against NumPy and
//! README.md's R program in a fresh library without Rust; the bench's `r` part uses the
//! same install (`npy-r/bench/bench.R`, see [`crate::bench`]).
//!
//! `NPY_R_LIBRARY`, when set, names a library where the package is installed already: it
//! is used as is, nothing is built or installed (a package an engineer just installed while
//! editing `npy-r/`, or one CI built once for several steps).

use std::collections::BTreeSet;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::project::{self, Result};
use crate::provision;

/// The programs the steps that use R start, and the R packages its tests load.
pub const PROGRAMS: &[&str] = &["R", "Rscript"];

/// The R packages the tests load (Debian's `r-cran-*`, see [`crate::provision::TOOLS`]).
pub const TEST_LIBRARIES: &[&str] = &["testthat", "bit64", "jsonlite"];

/// Longest the R tests may run (a cold run took about a minute): a hang fails the step.
const TEST_TIMEOUT: &str = "900";

/// The package's directory.
pub fn package_dir() -> PathBuf {
    project::root().join("npy-r")
}

/// `R CMD INSTALL --no-test-load --library=<lib> npy-r`, run from the repository's root:
/// builds the package's Rust glue with cargo into the workspace's target directory (cargo
/// rebuilds only what changed; see `npy-r/src/Makevars`) and installs the package into
/// `lib`, created first when missing.
pub fn install_r_package(lib: &Path) -> Result<()> {
    std::fs::create_dir_all(lib).map_err(|e| format!("cannot create {}: {e}", lib.display()))?;
    let mut install = Command::new("R");
    install.args(["CMD", "INSTALL", "--no-test-load"]).arg(format!("--library={}", lib.display())).arg("npy-r");
    project::step(&project::show(&install));
    project::run(install.current_dir(project::root()))
}

/// A library with the package installed: `$NPY_R_LIBRARY` as is when set (it must hold
/// the package), else `<target>/r-library`, where [`install_r_package`] installs it. `R` and
/// `Rscript` are provisioned first.
pub fn library() -> Result<PathBuf> {
    let tools: Vec<&provision::Tool> = PROGRAMS.iter().map(|p| provision::tool(p)).collect();
    provision::ensure(&tools)?;
    if let Some(lib) = env::var_os("NPY_R_LIBRARY") {
        let lib = project::root().join(lib);
        if !lib.join("npy").join("DESCRIPTION").is_file() {
            return Err(format!("NPY_R_LIBRARY is {}, which holds no installed npy package", lib.display()));
        }
        println!("using the npy R package installed in {} (NPY_R_LIBRARY)", lib.display());
        return Ok(lib);
    }
    let lib = project::target_dir().join("r-library");
    install_r_package(&lib)?;
    Ok(lib)
}

/// `Rscript --vanilla` (no site or user profile, no saved workspace) with `R_LIBS` naming
/// `lib` first, so `library(npy)` loads the package installed there; the caller adds the
/// program and its arguments.
pub fn rscript(lib: &Path) -> Command {
    let mut cmd = Command::new("Rscript");
    cmd.arg("--vanilla").env("R_LIBS", lib).current_dir(project::root());
    cmd
}

/// CI's R step:
/// 1. `R CMD INSTALL --build npy-r` into `<target>/r/lib`: the package, and its binary
///    package (a `.tar.gz` in `<target>/r`, its size printed);
/// 2. `npy-r/tests/numpy_expect.py`: NumPy's values of the shared corpus and of the main
///    job's traces (the examples step wrote them), and object arrays NumPy pickles;
/// 3. the testthat suites (`npy-r/tests/testthat`, at most 15 minutes, under `timeout`),
///    which read all of that, the hostile files of the hostile step, and write files for
///    NumPy;
/// 4. NumPy checks what R wrote: `check_roundtrip.py --strict` on the corpus written back
///    must fail exactly the files `npy-r/tests/not-holdable.txt` names, and
///    `npy-r/tests/check_written.py` the rest;
/// 5. the binary package installed into a fresh library by R alone, with `PATH` holding
///    neither cargo nor rustc, and README.md's R program run there as written.
pub fn ci(python: &Path) -> Result<()> {
    let tools: Vec<&provision::Tool> = PROGRAMS.iter().chain(TEST_LIBRARIES).map(|p| provision::tool(p)).collect();
    provision::ensure(&tools)?;
    let dir = project::target_dir().join("r");
    let lib = dir.join("lib");
    for stale in [&lib, &dir.join("out"), &dir.join("fresh")] {
        if stale.exists() {
            fs::remove_dir_all(stale).map_err(|e| format!("cannot empty {}: {e}", stale.display()))?;
        }
    }
    fs::create_dir_all(&lib).map_err(|e| format!("cannot create {}: {e}", lib.display()))?;
    let binary = build(&dir, &lib)?;

    let corpus = project::root().join("..").join("shared").join("corpus").join("public");
    let traces = project::target_dir().join("seismic").join("traces.npy");
    let hostile = project::target_dir().join("hostile");
    for (what, path) in
        [("the NumPy corpus", &corpus), ("the main job's traces", &traces), ("the hostile files", &hostile)]
    {
        if !path.exists() {
            return Err(format!("{what} ({}) is missing: an earlier step makes it", path.display()));
        }
    }
    let expected = dir.join("expected.json");
    let tests = package_dir().join("tests");
    project::step("ruff check, ruff format --check (npy-r's Python: tests and bench)");
    for args in [&["check", "--no-cache"][..], &["format", "--check", "--no-cache"]] {
        project::run(
            Command::new(python).args(["-m", "ruff"]).args(args).args(["tests", "bench"]).current_dir(package_dir()),
        )?;
    }
    project::step("NumPy's values for the R tests (npy-r/tests/numpy_expect.py)");
    project::run(
        Command::new(python)
            .arg(tests.join("numpy_expect.py"))
            .args([&expected, &corpus, &traces])
            .arg(dir.join("objects")),
    )?;

    let out = dir.join("out");
    project::step("the R package's tests (testthat)");
    // Under a 4 GiB address-space limit, as the hostile step runs the Rust suite's: a
    // header that made R allocate without bound fails the step, not the machine.
    let mut test = Command::new("timeout");
    test.args(["--kill-after=10", TEST_TIMEOUT, "prlimit", "--as=4294967296", "Rscript", "--vanilla", "-e"])
        .arg(
            // A skip is a claim these tests do not make: any skip (testthat counts an
            // empty test as one) fails the step.
            "r <- as.data.frame(testthat::test_dir('npy-r/tests/testthat', package = 'npy', \
             load_package = 'installed', reporter = 'summary', stop_on_failure = TRUE, \
             stop_on_warning = TRUE)); \
             if (sum(r$skipped) > 0) { print(r[r$skipped, c('file', 'test')]); quit(status = 1) }",
        )
        .env("R_LIBS", &lib)
        .env("NPY_CORPUS", &corpus)
        .env("NPY_R_EXPECTED", &expected)
        .env("NPY_TRACES", &traces)
        .env("NPY_HOSTILE", &hostile)
        .env("NPY_R_OUT", &out)
        .current_dir(project::root());
    project::run(&mut test)?;

    project::step("NumPy reads what R wrote");
    roundtrip(python, &corpus, &out.join("corpus"))?;
    project::run(
        Command::new(python).arg(tests.join("check_written.py")).arg(out.join("written")).current_dir(&tests),
    )?;

    fresh(&dir, &binary)
}

/// `R CMD INSTALL --build`: installs the package into `lib` and leaves its binary package
/// in `dir`; returns the binary package.
fn build(dir: &Path, lib: &Path) -> Result<PathBuf> {
    let mut install = Command::new("R");
    install.args(["CMD", "INSTALL", "--build"]).arg(format!("--library={}", lib.display())).arg(package_dir());
    project::step(&project::show(&install));
    project::run(install.current_dir(dir))?;
    let built = fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("npy_") && n.to_string_lossy().ends_with(".tar.gz"))
        })
        .ok_or_else(|| format!("R CMD INSTALL --build left no binary package in {}", dir.display()))?;
    let size = fs::metadata(&built).map(|m| m.len()).unwrap_or(0);
    println!("binary package {}: {:.1} MB", built.display(), size as f64 / 1e6);
    Ok(built)
}

/// `check_roundtrip.py --strict` on the corpus as R wrote it back: the files it fails must
/// be exactly those `npy-r/tests/not-holdable.txt` names.
fn roundtrip(python: &Path, corpus: &Path, written: &Path) -> Result<()> {
    let checker = project::root().join("..").join("shared").join("tools").join("check_roundtrip.py");
    let out = Command::new(python)
        .arg(&checker)
        .args([corpus, written])
        .arg("--strict")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", checker.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let failed: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .map(|l| l.split(':').next().unwrap_or(l).to_string())
        .collect();
    let list = fs::read_to_string(package_dir().join("tests").join("not-holdable.txt"))
        .map_err(|e| format!("cannot read npy-r/tests/not-holdable.txt: {e}"))?;
    let expected: BTreeSet<String> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split(':').next().unwrap_or(l).trim().to_string())
        .collect();
    println!("{}", text.lines().last().unwrap_or(""));
    if failed != expected {
        let unexpected: Vec<&String> = failed.difference(&expected).collect();
        let passing: Vec<&String> = expected.difference(&failed).collect();
        return Err(format!(
            "check_roundtrip.py --strict on what R wrote: failed but not in not-holdable.txt: {unexpected:?}; \
             in not-holdable.txt but passed (remove them): {passing:?}\n{text}"
        ));
    }
    Ok(())
}

/// The binary package installed into a fresh library by R alone (`PATH` without cargo or
/// rustc), and README.md's R program run there as written, from the checkout's root.
fn fresh(dir: &Path, binary: &Path) -> Result<()> {
    let lib = dir.join("fresh");
    fs::create_dir_all(&lib).map_err(|e| format!("cannot create {}: {e}", lib.display()))?;
    let path = without(&["cargo", "rustc"])?;
    let mut install = Command::new("R");
    install.args(["CMD", "INSTALL"]).arg(format!("--library={}", lib.display())).arg(binary).env("PATH", &path);
    project::step(&format!("{} (cargo and rustc off PATH)", project::show(&install)));
    project::run(&mut install)?;
    let program = crate::docs::block("README.md", "r", "the R program", |b| b.contains("library(npy)"))?;
    let script = dir.join("readme.R");
    fs::write(&script, &program).map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    project::step("README.md's R program, in the fresh library");
    let mut run = Command::new("timeout");
    run.args(["120", "Rscript", "--vanilla"])
        .arg(&script)
        .env("R_LIBS", &lib)
        .env("PATH", &path)
        .current_dir(project::root());
    project::run(&mut run)
}

/// `PATH` with no directory that holds any of `programs`: a fresh machine's, for R alone.
fn without(programs: &[&str]) -> Result<std::ffi::OsString> {
    let path = env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = env::split_paths(&path).filter(|d| !programs.iter().any(|p| d.join(p).exists())).collect();
    env::join_paths(dirs).map_err(|e| format!("cannot make PATH: {e}"))
}
