//! What the cargo-fuzz targets of `fuzz/` check, as plain tests (`cargo xtask fuzz` runs
//! the targets).
//!
//! Each function below does what one fuzz target does with its input, checks included,
//! and returns what the library answered: [`header`], [`npy_dynamic`], [`npz`] and
//! [`record`] (with the target's `Trace` type). An input that makes a target crash becomes
//! a `#[test]` here: the minimized bytes inline, a comment on what they are and what went
//! wrong, and the error kind the library now returns asserted.
//!
//! The targets have found one crash so far (a timezone's offset, below); the other tests
//! pin their checks on the inputs those checks are subtle for: a header that grows when
//! written back, a record read that fails in its second chunk, fields matched by name
//! across byte orders.

use std::io::Cursor;

use half::f16;
use npy_core::dtype::DType;
use npy_core::header::{Header, Version};
use npy_core::literal::{self, Literal, ParseOptions};
use npy_core::npz::{self, Compression};
use npy_core::object::{check_pickle_prefix_with, check_sparse_pickle_prefix_with, CheckedPrefix};
use npy_core::object::{SparseCheck, SparsePickle};
use npy_core::prelude::*;
use npy_core::types::Ucs4;
use npy_core::{ErrorKind, NpyReader, ReadOptions, Result};
use std::ops::ControlFlow;

// ---------------------------------------------------------------------------------------
// The targets.

/// `fuzz_targets/header.rs`: the first byte picks the version (and `L` suffixes), the
/// rest is header text. A literal that parses must print to text that parses back to it;
/// a header that parses must encode (if it fits the version) to bytes that parse back to it.
fn header(data: &[u8]) -> (std::result::Result<Literal, literal::LiteralError>, Result<Header>) {
    let (&pick, text) = data.split_first().expect("the first byte picks the version");
    let version = [Version::V1_0, Version::V2_0, Version::V3_0][usize::from(pick % 3)];
    let decoded: String = match version {
        Version::V3_0 => String::from_utf8_lossy(text).into_owned(),
        _ => text.iter().map(|&b| char::from(b)).collect(),
    };
    let mut opts = ParseOptions::new();
    opts.allow_long_suffix(pick & 0x80 != 0).max_depth(64);
    let lit = literal::parse_with(&decoded, &opts);
    if let Ok(lit) = &lit {
        let again = *ParseOptions::new().max_depth(65);
        assert_eq!(literal::parse_with(&lit.repr(), &again).as_ref(), Ok(lit), "repr {:?}", lit.repr());
    }
    let parsed = Header::parse(version, text);
    if let Ok(h) = &parsed {
        if let Ok((_, bytes)) = h.encode(Some(version)) {
            assert_eq!(Header::parse(version, &bytes[version.preamble_len()..]).as_ref().ok(), Some(h));
        }
    }
    (lit, parsed)
}

/// `fuzz_targets/npy_dynamic.rs`: read as a `DynArray` with the default options and with
/// a 1 MiB header limit; what reads must write back and read back equal. Returns the
/// default read.
fn npy_dynamic(data: &[u8]) -> Result<DynArray> {
    let round_trip = |arr: &DynArray| {
        let file = arr.write_npy_to(Vec::new()).unwrap();
        let back = npy_core::NpyReader::from_reader_with(&file[..], ReadOptions::new().max_header_size(usize::MAX))
            .and_then(|r| r.read::<DynArray>())
            .unwrap();
        assert_eq!((back.header(), back.data()), (arr.header(), arr.data()));
    };
    let large = npy_core::NpyReader::from_reader_with(data, ReadOptions::new().max_header_size(1 << 20))
        .and_then(|r| r.read::<DynArray>());
    if let Ok(arr) = &large {
        round_trip(arr);
    }
    let default = DynArray::read_npy_from(data);
    if let Ok(arr) = &default {
        round_trip(arr);
    }
    default
}

