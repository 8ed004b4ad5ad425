//! NumPy's `repr()` of the arrays and NumPy scalars an object array holds
//! ([`Object::Array`], [`Object::ObjectArray`], [`Object::Scalar`]), for
//! [`Object::repr`]: `array([0. , 1.5])`, `np.datetime64('2020-01-02')`.
//!
//! This is NumPy 2.4's `arrayprint` with its default options (`legacy=False`, line width
//! 75, `threshold=1000`, `edgeitems=3`, `precision=8`, `floatmode='maxprec'`), step by step:
//!
//! - every element of an array is laid out alike, from all the elements shown: integers
//!   and timedeltas right-aligned to the widest, `True` as `' True'`, floats positional
//!   with the point aligned (`[0. , 1.5]`: at most 8 fractional digits, each the shortest
//!   that tells the value apart in its type, rounded there), or scientific with one shared
//!   number of digits (`[1.0e-05, 1.5e-05]`, each value's own digits rounded there) when a
//!   nonzero magnitude is at least `1e8`
//!   (`1e6` for `float32`, `1e3` for `float16`), below `1e-4`, or the largest is over 1000
//!   times the smallest; `nan`/`inf` right-aligned to the same width; complex numbers as
//!   two such columns (`[1. +2.j, 3.5-1.j]`); str and bytes as Python's repr;
//!   datetimes quoted and right-aligned, `'NaT'` among them; records as tuples, each field
//!   laid out over its column, subarray fields as nested lists;
//! - rows wrap before 75 characters (the closing `)` counted), nested dimensions on
//!   their own lines (blank lines between blocks of a 3-d array), an element that spans
//!   lines (an array in an object array) kept in one piece;
//! - beyond 1000 elements only the first and last 3 along each axis are shown, `...`
//!   between them, laid out from the shown elements alone, with `shape=` after them;
//! - `dtype=` follows unless the dtype is a native `int64`, `float64`, `complex128` or
//!   `bool` and the array is not empty (`array([], dtype=float64)`; `shape=` too for an
//!   empty array of another shape than `(0,)`), on a new line when it would pass 75
//!   characters; an object array's elements are Python's repr, a list's as `list([..])`.
//!
//! NumPy scalars: `np.datetime64('2020-01-02')` (the unit after the text when it cannot
//! be told from it: `np.datetime64('2020-01-02T03','h')`, `np.datetime64('NaT','D')`),
//! `np.timedelta64(3,'s')`, `np.longdouble('1.5')`, `np.clongdouble('1.5+2j')`,
//! `np.void((1, 2.0), dtype=[('a', '<i4'), ('b', '<f8')])` (fields as `str()`).
//!
//! Where this differs from NumPy: a long double that needs rounding to 8 digits is rounded
//! from the `f64` nearest it (and in scientific layout, one with fewer digits than the
//! others is padded with zeros where NumPy prints its further digits), and whether long doubles go scientific is judged on those
//! `f64`s (NumPy uses the long doubles themselves: the last digit, or the choice for
//! magnitudes within an `f64` rounding of a threshold, may differ); a record dtype's
//! field titles are not shown.

use crate::array::{Array, DynArray};
use crate::dtype::{ByteOrder, DType, DateUnit, Scalar, ScalarType, TimeUnit};
use crate::object::Object;
use crate::repr;
use crate::scalar::{self, FloatDigits, Value};
use crate::shape::shape_repr;

/// NumPy's default `linewidth`.
const LINE_WIDTH: usize = 75;
/// NumPy's default `threshold`: more elements than this are summarised.
const THRESHOLD: usize = 1000;
/// NumPy's default `edgeitems`.
const EDGE_ITEMS: usize = 3;
/// NumPy's default `precision`: fractional digits at most.
const PRECISION: usize = 8;

/// The NumPy type name of a scalar of `dtype`, as `type(x)` qualifies it.
pub(super) fn scalar_type_name(dtype: &DType) -> &'static str {
    match dtype.as_scalar().map(|s| s.ty()) {
        Some(ScalarType::DateTime(_)) => "numpy.datetime64",
        Some(ScalarType::TimeDelta(_)) => "numpy.timedelta64",
        Some(ScalarType::Float(_)) => "numpy.longdouble",
        Some(ScalarType::Complex(_)) => "numpy.clongdouble",
        Some(ScalarType::Bool) => "numpy.bool",
        Some(ScalarType::Int(_) | ScalarType::UInt(_)) => "numpy.integer",
        Some(ScalarType::Bytes(_)) => "numpy.bytes_",
        Some(ScalarType::Unicode(_)) => "numpy.str_",
        Some(ScalarType::Object) => "numpy.object_",
        Some(ScalarType::Void(_)) | None => "numpy.void",
    }
}

