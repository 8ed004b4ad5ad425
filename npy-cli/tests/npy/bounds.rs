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
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use npy_core::prelude::*;

use crate::support::s;

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

#[test]
fn fifos_given_as_inputs_are_refused_before_they_are_opened() {
    // The format sniff reads a file's first bytes and opens it again, so a FIFO never
    // worked as an input: it is refused by name, where opening it would wait for a writer.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.npy");
    [1i64, 2, 3].write_npy(&file).unwrap();
    let out = tmp.path().join("out.npy");
    for name in ["f.npy", "f.npz", "f.arrow", "f.parquet"] {
        let fifo = tmp.path().join(name);
        if !mkfifo(&fifo) {
            return;
        }
        let (f, o) = (s(&fifo), s(&out));
        let mut runs = vec![
            vec!["info", f],
            vec!["head", f],
            vec!["dump", f],
            vec!["schema", f],
            vec!["copy", f, o],
            vec!["convert", f, o],
            vec!["cat", "-o", o, s(&file), f],
            vec!["append", f, s(&file)],
            vec!["append", s(&file), f],
        ];
        let split = tmp.path().join("split");
        runs.push(vec!["stack", "split", "--rows", "1", f, s(&split)]);
        let table = format!("t={f}");
        if cfg!(feature = "sql") {
            runs.push(vec!["sql", "SELECT count(*) FROM t", "--table", &table]);
        }
        for args in &runs {
            failed(&npy(args), &[f, "is a FIFO, not a file"]);
        }
        let check = npy(&["check", f]);
        assert_eq!(check.code, Some(1), "{}", check.stderr);
        assert!(check.stdout.contains("is a FIFO, not a file"), "{}", check.stdout);
        assert!(!out.exists() && !split.exists());
    }
    // The file appended to is untouched.
    assert_eq!(Vec::<i64>::read_npy(&file).unwrap(), [1, 2, 3]);
}

/// A `.npy` file of `descr` and `shape` (as NumPy writes them) and no data: what a header
/// of zero-size elements needs.
fn header_only(dir: &Path, name: &str, descr: &str, shape: &str) -> PathBuf {
    let path = dir.join(name);
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(dict.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    fs::write(&path, bytes).unwrap();
    path
}

const E18: &str = "(1000000000000000000,)";

/// Every zero-size dtype, as a 10^18-element file in `dir`.
fn zero_size_files(dir: &Path) -> Vec<PathBuf> {
    [("s0", "'|S0'"), ("u0", "'<U0'"), ("v0", "'|V0'"), ("rec", "[]"), ("sub", "[('a', '<i4', (0,))]")]
        .iter()
        .map(|(name, descr)| header_only(dir, &format!("{name}.npy"), descr, E18))
        .collect()
}

#[test]
fn zero_size_elements_are_read_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    for file in zero_size_files(tmp.path()) {
        let f = s(&file);
        let info = npy(&["info", f]);
        ok(&info);
        assert!(info.stdout.contains("(1000000000000000000,)"), "{}", info.stdout);
        ok(&npy(&["check", f]));
        let head = npy(&["head", "-n", "3", f]);
        ok(&head);
        assert_eq!(head.stdout.lines().count(), 4, "{}", head.stdout);
        // Copied, concatenated and appended: the shapes add up, no element is visited.
        let copy = tmp.path().join("copy.npy");
        ok(&npy(&["copy", f, s(&copy)]));
        assert_eq!(fs::read(&copy).unwrap(), fs::read(&file).unwrap());
        let cat = tmp.path().join("cat.npy");
        ok(&npy(&["cat", "-o", s(&cat), f, f]));
        assert!(npy(&["info", s(&cat)]).stdout.contains("(2000000000000000000,)"));
        ok(&npy(&["append", s(&copy), f]));
        assert!(npy(&["info", s(&copy)]).stdout.contains("(2000000000000000000,)"));
        // Split into 10 blocks and joined back.
        let dir = tmp.path().join("stack");
        ok(&npy(&["stack", "split", "--rows", "100000000000000000", f, s(&dir)]));
        let joined = tmp.path().join("joined.npy");
        ok(&npy(&["stack", "join", s(&dir), s(&joined)]));
        assert_eq!(fs::read(&joined).unwrap(), fs::read(&file).unwrap());
        for p in [&copy, &cat, &joined] {
            fs::remove_file(p).unwrap();
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn zero_size_rows_side_by_side_split_and_join_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = header_only(tmp.path(), "t.npy", "'|S0'", "(1000000000000000000, 3)");
    let dir = tmp.path().join("stack");
    ok(&npy(&["stack", "split", "--rows", "1", "--axis", "1", s(&file), s(&dir)]));
    let joined = tmp.path().join("j.npy");
    ok(&npy(&["stack", "join", s(&dir), s(&joined)]));
    assert_eq!(fs::read(&joined).unwrap(), fs::read(&file).unwrap());
}

#[test]
fn zero_size_elements_are_refused_as_tables_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = zero_size_files(tmp.path());
    // Rows of no bytes of a dtype that has some: (10^18, 0).
    files.push(header_only(tmp.path(), "empty_rows.npy", "'<f8'", "(1000000000000000000, 0)"));
    for file in &files {
        for out in ["o.arrow", "o.parquet", "o.npz", "o.npy"] {
            let out = tmp.path().join(out);
            let ran = npy(&["convert", s(file), s(&out)]);
            failed(&ran, &[s(file), "1000000000000000000 rows that take no bytes", "over 2147483647"]);
            assert!(!out.exists());
        }
    }
    // A member of an archive, alone or as a column.
    let archive = tmp.path().join("z.npz");
    let mut z = npy_core::npz::Writer::create(&archive).unwrap();
    z.add("a", &npy_core::NpyReader::from_path(&files[0]).unwrap().read::<DynArray>().unwrap()).unwrap();
    z.finish().unwrap();
    let out = tmp.path().join("o.arrow");
    failed(&npy(&["convert", s(&archive), s(&out)]), &[s(&archive), "member 'a.npy'", "rows that take no bytes"]);
    failed(&npy(&["convert", "--member", "a", s(&archive), s(&out)]), &["member 'a.npy'", "rows that take no bytes"]);
    // Rows within the limit convert (an empty record has no columns: rows only).
    let small = header_only(tmp.path(), "small.npy", "[]", "(5000000,)");
    ok(&npy(&["convert", s(&small), s(&out)]));
    let back = tmp.path().join("back.npy");
    ok(&npy(&["convert", s(&out), s(&back)]));
    assert_eq!(fs::read(&back).unwrap(), fs::read(&small).unwrap());
}

#[cfg(feature = "sql")]
#[test]
fn zero_size_elements_are_refused_as_sql_tables_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let file = header_only(tmp.path(), "s0.npy", "'|S0'", E18);
    let table = format!("t={}", s(&file));
    let ran = npy(&["sql", "SELECT count(*) FROM t WHERE \"values\" = ''", "--table", &table]);
    failed(&ran, &["s0.npy", "rows that take no bytes"]);
}

