//! The dtype model: one description of NumPy dtypes, shared by every path (typed, dynamic,
//! npz, maps).
//!
//! [`DType::from_descr`] turns a header's `descr` value into a [`DType`] exactly as NumPy's
//! `numpy.lib.format.descr_to_dtype` does (padding entries `('', '|Vn')` become gaps between
//! field offsets), and [`DType::to_descr`] turns it back exactly as NumPy's `dtype.descr`
//! does (gaps become `('', '|Vn')` entries again). Pure functions, no I/O.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};
use crate::literal::{self, Kind, Literal, ParseOptions, Tape, Value};
use crate::repr;

mod columns;
mod descr;
mod names;

pub use columns::Column;

use names::NameSet;

/// Largest itemsize NumPy accepts for any dtype (its sizes are C `int`s).
pub const MAX_ITEMSIZE: usize = i32::MAX as usize;

/// Byte order of a scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: the type has no byte order (one-byte numbers, `S`, `V`, `b1`).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of the machine this code runs on.
    #[cfg(target_endian = "little")]
    pub const NATIVE: ByteOrder = ByteOrder::Little;
    /// The byte order of the machine this code runs on.
    #[cfg(target_endian = "big")]
    pub const NATIVE: ByteOrder = ByteOrder::Big;

    /// The character NumPy uses for it: `<`, `>` or `|`.
    pub fn as_char(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }

    /// True when data in this order can be used on this machine without swapping.
    pub fn is_native(self) -> bool {
        self != ByteOrder::NATIVE.swapped()
    }

    /// The other order (`NotApplicable` stays).
    pub fn swapped(self) -> ByteOrder {
        match self {
            ByteOrder::Little => ByteOrder::Big,
            ByteOrder::Big => ByteOrder::Little,
            ByteOrder::NotApplicable => ByteOrder::NotApplicable,
        }
    }
}

/// The unit of a `datetime64`/`timedelta64`, without its multiple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TimeUnit {
    /// No unit (`M8`, `m8`): NumPy's generic unit.
    Generic,
    Years,
    Months,
    Weeks,
    Days,
    Hours,
    Minutes,
    Seconds,
    Milliseconds,
    Microseconds,
    Nanoseconds,
    Picoseconds,
    Femtoseconds,
    Attoseconds,
}

impl TimeUnit {
    const ALL: [(TimeUnit, &'static str); 13] = [
        (TimeUnit::Years, "Y"),
        (TimeUnit::Months, "M"),
        (TimeUnit::Weeks, "W"),
        (TimeUnit::Days, "D"),
        (TimeUnit::Hours, "h"),
        (TimeUnit::Minutes, "m"),
        (TimeUnit::Seconds, "s"),
        (TimeUnit::Milliseconds, "ms"),
        (TimeUnit::Microseconds, "us"),
        (TimeUnit::Nanoseconds, "ns"),
        (TimeUnit::Picoseconds, "ps"),
        (TimeUnit::Femtoseconds, "fs"),
        (TimeUnit::Attoseconds, "as"),
    ];

    /// NumPy's code for the unit (`"s"`, `"us"`, ...); empty for [`TimeUnit::Generic`].
    pub fn code(self) -> &'static str {
        Self::ALL.iter().find(|(u, _)| *u == self).map_or("", |(_, c)| c)
    }

    fn from_code(code: &str) -> Option<TimeUnit> {
        match code {
            "generic" => Some(TimeUnit::Generic),
            "μs" => Some(TimeUnit::Microseconds),
            _ => Self::ALL.iter().find(|(_, c)| *c == code).map(|(u, _)| *u),
        }
    }
}

/// A datetime unit with its multiple, e.g. `25s` in `<M8[25s]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateUnit {
    /// The base unit.
    pub unit: TimeUnit,
    /// How many base units one step is (1 for plain units; NumPy allows 0 too).
    pub multiple: u32,
}

impl DateUnit {
    /// A unit with multiple 1.
    pub const fn new(unit: TimeUnit) -> Self {
        DateUnit { unit, multiple: 1 }
    }

    /// NumPy's generic unit (`M8` with no brackets).
    pub const GENERIC: DateUnit = DateUnit { unit: TimeUnit::Generic, multiple: 1 };

    /// Writes the unit as a type string ends: `[s]`, `[25s]`, nothing for the generic unit.
    fn write_suffix(self, out: &mut String) {
        if self.unit == TimeUnit::Generic {
            return;
        }
        out.push('[');
        if self.multiple != 1 {
            push_decimal(u64::from(self.multiple), out);
        }
        out.push_str(self.unit.code());
        out.push(']');
    }
}

/// The type of a scalar (non-record) dtype, without byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `b1`: one byte, 0 or 1.
    Bool,
    /// `i1`, `i2`, `i4`, `i8`: signed integer of that many bytes.
    Int(u8),
    /// `u1`, `u2`, `u4`, `u8`: unsigned integer of that many bytes.
    UInt(u8),
    /// `f2`, `f4`, `f8`; `f16` is x86 long double (80 bits in 16 bytes), kept as raw bytes.
    Float(u8),
    /// `c8`, `c16`; `c32` is a pair of long doubles, kept as raw bytes.
    Complex(u8),
    /// `M8[unit]`: datetime64, an `i64` count of units since 1970.
    DateTime(DateUnit),
    /// `m8[unit]`: timedelta64, an `i64` count of units.
    TimeDelta(DateUnit),
    /// `S n`: `n` bytes, NUL-padded.
    Bytes(usize),
    /// `U n`: `n` UCS-4 code units (4 n bytes), NUL-padded.
    Unicode(usize),
    /// `V n`: `n` raw bytes.
    Void(usize),
    /// `O`: NumPy's object dtype, a reference to a Python object (8 bytes in memory). A
    /// file's data is then a pickle, not raw elements: it is read and written through
    /// [`crate::object`] only, never as bytes.
    Object,
}