/// `fuzz_targets/pickle_sparse.rs`: the pickle of an object array read with its long bytes
/// payloads left out (gaps of at least `min_gap`) and checked; the sparse check passes only
/// what the check of the whole pickle passes. Returns the whole pickle's check.
fn pickle_sparse(data: &[u8], min_gap: u64) -> Result<CheckedPrefix> {
    let opts = ReadOptions::new();
    let full = check_pickle_prefix_with(data, |_| ControlFlow::Continue(()), &opts);
    let sparse = SparsePickle::read(Cursor::new(data), min_gap).unwrap();
    match (&full, check_sparse_pickle_prefix_with(&sparse, |_| ControlFlow::Continue(()), &opts)) {
        (Ok(full), Ok(SparseCheck::Passed(sparse))) => assert_eq!(full, &sparse),
        (_, Ok(SparseCheck::NeedsGap(_))) | (Err(_), Err(_)) => {}
        (full, sparse) => panic!("check {full:?}, sparse check {sparse:?}"),
    }
    full
}

/// `fuzz_targets/npz.rs`: open an archive and read every member as a `DynArray` and raw.
/// Returns, per member, its name and both reads.
type MemberReads = (String, Result<DynArray>, Result<Vec<u8>>);
fn npz(data: &[u8]) -> Result<Vec<MemberReads>> {
    let mut reader = npz::Reader::from_reader(Cursor::new(data))?;
    let _ = reader.members();
    let names = reader.names().to_vec();
    Ok(names
        .into_iter()
        .map(|name| {
            let _ = reader.is_npy(&name);
            let (arr, raw) = (reader.read::<DynArray>(&name), reader.read_raw(&name));
            (name, arr, raw)
        })
        .collect())
}

/// The record type of `fuzz_targets/record.rs`.
#[path = "../fuzz/fuzz_targets/record_type.rs"]
mod record_type;
use record_type::{Kind, Position, Trace};

/// `fuzz_targets/record.rs`: read `Vec<Trace>` whole and in chunks of 7; when the whole
/// read succeeds, the chunks must all succeed with the same records, and the records must
/// write and read back. Returns the whole read and the chunks' results.
fn record(data: &[u8]) -> (Result<Vec<Trace>>, Vec<Result<Vec<Trace>>>) {
    let whole = NpyReader::from_reader(data).and_then(|r| r.read::<Vec<Trace>>());
    let chunks: Vec<_> = match NpyReader::from_reader(data).and_then(|r| r.chunks::<Trace>(7)) {
        Ok(chunks) => chunks.collect(),
        Err(e) => vec![Err(e)],
    };
    if let Ok(whole) = &whole {
        let joined: Vec<Trace> = chunks.iter().flat_map(|c| c.as_ref().unwrap().clone()).collect();
        let file = whole.write_npy_to(Vec::new()).unwrap();
        assert_eq!(joined.write_npy_to(Vec::new()).unwrap(), file);
        let back = Vec::<Trace>::read_npy_from(&file[..]).unwrap();
        assert_eq!(back.write_npy_to(Vec::new()).unwrap(), file);
    }
    (whole, chunks)
}

// ---------------------------------------------------------------------------------------
// Inputs.

fn trace(id: u32) -> Trace {
    Trace {
        id,
        live: id.is_multiple_of(2),
        code: Ucs4::new(if id.is_multiple_of(3) { "ab" } else { "z" }).unwrap(),
        gain: [1.0, 0.5, -2.0],
        kind: [Kind::Shot, Kind::Receiver, Kind::Noise][id as usize % 3],
        rate: -250 * i64::from(id),
        at: Position { x: 1.5 * f64::from(id), y: -3.0 },
    }
}

/// `n` records of `Trace` as a `.npy` file.
fn trace_file(n: u32) -> Vec<u8> {
    (0..n).map(trace).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap()
}

/// A `.npy` file from descr text, a shape and the data.
fn npy(descr: &str, shape: Vec<usize>, data: &[u8]) -> Vec<u8> {
    let dtype: DType = descr.parse().unwrap();
    let (_, mut file) = Header::new(dtype, shape).encode(None).unwrap();
    file.extend_from_slice(data);
    file
}

// ---------------------------------------------------------------------------------------
// Tests.

