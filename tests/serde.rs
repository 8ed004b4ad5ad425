//! The serde bridge (`npy_core::serde`), checked against the derived path.
//!
//! Part one reads every record file of NumPy's reference corpus
//! (../shared/corpus/public/{record,struct}/*.npy) three ways: into the derived struct of
//! tests/records.rs, into a hand-written serde struct mirroring it (field order shuffled
//! in places, maps and tuples for some), and into the dynamic `Value`; all three must give
//! the same values, element by element. No file is skipped: every dtype of those files has
//! a serde mapping (long doubles, found only in exotic/, map to raw bytes and are checked
//! on their own below). Part two writes: with the file's dtype (NumPy's bytes exactly) and
//! with a traced dtype. Part three checks the errors.

#[path = "support/corpus.rs"]
mod shared_corpus;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use half::f16;
use npy_core::header::Header;
use npy_core::prelude::*;
use npy_core::serde::{self as npy_serde, Value};
use npy_core::types::unit::Unit;
use npy_core::types::{Bytes, DateTime64, TimeDelta64, Ucs4, Void};
use npy_core::{DType, ErrorKind, NpyReader, ReadOptions};
use num_complex::Complex;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[path = "support/corpus_records.rs"]
mod corpus_records;
use corpus_records::*;

use npy_seismic::*;

// ---------------------------------------------------------------------------------------
// The corpus, and values as the derived path sees them.

/// NumPy's corpus (see `support/corpus.rs`).
fn corpus() -> Option<PathBuf> {
    shared_corpus::corpus("corpus serde tests")
}

fn open(rel: &str) -> NpyReader<BufReader<File>> {
    let path = corpus().unwrap().join(rel);
    npy_core::NpyReader::from_path_with(path, ReadOptions::new().max_header_size(1 << 20))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A derived struct's values as [`Value::decode`] gives them: records in offset order.
trait Derived {
    fn value(&self) -> Value;
}

macro_rules! number {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl Derived for $t {
            fn value(&self) -> Value {
                Value::$v((*self).into())
            }
        }
    )*};
}
number!(i8 => Int, i16 => Int, i32 => Int, i64 => Int, u8 => UInt, u16 => UInt, u32 => UInt, u64 => UInt,
        bool => Bool, f32 => Float, f64 => Float);

impl Derived for f16 {
    fn value(&self) -> Value {
        Value::Float(self.to_f64())
    }
}
impl Derived for Complex<f32> {
    fn value(&self) -> Value {
        Value::Complex(self.re.into(), self.im.into())
    }
}
impl Derived for Complex<f64> {
    fn value(&self) -> Value {
        Value::Complex(self.re, self.im)
    }
}
impl<U: Unit> Derived for DateTime64<U> {
    fn value(&self) -> Value {
        Value::DateTime { value: DateTime64::value(*self), unit: U::UNIT }
    }
}
impl<U: Unit> Derived for TimeDelta64<U> {
    fn value(&self) -> Value {
        Value::TimeDelta { value: TimeDelta64::value(*self), unit: U::UNIT }
    }
}
impl<const N: usize> Derived for Bytes<N> {
    fn value(&self) -> Value {
        Value::Bytes(self.as_bytes().to_vec())
    }
}
impl<const N: usize> Derived for Ucs4<N> {
    fn value(&self) -> Value {
        Value::Str(self.to_string())
    }
}
impl<const N: usize> Derived for Void<N> {
    fn value(&self) -> Value {
        Value::Void(self.0.to_vec())
    }
}
impl<T: Derived, const N: usize> Derived for [T; N] {
    fn value(&self) -> Value {
        Value::Array(self.iter().map(Derived::value).collect())
    }
}

/// `Derived` for a derived struct: its fields by their NumPy names, in the file's order.
macro_rules! record {
    ($($t:ty { $($name:literal => $f:ident),* $(,)? })*) => {$(
        impl Derived for $t {
            fn value(&self) -> Value {
                Value::Record(vec![$(($name.to_string(), Derived::value(&self.$f))),*])
            }
        }
    )*};
}

/// What serializing a serde struct that mirrors a record gives (see the module docs of
/// `npy_core::serde`): complex numbers as pairs, datetimes as counts, void as bytes.
fn serde_model(v: Value) -> Value {
    match v {
        Value::Complex(re, im) => Value::Array(vec![Value::Float(re), Value::Float(im)]),
        Value::DateTime { value, .. } | Value::TimeDelta { value, .. } => Value::Int(value),
        Value::Void(b) | Value::LongDouble(b) => Value::Bytes(b),
        Value::Record(fields) => Value::Record(fields.into_iter().map(|(n, v)| (n, serde_model(v))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(serde_model).collect()),
        other => other,
    }
}

/// Equal values; floats by bits, except that any two NaNs are equal (`half` and this
/// crate may widen NaN payloads differently). `loose` compares records by name in any
/// order (or positionally, against a tuple), integers by value whatever their signedness,
/// and bytes with the strings or `u8` sequences a serde struct holds them in.
fn same(a: &Value, b: &Value, loose: bool) -> bool {
    let float = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => float(*x, *y),
        (Value::Complex(a, b), Value::Complex(c, d)) => float(*a, *c) && float(*b, *d),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y, loose)),
        (Value::Record(x), Value::Record(y)) if loose => {
            x.len() == y.len()
                && x.iter().all(|(n, v)| y.iter().find(|(m, _)| m == n).is_some_and(|(_, w)| same(v, w, loose)))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((n, v), (m, w))| n == m && same(v, w, loose))
        }
        // A tuple holds a record positionally.
        (Value::Array(items), Value::Record(fields)) | (Value::Record(fields), Value::Array(items)) if loose => {
            items.len() == fields.len() && items.iter().zip(fields).all(|(i, (_, f))| same(i, f, loose))
        }
        (Value::Int(x), Value::UInt(y)) | (Value::UInt(y), Value::Int(x)) if loose => i128::from(*x) == i128::from(*y),
        (Value::Bytes(x), Value::Str(s)) | (Value::Str(s), Value::Bytes(x)) if loose => x == s.as_bytes(),
        (Value::Bytes(x), Value::Array(items)) | (Value::Array(items), Value::Bytes(x)) if loose => {
            items.len() == x.len() && items.iter().zip(x).all(|(i, &b)| same(i, &Value::UInt(b.into()), loose))
        }
        _ => a == b,
    }
}

