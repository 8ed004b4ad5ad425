//! The check (`check_pickle`, `check_pickle_prefix`), which keeps only what it needs of
//! the values, passes exactly the pickles decoding (`from_pickle`) passes, with the same
//! shape: NumPy's object and `StringDType` arrays in tests/data/object, and each with bytes
//! changed, cut short or followed by more, under every `Python2Strings`; and the sparse
//! check (`check_sparse_pickle_prefix_with`, bytes payloads left out) and the growing one
//! (`check_growing_pickle_with`, the pickle read as it is checked) pass none of them that
//! the check refuses.

use std::ops::ControlFlow;
use std::path::PathBuf;

use npy_core::object::{
    check_growing_pickle_with, check_pickle, check_pickle_prefix, check_pickle_prefix_with, check_pickle_with,
    check_sparse_pickle_prefix_with, from_pickle_with, CheckProgress, Gap, GrowingPickle, SparseCheck, SparsePickle,
};
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

/// Notes in `last` how far a check has come, failing if it went back.
fn furthest(progress: CheckProgress<'_>, last: &mut usize) -> ControlFlow<()> {
    if let CheckProgress::Checked(n) = progress {
        assert!(n >= *last, "progress {n} after {last}");
        *last = n;
    }
    ControlFlow::Continue(())
}

/// The sparse check of `pickle` with payloads of at least `min_gap` bytes left out, and
/// the furthest progress it reported.
fn sparse_check(sparse: &SparsePickle, options: &ReadOptions) -> (npy_core::Result<SparseCheck>, usize) {
    let mut last = 0;
    let checked = check_sparse_pickle_prefix_with(sparse, |progress| furthest(progress, &mut last), options);
    (checked, last)
}

/// The growing check of `pickle` with payloads of at least `min_gap` bytes left out, the
/// furthest progress it reported, and what it read (checked against `pickle`: the bytes
/// kept are the pickle's but for the gaps).
fn growing_check(
    pickle: &[u8],
    min_gap: u64,
    options: &ReadOptions,
) -> (npy_core::Result<SparseCheck>, usize, GrowingPickle) {
    let growing = GrowingPickle::new(pickle.len() as u64, min_gap).expect("address space");
    let mut last = 0;
    let checked = check_growing_pickle_with(
        &growing,
        std::io::Cursor::new(pickle),
        |progress| furthest(progress, &mut last),
        options,
    );
    let (kept, gaps) = (growing.bytes(), growing.gaps());
    let (mut at, mut from) = (0usize, 0usize);
    for g in gaps.iter().chain([&Gap { at: u64::MAX, kept: kept.len(), len: 0 }]) {
        let run = g.kept - from;
        // (A gap may claim more than the pickle holds: nothing is kept after it then.)
        assert_eq!(&kept[from..g.kept], pickle.get(at..at + run).unwrap_or(&[]), "kept bytes before {g:?}");
        assert!(g.at == u64::MAX || (g.len >= 1 && g.at == (at + run) as u64), "{g:?}");
        at = at.saturating_add(run).saturating_add(usize::try_from(g.len).unwrap_or(usize::MAX));
        from = g.kept;
    }
    (checked, last, growing)
}