/// A field name of control characters is one byte each in a 1.0 header but up to four in
/// the repr written back (`\x01`): a file that reads under a 10,000-byte header limit
/// (NumPy's default) writes back a header over it. So the round trip of `npy_dynamic` reads
/// back with no limit.
#[test]
fn a_header_that_grows_when_written_back() {
    // Raw control characters inside quotes are accepted, as by Python's ast; newlines are not.
    let name: Vec<u8> = (1..=31u8).filter(|b| !matches!(b, b'\n' | b'\r')).cycle().take(3000).collect();
    let text = [b"{'descr': [('".as_slice(), &name, b"', '|u1')], 'fortran_order': False, 'shape': (2,), }\n"].concat();
    let file =
        [b"\x93NUMPY\x01\x00".as_slice(), &u16::try_from(text.len()).unwrap().to_le_bytes(), &text, &[7, 9]].concat();

    let arr = npy_dynamic(&file).unwrap();
    assert_eq!(arr.data(), [7, 9]);
    let written = arr.write_npy_to(Vec::new()).unwrap();
    assert!(file.len() < 10_000 && written.len() > 10_000, "{} bytes written for {}", written.len(), file.len());
    let err =
        npy_core::NpyReader::from_reader_with(&written[..], ReadOptions::new().max_header_size(10_000)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::HeaderTooLarge { .. }), "{err}");
}

/// The printed literal of the header above parses back to it, escapes and all, in every
/// version; in 3.0 the text is UTF-8, so the same bytes are a different string.
#[test]
fn control_and_latin1_characters_print_and_parse_back() {
    let name: Vec<u8> = (1..=255u8).filter(|b| !matches!(b, b'\n' | b'\r' | b'\'')).collect();
    let text = [b"{'descr': [('".as_slice(), &name, b"', '<i4')], 'fortran_order': False, 'shape': (3,), }"].concat();
    for pick in [0u8, 1, 0x81] {
        let (lit, parsed) = header(&[&[pick], text.as_slice()].concat());
        let h = parsed.unwrap();
        let Literal::Dict(items) = lit.unwrap() else { panic!("not a dict") };
        assert_eq!(items.len(), 3);
        assert_eq!(h.shape, [3]);
        assert_eq!(h.dtype.itemsize(), 4);
    }
    // 3.0 (pick 2): bytes over 0x7f are not UTF-8 here.
    let (_, parsed) = header(&[&[2u8], text.as_slice()].concat());
    assert!(matches!(parsed.unwrap_err().kind(), ErrorKind::Header { .. }));
}

/// Record 7 has an enum value that is no discriminant: the whole read fails, and the
/// chunked read gives the first 7 records, then the same error for the second chunk.
#[test]
fn a_record_read_that_fails_in_its_second_chunk() {
    let mut file = trace_file(9);
    let data = file.len() - 9 * Trace::ITEMSIZE;
    let kind = data + 7 * Trace::ITEMSIZE + 4 + 1 + 8 + 12;
    assert_eq!(file[kind], Kind::Receiver as u8);
    file[kind] = 9;
    let (whole, chunks) = record(&file);
    let err = whole.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidValue { index: 7, .. }), "{err}");
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].as_ref().unwrap(), &(0..7).map(trace).collect::<Vec<_>>());
    let err = chunks[1].as_ref().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidValue { index: 7, .. }), "{err}");

    // A bool that is neither 0 nor 1, and a code point that is no char, the same way.
    for (offset, bytes) in [(4, vec![2]), (5, 0xd800u32.to_le_bytes().to_vec())] {
        let mut file = trace_file(9);
        let at = data + 8 * Trace::ITEMSIZE + offset;
        file[at..at + bytes.len()].copy_from_slice(&bytes);
        let (whole, chunks) = record(&file);
        assert!(matches!(whole.unwrap_err().kind(), ErrorKind::InvalidValue { index: 8, .. }));
        assert!(chunks[0].is_ok());
        assert!(matches!(chunks[1].as_ref().unwrap_err().kind(), ErrorKind::InvalidValue { index: 8, .. }));
    }
}

