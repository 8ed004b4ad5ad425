//! The scalar codec: one scalar of any fixed-size NumPy kind to and from its bytes.
//!
//! Every path that looks at single values goes through here: record conversions
//! (the conversion plans' widening casts), serde's deserializer and encoder, the pickle
//! decoder's NumPy scalars, and the bridges to come. Byte order, half floats, long double
//! bytes, bool validation, UCS-4 text and NumPy's safe casts live in this one module.
//!
//! Pure code: no I/O, no allocation except for the text of a `U` value.
//!
//! # Examples
//! ```
//! use npy_core::dtype::Scalar;
//! use npy_core::scalar::{self, Value};
//!
//! let be: Scalar = Scalar::parse(">i2")?;
//! assert_eq!(scalar::decode(be, &[0xfe, 0xd4])?, Value::I16(-300));
//!
//! let mut out = [0u8; 4];
//! scalar::encode(&Value::F32(1.5), Scalar::parse("<f4")?, &mut out)?;
//! assert_eq!(out, 1.5f32.to_le_bytes());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::dtype::{ByteOrder, DType, DateUnit, Scalar, ScalarType};

mod text;

pub(crate) use text::FloatDigits;

/// One scalar's value, of exactly the kind its dtype names (no widening: an `i2` is an
/// [`Value::I16`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `b1`.
    Bool(bool),
    /// `i1`.
    I8(i8),
    /// `i2`.
    I16(i16),
    /// `i4`.
    I32(i32),
    /// `i8`.
    I64(i64),
    /// `u1`.
    U8(u8),
    /// `u2`.
    U16(u16),
    /// `u4`.
    U32(u32),
    /// `u8`.
    U64(u64),
    /// `f2`, as IEEE half bits (see [`f16_to_f64`]).
    F16(u16),
    /// `f4`.
    F32(f32),
    /// `f8`.
    F64(f64),
    /// `c8`: real and imaginary parts.
    C64(f32, f32),
    /// `c16`: real and imaginary parts.
    C128(f64, f64),
    /// `f16` (x86 long double): the 16 bytes, little-endian (the 80-bit value in the low
    /// 10 bytes).
    LongDouble([u8; 16]),
    /// `c32`: two long doubles (real, imaginary), each as in [`Value::LongDouble`].
    LongComplex([u8; 32]),
    /// `M8[unit]`: a count of units since 1970 (`i64::MIN` is NaT).
    DateTime(i64, DateUnit),
    /// `m8[unit]`: a count of units (`i64::MIN` is NaT).
    TimeDelta(i64, DateUnit),
    /// `S n`: all `n` bytes, trailing NULs included (NumPy strips them: [`trim_nuls`]).
    Bytes(&'a [u8]),
    /// `U n`: the text, trailing NULs stripped as NumPy strips them.
    Str(Cow<'a, str>),
    /// `V n`: the `n` raw bytes.
    Void(&'a [u8]),
}

/// Why a scalar could not be decoded or encoded. `Display` gives a lower-case reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScalarError {
    /// A `b1` byte other than 0 or 1.
    Bool(u8),
    /// A `U` code unit that is not a Unicode scalar value, at this position.
    CodePoint {
        /// The code unit.
        unit: u32,
        /// Its position in the string.
        position: usize,
    },
    /// Fewer bytes than the scalar's itemsize.
    Length {
        /// The type string.
        ty: String,
        /// Its itemsize.
        expected: usize,
        /// The bytes given.
        found: usize,
    },
    /// A value of another kind than the dtype's.
    Kind {
        /// The type string.
        ty: String,
        /// The value's kind (`"an integer"`, ...).
        found: &'static str,
    },
    /// A value that does not fit the dtype: an integer out of range, a text or bytes
    /// value too long, void bytes of another length.
    Range {
        /// The type string.
        ty: String,
        /// What does not fit (`"300"`, `"5 chars"`, ...).
        what: String,
    },
    /// The object dtype: its values are Python objects, not bytes.
    Object,
}

impl fmt::Display for ScalarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarError::Bool(b) => write!(f, "b1 byte {b} is not 0 or 1"),
            ScalarError::CodePoint { unit, position } => {
                write!(f, "code point {unit:#x} at position {position} is not a valid char")
            }
            ScalarError::Length { ty, expected, found } => {
                write!(f, "a scalar of dtype {ty} needs {expected} bytes, found {found}")
            }
            ScalarError::Kind { ty, found } => write!(f, "{found} cannot be stored as {ty}"),
            ScalarError::Range { ty, what } => write!(f, "{what} {} fit in {ty}", fit_verb(what)),
            ScalarError::Object => write!(f, "object scalars are Python objects, not bytes"),
        }
    }
}

/// "300 does not fit", "5 chars do not fit".
fn fit_verb(what: &str) -> &'static str {
    if what.ends_with('s') {
        "do not"
    } else {
        "does not"
    }
}

impl std::error::Error for ScalarError {}

impl Value<'_> {
    /// The value's kind in words, for messages: `"an integer"`, `"a string"`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a bool",
            Value::I8(_) | Value::I16(_) | Value::I32(_) | Value::I64(_) => "an integer",
            Value::U8(_) | Value::U16(_) | Value::U32(_) | Value::U64(_) => "an unsigned integer",
            Value::F16(_) | Value::F32(_) | Value::F64(_) => "a float",
            Value::C64(..) | Value::C128(..) => "a complex",
            Value::LongDouble(_) => "a long double",
            Value::LongComplex(_) => "a long double complex",
            Value::DateTime(..) => "a datetime",
            Value::TimeDelta(..) => "a timedelta",
            Value::Bytes(_) => "bytes",
            Value::Str(_) => "a string",
            Value::Void(_) => "void bytes",
        }
    }
}

/// Reads `N` bytes from the start of `b` as a native-order array, reversed when the data
/// is in the other order.
#[inline(always)]
fn ne<const N: usize>(b: &[u8], swap: bool) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    if swap {
        a.reverse();
    }
    a
}

/// `N` bytes, each 16-byte unit put in little-endian order.
fn long_double_le<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    if order == ByteOrder::Big {
        a.chunks_exact_mut(16).for_each(<[u8]>::reverse);
    }
    a
}

/// A `b1` byte as a bool.
///
/// # Errors
/// [`ScalarError::Bool`] for a byte other than 0 or 1.
#[inline]
pub fn bool_from(b: u8) -> Result<bool, ScalarError> {
    match b {
        0 => Ok(false),
        1 => Ok(true),
        x => Err(ScalarError::Bool(x)),
    }
}

/// `b` without its trailing NUL bytes: the value NumPy gives for an `S` scalar.
pub fn trim_nuls(b: &[u8]) -> &[u8] {
    &b[..b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1)]
}

/// A `U` value's text: UCS-4 code units in `order`, trailing NUL units stripped, each
/// checked to be a Unicode scalar value.
///
/// # Errors
/// [`ScalarError::CodePoint`] naming the first unit that is not a char.
pub fn ucs4(b: &[u8], order: ByteOrder) -> Result<String, ScalarError> {
    let b = trim_nul_units(b);
    let mut s = String::with_capacity(b.len() / 4);
    for c in ucs4_chars(b, order) {
        s.push(c?);
    }
    Ok(s)
}

/// A `U` value's text as [`ucs4`] gives it, except that each code unit that is not a char
/// (a lone surrogate, a unit past U+10FFFF) becomes U+FFFD, as Python's
/// `errors='replace'` decodes it: for carrying text that NumPy holds but cannot give as a
/// `str`, where [`ucs4`] refuses it.
///
/// # Examples
/// ```
/// use npy_core::dtype::ByteOrder;
///
/// let units: Vec<u8> = [0x41u32, 0xD800, 0x11_0000, 0].iter().flat_map(|u| u.to_le_bytes()).collect();
/// assert_eq!(npy_core::scalar::ucs4_lossy(&units, ByteOrder::Little), "A\u{FFFD}\u{FFFD}");
/// assert!(npy_core::scalar::ucs4(&units, ByteOrder::Little).is_err());
/// ```
pub fn ucs4_lossy(b: &[u8], order: ByteOrder) -> String {
    ucs4_chars(trim_nul_units(b), order).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
}

