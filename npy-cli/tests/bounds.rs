//! Bounded resources on hostile input (issue 33, item 4): a stack of thousands of blocks
//! side by side joins under a low limit of open files; FIFOs where the tool expects files
//! are refused before anything opens them (opening a FIFO waits for a writer); arrays of
//! 10^18 zero-size elements (`S0`, `U0`, `V0`, `[]`, a subarray of shape 0) finish at
//! once in every subcommand, with a right result or an error naming the file.
//!
//! Every child runs under a [`Guard`] that kills it when dropped (also when the test
//! fails) and bounds the wait for it: a hang fails the test instead of stalling CI.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use npy_core::prelude::*;

/// The longest a child may run before it counts as hung (a bound on the wait, far above
/// what any of these take; not a timing assertion).
const HUNG: Duration = Duration::from_secs(120);

/// A child process, killed and reaped when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a finished child said.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` to its end (stdout and stderr captured, stdin empty), failing the test if it
/// is still running after [`HUNG`].
fn run(mut cmd: Command) -> Ran {
    let what = format!("{cmd:?}");
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut guard = Guard(child);
    // Drained on threads, so that a child writing much never blocks on a full pipe.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(guard.0.stdout.take().unwrap()));
    let err = drain(Box::new(guard.0.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < HUNG, "{what} hangs");
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran { code: status.code(), stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

fn npy(args: &[&str]) -> Ran {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_npy"));
    cmd.args(args);
    run(cmd)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(ran: &Ran) {
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
}

fn failed(ran: &Ran, says: &[&str]) {
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    for s in says {
        assert!(ran.stderr.contains(s), "{:?} not in {}", s, ran.stderr);
    }
}

/// Makes a FIFO at `path` with the `mkfifo` command; false (with a message) without one.
fn mkfifo(path: &Path) -> bool {
    match Command::new("mkfifo").arg(path).status() {
        Ok(status) if status.success() => true,
        other => {
            eprintln!("skipped: no mkfifo command ({other:?})");
            false
        }
    }
}

#[test]
fn thousands_of_blocks_side_by_side_join_under_a_low_open_file_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.npy");
    let data: Vec<i32> = (0..20 * 3000).collect();
    npy_core::Array::from_shape_vec(vec![20, 3000], data).unwrap().write_npy(&file).unwrap();
    let dir = tmp.path().join("stack");
    let split = npy(&["stack", "split", "--rows", "1", "--axis", "1", s(&file), s(&dir)]);
    ok(&split);
    assert!(split.stdout.contains("3000 blocks of up to 1 along axis 1"), "{}", split.stdout);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 3001);
    // Joined under 256 open files: blocks are opened as they are reached.
    let joined = tmp.path().join("j.npy");
    let script = format!("ulimit -n 256 && exec \"$0\" stack join '{}' '{}'", s(&dir), s(&joined));
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_npy"));
    ok(&run(cmd));
    assert_eq!(fs::read(&joined).unwrap(), fs::read(&file).unwrap());
    // Without info too (the blocks' headers say the same).
    fs::remove_file(dir.join("info")).unwrap();
    fs::remove_file(&joined).unwrap();
    let script = format!("ulimit -n 256 && exec \"$0\" stack join --axis 1 '{}' '{}'", s(&dir), s(&joined));
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_npy"));
    ok(&run(cmd));
    assert_eq!(fs::read(&joined).unwrap(), fs::read(&file).unwrap());
}

#[test]
fn fifos_in_a_stack_are_refused_before_they_are_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.npy");
    [1i64, 2, 3, 4].write_npy(&file).unwrap();
    let dir = tmp.path().join("stack");
    ok(&npy(&["stack", "split", "--rows", "2", s(&file), s(&dir)]));
    let out = tmp.path().join("j.npy");
    // A FIFO named info: nothing writes it, so opening it would wait forever.
    fs::remove_file(dir.join("info")).unwrap();
    if !mkfifo(&dir.join("info")) {
        return;
    }
    failed(&npy(&["stack", "join", s(&dir), s(&out)]), &["info", "is a FIFO, not a file"]);
    // A FIFO named as a block, with info and without.
    fs::remove_file(dir.join("info")).unwrap();
    fs::remove_file(dir.join("1.npy")).unwrap();
    assert!(mkfifo(&dir.join("1.npy")));
    failed(&npy(&["stack", "join", s(&dir), s(&out)]), &["1.npy", "is a FIFO, not a file"]);
    let dir2 = tmp.path().join("stack2");
    ok(&npy(&["stack", "split", "--rows", "2", s(&file), s(&dir2)]));
    fs::remove_file(dir2.join("0.npy")).unwrap();
    assert!(mkfifo(&dir2.join("0.npy")));
    failed(&npy(&["stack", "join", s(&dir2), s(&out)]), &["0.npy", "is a FIFO, not a file"]);
    // A directory named as a block.
    fs::remove_file(dir2.join("0.npy")).unwrap();
    fs::create_dir(dir2.join("0.npy")).unwrap();
    failed(&npy(&["stack", "join", s(&dir2), s(&out)]), &["0.npy", "is a directory, not a file"]);
    assert!(!out.exists());
}