/// `repr()` of an ndarray of any dtype but object.
pub(super) fn write_array(a: &DynArray, out: &mut String) {
    let dtype = a.dtype();
    let count: usize = a.shape().iter().product();
    let body = array_body(a, Style::Repr);
    let implied = implied_dtype(dtype);
    finish(&body, a.shape(), count, (!implied || count == 0).then(|| dtype_repr(dtype)), out);
}

/// A masked array, by its parts: `masked_array(data=array([1, 2, 3]), mask=array([False,
/// True, False]), fill_value=array(7))` (the fill value only when one was set). This is not
/// NumPy's own `repr` of a masked array, which lays the data out with `--` where masked.
pub(super) fn write_masked_array(m: &super::MaskedArray, out: &mut String) {
    out.push_str("masked_array(data=");
    m.data.write_repr(out);
    out.push_str(", mask=");
    write_array(&m.mask, out);
    if let Some(fill) = &m.fill_value {
        out.push_str(", fill_value=");
        fill.write_repr(out);
    }
    out.push(')');
}

/// NumPy's `str()` of an ndarray of any dtype but object: `[0 1 2]`, `[[1. 2.]\n [3. 4.]]`;
/// a 0-d array as its scalar's `str()`.
pub(super) fn write_array_str(a: &DynArray, out: &mut String) {
    if a.shape().is_empty() {
        return write_scalar_str(a, out);
    }
    out.push_str(&array_body(a, Style::Str));
}

/// NumPy's `str()` of a NumPy scalar kept as a 0-d array: `2020-01-02`, `NaT`,
/// `3 seconds`, `1.5`, a record's `(1, 2.0)`.
pub(super) fn write_scalar_str(a: &DynArray, out: &mut String) {
    let dtype = a.dtype();
    let bytes = a.data();
    match dtype {
        DType::Scalar(s) => match scalar::decode(*s, bytes) {
            Ok(v) => out.push_str(&v.to_string()),
            Err(_) => out.push('?'),
        },
        _ => Format::new(dtype, &[bytes], true, true).write(dtype, bytes, out),
    }
}

/// The nested lists of an ndarray's elements, as `repr()` or `str()` lays them out.
fn array_body(a: &DynArray, style: Style) -> String {
    let dtype = a.dtype();
    let size = dtype.itemsize();
    let shape = a.shape();
    let count: usize = shape.iter().product();
    if count == 0 {
        return "[]".to_string();
    }
    let storage = crate::shape::c_order(shape, a.fortran_order());
    let data = a.data();
    let element = |c: usize| {
        let at = storage(c) * size;
        data.get(at..at + size).unwrap_or(&[])
    };
    let summary = count > THRESHOLD;
    let shown: Vec<&[u8]> = shown_indices(shape, summary).into_iter().map(element).collect();
    let format = Format::new(dtype, &shown, shape.is_empty(), false);
    let word = |c: usize| {
        let mut w = String::new();
        format.write(dtype, element(c), &mut w);
        w
    };
    layout(shape, summary, &word, style)
}

/// `repr()` of an object array.
pub(super) fn write_object_array(a: &Array<Object>, out: &mut String) {
    let count: usize = a.shape().iter().product();
    let body = object_body(a, Style::Repr);
    finish(&body, a.shape(), count, Some("object".to_string()), out);
}

/// NumPy's `str()` of an object array: `[array([0, 1, 2]) 'a' None]`; a 0-d one as its
/// element's `str()`.
pub(super) fn write_object_array_str(a: &Array<Object>, out: &mut String) {
    if a.shape().is_empty() {
        if let Some(item) = a.as_slice().first() {
            out.push_str(&item.str());
        }
        return;
    }
    out.push_str(&object_body(a, Style::Str));
}

fn object_body(a: &Array<Object>, style: Style) -> String {
    let shape = a.shape();
    let count: usize = shape.iter().product();
    if count == 0 {
        return "[]".to_string();
    }
    let storage = crate::shape::c_order(shape, a.fortran_order());
    let items = a.as_slice();
    let word = |c: usize| {
        let mut w = String::new();
        if let Some(item) = items.get(storage(c)) {
            // NumPy's `_object_format`: a list says so, lest it read as a nested array.
            if let Object::List(_) = item {
                w.push_str("list(");
                item.write_repr(&mut w);
                w.push(')');
            } else {
                item.write_repr(&mut w);
            }
        }
        w
    };
    layout(shape, count > THRESHOLD, &word, style)
}

