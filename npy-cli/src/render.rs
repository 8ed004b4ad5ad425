//! Values as `npy dump` and `npy head` write them: one element's bytes walked along its
//! dtype, each leaf decoded by the scalar codec (`npy_core::scalar`) and written as NumPy
//! shows it (the codec's `Display`, NumPy's `str()` of the scalar).
//!
//! JSON follows `tolist()`: records as objects (fields in order), subarrays as nested
//! lists (C order), bool `true`/`false`, integers as numbers, floats as numbers in NumPy's
//! digits (`NaN`/`Infinity`/`-Infinity` as Python's `json` writes them, or per
//! [`NonFinite`]), complex as `[re, im]`, `S` and `V` as the text CSV shows (`"b'ab'"`),
//! `U` as a string, `datetime64` as its ISO text and NaT as `null`, `timedelta64` as its
//! count of units and NaT as `null`. Cells (CSV, `head`) are the `Display` text of each
//! leaf, named `a.b`, `samples[3]`, `grid[1][0]`.
//!
//! An object array's elements ([`json_object`]) follow `tolist()` too: `None` as `null`,
//! numbers and text as above, lists, tuples, sets, frozensets and deques as lists, dicts,
//! `OrderedDict`s, `Counter`s and `defaultdict`s as objects (lists of `[key, value]` pairs
//! when a key is not a `str`), a masked array as its data with `null` where masked (as
//! `tolist()` gives it), an ndarray (a ragged array's rows, a saved dict's arrays) as nested
//! lists of its elements in C order as above (records as objects), a NumPy scalar as
//! its value above (`np.datetime64` ISO text, NaT `null`), `date`/`time`/`datetime` as
//! `isoformat()` text (refused for a time in a `zoneinfo` zone, whose offset only the zone
//! database says), `timedelta`, `timezone`, `ZoneInfo` (its key), `Decimal`, `Fraction`,
//! `UUID` and paths as their `str()` text, `bytes`, `bytearray`, `range`, `slice` and classes as their
//! `repr` text. Their cells are Python's `str()` of the element ([`Object::str`]):
//! `[0 1 2]` for an ndarray, as NumPy prints it.

use std::fmt::Write as _;

use npy_core::dtype::{DType, Scalar, ScalarType, TimeUnit};
use npy_core::scalar::{self, ScalarError, Value};
use npy_core::{DynArray, Error, ErrorKind, Object};

use crate::records::{c_index, At, RowShape};

/// How JSON shows NaN and infinities, which JSON itself cannot write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NonFinite {
    /// `NaN`, `Infinity`, `-Infinity`: what Python's `json` writes and reads (and
    /// JavaScript's `JSON5`, Go's and Rust's lenient parsers), not strict JSON.
    #[default]
    Python,
    /// `null`.
    Null,
    /// The strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
    Strings,
}

/// Most empty lists written for a value with a zero-length dimension (`tolist()` of
/// `np.zeros((10**9, 0))` is 10⁹ empty lists): beyond it, an error rather than
/// gigabytes of `[]`.
const MAX_EMPTY_LISTS: usize = 1 << 24;

/// A leaf that cannot be shown: the field it is in (`a.b[2]`, empty for a scalar
/// element) and why.
#[derive(Debug)]
pub struct Bad {
    field: String,
    reason: String,
}

impl Bad {
    fn new(reason: impl Into<String>) -> Bad {
        Bad { field: String::new(), reason: reason.into() }
    }

    /// The same problem, one level up: inside field `name` (a record field) or at `[i]`.
    fn within(mut self, segment: &str) -> Bad {
        let sep = if self.field.is_empty() || self.field.starts_with('[') { "" } else { "." };
        self.field = format!("{segment}{sep}{}", self.field);
        self
    }

    /// The error of the element `at` of an array of `layout`: its index in storage order,
    /// and for an N-d array its NumPy index, then the field.
    pub fn at(self, at: At, layout: &RowShape) -> Error {
        let mut reason = String::new();
        if !layout.row_dims.is_empty() {
            let mut rest = vec![0; layout.row_dims.len()];
            c_index(&layout.row_dims, at.k, &mut rest);
            let index: Vec<String> = std::iter::once(at.row).chain(rest).map(|i| i.to_string()).collect();
            let _ = write!(reason, "index ({}), ", index.join(", "));
        }
        let _ = write!(reason, "{self}");
        ErrorKind::InvalidValue { index: at.storage, reason }.into()
    }
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.field.is_empty() {
            write!(f, "field '{}': ", self.field)?;
        }
        f.write_str(&self.reason)
    }
}

impl From<ScalarError> for Bad {
    fn from(e: ScalarError) -> Bad {
        let reason = match e {
            ScalarError::CodePoint { unit, .. } if is_surrogate(unit) => {
                format!("{e}: a surrogate, which UTF-8 text cannot hold (JSON output escapes it)")
            }
            ScalarError::CodePoint { .. } => format!("{e} (NumPy cannot make a str of it either)"),
            _ => e.to_string(),
        };
        Bad::new(reason)
    }
}

