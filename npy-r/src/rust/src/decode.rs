//! Elements to R vectors, a column at a time: each scalar leaf of the dtype (a record's
//! field, through nested records and subarrays; a plain array's one leaf) goes through an
//! npy-core plan to its little-endian value, then into an R vector of its natural type.
//! Elements come in pieces of about a MiB, so a file of any size needs no second copy of
//! itself: numbers go straight into the R vectors, allocated once.

use extendr_api::prelude::*;
use extendr_api::{single_threaded, AsTypedSlice};
use npy_core::dtype::{ByteOrder, Column, DType, DateUnit, Scalar, ScalarType, TimeUnit};
use npy_core::plan::Plan;
use npy_core::scalar::{f16_to_f64, long_double_to_f64, trim_nuls, ucs4_lossy, widen};

use crate::error::{usage, Failure};

/// Bytes of elements a piece should hold, so the plans' output stays in cache.
pub const PIECE_BYTES: usize = 1 << 20;

/// How R holds 64-bit integers: `bit64::integer64` (the bits in a double vector), or
/// doubles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int64 {
    /// `bit64::integer64`.
    Bit64,
    /// Doubles, with a warning for a value they cannot hold exactly.
    Double,
}

/// What a leaf's values become in R.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `b1` as logical (any non-zero byte is `TRUE`, as NumPy reads it).
    Logical,
    /// `i1`, `i2`, `i4`, `u1`, `u2` as integer.
    Integer,
    /// `u4`, `f2`, `f4`, `f8` as double.
    Double,
    /// `f16` (x86 long double) as the nearest double.
    LongDouble,
    /// `i8` as integer64 (or double).
    Int64,
    /// `u8` as integer64 while every value fits, else double.
    UInt64,
    /// `c8`, `c16` as complex.
    Complex,
    /// `c32` as complex of the nearest doubles.
    LongComplex,
    /// `M8[unit]`, `m8[unit]`: `Date`, `POSIXct` or `difftime` where exact, else counts.
    Time { delta: bool, unit: DateUnit },
    /// `S n` as character, one char per byte (U+0000 to U+00FF, as npy-js reads it).
    Bytes,
    /// `U n` as character.
    Unicode,
    /// `V n` as a list of raw vectors.
    Void,
}

/// A leaf being decoded.
struct Leaf {
    column: Column,
    kind: Kind,
    /// The little-endian scalar the plan gives.
    scalar: Scalar,
    plan: Plan,
    out: Out,
}

/// A leaf's R vector (numbers, allocated once) or its staged values (text, bytes).
enum Out {
    Numbers(Robj),
    Text(Vec<Option<String>>),
    /// `S` values as bytes, for a column whose values R's strings cannot hold.
    Raw(Vec<Vec<u8>>),
}

/// The longest vector R makes (R_XLEN_T_MAX, 2^52).
const R_MAX_LENGTH: u64 = 1 << 52;

/// Bytes of R memory allowed beyond 16 times the elements' own bytes: R's values of
/// narrow types are wider (a `u1` is a 4-byte integer, an `S1` an 8-byte pointer), but a
/// header must not make R allocate much more than the data it describes (`V0` elements,
/// records without fields, counted in the billions, hold no bytes at all).
const R_SLACK_BYTES: u64 = 64 << 20;

/// Checks that R can hold `len` elements of `dtype` as the leaves `columns`, before
/// anything is allocated: a data.frame's rows and a vector's length within R's limits,
/// and R's memory for them bounded by the data's own size (see [`R_SLACK_BYTES`]).
fn fits_r(dtype: &DType, columns: &[Column], len: usize) -> std::result::Result<(), Failure> {
    let len = len as u64;
    if dtype.as_record().is_some() && len > i32::MAX as u64 {
        return Err(usage(format!("{len} records: R's data.frames hold at most 2147483647 rows")));
    }
    let data = len.saturating_mul(dtype.itemsize() as u64);
    let mut memory = 0u64;
    for c in columns {
        let values = len.saturating_mul(c.per_element() as u64);
        if values > R_MAX_LENGTH {
            return Err(usage(format!("{values} values: R's vectors hold at most 2^52")));
        }
        let each = match c.scalar.ty() {
            ScalarType::Bool | ScalarType::Int(1 | 2 | 4) | ScalarType::UInt(1 | 2) => 4,
            ScalarType::Complex(_) => 16,
            _ => 8,
        };
        memory = memory.saturating_add(values.saturating_mul(each));
    }
    let allowed = data.saturating_mul(16).saturating_add(R_SLACK_BYTES);
    if memory > allowed {
        return Err(usage(format!(
            "{len} elements of {} bytes would take {memory} bytes of R's memory, more than 16 times the data's {data} bytes",
            dtype.itemsize()
        )));
    }
    Ok(())
}