/// The same records (NaN-aware, as [`same`]), through their serde values.
fn same_records<S: Serialize>(a: &[S], b: &[S]) -> bool {
    let values = |v: &[S]| v.iter().map(|r| npy_serde::to_value(r).unwrap()).collect::<Vec<_>>();
    same(&Value::Array(values(a)), &Value::Array(values(b)), false)
}

/// Reads `rel` as derived `D`, as serde `S` (whole, chunked, from a `DynArray`) and as
/// `Value`s (chunked, from a `DynArray`), and checks that all agree element by element,
/// in storage order. Returns the number of elements.
fn check<D: NpyRecord + Derived, S: DeserializeOwned + Serialize>(rel: &str) -> usize {
    let derived = open(rel).read::<Array<D>>().unwrap_or_else(|e| panic!("{rel}: derived: {e}"));
    let want: Vec<Value> = derived.as_slice().iter().map(Derived::value).collect();

    let dynamic: Vec<Value> =
        npy_serde::values(open(rel), 5).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{rel}: values: {e}"));
    assert_eq!(dynamic.len(), want.len(), "{rel}");
    let arr = open(rel).read::<DynArray>().unwrap();
    for (i, (got, want)) in dynamic.iter().zip(&want).enumerate() {
        assert!(same(got, want, false), "{rel}[{i}]: Value {got:?}\n  derived {want:?}");
        assert!(same(&Value::from_dyn(&arr, i).unwrap(), got, false), "{rel}[{i}]: Value::from_dyn");
    }

    let typed: Vec<S> = npy_serde::from_npy_reader(open(rel)).unwrap_or_else(|e| panic!("{rel}: serde: {e}"));
    let chunked: Vec<S> =
        npy_serde::iter(open(rel), 3).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{rel}: iter: {e}"));
    let from_dyn: Vec<S> = npy_serde::from_dyn(&arr).unwrap_or_else(|e| panic!("{rel}: from_dyn: {e}"));
    assert_eq!((typed.len(), chunked.len(), from_dyn.len()), (want.len(), want.len(), want.len()), "{rel}");
    for (i, want) in want.iter().enumerate() {
        let want = serde_model(want.clone());
        for (how, got) in [("from_reader", &typed[i]), ("iter", &chunked[i]), ("from_dyn", &from_dyn[i])] {
            let got = npy_serde::to_value(got).unwrap();
            assert!(same(&got, &want, true), "{rel}[{i}]: serde ({how}) {got:?}\n  derived {want:?}");
        }
    }
    want.len()
}

// ---------------------------------------------------------------------------------------
// The derived corpus structs (tests/support/corpus_records.rs, trace.rs) and their serde mirrors.

record! {
    Receiver { "x" => x, "y" => y, "z" => z }
    ReceiverAligned { "x" => x, "y" => y, "z" => z }
    ReceiverBe { "x" => x, "y" => y, "z" => z }
    ReceiverBeAligned { "x" => x, "y" => y, "z" => z }
    Trace { "trace_id" => trace_id, "receiver" => receiver, "t0" => t0, "dt" => dt, "flags" => flags, "samples" => samples }
    TraceAligned { "trace_id" => trace_id, "receiver" => receiver, "t0" => t0, "dt" => dt, "flags" => flags, "samples" => samples }
    TraceBe { "trace_id" => trace_id, "receiver" => receiver, "t0" => t0, "dt" => dt, "flags" => flags, "samples" => samples }
    TraceBeAligned { "trace_id" => trace_id, "receiver" => receiver, "t0" => t0, "dt" => dt, "flags" => flags, "samples" => samples }
}

/// One serde struct reads every layout of the traces: packed, aligned, big-endian.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct ReceiverS {
    z: f32,
    x: f64,
    y: f64,
}
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct TraceS {
    trace_id: i32,
    receiver: ReceiverS,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: Vec<f32>,
}

record! {
    NestedB { "c" => c, "d" => d }
    AlignedNested { "a" => a, "b" => b, "e" => e }
}
#[derive(Serialize, Deserialize)]
struct NestedBS {
    c: i64,
    d: u8,
}
#[derive(Serialize, Deserialize)]
struct AlignedNestedS {
    a: i8,
    b: NestedBS,
    e: [i16; 3],
}

record! { FlatAlignedCorpus { "a" => a, "b" => b, "c" => c, "d" => d, "e" => e } }
/// Fields in another order than the file's: matched by name.
#[derive(Serialize, Deserialize)]
struct FlatAlignedS {
    e: u8,
    d: i32,
    c: i16,
    b: f64,
    a: u8,
}

record! { FlatPacked { "id" => id, "x" => x, "flag" => flag, "code" => code, "name" => name, "c" => c } }
/// `code` holds bytes that are not UTF-8: a `Vec<u8>` takes them.
#[derive(Serialize, Deserialize)]
struct FlatPackedS {
    id: i32,
    x: f64,
    flag: bool,
    code: Vec<u8>,
    name: String,
    c: (f32, f32),
}

record! { EmptyStruct { "x" => x, "y" => y } }
#[derive(Serialize, Deserialize)]
struct EmptyStructS {
    x: f64,
    y: String,
}

record! { EmptyAligned { "x" => x, "y" => y } }
#[derive(Serialize, Deserialize)]
struct EmptyAlignedS {
    x: u8,
    y: f64,
}

record! { Escaped { "it's" => a, "say \"hi\"" => b, "both'\"" => c, "back\\slash" => d, "tab\tnl\n" => e, "nbsp\u{a0}" => f } }
#[derive(Serialize, Deserialize)]
struct EscapedS {
    #[serde(rename = "it's")]
    a: i16,
    #[serde(rename = "say \"hi\"")]
    b: i16,
    #[serde(rename = "both'\"")]
    c: i16,
    #[serde(rename = "back\\slash")]
    d: i16,
    #[serde(rename = "tab\tnl\n")]
    e: i16,
    #[serde(rename = "nbsp\u{a0}")]
    f: i16,
}

