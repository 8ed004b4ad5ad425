//! NumPy's text for one scalar: `Display` for [`Value`] writes what `str()` gives for the
//! NumPy scalar made from the same bytes (NumPy 2.4, `legacy=False`).
//!
//! - bool `True`/`False`, integers in decimal;
//! - floats (`f2`, `f4`, `f8`, the x86 long double) in the shortest digits that tell the
//!   value apart from every other value *of its type*, found as NumPy finds them (its
//!   Dragon4, exact big-integer arithmetic, here [`Big`]), positional for magnitudes in
//!   `[1e-4, 1e16)` (`[1e-4, 1e6)` for `f4`, `[1e-4, 1e3)` for `f2`) and zero, otherwise
//!   scientific with a signed exponent of at least two digits (`1e-05`, `1.5e+16`);
//! - complex numbers as `(1+2j)`, `1.5j` (real part +0), `(nan+infj)`, each part in its
//!   float type's digits with `.0` and trailing zeros trimmed;
//! - `datetime64` in ISO 8601 at the unit's precision (`2020-01-01T01`, weeks as dates,
//!   years outside `0..=9999` as NumPy prints them: `-001-03-04`, `10000-01-01`), `NaT`;
//!   `timedelta64` as `5 seconds`, `NaT`;
//! - `S` as Python's `repr` of the bytes without trailing NULs, `U` as the text itself,
//!   `V` as `b'\x01\xAB'` (every byte escaped, upper-case hex, as NumPy's `void.__str__`).
//!
//! NumPy computes some of these with wrapping 64-bit arithmetic (a datetime far beyond
//! the year 292 billion, a timedelta's count times its unit multiple); the text here
//! wraps the same way, so it is NumPy's text even there, and never panics.

use std::cmp::Ordering;
use std::fmt;

use super::{f16_to_f64, trim_nuls, Value};
use crate::dtype::{DateUnit, TimeUnit};
use crate::repr;

impl fmt::Display for Value<'_> {
    /// NumPy's `str()` of the scalar this value is.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::{DateUnit, TimeUnit};
    /// use npy_core::scalar::Value;
    ///
    /// assert_eq!(Value::F32(0.004).to_string(), "0.004");
    /// assert_eq!(Value::F32(123456789.0).to_string(), "1.2345679e+08");
    /// assert_eq!(Value::F64(1e16).to_string(), "1e+16");
    /// assert_eq!(Value::F64(-0.0).to_string(), "-0.0");
    /// assert_eq!(Value::C128(1.0, -2.5).to_string(), "(1-2.5j)");
    /// let day = DateUnit::new(TimeUnit::Days);
    /// assert_eq!(Value::DateTime(18262, day).to_string(), "2020-01-01");
    /// assert_eq!(Value::DateTime(i64::MIN, day).to_string(), "NaT");
    /// let seconds = DateUnit::new(TimeUnit::Seconds);
    /// assert_eq!(Value::TimeDelta(5, seconds).to_string(), "5 seconds");
    /// assert_eq!(Value::Bytes(b"a\0b\xff\0\0").to_string(), r"b'a\x00b\xff'");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(24);
        write_text(self, &mut out);
        f.pad(&out)
    }
}

/// Appends NumPy's `str()` of `v` to `out`.
fn write_text(v: &Value<'_>, out: &mut String) {
    match v {
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::I8(x) => push_int(i128::from(*x), out),
        Value::I16(x) => push_int(i128::from(*x), out),
        Value::I32(x) => push_int(i128::from(*x), out),
        Value::I64(x) => push_int(i128::from(*x), out),
        Value::U8(x) => push_int(i128::from(*x), out),
        Value::U16(x) => push_int(i128::from(*x), out),
        Value::U32(x) => push_int(i128::from(*x), out),
        Value::U64(x) => push_int(i128::from(*x), out),
        Value::F16(h) => write_real(Float::half(*h), out),
        Value::F32(x) => write_real(Float::single(*x), out),
        Value::F64(x) => write_real(Float::double(*x), out),
        Value::LongDouble(b) => write_real(Float::extended(b), out),
        Value::C64(re, im) => write_complex(Float::single(*re), Float::single(*im), out),
        Value::C128(re, im) => write_complex(Float::double(*re), Float::double(*im), out),
        Value::LongComplex(b) => {
            let (re, im) = b.split_at(16);
            write_complex(Float::extended(re), Float::extended(im), out);
        }
        Value::DateTime(count, unit) => write_datetime(*count, *unit, out),
        Value::TimeDelta(count, unit) => write_timedelta(*count, *unit, out),
        Value::Bytes(b) => repr::write_bytes(trim_nuls(b), out),
        Value::Str(s) => out.push_str(s),
        Value::Void(b) => {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push_str("b'");
            for &x in *b {
                out.push_str("\\x");
                out.push(char::from(HEX[usize::from(x >> 4)]));
                out.push(char::from(HEX[usize::from(x & 15)]));
            }
            out.push('\'');
        }
    }
}

/// An integer in decimal.
fn push_int(x: i128, out: &mut String) {
    use fmt::Write;
    // Writing into a String cannot fail.
    let _ = write!(out, "{x}");
}

// ---------------------------------------------------------------------------------------
// Floats

