//! Project automation for the npy workspace, run as `cargo xtask <command>`.
//!
//! In the style of rust-analyzer's xtask: a plain binary with no argument parser,
//! which drives `cargo` (through `$CARGO`) and Python as child processes, so it
//! builds even while the library crates do not. Every stage prints a
//! `==> name` line; a failure ends the run with a non-zero exit status and a
//! message naming the stage that failed.
//!
//! Commands:
//! - `ci`: everything CI checks, in order (see [`ci`]).
//! - `tidy`: what review keeps catching, in every crate of the workspace: `unsafe` without
//!   its `SAFETY` comment, `todo!` and `dbg!` left in, files over the size cap, crates that
//!   should forbid unsafe code, import circles between modules, public functions that take
//!   options without a `_with` name (or not last) or have the name without the options
//!   (see [`tidy`]).
//! - `golden`: rewrite the NumPy-made fixtures in `tests/data` (see [`golden`]).
//! - `golden --check`: fail unless `tests/data` is exactly what NumPy writes.
//! - `bench [--only PART,...] [--records N] [--repeat K] ...`: npy's speed (plain files,
//!   records, archives, maps, Arrow and Parquet, SQL, a Ballista cluster, appends) next to the machine limit, NumPy, npyz and pyarrow, with the goal ratios
//!   (see [`bench`](mod@bench)).
//! - `fuzz [--seconds N] [--target NAME]`: run the cargo-fuzz targets of `fuzz/` (see
//!   [`fuzz`]).
//! - `miri`: npy-core's unit tests under Miri (see [`miri`]).
//! - `js [--test]`: build the JavaScript package `npy-js/` (its WebAssembly module and npm
//!   packages), installing the wasm target, clang and wasm-bindgen where missing, and with
//!   `--test` run its checks, with `--viewer` serve its viewer page (see [`js`]).
//! - `venv`: make (or check) the venv of `xtask/requirements.txt` at `target/numpy-venv`,
//!   the Python the main job and CI check files with (see [`project::python_with_numpy`]).
//!
//! To add a command, add a module and one arm to the `match` in [`main`].

#![forbid(unsafe_code)]

mod bench;
mod ci;
mod claims;
mod cluster;
mod docs;
mod fuzz;
mod golden;
mod js;
mod launched;
mod layers;
mod lex;
mod miri;
mod moto;
mod project;
mod provision;
mod r;
mod tidy;

use std::process::ExitCode;

/// Printed for `help` and for unknown arguments.
const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci                fmt, tidy, clippy, tests, NumPy loads the tests' npz archives, examples,
                    golden --check, NumPy round trip
  tidy              in every crate of the workspace: every unsafe has its SAFETY comment
                    (or # Safety doc), no todo!/dbg!/unimplemented!, no src file over 1100
                    lines of non-test code, crates without unsafe code forbid it, no
                    import circles between modules, no module imports the crate root, a
                    pub fn takes options (...Options, Compression) exactly when named
                    ..._with, and takes them last
  golden            write the NumPy fixtures into tests/data
  golden --check    fail unless tests/data is exactly what NumPy writes
  bench [--only f8|records|npz|deflate|mmap|arrow|sql|cluster|append|header|training|python|js|r]
        [--bytes N] [--records N] [--elements N] [--traces N] [--map-bytes N] [--batches N]
        [--fields N] [--repeat K]
                    time npy reading and writing a 1 GiB <f8 file (--bytes), 4,000,000
                    Trace records (--records), 8 arrays of 4,000,000 f64 as npz and .npy
                    (--elements), one deflated member of each of 9 kinds, for time and
                    size (--traces), maps of a 4 GiB <f8 file (--map-bytes), and the Trace
                    records as Arrow batches, Parquet and SQL tables (also on a Ballista
                    cluster of processes), the npy Python package (python) and the npy
                    JavaScript package against npyjs and fflate in Node, with its module's
                    size (js), the npy R package against readBin, fread and reticulate (r),
                    best of K (default 3), next to the machine
                    limit, NumPy, npyz and pyarrow, and print the goal ratios (report in
                    target/bench/report.txt)
  fuzz [--seconds N] [--target NAME] [--sanitizer address|none]
                    run each cargo-fuzz target (header, npy_dynamic, npz, record; or NAME)
                    for N seconds (default 60), seeded from the fixtures; fails on a crash
                    (needs `cargo install cargo-fuzz --locked`)
  miri              npy-core's unit tests under Miri, for the unsafe code they reach
                    (needs nightly with miri and rust-src)
  js                build the JavaScript package npy-js/: its WebAssembly module (installing
                    the wasm32 target, clang and wasm-bindgen-cli where missing) and its
                    npm dev dependencies; prints the module's size after gzip
  js --test         build it and run its checks: clippy for wasm, the module's size, tsc,
                    the Node tests against NumPy and the Rust suite's hostile files, the
                    browser test in Chromium, README.md's JavaScript as written
  js --viewer [--port N] [--files DIR]
                    build it and serve the viewer page (npy-js/viewer/) on 127.0.0.1 (port
                    8000), with DIR's files at /files/, until stopped
  r                 build the R package npy-r/ (R CMD INSTALL --build) and run its checks:
                    the testthat suites against NumPy's values, what R wrote loaded by
                    NumPy, the binary package installed without Rust and README.md's R
                    program (needs the main job's file and the hostile step's files)
  venv              make target/numpy-venv with the packages xtask/requirements.txt pins
                    (NumPy for the main job's check; ci makes it too)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["ci"] => ci::run(),
        ["tidy"] => tidy::run(),
        ["golden"] => golden::run(golden::Mode::Write),
        ["golden", "--check"] => golden::run(golden::Mode::Check),
        ["bench", rest @ ..] => bench::run(rest),
        ["fuzz", rest @ ..] => fuzz::run(rest),
        ["r"] => project::python_with_numpy().and_then(|python| r::ci(&python)),
        ["miri", rest @ ..] => miri::run(rest),
        ["js"] => js::build().map(drop),
        ["js", "--test"] => project::python_with_numpy().and_then(|python| js::check(&python, None)),
        ["js", "--viewer", rest @ ..] => js::build().and_then(|_| js::viewer(rest)),
        ["venv"] => project::python_with_numpy().map(|python| println!("NPY_PYTHON={}", python.display())),
        ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
