//! Hostile pickles of 60 MB through the CLI stay under 500 MB of resident memory (issue
//! 33): a Dask stack's `info` of deeply nested lists, of nested tuples and of many one-item
//! lists through `npy stack join`, and object `.npy` files of the same through `npy check`,
//! `npy info`, `npy dump` and `npy convert` (to Parquet text). Each is refused with an error
//! naming the file; before the decoder's budget was bounded, these took 1.7 to 4.8 GB.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use npy_core::prelude::*;

/// The bound the issue sets.
const LIMIT: u64 = 500_000_000;
/// The size of each hostile pickle.
const SIZE: usize = 60_000_000;
/// Longest a run may take (a debug build refuses each in about a second).
const DEADLINE: Duration = Duration::from_secs(120);

/// Kills the child unless it was waited for (a failed assertion, a deadline).
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `VmHWM` of a `/proc/<pid>/status` text, in bytes.
fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// Runs `npy ARGS` in `dir` to its end (within [`DEADLINE`]), sampling its peak resident
/// set every millisecond; returns the exit code, stderr and the peak.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, u64) {
    let err = dir.join("stderr");
    let child = Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut guard = Guard(child);
    let status_file = format!("/proc/{}/status", guard.0.id());
    let (start, mut peak, mut samples) = (Instant::now(), 0, 0);
    let status = loop {
        if let Some(bytes) = std::fs::read_to_string(&status_file).ok().as_deref().and_then(vm_hwm) {
            peak = peak.max(bytes);
            samples += 1;
        }
        if let Some(status) = guard.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < DEADLINE, "npy {args:?} still runs after {DEADLINE:?}");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(samples > 0, "npy {args:?}: never sampled");
    let stderr = std::fs::read_to_string(&err).unwrap();
    eprintln!("npy {args:?}: exit {:?}, peak {} MB: {}", status.code(), peak / 1_000_000, stderr.trim());
    (status.code(), stderr, peak)
}

/// `n` copies of `unit`.
fn repeat(unit: &[u8], n: usize) -> Vec<u8> {
    unit.repeat(n)
}

/// The hostile values, each pushing one value in about [`SIZE`] bytes.
fn hostile() -> [(&'static str, Vec<u8>); 3] {
    [
        ("lists", [repeat(b"]", SIZE / 2), repeat(b"a", SIZE / 2 - 1)].concat()),
        ("tuples", [b")".to_vec(), repeat(b"\x85", SIZE)].concat()),
        ("one_item_lists", [b"(".to_vec(), repeat(b"]Na", SIZE / 3), b"l".to_vec()].concat()),
    ]
}

/// A Dask stack directory whose `info` is `{'x': value}` and one block.
fn stack_dir(dir: &Path, name: &str, value: &[u8]) {
    let stack = dir.join(name);
    std::fs::create_dir(&stack).unwrap();
    std::fs::write(stack.join("info"), [&b"\x80\x02}U\x01x"[..], value, b"s."].concat()).unwrap();
    [1.0f64, 2.0].write_npy(stack.join("0.npy")).unwrap();
}

/// An object `.npy` file of one element, `value`, pickled as NumPy 1.x did.
fn object_npy(dir: &Path, name: &str, value: &[u8]) {
    let mut pickle =
        b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01K\x01\x85".to_vec();
    pickle.extend_from_slice(
        b"cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tbI00\n](",
    );
    pickle.extend_from_slice(value);
    pickle.extend_from_slice(b"etb.");
    let dict = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
    let pad = (64 - (10 + dict.len() + 1) % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(header.len() as u16).to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&pickle);
    std::fs::write(dir.join(name), file).unwrap();
}

#[test]
fn hostile_info_pickles_stay_under_500_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (name, value) in hostile() {
        stack_dir(dir.path(), name, &value);
        let (code, stderr, peak) = run(dir.path(), &["stack", "join", name, "out.npy"]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(&format!("'{name}/info'")), "{name}: {stderr}");
        assert!(peak < LIMIT, "stack join {name}: peak {peak} bytes");
        assert!(!dir.path().join("out.npy").exists());
        std::fs::remove_dir_all(dir.path().join(name)).unwrap();
    }
}

#[test]
fn hostile_object_arrays_stay_under_500_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (name, value) in hostile() {
        let file = format!("{name}.npy");
        object_npy(dir.path(), &file, &value);
        let (code, stderr, peak) = run(dir.path(), &["check", &file]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(peak < LIMIT, "check {name}: peak {peak} bytes");
        for args in [&["info", &file][..], &["dump", &file], &["convert", &file, "out.parquet"]] {
            let (_, stderr, peak) = run(dir.path(), args);
            assert!(peak < LIMIT, "{args:?}: peak {peak} bytes");
            if args[0] != "info" {
                assert!(stderr.contains(&format!("'{file}'")), "{args:?}: {stderr}");
            }
        }
        std::fs::remove_file(dir.path().join(&file)).unwrap();
    }
}
