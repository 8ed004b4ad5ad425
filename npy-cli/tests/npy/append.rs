//! `npy append` and `npy cat`: rows appended in place and files concatenated, read back
//! with npy-core; files that differ are refused naming them; and appends killed at random
//! moments never leave a file that does not load with the old or the new length.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use npy_core::append::{Appender, Recovery};
use npy_core::prelude::*;
use npy_core::Array;

use crate::support::{npy, ok, s};

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
        let tail = Appender::from_path(&target).unwrap().tail_bytes();
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
    Appender::from_path(&path).unwrap().append(&all[10..25]).unwrap();
    let more = dir.path().join("more.npy");
    all[25..].to_vec().write_npy(&more).unwrap();
    ok(&npy(&["append", s(&path), s(&more)]));
    assert_eq!(Vec::<Shot>::read_npy(&path).unwrap(), all);
    leave_for_numpy("records", &path, |expect| all.write_npy(expect).unwrap());
}

/// Children started by a test, killed and reaped when it ends (also when it fails).
#[derive(Default)]
struct Children(Vec<std::process::Child>);

impl Children {
    fn spawn(&mut self, cmd: &mut Command) {
        self.0.push(cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap());
    }

    /// Waits for every child (at most 120 s in all: a hang detector, not a speed check)
    /// and returns their outputs, in order.
    fn wait_all(&mut self) -> Vec<Output> {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while self.0.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
            assert!(std::time::Instant::now() < deadline, "a child still runs after 120 s (waits forever?)");
            std::thread::sleep(Duration::from_millis(10));
        }
        self.0.drain(..).map(|c| c.wait_with_output().unwrap()).collect()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The values appender `who` appends in `round`: distinct, telling which append a row
/// came from and where in it.
fn part(who: i64, round: i64, rows: i64) -> Vec<i64> {
    (0..rows).map(|k| who * 10_000_000 + round * 10_000 + k).collect()
}

/// `values` are whole parts, each once: every append of every appender, in one piece, in
/// each appender's order, none lost.
fn parts_once(values: &[i64], appenders: i64, rounds: i64, rows: impl Fn(i64, i64) -> i64) {
    let mut next = vec![0i64; appenders as usize];
    let mut at = 0;
    while at < values.len() {
        let (who, round) = (values[at] / 10_000_000, values[at] / 10_000 % 1_000);
        assert!((0..appenders).contains(&who) && round == next[who as usize], "row {at}: {}", values[at]);
        let n = rows(who, round) as usize;
        assert!(at + n <= values.len(), "the append at row {at} is cut short");
        assert_eq!(values[at..at + n], part(who, round, n as i64)[..], "the append at row {at} is not whole");
        next[who as usize] += 1;
        at += n;
    }
    assert_eq!(next, vec![rounds; appenders as usize], "appends lost");
}

/// Rounds of the concurrent tests: `NPY_APPEND_ROUNDS` (default 10: CI-sized).
fn rounds() -> i64 {
    std::env::var("NPY_APPEND_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(10)
}

/// 4 `npy append`s at once onto one target, for several rounds (the issue's
/// `npy append t.npy m0.npy & npy append t.npy m1.npy & wait` loop): every append exits
/// 0, every row appended is in the file once, each append in one piece, and `npy check`
/// passes. Left for NumPy, which must load exactly these rows (`xtask/append_check.py`).
#[test]
fn concurrent_appends_each_land_once() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "t.npy", &[]);
    let (appenders, rounds) = (4, rounds());
    let rows = |who: i64, round: i64| 200 + (who * 37 + round * 11) % 300;
    for round in 0..rounds {
        let mut children = Children::default();
        for who in 0..appenders {
            let part = write(dir.path(), &format!("p{who}_{round}.npy"), &part(who, round, rows(who, round)));
            children.spawn(Command::new(env!("CARGO_BIN_EXE_npy")).args(["append", s(&target), s(&part)]));
        }
        for (who, out) in children.wait_all().iter().enumerate() {
            assert!(out.status.success(), "round {round}, appender {who}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let values = Vec::<i64>::read_npy(&target).unwrap();
    parts_once(&values, appenders, rounds, rows);
    ok(&npy(&["check", s(&target)]));
    leave_for_numpy("concurrent", &target, |expect| {
        let mut sorted = values.clone();
        sorted.sort_unstable();
        sorted.write_npy(expect).unwrap();
    });
    eprintln!("{appenders} x {rounds} concurrent appends: {} rows, each once", values.len());
}

/// The child side of `long_lived_appenders_in_processes_take_turns`: with
/// `NPY_APPENDER_TARGET` and `NPY_APPENDER_WHO` set, opens one `Appender` and appends
/// `NPY_APPENDER_ROUNDS` parts through it. Returns at once without them.
#[test]
fn child_appends_through_one_appender() {
    let (Ok(target), Ok(who), Ok(rounds)) =
        (std::env::var("NPY_APPENDER_TARGET"), std::env::var("NPY_APPENDER_WHO"), std::env::var("NPY_APPENDER_ROUNDS"))
    else {
        return;
    };
    let (who, rounds): (i64, i64) = (who.parse().unwrap(), rounds.parse().unwrap());
    let mut a = Appender::from_path(&target).unwrap();
    for round in 0..rounds {
        a.append(&part(who, round, long_lived_rows(who, round))).unwrap();
    }
}

fn long_lived_rows(who: i64, round: i64) -> i64 {
    1 + (who * 53 + round * 17) % 400
}

/// Processes each holding one `Appender` open for all their appends, with `npy append`s
/// running meanwhile: the appends interleave, each whole, none lost.
#[test]
fn long_lived_appenders_in_processes_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "t.npy", &[]);
    let rounds = rounds() * 3;
    let mut children = Children::default();
    for who in 0..3 {
        children.spawn(
            // This test binary again, running that one test (by its name in the binary).
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "append::child_appends_through_one_appender", "--nocapture", "--test-threads=1"])
                .env("NPY_APPENDER_TARGET", &target)
                .env("NPY_APPENDER_WHO", who.to_string())
                .env("NPY_APPENDER_ROUNDS", rounds.to_string()),
        );
    }
    // A fourth appender: `npy append`, one process per part.
    for round in 0..rounds {
        let part = write(dir.path(), &format!("p3_{round}.npy"), &part(3, round, long_lived_rows(3, round)));
        ok(&npy(&["append", s(&target), s(&part)]));
    }
    for (who, out) in children.wait_all().iter().enumerate() {
        assert!(out.status.success(), "appender {who}: {}", String::from_utf8_lossy(&out.stderr));
    }
    parts_once(&Vec::<i64>::read_npy(&target).unwrap(), 4, rounds, long_lived_rows);
    ok(&npy(&["check", s(&target)]));
}

