//! Object arrays (dtype `|O`): the Python values people save in them, read and written
//! without ever executing a pickle.
//!
//! `np.save` writes an object array as a normal `.npy` header with descr `'|O'` followed by
//! a pickle of the array (protocol 4 in NumPy 2). Loading such a pickle in Python runs
//! whatever it names, which is why `np.load` needs `allow_pickle=True`. Here the pickle is
//! decoded by a restricted machine into [`Object`]s. It knows NumPy's array and scalar
//! reconstruction and a fixed list of data types ([`globals`]); it interprets their
//! constructors itself, after checking that their arguments are exactly what CPython
//! pickles (a `bytearray` of bytes, never of a size; a date that is a date; an inner
//! array whose bytes are its shape's). Any other global (`os.system`, `builtins.eval`),
//! any call of anything else and any other opcode is an
//! [`ErrorKind::Pickle`] error naming it and its byte offset; nothing is ever called.
//!
//! What each Python value reads as:
//!
//! | Python | [`Object`] |
//! |---|---|
//! | `None`, `bool`, `int`, `float`, `complex`, `str`, `bytes` | `None`, `Bool`, `Int`/`BigInt`, `Float`, `Complex`, `Str`, `Bytes` |
//! | `list`, `tuple`, `dict` | `List`, `Tuple`, `Dict` (insertion order) |
//! | an `ndarray` of any dtype but object (a ragged array's rows, `np.save(dict_of_arrays)`'s values) | `Array`: the [`DynArray`] a `.npy` of it gives; a scalar dtype of the other byte order is made native, as NumPy's unpickling makes it |
//! | an `ndarray` of dtype object (or `StringDType`) | `ObjectArray` |
//! | NumPy's bool, int, uint, float, complex, `str_` and `bytes_` scalars | the plain value of the same number or text |
//! | `np.datetime64`, `np.timedelta64` (`NaT` too), a record's `np.void`, `np.longdouble`, `np.clongdouble` | `Scalar`: its dtype and bytes, as a 0-d [`DynArray`] |
//! | `datetime.date`, `time`, `datetime`, `timedelta`, `timezone` (fixed offsets) | `Date`, `Time`, `DateTime`, `TimeDelta`, `TimeZone` ([`Date`], [`Time`]...); a tzinfo is a [`TzInfo`] |
//! | `zoneinfo.ZoneInfo` (as a tzinfo or alone; `getattr(ZoneInfo, '_unpickle')(key, from_cache)`, nothing else of `getattr`) | `ZoneInfo` ([`ZoneInfo`]: its key, which must be an IANA zone name, and whether it was cached) |
//! | `decimal.Decimal`, `fractions.Fraction`, `uuid.UUID` | `Decimal` (its text), `Fraction` (lowest terms), `Uuid` (its 128-bit int) |
//! | `bytearray`, `set`, `frozenset` | `ByteArray`, `Set`, `FrozenSet` (the pickle's order) |
//! | `collections.OrderedDict`, `Counter` | `OrderedDict`, `Counter` |
//! | `collections.deque` (with its `maxlen`), `defaultdict` (whose factory is `None` or a builtin class: `list`, `int`, `set`, ...) | `Deque` ([`Deque`]), `DefaultDict` ([`DefaultDict`]) |
//! | `np.ma.MaskedArray` of any dtype an inner array may have (`_mareconstruct` exactly as NumPy pickles it) | `MaskedArray` ([`MaskedArray`]: data, a mask of one 0 or 1 byte per element and field, fill value) |
//! | `pathlib`'s `PurePosixPath`, `PosixPath`, `PureWindowsPath`, `WindowsPath` | `Path` ([`PathFlavor`] and parts) |
//! | `range`, `slice` | `Range`, `Slice` |
//! | a class among these, as a value (`range` itself) | `Type` |
//!
//! Instances of any other class (a `dateutil` tzinfo, a dataclass, a pandas object, a
//! `defaultdict` whose factory is a function) are refused: building or using them would
//! run their code.
//!
//! NumPy 2's `StringDType` arrays are saved the same way (descr `'|O'`, the array
//! pickled), their dtype rebuilt by `numpy._core._internal._convert_to_stringdtype_kwargs`,
//! which is decoded too (never called): such a file reads as the object array
//! `a.astype(object)` gives in NumPy, its `str`s and, where a value is missing, the dtype's
//! `na_object` itself (`None`, a float such as NaN, or a str; any other `na_object`, such
//! as `pandas.NA`, is a global and refused). Written back (`npy copy`), it is an object
//! array: NumPy loads it as dtype object with equal values, not as `StringDType`.
//!
//! Memory stays bounded by the input. Values shared through the pickle's memo are shared
//! while decoding, and everything the decoder allocates — its stack, memo, marks and
//! values, and the final [`Object`]s (their 32-byte slots and buffers included) — is
//! charged against a budget before it is allocated: by default **128 MiB plus 4 bytes per
//! pickle byte** (a 60 MB pickle: at most 357 MiB), or the fixed
//! [`ReadOptions::max_object_bytes`]. A small pickle that puts one memoised list into
//! another again and again, a long run of one opcode, or a huge declared length is an
//! error, not an explosion. Values may nest at most [`MAX_DEPTH`] levels, checked as they
//! nest (a tuple of a tuple of ...) and again when the [`Object`]s are built (lists put in
//! each other through the memo), so no recursion goes deeper; decoded values are thus
//! always safe to print, convert and drop. Many small values take more than 4 bytes each
//! as [`Object`]s (a `None` takes 32): an array of millions of them (4 million `None`s, 2
//! million short strs) needs a larger [`ReadOptions::max_object_bytes`]
//! (`--max-object-bytes` in the CLI).
//!
//! Writing produces what `np.save` writes: the header, then a protocol 4 pickle naming
//! `numpy._core.multiarray._reconstruct` as NumPy 2 does, that `np.load(f,
//! allow_pickle=True)` turns into the same array (dtype object, shape, order, values and
//! their Python types). Every [`Object`] is written as CPython 3.11's C pickler writes the
//! Python value: the standard library's types as their `__reduce_ex__(4)` gives them
//! (`datetime.date(b'...')`, `Decimal('1.50')`, `UUID` by `NEWOBJ` and its `{'int': ...}`
//! state, sets by `EMPTY_SET` and `ADDITEMS`, `OrderedDict()` then its items, `Counter`
//! of a dict, a path of its parts, a class as its global), nested arrays as
//! `ndarray.__reduce__` gives them (`_reconstruct`, then the shape, dtype, `is_fortran`
//! and the raw bytes in that order, or an object array's values as a list), NumPy scalars
//! as `scalar(dtype, bytes)`. The memo follows CPython's objects: what it keeps one of
//! (one-character strs, `b''` and one-byte bytes NumPy makes, interned module names and
//! path parts, `timezone.utc`, NumPy's builtin dtypes) is written once and fetched after.
//! So when no other Python object appears twice in the array the file is byte for byte
//! `np.save`'s output (NumPy memoises repeated objects; the values are the same either
//! way). Two things vary in NumPy's own output: the padding bytes of a long double
//! (whatever its memory held: a `Scalar` or `Array` keeps the bytes it is given), and
//! whether `collections.Counter`'s module name is the interned `'collections'` that
//! `OrderedDict` names (it depends on what the process imported first; what a plain
//! interpreter writes is written). A value Python would refuse to build (an invalid date or
//! time, a `Decimal` whose text `Decimal()` does not read, a `Fraction` of non-ints or with
//! a zero denominator, a `range` of non-ints or with a zero step, a class other than the
//! types listed above, a scalar of str, bytes or subarray dtype), a dict key or set item
//! Python cannot hash, or values nested deeper than [`MAX_DEPTH`] (sets, dicts, arrays,
//! and the parts of a `Fraction`, `range` or `slice` count as lists do) is an
//! [`ErrorKind::InvalidValue`] naming the element.
//!
//! | task | API |
//! |---|---|
//! | read an object array | `Array::<Object>::read_npy`, [`NpyReader::read`](crate::NpyReader::read)`::<Array<Object>>()` |
//! | read a 1-D array of str (and None) | `Vec::<String>::read_npy`, `Vec::<Option<String>>::read_npy` |
//! | any shape, as a Rust type | [`NpyReader::read_object_vec`](crate::NpyReader::read_object_vec) with [`FromObject`] |
//! | write one | `objects.write_npy(path)` for `[Object]`, `[String]`, `[&str]`, `[Option<..>]`, [`Array<Object>`] |
//! | in an `.npz` | [`npz::Reader::read`](crate::npz::Reader::read)`::<Array<Object>>(name)`, [`npz::Writer::add`](crate::npz::Writer::add) |
//! | just the pickle | [`from_pickle`], [`to_pickle`] |
//!
//! # Examples
//! ```
//! use npy_core::object::Object;
//! use npy_core::prelude::*;
//!
//! // np.array(['a', None, 3, [1.5, b'x']], dtype=object)
//! let nested = Object::List(vec![1.5.into(), b"x"[..].into()]);
//! let labels = vec![Object::from("a"), Object::None, Object::from(3), nested];
//! let file = labels.write_npy_to(Vec::new())?; // the bytes np.save writes; or write_npy(path)
//! let back = Vec::<Object>::read_npy_from(&file[..])?;
//! assert_eq!(back, labels);
//! assert_eq!(back[3].to_string(), "[1.5, b'x']");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::array::{Array, DynArray};
use crate::dtype::{ByteOrder, DType, Scalar, ScalarType};
use crate::error::{Error, ErrorKind, Result};
use crate::header::{shape_repr, Header};
use crate::options::ReadOptions;
use crate::repr;

