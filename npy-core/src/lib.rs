//! Read and write NumPy `.npy` files bit-exactly, typed and fast.
//!
//! One dtype model ([`dtype`]) and one header codec ([`header`]) serve every path: typed
//! reads and writes of primitives and records ([`NpyRecord`]), dynamic arrays of any dtype
//! ([`DynArray`]), and streams ([`NpyReader`]). A file is right when NumPy says so: headers
//! are written byte for byte as `np.save` writes them, and every dtype NumPy saves without
//! pickle is understood — records with padding, titles, offsets, subarrays and nesting
//! included.
//!
//! # Examples
//! Neville saves a `Vec<f64>` in one line and loads it in NumPy with `np.load`:
//! ```
//! use npy_core::prelude::*;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("speeds.npy");
//! let speeds = vec![1.5f64, 2.5, 4.0];
//! speeds.write_npy(&path)?;
//! assert_eq!(Vec::<f64>::read_npy(&path)?, speeds);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Any file, whatever its dtype, through the dynamic API:
//! ```
//! use npy_core::{DynArray, prelude::*};
//!
//! let mut file = Vec::new();
//! Array::from_shape_vec(vec![2, 2], vec![1i16, 2, 3, 4])?.write_npy_to(&mut file)?;
//! let arr = DynArray::read_npy_from(&file[..])?;
//! assert_eq!(arr.dtype().descr(), "'<i2'");
//! assert_eq!(arr.shape(), [2, 2]);
//! assert_eq!(arr.get::<i64>(&[1, 0])?, 3);
//! # Ok::<(), npy_core::Error>(())
//! ```
#![warn(missing_docs)]

mod array;
pub mod dtype;
mod error;
pub mod header;
pub mod literal;
mod read;
pub mod record;
mod write;

pub use array::{Array, DynArray, ReadNpy, WriteNpy};
pub use dtype::DType;
pub use error::{Error, ErrorKind, Result};
pub use read::{NpyReader, ReadOptions};
pub use record::NpyRecord;
pub use write::WriteOptions;

/// Everything needed for `Vec::<T>::read_npy(path)` and `data.write_npy(path)`.
pub mod prelude {
    pub use crate::array::{Array, DynArray, ReadNpy, WriteNpy};
    pub use crate::record::NpyRecord;
}

/// The README's example, compiled and run as a doc-test.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
