//! `npy check`: NumPy's files pass (`tests/data`, the public corpus), and files corrupted
//! here, one problem each, are reported by file, member, element and byte, with exit
//! code 1; invalid `b1`/`U` values are warnings unless `--strict`.

use std::path::{Path, PathBuf};

use npy_core::npz::{Compression, Writer};

use crate::support::{corpus, fixture, npy};

fn check(files: &[&Path]) -> (Option<i32>, String) {
    let mut args = vec![Path::new("check")];
    args.extend_from_slice(files);
    let out = npy(&args);
    assert!(out.stderr.is_empty(), "{files:?}: {}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// A copy of fixture `rel` in `dir`, changed by `edit`.
fn corrupt(dir: &Path, rel: &str, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(fixture(rel)).unwrap();
    edit(&mut bytes);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The report's lines about findings (the summary, the last line, left out).
fn findings(report: &str) -> Vec<&str> {
    let lines: Vec<&str> = report.lines().collect();
    lines[..lines.len() - 1].to_vec()
}

#[test]
fn numpy_written_fixtures_pass() {
    let files = corpus::files_with_extensions(&fixture(""), &["npy", "npz"]);
    assert!(files.len() > 100, "{}", files.len());
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, report) = check(&refs);
    assert_eq!(report, format!("{} files checked, 0 with problems\n", files.len()));
    assert_eq!(code, Some(0));
}

/// NumPy's corpus passes; its two files of values NumPy writes but no Rust bool or char
/// holds get a warning each, and are problems with `--strict`.
#[test]
fn the_public_corpus_passes_with_two_warnings() {
    let Some(corpus) = corpus::corpus("npy check of the public corpus") else { return };
    let files = corpus::files_with_extensions(&corpus, &["npy", "npz"]);
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, report) = check(&refs);
    let warned: Vec<&str> = findings(&report);
    assert_eq!(warned.len(), 2, "{report}");
    let bools = corpus.join("exotic/bool_noncanonical.npy");
    let text = corpus.join("exotic/unicode_invalid_codepoints.npy");
    // NumPy: the bytes are [0, 1, 2, 255, 1, 0, 128], the units [65, 0xd800, 0xdfff,
    // 0x110000, 0xffffffff, 0] (one per '<U1').
    assert_eq!(
        warned[0],
        format!(
            "{}: warning: invalid value at element 2 (byte 130 of the file): b1 byte 2 is not 0 or 1; \
             3 elements hold invalid values (NumPy reads them as they are; --strict counts them as problems)",
            bools.display()
        )
    );
    assert!(warned[1].starts_with(&format!("{}: warning: invalid value at element 1 (byte 132 of the file): code point 0xd800 at position 0 is not a valid char; 4 elements hold invalid values", text.display())), "{}", warned[1]);
    assert!(report.ends_with(&format!("{} files checked, 0 with problems, 2 with warnings only\n", files.len())));
    assert_eq!(code, Some(0));
    let strict = npy(&[Path::new("check"), Path::new("--strict"), &bools, &text]);
    assert_eq!(strict.status.code(), Some(1));
    let report = String::from_utf8(strict.stdout).unwrap();
    assert!(report.contains(": problem: invalid value at element 2 (byte 130 of the file): b1 byte 2 is not 0 or 1; 3 elements hold invalid values\n"), "{report}");
    assert!(report.ends_with("2 files checked, 2 with problems\n"), "{report}");
}

#[test]
fn npy_files_with_a_problem_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 3x4 '<i4', Fortran order: 128 header bytes, 48 data bytes.
    let rel = "shape/3x4_F_i4.npy";
    let cases = [
        (
            corrupt(d, rel, "short.npy", |b| b.truncate(b.len() - 5)),
            "problem: data truncated: the header needs 48 data bytes, only 43 present",
        ),
        (
            corrupt(d, rel, "long.npy", |b| b.extend_from_slice(b"xyz")),
            "problem: 3 bytes after the array's data (NumPy ignores them)",
        ),
        (corrupt(d, rel, "magic.npy", |b| b[1] = b'n'), "problem: not a .npy file: "),
        (
            corrupt(d, rel, "descr.npy", |b| {
                let at = find(b, b"'<i4'");
                b[at + 2] = b'q'
            }),
            "problem: invalid dtype ",
        ),
        (corrupt(d, rel, "shape.npy", |b| b[60..128].fill(b'(')), "problem: invalid header at byte "),
    ];
    for (path, says) in &cases {
        let (code, report) = check(&[path]);
        let lines = findings(&report);
        assert_eq!(lines.len(), 1, "{report}");
        assert!(lines[0].starts_with(&format!("{}: {says}", path.display())), "{report}");
        assert!(report.ends_with("1 file checked, 1 with problems\n"), "{report}");
        assert_eq!(code, Some(1), "{report}");
    }
    // Every file is checked, whatever came before; a missing one is a problem too.
    let good = fixture("scalar/le_f8.npy");
    let missing = d.join("missing.npy");
    let (code, report) = check(&[&cases[0].0, &good, &missing, &cases[1].0]);
    let lines = findings(&report);
    assert_eq!(lines.len(), 3, "{report}");
    assert!(lines[1].starts_with(&format!("{}: problem: i/o error: ", missing.display())), "{report}");
    assert!(report.ends_with("4 files checked, 3 with problems\n"), "{report}");
    assert_eq!(code, Some(1));
    // --quiet: nothing printed, the same exit code.
    for (files, want) in [(vec![&cases[0].0, &good], 1), (vec![&good], 0)] {
        let mut args = vec![Path::new("check"), Path::new("-q")];
        args.extend(files.iter().map(|p| p.as_path()));
        let out = npy(&args);
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
        assert_eq!(out.status.code(), Some(want));
    }
}

