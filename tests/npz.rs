//! `.npz` archives, checked against NumPy.
//!
//! Part one reads NumPy's reference archives (../shared/corpus/public): names as NumPy's
//! `NpzFile.files` lists them, each member's compression, sizes, header and data as the
//! corpus manifest records them, and typed values. Part two writes archives and reads them
//! back: dtypes, stored and deflated members, N-d and Fortran arrays, dynamic arrays, names,
//! errors, CRC checks, alignment, columns of records, and members written in pieces.
//!
//! Every archive NumPy should load is also written to `target/npz-check/<name>.npz` with a
//! sidecar `<name>.expect.json` saying what NumPy must see in it: member names in order,
//! and per member its dtype, shape, order, compression and values. `cargo xtask ci` has
//! NumPy load them all (xtask/npz_check.py).

#[path = "support/corpus.rs"]
mod shared_corpus;

use npy_seismic::Trace;

use std::io::{Cursor, Read, Seek, Write};
use std::path::{Path, PathBuf};

use half::f16;
use npy_core::npz::{Compression, DeflateOption, MemberInfo, Method, Reader, ReaderOptions, Writer};
use npy_core::prelude::*;
use npy_core::types::unit::{Days, Millis, Nanos, Seconds};
use npy_core::types::{Bytes, DateTime64, TimeDelta64, Ucs4};
use npy_core::{ErrorKind, ReadOptions};
use num_complex::Complex;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------
// Helpers.

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// NumPy's corpus (see `support/corpus.rs`).
fn corpus() -> Option<PathBuf> {
    shared_corpus::corpus("corpus npz tests")
}

/// The corpus manifest's entry for `file`.
fn manifest_entry(dir: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    entries.into_iter().find(|e| e["file"] == file).unwrap_or_else(|| panic!("{file} not in the manifest"))
}

fn big_headers() -> ReadOptions {
    let mut o = ReadOptions::new();
    o.max_header_size(1 << 20);
    o
}

fn writer() -> Writer<Cursor<Vec<u8>>> {
    Writer::new(Cursor::new(Vec::new()))
}

fn reader(bytes: Vec<u8>) -> Reader<Cursor<Vec<u8>>> {
    Reader::from_reader(Cursor::new(bytes)).unwrap_or_else(|e| panic!("archive does not open: {e}"))
}

fn member<'a>(members: &'a [MemberInfo], name: &str) -> &'a MemberInfo {
    members.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no member {name}"))
}

/// Asserts that `result` failed with an `ErrorKind::Npz` naming `member`; returns the message.
#[track_caller]
fn npz_error<T: std::fmt::Debug>(result: npy_core::Result<T>, member: Option<&str>) -> String {
    let e = result.expect_err("expected an npz error");
    let ErrorKind::Npz { member: got, .. } = e.kind() else { panic!("expected ErrorKind::Npz, got {e:?}") };
    assert_eq!(got.as_deref(), member, "{e}");
    e.to_string()
}

#[track_caller]
fn usage_error<T: std::fmt::Debug>(result: npy_core::Result<T>) -> String {
    let e = result.expect_err("expected a usage error");
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "expected ErrorKind::Usage, got {e:?}");
    e.to_string()
}

// ---------------------------------------------------------------------------------------
// Values as the NumPy check reads them (xtask/npz_check.py): integers and booleans as
// JSON numbers and booleans; floats as numbers, with NaN, ±inf and -0.0 as strings;
// complex as [re, im]; datetimes as their int64 value; `S` as hex; `U` as text.

trait Json {
    fn json(&self, out: &mut Vec<Value>);
}

macro_rules! json_int {
    ($($t:ty),*) => {$(impl Json for $t { fn json(&self, out: &mut Vec<Value>) { out.push(Value::from(*self)); } })*};
}
json_int!(i8, i16, i32, i64, u8, u16, u32, u64, bool);

fn float(v: f64) -> Value {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if v == 0.0 && v.is_sign_negative() {
        "-0.0".into()
    } else {
        Value::from(v)
    }
}

impl Json for f64 {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(float(*self));
    }
}
impl Json for f32 {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(float(*self as f64));
    }
}
impl Json for f16 {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(float(self.to_f64()));
    }
}
impl<T: Json> Json for Complex<T> {
    fn json(&self, out: &mut Vec<Value>) {
        let mut parts = Vec::new();
        self.re.json(&mut parts);
        self.im.json(&mut parts);
        out.push(Value::from(parts));
    }
}
impl<U: npy_core::types::unit::Unit> Json for DateTime64<U> {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.value()));
    }
}
impl<U: npy_core::types::unit::Unit> Json for TimeDelta64<U> {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.value()));
    }
}
impl<const N: usize> Json for Bytes<N> {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(Value::from(hex(self.raw())));
    }
}
impl<const N: usize> Json for Ucs4<N> {
    fn json(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.to_string()));
    }
}
impl<T: Json, const N: usize> Json for [T; N] {
    fn json(&self, out: &mut Vec<Value>) {
        self.iter().for_each(|v| v.json(out));
    }
}

/// Values of `xs` in storage order, subarrays flattened.
fn vals<T: Json>(xs: &[T]) -> Value {
    let mut out = Vec::new();
    xs.iter().for_each(|x| x.json(&mut out));
    Value::from(out)
}

/// Values of one field of records, `get` giving the field of a record.
fn field<R, T: Json>(records: &[R], get: impl Fn(&R) -> T) -> Value {
    let mut out = Vec::new();
    records.iter().for_each(|r| get(r).json(&mut out));
    Value::from(out)
}

// ---------------------------------------------------------------------------------------
// What NumPy must see: the sidecars of target/npz-check.

fn check_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/npz-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::Stored => "stored",
        Compression::Deflated { .. } => "deflated",
        Compression::Zstd { .. } => "zstd",
    }
}

/// The members NumPy must list, in order, with what each holds.
#[derive(Default)]
struct Expect {
    members: Vec<Value>,
}

impl Expect {
    /// A plain array: `dtype` as NumPy's `dtype.str`, values in storage order.
    fn array(&mut self, name: &str, dtype: &str, shape: &[usize], fortran: bool, c: Compression, values: Value) {
        self.members.push(json!({
            "name": name, "member": format!("{name}.npy"), "compression": compression_name(c),
            "dtype": dtype, "shape": shape, "fortran": fortran, "values": values,
        }));
    }

    /// A record array: `descr` as the header writes it, values per field (dotted paths,
    /// storage order, subarrays flattened per record).
    fn records(
        &mut self,
        name: &str,
        descr: &str,
        shape: &[usize],
        fortran: bool,
        c: Compression,
        fields: Vec<(&str, Value)>,
    ) {
        let fields: Vec<Value> = fields.into_iter().map(|(p, v)| json!([p, v])).collect();
        self.members.push(json!({
            "name": name, "member": format!("{name}.npy"), "compression": compression_name(c),
            "descr": descr, "shape": shape, "fortran": fortran, "fields": fields,
        }));
    }

    /// An array equal to the `.npy` file at `path` (as NumPy loads it).
    fn npy_file(&mut self, name: &str, c: Compression, path: &Path) {
        self.members.push(json!({
            "name": name, "member": format!("{name}.npy"), "compression": compression_name(c),
            "npy_file": path.to_str().unwrap(),
        }));
    }

    /// A member that is not a `.npy` file: NumPy gives its bytes.
    fn raw(&mut self, member: &str, c: Compression, bytes: &[u8]) {
        self.members.push(json!({
            "name": member, "member": member, "compression": compression_name(c), "raw_hex": hex(bytes),
        }));
    }