/// A float taken apart as NumPy's Dragon4 takes it, with the one fact about its type the
/// layout needs: whether NumPy prints it positionally.
#[derive(Debug, Clone, Copy)]
struct Float {
    negative: bool,
    kind: Kind,
    /// NumPy writes the value as `123.45` (else `1.2345e+02`).
    positional: bool,
    /// An x87 encoding the FPU refuses as an operand (an unnormal, a pseudo-infinity or
    /// pseudo-NaN): NumPy's `isnan` calls it NaN, although Dragon4 prints digits for it.
    invalid: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Nan,
    Inf,
    /// `mantissa * 2^exponent`; `unequal_margins` when the next value down is nearer than
    /// the next value up (a power of two above the smallest normal).
    Finite {
        mantissa: u64,
        exponent: i32,
        unequal_margins: bool,
    },
}

impl Float {
    /// An IEEE binary float of `frac` fraction bits and `exp` exponent bits, from its bits.
    fn ieee(bits: u64, frac: u32, exp: u32) -> (bool, Kind) {
        let negative = bits >> (frac + exp) & 1 == 1;
        let e = (bits >> frac) & ((1 << exp) - 1);
        let m = bits & ((1 << frac) - 1);
        let bias = (1i32 << (exp - 1)) - 1;
        let kind = if e == (1 << exp) - 1 {
            if m == 0 {
                Kind::Inf
            } else {
                Kind::Nan
            }
        } else if e == 0 {
            Kind::Finite { mantissa: m, exponent: 1 - bias - frac as i32, unequal_margins: false }
        } else {
            Kind::Finite {
                mantissa: m | 1 << frac,
                exponent: e as i32 - bias - frac as i32,
                unequal_margins: e != 1 && m == 0,
            }
        };
        (negative, kind)
    }

    /// A value whose magnitude `abs` (exact in `f64`) decides the layout: NaN and zero
    /// positional, else positional in `[1e-4, max)`. (NumPy compares `f4` and `f8` values
    /// with the long double `1e-4L`; no `f4` or `f8` lies between it and `1e-4`.)
    fn by_magnitude(negative: bool, kind: Kind, abs: f64, max: f64) -> Float {
        let positional = abs.is_nan() || abs == 0.0 || (1e-4..max).contains(&abs);
        Float { negative, kind, positional, invalid: false }
    }

    fn half(h: u16) -> Float {
        let (negative, kind) = Float::ieee(h.into(), 10, 5);
        // NumPy's half scalar compares its f32 value: NaN is not positional, but NaN
        // prints as `nan` either way.
        Float::by_magnitude(negative, kind, f16_to_f64(h).abs(), 1e3)
    }

    fn single(x: f32) -> Float {
        let (negative, kind) = Float::ieee(x.to_bits().into(), 23, 8);
        Float::by_magnitude(negative, kind, f64::from(x.abs()), 1e6)
    }

    fn double(x: f64) -> Float {
        let (negative, kind) = Float::ieee(x.to_bits(), 52, 11);
        Float::by_magnitude(negative, kind, x.abs(), 1e16)
    }

    /// An x86 80-bit extended value from the low 10 of its 16 little-endian bytes.
    ///
    /// Dragon4 ignores the explicit integer bit: a biased exponent of 0 is subnormal
    /// (mantissa the low 63 bits, so a pseudo-denormal prints without its integer bit),
    /// any other is normal (an unnormal prints as if the bit were set), all ones is inf or
    /// NaN by the low 63 bits. The layout is decided by the x87 comparisons NumPy makes
    /// on the value: an unnormal is an invalid operand there, so it counts as NaN, which
    /// NumPy prints positionally.
    fn extended(b: &[u8]) -> Float {
        let mut lo = [0u8; 8];
        lo.copy_from_slice(&b[..8]);
        let lo = u64::from_le_bytes(lo);
        let hi = u16::from_le_bytes([b[8], b[9]]);
        let negative = hi >> 15 == 1;
        let e = hi & 0x7fff;
        let m = lo & !(1 << 63);
        let int_bit = lo >> 63 == 1;
        let kind = match e {
            0x7fff if m == 0 => Kind::Inf,
            0x7fff => Kind::Nan,
            0 => Kind::Finite { mantissa: m, exponent: 1 - 16383 - 63, unequal_margins: false },
            _ => Kind::Finite {
                mantissa: m | 1 << 63,
                exponent: i32::from(e) - 16383 - 63,
                unequal_margins: e != 1 && m == 0,
            },
        };
        // 1e-4L and 1e16L as (biased exponent, 64-bit mantissa).
        const MIN: (u16, u64) = (0x3ff1, 0xd1b7_1758_e219_652c);
        const MAX: (u16, u64) = (0x4034, 0x8e1b_c9bf_0400_0000);
        let invalid = e != 0 && !int_bit;
        let positional = match e {
            0x7fff => true,
            0 => lo == 0,
            _ if invalid => true,
            _ => (MIN..MAX).contains(&(e, lo)),
        };
        Float { negative, kind, positional, invalid }
    }
}

