//! `cargo xtask bench [--bytes N] [--repeat K]`: npy's read and write speed next to the
//! machine limit and NumPy, in one run, with the ratios the speed goals name.
//!
//! 1. `cargo bench --bench io -- --dir <target>/bench --bytes N --repeat K --keep`
//!    (`benches/io.rs`) writes `le.npy` (`<f8`) and `be.npy` (`>f8`) of N data bytes
//!    (default 1 GiB) and times npy's reads and write, the machine limits (page cache into a
//!    huge-page buffer; a `fallocate`d file) and a plain `std::fs::read`, K times each
//!    (default 3) after one untimed warm-up round.
//! 2. `xtask/bench.py` times `np.load` and `np.save` on the same files.
//! 3. A table of best times, GiB/s and the goal ratios (on best times) with PASS/MISS is
//!    printed and written to `<target>/bench/report.txt`; the big files are deleted.
//!
//! Benchmarks report, they do not gate: a missed goal still exits 0. A measurement that
//! cannot run or gives a wrong result is an error.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::project::{self, Result};

const USAGE: &str = "usage: cargo xtask bench [--bytes N] [--repeat K]";

/// The measurements, in table order: name (as the bench lines give it) and description.
const ROWS: &[(&str, &str)] = &[
    ("limit_read", "machine limit read: page cache -> huge-page buffer"),
    ("read_le", "npy read <f8 -> Vec<f64>"),
    ("read_be", "npy read >f8 -> Vec<f64>"),
    ("fs_read", "std::fs::read <f8 (context)"),
    ("np_load_le", "np.load <f8"),
    ("np_load_be", "np.load >f8 (stays big-endian)"),
    ("np_load_be_astype", "np.load >f8 .astype('<f8')"),
    ("limit_write", "machine limit write: fallocate + write"),
    ("write", "npy write Vec<f64> -> <f8"),
    ("np_save", "np.save <f8"),
];

/// The goals: what, numerator, denominator, the highest ratio that passes (`None`: context).
const GOALS: &[(&str, &str, &str, Option<f64>)] = &[
    ("native read / limit read", "read_le", "limit_read", Some(1.1)),
    ("native read / np.load", "read_le", "np_load_le", Some(1.0)),
    ("BE read / native read", "read_be", "read_le", Some(1.5)),
    ("write / limit write", "write", "limit_write", Some(1.1)),
    ("write / np.save", "write", "np_save", Some(1.0)),
    ("BE read / np.load(>f8).astype", "read_be", "np_load_be_astype", None),
];

/// One measurement's result.
#[derive(Debug, Clone, Copy)]
struct Timing {
    best: f64,
    median: f64,
    bytes: u64,
}

/// Runs `cargo xtask bench` with the arguments after `bench`.
pub fn run(args: &[&str]) -> Result<()> {
    let (bytes, repeat) = parse_args(args)?;
    project::step("python with numpy");
    let python = project::python_with_numpy()?;
    let dir = project::target_dir().join("bench");
    project::fresh_dir(&dir)?;
    let _cleanup = Cleanup(dir.clone());

    project::step(&format!("rust: cargo bench --bench io ({bytes} bytes, {repeat} runs each)"));
    let mut cargo = project::cargo();
    cargo.args(["bench", "--bench", "io", "--", "--dir"]).arg(&dir);
    cargo.args(["--bytes", &bytes.to_string(), "--repeat", &repeat.to_string(), "--keep"]);
    let mut timings = run_bench_lines(&mut cargo)?;

    project::step("numpy: xtask/bench.py");
    let mut numpy = Command::new(&python);
    numpy.arg(project::root().join("xtask").join("bench.py")).arg(&dir);
    numpy.args([bytes.to_string(), repeat.to_string()]);
    timings.extend(run_bench_lines(&mut numpy)?);

    project::step("report");
    let report = report(&timings, bytes, repeat);
    print!("{report}");
    let path = dir.join("report.txt");
    fs::write(&path, &report).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("report written to {}", path.display());
    Ok(())
}

fn parse_args(args: &[&str]) -> Result<(u64, u32)> {
    let (mut bytes, mut repeat) = (1u64 << 30, 3u32);
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        if !matches!(arg, "--bytes" | "--repeat") {
            return Err(format!("unknown argument {arg:?}; {USAGE}"));
        }
        let value = it.next().ok_or_else(|| format!("{arg} needs a value; {USAGE}"))?;
        if arg == "--bytes" {
            bytes = value.parse().map_err(|e| format!("--bytes {value}: {e}; {USAGE}"))?;
        } else {
            repeat = value.parse().map_err(|e| format!("--repeat {value}: {e}; {USAGE}"))?;
        }
    }
    if bytes < 16 || !bytes.is_multiple_of(8) {
        return Err(format!("--bytes must be a multiple of 8, at least 16 (got {bytes})"));
    }
    if repeat == 0 {
        return Err("--repeat must be at least 1".to_string());
    }
    Ok((bytes, repeat))
}