record! {
    KitchenSink { "b" => b, "i1" => i1, "u1" => u1, "i2" => i2, "u2" => u2, "i4" => i4, "u4" => u4, "i8" => i8,
        "u8" => u8, "f2" => f2, "f4" => f4, "f8" => f8, "c8" => c8, "c16" => c16, "M" => M, "m" => m, "S" => S,
        "U" => U, "V" => V, "Ua" => Ua }
}
/// Every scalar kind in its natural serde type.
#[derive(Serialize, Deserialize, Debug)]
#[allow(non_snake_case)]
struct KitchenSinkS {
    b: bool,
    i1: i8,
    u1: u8,
    i2: i16,
    u2: u16,
    i4: i32,
    u4: u32,
    i8: i64,
    u8: u64,
    f2: f32,
    f4: f32,
    f8: f64,
    c8: (f32, f32),
    c16: [f64; 2],
    M: i64,
    m: i64,
    S: Vec<u8>,
    U: String,
    V: Vec<u8>,
    Ua: Vec<String>,
}

record! { Latin1 { "café" => cafe, "naïve" => naive } }
#[derive(Serialize, Deserialize)]
struct Latin1S {
    #[serde(rename = "café")]
    cafe: i32,
    #[serde(rename = "naïve")]
    naive: f32,
}

record! {
    MixedCorpus { "le_i4" => le_i4, "be_i4" => be_i4, "le_f8" => le_f8, "be_f8" => be_f8, "be_c8" => be_c8,
        "be_u2" => be_u2, "le_M8" => le_M8, "be_U2" => be_U2 }
}
#[derive(Serialize, Deserialize)]
#[allow(non_snake_case)]
struct MixedS {
    le_i4: i32,
    be_i4: i32,
    le_f8: f64,
    be_f8: f64,
    be_c8: (f32, f32),
    be_u2: u16,
    le_M8: i64,
    be_U2: String,
}

record! { RG { "r" => r, "g" => g } }

record! { KV { "k" => k, "v" => v } }
#[derive(Serialize, Deserialize)]
struct KvS {
    v: f64,
    k: u8,
}

record! { AB { "a" => a, "b" => b } }

record! { AbcF { "a" => a, "b" => b, "c" => c } }
#[derive(Serialize, Deserialize)]
struct AbcFS {
    a: i32,
    b: f64,
    c: Vec<u8>,
}

record! {
    Zw { "z" => z, "w" => w }
    PtY { "x" => x, "y" => y }
    G { "g" => g }
    StructInSubarray { "id" => id, "pts" => pts, "grid" => grid }
}
#[derive(Serialize, Deserialize)]
struct ZwS {
    z: i16,
    w: String,
}
#[derive(Serialize, Deserialize)]
struct PtYS {
    x: f32,
    y: ZwS,
}
#[derive(Serialize, Deserialize)]
struct GS {
    g: i8,
}
#[derive(Serialize, Deserialize)]
struct StructInSubarrayS {
    id: u16,
    pts: Vec<PtYS>,
    grid: [[GS; 2]; 2],
}

record! { Sub1 { "one" => one, "plane" => plane, "deep" => deep } }
#[derive(Serialize, Deserialize)]
struct Sub1S {
    one: [f64; 1],
    plane: [[u8; 2]; 2],
    deep: Vec<Vec<Vec<i16>>>,
}

record! { SubFields { "v3" => v3, "m23" => m23, "s" => s, "t" => t } }
#[derive(Serialize, Deserialize)]
struct SubFieldsS {
    v3: [f32; 3],
    m23: Vec<[i16; 3]>,
    s: [String; 2],
    t: f64,
}

record! { TitlesCorpus { "tid" => tid, "amp" => amp, "plain" => plain } }
#[derive(Serialize, Deserialize)]
struct TitlesS {
    tid: i32,
    amp: f32,
    plain: u8,
}

record! { Unicode3 { "温度" => temperature, "地震" => quake, "α" => alpha } }
#[derive(Serialize, Deserialize)]
struct Unicode3S {
    #[serde(rename = "温度")]
    temperature: f32,
    #[serde(rename = "地震")]
    quake: i16,
    #[serde(rename = "α")]
    alpha: u8,
}

record! { ZeroDStruct { "x" => x, "y" => y } }
#[derive(Serialize, Deserialize)]
struct ZeroDS {
    x: f64,
    y: [i32; 2],
}

record! {
    N3 { "c" => c, "d" => d }
    N2 { "b" => b, "l3" => l3 }
    N1 { "a" => a, "l2" => l2 }
    Nested3 { "top" => top, "l1" => l1, "tail" => tail }
}
#[derive(Serialize, Deserialize)]
struct N3S {
    c: u8,
    d: f32,
}
#[derive(Serialize, Deserialize)]
struct N2S {
    b: i64,
    l3: N3S,
}
#[derive(Serialize, Deserialize)]
struct N1S {
    a: f32,
    l2: N2S,
}
#[derive(Serialize, Deserialize)]
struct Nested3S {
    top: i16,
    l1: N1S,
    tail: bool,
}

record! { OffsetsGaps { "a" => a, "b" => b, "c" => c } }
#[derive(Serialize, Deserialize)]
struct OffsetsGapsS {
    c: u8,
    a: i32,
    b: f64,
}

record! { Junk { "a" => a, "b" => b, "c" => c } }
#[derive(Serialize, Deserialize)]
struct JunkS {
    a: u8,
    b: f64,
    c: i16,
}

record! { GapJunk { "a" => a, "b" => b } }
#[derive(Serialize, Deserialize)]
struct GapJunkS {
    a: i16,
    b: f32,
}

#[derive(Serialize, Deserialize, Debug)]
struct SomeChannelsS {
    seismic_channel_1999_value: f64,
    seismic_channel_0000_value: f64,
}