/// One float part of a scalar taken apart for NumPy's array printing (which lays out
/// every element of an array alike from these): its sign, and NaN, infinity or the
/// shortest digits `d.ddd` and decimal exponent of its value in its own type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FloatDigits {
    /// The sign bit.
    pub negative: bool,
    /// `None` for NaN and infinities.
    pub finite: Option<(String, i32)>,
    /// NaN (an invalid x87 encoding included, as NumPy's `isnan` has it).
    pub nan: bool,
    /// The value as `f64`: exact for `f2`, `f4` and `f8`, the nearest `f64` for a long
    /// double (see `exact`).
    pub value: f64,
    /// Whether `value` is exactly the scalar's value.
    pub exact: bool,
}

impl FloatDigits {
    fn of(x: Float, value: f64, exact: bool) -> FloatDigits {
        let nan = x.invalid || matches!(x.kind, Kind::Nan);
        let finite = match x.kind {
            Kind::Finite { mantissa, exponent, unequal_margins } if !x.invalid => {
                let (digits, exp10) = shortest(mantissa, exponent, unequal_margins);
                let text = digits.as_bytes().iter().map(|&d| char::from(d)).collect();
                Some((text, exp10))
            }
            _ => None,
        };
        FloatDigits { negative: x.negative, finite, nan, value, exact }
    }

    /// The real part and, for a complex scalar, the imaginary part of a float or complex
    /// value; `None` for any other kind.
    pub(crate) fn parts(v: &Value<'_>) -> Option<(FloatDigits, Option<FloatDigits>)> {
        let long = |b: &[u8; 16]| FloatDigits::of(Float::extended(b), super::long_double_to_f64(b), false);
        Some(match v {
            Value::F16(h) => (FloatDigits::of(Float::half(*h), f16_to_f64(*h), true), None),
            Value::F32(x) => (FloatDigits::of(Float::single(*x), f64::from(*x), true), None),
            Value::F64(x) => (FloatDigits::of(Float::double(*x), *x, true), None),
            Value::LongDouble(b) => (long(b), None),
            Value::C64(re, im) => (
                FloatDigits::of(Float::single(*re), f64::from(*re), true),
                Some(FloatDigits::of(Float::single(*im), f64::from(*im), true)),
            ),
            Value::C128(re, im) => {
                (FloatDigits::of(Float::double(*re), *re, true), Some(FloatDigits::of(Float::double(*im), *im, true)))
            }
            Value::LongComplex(b) => {
                let ([re, im], _) = b.as_chunks::<16>() else { return None };
                (long(re), Some(long(im)))
            }
            _ => return None,
        })
    }
}

/// How trailing zeros are trimmed (NumPy's `TrimMode`): a real float keeps one zero after
/// the point (`1.0`), a complex part drops the point too (`1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trim {
    LeaveOneZero,
    DptZeros,
}

/// `str()` of a real float: positional with `.0` kept, or scientific.
fn write_real(x: Float, out: &mut String) {
    write_float(x, Trim::LeaveOneZero, false, out);
}

/// `str()` of a complex: `{im}j` when the real part is +0, else `({re}{im:+}j)`; a
/// non-finite imaginary part is `+nan`, `+inf` or `-inf`, a non-finite real part `nan`,
/// `inf` or `-inf` (NumPy tests them with `isfinite` and `isnan` first, so an invalid
/// x87 encoding is `nan` there).
fn write_complex(re: Float, im: Float, out: &mut String) {
    let re_is_plus_zero = matches!(re.kind, Kind::Finite { mantissa: 0, .. }) && !re.negative && re.positional;
    if re_is_plus_zero {
        write_float(im, Trim::DptZeros, false, out);
        out.push('j');
        return;
    }
    out.push('(');
    match re.kind {
        _ if re.invalid => out.push_str("nan"),
        Kind::Nan => out.push_str("nan"),
        _ => write_float(re, Trim::DptZeros, false, out),
    }
    match im.kind {
        _ if im.invalid => out.push_str("+nan"),
        Kind::Nan => out.push_str("+nan"),
        _ => write_float(im, Trim::DptZeros, true, out),
    }
    out.push_str("j)");
}