#[test]
fn wide_rows_of_zero_size_elements_show_their_first_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let wide = header_only(tmp.path(), "w.npy", "'|S0'", "(3, 100000000000000000)");
    let head = npy(&["head", s(&wide)]);
    ok(&head);
    let lines: Vec<&str> = head.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", &head.stdout[..head.stdout.len().min(200)]);
    assert!(lines[0].starts_with("#  [0]  [1]") && lines[0].ends_with("[999]  …"), "{}", &lines[0][..200]);
    assert!(lines[1].starts_with("0  b''  b''") && lines[1].ends_with("b''  …"), "{}", &lines[1][..200]);
    // The same in Fortran order.
    let fortran = tmp.path().join("f.npy");
    let mut bytes = fs::read(&wide).unwrap();
    let at = bytes.windows(5).position(|w| w == b"False").unwrap();
    bytes[at..at + 5].copy_from_slice(b"True ");
    fs::write(&fortran, bytes).unwrap();
    let head_f = npy(&["head", s(&fortran)]);
    ok(&head_f);
    assert!(head_f.stdout == head.stdout, "{}", &head_f.stdout[..head_f.stdout.len().min(200)]);
    // An element of more values of no bytes than anything would show.
    let nested = header_only(tmp.path(), "n.npy", "[('a', [], (1073741824,))]", "(3,)");
    for command in ["head", "dump"] {
        failed(&npy(&[command, s(&nested)]), &["n.npy", "an element holds 1073741825 values of no bytes"]);
    }
}

#[test]
fn dump_of_zero_size_elements_streams_until_its_reader_stops() {
    // 10^18 lines: the first come at once, and a closed pipe ends the dump.
    let tmp = tempfile::tempdir().unwrap();
    let file = header_only(tmp.path(), "s0.npy", "'|S0'", E18);
    let child = Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(["dump", s(&file)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut guard = Guard(child);
    let mut first = [0u8; 12];
    guard.0.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    assert_eq!(&first, b"\"b''\"\n\"b''\"\n");
    drop(guard.0.stdout.take());
    let start = Instant::now();
    while guard.0.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < HUNG, "npy dump goes on after its reader stopped");
        std::thread::sleep(Duration::from_millis(10));
    }
}