/// A leaf's path and its R vector.
pub type Named = (String, Robj);

/// Decodes elements of one dtype into R vectors (see the module).
pub struct Decoder {
    itemsize: usize,
    /// Elements the vectors hold.
    len: usize,
    leaves: Vec<Leaf>,
    int64: Int64,
    buf: Vec<u8>,
    /// Warnings for the caller to give in R, each naming its column.
    pub warnings: Vec<String>,
}

/// The kind of a leaf, and the little-endian scalar its plan converts to.
fn kind_of(s: &Scalar) -> std::result::Result<(Kind, Scalar), String> {
    let le = |ty| Scalar::new(ty, ByteOrder::Little);
    Ok(match s.ty() {
        ScalarType::Bool => (Kind::Logical, le(ScalarType::UInt(1))),
        // Numbers are planned to their own type, little-endian (a copy, or a swap), and
        // widened as they are placed: faster than the plan's general conversions.
        ty @ (ScalarType::Int(1 | 2 | 4) | ScalarType::UInt(1 | 2)) => (Kind::Integer, le(ty)),
        ty @ (ScalarType::UInt(4) | ScalarType::Float(2 | 4 | 8)) => (Kind::Double, le(ty)),
        ScalarType::Float(16) => (Kind::LongDouble, le(ScalarType::Float(16))),
        ScalarType::Int(_) => (Kind::Int64, le(ScalarType::Int(8))),
        ScalarType::UInt(_) => (Kind::UInt64, le(ScalarType::UInt(8))),
        ScalarType::Complex(32) => (Kind::LongComplex, le(ScalarType::Complex(32))),
        ScalarType::Complex(_) => (Kind::Complex, le(ScalarType::Complex(16))),
        ScalarType::DateTime(unit) => (Kind::Time { delta: false, unit }, le(ScalarType::DateTime(unit))),
        ScalarType::TimeDelta(unit) => (Kind::Time { delta: true, unit }, le(ScalarType::TimeDelta(unit))),
        ScalarType::Bytes(n) => (Kind::Bytes, le(ScalarType::Bytes(n))),
        ScalarType::Unicode(n) => (Kind::Unicode, le(ScalarType::Unicode(n))),
        ScalarType::Void(n) => (Kind::Void, le(ScalarType::Void(n))),
        ScalarType::Object => return Err("an object field (NumPy pickles such arrays)".into()),
        other => return Err(format!("a scalar type R has no reading for ({other:?})")),
    })
}

/// The columns of `dtype` that `cols` names (all of them when `None`): a name selects the
/// leaf of that path, or every leaf under it (`receiver` gives `receiver.x` and
/// `receiver.y`).
pub fn chosen_columns(dtype: &DType, cols: Option<&[String]>) -> std::result::Result<Vec<Column>, Failure> {
    let columns = dtype.columns().map_err(Failure::from)?;
    let Some(cols) = cols else { return Ok(columns) };
    if dtype.as_record().is_none() {
        return Err(usage("`cols` names fields of a record array; this array has none (use `x[, j]`)"));
    }
    let mut out: Vec<Column> = Vec::new();
    for name in cols {
        let prefix = format!("{name}.");
        let found: Vec<&Column> = columns.iter().filter(|c| c.path == *name || c.path.starts_with(&prefix)).collect();
        if found.is_empty() {
            let names: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
            return Err(usage(format!("no field '{name}': the fields are {}", names.join(", "))));
        }
        for c in found {
            if !out.iter().any(|o| o.path == c.path) {
                out.push(c.clone());
            }
        }
    }
    Ok(out)
}

