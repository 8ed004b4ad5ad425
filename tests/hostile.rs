//! Hostile inputs: crafted `.npy` files that every reader path must answer with `Ok` or one
//! specific error, never a panic, an abort, a hang, or an allocation sized by what the
//! header claims instead of by the bytes present.
//!
//! Every input is built here by a small recipe ([`Npy`]: magic, version, length field,
//! header text, data), and the cases are grouped by class, one `#[test]` per class. Each
//! case is read through every path: [`DynArray`] from a stream and from the path, the map's
//! open ([`NpyMap`]), and as a Rust type `T` through `Array<T>` (stream and path),
//! `Vec<T>`, `records`, `read_into`, the map's decoding view and `DynArray::to_vec`; each
//! path must give the case's error kind. A counting allocator checks that no single
//! allocation made by a read exceeds [`ALLOC_LIMIT`] (the inputs are a few KiB at most).
//!
//! Object arrays (dtype `|O`) hold a pickle: their cases are also read through the object
//! API ([`Object`]), which must refuse every pickle that names anything but NumPy's arrays
//! and scalars and the data types `npy_core::object` lists (`os.system`, `eval`, `print`), memo bombs that would
//! expand a small input enormously ("billion laughs"), deep nesting and truncations, each
//! with an [`ErrorKind::Pickle`] error and within the allocation limit.
//!
//! Each case is also written to `target/hostile/<case>.npy`: `cargo xtask ci` runs this
//! binary under a 2 GiB address-space limit, then `npy info` and `npy copy` on every file
//! there, which must exit with 0 or 1.

use std::fs;
use std::path::{Path, PathBuf};

use npy_core::header::Header;
use npy_core::mmap::NpyMap;
use npy_core::object::Object;
use npy_core::prelude::*;
use npy_core::types::{Bytes, Ucs4, Void};
use npy_core::{Error, ErrorKind, NpyReader, ReadOptions, Result};

// ---------------------------------------------------------------------------------------
// The largest single allocation of the current thread, for "no allocation from a claim".

#[path = "support/largest_alloc.rs"]
mod largest_alloc;
use largest_alloc::largest_during;

/// Largest single allocation a read of a hostile case may make: a few stream chunks
/// (`STREAM_CHUNK` is 16 MiB), far below every claim the cases make (100 MB and up).
const ALLOC_LIMIT: usize = 64 << 20;

// ---------------------------------------------------------------------------------------
// Recipes: a `.npy` file by its parts.

/// A `.npy` file by its parts; [`Npy::bytes`] assembles them. Each recipe changes one part
/// of a valid file.
#[derive(Debug, Clone)]
struct Npy {
    magic: Vec<u8>,
    version: [u8; 2],
    /// The header length field; `None` gives the length of the (padded) text.
    len_field: Option<u32>,
    text: Vec<u8>,
    /// Pad the text with spaces and a `\n` so the data starts at a multiple of 64, as
    /// `np.save` does.
    pad: bool,
    data: Vec<u8>,
}

/// Version 1.0 with header text `text`, padded.
fn npy(text: impl Into<Vec<u8>>) -> Npy {
    Npy { magic: b"\x93NUMPY".to_vec(), version: [1, 0], len_field: None, text: text.into(), pad: true, data: vec![] }
}

/// The header dict as `np.save` writes it.
fn dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}")
}

/// A valid header for `descr` and `shape` (no data yet).
fn array(descr: &str, shape: &str) -> Npy {
    npy(dict(descr, shape))
}

/// Three `<f8` zeros: a valid file that recipes break one part of.
fn valid() -> Npy {
    array("'<f8'", "(3,)").data([0u8; 24])
}

impl Npy {
    fn magic(mut self, magic: &[u8]) -> Npy {
        self.magic = magic.to_vec();
        self
    }

    fn version(mut self, major: u8, minor: u8) -> Npy {
        self.version = [major, minor];
        self
    }

    fn len_field(mut self, len: u32) -> Npy {
        self.len_field = Some(len);
        self
    }

    fn unpadded(mut self) -> Npy {
        self.pad = false;
        self
    }

    fn data(mut self, data: impl Into<Vec<u8>>) -> Npy {
        self.data = data.into();
        self
    }

    /// Bytes of the length field: 2 for version 1, 4 otherwise.
    fn len_size(&self) -> usize {
        if self.version[0] == 1 {
            2
        } else {
            4
        }
    }

    fn preamble_len(&self) -> usize {
        self.magic.len() + 2 + self.len_size()
    }

    fn bytes(&self) -> Vec<u8> {
        let mut text = self.text.clone();
        if self.pad {
            let used = self.preamble_len() + text.len() + 1;
            text.resize(text.len() + (64 - used % 64) % 64, b' ');
            text.push(b'\n');
        }
        let len = self.len_field.unwrap_or(text.len() as u32);
        let mut out = self.magic.clone();
        out.extend_from_slice(&self.version);
        out.extend_from_slice(&len.to_le_bytes()[..self.len_size()]);
        out.extend_from_slice(&text);
        out.extend_from_slice(&self.data);
        out
    }

    /// The file offset of the first `needle` in the header text.
    fn at(&self, needle: &str) -> usize {
        let i = self.text.windows(needle.len()).position(|w| w == needle.as_bytes());
        self.preamble_len() + i.unwrap_or_else(|| panic!("{needle:?} is not in the header text"))
    }
}

/// `n` elements of `value`'s little-endian bytes.
fn le<const N: usize>(value: [u8; N], n: usize) -> Vec<u8> {
    value.repeat(n)
}

/// `n` nested pairs of `open`/`close` around `inner`.
fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

// ---------------------------------------------------------------------------------------
// What a read must give.

/// The outcome a read must have: `Ok`, or an error of this kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Ok,
    Format,
    HeaderTooLarge,
    Header,
    /// A header error at this file offset.
    HeaderAt(usize),
    Dtype,
    UnsupportedDtype,
    Shape,
    Truncated,
    InvalidValue,
    DtypeMismatch,
    WrongShape,
    Usage,
    Pickle,
}

impl Want {
    fn accepts(self, got: &Result<()>) -> bool {
        let Err(e) = got else { return self == Want::Ok };
        match (self, e.kind()) {
            (Want::Format, ErrorKind::Format { .. })
            | (Want::HeaderTooLarge, ErrorKind::HeaderTooLarge { .. })
            | (Want::Header, ErrorKind::Header { .. })
            | (Want::Dtype, ErrorKind::Dtype { .. })
            | (Want::UnsupportedDtype, ErrorKind::UnsupportedDtype { .. })
            | (Want::Shape, ErrorKind::Shape { .. })
            | (Want::Truncated, ErrorKind::Truncated { .. })
            | (Want::InvalidValue, ErrorKind::InvalidValue { .. })
            | (Want::DtypeMismatch, ErrorKind::DtypeMismatch { .. })
            | (Want::WrongShape, ErrorKind::WrongShape { .. })
            | (Want::Usage, ErrorKind::Usage { .. })
            | (Want::Pickle, ErrorKind::Pickle { .. }) => true,
            (Want::HeaderAt(want), ErrorKind::Header { offset, .. }) => *offset == want,
            _ => false,
        }
    }
}

/// What a read is given: the bytes (for streams), the file (for paths and maps), options.
struct Input<'a> {
    bytes: &'a [u8],
    path: &'a Path,
    opts: &'a ReadOptions,
}

