//! The `npy` binary: output, exit codes and one-line errors.

use std::path::Path;
use std::process::Command;

use crate::support::{fixture, npy, text};

#[test]
fn info_describes_the_header() {
    let f = fixture("shape/3x4_F_i4.npy");
    let out = npy(&["info", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for want in [
        "version:       1.0",
        "header length: 118",
        "data offset:   128",
        "descr:         '<i4'",
        "shape:         (3, 4)",
        "fortran",
        "elements:      12",
        "data bytes:    48",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    let rec = npy(&["info", fixture("record/trace_aligned.npy").to_str().unwrap()]);
    let s = text(&rec.stdout);
    assert!(s.contains("receiver.x") && s.contains("samples"), "{s}");
}

/// An archive's members are a table under a heading row.
#[test]
fn info_lists_members_under_headings() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("two.npz");
    let mut z = npy_core::npz::Writer::create(&archive).unwrap();
    z.add("x", &[1.5f64, 2.5]).unwrap();
    z.add_with("grid", &[1i16; 6], npy_core::npz::Compression::Deflated { level: 6 }).unwrap();
    z.finish().unwrap();
    let out = npy(&["info", archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<Vec<&str>> = s.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["member", "compression", "stored", "bytes", "bytes", "order", "shape", "descr"], "{s}");
    assert_eq!(lines[1], ["x.npy", "stored", "144", "144", "C", "(2,)", "'<f8'"], "{s}");
    assert_eq!(lines[2][..2], ["grid.npy", "deflated"], "{s}");
    assert_eq!(lines[2][3..], ["140", "C", "(6,)", "'<i2'"], "{s}");
    assert_eq!(lines.len(), 3, "{s}");
}

/// A member whose header is ~150 KB (np.savez of a record of 3,000 fields with long
/// names) and a `<U70000` value: rows keep to 100 columns, the descr cut (whole with
/// `--full-descr`, where cells wider than `format!` pads, 65535, are shown whole).
#[test]
fn info_and_head_show_cells_of_any_width() {
    let dir = tempfile::tempdir().unwrap();
    let fields: Vec<String> =
        (0..3000).map(|i| format!("('a_field_with_a_rather_long_descriptive_name_{i:05}', '<f4')")).collect();
    let dtype: npy_core::dtype::DType = format!("[{}]", fields.join(", ")).parse().unwrap();
    let descr = dtype.descr();
    assert!(descr.len() > 150_000, "{}", descr.len());
    let wide = npy_core::DynArray::new(npy_core::header::Header::new(dtype, vec![2]), vec![0; 2 * 3000 * 4]).unwrap();
    let archive = dir.path().join("wide.npz");
    let mut z = npy_core::npz::Writer::create(&archive).unwrap();
    z.add("small", &[1u8, 2]).unwrap();
    z.add("wide", &wide).unwrap();
    z.finish().unwrap();
    let single = dir.path().join("wide.npy");
    npy_core::WriteNpy::write_npy(&wide, &single).unwrap();

    let out = npy(&["info", archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 6, "{s}");
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{s}");
    assert!(lines[3].starts_with("  small.npy ") && lines[3].ends_with(" '|u1'"), "{}", lines[3]);
    let shown = lines[4].split_once("[(").map(|(_, rest)| format!("[({}", rest.trim_end_matches('…'))).unwrap();
    assert!(lines[4].ends_with('…') && descr.starts_with(&shown), "{}", lines[4]);
    assert_eq!(lines[5], "(descrs cut to 100 columns: --full-descr prints them whole)");
    // The descr column starts at the same place on every row.
    assert_eq!(lines[2].find("descr"), lines[4].find("[("), "{}", lines[2]);

    let out = npy(&["info", "--full-descr", archive.to_str().unwrap()]);
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 5, "{}", &s[..500]);
    assert!(lines[4].starts_with("  wide.npy  ") && lines[4].ends_with(&descr), "{}", &lines[4][..100]);
    assert_eq!(lines[2].find("descr"), lines[4].find("[("), "{}", lines[2]);

    // A .npy's descr line likewise; its fields are listed one per line below it.
    let s = text(&npy(&["info", single.to_str().unwrap()]).stdout);
    let line = s.lines().find(|l| l.starts_with("descr:")).unwrap();
    assert!(line.chars().count() == 100 && line.ends_with('…'), "{line}");
    assert!(s.lines().all(|l| l.chars().count() <= 100) && s.ends_with("--full-descr prints them whole)\n"));
    let s = text(&npy(&["info", "--full-descr", single.to_str().unwrap()]).stdout);
    assert!(s.contains(&format!("descr:         {descr}\n")) && !s.contains("cut to"));

    let text_file = dir.path().join("long.npy");
    let mut units = vec![0u8; 70_000 * 4];
    for (i, unit) in units.chunks_mut(4).enumerate() {
        unit[0] = b'a' + (i % 26) as u8;
    }
    let header = npy_core::header::Header::new("<U70000".parse().unwrap(), vec![1]);
    npy_core::WriteNpy::write_npy(&npy_core::DynArray::new(header, units).unwrap(), &text_file).unwrap();
    let out = npy(&["head", text_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].len(), lines[1].len());
    assert!(lines[0].ends_with("  value") && lines[1].starts_with("0  abcdefghijklmnopqrstuvwxyzab"), "{}", lines[0]);
}

#[test]
fn copy_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for rel in
        ["record/titles_non_str.npy", "header/utf8_name_v3.npy", "header/forced_v2_le_f8.npy", "string/be_U4.npy"]
    {
        let out_path = dir.path().join("out.npy");
        let out = npy(&["copy", fixture(rel).to_str().unwrap(), out_path.to_str().unwrap()]);
        assert!(out.status.success(), "{rel}: {}", text(&out.stderr));
        assert_eq!(std::fs::read(&out_path).unwrap(), std::fs::read(fixture(rel)).unwrap(), "{rel}");
    }
}

#[test]
fn errors_are_one_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.npy");
    std::fs::write(&junk, b"PK\x03\x04 not numpy").unwrap();
    let big = fixture("header/fields_3000_v2.npy");
    let missing = dir.path().join("missing.npy");
    let out_path = dir.path().join("o.npy");
    for args in [
        vec!["info", junk.to_str().unwrap()],
        vec!["info", missing.to_str().unwrap()],
        vec!["info", "--max-header-size", "10000", big.to_str().unwrap()],
        vec!["copy", junk.to_str().unwrap(), out_path.to_str().unwrap()],
    ] {
        let out = npy(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("error: reading '"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!out_path.exists());
    // Usage errors exit 2, as clap's do.
    for args in [vec!["frobnicate"], vec!["info"], vec!["schema", "--name", "1x", big.to_str().unwrap(), "--rust"]] {
        let out = npy(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).starts_with("error:"), "{args:?}");
    }
    // The default limit (16 MiB) reads a 3,000-field header; a limit is said in flags.
    assert!(npy(&["info", big.to_str().unwrap()]).status.success());
    let err = text(&npy(&["info", "--max-header-size", "10000", big.to_str().unwrap()]).stderr);
    assert!(err.ends_with("bytes, over the limit of 10000 bytes (rerun with --max-header-size 69632)\n"), "{err}");
    assert!(!err.contains("ReadOptions"), "{err}");
}

/// Errors say which file, input or output, by the path the user gave: never a temporary
/// name.
#[test]
fn errors_name_the_input_or_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothere.npy");
    let input = fixture("shape/3x4_F_i4.npy");
    let nowhere = dir.path().join("no/such/dir/out.npy");
    let out = npy(&["copy", missing.to_str().unwrap(), dir.path().join("o.npy").to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(err.starts_with(&format!("error: reading '{}': i/o error: ", missing.display())), "{err}");
    let archive = dir.path().join("small.npz");
    let mut z = npy_core::npz::Writer::create(&archive).unwrap();
    z.add("x", &[1.5f64, 2.5]).unwrap();
    z.finish().unwrap();
    for input in [input, archive] {
        let out = npy(&["copy", input.to_str().unwrap(), nowhere.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("error: writing '{}': i/o error: ", nowhere.display())), "{err}");
        assert!(!err.contains(".npy-"), "{err}");
    }
}

/// Where no tmpfs can be mounted: under `CI` the test fails (it is the only evidence that
/// a failed copy leaves the old file whole, so CI must run it, as root); elsewhere it says
/// why it did not run, on stderr past the harness's capture.
fn cannot_mount(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "CI runs the full-disk test, but {why}");
    let _ =
        std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("note: a full-disk test did not run: {why}\n"));
}

/// `npy copy` onto a full disk: one line naming the output (no temporary name, nothing
/// printed by a dependency), the old file whole, nothing beside it. Needs a tmpfs mount
/// (root): where it is refused, it fails under `CI` and is skipped with a note elsewhere.
#[test]
fn copy_onto_a_full_disk_says_so_once_and_leaves_the_old_file() {
    let mnt = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"]).arg(mnt.path()).output();
    match mounted {
        Ok(o) if o.status.success() => {}
        Ok(o) => return cannot_mount(&format!("cannot mount a tmpfs here: {}", text(&o.stderr).trim())),
        Err(e) => return cannot_mount(&format!("cannot run mount: {e}")),
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(mnt.path());
    let src = tempfile::tempdir().unwrap();
    let values: Vec<u8> = (0..12_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let npy_in = src.path().join("big.npy");
    npy_core::WriteNpy::write_npy(&values[..], &npy_in).unwrap();
    let npz_in = src.path().join("big.npz");
    let mut z = npy_core::npz::Writer::create(&npz_in).unwrap();
    z.add("a", &values).unwrap();
    z.add_with("b", &values, npy_core::npz::Compression::deflated()).unwrap();
    z.finish().unwrap();
    for (input, name) in [(npy_in, "out.npy"), (npz_in, "out.npz")] {
        let target = mnt.path().join(name);
        std::fs::write(&target, b"old").unwrap();
        let out = npy(&["copy", input.to_str().unwrap(), target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with(&format!("error: writing '{}'", target.display())), "{name}: {err}");
        assert!(err.contains("No space left on device"), "{name}: {err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"old", "{name}");
        let names: Vec<_> = std::fs::read_dir(mnt.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [name], "{name}: left beside the target");
        std::fs::remove_file(&target).unwrap();
    }
}

/// `npy copy` killed (`SIGKILL`) at points through its write: the output is the old file
/// or the new one, whole, and nothing is left beside it but, when the kill fell between
/// the commit's two system calls (a link to a hidden name, then its rename over the
/// output), that hidden name, which the next write sweeps (see `npy_core::atomic`).
#[test]
fn a_killed_copy_leaves_the_output_whole_and_nothing_beside_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (input, output) = (dir.path().join("in.npy"), dir.path().join("out.npy"));
    let values: Vec<f64> = (0..8_000_000).map(f64::from).collect();
    npy_core::WriteNpy::write_npy(&values[..], &input).unwrap();
    npy_core::WriteNpy::write_npy(&[1.5f64][..], &output).unwrap();
    let (new, old) = (std::fs::read(&input).unwrap(), std::fs::read(&output).unwrap());
    for round in 0..8u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_npy"))
            .args([std::ffi::OsStr::new("copy"), input.as_os_str(), output.as_os_str()])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10 + round * 25));
        child.kill().unwrap();
        child.wait().unwrap();
        let now = std::fs::read(&output).unwrap();
        assert!(now == old || now == new, "round {round}: the output is neither the old file nor the new one");
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        names.retain(|n| n != "in.npy" && n != "out.npy");
        let hidden_link = |n: &std::ffi::OsString| {
            let n = n.to_string_lossy();
            let hex = n.strip_prefix(".npy-").and_then(|rest| rest.strip_suffix(".tmp"));
            hex.is_some_and(|h| h.len() == 12 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        };
        assert!(names.len() <= 1 && names.iter().all(hidden_link), "round {round}: left beside the output: {names:?}");
    }
    let out = npy(&["copy", input.to_str().unwrap(), output.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read(&output).unwrap() == new);
    // The last write swept whatever a killed one left.
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["in.npy", "out.npy"], "left beside the output after a whole write");
}

/// A large copy with stderr not a terminal shows no progress bar: stderr stays empty.
#[test]
fn large_copy_without_a_terminal_writes_nothing_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let n = (65usize << 20) / 8;
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}");
    let pad = 64 - (10 + dict.len() + 1) % 64;
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&((dict.len() + 1 + pad) as u16).to_le_bytes());
    file.extend_from_slice(dict.as_bytes());
    file.extend(std::iter::repeat_n(b' ', pad));
    file.push(b'\n');
    file.extend((0..n * 8).map(|i| (i % 251) as u8));
    let (input, output) = (dir.path().join("big.npy"), dir.path().join("out.npy"));
    std::fs::write(&input, &file).unwrap();
    let out = npy(&["copy", input.to_str().unwrap(), output.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty() && out.stdout.is_empty(), "{}", text(&out.stderr));
    assert!(std::fs::read(&output).unwrap() == file);
}