impl Decoder {
    /// A decoder of `len` elements of `dtype` into the leaves `columns`.
    pub fn new(dtype: &DType, columns: Vec<Column>, len: usize, int64: Int64) -> std::result::Result<Self, Failure> {
        fits_r(dtype, &columns, len)?;
        let raw = dtype.bools_as_bytes()?;
        let mut leaves = Vec::with_capacity(columns.len());
        for column in columns {
            let (kind, scalar) = kind_of(&column.scalar).map_err(|why| {
                let at = if column.path.is_empty() { String::new() } else { format!("field '{}': ", column.path) };
                usage(format!("{at}{why}"))
            })?;
            let target = column.with_leaf(scalar)?;
            let plan = Plan::new(&raw, &target)?;
            let n = len.checked_mul(column.per_element()).ok_or_else(|| usage("too many values"))?;
            // Every value is written by `decode` (or `direct`): R's vectors are taken
            // as allocated, not zeroed first.
            let path = if column.path.is_empty() { "the array" } else { column.path.as_str() };
            let vector = |rtype| alloc_vector(rtype, n, path).map(Out::Numbers);
            let out = match kind {
                Kind::Logical => vector(Rtype::Logicals)?,
                Kind::Integer => vector(Rtype::Integers)?,
                Kind::Complex | Kind::LongComplex => vector(Rtype::Complexes)?,
                Kind::Bytes | Kind::Unicode => Out::Text(Vec::with_capacity(n)),
                Kind::Void => Out::Raw(Vec::with_capacity(n)),
                _ => vector(Rtype::Doubles)?,
            };
            leaves.push(Leaf { column, kind, scalar, plan, out });
        }
        Ok(Decoder {
            itemsize: dtype.itemsize(),
            len,
            leaves,
            int64: Int64::Bit64,
            buf: Vec::new(),
            warnings: Vec::new(),
        }
        .with_int64(int64))
    }

    fn with_int64(mut self, int64: Int64) -> Self {
        self.int64 = int64;
        self
    }

    /// How many elements a piece should hold (at least 1).
    pub fn piece_elements(&self) -> usize {
        (PIECE_BYTES / self.itemsize.max(1)).max(1)
    }

    /// The bytes of the one R vector, when the array's elements are that vector's values
    /// as stored (`<f8` doubles, `<i4` integers, `<c16` complex): a read can then fill it
    /// directly, with no piece in between. Call [`Decoder::finish`] after.
    pub fn direct(&mut self) -> Option<&mut [u8]> {
        let [leaf] = &mut self.leaves[..] else { return None };
        let own = [ScalarType::Float(8), ScalarType::Int(4), ScalarType::Complex(16)].contains(&leaf.scalar.ty());
        let same = own && leaf.column.scalar == leaf.scalar && leaf.column.path.is_empty();
        if !same
            || !matches!(leaf.kind, Kind::Double | Kind::Integer | Kind::Complex)
            || !cfg!(target_endian = "little")
        {
            return None;
        }
        let kind = leaf.kind;
        let Out::Numbers(r) = &mut leaf.out else { return None };
        let bytes: &mut [u8] = match kind {
            Kind::Double => bytemuck_f64(r.as_real_slice_mut()?),
            Kind::Integer => bytemuck_i32(r.as_integer_slice_mut()?),
            _ => {
                let c: &mut [Rcplx] = r.as_typed_slice_mut()?;
                // SAFETY: Rcplx is two f64 (R's Rcomplex), 16 bytes with no padding; any
                // bytes are a valid value; the slice borrows `r`, which owns the memory.
                unsafe { std::slice::from_raw_parts_mut(c.as_mut_ptr().cast::<u8>(), c.len() * 16) }
            }
        };
        Some(bytes)
    }

