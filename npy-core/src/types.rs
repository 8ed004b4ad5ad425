//! Small Rust types for NumPy's fixed-size strings, raw bytes and datetimes, usable as
//! array elements and record fields.
//!
//! | NumPy | Rust |
//! |---|---|
//! | `S n` (`np.bytes_`) | [`Bytes<N>`] |
//! | `U n` (`np.str_`) | [`Ucs4<N>`] |
//! | `V n` (`np.void`) | [`Void<N>`] |
//! | `M8[unit]` (`np.datetime64`) | [`DateTime64<U>`] with a unit from [`unit`](mod@unit) |
//! | `m8[unit]` (`np.timedelta64`) | [`TimeDelta64<U>`] |

use std::fmt;
use std::marker::PhantomData;

use crate::dtype::{DType, DateUnit, ScalarType};
use crate::error::{Error, Result};
use crate::record::NpyRecord;

/// A fixed-size byte string, NumPy's `S n`: `N` bytes, NUL-padded.
///
/// # Examples
/// ```
/// use npy_core::types::Bytes;
///
/// let code = Bytes::<4>::new(b"ab")?;
/// assert_eq!(code.as_bytes(), b"ab");       // trailing NULs dropped, as NumPy does
/// assert_eq!(code.raw(), b"ab\0\0");
/// assert!(Bytes::<1>::new(b"too long").is_err());
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Bytes<const N: usize>(pub [u8; N]);

impl<const N: usize> Bytes<N> {
    /// The bytes, NUL-padded to `N`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Usage`] when `bytes` is longer than `N`.
    pub fn new(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > N {
            return Err(Error::usage(format!("{} bytes do not fit in S{N}", bytes.len())));
        }
        let mut out = [0u8; N];
        out[..bytes.len()].copy_from_slice(bytes);
        Ok(Bytes(out))
    }

    /// The value as NumPy shows it: trailing NUL bytes removed.
    pub fn as_bytes(&self) -> &[u8] {
        crate::scalar::trim_nuls(&self.0)
    }

    /// All `N` bytes.
    pub fn raw(&self) -> &[u8; N] {
        &self.0
    }
}

impl<const N: usize> Default for Bytes<N> {
    fn default() -> Self {
        Bytes([0; N])
    }
}

impl<const N: usize> fmt::Debug for Bytes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut repr = String::new();
        crate::repr::write_bytes(self.as_bytes(), &mut repr);
        f.write_str(&repr)
    }
}

// SAFETY: `Bytes<N>` is `#[repr(transparent)]` over `[u8; N]`: N bytes, alignment 1, every
// bit pattern valid; `|S{N}` describes exactly that.
unsafe impl<const N: usize> NpyRecord for Bytes<N> {
    const ITEMSIZE: usize = N;

    const BULK: bool = true;

    fn dtype() -> DType {
        DType::native(ScalarType::Bytes(N))
    }
}

/// A fixed-size Unicode string, NumPy's `U n`: `N` UCS-4 code points, NUL-padded.
///
/// Reading checks that every code point is a valid `char` (NumPy can hold surrogates;
/// those are an error, never a silently wrong string).
///
/// # Examples
/// ```
/// use npy_core::types::Ucs4;
///
/// let s = Ucs4::<5>::new("地震")?;
/// assert_eq!(s.to_string(), "地震");
/// assert!(Ucs4::<1>::new("ab").is_err());
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Ucs4<const N: usize>([u32; N]);

impl<const N: usize> Ucs4<N> {
    /// The string, NUL-padded to `N` code points.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Usage`] when `s` has more than `N` chars.
    pub fn new(s: &str) -> Result<Self> {
        let mut out = [0u32; N];
        for (n, c) in s.chars().enumerate() {
            let slot = out.get_mut(n).ok_or_else(|| Error::usage(format!("{:?} does not fit in U{N}", s)))?;
            *slot = c as u32;
        }
        Ok(Ucs4(out))
    }

    /// The chars as NumPy shows them: trailing NULs removed.
    pub fn chars(&self) -> impl Iterator<Item = char> + '_ {
        let end = self.0.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        // Values are checked on construction and on read; none is invalid here.
        self.0[..end].iter().map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    /// All `N` code points.
    pub fn code_points(&self) -> &[u32; N] {
        &self.0
    }
}