#[test]
fn invalid_bools_and_code_units_are_warnings_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    // [True, False, True, True, False] from byte 128.
    let bools = corrupt(dir.path(), "scalar/b1.npy", "bools.npy", |b| (b[129], b[131]) = (2, 9));
    // '>U4' ['ab', '', 'é€😀x', 'abcd', 'a\x00b', '\U0010ffff'] from byte 128: a lone
    // surrogate as the third unit of the fourth string.
    let text = corrupt(dir.path(), "string/be_U4.npy", "text.npy", |b| {
        b[128 + 3 * 16 + 8..][..4].copy_from_slice(&0xdc00u32.to_be_bytes())
    });
    // [('name', '<U5'), ('code', 'S3'), ('n', '<i4')]: 27-byte records from byte 192; the
    // second name's last unit past 0x10ffff.
    let record = corrupt(dir.path(), "record/strings.npy", "record.npy", |b| {
        b[192 + 27 + 16..][..4].copy_from_slice(&0x110000u32.to_le_bytes())
    });
    let (code, report) = check(&[&bools, &text, &record]);
    let lines = findings(&report);
    let tail = " (NumPy reads them as they are; --strict counts them as problems)";
    assert_eq!(
        lines,
        [
            format!("{}: warning: invalid value at element 1 (byte 129 of the file): b1 byte 2 is not 0 or 1; 2 elements hold invalid values{tail}", bools.display()),
            format!("{}: warning: invalid value at element 3 (byte 184 of the file): code point 0xdc00 at position 2 is not a valid char{tail}", text.display()),
            format!("{}: warning: invalid value at element 1 (byte 235 of the file): code point 0x110000 at position 4 is not a valid char{tail}", record.display()),
        ]
    );
    assert!(report.ends_with("3 files checked, 0 with problems, 3 with warnings only\n"), "{report}");
    assert_eq!(code, Some(0));
    let out = npy(&[Path::new("check"), Path::new("--strict"), &bools]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains(": problem: invalid value at element 1 (byte 129 of the file)"));
}

/// An object array whose pickle calls `print('hi')`: refused by the decoder, never run.
#[test]
fn pickles_beyond_numpys_arrays_are_problems() {
    let dir = tempfile::tempdir().unwrap();
    let header = npy_core::header::Header::new(npy_core::DType::native(npy_core::dtype::ScalarType::Object), vec![1]);
    let mut file = header.encode(None).unwrap().1;
    // PROTO 2, GLOBAL builtins.print, BINUNICODE 'hi', TUPLE1, REDUCE, STOP.
    file.extend_from_slice(b"\x80\x02cbuiltins\nprint\nX\x02\x00\x00\x00hi\x85R.");
    let path = dir.path().join("print.npy");
    std::fs::write(&path, &file).unwrap();
    let (code, report) = check(&[&path]);
    assert!(
        findings(&report)[0].starts_with(&format!("{}: problem: invalid pickle at byte ", path.display())),
        "{report}"
    );
    assert!(report.contains("print"), "{report}");
    assert_eq!(code, Some(1));
    // NumPy's own object arrays, and one with bytes after its pickle.
    let (code, report) = check(&[&fixture("object/str.npy"), &fixture("object/archive.npz")]);
    assert_eq!((code, report.as_str()), (Some(0), "2 files checked, 0 with problems\n"));
    let long = corrupt(dir.path(), "object/str.npy", "long.npy", |b| b.push(b'.'));
    let (code, report) = check(&[&long]);
    assert!(
        findings(&report)[0].starts_with(&format!("{}: problem: invalid pickle at byte ", long.display())),
        "{report}"
    );
    assert_eq!(code, Some(1));
}

