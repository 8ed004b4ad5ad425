//! `npy dump` and `npy head`: rows as NumPy's `tolist()` gives them, values as NumPy
//! shows them, checked against the NumPy-made fixtures of `tests/data` (their values
//! from `manifest.json`, written by `xtask/golden.py`). The CI step "numpy reads our
//! dumps" (`xtask/dump_check.py`) compares every array of the corpus with NumPy itself.

use std::path::{Path, PathBuf};

use npy_core::header::Header;
use npy_core::npz::{Compression, Writer};

use crate::support::{fixture, npy, text};

/// The lines `npy ARGS` writes, after checking that it succeeded with nothing on stderr.
fn lines(args: &[&str]) -> Vec<String> {
    let out = npy(args);
    assert!(out.status.success() && out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_string).collect()
}

fn dump(rel: &str, extra: &[&str]) -> Vec<String> {
    let path = fixture(rel);
    let mut args = vec!["dump", path.to_str().unwrap()];
    args.extend(extra);
    lines(&args)
}

/// The manifest entry of a fixture: what NumPy wrote (xtask/golden.py).
fn manifest(rel: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("manifest.json")).unwrap();
    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    all.into_iter().find(|e| e["file"] == rel).unwrap_or_else(|| panic!("{rel} not in the manifest"))
}

fn elements(rel: &str) -> Vec<serde_json::Value> {
    manifest(rel)["elements"].as_array().unwrap().clone()
}

/// The bits of a float written as JSON (`NaN` and `Infinity` as Python's json), read as
/// a value of `bits` bits.
fn float_bits(json: &str, bits: u32) -> Option<u64> {
    let x: f64 = match json {
        "NaN" => return None,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        number => number.parse().unwrap_or_else(|e| panic!("{number:?}: {e}")),
    };
    Some(match bits {
        16 => u64::from(npy_core::scalar::f64_to_f16(x)),
        32 => u64::from(json.parse::<f32>().map_or((x as f32).to_bits(), f32::to_bits)),
        _ => x.to_bits(),
    })
}

fn is_nan_bits(bits: u64, width: u32) -> bool {
    match width {
        16 => npy_core::scalar::f16_to_f64(bits as u16).is_nan(),
        32 => f32::from_bits(bits as u32).is_nan(),
        _ => f64::from_bits(bits).is_nan(),
    }
}

/// Every float of the fixtures reads back as the value NumPy wrote, bits included (any
/// NaN as a NaN), from JSON and from CSV alike; they are written in the shortest digits
/// of their own type (an f4 is not widened to an f8's digits: 5e-324 is 6 characters).
#[test]
fn floats_read_back_as_numpy_wrote_them() {
    for (rel, width) in [
        ("scalar/le_f2.npy", 16),
        ("scalar/be_f2.npy", 16),
        ("scalar/le_f4.npy", 32),
        ("scalar/be_f4.npy", 32),
        ("scalar/le_f8.npy", 64),
        ("scalar/be_f8.npy", 64),
    ] {
        let want = elements(rel);
        let json = dump(rel, &[]);
        let csv = dump(rel, &["--format", "csv"]);
        assert_eq!((json.len(), csv.len()), (want.len(), want.len() + 1), "{rel}");
        assert_eq!(csv[0], "value");
        for ((line, cell), bits) in json.iter().zip(&csv[1..]).zip(&want) {
            let bits = bits.as_u64().unwrap();
            match float_bits(line, width) {
                Some(got) => assert_eq!(got, bits, "{rel}: {line}"),
                None => assert!(is_nan_bits(bits, width), "{rel}: {line} for {bits:#x}"),
            }
            let spelled = match cell.as_str() {
                "nan" => "NaN",
                "inf" => "Infinity",
                "-inf" => "-Infinity",
                number => number,
            };
            assert_eq!(spelled, line, "{rel}: CSV and JSON differ");
        }
    }
    // The smallest subnormal f8 (bits 1), as NumPy prints it.
    assert!(dump("scalar/le_f8.npy", &[]).contains(&"5e-324".to_string()));
}