    /// Decodes `piece`: `count` whole elements, the output's elements from `first` on.
    pub fn decode(&mut self, piece: &[u8], count: usize, first: usize) -> std::result::Result<(), Failure> {
        let n = self.len;
        for leaf in &mut self.leaves {
            let per = leaf.column.per_element();
            let size = leaf.scalar.itemsize();
            self.buf.clear();
            self.buf.resize(count * per * size, 0);
            leaf.plan.run(piece, &mut self.buf, first)?;
            if size == 0 {
                // `V0` (and empty text): values of no bytes.
                match &mut leaf.out {
                    Out::Raw(raw) => raw.extend((0..count * per).map(|_| Vec::new())),
                    Out::Text(text) => text.extend((0..count * per).map(|_| Some(String::new()))),
                    Out::Numbers(_) => {}
                }
                continue;
            }
            let values = self.buf.chunks_exact(size).take(count * per);
            let buf = &self.buf[..count * per * size];
            let place = Place { buf, size, count, per, first, n };
            match (&mut leaf.out, leaf.kind) {
                (Out::Numbers(r), Kind::Logical) => {
                    let dst: &mut [Rbool] = r.as_typed_slice_mut().expect("a logical vector");
                    place.run(dst, |v| Rbool::from(v[0] != 0));
                }
                (Out::Numbers(r), Kind::Integer) => {
                    let dst = r.as_integer_slice_mut().expect("an integer vector");
                    match leaf.scalar.ty() {
                        ScalarType::Int(1) => place.run(dst, |v| i32::from(v[0] as i8)),
                        ScalarType::UInt(1) => place.run(dst, |v| i32::from(v[0])),
                        ScalarType::Int(2) => place.run(dst, |v| i32::from(i16::from_le_bytes([v[0], v[1]]))),
                        ScalarType::UInt(2) => place.run(dst, |v| i32::from(u16::from_le_bytes([v[0], v[1]]))),
                        _ => place.run(dst, |v| i32::from_le_bytes(v.try_into().expect("4 bytes"))),
                    }
                }
                (Out::Numbers(r), Kind::Double) => {
                    let dst = r.as_real_slice_mut().expect("a double vector");
                    match leaf.scalar.ty() {
                        ScalarType::UInt(4) => {
                            place.run(dst, |v| f64::from(u32::from_le_bytes(v.try_into().expect("4 bytes"))))
                        }
                        ScalarType::Float(2) => place.run(dst, |v| f16_to_f64(u16::from_le_bytes([v[0], v[1]]))),
                        ScalarType::Float(4) => {
                            place.run(dst, |v| widen(f32::from_le_bytes(v.try_into().expect("4 bytes"))))
                        }
                        _ => place.run(dst, |v| f64::from_le_bytes(v.try_into().expect("8 bytes"))),
                    }
                }
                (Out::Numbers(r), Kind::LongDouble) => {
                    let dst = r.as_real_slice_mut().expect("a double vector");
                    place.run(dst, |v| long_double_to_f64(v.try_into().expect("16 bytes")));
                }
                // 64-bit integers and times keep their bits in the double vector until
                // `finish` has seen every value and chosen their R type.
                (Out::Numbers(r), Kind::Int64 | Kind::UInt64 | Kind::Time { .. }) => {
                    let dst = r.as_real_slice_mut().expect("a double vector");
                    place.run(dst, |v| f64::from_bits(u64::from_le_bytes(v.try_into().expect("8 bytes"))));
                }
                (Out::Numbers(r), Kind::Complex) => {
                    let dst: &mut [Rcplx] = r.as_typed_slice_mut().expect("a complex vector");
                    place.run(dst, |v| {
                        let re = f64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
                        let im = f64::from_le_bytes(v[8..].try_into().expect("8 bytes"));
                        Rcplx::new(re, im)
                    });
                }
                (Out::Numbers(r), Kind::LongComplex) => {
                    let dst: &mut [Rcplx] = r.as_typed_slice_mut().expect("a complex vector");
                    place.run(dst, |v| {
                        let re = long_double_to_f64(v[..16].try_into().expect("16 bytes"));
                        let im = long_double_to_f64(v[16..].try_into().expect("16 bytes"));
                        Rcplx::new(re, im)
                    });
                }
                (Out::Text(text), Kind::Bytes) => {
                    for v in values {
                        text.push(Some(trim_nuls(v).iter().map(|&b| char::from(b)).collect()));
                    }
                }
                (Out::Text(text), Kind::Unicode) => {
                    for v in values {
                        text.push(Some(ucs4_lossy(v, ByteOrder::Little)));
                    }
                }
                // Void bytes are data, NULs included.
                (Out::Raw(raw), _) => raw.extend(values.map(<[u8]>::to_vec)),
                (Out::Numbers(_), _) | (Out::Text(_), _) => unreachable!("each kind has its vector"),
            }
        }
        Ok(())
    }