/// 2,000 fields: the serde struct names two (the others are skipped unread); the dynamic
/// `Value` has all of them, checked against the bytes decoded by hand.
fn check_wide(rel: &str) -> usize {
    let derived: Vec<SomeChannels> = open(rel).read().unwrap();
    let typed: Vec<SomeChannelsS> = npy_serde::from_npy_reader(open(rel)).unwrap();
    let arr = open(rel).read::<DynArray>().unwrap();
    let rec = arr.dtype().as_record().unwrap();
    assert_eq!(rec.fields().len(), 2000);
    for (i, (d, s)) in derived.iter().zip(&typed).enumerate() {
        assert_eq!(d.seismic_channel_0000_value.to_bits(), s.seismic_channel_0000_value.to_bits());
        assert_eq!(d.seismic_channel_1999_value.to_bits(), s.seismic_channel_1999_value.to_bits());
        let Value::Record(fields) = Value::from_dyn(&arr, i).unwrap() else { panic!("{rel}: not a record") };
        assert_eq!(fields.len(), 2000);
        for ((name, v), f) in fields.iter().zip(rec.fields()) {
            let at = i * rec.itemsize() + f.offset;
            let by_hand = f64::from_le_bytes(arr.data()[at..at + 8].try_into().unwrap());
            let Value::Float(v) = v else { panic!("{rel}[{i}].{name}: {v:?}") };
            assert_eq!((name, v.to_bits()), (&f.name, by_hand.to_bits()), "{rel}[{i}]");
        }
    }
    derived.len()
}