    /// Writes `target/npz-check/<name>.npz` (unless `bytes` is `None`: the test wrote it
    /// there) and its sidecar.
    fn publish(&self, name: &str, bytes: Option<&[u8]>) {
        let dir = check_dir();
        if let Some(bytes) = bytes {
            std::fs::write(dir.join(format!("{name}.npz")), bytes).unwrap();
        }
        assert!(dir.join(format!("{name}.npz")).is_file(), "{name}.npz was not written");
        let sidecar = json!({ "archive": format!("{name}.npz"), "members": self.members });
        std::fs::write(dir.join(format!("{name}.expect.json")), serde_json::to_string_pretty(&sidecar).unwrap())
            .unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Part one: NumPy's archives.

/// Every archive of the corpus with `np.load(f).files`, computed with NumPy 2.4.6 when this
/// test was written (`[np.load(f, max_header_size=10**6).files for f in ...]`).
const CORPUS: &[(&str, &[&str])] = &[
    ("npz/compressed_mixed.npz", &["matrix", "zero_d", "records", "flags", "empty"]),
    ("npz/empty_archive.npz", &[]),
    ("npz/large_compressible_compressed.npz", &["ramp"]),
    ("npz/member_names_compressed.npz", &["v.1.2", "Größe", "地震.波形"]),
    ("npz/member_names_stored.npz", &["data.v1", "a.b.c", "temp.温度", "ünïcode", "dir/sub", "x.npy"]),
    ("npz/mixed_positional_keyword.npz", &["name", "arr_0", "arr_1"]),
    (
        "npz/positional_12_compressed.npz",
        &["arr_0", "arr_1", "arr_2", "arr_3", "arr_4", "arr_5", "arr_6", "arr_7", "arr_8", "arr_9", "arr_10", "arr_11"],
    ),
    ("npz/positional_stored.npz", &["arr_0", "arr_1", "arr_2"]),
    ("npz/single_0d_stored.npz", &["answer"]),
    ("npz/stored_mixed.npz", &["matrix", "count", "records", "labels", "times", "scalar_rec"]),
    ("npz/v2_member_stored.npz", &["wide", "small"]),
    ("npz/v3_member_compressed.npz", &["uni"]),
    ("record/survey_compressed.npz", &["traces", "shot_xyz", "meta", "line.name"]),
    ("record/survey_stored_aligned.npz", &["traces", "ids"]),
];

#[test]
fn corpus_archives_read_as_numpy_lists_and_the_manifest_records_them() {
    let Some(dir) = corpus() else { return };
    // The list above is every npz of the manifest.
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut in_manifest: Vec<&str> =
        entries.iter().filter(|e| e["kind"] == "npz").map(|e| e["file"].as_str().unwrap()).collect();
    in_manifest.sort();
    let mut ours: Vec<&str> = CORPUS.iter().map(|(f, _)| *f).collect();
    ours.sort();
    assert_eq!(ours, in_manifest);

    let mut checked = 0;
    for (file, names) in CORPUS {
        let entry = manifest_entry(&dir, file);
        let mut r = Reader::from_path_with(dir.join(file), ReaderOptions::new().read_options(&big_headers()))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(r.names(), *names, "{file}: names");
        let members = r.members().to_vec();
        let want = entry["members"].as_array().unwrap();
        assert_eq!(members.len(), want.len(), "{file}");
        for (m, w) in members.iter().zip(want) {
            let at = format!("{file}: {}", m.member);
            assert_eq!(m.member, w["name"].as_str().unwrap(), "{at}");
            assert_eq!(m.name, w["key"].as_str().unwrap(), "{at}");
            let deflated = w["compressed"].as_bool().unwrap();
            // NumPy's zipfile records no deflate option (bits 1 and 2 of the flags clear).
            assert_eq!(
                m.compression,
                Some(if deflated { Method::Deflated(DeflateOption::Normal) } else { Method::Stored }),
                "{at}"
            );
            assert_eq!(m.size, w["file_size"].as_u64().unwrap(), "{at}: size");
            assert_eq!(m.compressed_size, w["compress_size"].as_u64().unwrap(), "{at}: compressed size");
            // The corpus has no member that is not a .npy file (see raw_members_... for those).
            assert!(r.is_npy(&m.name).unwrap(), "{at}");

            let npy = r.npy(&m.name).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(npy.header().dtype.descr(), w["descr"].as_str().unwrap(), "{at}: descr");
            let shape: Vec<usize> =
                w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
            assert_eq!(npy.header().shape, shape, "{at}: shape");
            assert_eq!(npy.header().fortran_order, w["fortran_order"].as_bool().unwrap(), "{at}: order");
            let (major, minor) = npy.version().number();
            assert_eq!(json!([major, minor]), w["version"], "{at}: version");
            assert_eq!(npy.header_len() as u64, w["header_len"].as_u64().unwrap(), "{at}: header_len");
            assert_eq!(npy.data_offset() as u64, w["data_offset"].as_u64().unwrap(), "{at}: data_offset");
            drop(npy);

            let arr = r.read::<DynArray>(&m.name).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(arr.data().len() as u64, w["data_len"].as_u64().unwrap(), "{at}: data_len");
            assert_eq!(sha256(arr.data()), w["sha256_data"].as_str().unwrap(), "{at}: data sha256");
            let raw = r.read_raw(&m.name).unwrap();
            assert_eq!(sha256(&raw), w["sha256_member"].as_str().unwrap(), "{at}: member sha256");
            // Our .npy writer gives the member's bytes back (NumPy's headers, any version).
            assert!(arr.write_npy_to(Vec::new()).unwrap() == raw, "{at}: rewrite differs");
            checked += 1;
        }
    }
    assert_eq!(checked, 49);
}

/// NumPy writes every member with zip64 local headers (sizes 0xFFFFFFFF and a zip64 extra
/// field), and `Reader` reads them; the empty archive is a bare end-of-directory record.
#[test]
fn corpus_zip64_local_headers_and_the_empty_archive() {
    let Some(dir) = corpus() else { return };
    for (file, names) in CORPUS.iter().filter(|(_, names)| !names.is_empty()) {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let r = reader(bytes.clone());
        for m in r.members() {
            let start = m.data_start.unwrap() as usize;
            // The local header ends where the data starts: 30 bytes, the name, the extra.
            let header = (0..start).rev().find(|&i| bytes[i..].starts_with(b"PK\x03\x04")).unwrap();
            let field = |at: usize, n: usize| &bytes[header + at..header + at + n];
            let (n, x) = (
                u16::from_le_bytes(field(26, 2).try_into().unwrap()) as usize,
                u16::from_le_bytes(field(28, 2).try_into().unwrap()) as usize,
            );
            assert_eq!(header + 30 + n + x, start, "{file}: {}", m.member);
            assert_eq!(field(18, 8), [0xff; 8], "{file}: {}: sizes deferred to zip64", m.member);
            assert_eq!(field(30 + n, 2), [1, 0], "{file}: {}: zip64 extra first", m.member);
            let sizes = field(30 + n + 4, 16);
            assert_eq!(u64::from_le_bytes(sizes[..8].try_into().unwrap()), m.size, "{file}: {}", m.member);
            assert_eq!(u64::from_le_bytes(sizes[8..].try_into().unwrap()), m.compressed_size);
        }
        assert_eq!(r.names(), *names);
    }

    let bytes = std::fs::read(dir.join("npz/empty_archive.npz")).unwrap();
    assert_eq!(bytes.len(), 22);
    let mut r = reader(bytes.clone());
    assert!(r.names().is_empty());
    assert!(r.members().is_empty());
    let msg = npz_error(r.read::<Vec<f64>>("x"), Some("x"));
    assert!(msg.contains("no such array"), "{msg}");
    // An empty archive of ours is NumPy's, byte for byte.
    assert_eq!(writer().finish().unwrap().into_inner(), bytes);
}

/// Every member of NumPy's archives read at once (`read_all_dyn`: members of an archive
/// opened by path on worker threads; from memory one after another; from handles of their
/// own with `read_many_from`) is what the manifest records, in archive order.
#[test]
fn corpus_archives_read_all_at_once_as_numpy_wrote_them() {
    let Some(dir) = corpus() else { return };
    let mut options = ReaderOptions::new();
    options.read_options(&big_headers());
    let mut checked = 0;
    for (file, names) in CORPUS {
        let want = manifest_entry(&dir, file)["members"].as_array().unwrap().clone();
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let r = npy_core::npz::Reader::from_reader_with(Cursor::new(&bytes), &options).unwrap();
        let reads = [
            npy_core::npz::Reader::from_path_with(&path, &options).unwrap().read_all::<DynArray>().unwrap(),
            npy_core::npz::Reader::from_reader_with(Cursor::new(&bytes), &options)
                .unwrap()
                .read_all::<DynArray>()
                .unwrap(),
            r.read_many_from::<DynArray, _>(r.names(), || Ok(Cursor::new(&bytes))).unwrap(),
        ];
        for arrays in reads {
            assert_eq!(arrays.len(), names.len(), "{file}");
            for (a, w) in arrays.iter().zip(&want) {
                let at = format!("{file}: {}", w["name"]);
                assert_eq!(a.dtype().descr(), w["descr"].as_str().unwrap(), "{at}");
                assert_eq!(sha256(a.data()), w["sha256_data"].as_str().unwrap(), "{at}: data sha256");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 3 * 49);

    // Typed, a member at a time as `np.load(f)[k]` gives it.
    let mut r = Reader::from_path(dir.join("npz/large_compressible_compressed.npz")).unwrap();
    let all = r.read_all::<Vec<i32>>().unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].len(), 1_000_003);
    assert!(all[0].iter().enumerate().all(|(i, &v)| v == (i % 1000) as i32));
    let mut r = Reader::from_path(dir.join("npz/positional_12_compressed.npz")).unwrap();
    let Err(e) = r.read_many::<Vec<i64>>(&["arr_2", "arr_0", "arr_3"]) else { panic!("'<u8' read as i64") };
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    assert_eq!(e.member(), Some("arr_3.npy"), "{e}");
    let picked = r.read_many::<Vec<i64>>(&["arr_2", "arr_0"]).unwrap();
    assert_eq!(picked, [vec![i32::MIN as i64, i32::MAX as i64, 0], vec![-128]]);
}

/// `read_all` of a deflated archive from its path, members inflating on worker threads,
/// gives every member's values in archive order; a corrupt member is the error, naming it
/// and the archive.
#[test]
fn deflated_archives_read_all_at_once_from_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.npz");
    let runs: Vec<Vec<f64>> =
        (0..5).map(|k| (0..300_000).map(|i| (i % 977) as f64 * 0.25 + k as f64).collect()).collect();
    let mut w = Writer::create(&path).unwrap();
    w.compression(Compression::Deflated { level: 1 });
    for (k, run) in runs.iter().enumerate() {
        w.add(&format!("run{k}"), run).unwrap();
    }
    w.add_with("stored", &[7u8; 3], Compression::Stored).unwrap();
    w.finish().unwrap();

    let mut r = Reader::from_path(&path).unwrap();
    let names: Vec<String> = (0..5).map(|k| format!("run{k}")).collect();
    assert!(r.read_many::<Vec<f64>>(&names).unwrap() == runs);
    let arrays = r.read_all::<DynArray>().unwrap();
    assert_eq!(arrays.len(), 6);
    assert!(arrays[3].to_vec::<f64>().unwrap() == runs[3]);
    assert_eq!(arrays[5].data(), [7, 7, 7]);
    // `stored` ('|u1') widens to f64; no '<f8' member narrows to u8, the first failing.
    let all = r.read_all::<Vec<f64>>().unwrap();
    assert!(all[..5] == runs[..] && all[5] == [7.0; 3]);
    let Err(e) = r.read_all::<Vec<u8>>() else { panic!("'<f8' read as u8") };
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    assert_eq!(e.member(), Some("run0.npy"), "{e}");

    // Member run2's deflate stream corrupted in its middle: the error names it and the file.
    let mut bytes = std::fs::read(&path).unwrap();
    let m = r.members()[2].clone();
    let mid = (m.data_start.unwrap() + m.compressed_size / 2) as usize;
    bytes[mid..mid + 64].fill(0xff);
    std::fs::write(&path, &bytes).unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    let Err(e) = r.read_many::<Vec<f64>>(&names) else { panic!("a corrupt member read") };
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    assert_eq!(e.member(), Some("run2.npy"), "{e}");
    assert!(e.to_string().contains("runs.npz"), "{e}");
    assert!(r.read_many::<Vec<f64>>(&names[..2]).unwrap() == runs[..2]);
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Meta {
    n_shots: u16,
    line: Bytes<8>,
    dt: f32,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Tagged {
    id: i32,
    pos: [f64; 3],
    tag: Bytes<4>,
}

#[derive(NpyRecord, Debug)]
struct Uni {
    #[npy(rename = "温度")]
    temperature: f32,
    #[npy(rename = "α", endian = "big")]
    alpha: i16,
}

/// Typed reads of NumPy's archives, values as `np.load` gives them (printed with NumPy and
/// written here by hand).
#[test]
fn corpus_typed_reads_give_numpys_values() {
    let Some(dir) = corpus() else { return };
    let open = |file: &str| Reader::from_path(dir.join(file)).unwrap();

    let mut r = open("npz/stored_mixed.npz");
    let m = r.read::<Array<f64>>("matrix").unwrap();
    assert_eq!((m.shape(), m.fortran_order()), (&[3, 4][..], false));
    assert!(m.get(&[0, 0]).unwrap().is_nan());
    assert_eq!(m.get(&[0, 3]).unwrap().to_bits(), (-0.0f64).to_bits());
    assert_eq!(m.get(&[1, 0]).unwrap().to_bits(), 1);
    assert_eq!(m.as_slice()[4..8], [f64::from_bits(1), f64::INFINITY, f64::NEG_INFINITY, f64::MAX]);
    assert_eq!(m.as_slice()[8..], [f64::MIN_POSITIVE, 1.0, 0.1, -9.429012543066844e-20]);
    assert_eq!(r.read::<Array<i32>>("count").unwrap().as_slice(), [42]);
    let e = r.read::<Vec<i32>>("count").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let times = r.read::<Vec<DateTime64<Nanos>>>("times").unwrap();
    assert_eq!(
        times.iter().map(|t| t.value()).collect::<Vec<_>>(),
        [i64::MIN, 0, -1, -i64::MAX, i64::MAX, 1000503650434391514]
    );
    let labels = r.read::<Vec<Ucs4<10>>>("labels").unwrap();
    assert_eq!(labels[..3].iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["xxxxxxxxxx", "", "𐍈glA1𐍈"]);
    let recs = r.read::<Vec<Tagged>>("records").unwrap();
    assert_eq!(recs.iter().map(|t| t.id).collect::<Vec<_>>()[..4], [i32::MIN, i32::MAX, 0, -1]);
    assert_eq!(recs[0].tag.as_bytes(), b"ghyj");
    assert_eq!(recs[2].pos, [f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE]);
    let one = r.read::<Array<Tagged>>("scalar_rec").unwrap();
    assert_eq!(
        (one.shape(), one.as_slice()[0].id, one.as_slice()[0].tag.as_bytes()),
        (&[][..], i32::MIN, &b"<]_\""[..])
    );
    // Not a column archive: the members are not fields of a record.
    npz_error(r.read_columns::<Meta>(), Some("n_shots"));

    let mut r = open("npz/compressed_mixed.npz");
    let m = r.read::<Array<f32>>("matrix").unwrap(); // '>f4', Fortran order
    assert_eq!((m.shape(), m.fortran_order()), (&[4, 3][..], true));
    assert_eq!(m.get(&[1, 1]).unwrap().to_bits(), 1);
    assert_eq!(m.get(&[2, 1]), Some(&f32::MAX));
    assert_eq!(m.get(&[3, 1]), Some(&0.1f32));
    assert_eq!(m.get(&[3, 2]), Some(&5820235273732096.0f32));
    assert_eq!(m.as_slice()[1..4], [-0.0, f32::NEG_INFINITY, 1.0]); // column 0, rows 1..4 in storage order
    let z = r.read::<Array<Complex<f64>>>("zero_d").unwrap();
    assert!(z.shape().is_empty() && z.as_slice()[0].re.is_nan() && z.as_slice()[0].im.is_nan());
    assert_eq!(r.read::<Vec<bool>>("flags").unwrap(), [false, true, false, false, true, false, false, true, true]);
    let empty = r.read::<Array<i64>>("empty").unwrap();
    assert_eq!((empty.shape(), empty.as_slice().len()), (&[0, 4][..], 0));
    assert_eq!(r.read::<Vec<Tagged>>("records").unwrap().len(), 7);

    let mut r = open("npz/positional_stored.npz");
    assert_eq!(r.read::<Vec<i16>>("arr_0").unwrap(), [-32768, 32767, 0, -1, 90]);
    assert_eq!(r.read::<Vec<i64>>("arr_0").unwrap(), [-32768, 32767, 0, -1, 90]); // widened
    let s = r.read::<Vec<Bytes<3>>>("arr_2").unwrap();
    assert_eq!(s.iter().map(|b| *b.raw()).collect::<Vec<_>>(), [[0x3b, 0, 0x2e], [0x99, b'm', 0], [0xb2, 0, b'y']]);
    let e = r.read::<Vec<i8>>("arr_0").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");

    let mut r = open("npz/single_0d_stored.npz");
    assert_eq!(r.read::<Array<f64>>("answer").unwrap().as_slice(), [3.25]);

    let mut r = open("npz/member_names_stored.npz");
    assert_eq!(r.read::<Vec<u16>>("ünïcode").unwrap(), [0, 65535]);
    assert_eq!(r.read::<Vec<u8>>("dir/sub").unwrap(), [0, 255, 0, 1]);
    assert_eq!(r.read::<Vec<i32>>("a.b.c").unwrap(), [i32::MIN, i32::MAX]);
    // As `np.load(f)["a.b.c.npy"]`: the member's own name works too.
    assert_eq!(r.read::<Vec<i32>>("a.b.c.npy").unwrap(), [i32::MIN, i32::MAX]);
    // Key "x.npy" is member "x.npy.npy".
    assert_eq!(r.read::<Array<i64>>("x.npy").unwrap().as_slice(), [i64::MIN]);
    assert_eq!(r.read::<Array<i64>>("x.npy.npy").unwrap().as_slice(), [i64::MIN]);
    assert!(r.read::<Vec<f64>>("temp.温度").unwrap().iter().all(|v| v.is_nan()));

    let mut r = open("npz/member_names_compressed.npz");
    assert_eq!(r.read::<Vec<u32>>("v.1.2").unwrap(), [0, u32::MAX, 0]);
    let g = r.read::<Array<f16>>("Größe").unwrap();
    assert_eq!((g.shape(), g.as_slice()[3].to_bits()), (&[2, 2][..], 0x8000));
    assert_eq!(r.read::<Vec<f32>>("地震.波形").unwrap()[3..], [-0.0, f32::from_bits(1)]);

    let mut r = open("npz/mixed_positional_keyword.npz");
    let names = r.read::<Vec<Ucs4<4>>>("name").unwrap();
    assert_eq!(names.iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["xxxx", "_"]);
    assert_eq!(r.read::<Vec<i32>>("arr_0").unwrap(), [i32::MIN, i32::MAX]);

    let mut r = open("npz/positional_12_compressed.npz");
    assert_eq!(r.read::<Vec<i8>>("arr_0").unwrap(), [-128]);
    assert_eq!(r.read::<Vec<i32>>("arr_2").unwrap(), [i32::MIN, i32::MAX, 0]);
    assert_eq!(r.read::<Vec<u64>>("arr_3").unwrap(), [0, u64::MAX, 0, 1]);
    let days = r.read::<Vec<DateTime64<Days>>>("arr_10").unwrap();
    assert_eq!(days[..5].iter().map(|d| d.value()).collect::<Vec<_>>(), [i64::MIN, 0, -1, -i64::MAX, i64::MAX]);
    let c = r.read::<Vec<Complex<f32>>>("arr_7").unwrap();
    assert_eq!(c[7], Complex::new(f32::MAX, f32::from_bits(1)));

    let mut r = open("npz/large_compressible_compressed.npz");
    let ramp = r.read::<Vec<i32>>("ramp").unwrap();
    assert_eq!(ramp.len(), 1_000_003);
    assert!(ramp.iter().enumerate().all(|(i, &v)| v == (i % 1000) as i32));
    // Streamed in chunks from the deflated member.
    let mut seen = 0;
    for chunk in r.npy("ramp").unwrap().chunks::<i64>(300_000).unwrap() {
        let chunk = chunk.unwrap();
        assert!(chunk.iter().enumerate().all(|(k, &v)| v == ((seen + k) % 1000) as i64));
        seen += chunk.len();
    }
    assert_eq!(seen, 1_000_003);

    let with = |o: &ReadOptions| {
        Reader::from_path_with(dir.join("npz/v2_member_stored.npz"), ReaderOptions::new().read_options(o)).unwrap()
    };
    let mut r = with(ReadOptions::new().max_header_size(10_000));
    let e = r.read::<DynArray>("wide").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::HeaderTooLarge { len: 93684, limit: 10000 }), "{e}");
    assert_eq!(r.read::<Vec<i16>>("small").unwrap(), [-32768, 32767]);
    let mut r = with(&big_headers());
    let wide = r.read::<DynArray>("wide").unwrap();
    assert_eq!((wide.shape(), wide.dtype().as_record().unwrap().fields().len()), (&[2][..], 2400));

    let mut r = open("npz/v3_member_compressed.npz");
    let uni = r.read::<Vec<Uni>>("uni").unwrap();
    assert_eq!(uni.iter().map(|u| u.alpha).collect::<Vec<_>>(), [-32768, 32767, 0]);
    assert!(uni.iter().all(|u| u.temperature.is_nan()));

    let mut r = open("record/survey_compressed.npz");
    let traces = r.read::<Vec<Trace>>("traces").unwrap();
    assert_eq!(traces.iter().map(|t| t.trace_id).collect::<Vec<_>>(), (1000..1024).collect::<Vec<_>>());
    assert_eq!(traces[..3].iter().map(|t| t.receiver.x).collect::<Vec<_>>(), [500000.0, 500012.5, 500025.0]);
    assert_eq!(
        traces[..3].iter().map(|t| t.t0).collect::<Vec<_>>(),
        [0.1293238660764698, 0.0007642759123643206, 0.09185385948707375]
    );
    assert_eq!(
        traces[0].samples[..3].iter().map(|&s| s as f64).collect::<Vec<_>>(),
        [-0.10180056840181351, -0.07737518846988678, -0.004294788930565119]
    );
    let xyz = r.read::<Array<f64>>("shot_xyz").unwrap();
    assert_eq!(
        (xyz.shape(), xyz.get(&[3, 1]), xyz.get(&[3, 2])),
        (&[4, 3][..], Some(&0.1), Some(&1.946388614825586e+141))
    );
    let meta = r.read::<Array<Meta>>("meta").unwrap();
    assert!(meta.shape().is_empty());
    assert_eq!(meta.as_slice()[0], Meta { n_shots: 3, line: Bytes::new(b"LINE-001").unwrap(), dt: 0.004 });
    assert_eq!(r.read::<Array<Ucs4<16>>>("line.name").unwrap().as_slice()[0].to_string(), "Línea Norte 温");

    // Aligned big-endian traces read into the native packed struct by field name.
    let mut r = open("record/survey_stored_aligned.npz");
    let traces = r.read::<Vec<Trace>>("traces").unwrap();
    assert_eq!(traces.iter().map(|t| t.trace_id).collect::<Vec<_>>(), (1000..1010).collect::<Vec<_>>());
    assert_eq!(
        traces[..3].iter().map(|t| t.t0).collect::<Vec<_>>(),
        [0.15367622302722872, 0.10393886759913268, 0.09407057753777362]
    );
    assert_eq!(
        traces[0].samples[..3].iter().map(|&s| s as f64).collect::<Vec<_>>(),
        [-0.031855978071689606, -0.05084352195262909, -0.01408184040337801]
    );
    assert_eq!(r.read::<Vec<i32>>("ids").unwrap(), (0..10).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------------
// Part two: archives we write.

/// One member of the dtype tests: written, read back, and described for NumPy.
trait Member {
    fn name(&self) -> &str;
    fn add(&self, w: &mut Writer<Cursor<Vec<u8>>>, c: Option<Compression>) -> npy_core::Result<()>;
    fn check(&self, r: &mut Reader<Cursor<Vec<u8>>>);
    fn expect(&self, e: &mut Expect, c: Compression);
}

struct Typed<T> {
    name: &'static str,
    dtype: &'static str,
    data: Vec<T>,
}

fn typed<T: NpyRecord + Json + 'static>(name: &'static str, dtype: &'static str, data: Vec<T>) -> Box<dyn Member> {
    Box::new(Typed { name, dtype, data })
}

impl<T: NpyRecord + Json> Member for Typed<T> {
    fn name(&self) -> &str {
        self.name
    }

    fn add(&self, w: &mut Writer<Cursor<Vec<u8>>>, c: Option<Compression>) -> npy_core::Result<()> {
        match c {
            Some(c) => w.add_with(self.name, &self.data, c),
            None => w.add(self.name, &self.data),
        }
    }

    fn check(&self, r: &mut Reader<Cursor<Vec<u8>>>) {
        let back = r.read::<Vec<T>>(self.name).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        assert_eq!(vals(&back), vals(&self.data), "{}", self.name);
        let npy = r.npy(self.name).unwrap();
        assert_eq!(npy.header().dtype.descr(), format!("'{}'", self.dtype), "{}", self.name);
        drop(npy);
        // The member is the .npy file of the same data.
        let raw = r.read_raw(self.name).unwrap();
        assert!(raw == self.data.write_npy_to(Vec::new()).unwrap(), "{}: member bytes", self.name);
    }

    fn expect(&self, e: &mut Expect, c: Compression) {
        e.array(self.name, self.dtype, &[self.data.len()], false, c, vals(&self.data));
    }
}

fn dtype_members() -> Vec<Box<dyn Member>> {
    let nan = f64::NAN;
    vec![
        typed("u1", "|u1", vec![0u8, 1, 127, 128, 255]),
        typed("i1", "|i1", vec![i8::MIN, -1, 0, 1, i8::MAX]),
        typed("i2", "<i2", vec![i16::MIN, -1, 0, 1, i16::MAX]),
        typed("u2", "<u2", vec![0u16, 1, 0xfffe, u16::MAX]),
        typed("i4", "<i4", (-5..5).map(|i| i * 123_456_789).collect::<Vec<i32>>()),
        typed("u4", "<u4", vec![0u32, 1, u32::MAX]),
        typed("i8", "<i8", vec![i64::MIN, -1, 0, 1, i64::MAX]),
        typed("u8", "<u8", vec![0u64, 1 << 53, u64::MAX]),
        typed("b1", "|b1", vec![true, false, false, true]),
        typed("f2", "<f2", [1.0, -2.0, 0.5, 65504.0, -0.0, f64::INFINITY].map(f16::from_f64).to_vec()),
        typed("f4", "<f4", vec![0.5f32, -1.25, f32::MIN_POSITIVE, f32::MAX, -0.0, f32::INFINITY, f32::NAN, 0.1]),
        typed("f8", "<f8", vec![0.1f64, -2.5, f64::MAX, f64::from_bits(1), -0.0, f64::NEG_INFINITY, nan, 1e300]),
        typed("c8", "<c8", vec![Complex::new(1.5f32, -2.0), Complex::new(-0.0, f32::INFINITY)]),
        typed("c16", "<c16", vec![Complex::new(0.1f64, 1e-300), Complex::new(nan, -0.0), Complex::new(3.0, 4.0)]),
        typed(
            "M8_ms",
            "<M8[ms]",
            [i64::MIN, 0, 1_700_000_000_000, -86_400_000].map(DateTime64::<Millis>::new).to_vec(),
        ),
        typed("m8_s", "<m8[s]", [i64::MIN, -1, 0, 3600].map(TimeDelta64::<Seconds>::new).to_vec()),
        typed("U5", "<U5", ["", "a", "héllo", "温度"].map(|s| Ucs4::<5>::new(s).unwrap()).to_vec()),
        typed("S3", "|S3", [&b""[..], b"a", b"abc", b"\x00\xffz"].map(|s| Bytes::<3>::new(s).unwrap()).to_vec()),
        typed("empty", "<f8", Vec::<f64>::new()),
    ]
}

/// Writes the dtype members with per-member compression `per` (None: the archive's).
fn write_dtypes(
    default: Option<Compression>,
    per: impl Fn(usize) -> Option<Compression>,
) -> (Vec<u8>, Vec<Compression>) {
    let mut w = writer();
    if let Some(c) = default {
        w.compression(c);
    }
    let mut used = Vec::new();
    for (i, m) in dtype_members().iter().enumerate() {
        let c = per(i);
        m.add(&mut w, c).unwrap_or_else(|e| panic!("{}: {e}", m.name()));
        used.push(c.or(default).unwrap_or(Compression::Stored));
    }
    (w.finish().unwrap().into_inner(), used)
}

/// The compression of member `i` (None: the archive's).
type PerMember = fn(usize) -> Option<Compression>;

#[test]
fn every_dtype_round_trips_stored_deflated_zstd_and_mixed() {
    let level1 = Compression::Deflated { level: 1 };
    let cases: [(&str, Option<Compression>, PerMember); 6] = [
        ("dtypes_stored", None, |_| None),
        ("dtypes_deflated", Some(Compression::deflated()), |_| None),
        ("dtypes_mixed", None, |i| [None, Some(Compression::Deflated { level: 9 }), Some(Compression::Stored)][i % 3]),
        ("dtypes_mixed_default_deflated", Some(level1), |i| (i % 2 == 0).then_some(Compression::Stored)),
        // Zstandard members: NumPy reads them through a zipfile that knows method 93.
        ("dtypes_zstd", Some(Compression::zstd()), |_| None),
        ("dtypes_mixed_zstd", None, |i| {
            [Some(Compression::Zstd { level: 1 }), Some(Compression::Zstd { level: 19 }), Some(Compression::deflated())]
                .get(i % 4)
                .copied()
                .flatten()
        }),
    ];
    for (name, default, per) in cases {
        let (bytes, used) = write_dtypes(default, per);
        let mut r = reader(bytes.clone());
        let members = dtype_members();
        assert_eq!(r.names(), members.iter().map(|m| m.name()).collect::<Vec<_>>(), "{name}");
        let infos = r.members().to_vec();
        let mut expect = Expect::default();
        for ((m, info), c) in members.iter().zip(&infos).zip(&used) {
            // Member info reports the method, not the level: the writer records the normal
            // deflate option at every level, as NumPy's zipfile.
            let method = match c {
                Compression::Stored => Method::Stored,
                Compression::Deflated { .. } => Method::Deflated(DeflateOption::Normal),
                Compression::Zstd { .. } => Method::Zstd,
            };
            assert_eq!(info.compression, Some(method), "{name}: {}", m.name());
            assert_eq!(info.member, format!("{}.npy", m.name()));
            if *c == Compression::Stored {
                assert_eq!(info.compressed_size, info.size, "{name}: {}", m.name());
            }
            m.check(&mut r);
            m.expect(&mut expect, *c);
        }
        expect.publish(name, Some(&bytes));
    }

    // Deflate pays on compressible data; levels differ; all read the same.
    let ramp: Vec<i64> = (0..100_000).map(|i| i % 100).collect();
    let mut sizes = Vec::new();
    let levels = [1, 9, 12].map(|level| Compression::Deflated { level });
    for c in [Compression::Stored, levels[0], levels[1], levels[2]] {
        let mut w = writer();
        w.add_with("ramp", &ramp, c).unwrap();
        let mut r = reader(w.finish().unwrap().into_inner());
        let info = r.members()[0].clone();
        assert_eq!(info.size, 128 + 800_000);
        sizes.push(info.compressed_size);
        assert_eq!(r.read::<Vec<i64>>("ramp").unwrap(), ramp);
    }
    // Levels above 9 are 9.
    assert_eq!(sizes[0], 800_128);
    assert!(sizes[1] < sizes[0] / 20 && sizes[2] <= sizes[1] && sizes[3] == sizes[2], "{sizes:?}");
}

/// Level 0 is not a deflate level of the zip crate: it is taken as 1, not refused.
#[test]
fn deflate_level_0_writes_an_archive() {
    let data: Vec<i64> = (0..1000).map(|i| i % 10).collect();
    for threads in [1, 4] {
        let mut w = writer();
        w.threads(threads);
        let written = w
            .add_with("x", &data, Compression::Deflated { level: 0 })
            .and_then(|()| w.finish())
            .map(|c| c.into_inner());
        let bytes = written.unwrap_or_else(|e| panic!("level 0 ({threads} threads): {e}"));
        let mut r = reader(bytes);
        assert_eq!(r.members()[0].compression, Some(Method::Deflated(DeflateOption::Normal)));
        assert_eq!(r.read::<Vec<i64>>("x").unwrap(), data);
    }
}

#[test]
fn writing_is_deterministic_whatever_the_threads() {
    let (a, _) = write_dtypes(Some(Compression::deflated()), |_| None);
    let (b, _) = write_dtypes(Some(Compression::deflated()), |_| None);
    assert!(a == b, "two writes of the same archive differ");
    // Compressing on worker threads or on the caller's thread gives the same members.
    let mut w = writer();
    w.compression(Compression::deflated()).threads(1);
    for m in dtype_members() {
        m.add(&mut w, None).unwrap();
    }
    let single = w.finish().unwrap().into_inner();
    let (mut r1, mut r2) = (reader(single), reader(a));
    assert_eq!(r1.names(), r2.names());
    for name in r1.names().to_vec() {
        assert_eq!(r1.read_raw(&name).unwrap(), r2.read_raw(&name).unwrap(), "{name}");
    }
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Pt {
    x: f32,
    y: f32,
}

#[test]
fn n_d_and_fortran_arrays_keep_shape_and_order() {
    let cube = Array::from_shape_vec(vec![2, 3, 4], (0..24).collect::<Vec<i32>>()).unwrap();
    let f2 = Array::from_shape_vec_fortran(vec![3, 2], vec![0.5, 1.5, 2.5, -0.5, -1.5, -2.5f64]).unwrap();
    let f3 = Array::from_shape_vec_fortran(vec![2, 3, 4], (0..24).map(|i| i * 1000).collect::<Vec<u16>>()).unwrap();
    let zero_d = Array::from_shape_vec(vec![], vec![2.75f64]).unwrap();
    let empty = Array::from_shape_vec(vec![0, 4], Vec::<i64>::new()).unwrap();
    let cf = Array::from_shape_vec_fortran(
        vec![2, 2],
        vec![Complex::new(1.0f32, 2.0), Complex::new(3.0, 4.0), Complex::new(-1.0, -2.0), Complex::new(0.5, 0.25)],
    )
    .unwrap();
    let pts = Array::from_shape_vec_fortran(
        vec![2, 2],
        vec![Pt { x: 1.0, y: 2.0 }, Pt { x: 3.0, y: 4.0 }, Pt { x: 5.0, y: 6.0 }, Pt { x: 7.0, y: 8.0 }],
    )
    .unwrap();

    let deflated = Compression::deflated();
    let mut w = writer();
    w.add("cube", &cube).unwrap();
    w.add_with("fortran_2d", &f2, deflated).unwrap();
    w.add("fortran_3d", &f3).unwrap();
    w.add("zero_d", &zero_d).unwrap();
    w.add_with("empty", &empty, deflated).unwrap();
    w.add("complex_f", &cf).unwrap();
    w.add_with("points_f", &pts, deflated).unwrap();
    let bytes = w.finish().unwrap().into_inner();

    let mut r = reader(bytes.clone());
    assert_eq!(r.names(), ["cube", "fortran_2d", "fortran_3d", "zero_d", "empty", "complex_f", "points_f"]);
    assert_eq!(r.read::<Array<i32>>("cube").unwrap(), cube);
    assert_eq!(r.read::<Array<f64>>("fortran_2d").unwrap(), f2);
    let back = r.read::<Array<u16>>("fortran_3d").unwrap();
    assert_eq!((back.shape(), back.fortran_order(), back.get(&[1, 2, 3])), (&[2, 3, 4][..], true, Some(&23000)));
    assert_eq!(back, f3);
    assert_eq!(r.read::<Array<f64>>("zero_d").unwrap(), zero_d);
    assert_eq!(r.read::<Array<i64>>("empty").unwrap(), empty);
    assert_eq!(r.read::<Array<Complex<f32>>>("complex_f").unwrap(), cf);
    let p = r.read::<Array<Pt>>("points_f").unwrap();
    assert_eq!((p.get(&[0, 1]), p.fortran_order()), (Some(&Pt { x: 5.0, y: 6.0 }), true));
    assert_eq!(p, pts);
    // 1-D reads refuse N-d members; DynArray keeps everything.
    let e = r.read::<Vec<i32>>("cube").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let d = r.read::<DynArray>("fortran_3d").unwrap();
    assert_eq!((d.dtype().descr().as_str(), d.shape(), d.fortran_order()), ("'<u2'", &[2, 3, 4][..], true));
    assert_eq!(d.get::<u16>(&[1, 2, 3]).unwrap(), 23000);

    let mut e = Expect::default();
    let st = Compression::Stored;
    e.array("cube", "<i4", &[2, 3, 4], false, st, vals(cube.as_slice()));
    e.array("fortran_2d", "<f8", &[3, 2], true, deflated, vals(f2.as_slice()));
    e.array("fortran_3d", "<u2", &[2, 3, 4], true, st, vals(f3.as_slice()));
    e.array("zero_d", "<f8", &[], false, st, vals(zero_d.as_slice()));
    e.array("empty", "<i8", &[0, 4], false, deflated, json!([]));
    e.array("complex_f", "<c8", &[2, 2], true, st, vals(cf.as_slice()));
    let s = pts.as_slice();
    e.records(
        "points_f",
        "[('x', '<f4'), ('y', '<f4')]",
        &[2, 2],
        true,
        deflated,
        vec![("x", field(s, |p| p.x)), ("y", field(s, |p| p.y))],
    );
    e.publish("n_d_arrays", Some(&bytes));
}

/// An archive written big-endian (`Writer::byte_order`): typed slices, N-d and Fortran
/// arrays, records (padding zeroed), streamed members and native dynamic arrays all come
/// out `>`, read back as the values written, and NumPy sees them so (CI step 8).
#[test]
fn members_written_in_another_byte_order() {
    let depth: Vec<f64> = (0..300_000).map(|i| f64::from(i) * 0.5 - 1.0).collect();
    let f2 = Array::from_shape_vec_fortran(vec![3, 2], vec![1i32, -2, 3, -4, 5, -6]).unwrap();
    let pts = vec![Pt { x: 1.0, y: -2.0 }, Pt { x: 3.5, y: 4.0 }];
    let native = DynArray::read_npy_from(&[7u16, 8, 9].write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    let deflated = Compression::deflated();
    let mut w = writer();
    w.byte_order(npy_core::dtype::ByteOrder::Big);
    w.add("depth", &depth).unwrap();
    w.add_with("fortran_2d", &f2, deflated).unwrap();
    w.add("points", &pts).unwrap();
    w.add("native", &native).unwrap();
    let mut m = w.start_array_with::<i16>("streamed", vec![4], Compression::Stored).unwrap();
    m.write(&[1, -1]).unwrap();
    m.write(&[256, -256]).unwrap();
    m.finish().unwrap();
    w.add_raw_with("notes.txt", b"raw bytes stay raw", Compression::Stored).unwrap();
    let bytes = w.finish().unwrap().into_inner();

    let mut r = reader(bytes.clone());
    let descrs: Vec<String> = ["depth", "fortran_2d", "points", "native", "streamed"]
        .iter()
        .map(|n| r.read::<DynArray>(n).unwrap().dtype().descr())
        .collect();
    assert_eq!(descrs, ["'>f8'", "'>i4'", "[('x', '>f4'), ('y', '>f4')]", "'>u2'", "'>i2'"]);
    assert_eq!(r.read::<Vec<f64>>("depth").unwrap(), depth);
    assert_eq!(r.read::<DynArray>("depth").unwrap().data()[8..16], (-0.5f64).to_be_bytes());
    assert_eq!(r.read::<Array<i32>>("fortran_2d").unwrap(), f2);
    assert_eq!(r.read::<Vec<Pt>>("points").unwrap(), pts);
    assert_eq!(r.read::<Vec<u16>>("native").unwrap(), [7, 8, 9]);
    assert_eq!(r.read::<Vec<i16>>("streamed").unwrap(), [1, -1, 256, -256]);

    let mut e = Expect::default();
    let st = Compression::Stored;
    e.array("depth", ">f8", &[depth.len()], false, st, vals(&depth));
    e.array("fortran_2d", ">i4", &[3, 2], true, deflated, vals(f2.as_slice()));
    e.records(
        "points",
        "[('x', '>f4'), ('y', '>f4')]",
        &[2],
        false,
        st,
        vec![("x", field(&pts, |p| p.x)), ("y", field(&pts, |p| p.y))],
    );
    e.array("native", ">u2", &[3], false, st, vals(&[7u16, 8, 9]));
    e.array("streamed", ">i2", &[4], false, st, vals(&[1i16, -1, 256, -256]));
    e.raw("notes.txt", st, b"raw bytes stay raw");
    e.publish("big_endian_members", Some(&bytes));
}

/// NumPy-made fixtures as dynamic arrays: each member is the fixture file byte for byte
/// (header version included), and reads back equal.
#[test]
fn dynamic_arrays_from_fixtures_are_the_fixture_files() {
    let fixtures = [
        "record/trace_packed.npy",
        "record/titles.npy",
        "record/offsets_gaps.npy",
        "record/subarray_of_record.npy",
        "datetime/be_M8_ns.npy",
        "header/utf8_name_v3.npy",
        "header/forced_v2_le_f8.npy",
        "header/fields_3000_v2.npy",
        "shape/2x3x4_F_be_u2.npy",
        "shape/5x0x3_f4.npy",
        "shape/0d_be_i2.npy",
        "string/le_U4.npy",
        "string/V3.npy",
        "scalar/le_c32.npy",
    ];
    let mut w = writer();
    let mut e = Expect::default();
    let mut arrays = Vec::new();
    for (i, file) in fixtures.iter().enumerate() {
        let path = data_dir().join(file);
        let arr = npy_core::NpyReader::from_path_with(&path, &big_headers())
            .and_then(|r| r.read::<DynArray>())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = file.trim_end_matches(".npy").replace('/', "_");
        let c = if i % 2 == 0 { Compression::Stored } else { Compression::deflated() };
        if c == Compression::Stored {
            w.add(&name, &arr).unwrap();
        } else {
            w.add_with(&name, &arr, c).unwrap();
        }
        e.npy_file(&name, c, &path);
        arrays.push((name, path, arr));
    }
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_reader_with(Cursor::new(bytes.clone()), ReaderOptions::new().read_options(&big_headers()))
        .unwrap();
    for (name, path, arr) in &arrays {
        let back = r.read::<DynArray>(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&back, arr, "{name}");
        assert_eq!(back.version(), arr.version(), "{name}");
        assert!(r.read_raw(name).unwrap() == std::fs::read(path).unwrap(), "{name}: member differs from the file");
    }
    let v3 = r.npy("header_utf8_name_v3").unwrap();
    assert_eq!(v3.version().number(), (3, 0));
    drop(v3);
    // The header limit applies to members as to files.
    let mut strict = Reader::from_reader_with(
        Cursor::new(bytes.clone()),
        ReaderOptions::new().read_options(ReadOptions::new().max_header_size(10_000)),
    )
    .unwrap();
    let err = strict
        .read::<DynArray>("header_fields_3000_v2")
        .err()
        .unwrap_or_else(|| panic!("read under a 10,000-byte limit"));
    assert!(matches!(err.kind(), ErrorKind::HeaderTooLarge { .. }), "{err}");
    e.publish("dyn_fixtures", Some(&bytes));
}

#[test]
fn member_names_with_dots_slashes_and_unicode() {
    let names =
        ["data.v1", "a.b.c", "temp.温度", "ünïcode", "dir/sub", "x.npy", "地震.波形", "with space", "Größe", "arr_0"];
    let mut w = writer();
    let mut e = Expect::default();
    for (i, name) in names.iter().enumerate() {
        let data: Vec<i32> = (0..=i as i32).collect();
        let c = if i % 2 == 1 { Compression::deflated() } else { Compression::Stored };
        w.add_with(name, &data, c).unwrap();
        e.array(name, "<i4", &[data.len()], false, c, vals(&data));
    }
    let bytes = w.finish().unwrap().into_inner();
    let mut r = reader(bytes.clone());
    assert_eq!(r.names(), names);
    let members: Vec<String> = r.members().iter().map(|m| m.member.clone()).collect();
    assert_eq!(members, names.map(|n| format!("{n}.npy")));
    for (i, name) in names.iter().enumerate() {
        assert_eq!(r.read::<Vec<i32>>(name).unwrap(), (0..=i as i32).collect::<Vec<_>>(), "{name}");
    }
    assert_eq!(r.read::<Vec<i32>>("x.npy.npy").unwrap(), [0, 1, 2, 3, 4, 5]);
    e.publish("member_names", Some(&bytes));
}

#[test]
fn duplicate_and_empty_names_are_refused_and_the_archive_stays_good() {
    let mut w = writer();
    w.add("a", &[1.0f64, 2.0]).unwrap();
    npz_error(w.add("a", &[3.0f64]), Some("a.npy"));
    npz_error(w.add_with("a", &[3u8], Compression::deflated()), Some("a.npy"));
    npz_error(w.add("a", &Array::from_shape_vec(vec![1], vec![1i8]).unwrap()), Some("a.npy"));
    npz_error(w.add_raw_with("a.npy", b"raw", Compression::Stored), Some("a.npy"));
    npz_error(w.start_array_with::<f32>("a", vec![2], Compression::Stored), Some("a.npy"));
    let msg = npz_error(w.add("", &[1u8]), None);
    assert!(msg.contains("empty"), "{msg}");
    npz_error(w.add_columns_prefixed("", &[Pt { x: 1.0, y: 2.0 }]).and_then(|_| w.add("x", &[0u8])), Some("x.npy"));
    w.add("b", &[7i32]).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = reader(bytes.clone());
    assert_eq!(r.names(), ["a", "x", "y", "b"]);
    assert_eq!(r.read::<Vec<f64>>("a").unwrap(), [1.0, 2.0]);
    let mut e = Expect::default();
    let st = Compression::Stored;
    e.array("a", "<f8", &[2], false, st, json!([1.0, 2.0]));
    e.array("x", "<f4", &[1], false, st, json!([1.0]));
    e.array("y", "<f4", &[1], false, st, json!([2.0]));
    e.array("b", "<i4", &[1], false, st, json!([7]));
    e.publish("after_refused_names", Some(&bytes));
}

/// A raw member `a` and an array `a` (member `a.npy`) are both named `a` by NumPy's
/// `NpzFile.files`, and our own `Reader` refuses such an archive: the writer must refuse
/// the second one, as it does for two arrays `a`.
#[test]
fn a_raw_member_and_an_array_of_the_same_name_are_refused() {
    let mut w = writer();
    w.add_raw_with("a", b"notes", Compression::Stored).unwrap();
    let added = w.add("a", &[1u8]);
    let bytes = w.finish().unwrap().into_inner();
    let readable = Reader::from_reader(Cursor::new(bytes)).map(|r| r.names().to_vec());
    assert!(
        matches!(added.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Npz { .. })),
        "add(\"a\") after add_raw(\"a\") gave {added:?}; the archive then reads as {readable:?}"
    );
    assert_eq!(readable.unwrap(), ["a"]);
}

#[test]
fn unknown_members_are_errors_naming_them() {
    let mut w = writer();
    w.add("present", &[1u8]).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    let msg = npz_error(r.read::<Vec<u8>>("absent"), Some("absent"));
    assert!(msg.contains("absent") && msg.contains("present"), "{msg}");
    npz_error(r.read::<Array<u8>>("absent"), Some("absent"));
    npz_error(r.read::<DynArray>("absent"), Some("absent"));
    npz_error(r.read_raw("absent"), Some("absent"));
    npz_error(r.is_npy("absent"), Some("absent"));
    npz_error(r.npy("absent"), Some("absent"));
    npz_error(r.read::<Vec<u8>>("present.np"), Some("present.np"));
    assert_eq!(r.read::<Vec<u8>>("present").unwrap(), [1]);

    // Not an archive at all.
    let e = Reader::from_reader(Cursor::new(b"\x93NUMPY not a zip".to_vec())).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { member: None, .. }), "{e}");
    let e = Reader::from_path(data_dir().join("no/such.npz")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
}

/// An archive with a stored member `x` of f64s; returns the bytes and where `x`'s array
/// data starts in them.
fn stored_f64_archive() -> (Vec<u8>, usize) {
    let mut w = writer();
    w.add("before", &[1u8, 2, 3]).unwrap();
    w.add("x", &(0..1000).map(|i| i as f64 * 0.5).collect::<Vec<_>>()).unwrap();
    w.add_with("after", &[4u8, 5], Compression::deflated()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = reader(bytes.clone());
    let start = member(r.members(), "x").data_start.unwrap() as usize;
    let off = r.npy("x").unwrap().data_offset();
    (bytes, start + off)
}

#[test]
fn a_corrupted_stored_member_fails_its_crc_as_an_npz_error() {
    let (mut bytes, data) = stored_f64_archive();
    bytes[data + 4000] ^= 0x10;
    let mut r = reader(bytes);
    npz_error(r.read_raw("x"), Some("x.npy"));
    npz_error(r.read::<Vec<f64>>("x"), Some("x.npy"));
    npz_error(r.read::<Array<f64>>("x"), Some("x.npy"));
    npz_error(r.read::<DynArray>("x"), Some("x.npy"));
    // The other members are fine.
    assert_eq!(r.read::<Vec<u8>>("before").unwrap(), [1, 2, 3]);
    assert_eq!(r.read::<Vec<u8>>("after").unwrap(), [4, 5]);
}

/// Errors of an archive opened by path name the path and the member; a bad CRC is found by
/// npy-core's own check (every member is decompressed by its codec, not the zip reader's).
#[test]
fn member_errors_name_the_archive_and_the_member() {
    use std::error::Error as _;
    let (mut bytes, data) = stored_f64_archive();
    bytes[data + 4000] ^= 0x10;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.npz");
    std::fs::write(&path, &bytes).unwrap();
    let mut r = npy_core::npz::Reader::from_path(&path).unwrap();
    let e = r.read::<Vec<f64>>("x").unwrap_err();
    assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("x.npy")), "{e}");
    assert_eq!(
        e.to_string(),
        format!("reading '{}': npz member 'x.npy': bad crc-32: the member's data is corrupt", path.display())
    );
    assert!(e.source().is_none(), "{e:?}");
    // A member whose header is refused names it too, with the kind of what went wrong.
    let e = r.read::<Vec<u8>>("nothere").unwrap_err();
    assert_eq!(e.path(), Some(path.as_path()), "{e}");
    let e = r.read::<Vec<i8>>("x").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e:?}");
    assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("x.npy")), "{e}");
    assert!(e.to_string().starts_with(&format!("reading '{}', member 'x.npy': cannot read", path.display())), "{e}");
    // So do errors of a member read as a stream.
    let e = r.npy("x").unwrap().read::<Vec<i8>>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e:?}");
    assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("x.npy")), "{e}");
}

