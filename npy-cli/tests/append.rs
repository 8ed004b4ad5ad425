//! `npy append` and `npy cat`: rows appended in place and files concatenated, read back
//! with npy-core; files that differ are refused naming them; and appends killed at random
//! moments never leave a file that does not load with the old or the new length.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use npy_core::append::{Appender, Recovery};
use npy_core::prelude::*;
use npy_core::Array;

fn npy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_npy")).args(args).output().expect("run npy")
}

fn ok(output: &Output) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write(dir: &Path, name: &str, values: &[i64]) -> PathBuf {
    let path = dir.join(name);
    values.to_vec().write_npy(&path).unwrap();
    path
}

#[test]
fn append_and_cat_give_the_rows_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "t.npy", &[1, 2]);
    let a = write(dir.path(), "a.npy", &[3]);
    let b = write(dir.path(), "b.npy", &[4, 5, 6]);
    ok(&npy(&["append", s(&t), s(&a), s(&b)]));
    assert_eq!(Vec::<i64>::read_npy(&t).unwrap(), [1, 2, 3, 4, 5, 6]);
    let out = dir.path().join("out.npy");
    ok(&npy(&["cat", s(&b), s(&a), s(&t), "-o", s(&out)]));
    assert_eq!(Vec::<i64>::read_npy(&out).unwrap(), [4, 5, 6, 3, 1, 2, 3, 4, 5, 6]);
    // 2-D rows: (1, 2) + (2, 2).
    let m = dir.path().join("m.npy");
    Array::from_shape_vec(vec![1, 2], vec![1.5f32, 2.5]).unwrap().write_npy(&m).unwrap();
    let n = dir.path().join("n.npy");
    Array::from_shape_vec(vec![2, 2], vec![3.5f32, 4.5, 5.5, 6.5]).unwrap().write_npy(&n).unwrap();
    let mn = dir.path().join("mn.npy");
    ok(&npy(&["cat", s(&m), s(&n), "-o", s(&mn)]));
    let back = Array::<f32>::read_npy(&mn).unwrap();
    assert_eq!((back.shape(), back.as_slice()), (&[3, 2][..], &[1.5f32, 2.5, 3.5, 4.5, 5.5, 6.5][..]));
}

#[test]
fn files_that_differ_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "t.npy", &[1, 2]);
    let floats = dir.path().join("floats.npy");
    [0.5f64].write_npy(&floats).unwrap();
    let out = npy(&["append", s(&t), s(&floats)]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("floats.npy") && stderr.contains("its dtype is '<f8', not '<i8'"), "{stderr}");
    assert_eq!(Vec::<i64>::read_npy(&t).unwrap(), [1, 2]);
    let cat = dir.path().join("cat.npy");
    let out = npy(&["cat", s(&t), s(&floats), "-o", s(&cat)]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot follow"), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "nothing written beside them: {names:?}");
}

/// 50 `npy append`s of 200,000 rows, each killed after a pseudo-random delay of up to 1.5
/// times an append's time (so before, during and after their writes and syncs): after every kill the file loads with its old length or its new
/// one, with the right values, and a tail left by the killed append is trimmed
/// (`Appender::recover`) for the next append.
#[test]
fn appends_killed_at_random_moments_never_tear_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 200_000i64;
    let chunk: Vec<i64> = (0..rows).collect();
    let more = write(dir.path(), "more.npy", &chunk);
    let target = write(dir.path(), "target.npy", &[-1, -2, -3]);
    // One append left to finish: kills come within 1.5 times its time, on any machine.
    let started = std::time::Instant::now();
    ok(&npy(&["append", s(&target), s(&more)]));
    let span = (started.elapsed().as_micros() as u64 * 3 / 2).max(1);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut complete, mut torn) = (0, 0);
    for kill in 0..50 {
        let before = Vec::<i64>::read_npy(&target).unwrap().len();
        let mut child = Command::new(env!("CARGO_BIN_EXE_npy")).args(["append", s(&target), s(&more)]).spawn().unwrap();
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        std::thread::sleep(Duration::from_micros((x >> 33) % span));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let values: Vec<i64> = Vec::read_npy(&target).unwrap_or_else(|e| panic!("kill {kill}: {e}"));
        assert!(values.len() == before || values.len() == before + rows as usize, "kill {kill}: {} rows", values.len());
        assert_eq!(values[..3], [-1, -2, -3]);
        for (k, v) in values[3..].iter().enumerate() {
            assert_eq!(*v, k as i64 % rows, "kill {kill}: row {}", k + 3);
        }
        if values.len() > before {
            complete += 1;
        }
        let tail = Appender::open(&target).unwrap().tail_bytes();
        if tail > 0 {
            if torn == 0 {
                // One torn file for NumPy in CI: it must load the old length.
                leave_for_numpy("torn", &target, |expect| values.write_npy(expect).unwrap());
            }
            torn += 1;
            // What the killed append wrote past the data: cut off for the next append.
            assert_eq!(Appender::recover(&target, Recovery::Trim).unwrap(), values.len(), "kill {kill}");
        }
        if status.success() {
            assert_eq!(values.len(), before + rows as usize, "kill {kill}: a finished append counts its rows");
        }
    }
    // Kills came before, during and after the writes.
    assert!(complete > 0, "no append completed before its kill: the delays are too short");
    assert!(complete < 50, "every append completed before its kill: the delays are too long");
    assert!(torn > 0, "no kill landed between an append's rows and its header");
    eprintln!("{complete} appends completed, {torn} left a tail that was trimmed");
}

/// `target/append-check`, where files go for NumPy and npy-append-array to read in CI
/// (`xtask/append_check.py`): `<case>.npy` beside `<case>.expect.npy`, the array it must
/// hold, written whole by `write_npy`.
fn check_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/append-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn leave_for_numpy(case: &str, file: &Path, expected: impl FnOnce(&Path)) {
    let dir = check_dir();
    std::fs::copy(file, dir.join(format!("{case}.npy"))).unwrap();
    expected(&dir.join(format!("{case}.expect.npy")));
}

/// A record with padding (`align=True`) and a big-endian field.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Shot {
    flag: u8,
    t0: f64,
    #[npy(endian = "big")]
    gain: f32,
}

fn shot(i: usize) -> Shot {
    Shot { flag: (i % 3) as u8, t0: i as f64 * 0.25, gain: i as f32 - 7.5 }
}

/// Records appended in place by `Appender` and by `npy append`, left for NumPy (which must
/// load them as the whole array written at once) and for npy-append-array (which appends
/// to them) in CI.
#[test]
fn appended_records_are_left_for_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<Shot> = (0..40).map(shot).collect();
    let path = dir.path().join("shots.npy");
    all[..10].to_vec().write_npy(&path).unwrap();
    Appender::open(&path).unwrap().append(&all[10..25]).unwrap();
    let more = dir.path().join("more.npy");
    all[25..].to_vec().write_npy(&more).unwrap();
    ok(&npy(&["append", s(&path), s(&more)]));
    assert_eq!(Vec::<Shot>::read_npy(&path).unwrap(), all);
    leave_for_numpy("records", &path, |expect| all.write_npy(expect).unwrap());
}
