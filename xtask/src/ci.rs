//! `cargo xtask ci`: everything CI checks, in order, stopping at the first
//! failing step. After each step it prints `step N/M name: 12.3 s`, and at the end (also
//! after a failure, which it names) a table of every step's time and the total wall time.
//!
//! 1. provision the machine ([`crate::provision::ci`]): every program the steps run, found
//!    on `PATH` or installed with apt-get (one `apt-get update` first), else each missing
//!    one named; the wasm target, `wasm-bindgen-cli`, npy-js's npm packages, the venv
//! 2. `cargo fmt --all -- --check`
//! 3. `tidy` (see [`crate::tidy`]), over every crate: `SAFETY` comments, no
//!    `todo!`/`dbg!`, file sizes, `forbid(unsafe_code)`, no import circles between a crate's
//!    modules, every program a step runs provisioned; seconds, so it runs before the long
//!    steps
//! 4. `cargo clippy --workspace --all-targets --all-features -- -D warnings`
//! 5. `cargo doc --workspace --no-deps --all-features --lib --bins --examples` with
//!    `RUSTDOCFLAGS=-D warnings`: every doc link resolves (`--examples` has cargo resolve
//!    features with the dev-dependencies, as steps 4 and 6 do, so step 4's checks serve it)
//! 6. `cargo nextest run --workspace --all-features` (after emptying the directories the
//!    NumPy checks read), each test in its own process, two at a time, within the timeout of
//!    `.config/nextest.toml`; then `cargo test --workspace --all-features --doc`. The
//!    feature set of steps 4 and 5, so their dependency builds serve it too; its debug
//!    build of `npy` (every feature) is the one every later step runs
//! 7. S3 with moto: `moto_server` (from the venv of `xtask/requirements.txt`) on a free
//!    port of 127.0.0.1, a bucket, the `AWS_*` variables, then the ignored tests named
//!    `s3` (`cargo nextest run ... --run-ignored only -E 'test(/s3/)'`): the same SQL over
//!    the bucket as over local files, same answers (also on a cluster of npy's Ballista
//!    processes), and a header plus 10 rows in at most 2 requests; the server is killed
//!    when the step ends, on every path
//! 8. hostile inputs: the hostile test binary under a 2 GiB address-space limit, then
//!    `npy info` and `npy copy` on every file in `target/hostile` (exit 0 or 1, 40 s each),
//!    `npy check --strict` on each (exit 1, but on the files of [`CHECK_VALID`]: 0), and
//!    `npy check` on the NumPy corpus (`../shared/corpus/public`: exit 0)
//! 9. the JavaScript package (see [`crate::js::check`]): npy-core and npy-js checked for
//!    `wasm32-unknown-unknown` by clippy, the package built by `cargo xtask js` (its module
//!    at most 400 KB after gzip), `tsc` on its declarations, an example and its JavaScript,
//!    `node --test` of `npy-js/tests/*.test.js` (NumPy's corpus and object fixtures with
//!    NumPy's values, writes checked by NumPy, ranged reads, the hostile files of step 8
//!    each loaded or refused as the test step's `npy check --strict` judges it,
//!    and Chromium through puppeteer-core; 60 s a test at most), then README.md's
//!    JavaScript run as written
//! 10. NumPy loads npz: `xtask/npz_check.py` has NumPy load every archive the tests wrote
//!     to `target/npz-check` and compare it with its `.expect.json` sidecar
//! 11. NumPy loads SQL writes: `xtask/sql_check.py` has NumPy load every file the tests
//!     wrote with `COPY TO` / `INSERT INTO` to `target/sql-check` (a file, or a directory of
//!     files) and compare its rows with its `.expect.json` sidecar
//! 12. NumPy loads object arrays: `xtask/object_check.py` has NumPy load
//!     (`allow_pickle=True`) every object array `.npy` and `.npz` the tests wrote to
//!     `target/object-check` and compare it, types included, with its `.expect.json` sidecar
//! 13. every example, `cargo run --release -p npy-seismic --example <name>` with `NPY_CI=1`
//! 14. the `npy` commands of the tool's manual (`npy-cli/README.md`) and of README.md, then
//!     README.md's `npy sql` commands, run as written on the main job's file (see [`readme`])
//! 15. the R package (see [`crate::r::ci`]): built as a binary package, its testthat
//!     suites against NumPy's values (the corpus, the main job's traces, object arrays,
//!     the hostile files), what R wrote checked by NumPy, then the binary package
//!     installed with cargo and rustc off `PATH` and README.md's R program run as written
//! 16. the cluster commands of `npy-ballista/README.md`, run as written ([`crate::cluster`]):
//!     a scheduler and two executors in the background, `npy sql --ballista df://...` on
//!     them, then every process killed, and none left
//! 17. `golden --check`: `tests/data` is exactly what NumPy writes
//! 18. NumPy round trip: `npy copy` every `.npy` and `.npz` file of the NumPy corpus
//!     (`../shared/corpus/public`) and of `tests/data` (but `tests/data/object`: the checker
//!     refuses pickles by design; step 12 covers object arrays), then
//!     `../shared/tools/check_roundtrip.py ORIG OUT --strict` must pass them all.
//! 19. NumPy reads our dumps: `xtask/dump_check.py` runs `npy dump --format json` on every
//!     `.npy` of the corpus and of `tests/data` and every member of their `.npz` files,
//!     parses each line with Python's `json` and compares it with NumPy's `tolist()` under
//!     the documented mapping; where NumPy cannot give the values, the dump must fail
//! 20. pyarrow reads our conversions: `xtask/arrow_check.py` runs `npy convert --residue`
//!     on every non-object `.npy` of the corpus and of `tests/data` to `.arrow` and
//!     `.parquet`, opens each with pyarrow (`pyarrow.ipc.open_file`,
//!     `pyarrow.parquet.read_table`) and compares every column with `np.load`'s values, then
//!     converts each back and compares the bytes (legacy headers come back as `np.save`
//!     writes them, with the same data), also after pyarrow rewrote each file (read and
//!     written again, as its users save tables); and every non-object `.npz` as one table
//!     (a column per member: NumPy's values of each member, the same members back), or
//!     refused when NumPy agrees its members differ in length
//! 21. NumPy and npy-append-array read our appends: `xtask/append_check.py` has NumPy load
//!     every file `npy-cli/tests/npy/append.rs` grew in place (records, a file whose killed
//!     append left a tail, and the file 4 racing `npy append`s grew, whose rows sorted
//!     must be exactly the ones appended) into `target/append-check` and compare it with
//!     the array written whole, header bytes included; npy-append-array (pinned in
//!     `xtask/requirements.txt`) appends to them, and `npy append` to a file
//!     npy-append-array made
//! 22. Dask reads our npy stacks and we read Dask's: `xtask/stack_check.py` has Dask
//!     (`dask` and `distributed`, pinned in `xtask/requirements.txt`) compute every stack
//!     the tests left in `target/stack-check` on a `LocalCluster` and compare it with the
//!     array written whole, `info` byte for byte as Dask writes it; `npy stack join` reads
//!     stacks Dask writes (with and without `info`), Dask reads what `npy stack split`
//!     writes, and `npy stack join` refuses `info` pickles that would run code
//! 23. the consumers read our files and we read theirs: `xtask/consumer_check.py` (DuckDB,
//!     polars and pandas pinned in `xtask/requirements.txt`) has DuckDB and polars read
//!     every `.parquet` and `.arrow` `npy convert` writes from the corpus and `tests/data`
//!     with NumPy's values (arrow_check.py's rules); converts to `.npy` the files pyarrow,
//!     pandas, polars and DuckDB write (defaults, nulls, dictionaries, every compression,
//!     several row groups, every string flavour, fixed-length lists, dates, times,
//!     decimals, zoned timestamps) and has NumPy load them equal to the source; and
//!     converts npy's Parquet, edited with pyarrow (filter, drop, add, reorder, rename,
//!     cast), back to exactly what pyarrow holds
//! 24. the Python package (see [`python_package`]): installed as its manual
//!     (`npy-python/README.md`) says (in the dev profile: the test step's build serves
//!     most of it), README.md's Python run as written, built as one abi3 wheel,
//!     `ruff`-clean, `mypy --strict` and `mypy.stubtest` clean, its typed example run, its
//!     pytest suite against NumPy's own behaviour (90 s a test at most)
//!
//! The checks of steps 8 and 14 to 22 run the `npy` the test step built (debug, every
//! feature); only the examples build in release, as README.md's main job runs.

