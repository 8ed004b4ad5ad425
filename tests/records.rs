//! Record arrays through `#[derive(NpyRecord)]`, checked against NumPy.
//!
//! Part one reads the project's NumPy-made record fixtures (tests/data, with per-field
//! values in the manifest) into derived structs, compares every field value with NumPy's,
//! and writes them back byte for byte. Part two does the round trip for every record file
//! of NumPy's reference corpus (../shared/corpus/public/{record,struct}).

#[path = "support/corpus.rs"]
mod shared_corpus;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use half::f16;
use npy_core::prelude::*;
use npy_core::types::unit::{Millis, Seconds};
use npy_core::types::{Bytes, DateTime64, TimeDelta64, Ucs4};
use npy_core::ErrorKind;
use num_complex::Complex;
use serde_json::Value;

#[path = "support/corpus_records.rs"]
mod corpus_records;
use corpus_records::*;

use npy_seismic::*;

// ---------------------------------------------------------------------------------------
// Encoding field values as the manifest does (see xtask/golden.py).

trait Enc {
    fn enc(&self, out: &mut Vec<Value>);
}

macro_rules! enc_int {
    ($($t:ty),*) => {$(impl Enc for $t { fn enc(&self, out: &mut Vec<Value>) { out.push(Value::from(*self)); } })*};
}
enc_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Enc for bool {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(*self as u8));
    }
}
impl Enc for f16 {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.to_bits()));
    }
}
impl Enc for f32 {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.to_bits()));
    }
}
impl Enc for f64 {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.to_bits()));
    }
}
impl Enc for Complex<f32> {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(vec![self.re.to_bits(), self.im.to_bits()]));
    }
}
impl<U: npy_core::types::unit::Unit> Enc for DateTime64<U> {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.value()));
    }
}
impl<U: npy_core::types::unit::Unit> Enc for TimeDelta64<U> {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.value()));
    }
}
impl<const N: usize> Enc for Ucs4<N> {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.code_points().to_vec()));
    }
}
impl<const N: usize> Enc for Bytes<N> {
    fn enc(&self, out: &mut Vec<Value>) {
        out.push(Value::from(self.raw().iter().map(|b| format!("{b:02x}")).collect::<String>()));
    }
}
impl<T: Enc, const N: usize> Enc for [T; N] {
    fn enc(&self, out: &mut Vec<Value>) {
        self.iter().for_each(|v| v.enc(out));
    }
}