/// Runs `cmd`, echoing its output as it comes, and collects its
/// `bench <name> best=<s> median=<s> bytes=<n>` lines.
fn run_bench_lines(cmd: &mut Command) -> Result<BTreeMap<String, Timing>> {
    let shown = project::show(cmd);
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn().map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let mut timings = BTreeMap::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading the output of `{shown}`: {e}"))?;
            println!("{line}");
            if let Some(rest) = line.strip_prefix("bench ") {
                let (name, timing) =
                    parse_line(rest).ok_or_else(|| format!("bad bench line from `{shown}`: {line}"))?;
                timings.insert(name, timing);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for `{shown}`: {e}"))?;
    if !status.success() {
        return Err(format!("`{shown}` failed ({status})"));
    }
    Ok(timings)
}

/// Parses `<name> best=<s> median=<s> bytes=<n>`.
fn parse_line(rest: &str) -> Option<(String, Timing)> {
    let mut words = rest.split_whitespace();
    let name = words.next()?.to_string();
    let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=').map(str::to_string);
    let best = field("best")?.parse().ok()?;
    let median = field("median")?.parse().ok()?;
    let bytes = field("bytes")?.parse().ok()?;
    Some((name, Timing { best, median, bytes }))
}

/// The report: settings, the measurements and the goal ratios.
fn report(timings: &BTreeMap<String, Timing>, bytes: u64, repeat: u32) -> String {
    let mut out = String::new();
    let thp = fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_else(|_| "unknown".into());
    let _ = writeln!(
        out,
        "npy io bench: {bytes} data bytes per file ({:.3} GiB), best and median of {repeat} runs",
        gib(bytes)
    );
    let _ = writeln!(out, "transparent huge pages: {}", thp.trim());
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<54} {:>9} {:>9} {:>8}", "measurement", "best s", "median s", "GiB/s");
    for (name, what) in ROWS {
        match timings.get(*name) {
            Some(t) => {
                let rate = gib(t.bytes) / t.best;
                let _ = writeln!(out, "{:<54} {:>9.3} {:>9.3} {:>8.2}", what, t.best, t.median, rate);
            }
            None => {
                let _ = writeln!(out, "{what:<54} {:>9} {:>9} {:>8}", "n/a", "n/a", "n/a");
            }
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<34} {:>11} {:>13} {:>7}  result (on best times)",
        "goal ratio", "best ratio", "median ratio", "goal"
    );
    let mut missed = 0;
    for &(what, num, den, goal) in GOALS {
        let (Some(n), Some(d)) = (timings.get(num), timings.get(den)) else {
            let _ = writeln!(out, "{what:<34} {:>11} {:>13} {:>7}  n/a (not measured)", "n/a", "n/a", goal_text(goal));
            continue;
        };
        let (ratio, median_ratio) = (n.best / d.best, n.median / d.median);
        let result = match goal {
            Some(g) if ratio <= g => "PASS",
            Some(_) => {
                missed += 1;
                "MISS"
            }
            None => "context",
        };
        let _ = writeln!(out, "{what:<34} {ratio:>11.3} {median_ratio:>13.3} {:>7}  {result}", goal_text(goal));
    }
    let goals = GOALS.iter().filter(|g| g.3.is_some()).count();
    let _ = writeln!(out);
    if missed == 0 {
        let _ = writeln!(out, "all {goals} speed goals met");
    } else {
        let _ = writeln!(out, "{missed} of {goals} speed goals MISSED (benchmarks report, they do not fail the run)");
    }
    out
}

fn goal_text(goal: Option<f64>) -> String {
    goal.map_or_else(|| "-".to_string(), |g| format!("<= {g:.1}"))
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 30)
}

/// Deletes the big files from the bench directory when the run ends, however it ends.
#[derive(Debug)]
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        remove_big_files(&self.0);
    }
}

/// Removes everything in `dir` but `report.txt`.
fn remove_big_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name() != "report.txt" {
            let path = entry.path();
            let removed = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
            if let Err(e) = removed {
                eprintln!("warning: cannot remove {}: {e}", path.display());
            }
        }
    }
}