    /// The R vectors, one per leaf with its path (empty for a plain array's one leaf),
    /// and the warnings to give.
    pub fn finish(self) -> std::result::Result<(Vec<Named>, Vec<String>), Failure> {
        let Decoder { leaves, len, int64, mut warnings, .. } = self;
        let mut out = Vec::with_capacity(leaves.len());
        for mut leaf in leaves {
            let per = leaf.column.per_element();
            // Text and bytes were staged element by element; a subarray field's matrix
            // column wants them column by column.
            if per > 1 {
                match &mut leaf.out {
                    Out::Text(t) => *t = column_major(std::mem::take(t), len, per),
                    Out::Raw(r) => *r = column_major(std::mem::take(r), len, per),
                    Out::Numbers(_) => {}
                }
            }
            let name = if leaf.column.path.is_empty() {
                "the array".to_string()
            } else {
                format!("column '{}'", leaf.column.path)
            };
            let mut robj = match (leaf.out, leaf.kind) {
                (Out::Numbers(r), Kind::Int64) => int64_column(r, false, false, int64, &name, &mut warnings)?,
                (Out::Numbers(r), Kind::UInt64) => int64_column(r, true, false, int64, &name, &mut warnings)?,
                (Out::Numbers(r), Kind::Integer) => integer_column(r, &leaf.column.scalar, &name, &mut warnings)?,
                (Out::Numbers(r), Kind::Time { delta, unit }) => {
                    time_column(r, delta, unit, int64, &name, &mut warnings)?
                }
                (Out::Numbers(r), _) => r,
                // R's strings cannot hold a NUL inside: such a column is a list of raw
                // vectors, the values' bytes (`S`: a byte per char; `U`: UTF-32LE).
                (Out::Text(text), kind) if text.iter().flatten().any(|s| s.contains('\0')) => {
                    let (what, width) = if kind == Kind::Bytes { ("a NUL byte", 1) } else { ("U+0000", 4) };
                    warnings.push(format!(
                        "{name}: a value holds {what} inside, which R's strings cannot; the column is a list of raw vectors"
                    ));
                    let raw = text.iter().map(|s| {
                        let chars = s.as_deref().unwrap_or("").chars();
                        Robj::from(
                            chars.flat_map(|c| u32::from(c).to_le_bytes().into_iter().take(width)).collect::<Vec<u8>>(),
                        )
                    });
                    List::from_values(raw).into()
                }
                (Out::Text(text), Kind::Unicode) => {
                    if text.iter().flatten().any(|s| s.contains('\u{FFFD}')) {
                        warnings.push(format!(
                            "{name}: a value holds a code unit that is not a character (a surrogate or beyond U+10FFFF), read as U+FFFD"
                        ));
                    }
                    Strings::from_values(text.iter().map(|s| s.as_deref().unwrap_or(""))).into()
                }
                (Out::Text(text), _) => Strings::from_values(text.iter().map(|s| s.as_deref().unwrap_or(""))).into(),
                (Out::Raw(raw), _) => List::from_values(raw.into_iter().map(Robj::from)).into(),
            };
            if per != 1 {
                robj.set_attrib("dim", Robj::from(vec![len as f64, per as f64]))?;
            }
            out.push((leaf.column.path, robj));
        }
        Ok((out, warnings))
    }
}

fn bytemuck_f64(v: &mut [f64]) -> &mut [u8] {
    // SAFETY: f64 has no padding and every byte pattern is a valid f64; the byte slice
    // covers exactly the same memory and borrows it mutably for as long as `v`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn bytemuck_i32(v: &mut [i32]) -> &mut [u8] {
    // SAFETY: as for `bytemuck_f64`: i32 has no padding and no invalid byte patterns.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Where a piece's values go: value `j` of element `i` (the plan's output, `size` bytes
/// each, element by element) to R's position `(first + i) + j * n`. A subarray field is
/// a matrix column, one row per element, so the loop runs column by column: its writes
/// are sequential, its reads strided within the piece (in cache).
struct Place<'a> {
    buf: &'a [u8],
    size: usize,
    count: usize,
    per: usize,
    first: usize,
    n: usize,
}

impl Place<'_> {
    fn run<T>(&self, dst: &mut [T], value: impl Fn(&[u8]) -> T) {
        let Place { buf, size, count, per, first, n } = *self;
        if per == 1 {
            for (d, v) in dst[first..first + count].iter_mut().zip(buf.chunks_exact(size)) {
                *d = value(v);
            }
            return;
        }
        for j in 0..per {
            let column = &mut dst[j * n + first..j * n + first + count];
            for (i, d) in column.iter_mut().enumerate() {
                let at = (i * per + j) * size;
                *d = value(&buf[at..at + size]);
            }
        }
    }
}

