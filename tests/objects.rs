//! Object arrays (dtype `|O`), checked against NumPy.
//!
//! Part one reads the object fixtures NumPy wrote (`tests/data/object`, made by
//! `cargo xtask golden`): every element of every file must be the value NumPy loaded
//! (the manifest's tagged JSON), through every read path, and files `np.save` wrote from
//! distinct plain values must be rewritten byte for byte. Part two writes object arrays and
//! reads them back, and checks the typed reads and the errors. Part three checks hostile
//! variations of the fixtures: every truncation and many corruptions must be errors, never
//! panics.
//!
//! Every object array written here for NumPy to check goes to `target/object-check` with a
//! sidecar `<name>.expect.json`; `cargo xtask ci` has NumPy load them with
//! `allow_pickle=True` and compare (xtask/object_check.py).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use npy_core::header::Header;
use npy_core::mmap::NpyMap;
use npy_core::npz::{Compression, Reader, Writer};
use npy_core::object::{
    check_pickle, from_pickle, to_pickle, Date, DateTime, DefaultDict, Deque, MaskedArray, Object, ObjectArray,
    PathFlavor, StringDType, Time, TimeDelta, TimeZone, TzInfo, ZoneInfo, MAX_DEPTH,
};
use npy_core::prelude::*;
use npy_core::{ErrorKind, NpyReader, ReadOptions};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------
// Helpers.

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The manifest entries of object array files.
fn object_entries() -> Vec<Value> {
    let entries: Vec<Value> = manifest().into_iter().filter(|e| e.get("objects").is_some()).collect();
    assert!(entries.len() >= 25, "only {} object fixtures", entries.len());
    entries
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

fn float(text: &str) -> f64 {
    match text {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        t => t.parse().unwrap_or_else(|_| panic!("float repr {t}")),
    }
}

/// A value of the tagged JSON encoding (see xtask/golden.py).
fn untag(v: &Value) -> Object {
    let items = |v: &Value| v.as_array().unwrap().iter().map(untag).collect::<Vec<_>>();
    match v {
        Value::Null => Object::None,
        Value::Bool(b) => Object::Bool(*b),
        Value::String(s) => Object::Str(s.clone()),
        Value::Object(m) => {
            let (tag, inner) = m.iter().next().unwrap();
            match tag.as_str() {
                "int" => {
                    let text = inner.as_str().unwrap();
                    text.parse::<i64>().map_or_else(|_| Object::BigInt(text.to_string()), Object::Int)
                }
                "float" => Object::Float(float(inner.as_str().unwrap())),
                "complex" => Object::Complex(float(inner[0].as_str().unwrap()), float(inner[1].as_str().unwrap())),
                "bytes" => Object::Bytes(unhex(inner.as_str().unwrap())),
                "list" => Object::List(items(inner)),
                "tuple" => Object::Tuple(items(inner)),
                "dict" => Object::Dict(pairs(inner)),
                "ndarray" => untag_array(inner),
                "scalar" => {
                    let array =
                        DynArray::new(header(inner, &[], false), unhex(inner["hex"].as_str().unwrap())).unwrap();
                    Object::Scalar(Box::new(array))
                }
                "type" => Object::Type(text(&inner[0]), text(&inner[1])),
                "datetime" => {
                    let n = |i: usize| inner[i].as_u64().unwrap();
                    Object::DateTime(Box::new(DateTime {
                        date: Date { year: n(0) as u16, month: n(1) as u8, day: n(2) as u8 },
                        time: time(&inner.as_array().unwrap()[3..]),
                    }))
                }
                "date" => {
                    let n = |i: usize| inner[i].as_u64().unwrap();
                    Object::Date(Date { year: n(0) as u16, month: n(1) as u8, day: n(2) as u8 })
                }
                "time" => Object::Time(Box::new(time(inner.as_array().unwrap()))),
                "timedelta" => Object::TimeDelta(timedelta(inner)),
                "timezone" => match timezone(inner) {
                    Some(TzInfo::TimeZone(tz)) => Object::TimeZone(Box::new(tz)),
                    other => panic!("a timezone tag of {other:?}"),
                },
                "zoneinfo" => Object::ZoneInfo(Box::new(zone(inner))),
                "deque" => Object::Deque(Box::new(Deque { items: items(&inner[0]), maxlen: inner[1].as_u64() })),
                "defaultdict" => {
                    Object::DefaultDict(Box::new(DefaultDict { factory: untag(&inner[0]), entries: pairs(&inner[1]) }))
                }
                "masked" => {
                    let array = |v: &Value| match untag(v) {
                        Object::Array(a) => *a,
                        other => panic!("a mask of {other:?}"),
                    };
                    let fill = (!inner[2].is_null()).then(|| untag(&inner[2]));
                    Object::MaskedArray(Box::new(MaskedArray {
                        data: untag(&inner[0]),
                        mask: array(&inner[1]),
                        fill_value: fill,
                    }))
                }
                "decimal" => Object::Decimal(text(inner)),
                "fraction" => Object::Fraction(Box::new((untag(&inner[0]), untag(&inner[1])))),
                "uuid" => Object::Uuid(u128::from_str_radix(inner.as_str().unwrap(), 16).unwrap()),
                "bytearray" => Object::ByteArray(unhex(inner.as_str().unwrap())),
                "set" => Object::Set(items(inner)),
                "frozenset" => Object::FrozenSet(items(inner)),
                "ordereddict" => Object::OrderedDict(pairs(inner)),
                "counter" => Object::Counter(pairs(inner)),
                "path" => {
                    let parts = inner[1].as_array().unwrap().iter().map(text).collect();
                    Object::Path(PathFlavor::from_class_name(inner[0].as_str().unwrap()).unwrap(), parts)
                }
                "range" => Object::Range(Box::new([untag(&inner[0]), untag(&inner[1]), untag(&inner[2])])),
                "slice" => Object::Slice(Box::new([untag(&inner[0]), untag(&inner[1]), untag(&inner[2])])),
                other => panic!("unknown tag {other}"),
            }
        }
        other => panic!("untagged JSON {other}"),
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap().to_string()
}

fn pairs(v: &Value) -> Vec<(Object, Object)> {
    v.as_array().unwrap().iter().map(|kv| (untag(&kv[0]), untag(&kv[1]))).collect()
}

/// The header of a tagged array or scalar (`descr` as the manifest writes it).
fn header(inner: &Value, shape: &[usize], fortran: bool) -> npy_core::header::Header {
    let descr = npy_core::literal::parse(inner["descr"].as_str().unwrap()).unwrap();
    let dtype = npy_core::DType::from_descr(&descr).unwrap();
    npy_core::header::Header { dtype, fortran_order: fortran, shape: shape.to_vec() }
}

fn untag_array(inner: &Value) -> Object {
    let shape = shape_of(&inner["shape"]);
    let fortran = inner["fortran"].as_bool().unwrap();
    match inner.get("items") {
        Some(items) => {
            let items: Vec<Object> = items.as_array().unwrap().iter().map(untag).collect();
            let array =
                if fortran { Array::from_shape_vec_fortran(shape, items) } else { Array::from_shape_vec(shape, items) };
            Object::ObjectArray(Box::new(array.unwrap()))
        }
        None => {
            let data = unhex(inner["hex"].as_str().unwrap());
            Object::Array(Box::new(DynArray::new(header(inner, &shape, fortran), data).unwrap()))
        }
    }
}

fn timedelta(v: &Value) -> TimeDelta {
    let n = |i: usize| v[i].as_i64().unwrap() as i32;
    TimeDelta { days: n(0), seconds: n(1), microseconds: n(2) }
}

fn timezone(v: &Value) -> Option<TzInfo> {
    if v.is_null() {
        return None;
    }
    if let Some(key) = v.get("zoneinfo") {
        return Some(TzInfo::ZoneInfo(zone(key)));
    }
    Some(TzInfo::TimeZone(TimeZone { offset: timedelta(&v[0]), name: v[1].as_str().map(str::to_string) }))
}

/// `[key, from_cache]`.
fn zone(v: &Value) -> ZoneInfo {
    ZoneInfo { key: text(&v[0]), cached: v[1].as_u64().unwrap() == 1 }
}

/// `[hour, minute, second, microsecond, fold, tz]`.
fn time(v: &[Value]) -> Time {
    let n = |i: usize| v[i].as_u64().unwrap();
    Time {
        hour: n(0) as u8,
        minute: n(1) as u8,
        second: n(2) as u8,
        microsecond: n(3) as u32,
        fold: n(4) == 1,
        tzinfo: timezone(&v[5]),
    }
}

/// The tagged JSON of a value, for the sidecars NumPy checks.
fn tag(o: &Object) -> Value {
    let repr = |x: f64| Object::Float(x).repr();
    match o {
        Object::None => Value::Null,
        Object::Bool(b) => json!(b),
        Object::Int(v) => json!({ "int": v.to_string() }),
        Object::BigInt(t) => json!({ "int": t }),
        Object::Float(x) => json!({ "float": repr(*x) }),
        Object::Complex(re, im) => json!({ "complex": [repr(*re), repr(*im)] }),
        Object::Str(s) => json!(s),
        Object::Bytes(b) => json!({ "bytes": hex(b) }),
        Object::List(v) => json!({ "list": v.iter().map(tag).collect::<Vec<_>>() }),
        Object::Tuple(v) => json!({ "tuple": v.iter().map(tag).collect::<Vec<_>>() }),
        Object::Dict(d) => json!({ "dict": d.iter().map(|(k, v)| json!([tag(k), tag(v)])).collect::<Vec<_>>() }),
        other => panic!("a {} is published with the Python expression that builds it", other.python_type()),
    }
}

/// Exact equality where every NaN equals every NaN (the sign of zero still counts).
fn same(a: &Object, b: &Object) -> bool {
    let f = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
    match (a, b) {
        (Object::Float(x), Object::Float(y)) => f(*x, *y),
        (Object::Complex(a, b), Object::Complex(c, d)) => f(*a, *c) && f(*b, *d),
        (Object::List(x), Object::List(y)) | (Object::Tuple(x), Object::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Object::Dict(x), Object::Dict(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, v), (l, w))| same(k, l) && same(v, w))
        }
        _ => a == b,
    }
}