/// Streaming a member to its last element checks its CRC too, as whole reads do.
#[test]
fn a_corrupted_member_streamed_to_its_end_fails_its_crc() {
    let (mut bytes, data) = stored_f64_archive();
    bytes[data + 4000] ^= 0x10;
    let mut r = reader(bytes);
    let chunks: Vec<npy_core::Result<Vec<f64>>> = r.npy("x").unwrap().chunks::<f64>(300).unwrap().collect();
    let failed = chunks.into_iter().find_map(|c| c.err());
    let e = failed.expect("streaming a corrupted member read every chunk without an error");
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e:?}");
    let e = r.npy("x").unwrap().read::<Vec<f64>>().expect_err("read_vec of a corrupted member succeeded");
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e:?}");
}

#[test]
fn a_corrupted_deflated_member_is_an_npz_error() {
    let mut w = writer();
    let data: Vec<u32> = (0..5000).map(|i| i * 7919 % 65521).collect();
    w.add_with("x", &data, Compression::deflated()).unwrap();
    let mut bytes = w.finish().unwrap().into_inner();
    let r = reader(bytes.clone());
    let info = r.members()[0].clone();
    let mid = info.data_start.unwrap() as usize + info.compressed_size as usize / 2;
    bytes[mid] ^= 0xff;
    let mut r = reader(bytes);
    npz_error(r.read_raw("x"), Some("x.npy"));
    npz_error(r.read::<Vec<u32>>("x"), Some("x.npy"));
}