use std::collections::BTreeSet;
use std::env::consts::EXE_SUFFIX;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cluster;
use crate::docs;
use crate::golden;
use crate::js;
use crate::moto::Moto;
use crate::project::{self, Result};
use crate::tidy;

/// A CI step: its name and what it runs.
type Step = (&'static str, fn(&mut Ci) -> Result<()>);

/// The steps, in order.
const STEPS: &[Step] = &[
    ("provision the machine", provision),
    ("cargo fmt --check", fmt),
    ("tidy", tidy),
    ("cargo clippy", clippy),
    ("cargo doc", doc),
    ("cargo test", test),
    ("s3 with moto", s3),
    ("hostile inputs", hostile),
    ("the javascript package", javascript),
    ("numpy loads npz", npz_check),
    ("numpy loads sql writes", sql_check),
    ("numpy loads object arrays", object_check),
    ("examples", examples),
    ("readme commands", readme),
    ("the r package", r_package),
    ("readme cluster commands", readme_cluster),
    ("golden --check", golden_check),
    ("numpy round trip", roundtrip),
    ("numpy reads our dumps", dump_check),
    ("pyarrow reads our conversions", arrow_check),
    ("numpy and npy-append-array read our appends", append_check),
    ("dask reads our npy stacks and we read dask's", stack_check),
    ("the consumers read our files and we read theirs", consumer_check),
    ("the python package", python_package),
];

/// State shared by the steps.
#[derive(Debug, Default)]
struct Ci {
    /// A Python with NumPy, found when a step first needs it.
    python: Option<PathBuf>,
}

impl Ci {
    fn python(&mut self) -> Result<PathBuf> {
        if let Some(python) = &self.python {
            return Ok(python.clone());
        }
        project::step("python with numpy");
        let python = project::python_with_numpy()?;
        self.python = Some(python.clone());
        Ok(python)
    }
}

/// Runs all steps, timing each; the error names the step that failed. The table of times
/// is printed either way.
pub fn run() -> Result<()> {
    // Every build here is cold or rebuilt whole in another configuration: incremental state
    // would only take disk (it was 19 GB of a warm target/), so none is kept unless the
    // caller asks for it. Set before any thread starts, for every cargo (and maturin) below.
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        std::env::set_var("CARGO_INCREMENTAL", "0");
    }
    let mut ci = Ci::default();
    println!("{}", disk_report());
    let start = Instant::now();
    let mut times = Vec::new();
    let mut failure = None;
    for (i, (name, step)) in STEPS.iter().enumerate() {
        project::step(&format!("[{}/{}] {name}", i + 1, STEPS.len()));
        let began = Instant::now();
        let result = step(&mut ci);
        let took = began.elapsed();
        times.push(took);
        let failed = if result.is_err() { " (failed)" } else { "" };
        println!("step {}/{} {name}: {}{failed}", i + 1, STEPS.len(), seconds(took));
        if let Err(e) = result {
            failure = Some(format!("ci step {} ({name}) failed: {e}", i + 1));
            break;
        }
    }
    let names: Vec<&str> = STEPS.iter().map(|(name, _)| *name).collect();
    print!("{}", time_table(&names, &times, failure.is_some(), start.elapsed()));
    println!("{}", disk_report());
    match failure {
        Some(e) => Err(e),
        None => {
            println!("ci: all {} steps passed", STEPS.len());
            Ok(())
        }
    }
}

/// The free space of the file system `target/` is on, and what `target/` holds: CI's disk
/// is finite, and a full disk fails a step with a message that does not say so at once.
fn disk_report() -> String {
    let target = project::target_dir();
    let kib = |cmd: &str, args: &[&str], column: usize| -> Option<u64> {
        let out = Command::new(cmd).args(args).arg(&target).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        text.lines().last()?.split_whitespace().nth(column)?.parse().ok()
    };
    let gb = |k: Option<u64>| k.map_or_else(|| "?".to_string(), |k| format!("{:.1} GB", k as f64 * 1024.0 / 1e9));
    format!("disk: target/ holds {}; {} free", gb(kib("du", &["-sk"], 0)), gb(kib("df", &["-Pk"], 3)))
}