type ReadFn = fn(&Input<'_>) -> Result<()>;

/// A named read (a helper that gives closures their fn-pointer type).
fn r(what: &'static str, read: ReadFn) -> (&'static str, ReadFn) {
    (what, read)
}

fn map(input: &Input<'_>) -> Result<NpyMap> {
    // SAFETY: the file is this test's own: written before the case is read, and neither
    // modified nor truncated while it is mapped.
    unsafe { NpyMap::from_path_with(input.path, input.opts) }
}

/// The reads of the dynamic API, which every dtype NumPy saves without pickles passes.
const DYNAMIC: &[(&str, ReadFn)] = &[
    ("DynArray from a stream", |i| {
        DynArray::from_npy_reader(npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?).map(drop)
    }),
    ("DynArray from the path", |i| DynArray::read_npy_with(i.path, i.opts).map(drop)),
    ("NpyMap::from_path", |i| {
        let map = map(i)?;
        assert_eq!(map.data().len(), map.header().data_len()?);
        Ok(())
    }),
];

/// The reads of the object API, for object arrays.
const OBJECTS: &[(&str, ReadFn)] = &[
    ("Array<Object> from a stream", |i| {
        npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?.read::<Array<Object>>().map(drop)
    }),
    ("Array<Object> from the path", |i| Array::<Object>::read_npy_with(i.path, i.opts).map(drop)),
    ("Vec<Object> from the path", |i| {
        npy_core::NpyReader::from_path_with(i.path, i.opts)?.read_object_vec::<Object>().map(drop)
    }),
];

/// An element type the typed reads use.
trait Elem: NpyRecord + Copy + Default {}

impl<T: NpyRecord + Copy + Default> Elem for T {}

/// The typed reads of one Rust type.
#[derive(Clone, Copy)]
struct Typed {
    name: &'static str,
    reads: fn() -> Vec<(&'static str, ReadFn)>,
    vec_reads: fn() -> Vec<(&'static str, ReadFn)>,
    to_vec: fn(&DynArray) -> Result<()>,
}

impl Typed {
    fn of<T: Elem>() -> Typed {
        Typed {
            name: std::any::type_name::<T>(),
            reads: typed_reads::<T>,
            vec_reads: vec_reads::<T>,
            to_vec: |a| a.to_vec::<T>().map(drop),
        }
    }
}

fn typed_reads<T: Elem>() -> Vec<(&'static str, ReadFn)> {
    vec![
        r("Array<T> from a stream", |i| {
            npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?.read::<Array<T>>().map(drop)
        }),
        r("Array<T> from the path", |i| {
            npy_core::NpyReader::from_path_with(i.path, i.opts)?.read::<Array<T>>().map(drop)
        }),
        r("records::<T>(1000) from a stream", |i| {
            npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?
                .chunks::<T>(1000)?
                .try_for_each(|chunk| chunk.map(drop))
        }),
        r("records::<T>(usize::MAX) from a stream", |i| {
            npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?
                .chunks::<T>(usize::MAX)?
                .try_for_each(|chunk| chunk.map(drop))
        }),
        r("read_into::<T> from a stream", |i| {
            let mut reader = npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?;
            let mut buf = [T::default(); 64];
            while reader.read_into(&mut buf)? > 0 {}
            Ok(())
        }),
        r("NpyMap decode::<T>", |i| map(i)?.decode::<T>()?.iter().try_for_each(|v| v.map(drop))),
    ]
}

fn vec_reads<T: Elem>() -> Vec<(&'static str, ReadFn)> {
    vec![
        r("Vec<T> from a stream", |i| {
            Vec::<T>::from_npy_reader(npy_core::NpyReader::from_reader_with(i.bytes, i.opts)?).map(drop)
        }),
        r("Vec<T> from the path", |i| Vec::<T>::read_npy_with(i.path, i.opts).map(drop)),
    ]
}

/// One hostile input and what every path must answer.
struct Case {
    name: String,
    bytes: Vec<u8>,
    opts: ReadOptions,
    /// The dynamic reads and the map's open.
    dynamic: Want,
    /// The reads as [`Case::elem`] (and `to_vec` of the dynamic array, when it reads).
    typed: Want,
    /// `Vec<T>` reads (1-D arrays only); `None` skips them.
    vec: Option<Want>,
    /// The Rust type of the typed reads; `None` skips them.
    elem: Option<Typed>,
    /// The reads of the object API; `None` skips them.
    objects: Option<Want>,
}

/// A case that every path answers with `want`, read as `f64` where typed.
fn case(name: &str, file: impl Into<Vec<u8>>, want: Want) -> Case {
    Case {
        name: name.to_string(),
        bytes: file.into(),
        opts: ReadOptions::new(),
        dynamic: want,
        typed: want,
        vec: Some(want),
        elem: Some(Typed::of::<f64>()),
        objects: None,
    }
}

impl From<Npy> for Vec<u8> {
    fn from(npy: Npy) -> Vec<u8> {
        npy.bytes()
    }
}

impl From<&Npy> for Vec<u8> {
    fn from(npy: &Npy) -> Vec<u8> {
        npy.bytes()
    }
}

impl Case {
    /// Typed reads as `T`, which must give `want` (and so must `Vec<T>`).
    fn typed<T: Elem>(mut self, want: Want) -> Case {
        self.elem = Some(Typed::of::<T>());
        self.typed = want;
        self.vec = Some(want);
        self
    }

    /// No typed reads: no Rust type reads this dtype.
    fn untyped(mut self) -> Case {
        self.elem = None;
        self
    }

    fn vec(mut self, want: Option<Want>) -> Case {
        self.vec = want;
        self
    }

    /// Reads through the object API too, which must give `want`.
    fn objects(mut self, want: Want) -> Case {
        self.objects = Some(want);
        self
    }

    fn max_header_size(mut self, bytes: usize) -> Case {
        self.opts.max_header_size(bytes);
        self
    }

    /// Reads the case through every path; returns the mismatches.
    fn check(&self, dir: &Path) -> Vec<String> {
        let path = dir.join(format!("{}.npy", self.name));
        fs::write(&path, &self.bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        let input = Input { bytes: &self.bytes, path: &path, opts: &self.opts };
        let mut reads: Vec<(&str, ReadFn, Want)> =
            DYNAMIC.iter().map(|&(what, read)| (what, read, self.dynamic)).collect();
        let elem = self.elem.map_or("-", |e| e.name);
        if let Some(typed) = self.elem {
            reads.extend((typed.reads)().into_iter().map(|(what, read)| (what, read, self.typed)));
            if let Some(want) = self.vec {
                reads.extend((typed.vec_reads)().into_iter().map(|(what, read)| (what, read, want)));
            }
        }
        if let Some(want) = self.objects {
            reads.extend(OBJECTS.iter().map(|&(what, read)| (what, read, want)));
        }
        let mut failures = Vec::new();
        let mut verdict = |what: &str, want: Want, (got, largest): (Result<()>, usize)| {
            if !want.accepts(&got) {
                failures.push(format!("{}: {what} (T = {elem}): want {want:?}, got {got:?}", self.name));
            }
            if largest > ALLOC_LIMIT {
                failures.push(format!("{}: {what} (T = {elem}): allocated {largest} bytes at once", self.name));
            }
        };
        for (what, read, want) in reads {
            verdict(what, want, largest_during(|| read(&input)));
        }
        let arr =
            npy_core::NpyReader::from_reader_with(&self.bytes[..], &self.opts).and_then(DynArray::from_npy_reader);
        if let (Ok(arr), Some(typed)) = (arr, self.elem) {
            verdict("DynArray::to_vec::<T>", self.typed, largest_during(|| (typed.to_vec)(&arr)));
        }
        failures
    }
}

/// `target/hostile`, where the CLI step of `cargo xtask ci` finds the cases.
fn hostile_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("hostile");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Checks every case of a class; fails listing every mismatch.
fn run(cases: Vec<Case>) {
    let dir = hostile_dir();
    let failures: Vec<String> = cases.iter().flat_map(|c| c.check(&dir)).collect();
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

// ---------------------------------------------------------------------------------------
// The classes.

/// Empty and short files, wrong magic, versions other than 1.0, 2.0 and 3.0.
fn preamble() -> Vec<Case> {
    use Want::Format;
    let mut cases = vec![
        case("empty_file", b"".to_vec(), Format),
        case("one_byte", b"\x93".to_vec(), Format),
        case("magic_prefix", b"\x93NUM".to_vec(), Format),
        case("magic_only", b"\x93NUMPY".to_vec(), Format),
        case("magic_and_version_only", b"\x93NUMPY\x01\x00".to_vec(), Format),
        case("v1_half_length_field", b"\x93NUMPY\x01\x00\x76".to_vec(), Format),
        case("v2_three_byte_length_field", b"\x93NUMPY\x02\x00\x76\x00\x00".to_vec(), Format),
        case("wrong_magic", valid().magic(b"\x93NUMPZ"), Format),
        case("lowercase_magic", valid().magic(b"\x93numpy"), Format),
        case("magic_without_x93", valid().magic(b"NUMPY\x00"), Format),
        case("plain_text", b"this is not a .npy file, only some text\n".to_vec(), Format),
        case("zip_magic", b"PK\x03\x04\x14\x00\x00\x00\x00\x00garbage".to_vec(), Format),
    ];
    for (major, minor) in [(0, 0), (1, 1), (2, 1), (3, 1), (4, 0), (255, 255)] {
        cases.push(case(&format!("version_{major}_{minor}"), valid().version(major, minor), Format));
    }
    cases
}

/// Header lengths over the limit, past the end of the file, or cutting the header.
fn header_length() -> Vec<Case> {
    use Want::*;
    let tiny = valid();
    let raised = u32::MAX as usize;
    vec![
        case("v1_length_65535_tiny_file", tiny.clone().len_field(u16::MAX as u32), Format),
        case("v2_length_u32_max", tiny.clone().version(2, 0).len_field(u32::MAX), HeaderTooLarge),
        case("v3_length_over_default", tiny.clone().version(3, 0).len_field((16 << 20) + 1), HeaderTooLarge),
        case("v3_length_10001_limit_numpy", tiny.clone().version(3, 0).len_field(10_001), HeaderTooLarge)
            .max_header_size(10_000),
        case("v3_length_10001_tiny_file", tiny.clone().version(3, 0).len_field(10_001), Format),
        case("v2_length_100mb", tiny.clone().version(2, 0).len_field(100_000_000), HeaderTooLarge),
        // With the limit raised, the length is checked against the file (paths and maps)
        // or read in growing chunks (streams), never allocated from the claim.
        case("v2_length_100mb_limit_raised", tiny.clone().version(2, 0).len_field(100_000_000), Format)
            .max_header_size(raised),
        case("v2_length_u32_max_limit_raised", tiny.clone().version(2, 0).len_field(u32::MAX), Format)
            .max_header_size(raised),
        case("v1_length_9000_file_128", tiny.clone().len_field(9000), Format),
        case("length_one_past_the_end", tiny.clone().data(vec![]).len_field(119), Format),
        case("length_zero", tiny.clone().len_field(0), HeaderAt(10)),
        case("length_one", npy("\n").unpadded(), Header),
        case("length_cuts_the_dict", tiny.clone().len_field(40), Header),
    ]
}

/// Header text that is not the literal subset: calls, names, operators, other integer
/// forms, comments, trailing junk, unbalanced and deep nesting, huge integers.
fn syntax() -> Vec<Case> {
    use Want::*;
    let data = [0u8; 24];
    let at = |name: &str, text: &str, needle: &str| {
        let file = npy(text).data(data);
        let offset = file.at(needle);
        case(name, file, HeaderAt(offset))
    };
    let at3 = |name: &str, text: &str, needle: &str| {
        let file = npy(text).version(3, 0).data(data);
        let offset = file.at(needle);
        case(name, file, HeaderAt(offset))
    };
    let bad = |name: &str, text: &str| case(name, npy(text).data(data), Header);
    let deep = |name: &str, text: String| case(name, npy(text).data(data), Header).max_header_size(1 << 20);
    let digits = "9".repeat(5000);
    let latin1_in_v3 = npy(&b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'caf\xe9': 1}"[..]).version(3, 0);
    vec![
        at("call", "{'descr': dtype('<f8'), 'fortran_order': False, 'shape': (3,), }", "dtype"),
        at("name", "{'descr': float64, 'fortran_order': False, 'shape': (3,), }", "float64"),
        at("name_in_shape", "{'descr': '<f8', 'fortran_order': False, 'shape': (n,), }", "n,"),
        at("name_inf", "{'descr': '<f8', 'fortran_order': False, 'shape': (inf,), }", "inf"),
        at("operator_times", "{'descr': '<f8', 'fortran_order': False, 'shape': (1*3,), }", "*"),
        at("operator_plus", "{'descr': '<f8', 'fortran_order': False, 'shape': (1+2,), }", "+"),
        at("operator_power", "{'descr': '<f8', 'fortran_order': False, 'shape': (3**1,), }", "**"),
        at("attribute", "{'descr': np.float64, 'fortran_order': False, 'shape': (3,), }", "np"),
        at("lambda", "{'descr': lambda: 0, 'fortran_order': False, 'shape': (3,), }", "lambda"),
        at("hex_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (0x3,), }", "0x3"),
        at("octal_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (0o3,), }", "0o3"),
        at("binary_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (0b11,), }", "0b11"),
        at("underscore_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (0_3,), }", "0_3"),
        at("leading_zero_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (03,), }", "03"),
        at("complex_int", "{'descr': '<f8', 'fortran_order': False, 'shape': (3j,), }", "3j"),
        at("float_overflow", "{'descr': '<f8', 'fortran_order': False, 'shape': (1e999,), }", "1e999"),
        at("comment", "{'descr': '<f8', # the dtype\n'fortran_order': False, 'shape': (3,), }", "#"),
        at("trailing_junk", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } junk", "junk"),
        at("trailing_dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }{}", "{}"),
        at("unbalanced_close", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)), }", "), }"),
        at("mismatched_bracket", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,], }", "]"),
        at("quote_missing", "{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }", "fortran"),
        at("unterminated_string", "{'descr': '<f8", "'<f8"),
        case("invalid_utf8_in_v3", latin1_in_v3.clone(), HeaderAt(latin1_in_v3.preamble_len() + 60)),
        at("triple_quoted", "{'descr': '''<f8''', 'fortran_order': False, 'shape': (3,), }", "'''"),
        at("f_string", "{'descr': f'<f8', 'fortran_order': False, 'shape': (3,), }", "f'"),
        at("named_escape", "{'descr': '\\N{DASH}', 'fortran_order': False, 'shape': (3,), }", "\\N"),
        at("null_byte", "{'descr': '<f8'\0, 'fortran_order': False, 'shape': (3,), }", "\0"),
        at("set", "{'descr': {'<f8'}, 'fortran_order': False, 'shape': (3,), }", "}"),
        at("unhashable_key", "{['descr']: '<f8', 'fortran_order': False, 'shape': (3,), }", "["),
        bad("unbalanced_open", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,"),
        bad("bare_tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }, 1"),
        bad("not_a_dict", "['descr', '<f8', 'fortran_order', False, 'shape', (3,)]"),
        bad("an_int", "42"),
        bad("only_spaces", "   "),
        bad("int_5000_digits", &dict("'<f8'", &format!("({digits},)"))),
        bad("negative_int_5000_digits", &dict("'<f8'", &format!("(-{digits},)"))),
        bad("int_past_i128", &dict("'<f8'", "(1701411834604692317316873037158841057280,)")),
        bad("nesting_65_tuples", &dict("'<f8'", &nested("(", "3", ",)", 65))),
        case("nesting_10000_limit_numpy", npy(dict("'<f8'", &nested("(", "3", ",)", 10_000))), HeaderTooLarge)
            .max_header_size(10_000),
        deep("nesting_10000_tuples", dict("'<f8'", &nested("(", "3", ",)", 10_000))),
        deep("nesting_10000_lists", dict(&nested("[", "", "]", 10_000), "(3,)")),
        deep("nesting_10000_dicts", dict("'<f8'", &nested("{1: ", "1", "}", 10_000))),
        deep("nesting_10000_parens", dict("'<f8'", &format!("({},)", nested("(", "3", ")", 10_000)))),
        deep("nesting_10000_signs", dict("'<f8'", &format!("({},)", nested("-(", "3", ")", 10_000)))),
        // The Python 2 `L` suffix is NumPy's in 1.0 and 2.0 headers only.
        case("long_suffix_in_v1", npy(dict("'<f8'", "(3L,)")).data(data), Ok),
        at3("long_suffix_in_v3", &dict("'<f8'", "(3L,)"), "3L"),
    ]
}

