//! `npy stack split` and `npy stack join`: NumPy's fixtures split into stacks and joined
//! back byte for byte, the stacks Dask wrote joined into NumPy's arrays, refusals (a
//! hostile `info` runs nothing; a directory that is not empty) with exit code 1 naming the
//! file. The split fixtures are left in `target/stack-check` beside their arrays, where
//! CI's `xtask/stack_check.py` has Dask compute over them.

use std::fs;
use std::path::Path;
use std::process::Output;

use npy_core::prelude::*;
use npy_core::stack::Stack;
use npy_core::DynArray;

use crate::support::{fixture as data, npy, ok, s};

fn failed(output: &Output, says: &str) {
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains(says), "{err}");
}

#[test]
fn fixtures_split_and_join_back_byte_for_byte() {
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/stack-check");
    fs::create_dir_all(&check).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // (fixture, rows, axis): records of every layout, Fortran order, byte orders, text.
    let cases = [
        ("record/trace_aligned.npy", 3, 0),
        ("record/trace_packed.npy", 4, 0),
        ("record/nested_3_levels.npy", 1, 0),
        ("record/subarray_of_record.npy", 2, 0),
        ("record/titles.npy", 2, 0),
        ("record/3x2_F.npy", 1, 1),
        ("record/big_endian.npy", 2, 0),
        ("shape/2x3x4_F_f8.npy", 2, 2),
        ("shape/2x3x4_F_be_u2.npy", 2, 1),
        ("shape/2x3x4_C_f8.npy", 3, 1),
        ("shape/2x2_F_U3.npy", 1, 0),
        ("datetime/be_M8_25s.npy", 2, 0),
        ("datetime/le_M8_ns.npy", 3, 0),
    ];
    for (fixture, rows, axis) in cases {
        let file = data("").join(fixture);
        let name = format!("cli_{}_axis{axis}", fixture.replace(['/', '.'], "_"));
        let dir = check.join(&name);
        let _ = fs::remove_dir_all(&dir);
        ok(&npy(&["stack", "split", s(&file), s(&dir), "--rows", &rows.to_string(), "--axis", &axis.to_string()]));
        fs::copy(&file, check.join(format!("{name}.npy"))).unwrap();
        let stack = Stack::from_path(&dir).unwrap();
        assert_eq!(stack.axis(), axis, "{name}");
        assert!(stack.info().chunks[axis].iter().all(|&l| l <= rows), "{name}");
        let original = DynArray::read_npy(&file).unwrap();
        let joined = tmp.path().join("j.npy");
        ok(&npy(&["stack", "join", s(&dir), s(&joined)]));
        // The same array back: NumPy's own file, bytes and all, when the order is kept.
        let back = DynArray::read_npy(&joined).unwrap();
        assert_eq!((back.dtype(), back.shape()), (original.dtype(), original.shape()), "{name}");
        if back.fortran_order() == original.fortran_order() {
            assert_eq!(fs::read(&joined).unwrap(), fs::read(&file).unwrap(), "{name}");
        }
    }
    let left = fs::read_dir(&check)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("cli_"))
        .count();
    assert!(left >= 16, "{left} files and stacks left");
}

#[test]
fn stacks_dask_wrote_join_into_numpys_arrays() {
    let tmp = tempfile::tempdir().unwrap();
    let mut joined_any = 0;
    for entry in fs::read_dir(data("stack")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let out = tmp.path().join("out.npy");
        ok(&npy(&["stack", "join", s(&dir), s(&out)]));
        let numpy = DynArray::read_npy(dir.with_extension("npy")).unwrap();
        let ours = DynArray::read_npy(&out).unwrap();
        assert_eq!((ours.dtype(), ours.shape()), (numpy.dtype(), numpy.shape()), "{}", dir.display());
        if ours.fortran_order() == numpy.fortran_order() {
            assert_eq!(ours.data(), numpy.data(), "{}", dir.display());
        }
        joined_any += 1;
    }
    assert!(joined_any >= 10);
}

#[test]
fn refusals_name_the_file_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.npy");
    (0..10i64).collect::<Vec<_>>().write_npy(&file).unwrap();
    // A directory that is not empty.
    let full = tmp.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("notes.txt"), "x").unwrap();
    failed(&npy(&["stack", "split", s(&file), s(&full), "--rows", "3"]), "not empty");
    let usage = |o: Output, says: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains(says));
    };
    usage(npy(&["stack", "split", s(&file), s(&tmp.path().join("z")), "--rows", "0"]), "at least 1");
    usage(
        npy(&["stack", "split", s(&file), s(&tmp.path().join("z")), "--rows", "2", "--axis", "1"]),
        "axis 1 is out of range",
    );
    // A hostile info: `pickle.load` would run `touch`; npy runs nothing.
    let dir = tmp.path().join("s");
    ok(&npy(&["stack", "split", s(&file), s(&dir), "--rows", "5"]));
    let sentinel = tmp.path().join("pwned");
    let mut pickle =
        b"\x80\x04}(\x8c\x06chunksK\x05K\x05\x86\x85\x8c\x05dtype\x8c\x05posix\x8c\x06system\x93\x8c".to_vec();
    let command = format!("touch {}", sentinel.display());
    pickle.push(command.len() as u8);
    pickle.extend_from_slice(command.as_bytes());
    pickle.extend_from_slice(b"\x85R\x8c\x04axisK\x00u.");
    fs::write(dir.join("info"), &pickle).unwrap();
    let out = tmp.path().join("out.npy");
    failed(&npy(&["stack", "join", s(&dir), s(&out)]), "global 'posix.system' is not allowed");
    assert!(!sentinel.exists() && !out.exists());
    // Without its info the blocks still say the whole array.
    fs::remove_file(dir.join("info")).unwrap();
    ok(&npy(&["stack", "join", s(&dir), s(&out)]));
    assert_eq!(Vec::<i64>::read_npy(&out).unwrap(), (0..10).collect::<Vec<_>>());
    failed(&npy(&["stack", "join", s(&tmp.path().join("nothing")), s(&out)]), "nothing");
    let mut left: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["a.npy", "full", "out.npy", "s"]);
    // Usage errors exit 2.
    assert_eq!(npy(&["stack", "split", s(&file), s(&dir)]).status.code(), Some(2));
}