/// `b`'s UCS-4 code units without the trailing NUL ones.
fn trim_nul_units(b: &[u8]) -> &[u8] {
    let end = b.chunks_exact(4).rposition(|c| c != [0; 4]).map_or(0, |i| i + 1);
    &b[..4 * end]
}

/// Checks that every UCS-4 code unit of `b` (in `order`, NULs included) is a Unicode
/// scalar value, without building the text: the check of `U` elements read in place.
///
/// # Errors
/// [`ScalarError::CodePoint`] naming the first unit that is not a char.
pub fn check_ucs4(b: &[u8], order: ByteOrder) -> Result<(), ScalarError> {
    ucs4_chars(b, order).try_for_each(|c| c.map(drop))
}

/// The chars of UCS-4 code units in `order`, each checked.
fn ucs4_chars(b: &[u8], order: ByteOrder) -> impl Iterator<Item = Result<char, ScalarError>> + '_ {
    let swap = !order.is_native();
    b.chunks_exact(4).enumerate().map(move |(position, c)| {
        let unit = u32::from_ne_bytes(ne::<4>(c, swap));
        char::from_u32(unit).ok_or(ScalarError::CodePoint { unit, position })
    })
}

/// Decodes one scalar of dtype `s` from the first `s.itemsize()` bytes of `bytes`.
///
/// # Errors
/// [`ScalarError::Length`] when `bytes` is shorter than the itemsize; [`ScalarError::Bool`]
/// and [`ScalarError::CodePoint`] for invalid `b1` and `U` data; [`ScalarError::Object`]
/// for the object dtype.
pub fn decode(s: Scalar, bytes: &[u8]) -> Result<Value<'_>, ScalarError> {
    let n = s.itemsize();
    let Some(b) = bytes.get(..n) else {
        return Err(ScalarError::Length { ty: s.type_str(), expected: n, found: bytes.len() });
    };
    let swap = !s.is_native();
    Ok(match s.ty() {
        ScalarType::Bool => Value::Bool(bool_from(b[0])?),
        ScalarType::Int(1) => Value::I8(b[0] as i8),
        ScalarType::Int(2) => Value::I16(i16::from_ne_bytes(ne(b, swap))),
        ScalarType::Int(4) => Value::I32(i32::from_ne_bytes(ne(b, swap))),
        ScalarType::Int(_) => Value::I64(i64::from_ne_bytes(ne(b, swap))),
        ScalarType::UInt(1) => Value::U8(b[0]),
        ScalarType::UInt(2) => Value::U16(u16::from_ne_bytes(ne(b, swap))),
        ScalarType::UInt(4) => Value::U32(u32::from_ne_bytes(ne(b, swap))),
        ScalarType::UInt(_) => Value::U64(u64::from_ne_bytes(ne(b, swap))),
        ScalarType::Float(2) => Value::F16(u16::from_ne_bytes(ne(b, swap))),
        ScalarType::Float(4) => Value::F32(f32::from_ne_bytes(ne(b, swap))),
        ScalarType::Float(8) => Value::F64(f64::from_ne_bytes(ne(b, swap))),
        ScalarType::Float(_) => Value::LongDouble(long_double_le(b, s.order())),
        ScalarType::Complex(8) => Value::C64(f32::from_ne_bytes(ne(b, swap)), f32::from_ne_bytes(ne(&b[4..], swap))),
        ScalarType::Complex(16) => Value::C128(f64::from_ne_bytes(ne(b, swap)), f64::from_ne_bytes(ne(&b[8..], swap))),
        ScalarType::Complex(_) => Value::LongComplex(long_double_le(b, s.order())),
        ScalarType::DateTime(u) => Value::DateTime(i64::from_ne_bytes(ne(b, swap)), u),
        ScalarType::TimeDelta(u) => Value::TimeDelta(i64::from_ne_bytes(ne(b, swap)), u),
        ScalarType::Bytes(_) => Value::Bytes(b),
        ScalarType::Unicode(_) => Value::Str(Cow::Owned(ucs4(b, s.order())?)),
        ScalarType::Void(_) => Value::Void(b),
        ScalarType::Object => return Err(ScalarError::Object),
    })
}

/// Decodes one scalar as [`decode`] does, except that a `b1` byte other than 0 or 1 is
/// `true`, as NumPy reads it (`tolist`, `str`, `astype`): for showing data as NumPy shows
/// it, where [`decode`] refuses what Rust's `bool` cannot hold.
///
/// # Errors
/// As [`decode`], without [`ScalarError::Bool`].
///
/// # Examples
/// ```
/// use npy_core::dtype::Scalar;
/// use npy_core::scalar::{self, Value};
///
/// let b1 = Scalar::parse("|b1")?;
/// assert_eq!(scalar::decode_lenient(b1, &[2])?, Value::Bool(true));
/// assert!(scalar::decode(b1, &[2]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_lenient(s: Scalar, bytes: &[u8]) -> Result<Value<'_>, ScalarError> {
    match (s.ty(), bytes.first()) {
        (ScalarType::Bool, Some(&b)) => Ok(Value::Bool(b != 0)),
        _ => decode(s, bytes),
    }
}

