//! `cargo xtask fuzz [--seconds N] [--target NAME] [--sanitizer S]`: runs the cargo-fuzz
//! targets of `fuzz/` one after another, each for N seconds (default 60), printing each
//! one's final libFuzzer stats (`stat::number_of_executed_units`, ...). A target that
//! crashes stops, the others still run, and the command fails, naming the file that
//! reproduces each crash.
//!
//! cargo-fuzz passes nightly-only flags (`-Zsanitizer=address`, `-Cpasses=sancov-module`,
//! ...) to rustc. On a stable toolchain they are accepted with `RUSTC_BOOTSTRAP=1`, which
//! this command sets for `cargo fuzz`; AddressSanitizer (the default, `--sanitizer
//! address`) links and runs on stable that way. `--sanitizer none` builds without it
//! (faster, for platforms where ASan does not link). `cargo fuzz` itself comes from
//! `cargo install cargo-fuzz --locked`.
//!
//! Everything it writes is under the target directory:
//! - `fuzz/<sanitizer>/`: the fuzz builds (their own, as the flags differ from the
//!   workspace's and between sanitizers);
//! - `fuzz-seeds/<target>/`: the seeds, rewritten on every run from the fixtures in
//!   `tests/data` and, if present, NumPy's corpus in `../shared/corpus/public`: whole
//!   `.npy` files for `npy_dynamic` and `record` (plus a file of the `record` target's
//!   own type), the header text after a version byte for `header`, `.npz` archives and
//!   stored zips of the fixtures for `npz`, the pickled data of object arrays for
//!   `pickle`, the `info` of every stack in `tests/data/stack` for `stack_info`; the
//!   `.npy` fixtures of `tests/data` converted by `npy convert` (built with
//!   `cargo build -p npy-cli`) to Arrow IPC files for `arrow_ipc` and to Parquet for
//!   `parquet`, with any `.arrow` and `.parquet` files of `tests/data` (written by others);
//! - `fuzz-corpus/<target>/`: the corpus libFuzzer grows, kept between runs;
//! - `fuzz-artifacts/<target>/`: crash, timeout and out-of-memory inputs;
//! - `fuzz-logs/<target>.log`: libFuzzer's whole output.
//!
//! A crash is turned into a regression test in `tests/fuzz_regressions.rs`.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::project::{self, Result};

const USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [--target NAME] [--sanitizer address|none]";

/// A fuzz target of `fuzz/fuzz_targets` and what it is fed.
#[derive(Debug)]
struct Target {
    name: &'static str,
    seeds: Seeds,
    /// libFuzzer's `-max_len`: the largest input it makes.
    max_len: usize,
}

/// What a target's seeds are made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seeds {
    /// A version byte (0, 1 or 2 for 1.0, 2.0 and 3.0) and the header text of each `.npy`.
    HeaderText,
    /// Whole `.npy` files.
    Npy,
    /// `.npz` archives.
    Npz,
    /// The data (a pickle) of each object-array `.npy`.
    Pickle,
    /// The `info` pickle of each Dask npy stack in `tests/data/stack`.
    StackInfo,
    /// Files of `npy convert`'s input formats: Arrow IPC (`.arrow`) or Parquet
    /// (`.parquet`), as the extension says.
    Table(&'static str),
}

const MIB: usize = 1 << 20;

const TARGETS: &[Target] = &[
    // The longest 1.0 header. Longer ones (thousands of fields) take a fifth of a second
    // each under the sanitizer, and find nothing shorter ones do not.
    Target { name: "header", seeds: Seeds::HeaderText, max_len: 64 << 10 },
    Target { name: "npy_dynamic", seeds: Seeds::Npy, max_len: MIB },
    Target { name: "npz", seeds: Seeds::Npz, max_len: MIB },
    Target { name: "record", seeds: Seeds::Npy, max_len: MIB },
    Target { name: "pickle", seeds: Seeds::Pickle, max_len: 256 << 10 },
    Target { name: "pickle_sparse", seeds: Seeds::Pickle, max_len: 256 << 10 },
    Target { name: "stack_info", seeds: Seeds::StackInfo, max_len: 64 << 10 },
    // Through `npy convert`'s reader (npy_arrow::formats::FileBatchReader), a file per input. The
    // fixtures converted are small; a few hundred KB leaves room to grow.
    Target { name: "arrow_ipc", seeds: Seeds::Table("arrow"), max_len: 256 << 10 },
    Target { name: "parquet", seeds: Seeds::Table("parquet"), max_len: 256 << 10 },
];