/// `(path, values)` of one record.
type Fields = Vec<(&'static str, Vec<Value>)>;

macro_rules! fields {
    ($($path:literal => $e:expr),* $(,)?) => {{
        let mut v: Fields = Vec::new();
        $( let mut out = Vec::new(); Enc::enc(&$e, &mut out); v.push(($path, out)); )*
        v
    }};
}

// ---------------------------------------------------------------------------------------
// Part one: the project's fixtures.

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest_entry(file: &str) -> Value {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    entries.into_iter().find(|e| e["file"] == file).unwrap_or_else(|| panic!("{file} not in the manifest"))
}

/// Compares every field of `records` (storage order) with NumPy's values.
fn check_values<T>(file: &str, records: &[T], get: impl Fn(&T) -> Fields) {
    let entry = manifest_entry(file);
    let want = entry["fields"].as_object().unwrap_or_else(|| panic!("{file}: no fields in the manifest"));
    let mut got: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for r in records {
        for (path, vals) in get(r) {
            got.entry(path).or_default().extend(vals);
        }
    }
    let want_paths: Vec<&str> = want.keys().map(String::as_str).collect();
    let got_paths: Vec<&str> = got.keys().copied().collect();
    assert_eq!(got_paths, want_paths, "{file}: fields checked");
    for (path, vals) in got {
        assert_eq!(&Value::from(vals), &want[path], "{file}: field {path}");
    }
}

/// Reads a 1-D fixture as `T`, checks its values, and that writing reproduces the file.
fn fixture_round_trip<T: NpyRecord>(file: &str, get: impl Fn(&T) -> Fields) -> Vec<T> {
    let path = data_dir().join(file);
    let records: Vec<T> = Vec::read_npy(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    check_values(file, &records, get);
    let written = records.write_npy_to(Vec::new()).unwrap();
    assert!(written == std::fs::read(&path).unwrap(), "{file}: rewrite differs from NumPy's file");
    records
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Flat {
    id: i32,
    x: f64,
    flag: bool,
    code: u16,
    c: Complex<f32>,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct FlatAligned {
    id: i32,
    x: f64,
    flag: bool,
    code: u16,
    c: Complex<f32>,
}

fn flat_fields(r: &Flat) -> Fields {
    fields!("id" => r.id, "x" => r.x, "flag" => r.flag, "code" => r.code, "c" => r.c)
}

#[test]
fn packed_and_aligned_records() {
    let packed = fixture_round_trip::<Flat>("record/packed.npy", flat_fields);
    let aligned = fixture_round_trip::<FlatAligned>(
        "record/aligned.npy",
        |r| fields!("id" => r.id, "x" => r.x, "flag" => r.flag, "code" => r.code, "c" => r.c),
    );
    assert_eq!(packed.len(), aligned.len());
    // Fields are matched by name: the packed file reads into the aligned struct and back.
    let cross: Vec<FlatAligned> = Vec::read_npy(data_dir().join("record/packed.npy")).unwrap();
    assert_eq!(cross, aligned);
    let cross: Vec<Flat> = Vec::read_npy(data_dir().join("record/aligned.npy")).unwrap();
    assert_eq!(cross, packed);
}

#[derive(NpyRecord, Debug)]
#[npy(endian = "big")]
struct BigEndian {
    a: i32,
    b: f64,
    c: u16,
    d: DateTime64<Seconds>,
}

#[test]
fn big_endian_records() {
    fixture_round_trip::<BigEndian>(
        "record/big_endian.npy",
        |r| fields!("a" => r.a, "b" => r.b, "c" => r.c, "d" => r.d),
    );
}

#[derive(NpyRecord, Debug)]
#[allow(non_snake_case)]
struct Mixed {
    le_i4: i32,
    #[npy(endian = "big")]
    be_i4: i32,
    le_f8: f64,
    #[npy(endian = "big")]
    be_f4: f32,
    #[npy(endian = "big")]
    be_U2: Ucs4<2>,
    le_m8: TimeDelta64<Millis>,
}

#[test]
fn mixed_endian_records() {
    let v = fixture_round_trip::<Mixed>(
        "record/mixed_endian.npy",
        |r| fields!("le_i4" => r.le_i4, "be_i4" => r.be_i4, "le_f8" => r.le_f8, "be_f4" => r.be_f4, "be_U2" => r.be_U2, "le_m8" => r.le_m8),
    );
    assert_eq!(v[0].be_i4, 0x01020304);
    assert_eq!(v[1].be_U2.to_string(), "é");
    assert!(v[2].le_m8.is_nat());
}

#[derive(NpyRecord, Debug)]
struct L3 {
    c: u8,
    d: f16,
}
#[derive(NpyRecord, Debug)]
struct L2 {
    #[npy(endian = "big")]
    b: i64,
    l3: L3,
}
#[derive(NpyRecord, Debug)]
struct L1 {
    a: f32,
    l2: L2,
}
#[derive(NpyRecord, Debug)]
struct Nested {
    top: i16,
    l1: L1,
    tail: bool,
}

#[test]
fn nested_records() {
    let v = fixture_round_trip::<Nested>("record/nested_3_levels.npy", |r| {
        fields!("top" => r.top, "l1.a" => r.l1.a, "l1.l2.b" => r.l1.l2.b, "l1.l2.l3.c" => r.l1.l2.l3.c,
                "l1.l2.l3.d" => r.l1.l2.l3.d, "tail" => r.tail)
    });
    assert_eq!(v[0].l1.l2.b, 1 << 40);
}

#[derive(NpyRecord, Debug)]
struct Sub {
    v: [f32; 3],
    #[npy(endian = "big")]
    m: [[i16; 3]; 2],
    t: f64,
}

#[derive(NpyRecord, Debug, Clone, Copy)]
struct Pt {
    x: f32,
    y: f32,
}
#[derive(NpyRecord, Debug)]
struct SubRec {
    id: u16,
    pts: [Pt; 3],
    grid: [[i8; 2]; 2],
}

#[test]
fn subarray_records() {
    fixture_round_trip::<Sub>("record/subarray.npy", |r| fields!("v" => r.v, "m" => r.m, "t" => r.t));
    fixture_round_trip::<SubRec>(
        "record/subarray_of_record.npy",
        |r| fields!("id" => r.id, "pts.x" => r.pts.map(|p| p.x), "pts.y" => r.pts.map(|p| p.y), "grid" => r.grid),
    );
}

#[derive(NpyRecord, Debug)]
struct Titled {
    #[npy(title = "Trace identifier")]
    tid: i32,
    #[npy(title = "Amplitude (counts)", endian = "big")]
    amp: f32,
    plain: u8,
}

#[derive(NpyRecord, Debug)]
struct Untitled {
    a: i32,
    b: f32,
}

#[test]
fn titles_are_written_and_understood() {
    fixture_round_trip::<Titled>("record/titles.npy", |r| fields!("tid" => r.tid, "amp" => r.amp, "plain" => r.plain));
    // Non-str titles (an int) cannot be spelled as an attribute; reading ignores titles.
    let v: Vec<Untitled> = Vec::read_npy(data_dir().join("record/titles_non_str.npy")).unwrap();
    check_values("record/titles_non_str.npy", &v, |r| fields!("a" => r.a, "b" => r.b));
}

#[derive(NpyRecord, Debug)]
#[npy(itemsize = 32)]
struct Gaps {
    #[npy(offset = 4)]
    a: i32,
    #[npy(offset = 16)]
    b: f64,
    #[npy(offset = 25)]
    c: u8,
}

#[test]
fn explicit_offsets() {
    let file = "record/offsets_gaps.npy";
    let v: Vec<Gaps> = Vec::read_npy(data_dir().join(file)).unwrap();
    check_values(file, &v, |r| fields!("a" => r.a, "b" => r.b, "c" => r.c));
    // The fixture's gaps hold junk bytes; ours are zeros, the layout is NumPy's.
    let ours = DynArray::read_npy_from(&v.write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    let theirs = DynArray::read_npy(data_dir().join(file)).unwrap();
    assert_eq!(ours.dtype(), theirs.dtype());
    assert_eq!(
        ours.dtype().descr(),
        "[('', '|V4'), ('a', '<i4'), ('', '|V8'), ('b', '<f8'), ('', '|V1'), ('c', '|u1'), ('', '|V6')]"
    );
}

#[derive(NpyRecord, Debug)]
struct Strs {
    name: Ucs4<5>,
    code: Bytes<3>,
    n: i32,
}

#[test]
fn string_fields() {
    let v =
        fixture_round_trip::<Strs>("record/strings.npy", |r| fields!("name" => r.name, "code" => r.code, "n" => r.n));
    assert_eq!(v[0].name.to_string(), "alpha");
    assert_eq!(v[1].code.as_bytes(), b"x");
}

#[derive(NpyRecord, Debug, PartialEq)]
struct ZeroD {
    x: f64,
    y: [i32; 2],
    s: Bytes<2>,
}

#[derive(NpyRecord, Debug, PartialEq)]
struct F2 {
    a: i32,
    #[npy(endian = "big")]
    b: f64,
}

#[test]
fn n_d_record_arrays_keep_shape_and_order() {
    let file = "record/zero_d.npy";
    let a = Array::<ZeroD>::read_npy(data_dir().join(file)).unwrap();
    assert!(a.shape().is_empty());
    check_values(file, a.as_slice(), |r| fields!("x" => r.x, "y" => r.y, "s" => r.s));
    assert_eq!(a.write_npy_to(Vec::new()).unwrap(), std::fs::read(data_dir().join(file)).unwrap());
    let e = Vec::<ZeroD>::read_npy(data_dir().join(file)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");

    let file = "record/3x2_F.npy";
    let a = Array::<F2>::read_npy(data_dir().join(file)).unwrap();
    assert_eq!((a.shape(), a.fortran_order()), (&[3, 2][..], true));
    check_values(file, a.as_slice(), |r| fields!("a" => r.a, "b" => r.b));
    assert_eq!(a.get(&[2, 1]).unwrap().a, 5);
    assert_eq!(a.write_npy_to(Vec::new()).unwrap(), std::fs::read(data_dir().join(file)).unwrap());
}

#[test]
fn traces_packed_and_aligned() {
    fixture_round_trip::<Trace8>("record/trace_packed.npy", |r| {
        fields!("trace_id" => r.trace_id, "receiver.x" => r.receiver.x, "receiver.y" => r.receiver.y,
                "receiver.z" => r.receiver.z, "t0" => r.t0, "dt" => r.dt, "flags" => r.flags, "samples" => r.samples)
    });
    fixture_round_trip::<Trace8Aligned>("record/trace_aligned.npy", |r| {
        fields!("trace_id" => r.trace_id, "receiver.x" => r.receiver.x, "receiver.y" => r.receiver.y,
                "receiver.z" => r.receiver.z, "t0" => r.t0, "dt" => r.dt, "flags" => r.flags, "samples" => r.samples)
    });
}

/// A `#[repr(C, packed)]` struct is NumPy's packed file in memory: its plan is one bulk
/// copy, it reads NumPy's values and writes NumPy's bytes back, and a map views the file
/// in place.
#[test]
fn repr_packed_structs_are_numpys_packed_layout_in_memory() {
    let file = "record/trace_packed.npy";
    const { assert!(Trace8Packed::BULK && ReceiverPacked::BULK && !Trace8::BULK && !Trace8Aligned::BULK) };
    assert_eq!(std::mem::size_of::<Trace8Packed>(), Trace8Packed::ITEMSIZE);
    assert_eq!(Trace8Packed::dtype(), Trace8::dtype());
    let header = npy_core::NpyReader::from_path(data_dir().join(file)).unwrap().header().clone();
    // The file's dtype is the struct's memory: reads are one bulk copy.
    assert_eq!(header.dtype, Trace8Packed::native_dtype());
    // Fields of a packed struct are copied out (`{ r.t0 }`), never borrowed.
    let records = fixture_round_trip::<Trace8Packed>(file, |r| {
        let receiver = { r.receiver };
        fields!("trace_id" => { r.trace_id }, "receiver.x" => { receiver.x }, "receiver.y" => { receiver.y },
                "receiver.z" => { receiver.z }, "t0" => { r.t0 }, "dt" => { r.dt }, "flags" => { r.flags },
                "samples" => { r.samples })
    });
    let converted: Vec<Trace8> = Vec::read_npy(data_dir().join(file)).unwrap();
    assert_eq!(records.len(), converted.len());
    for (p, c) in records.iter().zip(&converted) {
        let (receiver, samples) = ({ p.receiver }, { p.samples });
        assert_eq!(
            ({ p.trace_id }, { p.t0 }, { p.dt }, { p.flags }, samples),
            (c.trace_id, c.t0, c.dt, c.flags, c.samples)
        );
        assert_eq!(({ receiver.x }, { receiver.y }, { receiver.z }), (c.receiver.x, c.receiver.y, c.receiver.z));
    }
    // SAFETY: the fixture is not modified while mapped.
    let map = unsafe { npy_core::mmap::NpyMap::from_path(data_dir().join(file)) }.unwrap();
    assert_eq!(map.view::<Trace8Packed>().unwrap(), &records[..]);
}

#[derive(NpyRecord, Debug)]
struct MissingField {
    trace_id: i32,
    azimuth: f32,
}

#[derive(NpyRecord, Debug)]
struct Narrower {
    t0: f32,
}

#[test]
fn mismatches_name_the_field_and_types() {
    let path = data_dir().join("record/trace_packed.npy");
    let e = Vec::<MissingField>::read_npy(&path).unwrap_err();
    let ErrorKind::DtypeMismatch { field, .. } = e.kind() else { panic!("{e}") };
    assert_eq!(field.as_deref(), Some("azimuth"));
    let e = Vec::<Narrower>::read_npy(&path).unwrap_err();
    let ErrorKind::DtypeMismatch { field, expected, found } = e.kind() else { panic!("{e}") };
    assert_eq!((field.as_deref(), expected.as_str(), found.as_str()), (Some("t0"), "'<f4'", "'<f8'"));
}

// ---------------------------------------------------------------------------------------
// Part two: NumPy's reference corpus.

/// NumPy's corpus (see `support/corpus.rs`).
fn corpus() -> Option<PathBuf> {
    shared_corpus::corpus("corpus record tests")
}

/// Reads a corpus file as `Array<T>` and writes it back; the bytes must be NumPy's.
fn corpus_round_trip<T: NpyRecord>(rel: &str) -> Option<Array<T>> {
    let path = corpus()?.join(rel);
    let arr = npy_core::NpyReader::from_path_with(&path, npy_core::ReadOptions::new().max_header_size(1 << 20))
        .and_then(|r| r.read::<Array<T>>())
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    let written = arr.write_npy_to(Vec::new()).unwrap();
    assert!(written == std::fs::read(&path).unwrap(), "{rel}: rewrite differs from NumPy's file");
    Some(arr)
}

/// The first trace's values, decoded by hand from the file bytes (not by the library).
fn first_trace_by_hand(rel: &str, aligned: bool, big: bool) -> (i32, f64, f32, f32) {
    let bytes = std::fs::read(corpus().unwrap().join(rel)).unwrap();
    let off = npy_core::NpyReader::from_path(corpus().unwrap().join(rel)).unwrap().data_offset();
    let rec = &bytes[off..];
    let (x_at, t0_at, samples_at) = if aligned { (8, 32, 48) } else { (4, 24, 37) };
    let i4 = |at: usize| {
        let b: [u8; 4] = rec[at..at + 4].try_into().unwrap();
        if big {
            i32::from_be_bytes(b)
        } else {
            i32::from_le_bytes(b)
        }
    };
    let f8 = |at: usize| {
        let b: [u8; 8] = rec[at..at + 8].try_into().unwrap();
        if big {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        }
    };
    let f4 = |at: usize| f32::from_bits(i4(at) as u32);
    (i4(0), f8(x_at), f4(samples_at), f8(t0_at) as f32)
}

#[test]
fn corpus_traces_read_with_numpys_values_and_write_back_exactly() {
    let Some(_) = corpus() else { return };
    let cases: [(&str, bool, bool); 4] = [
        ("record/traces_packed.npy", false, false),
        ("record/traces_aligned.npy", true, false),
        ("record/traces_be.npy", false, true),
        ("record/traces_be_aligned.npy", true, true),
    ];
    for (rel, aligned, big) in cases {
        let first = match (aligned, big) {
            (false, false) => corpus_round_trip::<Trace>(rel).map(|a| {
                let t = a.as_slice()[0];
                (t.trace_id, t.receiver.x, t.samples[0], t.t0 as f32)
            }),
            (true, false) => corpus_round_trip::<TraceAligned>(rel).map(|a| {
                let t = a.as_slice()[0];
                (t.trace_id, t.receiver.x, t.samples[0], t.t0 as f32)
            }),
            (false, true) => corpus_round_trip::<TraceBe>(rel).map(|a| {
                let t = a.as_slice()[0];
                (t.trace_id, t.receiver.x, t.samples[0], t.t0 as f32)
            }),
            (true, true) => corpus_round_trip::<TraceBeAligned>(rel).map(|a| {
                let t = a.as_slice()[0];
                (t.trace_id, t.receiver.x, t.samples[0], t.t0 as f32)
            }),
        }
        .unwrap();
        let want = first_trace_by_hand(rel, aligned, big);
        assert_eq!(
            (first.0, first.1.to_bits(), first.2.to_bits(), first.3.to_bits()),
            (want.0, want.1.to_bits(), want.2.to_bits(), want.3.to_bits()),
            "{rel}"
        );
    }
    // Any layout reads into any struct by name: the big-endian packed file into the
    // native aligned struct, and written as NumPy writes that aligned layout.
    let dir = corpus().unwrap();
    let be: Vec<TraceAligned> = Vec::read_npy(dir.join("record/traces_be.npy")).unwrap();
    let native: Vec<Trace> = Vec::read_npy(dir.join("record/traces_be.npy")).unwrap();
    assert_eq!(be.len(), native.len());
    for (a, p) in be.iter().zip(&native) {
        assert_eq!(
            (a.trace_id, a.receiver.z.to_bits(), a.samples.map(f32::to_bits)),
            (p.trace_id, p.receiver.z.to_bits(), p.samples.map(f32::to_bits))
        );
    }
    corpus_round_trip::<Trace>("record/gather_4x12.npy");
    corpus_round_trip::<TraceAligned>("record/gather_4x12_aligned_F.npy");
    corpus_round_trip::<Trace>("record/trace_0d.npy");
    corpus_round_trip::<TraceAligned>("record/traces_empty.npy");
}

#[test]
fn every_corpus_struct_file_round_trips_through_a_derived_struct() {
    if corpus().is_none() {
        return;
    }
    corpus_round_trip::<AlignedNested>("struct/aligned_nested.npy");
    corpus_round_trip::<EmptyStruct>("struct/empty_struct.npy");
    corpus_round_trip::<EmptyAligned>("struct/empty_struct_0x3_aligned.npy");
    corpus_round_trip::<Escaped>("struct/escaped_names.npy");
    corpus_round_trip::<FlatAlignedCorpus>("struct/flat_aligned.npy");
    corpus_round_trip::<FlatPacked>("struct/flat_packed.npy");
    corpus_round_trip::<KitchenSink>("struct/kitchen_sink.npy");
    corpus_round_trip::<Latin1>("struct/latin1_name_v1.npy");
    corpus_round_trip::<MixedCorpus>("struct/mixed_endian.npy");
    corpus_round_trip::<Nested3>("struct/nested_3_levels.npy");
    corpus_round_trip::<OffsetsGaps>("struct/offsets_gaps.npy");
    corpus_round_trip::<RG>("struct/struct_2d.npy");
    corpus_round_trip::<KV>("struct/struct_2x3x2_aligned_F.npy");
    corpus_round_trip::<AB>("struct/struct_3x4_F.npy");
    corpus_round_trip::<StructInSubarray>("struct/struct_in_subarray.npy");
    corpus_round_trip::<Sub1>("struct/subarray_1elem_and_2d_field.npy");
    corpus_round_trip::<SubFields>("struct/subarray_fields.npy");
    corpus_round_trip::<TitlesCorpus>("struct/titles.npy");
    corpus_round_trip::<Unicode3>("struct/unicode_names_v3.npy");
    corpus_round_trip::<ZeroDStruct>("struct/zero_d_struct.npy");
    corpus_round_trip::<AbcF>("fortran/struct_2x3_F.npy");
}

/// Files whose padding holds junk bytes: values read right, the layout is NumPy's, and
/// the padding we write is zeros (NumPy's own writer would also zero it for a new array).
#[test]
fn junk_padding_reads_right_and_writes_zeros() {
    let Some(dir) = corpus() else { return };
    let rel = "struct/aligned_padding_junk.npy";
    let v: Vec<Junk> = Vec::read_npy(dir.join(rel)).unwrap();
    let raw = std::fs::read(dir.join(rel)).unwrap();
    let off = npy_core::NpyReader::from_path(dir.join(rel)).unwrap().data_offset();
    for (i, r) in v.iter().enumerate() {
        let rec = &raw[off + i * 24..off + (i + 1) * 24];
        assert_eq!(r.a, rec[0]);
        assert_eq!(r.b.to_bits(), u64::from_le_bytes(rec[8..16].try_into().unwrap()));
        assert_eq!(r.c, i16::from_le_bytes(rec[16..18].try_into().unwrap()));
    }
    let ours = DynArray::read_npy_from(&v.write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    assert_eq!(ours.dtype(), DynArray::read_npy(dir.join(rel)).unwrap().dtype());
    assert!(ours.data().chunks(24).all(|r| r[1..8] == [0; 7] && r[18..] == [0; 6]));

    let rel = "struct/offsets_gap_junk.npy";
    let v: Vec<GapJunk> = Vec::read_npy(dir.join(rel)).unwrap();
    let raw = std::fs::read(dir.join(rel)).unwrap();
    let off = npy_core::NpyReader::from_path(dir.join(rel)).unwrap().data_offset();
    for (i, r) in v.iter().enumerate() {
        let rec = &raw[off + i * 16..off + (i + 1) * 16];
        assert_eq!(r.a, i16::from_le_bytes(rec[2..4].try_into().unwrap()));
        assert_eq!(r.b.to_bits(), u32::from_be_bytes(rec[8..12].try_into().unwrap()));
    }
    let ours = DynArray::read_npy_from(&v.write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    assert_eq!(ours.dtype(), DynArray::read_npy(dir.join(rel)).unwrap().dtype());
}

/// 2,000 fields: a struct names the ones it wants; the others are skipped by name.
#[test]
fn wide_records_read_the_named_fields() {
    let Some(dir) = corpus() else { return };
    let path = dir.join("struct/fields_2000_v2.npy");
    let v = npy_core::NpyReader::from_path_with(&path, npy_core::ReadOptions::new().max_header_size(1 << 20))
        .unwrap()
        .read::<Vec<SomeChannels>>()
        .unwrap();
    let dynamic = npy_core::NpyReader::from_path_with(&path, npy_core::ReadOptions::new().max_header_size(1 << 20))
        .unwrap()
        .read::<DynArray>()
        .unwrap();
    let rec = dynamic.dtype().as_record().unwrap();
    let last = rec.field("seismic_channel_1999_value").unwrap().offset;
    for (i, r) in v.iter().enumerate() {
        let base = i * rec.itemsize();
        let at = |o: usize| f64::from_le_bytes(dynamic.data()[base + o..base + o + 8].try_into().unwrap());
        assert_eq!(r.seismic_channel_0000_value.to_bits(), at(0).to_bits());
        assert_eq!(r.seismic_channel_1999_value.to_bits(), at(last).to_bits());
    }
}

#[test]
fn chunked_reads_and_streaming_writes_agree_with_whole_array_io() {
    let path = data_dir().join("record/trace_packed.npy");
    let all: Vec<Trace8> = Vec::read_npy(&path).unwrap();
    // Chunks of 3 from a plain `io::Read` (no Seek), converted into the aligned layout.
    let file = std::fs::File::open(&path).unwrap();
    let chunks: Vec<Vec<Trace8Aligned>> = npy_core::NpyReader::from_reader(file)
        .unwrap()
        .chunks::<Trace8Aligned>(3)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [3, 1]);
    let flat: Vec<Trace8Aligned> = chunks.concat();
    assert!(flat
        .iter()
        .zip(&all)
        .all(|(a, p)| a.trace_id == p.trace_id && a.samples == p.samples && a.receiver.y == p.receiver.y));

    // Into a caller's buffer.
    let mut reader = npy_core::NpyReader::from_path(&path).unwrap();
    let mut buf = [all[0]; 3];
    assert_eq!(reader.read_into(&mut buf).unwrap(), 3);
    assert_eq!(buf[..], all[..3]);
    assert_eq!(reader.read_into(&mut buf).unwrap(), 1);
    assert_eq!(buf[0], all[3]);

    // A streaming writer of an unknown count gives exactly NumPy's file.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stream.npy");
    let mut w = npy_core::NpyFileWriter::<Trace8>::create(&out).unwrap();
    for t in &all {
        w.push(t).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&path).unwrap());
}

#[derive(NpyRecord, Debug)]
struct WithSkip {
    trace_id: i32,
    #[npy(skip)]
    note: String,
    t0: f64,
}

#[test]
fn skipped_fields_are_default_on_read_and_absent_on_write() {
    let path = data_dir().join("record/trace_packed.npy");
    let v: Vec<WithSkip> = Vec::read_npy(&path).unwrap();
    assert_eq!(v.iter().map(|r| r.trace_id).collect::<Vec<_>>(), [101, 202, 303, 404]);
    assert!(v.iter().all(|r| r.note.is_empty()));
    let bytes = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(DynArray::read_npy_from(&bytes[..]).unwrap().dtype().descr(), "[('trace_id', '<i4'), ('t0', '<f8')]");
}

/// Enough padded records for the writer to copy on a second thread (8+ pieces of 1 MiB):
/// values come back, padding bytes are zeros.
#[test]
fn large_padded_writes_are_exact() {
    let n = 120_000;
    assert!(n as usize * std::mem::size_of::<Trace8Aligned>() >= 8 << 20);
    let records: Vec<Trace8Aligned> = (0..n)
        .map(|i| Trace8Aligned {
            trace_id: i,
            receiver: ReceiverAligned { x: i as f64, y: -(i as f64), z: 0.5 },
            t0: i as f64 * 0.25,
            dt: 0.004,
            flags: (i % 256) as u8,
            samples: [i as f32; 8],
        })
        .collect();
    let bytes = records.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Trace8Aligned>::read_npy_from(&bytes[..]).unwrap(), records);
    let arr = DynArray::read_npy_from(&bytes[..]).unwrap();
    let rec = arr.dtype().as_record().unwrap();
    let size = rec.itemsize();
    let covered: Vec<bool> = {
        let mut mask = vec![false; size];
        let native = Trace8Aligned::dtype();
        for f in native.as_record().unwrap().fields() {
            mask[f.offset..f.offset + f.dtype.itemsize()].iter_mut().for_each(|m| *m = true);
        }
        mask
    };
    for (i, r) in arr.data().chunks_exact(size).enumerate() {
        for (b, (&byte, &field)) in r.iter().zip(&covered).enumerate() {
            assert!(field || byte == 0, "record {i} padding byte {b} is {byte}");
        }
    }
}

/// A temporary directory holding `tagged.npy`: `n` `Tagged` records (`id` = i, `ok` = every
/// third, `level` = i / 2), written packed (9 bytes each) by npy.
fn tagged_file(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let records: Vec<Tagged> = (0..n).map(|i| Tagged { id: i as u32, ok: i % 3 == 0, level: i as f32 * 0.5 }).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tagged.npy");
    records.write_npy(&path).unwrap();
    (dir, path)
}

/// Fails unless `wide` is `tagged_file(n)`'s records, widened.
fn assert_widened(wide: &[TaggedWide], n: usize) {
    assert_eq!(wide.len(), n);
    for (i, w) in wide.iter().enumerate() {
        let want = TaggedWide { level: i as f32 as f64 * 0.5, id: i as i64, ok: i % 3 == 0 };
        assert_eq!(*w, want, "record {i}");
    }
}

/// A conversion of over 64 MiB from a file, which two threads split (each reads its half
/// at its position): every value; the first invalid value of the array (not of the half
/// that finished first); a file that shrinks after its header was read.
#[test]
fn split_conversions_from_files_read_right() {
    let n = 8_000_000;
    assert!(n * 9 >= 64 << 20);
    let (_dir, path) = tagged_file(n);
    assert_widened(&Vec::<TaggedWide>::read_npy(&path).unwrap(), n);
    // A zero-sized type takes none of the file's bytes: an error, not a split of nothing.
    let e = Vec::<NoFields>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");

    let mut bytes = std::fs::read(&path).unwrap();
    let data = bytes.len() - n * 9;
    // Not bools: record 6_000_001 (second half), then also record 1_234_567 (first half).
    bytes[data + 6_000_001 * 9 + 4] = 2;
    std::fs::write(&path, &bytes).unwrap();
    let e = Vec::<TaggedWide>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 6_000_001, .. }), "{e}");
    bytes[data + 1_234_567 * 9 + 4] = 7;
    std::fs::write(&path, &bytes).unwrap();
    let e = Vec::<TaggedWide>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1_234_567, .. }), "{e}");

    // The file is cut short between reading the header and the data.
    bytes[data + 1_234_567 * 9 + 4] = 1;
    bytes[data + 6_000_001 * 9 + 4] = 0;
    std::fs::write(&path, &bytes).unwrap();
    let reader = npy_core::NpyReader::from_path(&path).unwrap();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len((data + 7_000_000 * 9 + 5) as u64).unwrap();
    let e = reader.read::<Vec<TaggedWide>>().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Truncated { expected, found } if *expected == (n * 9) as u64 && *found == 63_000_005),
        "{e}"
    );
}