impl ScalarType {
    /// Size of one element in bytes.
    pub fn itemsize(self) -> usize {
        match self {
            ScalarType::Bool => 1,
            ScalarType::Int(n) | ScalarType::UInt(n) | ScalarType::Float(n) | ScalarType::Complex(n) => n as usize,
            ScalarType::DateTime(_) | ScalarType::TimeDelta(_) | ScalarType::Object => 8,
            ScalarType::Bytes(n) | ScalarType::Void(n) => n,
            ScalarType::Unicode(n) => n * 4,
        }
    }

    /// Whether the type's bytes depend on byte order (and so carry `<` or `>`).
    pub fn has_byte_order(self) -> bool {
        match self {
            ScalarType::Bool | ScalarType::Bytes(_) | ScalarType::Void(_) | ScalarType::Object => false,
            ScalarType::Int(n) | ScalarType::UInt(n) => n > 1,
            _ => true,
        }
    }

    /// Size of the unit that byte order swaps: 8 for `c16` (two `f8`), 4 for `U`, 0 when
    /// nothing is swapped.
    pub fn swap_unit(self) -> usize {
        if !self.has_byte_order() {
            return 0;
        }
        match self {
            ScalarType::Complex(n) => n as usize / 2,
            ScalarType::Unicode(_) => 4,
            other => other.itemsize(),
        }
    }
}

/// A scalar dtype: a type and its byte order, e.g. `>f8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scalar {
    ty: ScalarType,
    order: ByteOrder,
}

impl Scalar {
    /// A scalar of the given type and byte order, normalized as NumPy normalizes: types
    /// without byte order get `|`, and `|` on a type that has one means native.
    pub fn new(ty: ScalarType, order: ByteOrder) -> Self {
        let order = match (ty.has_byte_order(), order) {
            (false, _) => ByteOrder::NotApplicable,
            (true, ByteOrder::NotApplicable) => ByteOrder::NATIVE,
            (true, o) => o,
        };
        Scalar { ty, order }
    }

    /// A scalar of the given type in this machine's byte order.
    pub fn native(ty: ScalarType) -> Self {
        Scalar::new(ty, ByteOrder::NATIVE)
    }

    /// The type.
    pub fn ty(&self) -> ScalarType {
        self.ty
    }

    /// The byte order.
    pub fn order(&self) -> ByteOrder {
        self.order
    }

    /// Size of one element in bytes.
    pub fn itemsize(&self) -> usize {
        self.ty.itemsize()
    }

    /// True when the bytes need no swapping on this machine.
    pub fn is_native(&self) -> bool {
        self.order.is_native()
    }

    /// `u1` in place of `b1` (the byte as stored); any other scalar as it is. See
    /// [`DType::bools_as_bytes`].
    pub fn bool_as_byte(&self) -> Scalar {
        if self.ty == ScalarType::Bool {
            Scalar::new(ScalarType::UInt(1), self.order)
        } else {
            *self
        }
    }

    /// The same type in the other byte order (or the same scalar if it has none).
    pub fn swapped(&self) -> Scalar {
        Scalar { ty: self.ty, order: self.order.swapped() }
    }

    /// NumPy's type string (`dtype.str`), e.g. `<f8`, `|S5`, `>M8[25s]`.
    pub fn type_str(&self) -> String {
        let mut out = String::with_capacity(8);
        self.write_type_str(&mut out);
        out
    }

    /// Writes [`Scalar::type_str`] to `out`.
    fn write_type_str(&self, out: &mut String) {
        let o = self.order.as_char();
        let (order, kind, size) = match self.ty {
            ScalarType::Bool => ('|', "b", 1),
            ScalarType::Int(n) => (o, "i", usize::from(n)),
            ScalarType::UInt(n) => (o, "u", usize::from(n)),
            ScalarType::Float(n) => (o, "f", usize::from(n)),
            ScalarType::Complex(n) => (o, "c", usize::from(n)),
            ScalarType::DateTime(u) | ScalarType::TimeDelta(u) => {
                out.push(o);
                out.push_str(if matches!(self.ty, ScalarType::DateTime(_)) { "M8" } else { "m8" });
                u.write_suffix(out);
                return;
            }
            ScalarType::Bytes(n) => ('|', "S", n),
            ScalarType::Unicode(n) => (o, "U", n),
            ScalarType::Void(n) => ('|', "V", n),
            ScalarType::Object => {
                out.push_str("|O");
                return;
            }
        };
        out.push(order);
        out.push_str(kind);
        push_decimal(size as u64, out);
    }