/// `12.3 s`.
fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// The table `ci` ends with: one line per step of `names` with its time (`times` holds
/// those of the steps run, in order; with `failed`, the last of them failed and the steps
/// after it did not run), then the total wall time.
fn time_table(names: &[&str], times: &[Duration], failed: bool, total: Duration) -> String {
    let width = names.iter().map(|name| name.chars().count()).max().unwrap_or(0);
    let mut out = String::from("==> step times\n");
    for (i, name) in names.iter().enumerate() {
        let (time, note) = match times.get(i) {
            Some(&d) if failed && i + 1 == times.len() => (seconds(d), "  FAILED"),
            Some(&d) => (seconds(d), ""),
            None => ("-".to_string(), "  not run"),
        };
        out.push_str(&format!("{:>3}  {name:<width$}  {time:>9}{note}\n", i + 1));
    }
    let minutes = total.as_secs() / 60;
    let total_text = format!("{} ({minutes} min {} s)", seconds(total), total.as_secs() % 60);
    out.push_str(&format!("     {:<width$}  {total_text}\n", "total (wall)"));
    out
}

/// Everything the steps use, before any long step ([`crate::provision::ci`]): the programs
/// (installed with apt-get where missing, or each missing one named), the wasm target,
/// `wasm-bindgen-cli`, npy-js's npm packages and the venv.
fn provision(ci: &mut Ci) -> Result<()> {
    ci.python = Some(crate::provision::ci()?);
    Ok(())
}

fn fmt(_: &mut Ci) -> Result<()> {
    project::run(project::cargo().args(["fmt", "--all", "--", "--check"]))
}

fn tidy(_: &mut Ci) -> Result<()> {
    tidy::run()
}

fn clippy(_: &mut Ci) -> Result<()> {
    project::run(project::cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]))
}

/// The docs of every library and binary (and of the examples). Without `--examples`, cargo
/// would leave the dev-dependencies out of feature resolution; the features they add (the
/// root package's `npyz` turns on `num-bigint/default`, and `indexmap/default` of the build
/// scripts' graph goes too) would then differ from clippy's, and `datafusion`,
/// `datafusion-sql`, the four Ballista crates and Ballista's protobuf codegen would be
/// checked a second time (14 units, by `cargo --unit-graph`).
fn doc(_: &mut Ci) -> Result<()> {
    let mut cargo = project::cargo();
    cargo
        .args(["doc", "--workspace", "--no-deps", "--all-features", "--lib", "--bins", "--examples"])
        .env("RUSTDOCFLAGS", "-D warnings");
    project::run(&mut cargo)
}

/// Where `tests/npz.rs` writes the archives NumPy checks (with their sidecars).
fn npz_check_dir() -> PathBuf {
    project::root().join("target").join("npz-check")
}

/// Where `tests/objects.rs` writes the object arrays NumPy checks (with their sidecars).
fn object_check_dir() -> PathBuf {
    project::root().join("target").join("object-check")
}

/// Where `npy-datafusion/tests/sql/write.rs` writes the files of `COPY TO` and `INSERT
/// INTO` that NumPy checks (with their sidecars).
fn sql_check_dir() -> PathBuf {
    project::root().join("target").join("sql-check")
}

/// Where `npy-cli/tests/npy/append.rs` leaves the files it grew in place, beside the arrays
/// they must hold (`<case>.expect.npy`).
fn append_check_dir() -> PathBuf {
    project::root().join("target").join("append-check")
}

/// Where the stack tests leave the npy stacks `npy stack split` wrote (`<case>/`), beside
/// the arrays written whole (`<case>.npy`).
fn stack_check_dir() -> PathBuf {
    project::root().join("target").join("stack-check")
}

fn test(_: &mut Ci) -> Result<()> {
    // Emptied first, so the NumPy checks see exactly the files this run wrote.
    project::fresh_dir(&append_check_dir())?;
    project::fresh_dir(&npz_check_dir())?;
    project::fresh_dir(&object_check_dir())?;
    project::fresh_dir(&sql_check_dir())?;
    project::fresh_dir(&stack_check_dir())?;
    // The feature set of clippy and doc: one dependency build serves all three (another
    // set would build DataFusion again), and the engine features of npy-cli are tested.
    // nextest runs each test in its own process, two at a time (a test binary's long test
    // no longer holds the other core idle), and kills one that runs past the timeout of
    // `.config/nextest.toml`. It runs no doc-tests: `cargo test --doc` does, after it.
    project::run(project::cargo().args(["nextest", "run", "--workspace", "--all-features", "--no-tests=fail"]))?;
    project::run(project::cargo().args(["test", "--workspace", "--all-features", "--doc"]))
}

/// The bucket the S3 tests use on the local server.
const S3_BUCKET: &str = "npy-ci";

/// The object-store tests against a local S3 server: `moto_server` from the venv on a free
/// port of 127.0.0.1 (waited for, bounded; killed when the step ends, whatever happens),
/// a bucket, the `AWS_*` variables object_store reads, then the ignored tests named `s3`
/// (`npy-datafusion/tests/sql/s3.rs`, the S3 case of `npy-cli/tests/npy/sql.rs`) with the feature
/// set of step 5, so nothing is built again.
fn s3(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let log = project::target_dir().join("moto.log");
    project::step(&format!("moto_server on 127.0.0.1 (log: {})", log.display()));
    let moto = Moto::start(&python, &log)?;
    moto.create_bucket(S3_BUCKET)?;
    let mut cargo = project::cargo();
    cargo
        .args(["nextest", "run", "--workspace", "--all-features", "--run-ignored", "only", "-E", "test(/s3/)"])
        .env("AWS_ENDPOINT_URL", moto.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("NPY_S3_BUCKET", S3_BUCKET);
    project::run(&mut cargo)
}

/// The JavaScript package (`npy-js/`, see [`js::check`]): npy-core and npy-js for wasm32
/// without warnings, the module built and under its size, the declarations type-checked,
/// the Node tests against NumPy and the hostile files step 7 left (each loading in
/// JavaScript as the test step's `npy check --strict` judges it), the browser test in
/// Chromium, and README.md's JavaScript as written.
fn javascript(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    js::check(&python, Some(&npy_binary()?))
}

/// NumPy loads every file `npy-datafusion/tests/sql/write.rs` wrote with `COPY TO` and
/// `INSERT INTO` and finds the rows its sidecar says.
fn sql_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let script = project::root().join("xtask").join("sql_check.py");
    project::run(Command::new(&python).arg(&script).arg(sql_check_dir()))
}