/// Missing, extra and duplicate keys.
fn keys() -> Vec<Case> {
    use Want::Header;
    let bad = |name: &str, text: &str| case(name, npy(text).data([0u8; 24]), Header);
    vec![
        bad("empty_dict", "{}"),
        bad("missing_descr", "{'fortran_order': False, 'shape': (3,), }"),
        bad("missing_fortran_order", "{'descr': '<f8', 'shape': (3,), }"),
        bad("missing_shape", "{'descr': '<f8', 'fortran_order': False, }"),
        bad("extra_key", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1, }"),
        bad("duplicate_descr", "{'descr': '<f8', 'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"),
        bad("duplicate_shape", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'shape': (1000000000,)}"),
        bad(
            "duplicate_fortran_order",
            "{'descr': '<f8', 'fortran_order': False, 'fortran_order': True, 'shape': (3,)}",
        ),
        bad("int_key", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 1: 2}"),
        bad("bytes_key", "{b'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"),
        bad("key_in_other_case", "{'Descr': '<f8', 'fortran_order': False, 'shape': (3,), }"),
        bad("key_with_space", "{'descr ': '<f8', 'fortran_order': False, 'shape': (3,), }"),
    ]
}

/// Values of the wrong type.
fn value_types() -> Vec<Case> {
    use Want::*;
    let with = |name: &str, descr: &str, fortran: &str, shape: &str, want: Want| {
        let text = format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}");
        case(name, npy(text).data([0u8; 24]), want)
    };
    vec![
        with("fortran_order_int", "'<f8'", "0", "(3,)", Header),
        with("fortran_order_str", "'<f8'", "'False'", "(3,)", Header),
        with("fortran_order_none", "'<f8'", "None", "(3,)", Header),
        with("fortran_order_float", "'<f8'", "1.0", "(3,)", Header),
        with("shape_list", "'<f8'", "False", "[3]", Header),
        with("shape_int", "'<f8'", "False", "3", Header),
        with("shape_str", "'<f8'", "False", "'(3,)'", Header),
        with("shape_none", "'<f8'", "False", "None", Header),
        with("shape_dict", "'<f8'", "False", "{3: 3}", Header),
        with("descr_int", "8", "False", "(3,)", Dtype),
        with("descr_none", "None", "False", "(3,)", Dtype),
        with("descr_dict", "{'names': ['a'], 'formats': ['<f8']}", "False", "(3,)", Dtype),
        with("descr_bytes", "b'<f8'", "False", "(3,)", Dtype),
        with("descr_bool", "True", "False", "(3,)", Dtype),
        with("descr_three_tuple", "('<f8', (3,), 1)", "False", "(3,)", Dtype),
    ]
}