/// Memory limit of a fuzz process; more is reported as a crash (out of memory).
const RSS_LIMIT_MB: u32 = 2048;
/// Seconds one input may take; longer is reported as a crash (timeout).
const UNIT_TIMEOUT_SECS: u32 = 30;

#[derive(Debug)]
struct Settings {
    seconds: u64,
    targets: Vec<&'static Target>,
    sanitizer: &'static str,
}

fn parse_args(args: &[&str]) -> Result<Settings> {
    let mut settings = Settings { seconds: 60, targets: Vec::new(), sanitizer: "address" };
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        let value = match arg {
            "--seconds" | "--target" | "--sanitizer" => {
                *it.next().ok_or_else(|| format!("{arg} needs a value; {USAGE}"))?
            }
            _ => return Err(format!("unknown argument {arg:?}; {USAGE}")),
        };
        match arg {
            "--seconds" => {
                settings.seconds = value.parse().map_err(|e| format!("--seconds {value}: {e}; {USAGE}"))?;
                if settings.seconds == 0 {
                    return Err("--seconds must be at least 1".to_string());
                }
            }
            "--target" => {
                let target = TARGETS.iter().find(|t| t.name == value).ok_or_else(|| {
                    let names: Vec<_> = TARGETS.iter().map(|t| t.name).collect();
                    format!("no fuzz target {value:?}; the targets are {}", names.join(", "))
                })?;
                settings.targets.push(target);
            }
            _ => {
                settings.sanitizer = match value {
                    "address" => "address",
                    "none" => "none",
                    _ => return Err(format!("--sanitizer takes address or none, not {value:?}; {USAGE}")),
                }
            }
        }
    }
    if settings.targets.is_empty() {
        settings.targets = TARGETS.iter().collect();
    }
    Ok(settings)
}

/// `cargo fuzz <subcommand>` in the workspace root, on the `fuzz/` crate, building into
/// `<target>/fuzz/<sanitizer>`, with the nightly flags allowed on stable.
fn cargo_fuzz(subcommand: &str, sanitizer: &str) -> Command {
    let mut cmd = project::cargo();
    cmd.args(["fuzz", subcommand, "--fuzz-dir", "fuzz", "--sanitizer", sanitizer, "--target-dir"])
        .arg(project::target_dir().join("fuzz").join(sanitizer))
        .env("RUSTC_BOOTSTRAP", "1");
    cmd
}