/// NumPy loads the files `npy-cli/tests/npy/append.rs` grew in place as the arrays written
/// whole, npy-append-array appends to them, and `npy append` appends to a file
/// npy-append-array made (`xtask/append_check.py`).
fn append_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let npy = npy_binary()?;
    let script = project::root().join("xtask").join("append_check.py");
    project::run(Command::new(&python).arg(&script).arg(append_check_dir()).arg(&npy))
}

/// Dask computes the stacks the tests left in `target/stack-check` on a `LocalCluster` as
/// the arrays written whole, `npy stack join` reads the stacks Dask writes and
/// refuses hostile `info` pickles, and Dask reads what `npy stack split` writes
/// (`xtask/stack_check.py`).
fn stack_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let npy = npy_binary()?;
    let script = project::root().join("xtask").join("stack_check.py");
    project::run(Command::new(&python).arg(&script).arg(stack_check_dir()).arg(&npy))
}

/// Hostile inputs, under a 2 GiB address-space limit (util-linux's `prlimit`): the
/// `tests/hostile.rs` binary must pass; then `npy info` and `npy copy` (the test step's)
/// must exit with 0 or 1 (never a panic or a signal), within 40 s (`timeout`),
/// on every file in `target/hostile` (written by `tests/hostile.rs` and
/// `tests/hostile_npz.rs`); `npy check --strict` must find a problem (exit 1) in every one
/// but those of [`CHECK_VALID`] (exit 0), within the same limits; and `npy check` none in
/// NumPy's corpus.
fn hostile(_: &mut Ci) -> Result<()> {
    use std::ffi::OsString;
    use std::process::Stdio;

    const ADDRESS_SPACE: u64 = 2 << 30;
    // A hang ends here; honest work stays well inside it: the longest run, `npy copy` of a
    // 16 MB archive whose member inflates to 2.6 GB (inflated and deflated again, every
    // byte), took 11 s on 2 cores, in release and debug alike (its time is zlib's C).
    const TIMEOUT_SECS: u32 = 40;
    // `program`, under the limit (util-linux's `prlimit`) and, when given, a timeout.
    let limited = |program: &Path, timeout: Option<u32>| {
        let mut argv: Vec<OsString> = Vec::new();
        if let Some(secs) = timeout {
            argv.extend(["timeout".into(), secs.to_string().into()]);
        }
        argv.extend(["prlimit".into(), format!("--as={ADDRESS_SPACE}").into(), "--".into()]);
        argv.push(program.into());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(project::root());
        cmd
    };

    // The binary the test step built: with its package and feature selection, cargo resolves
    // the same features and finds it fresh (`--test hostile` alone would build npy-core and
    // the test again, with the root package's features).
    project::step("cargo test --workspace --all-features --test hostile --no-run");
    let mut build = project::cargo();
    build
        .args(["test", "--workspace", "--all-features", "--test", "hostile", "--no-run", "--message-format=json"])
        .stderr(Stdio::inherit());
    let output = build.output().map_err(|e| format!("cannot run `{}`: {e}", project::show(&build)))?;
    if !output.status.success() {
        return Err(format!("`{}` failed ({})", project::show(&build), output.status));
    }
    let exe = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "hostile")
        .filter(|msg| msg["manifest_path"].as_str().map(Path::new) == Some(&project::root().join("Cargo.toml")))
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .ok_or("cargo named no executable for the hostile test")?;
    project::step(&format!("{} under prlimit --as={ADDRESS_SPACE}", exe.display()));
    project::run(&mut limited(&exe, None))?;

    let npy = npy_binary()?;
    let dir = project::target_dir().join("hostile");
    let out = project::target_dir().join("xtask").join("hostile-out");
    project::fresh_dir(&out)?;
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .map(|entry| entry.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<_>>()?;
    files.retain(|f| f.is_file());
    files.sort();
    if files.is_empty() {
        return Err(format!("no hostile inputs in {}", dir.display()));
    }
    project::step(&format!("npy info and npy copy on {} files in {}", files.len(), dir.display()));
    let mut failed = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap_or_default();
        for args in [vec![OsString::from("info"), file.into()], vec!["copy".into(), file.into(), out.join(name).into()]]
        {
            let mut cmd = limited(&npy, Some(TIMEOUT_SECS));
            cmd.args(&args);
            let output = cmd.output().map_err(|e| format!("cannot run `{}`: {e}", project::show(&cmd)))?;
            if !matches!(output.status.code(), Some(0 | 1)) {
                let stderr = String::from_utf8_lossy(&output.stderr);
                println!(
                    "{} on {}: {} (want exit 0 or 1)\n{}",
                    project::show(&cmd),
                    file.display(),
                    output.status,
                    stderr.trim_end()
                );
                failed.push(format!("{:?} {}", args[0], file.display()));
            }
        }
    }
    if !failed.is_empty() {
        return Err(format!("npy exited with neither 0 nor 1 on {} runs: {}", failed.len(), failed.join(", ")));
    }
    println!("{} hostile inputs: info/copy exit codes ok", files.len());

    project::step(&format!("npy check --strict on {} files in {}", files.len(), dir.display()));
    let names: BTreeSet<&str> = files.iter().filter_map(|f| f.file_name()?.to_str()).collect();
    let stale: Vec<&str> = CHECK_VALID.iter().map(|(name, _)| *name).filter(|name| !names.contains(name)).collect();
    if !stale.is_empty() {
        return Err(format!("CHECK_VALID names files the hostile tests no longer write: {}", stale.join(", ")));
    }
    for file in &files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let want = if CHECK_VALID.iter().any(|(valid, _)| *valid == name) { 0 } else { 1 };
        let mut cmd = limited(&npy, Some(TIMEOUT_SECS));
        cmd.args([OsString::from("check"), "--strict".into(), file.into()]);
        let output = cmd.output().map_err(|e| format!("cannot run `{}`: {e}", project::show(&cmd)))?;
        if output.status.code() != Some(want) {
            println!(
                "{}: {} (want exit {want})\n{}{}",
                project::show(&cmd),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
            failed.push(name.to_string());
        }
    }
    if !failed.is_empty() {
        return Err(format!("npy check judged {} hostile files wrongly: {}", failed.len(), failed.join(", ")));
    }
    println!(
        "{} hostile inputs: npy check finds a problem in {} and none in the {} of CHECK_VALID",
        files.len(),
        files.len() - CHECK_VALID.len(),
        CHECK_VALID.len()
    );

    let corpus = project::root().join("..").join("shared").join("corpus").join("public");
    let corpus = fs::canonicalize(&corpus).map_err(|e| {
        format!(
            "npy check needs the NumPy corpus at {}: {e} (check out the shared directory beside the workspace)",
            corpus.display()
        )
    })?;
    let files = project::array_files(&corpus)?;
    project::step(&format!("npy check on {} files of {}", files.len(), corpus.display()));
    let mut cmd = Command::new(&npy);
    cmd.arg("check").args(files.iter().map(|rel| corpus.join(rel))).current_dir(project::root());
    let output = cmd.output().map_err(|e| format!("cannot run npy check: {e}"))?;
    let report = String::from_utf8_lossy(&output.stdout);
    print!("{report}");
    if output.status.code() != Some(0) {
        return Err(format!(
            "npy check exited with {} on NumPy's corpus (want 0)\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    Ok(())
}

/// The hostile inputs that hold no problem for `npy check --strict` (exit 0): each is
/// hostile to some other reader path, and valid as a file (NumPy's `np.load` reads every
/// one, but the two at the end). Every other file of `target/hostile` must get exit 1.
const CHECK_VALID: &[(&str, &str)] = &[
    // Valid files that a typed read of another type or shape must refuse.
    ("big_endian_is_fine.npy", "a plain '>f8' array, read as f64 through a byte swap"),
    ("datetime_as_i64.npy", "a plain '<M8[s]' array, hostile to a read as i64"),
    ("f8_as_i32.npy", "a plain '<f8' array, hostile to a read as i32"),
    ("f8_as_record.npy", "a plain '<f8' array, hostile to a read as a record"),
    ("i8_as_f32.npy", "a plain '<i8' array, hostile to a read as f32"),
    ("record_as_f64.npy", "a plain one-field record array, hostile to a read as f64"),
    ("u1_as_bool.npy", "a plain '|u1' array of 0 and 1, hostile to a read as bool"),
    ("two_d_as_vec.npy", "a plain (2, 2) array, hostile to a read as a Vec"),
    ("zero_d_as_vec.npy", "a plain 0-d array, hostile to a read as a Vec"),
    // Arrays of zero bytes whatever their shape claims (NumPy loads them).
    ("empty_record_1e18.npy", "10^18 elements of the empty record: no data"),
    ("empty_record_2d.npy", "10^9 x 10^9 elements of the empty record: no data"),
    ("s0_1e17_as_bytes5.npy", "10^17 elements of '|S0': no data"),
    ("u0_1e17_as_ucs4.npy", "10^17 elements of '<U0': no data"),
    ("v0_0d.npy", "a 0-d '|V0' array: no data"),
    ("v0_1e18.npy", "10^18 elements of '|V0': no data"),
    ("v0_as_f64.npy", "10^18 elements of '|V0': no data"),
    ("v0_isize_max.npy", "isize::MAX elements of '|V0': no data"),
    ("v0_no_elements.npy", "no elements of '|V0'"),
    ("view_v0_1e18.npy", "10^18 elements of '|V0': no data"),
    ("view_zero_axis.npy", "a (0, isize::MAX) array: no elements"),
    ("view_zero_axis_range.npy", "a (0, isize::MAX) array: no elements"),
    ("zero_axis_isize_max.npy", "a (0, isize::MAX) array: no elements"),
    ("zero_subarray_field_1e18.npy", "10^18 records of a (0,)-shaped field: no data"),
    // At NumPy's limits, inside them.
    ("dims_64.npy", "64 dimensions, NumPy's maximum"),
    ("long_suffix_in_v1.npy", "a Python 2 long ('3L') in the shape, which NumPy reads"),
    ("ucs4_10ffff_is_valid.npy", "U+10FFFF, the largest code point"),
    // Pickles of NumPy's plain arrays, which the restricted decoder accepts.
    ("pickle_memo_chain_is_fine.npy", "a chain of memo references, no expansion"),
    ("pickle_valid_wrapper.npy", "NumPy's array pickle around None"),
    ("pickle_valid_written.npy", "an object array as np.save pickles it"),
    // Data since issue 54, which the restricted decoder reads (abused forms stay refused).
    ("pickle_dtype_datetime.npy", "a NumPy datetime64 scalar in an object array"),
    ("pickle_numeric_ndarray_element.npy", "an array of one <f8 inside an object array"),
    ("pickle_global_element.npy", "the class complex as a value"),
    ("pickle_empty_set.npy", "an empty set"),
    ("pickle_frozenset.npy", "an empty frozenset"),
    ("pickle_bytearray8.npy", "an empty bytearray (protocol 5's BYTEARRAY8)"),
    // Archives refused only under limits lower than the defaults, and names that are keys.
    ("entries_over_limit.npz", "10 members, refused only with max_entries(5)"),
    ("zip_bomb_100mib.npz", "100 MiB inflated, refused only with max_inflated_size(10 MiB)"),
    ("zip_bombs_together.npz", "3 x 4 MiB inflated, refused only with max_inflated_size(10 MiB)"),
    ("zstd_bomb_100mib.npz", "100 MiB of Zstandard-compressed zeros, refused only below 100 MiB of max_inflated_size"),
    ("path_like_names.npz", "member names like '../../escape': keys, never paths"),
    ("npy_file.npz", "a .npy file named .npz: read by its content, as np.load does"),
];

/// NumPy loads every archive `tests/npz.rs` wrote and finds what its sidecar says.
fn npz_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let script = project::root().join("xtask").join("npz_check.py");
    project::run(Command::new(&python).arg(&script).arg(npz_check_dir()))
}

/// NumPy loads every object array `tests/objects.rs` wrote (`allow_pickle=True`) and finds
/// what its sidecar says, Python types included.
fn object_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let script = project::root().join("xtask").join("object_check.py");
    project::run(Command::new(&python).arg(&script).arg(object_check_dir()))
}