/// Dimensions that are not non-negative ints, or too many of them.
fn dims() -> Vec<Case> {
    use Want::*;
    let shape = |name: &str, shape: &str, want: Want| case(name, array("'<f8'", shape).data([0u8; 24]), want);
    let ones = |n: usize| format!("({})", vec!["1"; n].join(", "));
    vec![
        shape("negative_dim", "(-1,)", Header),
        shape("negative_dim_among_others", "(3, -3)", Header),
        shape("bool_dim", "(True,)", Header),
        shape("float_dim", "(3.0,)", Header),
        shape("nested_dim", "((3,),)", Header),
        shape("str_dim", "('3',)", Header),
        shape("none_dim", "(None,)", Header),
        shape("dim_2_pow_64", "(18446744073709551616,)", Header),
        shape("dims_65", &ones(65), Shape),
        case("dims_10000", array("'<f8'", &ones(10_000)).data([0u8; 8]), Shape).max_header_size(1 << 20),
        // The most NumPy allows: a valid file.
        case("dims_64", array("'<f8'", &ones(64)).data([0u8; 8]), Ok).vec(Some(WrongShape)),
    ]
}

/// Element and byte counts that overflow (`npy_intp`, i.e. `isize`), also when an axis is
/// zero: NumPy checks the product of the non-zero axes, so `(0, 2**62, 2**62)` is refused.
fn counts() -> Vec<Case> {
    use Want::*;
    let shape = |name: &str, descr: &str, shape: &str, want: Want| case(name, array(descr, shape), want);
    vec![
        shape("elements_2_pow_96", "'<f8'", "(4294967296, 4294967296, 4294967296)", Shape),
        shape("elements_2_pow_64", "'|u1'", "(4611686018427387904, 4)", Shape),
        shape("bytes_2_pow_64", "'<f8'", "(2305843009213693952,)", Shape),
        shape("bytes_2_pow_63", "'<f8'", "(1152921504606846976,)", Shape),
        shape("elements_2_pow_63", "'|u1'", "(9223372036854775808,)", Shape),
        shape("v0_elements_2_pow_64", "'|V0'", "(4611686018427387904, 4)", Shape),
        shape("v0_elements_2_pow_63", "'|V0'", "(9223372036854775808,)", Shape),
        shape("zero_axis_then_overflow", "'<f8'", "(0, 4611686018427387904, 4611686018427387904)", Shape),
        shape("overflow_then_zero_axis", "'<f8'", "(4611686018427387904, 4611686018427387904, 0)", Shape),
        shape("zero_axis_then_2_pow_63", "'|u1'", "(0, 9223372036854775808)", Shape),
        shape("zero_axis_bytes_overflow", "'<f8'", "(0, 4611686018427387904)", Shape),
        shape("itemsize_times_dims", "'|V2147483647'", "(8589934592,)", Shape),
        shape("unicode_itemsize_times_dims", "'<U536870911'", "(1099511627776,)", Shape),
        // The largest zero-element shape NumPy accepts for one-byte items: valid.
        case("zero_axis_isize_max", array("'|u1'", "(0, 9223372036854775807)"), Ok)
            .typed::<u8>(Ok)
            .vec(Some(WrongShape)),
    ]
}