/// One float in NumPy's layout, with `+` before a non-negative value when `plus`.
fn write_float(x: Float, trim: Trim, plus: bool, out: &mut String) {
    let sign = if x.negative {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    match x.kind {
        Kind::Nan => out.push_str("nan"),
        Kind::Inf => {
            out.push_str(sign);
            out.push_str("inf");
        }
        Kind::Finite { mantissa, exponent, unequal_margins } => {
            out.push_str(sign);
            let (digits, exp10) = shortest(mantissa, exponent, unequal_margins);
            if x.positional {
                positional(digits.as_bytes(), exp10, trim, out);
            } else {
                scientific(digits.as_bytes(), exp10, out);
            }
        }
    }
}

/// `digits` (`d.ddd × 10^exp10`) written positionally: `123.45`, `0.0012`, `100.0`.
fn positional(digits: &[u8], exp10: i32, trim: Trim, out: &mut String) {
    let start = out.len();
    let mut fraction = false;
    if exp10 >= 0 {
        let whole = exp10 as usize + 1;
        for i in 0..whole {
            out.push(char::from(*digits.get(i).unwrap_or(&b'0')));
        }
        if digits.len() > whole {
            out.push('.');
            digits[whole..].iter().for_each(|&d| out.push(char::from(d)));
            fraction = true;
        }
    } else {
        out.push_str("0.");
        (1..-exp10).for_each(|_| out.push('0'));
        digits.iter().for_each(|&d| out.push(char::from(d)));
        fraction = true;
    }
    if fraction {
        trim_zeros(out, start, trim);
    } else if trim == Trim::LeaveOneZero {
        out.push_str(".0");
    }
}

/// `digits` written as `d.ddde±XX` (at least two exponent digits; NumPy trims the point
/// and trailing zeros here for real floats too: `1e+16`).
fn scientific(digits: &[u8], exp10: i32, out: &mut String) {
    let start = out.len();
    out.push(char::from(digits[0]));
    if digits.len() > 1 {
        out.push('.');
        digits[1..].iter().for_each(|&d| out.push(char::from(d)));
        trim_zeros(out, start, Trim::DptZeros);
    }
    out.push('e');
    out.push(if exp10 < 0 { '-' } else { '+' });
    let e = exp10.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
}

/// Drops trailing zeros after the point written from `start` on, then the point itself
/// (or keeps one zero, for [`Trim::LeaveOneZero`]).
fn trim_zeros(out: &mut String, start: usize, trim: Trim) {
    if !out[start..].contains('.') {
        return;
    }
    while out.ends_with('0') {
        out.pop();
    }
    if out.ends_with('.') {
        match trim {
            Trim::LeaveOneZero => out.push('0'),
            Trim::DptZeros => {
                out.pop();
            }
        }
    }
}

/// Up to 40 decimal digits (a long double needs at most 21 to be told apart).
struct Digits {
    buf: [u8; 40],
    len: usize,
}

impl Digits {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    fn push(&mut self, d: u32) {
        if self.len < self.buf.len() {
            self.buf[self.len] = b'0' + d as u8;
            self.len += 1;
        }
    }
}

/// The shortest digits of `mantissa * 2^exponent` that no other value of its type rounds
/// to, and the decimal exponent of the first: NumPy's Dragon4 in its unique mode (Burger
/// and Dybvig's free-format algorithm; the margins reach half way to the neighbours,
/// inclusive when the mantissa is even; the last digit rounded to nearest, ties to even).
///
/// The arithmetic is exact: in `u128` when every number it makes fits (most values of
/// everyday magnitude), else in [`Big`]; the digits are the same either way.
fn shortest(mantissa: u64, exponent: i32, unequal_margins: bool) -> (Digits, i32) {
    if mantissa == 0 {
        let mut digits = Digits { buf: [0; 40], len: 0 };
        digits.push(0);
        return (digits, 0);
    }
    // NumPy's estimate of the first digit's exponent (correct, or one too low).
    let top_bit = 63 - mantissa.leading_zeros() as i32;
    let k = (f64::from(top_bit + exponent) * std::f64::consts::LOG10_2 - 0.69).ceil() as i32;
    // The scale's bits (10^k has fewer than 10k/3 + 1); the other numbers stay below
    // 100 times the scale (7 more bits).
    let scale_bits = 2 + exponent.min(0).unsigned_abs() + k.max(0).unsigned_abs() * 10 / 3 + 1;
    if scale_bits + 7 <= 127 {
        dragon4::<u128>(mantissa, exponent, unequal_margins, k)
    } else {
        dragon4::<Big>(mantissa, exponent, unequal_margins, k)
    }
}

/// [`shortest`]'s digit generation for a nonzero mantissa, `k` being the estimate of the
/// first digit's exponent plus one.
fn dragon4<N: Nat>(mantissa: u64, exponent: i32, unequal_margins: bool, mut k: i32) -> (Digits, i32) {
    let mut digits = Digits { buf: [0; 40], len: 0 };
    let even = mantissa.is_multiple_of(2);
    // value = mantissa * 2^exponent = scaled / scale; margin_low (margin_high) is half the
    // gap to the next value down (up), over the same scale. `shift` doubles everything
    // once more for unequal margins, so margin_high = 2 * margin_low stays whole.
    let shift = 1 + u32::from(unequal_margins);
    let mut scaled = N::from_u64(mantissa);
    let (mut scale, mut margin_low);
    if exponent > 0 {
        scaled.shl(exponent as u32 + shift);
        scale = N::from_u64(1 << shift);
        margin_low = N::pow2(exponent as u32);
    } else {
        scaled.shl(shift);
        scale = N::pow2(exponent.unsigned_abs() + shift);
        margin_low = N::from_u64(1);
    }
    match k.cmp(&0) {
        Ordering::Greater => scale.mul_pow10(k.unsigned_abs()),
        Ordering::Less => {
            scaled.mul_pow10(k.unsigned_abs());
            margin_low.mul_pow10(k.unsigned_abs());
        }
        Ordering::Equal => {}
    }
    if scaled.compare(&scale) != Ordering::Less {
        k += 1;
    } else {
        scaled.mul_small(10);
        margin_low.mul_small(10);
    }
    N::normalize(&mut scale, &mut scaled, &mut margin_low);
    let mut high_sum = N::from_u64(0);
    let (mut digit, mut low, mut high);
    loop {
        digit = scaled.div_rem_digit(&scale);
        // scaled + margin_high, margin_high being margin_low or twice it
        high_sum.set_sum(&scaled, &margin_low, 1 + u32::from(unequal_margins));
        let c_low = scaled.compare(&margin_low);
        let c_high = high_sum.compare(&scale);
        low = c_low == Ordering::Less || (even && c_low == Ordering::Equal);
        high = c_high == Ordering::Greater || (even && c_high == Ordering::Equal);
        if low || high || digits.len >= 39 {
            break;
        }
        digits.push(digit);
        scaled.mul_small(10);
        margin_low.mul_small(10);
    }
    let mut round_down = low;
    if low == high {
        scaled.shl(1);
        round_down = match scaled.compare(&scale) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => digit.is_multiple_of(2),
        };
    }
    if round_down {
        digits.push(digit);
    } else if digit < 9 {
        digits.push(digit + 1);
    } else {
        // Carry: drop trailing nines, bump the digit before them (or write a 1 one place
        // up when all were nines).
        while digits.len > 0 && digits.buf[digits.len - 1] == b'9' {
            digits.len -= 1;
        }
        if digits.len == 0 {
            digits.push(1);
            k += 1;
        } else {
            digits.buf[digits.len - 1] += 1;
        }
    }
    (digits, k - 1)
}

