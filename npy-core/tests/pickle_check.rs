//! The check (`check_pickle`, `check_pickle_prefix`), which keeps only what it needs of
//! the values, passes exactly the pickles decoding (`from_pickle`) passes, with the same
//! shape: NumPy's object and `StringDType` arrays in tests/data/object, and each with bytes
//! changed, cut short or followed by more, under every `Python2Strings`.

use std::ops::ControlFlow;
use std::path::PathBuf;

use npy_core::object::{check_pickle, check_pickle_prefix, check_pickle_with, from_pickle_with, CheckProgress};
use npy_core::{Python2Strings, ReadOptions};

/// The pickle (the data after the header) of every `.npy` file in tests/data/object.
fn pickles() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/object");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/data/object") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "npy") {
            let file = std::fs::read(&path).expect("a fixture");
            let reader = npy_core::NpyReader::from_reader(&file[..]).expect("a fixture's header");
            let start = reader.data_offset();
            out.push((path.file_name().unwrap().to_string_lossy().into_owned(), file[start..].to_vec()));
        }
    }
    assert!(out.len() >= 30, "only {} fixtures", out.len());
    out
}

/// Variants of a pickle: itself, and bytes changed at positions spread over it (xorshift),
/// cut short, or followed by more.
fn variants(pickle: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![pickle.to_vec()];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ pickle.len() as u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..100 {
        let mut changed = pickle.to_vec();
        let at = (next() % pickle.len() as u64) as usize;
        changed[at] = match next() % 4 {
            0 => changed[at] ^ 1,
            1 => b'N',
            2 => 0xff,
            _ => next() as u8,
        };
        out.push(changed);
    }
    // Each short str (SHORT_BINUNICODE, 0x8c) replaced by None, an int or a float (NaN or
    // not): what a StringDType array may or may not hold.
    let replacements: [&[u8]; 5] =
        [b"N", b"K\x07", b"G\x7f\xf8\x00\x00\x00\x00\x00\x00", b"G\x3f\xf0\x00\x00\x00\x00\x00\x00", b"\x89"];
    let strs: Vec<usize> = pickle.iter().enumerate().filter(|&(_, &b)| b == 0x8c).map(|(i, _)| i).collect();
    for (k, &at) in strs.iter().enumerate().take(24) {
        let len = usize::from(pickle.get(at + 1).copied().unwrap_or(0));
        for (r, replacement) in replacements.iter().enumerate() {
            let end = (at + 2 + len).min(pickle.len());
            let mut changed = [&pickle[..at], replacement, &pickle[end..]].concat();
            out.push(changed.clone());
            // Two of them: the same value twice, or two different ones.
            if let Some(&next) = strs.get(k + 1 + r % 2) {
                if next >= end {
                    let next = next - end + at + replacement.len();
                    let len2 = usize::from(changed.get(next + 1).copied().unwrap_or(0));
                    let end2 = (next + 2 + len2).min(changed.len());
                    changed = [&changed[..next], replacements[(r + k) % 4], &changed[end2..]].concat();
                    out.push(changed);
                }
            }
        }
    }
    for cut in [1, 2, pickle.len() / 2] {
        out.push(pickle[..pickle.len().saturating_sub(cut)].to_vec());
    }
    out
}

#[test]
fn check_passes_what_decoding_passes() {
    let mut checked = 0;
    for strings in [Python2Strings::Ascii, Python2Strings::Latin1, Python2Strings::Bytes] {
        let mut options = ReadOptions::new();
        options.python2_strings(strings);
        for (name, pickle) in pickles() {
            for (i, variant) in variants(&pickle).iter().enumerate() {
                let decoded = from_pickle_with(variant, &options);
                let check = check_pickle_with(variant, &options);
                match (&decoded, &check) {
                    (Ok(array), Ok(shape)) => assert_eq!(array.shape(), &shape[..], "{name} variant {i}"),
                    (Err(_), Err(_)) => {}
                    _ => panic!(
                        "{name} variant {i} ({strings:?}): decode {:?}, check {:?}",
                        decoded.as_ref().map(|a| a.shape().to_vec()),
                        check
                    ),
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
}

#[test]
fn a_prefix_check_stops_at_stop_and_reports_progress_before_it() {
    for (name, pickle) in pickles() {
        let mut stream = pickle.clone();
        stream.extend_from_slice(b"\x80\x04N.more bytes that are not read");
        let (mut last, mut passed) = (0, None);
        let checked = check_pickle_prefix(&stream, |progress| {
            match progress {
                CheckProgress::Checked(n) => {
                    assert!(n >= last && n < pickle.len(), "{name}: progress {n} after {last}");
                    last = n;
                }
                CheckProgress::Passed { shape, len } => passed = Some((shape.to_vec(), len)),
                _ => {}
            }
            ControlFlow::Continue(())
        });
        match check_pickle(&pickle) {
            Ok(shape) => {
                let checked = checked.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!((checked.shape.clone(), checked.len), (shape.clone(), pickle.len()), "{name}");
                assert_eq!(passed, Some((shape, pickle.len())), "{name}");
            }
            Err(_) => assert!(checked.is_err() && passed.is_none(), "{name}"),
        }
    }
}

#[test]
fn a_prefix_check_stops_when_asked() {
    // A long pickle (50,000 strs), so progress is reported before the end.
    let values: Vec<npy_core::Object> = (0..50_000).map(|i| format!("trace {i}").into()).collect();
    let array = npy_core::Array::from_shape_vec(vec![values.len()], values).expect("an array");
    let long = npy_core::object::to_pickle(&array).expect("a pickle");
    let mut calls = 0;
    let stopped = check_pickle_prefix(&long, |_| {
        calls += 1;
        ControlFlow::Break(())
    });
    assert!(stopped.is_err());
    assert_eq!(calls, 1);
}