/// A deflated member read whole is inflated into one buffer, which a read as `DynArray`
/// keeps for the array's data (moved to its start): every layout of `.npy` file gives the
/// array a streamed read of the same member gives, and typed reads of it agree.
#[test]
fn deflated_members_read_whole_are_the_arrays_streamed_reads_give() {
    let npy_with = |dict: &str, align: usize, data: &[u8], after: &[u8]| {
        let len = (10 + dict.len() + 1).next_multiple_of(align) - 10;
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.resize(10 + len - 1, b' ');
        out.push(b'\n');
        out.extend_from_slice(data);
        out.extend_from_slice(after);
        out
    };
    let words: Vec<u8> = (0..6000u32).flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes()).collect();
    let members: [(&str, Vec<u8>); 6] = [
        ("aligned", npy_with("{'descr': '<u4', 'fortran_order': False, 'shape': (6000,), }", 64, &words, b"")),
        // NumPy before 1.9 padded headers to 16 bytes: the data starts off a 64-byte line.
        ("padded_16", npy_with("{'descr': '<u4', 'fortran_order': False, 'shape': (6000,), }", 16, &words, b"")),
        ("fortran", npy_with("{'descr': '<u4', 'fortran_order': True, 'shape': (100, 60), }", 64, &words, b"")),
        ("scalar", npy_with("{'descr': '<u4', 'fortran_order': False, 'shape': (), }", 64, &words[..4], b"")),
        ("empty", npy_with("{'descr': '<u4', 'fortran_order': False, 'shape': (0, 3), }", 64, b"", b"")),
        // Bytes after the array are not part of it (np.load ignores them too).
        ("trailing", npy_with("{'descr': '<u4', 'fortran_order': False, 'shape': (6000,), }", 64, &words, &[7; 100])),
    ];
    let mut w = writer();
    for (name, bytes) in &members {
        w.add_raw_with(&format!("{name}.npy"), bytes, Compression::deflated()).unwrap();
    }
    let mut r = reader(w.finish().unwrap().into_inner());
    for (name, _) in &members {
        let whole = r.read::<DynArray>(name).unwrap();
        let streamed = r.npy(name).unwrap().read::<DynArray>().unwrap();
        assert_eq!(whole.header(), streamed.header(), "{name}");
        assert_eq!(whole.data(), streamed.data(), "{name}");
        let len = whole.data().len();
        assert_eq!(whole.data(), &words[..len], "{name}");
        assert_eq!(r.read::<Array<u32>>(name).unwrap().as_slice(), whole.to_vec::<u32>().unwrap(), "{name}");
    }
    let all = r.read_all::<DynArray>().unwrap();
    assert!(all.iter().zip(&members).all(|(a, (name, _))| a == &r.read::<DynArray>(name).unwrap()));

    // A small member deflated far past 64 to 1 (flags in runs) is read whole too.
    let flags: Vec<bool> = (0..100_000).map(|i| i / 5000 % 3 == 0).collect();
    let mut w = writer();
    w.add_with("flags", &flags, Compression::deflated()).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    let info = &r.members()[0];
    assert!(info.size > 64 * info.compressed_size, "{} from {}: past the ratio", info.size, info.compressed_size);
    let (whole, streamed) = (r.read::<DynArray>("flags").unwrap(), r.npy("flags").unwrap().read::<DynArray>().unwrap());
    assert_eq!(whole, streamed);
    assert_eq!(r.read::<Vec<bool>>("flags").unwrap(), flags);
}