/// Zero-itemsize dtypes with huge shapes: no per-element loop, no allocation per element,
/// and no typed read that invents values from no bytes.
fn zero_size() -> Vec<Case> {
    use Want::*;
    let zero = |name: &str, descr: &str, shape: &str| case(name, array(descr, shape), Ok);
    vec![
        zero("v0_1e18", "'|V0'", "(1000000000000000000,)").typed::<Void<0>>(Usage),
        zero("v0_isize_max", "'|V0'", "(9223372036854775807,)").typed::<Void<0>>(Usage),
        zero("v0_as_f64", "'|V0'", "(1000000000000000000,)").typed::<f64>(DtypeMismatch),
        zero("empty_record_1e18", "[]", "(1000000000000000000,)").typed::<f64>(DtypeMismatch),
        zero("empty_record_2d", "[]", "(1000000000, 1000000000)").typed::<Void<0>>(DtypeMismatch).vec(Some(WrongShape)),
        zero("s0_1e17_as_bytes5", "'|S0'", "(100000000000000000,)").typed::<Bytes<5>>(DtypeMismatch),
        zero("u0_1e17_as_ucs4", "'<U0'", "(100000000000000000,)").typed::<Ucs4<1>>(DtypeMismatch),
        zero("zero_subarray_field_1e18", "[('a', '<f8', (0,))]", "(1000000000000000000,)").typed::<f64>(DtypeMismatch),
        zero("v0_0d", "'|V0'", "()").typed::<Void<0>>(Usage).vec(Some(WrongShape)),
        zero("v0_no_elements", "'|V0'", "(0,)").typed::<Void<0>>(Ok),
        // A (type, shape) of a sizeless type: np.dtype refuses it ("invalid itemsize in
        // generic type tuple").
        case("v0_subarray_field_1e18", array("[('a', '|V0', (3,))]", "(1000000000000000000,)"), Dtype),
        case("zero_subarray_base_1e18", array("[('a', ('<f8', (0,)), (5,))]", "(1000000000000000000,)"), Dtype),
        case("s_subarray_0d", array("('|S0', ())", "(3,)"), Dtype),
    ]
}

/// A record whose one field `a` is followed by ~2 GiB of padding.
#[derive(NpyRecord, Debug, Clone, Copy, Default)]
struct Head {
    a: f64,
}

#[derive(NpyRecord, Debug, Clone, Copy, Default)]
struct Pair {
    a: i32,
    b: f64,
}

/// Shapes far larger than the file, and data cut short.
fn truncated() -> Vec<Case> {
    use Want::*;
    let short =
        |name: &str, descr: &str, shape: &str, data: Vec<u8>| case(name, array(descr, shape).data(data), Truncated);
    vec![
        short("claim_100mb_with_16_bytes", "'<f8'", "(12500000,)", vec![0; 16]),
        short("claim_100mb_u1_with_1_byte", "'|u1'", "(100000000,)", vec![7]).typed::<u8>(Truncated),
        short("claim_8tb_without_data", "'<f8'", "(1099511627776,)", vec![]),
        short("claim_2_pow_59_u1", "'|u1'", "(576460752303423488,)", vec![1, 2, 3]).typed::<u8>(Truncated),
        short("claim_100mb_big_endian", "'>f8'", "(12500000,)", vec![0; 100]),
        short("claim_100mb_widened", "'<f4'", "(25000000,)", vec![0; 100]),
        short("itemsize_2gib_one_element", "[('a', '<f8'), ('', '|V2147483639')]", "(1,)", vec![0; 100])
            .typed::<Head>(Truncated),
        short("itemsize_2gib_v", "'|V2147483647'", "(2,)", vec![0; 100]).untyped(),
        short("one_byte_short", "'<f8'", "(3,)", vec![0; 23]),
        short("no_data", "'<f8'", "(3,)", vec![]),
        short("rows_missing_2d", "'<f8'", "(1000, 1000)", vec![0; 8000]).vec(None),
        short("zero_d_without_data", "'<f8'", "()", vec![]).vec(None),
        short("record_cut_in_an_element", "[('a', '<i4'), ('b', '<f8')]", "(3,)", vec![0; 30]).typed::<Pair>(Truncated),
        short("bool_cut", "'|b1'", "(10,)", vec![1; 5]).typed::<bool>(Truncated),
        case(
            "fortran_cut",
            npy("{'descr': '<f8', 'fortran_order': True, 'shape': (4, 4), }").data(vec![0; 100]),
            Truncated,
        )
        .vec(None),
    ]
}

/// Unknown type codes, bad sizes, zero and enormous itemsizes, depth bombs, duplicate
/// names, malformed fields and subarrays.
fn dtypes() -> Vec<Case> {
    use Want::*;
    let descr = |name: &str, descr: &str, want: Want| case(name, array(descr, "(3,)").data([0u8; 24]), want);
    let subarray_bomb = format!("[('a', {})]", nested("(", "'<f8'", ", (1,))", 33));
    let record_bomb = nested("[('a', ", "'<i4'", ")]", 40);
    vec![
        descr("unknown_code", "'<x8'", Dtype),
        descr("unknown_code_q", "'<q8'", Dtype),
        descr("float_size_3", "'<f3'", Dtype),
        descr("int_size_16", "'<i16'", Dtype),
        descr("int_size_0", "'<i0'", Dtype),
        descr("complex_size_4", "'<c4'", Dtype),
        descr("bool_size_2", "'|b2'", Dtype),
        descr("empty_type_string", "''", Dtype),
        descr("order_only", "'<'", Dtype),
        descr("size_not_digits", "'<f8x'", Dtype),
        descr("void_11_digits", "'|V99999999999'", Dtype),
        descr("bytes_over_int_max", "'|S4294967296'", Dtype),
        descr("void_int_max_plus_one", "'|V2147483648'", Dtype),
        descr("unicode_over_int_max", "'<U1073741824'", Dtype),
        descr("datetime_bad_unit", "'<M8[fortnight]'", Dtype),
        descr("datetime_huge_multiple", "'<M8[99999999999s]'", Dtype),
        descr("subarray_depth_33", &subarray_bomb, Dtype),
        descr("record_depth_40", &record_bomb, Header),
        descr("duplicate_field_names", "[('a', '<i4'), ('a', '<f8')]", Dtype),
        descr("duplicate_nested_names", "[('r', [('x', '<i4'), ('x', '<i4')])]", Dtype),
        descr("title_equals_name", "[(('t', 'a'), '<i4'), ('t', '<i4')]", Dtype),
        descr("field_bare_string", "['a']", Dtype),
        descr("field_one_item", "[('a',)]", Dtype),
        descr("field_four_items", "[('a', '<i4', (2,), 1)]", Dtype),
        descr("field_name_int", "[(1, '<i4')]", Dtype),
        descr("field_title_three_items", "[(('t', 'a', 'x'), '<i4')]", Dtype),
        descr("subarray_negative_dim", "[('a', '<f8', (-1,))]", Dtype),
        descr("subarray_bool_dim", "[('a', '<f8', (True,))]", Dtype),
        descr("subarray_over_int_max_bytes", "[('a', '<f8', (2147483647, 2))]", Dtype),
        descr("subarray_over_int_max_items", "[('a', [], (2147483647, 2))]", Dtype),
        descr("subarray_65_dims", &format!("[('a', '<f8', ({}))]", vec!["1"; 65].join(", ")), Dtype),
        descr("v0_subarray_2_pow_124", "[('a', '|V0', (2147483647, 2147483647, 2147483647, 2147483647))]", Dtype),
        descr("record_over_int_max", "[('a', '|V2000000000'), ('b', '|V2000000000')]", Dtype),
        descr("whole_array_subarray", "('<f8', (3,))", UnsupportedDtype),
    ]
}