/// The bytes of field or subarray item at `offset`, `len` long.
fn part(bytes: &[u8], offset: usize, len: usize) -> Result<&[u8], Bad> {
    bytes.get(offset..offset + len).ok_or_else(|| Bad::new("the element is shorter than its dtype"))
}

/// Calls `each` with every leaf of an element of `dtype` (fields in order, subarray items
/// in C order) and its bytes; errors say which field.
fn leaves<'b>(
    dtype: &DType,
    bytes: &'b [u8],
    each: &mut impl FnMut(Scalar, &'b [u8]) -> Result<(), Bad>,
) -> Result<(), Bad> {
    match dtype {
        DType::Scalar(s) => each(*s, part(bytes, 0, s.itemsize())?),
        DType::Record(r) => {
            for f in r.fields() {
                let inner = part(bytes, f.offset, f.dtype.itemsize())?;
                leaves(&f.dtype, inner, each).map_err(|e| e.within(&f.name))?;
            }
            Ok(())
        }
        DType::SubArray(a) => {
            let (base, shape) = (a.flat_base(), a.flat_shape());
            let size = base.itemsize();
            let mut index = vec![0; shape.len()];
            for i in 0..shape.iter().product::<usize>() {
                leaves(base, part(bytes, i * size, size)?, each).map_err(|e| {
                    c_index(&shape, i, &mut index);
                    e.within(&brackets(&index))
                })?;
            }
            Ok(())
        }
    }
}

/// Pushes `cell` onto `out`, padded with spaces to `width` characters: on the left
/// (right-aligned) or on the right. By hand, as a cell can be wider than `format!`'s
/// widths go (65535: a descr of thousands of fields, a `<U100000` value).
pub fn push_padded(out: &mut String, cell: &str, width: usize, right_aligned: bool) {
    let pad = width.saturating_sub(cell.chars().count());
    if !right_aligned {
        out.push_str(cell);
    }
    out.extend(std::iter::repeat_n(' ', pad));
    if right_aligned {
        out.push_str(cell);
    }
}

/// `[1][0]` for index `(1, 0)`.
pub fn brackets(index: &[usize]) -> String {
    index.iter().map(|i| format!("[{i}]")).collect()
}

/// Calls `each` with the name of every leaf of `dtype` after `prefix`: `a.b`,
/// `samples[3]`, `grid[1][0]`, or `prefix` alone for a scalar.
pub fn leaf_names(dtype: &DType, prefix: &mut String, each: &mut impl FnMut(&str)) {
    let len = prefix.len();
    match dtype {
        DType::Scalar(_) => each(prefix),
        DType::Record(r) => {
            for f in r.fields() {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(&f.name);
                leaf_names(&f.dtype, prefix, each);
                prefix.truncate(len);
            }
        }
        DType::SubArray(a) => {
            let shape = a.flat_shape();
            let mut index = vec![0; shape.len()];
            for i in 0..shape.iter().product::<usize>() {
                c_index(&shape, i, &mut index);
                prefix.push_str(&brackets(&index));
                leaf_names(a.flat_base(), prefix, each);
                prefix.truncate(len);
            }
        }
    }
}

/// Calls `each` with the name of every column of a row of `layout` (the cells of a CSV
/// row or a table): the leaves of each element of the row, behind the element's index
/// (`[1].x`, `[2]`) in an N-d array's row; `value` for a row that is one plain value.
pub fn column_names(layout: &RowShape, each: &mut impl FnMut(String)) {
    column_names_upto(layout, layout.row_len(), each);
}

/// As [`column_names`], for the first `elements` elements of a row only.
pub fn column_names_upto(layout: &RowShape, elements: usize, each: &mut impl FnMut(String)) {
    let mut rest = vec![0; layout.row_dims.len()];
    let mut named = |name: &str| each(if name.is_empty() { "value".to_string() } else { name.to_string() });
    for k in 0..layout.row_len().min(elements) {
        c_index(&layout.row_dims, k, &mut rest);
        let mut prefix = brackets(&rest);
        match &layout.dtype {
            Some(dtype) => leaf_names(dtype, &mut prefix, &mut named),
            None => named(&prefix),
        }
    }
}

/// The scalar at `bytes` as NumPy reads it (a `b1` byte other than 0/1 is True).
fn decode(s: Scalar, bytes: &[u8]) -> Result<Value<'_>, Bad> {
    let v = scalar::decode_lenient(s, bytes)?;
    if let Value::DateTime(count, unit) = v {
        if unit.unit == TimeUnit::Generic && count != i64::MIN {
            let reason = format!("datetime64 {count} has generic units, which NumPy cannot show as a date either");
            return Err(Bad::new(reason));
        }
    }
    Ok(v)
}

/// Calls `each` with the text of every leaf of an element (the cells of a CSV row or a
/// table): NumPy's `str()` of each scalar.
pub fn leaf_texts(dtype: &DType, bytes: &[u8], each: &mut impl FnMut(String)) -> Result<(), Bad> {
    leaves(dtype, bytes, &mut |s, b| {
        each(decode(s, b)?.to_string());
        Ok(())
    })
}