mod bigint;
mod check;
mod ndrepr;
pub(crate) mod pickle;
mod pystr;
mod spare;
mod stdlib;

#[cfg(not(target_family = "wasm"))]
pub use check::{check_growing_pickle_with, GrowingPickle};
pub use check::{
    check_pickle, check_pickle_prefix, check_pickle_prefix_with, check_pickle_with, check_sparse_pickle_prefix_with,
    globals, CheckProgress, CheckedPickle, CheckedPrefix, Gap, SparseCheck, SparsePickle,
};
pub use stdlib::{Date, DateTime, DefaultDict, Deque, PathFlavor, Time, TimeDelta, TimeZone, TzInfo, ZoneInfo};

pub(crate) use pickle::Encode;

/// Deepest nesting of lists, tuples and dicts in an object array's values, read or
/// written (an element that is a list of lists is 2 levels deep).
pub const MAX_DEPTH: usize = 256;

/// One element of an object array: a plain Python value.
///
/// Equality is structural and exact (`Float(NAN) != Float(NAN)`, `Int(1) != Float(1.0)`,
/// `List` and `Tuple` differ). [`Display`](fmt::Display) gives Python's `repr`.
///
/// # Examples
/// ```
/// use npy_core::object::Object;
///
/// let v = Object::Dict(vec![("k".into(), Object::Tuple(vec![1.into(), Object::None]))]);
/// assert_eq!(v.to_string(), "{'k': (1, None)}");
/// assert_eq!(Object::from(Some("x")).as_str(), Some("x"));
/// assert!(Object::from(None::<&str>).is_none());
/// assert_eq!(Object::from(u64::MAX), Object::BigInt("18446744073709551615".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Object {
    /// `None`.
    #[default]
    None,
    /// `True` / `False` (NumPy's `np.bool_` reads as this too).
    Bool(bool),
    /// An `int` that fits `i64` (NumPy integer scalars read as this, or as
    /// [`Object::BigInt`] beyond it).
    Int(i64),
    /// An `int` outside `i64`, as its exact decimal text (`"-123456789012345678901234567890"`:
    /// an optional `-`, no leading zeros). Reading gives it only for values outside `i64`;
    /// writing accepts any decimal text and writes a Python `int` of that value. At most
    /// 4300 digits, Python's own limit for printing an int.
    BigInt(String),
    /// A `float` (`np.float16/32/64` read as this too).
    Float(f64),
    /// A `complex`: real and imaginary parts (`np.complex64/128` read as this too).
    Complex(f64, f64),
    /// A `str` (`np.str_` reads as this too; a Python 2 `str` if ASCII).
    Str(String),
    /// A `bytes` (`np.bytes_` reads as this too).
    Bytes(Vec<u8>),
    /// A `list`.
    List(Vec<Object>),
    /// A `tuple`.
    Tuple(Vec<Object>),
    /// A `dict`, in insertion order. Keys must be hashable for Python: writing refuses list
    /// and dict keys (and tuples holding them).
    Dict(Vec<(Object, Object)>),
    /// An ndarray of any dtype but object inside an object array (the rows of a ragged
    /// array, the values of `np.save(dict_of_arrays)`): the same [`DynArray`] a `.npy`
    /// file gives, in Fortran order if pickled so; a scalar dtype of the other byte order
    /// reads as native, as NumPy's unpickling makes it (and is written as it is held).
    Array(Box<DynArray>),
    /// An object array inside an object array.
    ObjectArray(Box<Array<Object>>),
    /// A NumPy scalar that no plain value stands for (`np.datetime64`, `np.timedelta64`,
    /// `NaT`, a record's `np.void`, `np.longdouble`, `np.clongdouble`): its dtype and
    /// bytes, as a 0-d array. NumPy's bool, integer, float, complex, str and bytes
    /// scalars read as the plain value of the same number or text.
    Scalar(Box<DynArray>),
    /// A `bytearray`.
    ByteArray(Vec<u8>),
    /// A `set`, its items in the pickle's order (items must be hashable).
    Set(Vec<Object>),
    /// A `frozenset`, its items in the pickle's order (items must be hashable).
    FrozenSet(Vec<Object>),
    /// A `collections.OrderedDict`, in order.
    OrderedDict(Vec<(Object, Object)>),
    /// A `collections.Counter`: its keys and counts, in insertion order.
    Counter(Vec<(Object, Object)>),
    /// A `collections.deque`: its items and `maxlen`.
    Deque(Box<Deque>),
    /// A `collections.defaultdict` whose factory is `None` or a builtin class.
    DefaultDict(Box<DefaultDict>),
    /// A NumPy masked array (`np.ma.MaskedArray`): its data, mask and fill value.
    MaskedArray(Box<MaskedArray>),
    /// A `datetime.date`.
    Date(Date),
    /// A `datetime.time`.
    Time(Box<Time>),
    /// A `datetime.datetime`.
    DateTime(Box<DateTime>),
    /// A `datetime.timedelta`.
    TimeDelta(TimeDelta),
    /// A `datetime.timezone`.
    TimeZone(Box<TimeZone>),
    /// A `zoneinfo.ZoneInfo`, by its key.
    ZoneInfo(Box<ZoneInfo>),
    /// A `decimal.Decimal`, as the text `str()` gives and `Decimal(text)` reads
    /// (`"1.50"`, `"-Infinity"`, `"NaN"`, `"sNaN"`, `"1E+999999"`).
    Decimal(String),
    /// A `fractions.Fraction`: numerator and denominator, each an [`Object::Int`] or
    /// [`Object::BigInt`], in lowest terms with a positive denominator.
    Fraction(Box<(Object, Object)>),
    /// A `uuid.UUID`, as its 128-bit integer (`UUID(int=...)`).
    Uuid(u128),
    /// A `pathlib` path: its class and its parts (`('/', 'a', 'b')` for `/a/b`).
    Path(PathFlavor, Vec<String>),
    /// A `range(start, stop, step)`: three [`Object::Int`]s or [`Object::BigInt`]s.
    Range(Box<[Object; 3]>),
    /// A `slice(start, stop, step)`: any three values (`None` where omitted).
    Slice(Box<[Object; 3]>),
    /// A class itself, not an instance of it (`range` in NumPy's own Python 2 test file
    /// `py2-np0-objarr.npy`): its module and name as Python 3 names them
    /// (`("builtins", "range")`). Only the standard library classes listed above are read.
    Type(String, String),
}