#[derive(NpyRecord, Debug)]
struct NoFields {}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Tagged {
    id: u32,
    ok: bool,
    level: f32,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct TaggedWide {
    level: f64,
    id: i64,
    ok: bool,
}

/// A large conversion (packed file, fields reordered and widened; 18 MB of source, many
/// chunks): the values, an invalid value's index deep in the array, and a file cut short.
/// The file is written by a conversion too (Rust's layout of `Tagged` to the packed one,
/// 8+ pieces of 1 MiB, so on a second thread).
#[test]
fn large_conversions_read_right() {
    let n = 2_000_003;
    let (_dir, path) = tagged_file(n);
    assert_widened(&Vec::<TaggedWide>::read_npy(&path).unwrap(), n);

    // `ok` of record 1_777_777 is 2: not a bool.
    let mut bytes = std::fs::read(&path).unwrap();
    let data = bytes.len() - n * 9;
    bytes[data + 1_777_777 * 9 + 4] = 2;
    std::fs::write(&path, &bytes).unwrap();
    let e = Vec::<TaggedWide>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1_777_777, .. }), "{e}");

    // Cut short: an error, from any source.
    bytes[data + 1_777_777 * 9 + 4] = 1;
    let short = &bytes[..bytes.len() - 100];
    let e = Vec::<TaggedWide>::read_npy_from(short).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
}