/// Runs every example of the workspace's `examples/` (`<name>.rs` and `<name>/main.rs`,
/// targets of npy-seismic), with `NPY_CI=1` and `NPY_PYTHON` set to the Python with NumPy
/// (examples that show what NumPy sees use it). `-p npy-seismic`: cargo then resolves
/// npy-core's features for npy-seismic alone, and builds npy-core's dependencies in
/// release and nothing else (README.md's `cargo run --release --example seismic` resolves
/// them with every default member's dev-dependencies: more units, the same job).
fn examples(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let dir = project::root().join("examples");
    let mut names = BTreeSet::new();
    if dir.is_dir() {
        let entries = fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            let is_example = if path.is_dir() {
                path.join("main.rs").is_file()
            } else {
                path.extension().is_some_and(|ext| ext == "rs")
            };
            if let (true, Some(stem)) = (is_example, path.file_stem()) {
                names.insert(stem.to_string_lossy().into_owned());
            }
        }
    }
    if names.is_empty() {
        println!("no examples");
    }
    for name in &names {
        project::step(&format!("example {name}"));
        project::run(
            project::cargo()
                .args(["run", "--release", "-p", "npy-seismic", "--example", name])
                .env("NPY_CI", "1")
                .env("NPY_PYTHON", &python),
        )?;
    }
    Ok(())
}