impl Object {
    /// The name of the Python type: `"NoneType"`, `"bool"`, `"int"`, `"float"`,
    /// `"complex"`, `"str"`, `"bytes"`, `"list"`, `"tuple"` or `"dict"`.
    pub fn python_type(&self) -> &'static str {
        match self {
            Object::None => "NoneType",
            Object::Bool(_) => "bool",
            Object::Int(_) | Object::BigInt(_) => "int",
            Object::Float(_) => "float",
            Object::Complex(..) => "complex",
            Object::Str(_) => "str",
            Object::Bytes(_) => "bytes",
            Object::List(_) => "list",
            Object::Tuple(_) => "tuple",
            Object::Dict(_) => "dict",
            Object::Array(_) | Object::ObjectArray(_) => "numpy.ndarray",
            Object::Scalar(a) => ndrepr::scalar_type_name(a.dtype()),
            Object::ByteArray(_) => "bytearray",
            Object::Set(_) => "set",
            Object::FrozenSet(_) => "frozenset",
            Object::OrderedDict(_) => "collections.OrderedDict",
            Object::Counter(_) => "collections.Counter",
            Object::Date(_) => "datetime.date",
            Object::Time(_) => "datetime.time",
            Object::DateTime(_) => "datetime.datetime",
            Object::TimeDelta(_) => "datetime.timedelta",
            Object::TimeZone(_) => "datetime.timezone",
            Object::ZoneInfo(_) => "zoneinfo.ZoneInfo",
            Object::Deque(_) => "collections.deque",
            Object::DefaultDict(_) => "collections.defaultdict",
            Object::MaskedArray(_) => "numpy.ma.MaskedArray",
            Object::Decimal(_) => "decimal.Decimal",
            Object::Fraction(_) => "fractions.Fraction",
            Object::Uuid(_) => "uuid.UUID",
            Object::Path(flavor, _) => match flavor {
                PathFlavor::PurePosix => "pathlib.PurePosixPath",
                PathFlavor::PureWindows => "pathlib.PureWindowsPath",
                PathFlavor::Posix => "pathlib.PosixPath",
                PathFlavor::Windows => "pathlib.WindowsPath",
            },
            Object::Range(_) => "range",
            Object::Slice(_) => "slice",
            Object::Type(..) => "type",
        }
    }

    /// Python's `repr()` of the value (also what [`Display`](fmt::Display) writes).
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::Object;
    ///
    /// assert_eq!(Object::Float(1e16).repr(), "1e+16");
    /// assert_eq!(Object::Complex(-0.0, 1.0).repr(), "(-0+1j)");
    /// assert_eq!(Object::Tuple(vec![Object::from("it's")]).repr(), r#"("it's",)"#);
    /// assert_eq!(Object::Bytes(vec![0, b'a']).repr(), r"b'\x00a'");
    /// ```
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            Object::None => out.push_str("None"),
            Object::Bool(true) => out.push_str("True"),
            Object::Bool(false) => out.push_str("False"),
            Object::Int(v) => out.push_str(&v.to_string()),
            Object::BigInt(t) => out.push_str(t),
            Object::Float(x) => repr::write_float(*x, out),
            Object::Complex(re, im) => repr::write_complex(*re, *im, out),
            Object::Str(s) => repr::write_str(s, out),
            Object::Bytes(b) => repr::write_bytes(b, out),
            Object::List(v) => repr::write_list(v, Object::write_repr, out),
            Object::Tuple(v) => repr::write_tuple(v, Object::write_repr, out),
            Object::Dict(entries) => repr::write_dict(entries, Object::write_repr, out),
            _ => self.write_repr_beyond(out),
        }
    }

    /// `repr` of the values beyond plain ones: apart, so that the recursion over nested
    /// lists keeps [`Object::write_repr`]'s frame small (a debug build gives every arm's
    /// locals one frame).
    #[inline(never)]
    fn write_repr_beyond(&self, out: &mut String) {
        match self {
            Object::Array(a) => ndrepr::write_array(a, out),
            Object::ObjectArray(a) => ndrepr::write_object_array(a, out),
            Object::Scalar(a) => ndrepr::write_scalar(a, out),
            Object::ByteArray(b) => {
                out.push_str("bytearray(");
                repr::write_bytes(b, out);
                out.push(')');
            }
            Object::Set(items) | Object::FrozenSet(items) => {
                let frozen = matches!(self, Object::FrozenSet(_));
                match (frozen, items.is_empty()) {
                    (false, true) => out.push_str("set()"),
                    (true, true) => out.push_str("frozenset()"),
                    _ => {
                        if frozen {
                            out.push_str("frozenset(");
                        }
                        repr::write_set(items, Object::write_repr, out);
                        if frozen {
                            out.push(')');
                        }
                    }
                }
            }
            Object::OrderedDict(entries) => {
                out.push_str("OrderedDict(");
                if !entries.is_empty() {
                    let pairs: Vec<Object> =
                        entries.iter().map(|(k, v)| Object::Tuple(vec![k.clone(), v.clone()])).collect();
                    repr::write_list(&pairs, Object::write_repr, out);
                }
                out.push(')');
            }
            Object::Counter(entries) => {
                // Counter's repr lists the most common first (a stable sort by count).
                out.push_str("Counter(");
                if !entries.is_empty() {
                    let mut sorted: Vec<(Object, Object)> = entries.clone();
                    sorted.sort_by(|(_, a), (_, b)| counter_order(b, a));
                    repr::write_dict(&sorted, Object::write_repr, out);
                }
                out.push(')');
            }
            Object::Date(d) => out.push_str(&d.to_string()),
            Object::Time(t) => out.push_str(&t.to_string()),
            Object::DateTime(dt) => out.push_str(&dt.to_string()),
            Object::TimeDelta(td) => out.push_str(&td.to_string()),
            Object::TimeZone(tz) => out.push_str(&tz.to_string()),
            Object::ZoneInfo(zone) => out.push_str(&zone.to_string()),
            Object::Deque(d) => {
                out.push_str("deque(");
                repr::write_list(&d.items, Object::write_repr, out);
                if let Some(n) = d.maxlen {
                    out.push_str(&format!(", maxlen={n}"));
                }
                out.push(')');
            }
            Object::DefaultDict(d) => {
                out.push_str("defaultdict(");
                d.factory.write_repr(out);
                out.push_str(", ");
                repr::write_dict(&d.entries, Object::write_repr, out);
                out.push(')');
            }
            Object::MaskedArray(m) => ndrepr::write_masked_array(m, out),
            Object::Decimal(text) => {
                out.push_str("Decimal(");
                repr::write_str(text, out);
                out.push(')');
            }
            Object::Fraction(parts) => {
                out.push_str("Fraction(");
                parts.0.write_repr(out);
                out.push_str(", ");
                parts.1.write_repr(out);
                out.push(')');
            }
            Object::Uuid(v) => {
                let h = format!("{v:032x}");
                out.push_str(&format!("UUID('{}-{}-{}-{}-{}')", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]));
            }
            Object::Path(flavor, parts) => {
                out.push_str(flavor.class_name());
                out.push('(');
                // Python's repr is of `as_posix()`: a Windows path with forward slashes.
                let text = flavor.join(parts);
                let posix = if matches!(flavor, PathFlavor::PureWindows | PathFlavor::Windows) {
                    text.replace('\\', "/")
                } else {
                    text
                };
                repr::write_str(&posix, out);
                out.push(')');
            }
            Object::Range(r) => {
                out.push_str("range(");
                r[0].write_repr(out);
                out.push_str(", ");
                r[1].write_repr(out);
                if r[2] != Object::Int(1) {
                    out.push_str(", ");
                    r[2].write_repr(out);
                }
                out.push(')');
            }
            Object::Slice(s) => {
                out.push_str("slice(");
                s[0].write_repr(out);
                out.push_str(", ");
                s[1].write_repr(out);
                out.push_str(", ");
                s[2].write_repr(out);
                out.push(')');
            }
            Object::Type(module, name) => {
                out.push_str("<class '");
                if module != "builtins" {
                    out.push_str(module);
                    out.push('.');
                }
                out.push_str(name);
                out.push_str("'>");
            }
            _ => unreachable!("plain values are written by write_repr"),
        }
    }

    /// True for `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, Object::None)
    }

    /// The value of a `bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Object::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value of an `int` that fits `i64` (not of a `bool`).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Object::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The value of a `float` (not of an `int`).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Object::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// The parts of a `complex`: `(re, im)`.
    pub fn as_complex(&self) -> Option<(f64, f64)> {
        match self {
            Object::Complex(re, im) => Some((*re, *im)),
            _ => None,
        }
    }

    /// The text of a `str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Object::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a `bytes`.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Object::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The items of a `list` or a `tuple`.
    pub fn as_slice(&self) -> Option<&[Object]> {
        match self {
            Object::List(v) | Object::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// The entries of a `dict`.
    pub fn as_dict(&self) -> Option<&[(Object, Object)]> {
        match self {
            Object::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The value of the `dict` entry whose key equals `key` (the last one, as in a
    /// Python dict built from these entries).
    pub fn get(&self, key: &Object) -> Option<&Object> {
        self.as_dict()?.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A short `repr` for messages.
    fn snippet(&self) -> String {
        let r = self.repr();
        match r.char_indices().nth(60) {
            Some((i, _)) => format!("{}...", &r[..i]),
            None => r,
        }
    }
}

/// How `Counter.most_common` orders two counts: larger first; counts that are not both
/// ints keep their order.
fn counter_order(a: &Object, b: &Object) -> std::cmp::Ordering {
    match (a, b) {
        (Object::Int(a), Object::Int(b)) => a.cmp(b),
        (Object::Float(a), Object::Float(b)) => a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal),
        (Object::Int(a), Object::Float(b)) => (*a as f64).partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal),
        (Object::Float(a), Object::Int(b)) => a.partial_cmp(&(*b as f64)).unwrap_or(std::cmp::Ordering::Equal),
        _ => std::cmp::Ordering::Equal,
    }
}

impl fmt::Display for Object {
    /// Writes Python's `repr()` of the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl From<bool> for Object {
    fn from(v: bool) -> Self {
        Object::Bool(v)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Object {
            fn from(v: $t) -> Self {
                Object::Int(i64::from(v))
            }
        }
    )*};
}

from_int!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! from_wide_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Object {
            /// An [`Object::Int`], or an [`Object::BigInt`] outside `i64`.
            fn from(v: $t) -> Self {
                match i64::try_from(v) {
                    Ok(i) => Object::Int(i),
                    Err(_) => Object::BigInt(v.to_string()),
                }
            }
        }
    )*};
}

