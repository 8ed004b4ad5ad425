//! Bounded memory: `npy copy`, `npy check` and `npy dump` of a 1 GiB `.npy` file, and
//! `copy` and `check` of a 1 GiB single-member stored `.npz`, stay under 64 MB of resident
//! memory, and `npy sql` over a member inflating to 2 GiB under 256 MB, with stderr
//! redirected to a file (no terminal: no progress bar, and stderr stays empty).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::rss;

/// The bound the issue sets for a 1 GiB file.
const LIMIT: u64 = 64 << 20;
const GIB: u64 = 1 << 30;

/// Runs `npy ARGS` with stdout and stderr to files in `dir`; checks it succeeded within
/// [`LIMIT`] with an empty stderr, and returns its stdout.
fn bounded(dir: &Path, args: &[&Path]) -> String {
    bounded_by(dir, args, LIMIT)
}

/// As [`bounded`], within `limit` bytes.
fn bounded_by(dir: &Path, args: &[&Path], limit: u64) -> String {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_npy"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let peak = rss::peak_rss(&mut cmd);
    let (stdout, stderr) = (std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&err).unwrap());
    eprintln!("npy {args:?}: peak resident memory {} KiB ({} samples)", peak.bytes >> 10, peak.samples);
    assert!(peak.status.success(), "{args:?}: {}\n{stdout}{stderr}", peak.status);
    assert!(peak.samples > 0, "{args:?}: never sampled");
    assert!(peak.bytes < limit, "{args:?}: peak resident memory {} MB", peak.bytes >> 20);
    assert!(stderr.is_empty(), "{args:?}: stderr without a terminal: {stderr}");
    stdout
}

#[test]
fn copy_and_check_of_a_gib_npy_stay_under_64_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (input, output) = (dir.path().join("big.npy"), dir.path().join("copy.npy"));
    rss::zeros_npy(&input, GIB);
    bounded(dir.path(), &[Path::new("copy"), &input, &output]);
    assert_eq!(std::fs::metadata(&output).unwrap().len(), std::fs::metadata(&input).unwrap().len());
    std::fs::remove_file(&output).unwrap();
    let report = bounded(dir.path(), &[Path::new("check"), &input]);
    assert_eq!(report, "1 file checked, 0 with problems\n");
}

#[test]
fn copy_and_check_of_a_gib_stored_npz_stay_under_64_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (input, output) = (dir.path().join("big.npz"), dir.path().join("copy.npz"));
    rss::zeros_npz_stored(&input, GIB);
    bounded(dir.path(), &[Path::new("copy"), &input, &output]);
    // The same member: name, compression, sizes and place.
    let a = npy_core::npz::Reader::from_path(&input).unwrap();
    let b = npy_core::npz::Reader::from_path(&output).unwrap();
    assert_eq!(a.members(), b.members());
    assert_eq!(b.members()[0].size, GIB + 128);
    drop((a, b));
    std::fs::remove_file(&output).unwrap();
    let report = bounded(dir.path(), &[Path::new("check"), &input]);
    assert_eq!(report, "1 file checked, 0 with problems\n");
}

/// A 1 GiB C-order file (sparse: 1,024 items of 1 MiB, in rows of 512) dumps in bounded
/// memory: its rows stream item by item, in JSON and CSV.
#[test]
fn dump_of_a_gib_npy_stays_under_64_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    const ITEM: u64 = 1 << 20;
    let header = npy_core::header::Header::new(format!("|S{ITEM}").parse().unwrap(), vec![2, 512]);
    let head = header.encode(None).unwrap().1;
    let path = dir.path().join("big.npy");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &head).unwrap();
    file.set_len(head.len() as u64 + 1024 * ITEM).unwrap();
    drop(file);
    let row = format!("[{}]", vec!["\"b''\""; 512].join(","));
    for format in ["json", "csv"] {
        let got = bounded(dir.path(), &[Path::new("dump"), &path, Path::new("--format"), Path::new(format)]);
        let got: Vec<&str> = got.lines().collect();
        if format == "json" {
            assert_eq!(got, [row.as_str(), row.as_str()]);
        } else {
            assert_eq!(got.len(), 3);
            assert!(got[0].starts_with("[0],[1],") && got[0].ends_with(",[511]"), "{}", got[0]);
            assert_eq!(got[1], vec!["b''"; 512].join(","));
        }
    }
}

/// `npy sql` over an archive whose one deflated member inflates to 2 GiB (of zeros, in
/// rows of 128 `<f8`), in C order and in Fortran order: a count, an aggregate that reads
/// every row and a filter stay under 256 MB of resident memory, whatever the member's size.
/// The member is verified and read as streams, inflated a piece at a time (a MiB of
/// deflated zeros is a GiB); a Fortran-order one's rows are gathered from it inflated into
/// a temporary file (`npy_store::WHOLE_FORTRAN_BYTES`). (A query holds a few batches of the
/// session's batch size, 8,192 rows: here 8 MiB each.)
#[cfg(feature = "sql")]
#[test]
fn sql_over_a_member_inflating_to_2_gib_stays_under_256_mb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let rows = (2 * GIB / 8 / 128).to_string();
    for (name, fortran) in [("c.npz", false), ("f.npz", true)] {
        let path = dir.path().join(name);
        rss::zeros_npz_deflated(&path, 2 * GIB, 128, fortran);
        let table = format!("t={}", path.display());
        for (query, want) in [
            ("SELECT count(*) AS n FROM t", format!("n\n{rows}\n")),
            ("SELECT max(x[1]) AS m, count(*) AS n FROM t", format!("m,n\n0.0,{rows}\n")),
            ("SELECT count(*) AS n FROM t WHERE x[128] <> 0", "n\n0\n".to_string()),
        ] {
            let args = ["sql", query, "--table", &table, "--format", "csv"].map(Path::new);
            let got = bounded_by(dir.path(), &args, 256 << 20);
            assert_eq!(got, want, "{name}: {query}");
        }
    }
}
