//! `npy convert`: every fixture and corpus `.npy` to Arrow IPC and Parquet and back, byte
//! for byte; `.npz` members in and out; errors name the file; failures leave nothing;
//! memory stays bounded (a 128 MiB file through each format under 64 MB of resident
//! memory, stderr not a terminal).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::{corpus, rss, text};

fn npy(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_npy")).arg("convert").args(args).output().expect("run npy")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn is_object(path: &Path) -> bool {
    let mut o = npy_core::ReadOptions::new();
    o.max_header_size(1 << 20);
    npy_core::NpyReader::from_path_with(path, &o).is_ok_and(|r| r.header().dtype.has_object())
}

/// Whether a file's header is the one `np.save` writes for it (see npy-arrow's
/// `tests/fixtures.rs`): legacy headers come back as `np.save` writes them.
fn canonical_header(bytes: &[u8]) -> bool {
    let r =
        npy_core::NpyReader::from_reader_with(bytes, npy_core::ReadOptions::new().max_header_size(1 << 20)).unwrap();
    let (_, head) = r.header().encode(Some(r.version())).unwrap();
    bytes.starts_with(&head)
}

/// Whether two files hold the same header values and data.
fn same_data(a: &[u8], b: &[u8]) -> bool {
    let mut o = npy_core::ReadOptions::new();
    o.max_header_size(1 << 20);
    let (ra, rb) =
        (npy_core::NpyReader::from_reader_with(a, &o).unwrap(), npy_core::NpyReader::from_reader_with(b, &o).unwrap());
    ra.header() == rb.header() && a[ra.data_offset()..] == b[rb.data_offset()..]
}

/// Converts `file` to `.arrow` and `.parquet` (`--residue`) in `dir` and back; returns
/// whether it came back byte for byte (`Ok(true)`), as np.save would write its header
/// (`Ok(false)`), or the error.
fn round_trip(file: &Path, dir: &Path) -> Result<bool, String> {
    let original = std::fs::read(file).unwrap();
    let mut exact = true;
    for ext in ["arrow", "parquet"] {
        let (mid, back) = (dir.join(format!("mid.{ext}")), dir.join("back.npy"));
        let mut args: Vec<&Path> = vec![file, &mid, Path::new("--residue"), Path::new("--max-header-size=1048576")];
        let mut out = npy(&args);
        if !out.status.success() && text(&out.stderr).contains("Date32") {
            args.push(Path::new("--days-as-int64"));
            out = npy(&args);
        }
        if !out.status.success() {
            return Err(format!("to {ext}: {}", text(&out.stderr)));
        }
        let out = npy(&[&mid, &back, Path::new("--max-header-size=1048576")]);
        if !out.status.success() {
            return Err(format!("from {ext}: {}", text(&out.stderr)));
        }
        let got = std::fs::read(&back).unwrap();
        if got != original {
            if canonical_header(&original) || !same_data(&got, &original) {
                return Err(format!("via {ext}: not the same file"));
            }
            exact = false;
        }
    }
    Ok(exact)
}

#[test]
fn every_fixture_converts_to_arrow_and_parquet_and_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut done = 0;
    for file in corpus::files_with_extensions(&root().join("tests/data"), &["npy"]) {
        if is_object(&file) {
            continue;
        }
        assert_eq!(round_trip(&file, dir.path()), Ok(true), "{}", file.display());
        done += 1;
    }
    assert!(done >= 90, "only {done} fixtures");
}