/// `--no-wait` while another process holds the target's lock: exit 1 at once, naming the
/// file, nothing appended. Without it, `npy append` waits for the lock and then appends.
#[test]
fn no_wait_fails_at_once_and_the_default_waits() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "t.npy", &[1, 2]);
    let more = write(dir.path(), "more.npy", &[3]);
    let holder = std::fs::File::open(&target).unwrap();
    holder.lock().unwrap();
    let out = npy(&["append", "--no-wait", s(&target), s(&more)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("another process is appending to '{}'", target.display())), "{stderr}");
    let out = npy(&["append", "--no-wait", "--recover", "trim", s(&target)]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let mut waiting = Children::default();
    waiting.spawn(Command::new(env!("CARGO_BIN_EXE_npy")).args(["append", s(&target), s(&more)]));
    std::thread::sleep(Duration::from_millis(300));
    assert!(waiting.0[0].try_wait().unwrap().is_none(), "npy append did not wait for the lock");
    assert_eq!(Vec::<i64>::read_npy(&target).unwrap(), [1, 2]);
    holder.unlock().unwrap();
    ok(&waiting.wait_all()[0]);
    assert_eq!(Vec::<i64>::read_npy(&target).unwrap(), [1, 2, 3]);
}

/// `npy check` on a file with rows after its data: while another process holds the
/// append lock, an append in progress (a note, exit 0, and the array is still checked);
/// with the lock free, a problem naming `--recover`, and `npy append --recover` makes the
/// file whole.
#[test]
fn check_knows_an_append_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "t.npy", &[1, 2]);
    let mut f = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
    std::io::Write::write_all(&mut f, &3i64.to_le_bytes()).unwrap();
    drop(f);
    let holder = std::fs::File::open(&target).unwrap();
    holder.lock().unwrap();
    let out = npy(&["check", s(&target)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("note: an append is in progress"), "{stdout}");
    assert!(stdout.contains("1 file checked, 0 with problems"), "{stdout}");
    holder.unlock().unwrap();
    let out = npy(&["check", s(&target)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("problem: 8 bytes after the array's data"), "{stdout}");
    assert!(stdout.contains("npy append --recover adopt|trim"), "{stdout}");
    ok(&npy(&["append", "--recover", "adopt", s(&target)]));
    ok(&npy(&["check", s(&target)]));
    assert_eq!(Vec::<i64>::read_npy(&target).unwrap(), [1, 2, 3]);
}

/// `npy check` running over and over while `npy append`s grow the file: never a problem
/// (the tail it sees is an append in progress, or gone when it looks again).
#[test]
fn check_during_appends_finds_no_problem() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "t.npy", &[]);
    let rounds = rounds() * 2;
    let big = write(dir.path(), "big.npy", &(0..200_000).collect::<Vec<i64>>());
    let (mut checks, mut in_progress) = (0, 0);
    for round in 0..rounds {
        let mut appending = Children::default();
        appending.spawn(Command::new(env!("CARGO_BIN_EXE_npy")).args(["append", s(&target), s(&big)]));
        while appending.0[0].try_wait().unwrap().is_none() {
            let out = npy(&["check", s(&target)]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "round {round}, check {checks}: {stdout}");
            in_progress += usize::from(stdout.contains("an append is in progress"));
            checks += 1;
        }
        ok(&appending.wait_all()[0]);
    }
    assert_eq!(Vec::<i64>::read_npy(&target).unwrap().len(), 200_000 * rounds as usize);
    eprintln!("{checks} checks during {rounds} appends, {in_progress} saw one in progress");
}