/// Object dtypes anywhere: never unpickled, always refused.
fn objects() -> Vec<Case> {
    use Want::{Pickle, UnsupportedDtype};
    // A pickle of `os.system('true')`, as an object array's data would hold: never run.
    let pickle = b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85\x94R\x94.";
    let object = |name: &str, descr: &str| case(name, array(descr, "(1,)").data(pickle.to_vec()), UnsupportedDtype);
    vec![
        // Whole object arrays: the object API refuses the pickle's global.
        object("object", "'|O'").objects(Pickle),
        object("object_bare", "'O'").objects(Pickle),
        object("object_sized", "'<O8'").objects(Pickle),
        // Object fields in records: refused by the header, for every API.
        object("object_field", "[('a', '<i4'), ('b', '|O')]").objects(UnsupportedDtype),
        object("object_nested_field", "[('a', [('b', [('c', '|O')])])]").objects(UnsupportedDtype),
        object("object_subarray_field", "[('a', '|O', (2,))]").objects(UnsupportedDtype),
        object("object_titled_field", "[(('title', 'a'), '|O')]").objects(UnsupportedDtype),
        object("object_subarray_base", "('|O', (2,))").objects(UnsupportedDtype),
    ]
}

/// The pickle NumPy writes for an object array of `n` elements (`n` < 256), with shape
/// opcodes `shape` (`None`: `(n,)`) and list items pushed by `items`, which run inside
/// the list's MARK (so every value they leave on the stack is an element).
fn array_pickle_with(n: u8, shape: Option<&[u8]>, items: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x04cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01".to_vec();
    match shape {
        Some(ops) => p.extend_from_slice(ops),
        None => p.extend_from_slice(&[b'K', n, 0x85]),
    }
    p.extend_from_slice(b"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNN");
    p.extend_from_slice(b"J\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89](");
    p.extend_from_slice(items);
    p.extend_from_slice(b"etb.");
    p
}

fn array_pickle(n: u8, items: &[u8]) -> Vec<u8> {
    array_pickle_with(n, None, items)
}

/// An ndarray inside an object array: `_reconstruct(ndarray, ...)` built with the state
/// `(1, shape, dtype(descr), False, <8 bytes>)`, `shape` the shape tuple's opcodes.
fn inner_array(shape: &[u8], descr: &[u8]) -> Vec<u8> {
    [
        &b"cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01"[..],
        shape,
        b"cnumpy\ndtype\nX\x02\x00\x00\x00",
        descr,
        b"\x89\x88\x87R\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00tb",
    ]
    .concat()
}

/// `levels` lists, each holding the previous one `fanout` times through the memo: a
/// pickle of a few hundred bytes whose values would be `fanout^levels` objects.
fn laughs(levels: u8, fanout: usize, open: &[u8], close: &[u8]) -> Vec<u8> {
    let mut items = Vec::new();
    items.extend_from_slice(open);
    items.extend(std::iter::repeat_n(b'N', fanout));
    items.extend_from_slice(close);
    items.extend_from_slice(&[b'q', 0, b'0']); // BINPUT 0, POP
    for level in 1..levels {
        items.extend_from_slice(open);
        for _ in 0..fanout {
            items.extend_from_slice(&[b'h', level - 1]);
        }
        items.extend_from_slice(close);
        items.extend_from_slice(&[b'q', level, b'0']);
    }
    items.extend_from_slice(&[b'h', levels - 1]);
    array_pickle(1, &items)
}