/// Fields are matched by name: another order, other byte orders, a narrower float and an
/// extra field read into `Trace` as the same records.
#[test]
fn records_in_another_layout_read_the_same() {
    let descr = "[('at', [('y', '>f2'), ('x', '>f8')]), ('rate', '<i8'), ('extra', '<u2'), ('kind', '|u1'), \
                 ('gain', '>f4', (3,)), ('code', '>U2'), ('live', '|b1'), ('id', '>u4')]";
    let mut data = Vec::new();
    for t in (0..10).map(trace) {
        data.extend(f16::from_f32(t.at.y).to_be_bytes());
        data.extend(t.at.x.to_be_bytes());
        data.extend(t.rate.to_le_bytes());
        data.extend(0xbeefu16.to_le_bytes());
        data.push(t.kind as u8);
        t.gain.iter().for_each(|g| data.extend(g.to_be_bytes()));
        t.code.code_points().iter().for_each(|c| data.extend(c.to_be_bytes()));
        data.push(u8::from(t.live));
        data.extend(t.id.to_be_bytes());
    }
    let file = npy(descr, vec![10], &data);
    let (whole, chunks) = record(&file);
    assert_eq!(whole.unwrap(), (0..10).map(trace).collect::<Vec<_>>());
    assert_eq!(chunks.iter().map(|c| c.as_ref().unwrap().len()).collect::<Vec<_>>(), [7, 3]);
    let arr = npy_dynamic(&file).unwrap();
    assert_eq!(arr.dtype().descr(), descr);
}

/// Found by `pickle_sparse`: a `datetime.timezone` whose offset is a `timedelta` of
/// 999,999,999 days (Python's longest, more microseconds than an `i64` holds). Checking
/// that the offset is within a day overflowed `TimeDelta::total_microseconds` (a panic in
/// debug builds; in release a wrapped value that might have passed). Now refused, by both
/// checks, with every gap length.
#[test]
fn a_timezone_offset_of_more_microseconds_than_an_i64_holds() {
    // np.array([timezone(timedelta(days=999_999_999))], dtype=object), protocol 4 without
    // frames (pickletools.optimize of np.save's, the timedelta's arguments replaced).
    let pickle = [
        &b"\x80\x04\x8c\x16numpy._core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x94\x8c\x07ndarray\x93"[..],
        b"K\x00\x85C\x01b\x87R(K\x01K\x01\x85h\x00\x8c\x05dtype\x93\x8c\x02O8\x89\x88\x87R(K\x03\x8c\x01|NNN",
        b"J\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89]\x8c\x08datetime\x94\x8c\x08timezone\x93h\x01",
        b"\x8c\ttimedelta\x93J\xff\xc9\x9a\x3bK\x00K\x00\x87R\x85Ratb.",
    ]
    .concat();
    for min_gap in [1, 8, 256, 64 << 10] {
        let e = pickle_sparse(&pickle, min_gap).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Pickle { .. }) && e.to_string().contains("a day or more"), "{e}");
    }
    // The same pickle with an offset of one hour passes.
    let hour = [&pickle[..pickle.len() - 17], b"K\x00M\x10\x0eK\x00\x87R\x85Ratb."].concat();
    assert_eq!(pickle_sparse(&hour, 1).unwrap().shape, [1]);
}

/// Every member of an archive is read both ways: a `.npy` member as an array, a member
/// that is not `.npy` only raw.
#[test]
fn npz_members_read_both_ways() {
    let mut writer = npz::Writer::new(Cursor::new(Vec::new()));
    writer.add("traces", &(0..3).map(trace).collect::<Vec<_>>()).unwrap();
    writer.add_raw_with("notes.txt", b"not an array", Compression::Deflated { level: 6 }).unwrap();
    let archive = writer.finish().unwrap().into_inner();
    let members = npz(&archive).unwrap();
    let names: Vec<&str> = members.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(names, ["traces", "notes.txt"]);
    let (_, arr, raw) = &members[0];
    assert_eq!(arr.as_ref().unwrap().to_vec::<Trace>().unwrap(), (0..3).map(trace).collect::<Vec<_>>());
    assert_eq!(raw.as_ref().unwrap(), &trace_file(3));
    let (_, arr, raw) = &members[1];
    assert!(matches!(arr.as_ref().unwrap_err().kind(), ErrorKind::Format { .. }));
    assert_eq!(raw.as_ref().unwrap(), b"not an array");
}
