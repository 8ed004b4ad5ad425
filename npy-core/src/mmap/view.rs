//! Bytes viewed in place as `&[T]` / `&mut [T]`, checked: the layout (an in-place plan
//! without swaps, alignment, no skipped fields), then the values (`bool`s, `check`). Maps
//! ([`NpyMap::view`](super::NpyMap::view)) and bytes held elsewhere ([`view_bytes`]) go
//! through here; nothing else casts bytes to records.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{Header, Version};
use crate::plan::{Op, Plan};
use crate::read::check_elements;
use crate::record::{native_dtype_of, NpyRecord};

use super::Located;

/// Elements of `dtype` held elsewhere (a NumPy array's buffer handed over by Python)
/// viewed in place as `&[T]`, checked as [`NpyMap::view`](super::NpyMap::view) checks a file: `dtype` must lay
/// out its elements as `T`'s memory, in the machine's byte order, `bytes` must start at an
/// address aligned for `T`, and every element must be a valid `T` (`bool` bytes 0 or 1,
/// [`NpyRecord::check`]).
///
/// # Errors
/// [`ErrorKind::NotViewable`] saying why the bytes cannot be viewed as `T` (convert them
/// instead, e.g. with [`NpyReader::over_data`](crate::NpyReader::over_data));
/// [`ErrorKind::DtypeMismatch`] when `dtype` cannot be read as `T` at all;
/// [`ErrorKind::InvalidValue`] naming the first invalid element; [`ErrorKind::Usage`]
/// when `bytes` is not whole elements of `dtype`.
///
/// # Examples
/// ```
/// use npy_core::{mmap::view_bytes, ErrorKind, NpyRecord};
///
/// #[repr(C, align(4))]
/// struct Buffer([u8; 12]);
///
/// let words = [1u32, 2, 3];
/// let mut buffer = Buffer([0; 12]);
/// for (bytes, w) in buffer.0.chunks_exact_mut(4).zip(words) {
///     bytes.copy_from_slice(&w.to_ne_bytes());
/// }
/// let dtype = u32::native_dtype();
/// assert_eq!(view_bytes::<u32>(&dtype, &buffer.0)?, words);
/// let e = view_bytes::<f32>(&dtype, &buffer.0).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. } | ErrorKind::NotViewable { .. }), "{e}");
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn view_bytes<'a, T: NpyRecord>(dtype: &DType, bytes: &'a [u8]) -> Result<&'a [T]> {
    let size = dtype.itemsize();
    if size == 0 || !bytes.len().is_multiple_of(size) {
        return Err(Error::usage(format!("{} bytes are not whole elements of {dtype}", bytes.len())));
    }
    let len = bytes.len() / size;
    let layout = Located {
        header: Header::new(dtype.clone(), vec![len]),
        version: Version::V1_0,
        data_offset: 0,
        data_len: bytes.len(),
        len,
    };
    let layout = layout.grouped::<T>();
    let bools = view_plan::<T>(&layout, bytes.as_ptr(), Access::Read)?;
    validate::<T>(bytes, &bools, 0)?;
    // SAFETY:
    // - `bytes` passed `view_plan` at its own address and `validate` for `T`; the result
    //   borrows it, so nothing changes it while the view lives.
    Ok(unsafe { cast::<T>(bytes) })
}

/// What a view will be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    Write,
}