/// Pickles that must never be executed, expanded or trusted: every object array read is
/// an [`ErrorKind::Pickle`] error (or reads fine, for the valid wrapper), every raw read
/// an [`ErrorKind::UnsupportedDtype`].
fn pickles() -> Vec<Case> {
    use Want::{Ok, Pickle, UnsupportedDtype};
    let with = |name: &str, shape: &str, data: Vec<u8>, want: Want| {
        case(name, array("'|O'", shape).data(data), UnsupportedDtype).objects(want)
    };
    let item = |name: &str, items: &[u8]| with(name, "(1,)", array_pickle(1, items), Pickle);
    let valid = npy_core::object::to_pickle(
        &Array::from_shape_vec(vec![3], vec![Object::from("first"), Object::from(2.5), Object::None]).unwrap(),
    )
    .unwrap();
    let mut deep_lists = vec![b']'; 300];
    deep_lists.extend(vec![b'a'; 299]);
    let mut deep_tuples = vec![b'N'];
    deep_tuples.extend(vec![0x85u8; 100_000]);
    let mut binunicode8 = vec![0x8d];
    binunicode8.extend_from_slice(&(1u64 << 60).to_le_bytes());
    binunicode8.extend_from_slice(b"abc");
    vec![
        with("pickle_valid_wrapper", "(1,)", array_pickle(1, b"N"), Ok),
        with("pickle_valid_written", "(3,)", valid.clone(), Ok),
        // Globals that would run code.
        item("pickle_os_system", b"cos\nsystem\n(X\x04\x00\x00\x00truetR"),
        item("pickle_posix_system", b"cposix\nsystem\nX\x04\x00\x00\x00true\x85R"),
        item("pickle_builtins_eval", b"cbuiltins\neval\n(X\x0b\x00\x00\x00print('hi')tR"),
        item("pickle_print_stack_global", b"\x8c\x08builtins\x8c\x05print\x93X\x02\x00\x00\x00hi\x85R"),
        item("pickle_getattr", b"cbuiltins\ngetattr\n"),
        item("pickle_subprocess", b"\x8c\nsubprocess\x8c\x05Popen\x93"),
        // Calls and builds of what may not be called or built.
        item("pickle_reduce_on_ndarray", b"cnumpy\nndarray\n)R"),
        item("pickle_reduce_on_str", b"X\x01\x00\x00\x00a)R"),
        item("pickle_reduce_on_none", b"N)R"),
        item("pickle_complex_of_str", b"cbuiltins\ncomplex\nX\x04\x00\x00\x001+2j\x85R"),
        item("pickle_bytes_of_int", b"cbuiltins\nbytes\nK\x05\x85R"),
        item("pickle_codecs_utf8", b"c_codecs\nencode\nX\x01\x00\x00\x00aX\x05\x00\x00\x00utf-8\x86R"),
        item("pickle_build_on_list", b"]}b"),
        item("pickle_build_dtype_twice", b"cnumpy\ndtype\nX\x02\x00\x00\x00f8\x89\x88\x87R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x00bh\x00b"),
        // Data since issue 54: a datetime64 scalar, an array, a class, sets, a bytearray.
        with(
            "pickle_dtype_datetime",
            "(1,)",
            array_pickle(1, b"cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\nX\x05\x00\x00\x00M8[D]\x89\x88\x87RC\x08\x00\x00\x00\x00\x00\x00\x00\x00\x86R"),
            Ok,
        ),
        with("pickle_numeric_ndarray_element", "(1,)", array_pickle(1, &inner_array(b"K\x01\x85", b"f8")), Ok),
        with("pickle_global_element", "(1,)", array_pickle(1, b"cbuiltins\ncomplex\n"), Ok),
        with("pickle_empty_set", "(1,)", array_pickle(1, b"\x8f"), Ok),
        with("pickle_frozenset", "(1,)", array_pickle(1, b"(\x91"), Ok),
        with("pickle_bytearray8", "(1,)", array_pickle(1, b"\x96\x00\x00\x00\x00\x00\x00\x00\x00"), Ok),
        // ...and each of them abused.
        item("pickle_datetime_scalar_short_data", b"cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\nX\x05\x00\x00\x00M8[D]\x89\x88\x87RC\x04\x00\x00\x00\x00\x86R"),
        item("pickle_scalar_short_data", b"cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\nX\x02\x00\x00\x00f8\x89\x88\x87RC\x01\x00\x86R"),
        item("pickle_ndarray_element_lying_shape", &inner_array(b"J\x00\x00\x00@\x85", b"f8")),
        item("pickle_ndarray_element_object_raw", &inner_array(b"K\x01\x85", b"O8")),
        item("pickle_dtype_element", b"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R"),
        item("pickle_function_element", b"c_codecs\nencode\n"),
        item("pickle_set_of_a_list", b"\x8f(]\x90"),
        item("pickle_bytearray_of_a_size", b"cbuiltins\nbytearray\nJ\xff\xff\xff\x7f\x85R"),
        item("pickle_bytearray8_claim", b"\x96\xff\xff\xff\xff\xff\xff\xff\x00"),
        // Opcodes outside the supported set.
        item("pickle_newobj", b"cbuiltins\ncomplex\n)\x81"),
        item("pickle_newobj_ex", b"cbuiltins\ncomplex\n)}\x92"),
        item("pickle_inst", b"(ios\nsystem\n"),
        item("pickle_obj", b"(o"),
        item("pickle_persid", b"P1\n"),
        item("pickle_binpersid", b"NQ"),
        item("pickle_ext1", b"\x82\x01"),
        item("pickle_next_buffer", b"\x97"),
        item("pickle_dup", b"N2"),
        item("pickle_string_protocol0", b"S'x'\n"),
        item("pickle_unknown_opcode", b"\xff"),
        // Memory: memo bombs, deep nesting, cycles, huge claims, mark floods.
        with("pickle_billion_laughs", "(1,)", laughs(20, 10, b"](", b"e"), Pickle),
        with("pickle_billion_laughs_tuples", "(1,)", laughs(30, 4, b"(", b"t"), Pickle),
        with("pickle_memo_chain_is_fine", "(1,)", laughs(12, 1, b"(", b"l"), Ok),
        item("pickle_deep_lists", &deep_lists),
        item("pickle_deep_tuples_100k", &deep_tuples),
        item("pickle_list_holds_itself", b"]q\x00h\x00a"),
        item("pickle_dict_holds_itself", b"}q\x00X\x01\x00\x00\x00kh\x00s"),
        item("pickle_binunicode8_claim", &binunicode8),
        item("pickle_binbytes_claim", b"B\xff\xff\xff\xffabc"),
        item("pickle_long4_huge", b"\x8b\xff\xff\xff\x7f"),
        item("pickle_long4_negative", b"\x8b\xff\xff\xff\xff"),
        item("pickle_int_5000_digits", &[b"I".as_slice(), &[b'9'; 5000], b"\n"].concat()),
        item("pickle_marks_100k", &vec![b'('; 100_000]),
        item("pickle_get_missing", b"h\x07"),
        item("pickle_unhashable_key", b"}]Ns"),
        item("pickle_py2_str_non_ascii", b"U\x01\xe9"),
        item("pickle_str_lone_surrogate", b"X\x03\x00\x00\x00\xed\xa0\x80"),
        item("pickle_stop_in_mark", b"N."),
        // The array itself: shapes, lists, stops.
        with("pickle_list_shorter_than_shape", "(2,)", array_pickle(2, b"N"), Pickle),
        with("pickle_header_shape_differs", "(3,)", array_pickle(1, b"N"), Pickle),
        with(
            "pickle_count_overflow",
            "(1,)",
            array_pickle_with(1, Some(b"\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x86"), b"N"),
            Pickle,
        ),
        with("pickle_negative_dim", "(1,)", array_pickle_with(1, Some(b"J\xff\xff\xff\xff\x85"), b"N"), Pickle),
        with("pickle_proto_6", "(1,)", b"\x80\x06N.".to_vec(), Pickle),
        with("pickle_not_an_array", "(1,)", b"\x80\x04N.".to_vec(), Pickle),
        with("pickle_stop_only", "(1,)", b".".to_vec(), Pickle),
        with("pickle_empty", "(1,)", Vec::new(), Pickle),
        with("pickle_cut_in_frame", "(3,)", valid[..5].to_vec(), Pickle),
        with("pickle_cut_in_half", "(3,)", valid[..valid.len() / 2].to_vec(), Pickle),
        with("pickle_cut_before_stop", "(3,)", valid[..valid.len() - 1].to_vec(), Pickle),
        with("pickle_unbuilt_array", "(1,)", array_pickle(1, b"N")[..62].iter().chain(b".").copied().collect(), Pickle),
    ]
}

#[derive(NpyRecord, Debug, Clone, Copy, Default)]
struct Flag {
    a: bool,
    b: i32,
}

#[derive(NpyRecord, Debug, Clone, Copy, Default)]
struct Flags {
    a: [bool; 4],
}

/// Bytes that are valid for NumPy but not for the Rust type: `bool`s other than 0 and 1,
/// UCS-4 code units that are not chars.
fn invalid_values() -> Vec<Case> {
    use Want::*;
    let value = |name: &str, descr: &str, shape: &str, data: Vec<u8>| case(name, array(descr, shape).data(data), Ok);
    let mut bools = vec![0u8; 1000];
    bools[999] = 7;
    let flag = vec![1, 0, 0, 0, 0, 3, 0, 0, 0, 0];
    vec![
        value("bool_2", "'|b1'", "(3,)", vec![1, 0, 2]).typed::<bool>(InvalidValue),
        value("bool_ff", "'|b1'", "(1,)", vec![0xff]).typed::<bool>(InvalidValue),
        value("bool_7_at_999", "'|b1'", "(1000,)", bools).typed::<bool>(InvalidValue),
        value("bool_field", "[('a', '|b1'), ('b', '<i4')]", "(2,)", flag).typed::<Flag>(InvalidValue),
        value("bool_subarray_field", "[('a', '|b1', (4,))]", "(1,)", vec![0, 1, 0, 2]).typed::<Flags>(InvalidValue),
        value("ucs4_surrogate", "'<U1'", "(1,)", le(0xd800u32.to_le_bytes(), 1)).typed::<char>(InvalidValue),
        value("ucs4_past_10ffff", "'<U1'", "(1,)", le(0x110000u32.to_le_bytes(), 1)).typed::<char>(InvalidValue),
        value("ucs4_u32_max", "'<U1'", "(2,)", le(u32::MAX.to_le_bytes(), 2)).typed::<char>(InvalidValue),
        value("ucs4_big_endian_surrogate", "'>U1'", "(1,)", le(0xdfffu32.to_be_bytes(), 1)).typed::<char>(InvalidValue),
        value("ucs4_in_a_string", "'<U2'", "(1,)", [0x41u32, 0xd800].iter().flat_map(|c| c.to_le_bytes()).collect())
            .typed::<Ucs4<2>>(InvalidValue),
        value("ucs4_10ffff_is_valid", "'<U1'", "(1,)", le(0x10ffffu32.to_le_bytes(), 1)).typed::<char>(Ok),
    ]
}