/// Encodes `v` as one scalar of dtype `s` into the first `s.itemsize()` bytes of `out`.
/// `v` must be of the dtype's kind and size (an `i2` takes [`Value::I16`]; see
/// [`Value::from_int`] and [`Value::from_f64`] for range-checked conversions). Text and
/// bytes shorter than the type are NUL-padded, as NumPy pads them.
///
/// # Errors
/// [`ScalarError::Kind`] for a value of another kind, [`ScalarError::Range`] for text or
/// bytes too long (or void bytes of another length), [`ScalarError::Length`] when `out`
/// is shorter than the itemsize, [`ScalarError::Object`] for the object dtype.
pub fn encode(v: &Value<'_>, s: Scalar, out: &mut [u8]) -> Result<(), ScalarError> {
    let n = s.itemsize();
    let found = out.len();
    let Some(out) = out.get_mut(..n) else {
        return Err(ScalarError::Length { ty: s.type_str(), expected: n, found });
    };
    let kind = || ScalarError::Kind { ty: s.type_str(), found: v.kind() };
    let too_long = |what: String| ScalarError::Range { ty: s.type_str(), what };
    match (s.ty(), v) {
        (ScalarType::Bool, Value::Bool(b)) => out[0] = u8::from(*b),
        (ScalarType::Int(1), Value::I8(x)) => out[0] = *x as u8,
        (ScalarType::Int(2), Value::I16(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Int(4), Value::I32(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Int(8), Value::I64(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::UInt(1), Value::U8(x)) => out[0] = *x,
        (ScalarType::UInt(2), Value::U16(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::UInt(4), Value::U32(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::UInt(8), Value::U64(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Float(2), Value::F16(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Float(4), Value::F32(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Float(8), Value::F64(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (ScalarType::Complex(8), Value::C64(re, im)) => {
            out[..4].copy_from_slice(&re.to_ne_bytes());
            out[4..].copy_from_slice(&im.to_ne_bytes());
        }
        (ScalarType::Complex(16), Value::C128(re, im)) => {
            out[..8].copy_from_slice(&re.to_ne_bytes());
            out[8..].copy_from_slice(&im.to_ne_bytes());
        }
        (ScalarType::Float(16), Value::LongDouble(b)) => {
            out.copy_from_slice(b);
            from_le_units(out, s.order());
            return Ok(());
        }
        (ScalarType::Complex(32), Value::LongComplex(b)) => {
            out.copy_from_slice(b);
            from_le_units(out, s.order());
            return Ok(());
        }
        (ScalarType::DateTime(u), Value::DateTime(x, w)) | (ScalarType::TimeDelta(u), Value::TimeDelta(x, w))
            if u == *w =>
        {
            out.copy_from_slice(&x.to_ne_bytes())
        }
        (ScalarType::Bytes(n), Value::Bytes(b)) => {
            if b.len() > n {
                return Err(too_long(format!("{} bytes", b.len())));
            }
            out[..b.len()].copy_from_slice(b);
            out[b.len()..].fill(0);
            return Ok(());
        }
        (ScalarType::Void(n), Value::Void(b)) => {
            if b.len() != n {
                return Err(too_long(format!("{} bytes", b.len())));
            }
            out.copy_from_slice(b);
            return Ok(());
        }
        (ScalarType::Unicode(n), Value::Str(text)) => {
            let chars = text.chars().count();
            if chars > n {
                return Err(too_long(format!("{chars} chars")));
            }
            for (slot, c) in out.chunks_exact_mut(4).zip(text.chars().map(u32::from).chain(std::iter::repeat(0))) {
                slot.copy_from_slice(&c.to_ne_bytes());
            }
        }
        (ScalarType::Object, _) => return Err(ScalarError::Object),
        _ => return Err(kind()),
    }
    if !s.is_native() {
        swap_units(out, s.ty().swap_unit());
    }
    Ok(())
}

/// Puts 16-byte little-endian units into `order`.
fn from_le_units(out: &mut [u8], order: ByteOrder) {
    if order == ByteOrder::Big {
        out.chunks_exact_mut(16).for_each(<[u8]>::reverse);
    }
}

impl Value<'static> {
    /// An integer as a value of integer type `ty` (`Int(n)`, `UInt(n)`, `DateTime`,
    /// `TimeDelta`), checked to fit.
    ///
    /// # Errors
    /// [`ScalarError::Range`] when `x` is out of the type's range, [`ScalarError::Kind`]
    /// for a type that does not hold integers.
    pub fn from_int(x: i128, s: Scalar) -> Result<Value<'static>, ScalarError> {
        let out_of_range = || ScalarError::Range { ty: s.type_str(), what: x.to_string() };
        let fit = |r: Result<Value<'static>, std::num::TryFromIntError>| r.map_err(|_| out_of_range());
        match s.ty() {
            ScalarType::Int(1) => fit(i8::try_from(x).map(Value::I8)),
            ScalarType::Int(2) => fit(i16::try_from(x).map(Value::I16)),
            ScalarType::Int(4) => fit(i32::try_from(x).map(Value::I32)),
            ScalarType::Int(8) => fit(i64::try_from(x).map(Value::I64)),
            ScalarType::UInt(1) => fit(u8::try_from(x).map(Value::U8)),
            ScalarType::UInt(2) => fit(u16::try_from(x).map(Value::U16)),
            ScalarType::UInt(4) => fit(u32::try_from(x).map(Value::U32)),
            ScalarType::UInt(8) => fit(u64::try_from(x).map(Value::U64)),
            ScalarType::DateTime(u) => fit(i64::try_from(x).map(|v| Value::DateTime(v, u))),
            ScalarType::TimeDelta(u) => fit(i64::try_from(x).map(|v| Value::TimeDelta(v, u))),
            _ => Err(ScalarError::Kind { ty: s.type_str(), found: "an integer" }),
        }
    }

    /// A number as a value of float or complex type `ty` (`f2`, `f4`, `f8`, `c8`, `c16`;
    /// imaginary part 0), rounded to nearest as NumPy's `astype` rounds; NaN payloads are
    /// kept as far as they fit.
    ///
    /// # Errors
    /// [`ScalarError::Kind`] for a type that does not hold floats.
    pub fn from_f64(x: f64, s: Scalar) -> Result<Value<'static>, ScalarError> {
        Value::from_complex(x, 0.0, s)
    }

    /// A complex number as a value of complex type `ty` (`c8`, `c16`), or its real part
    /// for float types; rounded to nearest, NaN payloads kept as far as they fit.
    ///
    /// # Errors
    /// [`ScalarError::Kind`] for a type that does not hold floats.
    pub fn from_complex(re: f64, im: f64, s: Scalar) -> Result<Value<'static>, ScalarError> {
        Ok(match s.ty() {
            ScalarType::Float(2) => Value::F16(narrow_f16(re)),
            ScalarType::Float(4) => Value::F32(narrow(re)),
            ScalarType::Float(8) => Value::F64(re),
            ScalarType::Complex(8) => Value::C64(narrow(re), narrow(im)),
            ScalarType::Complex(16) => Value::C128(re, im),
            _ => return Err(ScalarError::Kind { ty: s.type_str(), found: "a float" }),
        })
    }
}

/// NumPy's `can_cast(from, to, 'safe')` among numeric scalar kinds (long double excluded:
/// it is kept as raw bytes).
pub fn can_cast_safe(from: ScalarType, to: ScalarType) -> bool {
    use ScalarType::*;
    // Bits of float mantissa NumPy deems enough for an integer: i1/u1 -> f2, i2/u2 -> f4,
    // i4/u4/i8/u8 -> f8 (NumPy treats the 64-bit ints as safe into f8).
    let int_float_min = |n: u8| match n {
        1 => 2,
        2 => 4,
        _ => 8,
    };
    match (from, to) {
        (_, Float(16) | Complex(32)) | (Float(16) | Complex(32), _) => false,
        (Bool, Int(_) | UInt(_) | Float(_) | Complex(_)) => true,
        (Int(n), Int(m)) | (UInt(n), UInt(m)) => m >= n,
        (UInt(n), Int(m)) => m > n,
        (Int(n) | UInt(n), Float(m)) => m >= int_float_min(n),
        (Int(n) | UInt(n), Complex(m)) => m / 2 >= int_float_min(n),
        (Float(n), Float(m)) => m >= n,
        (Float(n), Complex(m)) => m / 2 >= n,
        (Complex(n), Complex(m)) => m >= n,
        _ => false,
    }
}

/// A numeric value widened, exactly, to the largest type of its kind: what a value becomes
/// where only the kind matters (serde's dynamic values, Python's `int`, `float` and
/// `complex`, casts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A signed integer (`i1` to `i8`).
    Int(i64),
    /// An unsigned integer (`u1` to `u8`) or a bool (0 or 1).
    UInt(u64),
    /// A float (`f2`, `f4`, `f8`), NaN payloads kept ([`widen`]).
    Float(f64),
    /// A complex (`c8`, `c16`), parts as in [`Number::Float`].
    Complex(f64, f64),
}

impl Value<'_> {
    /// The value as a [`Number`], if it is a bool, an integer, a float or a complex
    /// (long doubles excepted: they stay bytes).
    pub fn number(&self) -> Option<Number> {
        Some(match *self {
            Value::Bool(b) => Number::UInt(b.into()),
            Value::I8(x) => Number::Int(x.into()),
            Value::I16(x) => Number::Int(x.into()),
            Value::I32(x) => Number::Int(x.into()),
            Value::I64(x) => Number::Int(x),
            Value::U8(x) => Number::UInt(x.into()),
            Value::U16(x) => Number::UInt(x.into()),
            Value::U32(x) => Number::UInt(x.into()),
            Value::U64(x) => Number::UInt(x),
            Value::F16(h) => Number::Float(f16_to_f64(h)),
            Value::F32(x) => Number::Float(widen(x)),
            Value::F64(x) => Number::Float(x),
            Value::C64(re, im) => Number::Complex(widen(re), widen(im)),
            Value::C128(re, im) => Number::Complex(re, im),
            _ => return None,
        })
    }
}

/// `v` cast to numeric type `to` as NumPy casts (`as` semantics: wrapping integers,
/// rounding floats). Meant for the casts [`can_cast_safe`] allows, which lose nothing.
/// `None` when `v` or `to` is not numeric (bool, integer, float or complex).
pub fn cast(v: &Value<'_>, to: ScalarType) -> Option<Value<'static>> {
    let w = v.number()?;
    let int = || match w {
        Number::Int(i) => i,
        Number::UInt(u) => u as i64,
        Number::Float(f) | Number::Complex(f, _) => f as i64,
    };
    let (re, im) = match w {
        Number::Int(i) => (i as f64, 0.0),
        Number::UInt(u) => (u as f64, 0.0),
        Number::Float(f) => (f, 0.0),
        Number::Complex(re, im) => (re, im),
    };
    Some(match to {
        ScalarType::Bool => Value::Bool(re != 0.0 || im != 0.0),
        ScalarType::Int(1) => Value::I8(int() as i8),
        ScalarType::Int(2) => Value::I16(int() as i16),
        ScalarType::Int(4) => Value::I32(int() as i32),
        ScalarType::Int(8) => Value::I64(int()),
        ScalarType::UInt(1) => Value::U8(int() as u8),
        ScalarType::UInt(2) => Value::U16(int() as u16),
        ScalarType::UInt(4) => Value::U32(int() as u32),
        ScalarType::UInt(8) => Value::U64(match w {
            Number::UInt(u) => u,
            _ => int() as u64,
        }),
        ScalarType::Float(2) => Value::F16(f64_to_f16(re)),
        ScalarType::Float(4) => Value::F32(narrow(re)),
        ScalarType::Float(8) => Value::F64(re),
        ScalarType::Complex(8) => Value::C64(narrow(re), narrow(im)),
        ScalarType::Complex(16) => Value::C128(re, im),
        _ => return None,
    })
}

/// Converts one scalar of dtype `from` at the start of `src` into dtype `to` at the start
/// of `dst` ([`decode`], [`cast`], [`encode`]). Used by plans for NumPy's safe casts.
///
/// # Errors
/// As [`decode`] and [`encode`]; [`ScalarError::Kind`] when either type is not numeric.
pub fn convert(src: &[u8], from: Scalar, dst: &mut [u8], to: Scalar) -> Result<(), ScalarError> {
    let v = decode(from, src)?;
    let w = cast(&v, to.ty()).ok_or_else(|| ScalarError::Kind { ty: to.type_str(), found: v.kind() })?;
    encode(&w, to, dst)
}

/// Reverses the bytes of every `unit`-byte unit of `buf`: the one byte-order swap, for
/// single scalars and whole arrays alike.
///
/// Large buffers use an AVX2 build of the same loop when the CPU has it (the compiler
/// turns it into byte shuffles 32 bytes at a time); otherwise the portable build.
pub fn swap_units(buf: &mut [u8], unit: usize) {
    #[cfg(target_arch = "x86_64")]
    if buf.len() >= 4096 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only precondition of
        // calling a function compiled with `#[target_feature(enable = "avx2")]`.
        unsafe { swap_units_avx2(buf, unit) };
        return;
    }
    swap_units_portable(buf, unit);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn swap_units_avx2(buf: &mut [u8], unit: usize) {
    swap_units_portable(buf, unit);
}

#[inline(always)]
fn swap_units_portable(buf: &mut [u8], unit: usize) {
    match unit {
        2 => buf.as_chunks_mut::<2>().0.iter_mut().for_each(|c| *c = u16::from_ne_bytes(*c).swap_bytes().to_ne_bytes()),
        4 => buf.as_chunks_mut::<4>().0.iter_mut().for_each(|c| *c = u32::from_ne_bytes(*c).swap_bytes().to_ne_bytes()),
        8 => buf.as_chunks_mut::<8>().0.iter_mut().for_each(|c| *c = u64::from_ne_bytes(*c).swap_bytes().to_ne_bytes()),
        16 => {
            buf.as_chunks_mut::<16>().0.iter_mut().for_each(|c| *c = u128::from_ne_bytes(*c).swap_bytes().to_ne_bytes())
        }
        0 | 1 => {}
        n => buf.chunks_exact_mut(n).for_each(<[u8]>::reverse),
    }
}

/// Copies `src` into `dst`, reversing the bytes of every `unit`-byte unit: [`swap_units`]
/// fused with the copy, one pass over the bytes (a `Vec<f64>` written as `>f8`).
///
/// # Panics
/// When `src` and `dst` differ in length, or are not whole units.
pub fn swap_units_into(src: &[u8], dst: &mut [u8], unit: usize) {
    assert_eq!(src.len(), dst.len(), "swap_units_into: {} source bytes for {} destination bytes", src.len(), dst.len());
    assert!(
        unit <= 1 || src.len().is_multiple_of(unit),
        "swap_units_into: {} bytes are not whole units of {unit}",
        src.len()
    );
    #[cfg(target_arch = "x86_64")]
    if src.len() >= 4096 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only precondition of
        // calling a function compiled with `#[target_feature(enable = "avx2")]`.
        unsafe { swap_units_into_avx2(src, dst, unit) };
        return;
    }
    swap_units_into_portable(src, dst, unit);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn swap_units_into_avx2(src: &[u8], dst: &mut [u8], unit: usize) {
    swap_units_into_portable(src, dst, unit);
}

#[inline(always)]
fn swap_units_into_portable(src: &[u8], dst: &mut [u8], unit: usize) {
    macro_rules! swap_as {
        ($n:literal, $int:ty) => {
            for (d, s) in dst.as_chunks_mut::<$n>().0.iter_mut().zip(src.as_chunks::<$n>().0) {
                *d = <$int>::from_ne_bytes(*s).swap_bytes().to_ne_bytes();
            }
        };
    }
    match unit {
        2 => swap_as!(2, u16),
        4 => swap_as!(4, u32),
        8 => swap_as!(8, u64),
        16 => swap_as!(16, u128),
        0 | 1 => dst.copy_from_slice(src),
        n => {
            for (d, s) in dst.chunks_exact_mut(n).zip(src.chunks_exact(n)) {
                d.iter_mut().zip(s.iter().rev()).for_each(|(d, s)| *d = *s);
            }
        }
    }
}

/// IEEE half bits to double (exact; NaN payloads kept). Built from bits, no float
/// arithmetic but one multiplication by a power of two.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = u64::from(h & 0x8000) << 48;
    let exp = u64::from((h >> 10) & 0x1f);
    let frac = u64::from(h & 0x3ff);
    match exp {
        // zero and subnormals: frac * 2^-24, exact in f64
        0 => {
            let magnitude = frac as f64 * f64::from_bits((1023 - 24) << 52);
            f64::from_bits(sign | magnitude.to_bits())
        }
        // infinities and NaNs: the 10 fraction bits at the top of the f64 fraction
        0x1f => f64::from_bits(sign | (0x7ff << 52) | (frac << 42)),
        e => f64::from_bits(sign | ((e + 1023 - 15) << 52) | (frac << 42)),
    }
}

/// IEEE half bits to single, exact (NaN payloads kept).
pub fn f16_to_f32(h: u16) -> f32 {
    if h & 0x7c00 == 0x7c00 && h & 0x03ff != 0 {
        let h = h as u32;
        return f32::from_bits(((h & 0x8000) << 16) | 0x7f80_0000 | ((h & 0x03ff) << 13));
    }
    f16_to_f64(h) as f32
}

/// Double to IEEE half bits, rounding to nearest even (overflow to infinity, underflow
/// through subnormals to zero); a NaN keeps its sign and the top of its payload bits
/// (quiet). Integer arithmetic on the bits only.
pub fn f64_to_f16(v: f64) -> u16 {
    let bits = v.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let man = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        return sign | if man == 0 { 0x7c00 } else { 0x7e00 | ((man >> 42) & 0x3ff) as u16 };
    }
    // The half's biased exponent; f64 zeros and subnormals are far below the half's range.
    let e = exp - 1023 + 15;
    if exp == 0 || e < -11 {
        return sign;
    }
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // Keep 11 significant bits for a normal half, fewer for a subnormal one.
    let significand = man | (1 << 52);
    let shift = if e >= 1 { 42 } else { (43 - e) as u32 };
    let mut q = significand >> shift;
    let rest = significand & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rest > half || (rest == half && q & 1 == 1) {
        q += 1;
    }
    // A carry out of the significand moves into the exponent by itself.
    let out = if e >= 1 { ((e as u64) << 10) + q - 1024 } else { q };
    if out >= 0x7c00 {
        sign | 0x7c00
    } else {
        sign | out as u16
    }
}

/// `f64` to IEEE half bits, rounded; NaN payloads kept as far as they fit (a NaN stays a
/// NaN, signaling ones included).
pub fn narrow_f16(x: f64) -> u16 {
    if !x.is_nan() {
        return f64_to_f16(x);
    }
    let b = x.to_bits();
    let m = ((b >> 42) & 0x03ff) as u16;
    (((b >> 48) & 0x8000) as u16) | 0x7c00 | if m == 0 { 0x0200 } else { m }
}

/// `f32` to `f64`, exact, NaN payloads (and signaling NaNs) kept, so [`narrow`] gives the
/// same bits back.
pub fn widen(x: f32) -> f64 {
    if !x.is_nan() {
        return x.into();
    }
    let b = u64::from(x.to_bits());
    f64::from_bits(((b & 0x8000_0000) << 32) | (0x7ff << 52) | ((b & 0x007f_ffff) << 29))
}

/// An x86 long double (`f16` as NumPy names it: the 80-bit extended value in the low 10
/// of 16 little-endian bytes) to the nearest `f64`, ties to even, subnormal results
/// included; a NaN keeps its sign and the top of its payload (quiet), infinities and zeros
/// their sign. Encodings the FPU refuses (unnormals, pseudo-infinities, pseudo-NaNs) are
/// NaN, as NumPy's `isnan` says of them. Integer arithmetic on the bits only.
///
/// # Examples
/// ```
/// use npy_core::scalar::{f64_to_long_double, long_double_to_f64};
///
/// assert_eq!(long_double_to_f64(&f64_to_long_double(0.1)), 0.1);
/// // 1/3 as a long double (64 significant bits) rounds to the f64 nearest 1/3.
/// let third = [0xab, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xfd, 0x3f, 0, 0, 0, 0, 0, 0];
/// assert_eq!(long_double_to_f64(&third), 1.0 / 3.0);
/// ```
pub fn long_double_to_f64(le: &[u8; 16]) -> f64 {
    let mut lo = [0u8; 8];
    lo.copy_from_slice(&le[..8]);
    let m = u64::from_le_bytes(lo);
    let hi = u16::from_le_bytes([le[8], le[9]]);
    let sign = u64::from(hi >> 15) << 63;
    let e = i64::from(hi & 0x7fff);
    let int_bit = m >> 63 == 1;
    if e == 0x7fff {
        let frac = m << 1;
        return match (int_bit, frac) {
            (true, 0) => f64::from_bits(sign | (0x7ff << 52)),
            // A NaN (pseudo-infinities and pseudo-NaNs too): quiet, the payload's top bits.
            _ => f64::from_bits(sign | (0x7ff << 52) | (1 << 51) | ((frac >> 12) & ((1 << 51) - 1))),
        };
    }
    if e != 0 && !int_bit {
        return f64::from_bits(sign | (0x7ff << 52) | (1 << 51));
    }
    if m == 0 {
        return f64::from_bits(sign);
    }
    // value = m * 2^(e' - 16383 - 63), e' = max(e, 1) (subnormals share exponent 1).
    let lz = m.leading_zeros() as i64;
    let m = m << lz;
    // The unbiased exponent of the leading 1 bit, and the f64's biased exponent for it.
    let exp2 = e.max(1) - 16383 - lz;
    let biased = exp2 + 1023;
    if biased >= 0x7ff {
        return f64::from_bits(sign | (0x7ff << 52));
    }
    // Keep 53 bits for a normal result, fewer for a subnormal one (its exponent is fixed).
    let shift = if biased >= 1 { 11 } else { 11 + (1 - biased) };
    if shift > 64 {
        return f64::from_bits(sign);
    }
    let (q, rest, half) =
        if shift == 64 { (0, m, 1u64 << 63) } else { (m >> shift, m & ((1 << shift) - 1), 1u64 << (shift - 1)) };
    let q = if rest > half || (rest == half && q & 1 == 1) { q + 1 } else { q };
    // For a normal result q holds the leading bit at 52; a carry to bit 53 moves into the
    // exponent by the addition itself, as does a subnormal's carry into the smallest normal.
    let bits = if biased >= 1 { ((biased as u64 - 1) << 52) + q } else { q };
    f64::from_bits(sign | bits)
}

/// An `f64` as an x86 long double (exact: every double is one): the 16 little-endian bytes
/// NumPy stores, its 6 padding bytes zero. NaN payloads are kept.
///
/// # Examples
/// ```
/// use npy_core::scalar::f64_to_long_double;
///
/// assert_eq!(f64_to_long_double(1.0), [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn f64_to_long_double(x: f64) -> [u8; 16] {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let e = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (exp, m) = match e {
        0 if frac == 0 => (0u16, 0u64),
        // Subnormal: normalise; the long double's range holds it as a normal number.
        0 => {
            let lz = frac.leading_zeros() as i64;
            let m = frac << lz;
            ((1 - 1023 + 16383 - (lz - 11)) as u16, m)
        }
        0x7ff => (0x7fff, (1 << 63) | (frac << 11)),
        _ => ((e - 1023 + 16383) as u16, (1 << 63) | (frac << 11)),
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8..10].copy_from_slice(&(sign | exp).to_le_bytes());
    out
}

/// `f64` to `f32`, rounded; NaN payloads kept as far as they fit (a NaN stays a NaN).
pub fn narrow(x: f64) -> f32 {
    if !x.is_nan() {
        return x as f32;
    }
    let b = x.to_bits();
    let m = ((b >> 29) & 0x007f_ffff) as u32;
    f32::from_bits((((b >> 32) & 0x8000_0000) as u32) | 0x7f80_0000 | if m == 0 { 0x0040_0000 } else { m })
}

/// The value rules of a dtype's elements, compiled once and run over chunks of raw
/// elements as stored: every `b1` byte is 0 or 1 ([`bool_from`]) and every `U` code unit
/// a Unicode scalar value ([`check_ucs4`]), in every field and subarray. Other kinds
/// (numbers, `S`, `V`, padding) have no invalid bytes.
///
/// NumPy writes and reads such values itself (`np.frombuffer(b'\x02', '?')` is a `b1`
/// array holding a 2, which prints as `True`), so they are findings for a checker, not
/// reasons to refuse a file; the typed readers refuse them where a Rust `bool` or `char`
/// could not hold them.
///
/// # Examples
/// ```
/// use npy_core::dtype::{DType, Record, ScalarType};
/// use npy_core::scalar::{ScalarError, ValueCheck};
///
/// // Records of a `b1` flag and an `i4`: 5 bytes each.
/// let record = Record::packed([("ok", DType::native(ScalarType::Bool)), ("n", DType::native(ScalarType::Int(4)))])?;
/// let check = ValueCheck::new(&DType::Record(record)).expect("a b1 field");
/// let data = [1, 7, 7, 7, 7, /**/ 0, 9, 9, 9, 9, /**/ 2, 0, 0, 0, 0, /**/ 3, 0, 0, 0, 0];
/// let found = check.check(&data, 100).expect("two bad flags");
/// assert_eq!((found.element, found.offset, found.elements), (102, 0, 2));
/// assert_eq!(found.error, ScalarError::Bool(2));
/// assert_eq!(check.check(&data[..10], 100), None);
///
/// // Nothing to check in numbers.
/// assert!(ValueCheck::new(&DType::native(ScalarType::Float(8))).is_none());
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ValueCheck {
    itemsize: usize,
    leaves: Vec<Leaf>,
}

/// Where values to check lie in an element.
#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    /// `len` `b1` bytes from `offset`.
    Bool { offset: usize, len: usize },
    /// `strings` `U` values of `chars` code units each, in `order`, one after another
    /// from `offset`.
    Ucs4 { offset: usize, chars: usize, strings: usize, order: ByteOrder },
    /// `count` records `stride` bytes apart from `offset` (a subarray of records), each
    /// holding `inner`.
    Repeat { offset: usize, stride: usize, count: usize, inner: Vec<Leaf> },
}