from_wide_int!(u64, i128, u128, isize, usize);

impl From<f64> for Object {
    fn from(v: f64) -> Self {
        Object::Float(v)
    }
}

impl From<f32> for Object {
    fn from(v: f32) -> Self {
        Object::Float(f64::from(v))
    }
}

impl From<&str> for Object {
    fn from(v: &str) -> Self {
        Object::Str(v.to_string())
    }
}

impl From<String> for Object {
    fn from(v: String) -> Self {
        Object::Str(v)
    }
}

impl From<&String> for Object {
    fn from(v: &String) -> Self {
        Object::Str(v.clone())
    }
}

impl From<&[u8]> for Object {
    /// A `bytes`.
    fn from(v: &[u8]) -> Self {
        Object::Bytes(v.to_vec())
    }
}

impl<T: Into<Object>> From<Option<T>> for Object {
    /// `None`, or the value.
    fn from(v: Option<T>) -> Self {
        v.map_or(Object::None, Into::into)
    }
}

impl<T: Into<Object>> From<Vec<T>> for Object {
    /// A `list` (for `bytes`, use [`Object::Bytes`] or `From<&[u8]>`).
    fn from(v: Vec<T>) -> Self {
        Object::List(v.into_iter().map(Into::into).collect())
    }
}

/// A Rust type that object array elements are read into: [`Object`] itself, `String`
/// (from `str`), `Option<T>` (`None`, or a `T`), `i64`, `f64`, `bool`, `Vec<u8>` (from
/// `bytes`). Implement it to read elements as a type of your own with
/// [`NpyReader::read_object_vec`](crate::NpyReader::read_object_vec).
///
/// # Examples
/// ```
/// use npy_core::object::{FromObject, Object};
///
/// assert_eq!(Option::<String>::from_object(Object::None), Ok(None));
/// assert_eq!(String::from_object(Object::Int(3)), Err(Object::Int(3)));
/// assert_eq!(<Option<String>>::expected(), "str or None");
/// ```
pub trait FromObject: Sized {
    /// What the type accepts, in Python's words, for messages (`"str"`, `"str or None"`).
    fn expected() -> String;