/// The cell of an object array's element: Python's `str()` of it (a `str` as it is, an
/// ndarray as NumPy's `str()`: `[0 1 2]`).
pub fn object_cell(object: &Object) -> String {
    object.str()
}

/// Writes one element of `dtype` as JSON to `out`.
pub fn json_element(dtype: &DType, bytes: &[u8], nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    match dtype {
        DType::Scalar(s) => json_scalar(*s, part(bytes, 0, s.itemsize())?, nf, out),
        DType::Record(r) => {
            out.push('{');
            for (i, f) in r.fields().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(&f.name, out);
                out.push(':');
                let inner = part(bytes, f.offset, f.dtype.itemsize())?;
                json_element(&f.dtype, inner, nf, out).map_err(|e| e.within(&f.name))?;
            }
            out.push('}');
            Ok(())
        }
        DType::SubArray(a) => {
            let (base, size) = (a.flat_base(), a.flat_base().itemsize());
            json_items(&a.flat_shape(), out, |i, out| json_element(base, part(bytes, i * size, size)?, nf, out))
        }
    }
}

/// A subarray's items as nested lists of `shape`, item `i` (C order) written by `item`;
/// an item's error names its index.
fn json_items(
    shape: &[usize],
    out: &mut String,
    mut item: impl FnMut(usize, &mut String) -> Result<(), Bad>,
) -> Result<(), Bad> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return empty_lists(shape, out);
    }
    let mut index = vec![0; shape.len()];
    for i in 0..n {
        open_lists(shape, i, out);
        item(i, out).map_err(|e| {
            c_index(shape, i, &mut index);
            e.within(&brackets(&index))
        })?;
        close_lists(shape, i, out);
    }
    Ok(())
}

/// Before item `i` (C order) of nested lists of `shape`: a `,` unless it is the first,
/// and a `[` for every list that starts with it.
pub fn open_lists(shape: &[usize], i: usize, out: &mut String) {
    if i > 0 {
        out.push(',');
    }
    let mut stride = 1;
    let mut opens = 0;
    for &d in shape.iter().rev() {
        stride *= d;
        if i.is_multiple_of(stride) {
            opens += 1;
        }
    }
    out.extend(std::iter::repeat_n('[', opens));
}

/// After item `i`: a `]` for every list that ends with it.
pub fn close_lists(shape: &[usize], i: usize, out: &mut String) {
    let mut stride = 1;
    let mut closes = 0;
    for &d in shape.iter().rev() {
        stride *= d;
        if (i + 1).is_multiple_of(stride) {
            closes += 1;
        }
    }
    out.extend(std::iter::repeat_n(']', closes));
}

/// Nested lists of `shape` holding no items (a dimension is 0): `[]`, `[[], []]`, ...
pub fn empty_lists(shape: &[usize], out: &mut String) -> Result<(), Bad> {
    let outer = shape.iter().take_while(|&&d| d > 0).try_fold(1usize, |n, &d| n.checked_mul(d));
    if outer.is_none_or(|n| n > MAX_EMPTY_LISTS) {
        let reason = format!("shape {shape:?} makes more than {MAX_EMPTY_LISTS} empty lists");
        return Err(Bad::new(reason));
    }
    fn write(shape: &[usize], out: &mut String) {
        out.push('[');
        if let Some((&d, rest)) = shape.split_first().filter(|(&d, rest)| d > 0 && !rest.is_empty()) {
            for i in 0..d {
                if i > 0 {
                    out.push(',');
                }
                write(rest, out);
            }
        }
        out.push(']');
    }
    write(shape, out);
    Ok(())
}

fn json_scalar(s: Scalar, bytes: &[u8], nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    if let ScalarType::Unicode(_) = s.ty() {
        return json_unicode(s, bytes, out);
    }
    let v = decode(s, bytes)?;
    match v {
        Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Value::F16(_) | Value::F32(_) | Value::F64(_) | Value::LongDouble(_) => json_float(&v, nf, out)?,
        Value::C64(re, im) => json_pair(&Value::F32(re), &Value::F32(im), nf, out)?,
        Value::C128(re, im) => json_pair(&Value::F64(re), &Value::F64(im), nf, out)?,
        Value::LongComplex(b) => {
            let (mut re, mut im) = ([0u8; 16], [0u8; 16]);
            re.copy_from_slice(&b[..16]);
            im.copy_from_slice(&b[16..]);
            json_pair(&Value::LongDouble(re), &Value::LongDouble(im), nf, out)?;
        }
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => out.push_str("null"),
        Value::DateTime(..) => json_string(&v.to_string(), out),
        Value::TimeDelta(count, _) => {
            let _ = write!(out, "{count}");
        }
        Value::Bytes(_) | Value::Void(_) | Value::Str(_) => json_string(&v.to_string(), out),
        // Integers.
        _ => {
            let _ = write!(out, "{v}");
        }
    }
    Ok(())
}