/// Checks that data of `layout`'s dtype at address `data` can be viewed in place as `T`
/// (for `access`), and returns the offsets of the `b1` bytes of an element, which
/// [`validate`] must check.
pub(super) fn view_plan<T: NpyRecord>(layout: &Located, data: *const u8, access: Access) -> Result<Vec<usize>> {
    let ty = std::any::type_name::<T>();
    let native = native_dtype_of::<T>()?;
    if native.itemsize() == 0 {
        return Err(Error::usage(format!("cannot view elements of the zero-sized type {ty}")));
    }
    let file = &layout.header.dtype;
    let plan = Plan::new(file, &native)?;
    let not_viewable = |reason: String| Err(ErrorKind::NotViewable { reason }.into());
    if T::HAS_SKIPPED {
        return not_viewable(format!("{ty} has #[npy(skip)] fields, which the file does not hold: use decode()"));
    }
    if !plan.in_place() {
        return not_viewable(format!(
            "the file's dtype {file} is laid out differently from {ty}'s memory {native}: use decode()"
        ));
    }
    if plan.ops().iter().any(|op| matches!(op, Op::Swap { .. })) {
        return not_viewable(format!(
            "the file's byte order differs from {ty}'s in memory (file {file}, memory {native}): use decode()"
        ));
    }
    if access == Access::Write && !plan.covers_all_src() {
        return not_viewable(format!(
            "{ty} has padding, or lacks fields of the file's dtype {file}: writing whole {ty} values would leave \
             those bytes undefined: use write()"
        ));
    }
    let align = std::mem::align_of::<T>();
    if !(data as usize).is_multiple_of(align) {
        return not_viewable(format!(
            "data at offset {} is not aligned to {align} bytes for {ty}: use decode()",
            layout.data_offset
        ));
    }
    Ok(plan.ops().iter().filter_map(|op| if let Op::Bool { dst, .. } = *op { Some(dst) } else { None }).collect())
}

/// Checks that `bytes`, whole elements of `T`'s layout (the first being element `first`),
/// hold valid `T`s: each `b1` byte at `bools` is 0 or 1, and [`NpyRecord::check`] passes.
pub(super) fn validate<T: NpyRecord>(bytes: &[u8], bools: &[usize], first: usize) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let bad = match bools {
        [] => None,
        [0] if size == 1 => bytes.iter().position(|&b| b > 1).map(|i| (i, bytes[i])),
        _ => bytes
            .chunks_exact(size)
            .enumerate()
            .find_map(|(i, el)| bools.iter().map(|&at| el[at]).find(|&b| b > 1).map(|b| (i, b))),
    };
    if let Some((i, b)) = bad {
        let reason = format!("bool byte {b:#04x} is neither 0 nor 1");
        return Err(ErrorKind::InvalidValue { index: first + i, reason }.into());
    }
    check_elements::<T>(bytes, first)
}

/// `bytes` as a slice of `T`.
///
/// # Safety
/// `bytes` must be whole elements that passed [`view_plan`] at their address (for either
/// access) and [`validate`] for `T`, and must not change while the result lives.
pub(super) unsafe fn cast<T: NpyRecord>(bytes: &[u8]) -> &[T] {
    // SAFETY:
    // - the address is aligned for `T`: the data start is (`view_plan`), elements are
    //   `size_of::<T>()` bytes (`native_dtype`), a multiple of the alignment, and `bytes`
    //   starts at an element;
    // - `bytes` is whole elements of `size_of::<T>() > 0` bytes (`view_plan` refuses
    //   zero-sized types), so the slice covers exactly `bytes`, all initialized;
    // - they are valid `T`s: the file's dtype has every field of `T::native_dtype()` at
    //   the same offset, with the same type, in native byte order (`view_plan`: an
    //   in-place plan without swaps); `b1` bytes are 0 or 1 and `T::check` passed
    //   (`validate`); `T` has no skipped fields; by `NpyRecord`'s contract such bytes are
    //   a valid `T` whatever its padding holds;
    // - the result borrows `bytes`, so it lives no longer than the map's borrow.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / std::mem::size_of::<T>()) }
}

/// `bytes` as a mutable slice of `T`.
///
/// # Safety
/// `bytes` must be data of a map that passed [`view_plan`] with [`Access::Write`] and
/// [`validate`] for `T`.
pub(super) unsafe fn cast_mut<T: NpyRecord>(bytes: &mut [u8]) -> &mut [T] {
    // SAFETY:
    // - alignment, size and validity of the elements as in `cast`;
    // - any `T` written through the slice keeps the bytes valid for the file and
    //   initialized: `T` has no padding and the file no byte outside `T`'s fields
    //   (`view_plan` with `Access::Write`: the plan covers every source byte), and a valid
    //   `T`'s `bool` and checked fields are valid values of the file's fields;
    // - the result borrows `bytes` exclusively, so no other access overlaps it.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / std::mem::size_of::<T>()) }
}