/// An archive of four members: 'a.npy' (stored f8), 'b.npy' (deflated b1), 'notes.txt'
/// (stored), 'c.npy' (stored i4); and its bytes.
fn archive(dir: &Path, name: &str, bools: &[u8]) -> (PathBuf, Vec<u8>) {
    let path = dir.join(name);
    let mut w = Writer::create(&path).unwrap();
    w.add("a", &[1.5f64, 2.5, 3.5]).unwrap();
    let mut b =
        npy_core::header::Header::new(npy_core::DType::native(npy_core::dtype::ScalarType::Bool), vec![bools.len()])
            .encode(None)
            .unwrap()
            .1;
    b.extend_from_slice(bools);
    w.add_raw_from_with("b.npy", b.len() as u64, &b[..], Compression::deflated()).unwrap();
    w.add_raw_with("notes.txt", b"plain text", Compression::Stored).unwrap();
    w.add("c", &[7i32, 8, 9]).unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// Where `needle` is in `bytes` (the first time).
fn find(bytes: &[u8], needle: &[u8]) -> usize {
    bytes.windows(needle.len()).position(|w| w == needle).unwrap()
}

/// Where the data of member `member` of archive `path` starts.
fn data_start(path: &Path, member: &str) -> usize {
    let r = npy_core::npz::Reader::from_path(path).unwrap();
    let m = r.members().iter().find(|m| m.member == member).unwrap().clone();
    m.data_start.unwrap() as usize
}

#[test]
fn npz_members_with_a_problem_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (good, bytes) = archive(d, "good.npz", &[1, 0, 1]);
    assert_eq!(check(&[&good]), (Some(0), "1 file checked, 0 with problems\n".to_string()));
    let write = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = bytes.clone();
        edit(&mut b);
        let path = d.join(name);
        std::fs::write(&path, b).unwrap();
        path
    };
    // The f8 3.5 of 'a.npy', and the i4 8 of 'c.npy': data changed under their CRCs.
    let (a, c) = (data_start(&good, "a.npy"), data_start(&good, "c.npy"));
    let crc = write("crc.npz", &|b| {
        let at = a + find(&b[a..], &3.5f64.to_le_bytes());
        b[at] ^= 1;
        let at = c + find(&b[c..], &8i32.to_le_bytes());
        b[at] ^= 1;
    });
    let (code, report) = check(&[&crc]);
    assert_eq!(
        findings(&report),
        [
            format!("{}: member 'a.npy': problem: bad crc-32: the member's data is corrupt", crc.display()),
            format!("{}: member 'c.npy': problem: bad crc-32: the member's data is corrupt", crc.display()),
        ]
    );
    assert_eq!(code, Some(1));
    // The text member's data (stored) and a local header's CRC field.
    let notes = data_start(&good, "notes.txt");
    let text = write("text.npz", &|b| b[notes] = b'P');
    let (_, report) = check(&[&text]);
    assert_eq!(
        findings(&report),
        [format!("{}: member 'notes.txt': problem: bad crc-32: the member's data is corrupt", text.display())]
    );
    let local = write("local.npz", &|b| b[14] ^= 0xff);
    let (code, report) = check(&[&local]);
    let lines = findings(&report);
    assert_eq!(lines.len(), 1, "{report}");
    let says = "problem: the local header (crc 0x3ecb0aa7, 152 bytes, 152 inflated) disagrees with the central \
                directory (crc 0x3ecb0a58, 152 bytes, 152 inflated)";
    assert_eq!(lines[0], format!("{}: member 'a.npy': {says}", local.display()));
    assert_eq!(code, Some(1));

    // A bool member with bytes 2 and 3 (deflated: the values are checked as they inflate).
    let (bad_bools, _) = archive(d, "bools.npz", &[1, 2, 3, 0]);
    let (code, report) = check(&[&bad_bools]);
    assert_eq!(
        findings(&report),
        [format!(
            "{}: member 'b.npy': warning: invalid value at element 1 (byte 129 of the member): b1 byte 2 is not 0 or 1; \
             2 elements hold invalid values (NumPy reads them as they are; --strict counts them as problems)",
            bad_bools.display()
        )]
    );
    assert_eq!(code, Some(0));

    // Members named .npy that are not .npy files, or hold bytes after the array.
    let odd = d.join("odd.npz");
    let mut w = Writer::create(&odd).unwrap();
    w.add_raw_with("text.npy", b"not an array", Compression::deflated()).unwrap();
    let mut long = std::fs::read(fixture("scalar/le_i4.npy")).unwrap();
    long.extend_from_slice(b"\0\0");
    w.add_raw_with("long.npy", &long, Compression::Stored).unwrap();
    let short = std::fs::read(fixture("scalar/le_i4.npy")).unwrap();
    w.add_raw_with("short.npy", &short[..short.len() - 1], Compression::deflated()).unwrap();
    w.add("fine", &[1u8]).unwrap();
    w.finish().unwrap();
    let (code, report) = check(&[&odd]);
    let o = odd.display();
    assert_eq!(
        findings(&report),
        [
            format!("{o}: member 'text.npy': problem: named .npy but not a .npy file (it does not start with NumPy's magic)"),
            format!("{o}: member 'long.npy': problem: 2 bytes after the array's data (NumPy ignores them)"),
            format!("{o}: member 'short.npy': problem: data truncated: the header needs {} data bytes, only {} present", short.len() - 128, short.len() - 129),
        ]
    );
    assert_eq!(code, Some(1));
}