fn assert_same(file: &str, got: &[Object], want: &[Object]) {
    assert_eq!(got.len(), want.len(), "{file}: element count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same(g, w), "{file}: element {i} is {g:?}, NumPy says {w:?}");
    }
}

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

fn map(path: &Path) -> npy_core::Result<NpyMap> {
    // SAFETY: the tests never modify or truncate a file while a map of it is alive.
    unsafe { NpyMap::from_path(path) }
}

// ---------------------------------------------------------------------------------------
// What NumPy must see: the sidecars of target/object-check.

fn check_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/object-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What one array in a checked file must be when NumPy loads it.
fn expect(name: Option<&str>, a: &Array<Object>) -> Value {
    json!({
        "name": name,
        "shape": a.shape(),
        "fortran": a.fortran_order(),
        "objects": a.as_slice().iter().map(tag).collect::<Vec<_>>(),
    })
}

/// Writes `target/object-check/<file>` and its sidecar: `arrays` in order (one unnamed
/// array for a `.npy`, the members for a `.npz`).
fn publish(file: &str, bytes: &[u8], arrays: Vec<Value>) {
    let dir = check_dir();
    std::fs::write(dir.join(file), bytes).unwrap();
    let stem = file.rsplit_once('.').unwrap().0;
    let sidecar = json!({ "file": file, "arrays": arrays });
    std::fs::write(dir.join(format!("{stem}.expect.json")), serde_json::to_string_pretty(&sidecar).unwrap()).unwrap();
}

// ---------------------------------------------------------------------------------------
// Part one: NumPy's object arrays.