    /// Converts one element.
    ///
    /// # Errors
    /// The element itself when it is not of an accepted type.
    fn from_object(obj: Object) -> std::result::Result<Self, Object>;
}

impl FromObject for Object {
    fn expected() -> String {
        "any value".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        Ok(obj)
    }
}

impl FromObject for String {
    fn expected() -> String {
        "str".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::Str(s) => Ok(s),
            other => Err(other),
        }
    }
}

impl<T: FromObject> FromObject for Option<T> {
    fn expected() -> String {
        format!("{} or None", T::expected())
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::None => Ok(None),
            other => T::from_object(other).map(Some),
        }
    }
}

impl FromObject for i64 {
    fn expected() -> String {
        "int (within i64)".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::Int(v) => Ok(v),
            other => Err(other),
        }
    }
}

impl FromObject for f64 {
    fn expected() -> String {
        "float".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::Float(x) => Ok(x),
            other => Err(other),
        }
    }
}

impl FromObject for bool {
    fn expected() -> String {
        "bool".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::Bool(b) => Ok(b),
            other => Err(other),
        }
    }
}

impl FromObject for Vec<u8> {
    fn expected() -> String {
        "bytes".to_string()
    }

    fn from_object(obj: Object) -> std::result::Result<Self, Object> {
        match obj {
            Object::Bytes(b) => Ok(b),
            other => Err(other),
        }
    }
}