    /// Parses a NumPy type string such as `<f8`, `|b1`, `>U5`, `<M8[25s]`.
    ///
    /// Accepts what NumPy writes and what other writers commonly write: an optional byte
    /// order (`<`, `>`, `|`, `=`), a kind, and a size (or a datetime unit). The object
    /// dtype is spelled `O`, `O4` or `O8` with any byte order, as NumPy's
    /// `descr_to_dtype` accepts, and always written `|O`.
    ///
    /// # Errors
    /// [`ErrorKind::Dtype`] for anything NumPy would not understand.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::{Scalar, ScalarType};
    ///
    /// assert_eq!(Scalar::parse(">f8")?.type_str(), ">f8");
    /// assert_eq!(Scalar::parse("<O8")?.ty(), ScalarType::Object);
    /// assert_eq!(Scalar::parse("O")?.type_str(), "|O");
    /// assert!(Scalar::parse("O2").is_err());
    /// // NumPy's one-letter type codes, as `np.dtype` reads them
    /// assert_eq!(Scalar::parse(">i")?.type_str(), ">i4");
    /// assert_eq!(Scalar::parse("d")?.type_str(), "<f8");
    /// // and what NumPy refuses: a datetime unit without the size
    /// assert!(Scalar::parse(">m[us]").is_err());
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    #[inline]
    pub fn parse(s: &str) -> Result<Scalar> {
        match Scalar::parse_common(s) {
            Some(scalar) => Ok(scalar),
            None => Scalar::parse_any(s),
        }
    }

    /// What [`Scalar::parse`] gives the type strings almost every field has: a byte order
    /// (`<`, `>`, `|`, `=`), a kind of number, text or bytes, and a one-digit size (`<f8`,
    /// `|u1`, `>i4`, `|S8`). Read in place by the caller (no call, no `Result` through
    /// memory); `None` for every other string, which [`Scalar::parse_any`] reads.
    #[inline(always)]
    fn parse_common(s: &str) -> Option<Scalar> {
        let &[order, kind, digit] = s.as_bytes() else { return None };
        let order = match order {
            b'<' => ByteOrder::Little,
            b'>' => ByteOrder::Big,
            b'|' => ByteOrder::NotApplicable,
            b'=' => ByteOrder::NATIVE,
            _ => return None,
        };
        let n = digit.wrapping_sub(b'0');
        let ty = match (kind, n) {
            (b'f', 2 | 4 | 8) => ScalarType::Float(n),
            (b'i', 1 | 2 | 4 | 8) => ScalarType::Int(n),
            (b'u', 1 | 2 | 4 | 8) => ScalarType::UInt(n),
            (b'c', 8) => ScalarType::Complex(8),
            (b'b', 1) => ScalarType::Bool,
            (b'S', 0..=9) => ScalarType::Bytes(usize::from(n)),
            (b'U', 0..=9) => ScalarType::Unicode(usize::from(n)),
            (b'V', 0..=9) => ScalarType::Void(usize::from(n)),
            _ => return None,
        };
        Some(Scalar::new(ty, order))
    }

    /// [`Scalar::parse`] of any string: the common ones and the rest, with their errors.
    #[inline(never)]
    fn parse_any(s: &str) -> Result<Scalar> {
        let bad = |reason: &str| Error::dtype(Literal::Str(s.to_string()).repr(), reason);
        let (order, rest) = match s.chars().next() {
            Some('<') => (ByteOrder::Little, &s[1..]),
            Some('>') => (ByteOrder::Big, &s[1..]),
            Some('|') => (ByteOrder::NotApplicable, &s[1..]),
            Some('=') => (ByteOrder::NATIVE, &s[1..]),
            _ => (ByteOrder::NotApplicable, s),
        };
        let mut chars = rest.chars();
        let Some(kind) = chars.next() else { return Err(bad("empty type string")) };
        let tail = chars.as_str();
        if kind == 'O' {
            // NumPy: `O` with no size, or the pointer size of a 32- or 64-bit build.
            return match tail {
                "" | "4" | "8" => Ok(Scalar::new(ScalarType::Object, order)),
                _ => Err(bad("the object dtype is 'O', 'O4' or 'O8'")),
            };
        }
        if kind == '?' && tail.is_empty() {
            return Ok(Scalar::new(ScalarType::Bool, order));
        }
        if kind == 'M' || kind == 'm' {
            // `M`, `M8`, `M8[us]`; NumPy refuses a unit without the size (`M[us]`).
            let unit_part = match tail.strip_prefix('8') {
                Some(unit) => unit,
                None if tail.is_empty() => tail,
                None => return Err(bad("a datetime unit follows the size, as in 'M8[us]'")),
            };
            let unit = parse_date_unit(unit_part).ok_or_else(|| bad("invalid datetime unit"))?;
            let ty = if kind == 'M' { ScalarType::DateTime(unit) } else { ScalarType::TimeDelta(unit) };
            return Ok(Scalar::new(ty, order));
        }
        if tail.is_empty() {
            // NumPy takes a bare `a` (as `S0`) but not one after a byte order.
            let prefixed = rest.len() < s.len();
            match char_code(kind) {
                Some(ty) if !(kind == 'a' && prefixed) => return Ok(Scalar::new(ty, order)),
                _ if kind == 'T' => {
                    return Err(bad("'T' is NumPy's variable-width StringDType, whose values a .npy file holds \
                         only as pickled objects (descr '|O')"))
                }
                _ if kind == 'a' => return Err(bad("NumPy reads a bare 'a' as 'S0', but not after a byte order")),
                _ => {}
            }
        }
        // `a<n>`: NumPy's deprecated alias of `S<n>`.
        let kind = if kind == 'a' { 'S' } else { kind };
        let size = if let [digit @ b'0'..=b'9'] = tail.as_bytes() {
            usize::from(digit - b'0')
        } else if tail.is_empty() && matches!(kind, 'S' | 'U' | 'V') {
            0
        } else if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) && tail.len() <= 10 {
            tail.parse::<usize>().map_err(|_| bad("invalid size"))?
        } else {
            return Err(bad("expected a type string like '<f8'"));
        };
        let fixed = |allowed: &[usize], make: fn(u8) -> ScalarType| {
            if allowed.contains(&size) {
                Ok(make(size as u8))
            } else {
                Err(bad("unsupported size for this kind"))
            }
        };
        let ty = match kind {
            'b' if size == 1 => ScalarType::Bool,
            'i' => fixed(&[1, 2, 4, 8], ScalarType::Int)?,
            'u' => fixed(&[1, 2, 4, 8], ScalarType::UInt)?,
            'f' => fixed(&[2, 4, 8, 16], ScalarType::Float)?,
            'c' => fixed(&[8, 16, 32], ScalarType::Complex)?,
            'S' => ScalarType::Bytes(size),
            'U' => ScalarType::Unicode(size),
            'V' => ScalarType::Void(size),
            _ => return Err(bad("unknown type kind")),
        };
        if ty.itemsize() > MAX_ITEMSIZE || (kind == 'U' && size > MAX_ITEMSIZE / 4) {
            return Err(bad("itemsize too large"));
        }
        Ok(Scalar::new(ty, order))
    }
}