/// The `npy` commands the READMEs show, run as written (see [`docs::run_lines`]), in order,
/// from the checkout's root, after the main job (the examples step) wrote
/// `target/seismic/traces.npy`: each must succeed (pipes with `pipefail`) and print nothing
/// on stderr.
/// - the tool's manual (`npy-cli/README.md`): its `sh` block of `npy` commands, then
///   README.md's, and README.md's `sh` block of `npy sql` commands, with the debug `npy`
///   of every feature that the test step built first on `PATH` (what `cargo install --path
///   npy-cli --features sql` gives, without a release build of npy-cli's dependencies).
fn readme(_: &mut Ci) -> Result<()> {
    let npy = |b: &str| b.lines().any(|l| l.starts_with("npy "));
    let sql = |b: &str| b.lines().any(|l| l.starts_with("npy sql "));
    let manual = "npy-cli/README.md";
    let tool = docs::block(manual, "sh", "npy commands", npy)?;
    let front = docs::block("README.md", "sh", "npy commands (but npy sql)", |b| npy(b) && !sql(b))?;
    let front_sql = docs::block("README.md", "sh", "npy sql commands", sql)?;
    let engines = path_with(&debug_engines()?)?;
    docs::run_lines(manual, &tool, &engines)?;
    docs::run_lines("README.md", &front, &engines)?;
    docs::run_lines("README.md", &front_sql, &engines)?;
    Ok(())
}

/// The R package, its tests against NumPy and README.md's R program (see [`crate::r::ci`]).
fn r_package(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    crate::r::ci(&python)
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> Result<std::ffi::OsString> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
        .map_err(|e| format!("cannot make PATH: {e}"))
}

/// The cluster block of `npy-ballista/README.md` ("Run on a cluster"), run as written from
/// the checkout's root (see [`cluster::run_manual_block`]) with the binaries the test step
/// built first on `PATH`: `npy-ballista-scheduler`, `npy-ballista-executor` and `npy` with
/// every feature, what its `cargo install` lines give (debug builds: no release build of
/// the engines).
fn readme_cluster(_: &mut Ci) -> Result<()> {
    let bin = debug_engines()?;
    cluster::run_manual_block(&project::root(), &path_with(&bin)?, &project::target_dir().join("readme-cluster"))
}

/// The `npy` the test step built (`target/debug/npy`, with every feature), which every
/// check runs: one build of npy-cli's dependencies serves the tests and the checks (a
/// release build of them took 6 minutes of a cold run).
fn npy_binary() -> Result<PathBuf> {
    Ok(debug_engines()?.join(format!("npy{EXE_SUFFIX}")))
}

/// The directory of the debug `npy-ballista-scheduler`, `npy-ballista-executor` and `npy`
/// (with every feature) that the test step built.
fn debug_engines() -> Result<PathBuf> {
    let bin = project::target_dir().join("debug");
    for exe in ["npy-ballista-scheduler", "npy-ballista-executor", "npy"] {
        let exe = bin.join(format!("{exe}{EXE_SUFFIX}"));
        if !exe.exists() {
            return Err(format!(
                "{} is missing: the test step (cargo test --workspace --all-features) builds it",
                exe.display()
            ));
        }
    }
    Ok(bin)
}

fn golden_check(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    golden::check(&python)
}

/// Builds the `npy` binary, then round-trips the NumPy corpus and `tests/data`.
fn roundtrip(ci: &mut Ci) -> Result<()> {
    let beside = project::root().join("..").join("shared");
    let Ok(shared) = fs::canonicalize(&beside) else {
        return Err(format!(
            "the NumPy corpus at ../shared/corpus/public is needed for this step, but {} does \
             not exist (check out the shared directory beside the workspace)",
            beside.display()
        ));
    };
    let python = ci.python()?;
    let npy = npy_binary()?;
    let checker = shared.join("tools").join("check_roundtrip.py");
    let work = project::target_dir().join("xtask").join("roundtrip");
    let check = |src: &Path, name: &str, skip: Option<&str>| {
        roundtrip_dir(&python, &npy, &checker, src, &work.join(name), skip)
    };
    check(&shared.join("corpus").join("public"), "corpus", None)?;
    check(&golden::data_dir(), "tests-data", Some(NOT_ROUND_TRIPPED))
}

/// `xtask/dump_check.py`: every array of the corpus and of `tests/data` dumped as JSON by
/// the test step's `npy` equals NumPy's values.
fn dump_check(ci: &mut Ci) -> Result<()> {
    let (corpus, python, npy) = corpus_python_npy(ci)?;
    let script = project::root().join("xtask").join("dump_check.py");
    project::run(Command::new(&python).arg(&script).arg(&npy).arg(&corpus).arg(golden::data_dir()))
}

/// `xtask/arrow_check.py`: every non-object `.npy` of the corpus and of `tests/data`,
/// converted by the test step's `npy` to an Arrow IPC file and to Parquet, holds NumPy's values
/// as pyarrow reads them, and converts back to the same file; every non-object `.npz`
/// likewise as a table of its members. Its files go to
/// `target/xtask/arrow-check`.
fn arrow_check(ci: &mut Ci) -> Result<()> {
    let (corpus, python, npy) = corpus_python_npy(ci)?;
    let work = project::target_dir().join("xtask").join("arrow-check");
    project::fresh_dir(&work)?;
    let script = project::root().join("xtask").join("arrow_check.py");
    project::run(Command::new(&python).arg(&script).arg(&npy).arg(&work).arg(&corpus).arg(golden::data_dir()))
}

/// `xtask/consumer_check.py`: DuckDB and polars read what the test step's `npy convert` writes
/// from the corpus and `tests/data` as NumPy's values; the files pyarrow, pandas, polars
/// and DuckDB write convert to `.npy` files NumPy loads equal to them; npy's Parquet edited
/// with pyarrow converts back to what pyarrow holds. Its files go to
/// `target/xtask/consumer-check`.
fn consumer_check(ci: &mut Ci) -> Result<()> {
    let (corpus, python, npy) = corpus_python_npy(ci)?;
    let work = project::target_dir().join("xtask").join("consumer-check");
    project::fresh_dir(&work)?;
    let script = project::root().join("xtask").join("consumer_check.py");
    project::run(Command::new(&python).arg(&script).arg(&npy).arg(&work).arg(&corpus).arg(golden::data_dir()))
}

