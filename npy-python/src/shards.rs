//! `npy.open`'s engine over many files: [`Shards`] wraps npy-store's
//! [`npy_store::Shards`] (one array along axis 0 over `.npy` files or stored npz members,
//! local or at URLs) and reads its rows with the GIL released: a range, or a batch of rows
//! in any order gathered by positioned reads and ranged GETs side by side. Rows come to
//! Python as one `uint8` array over the buffer read (no copy), which `_lazy.py` views as
//! the dtype.

use npy_core::ReadOptions;
use numpy::{PyArray1, PyArrayDescr, PyReadonlyArray1};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

use crate::errors::to_python;
use npy_store::shared_runtime;

/// Many NumPy files as one array along axis 0, opened by [`open_shards`].
#[pyclass(module = "npy._npy", name = "Shards", frozen)]
pub(crate) struct Shards {
    shards: npy_store::Shards,
    dtype: Py<PyArrayDescr>,
}

/// Opens `sources` (paths, directories, glob patterns, URLs; `member`: that stored member
/// of each `.npz`) as one array, reading every header with the GIL released; local files
/// mapped if `map_local_files` (the maps' contract: see [`crate::scan::maps_accepted`]).
/// Errors name the file (two files that differ, both).
#[pyfunction]
#[pyo3(signature = (sources, member = None, max_header_size = crate::args::MAX_HEADER_SIZE, map_local_files = false))]
pub(crate) fn open_shards(
    py: Python<'_>,
    sources: Vec<String>,
    member: Option<String>,
    max_header_size: usize,
    map_local_files: bool,
) -> PyResult<Shards> {
    let mut read = ReadOptions::new();
    read.max_header_size(max_header_size);
    let mut options = npy_store::ShardsOptions::new();
    options.read_options(&read);
    if let Some(member) = member {
        options.member(member);
    }
    if map_local_files {
        options.map(crate::scan::maps_accepted());
    }
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    let shards = py
        .detach(|| shared_runtime()?.block_on(npy_store::Shards::open_with(&sources, &options)))
        .map_err(to_python)?;
    let dtype = npy_pyo3::to_numpy(py, &shards.header().dtype)?.unbind();
    Ok(Shards { shards, dtype })
}

#[pymethods]
impl Shards {
    /// The files read, in order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.shards.files().into_iter().map(str::to_string).collect()
    }

    /// Each file's first row in the whole array, then the rows of all.
    #[getter]
    fn starts(&self) -> Vec<usize> {
        self.shards.starts().to_vec()
    }

    /// The whole array's shape: all rows, then the files' other axes.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shards.header().shape.clone()
    }

    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDescr> {
        self.dtype.bind(py).clone()
    }

    /// Bytes of one row.
    #[getter]
    fn row_bytes(&self) -> usize {
        self.shards.row_bytes()
    }

    /// Bytes fetched by ranged GETs so far (0 for local files).
    #[getter]
    fn fetched(&self) -> u64 {
        self.shards.fetched()
    }

    /// Ranged GETs made by reads of rows so far (0 for local files).
    #[getter]
    fn requests(&self) -> u64 {
        self.shards.requests()
    }

    /// The bytes of `rows` (row numbers of the whole array in any order, negative ones
    /// counted from its end, as NumPy's), as a `uint8` array: each distinct row read once,
    /// with the GIL released. A row out of bounds raises NumPy's `IndexError`.
    fn gather<'py>(&self, py: Python<'py>, rows: PyReadonlyArray1<'py, i64>) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let wanted = rows.as_array();
        let n = self.shards.rows();
        let mut list = Vec::with_capacity(wanted.len());
        for &row in wanted {
            let at = if row < 0 {
                usize::try_from(row.unsigned_abs()).ok().and_then(|back| n.checked_sub(back))
            } else {
                usize::try_from(row).ok()
            };
            match at.filter(|&at| at < n) {
                Some(at) => list.push(at),
                None => {
                    return Err(PyIndexError::new_err(format!("index {row} is out of bounds for axis 0 with size {n}")))
                }
            }
        }
        let bytes = py.detach(|| shared_runtime()?.block_on(self.shards.gather_raw(&list))).map_err(to_python)?;
        Ok(PyArray1::from_vec(py, bytes))
    }

    /// The bytes of rows `start..stop`, as a `uint8` array, read with the GIL released.
    fn read_rows<'py>(&self, py: Python<'py>, start: usize, stop: usize) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let bytes =
            py.detach(|| shared_runtime()?.block_on(self.shards.read_rows_raw(start..stop))).map_err(to_python)?;
        Ok(PyArray1::from_vec(py, bytes))
    }

    fn __repr__(&self) -> String {
        format!("npy.Shards({} files, shape {:?})", self.shards.files().len(), self.shards.header().shape)
    }
}