/// Bytes of a C `long double` where NumPy runs: 16 on x86-64 (80-bit extended, padded)
/// and on 64-bit Linux and BSDs elsewhere (IEEE quad), 8 where it is a `double` (Windows,
/// Apple silicon); `None` where it has a size the model does not hold (12 on 32-bit x86).
const LONG_DOUBLE: Option<u8> = if cfg!(any(windows, all(target_vendor = "apple", target_arch = "aarch64"))) {
    Some(8)
} else if cfg!(target_pointer_width = "64") {
    Some(16)
} else {
    None
};

/// The type of a one-letter C type code without a size, as `np.dtype` reads it where this
/// code runs (NumPy's `typecodes`): `'i'` is `i4`, `'l'` a C `long`, `'p'` an `intp`, `'g'`
/// a `long double`, `'c'` `S1`, `'a'` `S0`. `None` for other letters (`'u'` alone is not a
/// type, and `S`, `U`, `V`, `M`, `m`, `O`, `?` are read elsewhere).
fn char_code(code: char) -> Option<ScalarType> {
    use std::mem::size_of;
    let long = size_of::<std::ffi::c_long>() as u8;
    let intp = size_of::<isize>() as u8;
    Some(match code {
        'b' => ScalarType::Int(1),
        'B' => ScalarType::UInt(1),
        'h' => ScalarType::Int(2),
        'H' => ScalarType::UInt(2),
        'i' => ScalarType::Int(4),
        'I' => ScalarType::UInt(4),
        'l' => ScalarType::Int(long),
        'L' => ScalarType::UInt(long),
        'q' => ScalarType::Int(8),
        'Q' => ScalarType::UInt(8),
        'p' | 'n' => ScalarType::Int(intp),
        'P' | 'N' => ScalarType::UInt(intp),
        'e' => ScalarType::Float(2),
        'f' => ScalarType::Float(4),
        'd' => ScalarType::Float(8),
        'g' => ScalarType::Float(LONG_DOUBLE?),
        'F' => ScalarType::Complex(8),
        'D' => ScalarType::Complex(16),
        'G' => ScalarType::Complex(2 * LONG_DOUBLE?),
        'c' => ScalarType::Bytes(1),
        'a' => ScalarType::Bytes(0),
        _ => return None,
    })
}

fn parse_date_unit(s: &str) -> Option<DateUnit> {
    if s.is_empty() {
        return Some(DateUnit::GENERIC);
    }
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    let (num, code) = inner.split_at(digits);
    let unit = TimeUnit::from_code(code)?;
    let multiple = if num.is_empty() {
        1
    } else {
        let m: u64 = if num.len() > 10 { return None } else { num.parse().ok()? };
        i32::try_from(m).ok()? as u32
    };
    if unit == TimeUnit::Generic {
        return (multiple == 1 && num.is_empty()).then_some(DateUnit::GENERIC);
    }
    Some(DateUnit { unit, multiple })
}

/// One named field of a [`Record`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's name (may be empty for a real, non-padding field, as NumPy allows).
    pub name: String,
    /// The field's title, if any: any Python literal (NumPy writes `((title, name), fmt)`).
    pub title: Option<Literal>,
    /// The field's type (a [`DType::SubArray`] for fields like `('v', '<f4', (3,))`).
    pub dtype: DType,
    /// Byte offset of the field within the record.
    pub offset: usize,
}

impl Field {
    /// A field without title.
    pub fn new(name: impl Into<String>, dtype: DType, offset: usize) -> Self {
        Field { name: name.into(), title: None, dtype, offset }
    }
}

/// A structured dtype: named fields at byte offsets, and a total itemsize.
///
/// Fields are in increasing offset order and do not overlap; bytes not covered by a field
/// are padding (written by NumPy as `('', '|Vn')` entries in the descr).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    fields: Vec<Field>,
    itemsize: usize,
}