/// The unsigned integers [`dragon4`] computes with.
trait Nat {
    fn from_u64(v: u64) -> Self;
    fn pow2(n: u32) -> Self;
    fn shl(&mut self, n: u32);
    fn mul_small(&mut self, m: u32);
    fn mul_pow10(&mut self, n: u32);
    fn compare(&self, other: &Self) -> Ordering;
    /// `self = a + k b`, `k` at most 2.
    fn set_sum(&mut self, a: &Self, b: &Self, k: u32);
    /// Scales the three numbers alike so that [`Nat::div_rem_digit`] can divide by `scale`.
    fn normalize(scale: &mut Self, scaled: &mut Self, margin: &mut Self);
    /// The quotient `self / d` (below 10, by the caller's scaling), leaving the remainder
    /// in `self`.
    fn div_rem_digit(&mut self, d: &Self) -> u32;
}

impl Nat for u128 {
    fn from_u64(v: u64) -> Self {
        v.into()
    }
    fn pow2(n: u32) -> Self {
        1 << n
    }
    fn shl(&mut self, n: u32) {
        *self <<= n;
    }
    fn mul_small(&mut self, m: u32) {
        *self *= u128::from(m);
    }
    fn mul_pow10(&mut self, n: u32) {
        *self *= 10u128.pow(n);
    }
    fn compare(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn set_sum(&mut self, a: &Self, b: &Self, k: u32) {
        *self = a + b * u128::from(k);
    }
    fn normalize(_: &mut Self, _: &mut Self, _: &mut Self) {}
    fn div_rem_digit(&mut self, d: &Self) -> u32 {
        let q = *self / d;
        *self %= d;
        q as u32
    }
}

/// An unsigned big integer: 32-bit limbs, least significant first, no zero limb on top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Big {
    limbs: Vec<u32>,
}

impl Nat for Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big { limbs: vec![v as u32, (v >> 32) as u32] };
        b.trim();
        b
    }

    fn pow2(n: u32) -> Big {
        let mut limbs = vec![0; n as usize / 32 + 1];
        limbs[n as usize / 32] = 1 << (n % 32);
        Big { limbs }
    }

    fn mul_pow10(&mut self, mut n: u32) {
        while n >= 9 {
            self.mul_u32(1_000_000_000);
            n -= 9;
        }
        self.mul_u32(10u32.pow(n));
    }

    fn shl(&mut self, n: u32) {
        self.shl_bits(n);
    }

    fn mul_small(&mut self, m: u32) {
        self.mul_u32(m);
    }

    fn compare(&self, other: &Big) -> Ordering {
        self.limbs.len().cmp(&other.limbs.len()).then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }

    fn set_sum(&mut self, a: &Big, b: &Big, k: u32) {
        let n = a.limbs.len().max(b.limbs.len());
        self.limbs.clear();
        let mut carry = 0u64;
        for i in 0..n {
            let s = u64::from(*a.limbs.get(i).unwrap_or(&0))
                + u64::from(*b.limbs.get(i).unwrap_or(&0)) * u64::from(k)
                + carry;
            self.limbs.push(s as u32);
            carry = s >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
    }

    /// Puts the top of `scale`'s highest limb at bit 27: then `scaled < 10 scale` has no
    /// more limbs than `scale`, and a digit's quotient estimated from the top limbs is low
    /// by at most one.
    fn normalize(scale: &mut Big, scaled: &mut Big, margin: &mut Big) {
        let top = *scale.limbs.last().unwrap_or(&1);
        let s = (32 + 27 - (31 - top.leading_zeros())) % 32;
        if s != 0 {
            scale.shl_bits(s);
            scaled.shl_bits(s);
            margin.shl_bits(s);
        }
    }

    fn div_rem_digit(&mut self, d: &Big) -> u32 {
        let n = d.limbs.len();
        if self.limbs.len() < n {
            return 0;
        }
        let top = u64::from(self.limbs[n - 1]);
        let mut q = (top / (u64::from(d.limbs[n - 1]) + 1)) as u32;
        if q > 0 {
            self.sub_mul(d, q);
        }
        while self.compare(d) != Ordering::Less {
            self.sub_mul(d, 1);
            q += 1;
        }
        q
    }
}