/// Members of several MiB, whole or streamed in pieces, have their CRC-32 computed beside
/// the write (on a second thread): reading them back checks it, and the member's bytes are
/// the `.npy` file `write_npy` makes.
#[test]
fn large_stored_members_have_the_right_crc() {
    let big: Vec<f64> = (0..1_300_000).map(|i| (i as f64).sin()).collect();
    let mut w = writer();
    w.add("small", &[1u16, 2, 3]).unwrap();
    w.add("big", &big).unwrap();
    w.add("big_i32", &big.iter().map(|&v| (v * 1e9) as i32).collect::<Vec<_>>()).unwrap();
    let mut m = w.start_array_with::<f64>("streamed", vec![2 * big.len() + 3], Compression::Stored).unwrap();
    m.write(&big).unwrap();
    m.write(&[1.0, 2.0, 3.0]).unwrap();
    m.write(&big).unwrap();
    m.finish().unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    let streamed = r.read::<Vec<f64>>("streamed").unwrap();
    assert_eq!((&streamed[..big.len()], &streamed[big.len()..big.len() + 3]), (&big[..], &[1.0, 2.0, 3.0][..]));
    assert_eq!(&streamed[big.len() + 3..], big);
    assert_eq!(r.read::<Vec<f64>>("big").unwrap(), big);
    assert_eq!(r.read::<Vec<u16>>("small").unwrap(), [1, 2, 3]);
    let mut npy = Vec::new();
    big.write_npy_to(&mut npy).unwrap();
    assert_eq!(r.read_raw("big").unwrap(), npy);
    let ints = r.read::<Vec<i32>>("big_i32").unwrap();
    assert_eq!((ints.len(), ints[1], ints[1_299_999]), (1_300_000, 841_470_984, (1_299_999f64.sin() * 1e9) as i32));
}