impl Record {
    /// A record with the given fields and itemsize.
    ///
    /// # Errors
    /// [`ErrorKind::Dtype`] when fields overlap, are out of offset order, run past
    /// `itemsize`, or share a name (or a `str` title with a name), as NumPy refuses;
    /// [`ErrorKind::UnsupportedDtype`] for a field of the object dtype (NumPy pickles
    /// such arrays; only whole object arrays are supported, see [`crate::object`]).
    pub fn new(fields: Vec<Field>, itemsize: usize) -> Result<Record> {
        if let Some(f) = fields.iter().find(|f| f.dtype.has_object()) {
            return Err(object_field(&f.name, &f.dtype));
        }
        let mut end = 0usize;
        let titles = fields.iter().filter(|f| matches!(f.title, Some(Literal::Str(_)))).count();
        let mut used = NameSet::with_capacity(fields.len() + titles);
        for f in &fields {
            let bad = |reason: &str| Error::dtype(f.name.clone(), reason.to_string());
            if f.offset < end {
                return Err(bad("fields overlap or are out of offset order (NumPy cannot save that)"));
            }
            end = f.offset.checked_add(f.dtype.itemsize()).ok_or_else(|| bad("offset overflows"))?;
            if !used.insert(&f.name) {
                return Err(Error::dtype(
                    Literal::Str(f.name.clone()).repr(),
                    "field name already used as a name or title",
                ));
            }
            if let Some(Literal::Str(t)) = &f.title {
                if !used.insert(t) {
                    return Err(Error::dtype(
                        Literal::Str(t.clone()).repr(),
                        "field title already used as a name or title",
                    ));
                }
            }
        }
        if end > itemsize {
            return Err(Error::dtype(format!("itemsize {itemsize}"), "fields run past the itemsize"));
        }
        if itemsize > MAX_ITEMSIZE {
            return Err(Error::dtype(format!("itemsize {itemsize}"), "itemsize too large"));
        }
        Ok(Record { fields, itemsize })
    }

    /// A packed record (no padding) of `(name, dtype)` fields in order, as NumPy's
    /// `np.dtype([(name, fmt), ...])` without `align=True`.
    ///
    /// # Errors
    /// As [`Record::new`].
    pub fn packed<N: Into<String>>(fields: impl IntoIterator<Item = (N, DType)>) -> Result<Record> {
        let mut offset = 0usize;
        let mut out = Vec::new();
        for (name, dtype) in fields {
            let size = dtype.itemsize();
            out.push(Field::new(name, dtype, offset));
            offset = offset.checked_add(size).ok_or_else(|| Error::dtype("record", "itemsize too large"))?;
        }
        Record::new(out, offset)
    }

    /// A record describing a Rust type's memory: fields in any order (Rust may reorder
    /// them), sorted here by offset; bytes no field covers are padding.
    ///
    /// # Errors
    /// As [`Record::new`].
    pub fn native_layout(mut fields: Vec<Field>, itemsize: usize) -> Result<Record> {
        fields.sort_by_key(|f| f.offset);
        Record::new(fields, itemsize)
    }

    /// The fields, in offset order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The field of that name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Size of one record in bytes, padding included.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }
}

/// A fixed-shape array of another dtype, as a record field's type (`('v', '<f4', (3,))`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubArray {
    base: Box<DType>,
    shape: Vec<usize>,
}

impl SubArray {
    /// A subarray of `shape` elements of `base`, kept as given (see [`DType::subarray`] for
    /// the checked constructor).
    pub(crate) fn new(base: DType, shape: Vec<usize>) -> SubArray {
        SubArray { base: Box::new(base), shape }
    }

    /// The innermost non-subarray element type (NumPy may nest `(('<f8', (2,)), (3,))`).
    pub fn flat_base(&self) -> &DType {
        match &*self.base {
            DType::SubArray(inner) => inner.flat_base(),
            other => other,
        }
    }

    /// The full shape down to [`SubArray::flat_base`]: `(3, 2)` for `(('<f8', (2,)), (3,))`.
    pub fn flat_shape(&self) -> Vec<usize> {
        let mut shape = self.shape.clone();
        if let DType::SubArray(inner) = &*self.base {
            shape.extend(inner.flat_shape());
        }
        shape
    }