/// Every `.npy` file under the corpus's record/ and struct/.
fn corpus_record_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for sub in ["record", "struct"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".npy") {
                files.push(format!("{sub}/{name}"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_corpus_record_file_reads_the_same_through_derive_serde_and_value() {
    let Some(dir) = corpus() else { return };
    type Check = fn(&str) -> usize;
    let cases: &[(&str, Check)] = &[
        ("record/gather_4x12.npy", check::<Trace, TraceS>),
        ("record/gather_4x12_aligned_F.npy", check::<TraceAligned, TraceS>),
        ("record/trace_0d.npy", check::<Trace, TraceS>),
        ("record/traces_aligned.npy", check::<TraceAligned, TraceS>),
        ("record/traces_be.npy", check::<TraceBe, TraceS>),
        ("record/traces_be_aligned.npy", check::<TraceBeAligned, TraceS>),
        ("record/traces_empty.npy", check::<TraceAligned, TraceS>),
        ("record/traces_packed.npy", check::<Trace, TraceS>),
        ("struct/aligned_nested.npy", check::<AlignedNested, AlignedNestedS>),
        ("struct/aligned_padding_junk.npy", check::<Junk, JunkS>),
        ("struct/empty_struct.npy", check::<EmptyStruct, EmptyStructS>),
        ("struct/empty_struct_0x3_aligned.npy", check::<EmptyAligned, EmptyAlignedS>),
        ("struct/escaped_names.npy", check::<Escaped, EscapedS>),
        ("struct/fields_2000_v2.npy", check_wide),
        ("struct/flat_aligned.npy", check::<FlatAlignedCorpus, FlatAlignedS>),
        ("struct/flat_packed.npy", check::<FlatPacked, FlatPackedS>),
        ("struct/kitchen_sink.npy", check::<KitchenSink, KitchenSinkS>),
        ("struct/latin1_name_v1.npy", check::<Latin1, Latin1S>),
        ("struct/mixed_endian.npy", check::<MixedCorpus, MixedS>),
        ("struct/nested_3_levels.npy", check::<Nested3, Nested3S>),
        ("struct/offsets_gap_junk.npy", check::<GapJunk, GapJunkS>),
        ("struct/offsets_gaps.npy", check::<OffsetsGaps, OffsetsGapsS>),
        // A map reads a record too, and a tuple reads one positionally.
        ("struct/struct_2d.npy", check::<RG, BTreeMap<String, f32>>),
        ("struct/struct_2x3x2_aligned_F.npy", check::<KV, KvS>),
        ("struct/struct_3x4_F.npy", check::<AB, (i32, f64)>),
        ("struct/struct_in_subarray.npy", check::<StructInSubarray, StructInSubarrayS>),
        ("struct/subarray_1elem_and_2d_field.npy", check::<Sub1, Sub1S>),
        ("struct/subarray_fields.npy", check::<SubFields, SubFieldsS>),
        ("struct/titles.npy", check::<TitlesCorpus, TitlesS>),
        ("struct/unicode_names_v3.npy", check::<Unicode3, Unicode3S>),
        ("struct/zero_d_struct.npy", check::<ZeroDStruct, ZeroDS>),
    ];
    let mut elements = 0;
    for (rel, check) in cases {
        elements += check(rel);
    }
    assert!(elements > 300, "{elements} elements checked");
    // No record file of the corpus is left out.
    let listed: Vec<String> = cases.iter().map(|(rel, _)| rel.to_string()).collect();
    assert_eq!(listed, corpus_record_files(&dir));
    // Beyond record/ and struct/: a Fortran-order record file.
    check::<AbcF, AbcFS>("fortran/struct_2x3_F.npy");
}

/// The traces inside the corpus's `.npz` archives, streamed from their members.
#[test]
fn npz_members_read_through_serde() {
    let Some(dir) = corpus() else { return };
    #[derive(Deserialize, Debug, PartialEq)]
    struct Meta {
        n_shots: u16,
        line: String,
        dt: f32,
    }
    for name in ["survey_compressed.npz", "survey_stored_aligned.npz"] {
        let mut npz = npy_core::npz::Reader::from_path(dir.join("record").join(name)).unwrap();
        let typed: Vec<TraceS> = npy_serde::from_npy_reader(npz.npy("traces").unwrap()).unwrap();
        let dynamic: Vec<Value> = npy_serde::values(npz.npy("traces").unwrap(), 4).collect::<Result<_, _>>().unwrap();
        let derived: Vec<Trace> = npz.read("traces").unwrap();
        assert_eq!((typed.len(), dynamic.len()), (derived.len(), derived.len()), "{name}");
        for ((t, v), d) in typed.iter().zip(&dynamic).zip(&derived) {
            assert!(same(&npy_serde::to_value(t).unwrap(), &serde_model(d.value()), true), "{name}");
            assert!(same(v, &d.value(), false), "{name}");
        }
        if name == "survey_compressed.npz" {
            let meta: Vec<Meta> = npy_serde::from_npy_reader(npz.npy("meta").unwrap()).unwrap();
            // NumPy: (3, b'LINE-001', 0.004), a 0-d array.
            assert_eq!(meta, [Meta { n_shots: 3, line: "LINE-001".into(), dt: 0.004 }]);
        }
    }
}

/// Long doubles have no Rust type: they read as their raw bytes (little-endian), through
/// serde and `Value` alike; other exotic records decode too.
#[test]
fn exotic_records_decode() {
    let Some(dir) = corpus() else { return };
    #[derive(Deserialize)]
    struct WithLongDouble {
        x: Vec<u8>,
        n: i32,
    }
    let rel = "exotic/struct_with_longdouble.npy";
    let arr = DynArray::read_npy(dir.join(rel)).unwrap();
    let typed: Vec<WithLongDouble> = npy_serde::from_dyn(&arr).unwrap();
    assert_eq!(typed.iter().map(|r| r.n).collect::<Vec<_>>(), [i32::MIN, i32::MAX, 0]);
    for (i, r) in typed.iter().enumerate() {
        let raw = &arr.data()[i * 32..i * 32 + 16];
        assert_eq!(r.x, raw, "{rel}[{i}]");
        assert_eq!(Value::from_dyn(&arr, i).unwrap().get("x"), Some(&Value::LongDouble(raw.to_vec())));
    }
    // Long doubles written back from those bytes are the file's.
    let back =
        npy_serde::to_dyn(&npy_serde::values(open(rel), 2).collect::<Result<Vec<_>, _>>().unwrap(), Some(arr.dtype()));
    let back = back.unwrap();
    for i in 0..3 {
        assert_eq!(&back.data()[i * 32..i * 32 + 20], &arr.data()[i * 32..i * 32 + 20]);
    }

    let v: Vec<Value> =
        npy_serde::values(open("exotic/struct_empty_subfield.npy"), 2).collect::<Result<_, _>>().unwrap();
    assert_eq!(
        v[0],
        Value::Record(vec![
            ("a".into(), Value::Record(vec![])),
            ("b".into(), Value::Int(-32768)),
            ("c".into(), Value::Void(vec![]))
        ])
    );
    let v: Vec<Value> =
        npy_serde::values(open("exotic/zero_itemsize_struct.npy"), 2).collect::<Result<_, _>>().unwrap();
    assert_eq!(v, [Value::Record(vec![]), Value::Record(vec![]), Value::Record(vec![])]);
}

// ---------------------------------------------------------------------------------------
// Part two: writing.

fn data_of(rel: &str) -> Vec<u8> {
    open(rel).read::<DynArray>().unwrap().into_data()
}

/// Read through serde, written with the file's dtype: NumPy's file, byte for byte (the
/// padding of these files is zeros, as NumPy leaves it).
#[test]
fn explicit_dtype_writes_numpys_bytes() {
    let Some(dir) = corpus() else { return };
    for rel in [
        "record/traces_packed.npy",
        "record/traces_be.npy",
        "record/traces_aligned.npy",
        "record/traces_be_aligned.npy",
    ] {
        let reader = open(rel);
        let dtype = reader.header().dtype.clone();
        let traces: Vec<TraceS> = npy_serde::from_npy_reader(reader).unwrap();
        let file = npy_serde::to_writer(&traces, Some(&dtype), Vec::new()).unwrap();
        assert!(file == std::fs::read(dir.join(rel)).unwrap(), "{rel}: differs from NumPy's file");
    }
    // N-d and Fortran order: build the data, then give it the file's header.
    for rel in ["record/gather_4x12.npy", "record/gather_4x12_aligned_F.npy", "record/trace_0d.npy"] {
        let reader = open(rel);
        let header = reader.header().clone();
        let traces: Vec<TraceS> = npy_serde::from_npy_reader(reader).unwrap();
        let arr = npy_serde::to_dyn(&traces, Some(&header.dtype)).unwrap();
        let arr = DynArray::new(header, arr.into_data()).unwrap();
        assert!(arr.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(rel)).unwrap(), "{rel}");
    }
    // Atomic path writes give the same file.
    let tmp = tempfile::tempdir().unwrap();
    let rel = "record/traces_be_aligned.npy";
    let reader = open(rel);
    let dtype = reader.header().dtype.clone();
    let traces: Vec<TraceS> = npy_serde::from_npy_reader(reader).unwrap();
    npy_serde::to_path(&traces, Some(&dtype), tmp.path().join("t.npy")).unwrap();
    assert_eq!(std::fs::read(tmp.path().join("t.npy")).unwrap(), std::fs::read(dir.join(rel)).unwrap());
}

/// Every corpus record file decoded into `Value`s and written back with its dtype gives
/// the file's data: byte for byte, except padding, which we write as zeros.
#[test]
fn values_write_back_exactly() {
    let Some(dir) = corpus() else { return };
    let mut files = corpus_record_files(&dir);
    files.push("fortran/struct_2x3_F.npy".into());
    for rel in &files {
        let reader = open(rel);
        let dtype = reader.header().dtype.clone();
        let values: Vec<Value> = npy_serde::values(reader, 16).collect::<Result<_, _>>().unwrap();
        let ours = npy_serde::to_dyn(&values, Some(&dtype)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let theirs = data_of(rel);
        if rel.contains("junk") {
            // NumPy's padding holds junk here; the values are the same.
            for (i, v) in values.iter().enumerate() {
                assert!(same(&Value::from_dyn(&ours, i).unwrap(), v, false), "{rel}[{i}]");
            }
        } else {
            assert!(ours.data() == &theirs[..], "{rel}: data differs");
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Pick {
    station: String,
    channel: Option<String>,
    time: f64,
    amplitude: f32,
    weight: u8,
    polarity: i8,
    picked: bool,
    #[serde(with = "raw")]
    raw: Vec<u8>,
    window: [f32; 2],
}

/// Bytes as bytes (serde's `Vec<u8>` is a sequence): what `serde_bytes` does.
mod raw {
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_bytes(V)
    }
}

fn picks() -> Vec<Pick> {
    vec![
        Pick {
            station: "ANMO".into(),
            channel: Some("BHZ".into()),
            time: 12.5,
            amplitude: 0.25,
            weight: 3,
            polarity: -1,
            picked: true,
            raw: b"ab".to_vec(),
            window: [-0.5, 1.5],
        },
        Pick {
            station: "地震".into(),
            channel: Some("HHN00".into()),
            time: -1e300,
            amplitude: f32::MIN_POSITIVE,
            weight: 255,
            polarity: 1,
            picked: false,
            raw: b"\0xyz".to_vec(),
            window: [0.0, 2.0],
        },
    ]
}

#[test]
fn traced_dtype_follows_the_documented_rules() {
    let picks = picks();
    let dtype = npy_serde::trace_dtype(&picks).unwrap();
    assert_eq!(
        dtype.descr(),
        "[('station', '<U4'), ('channel', '<U5'), ('time', '<f8'), ('amplitude', '<f8'), ('weight', '<u8'), \
         ('polarity', '<i8'), ('picked', '|b1'), ('raw', '|S4'), ('window', '<f8', (2,))]"
    );
    let file = npy_serde::to_writer(&picks, None, Vec::new()).unwrap();
    let reader = NpyReader::from_reader(&file[..]).unwrap();
    assert_eq!(reader.header().dtype, dtype);
    let back: Vec<Pick> = npy_serde::from_npy_reader(reader).unwrap();
    assert_eq!(back, picks);
    // The header is np.save's for that dtype and shape.
    let header = Header::new(dtype, vec![2]).encode(None).unwrap().1;
    assert!(file.starts_with(&header));
    // Bytes after the header: the first record's fields, little-endian, packed.
    let rec = &file[header.len()..];
    assert_eq!(&rec[..16], [b'A', 0, 0, 0, b'N', 0, 0, 0, b'M', 0, 0, 0, b'O', 0, 0, 0]);

    // Promotion across records: signed with unsigned gives <i8, with a float <f8; the
    // longest string sets the size.
    #[derive(Serialize)]
    #[serde(untagged)]
    enum N {
        I(i32),
        U(u64),
        F(f32),
    }
    #[derive(Serialize)]
    struct P {
        v: N,
        s: &'static str,
    }
    let descr = |v: &[P]| npy_serde::trace_dtype(v).unwrap().descr();
    assert_eq!(descr(&[P { v: N::I(-1), s: "a" }, P { v: N::U(2), s: "abc" }]), "[('v', '<i8'), ('s', '<U3')]");
    assert_eq!(descr(&[P { v: N::U(1), s: "" }, P { v: N::F(0.5), s: "" }]), "[('v', '<f8'), ('s', '<U1')]");
    // Records that are not structs: plain arrays, and N-d arrays for sequences.
    assert_eq!(npy_serde::trace_dtype(&[1.5f32]).unwrap().descr(), "'<f8'");
    let grid = npy_serde::to_dyn(&[[1u8, 2, 3], [4, 5, 6]], None).unwrap();
    assert_eq!((grid.dtype().descr(), grid.shape()), ("'<u8'".to_string(), &[2, 3][..]));
    assert_eq!(grid.get::<u64>(&[1, 2]).unwrap(), 6);
    // Unit variants are their names.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Kind {
        P,
        Sn,
    }
    let file = npy_serde::to_writer(&[Kind::P, Kind::Sn], None, Vec::new()).unwrap();
    let reader = NpyReader::from_reader(&file[..]).unwrap();
    assert_eq!(reader.header().dtype.descr(), "'<U2'");
    assert_eq!(npy_serde::from_npy_reader::<Kind, _>(reader).unwrap(), [Kind::P, Kind::Sn]);
}

#[test]
fn traces_traced_and_read_back() {
    if corpus().is_none() {
        return;
    }
    let traces: Vec<TraceS> = npy_serde::from_npy_reader(open("record/traces_packed.npy")).unwrap();
    let file = npy_serde::to_writer(&traces, None, Vec::new()).unwrap();
    let reader = NpyReader::from_reader(&file[..]).unwrap();
    assert_eq!(
        reader.header().dtype.descr(),
        "[('trace_id', '<i8'), ('receiver', [('z', '<f8'), ('x', '<f8'), ('y', '<f8')]), ('t0', '<f8'), \
         ('dt', '<f8'), ('flags', '<u8'), ('samples', '<f8', (64,))]"
    );
    assert!(same_records(&npy_serde::from_npy_reader::<TraceS, _>(reader).unwrap(), &traces));
    // The derived path reads what serde wrote, by name, into the traced types (`<i8` does
    // not narrow safely to the original `i32`).
    #[derive(NpyRecord)]
    struct Wide {
        trace_id: i64,
        flags: u64,
        dt: f64,
    }
    let wide: Vec<Wide> = Vec::read_npy_from(&file[..]).unwrap();
    for (w, t) in wide.iter().zip(&traces) {
        assert_eq!((w.trace_id, w.flags, w.dt), (i64::from(t.trace_id), u64::from(t.flags), f64::from(t.dt)));
    }
}

// ---------------------------------------------------------------------------------------
// Streaming.

#[test]
fn chunked_iteration_matches_whole_reads_and_leaves_the_stream_usable() {
    if corpus().is_none() {
        return;
    }
    let rel = "record/traces_be.npy";
    let all: Vec<TraceS> = npy_serde::from_npy_reader(open(rel)).unwrap();
    for chunk in [1, 7, 48, 1000] {
        let it = npy_serde::iter::<TraceS, _>(open(rel), chunk);
        assert_eq!(it.size_hint(), (1, Some(48)));
        assert!(same_records(&it.collect::<Result<Vec<_>, _>>().unwrap(), &all), "chunk {chunk}");
    }
    // Two arrays in one stream: iterate the first, then read the second.
    let mut stream = std::fs::read(corpus().unwrap().join(rel)).unwrap();
    [5u16, 6].write_npy_to(&mut stream).unwrap();
    let mut it = npy_serde::iter::<TraceS, _>(NpyReader::from_reader(&stream[..]).unwrap(), 10);
    assert!(same_records(&[it.next().unwrap().unwrap()], &all[..1]));
    assert_eq!(it.size_hint(), (10, Some(47)), "9 buffered, and more to read");
    let rest: Vec<TraceS> = it.by_ref().collect::<Result<_, _>>().unwrap();
    assert!(same_records(&rest, &all[1..]));
    let second = it.into_inner().into_inner();
    assert_eq!(NpyReader::from_reader(second).unwrap().read::<Vec<u16>>().unwrap(), [5, 6]);
    // Values likewise, after part of the array was read another way.
    #[derive(NpyRecord, Clone, Copy, Default)]
    struct Id {
        trace_id: i32,
    }
    let mut reader = open(rel);
    let mut ids = [Id::default(); 3];
    assert_eq!(reader.read_into(&mut ids).unwrap(), 3);
    let values: Vec<Value> = npy_serde::values(reader, 8).collect::<Result<_, _>>().unwrap();
    assert_eq!(values.len(), 45);
    assert_eq!(values[0].get("trace_id"), Some(&Value::Int(all[3].trace_id.into())));
    // Errors count elements from the start of the array, not of the iteration.
    let mut file = Header::new("|b1".parse().unwrap(), vec![4]).encode(None).unwrap().1;
    file.extend([1, 0, 0, 7]);
    let mut reader = NpyReader::from_reader(&file[..]).unwrap();
    assert_eq!(reader.read_into(&mut [false; 2]).unwrap(), 2);
    let e = npy_serde::values(reader, 8).nth(1).unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 3, .. }), "{e}");
}

#[test]
fn truncated_data_ends_the_iteration_with_an_error() {
    let file = (0..100u32).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap();
    let cut = &file[..file.len() - 10];
    let items: Vec<_> = npy_serde::iter::<u32, _>(NpyReader::from_reader(cut).unwrap(), 30).collect();
    assert_eq!(items.len(), 91, "three good chunks and the error");
    let e = items.last().unwrap().as_ref().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    let e = npy_serde::from_npy_reader::<u32, _>(NpyReader::from_reader(cut).unwrap()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    // A stream that claims 2^40 f8 elements (8 TiB) and holds 16 bytes: asked for all of
    // them in one chunk, the reader takes memory only as data arrives.
    let mut file = Header::new("<f8".parse().unwrap(), vec![1 << 40]).encode(None).unwrap().1;
    file.extend([0; 16]);
    let mut it = npy_serde::values(NpyReader::from_reader(&file[..]).unwrap(), usize::MAX);
    let e = it.next().unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { found: 16, .. }), "{e}");
    assert!(it.next().is_none());
}