/// Values staged element by element (`per` each) in R's column-major order.
fn column_major<T: Default>(mut staged: Vec<T>, len: usize, per: usize) -> Vec<T> {
    let mut out: Vec<T> = (0..len * per).map(|_| T::default()).collect();
    for (k, v) in staged.iter_mut().enumerate() {
        out[k / per + (k % per) * len] = std::mem::take(v);
    }
    out
}

/// An `i4` column: integers, but as doubles (with a warning) when a value is R's `NA`
/// (-2^31, which R's integers cannot hold as a number).
fn integer_column(
    r: Robj,
    scalar: &Scalar,
    name: &str,
    warnings: &mut Vec<String>,
) -> std::result::Result<Robj, Failure> {
    let values = r.as_integer_slice().expect("an integer vector");
    if scalar.ty() != ScalarType::Int(4) || !values.contains(&i32::MIN) {
        return Ok(r);
    }
    warnings.push(format!("{name}: holds -2147483648, which is NA in R's integers; read as double"));
    Ok(Doubles::from_values(values.iter().map(|&v| f64::from(v))).into())
}

/// A 64-bit integer column from the bits `decode` kept.
fn int64_column(
    mut r: Robj,
    unsigned: bool,
    times: bool,
    int64: Int64,
    name: &str,
    warnings: &mut Vec<String>,
) -> std::result::Result<Robj, Failure> {
    let bits: Vec<u64> = r.as_real_slice().expect("a double vector").iter().map(|v| v.to_bits()).collect();
    let too_big = unsigned && bits.iter().any(|&b| b > i64::MAX as u64);
    if int64 == Int64::Bit64 && !too_big {
        if !unsigned && !times && bits.contains(&(i64::MIN as u64)) {
            warnings.push(format!("{name}: holds -9223372036854775808, which is NA in bit64's integer64"));
        }
        r.set_class(["integer64"])?;
        return Ok(r);
    }
    let as_f64 = |b: u64| if unsigned { b as f64 } else { b as i64 as f64 };
    let inexact = bits.iter().find(|&&b| {
        let x = as_f64(b);
        if unsigned {
            x as u64 != b || x >= 18446744073709551615.0
        } else {
            x as i64 != b as i64 || x >= 9223372036854775807.0
        }
    });
    if let Some(&b) = inexact {
        let v = if unsigned { b.to_string() } else { (b as i64).to_string() };
        let why = if too_big { "beyond integer64" } else { "bit64 is not installed" };
        warnings.push(format!("{name}: {v} and maybe others lose precision as doubles ({why})"));
    }
    let dst = r.as_real_slice_mut().expect("a double vector");
    for (d, b) in dst.iter_mut().zip(bits) {
        *d = as_f64(b);
    }
    Ok(r)
}

/// Seconds (or days, for `Date`) per unit, where R's class holds the unit's values; `None`
/// for units R's classes do not hold exactly (ns and finer, months, years, generic).
fn time_scale(delta: bool, unit: DateUnit) -> Option<(f64, &'static str)> {
    let m = f64::from(unit.multiple);
    let (scale, class) = match (delta, unit.unit) {
        (false, TimeUnit::Days) => (1.0, "Date"),
        (false, TimeUnit::Weeks) => (7.0, "Date"),
        (true, TimeUnit::Weeks) => (7.0 * 86400.0, "secs"),
        (true, TimeUnit::Days) => (86400.0, "secs"),
        (_, TimeUnit::Hours) => (3600.0, "secs"),
        (_, TimeUnit::Minutes) => (60.0, "secs"),
        (_, TimeUnit::Seconds) => (1.0, "secs"),
        (_, TimeUnit::Milliseconds) => (1e-3, "secs"),
        (_, TimeUnit::Microseconds) => (1e-6, "secs"),
        _ => return None,
    };
    Some((scale * m, class))
}