impl Big {
    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }

    fn shl_bits(&mut self, n: u32) {
        if self.limbs.is_empty() {
            return;
        }
        let (whole, bits) = (n as usize / 32, n % 32);
        if bits != 0 {
            let mut carry = 0;
            for l in &mut self.limbs {
                let v = *l;
                *l = v << bits | carry;
                carry = v >> (32 - bits);
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
        }
        self.limbs.splice(0..0, std::iter::repeat_n(0, whole));
    }

    fn mul_u32(&mut self, m: u32) {
        let mut carry = 0u64;
        for l in &mut self.limbs {
            let p = u64::from(*l) * u64::from(m) + carry;
            *l = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
        self.trim();
    }

    /// `self -= q * d`, for `q * d <= self`.
    fn sub_mul(&mut self, d: &Big, q: u32) {
        let (mut borrow, mut carry) = (0i64, 0u64);
        for i in 0..self.limbs.len() {
            let p = u64::from(*d.limbs.get(i).unwrap_or(&0)) * u64::from(q) + carry;
            carry = p >> 32;
            let t = i64::from(self.limbs[i]) - i64::from(p as u32) - borrow;
            self.limbs[i] = t as u32;
            borrow = i64::from(t < 0);
        }
        self.trim();
    }
}

// ---------------------------------------------------------------------------------------
// Datetimes and timedeltas

/// NumPy's unit names in a timedelta's text.
fn unit_name(u: TimeUnit) -> &'static str {
    match u {
        TimeUnit::Generic => "generic time units",
        TimeUnit::Years => "years",
        TimeUnit::Months => "months",
        TimeUnit::Weeks => "weeks",
        TimeUnit::Days => "days",
        TimeUnit::Hours => "hours",
        TimeUnit::Minutes => "minutes",
        TimeUnit::Seconds => "seconds",
        TimeUnit::Milliseconds => "milliseconds",
        TimeUnit::Microseconds => "microseconds",
        TimeUnit::Nanoseconds => "nanoseconds",
        TimeUnit::Picoseconds => "picoseconds",
        TimeUnit::Femtoseconds => "femtoseconds",
        TimeUnit::Attoseconds => "attoseconds",
    }
}

/// `5 seconds`: the count times the unit's multiple (wrapping, as NumPy's C does) and the
/// unit's name; `NaT`.
fn write_timedelta(count: i64, unit: DateUnit, out: &mut String) {
    if count == i64::MIN {
        out.push_str("NaT");
        return;
    }
    let n = count.wrapping_mul(i64::from(unit.multiple));
    out.push_str(&n.to_string());
    out.push(' ');
    out.push_str(unit_name(unit.unit));
}

/// A datetime's fields, as NumPy's `npy_datetimestruct`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    min: i64,
    sec: i64,
    /// Microseconds of the second.
    us: i64,
    /// Picoseconds of the microsecond.
    ps: i64,
    /// Attoseconds of the picosecond.
    atto: i64,
}

/// `(x div u, x mod u)` rounding down.
fn floor_divmod(x: i64, u: i64) -> (i64, i64) {
    (x.div_euclid(u), x.rem_euclid(u))
}

/// ISO 8601 text at the unit's precision (weeks as days), `NaT`. NumPy's `str` refuses a
/// generic-unit datetime other than NaT (it cannot place it in time): that is written as
/// its count and `generic time units`, as a generic timedelta is.
fn write_datetime(count: i64, unit: DateUnit, out: &mut String) {
    if count == i64::MIN {
        out.push_str("NaT");
        return;
    }
    if unit.unit == TimeUnit::Generic {
        out.push_str(&count.to_string());
        out.push_str(" generic time units");
        return;
    }
    let c = civil(count.wrapping_mul(i64::from(unit.multiple)), unit.unit);
    iso(&c, unit.unit, out);
}

/// The fields of `dt` units since 1970-01-01T00:00, as NumPy 2.4's
/// `NpyDatetime_ConvertDatetime64ToDatetimeStruct` computes them (wrapping arithmetic
/// included, where NumPy's overflows).
fn civil(dt: i64, unit: TimeUnit) -> Civil {
    use TimeUnit as T;
    let mut c = Civil { year: 1970, month: 1, day: 1, hour: 0, min: 0, sec: 0, us: 0, ps: 0, atto: 0 };
    const K: i64 = 1000;
    let set_days = |c: &mut Civil, days: i64| {
        let (y, m, d) = from_days(days);
        (c.year, c.month, c.day) = (y, m, d);
    };
    match unit {
        T::Generic | T::Years => c.year = 1970i64.wrapping_add(dt),
        T::Months => {
            let (y, m) = floor_divmod(dt, 12);
            c.year = 1970 + y;
            c.month = m + 1;
        }
        T::Weeks => set_days(&mut c, dt.wrapping_mul(7)),
        T::Days => set_days(&mut c, dt),
        T::Hours => {
            let (days, h) = floor_divmod(dt, 24);
            set_days(&mut c, days);
            c.hour = h;
        }
        T::Minutes => {
            let (days, r) = floor_divmod(dt, 24 * 60);
            set_days(&mut c, days);
            (c.hour, c.min) = (r / 60, r % 60);
        }
        T::Seconds | T::Milliseconds | T::Microseconds | T::Nanoseconds | T::Picoseconds => {
            let per_sec = match unit {
                T::Seconds => 1,
                T::Milliseconds => K,
                T::Microseconds => K * K,
                T::Nanoseconds => K * K * K,
                _ => K * K * K * K,
            };
            let (days, r) = floor_divmod(dt, per_sec * 86_400);
            set_days(&mut c, days);
            let (secs, sub) = (r / per_sec, r % per_sec);
            (c.hour, c.min, c.sec) = (secs / 3600, secs / 60 % 60, secs % 60);
            match unit {
                T::Milliseconds => c.us = sub * K,
                T::Microseconds => c.us = sub,
                T::Nanoseconds => (c.us, c.ps) = (sub / K, sub % K * K),
                T::Picoseconds => (c.us, c.ps) = (sub / (K * K), sub % (K * K)),
                _ => {}
            }
        }
        T::Femtoseconds => {
            // NumPy's whole range here is about ±2.6 hours around 1970.
            let (h, r) = floor_divmod(dt, K.pow(5) * 3600);
            c.hour = h;
            if h < 0 {
                (c.year, c.month, c.day) = (1969, 12, 31);
                c.hour += 24;
            }
            c.min = r / (K.pow(5) * 60);
            let r = r % (K.pow(5) * 60);
            c.sec = r / K.pow(5);
            let r = r % K.pow(5);
            (c.us, c.ps, c.atto) = (r / K.pow(3), r / K % K.pow(2), r % K * K);
        }
        T::Attoseconds => {
            // About ±9.2 seconds around 1970.
            let (s, r) = floor_divmod(dt, K.pow(6));
            c.sec = s;
            if s < 0 {
                (c.year, c.month, c.day, c.hour, c.min) = (1969, 12, 31, 23, 59);
                c.sec += 60;
            }
            (c.us, c.ps, c.atto) = (r / K.pow(4), r / K.pow(2) % K.pow(2), r % K.pow(2));
        }
    }
    c
}

