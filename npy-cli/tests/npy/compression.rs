//! `npy copy --compression stored|deflate|zstd [--level N]`, and the verbs that read
//! archives (`info`, `check`, `head`, `dump`, `copy`) over Zstandard members.

use std::path::Path;

use npy_core::npz::{Compression, DeflateOption, Method, Reader, Writer};

use crate::support::{npy, text};

#[track_caller]
fn ok(args: &[&str]) -> String {
    let out = npy(args);
    assert!(out.status.success(), "npy {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// An archive of a stored and a deflated member (a ramp that compresses, and raw text).
fn source(path: &Path) {
    let mut w = Writer::create(path).unwrap();
    w.add("ramp", &(0..50_000).map(|i| (i % 500) as f64).collect::<Vec<_>>()).unwrap();
    w.add_with("ids", &[7u32, 8, 9], Compression::deflated()).unwrap();
    w.add_raw("notes.txt", b"free text").unwrap();
    w.finish().unwrap();
}

#[test]
fn copy_recompresses_every_member_and_every_verb_reads_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npz");
    source(&input);
    let cases: [(&[&str], Compression); 6] = [
        (&["--compression", "zstd"], Compression::zstd()),
        (&["--compression", "zstd", "--level", "19"], Compression::zstd()),
        (&["--compression", "deflate"], Compression::deflated()),
        (&["--compression", "deflate", "--level", "1"], Compression::deflated()),
        (&["--compression", "stored"], Compression::Stored),
        (&[], Compression::Stored),
    ];
    let mut sizes = Vec::new();
    for (k, (flags, method)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("out{k}.npz"));
        let mut args = vec!["copy", input.to_str().unwrap(), out.to_str().unwrap()];
        args.extend_from_slice(flags);
        ok(&args);
        let mut r = Reader::from_path(&out).unwrap();
        assert_eq!(r.names(), ["ramp", "ids", "notes.txt"], "{flags:?}");
        let methods: Vec<_> = r.members().iter().map(|m| m.compression.unwrap()).collect();
        if flags.is_empty() {
            // Without the flag each member keeps its compression.
            assert_eq!(methods, [Method::Stored, Method::Deflated(DeflateOption::Normal), Method::Stored]);
        } else {
            assert!(methods.iter().all(|&m| m == method.method()), "{flags:?}: {methods:?}");
        }
        assert_eq!(r.read::<Vec<u32>>("ids").unwrap(), [7, 8, 9]);
        assert_eq!(r.read_raw("notes.txt").unwrap(), b"free text");
        sizes.push(std::fs::metadata(&out).unwrap().len());

        let info = ok(&["info", out.to_str().unwrap()]);
        let name = match methods[0] {
            Method::Stored => "stored",
            Method::Deflated(_) => "deflated",
            Method::Zstd => "zstd",
        };
        assert!(
            info.lines()
                .map(str::trim_start)
                .any(|l| l.starts_with("ramp.npy") && l.split_whitespace().nth(1) == Some(name)),
            "{info}"
        );
        ok(&["check", "--quiet", out.to_str().unwrap()]);
        let head = ok(&["head", "-n", "2", "--member", "ids", out.to_str().unwrap()]);
        assert!(head.contains('7') && head.contains('8') && !head.contains('9'), "{head}");
        let dump = ok(&["dump", "--member", "ramp", out.to_str().unwrap()]);
        assert_eq!(dump.lines().count(), 50_000);
        assert_eq!(dump.lines().nth(501), Some("1.0"));
        // A copy of the copy keeps its members' compression.
        let again = dir.path().join(format!("again{k}.npz"));
        ok(&["copy", out.to_str().unwrap(), again.to_str().unwrap()]);
        let kept: Vec<_> =
            Reader::from_path(&again).unwrap().members().iter().map(|m| m.compression.unwrap()).collect();
        assert_eq!(kept, methods, "{flags:?}");
    }
    // zstd 19 is smaller than zstd 3, both smaller than deflate 6 and stored, here.
    assert!(sizes[1] <= sizes[0] && sizes[0] < sizes[2] && sizes[2] < sizes[4], "{sizes:?}");
}

/// `path` with bit 1 of the general-purpose flags (maximum) set in both headers of
/// `member`, as Info-ZIP's `zip -9` sets it.
fn mark_maximum(path: &Path, member: &[u8]) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    let mut set = 0;
    for at in 0..bytes.len() - 46 {
        let (flags_at, name_at) = match &bytes[at..at + 4] {
            b"PK\x03\x04" => (6, 30),
            b"PK\x01\x02" => (8, 46),
            _ => continue,
        };
        if bytes[at + name_at..].starts_with(member) {
            bytes[at + flags_at] |= 2;
            set += 1;
        }
    }
    assert_eq!(set, 2);
    bytes
}