#[test]
fn head_shows_records_as_a_table() {
    let out = npy(&["head", fixture("record/trace_packed.npy").to_str().unwrap(), "-n", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 3, "{s}");
    for col in ["trace_id", "receiver.x", "receiver.z", "flags", "samples[0]", "samples[7]"] {
        assert!(lines[0].contains(col), "missing {col} in {}", lines[0]);
    }
    // trace_id is 101 * (index + 1) in the fixture (xtask/golden.py).
    assert!(lines[1].split_whitespace().nth(1) == Some("101"), "{}", lines[1]);
    assert!(lines[2].split_whitespace().nth(1) == Some("202"), "{}", lines[2]);
}

#[test]
fn dump_streams_json_lines_and_csv() {
    let f = fixture("record/trace_packed.npy");
    let out = npy(&["dump", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[3].starts_with("{\"trace_id\":404,\"receiver\":{\"x\":"), "{}", rows[3]);

    let out = npy(&["dump", f.to_str().unwrap(), "--format", "csv"]);
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().collect();
    assert_eq!(rows.len(), 5);
    assert!(rows[0].starts_with("trace_id,receiver.x,receiver.y,receiver.z,t0,dt,flags,samples[0],"), "{}", rows[0]);
    assert!(rows[1].starts_with("101,"), "{}", rows[1]);

    // Scalars, and a choice of member in an archive.
    let out = npy(&["dump", fixture("scalar/le_i2.npy").to_str().unwrap(), "--format", "csv"]);
    assert!(text(&out.stdout).starts_with("value\n"));
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.npz");
    let mut w = npy_core::npz::Writer::create(&archive).unwrap();
    w.add("x", &[1u8, 2]).unwrap();
    w.add("y", &[3u8]).unwrap();
    w.finish().unwrap();
    let out = npy(&["dump", archive.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(text(&out.stderr).contains("--member"), "{}", text(&out.stderr));
    let out = npy(&["dump", archive.to_str().unwrap(), "--member", "y"]);
    assert_eq!(text(&out.stdout), "3\n");
}

/// Object arrays (NumPy-made fixtures, `tests/data/object`): decoded, never unpickled.
#[test]
fn object_arrays_in_info_head_dump_and_copy() {
    let f = fixture("object/str_none.npy");
    let out = npy(&["info", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for want in ["descr:         '|O'", "shape:         (5,)", "elements:      5", "Python objects, pickled ("] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    assert!(!s.contains("data bytes:"), "{s}");

    // ['x1', None, 'yz', None, ''] (xtask/golden.py).
    let out = npy(&["head", f.to_str().unwrap(), "-n", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<Vec<String>> =
        text(&out.stdout).lines().map(|l| l.split_whitespace().map(str::to_string).collect()).collect();
    assert_eq!(rows, [vec!["#", "value"], vec!["0", "x1"], vec!["1", "None"], vec!["2", "yz"]]);

    let out = npy(&["dump", f.to_str().unwrap()]);
    assert_eq!(text(&out.stdout), "\"x1\"\nnull\n\"yz\"\nnull\n\"\"\n", "{}", text(&out.stderr));
    let out = npy(&["dump", f.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(text(&out.stdout), "value\nx1\nNone\nyz\nNone\n\n");

    // Nested values: [1, [2, (3, 'xs')]], then (), ('one',), {'ka': 1, 'kb': [None, {'kc': b'dd'}]}.
    let out = npy(&["dump", fixture("object/nested.npy").to_str().unwrap()]);
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().collect();
    assert_eq!(rows[..4], ["[1,[2,[3,\"xs\"]]]", "[]", "[\"one\"]", "{\"ka\":1,\"kb\":[null,{\"kc\":\"b'dd'\"}]}"]);
    let out = npy(&["head", fixture("object/nested.npy").to_str().unwrap(), "-n", "4"]);
    let s = text(&out.stdout);
    assert!(s.contains("[1, [2, (3, 'xs')]]") && s.contains("('one',)"), "{s}");
    assert!(s.contains("{'ka': 1, 'kb': [None, {'kc': b'dd'}]}"), "{s}");

    // A member of an archive.
    let out = npy(&["dump", fixture("object/archive.npz").to_str().unwrap(), "--member", "labels"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 3);

    // Copies read back equal, Fortran order and archives included.
    let dir = tempfile::tempdir().unwrap();
    for rel in ["object/2x3_F.npy", "object/nested.npy", "object/big.npy"] {
        let copy = dir.path().join("copy.npy");
        let out = npy(&["copy", fixture(rel).to_str().unwrap(), copy.to_str().unwrap()]);
        assert!(out.status.success(), "{rel}: {}", text(&out.stderr));
        let read =
            |p: &Path| npy_core::NpyReader::from_path(p).unwrap().read::<npy_core::Array<npy_core::Object>>().unwrap();
        let (orig, back) = (read(&fixture(rel)), read(&copy));
        assert_eq!((back.shape(), back.fortran_order()), (orig.shape(), orig.fortran_order()), "{rel}");
        assert_eq!(back.as_slice(), orig.as_slice(), "{rel}");
    }
    let copy = dir.path().join("copy.npz");
    let out = npy(&["copy", fixture("object/archive.npz").to_str().unwrap(), copy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut orig = npy_core::npz::Reader::from_path(fixture("object/archive.npz")).unwrap();
    let mut back = npy_core::npz::Reader::from_path(&copy).unwrap();
    assert_eq!(back.names(), orig.names());
    for name in ["labels", "grid"] {
        assert_eq!(
            back.read::<npy_core::Array<npy_core::Object>>(name).unwrap(),
            orig.read::<npy_core::Array<npy_core::Object>>(name).unwrap(),
            "{name}"
        );
    }
    assert_eq!(back.read::<Vec<f64>>("values").unwrap(), orig.read::<Vec<f64>>("values").unwrap());
}