/// `array(` + `body` + the `shape=` and `dtype=` NumPy adds + `)`.
fn finish(body: &str, shape: &[usize], count: usize, dtype: Option<String>, out: &mut String) {
    let mut extras = Vec::new();
    if (count == 0 && shape != [0]) || count > THRESHOLD {
        extras.push(format!("shape={}", shape_repr(shape)));
    }
    if let Some(dtype) = dtype {
        extras.push(format!("dtype={dtype}"));
    }
    out.push_str("array(");
    out.push_str(body);
    if extras.is_empty() {
        out.push(')');
        return;
    }
    out.push(',');
    let extra = extras.join(", ") + ")";
    let last_line = body.rsplit('\n').next().unwrap_or("");
    // "array(" before a one-line body, the comma after it.
    let last_len = last_line.chars().count() + 1 + if body.contains('\n') { 0 } else { "array(".len() };
    if last_len + extra.chars().count() + 1 > LINE_WIDTH {
        out.push('\n');
        out.push_str("      ");
    } else {
        out.push(' ');
    }
    out.push_str(&extra);
}

/// `repr()` of a NumPy scalar kept as a 0-d array.
pub(super) fn write_scalar(a: &DynArray, out: &mut String) {
    let dtype = a.dtype();
    let bytes = a.data();
    let value = dtype.as_scalar().and_then(|s| scalar::decode(*s, bytes).ok());
    match (dtype, value) {
        (_, Some(Value::DateTime(count, unit))) => {
            let text = Value::DateTime(count, unit).to_string();
            let nat = count == i64::MIN;
            out.push_str("np.datetime64(");
            repr::write_str(&text, out);
            // NumPy leaves the unit out where the text tells it (not for hours, whose text
            // `2020-01-02T03` could be read as minutes' `T03:00` cut short).
            let implied = unit.unit == TimeUnit::Generic || (unit.multiple == 1 && unit.unit != TimeUnit::Hours);
            if nat || !implied {
                out.push_str(",'");
                out.push_str(&unit_meta(unit));
                out.push('\'');
            }
            out.push(')');
        }
        (_, Some(Value::TimeDelta(count, unit))) => {
            out.push_str("np.timedelta64(");
            if count == i64::MIN {
                out.push_str("'NaT'");
            } else {
                out.push_str(&count.to_string());
            }
            if unit.unit != TimeUnit::Generic {
                out.push_str(",'");
                out.push_str(&unit_meta(unit));
                out.push('\'');
            }
            out.push(')');
        }
        (DType::Scalar(s), Some(v)) if !matches!(v, Value::Void(_)) => {
            out.push_str("np.");
            out.push_str(&scalar_name(s));
            out.push('(');
            match v {
                Value::Bool(b) => out.push_str(if b { "True" } else { "False" }),
                Value::Str(text) => repr::write_str(&text, out),
                // The text quoted, a complex's without its parentheses.
                v @ (Value::LongDouble(_) | Value::LongComplex(_)) => {
                    let text = v.to_string();
                    let bare = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(&text);
                    repr::write_str(bare, out);
                }
                v if v.number().is_some() => out.push_str(&v.to_string()),
                v => out.push_str(&v.to_string()),
            }
            out.push(')');
        }
        (DType::Scalar(_), _) => {
            out.push_str("np.void(");
            format_void(dtype, bytes, out);
            out.push(')');
        }
        _ => {
            out.push_str("np.void(");
            let format = Format::new(dtype, &[bytes], true, true);
            format.write(dtype, bytes, out);
            out.push_str(", dtype=");
            out.push_str(&dtype_str(dtype));
            out.push(')');
        }
    }
}

/// An unstructured void's `str()` (`b'\x01\xAB'`), or `?` for bytes that do not decode.
fn format_void(dtype: &DType, bytes: &[u8], out: &mut String) {
    match dtype.as_scalar().map(|s| scalar::decode(*s, bytes)) {
        Some(Ok(v)) => out.push_str(&v.to_string()),
        _ => out.push('?'),
    }
}

/// A datetime unit as NumPy's reprs quote it: `h`, `2D`, `generic`.
fn unit_meta(unit: DateUnit) -> String {
    if unit.unit == TimeUnit::Generic {
        return "generic".to_string();
    }
    let multiple = if unit.multiple == 1 { String::new() } else { unit.multiple.to_string() };
    multiple + unit.unit.code()
}

/// The `[unit]` a datetime dtype's name ends in (nothing for the generic unit).
fn unit_suffix(unit: DateUnit) -> String {
    if unit.unit == TimeUnit::Generic {
        String::new()
    } else {
        format!("[{}]", unit_meta(unit))
    }
}