/// Converts elements (storage order) to `T`; the error names the first that does not fit.
pub(crate) fn convert<T: FromObject>(items: Vec<Object>) -> Result<Vec<T>> {
    items
        .into_iter()
        .enumerate()
        .map(|(index, obj)| {
            T::from_object(obj).map_err(|obj| {
                let reason =
                    format!("the element is {} {}, not {}", article(obj.python_type()), obj.snippet(), T::expected());
                ErrorKind::InvalidValue { index, reason }.into()
            })
        })
        .collect()
}

fn article(type_name: &str) -> String {
    let vowel = type_name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {type_name}", if vowel { "an" } else { "a" })
}

/// The object dtype `|O`.
pub(crate) fn object_dtype() -> DType {
    DType::Scalar(Scalar::new(ScalarType::Object, ByteOrder::NotApplicable))
}

/// NumPy 2's `StringDType` (`np.dtypes.StringDType(na_object=..., coerce=...)`), which an
/// object array's pickle names when the array had it ([`ObjectArray::string_dtype`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StringDType {
    /// Whether NumPy turns values that are not `str` into `str` as they are stored.
    pub coerce: bool,
    /// The missing-value sentinel, if the dtype has one: `None`, a float (NaN) or a `str`.
    pub na_object: Option<Object>,
}

/// A NumPy masked array (`np.ma.MaskedArray`, pickled by `numpy.ma.core._mareconstruct`
/// and its state): its data, its mask and the fill value it was given.
///
/// # Examples
/// ```
/// use npy_core::object::{MaskedArray, Object};
/// use npy_core::dtype::{DType, ScalarType};
/// use npy_core::header::Header;
/// use npy_core::DynArray;
///
/// let header = |ty| Header { dtype: DType::native(ty), fortran_order: false, shape: vec![3] };
/// let data = DynArray::new(header(ScalarType::Int(8)), [1i64, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect())?;
/// let mask = DynArray::new(header(ScalarType::Bool), vec![0, 1, 0])?;
/// let m = MaskedArray { data: Object::Array(Box::new(data)), mask, fill_value: None };
/// assert_eq!(m.masked(), vec![false, true, false]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MaskedArray {
    /// The data: an [`Object::Array`] (any dtype but object) or an [`Object::ObjectArray`].
    pub data: Object,
    /// The mask: of the data's shape and order, dtype `|b1` (for a record dtype, a record
    /// of `|b1` fields, one per field, as `np.ma.make_mask_descr` makes it); true where a
    /// value is masked. An array saved without a mask (`nomask`) has one of all false.
    pub mask: DynArray,
    /// The fill value the array held when pickled, as a 0-d array ([`Object::Array`] or
    /// [`Object::ObjectArray`]; of the data's dtype, or what NumPy made of the value
    /// given); `None` when it had none yet (NumPy then sets its default for the dtype).
    pub fill_value: Option<Object>,
}

impl MaskedArray {
    /// Whether each element (storage order) has any part masked.
    pub fn masked(&self) -> Vec<bool> {
        let per = self.mask.dtype().itemsize().max(1);
        self.mask.data().chunks(per).map(|c| c.iter().any(|&b| b != 0)).collect()
    }
}

/// An object array as `np.save` pickled it: its values ([`Array<Object>`]), and the
/// [`StringDType`] it had when it was a `StringDType` array rather than one of dtype
/// object (whose values are then each a `str` or the dtype's `na_object`).
///
/// # Examples
/// ```
/// use npy_core::object::{Object, ObjectArray};
/// use npy_core::prelude::*;
///
/// let file = vec![Object::from("a"), Object::None].write_npy_to(Vec::new())?;
/// let read = ObjectArray::read_npy_from(&file[..])?;
/// assert_eq!(read.string_dtype(), None); // dtype object
/// assert_eq!(read.array().as_slice(), [Object::from("a"), Object::None]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectArray {
    array: Array<Object>,
    string_dtype: Option<StringDType>,
}