/// A record of the seismic fixture: fields in order, `dt` (an f4 0.004) as NumPy shows
/// it in JSON and CSV alike, subarrays as lists.
#[test]
fn records_are_objects_with_numpys_digits() {
    let rel = "record/trace_packed.npy";
    let fields = manifest(rel)["fields"].clone();
    assert_eq!(fields["dt"][0], 0.004f32.to_bits());
    let json = dump(rel, &[]);
    let csv = dump(rel, &["--format", "csv"]);
    assert_eq!((json.len(), csv.len()), (4, 5));
    assert!(csv[0].starts_with("trace_id,receiver.x,receiver.y,receiver.z,t0,dt,flags,samples[0],"), "{}", csv[0]);
    for (i, (line, row)) in json.iter().zip(&csv[1..]).enumerate() {
        let id = fields["trace_id"][i].as_i64().unwrap();
        assert!(line.starts_with(&format!("{{\"trace_id\":{id},\"receiver\":{{\"x\":")), "{line}");
        assert!(line.contains(",\"dt\":0.004,"), "{line}");
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!((cells[0], cells[5]), (id.to_string().as_str(), "0.004"), "{row}");
        // The samples, an (8,) f4 subarray, read back as written.
        let samples = &line[line.find("\"samples\":[").unwrap() + 11..line.len() - 2];
        let got: Vec<u64> = samples.split(',').map(|s| float_bits(s, 32).unwrap()).collect();
        let want: Vec<u64> =
            fields["samples"].as_array().unwrap()[i * 8..i * 8 + 8].iter().map(|b| b.as_u64().unwrap()).collect();
        assert_eq!(got, want, "{line}");
        let csv_samples: Vec<u64> = cells[7..].iter().map(|s| float_bits(s, 32).unwrap()).collect();
        assert_eq!(csv_samples, want, "{row}");
    }
}