/// `info` shows a deflated member's option where its flags record one other than normal
/// (as Info-ZIP's `zip -9` does).
#[test]
fn info_shows_the_deflate_option_the_archive_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npz");
    source(&input);
    let bytes = mark_maximum(&input, b"ids.npy");
    let maximum = dir.path().join("maximum.npz");
    std::fs::write(&maximum, &bytes).unwrap();
    let column = |info: &str, member: &str| {
        let line = info.lines().map(str::trim_start).find(|l| l.starts_with(member)).unwrap().to_string();
        line.split_whitespace().nth(1).unwrap().to_string()
    };
    let info = ok(&["info", maximum.to_str().unwrap()]);
    assert_eq!(column(&info, "ids.npy"), "deflated:maximum", "{info}");
    assert_eq!(column(&info, "ramp.npy"), "stored", "{info}");
    ok(&["check", "--quiet", maximum.to_str().unwrap()]);
    let copy = dir.path().join("copy.npz");
    ok(&["copy", maximum.to_str().unwrap(), copy.to_str().unwrap()]);
    let info = ok(&["info", copy.to_str().unwrap()]);
    assert_eq!(column(&info, "ids.npy"), "deflated", "{info}");
}

/// A copy writes a member whose flags say maximum back at level 9, not at the default 6.
#[test]
fn copy_writes_a_maximum_member_back_at_level_9() {
    let dir = tempfile::tempdir().unwrap();
    let wave: Vec<u32> = (0..200_000u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
    let written_at = |level: u32| {
        let path = dir.path().join(format!("level{level}.npz"));
        let mut w = Writer::create(&path).unwrap();
        w.add_with("wave", &wave, Compression::Deflated { level }).unwrap();
        w.finish().unwrap();
        path
    };
    let size = |path: &Path| Reader::from_path(path).unwrap().members()[0].compressed_size;
    let (six, nine) = (written_at(6), written_at(9));
    assert_ne!(size(&six), size(&nine), "levels 6 and 9 must differ for the test to tell them");
    let maximum = dir.path().join("maximum.npz");
    std::fs::write(&maximum, mark_maximum(&six, b"wave.npy")).unwrap();
    let copy = dir.path().join("copy.npz");
    ok(&["copy", maximum.to_str().unwrap(), copy.to_str().unwrap()]);
    assert_eq!(size(&copy), size(&nine));
}

#[test]
fn check_reports_a_corrupt_zstd_member() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.npz");
    let mut w = Writer::create(&path).unwrap();
    w.add_with("x", &(0..1000u32).collect::<Vec<_>>(), Compression::zstd()).unwrap();
    w.finish().unwrap();
    let r = Reader::from_path(&path).unwrap();
    let m = &r.members()[0];
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[(m.data_start.unwrap() + m.compressed_size / 2) as usize] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    let out = npy(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stdout) + &text(&out.stderr);
    assert!(said.contains("x.npy"), "{said}");
}

#[test]
fn bad_compression_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npz");
    source(&input);
    let out = dir.path().join("out.npz");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    for (args, says) in [
        (vec!["copy", i, o, "--compression", "zstd", "--level", "23"], "level 23 is out of range for zstd: 1 to 22"),
        (vec!["copy", i, o, "--compression", "deflate", "--level", "0"], "level 0 is out of range for deflate: 1 to 9"),
        (vec!["copy", i, o, "--compression", "stored", "--level", "3"], "stored has no level"),
        (vec!["copy", i, o, "--level", "3"], "--compression"),
        (vec!["copy", i, o, "--compression", "lz4"], "lz4"),
    ] {
        let run = npy(&args);
        assert!(!run.status.success(), "{args:?}");
        assert!(text(&run.stderr).contains(says), "{args:?}: {}", text(&run.stderr));
        assert!(!out.exists(), "{args:?}");
    }
    let npy_file = dir.path().join("a.npy");
    npy_core::WriteNpy::write_npy(&[1u8, 2][..], &npy_file).unwrap();
    let run = npy(&["copy", npy_file.to_str().unwrap(), o, "--compression", "zstd"]);
    assert_eq!(run.status.code(), Some(2), "a usage error");
    assert!(text(&run.stderr).contains("--compression applies to .npz archives"), "{}", text(&run.stderr));
}
