//! npy records as NumPy arrays in memory, for PyO3 extensions.
//!
//! A struct that derives [`NpyRecord`](npy_core::NpyRecord) with `#[npy(pyo3)]` is also
//! rust-numpy's [`Element`](numpy::Element): its NumPy dtype is its memory layout, so
//! - `Vec<T>` → NumPy is rust-numpy's `PyArray1::from_vec(py, v)` (or `v.into_pyarray(py)`),
//!   which hands the `Vec`'s buffer over without a copy: a million records or ten million
//!   take the same time;
//! - NumPy → `&[T]` is [`Records`]: the array's own memory when its dtype is `T`'s layout
//!   (checked: names, types, offsets, itemsize, byte order, alignment, valid values), else
//!   converted field by field by name, as `Vec::<T>::read_npy` reads files written by others.
//!
//! ```no_run
//! use npy_core::NpyRecord;
//! use npy_pyo3::Records;
//! use numpy::{IntoPyArray, PyArray1};
//! use pyo3::prelude::*;
//!
//! #[derive(NpyRecord, Clone, Copy)]
//! #[npy(pyo3)]
//! struct Trace {
//!     trace_id: i32,
//!     t0: f64,
//! }
//!
//! #[pyfunction]
//! fn make_traces(py: Python<'_>, n: usize) -> Bound<'_, PyArray1<Trace>> {
//!     (0..n).map(|i| Trace { trace_id: i as i32, t0: i as f64 }).collect::<Vec<_>>().into_pyarray(py)
//! }
//!
//! #[pyfunction]
//! fn mean_t0(traces: Records<'_, Trace>) -> f64 {
//!     traces.iter().map(|t| t.t0).sum::<f64>() / traces.len().max(1) as f64
//! }
//! ```
//!
//! `#[npy(pyo3)]` asks for `Copy` (NumPy copies elements bitwise) and refuses, at compile
//! time, `#[npy(skip)]` fields and `char` or enum fields (bytes NumPy code writes could be
//! invalid values of them). `bool` fields are checked to hold 0 or 1 when borrowed.
//!
//! Also here: [`to_numpy`] and [`from_numpy`] (npy's dtype model ↔ NumPy dtypes, as
//! `np.load` and `np.save` convert them), [`ArrayBytes`] (a NumPy array's data for npy-core
//! to write) and [`py_err`] (npy's errors as Python exceptions).
//! The `npy` Python package (crate `npy-python`) is built on them.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod bytes;
mod dtype;
mod element;
mod error;
mod records;

pub use bytes::ArrayBytes;
pub use dtype::{from_numpy, to_numpy};
pub use error::py_err;
pub use records::Records;

/// Not public API: what `#[npy(pyo3)]` expands to name.
#[doc(hidden)]
pub mod __private {
    pub use crate::element::{assert_element, element_dtype};
    pub use numpy::{Element, PyArrayDescr};
    pub use pyo3::{Bound, Python};
}