/// What [`ValueCheck::check`] found in a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// Index of the first element holding an invalid value (counted from the `first`
    /// given to [`ValueCheck::check`]).
    pub element: u64,
    /// Byte offset of its first invalid `b1` byte or `U` code unit within the element.
    pub offset: usize,
    /// What is wrong with it: [`ScalarError::Bool`], or [`ScalarError::CodePoint`] with the
    /// unit's position in its string.
    pub error: ScalarError,
    /// How many elements of the chunk hold an invalid value.
    pub elements: u64,
}

impl ValueCheck {
    /// The checks of `dtype`'s elements; `None` when it holds no `b1` or `U` value (any
    /// bytes are valid then).
    pub fn new(dtype: &DType) -> Option<ValueCheck> {
        let mut leaves = Vec::new();
        compile_leaves(dtype, 0, &mut leaves);
        (!leaves.is_empty()).then(|| ValueCheck { itemsize: dtype.itemsize(), leaves })
    }

    /// Bytes of one element.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// Checks the whole elements at the start of `bytes` (raw, as stored; a partial
    /// element at the end is not looked at), the first being element `first` of the
    /// array: `None` when every value is valid, else the first invalid value and how many
    /// elements hold one.
    pub fn check(&self, bytes: &[u8], first: u64) -> Option<Invalid> {
        let whole = &bytes[..bytes.len() - bytes.len() % self.itemsize];
        // One pass over the chunk when all is well (the common case): over the whole chunk
        // at once when the element is nothing but one run of values.
        let valid = match self.leaves.as_slice() {
            [leaf @ Leaf::Bool { .. }] if leaf_len(leaf) == self.itemsize => {
                whole.iter().all(|&b| bool_from(b).is_ok())
            }
            [leaf @ Leaf::Ucs4 { order, .. }] if leaf_len(leaf) == self.itemsize => check_ucs4(whole, *order).is_ok(),
            leaves => whole.chunks_exact(self.itemsize).all(|el| first_invalid(leaves, el).is_none()),
        };
        if valid {
            return None;
        }
        let mut found: Option<Invalid> = None;
        let mut elements = 0;
        for (i, el) in whole.chunks_exact(self.itemsize).enumerate() {
            if let Some((offset, error)) = first_invalid(&self.leaves, el) {
                elements += 1;
                found.get_or_insert(Invalid { element: first + i as u64, offset, error, elements: 0 });
            }
        }
        found.map(|f| Invalid { elements, ..f })
    }
}

