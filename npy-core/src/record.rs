//! Rust element types: [`NpyRecord`], implemented for primitives, arrays and (by
//! `#[derive(NpyRecord)]`) structs and enums, and the one check that a type's declared
//! layout is its memory (`native_dtype_of`, crate-internal). How a file's dtype is converted into a
//! type's layout is [`crate::plan::Plan`].

use crate::dtype::{DType, ScalarType};
use crate::error::{Error, Result};

/// A Rust type that is one element of a NumPy array: a primitive, or a struct with
/// `#[derive(NpyRecord)]` (from the `npy-derive` crate).
///
/// Implemented here for `bool`, `i8`–`i64`, `u8`–`u64`, `isize`/`usize`, `f32`, `f64`,
/// `char` (as `<U1`), and with features `half` / `num-complex` for `half::f16` and
/// `num_complex::Complex<f32 | f64>`.
///
/// # Safety
/// Readers build values of `Self` from bytes, so an implementation promises that:
/// - [`NpyRecord::native_dtype`] describes `Self`'s memory exactly: its itemsize is
///   `size_of::<Self>()`, and every field's offset and type is where and what `Self` holds,
///   in native byte order (bytes covered by no field are padding, or skipped fields);
/// - any bytes in which every `b1` field holds 0 or 1 and which [`NpyRecord::check`]
///   accepts, whatever the padding bytes hold, are a valid `Self` once
///   [`NpyRecord::fill_skipped`] has run;
/// - [`NpyRecord::ITEMSIZE`] is `dtype().itemsize()`;
/// - the stored fields (those of the native dtype) have no interior mutability, so their
///   bytes do not change while a `&[Self]` is borrowed: writers read them from another
///   thread. Skipped fields may hold anything (an atomic counter): their bytes are never
///   read.
///
/// Implement it with `#[derive(NpyRecord)]`, never by hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element or field of a NumPy array",
    label = "`{Self}` does not implement `NpyRecord`",
    note = "primitives, `[T; N]` and the types of `npy_core::types` implement it; for a struct or a fieldless `#[repr(u8)]`-style enum add `#[derive(NpyRecord)]`"
)]
pub unsafe trait NpyRecord: Sized + 'static {
    /// Bytes of one element as written (`Self::dtype().itemsize()`), usable in constants.
    const ITEMSIZE: usize;

    /// The dtype written for this type (NumPy's view of it).
    fn dtype() -> DType;

    /// This type's memory layout as a dtype in native byte order (see the trait's safety
    /// section). Defaults to [`NpyRecord::dtype`].
    fn native_dtype() -> DType {
        Self::dtype()
    }

    /// Whether [`NpyRecord::check`] must be called (false skips the per-element call).
    const NEEDS_CHECK: bool = false;

    /// Validates one element's bytes in native layout beyond what the dtype says
    /// (e.g. that a `u32` is a valid `char`, or an enum's discriminant). Returns a reason
    /// on failure.
    ///
    /// # Errors
    /// A lower-case reason naming the invalid value.
    fn check(_element: &[u8]) -> std::result::Result<(), String> {
        Ok(())
    }

    /// Whether an element's memory is exactly its written bytes: [`NpyRecord::native_dtype`]
    /// is [`NpyRecord::dtype`] and its fields cover every byte (no padding, no skipped
    /// field, no byte order but the machine's). Slices of such a type are read from and
    /// written to files of that dtype as one bulk copy.
    ///
    /// True for primitives, arrays of such types, and derived structs whose fields are all
    /// such and sit where they are written (`#[repr(C, packed)]` structs, `#[npy(align)]`
    /// structs without padding). `#[npy(packed)]` asserts it at compile time. Nothing relies
    /// on it for safety: reads and writes compare the layouts themselves. Default: `false`.
    const BULK: bool = false;

    /// Whether the type has fields that are not stored (`#[npy(skip)]`), which
    /// [`NpyRecord::fill_skipped`] must initialize after a read.
    const HAS_SKIPPED: bool = false;

    /// Writes `Default::default()` into every skipped field of an element whose stored
    /// fields have been filled from a file (padding and skipped bytes zeroed).
    ///
    /// # Safety
    /// `element` must be valid for writes and aligned, its stored fields initialized; the
    /// skipped fields hold no value yet (they are overwritten without being dropped).
    unsafe fn fill_skipped(_element: *mut Self) {}
}

/// `T::native_dtype()`, checked to describe exactly `T`'s bytes: every read, write, map
/// and archive column that treats a `T`'s memory as that dtype asks this first.
///
/// # Errors
/// [`ErrorKind::Usage`](crate::ErrorKind::Usage) when the dtype's itemsize is not `size_of::<T>()` (a hand-written
/// `NpyRecord` that breaks the trait's contract).
pub(crate) fn native_dtype_of<T: NpyRecord>() -> Result<DType> {
    let native = T::native_dtype();
    if native.itemsize() != std::mem::size_of::<T>() {
        return Err(Error::usage(format!(
            "NpyRecord for {} describes {} bytes but the type has {}",
            std::any::type_name::<T>(),
            native.itemsize(),
            std::mem::size_of::<T>()
        )));
    }
    Ok(native)
}