/// Valid files read as a type they cannot be read as, or with a shape the reader refuses.
fn mismatches() -> Vec<Case> {
    use Want::*;
    let file = |name: &str, descr: &str, shape: &str, data: Vec<u8>| case(name, array(descr, shape).data(data), Ok);
    vec![
        file("f8_as_i32", "'<f8'", "(2,)", vec![0; 16]).typed::<i32>(DtypeMismatch),
        file("i8_as_f32", "'<i8'", "(2,)", vec![0; 16]).typed::<f32>(DtypeMismatch),
        file("u1_as_bool", "'|u1'", "(2,)", vec![0, 1]).typed::<bool>(DtypeMismatch),
        file("record_as_f64", "[('a', '<f8')]", "(2,)", vec![0; 16]).typed::<f64>(DtypeMismatch),
        file("f8_as_record", "'<f8'", "(2,)", vec![0; 16]).typed::<Head>(DtypeMismatch),
        file("datetime_as_i64", "'<M8[s]'", "(2,)", vec![0; 16]).typed::<i64>(DtypeMismatch),
        file("two_d_as_vec", "'<f8'", "(2, 2)", vec![0; 32]).vec(Some(WrongShape)),
        file("zero_d_as_vec", "'<f8'", "()", vec![0; 8]).vec(Some(WrongShape)),
        file("big_endian_is_fine", "'>f8'", "(2,)", vec![0; 16]),
    ]
}

/// A class of cases: what makes them.
type Class = fn() -> Vec<Case>;

/// Every class, for the count.
const CLASSES: &[(&str, Class)] = &[
    ("preamble", preamble),
    ("header length", header_length),
    ("header syntax", syntax),
    ("keys", keys),
    ("value types", value_types),
    ("dimensions", dims),
    ("counts", counts),
    ("zero itemsize", zero_size),
    ("truncated", truncated),
    ("dtypes", dtypes),
    ("objects", objects),
    ("pickles", pickles),
    ("invalid values", invalid_values),
    ("mismatches", mismatches),
];

#[test]
fn preamble_cases() {
    run(preamble());
}

#[test]
fn header_length_cases() {
    run(header_length());
}

#[test]
fn syntax_cases() {
    run(syntax());
}

#[test]
fn key_cases() {
    run(keys());
}

#[test]
fn value_type_cases() {
    run(value_types());
}

#[test]
fn dim_cases() {
    run(dims());
}

#[test]
fn count_cases() {
    run(counts());
}

#[test]
fn zero_size_cases() {
    run(zero_size());
}

#[test]
fn truncated_cases() {
    run(truncated());
}

#[test]
fn dtype_cases() {
    run(dtypes());
}

#[test]
fn object_cases() {
    run(objects());
}

#[test]
fn pickle_cases() {
    run(pickles());
}

#[test]
fn invalid_value_cases() {
    run(invalid_values());
}

#[test]
fn mismatch_cases() {
    run(mismatches());
}

#[test]
fn at_least_80_cases_with_unique_names() {
    let mut names = std::collections::BTreeSet::new();
    let mut counts = Vec::new();
    for (class, cases) in CLASSES {
        let cases = cases();
        counts.push(format!("{class}: {}", cases.len()));
        for c in cases {
            assert!(names.insert(c.name.clone()), "case name {} is used twice", c.name);
        }
    }
    println!("{} hostile cases ({})", names.len(), counts.join(", "));
    assert!(names.len() >= 80, "{} cases", names.len());
}

// ---------------------------------------------------------------------------------------
// Paths the table does not cover.

#[test]
fn element_access_on_a_zero_axis_never_overflows() {
    let file = array("'|u1'", "(0, 9223372036854775807)").bytes();
    let arr = DynArray::read_npy_from(&file[..]).unwrap();
    assert_eq!((arr.len(), arr.data().len()), (0, 0));
    for index in [[0, 0], [0, usize::MAX], [usize::MAX, 0]] {
        let e = arr.get::<u8>(&index).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{index:?}: {e}");
    }
    let a = Array::<u8>::read_npy_from(&file[..]).unwrap();
    assert_eq!(a.get(&[0, 9223372036854775806]), None);
}

#[test]
fn huge_zero_itemsize_arrays_cost_nothing() {
    let file = array("'|V0'", "(1000000000000000000,)").bytes();
    let (arr, largest) = largest_during(|| DynArray::read_npy_from(&file[..]).unwrap());
    assert!(largest < 1 << 20, "{largest}");
    assert_eq!(arr.len(), 1_000_000_000_000_000_000);
    let e = arr.get::<Void<0>>(&[999_999_999_999_999_999]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    let mut out = Vec::new();
    arr.write_npy_to(&mut out).unwrap();
    assert_eq!(out, file);
}

#[test]
fn stream_header_claims_are_read_in_chunks() {
    // A 4 GiB header claim on a 128-byte stream with the limit raised: no 4 GiB buffer.
    let file = valid().version(2, 0).len_field(u32::MAX).bytes();
    let mut opts = ReadOptions::new();
    opts.max_header_size(usize::MAX);
    let (got, largest) = largest_during(|| npy_core::NpyReader::from_reader_with(&file[..], &opts).map(drop));
    assert!(matches!(got.as_ref().unwrap_err().kind(), ErrorKind::Format { .. }), "{got:?}");
    assert!(largest <= ALLOC_LIMIT, "allocated {largest} bytes for a header claim");
}

#[test]
fn header_offsets_point_at_the_offending_text() {
    let file = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }").data([0u8; 48]);
    let e = NpyReader::from_reader(&file.bytes()[..]).unwrap_err();
    assert_eq!(e.to_string(), format!("invalid header at byte {}: name 'x' is not a literal", file.at("x)")));
    let h = Header::parse(npy_core::header::Version::V1_0, b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}");
    assert_eq!(h.unwrap().shape, [3]);
}

#[test]
fn map_views_validate_or_refuse_hostile_data() {
    let dir = hostile_dir();
    let view = |name: &str, file: Npy, view: fn(&NpyMap) -> Result<usize>| {
        let path = dir.join(format!("{name}.npy"));
        fs::write(&path, file.bytes()).unwrap();
        // SAFETY: the file is this test's own: written just above, and neither modified nor
        // truncated while it is mapped.
        let map = unsafe { NpyMap::from_path(&path) }.unwrap_or_else(|e| panic!("{name}: {e}"));
        view(&map).map_err(Error::into_kind)
    };
    let got = view("view_bool_2", array("'|b1'", "(4,)").data([0, 1, 2, 1]), |m| m.view::<bool>().map(<[_]>::len));
    assert!(matches!(got, Err(ErrorKind::InvalidValue { index: 2, .. })), "{got:?}");
    let surrogate = array("'<U1'", "(1,)").data(le(0xd800u32.to_le_bytes(), 1));
    let got = view("view_char_surrogate", surrogate, |m| m.view::<char>().map(<[_]>::len));
    assert!(matches!(got, Err(ErrorKind::InvalidValue { index: 0, .. })), "{got:?}");
    let got = view("view_v0_1e18", array("'|V0'", "(1000000000000000000,)"), |m| m.view::<Void<0>>().map(<[_]>::len));
    assert!(matches!(got, Err(ErrorKind::Usage { .. })), "{got:?}");
    let empty = array("'|u1'", "(0, 9223372036854775807)");
    let got = view("view_zero_axis", empty.clone(), |m| m.view::<u8>().map(<[_]>::len));
    assert!(matches!(got, Ok(0)), "{got:?}");
    let got = view("view_zero_axis_range", empty, |m| m.view_range::<u8>(0..1).map(<[_]>::len));
    assert!(matches!(got, Err(ErrorKind::Usage { .. })), "{got:?}");
}