#[test]
fn every_object_fixture_reads_as_numpy_says() {
    let mut rewritten = 0;
    for entry in object_entries() {
        let file = entry["file"].as_str().unwrap();
        let path = data_dir().join(file);
        let bytes = std::fs::read(&path).unwrap();
        let want: Vec<Object> = entry["objects"].as_array().unwrap().iter().map(untag).collect();
        let shape = shape_of(&entry["shape"]);
        let fortran = entry["fortran_order"].as_bool().unwrap();

        let reader = NpyReader::from_path(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(reader.header().dtype.descr(), entry["descr"].as_str().unwrap(), "{file}");
        assert_eq!(reader.header().shape, shape, "{file}");
        assert_eq!(reader.header().fortran_order, fortran, "{file}");
        assert_eq!(reader.header_len() as u64, entry["header_len"].as_u64().unwrap(), "{file}");
        let offset = reader.data_offset();
        assert_eq!(offset as u64, entry["data_offset"].as_u64().unwrap(), "{file}");
        let pickle = &bytes[offset..];
        assert_eq!(pickle.len() as u64, entry["data_len"].as_u64().unwrap(), "{file}");
        assert_eq!(hex(&Sha256::digest(pickle)), entry["sha256_data"].as_str().unwrap(), "{file}");

        // From the path, from a stream, and as its pickle alone.
        let a = reader.read::<Array<Object>>().unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((a.shape(), a.fortran_order()), (&shape[..], fortran), "{file}");
        assert_same(file, a.as_slice(), &want);
        let b = Array::<Object>::read_npy_from(&bytes[..]).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_same(file, b.as_slice(), &want);
        // The check (no values built) passes what decoding passes.
        assert_eq!(check_pickle(pickle).unwrap_or_else(|e| panic!("{file}: check: {e}")), shape, "{file}");
        let c = from_pickle(pickle).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(c.shape(), shape, "{file}");
        for (i, v) in want.iter().enumerate() {
            // Element i of storage order, found by its index in whichever order `c` has.
            let index = unravel(i, &shape, fortran);
            assert!(same(c.get(&index).unwrap(), v), "{file}: from_pickle element {index:?}");
        }
        if shape.len() == 1 {
            assert_same(file, &Vec::<Object>::read_npy(&path).unwrap(), &want);
        }

        // Rewriting: byte for byte where np.save wrote distinct plain values, and always
        // read back the same.
        let again = a.write_npy_to(Vec::new()).unwrap();
        if entry["rewrite"].as_bool().unwrap() {
            assert!(again == bytes, "{file}: rewrite differs from np.save's file");
            rewritten += 1;
        }
        let back = Array::<Object>::read_npy_from(&again[..]).unwrap();
        assert_eq!((back.shape(), back.fortran_order()), (&shape[..], fortran), "{file}");
        assert_same(file, back.as_slice(), &want);

        // The raw-bytes APIs refuse object arrays, pointing at the object API.
        let e = DynArray::read_npy(&path).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{file}: {e}");
        assert!(e.to_string().contains("Array::<Object>::read_npy"), "{e}");
        let e = Array::<f64>::read_npy(&path).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{file}: {e}");
        let e = map(&path).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{file}: {e}");
    }
    assert!(rewritten >= 15, "only {rewritten} fixtures rewritten byte for byte");
}

/// The multi-index of storage position `i`.
fn unravel(mut i: usize, shape: &[usize], fortran: bool) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    let axes: Vec<usize> = if fortran { (0..shape.len()).collect() } else { (0..shape.len()).rev().collect() };
    for k in axes {
        index[k] = i % shape[k];
        i /= shape[k];
    }
    index
}

#[test]
fn fixtures_hold_what_they_are_for() {
    let get = |file: &str| -> Array<Object> { Array::read_npy(data_dir().join(file)).unwrap() };
    // The 2x3 grid in both orders: the same logical values.
    let (c, f) = (get("object/2x3_C.npy"), get("object/2x3_F.npy"));
    assert!(!c.fortran_order() && f.fortran_order());
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(c.get(&[i, j]), f.get(&[i, j]), "({i}, {j})");
        }
    }
    assert_eq!(f.get(&[1, 1]), Some(&Object::List(vec!["r1".into()])));
    assert_eq!(f.as_slice()[1], Object::Float(2.5)); // storage order: column by column
    let f3 = get("object/2x3x4_F.npy");
    assert_eq!(f3.get(&[1, 2, 3]), Some(&Object::from("v23")));
    assert_eq!(f3.as_slice()[1], Object::from("v12"));
    // Big ints stay exact, small ones are i64.
    let ints = Vec::<Object>::read_npy(data_dir().join("object/int.npy")).unwrap();
    assert!(ints.contains(&Object::BigInt("-123456789012345678901234567890".into())));
    assert!(ints.contains(&Object::Int(i64::MIN)));
    assert!(ints.contains(&Object::BigInt("18446744073709551616".into())));
    // NumPy scalars become plain values.
    let scalars = Vec::<Object>::read_npy(data_dir().join("object/numpy_scalars.npy")).unwrap();
    assert_eq!(scalars[1], Object::Float(0.5));
    assert_eq!(scalars[10], Object::BigInt("18446744073709551615".into()));
    assert_eq!(scalars[13], Object::from("hé"));
    assert_eq!(scalars[15], Object::Bytes(b"q\x00r".to_vec()));
    // Every protocol gives the same values.
    let p4: Vec<Object> = Vec::read_npy(data_dir().join("object/proto0.npy")).unwrap();
    for p in [1, 2, 3, 5] {
        let other: Vec<Object> = Vec::read_npy(data_dir().join(format!("object/proto{p}.npy"))).unwrap();
        assert_same(&format!("proto{p}"), &other, &p4);
    }
    assert_eq!(p4[2], Object::BigInt("1180591620717411303424".into()));
    assert_eq!(p4[5], Object::Bytes(Vec::new()));
    assert_eq!(p4[7].to_string(), "{'k': [(1+2j)]}");
    // Shared values are copies.
    let rep = Vec::<Object>::read_npy(data_dir().join("object/repeated.npy")).unwrap();
    assert_eq!(rep[0], rep[1]);
    assert_eq!(rep[4], Object::Tuple(vec!["shared".into()]));
    let zero_d = get("object/0d.npy");
    assert_eq!((zero_d.shape(), zero_d.get(&[])), (&[][..], Some(&Object::from("solo"))));
    assert_eq!(get("object/2x0.npy").shape(), [2, 0]);
}