/// NumPy's name of a scalar dtype: `int32`, `float128` (the x86 long double),
/// `datetime64[D]`, `str`.
fn scalar_name(s: &Scalar) -> String {
    match s.ty() {
        ScalarType::Bool => "bool".into(),
        ScalarType::Int(n) => format!("int{}", u32::from(n) * 8),
        ScalarType::UInt(n) => format!("uint{}", u32::from(n) * 8),
        ScalarType::Float(16) => "longdouble".into(),
        ScalarType::Float(n) => format!("float{}", u32::from(n) * 8),
        ScalarType::Complex(32) => "clongdouble".into(),
        ScalarType::Complex(n) => format!("complex{}", u32::from(n) * 8),
        ScalarType::DateTime(u) => format!("datetime64{}", unit_suffix(u)),
        ScalarType::TimeDelta(u) => format!("timedelta64{}", unit_suffix(u)),
        ScalarType::Bytes(_) => "bytes_".into(),
        ScalarType::Unicode(_) => "str_".into(),
        ScalarType::Void(_) => "void".into(),
        ScalarType::Object => "object_".into(),
    }
}

/// NumPy's `dtype_short_repr`: `int32`, `'<U3'`, `'>f8'`, `'datetime64[D]'`, a record's
/// field list.
fn dtype_repr(dtype: &DType) -> String {
    let Some(s) = dtype.as_scalar() else { return dtype_str(dtype) };
    let quoted = |text: &str| format!("'{text}'");
    let native = matches!(s.order(), ByteOrder::NotApplicable) || s.is_native();
    match s.ty() {
        ScalarType::Bytes(_) | ScalarType::Unicode(_) | ScalarType::Void(_) => quoted(&s.type_str()),
        _ if !native => quoted(&s.type_str()),
        ScalarType::Float(16) => "float128".into(),
        ScalarType::Complex(32) => "complex256".into(),
        _ => {
            let name = scalar_name(s);
            if name.chars().all(char::is_alphanumeric) {
                name
            } else {
                quoted(&name)
            }
        }
    }
}

/// NumPy's `str()` of a field's dtype: `'<i4'`, `'?'`, `'S3'` (no `|`), a record's
/// field list (or dict, when it has gaps), a subarray's `(base, shape)`.
fn dtype_str(dtype: &DType) -> String {
    match dtype {
        DType::Scalar(s) => {
            let t = s.type_str();
            let t = t.trim_start_matches('|');
            format!("'{}'", if t == "b1" { "?" } else { t })
        }
        DType::SubArray(sub) => format!("({}, {})", dtype_str(sub.base()), shape_repr(sub.shape())),
        DType::Record(record) => {
            let fields = record.fields();
            let mut end = 0;
            let packed = fields.iter().all(|f| {
                let at = f.offset == end;
                end += f.dtype.itemsize();
                at
            }) && end == record.itemsize();
            let quote = |name: &str| {
                let mut q = String::new();
                repr::write_str(name, &mut q);
                q
            };
            if packed {
                let list: Vec<String> = fields
                    .iter()
                    .map(|f| match &f.dtype {
                        DType::SubArray(sub) => {
                            format!("({}, {}, {})", quote(&f.name), dtype_str(sub.base()), shape_repr(sub.shape()))
                        }
                        d => format!("({}, {})", quote(&f.name), dtype_str(d)),
                    })
                    .collect();
                format!("[{}]", list.join(", "))
            } else {
                let names: Vec<String> = fields.iter().map(|f| quote(&f.name)).collect();
                let formats: Vec<String> = fields.iter().map(|f| dtype_str(&f.dtype)).collect();
                let offsets: Vec<String> = fields.iter().map(|f| f.offset.to_string()).collect();
                format!(
                    "{{'names': [{}], 'formats': [{}], 'offsets': [{}], 'itemsize': {}}}",
                    names.join(", "),
                    formats.join(", "),
                    offsets.join(", "),
                    record.itemsize()
                )
            }
        }
    }
}

/// Whether NumPy's repr leaves the dtype out: a native `int64`, `float64`, `complex128`
/// or `bool`.
fn implied_dtype(dtype: &DType) -> bool {
    let Some(s) = dtype.as_scalar() else { return false };
    let native = matches!(s.order(), ByteOrder::NotApplicable) || s.is_native();
    native && matches!(s.ty(), ScalarType::Int(8) | ScalarType::Float(8) | ScalarType::Complex(16) | ScalarType::Bool)
}

/// The C-order indices of the elements shown: all of them, or when `summary` the first
/// and last [`EDGE_ITEMS`] along every axis longer than twice that (NumPy's
/// `_leading_trailing`).
fn shown_indices(shape: &[usize], summary: bool) -> Vec<usize> {
    let mut out = vec![0usize];
    for &n in shape {
        let kept: Vec<usize> = if summary && n > 2 * EDGE_ITEMS {
            (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
        } else {
            (0..n).collect()
        };
        out = out.iter().flat_map(|&base| kept.iter().map(move |&i| base * n + i)).collect();
    }
    out
}

// ---------------------------------------------------------------------------------------
// The printer: NumPy's `_formatArray`

/// Which of NumPy's two texts of an array: `repr()` (`array([1, 2])`) or `str()`
/// (`[1 2]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Repr,
    Str,
}