/// The corrupted archives of the test above, copied: `npy copy` reads every member to its
/// end, so a bad CRC fails the copy (and leaves no output); a good archive's copy keeps
/// every member's bytes and compression.
#[test]
fn copies_of_archives_keep_members_and_refuse_bad_crcs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (good, bytes) = archive(d, "good.npz", &[1, 0, 1]);
    let copy = d.join("copy.npz");
    let out = npy(&[Path::new("copy"), &good, &copy]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut a = npy_core::npz::Reader::from_path(&good).unwrap();
    let mut b = npy_core::npz::Reader::from_path(&copy).unwrap();
    let (ma, mb) = (a.members().to_vec(), b.members().to_vec());
    assert_eq!(ma.len(), 4);
    for (x, y) in ma.iter().zip(&mb) {
        assert_eq!((&x.member, x.compression, x.size), (&y.member, y.compression, y.size));
        assert_eq!(a.read_raw(&x.name).unwrap(), b.read_raw(&y.name).unwrap(), "{}", x.member);
    }
    // Stored members land where the writer puts them: the copy is the archive, byte for byte.
    assert!(std::fs::read(&copy).unwrap() == bytes);
    let mut bad = bytes.clone();
    let c = data_start(&good, "c.npy");
    let at = c + find(&bad[c..], &8i32.to_le_bytes());
    bad[at] ^= 1;
    let bad_path = d.join("bad.npz");
    std::fs::write(&bad_path, bad).unwrap();
    std::fs::remove_file(&copy).unwrap();
    let out = npy(&[Path::new("copy"), &bad_path, &copy]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "error: reading '{}': npz member 'c.npy': bad crc-32: the member's data is corrupt\n",
            bad_path.display()
        )
    );
    assert!(!copy.exists());
    let names: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Large inputs with stderr not a terminal: no progress bar, stderr stays empty (for
/// `copy` of a `.npy` file: `cli.rs`).
#[test]
fn large_checks_and_archive_copies_without_a_terminal_write_nothing_to_stderr() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let big = dir.path().join("big.npz");
    // 64 MiB in all (the bar's threshold), most of it stored (deflate is slow unoptimised).
    let values: Vec<u32> = (0..(16u32 << 20)).collect();
    let mut w = Writer::create(&big).unwrap();
    w.add_with("x", &values[..1 << 16], Compression::deflated()).unwrap();
    w.add("y", &values).unwrap();
    w.finish().unwrap();
    let copy = dir.path().join("copy.npz");
    for args in [vec![Path::new("check"), &big], vec![Path::new("copy"), &big, &copy]] {
        let out = npy(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut r = npy_core::npz::Reader::from_path(&copy).unwrap();
    assert!(r.read::<Vec<u32>>("x").unwrap() == values[..1 << 16]);
    assert!(r.read::<Vec<u32>>("y").unwrap() == values);
}