#[test]
fn numpy_2_stringdtype_files_read_as_text() {
    let path = |f: &str| data_dir().join("object").join(f);
    let get = |f: &str| -> Array<Object> { Array::read_npy(path(f)).unwrap_or_else(|e| panic!("{f}: {e}")) };
    let text = |a: &Array<Object>| a.as_slice().iter().map(Object::to_string).collect::<Vec<_>>();
    let s = Vec::<String>::read_npy(path("stringdtype.npy")).unwrap();
    assert_eq!(s[..5], ["a", "bc", "", "h\u{e9}llo", "\u{1F600}"]);
    assert_eq!(s[5], "x".repeat(300));
    // Storage order of a Fortran file: column by column.
    let f = get("stringdtype_2x3_F.npy");
    assert!(f.fortran_order());
    assert_eq!((f.get(&[1, 1]), f.get(&[0, 2])), (Some(&Object::from("")), Some(&Object::from("r0c2"))));
    assert_eq!(f.as_slice()[1], Object::from("r1c0"));
    assert_eq!(get("stringdtype_0d.npy").get(&[]), Some(&Object::from("solo")));
    assert_eq!(get("stringdtype_empty.npy").shape(), [0]);
    assert_eq!(text(&get("stringdtype_no_coerce.npy")), ["'p'", "'q'"]);
    // Missing values are the na_object itself, as astype(object) gives them in NumPy.
    let s = Vec::<Option<String>>::read_npy(path("stringdtype_na_none.npy")).unwrap();
    assert_eq!(s, [Some("x1".to_string()), None, Some(String::new()), None]);
    assert_eq!(text(&get("stringdtype_na_nan.npy")), ["'x1'", "nan", "'z'"]);
    assert_eq!(text(&get("stringdtype_na_str.npy")), ["'x1'", "'NA'", "'z'"]);
    // The dtype NumPy had: StringDType's coerce flag and na_object.
    let dtype = |f: &str| ObjectArray::read_npy(path(f)).unwrap_or_else(|e| panic!("{f}: {e}")).string_dtype().cloned();
    let strings = |coerce, na_object| Some(StringDType { coerce, na_object });
    assert_eq!(dtype("stringdtype.npy"), strings(true, None));
    assert_eq!(dtype("stringdtype_no_coerce.npy"), strings(false, None));
    assert_eq!(dtype("stringdtype_na_none.npy"), strings(true, Some(Object::None)));
    assert_eq!(dtype("stringdtype_na_str.npy"), strings(true, Some(Object::from("NA"))));
    assert!(
        matches!(dtype("stringdtype_na_nan.npy"), Some(StringDType { na_object: Some(Object::Float(x)), .. }) if x.is_nan())
    );
    assert_eq!(ObjectArray::read_npy(data_dir().join("object").join("str.npy")).unwrap().string_dtype(), None);

    // What `npy copy` writes back: an object array of the same values (NumPy loads it as
    // dtype object, checked by xtask/object_check.py); a pickle naming another function
    // of NumPy's is still refused.
    for name in ["stringdtype.npy", "stringdtype_2x3_F.npy", "stringdtype_na_nan.npy", "stringdtype_na_none.npy"] {
        let a = get(name);
        let bytes = a.write_npy_to(Vec::new()).unwrap();
        publish(&format!("copy_{name}"), &bytes, vec![expect(None, &a)]);
    }
    let mut bytes = std::fs::read(path("stringdtype_na_none.npy")).unwrap();
    let name = b"_convert_to_stringdtype_kwargs";
    let at = bytes.windows(name.len()).position(|w| w == name).unwrap();
    bytes[at + name.len() - 1] = b'z';
    let e = Array::<Object>::read_npy_from(&bytes[..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Pickle { .. }), "{e}");
    assert!(e.to_string().contains("global 'numpy._core._internal._convert_to_stringdtype_kwargz' is not allowed"));
}