/// The nested, wrapped lists of `shape`'s elements, `word(c)` being the text of the
/// element at C-order index `c`.
fn layout(shape: &[usize], summary: bool, word: &dyn Fn(usize) -> String, style: Style) -> String {
    let strides: Vec<usize> = (0..shape.len()).map(|k| shape[k + 1..].iter().product()).collect();
    let sep = if style == Style::Repr { ", " } else { " " };
    let layout = Printer { shape, strides, summary, word, sep };
    match style {
        // "array(" and the "[" after it; the closing ")" is taken off the width.
        Style::Repr => layout.recurse(0, 0, &" ".repeat(1 + "array(".len()), LINE_WIDTH - 1),
        Style::Str => layout.recurse(0, 0, " ", LINE_WIDTH),
    }
}

struct Printer<'a> {
    shape: &'a [usize],
    strides: Vec<usize>,
    summary: bool,
    word: &'a dyn Fn(usize) -> String,
    sep: &'static str,
}

impl Printer<'_> {
    fn recurse(&self, axis: usize, base: usize, hanging: &str, width: usize) -> String {
        let axes_left = self.shape.len() - axis;
        if axes_left == 0 {
            return (self.word)(base);
        }
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let len = self.shape[axis];
        let stride = self.strides[axis];
        let show_summary = self.summary && 2 * EDGE_ITEMS < len;
        let (leading, trailing) = if show_summary { (EDGE_ITEMS, EDGE_ITEMS) } else { (0, len) };
        let nested = |i: usize| self.recurse(axis + 1, base + i * stride, &next_hanging, next_width);
        let mut s = String::new();
        if axes_left == 1 {
            // Room up to the separator or the closing bracket.
            let elem_width = width.saturating_sub(1);
            let mut line = hanging.to_string();
            for i in 0..leading {
                extend_pretty(&mut s, &mut line, &nested(i), elem_width, hanging);
                line.push_str(self.sep);
            }
            if show_summary {
                extend(&mut s, &mut line, "...", elem_width, hanging);
                line.push_str(self.sep);
            }
            for i in (2..=trailing).rev() {
                extend_pretty(&mut s, &mut line, &nested(len - i), elem_width, hanging);
                line.push_str(self.sep);
            }
            extend_pretty(&mut s, &mut line, &nested(len - 1), elem_width, hanging);
            s.push_str(&line);
        } else {
            let line_sep = format!("{}{}", self.sep.trim_end(), "\n".repeat(axes_left - 1));
            for i in 0..leading {
                s.push_str(hanging);
                s.push_str(&nested(i));
                s.push_str(&line_sep);
            }
            if show_summary {
                s.push_str(hanging);
                s.push_str("...");
                s.push_str(&line_sep);
            }
            for i in (2..=trailing).rev() {
                s.push_str(hanging);
                s.push_str(&nested(len - i));
                s.push_str(&line_sep);
            }
            s.push_str(hanging);
            s.push_str(&nested(len - 1));
        }
        format!("[{}]", &s[hanging.len()..])
    }
}

fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// NumPy's `_extendLine`: `word` on `line`, or on a new line when it would pass `width`
/// (unless the line holds nothing yet).
fn extend(s: &mut String, line: &mut String, word: &str, width: usize, next_prefix: &str) {
    let line_len = width_of(line);
    if line_len + width_of(word) > width && line_len > width_of(next_prefix) {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = next_prefix.to_string();
    }
    line.push_str(word);
}

/// NumPy's `_extendLine_pretty`: as [`extend`], a word of several lines kept aligned.
fn extend_pretty(s: &mut String, line: &mut String, word: &str, width: usize, next_prefix: &str) {
    let words: Vec<&str> = word.lines().collect();
    if words.len() <= 1 {
        return extend(s, line, word, width, next_prefix);
    }
    let max_len = words.iter().map(|w| width_of(w)).max().unwrap_or(0);
    let indent;
    if width_of(line) + max_len > width && width_of(line) > width_of(next_prefix) {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = format!("{next_prefix}{}", words[0]);
        indent = next_prefix.to_string();
    } else {
        indent = " ".repeat(width_of(line));
        line.push_str(words[0]);
    }
    for w in &words[1..] {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = format!("{indent}{w}");
    }
    let last = words.last().map_or(0, |w| width_of(w));
    line.push_str(&" ".repeat(max_len - last));
}

// ---------------------------------------------------------------------------------------
// Elements: NumPy's format functions