// ---------------------------------------------------------------------------------------
// The dynamic value as JSON.

#[test]
fn values_serialize_as_json() {
    if corpus().is_none() {
        return;
    }
    let v = npy_serde::values(open("struct/struct_in_subarray.npy"), 8).nth(2).unwrap().unwrap();
    // NumPy: (0, [(1e-45, (90, ',')), (inf, (-30697, '4'))], [[(-42,), (-36,)], [(-113,), (75,)]])
    // (serde_json writes the infinite float as null.)
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"id":0,"pts":[{"x":1.401298464324817e-45,"y":{"z":90,"w":","}},{"x":null,"y":{"z":-30697,"w":"4"}}],"grid":[[{"g":-42},{"g":-36}],[{"g":-113},{"g":75}]]}"#
    );
    // Columns for a table: the leaves with their paths.
    let paths: Vec<String> = v.leaves().into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        paths,
        [
            "id",
            "pts[0].x",
            "pts[0].y.z",
            "pts[0].y.w",
            "pts[1].x",
            "pts[1].y.z",
            "pts[1].y.w",
            "grid[0][0].g",
            "grid[0][1].g",
            "grid[1][0].g",
            "grid[1][1].g"
        ]
    );
    let v = npy_serde::values(open("struct/mixed_endian.npy"), 8).next().unwrap().unwrap();
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json.as_object().unwrap().keys().count(), 8);
    assert!(json["be_c8"].is_array() && json["le_M8"].is_i64(), "{json}");
    let derived = open("struct/mixed_endian.npy").read::<Vec<MixedCorpus>>().unwrap();
    assert_eq!(json["be_i4"], serde_json::json!(derived[0].be_i4));
    assert_eq!(json["le_M8"], serde_json::json!(derived[0].le_M8.value()));
}

