//! NumPy record arrays as `&[T]`: borrowed in place when their dtype is `T`'s memory,
//! converted by field name otherwise.

use std::ops::Deref;

use npy_core::header::Header;
use npy_core::{mmap, NpyReader, NpyRecord};
use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::bytes::ArrayBytes;
use crate::dtype::from_numpy;
use crate::error::py_err;

/// A 1-d NumPy array of records as a `&[T]` (through `Deref`), for functions of a PyO3
/// extension; `T` derives `NpyRecord` with `#[npy(pyo3)]`.
///
/// - When the array's dtype is `T`'s memory layout — the same field names, types, offsets,
///   itemsize and byte order, as `Vec<T>` → NumPy (`PyArray1::from_vec`) makes it — and
///   its data is C-contiguous and aligned for `T`, the slice is the array's own memory,
///   borrowed (rust-numpy's read-only borrow, so Rust code cannot change it meanwhile),
///   after a check that every element is a valid `T` (`bool`s 0 or 1).
/// - Otherwise the records are converted as `Vec::<T>::read_npy` reads a file: fields
///   matched by name, byte orders swapped, types widened safely; extra fields are ignored.
///   A field `T` has and the array lacks, or cannot widen, is a `TypeError` naming it.
///
/// # Examples
/// ```no_run
/// use npy_core::NpyRecord;
/// use npy_pyo3::Records;
/// use pyo3::prelude::*;
///
/// #[derive(NpyRecord, Clone, Copy)]
/// #[npy(pyo3)]
/// #[repr(C)]
/// struct Trace {
///     trace_id: i32,
///     t0: f64,
///     samples: [f32; 4],
/// }
///
/// /// The mean start time of NumPy records `traces` (any layout holding these fields).
/// #[pyfunction]
/// fn mean_t0(traces: Records<'_, Trace>) -> f64 {
///     traces.iter().map(|t| t.t0).sum::<f64>() / traces.len().max(1) as f64
/// }
/// ```
#[derive(Debug)]
pub struct Records<'py, T: Element> {
    inner: Inner<'py, T>,
}

#[derive(Debug)]
enum Inner<'py, T: Element> {
    Borrowed(PyReadonlyArray1<'py, T>),
    Owned(Vec<T>),
}

impl<'py, T: NpyRecord + Element> Records<'py, T> {
    /// The records of `array`, a 1-d NumPy array.
    ///
    /// # Errors
    /// `TypeError` for anything but a 1-d NumPy array whose fields read as `T`'s (naming
    /// the field that does not); `ValueError` naming an element that is no valid `T`.
    pub fn from_array(array: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = array.py();
        let type_name = std::any::type_name::<T>();
        let untyped = array.cast::<PyUntypedArray>().map_err(|_| {
            let given = array.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            PyTypeError::new_err(format!("expected a NumPy array of {type_name} records, got {given}"))
        })?;
        if untyped.ndim() != 1 {
            return Err(PyTypeError::new_err(format!(
                "expected a 1-d array of {type_name} records, got {} dimensions",
                untyped.ndim()
            )));
        }
        let dtype = from_numpy(&untyped.dtype())?;
        // A 1-d array's bytes: its own when it is contiguous, else a contiguous copy's.
        let bytes = ArrayBytes::of(untyped)?;
        let bytes = bytes.as_slice()?;
        if dtype == T::native_dtype() && untyped.is_c_contiguous() && mmap::view_bytes::<T>(&dtype, bytes).is_ok() {
            if let Ok(typed) = untyped.cast::<PyArray1<T>>() {
                return Ok(Records { inner: Inner::Borrowed(typed.readonly()) });
            }
        }
        let header = Header::new(dtype, vec![untyped.len()]);
        let records = py.detach(|| NpyReader::over_data(bytes, header).and_then(|r| r.read::<Vec<T>>()));
        Ok(Records { inner: Inner::Owned(records.map_err(py_err)?) })
    }

    /// Whether the slice is the NumPy array's own memory (no copy was made).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.inner, Inner::Borrowed(_))
    }

    /// The records as a `Vec` (a copy when borrowed).
    pub fn into_vec(self) -> Vec<T>
    where
        T: Copy,
    {
        match self.inner {
            Inner::Borrowed(_) => self.deref().to_vec(),
            Inner::Owned(v) => v,
        }
    }
}

impl<T: Element> Deref for Records<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.inner {
            // `from_array` borrows only C-contiguous arrays, and the read-only borrow keeps
            // them so.
            Inner::Borrowed(array) => array.as_slice().expect("a C-contiguous array, checked when borrowed"),
            Inner::Owned(v) => v,
        }
    }
}

impl<'a, 'py, T: NpyRecord + Element> FromPyObject<'a, 'py> for Records<'py, T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Records::from_array(&obj.to_owned())
    }
}