#[test]
fn a_sparse_check_passes_only_what_the_check_passes() {
    let (mut passed, mut needed, mut gaps) = (0, 0, 0);
    for strings in [Python2Strings::Ascii, Python2Strings::Bytes] {
        let mut options = ReadOptions::new();
        options.python2_strings(strings);
        for (name, pickle) in pickles() {
            for (i, variant) in variants(&pickle).iter().enumerate() {
                let full = check_pickle_prefix_with(variant, |_| ControlFlow::Continue(()), &options);
                for min_gap in [1, 8, 64 << 10] {
                    let sparse = SparsePickle::read(std::io::Cursor::new(variant), min_gap).expect("in memory");
                    assert!(sparse.gaps().iter().all(|g| g.len >= min_gap));
                    gaps += sparse.gaps().len();
                    let (checked, last) = sparse_check(&sparse, &options);
                    let what = format!("{name} variant {i} ({strings:?}, gaps from {min_gap})");
                    // The growing check (read as it goes) ends as the sparse one but for
                    // payloads it had read already, which it checks in place.
                    let (growing, grown, _) = growing_check(variant, min_gap, &options);
                    match (&full, growing) {
                        (Ok(full), Ok(SparseCheck::Passed(growing))) => assert_eq!(full, &growing, "{what}"),
                        (_, Ok(SparseCheck::NeedsGap(at))) => assert!(grown as u64 <= at, "{what}: {grown} past {at}"),
                        (Err(_), Err(_)) => {}
                        (full, growing) => panic!("{what}: check {full:?}, growing check {growing:?}"),
                    }
                    match (&full, checked) {
                        (Ok(full), Ok(SparseCheck::Passed(sparse))) => {
                            assert_eq!(full, &sparse, "{what}");
                            passed += 1;
                        }
                        (_, Ok(SparseCheck::NeedsGap(at))) => {
                            // No opcode from the one that needed the gap is approved.
                            assert!(last as u64 <= at, "{what}: progress {last} past {at}");
                            needed += 1;
                        }
                        (Err(_), Err(_)) => {}
                        (full, sparse) => panic!("{what}: check {full:?}, sparse check {sparse:?}"),
                    }
                }
            }
        }
    }
    // Most pass with their payloads left out; a few need one (a scalar's data).
    assert!(gaps > 1_000 && passed > 5_000 && needed < passed / 10, "{gaps} gaps, {passed} passed, {needed} needed");
}

/// The pickle of an object array of a dict of two float arrays of `n` values each, as
/// `np.save` writes it (protocol 4: data of 256 bytes or more in `BINBYTES`), and a str.
fn dict_of_arrays(n: usize) -> Vec<u8> {
    let floats = |x: f64| {
        let data = (0..n).flat_map(|i| (x + i as f64).to_le_bytes()).collect();
        let header =
            npy_core::header::Header { dtype: "<f8".parse().expect("a dtype"), fortran_order: false, shape: vec![n] };
        npy_core::Object::Array(Box::new(npy_core::DynArray::new(header, data).expect("an array")))
    };
    let dict = npy_core::Object::Dict(vec![
        ("w".into(), floats(0.0)),
        ("b".into(), floats(0.5)),
        ("name".into(), "layer".into()),
    ]);
    let array = npy_core::Array::from_shape_vec(vec![], vec![dict]).expect("an array");
    npy_core::object::to_pickle(&array).expect("a pickle")
}

#[test]
fn a_sparse_check_reads_array_data_by_its_length_only() {
    let pickle = dict_of_arrays(100_000);
    let options = ReadOptions::new();
    let sparse = SparsePickle::read(std::io::Cursor::new(&pickle), 1000).expect("in memory");
    assert_eq!(sparse.gaps().len(), 2);
    assert_eq!(sparse.len(), pickle.len() as u64);
    assert_eq!(sparse.bytes().len() as u64 + 2 * 800_000, pickle.len() as u64);
    for g in sparse.gaps() {
        // Each gap is a payload, right after its BINBYTES and length.
        let start = g.at as usize;
        assert_eq!((pickle[start - 5], &pickle[start - 4..start]), (b'B', &800_000u32.to_le_bytes()[..]), "{g:?}");
        assert_eq!(g.len, 800_000);
    }
    let (checked, _) = sparse_check(&sparse, &options);
    let full = check_pickle_prefix(&pickle, |_| ControlFlow::Continue(())).expect("the pickle passes");
    assert_eq!(checked.expect("passes"), SparseCheck::Passed(full.clone()));
    // Data one byte shorter than its array needs: refused, as the check refuses it.
    let at = sparse.gaps()[0].at as usize;
    let mut short = pickle.clone();
    short[at - 4..at].copy_from_slice(&799_999u32.to_le_bytes());
    short.remove(at);
    assert!(check_pickle_prefix(&short, |_| ControlFlow::Continue(())).is_err());
    let sparse = SparsePickle::read(std::io::Cursor::new(&short), 1000).expect("in memory");
    let e = sparse_check(&sparse, &options).0.expect_err("refused");
    assert!(e.to_string().contains("needs 800000 bytes of data, found 799999"), "{e}");
    // Cut inside a payload left out: the rest is missing, and the check says so.
    let cut = SparsePickle::read(std::io::Cursor::new(&pickle[..at + 100]), 1000).expect("in memory");
    assert!(sparse_check(&cut, &options).0.is_err());
    // Read as it is checked: each payload left out but for the few KiB read with the
    // opcodes before it; the same answers.
    let (checked, _, growing) = growing_check(&pickle, 1000, &options);
    assert_eq!(checked.expect("passes"), SparseCheck::Passed(full));
    let gaps = growing.gaps();
    assert_eq!(gaps.len(), 2);
    assert!(gaps.iter().all(|g| g.len > 800_000 - 16_384), "{gaps:?}");
    assert!(growing.bytes().len() < 40_000, "{} bytes kept", growing.bytes().len());
    let e = growing_check(&short, 1000, &options).0.expect_err("refused");
    assert!(e.to_string().contains("needs 800000 bytes of data, found 799999"), "{e}");
    assert!(growing_check(&pickle[..at + 100], 1000, &options).0.is_err());
}