impl ObjectArray {
    /// The values, in the header's shape and order.
    pub fn array(&self) -> &Array<Object> {
        &self.array
    }

    /// The values, consuming the array.
    pub fn into_array(self) -> Array<Object> {
        self.array
    }

    /// The `StringDType` the array had in NumPy, or `None` for dtype object.
    pub fn string_dtype(&self) -> Option<&StringDType> {
        self.string_dtype.as_ref()
    }

    /// The values and the `StringDType`.
    pub fn into_parts(self) -> (Array<Object>, Option<StringDType>) {
        (self.array, self.string_dtype)
    }
}

/// Puts an object array decoded from its pickle (values in C order) into storage order
/// for `fortran_order`, after checking its shape against `header_shape` if given.
pub(crate) fn into_array(
    decoded: pickle::Decoded,
    header_shape: Option<&[usize]>,
    fortran_order: bool,
) -> Result<ObjectArray> {
    if let Some(want) = header_shape {
        if want != decoded.shape.as_slice() {
            return Err(Error::pickle(
                decoded.at,
                format!(
                    "the pickle's array has shape {}, but the header says {}",
                    shape_repr(&decoded.shape),
                    shape_repr(want)
                ),
            ));
        }
    }
    let (shape, string_dtype) = (decoded.shape, decoded.string_dtype);
    let mut items = decoded.items;
    if fortran_order && shape.len() > 1 {
        let storage = crate::shape::c_order(&shape, true);
        let mut out: Vec<Object> = std::iter::repeat_with(Object::default).take(items.len()).collect();
        for (c, item) in items.iter_mut().enumerate() {
            out[storage(c)] = std::mem::take(item);
        }
        items = out;
    }
    Ok(ObjectArray { array: Array::from_parts(items, shape, fortran_order)?, string_dtype })
}

/// Decodes the pickle of an object array on its own (what `pickle.dumps(arr)` gives for an
/// object array, protocols 0 to 5, or the data of a `.npy` file after its header): its
/// shape, and its values in the order the pickle's `is_fortran` flag says.
///
/// # Errors
/// [`ErrorKind::Pickle`] for anything but an object array of the values the module lists (see the
/// module), a truncated or malformed pickle, bytes after its `STOP`, or one over the
/// memory budget (the default of [`ReadOptions::max_object_bytes`]).
///
/// # Examples
/// ```
/// use npy_core::object::{from_pickle, to_pickle, Object};
/// use npy_core::prelude::*;
/// use npy_core::{ErrorKind, ReadOptions};
///
/// let a = Array::from_shape_vec(vec![2], vec![Object::from("x"), Object::Int(2)])?;
/// let pickle = to_pickle(&a)?;
/// assert_eq!(from_pickle(&pickle)?, a);
/// // A pickle of os.system('true'): refused, never run.
/// let evil = b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85\x94R\x94.";
/// let e = from_pickle(evil).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Pickle { offset: 25, .. }), "{e}");
/// assert!(e.to_string().contains("'os.system'"));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn from_pickle(bytes: &[u8]) -> Result<Array<Object>> {
    from_pickle_with(bytes, &ReadOptions::new())
}

/// As [`from_pickle`], with options: [`ReadOptions::max_object_bytes`] bounds the memory
/// the values take, [`ReadOptions::python2_strings`] says what Python 2 strings become.
///
/// # Errors
/// As [`from_pickle`].
pub fn from_pickle_with(bytes: &[u8], options: &ReadOptions) -> Result<Array<Object>> {
    let decoded = pickle::decode(bytes, 0, Some(bytes.len() as u64), pickle::Settings::of(options))?;
    let fortran = decoded.fortran;
    into_array(decoded, None, fortran).map(ObjectArray::into_array)
}

/// The pickle `np.save` writes after the header of an object array (protocol 4): what
/// `pickle.loads` turns into the same array (dtype object, shape, order, values). Each
/// value is written as CPython pickles the Python value: datetimes, `Decimal`,
/// `Fraction`, `UUID`, sets, `OrderedDict`, `Counter`, paths, `range`, `slice` and
/// classes by their `__reduce_ex__(4)`, nested ndarrays and object arrays by
/// `ndarray.__reduce__`, NumPy scalars as `scalar(dtype, bytes)` (see the module).
///
/// # Errors
/// [`ErrorKind::InvalidValue`] naming the element (storage index) that cannot be written:
/// nesting deeper than [`MAX_DEPTH`], a dict key or set item Python cannot hash, a
/// `BigInt` whose text is not an int or has more than 4300 digits, a value Python would
/// refuse to build (an invalid date, time, timedelta or timezone offset, a `Decimal` text
/// `Decimal()` does not read, a `Fraction` of non-ints or over zero, a `range` of non-ints
/// or of step zero, a class outside the standard types object arrays hold, a `Scalar` that
/// is not 0-d or is of a str, bytes or subarray dtype).
///
/// # Examples
/// ```
/// use npy_core::object::{to_pickle, Date, Object};
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![1], vec![Object::None])?;
/// let p = to_pickle(&a)?;
/// assert!(p.starts_with(b"\x80\x04\x95"));
/// assert!(p.ends_with(b"N\x61t\x94b."));
/// // datetime.date(2020, 1, 2): the class called with its state bytes.
/// let d = Array::from_shape_vec(vec![1], vec![Object::Date(Date { year: 2020, month: 1, day: 2 })])?;
/// let p = to_pickle(&d)?;
/// let date = b"\x8c\x04date\x94\x93\x94C\x04\x07\xe4\x01\x02\x94\x85\x94R";
/// assert!(p.windows(date.len()).any(|w| w == date));
/// let bad = Array::from_shape_vec(vec![1], vec![Object::Date(Date { year: 2021, month: 2, day: 29 })])?;
/// assert!(to_pickle(&bad).unwrap_err().to_string().contains("not a valid date"));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_pickle(array: &Array<Object>) -> Result<Vec<u8>> {
    pickle::encode_array(array.shape(), array.fortran_order(), array.as_slice())
}