fn json_pair(re: &Value<'_>, im: &Value<'_>, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    out.push('[');
    json_float(re, nf, out)?;
    out.push(',');
    json_float(im, nf, out)?;
    out.push(']');
    Ok(())
}

/// A float in NumPy's digits (its `str()`), which is a JSON number when finite.
pub fn json_float(v: &Value<'_>, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    // Written in place, then checked (and replaced when it is not a number).
    let start = out.len();
    let _ = write!(out, "{v}");
    if is_json_number(&out[start..]) {
        return Ok(());
    }
    let text = out.split_off(start);
    float_text(&text, nf, out)
}

/// A float's Python or NumPy text as JSON: `nan`, `inf` and `-inf` by `nf`, numbers as
/// they are.
fn float_text(text: &str, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    let special = match text {
        "nan" | "-nan" => Some(("NaN", "\"NaN\"")),
        "inf" | "+inf" => Some(("Infinity", "\"Infinity\"")),
        "-inf" => Some(("-Infinity", "\"-Infinity\"")),
        _ => None,
    };
    match (special, nf) {
        (Some((python, _)), NonFinite::Python) => out.push_str(python),
        (Some(_), NonFinite::Null) => out.push_str("null"),
        (Some((_, string)), NonFinite::Strings) => out.push_str(string),
        (None, _) if is_json_number(text) => out.push_str(text),
        (None, _) => return Err(Bad::new(format!("the float text {text:?} is not a JSON number"))),
    }
    Ok(())
}