#[test]
fn a_sparse_check_that_needs_a_payload_says_so_before_approving_more() {
    // `bytearray(b'...')` (protocol 4) copies its bytes: the check needs them.
    let mut values = vec![npy_core::Object::from("x"); 100_000];
    values[50_000] = npy_core::Object::ByteArray(vec![5; 300]);
    let array = npy_core::Array::from_shape_vec(vec![values.len()], values).expect("an array");
    let pickle = npy_core::object::to_pickle(&array).expect("a pickle");
    assert!(check_pickle(&pickle).is_ok());
    let header = [&b"B"[..], &300u32.to_le_bytes()].concat();
    let payload = pickle.windows(5).position(|w| w == header).expect("a BINBYTES") + 5;
    let sparse = SparsePickle::read(std::io::Cursor::new(&pickle), 256).expect("in memory");
    assert_eq!(sparse.gaps(), [Gap { at: payload as u64, kept: payload, len: 300 }]);
    let (checked, last) = sparse_check(&sparse, &ReadOptions::new());
    let Ok(SparseCheck::NeedsGap(at)) = checked else { panic!("{checked:?}") };
    assert!(at >= payload as u64 + 300 && last < payload + 300 + 8, "needed at {at}, progress to {last}");
    assert!(last > 0);
}

#[test]
fn gaps_anywhere_but_a_payload_are_never_passed() {
    // Gaps cut at every offset of a small pickle, of every length to its end: none passes,
    // but those the reader would make (a BINBYTES payload).
    let values = vec![npy_core::Object::Bytes(vec![3; 300]), npy_core::Object::from("text"), npy_core::Object::Int(7)];
    let array = npy_core::Array::from_shape_vec(vec![3], values).expect("an array");
    let pickle = npy_core::object::to_pickle(&array).expect("a pickle");
    let options = ReadOptions::new();
    let header = [&b"B"[..], &300u32.to_le_bytes()].concat();
    let payload = pickle.windows(5).position(|w| w == header).expect("a BINBYTES") + 5;
    let real = [Gap { at: payload as u64, kept: payload, len: 300 }];
    let mut passed = Vec::new();
    for start in 0..pickle.len() {
        for len in 1..=(pickle.len() - start) as u64 {
            let bytes = [&pickle[..start], &pickle[start + len as usize..]].concat();
            let gap = Gap { at: start as u64, kept: start, len };
            let sparse = SparsePickle::from_parts(bytes, vec![gap]).expect("in order");
            if let Ok(SparseCheck::Passed(_)) = sparse_check(&sparse, &options).0 {
                passed.push(gap);
            }
        }
    }
    assert_eq!(passed, real);
}