// ---------------------------------------------------------------------------------------
// Part three: errors name the element and the field.

fn serde_reason(e: &npy_core::Error) -> &str {
    match e.kind() {
        ErrorKind::Serde { reason } => reason,
        _ => panic!("not a serde error: {e}"),
    }
}

#[test]
fn read_errors_name_element_and_field() {
    if corpus().is_none() {
        return;
    }
    // A field the file lacks.
    let e = npy_serde::from_npy_reader::<TraceS, _>(open("struct/kitchen_sink.npy")).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0: missing field `trace_id`");
    // A type serde cannot convert to.
    #[derive(Deserialize, Debug)]
    struct BadType {
        #[allow(dead_code)]
        receiver: ReceiverBad,
    }
    #[derive(Deserialize, Debug)]
    struct ReceiverBad {
        #[allow(dead_code)]
        z: String,
    }
    let e = npy_serde::from_npy_reader::<BadType, _>(open("record/traces_packed.npy")).unwrap_err();
    let reason = serde_reason(&e);
    assert!(reason.starts_with("element 0, field 'receiver.z': invalid type: floating point"), "{reason}");
    // A fixed-size array of another length than the subarray.
    #[derive(Deserialize, Debug)]
    struct Short {
        #[allow(dead_code)]
        samples: [f32; 3],
    }
    let e = npy_serde::from_npy_reader::<Short, _>(open("record/traces_packed.npy")).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0, field 'samples': invalid length 64, expected a tuple of 3");
    // Unknown fields are skipped, unless the struct says otherwise.
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        #[allow(dead_code)]
        trace_id: i32,
    }
    let e = npy_serde::from_npy_reader::<Strict, _>(open("record/traces_packed.npy")).unwrap_err();
    assert!(serde_reason(&e).starts_with("element 0: unknown field `receiver`"), "{e}");
    // Missing fields with defaults, and Options, are fine.
    #[derive(Deserialize, Debug)]
    struct Defaults {
        trace_id: i32,
        #[serde(default)]
        note: String,
        azimuth: Option<f32>,
        t0: Option<f64>,
    }
    let v: Vec<Defaults> = npy_serde::from_npy_reader(open("record/traces_packed.npy")).unwrap();
    assert!(v.iter().all(|d| d.note.is_empty() && d.azimuth.is_none() && d.t0.is_some() && d.trace_id != 0));
    // Integers that do not fit the Rust type.
    let e = npy_serde::from_npy_reader::<(u8, f64), _>(open("struct/struct_3x4_F.npy")).unwrap_err();
    assert!(serde_reason(&e).starts_with("element 0, field 'a': invalid value: integer `-2147483648`"), "{e}");
}