/// Whether every byte of `bytes` is a `b1` value, 0 or 1 ([`bool_from`]'s rule, over many
/// bytes at once: an OR of bytes that are all 0 or 1 is 0 or 1, which compiles to wide
/// vector ORs).
fn all_bools(bytes: &[u8]) -> bool {
    bytes.chunks(4096).all(|c| c.iter().fold(0u8, |acc, &b| acc | b) <= 1)
}

/// Bytes a run of values covers (for [`Leaf::Repeat`], from its first record to the end
/// of its last).
fn leaf_len(leaf: &Leaf) -> usize {
    match *leaf {
        Leaf::Bool { len, .. } => len,
        Leaf::Ucs4 { chars, strings, .. } => 4 * chars * strings,
        Leaf::Repeat { stride, count, .. } => stride * count,
    }
}

/// Adds the values of `dtype`, at `offset` in the element, to `out`.
fn compile_leaves(dtype: &DType, offset: usize, out: &mut Vec<Leaf>) {
    match dtype {
        DType::Scalar(s) => match s.ty() {
            ScalarType::Bool => push_leaf(out, Leaf::Bool { offset, len: 1 }),
            ScalarType::Unicode(chars) if chars > 0 => {
                push_leaf(out, Leaf::Ucs4 { offset, chars, strings: 1, order: s.order() })
            }
            _ => {}
        },
        DType::Record(r) => r.fields().iter().for_each(|f| compile_leaves(&f.dtype, offset + f.offset, out)),
        DType::SubArray(a) => {
            let (base, count) = (a.base(), a.len());
            let mut inner = Vec::new();
            compile_leaves(base, 0, &mut inner);
            let whole = inner.len() == 1 && leaf_len(&inner[0]) == base.itemsize();
            match inner.pop() {
                _ if count == 0 => {}
                // A subarray of values: one run over all of them.
                Some(Leaf::Bool { len, .. }) if whole => push_leaf(out, Leaf::Bool { offset, len: len * count }),
                Some(Leaf::Ucs4 { chars, strings, order, .. }) if whole => {
                    push_leaf(out, Leaf::Ucs4 { offset, chars, strings: strings * count, order })
                }
                Some(last) => {
                    inner.push(last);
                    out.push(Leaf::Repeat { offset, stride: base.itemsize(), count, inner });
                }
                None => {}
            }
        }
    }
}