pub fn run(args: &[&str]) -> Result<()> {
    let settings = parse_args(args)?;
    let installed = project::cargo().args(["fuzz", "--version"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !installed.is_ok_and(|status| status.success()) {
        return Err("cargo-fuzz is not installed: cargo install cargo-fuzz --locked".to_string());
    }

    let names: Vec<&str> = settings.targets.iter().map(|t| t.name).collect();
    project::step(&format!("cargo fuzz build ({}; sanitizer {})", names.join(", "), settings.sanitizer));
    for target in &settings.targets {
        project::run(cargo_fuzz("build", settings.sanitizer).arg(target.name))?;
    }

    let target_dir = project::target_dir();
    let (mut summary, mut failed) = (Vec::new(), Vec::new());
    for target in &settings.targets {
        project::step(&format!("fuzz {} for {} s", target.name, settings.seconds));
        let seeds = target_dir.join("fuzz-seeds").join(target.name);
        let count = write_seeds(target, &seeds)?;
        println!("{count} seeds in {}", seeds.display());
        match fuzz(target, &settings, &seeds) {
            Ok(stats) => summary.push(format!("{:<12} {stats}", target.name)),
            Err(e) => {
                eprintln!("error: {e}");
                summary.push(format!("{:<12} FAILED", target.name));
                failed.push(e);
            }
        }
    }
    project::step("fuzz summary");
    for line in &summary {
        println!("{line}");
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

/// What a finished run reports.
#[derive(Debug, Default)]
struct Stats {
    execs: Option<u64>,
    per_sec: Option<u64>,
    new_units: Option<u64>,
    peak_rss_mb: Option<u64>,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: Option<u64>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
        write!(
            f,
            "{} execs ({}/s), {} new units, peak rss {} MB",
            show(self.execs),
            show(self.per_sec),
            show(self.new_units),
            show(self.peak_rss_mb)
        )
    }
}

/// Runs one target for the settings' time; its output goes to its log, its stats and
/// any crash to the console.
fn fuzz(target: &Target, settings: &Settings, seeds: &Path) -> Result<Stats> {
    let target_dir = project::target_dir();
    let corpus = target_dir.join("fuzz-corpus").join(target.name);
    let artifacts = target_dir.join("fuzz-artifacts").join(target.name);
    let log_path = target_dir.join("fuzz-logs").join(format!("{}.log", target.name));
    for dir in [&corpus, &artifacts] {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    project::create_parent(&log_path)?;

    let mut cmd = cargo_fuzz("run", settings.sanitizer);
    // New units go to the first directory; the seeds are only read.
    cmd.arg(target.name).arg(&corpus).arg(seeds).arg("--");
    cmd.arg(format!("-max_total_time={}", settings.seconds))
        .arg(format!("-max_len={}", target.max_len))
        .arg(format!("-rss_limit_mb={RSS_LIMIT_MB}"))
        .arg(format!("-timeout={UNIT_TIMEOUT_SECS}"))
        .arg("-print_final_stats=1")
        // libFuzzer joins the prefix and the file name as strings.
        .arg(format!("-artifact_prefix={}/", artifacts.display()));
    let shown = project::show(&cmd);
    println!("{shown}");
    println!("log: {}", log_path.display());

    let mut log = File::create(&log_path).map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let (mut stats, mut crash) = (Stats::default(), None);
    // What is shown on failure: the output from the first panic or sanitizer report on,
    // else the last lines.
    let (mut report, mut tail) = (Vec::new(), Vec::new());
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let line = line.map_err(|e| format!("reading the output of `{shown}`: {e}"))?;
            writeln!(log, "{line}").map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
            let stat = |name: &str| line.strip_prefix(name).and_then(|v| v.trim().parse().ok());
            if let Some(v) = stat("stat::number_of_executed_units:") {
                stats.execs = Some(v);
            } else if let Some(v) = stat("stat::average_exec_per_sec:") {
                stats.per_sec = Some(v);
            } else if let Some(v) = stat("stat::new_units_added:") {
                stats.new_units = Some(v);
            } else if let Some(v) = stat("stat::peak_rss_mb:") {
                stats.peak_rss_mb = Some(v);
            }
            if line.starts_with("Done ") || line.starts_with("stat::") {
                println!("{line}");
            }
            // `artifact_prefix='..'; Test unit written to <path>`
            if let Some((_, path)) = line.split_once("Test unit written to ") {
                crash = Some(path.trim().to_string());
            }
            let starts_report = line.contains("panicked at") || line.contains("ERROR: ");
            if (starts_report || !report.is_empty()) && report.len() < 200 {
                report.push(line.clone());
            }
            tail.push(line);
            if tail.len() > 60 {
                tail.remove(0);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for `{shown}`: {e}"))?;
    if status.success() && crash.is_none() {
        println!("{}: {stats}", target.name);
        return Ok(stats);
    }
    eprintln!("--- from {} ---", log_path.display());
    for line in if report.is_empty() { &tail } else { &report } {
        eprintln!("{line}");
    }
    Err(match crash {
        Some(path) => format!(
            "fuzz target {} crashed ({status}); the input is {path}; reproduce with \
             RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz --sanitizer {} {} {path}, and add \
             it to tests/fuzz_regressions.rs",
            target.name, settings.sanitizer, target.name
        ),
        None => format!("fuzz target {} failed ({status}); see {}", target.name, log_path.display()),
    })
}

/// Rewrites `dir` with the seeds of `target`; returns how many.
fn write_seeds(target: &Target, dir: &Path) -> Result<usize> {
    project::fresh_dir(dir)?;
    let mut sources = vec![("tests-data", project::root().join("tests").join("data"))];
    let shared = project::root().join("..").join("shared").join("corpus").join("public");
    if shared.is_dir() {
        sources.push(("corpus", shared));
    } else {
        println!("no NumPy corpus at {}: seeding from tests/data only", shared.display());
    }
    if let Seeds::Table(ext) = target.seeds {
        return write_table_seeds(ext, dir, target.max_len);
    }
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let mut npy_files: Vec<(String, Vec<u8>)> = Vec::new();
    for (label, src) in &sources {
        for rel in project::array_files(src)? {
            let path = project::join(src, &rel);
            let bytes = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let name = format!("{label}-{}", rel.replace('/', "-"));
            match (target.seeds, rel.ends_with(".npz")) {
                (Seeds::Npz, true) => seeds.push((name, bytes)),
                (Seeds::Npy, false) => seeds.push((name, bytes)),
                (Seeds::HeaderText, false) => seeds.extend(header_seed(&bytes).map(|seed| (name, seed))),
                (Seeds::Npz, false) => npy_files.push((format!("{label}/{rel}"), bytes)),
                (Seeds::Pickle, false) => seeds.extend(pickle_seed(&bytes).map(|seed| (name, seed))),
                _ => {}
            }
        }
    }
    match target.seeds {
        Seeds::Npy => seeds.push(("record-trace.npy".to_string(), record_seed())),
        Seeds::HeaderText => seeds.extend(header_seed(&record_seed()).map(|seed| ("record-trace".to_string(), seed))),
        Seeds::Npz => seeds.extend(zip_seeds(&npy_files, target.max_len)),
        Seeds::Pickle => {}
        Seeds::StackInfo => seeds.extend(stack_info_seeds()?),
        Seeds::Table(_) => unreachable!("written above"),
    }
    // libFuzzer would cut longer inputs to -max_len: a cut `.npy` file keeps its header,
    // but a cut header text is only a syntax error.
    if target.seeds == Seeds::HeaderText {
        seeds.retain(|(_, bytes)| bytes.len() <= target.max_len);
    }
    for (name, bytes) in &seeds {
        let path = dir.join(name);
        fs::write(&path, &bytes[..bytes.len().min(target.max_len)])
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(seeds.len())
}

/// Writes into `dir` the seeds of a target of `npy convert`'s input files of extension
/// `ext`: every `.npy` fixture of `tests/data` that `npy convert` converts to it (object
/// arrays do not), and the files of `tests/data` of that extension; returns how many.
fn write_table_seeds(ext: &str, dir: &Path, max_len: usize) -> Result<usize> {
    // Its default features: no SQL, so no DataFusion to build.
    project::run(project::cargo().args(["build", "-p", "npy-cli"]))?;
    let npy = project::target_dir().join("debug").join(format!("npy{}", std::env::consts::EXE_SUFFIX));
    let data = project::root().join("tests").join("data");
    let mut count = 0;
    for rel in project::array_files(&data)? {
        if !rel.ends_with(".npy") {
            continue;
        }
        let seed = dir.join(format!("{}.{ext}", rel.trim_end_matches(".npy").replace('/', "-")));
        let status = Command::new(&npy)
            .arg("convert")
            .arg(project::join(&data, &rel))
            .arg(&seed)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {}: {e}", npy.display()))?;
        let fits = fs::metadata(&seed).is_ok_and(|m| m.len() as usize <= max_len);
        if status.success() && fits {
            count += 1;
        } else {
            let _ = fs::remove_file(&seed);
        }
    }
    for rel in foreign_files(&data, ext)? {
        let from = project::join(&data, &rel);
        let bytes = fs::read(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        if bytes.len() <= max_len {
            let path = dir.join(format!("foreign-{}", rel.replace('/', "-")));
            fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            count += 1;
        }
    }
    Ok(count)
}

/// The files under `dir` whose names end in `.ext`, as paths relative to it.
fn foreign_files(dir: &Path, ext: &str) -> Result<Vec<String>> {
    fn walk(dir: &Path, prefix: &str, ext: &str, out: &mut Vec<String>) -> std::io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &format!("{prefix}{name}/"), ext, out)?;
            } else if name.ends_with(&format!(".{ext}")) {
                out.push(format!("{prefix}{name}"));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", ext, &mut files).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    files.sort();
    Ok(files)
}

/// The `stack_info` target's seeds: the `info` file of every stack Dask wrote into
/// `tests/data/stack`.
fn stack_info_seeds() -> Result<Vec<(String, Vec<u8>)>> {
    let dir = project::root().join("tests").join("data").join("stack");
    let mut seeds = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path().join("info");
        if let Ok(bytes) = fs::read(&path) {
            let case = path.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
            seeds.push((format!("stack-{}", case.unwrap_or_default()), bytes));
        }
    }
    Ok(seeds)
}

/// The `pickle` target's input for a `.npy` file: its data, if it is an object array.
fn pickle_seed(file: &[u8]) -> Option<Vec<u8>> {
    let text = header_seed(file)?;
    let header = String::from_utf8_lossy(&text[1..]);
    if !header.contains("'descr': '|O'") {
        return None;
    }
    let field = if file[6] == 1 { 2 } else { 4 };
    Some(file[8 + field + text.len() - 1..].to_vec())
}

/// The `header` target's input for a `.npy` file: the version byte it decodes as
/// (0, 1, 2 for 1.0, 2.0, 3.0), then the header text; `None` if `file` has no such header.
fn header_seed(file: &[u8]) -> Option<Vec<u8>> {
    let (version, field) = match file.get(..8)? {
        [0x93, b'N', b'U', b'M', b'P', b'Y', 1, 0] => (0, 2),
        [0x93, b'N', b'U', b'M', b'P', b'Y', 2, 0] => (1, 4),
        [0x93, b'N', b'U', b'M', b'P', b'Y', 3, 0] => (2, 4),
        _ => return None,
    };
    let mut len_bytes = [0u8; 4];
    len_bytes[..field].copy_from_slice(file.get(8..8 + field)?);
    let len = usize::try_from(u32::from_le_bytes(len_bytes)).ok()?;
    let text = file.get(8 + field..8 + field + len)?;
    Some([&[version], text].concat())
}

/// A `.npy` file (version 1.0, as `np.save` pads it) of three records of the `record`
/// target's type, so the fuzzer starts from input that reads. Keep the descr in step
/// with the `Trace` struct of `fuzz/fuzz_targets/record.rs`.
fn record_seed() -> Vec<u8> {
    const DESCR: &str = "[('id', '<u4'), ('live', '|b1'), ('code', '<U2'), ('gain', '<f4', (3,)), \
                         ('kind', '|u1'), ('rate', '>i8'), ('at', [('x', '<f8'), ('y', '<f4')])]";
    let mut data = Vec::new();
    for (id, live, code, kind) in [(7u32, 1u8, "ab", 1u8), (8, 0, "z", 5), (9, 1, "", 6)] {
        data.extend(id.to_le_bytes());
        data.push(live);
        let mut units = code.chars().map(u32::from).chain(std::iter::repeat(0));
        for _ in 0..2 {
            data.extend(units.next().unwrap_or(0).to_le_bytes());
        }
        for gain in [1.0f32, 0.5, -2.0] {
            data.extend(gain.to_le_bytes());
        }
        data.push(kind);
        data.extend(250i64.to_be_bytes());
        data.extend(1.5f64.to_le_bytes());
        data.extend((-3.0f32).to_le_bytes());
    }
    let dict = format!("{{'descr': {DESCR}, 'fortran_order': False, 'shape': (3,), }}");
    // 10 bytes of preamble, the dict, spaces, '\n': a multiple of 64.
    let total = (10 + dict.len() + 1).div_ceil(64) * 64 - 10;
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend(u16::try_from(total).expect("a short header").to_le_bytes());
    file.extend(dict.as_bytes());
    file.resize(10 + total - 1, b' ');
    file.push(b'\n');
    file.extend(data);
    file
}

/// Stored (uncompressed) zip archives of the `.npy` fixtures, as `np.savez` writes them:
/// one per directory of `tests/data` (and of the corpus), members named after the files,
/// each archive cut off before it exceeds `max_len`.
fn zip_seeds(npy_files: &[(String, Vec<u8>)], max_len: usize) -> Vec<(String, Vec<u8>)> {
    // Archive name -> (bytes so far, with room for headers; members).
    let mut groups: BTreeMap<String, (usize, Vec<Member<'_>>)> = BTreeMap::new();
    for (rel, bytes) in npy_files {
        let (dir, file) = rel.rsplit_once('/').unwrap_or(("top", rel));
        let (size, members) = groups.entry(format!("zip-{}.npz", dir.replace('/', "-"))).or_default();
        let member_size = bytes.len() + 2 * file.len() + 100;
        if *size + member_size <= max_len {
            *size += member_size;
            members.push((file.to_string(), bytes));
        }
    }
    groups.into_iter().map(|(name, (_, members))| (name, stored_zip(&members))).collect()
}

/// A zip member: its name and bytes.
type Member<'a> = (String, &'a [u8]);

/// A zip archive with `members` stored uncompressed (method 0), no extra fields.
fn stored_zip(members: &[Member<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let offset = u32::try_from(out.len()).expect("seed archives are small");
        let (crc, size) = (crc32(data), u32::try_from(data.len()).expect("seed members are small"));
        let name_len = u16::try_from(name.len()).expect("short names");
        // Local file header: signature, version 2.0, flags, method, time, date, crc,
        // sizes, name length, extra length, name.
        out.extend(0x0403_4b50u32.to_le_bytes());
        out.extend([20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        out.extend(crc.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(name_len.to_le_bytes());
        out.extend([0, 0]);
        out.extend(name.as_bytes());
        out.extend(*data);
        // Central directory entry: as the local header, plus version made by, comment
        // length, disk, attributes and the local header's offset.
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend([20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        central.extend(crc.to_le_bytes());
        central.extend(size.to_le_bytes());
        central.extend(size.to_le_bytes());
        central.extend(name_len.to_le_bytes());
        central.extend([0; 12]);
        central.extend(offset.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let entries = u16::try_from(members.len()).expect("few members");
    let (dir_offset, dir_len) = (out.len() as u32, central.len() as u32);
    out.extend(central);
    // End of central directory: signature, disk numbers, entry counts, directory size
    // and offset, comment length.
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0, 0, 0, 0]);
    out.extend(entries.to_le_bytes());
    out.extend(entries.to_le_bytes());
    out.extend(dir_len.to_le_bytes());
    out.extend(dir_offset.to_le_bytes());
    out.extend([0, 0]);
    out
}

/// CRC-32 (ISO-HDLC, as zip uses), bit by bit: seeds are small.
fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |crc, &byte| {
        (0..8).fold(crc ^ u32::from(byte), |crc, _| if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn header_seed_takes_the_text() {
        let seed = header_seed(&record_seed()).unwrap();
        assert_eq!(seed[0], 0);
        assert!(seed[1..].starts_with(b"{'descr': [('id', '<u4')"));
        assert!(seed.ends_with(b" \n"));
        assert_eq!((seed.len() - 1 + 10) % 64, 0);
    }
}