impl<const N: usize> Default for Ucs4<N> {
    fn default() -> Self {
        Ucs4([0; N])
    }
}

impl<const N: usize> fmt::Display for Ucs4<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.chars().try_for_each(|c| fmt::Write::write_char(f, c))
    }
}

impl<const N: usize> fmt::Debug for Ucs4<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

// SAFETY: `Ucs4<N>` is `#[repr(transparent)]` over `[u32; N]`: `N` native-order UCS-4 code
// units (`U{N}`, 4 N bytes, alignment 4); any bit pattern is a valid `u32`, and `check`
// additionally refuses code points that are not chars, so the type's invariant holds.
unsafe impl<const N: usize> NpyRecord for Ucs4<N> {
    const ITEMSIZE: usize = 4 * N;

    const BULK: bool = true;

    fn dtype() -> DType {
        DType::native(ScalarType::Unicode(N))
    }

    const NEEDS_CHECK: bool = true;

    fn check(element: &[u8]) -> std::result::Result<(), String> {
        crate::scalar::check_ucs4(element, crate::dtype::ByteOrder::NATIVE).map_err(|e| e.to_string())
    }
}

/// Raw bytes, NumPy's `V n` (a named void field, not padding).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(transparent)]
pub struct Void<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Void<N> {
    fn default() -> Self {
        Void([0; N])
    }
}

// SAFETY: `Void<N>` is `#[repr(transparent)]` over `[u8; N]`, described by `|V{N}`.
unsafe impl<const N: usize> NpyRecord for Void<N> {
    const ITEMSIZE: usize = N;

    const BULK: bool = true;

    fn dtype() -> DType {
        DType::native(ScalarType::Void(N))
    }
}

/// Units of [`DateTime64`] and [`TimeDelta64`].
pub mod unit {
    use crate::dtype::{DateUnit, TimeUnit};

    /// A datetime unit as a type.
    pub trait Unit: Copy + Eq + Default + std::fmt::Debug + Send + Sync + 'static {
        /// The unit.
        const UNIT: DateUnit;
    }

    macro_rules! units {
        ($($(#[$doc:meta])* $name:ident => $unit:expr),* $(,)?) => {$(
            $(#[$doc])*
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Debug)]
            pub struct $name;
            impl Unit for $name {
                const UNIT: DateUnit = DateUnit::new($unit);
            }
        )*};
    }

    units! {
        /// NumPy's generic unit (`M8`), which holds only NaT in practice.
        Generic => TimeUnit::Generic,
        /// `Y`
        Years => TimeUnit::Years,
        /// `M`
        Months => TimeUnit::Months,
        /// `W`
        Weeks => TimeUnit::Weeks,
        /// `D`
        Days => TimeUnit::Days,
        /// `h`
        Hours => TimeUnit::Hours,
        /// `m`
        Minutes => TimeUnit::Minutes,
        /// `s`
        Seconds => TimeUnit::Seconds,
        /// `ms`
        Millis => TimeUnit::Milliseconds,
        /// `us`
        Micros => TimeUnit::Microseconds,
        /// `ns`
        Nanos => TimeUnit::Nanoseconds,
        /// `ps`
        Picos => TimeUnit::Picoseconds,
        /// `fs`
        Femtos => TimeUnit::Femtoseconds,
        /// `as`
        Attos => TimeUnit::Attoseconds,
    }
}

/// NumPy's "not a time" value.
pub const NAT: i64 = i64::MIN;