/// A datetime or timedelta column: `Date` (days and weeks), `POSIXct` in UTC (hours to
/// microseconds) or `difftime` in seconds when every value converts and converts back
/// exactly; else the counts as integer64 with the unit in attribute `npy_unit`. `NaT` is
/// `NA`.
fn time_column(
    mut r: Robj,
    delta: bool,
    unit: DateUnit,
    int64: Int64,
    name: &str,
    warnings: &mut Vec<String>,
) -> std::result::Result<Robj, Failure> {
    let counts: Vec<i64> = r.as_real_slice().expect("a double vector").iter().map(|v| v.to_bits() as i64).collect();
    let exact = time_scale(delta, unit).filter(|&(scale, _)| {
        counts.iter().all(|&c| {
            c == i64::MIN || {
                let x = c as f64 * scale;
                x.is_finite() && (x / scale).round() as i64 == c && (c as f64) as i64 == c
            }
        })
    });
    let code =
        format!("{}{}", if unit.multiple == 1 { String::new() } else { unit.multiple.to_string() }, unit.unit.code());
    match exact {
        Some((scale, class)) => {
            let dst = r.as_real_slice_mut().expect("a double vector");
            for (d, c) in dst.iter_mut().zip(&counts) {
                *d = if *c == i64::MIN { f64::from_bits(0x7FF0_0000_0000_07A2) } else { *c as f64 * scale };
            }
            match (delta, class) {
                (false, "Date") => {
                    r.set_class(["Date"])?;
                }
                (false, _) => {
                    r.set_class(["POSIXct", "POSIXt"])?;
                    r.set_attrib("tzone", "UTC")?;
                }
                (true, _) => {
                    r.set_class(["difftime"])?;
                    r.set_attrib("units", "secs")?;
                }
            }
            Ok(r)
        }
        None => {
            let what = if delta { "timedelta64" } else { "datetime64" };
            let unit_text = if code.is_empty() { "generic".to_string() } else { code };
            let mut r = int64_column(r, false, true, int64, name, warnings)?;
            r.set_attrib("npy_unit", format!("{what}[{unit_text}]"))?;
            Ok(r)
        }
    }
}

/// An R vector of `len` values of `rtype`, not initialized; R's failure to allocate it (out
/// of memory) is a [`Failure`], not an R error unwinding through Rust's frames.
pub fn alloc_vector(rtype: Rtype, len: usize, what: &str) -> std::result::Result<Robj, Failure> {
    use extendr_ffi::{R_NilValue, R_xlen_t, Rf_allocVector, SEXP, SEXPTYPE};
    use std::ffi::c_void;

    // SEXP is a pointer to R's opaque SEXPREC, which Rust never reads (extendr-ffi's own
    // declarations allow the same).
    #[allow(improper_ctypes)]
    extern "C" {
        // R's C API (Rinternals.h): runs `body`, and `handler` instead where `body` raises
        // an R error; the longjmp of the error stays inside R.
        fn R_tryCatchError(
            body: unsafe extern "C" fn(*mut c_void) -> SEXP,
            bdata: *mut c_void,
            handler: unsafe extern "C" fn(SEXP, *mut c_void) -> SEXP,
            hdata: *mut c_void,
        ) -> SEXP;
    }

    struct Job {
        sxp: SEXPTYPE,
        len: R_xlen_t,
    }

    /// # Safety
    /// `data` points to a live `Job`. This frame holds nothing to drop, so R's longjmp
    /// out of it on an error skips nothing.
    unsafe extern "C" fn body(data: *mut c_void) -> SEXP {
        // SAFETY: `alloc_vector` passes a pointer to its `Job`, alive for the call.
        let job = unsafe { &*(data as *const Job) };
        // SAFETY: R's allocator, called on R's thread (inside `single_threaded`).
        unsafe { Rf_allocVector(job.sxp, job.len) }
    }

    /// # Safety
    /// Called by R with the condition; returns R's NULL, which `alloc_vector` tells apart.
    unsafe extern "C" fn failed(_condition: SEXP, _data: *mut c_void) -> SEXP {
        // SAFETY: R_NilValue is R's constant NULL, set before any package code runs.
        unsafe { R_NilValue }
    }

    let job = Job { sxp: extendr_api::rtype_to_sxp(rtype), len: len as R_xlen_t };
    single_threaded(|| {
        // SAFETY: `body` and `failed` follow R_tryCatchError's contract; `job` outlives
        // the call; the result is a fresh R vector, or R's NULL when allocation failed.
        let sexp = unsafe { R_tryCatchError(body, &job as *const Job as *mut c_void, failed, std::ptr::null_mut()) };
        // SAFETY: as above: R_NilValue is a constant.
        if sexp == unsafe { R_NilValue } {
            return Err(usage(format!("{what}: R cannot allocate a vector of {len} values (out of memory)")));
        }
        // SAFETY: `sexp` is a live, unprotected R vector: Robj protects it from here.
        Ok(unsafe { Robj::from_sexp(sexp) })
    })
}