/// Appends `leaf`, merged into the last leaf when it continues it.
fn push_leaf(out: &mut Vec<Leaf>, leaf: Leaf) {
    match (out.last_mut(), &leaf) {
        (Some(Leaf::Bool { offset, len }), Leaf::Bool { offset: at, len: more }) if *offset + *len == *at => {
            *len += more;
        }
        (
            Some(Leaf::Ucs4 { offset, chars, strings, order }),
            Leaf::Ucs4 { offset: at, chars: c, strings: more, order: o },
        ) if *offset + 4 * *chars * *strings == *at && chars == c && order == o => *strings += more,
        _ => out.push(leaf),
    }
}

/// The first invalid value of one element, `el`: its offset in the element and the error.
fn first_invalid(leaves: &[Leaf], el: &[u8]) -> Option<(usize, ScalarError)> {
    leaves.iter().find_map(|leaf| match *leaf {
        Leaf::Bool { offset, len } => {
            let run = &el[offset..offset + len];
            if all_bools(run) {
                return None;
            }
            let i = run.iter().position(|&b| bool_from(b).is_err())?;
            Some((offset + i, ScalarError::Bool(run[i])))
        }
        Leaf::Ucs4 { offset, chars, strings, order } => {
            match check_ucs4(&el[offset..offset + 4 * chars * strings], order) {
                Err(ScalarError::CodePoint { unit, position }) => {
                    Some((offset + 4 * position, ScalarError::CodePoint { unit, position: position % chars }))
                }
                _ => None,
            }
        }
        Leaf::Repeat { offset, stride, count, ref inner } => (0..count).find_map(|k| {
            let start = offset + k * stride;
            let (found, error) = first_invalid(inner, &el[start..start + stride])?;
            Some((start + found, error))
        }),
    })
}

#[cfg(test)]
mod tests {
    /// The fused copy and swap gives the bytes of a copy swapped in place, for every unit
    /// size a dtype has, below and above the size that takes the AVX2 build.
    #[test]
    fn swap_units_into_is_a_copy_then_a_swap() {
        for unit in [1, 2, 3, 4, 8, 12, 16] {
            for units in [0, 5, 4096 / unit + 3, 10_000] {
                let src: Vec<u8> = (0..unit * units).map(|i| (i * 7 + i / 251) as u8).collect();
                let mut want = src.clone();
                super::swap_units(&mut want, unit);
                let mut got = vec![0xee; src.len()];
                super::swap_units_into(&src, &mut got, unit);
                assert_eq!(got, want, "unit {unit}, {units} units");
            }
        }
        let mut got = [0u8; 8];
        super::swap_units_into(&1.5f64.to_le_bytes(), &mut got, 8);
        assert_eq!(got, 1.5f64.to_be_bytes());
    }

    use super::*;