    /// The element type (which NumPy keeps as given, even when it is a subarray itself).
    pub fn base(&self) -> &DType {
        &self.base
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of base elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the shape has a zero dimension.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A NumPy dtype: a scalar, a record, or (as a field type) a subarray.
#[derive(Debug, Clone, PartialEq)]
pub enum DType {
    /// A scalar type such as `<f8`.
    Scalar(Scalar),
    /// A structured type with named fields.
    Record(Record),
    /// A fixed-shape array of another dtype.
    SubArray(SubArray),
}

impl From<Scalar> for DType {
    fn from(s: Scalar) -> Self {
        DType::Scalar(s)
    }
}

impl From<Record> for DType {
    fn from(r: Record) -> Self {
        DType::Record(r)
    }
}

/// Deepest nesting of records and subarrays in a dtype.
pub(crate) const MAX_DTYPE_DEPTH: usize = 32;

impl DType {
    /// A native-order scalar dtype.
    pub fn native(ty: ScalarType) -> DType {
        DType::Scalar(Scalar::native(ty))
    }

    /// A subarray dtype `(base, shape)`; an empty shape gives `base` itself, as in NumPy.
    ///
    /// As NumPy, the number of elements must fit a C `int`, and so must the size in bytes
    /// (also for a zero-sized base): the element count is the product of the dims up to
    /// the first zero, each partial product within `isize::MAX`.
    ///
    /// # Errors
    /// [`ErrorKind::Dtype`] when the element count or the total size overflows NumPy's
    /// limit; [`ErrorKind::UnsupportedDtype`] for a subarray of the object dtype.
    pub fn subarray(base: DType, shape: Vec<usize>) -> Result<DType> {
        if shape.is_empty() {
            return Ok(base);
        }
        if base.has_object() {
            return Err(ErrorKind::UnsupportedDtype {
                descr: DType::SubArray(SubArray::new(base, shape)).descr(),
                reason: "subarrays of objects are not supported (only whole object arrays are)".into(),
            }
            .into());
        }
        // NumPy's `PyArray_OverflowMultiplyList`: 0 at the first zero dim, an error if a
        // partial product overflows an npy_intp.
        let mut items = Some(1usize);
        for &d in &shape {
            items = match items {
                Some(_) if d == 0 => Some(0),
                Some(n) => n.checked_mul(d).filter(|&n| n <= isize::MAX as usize),
                None => None,
            };
            if items.is_none_or(|n| n == 0) {
                break;
            }
        }
        let size = items.filter(|&n| n <= MAX_ITEMSIZE).and_then(|n| n.checked_mul(base.itemsize()));
        if size.is_none_or(|s| s > MAX_ITEMSIZE) {
            return Err(Error::dtype(base.descr(), "subarray size in bytes must fit into a C int"));
        }
        Ok(DType::SubArray(SubArray { base: Box::new(base), shape }))
    }

    /// Size of one element in bytes.
    pub fn itemsize(&self) -> usize {
        match self {
            DType::Scalar(s) => s.itemsize(),
            DType::Record(r) => r.itemsize,
            DType::SubArray(a) => a.base.itemsize() * a.len(),
        }
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match self {
            DType::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The record, if this is one.
    pub fn as_record(&self) -> Option<&Record> {
        match self {
            DType::Record(r) => Some(r),
            _ => None,
        }
    }

    /// The same dtype with every multi-byte scalar in `order` (as NumPy's
    /// `dtype.newbyteorder`): used for `#[npy(endian = "big")]`.
    pub fn with_byte_order(&self, order: ByteOrder) -> DType {
        match self {
            DType::Scalar(s) => DType::Scalar(Scalar::new(s.ty(), order)),
            DType::SubArray(a) => DType::SubArray(SubArray::new(a.base.with_byte_order(order), a.shape.clone())),
            DType::Record(r) => DType::Record(Record {
                fields: r.fields.iter().map(|f| Field { dtype: f.dtype.with_byte_order(order), ..f.clone() }).collect(),
                itemsize: r.itemsize,
            }),
        }
    }

    /// True when the dtype is NumPy's object dtype `|O` or holds it in a field or subarray.
    /// Such arrays are stored as a pickle, not as raw elements.
    pub fn has_object(&self) -> bool {
        match self {
            DType::Scalar(s) => s.ty() == ScalarType::Object,
            DType::Record(r) => r.fields.iter().any(|f| f.dtype.has_object()),
            DType::SubArray(a) => a.base.has_object(),
        }
    }

    /// True when any part of the dtype is stored in non-native byte order.
    pub fn has_non_native(&self) -> bool {
        match self {
            DType::Scalar(s) => !s.is_native(),
            DType::Record(r) => r.fields.iter().any(|f| f.dtype.has_non_native()),
            DType::SubArray(a) => a.base.has_non_native(),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.descr())
    }
}

impl FromStr for DType {
    type Err = Error;

    /// Parses descr text as found in a header: `'<f8'`, `[('a', '<i4'), ('b', '>f8')]`.
    /// A bare type string without quotes (`<f8`) is accepted too.
    fn from_str(s: &str) -> Result<DType> {
        let t = s.trim();
        if !t.starts_with(['\'', '"', '[', '(']) {
            return Ok(DType::Scalar(Scalar::parse(t)?));
        }
        let tape = literal::parse_tape(t, ParseOptions::default())
            .map_err(|e| Error::dtype(s.to_string(), format!("at byte {}: {}", e.offset, e.reason)))?;
        DType::from_value(tape.root())
    }
}

/// The error for an object dtype inside a record.
fn object_field(name: &str, dtype: &DType) -> Error {
    ErrorKind::UnsupportedDtype {
        descr: dtype.descr(),
        reason: format!(
            "field {} holds Python objects: records with object fields are not supported \
             (only whole object arrays are, see npy_core::object)",
            Literal::Str(name.to_string()).repr()
        ),
    }
    .into()
}

/// Refuses dtypes whose data is not raw elements: an object array's data is a pickle, read
/// and written only through [`crate::object`].
pub(crate) fn refuse_objects(dtype: &DType) -> Result<()> {
    if !dtype.has_object() {
        return Ok(());
    }
    Err(ErrorKind::UnsupportedDtype {
        descr: dtype.descr(),
        reason: "an object array's data is a Python pickle, not raw elements: read it with \
                 Array::<Object>::read_npy or NpyReader::read::<Array<Object>> (npy_core::object)"
            .into(),
    }
    .into())
}

/// Writes `n` in decimal digits, without the formatting machinery.
fn push_decimal(n: u64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DType {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn round(s: &str) -> String {
        dt(s).descr()
    }

    #[test]
    fn scalar_type_strings_normalize_like_numpy() {
        // Expected values printed by NumPy 2.4: f.dtype_to_descr(f.descr_to_dtype(x)).
        for (input, want) in [
            ("'<b1'", "'|b1'"),
            ("'>u1'", "'|u1'"),
            ("'=f8'", "'<f8'"),
            ("'|f8'", "'<f8'"),
            ("'<S5'", "'|S5'"),
            ("'S0'", "'|S0'"),
            ("'<U0'", "'<U0'"),
            ("'|V0'", "'|V0'"),
            ("'<M8[25s]'", "'<M8[25s]'"),
            ("'<M8[1s]'", "'<M8[s]'"),
            ("'<m8[2Y]'", "'<m8[2Y]'"),
            ("'<M8[0s]'", "'<M8[0s]'"),
            ("'<m8[generic]'", "'<m8'"),
            ("'<M8[μs]'", "'<M8[us]'"),
            ("'M8'", "'<M8'"),
            ("'>M8'", "'>M8'"),
            ("'?'", "'|b1'"),
            ("'<f16'", "'<f16'"),
            ("'>c32'", "'>c32'"),
            ("'<f2'", "'<f2'"),
        ] {
            assert_eq!(round(input), want, "{input}");
        }
    }

    #[test]
    fn bad_scalars_are_refused() {
        for bad in [
            "'<f12'",
            "'<i0'",
            "'|V3000000000'",
            "'<U536870912'",
            "'<M8[2147483648s]'",
            "'<M8[3]'",
            "'<M8[D2]'",
            "'x8'",
            "''",
        ] {
            let e = bad.parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Dtype { .. }), "{bad}: {e}");
        }
        for bad in ["[('a', '<i4'), ('b', [('c', '|O')])]", "[('a', '|O', (2,))]", "('O', (2,))"] {
            let e = bad.parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{bad}: {e}");
        }
        for bad in ["'O2'", "'O16'", "'O0'", "'Object'"] {
            let e = bad.parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Dtype { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn object_dtype_spellings_match_numpy() {
        // NumPy 2.4: dtype_to_descr(descr_to_dtype(x)) is '|O' for each of these.
        for s in ["'O'", "'|O'", "'<O'", "'>O'", "'=O'", "'O8'", "'<O8'", "'|O8'", "'>O8'", "'O4'"] {
            let d = dt(s);
            assert_eq!(d.descr(), "'|O'", "{s}");
            assert_eq!(d.itemsize(), 8, "{s}");
            assert!(d.has_object(), "{s}");
        }
        assert!(!dt("'<f8'").has_object());
        let field = Field::new("o", DType::native(ScalarType::Object), 0);
        let e = Record::new(vec![field], 8).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
        assert!(refuse_objects(&dt("'|O'")).is_err());
        assert!(refuse_objects(&dt("'<i4'")).is_ok());
    }

    #[test]
    fn padding_becomes_gaps_and_back() {
        let d = dt("[('a', '|u1'), ('', '|V7'), ('b', '<f8'), ('c', '<i2'), ('', '|V6')]");
        let r = d.as_record().unwrap();
        assert_eq!(
            r.fields().iter().map(|f| (f.name.as_str(), f.offset)).collect::<Vec<_>>(),
            [("a", 0), ("b", 8), ("c", 16)]
        );
        assert_eq!(r.itemsize(), 24);
        assert_eq!(d.descr(), "[('a', '|u1'), ('', '|V7'), ('b', '<f8'), ('c', '<i2'), ('', '|V6')]");
    }

    #[test]
    fn descr_edge_cases_match_numpy() {
        // Each expectation was printed by NumPy 2.4 (dtype_to_descr(descr_to_dtype(x))).
        for (input, want) in [
            ("[('', '|V4', (2,)), ('a', '<f8')]", "[('', '|V8'), ('a', '<f8')]"),
            ("[('', '<f8', (2,)), ('a', '<i4')]", "[('', '|V16'), ('a', '<i4')]"),
            ("[('', '<i4'), ('a', '<f8')]", "[('', '<i4'), ('a', '<f8')]"),
            ("[('', []), ('a', '<f8')]", "[('', []), ('a', '<f8')]"),
            ("[('a', '<f8', ())]", "[('a', '<f8')]"),
            ("[('a', '<f8', 3)]", "[('a', '<f8', (3,))]"),
            ("[('a', '<f8', [2])]", "[('a', '<f8', (2,))]"),
            ("[('a', '<f8', 1)]", "[('a', '<f8', (1,))]"),
            ("[('a', '<f8', (0,))]", "[('a', '<f8', (0,))]"),
            ("[('a', [('', '|V3')])]", "[('a', [('', '|V3')])]"),
            ("[('a', ('<f8', (2,)), (3,))]", "[('a', ('<f8', (2,)), (3,))]"),
            ("[((1.5, 'a'), '<i4')]", "[((1.5, 'a'), '<i4')]"),
            ("[((None, 'a'), '<i4')]", "[('a', '<i4')]"),
            ("[((1, 'a'), '<i4'), ((1, 'b'), '<i4')]", "[((1, 'a'), '<i4'), ((1, 'b'), '<i4')]"),
            ("[((b'x', 'a'), '<i4'), ('x', '<i4')]", "[((b'x', 'a'), '<i4'), ('x', '<i4')]"),
            ("[]", "[]"),
        ] {
            assert_eq!(round(input), want, "{input}");
        }
        assert_eq!(dt("[('a', ('<f8', (2,)), (3,))]").itemsize(), 48);
        assert_eq!(dt("[('', '<f8', (2,)), ('a', '<i4')]").itemsize(), 20);
    }

    #[test]
    fn numpy_refusals_are_errors() {
        for bad in [
            "[('a', '<i4'), ('a', '<f8')]",
            "[(('t', 'a'), '<i4'), ('t', '<i4')]",
            "[(('a', 'b', 'c'), '<i4')]",
            "[('a',)]",
            "[('a', '<i4', (2,), 1)]",
            "[(1, '<i4')]",
            "[('a', '<f8', (-1,))]",
            "[('a', '<f8', (True,))]",
            "[('a', '|V2000000000'), ('b', '|V2000000000')]",
            "[('a', '<i4', (2147483647, 2))]",
        ] {
            let e = bad.parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Dtype { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn subarray_counts_follow_numpy() {
        // NumPy 2.4's descr_to_dtype: the element count and the bytes must fit a C int,
        // also for zero-sized bases; dims after a zero do not count, dims before it do.
        for ok in [
            "[('a', [], (2, 1073741823))]",
            "[('a', '<f8', (0, 2147483647, 2147483647))]",
            "[('a', '<f8', (2147483647, 2147483647, 0))]",
            "[('a', [], (2147483647, 0))]",
        ] {
            assert!(ok.parse::<DType>().is_ok(), "{ok}");
        }
        for bad in [
            "[('a', [], (2, 1073741824))]",
            "[('a', [], (2147483647, 2147483647))]",
            "[('a', '<f8', (2147483647, 2147483647, 2147483647, 0))]",
            "[('a', '|V0', (2147483647, 2147483647, 2147483647, 2147483647))]",
        ] {
            let e = bad.parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Dtype { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn depth_bomb_is_an_error() {
        let mut s = String::from("'<i4'");
        for _ in 0..40 {
            s = format!("[('a', {s})]");
        }
        let lit = literal::parse_with(&s, ParseOptions::new().max_depth(1000)).unwrap();
        assert!(matches!(DType::from_descr(&lit).unwrap_err().kind(), ErrorKind::Dtype { .. }));
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn many_fields_and_late_repeats() {
        let fields: Vec<String> = (0..3000).map(|i| format!("('f{i}', '<f8')")).collect();
        let d = dt(&format!("[{}]", fields.join(", ")));
        let r = d.as_record().unwrap();
        assert_eq!(r.fields().len(), 3000);
        assert_eq!((r.fields()[2999].name.as_str(), r.fields()[2999].offset), ("f2999", 2999 * 8));
        assert_eq!(d.itemsize(), 24_000);
        for (extra, want) in [
            ("('f17', '<i4')", "'f17': field name already used as a name or title"),
            ("(('f3', 'g'), '<i4')", "'f3': field title already used as a name or title"),
            ("(('t', 'f2999'), '<i4')", "'f2999': field name already used as a name or title"),
        ] {
            let e = format!("[{}, {extra}]", fields.join(", ")).parse::<DType>().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Dtype { .. }) && e.to_string().contains(want), "{extra}: {e}");
        }
    }

    #[test]
    fn literals_and_text_read_alike() {
        // A descr given as a Literal (the public from_descr) and as text: the same dtype, or
        // the same error.
        for s in [
            "'<f8'",
            "[('a', '|u1'), ('', '|V7'), ('b', [('c', '>i2', (2, 3))])]",
            "[((1.5, 'a'), '<i4'), ((b'x', 'b'), '<U3')]",
            "('<f8', (2,))",
            "[('a', '<i4'), ('a', '<f8')]",
            "[('a', '<f8', (-1,))]",
            "[(1, '<i4')]",
            "('<f8', (2,), 3)",
        ] {
            let lit = literal::parse(s).unwrap();
            match (DType::from_descr(&lit), s.parse::<DType>()) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{s}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{s}"),
                (a, b) => panic!("{s}: {a:?} but {b:?}"),
            }
        }
        // A literal nested however deep is refused, not a stack overflow.
        let mut deep = Literal::Str("<i4".into());
        for _ in 0..2_000 {
            deep = Literal::List(vec![Literal::Tuple(vec![Literal::Str("a".into()), deep])]);
        }
        assert!(matches!(DType::from_descr(&deep).unwrap_err().kind(), ErrorKind::Dtype { .. }));
    }

    #[test]
    fn titles_and_nesting_round_trip() {
        for s in [
            "[(('Trace identifier', 'tid'), '<i4'), (('Amplitude (counts)', 'amp'), '>f4'), ('plain', '|u1')]",
            "[('id', '<u2'), ('pts', [('x', '<f4'), ('y', [('z', '>i2'), ('w', '<U2')])], (2,)), ('grid', [('g', '|i1')], (2, 2))]",
            "[('a', '|i1'), ('', '|V7'), ('b', [('c', '<i8'), ('d', '|u1'), ('', '|V7')]), ('e', '<i2', (3,)), ('', '|V2')]",
            "[('', '|V2'), ('a', '<i2'), ('', '|V4'), ('b', '>f4'), ('', '|V4')]",
        ] {
            assert_eq!(round(s), s);
        }
        let d = dt("[('id', '<u2'), ('pts', [('x', '<f4'), ('y', [('z', '>i2'), ('w', '<U2')])], (2,))]");
        assert_eq!(d.itemsize(), 2 + 2 * (4 + 2 + 8));
        assert!(d.has_non_native());
    }

    #[test]
    fn packed_and_explicit_records() {
        let r = Record::packed([("x", DType::native(ScalarType::Float(8))), ("n", DType::native(ScalarType::Int(4)))])
            .unwrap();
        assert_eq!(r.itemsize(), 12);
        assert_eq!(DType::Record(r).descr(), "[('x', '<f8'), ('n', '<i4')]");
        let overlapping = Record::new(
            vec![
                Field::new("a", DType::native(ScalarType::Int(4)), 0),
                Field::new("b", DType::native(ScalarType::Int(4)), 2),
            ],
            8,
        );
        assert!(overlapping.is_err());
        let past_end = Record::new(vec![Field::new("a", DType::native(ScalarType::Int(8)), 0)], 4);
        assert!(past_end.is_err());
    }
}