/// How every element of one array (or one record field) is written, found from the
/// elements shown.
enum Format {
    Bool {
        pad: bool,
    },
    Int {
        width: usize,
    },
    Float(FloatFormat),
    Complex(FloatFormat, FloatFormat),
    /// str and bytes: Python's repr.
    Repr,
    /// An unstructured void, or a float in an `np.void`'s repr: the scalar's `str()`.
    Str,
    Time {
        width: usize,
    },
    Record(Vec<(usize, DType, Format)>),
    SubArray {
        shape: Vec<usize>,
        base: DType,
        format: Box<Format>,
    },
}

impl Format {
    /// The format of `dtype`'s `elements`; `zero_d` for a 0-d array (no padding of
    /// `True`), `plain_floats` for an `np.void`'s repr (floats as `str()`).
    fn new(dtype: &DType, elements: &[&[u8]], zero_d: bool, plain_floats: bool) -> Format {
        match dtype {
            DType::Record(record) => Format::Record(
                record
                    .fields()
                    .iter()
                    .map(|f| {
                        let size = f.dtype.itemsize();
                        let column: Vec<&[u8]> =
                            elements.iter().map(|e| e.get(f.offset..f.offset + size).unwrap_or(&[])).collect();
                        let sub = matches!(f.dtype, DType::SubArray(_));
                        (f.offset, f.dtype.clone(), Format::new(&f.dtype, &column, zero_d && !sub, plain_floats))
                    })
                    .collect(),
            ),
            DType::SubArray(sub) => {
                let base = sub.flat_base().clone();
                let size = base.itemsize().max(1);
                let items: Vec<&[u8]> = elements.iter().flat_map(|e| e.chunks(size)).collect();
                let format = Box::new(Format::new(&base, &items, false, plain_floats));
                Format::SubArray { shape: sub.flat_shape(), base, format }
            }
            DType::Scalar(s) => {
                let values = elements.iter().filter_map(|e| scalar::decode(*s, e).ok());
                match s.ty() {
                    ScalarType::Bool => Format::Bool { pad: !zero_d },
                    ScalarType::Int(_) | ScalarType::UInt(_) => {
                        Format::Int { width: values.map(|v| v.to_string().len()).max().unwrap_or(0) }
                    }
                    ScalarType::Float(_) | ScalarType::Complex(_) if plain_floats => Format::Str,
                    ScalarType::Float(n) => {
                        let parts: Vec<FloatDigits> =
                            values.filter_map(|v| FloatDigits::parts(&v)).map(|p| p.0).collect();
                        Format::Float(FloatFormat::new(&parts, n, false))
                    }
                    ScalarType::Complex(n) => {
                        let (re, im): (Vec<FloatDigits>, Vec<FloatDigits>) = values
                            .filter_map(|v| FloatDigits::parts(&v))
                            .filter_map(|(re, im)| Some((re, im?)))
                            .unzip();
                        Format::Complex(FloatFormat::new(&re, n / 2, false), FloatFormat::new(&im, n / 2, true))
                    }
                    ScalarType::Bytes(_) | ScalarType::Unicode(_) => Format::Repr,
                    ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => {
                        let mut nat = false;
                        let mut width = 0;
                        for v in values {
                            match time_text(&v) {
                                Some(t) => width = width.max(width_of(&t)),
                                None => nat = true,
                            }
                        }
                        if nat {
                            width = width.max("'NaT'".len());
                        }
                        Format::Time { width }
                    }
                    ScalarType::Void(_) | ScalarType::Object => Format::Str,
                }
            }
        }
    }