/// The Python package, as its users get it and as its maintainers keep it:
/// - `pip install ./npy-python ./npy-pyo3/example` into the venv (maturin, the dev
///   profile, the install line of `npy-python/README.md`; see [`install_python_package`]);
/// - README.md's `python` block, run as written in an empty directory, where it writes its
///   files (see [`front_python`]);
/// - `maturin build --profile dev` of the wheel, which must be one abi3 wheel for CPython 3.11+
///   (the same build: cargo's cache serves it);
/// - `ruff check` and `ruff format --check` of the package's Python, tests and examples;
/// - `mypy --strict` of the package and of its typed example, and `mypy.stubtest npy`: the
///   stubs of the compiled engine (`npy/_npy.pyi`) and the package's annotations held to
///   what the runtime has;
/// - the typed example run, and the pytest suite: every NumPy file loads as `np.load`
///   gives it and saves as `np.save` writes it, every argument and file-object kind as
///   NumPy's, hostile pickles run nothing, npz members map, two processes append, records
///   round-trip; every skip and expected failure is one `npy-python/tests/skips.py` lists
///   (`NPY_SKIPS_CHECK=1`: an unlisted skip, or a listed one that did not happen, fails).
fn python_package(ci: &mut Ci) -> Result<()> {
    let python = ci.python()?;
    let root = project::root();
    let package = root.join("npy-python");
    install_python_package(&python, Build::Dev)?;
    front_python(&python)?;
    project::step("maturin build --profile dev (npy-python)");
    let wheels = project::target_dir().join("wheels");
    let _ = fs::remove_dir_all(&wheels);
    project::run(
        Command::new(&python)
            .args(["-m", "maturin", "build", "--quiet"])
            .args(Build::Dev.maturin_args())
            .arg("-m")
            .arg(package.join("Cargo.toml"))
            .arg("--out")
            .arg(&wheels)
            .current_dir(&root),
    )?;
    let built: Vec<String> = fs::read_dir(&wheels)
        .map_err(|e| format!("cannot list {}: {e}", wheels.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    match built.as_slice() {
        [wheel] if wheel.starts_with("npy-") && wheel.contains("-cp311-abi3-") => println!("built {wheel}"),
        other => {
            return Err(format!("maturin built {other:?}, not one abi3 wheel for CPython 3.11+ (npy-*-cp311-abi3-*)"))
        }
    }
    let sources = ["python", "tests", "examples", "bench.py"];
    project::step("ruff check, ruff format --check (npy-python)");
    project::run(
        Command::new(&python).args(["-m", "ruff", "check", "--no-cache"]).args(sources).current_dir(&package),
    )?;
    project::run(
        Command::new(&python)
            .args(["-m", "ruff", "format", "--check", "--no-cache"])
            .args(sources)
            .current_dir(&package),
    )?;
    project::step("mypy --strict, mypy.stubtest npy");
    let cache = project::target_dir().join("mypy-cache");
    project::run(
        Command::new(&python)
            .args(["-m", "mypy", "--strict", "--cache-dir"])
            .arg(&cache)
            .args(["python/npy", "examples/typed.py"])
            .current_dir(&package),
    )?;
    // From elsewhere than the package's source, so the installed package is the one checked.
    project::run(
        Command::new(&python)
            .args(["-m", "mypy.stubtest", "npy", "--mypy-config-file"])
            .arg(package.join("pyproject.toml"))
            .env("MYPY_CACHE_DIR", &cache)
            .current_dir(project::target_dir()),
    )?;
    project::step("python npy-python/examples/typed.py");
    let work = project::target_dir().join("python-example");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    project::run(Command::new(&python).arg(package.join("examples").join("typed.py")).arg(&work).current_dir(&root))?;
    project::step("pytest npy-python/tests");
    project::run(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(package.join("tests"))
            .env("NPY_CORPUS", root.join("..").join("shared").join("corpus").join("public"))
            .env("NPY_SKIPS_CHECK", "1")
            .current_dir(&root),
    )
}

/// README.md's `python` block (the one that imports `npy`), run as written by `python` in
/// `target/readme-python`, emptied first: it must succeed and print nothing on stderr.
fn front_python(python: &Path) -> Result<()> {
    let code = docs::block("README.md", "python", "the npy package", |b| b.contains("import numpy as np, npy"))?;
    let work = project::target_dir().join("readme-python");
    project::fresh_dir(&work)?;
    let script = work.join("readme.py");
    fs::write(&script, code).map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    project::step("python README.md's python block");
    let out = Command::new(python)
        .arg(&script)
        .current_dir(&work)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.is_empty() {
        return Err(format!("README.md's python block: {}; stderr: {}", out.status, stderr.trim_end()));
    }
    println!("README.md's python block ran as written");
    Ok(())
}

/// The cargo profile a Python package build uses: `Release`, as users get it (`cargo xtask
/// bench` times it), or `Dev`, as CI checks it: the test step's build of the workspace
/// serves most of its units (a cold release build of them took 8 minutes, the dev build
/// after the tests 75 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    Release,
    Dev,
}

impl Build {
    /// maturin's arguments for it.
    fn maturin_args(self) -> &'static [&'static str] {
        match self {
            Build::Release => &["--release"],
            Build::Dev => &["--profile", "dev"],
        }
    }
}