/// Whether `year` is a leap year of the proleptic Gregorian calendar.
fn is_leap(year: i64) -> bool {
    year & 3 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// (year, month, day) of `days` since 1970-01-01, by NumPy 2.4's `days_to_yearsdays`
/// (400-year cycles counted from 2000, with its wrapping subtraction near `i64::MIN`).
fn from_days(days: i64) -> (i64, i64, i64) {
    const CYCLE: i64 = 400 * 365 + 100 - 4 + 1;
    let mut d = days.wrapping_sub(365 * 30 + 7);
    let mut year = if d >= 0 {
        let y = 400 * (d / CYCLE);
        d %= CYCLE;
        y
    } else {
        let y = 400 * (d.wrapping_sub(CYCLE - 1) / CYCLE);
        d %= CYCLE;
        if d < 0 {
            d += CYCLE;
        }
        y
    };
    if d >= 366 {
        year += 100 * ((d - 1) / (100 * 365 + 25 - 1));
        d = (d - 1) % (100 * 365 + 25 - 1);
        if d >= 365 {
            year += 4 * ((d + 1) / (4 * 365 + 1));
            d = (d + 1) % (4 * 365 + 1);
            if d >= 366 {
                year += (d - 1) / 365;
                d = (d - 1) % 365;
            }
        }
    }
    year += 2000;
    const MONTHS: [i64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    for (i, &len) in MONTHS.iter().enumerate() {
        let len = len + i64::from(i == 1 && is_leap(year));
        if d < len {
            return (year, i as i64 + 1, d + 1);
        }
        d -= len;
    }
    (year, 1, 1)
}

/// NumPy's `make_iso_8601_datetime` without time zone: the year as `%04lld`, then each
/// field down to `unit` (weeks shown as days).
fn iso(c: &Civil, unit: TimeUnit, out: &mut String) {
    use fmt::Write;
    use TimeUnit as T;
    let _ = write!(out, "{:04}", c.year);
    let rank = |u: TimeUnit| match u {
        T::Generic | T::Years => 0,
        T::Months => 1,
        T::Weeks | T::Days => 2,
        T::Hours => 3,
        T::Minutes => 4,
        T::Seconds => 5,
        T::Milliseconds => 6,
        T::Microseconds => 7,
        T::Nanoseconds => 8,
        T::Picoseconds => 9,
        T::Femtoseconds => 10,
        T::Attoseconds => 11,
    };
    let r = rank(unit);
    let two = |out: &mut String, sep: char, v: i64| {
        out.push(sep);
        out.push(char::from(b'0' + (v / 10 % 10) as u8));
        out.push(char::from(b'0' + (v % 10) as u8));
    };
    let three = |out: &mut String, v: i64| {
        for p in [100, 10, 1] {
            out.push(char::from(b'0' + (v / p % 10) as u8));
        }
    };
    let fields: [(usize, char, i64); 5] =
        [(1, '-', c.month), (2, '-', c.day), (3, 'T', c.hour), (4, ':', c.min), (5, ':', c.sec)];
    for (rank, sep, v) in fields {
        if r < rank {
            return;
        }
        two(out, sep, v);
    }
    if r >= 6 {
        out.push('.');
    }
    let sub: [(usize, i64); 6] = [
        (6, c.us / 1000),
        (7, c.us % 1000),
        (8, c.ps / 1000),
        (9, c.ps % 1000),
        (10, c.atto / 1000),
        (11, c.atto % 1000),
    ];
    for (rank, v) in sub {
        if r < rank {
            return;
        }
        three(out, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(mantissa: u64, exponent: i32, unequal: bool) -> (String, i32) {
        let (d, e) = shortest(mantissa, exponent, unequal);
        (String::from_utf8(d.as_bytes().to_vec()).unwrap(), e)
    }

    #[test]
    fn u128_and_big_give_the_same_digits() {
        // Values where the u128 path applies, run through both.
        let step = if cfg!(miri) { 977 } else { 7 };
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in (0..20_000i32).step_by(step) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mantissa = x >> (i % 40) | 1 << 52 >> (i % 3);
            let exponent = i % 120 - 90;
            let unequal = i % 11 == 0;
            let top = 63 - mantissa.leading_zeros() as i32;
            let k = (f64::from(top + exponent) * std::f64::consts::LOG10_2 - 0.69).ceil() as i32;
            let small = dragon4::<u128>(mantissa, exponent, unequal, k);
            let big = dragon4::<Big>(mantissa, exponent, unequal, k);
            assert_eq!(small.0.as_bytes(), big.0.as_bytes(), "{mantissa:#x} * 2^{exponent}");
            assert_eq!(small.1, big.1, "{mantissa:#x} * 2^{exponent}");
        }
    }

    #[test]
    fn digits_are_shortest_and_nearest() {
        // 0.1 as a double: 0x1999999999999a * 2^-56
        assert_eq!(digits(0x0019_9999_9999_999a, -56, false), ("1".into(), -1));
        // 5e-324, the smallest subnormal double
        assert_eq!(digits(1, -1074, false), ("5".into(), -324));
        // 2^63 as a long double mantissa, 1e16's neighbourhood: exact integer digits
        assert_eq!(digits(10_000_000_000_000_000, 0, false), ("1".into(), 16));
        // the largest double
        assert_eq!(digits((1 << 53) - 1, 971, false), ("17976931348623157".into(), 308));
    }

    #[test]
    fn layout_follows_numpy() {
        let text = |v: Value<'_>| v.to_string();
        assert_eq!(text(Value::F16(0x7bff)), "6.55e+04");
        assert_eq!(text(Value::F16(0x3c00)), "1.0");
        assert_eq!(text(Value::F32(1e-4)), "1e-04");
        assert_eq!(text(Value::F64(1e-4)), "0.0001");
        assert_eq!(text(Value::F64(f64::NAN)), "nan");
        assert_eq!(text(Value::F64(-f64::NAN)), "nan");
        assert_eq!(text(Value::F64(f64::NEG_INFINITY)), "-inf");
        assert_eq!(text(Value::C64(0.0, -0.0)), "-0j");
        assert_eq!(text(Value::C64(-0.0, 0.0)), "(-0+0j)");
        assert_eq!(text(Value::C128(f64::NAN, f64::NEG_INFINITY)), "(nan-infj)");
        assert_eq!(text(Value::C128(1.0, f64::NAN)), "(1+nanj)");
        assert_eq!(text(Value::Void(&[1, 0xab])), r"b'\x01\xAB'");
        assert_eq!(format!("{:>6}|{:<6}|", Value::I16(-3), Value::Bool(true)), "    -3|True  |");
        // long double 0.1 from a double, and the smallest subnormal double
        let ld = |bits: u128| Value::LongDouble(bits.to_le_bytes());
        assert_eq!(text(ld(0x3ffb_cccc_cccc_cccc_d000)), "0.10000000000000000555");
        assert_eq!(text(ld(0x3bcd_8000_0000_0000_0000)), "4.940656458412465442e-324");
        let mut c = [0u8; 32];
        c[..16].copy_from_slice(&0x3ffb_cccc_cccc_cccc_d000u128.to_le_bytes());
        c[16..].copy_from_slice(&0x3fff_8000_0000_0000_0000u128.to_le_bytes());
        assert_eq!(text(Value::LongComplex(c)), "(0.10000000000000000555+1j)");
    }

    #[test]
    fn datetimes_follow_numpy() {
        let unit = |u, multiple| DateUnit { unit: u, multiple };
        let dt = |count, u, m| Value::DateTime(count, unit(u, m)).to_string();
        assert_eq!(dt(1, TimeUnit::Seconds, 10), "1970-01-01T00:00:10");
        assert_eq!(dt(2608, TimeUnit::Weeks, 1), "2019-12-26");
        assert_eq!(dt(-719_831, TimeUnit::Days, 1), "-001-03-04");
        assert_eq!(dt(2_932_897, TimeUnit::Days, 1), "10000-01-01");
        assert_eq!(dt(-1, TimeUnit::Attoseconds, 1), "1969-12-31T23:59:59.999999999999999999");
        assert_eq!(dt(i64::MAX, TimeUnit::Years, 1), "-9223372036854773839");
        // NumPy refuses to place a generic datetime other than NaT in time.
        assert_eq!(Value::DateTime(5, DateUnit::GENERIC).to_string(), "5 generic time units");
        assert_eq!(Value::DateTime(i64::MIN, DateUnit::GENERIC).to_string(), "NaT");
        let td = |count, u, m| Value::TimeDelta(count, unit(u, m)).to_string();
        assert_eq!(td(1, TimeUnit::Hours, 1), "1 hours");
        assert_eq!(td(i64::MAX, TimeUnit::Seconds, 10), "-10 seconds");
        assert_eq!(Value::TimeDelta(-1, DateUnit::GENERIC).to_string(), "-1 generic time units");
    }
}