    /// Appends the text of the element `bytes` of `dtype`.
    fn write(&self, dtype: &DType, bytes: &[u8], out: &mut String) {
        match (self, dtype) {
            (Format::Record(fields), _) => {
                out.push('(');
                for (i, (offset, field, format)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let part = bytes.get(*offset..offset + field.itemsize()).unwrap_or(&[]);
                    format.write(field, part, out);
                }
                if fields.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            (Format::SubArray { shape, base, format }, _) => {
                let size = base.itemsize().max(1);
                let items: Vec<&[u8]> = bytes.chunks(size).collect();
                let summary = items.len() > THRESHOLD;
                write_subarray(shape, &items, summary, &|b, out| format.write(base, b, out), out);
            }
            (_, DType::Scalar(s)) => match scalar::decode(*s, bytes) {
                Ok(v) => self.write_value(&v, out),
                Err(_) => out.push('?'),
            },
            _ => out.push('?'),
        }
    }

    fn write_value(&self, v: &Value<'_>, out: &mut String) {
        match self {
            Format::Bool { pad } => out.push_str(match v {
                Value::Bool(true) if *pad => " True",
                Value::Bool(true) => "True",
                _ => "False",
            }),
            Format::Int { width } => out.push_str(&format!("{:>width$}", v.to_string())),
            Format::Float(f) => match FloatDigits::parts(v) {
                Some((re, _)) => f.write(&re, out),
                None => out.push('?'),
            },
            Format::Complex(fr, fi) => match FloatDigits::parts(v) {
                Some((re, Some(im))) => {
                    fr.write(&re, out);
                    let mut i = String::new();
                    fi.write(&im, &mut i);
                    // The `j` goes before the padding on the right.
                    let end = i.trim_end().len();
                    i.insert(end, 'j');
                    out.push_str(&i);
                }
                _ => out.push('?'),
            },
            Format::Repr => match v {
                Value::Str(text) => repr::write_str(text, out),
                v => out.push_str(&v.to_string()),
            },
            Format::Str => out.push_str(&v.to_string()),
            Format::Time { width } => {
                let text = time_text(v).unwrap_or_else(|| "'NaT'".to_string());
                out.push_str(&format!("{text:>width$}"));
            }
            Format::Record(_) | Format::SubArray { .. } => out.push('?'),
        }
    }
}

/// A datetime's quoted ISO text or a timedelta's count, `None` for NaT.
fn time_text(v: &Value<'_>) -> Option<String> {
    match v {
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => None,
        Value::DateTime(..) => Some(format!("'{v}'")),
        Value::TimeDelta(count, _) => Some(count.to_string()),
        _ => Some(v.to_string()),
    }
}

/// NumPy's `SubArrayFormat`: a record field's subarray as nested lists, `...` between the
/// first and last [`EDGE_ITEMS`] of a long axis when it has over [`THRESHOLD`] elements.
fn write_subarray(
    shape: &[usize],
    items: &[&[u8]],
    summary: bool,
    write: &dyn Fn(&[u8], &mut String),
    out: &mut String,
) {
    let Some((&n, rest)) = shape.split_first() else {
        if let Some(item) = items.first() {
            write(item, out);
        }
        return;
    };
    let stride: usize = rest.iter().product();
    let part = |i: usize, out: &mut String| {
        let from = (i * stride).min(items.len());
        let to = ((i + 1) * stride).min(items.len());
        write_subarray(rest, &items[from..to], summary, write, out);
    };
    out.push('[');
    let indices: Vec<Option<usize>> = if summary && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).map(Some).chain([None]).chain((n - EDGE_ITEMS..n).map(Some)).collect()
    } else {
        (0..n).map(Some).collect()
    };
    for (k, i) in indices.into_iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        match i {
            Some(i) => part(i, out),
            None => out.push_str("..."),
        }
    }
    out.push(']');
}

// ---------------------------------------------------------------------------------------
// Floats: NumPy's `FloatingFormat` (floatmode 'maxprec', precision 8)

/// One layout for all the floats of an array.
#[derive(Debug)]
struct FloatFormat {
    scientific: bool,
    pad_left: usize,
    pad_right: usize,
    /// Scientific: the fractional digits every mantissa gets.
    precision: usize,
    /// Scientific: the exponent's digits at least.
    exp_size: usize,
    /// A `+` before non-negative values (a complex's imaginary part).
    plus: bool,
}

/// A finite float's text split where NumPy splits it: the sign and integer part, the
/// fractional digits, and (scientific) the exponent.
struct FloatText {
    int: String,
    frac: String,
    exp: i32,
}

impl FloatFormat {
    /// The layout of `values`, floats of `size` bytes (2, 4, 8 or 16).
    fn new(values: &[FloatDigits], size: u8, plus: bool) -> FloatFormat {
        let finite: Vec<&FloatDigits> = values.iter().filter(|v| v.finite.is_some()).collect();
        let nonzero = finite.iter().filter(|v| v.finite.as_ref().is_some_and(|(d, _)| d != "0"));
        let (mut max, mut min) = (f64::NEG_INFINITY, f64::INFINITY);
        for v in nonzero {
            max = max.max(v.value.abs());
            min = min.min(v.value.abs());
        }
        // No nonzero value: positional. A long double beyond `f64` (its `value` infinite)
        // is past every threshold.
        let scientific = max >= min && exceeds(max, min, size);
        let mut f = FloatFormat { scientific, pad_left: 0, pad_right: 0, precision: 0, exp_size: 0, plus };
        let texts: Vec<FloatText> = finite.iter().map(|v| f.text(v)).collect();
        f.pad_left = texts.iter().map(|t| t.int.len()).max().unwrap_or(0);
        if scientific {
            f.precision = texts.iter().map(|t| t.frac.len()).max().unwrap_or(0);
            f.exp_size = texts.iter().map(|t| exp_digits(t.exp)).max().unwrap_or(2);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            f.pad_right = texts.iter().map(|t| t.frac.len()).max().unwrap_or(0);
        }
        if finite.len() < values.len() {
            let neginf = plus || values.iter().any(|v| v.finite.is_none() && !v.nan && v.negative);
            let offset = f.pad_right + 1;
            let need = (3 + usize::from(neginf)).saturating_sub(offset);
            f.pad_left = f.pad_left.max(need);
        }
        f
    }