macro_rules! time_type {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[repr(transparent)]
        pub struct $name<U: unit::Unit> {
            value: i64,
            unit: PhantomData<U>,
        }

        impl<U: unit::Unit> $name<U> {
            /// NaT: NumPy's "not a time".
            pub const NAT: Self = Self::new(NAT);

            /// A value counting `U`s.
            pub const fn new(value: i64) -> Self {
                Self { value, unit: PhantomData }
            }

            /// The count of `U`s (`i64::MIN` for NaT).
            pub const fn value(self) -> i64 {
                self.value
            }

            /// True for NaT.
            pub const fn is_nat(self) -> bool {
                self.value == NAT
            }

            /// The unit.
            pub fn unit() -> DateUnit {
                U::UNIT
            }
        }

        impl<U: unit::Unit> fmt::Debug for $name<U> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if self.is_nat() {
                    write!(f, "{}(NaT)", stringify!($name))
                } else {
                    write!(f, "{}({}{})", stringify!($name), self.value, U::UNIT.unit.code())
                }
            }
        }

        // SAFETY: `#[repr(transparent)]` over an `i64` (the `PhantomData` has no bytes);
        // every bit pattern is a valid count; the dtype is an 8-byte native datetime.
        unsafe impl<U: unit::Unit> NpyRecord for $name<U> {
            const ITEMSIZE: usize = 8;

            const BULK: bool = true;

            fn dtype() -> DType {
                DType::native(ScalarType::$kind(U::UNIT))
            }
        }
    };
}

time_type! {
    /// NumPy's `datetime64[unit]`: a count of units since 1970-01-01T00:00.
    ///
    /// # Examples
    /// ```
    /// use npy_core::types::{unit::Seconds, DateTime64};
    /// use npy_core::NpyRecord;
    ///
    /// let t = DateTime64::<Seconds>::new(1_700_000_000);
    /// assert_eq!(DateTime64::<Seconds>::dtype().descr(), "'<M8[s]'");
    /// assert!(!t.is_nat() && DateTime64::<Seconds>::NAT.is_nat());
    /// ```
    DateTime64, DateTime
}

time_type! {
    /// NumPy's `timedelta64[unit]`: a signed count of units.
    TimeDelta64, TimeDelta
}

#[cfg(test)]
mod tests {
    use super::unit::*;
    use super::*;
    use crate::prelude::*;

    #[test]
    fn dtypes_are_numpys() {
        assert_eq!(Bytes::<5>::dtype().descr(), "'|S5'");
        assert_eq!(Ucs4::<3>::dtype().descr(), "'<U3'");
        assert_eq!(Void::<3>::dtype().descr(), "'|V3'");
        assert_eq!(DateTime64::<Nanos>::dtype().descr(), "'<M8[ns]'");
        assert_eq!(TimeDelta64::<Generic>::dtype().descr(), "'<m8'");
        assert_eq!(<[[f32; 3]; 2]>::dtype().descr(), "('<f4', (2, 3))");
    }

    #[test]
    fn strings_round_trip_through_files() {
        let v = vec![Ucs4::<4>::new("ab").unwrap(), Ucs4::new("地震").unwrap()];
        let bytes = v.write_npy_to(Vec::new()).unwrap();
        assert_eq!(Vec::<Ucs4<4>>::read_npy_from(&bytes[..]).unwrap(), v);
        let wider = Vec::<Ucs4<6>>::read_npy_from(&bytes[..]).unwrap();
        assert_eq!(wider[1].to_string(), "地震");
        assert!(Vec::<Ucs4<2>>::read_npy_from(&bytes[..]).is_err());
        let b = [Bytes::<3>::new(b"x").unwrap()];
        let bytes = b.write_npy_to(Vec::new()).unwrap();
        assert_eq!(Vec::<Bytes<3>>::read_npy_from(&bytes[..]).unwrap()[0].as_bytes(), b"x");
    }

    #[test]
    fn invalid_code_points_are_errors() {
        let h = crate::header::Header::new("<U1".parse().unwrap(), vec![1]);
        let arr = DynArray::new(h, 0xd800u32.to_le_bytes().to_vec()).unwrap();
        let e = arr.to_vec::<Ucs4<1>>().unwrap_err();
        assert!(matches!(e.kind(), crate::error::ErrorKind::InvalidValue { index: 0, .. }), "{e}");
    }

    #[test]
    fn datetime_units_must_match() {
        let v = vec![DateTime64::<Seconds>::new(5), DateTime64::NAT];
        let bytes = v.write_npy_to(Vec::new()).unwrap();
        assert_eq!(Vec::<DateTime64<Seconds>>::read_npy_from(&bytes[..]).unwrap(), v);
        assert!(Vec::<DateTime64<Millis>>::read_npy_from(&bytes[..]).is_err());
        assert!(Vec::<TimeDelta64<Seconds>>::read_npy_from(&bytes[..]).is_err());
    }
}