    #[test]
    fn long_doubles_round_to_the_nearest_double() {
        // Every double goes there and back exactly, subnormals, zeros and infinities too.
        let doubles = [0.0, -0.0, 1.0, -2.5, 0.1, f64::MAX, f64::MIN_POSITIVE, 5e-324, 2.5e-310, f64::INFINITY];
        for x in doubles.into_iter().chain(doubles.map(|x| -x)) {
            assert_eq!(long_double_to_f64(&f64_to_long_double(x)).to_bits(), x.to_bits(), "{x}");
        }
        let nan = f64::from_bits(0x7ff8_0000_0000_1234);
        assert_eq!(long_double_to_f64(&f64_to_long_double(nan)).to_bits(), nan.to_bits());
        // Built from (biased exponent, 64-bit mantissa): 1 + 2^-53 is a tie, to even (1);
        // 1 + 2^-53 + 2^-63 is above it (1 + 2^-52); (2 - 2^-63) rounds up to 2.
        let ld = |e: u16, m: u64| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&m.to_le_bytes());
            b[8..10].copy_from_slice(&e.to_le_bytes());
            long_double_to_f64(&b)
        };
        assert_eq!(ld(0x3fff, (1 << 63) | (1 << 10)), 1.0);
        assert_eq!(ld(0x3fff, (1 << 63) | (1 << 10) | 1), 1.0 + f64::EPSILON);
        assert_eq!(ld(0x3fff, u64::MAX), 2.0);
        // Beyond the double's range: infinity; below it, through the subnormals to zero.
        assert_eq!(ld(0x7ffe, 1 << 63), f64::INFINITY);
        assert_eq!(ld(0x3fff - 1074, 1 << 63), 5e-324);
        assert_eq!(ld(0x3fff - 1075, 1 << 63), 0.0); // a tie with zero, to even
        assert_eq!(ld(0x3fff - 1075, (1 << 63) | 1), 5e-324);
        assert_eq!(ld(0x3fff - 1076, 1 << 63), 0.0);
        assert_eq!(ld(0, 1), 0.0); // the smallest long double subnormal
                                   // The largest double subnormal and a value that carries into the smallest normal.
        assert_eq!(ld(0x3fff - 1023, u64::MAX), f64::MIN_POSITIVE);
        // An unnormal (exponent set, integer bit clear) and a pseudo-infinity are NaN.
        assert!(ld(0x3fff, 1).is_nan());
        assert!(ld(0x7fff, 0).is_nan());
        assert_eq!(ld(0x7fff | 0x8000, 1 << 63), f64::NEG_INFINITY);
    }

    #[test]
    fn swaps_of_large_buffers_match_the_portable_loop() {
        // Under Miri (no AVX2), just over the size that takes the AVX2 branch.
        let len: u32 = if cfg!(miri) { 4096 } else { 65536 };
        for unit in [2, 4, 8, 16] {
            let data: Vec<u8> = (0..len).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
            let (mut fast, mut slow) = (data.clone(), data.clone());
            swap_units(&mut fast, unit);
            swap_units_portable(&mut slow, unit);
            assert_eq!(fast, slow, "unit {unit}");
            assert_ne!(fast, data);
            swap_units(&mut fast, unit);
            assert_eq!(fast, data, "unit {unit}: swapping twice restores");
        }
    }

    /// NumPy reads any nonzero `b1` byte as True (`np.frombuffer(bytes([2]), '?')[0]`);
    /// the lenient decode does, the strict one refuses, and other kinds decode alike.
    #[test]
    fn lenient_decode_reads_bool_bytes_as_numpy() {
        let b1 = Scalar::native(ScalarType::Bool);
        for byte in 0..=255u8 {
            assert_eq!(decode_lenient(b1, &[byte]), Ok(Value::Bool(byte != 0)), "{byte}");
            assert_eq!(decode(b1, &[byte]).is_ok(), byte < 2, "{byte}");
        }
        assert!(matches!(decode_lenient(b1, &[]), Err(ScalarError::Length { .. })));
        let be = Scalar::new(ScalarType::Int(2), ByteOrder::Big);
        assert_eq!(decode_lenient(be, &[0xfe, 0xd4]), Ok(Value::I16(-300)));
    }

    #[test]
    fn half_conversions_are_exact() {
        for bits in [0u16, 0x8000, 0x3c00, 0x0001, 0x03ff, 0x7bff, 0x7c00, 0xfc00, 0x7e01] {
            let back = f64_to_f16(f16_to_f64(bits));
            assert_eq!(back, bits, "{bits:#x}");
        }
        assert_eq!(f64_to_f16(-128.0), 0xd800);
    }
    #[test]
    fn nan_payloads_survive_the_f64_value() {
        for bits in [0x7f80_0001u32, 0xffc0_1234, 0x7fa0_0000] {
            let x = f32::from_bits(bits);
            assert!(widen(x).is_nan());
            assert_eq!(narrow(widen(x)).to_bits(), bits, "{bits:#x}");
        }
        for h in [0x7c01u16, 0xfe00, 0x7d55] {
            assert_eq!(narrow_f16(widen(f16_to_f32(h))), h, "{h:#x}");
        }
        assert_eq!(narrow(f64::from_bits(0x7ff0_0000_0000_0001)).to_bits() & 0x7fc0_0000, 0x7fc0_0000);
        assert_eq!(narrow(1.5), 1.5);
    }

    #[test]
    fn every_numeric_kind_round_trips_in_both_orders() {
        let cases: [(&str, Value<'static>); 12] = [
            ("i1", Value::I8(-5)),
            ("i2", Value::I16(-300)),
            ("i4", Value::I32(-70_000)),
            ("i8", Value::I64(-5_000_000_000)),
            ("u2", Value::U16(65_000)),
            ("u4", Value::U32(4_000_000_000)),
            ("u8", Value::U64(u64::MAX - 1)),
            ("f2", Value::F16(0x3e00)),
            ("f4", Value::F32(-0.004)),
            ("f8", Value::F64(1e300)),
            ("c8", Value::C64(1.5, -2.0)),
            ("c16", Value::C128(-0.1, 7.0)),
        ];
        for (code, v) in cases {
            for order in ['<', '>'] {
                let s = Scalar::parse(&format!("{order}{code}")).unwrap();
                let mut out = vec![0u8; s.itemsize()];
                encode(&v, s, &mut out).unwrap();
                assert_eq!(decode(s, &out).unwrap(), v, "{order}{code}");
                if order == '>' && s.itemsize() > 1 {
                    let mut le = vec![0u8; s.itemsize()];
                    encode(&v, s.swapped(), &mut le).unwrap();
                    swap_units(&mut le, s.ty().swap_unit());
                    assert_eq!(le, out, "{code}: big-endian bytes are the swapped little-endian ones");
                }
            }
        }
        assert_eq!(decode(Scalar::parse(">i2").unwrap(), &[0xfe, 0xd4]).unwrap(), Value::I16(-300));
    }

    #[test]
    fn text_bytes_and_bools_are_checked() {
        let u3 = Scalar::parse(">U3").unwrap();
        let mut out = [0xffu8; 12];
        encode(&Value::Str("é".into()), u3, &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode(u3, &out).unwrap(), Value::Str("é".into()));
        let e = encode(&Value::Str("four".into()), u3, &mut out).unwrap_err();
        assert_eq!(e.to_string(), "4 chars do not fit in >U3");
        let e = decode(u3, &[0, 0, 0xd8, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e, ScalarError::CodePoint { unit: 0xd800, position: 0 });

        let s4 = Scalar::parse("|S4").unwrap();
        let mut out = [0xffu8; 4];
        encode(&Value::Bytes(b"ab"), s4, &mut out).unwrap();
        assert_eq!(&out, b"ab\0\0");
        assert_eq!(trim_nuls(&out), b"ab");
        assert_eq!(encode(&Value::Bytes(b"abcde"), s4, &mut out).unwrap_err().to_string(), "5 bytes do not fit in |S4");

        let b1 = Scalar::parse("|b1").unwrap();
        assert_eq!(decode(b1, &[1]).unwrap(), Value::Bool(true));
        assert_eq!(decode(b1, &[2]).unwrap_err().to_string(), "b1 byte 2 is not 0 or 1");
        assert_eq!(decode(b1, &[]).unwrap_err().to_string(), "a scalar of dtype |b1 needs 1 bytes, found 0");
        assert_eq!(encode(&Value::I8(1), b1, &mut [0]).unwrap_err().to_string(), "an integer cannot be stored as |b1");
    }

    #[test]
    fn range_checked_conversions_and_long_doubles() {
        let u1 = Scalar::parse("|u1").unwrap();
        assert_eq!(Value::from_int(255, u1).unwrap(), Value::U8(255));
        assert_eq!(Value::from_int(300, u1).unwrap_err().to_string(), "300 does not fit in |u1");
        assert_eq!(Value::from_int(-1, u1).unwrap_err().to_string(), "-1 does not fit in |u1");
        let m8 = Scalar::parse("<M8[s]").unwrap();
        assert!(matches!(Value::from_int(7, m8).unwrap(), Value::DateTime(7, _)));
        assert_eq!(Value::from_f64(0.5, Scalar::parse(">f2").unwrap()).unwrap(), Value::F16(0x3800));
        assert_eq!(Value::from_complex(1.0, 2.0, Scalar::parse("<c8").unwrap()).unwrap(), Value::C64(1.0, 2.0));
        assert!(Value::from_f64(1.0, u1).is_err());

        // a big-endian long double is the little-endian one reversed, 16 bytes at a time
        let be: Vec<u8> = (0u8..16).collect();
        let Value::LongDouble(le) = decode(Scalar::parse(">f16").unwrap(), &be).unwrap() else { panic!() };
        assert_eq!(le.to_vec(), (0u8..16).rev().collect::<Vec<_>>());
        let mut back = [0u8; 16];
        encode(&Value::LongDouble(le), Scalar::parse(">f16").unwrap(), &mut back).unwrap();
        assert_eq!(back.to_vec(), be);
    }

    #[test]
    fn safe_casts_convert_exactly() {
        let conv = |from: &str, to: &str, src: &[u8]| {
            let (from, to) = (Scalar::parse(from).unwrap(), Scalar::parse(to).unwrap());
            let mut dst = vec![0u8; to.itemsize()];
            convert(src, from, &mut dst, to).unwrap();
            dst
        };
        let enc = |to: &str, v: Value<'_>| {
            let to = Scalar::parse(to).unwrap();
            let mut out = vec![0u8; to.itemsize()];
            encode(&v, to, &mut out).unwrap();
            out
        };
        assert_eq!(conv(">i2", "<i8", &(-300i16).to_be_bytes()), enc("<i8", Value::I64(-300)));
        assert_eq!(conv("|u1", "<f2", &[200]), enc("<f2", Value::F16(f64_to_f16(200.0))));
        assert_eq!(conv(">f4", "<c16", &0.25f32.to_be_bytes()), enc("<c16", Value::C128(0.25, 0.0)));
        assert_eq!(conv("|b1", "<i4", &[1]), enc("<i4", Value::I32(1)));
        assert_eq!(conv(">u4", "<f8", &u32::MAX.to_be_bytes()), enc("<f8", Value::F64(u32::MAX.into())));
        assert!(can_cast_safe(ScalarType::UInt(4), ScalarType::Int(8)));
        assert!(!can_cast_safe(ScalarType::Int(8), ScalarType::Float(4)));
    }

    #[test]
    #[cfg(feature = "half")]
    fn half_conversions_agree_with_the_half_crate() {
        let step = if cfg!(miri) { 61 } else { 1 };
        for h in (0..=u16::MAX).step_by(step) {
            let ours = f16_to_f64(h);
            let theirs = half::f16::from_bits(h).to_f64();
            assert!(ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()), "{h:#06x}");
            if !ours.is_nan() {
                assert_eq!(f64_to_f16(ours), h, "{h:#06x} round trip");
            }
        }
        // Values that are f32s (the half crate may round an f64 through f32, twice).
        let mut x = 1e-9f32;
        while x < 1e6 {
            for v in [x, -x, x * 1.000_244_1, x * 0.999_755_9] {
                assert_eq!(f64_to_f16(v.into()), half::f16::from_f32(v).to_bits(), "{v:e}");
            }
            x *= if cfg!(miri) { 1.9 } else { 1.01 };
        }
        for (v, h) in [(65504.0, 0x7bff), (65519.99, 0x7bff), (65520.0, 0x7c00), (1e300, 0x7c00), (1e-300, 0)] {
            assert_eq!(f64_to_f16(v), h, "{v:e}");
        }
    }

    #[test]
    fn doubles_round_to_the_nearest_half_ties_to_even() {
        let step = if cfg!(miri) { 97 } else { 1 };
        for h in (0u16..0x7bff).step_by(step) {
            let (lo, hi) = (f16_to_f64(h), f16_to_f64(h + 1));
            let mid = (lo + hi) / 2.0;
            let even = if h % 2 == 0 { h } else { h + 1 };
            assert_eq!(f64_to_f16(mid), even, "tie between {h:#06x} and the next");
            assert_eq!(f64_to_f16(f64::from_bits(mid.to_bits() - 1)), h, "just below the tie after {h:#06x}");
            assert_eq!(f64_to_f16(f64::from_bits(mid.to_bits() + 1)), h + 1, "just above the tie after {h:#06x}");
            assert_eq!(f64_to_f16(-mid), 0x8000 | even, "negative tie after {h:#06x}");
        }
    }

    fn value_check(descr: &str) -> Option<ValueCheck> {
        ValueCheck::new(&descr.parse::<DType>().unwrap())
    }

    #[test]
    fn value_checks_find_bad_bools_and_code_units_wherever_they_sit() {
        for descr in ["'<f8'", "'|S3'", "'|V4'", "'<U0'", "[('a', '<i4'), ('b', '|S2')]", "[('v', '|b1', (0,))]"] {
            assert!(value_check(descr).is_none(), "{descr}");
        }
        // A whole-chunk run of bools: element and count.
        let bools = value_check("'|b1'").unwrap();
        assert_eq!(bools.check(&[0, 1, 1, 0], 0), None);
        let found = bools.check(&[0, 1, 7, 1, 255], 10).unwrap();
        assert_eq!(found, Invalid { element: 12, offset: 0, error: ScalarError::Bool(7), elements: 2 });
        let mut many = vec![1u8; 10_000];
        assert_eq!(bools.check(&many, 0), None);
        many[9_000] = 2;
        let found = bools.check(&many, 0).unwrap();
        assert_eq!(found, Invalid { element: 9_000, offset: 0, error: ScalarError::Bool(2), elements: 1 });
        // Strings, big-endian: the unit's place within its string, its byte in the element.
        let be = value_check("'>U2'").unwrap();
        let mut data = Vec::new();
        for unit in [0x41u32, 0, 0x42, 0xd800, 0x43, 0x11_0000] {
            data.extend_from_slice(&unit.to_be_bytes());
        }
        let found = be.check(&data, 0).unwrap();
        let surrogate = ScalarError::CodePoint { unit: 0xd800, position: 1 };
        assert_eq!(found, Invalid { element: 1, offset: 4, error: surrogate, elements: 2 });
        assert_eq!(be.check(&data[..8], 0), None);
        // A partial element at the end is not looked at.
        assert_eq!(be.check(&data[..12], 0), None);
    }

    #[test]
    fn value_checks_walk_fields_subarrays_and_records_in_subarrays() {
        // 'f' at 0 (8 bytes), 'flags' 3 bools at 8, 's' a <U1 at 11, 'pts' 2 records of
        // (x '<i2', ok '|b1') at 15: 21 bytes.
        let descr =
            "[('f', '<f8'), ('flags', '|b1', (3,)), ('s', '<U1'), ('pts', [('x', '<i2'), ('ok', '|b1')], (2,))]";
        let check = value_check(descr).unwrap();
        assert_eq!(check.itemsize(), 21);
        let good = |el: &mut Vec<u8>| {
            el.extend_from_slice(&1.5f64.to_le_bytes());
            el.extend_from_slice(&[1, 0, 1]);
            el.extend_from_slice(&0x1f600u32.to_le_bytes());
            el.extend_from_slice(&[9, 9, 1, 9, 9, 0]);
        };
        let mut data = Vec::new();
        for _ in 0..4 {
            good(&mut data);
        }
        assert_eq!(check.check(&data, 0), None);
        // Element 1: the second point's flag; element 3: a flag and the string.
        data[21 + 20] = 3;
        data[63 + 9] = 2;
        data[63 + 11..63 + 15].copy_from_slice(&0xdfffu32.to_le_bytes());
        let found = check.check(&data, 5).unwrap();
        assert_eq!(found, Invalid { element: 6, offset: 20, error: ScalarError::Bool(3), elements: 2 });
        let found = check.check(&data[63..], 0).unwrap();
        assert_eq!(found, Invalid { element: 0, offset: 9, error: ScalarError::Bool(2), elements: 1 });
        // Adjacent bool fields and strings of one kind merge into one run.
        let merged = value_check("[('a', '|b1'), ('b', '|b1', (2, 2))]").unwrap();
        assert_eq!(merged.leaves, [Leaf::Bool { offset: 0, len: 5 }]);
        let merged = value_check("[('a', '<U2'), ('b', '<U2', (3,)), ('c', '>U2')]").unwrap();
        assert_eq!(merged.leaves.len(), 2);
        let found = merged.check(&[&[0x41u8, 0, 0, 0][..], &[0; 28], &[0, 0, 0xdc, 0], &[0; 4]].concat(), 0).unwrap();
        assert_eq!((found.offset, found.error), (32, ScalarError::CodePoint { unit: 0xdc00, position: 0 }));
    }
}