/// The header and pickle of an object array of `shape` whose elements are `data`
/// (storage order).
pub(crate) fn encode_npy<T: Encode>(shape: &[usize], fortran_order: bool, data: &[T]) -> Result<(Header, Vec<u8>)> {
    let header = Header { dtype: object_dtype(), fortran_order, shape: shape.to_vec() };
    let count = header.element_count()?;
    if count != data.len() {
        return Err(Error::usage(format!(
            "{} elements given for shape {} ({count} needed)",
            data.len(),
            shape_repr(shape)
        )));
    }
    let pickle = pickle::encode_array(shape, fortran_order, data)?;
    Ok((header, pickle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_matches_python() {
        // Expected values printed by Python 3.11's repr().
        let cases: Vec<(Object, &str)> = vec![
            (Object::None, "None"),
            (Object::Bool(true), "True"),
            (Object::Int(-5), "-5"),
            (Object::BigInt("-123456789012345678901234567890".into()), "-123456789012345678901234567890"),
            (Object::Float(-0.0), "-0.0"),
            (Object::Float(f64::NAN), "nan"),
            (Object::Float(f64::NEG_INFINITY), "-inf"),
            (Object::Float(1e-5), "1e-05"),
            (Object::Complex(1.0, 2.0), "(1+2j)"),
            (Object::Complex(0.0, 1.0), "1j"),
            (Object::Complex(-0.0, 1.0), "(-0+1j)"),
            (Object::Complex(0.0, -0.0), "-0j"),
            (Object::Complex(1.0, -0.0), "(1-0j)"),
            (Object::Complex(1.0, f64::NAN), "(1+nanj)"),
            (Object::Complex(f64::INFINITY, f64::NEG_INFINITY), "(inf-infj)"),
            (Object::Complex(1.5, 1e16), "(1.5+1e+16j)"),
            (Object::Complex(-0.0, -0.0), "(-0-0j)"),
            (Object::Complex(1e-5, 1e300), "(1e-05+1e+300j)"),
            (Object::Str("it's \"x\"\n".into()), r#"'it\'s "x"\n'"#),
            (Object::Str("é\u{200b}".into()), r"'é\u200b'"),
            (Object::Bytes(b"a'\xff".to_vec()), r#"b"a'\xff""#),
            (Object::List(vec![]), "[]"),
            (Object::Tuple(vec![]), "()"),
            (Object::Tuple(vec![Object::Int(1)]), "(1,)"),
            (Object::Dict(vec![(Object::Int(1), Object::List(vec![Object::None]))]), "{1: [None]}"),
        ];
        for (obj, want) in cases {
            assert_eq!(obj.repr(), want, "{obj:?}");
            assert_eq!(obj.to_string(), want);
        }
    }

    #[test]
    fn conversions_and_accessors() {
        assert_eq!(Object::from(7u8), Object::Int(7));
        assert_eq!(Object::from(-7i128), Object::Int(-7));
        assert_eq!(Object::from(i128::MIN), Object::BigInt(i128::MIN.to_string()));
        assert_eq!(Object::from(vec!["a", "b"]), Object::List(vec!["a".into(), "b".into()]));
        assert_eq!(Object::from(&b"xy"[..]).as_bytes(), Some(&b"xy"[..]));
        assert_eq!(Object::from(Some(1.5)).as_f64(), Some(1.5));
        assert_eq!(Object::Int(1).as_f64(), None);
        assert_eq!(Object::Bool(true).as_i64(), None);
        let d = Object::Dict(vec![("a".into(), 1.into()), ("a".into(), 2.into())]);
        assert_eq!(d.get(&"a".into()), Some(&Object::Int(2)));
        assert_eq!(d.python_type(), "dict");
        assert_eq!(Object::Tuple(vec![1.into()]).as_slice().map(<[Object]>::len), Some(1));
    }

    #[test]
    fn typed_conversion_names_the_element() {
        let items = vec![Object::from("a"), Object::None, Object::Int(3)];
        let e = convert::<Option<String>>(items.clone()).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 2, .. }), "{e}");
        assert_eq!(e.to_string(), "invalid value at element 2: the element is an int 3, not str or None");
        let e = convert::<String>(items).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
        assert!(e.to_string().contains("a NoneType None, not str"), "{e}");
    }

    #[test]
    fn fortran_storage_follows_the_header() {
        let decoded = pickle::Decoded {
            shape: vec![2, 3],
            fortran: true,
            items: (0..6).map(Object::from).collect(),
            string_dtype: None,
            at: 0,
        };
        let a = into_array(decoded, Some(&[2, 3]), true).unwrap().into_array();
        // C order 0 1 2 / 3 4 5 stored column by column.
        assert_eq!(a.as_slice(), [0, 3, 1, 4, 2, 5].map(Object::from));
        assert_eq!(a.get(&[1, 2]), Some(&Object::Int(5)));
        let decoded = pickle::Decoded {
            shape: vec![2, 3],
            fortran: false,
            items: vec![Object::None; 6],
            string_dtype: None,
            at: 9,
        };
        let e = into_array(decoded, Some(&[3, 2]), false).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Pickle { offset: 9, .. }), "{e}");
    }
}