/// A `Write + Seek` whose one write crossing byte `fail_at` fails (as a full disk might),
/// and which works again afterwards.
struct FailOnce {
    inner: Cursor<Vec<u8>>,
    fail_at: u64,
    failed: bool,
}

impl Write for FailOnce {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.failed && self.inner.position() + buf.len() as u64 > self.fail_at {
            self.failed = true;
            return Err(std::io::Error::other("no space left (test)"));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for FailOnce {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A member whose write fails is dropped from the archive, and its name can be used again:
/// the archive finished afterwards holds only whole members.
#[test]
fn a_failed_stored_member_is_dropped_and_the_archive_goes_on() {
    let data: Vec<f64> = (0..1_000_000).map(|i| i as f64).collect();
    let mut w = Writer::new(FailOnce { inner: Cursor::new(Vec::new()), fail_at: 3 << 20, failed: false });
    w.add("first", &[7u8; 10]).unwrap();
    let e = w.add("x", &data).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e:?}");
    w.add("x", &data[..1000]).unwrap();
    w.add("last", &data).unwrap();
    let bytes = w.finish().unwrap().inner.into_inner();
    let mut r = reader(bytes);
    assert_eq!(r.names(), ["first", "x", "last"]);
    assert_eq!(r.read::<Vec<u8>>("first").unwrap(), [7; 10]);
    assert_eq!(r.read::<Vec<f64>>("x").unwrap(), data[..1000]);
    assert_eq!(r.read::<Vec<f64>>("last").unwrap(), data);
}

#[test]
fn stored_members_data_is_aligned_to_64_bytes() {
    #[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
    struct LongNames {
        a_rather_long_field_name_to_grow_the_header: f64,
        another_quite_long_field_name_for_the_header: [u8; 3],
    }
    let fields3000 = npy_core::NpyReader::from_path_with(data_dir().join("header/fields_3000_v2.npy"), &big_headers())
        .unwrap()
        .read::<DynArray>()
        .unwrap();
    let path = check_dir().join("aligned.npz");
    let mut w = Writer::create(&path).unwrap();
    let mut e = Expect::default();
    let (st, de) = (Compression::Stored, Compression::deflated());
    w.add_raw_with("odd.bin", b"seven b", st).unwrap();
    e.raw("odd.bin", st, b"seven b");
    w.add("u8", &[1u8, 2, 3]).unwrap();
    e.array("u8", "|u1", &[3], false, st, json!([1, 2, 3]));
    w.add_with("deflated", &[1.5f64; 33], de).unwrap();
    e.array("deflated", "<f8", &[33], false, de, vals(&[1.5f64; 33]));
    w.add_raw_with("odd2.txt", b"x", de).unwrap();
    e.raw("odd2.txt", de, b"x");
    let recs = [LongNames {
        a_rather_long_field_name_to_grow_the_header: 2.5,
        another_quite_long_field_name_for_the_header: [1, 2, 3],
    }];
    w.add("long", &recs).unwrap();
    e.records(
        "long",
        "[('a_rather_long_field_name_to_grow_the_header', '<f8'), ('another_quite_long_field_name_for_the_header', '|u1', (3,))]",
        &[1],
        false,
        st,
        vec![
            ("a_rather_long_field_name_to_grow_the_header", json!([2.5])),
            ("another_quite_long_field_name_for_the_header", json!([1, 2, 3])),
        ],
    );
    w.add("v2", &fields3000).unwrap();
    e.npy_file("v2", st, &data_dir().join("header/fields_3000_v2.npy"));
    let mut mw = w.start_array_with::<i16>("streamed", vec![5], st).unwrap();
    mw.write(&[1, 2, 3, 4, 5]).unwrap();
    mw.finish().unwrap();
    e.array("streamed", "<i2", &[5], false, st, json!([1, 2, 3, 4, 5]));
    w.add_columns_prefixed("col", &[Pt { x: 0.5, y: 1.5 }]).unwrap();
    e.array("col.x", "<f4", &[1], false, st, json!([0.5]));
    e.array("col.y", "<f4", &[1], false, st, json!([1.5]));
    w.finish().unwrap();

    let mut r = Reader::from_path_with(&path, ReaderOptions::new().read_options(&big_headers())).unwrap();
    let mut stored = 0;
    for m in r.members().to_vec() {
        if m.compression != Some(Method::Stored) || !r.is_npy(&m.name).unwrap() {
            continue;
        }
        let off = r.npy(&m.name).unwrap().data_offset() as u64;
        assert_eq!((m.data_start.unwrap() + off) % 64, 0, "{}: data at {} + {off}", m.name, m.data_start.unwrap());
        stored += 1;
    }
    assert_eq!(stored, 6);
    e.publish("aligned", None);
}

#[test]
fn raw_members_are_bytes_as_numpy_gives_them() {
    let mut w = writer();
    let json_text = br#"{"survey": "north", "shots": 3}"#;
    w.add("first", &[1i32, 2]).unwrap();
    w.add_raw_with("meta.json", json_text, Compression::deflated()).unwrap();
    w.add_raw_with("tiny", b"ab", Compression::Stored).unwrap();
    w.add_raw_with("empty.bin", b"", Compression::Stored).unwrap();
    // A raw member whose bytes are a .npy file is an array like any other.
    let npy = [0.25f32, 0.5].write_npy_to(Vec::new()).unwrap();
    w.add_raw_with("raw_array.npy", &npy, Compression::Stored).unwrap();
    let bytes = w.finish().unwrap().into_inner();

    let mut r = reader(bytes.clone());
    assert_eq!(r.names(), ["first", "meta.json", "tiny", "empty.bin", "raw_array"]);
    assert!(r.is_npy("first").unwrap());
    for name in ["meta.json", "tiny", "empty.bin"] {
        assert!(!r.is_npy(name).unwrap(), "{name}");
    }
    assert_eq!(r.read_raw("meta.json").unwrap(), json_text);
    assert_eq!(r.read_raw("tiny").unwrap(), b"ab");
    assert_eq!(r.read_raw("empty.bin").unwrap(), b"");
    let e = r.read::<Vec<u8>>("meta.json").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Format { .. }), "{e}");
    let e = r.read::<DynArray>("tiny").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Format { .. }), "{e}");
    assert!(r.is_npy("raw_array").unwrap());
    assert_eq!(r.read::<Vec<f32>>("raw_array").unwrap(), [0.25, 0.5]);
    assert_eq!(r.read_raw("raw_array.npy").unwrap(), npy);

    let mut e = Expect::default();
    e.array("first", "<i4", &[2], false, Compression::Stored, json!([1, 2]));
    e.raw("meta.json", Compression::deflated(), json_text);
    e.raw("tiny", Compression::Stored, b"ab");
    e.raw("empty.bin", Compression::Stored, b"");
    e.array("raw_array", "<f4", &[2], false, Compression::Stored, json!([0.25, 0.5]));
    e.publish("raw_members", Some(&bytes));
}