#[test]
fn invalid_data_is_an_invalid_value_at_its_element() {
    if corpus().is_none() {
        return;
    }
    // The bytes are [0, 1, 2, 255, 1, 0, 128]: three are not bools. The iteration goes on
    // after a bad element, which is an error at its index.
    let items: Vec<_> = npy_serde::iter::<bool, _>(open("exotic/bool_noncanonical.npy"), 3).collect();
    let got: Vec<Result<bool, usize>> = items
        .iter()
        .map(|r| match r {
            Ok(b) => Ok(*b),
            Err(e) => match e.kind() {
                ErrorKind::InvalidValue { index, .. } => Err(*index),
                _ => panic!("{e}"),
            },
        })
        .collect();
    assert_eq!(got, [Ok(false), Ok(true), Err(2), Err(3), Ok(true), Ok(false), Err(6)]);
    let e = items[3].as_ref().unwrap_err();
    assert_eq!(e.to_string(), "invalid value at element 3: b1 byte 255 is not 0 or 1");
    let e = npy_serde::from_npy_reader::<String, _>(open("exotic/unicode_invalid_codepoints.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { .. }), "{e}");
    assert!(e.to_string().contains("is not a valid char"), "{e}");
    let e = npy_serde::values(open("exotic/unicode_invalid_codepoints.npy"), 2).find_map(Result::err).unwrap();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { .. }), "{e}");
}

#[test]
fn write_errors_name_element_and_field() {
    let dtype: DType = "[('station', '<U4'), ('time', '<f8'), ('weight', '|u1')]".parse().unwrap();
    #[derive(Serialize)]
    struct Missing {
        station: &'static str,
        time: f64,
    }
    let e = npy_serde::to_writer(&[Missing { station: "A", time: 1.0 }], Some(&dtype), Vec::new()).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0: missing field 'weight'");
    #[derive(Serialize)]
    struct Extra {
        station: &'static str,
        time: f64,
        weight: u16,
        depth: f64,
    }
    let rec = |weight, station| Extra { station, time: 0.0, weight, depth: 1.0 };
    let e = npy_serde::to_writer(&[rec(1, "A")], Some(&dtype), Vec::new()).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0: the dtype has no field 'depth'");
    #[derive(Serialize)]
    struct Fits {
        station: &'static str,
        time: f64,
        weight: u16,
    }
    let fits = |weight, station| Fits { station, time: 0.0, weight };
    let e = npy_serde::to_writer(&[fits(1, "A"), fits(300, "B")], Some(&dtype), Vec::new()).unwrap_err();
    assert_eq!(serde_reason(&e), "element 1, field 'weight': 300 does not fit in |u1");
    let e = npy_serde::to_writer(&[fits(1, "ABCDE")], Some(&dtype), Vec::new()).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0, field 'station': 5 chars do not fit in <U4");
    // None has no NumPy value, traced or not.
    let e = npy_serde::trace_dtype(&[Some(1), None]).unwrap_err();
    assert_eq!(serde_reason(&e), "element 1: None has no NumPy value");
    let mut picks = picks();
    picks[1].channel = None;
    let e = npy_serde::to_writer(&picks, None, Vec::new()).unwrap_err();
    assert_eq!(serde_reason(&e), "element 1, field 'channel': None has no NumPy value");
    // Records that disagree.
    let e = npy_serde::trace_dtype(&[vec![1.0], vec![1.0, 2.0]]).unwrap_err();
    assert_eq!(serde_reason(&e), "element 1: sequences of 1 and 2 items cannot share one subarray dtype");
    let e = npy_serde::to_writer(&[BTreeMap::from([("a", 1)]), BTreeMap::from([("b", 1)])], None, Vec::new());
    assert!(serde_reason(&e.unwrap_err()).starts_with("element 1: field 'a' is missing"));
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Either {
        N(i32),
        S(&'static str),
    }
    let e = npy_serde::trace_dtype(&[[Either::N(1)], [Either::S("x")]]).unwrap_err();
    assert_eq!(serde_reason(&e), "element 1: a number and a string cannot share one dtype");
    // Variants with data, and nothing to trace.
    #[derive(Serialize)]
    enum Shape {
        Circle(f64),
    }
    let e = npy_serde::trace_dtype(&[Shape::Circle(1.0)]).unwrap_err();
    assert_eq!(serde_reason(&e), "element 0: enum variant Shape::Circle with data has no NumPy value");
    let e = npy_serde::to_writer::<f64, _>(&[], None, Vec::new()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    // With a dtype, no records is an empty array.
    let file = npy_serde::to_writer::<f64, _>(&[], Some(&dtype), Vec::new()).unwrap();
    assert_eq!(DynArray::read_npy_from(&file[..]).unwrap().shape(), [0]);
    // A failed path write leaves nothing behind.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.npy");
    assert!(npy_serde::to_path(&[fits(1, "A"), fits(300, "B")], Some(&dtype), &path).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