/// `tolist()` of an N-d array, one row per item of the first axis, from the manifest's
/// elements in storage order.
fn tolist_rows(rel: &str) -> Vec<String> {
    let m = manifest(rel);
    let shape: Vec<usize> = m["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let fortran = m["fortran_order"].as_bool().unwrap();
    let values = elements(rel);
    fn nest(fortran: bool, full: &[usize], index: &mut Vec<usize>, values: &[serde_json::Value]) -> String {
        if index.len() == full.len() {
            let (mut pos, mut stride) = (0, 1);
            let dims: Vec<(usize, usize)> = full.iter().copied().zip(index.iter().copied()).collect();
            let order: Vec<(usize, usize)> = if fortran { dims } else { dims.into_iter().rev().collect() };
            for (d, i) in order {
                pos += i * stride;
                stride *= d;
            }
            return values[pos].to_string();
        }
        let d = full[index.len()];
        let items: Vec<String> = (0..d)
            .map(|i| {
                index.push(i);
                let s = nest(fortran, full, index, values);
                index.pop();
                s
            })
            .collect();
        format!("[{}]", items.join(","))
    }
    (0..shape[0]).map(|i| nest(fortran, &shape, &mut vec![i], &values)).collect()
}

/// N-d arrays give `tolist()`'s rows, in C order whatever the file's order; `head`
/// shows them as rows of columns `[j]`, `[j][k]`.
#[test]
fn nd_rows_are_tolist_rows() {
    for rel in ["shape/3x4_F_i4.npy", "shape/3x4_C_i4.npy", "shape/2x3x4_F_be_u2.npy"] {
        assert_eq!(dump(rel, &[]), tolist_rows(rel), "{rel}");
    }
    assert_eq!(dump("shape/3x4_F_i4.npy", &[])[0], "[0,1,2,3]");
    let path = fixture("shape/3x4_F_i4.npy");
    let table = lines(&["head", path.to_str().unwrap()]);
    let cells: Vec<Vec<&str>> = table.iter().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(cells[0], ["#", "[0]", "[1]", "[2]", "[3]"]);
    assert_eq!(cells[1..], [["0", "0", "1", "2", "3"], ["1", "4", "5", "6", "7"], ["2", "8", "9", "10", "11"]]);
    let csv = dump("shape/2x3x4_F_be_u2.npy", &["--format", "csv"]);
    assert_eq!(csv.len(), 3);
    assert!(csv[0].starts_with("[0][0],[0][1],[0][2],[0][3],[1][0],") && csv[0].ends_with(",[2][3]"), "{}", csv[0]);
    // An empty dimension: (5, 0, 3) is five empty rows; a 0-d array one line.
    assert_eq!(dump("shape/5x0x3_f4.npy", &[]), ["[]"; 5]);
    assert_eq!(dump("shape/0d_f8.npy", &[]).len(), 1);
    // Records in Fortran order: rows of records.
    let rows = dump("record/3x2_F.npy", &[]);
    assert_eq!(rows[0], r#"[{"a":0,"b":0.0},{"a":1,"b":0.5}]"#);
    let csv = dump("record/3x2_F.npy", &["--format", "csv"]);
    assert_eq!(csv[..2], ["[0].a,[0].b,[1].a,[1].b", "0,0.0,1,0.5"]);
}

/// An npz member gives the rows of the same array as a file, deflated or stored, in
/// either order (a Fortran-order member is held, a C-order one streamed).
#[test]
fn npz_members_dump_as_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.npz");
    let rels = ["shape/3x4_F_i4.npy", "shape/2x3x4_F_be_u2.npy", "record/trace_packed.npy", "datetime/le_M8_D.npy"];
    let mut w = Writer::create(&archive).unwrap();
    for (i, rel) in rels.iter().enumerate() {
        let compression = if i % 2 == 0 { Compression::deflated() } else { Compression::Stored };
        w.add_raw_with(&format!("m{i}.npy"), &std::fs::read(fixture(rel)).unwrap(), compression).unwrap();
    }
    w.finish().unwrap();
    for (i, rel) in rels.iter().enumerate() {
        for format in ["json", "csv"] {
            let member = format!("m{i}");
            let got = lines(&["dump", archive.to_str().unwrap(), "--member", &member, "--format", format]);
            assert_eq!(got, dump(rel, &["--format", format]), "{rel} {format}");
        }
    }
}

/// Several members and no `--member`: a usage error naming them and the flag.
#[test]
fn an_archive_of_several_members_needs_a_member() {
    let path = fixture("object/archive.npz");
    for cmd in ["dump", "head"] {
        let out = npy(&[cmd, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "a usage error");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("error: reading '{}': ", path.display())), "{err}");
        assert!(err.contains("\"labels\"") && err.contains("\"grid\"") && err.contains("--member"), "{err}");
        assert!(!err.contains("i/o error"), "{err}");
    }
    let out = npy(&["dump", fixture("scalar/le_f8.npy").to_str().unwrap(), "--member", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--member"), "{}", text(&out.stderr));
}

/// NaN and infinities: Python's json spelling by default, `null` or strings on request.
#[test]
fn strict_json_spells_nan_and_infinities() {
    let rel = "scalar/le_f8.npy";
    let python = dump(rel, &[]);
    let null = dump(rel, &["--strict-json", "null"]);
    let string = dump(rel, &["--strict-json", "string"]);
    let mut seen = 0;
    for ((p, n), s) in python.iter().zip(&null).zip(&string) {
        match p.as_str() {
            "NaN" | "Infinity" | "-Infinity" => {
                assert_eq!((n.as_str(), s.clone()), ("null", format!("\"{p}\"")));
                seen += 1;
            }
            _ => assert!(p == n && p == s),
        }
    }
    let non_finite = elements(rel).iter().filter(|b| !f64::from_bits(b.as_u64().unwrap()).is_finite()).count();
    assert_eq!((seen, non_finite > 0), (non_finite, true), "{python:?}");
    let out = npy(&["dump", fixture(rel).to_str().unwrap(), "--format", "csv", "--strict-json", "null"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--strict-json is for --format json"), "{}", text(&out.stderr));
}

/// Datetimes as NumPy's ISO text (`np.datetime_as_string`, NaT as null in JSON), the
/// same text in CSV; timedeltas as their count in JSON and `25 seconds` in CSV.
#[test]
fn datetimes_and_timedeltas() {
    // [str(x) for x in np.load('tests/data/datetime/le_M8_D.npy')], NumPy 2.4.
    let numpy = [
        "1970-01-01",
        "1970-01-02",
        "1969-12-31",
        "NaT",
        "25252734927768524-07-27",
        "25252734927768524-07-29",
        "2022-01-08",
        "0001-01-01",
    ];
    let json = dump("datetime/le_M8_D.npy", &[]);
    let csv = dump("datetime/le_M8_D.npy", &["--format", "csv"]);
    for ((j, c), want) in json.iter().zip(&csv[1..]).zip(numpy) {
        assert_eq!(c, want);
        assert_eq!(j, &if want == "NaT" { "null".to_string() } else { format!("\"{want}\"") });
    }
    let counts = elements("datetime/le_m8_25s.npy");
    let json = dump("datetime/le_m8_25s.npy", &[]);
    for (line, count) in json.iter().zip(&counts) {
        let want = if count.as_i64() == Some(i64::MIN) { "null".to_string() } else { count.to_string() };
        assert_eq!(line, &want);
    }
    // str(np.timedelta64(1, '25s')), NumPy 2.4.
    assert_eq!(dump("datetime/le_m8_25s.npy", &["--format", "csv"])[2], "25 seconds");
}

/// Bytes as NumPy shows them, the same text in JSON and CSV; text as it is.
#[test]
fn bytes_and_text() {
    for rel in ["string/S5.npy", "string/S1.npy", "string/V3.npy", "string/le_U4.npy", "string/be_U4.npy"] {
        let json = dump(rel, &[]);
        let csv = dump(rel, &["--format", "csv"]);
        assert_eq!(json.len() + 1, csv.len(), "{rel}");
        for (j, c) in json.iter().zip(&csv[1..]) {
            let parsed: String = serde_json::from_str(j).unwrap_or_else(|e| panic!("{rel}: {j}: {e}"));
            // CSV quotes cells with commas, quotes and line breaks; these have none.
            assert_eq!(&parsed, c, "{rel}");
        }
    }
    // [repr(x) for x in np.load('tests/data/string/S5.npy').tolist()]
    let want = ["b'hello'", "b''", r"b'a\x00b'", r"b'\x00\x00\xff'", "b'abc'", r"b'\xe9t\xe9'"];
    let csv = dump("string/S5.npy", &["--format", "csv"]);
    assert_eq!(csv[1..], want);
    // str() of the np.void items of V3: every byte escaped, upper-case hex.
    assert_eq!(dump("string/V3.npy", &["--format", "csv"])[2], r"b'\xFF\xFE\xFD'");
    let u4 = dump("string/le_U4.npy", &[]);
    assert_eq!(u4[2], "\"é€😀x\"");
    assert_eq!(u4[4], r#""a\u0000b""#);
}

/// Object arrays: values as JSON, bytes as their repr, floats by the NaN policy.
#[test]
fn object_arrays() {
    let rows = dump("object/nested.npy", &[]);
    assert_eq!(rows[3], r#"{"ka":1,"kb":[null,{"kc":"b'dd'"}]}"#);
    let rows = dump("object/2x3_F.npy", &[]);
    assert_eq!(rows, dump("object/2x3_C.npy", &[]));
    assert_eq!(rows.len(), 2);
    assert!(rows[0].starts_with("[\"r0c0\",1,null]"), "{}", rows[0]);
}

/// A file of one dtype and shape with the given data bytes.
fn synthetic(dir: &Path, name: &str, descr: &str, shape: &[usize], data: &[u8]) -> PathBuf {
    let header = Header::new(descr.parse().unwrap(), shape.to_vec());
    let mut bytes = header.encode(None).unwrap().1;
    bytes.extend_from_slice(data);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// NumPy reads a b1 byte other than 0 or 1 as True (`np.frombuffer(b'\x02', '?')`):
/// dump and head show that, and do not fail.
#[test]
fn bool_bytes_read_as_numpy_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = synthetic(dir.path(), "b.npy", "|b1", &[4], &[0, 1, 2, 255]);
    assert_eq!(lines(&["dump", path.to_str().unwrap()]), ["false", "true", "true", "true"]);
    let table = lines(&["head", path.to_str().unwrap()]);
    assert_eq!(
        table[1..].iter().map(|l| l.split_whitespace().nth(1).unwrap()).collect::<Vec<_>>(),
        ["False", "True", "True", "True"]
    );
}

/// Code points NumPy cannot make a str of (beyond U+10FFFF) fail, naming the element and
/// field; a surrogate is escaped in JSON as Python's json does, and refused in CSV.
#[test]
fn invalid_code_points() {
    let dir = tempfile::tempdir().unwrap();
    let units = |us: &[u32]| us.iter().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
    let path = synthetic(dir.path(), "u.npy", "[('id', '<i2'), ('w', '<U2')]", &[2], &{
        let mut d = 1i16.to_le_bytes().to_vec();
        d.extend(units(&[0x41, 0]));
        d.extend(2i16.to_le_bytes());
        d.extend(units(&[0x42, 0x110000]));
        d
    });
    for format in ["json", "csv"] {
        let out = npy(&["dump", path.to_str().unwrap(), "--format", format]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!("error: reading '{}': invalid value at element 1: field 'w': ", path.display())),
            "{err}"
        );
        assert!(err.contains("0x110000"), "{err}");
    }
    let path = synthetic(dir.path(), "s.npy", "<U2", &[1], &units(&[0xd800, 0x41]));
    assert_eq!(lines(&["dump", path.to_str().unwrap()]), [r#""\ud800A""#]);
    let out = npy(&["dump", path.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("surrogate"), "{}", text(&out.stderr));
}

/// Object arrays of ndarrays, NumPy scalars and the standard library's values (the
/// fixtures of `xtask/golden.py`'s `beyond()`): JSON as `tolist()` gives them (dates as
/// ISO text, NaT null), CSV cells and `head` as Python's `str()` of each, `check` clean.
#[test]
fn object_arrays_of_arrays_and_stdlib_values() {
    // [a.tolist() for a in np.load('object/ragged.npy', allow_pickle=True)]
    assert_eq!(dump("object/ragged.npy", &[]), ["[0,1,2]", "[0,1,2,3,4]", "[]"]);
    // [str(a) for a in ...]
    assert_eq!(dump("object/ragged.npy", &["--format", "csv"]), ["value", "[0 1 2]", "[0 1 2 3 4]", "[]"]);
    let kinds = dump("object/ragged_kinds.npy", &[]);
    assert_eq!(kinds[3], r#"[{"a":1,"b":2.5}]"#, "a record array: objects");
    assert_eq!(kinds[4], "[[0.0,1.0,2.0],[3.0,4.0,5.0]]", "a Fortran-order array in C order");
    assert_eq!(kinds[5], r#"["2020-01-02",null]"#, "datetime64[D] as ISO text, NaT null");
    assert_eq!(kinds[7], "7", "a 0-d array: its value");
    assert_eq!(kinds[10], "[[],[]]", "np.zeros((2, 0))");
    let scalars = dump("object/numpy_scalars_beyond.npy", &[]);
    assert_eq!(
        scalars,
        [r#""2020-01-02""#, "null", r#""1970-01-01T00:00:00.000000001""#, "3", "null", r#"{"a":1,"b":2.5}"#]
    );
    // str() of np.datetime64('2020-01-02'), np.datetime64('NaT'), ..., np.void((1, 2.5), ..)
    let cells = dump("object/numpy_scalars_beyond.npy", &["--format", "csv"]);
    assert_eq!(
        cells,
        ["value", "2020-01-02", "NaT", "1970-01-01T00:00:00.000000001", "3 seconds", "NaT", "\"(1, 2.5)\""]
    );
    let times = dump("object/datetimes.npy", &[]);
    assert_eq!(
        times[..3],
        [r#""2020-01-02T03:04:05.000006""#, r#""2020-01-02T00:00:00+00:00""#, r#""1999-12-31T23:59:59.999999-05:00""#,]
    );
    // str(datetime.datetime(2020, 1, 2, 3, 4, 5, 6)), str(datetime.timedelta(days=-1, seconds=5, microseconds=7))
    let cells = dump("object/datetimes.npy", &["--format", "csv"]);
    assert_eq!((cells[1].as_str(), cells[8].as_str()), ("2020-01-02 03:04:05.000006", "\"-1 day, 0:00:05.000007\""));
    let stdlib = dump("object/stdlib.npy", &[]);
    assert_eq!(stdlib[..5], [r#""1.50""#, r#""-Infinity""#, r#""NaN""#, r#""1E+999999""#, r#""1/3""#]);
    assert_eq!(stdlib[10], "[1,2,3]", "a set: a list");
    assert_eq!(stdlib[14], r#"{"a":1,"b":[2]}"#, "an OrderedDict: an object");
    assert_eq!(stdlib[21], r#""range(1, 10, 2)""#, "a range: its repr");
    let path = fixture("object/stdlib.npy");
    let head = lines(&["head", "-n", "8", path.to_str().unwrap()]);
    assert!(head[7].ends_with("00000000-0000-0000-0000-000000000005"), "{head:?}");
    // [m.tolist() for m in np.load('object/masked.npy', allow_pickle=True)]: null where masked
    let masked = dump("object/masked.npy", &[]);
    assert_eq!(
        masked,
        [
            "[1,null,3]",
            "[1.5,2.5]",
            "[[0,null,2],[null,4,5]]",
            "[1,null]",
            "[[0.0,null],[2.0,3.0]]",
            "[]",
            r#"[null,"c"]"#
        ]
    );
    // A record's mask has a bool per field: None for the masked field, not the record.
    assert_eq!(dump("object/masked_records.npy", &[]), [r#"[{"a":1,"b":null},{"a":3,"b":4.0}]"#, "[null,2]"]);
    // A zoned datetime's isoformat() ends in the zone's offset (+01:00), which only the zone
    // database gives, and npy does not read it: refused, naming the element and the zone,
    // not written without its offset.
    let path = fixture("object/zones_collections.npy");
    let out = npy(&["dump", path.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{err}");
    assert!(err.contains("element 0: a time in the zone Europe/Paris") && err.contains("zone database"), "{err}");
    for f in [
        "ragged",
        "ragged_kinds",
        "datetimes",
        "stdlib",
        "numpy_scalars_beyond",
        "dict_of_arrays",
        "zones_collections",
        "masked",
        "masked_records",
    ] {
        let path = fixture(&format!("object/{f}.npy"));
        assert_eq!(lines(&["check", path.to_str().unwrap()]), ["1 file checked, 0 with problems"], "{f}");
    }
}