#[test]
fn the_public_corpus_converts_to_arrow_and_parquet_and_back() {
    let Some(corpus) = corpus::corpus("corpus conversions") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut exact, mut legacy, mut failed) = (0, 0, Vec::new());
    for file in corpus::files_with_extensions(&corpus, &["npy"]) {
        if is_object(&file) {
            continue;
        }
        match round_trip(&file, dir.path()) {
            Ok(true) => exact += 1,
            Ok(false) => legacy += 1,
            // Lone surrogates and code points past U+10FFFF: refused until the residue
            // column carries them.
            Err(e) if file.ends_with("exotic/unicode_invalid_codepoints.npy") => {
                assert!(e.contains("not a valid char") && e.contains("unicode_invalid_codepoints.npy"), "{e}");
            }
            Err(e) => failed.push(format!("{}: {e}", file.display())),
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(legacy, 3, "legacy headers");
    assert!(exact >= 100, "only {exact} corpus files");
}

#[test]
fn npz_members_go_in_and_out() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("tests/data/record/trace_aligned.npy");
    let npz = dir.path().join("a.npz");
    let out = npy(&[&src, &npz, Path::new("--member"), Path::new("trace")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut r = npy_core::npz::Reader::from_path(&npz).unwrap();
    assert_eq!(r.names(), ["trace"]);
    let mut member = Vec::new();
    std::io::Read::read_to_end(&mut r.raw("trace").unwrap(), &mut member).unwrap();
    assert!(member == std::fs::read(&src).unwrap());
    // Back, naming the member.
    let pq = dir.path().join("a.parquet");
    let out = npy(&[&npz, &pq, Path::new("--member"), Path::new("trace.npy")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let back = dir.path().join("back.npy");
    assert!(npy(&[&pq, &back]).status.success());
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&src).unwrap());
}

#[test]
fn a_whole_npz_is_a_table_of_its_members_and_comes_back_member_for_member() {
    let dir = tempfile::tempdir().unwrap();
    // An archive of NumPy-made arrays of 6 elements each, as np.savez(**columns) makes.
    let src = dir.path().join("columns.npz");
    let mut w = npy_core::npz::Writer::create(&src).unwrap();
    for (name, file, compression) in [
        ("z", "scalar/be_c16.npy", npy_core::npz::Compression::Stored),
        ("n", "scalar/le_i4.npy", npy_core::npz::Compression::Deflated { level: 6 }),
        ("s", "string/S5.npy", npy_core::npz::Compression::Stored),
    ] {
        let bytes = std::fs::read(root().join("tests/data").join(file)).unwrap();
        w.add_raw_with(name, &bytes, compression).unwrap();
    }
    w.finish().unwrap();
    let members = |path: &Path| -> Vec<(String, Vec<u8>)> {
        let mut r = npy_core::npz::Reader::from_path(path).unwrap();
        let names = r.names().to_vec();
        names.into_iter().map(|n| (n.clone(), r.read_raw(&n).unwrap())).collect()
    };
    for ext in ["arrow", "parquet"] {
        let table = dir.path().join(format!("t.{ext}"));
        let out = npy(&[&src, &table]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let back = dir.path().join(format!("back_{ext}.npz"));
        let out = npy(&[&table, &back]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(members(&back) == members(&src), "{ext}: members differ");
    }
    // A table of columns into one .npy: a record of one field per member.
    let one = dir.path().join("one.npy");
    assert!(npy(&[&src, &one]).status.success());
    let r = npy_core::NpyReader::from_path(&one).unwrap();
    let npy_core::DType::Record(rec) = &r.header().dtype else { panic!("{:?}", r.header().dtype) };
    let names: Vec<String> = rec.fields().iter().map(|f| f.name.clone()).collect();
    let want: Vec<String> = members(&src).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, want);
}

#[test]
fn errors_name_the_file_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let days = root().join("tests/data/datetime/le_M8_D.npy");
    for ext in ["arrow", "parquet", "npy"] {
        let out_path = dir.path().join(format!("out.{ext}"));
        let out = npy(&[&days, &out_path, Path::new("--batch-rows"), Path::new("1")]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("error: reading '{}'", days.display())) && err.contains("Date32"), "{err}");
        // The hint names the flag, not the Rust option.
        assert!(err.ends_with("(rerun with --days-as-int64)\n") && !err.contains("::"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{ext}");
    }
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, b"PAR1 but not really").unwrap();
    let out = npy(&[&bad, &dir.path().join("x.npy")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with(&format!("error: reading '{}': ", bad.display())), "{}", text(&out.stderr));
    let out = npy(&[&bad, &dir.path().join("x.csv")]);
    assert_eq!(out.status.code(), Some(2));
    let out = npy(&[&days, &dir.path().join("x.arrow"), Path::new("--compression"), Path::new("zstd")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = npy(&[&days, &dir.path().join("x.arrow"), Path::new("--member"), Path::new("m")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = npy(&[&days, &dir.path().join("x.arrow"), Path::new("--row-group-bytes"), Path::new("1000")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--row-group-bytes is for Parquet output"), "{}", text(&out.stderr));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["bad.parquet"]);
}

#[test]
fn a_large_file_converts_in_bounded_memory() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let input = dir.path().join("big.npy");
    rss::zeros_npy(&input, 128 << 20);
    let tiny = dir.path().join("tiny.npy");
    rss::zeros_npy(&tiny, 4096);
    // The peak resident memory of `npy convert from to`.
    let convert = |from: &Path, to: &Path, ext: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_npy"));
        cmd.arg("convert").arg(from).arg(to).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        if ext == "npz" {
            cmd.args(["--member", "big"]);
        }
        if to.extension().is_some_and(|e| e == "parquet") {
            // Row groups encode a few at once: memory is a few row groups, whatever
            // the file's size (here 16 of them).
            cmd.args(["--row-group-bytes", "8388608"]);
        }
        let peak = rss::peak_rss(&mut cmd);
        assert!(peak.status.success() && peak.samples > 0, "{}", to.display());
        peak.bytes
    };
    // An .npz member is spooled through a temporary file both ways, never held.
    for ext in ["arrow", "parquet", "npz"] {
        let mid = dir.path().join(format!("big.{ext}"));
        let back = dir.path().join("back.npy");
        // What the program itself takes (its code and libraries: more in a debug build
        // with the SQL engines linked in), converting a file of 4 KiB the same way.
        let tiny_mid = dir.path().join(format!("tiny.{ext}"));
        let base = convert(&tiny, &tiny_mid, ext).max(convert(&tiny_mid, &dir.path().join("tiny_back.npy"), ext));
        for (from, to) in [(&input, &mid), (&mid, &back)] {
            let peak = convert(from, to, ext);
            eprintln!(
                "npy convert to {}: peak resident memory {} KiB, {} KiB over a 4 KiB file's",
                to.display(),
                peak >> 10,
                peak.saturating_sub(base) >> 10
            );
            assert!(peak.saturating_sub(base) < 48 << 20, "{}: {} MB over {} MB", to.display(), peak >> 20, base >> 20);
        }
        assert!(std::fs::read(&back).unwrap() == std::fs::read(&input).unwrap(), "via {ext}");
        std::fs::remove_file(&back).unwrap();
    }
}

/// The null rule is in `npy convert --help`, not only in the CHANGELOG.
#[test]
fn the_help_states_the_null_rule() {
    let out = Command::new(env!("CARGO_BIN_EXE_npy")).args(["convert", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = text(&out.stdout).replace('\n', " ");
    let wants = [
        "a null becomes NaN in a float, decimal or complex column",
        "NaT in a datetime64 or timedelta64 column",
        "error naming the column and the row",
    ];
    for want in wants {
        assert!(help.contains(want), "missing {want:?} in {help}");
    }
}

/// Data a NumPy array cannot hold (a null struct row, written by pyarrow) is an error about
/// the file, exit 1, not a usage error (2) whatever kind the library gives it.
#[test]
fn data_errors_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let nulls = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/struct_nulls.parquet");
    for ext in ["npy", "npz"] {
        let out_path = dir.path().join(format!("out.{ext}"));
        let out = npy(&[&nulls, &out_path]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.starts_with(&format!("error: writing '{}'", out_path.display())) && err.contains("null"), "{err}");
        assert!(!out_path.exists());
    }
    // Two members of different lengths: the hint is the flag.
    let archive = dir.path().join("two.npz");
    let mut z = npy_core::npz::Writer::create(&archive).unwrap();
    z.add("a", &[1.0f64, 2.0]).unwrap();
    z.add("b", &[1u8, 2, 3]).unwrap();
    z.finish().unwrap();
    let out = npy(&[&archive, &dir.path().join("two.parquet")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.ends_with("convert one member at a time (--member NAME)\n"), "{err}");
}