/// Whether `s` is a number as JSON spells them: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    match digits(&mut i) {
        0 => return false,
        n if n > 1 && b[int_start] == b'0' => return false,
        _ => {}
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A `U` value as a JSON string. A surrogate code unit, which Python's `str` holds but
/// UTF-8 cannot, is written as the `\udXXX` escape Python's `json` writes for it; units
/// beyond U+10FFFF, which NumPy cannot make a `str` of, are an error.
fn json_unicode(s: Scalar, bytes: &[u8], out: &mut String) -> Result<(), Bad> {
    match scalar::decode(s, bytes) {
        Ok(Value::Str(text)) => {
            json_string(&text, out);
            return Ok(());
        }
        Err(ScalarError::CodePoint { unit, .. }) if is_surrogate(unit) => {}
        Err(e) => return Err(e.into()),
        Ok(_) => return Err(Bad::new("a U scalar decoded as another kind")),
    }
    // Unit by unit (each through the codec, for its byte order), trailing NULs dropped.
    let unit = Scalar::new(ScalarType::Unicode(1), s.order());
    let mut chars: Vec<Result<char, u32>> = Vec::with_capacity(bytes.len() / 4);
    for c in bytes.chunks_exact(4) {
        chars.push(match scalar::decode(unit, c) {
            Ok(Value::Str(t)) => Ok(t.chars().next().unwrap_or('\0')),
            Err(ScalarError::CodePoint { unit, .. }) if is_surrogate(unit) => Err(unit),
            Err(e) => return Err(e.into()),
            Ok(_) => return Err(Bad::new("a U scalar decoded as another kind")),
        });
    }
    while chars.last() == Some(&Ok('\0')) {
        chars.pop();
    }
    out.push('"');
    let mut run = String::new();
    for c in chars {
        match c {
            Ok(c) => run.push(c),
            Err(unit) => {
                let escaped = serde_json::to_string(&run).unwrap_or_default();
                out.push_str(&escaped[1..escaped.len() - 1]);
                run.clear();
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    let escaped = serde_json::to_string(&run).unwrap_or_default();
    out.push_str(&escaped[1..escaped.len() - 1]);
    out.push('"');
    Ok(())
}

fn is_surrogate(unit: u32) -> bool {
    (0xd800..0xe000).contains(&unit)
}

/// `s` as a JSON string.
pub fn json_string(s: &str, out: &mut String) {
    // Writing a str into a String cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// An object array's element as JSON: `None` as `null`, bools, ints (of any size) and
/// floats as numbers (floats in Python's `repr` digits, NaN and infinities by `nf`),
/// complex as `[re, im]`, `str` as a string, `bytes` as its `repr` string, lists,
/// tuples and sets as arrays, dicts as objects when every key is a `str` (else as arrays
/// of `[key, value]` pairs), ndarrays and NumPy scalars as `tolist()` gives them, the
/// rest as the module says.
pub fn json_object(object: &Object, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    match object {
        Object::None => out.push_str("null"),
        Object::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Object::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Object::BigInt(digits) => out.push_str(digits),
        Object::Float(f) => float_text(&Object::Float(*f).repr(), nf, out)?,
        Object::Complex(re, im) => {
            out.push('[');
            float_text(&Object::Float(*re).repr(), nf, out)?;
            out.push(',');
            float_text(&Object::Float(*im).repr(), nf, out)?;
            out.push(']');
        }
        Object::Str(s) => json_string(s, out),
        Object::Bytes(_) => json_string(&object.repr(), out),
        Object::List(items) | Object::Tuple(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_object(item, nf, out)?;
            }
            out.push(']');
        }
        Object::Set(items) | Object::FrozenSet(items) => json_object(&Object::List(items.clone()), nf, out)?,
        Object::Deque(d) => json_object(&Object::List(d.items.clone()), nf, out)?,
        Object::DefaultDict(d) => json_object(&Object::Dict(d.entries.clone()), nf, out)?,
        Object::MaskedArray(m) => json_masked(m, nf, out)?,
        Object::Array(a) => json_array(a, nf, out)?,
        Object::ObjectArray(a) => {
            let shape = a.shape();
            if shape.iter().product::<usize>() == 0 {
                return empty_lists(shape, out);
            }
            let storage = c_order(shape, a.fortran_order());
            let items = a.as_slice();
            for i in 0..shape.iter().product::<usize>() {
                open_lists(shape, i, out);
                let item = items.get(storage(i)).ok_or_else(|| Bad::new("an object array holds too few values"))?;
                json_object(item, nf, out).map_err(|e| e.within(&index_of(shape, i)))?;
                close_lists(shape, i, out);
            }
        }
        Object::Scalar(a) => json_element(a.dtype(), a.data(), nf, out)?,
        Object::Date(d) => json_string(&d.isoformat(), out),
        Object::Time(t) => json_string(&zone_free(t)?.isoformat(), out),
        Object::DateTime(dt) => json_string(&zone_free(&dt.time).map(|_| dt)?.isoformat(), out),
        Object::TimeDelta(_)
        | Object::TimeZone(_)
        | Object::ZoneInfo(_)
        | Object::Decimal(_)
        | Object::Fraction(_)
        | Object::Uuid(_)
        | Object::Path(..) => json_string(&object.str(), out),
        Object::ByteArray(_) | Object::Range(_) | Object::Slice(_) | Object::Type(..) => {
            json_string(&object.repr(), out)
        }
        Object::Dict(pairs) | Object::OrderedDict(pairs) | Object::Counter(pairs) => {
            let by_name = pairs.iter().all(|(k, _)| matches!(k, Object::Str(_)));
            out.push(if by_name { '{' } else { '[' });
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if by_name {
                    json_string(k.as_str().unwrap_or_default(), out);
                    out.push(':');
                } else {
                    out.push('[');
                    json_object(k, nf, out)?;
                    out.push(',');
                }
                json_object(v, nf, out)?;
                if !by_name {
                    out.push(']');
                }
            }
            out.push(if by_name { '}' } else { ']' });
        }
    }
    Ok(())
}

/// `t`, unless its `tzinfo` is a `zoneinfo.ZoneInfo`: its `isoformat()` ends in the zone's
/// UTC offset at that time, which only the zone database says, and npy does not read it
/// (a wrong or missing offset would be a silently wrong value).
fn zone_free(t: &npy_core::object::Time) -> Result<&npy_core::object::Time, Bad> {
    match &t.tzinfo {
        Some(npy_core::object::TzInfo::ZoneInfo(z)) => Err(Bad::new(format!(
            "a time in the zone {}: its isoformat() has the zone's UTC offset, which needs the zone database \
             (npy does not read it)",
            z.key
        ))),
        _ => Ok(t),
    }
}

/// A masked array as its `tolist()` gives it: its data's nested lists with `null` for
/// each masked element.
fn json_masked(m: &npy_core::object::MaskedArray, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    let masked = m.masked();
    let shape = m.mask.shape();
    let n: usize = shape.iter().product();
    if n == 0 {
        return empty_lists(shape, out);
    }
    let storage = c_order(shape, m.mask.fortran_order());
    for i in 0..n {
        if !shape.is_empty() {
            open_lists(shape, i, out);
        }
        let s = storage(i);
        if let Object::Array(a) = &m.data {
            // Field by field: a record's mask has a bool per field (`make_mask_descr`), and
            // `tolist()` gives `None` for each masked field, not for the record.
            let (size, mask_size) = (a.dtype().itemsize(), m.mask.dtype().itemsize());
            let bytes = part(a.data(), s * size, size)?;
            let mask = part(m.mask.data(), s * mask_size, mask_size)?;
            json_masked_element(a.dtype(), bytes, m.mask.dtype(), mask, nf, out)
                .map_err(|e| e.within(&index_of(shape, i)))?;
        } else if masked.get(s).copied().unwrap_or(false) {
            out.push_str("null");
        } else {
            match &m.data {
                Object::ObjectArray(a) => {
                    let item = a.as_slice().get(s).ok_or_else(|| Bad::new("a masked array holds too few values"))?;
                    json_object(item, nf, out).map_err(|e| e.within(&index_of(shape, i)))?;
                }
                _ => return Err(Bad::new("a masked array whose data is not an ndarray")),
            }
        }
        if !shape.is_empty() {
            close_lists(shape, i, out);
        }
    }
    Ok(())
}

/// One element of a masked array's data (`dtype`, `bytes`) under its mask (`mask_dtype`,
/// `mask`: a bool, or a record or subarray of them shaped as the dtype), as `tolist()`
/// gives it: `null` where the mask is set, field by field and item by item.
fn json_masked_element(
    dtype: &DType,
    bytes: &[u8],
    mask_dtype: &DType,
    mask: &[u8],
    nf: NonFinite,
    out: &mut String,
) -> Result<(), Bad> {
    match (dtype, mask_dtype) {
        (_, DType::Scalar(_)) if mask_dtype.itemsize() == 1 => {
            if mask[0] != 0 {
                out.push_str("null");
                Ok(())
            } else {
                json_element(dtype, bytes, nf, out)
            }
        }
        (DType::Record(r), DType::Record(mr)) if r.fields().len() == mr.fields().len() => {
            out.push('{');
            for (i, (f, mf)) in r.fields().iter().zip(mr.fields()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(&f.name, out);
                out.push(':');
                let inner = part(bytes, f.offset, f.dtype.itemsize())?;
                let inner_mask = part(mask, mf.offset, mf.dtype.itemsize())?;
                json_masked_element(&f.dtype, inner, &mf.dtype, inner_mask, nf, out).map_err(|e| e.within(&f.name))?;
            }
            out.push('}');
            Ok(())
        }
        (DType::SubArray(a), DType::SubArray(ma)) if a.flat_shape() == ma.flat_shape() => {
            let (base, mask_base) = (a.flat_base(), ma.flat_base());
            let (size, mask_size) = (base.itemsize(), mask_base.itemsize());
            json_items(&a.flat_shape(), out, |i, out| {
                let item = part(bytes, i * size, size)?;
                json_masked_element(base, item, mask_base, part(mask, i * mask_size, mask_size)?, nf, out)
            })
        }
        _ => Err(Bad::new("a masked array whose mask is not shaped as its dtype")),
    }
}

/// An ndarray inside an object array as `tolist()` gives it: nested lists of its
/// elements (each as [`json_element`] writes it), a 0-d one as its element.
fn json_array(a: &DynArray, nf: NonFinite, out: &mut String) -> Result<(), Bad> {
    let (dtype, shape, data) = (a.dtype(), a.shape(), a.data());
    let size = dtype.itemsize();
    let n: usize = shape.iter().product();
    if shape.is_empty() {
        return json_element(dtype, data, nf, out);
    }
    if n == 0 {
        return empty_lists(shape, out);
    }
    let storage = c_order(shape, a.fortran_order());
    for i in 0..n {
        open_lists(shape, i, out);
        let at = storage(i) * size;
        json_element(dtype, part(data, at, size)?, nf, out).map_err(|e| e.within(&index_of(shape, i)))?;
        close_lists(shape, i, out);
    }
    Ok(())
}

/// `[1][0]`: the index of item `i` (C order) of nested lists of `shape`.
fn index_of(shape: &[usize], i: usize) -> String {
    let mut index = vec![0; shape.len()];
    c_index(shape, i, &mut index);
    brackets(&index)
}

/// The storage index of C-order item `c` of an array of `shape`, stored in Fortran order
/// when `fortran`.
fn c_order(shape: &[usize], fortran: bool) -> impl Fn(usize) -> usize + '_ {
    move |c| {
        if !fortran || shape.len() < 2 {
            return c;
        }
        let mut index = vec![0; shape.len()];
        c_index(shape, c, &mut index);
        let mut stride = 1;
        index.iter().zip(shape).fold(0, |at, (&i, &d)| {
            let at = at + i * stride;
            stride *= d;
            at
        })
    }
}

/// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled.
pub fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(descr: &str, bytes: &[u8]) -> String {
        let dtype: DType = descr.parse().unwrap();
        let mut out = String::new();
        json_element(&dtype, bytes, NonFinite::Python, &mut out).unwrap();
        out
    }

    #[test]
    fn nested_lists() {
        let shape = [2, 3];
        let mut out = String::new();
        for i in 0..6 {
            open_lists(&shape, i, &mut out);
            out.push_str(&i.to_string());
            close_lists(&shape, i, &mut out);
        }
        assert_eq!(out, "[[0,1,2],[3,4,5]]");
        for (shape, want) in [(vec![0], "[]"), (vec![2, 0], "[[],[]]"), (vec![2, 0, 3], "[[],[]]"), (vec![0, 2], "[]")]
        {
            let mut out = String::new();
            empty_lists(&shape, &mut out).unwrap();
            assert_eq!(out, want, "{shape:?}");
        }
        assert!(empty_lists(&[1 << 20, 1 << 20, 0], &mut String::new()).is_err());
    }

    #[test]
    fn json_numbers() {
        for ok in ["0", "-0.0", "1e-05", "5e-324", "1e+4000", "0.004", "12.5E3"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "nan", "inf", "1.0j", "+1"] {
            assert!(!is_json_number(bad), "{bad}");
        }
        let mut out = String::new();
        for nf in [NonFinite::Python, NonFinite::Null, NonFinite::Strings] {
            float_text("-inf", nf, &mut out).unwrap();
            out.push(' ');
        }
        assert_eq!(out, "-Infinity null \"-Infinity\" ");
    }

    /// Values made by the codec's own encoder, shown as the JSON mapping says.
    #[test]
    fn the_json_mapping() {
        assert_eq!(json_of("|b1", &[2]), "true");
        assert_eq!(json_of(">i2", &[0xfe, 0xd4]), "-300");
        assert_eq!(json_of("<m8[s]", &i64::MIN.to_le_bytes()), "null");
        assert_eq!(json_of("<m8[25s]", &7i64.to_le_bytes()), "7");
        assert_eq!(json_of("<M8[D]", &i64::MIN.to_le_bytes()), "null");
        let mut rec = vec![1u8, 0];
        rec.extend(b"ab\0");
        assert_eq!(json_of("[('n', '<u2'), ('s', [('t', '|S3')])]", &rec), r#"{"n":1,"s":{"t":"b'ab'"}}"#);
        assert_eq!(json_of("[('v', '|u1', (2, 2))]", &[1, 2, 3, 4]), r#"{"v":[[1,2],[3,4]]}"#);
        assert_eq!(json_of("[('v', '|u1', (2, 0))]", &[]), r#"{"v":[[],[]]}"#);
    }

    #[test]
    fn surrogates_are_escaped_and_beyond_unicode_is_an_error() {
        let units = |us: &[u32]| us.iter().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(json_of("<U4", &units(&[0x41, 0xd800, 0x22, 0])), r#""A\ud800\"""#);
        let dtype: DType = "[('w', '<U2')]".parse().unwrap();
        let e = json_element(&dtype, &units(&[0x110000, 0x41]), NonFinite::Python, &mut String::new()).unwrap_err();
        assert_eq!(e.field, "w");
        assert!(e.reason.contains("0x110000"), "{}", e.reason);
    }

    #[test]
    fn errors_name_the_field() {
        let dtype: DType = "[('a', [('b', '<U1', (3,))])]".parse().unwrap();
        let mut bytes = vec![0u8; 12];
        bytes[8..].copy_from_slice(&0x110000u32.to_le_bytes());
        let e = leaf_texts(&dtype, &bytes, &mut |_| {}).unwrap_err();
        assert_eq!(e.field, "a.b[2]");
        let layout = RowShape { dtype: Some(dtype), rows: 4, row_dims: vec![2] };
        let err = e.at(At { row: 3, k: 1, storage: 7 }, &layout);
        assert_eq!(
            err.to_string(),
            "invalid value at element 7: index (3, 1), field 'a.b[2]': code point 0x110000 at position 0 is not a \
             valid char (NumPy cannot make a str of it either)"
        );
    }

    #[test]
    fn leaf_names_follow_the_dtype() {
        let dtype: DType =
            "[('id', '<u2'), ('r', [('x', '<f4'), ('y', '<f4')]), ('g', '|i1', (2, 2))]".parse().unwrap();
        let mut names = Vec::new();
        leaf_names(&dtype, &mut String::new(), &mut |n| names.push(n.to_string()));
        assert_eq!(names, ["id", "r.x", "r.y", "g[0][0]", "g[0][1]", "g[1][0]", "g[1][1]"]);
        let mut names = Vec::new();
        leaf_names(&dtype, &mut "[1]".to_string(), &mut |n| names.push(n.to_string()));
        assert_eq!(names[..2], ["[1].id", "[1].r.x"]);
    }

    #[test]
    fn objects() {
        let v = Object::List(vec![
            Object::Float(f64::NAN),
            Object::Float(1e-5),
            Object::Bytes(b"a\0".to_vec()),
            Object::BigInt("123456789012345678901234567890".into()),
            Object::Dict(vec![(Object::Int(1), Object::None)]),
            Object::Complex(1.0, f64::INFINITY),
        ]);
        let mut out = String::new();
        json_object(&v, NonFinite::Python, &mut out).unwrap();
        assert_eq!(out, r#"[NaN,1e-05,"b'a\\x00'",123456789012345678901234567890,[[1,null]],[1.0,Infinity]]"#);
        let mut out = String::new();
        json_object(&v, NonFinite::Null, &mut out).unwrap();
        assert!(out.starts_with("[null,"), "{out}");
    }

    fn dyn_array(descr: &str, shape: &[usize], data: Vec<u8>) -> Object {
        let header = npy_core::header::Header::new(descr.parse().unwrap(), shape.to_vec());
        Object::Array(Box::new(DynArray::new(header, data).unwrap()))
    }

    fn json(o: &Object) -> String {
        let mut out = String::new();
        json_object(o, NonFinite::Python, &mut out).unwrap();
        out
    }

    /// The values object arrays hold beyond plain ones, as `tolist()` and `str()` give
    /// them (JSON text by the mapping in the module docs).
    #[test]
    fn new_object_kinds() {
        use npy_core::object::{Date, DateTime, PathFlavor, Time, TimeDelta};
        let ints = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        // np.array([np.arange(3), np.arange(2)], dtype=object)
        let ragged = npy_core::Array::from_shape_vec(
            vec![2],
            vec![dyn_array("<i8", &[3], ints(&[0, 1, 2])), dyn_array("<i8", &[2], ints(&[0, 1]))],
        )
        .unwrap();
        let ragged = Object::ObjectArray(Box::new(ragged));
        assert_eq!(json(&ragged), "[[0,1,2],[0,1]]");
        assert_eq!(object_cell(&ragged), "[array([0, 1, 2]) array([0, 1])]");
        // np.arange(4).reshape(2, 2) in Fortran order: tolist() is [[0, 1], [2, 3]]
        let header = npy_core::header::Header { dtype: "<i8".parse().unwrap(), fortran_order: true, shape: vec![2, 2] };
        let fortran = Object::Array(Box::new(DynArray::new(header, ints(&[0, 2, 1, 3])).unwrap()));
        assert_eq!(json(&fortran), "[[0,1],[2,3]]");
        assert_eq!(object_cell(&fortran), "[[0 1]\n [2 3]]");
        // np.zeros((2, 0))
        assert_eq!(json(&dyn_array("<f8", &[2, 0], vec![])), "[[],[]]");
        // np.array([(1, 2.5)], dtype=[('a', '<i2'), ('b', '<f4')])
        let mut rec = 1i16.to_le_bytes().to_vec();
        rec.extend(2.5f32.to_le_bytes());
        let rec = dyn_array("[('a', '<i2'), ('b', '<f4')]", &[1], rec);
        assert_eq!(json(&rec), r#"[{"a":1,"b":2.5}]"#);
        assert_eq!(object_cell(&rec), "[(1, 2.5)]");
        // np.array(['2020-01-02', 'NaT'], dtype='M8[D]')
        let days = dyn_array("<M8[D]", &[2], ints(&[18_263, i64::MIN]));
        assert_eq!(json(&days), r#"["2020-01-02",null]"#);
        assert_eq!(object_cell(&days), "['2020-01-02'        'NaT']");
        // np.datetime64('2020-01-02'), np.timedelta64('NaT', 's')
        let Object::Array(day) = dyn_array("<M8[D]", &[], ints(&[18_263])) else { unreachable!() };
        assert_eq!(json(&Object::Scalar(day.clone())), r#""2020-01-02""#);
        assert_eq!(object_cell(&Object::Scalar(day)), "2020-01-02");
        let Object::Array(nat) = dyn_array("<m8[s]", &[], ints(&[i64::MIN])) else { unreachable!() };
        assert_eq!(json(&Object::Scalar(nat.clone())), "null");
        assert_eq!(object_cell(&Object::Scalar(nat)), "NaT");
        let date = Date { year: 2020, month: 1, day: 2 };
        let time = Time { hour: 3, minute: 4, second: 5, microsecond: 0, fold: false, tzinfo: None };
        let cases = [
            (Object::Set(vec![1.into(), 2.into()]), "[1,2]", "{1, 2}"),
            (Object::FrozenSet(vec![]), "[]", "frozenset()"),
            (Object::OrderedDict(vec![("a".into(), 1.into())]), r#"{"a":1}"#, "OrderedDict([('a', 1)])"),
            (Object::Counter(vec![(1.into(), 2.into())]), "[[1,2]]", "Counter({1: 2})"),
            (Object::Date(date), r#""2020-01-02""#, "2020-01-02"),
            (Object::Time(Box::new(time.clone())), r#""03:04:05""#, "03:04:05"),
            (Object::DateTime(Box::new(DateTime { date, time })), r#""2020-01-02T03:04:05""#, "2020-01-02 03:04:05"),
            (
                Object::TimeDelta(TimeDelta { days: 1, seconds: 0, microseconds: 0 }),
                r#""1 day, 0:00:00""#,
                "1 day, 0:00:00",
            ),
            (Object::Decimal("1.50".into()), r#""1.50""#, "1.50"),
            (Object::Fraction(Box::new((1.into(), 3.into()))), r#""1/3""#, "1/3"),
            (Object::Uuid(255), r#""00000000-0000-0000-0000-0000000000ff""#, "00000000-0000-0000-0000-0000000000ff"),
            (Object::Path(PathFlavor::Posix, vec!["a".into(), "b".into()]), r#""a/b""#, "a/b"),
            (Object::Range(Box::new([0.into(), 6.into(), 2.into()])), r#""range(0, 6, 2)""#, "range(0, 6, 2)"),
            (
                Object::Slice(Box::new([Object::None, 3.into(), Object::None])),
                r#""slice(None, 3, None)""#,
                "slice(None, 3, None)",
            ),
            (Object::ByteArray(b"x".to_vec()), r#""bytearray(b'x')""#, "bytearray(b'x')"),
        ];
        for (value, want_json, want_cell) in cases {
            assert_eq!(json(&value), want_json, "{value:?}");
            assert_eq!(object_cell(&value), want_cell, "{value:?}");
        }
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("b'\\n'"), "b'\\n'");
    }
}