#[test]
fn typed_reads_of_strings() {
    let file = |f: &str| data_dir().join(f);
    let s = Vec::<String>::read_npy(file("object/str.npy")).unwrap();
    assert_eq!(s[3], "héllo");
    assert_eq!(s[5], "\u{1F600}");
    let s = Vec::<Option<String>>::read_npy(file("object/str_none.npy")).unwrap();
    assert_eq!(s, [Some("x1".to_string()), None, Some("yz".to_string()), None, Some(String::new())]);
    let e = Vec::<String>::read_npy(file("object/str_none.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    assert!(e.to_string().contains("NoneType None, not str"), "{e}");
    let e = Vec::<Option<String>>::read_npy(file("object/int.npy")).unwrap_err();
    assert_eq!(e.to_string(), "invalid value at element 0: the element is an int 0, not str or None");
    let e = Vec::<String>::read_npy(file("object/2x3_C.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let e = Vec::<String>::read_npy(file("shape/1d_i2.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    let grid = NpyReader::from_reader(&std::fs::read(file("object/2x3x4_F.npy")).unwrap()[..])
        .unwrap()
        .read_object_vec::<String>()
        .unwrap();
    assert_eq!(&grid[..3], ["v00", "v12", "v04"]);
    let floats = NpyReader::from_reader(&std::fs::read(file("object/float.npy")).unwrap()[..])
        .unwrap()
        .read_object_vec::<f64>()
        .unwrap();
    assert_eq!(floats[1].to_bits(), (-0.0f64).to_bits());
}

#[test]
fn npz_archive_from_numpy() {
    let entry = manifest().into_iter().find(|e| e["file"] == "object/archive.npz").unwrap();
    let mut r = Reader::from_path(data_dir().join("object/archive.npz")).unwrap();
    assert_eq!(r.names(), ["labels", "values", "grid"]);
    for m in entry["members"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        if let Some(objects) = m.get("objects") {
            let want: Vec<Object> = objects.as_array().unwrap().iter().map(untag).collect();
            let a = r.read::<Array<Object>>(name).unwrap();
            assert_eq!(a.shape(), shape_of(&m["shape"]), "{name}");
            assert_eq!(a.fortran_order(), m["fortran_order"].as_bool().unwrap(), "{name}");
            assert_same(name, a.as_slice(), &want);
        } else {
            assert_eq!(r.read::<Vec<f64>>(name).unwrap(), [0.0, 1.0, 2.0]);
            let e = r.read::<Array<Object>>(name).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
        }
    }
    assert_eq!(r.read_object_vec::<Option<String>>("labels").unwrap(), [Some("a1".into()), None, Some("b2".into())]);
    let e = r.read_object_vec::<Object>("grid").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let e = r.read::<DynArray>("labels").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
}

// ---------------------------------------------------------------------------------------
// Part two: writing, round trips, typed writes, errors.

/// Values of every kind, nested, with the edge cases of each.
fn assorted() -> Vec<Object> {
    vec![
        Object::None,
        Object::Bool(true),
        Object::Int(-1),
        Object::Int(i64::MAX),
        Object::BigInt("-123456789012345678901234567890".into()),
        Object::BigInt(format!("1{}", "0".repeat(600))),
        Object::Float(-0.0),
        Object::Float(f64::NAN),
        Object::Float(f64::INFINITY),
        Object::Complex(1.5, -0.0),
        Object::Str("héllo \u{1F600} 'q' \"d\" \\ \n".into()),
        Object::Str(String::new()),
        Object::Bytes(vec![0, 255, b'\'']),
        Object::Bytes(vec![7; 70_000]),
        Object::List(vec![Object::Int(1), Object::List(vec![Object::Tuple(vec![])])]),
        Object::Tuple(vec![Object::from("one")]),
        Object::Tuple((0..5).map(Object::from).collect()),
        Object::Dict(vec![
            (Object::from("k"), Object::List(vec![Object::None])),
            (Object::Tuple(vec![Object::Int(1), Object::from("t")]), Object::Float(2.5)),
            (Object::Int(3), Object::Dict(vec![])),
        ]),
        Object::List((0..1500).map(Object::from).collect()),
        Object::Dict((0..1000).map(|i| (Object::from(i), Object::from(-i))).collect()),
    ]
}

#[test]
fn round_trips_keep_values_shapes_and_orders() {
    let values = assorted();
    let n = values.len();
    let arrays = vec![
        ("assorted", Array::from_shape_vec(vec![n], values.clone()).unwrap()),
        ("grid_c", Array::from_shape_vec(vec![4, 5], values.clone()).unwrap()),
        ("grid_f", Array::from_shape_vec_fortran(vec![4, 5], values.clone()).unwrap()),
        ("cube_f", Array::from_shape_vec_fortran(vec![2, 5, 2], values.clone()).unwrap()),
        ("zero_d", Array::from_shape_vec(vec![], vec![Object::from("solo")]).unwrap()),
        ("empty", Array::from_shape_vec(vec![0], vec![]).unwrap()),
        ("empty_3x0_f", Array::from_shape_vec_fortran(vec![3, 0], vec![]).unwrap()),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, a) in &arrays {
        let path = dir.path().join(format!("{name}.npy"));
        a.write_npy(&path).unwrap();
        let from_path = Array::<Object>::read_npy(&path).unwrap();
        let bytes = a.write_npy_to(Vec::new()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}: path and stream writes differ");
        let from_stream = Array::<Object>::read_npy_from(&bytes[..]).unwrap();
        for got in [&from_path, &from_stream] {
            assert_eq!((got.shape(), got.fortran_order()), (a.shape(), a.fortran_order()), "{name}");
            assert_same(name, got.as_slice(), a.as_slice());
        }
        assert_same(name, from_pickle(&to_pickle(a).unwrap()).unwrap().as_slice(), a.as_slice());
        publish(&format!("{name}.npy"), &bytes, vec![expect(None, a)]);
    }
    // A header at the forced version keeps the same pickle.
    let a = &arrays[0].1;
    let v2 = dir.path().join("v2.npy");
    a.write_npy_with(&v2, npy_core::WriteOptions::new().version(npy_core::header::Version::V2_0)).unwrap();
    assert_eq!(&std::fs::read(&v2).unwrap()[6..8], &[2, 0]);
    assert_same("v2", Array::<Object>::read_npy(&v2).unwrap().as_slice(), a.as_slice());
}

#[test]
fn typed_writes_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.npy");
    let strings = vec!["alpha".to_string(), String::new(), "温度".to_string()];
    strings.write_npy(&path).unwrap();
    assert_eq!(Vec::<String>::read_npy(&path).unwrap(), strings);
    let strs = ["a", "bc"];
    strs.write_npy(&path).unwrap();
    assert_eq!(Vec::<String>::read_npy(&path).unwrap(), strs);
    let optional = vec![Some("x".to_string()), None];
    optional.write_npy(&path).unwrap();
    assert_eq!(Vec::<Option<String>>::read_npy(&path).unwrap(), optional);
    let optional_strs = [None, Some("y")];
    optional_strs.write_npy(&path).unwrap();
    let back = Vec::<Object>::read_npy(&path).unwrap();
    assert_eq!(back, [Object::None, Object::from("y")]);
    // The same file from each typed writer as from Objects.
    let as_objects: Vec<Object> = strings.iter().map(Object::from).collect();
    assert_eq!(strings.write_npy_to(Vec::new()).unwrap(), as_objects.write_npy_to(Vec::new()).unwrap());
    publish("strings.npy", &strings.write_npy_to(Vec::new()).unwrap(), {
        let a = Array::from_shape_vec(vec![3], as_objects).unwrap();
        vec![expect(None, &a)]
    });
}

#[test]
fn npz_members_round_trip_and_numpy_loads_them() {
    let labels: Vec<Object> = vec!["a".into(), Object::None, Object::BigInt("-99999999999999999999".into())];
    let grid = Array::from_shape_vec_fortran(vec![2, 3], assorted()[..6].to_vec()).unwrap();
    let nested = Array::from_shape_vec(vec![1], vec![assorted()[17].clone()]).unwrap();
    let mut w = Writer::new(Cursor::new(Vec::new()));
    w.add("labels", &labels).unwrap();
    w.add("numbers", &[1.5f64, 2.5]).unwrap();
    w.add_with("grid", &grid, Compression::deflated()).unwrap();
    w.add_with("nested", nested.as_slice(), Compression::Stored).unwrap();
    let e = w.add("labels", &Vec::<Object>::new()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_reader(Cursor::new(bytes.clone())).unwrap();
    assert_eq!(r.names(), ["labels", "numbers", "grid", "nested"]);
    assert_eq!(r.read::<Array<Object>>("labels").unwrap().into_vec(), labels);
    let g = r.read::<Array<Object>>("grid").unwrap();
    assert!(g.fortran_order());
    assert_same("grid", g.as_slice(), grid.as_slice());
    assert_eq!(r.read::<Array<Object>>("nested").unwrap(), nested);
    assert_eq!(r.read::<Vec<f64>>("numbers").unwrap(), [1.5, 2.5]);
    let labels_a = Array::from_shape_vec(vec![3], labels).unwrap();
    publish(
        "archive.npz",
        &bytes,
        vec![
            expect(Some("labels"), &labels_a),
            json!({ "name": "numbers", "skip": true }),
            expect(Some("grid"), &grid),
            expect(Some("nested"), &nested),
        ],
    );

    // A corrupt member is the zip's error, not a pickle error.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let mut w = Writer::create(&path).unwrap();
    w.add("x", &[Object::from("payload")]).unwrap();
    w.finish().unwrap();
    let mut raw = std::fs::read(&path).unwrap();
    let at = raw.windows(7).position(|w| w == b"payload").unwrap();
    raw[at] = b'P';
    std::fs::write(&path, &raw).unwrap();
    let e = Reader::from_path(&path).unwrap().read::<Array<Object>>("x").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
}

/// Values of every kind beyond the plain ones, each with the Python expression that builds
/// it (in the namespace of xtask/object_check.py: `np` and the standard library's modules).
fn kinds() -> Vec<(Object, &'static str)> {
    let date = |year, month, day| Date { year, month, day };
    let time =
        |hour, minute, second, microsecond| Time { hour, minute, second, microsecond, fold: false, tzinfo: None };
    let delta = |days, seconds, microseconds| TimeDelta { days, seconds, microseconds };
    let est = TimeZone { offset: delta(-1, 68_400, 0), name: Some("EST".into()) };
    let dt = |date, time| Object::DateTime(Box::new(DateTime { date, time }));
    let three = |a, b, c| Box::new([a, b, c]);
    let path = |flavor, parts: &[&str]| Object::Path(flavor, parts.iter().map(|p| p.to_string()).collect());
    let array = |descr: &str, shape: &[usize], fortran_order, data: Vec<u8>| {
        let header = Header { dtype: descr.parse().unwrap(), fortran_order, shape: shape.to_vec() };
        DynArray::new(header, data).unwrap()
    };
    let le = |v: &[i64], size: usize| v.iter().flat_map(|x| x.to_le_bytes()[..size].to_vec()).collect::<Vec<u8>>();
    let mut record = 7i32.to_le_bytes().to_vec();
    record.extend(2.5f64.to_be_bytes());
    let ucs4: Vec<u8> = "ab\0c\0\0".chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
    let s = |t: &str| Object::from(t);
    vec![
        (dt(date(2020, 1, 2), time(3, 4, 5, 6)), "datetime.datetime(2020, 1, 2, 3, 4, 5, 6)"),
        (
            dt(date(2020, 1, 2), Time { tzinfo: Some(TimeZone::utc().into()), ..time(0, 0, 0, 0) }),
            "datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)",
        ),
        (
            dt(date(1999, 12, 31), Time { tzinfo: Some(est.clone().into()), ..time(23, 59, 0, 0) }),
            "datetime.datetime(1999, 12, 31, 23, 59, tzinfo=datetime.timezone(datetime.timedelta(hours=-5), 'EST'))",
        ),
        (
            dt(date(2020, 11, 1), Time { fold: true, ..time(1, 30, 0, 0) }),
            "datetime.datetime(2020, 11, 1, 1, 30, fold=1)",
        ),
        (Object::Date(date(2020, 1, 2)), "datetime.date(2020, 1, 2)"),
        (Object::Time(Box::new(time(1, 2, 3, 4))), "datetime.time(1, 2, 3, 4)"),
        (
            Object::Time(Box::new(Time {
                fold: true,
                tzinfo: Some(TimeZone { offset: delta(0, 19_800, 0), name: None }.into()),
                ..time(23, 59, 59, 999_999)
            })),
            "datetime.time(23, 59, 59, 999999, \
             tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30)), fold=1)",
        ),
        (Object::TimeDelta(delta(-1, 5, 7)), "datetime.timedelta(days=-1, seconds=5, microseconds=7)"),
        (Object::TimeZone(Box::new(TimeZone::utc())), "datetime.timezone.utc"),
        (Object::TimeZone(Box::new(est)), "datetime.timezone(datetime.timedelta(hours=-5), 'EST')"),
        (Object::Decimal("1.50".into()), "decimal.Decimal('1.50')"),
        (Object::Decimal("NaN".into()), "decimal.Decimal('NaN')"),
        (Object::Decimal("-sNaN12".into()), "decimal.Decimal('-sNaN12')"),
        (Object::Decimal("-Infinity".into()), "decimal.Decimal('-Infinity')"),
        (Object::Decimal("1E+999999".into()), "decimal.Decimal('1E+999999')"),
        (Object::Fraction(Box::new((Object::Int(1), Object::Int(3)))), "fractions.Fraction(1, 3)"),
        (
            Object::Fraction(Box::new((Object::BigInt(format!("-1{}", "0".repeat(30))), Object::Int(7)))),
            "fractions.Fraction(-10**30, 7)",
        ),
        (Object::Uuid(5), "uuid.UUID(int=5)"),
        (Object::Uuid(u128::MAX), "uuid.UUID(int=2**128 - 1)"),
        (Object::ByteArray(b"ab\0".to_vec()), "bytearray(b'ab\\x00')"),
        (Object::ByteArray(Vec::new()), "bytearray()"),
        (Object::Set(Vec::new()), "set()"),
        (Object::Set(vec![Object::Int(1), Object::Int(2), Object::Int(300)]), "{1, 2, 300}"),
        (Object::FrozenSet(Vec::new()), "frozenset()"),
        (
            Object::FrozenSet(vec![Object::Tuple(vec![Object::Int(5), Object::Int(6)]), s("x")]),
            "frozenset({(5, 6), 'x'})",
        ),
        (Object::OrderedDict(Vec::new()), "collections.OrderedDict()"),
        (
            Object::OrderedDict(vec![(s("b"), Object::Int(1)), (s("a"), Object::List(vec![Object::Int(2)]))]),
            "collections.OrderedDict([('b', 1), ('a', [2])])",
        ),
        (Object::Counter(Vec::new()), "collections.Counter()"),
        (Object::Counter(vec![(s("a"), Object::Int(2)), (s("b"), Object::Int(1))]), "collections.Counter('aab')"),
        (path(PathFlavor::PurePosix, &["/", "a", "bc"]), "pathlib.PurePosixPath('/a/bc')"),
        (path(PathFlavor::Posix, &["bc", "d"]), "pathlib.PosixPath('bc/d')"),
        (path(PathFlavor::PureWindows, &["c:\\", "x", "bc"]), "pathlib.PureWindowsPath('c:/x/bc')"),
        (path(PathFlavor::PurePosix, &[]), "pathlib.PurePosixPath()"),
        (Object::Range(three(Object::Int(0), Object::Int(5), Object::Int(1))), "range(5)"),
        (
            Object::Range(three(Object::BigInt("-1180591620717411303424".into()), Object::Int(0), Object::Int(3))),
            "range(-2**70, 0, 3)",
        ),
        (Object::Slice(three(Object::Int(1), Object::None, Object::Int(2))), "slice(1, None, 2)"),
        (Object::Slice(three(Object::None, s("a"), Object::None)), "slice(None, 'a', None)"),
        (Object::Type("builtins".into(), "range".into()), "range"),
        (Object::Type("builtins".into(), "complex".into()), "complex"),
        (Object::Type("datetime".into(), "date".into()), "datetime.date"),
        (Object::Array(Box::new(array("'<i8'", &[2], false, le(&[1, 2], 8)))), "np.array([1, 2], '<i8')"),
        (Object::Array(Box::new(array("'>f4'", &[1], false, 1.5f32.to_be_bytes().to_vec()))), "np.array([1.5], '>f4')"),
        (Object::Array(Box::new(array("'<U3'", &[2], false, ucs4))), "np.array(['ab', 'c'], '<U3')"),
        (Object::Array(Box::new(array("'|S2'", &[1], false, b"a\0".to_vec()))), "np.array([b'a'], 'S2')"),
        (
            Object::Array(Box::new(array("[('a', '<i4'), ('b', '>f8')]", &[1], false, record.clone()))),
            "np.array([(7, 2.5)], dtype=[('a', '<i4'), ('b', '>f8')])",
        ),
        (
            Object::Array(Box::new(array("'<i2'", &[2, 3], true, le(&[1, 4, 2, 5, 3, 6], 2)))),
            "np.array([[1, 2, 3], [4, 5, 6]], '<i2', order='F')",
        ),
        (
            Object::Array(Box::new(array("'<M8[D]'", &[2], false, le(&[18263, i64::MIN], 8)))),
            "np.array(['2020-01-02', 'NaT'], 'M8[D]')",
        ),
        (
            Object::Array(Box::new(array("[('s', '<i4', (2,))]", &[1], false, le(&[3, 4], 4)))),
            "np.array([([3, 4],)], dtype=[('s', '<i4', (2,))])",
        ),
        (
            Object::ObjectArray(Box::new(Array::from_shape_vec(vec![2], vec![Object::Int(1), s("x")]).unwrap())),
            "np.array([1, 'x'], dtype=object)",
        ),
        (
            Object::ObjectArray(Box::new(
                Array::from_shape_vec_fortran(
                    vec![2, 2],
                    vec![Object::Int(1), s("z"), Object::None, Object::Float(2.5)],
                )
                .unwrap(),
            )),
            "np.array([[1, None], ['z', 2.5]], dtype=object, order='F')",
        ),
        (
            Object::Scalar(Box::new(array("'<M8[D]'", &[], false, 18263i64.to_le_bytes().to_vec()))),
            "np.datetime64('2020-01-02')",
        ),
        (
            Object::Scalar(Box::new(array("'<m8'", &[], false, i64::MIN.to_le_bytes().to_vec()))),
            "np.timedelta64('NaT')",
        ),
        (
            Object::Scalar(Box::new(array("'<m8[s]'", &[], false, 5i64.to_le_bytes().to_vec()))),
            "np.timedelta64(5, 's')",
        ),
        (
            Object::Scalar(Box::new(array("[('a', '<i4'), ('b', '>f8')]", &[], false, record))),
            "np.array([(7, 2.5)], dtype=[('a', '<i4'), ('b', '>f8')])[0]",
        ),
        (
            // x86-64's long double: 80 bits (1.5), 6 bytes of padding.
            Object::Scalar(Box::new(array(
                "'<f16'",
                &[],
                false,
                vec![0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x3f, 0, 0, 0, 0, 0, 0],
            ))),
            "np.longdouble(1.5)",
        ),
        (
            Object::List(vec![
                Object::Date(date(2020, 1, 2)),
                Object::Dict(vec![(Object::Decimal("1".into()), Object::FrozenSet(vec![Object::Int(1)]))]),
            ]),
            "[datetime.date(2020, 1, 2), {decimal.Decimal('1'): frozenset({1})}]",
        ),
        // Issue 67: zones, deques, defaultdicts, masked arrays.
        (
            dt(
                date(2024, 3, 1),
                Time {
                    tzinfo: Some(ZoneInfo { key: "Europe/Paris".into(), cached: true }.into()),
                    ..time(12, 0, 0, 0)
                },
            ),
            "datetime.datetime(2024, 3, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo('Europe/Paris'))",
        ),
        (
            Object::ZoneInfo(Box::new(ZoneInfo { key: "UTC".into(), cached: false })),
            "zoneinfo.ZoneInfo.no_cache('UTC')",
        ),
        (
            Object::Deque(Box::new(Deque { items: vec![1.into(), s("a")], maxlen: Some(3) })),
            "collections.deque([1, 'a'], maxlen=3)",
        ),
        (
            Object::DefaultDict(Box::new(DefaultDict {
                factory: Object::Type("builtins".into(), "list".into()),
                entries: vec![(1.into(), Object::List(vec![2.into()]))],
            })),
            "collections.defaultdict(list, {1: [2]})",
        ),
        (
            Object::MaskedArray(Box::new(MaskedArray {
                data: Object::Array(Box::new(array("<i2", &[3], false, le(&[0, 1, 2], 2)))),
                mask: array("|b1", &[3], false, vec![0, 1, 0]),
                fill_value: Some(Object::Array(Box::new(array("<i2", &[], false, le(&[7], 2))))),
            })),
            "np.ma.masked_array(np.arange(3, dtype='<i2'), mask=[0, 1, 0], fill_value=7)",
        ),
        (
            Object::MaskedArray(Box::new(MaskedArray {
                data: Object::Array(Box::new(array("[('a', '<i4'), ('b', '<f8')]", &[1], false, {
                    let mut r = 7i32.to_le_bytes().to_vec();
                    r.extend(2.5f64.to_le_bytes());
                    r
                }))),
                mask: array("[('a', '|b1'), ('b', '|b1')]", &[1], false, vec![0, 1]),
                fill_value: None,
            })),
            "np.ma.masked_array(np.array([(7, 2.5)], dtype=[('a', '<i4'), ('b', '<f8')]), mask=[(0, 1)])",
        ),
    ]
}

#[test]
fn numpy_loads_every_kind_of_value() {
    let (values, exprs): (Vec<Object>, Vec<&str>) = kinds().into_iter().unzip();
    let n = values.len();
    let py = |e: &[&str]| e.iter().map(|e| json!({ "py": e })).collect::<Vec<_>>();
    let a = Array::from_shape_vec(vec![n], values.clone()).unwrap();
    publish("kinds.npy", &a.write_npy_to(Vec::new()).unwrap(), {
        vec![json!({ "name": null, "shape": [n], "fortran": false, "objects": py(&exprs) })]
    });
    // A Fortran-order grid of them: the sidecar lists the values in storage order.
    let grid = Array::from_shape_vec_fortran(vec![4, 5], values[..20].to_vec()).unwrap();
    publish("kinds_grid_f.npy", &grid.write_npy_to(Vec::new()).unwrap(), {
        vec![json!({ "name": null, "shape": [4, 5], "fortran": true, "objects": py(&exprs[..20]) })]
    });
}

#[test]
fn writing_refuses_what_python_cannot_hold() {
    let write = |v: Object| [Object::None, v].write_npy_to(Vec::new());
    let e = write(Object::BigInt("12a".into())).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    let e = write(Object::Dict(vec![(Object::List(vec![]), Object::None)])).unwrap_err();
    assert!(e.to_string().contains("cannot hash"), "{e}");
    let e = write(Object::Dict(vec![(Object::Tuple(vec![Object::Dict(vec![])]), Object::None)])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    let mut deep = Object::None;
    for _ in 0..=MAX_DEPTH {
        deep = Object::List(vec![deep]);
    }
    let e = write(deep.clone()).unwrap_err();
    assert!(e.to_string().contains("nested deeper than 256 levels"), "{e}");
    if let Object::List(mut inner) = deep {
        let fits = inner.pop().unwrap(); // MAX_DEPTH levels: written, and read back
        let back = Vec::<Object>::read_npy_from(&write(fits.clone()).unwrap()[..]).unwrap();
        assert_eq!(back[1], fits);
    }
    let e = Array::from_shape_vec(vec![2], vec![Object::None]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    // A failed path write leaves nothing behind.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.npy");
    assert!([Object::BigInt("x".into())].write_npy(&path).is_err());
    assert!(!path.exists());
}

#[test]
fn reading_errors_say_what_and_where() {
    let good = [Object::from("a"), Object::from(1)].write_npy_to(Vec::new()).unwrap();
    let data_offset = 128;
    // Trailing bytes: an error from a file, the next array of a stream otherwise.
    let mut two = good.clone();
    two.extend_from_slice(&good);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.npy");
    std::fs::write(&path, &two).unwrap();
    let e = Vec::<Object>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Pickle { offset, .. } if *offset == good.len() as u64), "{e}");
    let mut stream = &two[..];
    let first = NpyReader::from_reader(&mut stream).unwrap().read::<Array<Object>>().unwrap();
    let second = NpyReader::from_reader(&mut stream).unwrap().read::<Array<Object>>().unwrap();
    assert_eq!(first, second);
    assert!(stream.is_empty());
    // Not an object array.
    let e = NpyReader::from_reader(&[1.0f64].write_npy_to(Vec::new()).unwrap()[..])
        .unwrap()
        .read::<Array<Object>>()
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    // The header's shape must be the pickle's.
    let mut other = good.clone();
    let at = other.windows(4).position(|w| w == b"(2,)").unwrap();
    other[at + 1] = b'3';
    let e = Array::<Object>::read_npy_from(&other[..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Pickle { offset: 128, .. }), "{e}");
    assert!(e.to_string().contains("shape (2,), but the header says (3,)"), "{e}");
    // A global names itself and its offset in the file.
    let evil = b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85\x94R\x94.";
    let mut file = good[..data_offset].to_vec();
    file.extend_from_slice(evil);
    let e = Vec::<Object>::read_npy_from(&file[..]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid pickle at byte 153: global 'os.system' is not allowed: only NumPy's arrays and scalars \
         and the standard library's data types are decoded, and nothing is ever called"
    );
    // An opcode names itself.
    let mut file = good[..data_offset].to_vec();
    file.extend_from_slice(b"\x80\x04\x92.");
    let e = Vec::<Object>::read_npy_from(&file[..]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid pickle at byte 130: opcode NEWOBJ_EX is not allowed: it creates an instance of a class"
    );
    // A fixed memory limit.
    let mut opts = ReadOptions::new();
    opts.max_object_bytes(100);
    let e = npy_core::NpyReader::from_reader_with(&good[..], &opts).unwrap().read::<Array<Object>>().unwrap_err();
    assert!(e.to_string().contains("max_object_bytes"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Part three: hostile variations of the fixtures.

#[test]
fn every_truncation_is_an_error() {
    for file in ["object/proto0.npy", "object/proto2.npy", "object/nested.npy", "object/numpy_scalars.npy"] {
        let bytes = std::fs::read(data_dir().join(file)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.npy");
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            let stream = Array::<Object>::read_npy_from(part);
            assert!(stream.is_err(), "{file} cut at {cut}: read");
            std::fs::write(&path, part).unwrap();
            let e = Array::<Object>::read_npy(&path).unwrap_err();
            if cut >= 128 {
                assert!(matches!(e.kind(), ErrorKind::Pickle { .. }), "{file} cut at {cut}: {e}");
            }
        }
    }
}

#[test]
fn corrupted_pickles_never_panic() {
    // Every byte of each pickle set to a few values: any result but a panic is fine, and
    // errors are pickle errors.
    for file in ["object/proto0.npy", "object/proto1.npy", "object/nested.npy", "object/2x3_F.npy"] {
        let bytes = std::fs::read(data_dir().join(file)).unwrap();
        let pickle = &bytes[128..];
        let mut ok = 0;
        for i in 0..pickle.len() {
            for value in [0x00, 0x01, 0x28, 0x2e, 0x7f, 0x80, 0xff, pickle[i] ^ 0x20] {
                let mut p = pickle.to_vec();
                p[i] = value;
                // The check without building values accepts all the decoder accepts (with
                // its shape), refuses no less than the decoder does before building, and
                // never panics either.
                let checked = check_pickle(&p);
                match from_pickle(&p) {
                    Ok(a) => {
                        ok += 1;
                        assert_eq!(checked.as_deref().ok(), Some(a.shape()), "{file} [{i}] = {value:#x}");
                    }
                    Err(e) => assert!(matches!(e.kind(), ErrorKind::Pickle { .. }), "{file} [{i}] = {value:#x}: {e}"),
                }
                if let Err(e) = checked {
                    assert!(matches!(e.kind(), ErrorKind::Pickle { .. }), "{file} [{i}] = {value:#x}: {e}");
                    assert!(from_pickle(&p).is_err());
                }
            }
        }
        assert!(ok > 0, "{file}: some corruptions (in strings) still decode");
    }
}

#[test]
fn serde_bridge_refuses_object_arrays() {
    let file = data_dir().join("object/str.npy");
    let bytes = std::fs::read(&file).unwrap();
    let e = npy_core::serde::from_npy_reader::<String, _>(NpyReader::from_reader(&bytes[..]).unwrap()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
    let e = npy_core::serde::values(NpyReader::from_reader(&bytes[..]).unwrap(), 4).next().unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
}
