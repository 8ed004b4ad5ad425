//! What the package's functions read and write, with the GIL released: one `.npy` file,
//! whole or as a header for a map.

use std::io::Read;
use std::path::{Path, PathBuf};

use npy_core::header::Header;
use npy_core::object::CheckedPickle;
use npy_core::{DynArray, NpyReader, ReadNpy, ReadOptions, Result};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// NumPy's `max_header_size` default (`numpy.lib.format._MAX_HEADER_SIZE`).
pub(crate) const MAX_HEADER_SIZE: usize = 10_000;

/// An array as read: raw bytes of any dtype but objects, or an object array's pickle,
/// checked by npy-core's restricted decoder.
pub(crate) enum Loaded {
    Raw(DynArray),
    Objects(CheckedPickle),
}

impl ReadNpy for Loaded {
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        if reader.header().dtype.has_object() {
            reader.read().map(Loaded::Objects)
        } else {
            reader.read().map(Loaded::Raw)
        }
    }
}

impl Loaded {
    pub(crate) fn into_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            Loaded::Raw(array) => crate::arrays::from_dyn(py, array),
            Loaded::Objects(pickle) => crate::unpickle::load(py, pickle),
        }
    }
}

/// The read options of `max_header_size`, for a file of `file_len` bytes (`None`: not
/// known yet). Checking an object array's pickle may take 1 GiB plus 64 bytes per byte of
/// the file: npy-core's default (128 MiB plus 4 per byte) refuses arrays of millions of
/// small values that `np.load` reads (a million 3-key dicts, an 11 MB pickle, took 300 MB
/// as npy-core's values); a hostile pickle still cannot take more.
pub(crate) fn read_options(max_header_size: usize, file_len: Option<u64>) -> ReadOptions {
    let mut options = ReadOptions::new();
    options.max_header_size(max_header_size);
    if let Some(len) = file_len {
        let budget = (1u64 << 30).saturating_add(len.saturating_mul(64));
        options.max_object_bytes(usize::try_from(budget).unwrap_or(usize::MAX));
    }
    options
}

/// The path a `file` argument names: a `str` or an `os.PathLike`.
pub(crate) fn path_of(function: &str, file: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    file.extract::<PathBuf>().map_err(|_| {
        let given = file.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!("npy.{function} takes a path (str or os.PathLike), not {given}"))
    })
}

/// A map's mode as `np.memmap` spells it, from any spelling it accepts; `None` for no map.
pub(crate) fn map_mode(mode: Option<&str>) -> PyResult<Option<&'static str>> {
    Ok(match mode {
        None => None,
        Some("r" | "readonly") => Some("r"),
        Some("r+" | "readwrite") => Some("r+"),
        Some("c" | "copyonwrite") => Some("c"),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "mmap_mode must be one of 'r', 'r+' or 'c' (or None), not {other:?}"
            )))
        }
    })
}

/// A `.npy` file's header and data offset, for a map of it (opening it checks that the
/// file holds all the data the header calls for).
pub(crate) fn header_of(path: &Path, options: &ReadOptions) -> Result<(Header, u64)> {
    let reader = NpyReader::from_path_with(path, options)?;
    Ok((reader.header().clone(), reader.data_offset() as u64))
}

/// A map of an object array cannot be made: its data is a pickle.
pub(crate) fn objects_unmappable(path: &Path) -> PyErr {
    PyValueError::new_err(format!(
        "{}: an array of Python objects cannot be memory-mapped (its data is a pickle)",
        path.display()
    ))
}