// ---------------------------------------------------------------------------------------
// Columns.

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Pos {
    east: f64,
    north: f64,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Leg {
    depth: f32,
    codes: [i16; 2],
}

#[derive(NpyRecord, Debug, Clone, PartialEq)]
struct Shot {
    id: u32,
    pos: Pos,
    gain: [f32; 4],
    pts: [Pt; 3],
    #[npy(endian = "big")]
    code: i32,
    #[npy(skip)]
    note: String,
    legs: [Leg; 2],
    when: DateTime64<Millis>,
    ok: bool,
}

fn shots(n: usize) -> Vec<Shot> {
    (0..n)
        .map(|i| {
            let f = i as f32;
            Shot {
                id: 100 + i as u32,
                pos: Pos { east: 500_000.0 + i as f64 * 12.5, north: -0.25 * i as f64 },
                gain: [f, f + 0.5, f + 0.25, -f],
                pts: [Pt { x: f, y: -f }, Pt { x: f * 2.0, y: 1.0 }, Pt { x: 0.125, y: f * 4.0 }],
                code: -(i as i32) * 1000 + 7,
                note: format!("shot {i}"),
                legs: [Leg { depth: f * 10.0, codes: [i as i16, -1] }, Leg { depth: 0.5, codes: [2, 3 * i as i16] }],
                when: DateTime64::new(1_700_000_000_000 + i as i64 * 250),
                ok: i % 3 != 0,
            }
        })
        .collect()
}

const SHOT_COLUMNS: [&str; 11] =
    ["id", "pos.east", "pos.north", "gain", "pts.x", "pts.y", "code", "legs.depth", "legs.codes", "when", "ok"];

/// NumPy's view of `Shot` columns (prefixed by `prefix.` if not empty).
fn expect_shot_columns(e: &mut Expect, prefix: &str, s: &[Shot], c: Compression) {
    let n = s.len();
    let p = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    e.array(&p("id"), "<u4", &[n], false, c, field(s, |r| r.id));
    e.array(&p("pos.east"), "<f8", &[n], false, c, field(s, |r| r.pos.east));
    e.array(&p("pos.north"), "<f8", &[n], false, c, field(s, |r| r.pos.north));
    e.array(&p("gain"), "<f4", &[n, 4], false, c, field(s, |r| r.gain));
    e.array(&p("pts.x"), "<f4", &[n, 3], false, c, field(s, |r| r.pts.map(|p| p.x)));
    e.array(&p("pts.y"), "<f4", &[n, 3], false, c, field(s, |r| r.pts.map(|p| p.y)));
    e.array(&p("code"), ">i4", &[n], false, c, field(s, |r| r.code));
    e.array(&p("legs.depth"), "<f4", &[n, 2], false, c, field(s, |r| r.legs.map(|l| l.depth)));
    e.array(&p("legs.codes"), "<i2", &[n, 2, 2], false, c, field(s, |r| r.legs.map(|l| l.codes)));
    e.array(&p("when"), "<M8[ms]", &[n], false, c, field(s, |r| r.when));
    e.array(&p("ok"), "|b1", &[n], false, c, field(s, |r| r.ok));
}

fn without_notes(mut v: Vec<Shot>) -> Vec<Shot> {
    v.iter_mut().for_each(|s| s.note.clear());
    v
}

#[test]
fn columns_round_trip_records_with_nesting_subarrays_and_skipped_fields() {
    let data = shots(7);
    for (name, c) in [("columns_stored", Compression::Stored), ("columns_deflated", Compression::deflated())] {
        let mut w = writer();
        w.compression(c);
        w.add_columns(&data).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let mut r = reader(bytes.clone());
        assert_eq!(r.names(), SHOT_COLUMNS, "{name}");
        let back = r.read_columns::<Shot>().unwrap();
        assert_eq!(back, without_notes(data.clone()), "{name}");
        assert!(back.iter().all(|s| s.note.is_empty()));
        // Each column is an ordinary array.
        let gain = r.read::<Array<f32>>("gain").unwrap();
        assert_eq!((gain.shape(), gain.get(&[2, 1])), (&[7, 4][..], Some(&2.5)));
        let px = r.read::<Array<f32>>("pts.x").unwrap();
        assert_eq!((px.shape(), px.get(&[3, 1])), (&[7, 3][..], Some(&6.0)));
        let codes = r.read::<Array<i16>>("legs.codes").unwrap();
        assert_eq!((codes.shape(), codes.get(&[4, 1, 1])), (&[7, 2, 2][..], Some(&12)));
        let code = r.npy("code").unwrap();
        assert_eq!(code.header().dtype.descr(), "'>i4'");
        drop(code);
        assert_eq!(r.read::<Vec<i32>>("code").unwrap(), data.iter().map(|s| s.code).collect::<Vec<_>>());
        assert_eq!(r.read::<Vec<u32>>("id").unwrap(), (100..107).collect::<Vec<_>>());
        let mut e = Expect::default();
        expect_shot_columns(&mut e, "", &data, c);
        e.publish(name, Some(&bytes));
    }

    // No records: every column is empty, with its subarray dims.
    let mut w = writer();
    w.add_columns::<Shot>(&[]).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    assert_eq!(r.names(), SHOT_COLUMNS);
    assert_eq!(r.read::<Array<i16>>("legs.codes").unwrap().shape(), [0, 2, 2]);
    assert!(r.read_columns::<Shot>().unwrap().is_empty());
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Station {
    code: u8,
    lat: f64,
    elev: f32,
    label: Bytes<4>,
    name: Ucs4<6>,
}

fn stations() -> Vec<Station> {
    ["ALPHA", "Börde", "温泉"]
        .iter()
        .enumerate()
        .map(|(i, n)| Station {
            code: i as u8 * 2,
            lat: 52.5 - i as f64,
            elev: 100.25 * i as f32,
            label: Bytes::new(format!("S{i}").as_bytes()).unwrap(),
            name: Ucs4::new(n).unwrap(),
        })
        .collect()
}

#[test]
fn prefixed_columns_of_two_record_types_share_an_archive() {
    let (s, st) = (shots(4), stations());
    let mut w = writer();
    w.add_columns_prefixed("shots", &s).unwrap();
    w.add_with("extra", &[1u8], Compression::deflated()).unwrap();
    w.add_columns_prefixed("stations", &st).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = reader(bytes.clone());
    let mut names: Vec<String> = SHOT_COLUMNS.iter().map(|c| format!("shots.{c}")).collect();
    names.push("extra".into());
    names.extend(["code", "lat", "elev", "label", "name"].map(|c| format!("stations.{c}")));
    assert_eq!(r.names(), names);
    assert_eq!(r.read_columns_prefixed::<Shot>("shots").unwrap(), without_notes(s.clone()));
    assert_eq!(r.read_columns_prefixed::<Station>("stations").unwrap(), st);
    assert_eq!(
        r.read::<Vec<Ucs4<6>>>("stations.name").unwrap().iter().map(|n| n.to_string()).collect::<Vec<_>>(),
        ["ALPHA", "Börde", "温泉"]
    );
    // Without the prefix the columns are not found; the error names the first one.
    let msg = npz_error(r.read_columns::<Station>(), Some("code"));
    assert!(msg.contains("no such array"), "{msg}");
    npz_error(r.read_columns_prefixed::<Shot>("nope"), Some("nope.id"));

    let mut e = Expect::default();
    let c = Compression::Stored;
    expect_shot_columns(&mut e, "shots", &s, c);
    e.array("extra", "|u1", &[1], false, Compression::deflated(), json!([1]));
    e.array("stations.code", "|u1", &[3], false, c, field(&st, |x| x.code));
    e.array("stations.lat", "<f8", &[3], false, c, field(&st, |x| x.lat));
    e.array("stations.elev", "<f4", &[3], false, c, field(&st, |x| x.elev));
    e.array("stations.label", "|S4", &[3], false, c, field(&st, |x| x.label));
    e.array("stations.name", "<U6", &[3], false, c, field(&st, |x| x.name));
    e.publish("columns_prefixed", Some(&bytes));
}

#[derive(NpyRecord, Debug, Clone, PartialEq)]
struct ShotPlus {
    id: u32,
    azimuth: f32,
}

#[derive(NpyRecord, Debug, Clone, PartialEq)]
struct Wide {
    id: i64,
    gain: [f64; 4],
}

#[derive(NpyRecord, Debug, Clone, PartialEq)]
struct TwoCols {
    a: i32,
    b: f64,
}

#[test]
fn columns_that_are_missing_or_do_not_fit_are_errors() {
    let mut w = writer();
    w.add_columns(&shots(3)).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    let msg = npz_error(r.read_columns::<ShotPlus>(), Some("azimuth"));
    assert!(msg.contains("azimuth"), "{msg}");
    // Columns convert as any read does: u4 widens to i64, f4 to f8.
    let wide = r.read_columns::<Wide>().unwrap();
    assert_eq!(wide.iter().map(|w| w.id).collect::<Vec<_>>(), [100, 101, 102]);
    assert_eq!(wide[2].gain, [2.0, 2.5, 2.25, -2.0]);

    // Columns of different lengths.
    let mut w = writer();
    w.add("a", &[1i32, 2, 3]).unwrap();
    w.add("b", &[0.5f64, 1.5]).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    npz_error(r.read_columns::<TwoCols>(), Some("b"));

    // A column of the wrong shape.
    let mut w = writer();
    w.add("id", &[1i64]).unwrap();
    w.add("gain", &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    npz_error(r.read_columns::<Wide>(), Some("gain"));
    let mut w = writer();
    w.add("id", &[1i64]).unwrap();
    w.add("gain", &Array::from_shape_vec(vec![1, 4], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap()).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    assert_eq!(r.read_columns::<Wide>().unwrap(), [Wide { id: 1, gain: [1.0, 2.0, 3.0, 4.0] }]);

    // A column that does not convert.
    let mut w = writer();
    w.add("a", &[1i64]).unwrap();
    w.add("b", &[1.0f64]).unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    let e = r.read_columns::<TwoCols>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
}

// ---------------------------------------------------------------------------------------
// Members written in pieces.

#[test]
fn members_written_in_pieces() {
    let wave: Vec<f64> = (0..10_000).map(|i| (i as f64 * 0.01).sin()).collect();
    let path = check_dir().join("streamed.npz");
    let mut w = Writer::create(&path).unwrap();
    w.compression(Compression::deflated());
    w.add("first", &[1u16, 2]).unwrap(); // deflated on a worker thread, appended before "wave"
    let mut m = w.start_array_with::<f64>("wave", vec![10_000], Compression::Stored).unwrap();
    for piece in wave.chunks(999) {
        m.write(piece).unwrap();
    }
    m.write(&[]).unwrap();
    m.finish().unwrap();
    let mut m = w.start_array_with::<i32>("grid", vec![4, 3], Compression::deflated()).unwrap();
    m.write(&[0, 1, 2, 3, 4]).unwrap();
    m.write(&[5, 6, 7, 8, 9, 10, 11]).unwrap();
    m.finish().unwrap();
    let mut m = w.start_array_with::<Pt>("points", vec![2], Compression::Stored).unwrap();
    m.write(&[Pt { x: 1.0, y: 2.0 }]).unwrap();
    m.write(&[Pt { x: 3.0, y: 4.0 }]).unwrap();
    m.finish().unwrap();
    w.start_array_with::<u8>("nothing", vec![0, 5], Compression::Stored).unwrap().finish().unwrap();
    w.finish().unwrap();

    let mut r = Reader::from_path(&path).unwrap();
    assert_eq!(r.names(), ["first", "wave", "grid", "points", "nothing"]);
    assert_eq!(r.read::<Vec<f64>>("wave").unwrap(), wave);
    let grid = r.read::<Array<i32>>("grid").unwrap();
    assert_eq!((grid.shape(), grid.get(&[3, 2])), (&[4, 3][..], Some(&11)));
    assert_eq!(r.read::<Vec<Pt>>("points").unwrap(), [Pt { x: 1.0, y: 2.0 }, Pt { x: 3.0, y: 4.0 }]);
    assert_eq!(r.read::<Array<u8>>("nothing").unwrap().shape(), [0, 5]);
    // Streaming back in chunks gives the same values.
    let chunks: Vec<Vec<f64>> = r.npy("wave").unwrap().chunks::<f64>(4096).unwrap().map(Result::unwrap).collect();
    assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [4096, 4096, 1808]);
    assert_eq!(chunks.concat(), wave);

    let mut e = Expect::default();
    let (st, de) = (Compression::Stored, Compression::deflated());
    e.array("first", "<u2", &[2], false, de, json!([1, 2]));
    e.array("wave", "<f8", &[10_000], false, st, vals(&wave));
    e.array("grid", "<i4", &[4, 3], false, de, json!((0..12).collect::<Vec<_>>()));
    e.records(
        "points",
        "[('x', '<f4'), ('y', '<f4')]",
        &[2],
        false,
        st,
        vec![("x", json!([1.0, 3.0])), ("y", json!([2.0, 4.0]))],
    );
    e.array("nothing", "|u1", &[0, 5], false, st, json!([]));
    e.publish("streamed", None);
}

#[test]
fn pieces_must_fill_the_shape_exactly() {
    let mut w = writer();
    let mut m = w.start_array_with::<u32>("short", vec![10], Compression::Stored).unwrap();
    m.write(&[1, 2, 3]).unwrap();
    let msg = usage_error(m.finish());
    assert!(msg.contains("short") && msg.contains("7 elements missing"), "{msg}");

    let mut w = writer();
    let mut m = w.start_array_with::<u32>("long", vec![2, 2], Compression::deflated()).unwrap();
    m.write(&[1, 2, 3]).unwrap();
    let msg = usage_error(m.write(&[4, 5]));
    assert!(msg.contains("long") && msg.contains("more elements"), "{msg}");
    // The refused piece wrote nothing: the member can still be completed.
    m.write(&[4]).unwrap();
    m.finish().unwrap();
    let mut r = reader(w.finish().unwrap().into_inner());
    assert_eq!(r.read::<Array<u32>>("long").unwrap().as_slice(), [1, 2, 3, 4]);

    // A shape whose byte count overflows is refused before anything is written.
    let mut w = writer();
    let e = w.start_array_with::<f64>("huge", vec![usize::MAX, 2], Compression::Stored).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");

    // A member left unfinished (dropped, or finish refused) stops the archive: no other
    // member, and no finish, so no archive with a member shorter than its header.
    let mut w = writer();
    let mut m = w.start_array_with::<u32>("cut", vec![4], Compression::Stored).unwrap();
    m.write(&[1, 2]).unwrap();
    drop(m);
    let e = w.add("next", &[1u8]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { member: Some(m), .. } if m == "cut.npy"), "{e}");
    let e = w.finish().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
}

// ---------------------------------------------------------------------------------------
// Files.

#[test]
fn archives_written_to_a_path_appear_only_when_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let mut w = Writer::create(&path).unwrap();
    w.add("x", &[1u8]).unwrap();
    drop(w);
    assert!(!path.exists(), "an unfinished archive was left behind");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a temporary file was left behind");

    let mut w = Writer::create(&path).unwrap();
    w.add("x", &[1u8]).unwrap();
    w.finish().unwrap();
    let old = std::fs::read(&path).unwrap();
    let mut w = Writer::create(&path).unwrap();
    w.add("y", &[2u8]).unwrap();
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), old, "an unfinished archive replaced the old one");
    assert_eq!(Reader::from_path(&path).unwrap().names(), ["x"]);

    // The same archive to a path and to memory.
    let mut mem = writer();
    mem.add("x", &[1u8]).unwrap();
    assert_eq!(mem.finish().unwrap().into_inner(), old);

    // Any Write + Seek: a File.
    let file =
        std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("b.npz")).unwrap();
    let mut w = Writer::new(file);
    w.add("z", &[3u8]).unwrap();
    let mut file = w.finish().unwrap();
    file.flush().unwrap();
    file.rewind().unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    assert_eq!(reader(bytes).read::<Vec<u8>>("z").unwrap(), [3]);
}