    /// The text of a finite value, before padding: at most [`PRECISION`] digits after
    /// the point, trailing zeros dropped (`1.` for one).
    fn text(&self, v: &FloatDigits) -> FloatText {
        let (digits, exp10) = v.finite.clone().unwrap_or_else(|| ("0".into(), 0));
        let sign = if v.negative {
            "-"
        } else if self.plus {
            "+"
        } else {
            ""
        };
        let (int, frac, exp) = if self.scientific {
            let (digits, exp10) = if digits.len() > PRECISION + 1 {
                let text = format!("{:.*e}", PRECISION, v.value.abs());
                let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
                (mantissa.replace('.', ""), exp.parse().unwrap_or(exp10))
            } else {
                (digits, exp10)
            };
            let digits = digits.trim_end_matches('0');
            let digits = if digits.is_empty() { "0" } else { digits };
            (digits[..1].to_string(), digits[1..].to_string(), exp10)
        } else {
            let fraction_digits = digits.len() as i32 - exp10 - 1;
            let (int, frac) = if fraction_digits > PRECISION as i32 {
                let text = format!("{:.*}", PRECISION, v.value.abs());
                let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
                (int.to_string(), frac.trim_end_matches('0').to_string())
            } else if exp10 >= 0 {
                let whole = exp10 as usize + 1;
                let int: String =
                    (0..whole).map(|i| digits.as_bytes().get(i).map_or('0', |&d| char::from(d))).collect();
                (int, digits.get(whole..).unwrap_or("").to_string())
            } else {
                ("0".to_string(), "0".repeat((-exp10 - 1) as usize) + &digits)
            };
            (int, frac, 0)
        };
        FloatText { int: format!("{sign}{int}"), frac, exp }
    }

    fn write(&self, v: &FloatDigits, out: &mut String) {
        if v.finite.is_none() {
            let text = if v.nan {
                if self.plus {
                    "+nan"
                } else {
                    "nan"
                }
            } else if v.negative {
                "-inf"
            } else if self.plus {
                "+inf"
            } else {
                "inf"
            };
            let width = self.pad_left + self.pad_right + 1;
            out.push_str(&format!("{text:>width$}"));
            return;
        }
        let mut t = self.text(v);
        if self.scientific && v.exact {
            // NumPy's `min_digits`: digits past the shortest are the value's own, rounded
            // at the last (`5.8338238e+05`, not `5.833824e+05` padded with a zero).
            let text = format!("{:.*e}", self.precision, v.value.abs());
            let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
            let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let sign = &t.int[..t.int.len() - 1];
            t = FloatText { int: format!("{sign}{int}"), frac: frac.to_string(), exp: exp.parse().unwrap_or(t.exp) };
        }
        out.push_str(&format!("{:>w$}.", t.int, w = self.pad_left));
        if self.scientific {
            out.push_str(&format!("{:0<w$}", t.frac, w = self.precision));
            out.push('e');
            out.push(if t.exp < 0 { '-' } else { '+' });
            out.push_str(&format!("{:0>w$}", t.exp.unsigned_abs(), w = self.exp_size));
        } else {
            out.push_str(&format!("{:<w$}", t.frac, w = self.pad_right));
        }
    }
}

/// The digits of an exponent as NumPy writes it: at least two.
fn exp_digits(exp: i32) -> usize {
    exp.unsigned_abs().to_string().len().max(2)
}

/// Whether nonzero magnitudes from `min` to `max` (floats of `size` bytes) go scientific:
/// the largest at least `1e8` (`1e6` for `float32`, `1e3` for `float16`), the smallest
/// below `1e-4`, or a ratio over 1000 — each compared in the float's own type.
fn exceeds(max: f64, min: f64, size: u8) -> bool {
    match size {
        2 => {
            let half = |x: f64| scalar::f16_to_f64(scalar::narrow_f16(x));
            let ratio = half(f64::from(scalar::narrow(max) / scalar::narrow(min)));
            max >= 1e3 || min < half(1e-4) || ratio > 1000.0
        }
        4 => {
            let (max32, min32) = (scalar::narrow(max), scalar::narrow(min));
            max32 >= 1e6 || min32 < 1e-4 || max32 / min32 > 1000.0
        }
        _ => max >= 1e8 || min < 1e-4 || max / min > 1000.0,
    }
}

#[cfg(test)]
mod tests;