macro_rules! primitive {
    ($($t:ty => $ty:expr),* $(,)?) => {$(
        // SAFETY: a primitive's memory is one scalar of its own size in native order, and
        // every bit pattern is valid (bool is validated as `b1` by the plans).
        unsafe impl NpyRecord for $t {
            const ITEMSIZE: usize = std::mem::size_of::<$t>();

            const BULK: bool = true;

            fn dtype() -> DType {
                DType::native($ty)
            }
        }
    )*};
}

primitive! {
    bool => ScalarType::Bool,
    i8 => ScalarType::Int(1),
    i16 => ScalarType::Int(2),
    i32 => ScalarType::Int(4),
    i64 => ScalarType::Int(8),
    u8 => ScalarType::UInt(1),
    u16 => ScalarType::UInt(2),
    u32 => ScalarType::UInt(4),
    u64 => ScalarType::UInt(8),
    isize => ScalarType::Int(std::mem::size_of::<isize>() as u8),
    usize => ScalarType::UInt(std::mem::size_of::<usize>() as u8),
    f32 => ScalarType::Float(4),
    f64 => ScalarType::Float(8),
}

#[cfg(feature = "half")]
primitive! { half::f16 => ScalarType::Float(2) }

#[cfg(feature = "num-complex")]
primitive! {
    num_complex::Complex<f32> => ScalarType::Complex(8),
    num_complex::Complex<f64> => ScalarType::Complex(16),
}

// SAFETY: `char` is 4 bytes holding a Unicode scalar value, i.e. one native-order UCS-4
// code unit (`U1`); `check` refuses surrogates and values past U+10FFFF.
unsafe impl NpyRecord for char {
    const ITEMSIZE: usize = 4;

    fn dtype() -> DType {
        DType::native(ScalarType::Unicode(1))
    }

    fn check(element: &[u8]) -> std::result::Result<(), String> {
        let v = element.try_into().map(u32::from_ne_bytes).map_err(|_| "a char is 4 bytes".to_string())?;
        char::from_u32(v).map(|_| ()).ok_or_else(|| format!("code point {v:#x} is not a valid char"))
    }

    const NEEDS_CHECK: bool = true;

    const BULK: bool = true;
}

// SAFETY: `[T; N]` is `N` values of `T` back to back, `size_of::<T>()` apart: exactly the
// subarray of `N` native `T`s its native dtype describes; checks and skipped fields are
// delegated to `T` element by element.
unsafe impl<T: NpyRecord, const N: usize> NpyRecord for [T; N] {
    const ITEMSIZE: usize = N * T::ITEMSIZE;

    /// A subarray field `(fmt, (N, ...))`: nested arrays give one multi-dimensional shape,
    /// as NumPy writes `('samples', '<f4', (4, 64))` for `[[f32; 64]; 4]`.
    fn dtype() -> DType {
        array_of(T::dtype(), N)
    }

    fn native_dtype() -> DType {
        array_of(T::native_dtype(), N)
    }

    const NEEDS_CHECK: bool = T::NEEDS_CHECK;

    const BULK: bool = T::BULK;

    fn check(element: &[u8]) -> std::result::Result<(), String> {
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return Ok(());
        }
        for (i, el) in element.chunks_exact(size).enumerate() {
            T::check(el).map_err(|e| format!("[{i}]: {e}"))?;
        }
        Ok(())
    }

    const HAS_SKIPPED: bool = T::HAS_SKIPPED;

    unsafe fn fill_skipped(element: *mut Self) {
        for i in 0..N {
            // SAFETY: `i < N`, so item `i` of the caller's `[T; N]` is in bounds of that one
            // allocation.
            let item = unsafe { element.cast::<T>().add(i) };
            // SAFETY: the caller's element is a valid, aligned `[T; N]` whose stored fields
            // are initialized, so each of its `N` items is such a `T`, aligned (arrays place
            // items `size_of::<T>()` apart).
            unsafe { T::fill_skipped(item) };
        }
    }
}

/// `(base, (n, ...))`: prepends a dimension, flattening a subarray base into one shape.
fn array_of(base: DType, n: usize) -> DType {
    let (base, shape) = match base {
        DType::SubArray(a) => {
            let mut shape = vec![n];
            shape.extend_from_slice(a.shape());
            (a.base().clone(), shape)
        }
        other => (other, vec![n]),
    };
    let total = shape.iter().try_fold(base.itemsize(), |acc, &d| acc.checked_mul(d));
    match total {
        Some(t) if t <= crate::dtype::MAX_ITEMSIZE => DType::SubArray(crate::dtype::SubArray::new(base, shape)),
        _ => panic!("array type too large for a NumPy dtype (over {} bytes)", crate::dtype::MAX_ITEMSIZE),
    }
}