/// The install command of the package's manual, `npy-python/README.md` (its `sh` block of
/// `pip install`), run by the venv's pip of `python` with what the pins need (no build
/// isolation: the venv's pinned maturin; no dependencies fetched; a reinstall), and with
/// `./npy-pyo3/example`, built as `build` says (maturin's build backend takes its profile
/// from `MATURIN_PEP517_ARGS`).
pub fn install_python_package(python: &Path, build: Build) -> Result<()> {
    let root = project::root();
    let manual = "npy-python/README.md";
    let block = docs::block(manual, "sh", "pip install", |b| b.lines().any(|l| l.starts_with("pip install ")))?;
    let line = block.lines().find_map(|l| l.strip_prefix("pip install ")).unwrap_or_default();
    let packages: Vec<&str> = line.split_whitespace().collect();
    if packages.is_empty() || packages.iter().any(|p| p.starts_with('-')) {
        return Err(format!("{manual}'s install line `pip install {line}` names no package, or takes flags"));
    }
    // pip runs maturin's build backend, which looks for `maturin` (and cargo) on PATH.
    let bin = python.parent().ok_or("the venv's python has no directory")?;
    let path = path_with(bin)?;
    project::step(&format!("pip install {} ./npy-pyo3/example (the install line of {manual})", packages.join(" ")));
    project::run(
        Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-build-isolation",
                "--force-reinstall",
                "--no-deps",
            ])
            .args(&packages)
            .arg(root.join("npy-pyo3").join("example"))
            .env("PATH", &path)
            .env("MATURIN_PEP517_ARGS", if build == Build::Dev { "--profile dev" } else { "" })
            .current_dir(&root),
    )
}

/// What the Python checks of our files need: the public corpus (an error when it is
/// missing), the venv's Python, and the test step's `npy`.
fn corpus_python_npy(ci: &mut Ci) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let corpus = project::root().join("..").join("shared").join("corpus").join("public");
    if !corpus.is_dir() {
        return Err(format!("the NumPy corpus is needed for this step, but {} does not exist", corpus.display()));
    }
    let python = ci.python()?;
    Ok((corpus, python, npy_binary()?))
}

/// Fixtures of `tests/data` the round trip leaves out: object arrays, whose pickles
/// `check_roundtrip.py` refuses by design (`tests/objects.rs` rewrites them byte for byte,
/// and the "numpy loads object arrays" step checks what we write).
const NOT_ROUND_TRIPPED: &str = "object/";

/// Copies every `.npy` and `.npz` file under `src` (but those under `skip`) with `npy copy`
/// into `<work>/out` and has `check_roundtrip.py --strict` compare them with `<work>/orig`.
///
/// `<work>/orig` mirrors the array files of `src` (the checker wants a copy of
/// every `.npy` and `.npz` it finds, so nothing else may sit there),
/// with `src/manifest.json` cut down to the entries of those files, so the
/// checker still verifies the originals' `sha256_data`.
fn roundtrip_dir(python: &Path, npy: &Path, checker: &Path, src: &Path, work: &Path, skip: Option<&str>) -> Result<()> {
    project::step(&format!("round trip {}", src.display()));
    let mut files = project::array_files(src)?;
    if let Some(prefix) = skip {
        files.retain(|rel| !rel.starts_with(prefix));
    }
    if files.is_empty() {
        return Err(format!("no .npy or .npz files under {}", src.display()));
    }
    let (orig, out) = (work.join("orig"), work.join("out"));
    project::fresh_dir(work)?;
    let mut failed = Vec::new();
    for rel in &files {
        let (from, mirror, copy) = (project::join(src, rel), project::join(&orig, rel), project::join(&out, rel));
        project::create_parent(&mirror)?;
        project::create_parent(&copy)?;
        fs::hard_link(&from, &mirror)
            .or_else(|_| fs::copy(&from, &mirror).map(drop))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        let status = Command::new(npy)
            .args(["copy", "--max-header-size", "1000000"])
            .arg(&from)
            .arg(&copy)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", npy.display()))?;
        if !status.success() {
            println!("npy copy failed on {rel} ({status})");
            failed.push(rel.as_str());
        }
    }
    let listed = filter_manifest(src, &orig, &files)?;
    println!("ran npy copy on {} files ({} failed); manifest.json entries kept: {listed}", files.len(), failed.len());
    let mut cmd = Command::new(python);
    cmd.arg(checker).arg(&orig).arg(&out).arg("--strict");
    let output = cmd.output().map_err(|e| format!("cannot run `{}`: {e}", project::show(&cmd)))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines().filter(|line| !line.starts_with("PASS ")) {
        println!("{line}");
    }
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    let last = stdout.lines().last().unwrap_or("(no output)");
    let expected = format!("{} passed, 0 failed", files.len());
    if !output.status.success() || last != expected {
        return Err(format!("check_roundtrip.py on {}: '{last}', expected '{expected}'", src.display()));
    }
    if !failed.is_empty() {
        return Err(format!("npy copy failed on {}", failed.join(", ")));
    }
    Ok(())
}

/// Writes `<orig>/manifest.json` with the entries of `src/manifest.json`
/// whose `file` is one of `files`; returns how many were kept ("none" if
/// `src` has no manifest).
fn filter_manifest(src: &Path, orig: &Path, files: &[String]) -> Result<String> {
    let path = src.join("manifest.json");
    if !path.exists() {
        return Ok("none".to_string());
    }
    let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("{} is not a JSON list: {e}", path.display()))?;
    let total = entries.len();
    let kept: Vec<_> = entries
        .into_iter()
        .filter(|entry| {
            let file = entry.get("file").and_then(|file| file.as_str());
            file.is_some_and(|file| files.iter().any(|rel| rel == file))
        })
        .collect();
    let json = serde_json::to_string(&kept).map_err(|e| e.to_string())?;
    let dest = orig.join("manifest.json");
    fs::write(&dest, json).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    Ok(format!("{} of {total}", kept.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn disk_report_measures_target_and_the_free_space() {
        let report = disk_report();
        let numbers: Vec<f64> = report.split(' ').filter_map(|word| word.parse().ok()).collect();
        assert_eq!(numbers.len(), 2, "{report}");
        assert!(numbers[0] > 0.0 && report.starts_with("disk: target/ holds "), "{report}");
    }

    #[test]
    fn time_table_lists_every_step_and_the_total() {
        let names = ["cargo fmt --check", "tidy", "cargo test"];
        let ms = Duration::from_millis;
        let table = time_table(&names, &[ms(400), ms(2_050), ms(125_000)], false, ms(127_600));
        assert_eq!(
            table,
            "==> step times\n  \
               1  cargo fmt --check      0.4 s\n  \
               2  tidy                   2.0 s\n  \
               3  cargo test           125.0 s\n     \
                  total (wall)       127.6 s (2 min 7 s)\n"
        );
        // A failed step is marked, and the steps after it did not run.
        let table = time_table(&names, &[ms(400), ms(3_000)], true, ms(3_500));
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[2].ends_with("3.0 s  FAILED"), "{table}");
        assert!(lines[3].ends_with("-  not run"), "{table}");
        assert!(lines[4].contains("total (wall)") && lines[4].ends_with("3.5 s (0 min 3 s)"), "{table}");
    }
}