/// The same arrays give the same archive, byte for byte, for every compression: no
/// timestamps, names and order as added, whatever threads compressed the members (NumPy's
/// archives carry the time they were written, NumPy #9439).
#[test]
fn the_same_arrays_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let ramp: Vec<f32> = (0..300_000).map(|i| (i % 1000) as f32 * 0.5).collect();
    for c in [Compression::Stored, Compression::deflated(), Compression::zstd(), Compression::Zstd { level: 19 }] {
        let mut archives = Vec::new();
        for (run, threads) in [(0, 1), (1, 2), (2, 2)] {
            let path = dir.path().join(format!("{run}.npz"));
            let mut w = npy_core::npz::Writer::create(&path).unwrap();
            w.compression(c).threads(threads);
            w.add("ramp", &ramp).unwrap();
            w.add("small", &[1u8, 2, 3]).unwrap();
            w.add_raw("notes.txt", b"same every time").unwrap();
            w.finish().unwrap();
            if run == 1 {
                std::thread::sleep(std::time::Duration::from_millis(2100)); // a DOS-time tick
            }
            archives.push(std::fs::read(&path).unwrap());
        }
        for (k, a) in archives.iter().enumerate() {
            let at = a.iter().zip(&archives[0]).position(|(x, y)| x != y);
            assert!(at.is_none() && a.len() == archives[0].len(), "{c:?}: run {k} differs at {at:?}");
        }
        // Written a few elements at a time, the member is the same too.
        let path = dir.path().join("started.npz");
        let mut w = npy_core::npz::Writer::create(&path).unwrap();
        w.compression(c);
        let mut m = w.start_array::<f32>("ramp", vec![ramp.len()]).unwrap();
        for part in ramp.chunks(1000) {
            m.write(part).unwrap();
        }
        m.finish().unwrap();
        w.add("small", &[1u8, 2, 3]).unwrap();
        w.add_raw("notes.txt", b"same every time").unwrap();
        w.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == archives[0], "{c:?}: started");
    }
}
