//! Objects in buckets and on web servers (`s3://`, `gs://`, `az://`, `http(s)://`,
//! `file://`) through npy-store's object stores: [`Source`], npy-store's one source of
//! bytes (a local file or an object) for the ranged reads `npy.open`, `npy.dask` and an
//! archive's `fid` at a URL make, and for the `.npy` that `npy.load` reads at a URL
//! ([`ObjectStart`]; archives go to npy-store's `RemoteNpz`, in [`crate::npz`]); uploads.
//!
//! Every read runs on npy-store's `shared_runtime` with the GIL released. An object is read
//! as the version its first request found: later reads carry its ETag as `If-Match` where
//! the store gave one, so an object replaced while read fails the read instead of mixing
//! versions.

use std::ops::Range;

use bytes::Bytes;
use npy_core::Error;
use npy_store::shared_runtime;
use npy_store::source::SourceRead;
use numpy::PyReadwriteArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_python;

/// A local file or an object at a URL, read by byte ranges: npy-store's [`npy_store::Source`]
/// (a file stamped when opened, an object pinned to the ETag its `HEAD` found), its reads
/// made with the GIL released.
#[pyclass(module = "npy._npy", name = "Source", frozen)]
pub(crate) struct Source {
    source: npy_store::Source,
}

impl Source {
    /// The bytes of `ranges`, each whole, read with the GIL released.
    fn fetch(&self, py: Python<'_>, ranges: &[Range<u64>]) -> PyResult<Vec<Vec<u8>>> {
        py.detach(|| shared_runtime()?.block_on(self.source.read_ranges(ranges))).map_err(to_python)
    }
}

/// `e`, naming `url` (in place of the store's path of the object, which npy-store names).
pub(crate) fn named(e: Error, url: &str) -> Error {
    e.renamed(url).reading(url)
}

/// Bytes asked for by the first read of an object `npy.load` opens: npy-store's
/// `HEADER_PREFIX`, which holds the header NumPy writes for arrays of up to a few hundred
/// fields (and the data of small arrays).
const FIRST_BYTES: u64 = npy_store::HEADER_PREFIX as u64;

/// An object at a URL, opened by one ranged GET of its first bytes, whose answer also
/// gives its size and ETag (no `HEAD`): npy-store's [`npy_store::Source::open_start`].
pub(crate) struct ObjectStart {
    pub(crate) url: String,
    pub(crate) source: npy_store::Source,
    /// The object's first [`FIRST_BYTES`] bytes (all of a smaller one).
    pub(crate) prefix: Bytes,
}

impl ObjectStart {
    /// Opens the object at `url`: a missing one is `NotFound`, naming it.
    pub(crate) fn open(url: &str) -> npy_core::Result<ObjectStart> {
        let (source, prefix) = shared_runtime()?.block_on(npy_store::Source::open_start(url, FIRST_BYTES))?;
        Ok(ObjectStart { url: url.to_string(), source, prefix })
    }

    /// The object's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.source.size()
    }

    /// The object as a blocking `Read` from its start, for npy-core's readers
    /// ([`npy_store::source::SourceRead`]): its first bytes as fetched, then the rest by
    /// one more GET when a read needs it. Read on a thread that is not the runtime's.
    pub(crate) fn into_read(self) -> npy_core::Result<SourceRead> {
        Ok(SourceRead::new(self.source, self.prefix, shared_runtime()?.handle().clone()))
    }
}

#[pymethods]
impl Source {
    /// The path or URL.
    #[getter]
    fn name(&self) -> &str {
        self.source.name()
    }

    /// Its size in bytes when opened.
    #[getter]
    fn size(&self) -> u64 {
        self.source.size()
    }

    /// What says which version of the file or object this is (npy-store's
    /// [`npy_store::Source::stamp`]: a file's size, modification time, device and inode; an
    /// object's size and ETag): equal for the same one unchanged.
    #[getter]
    fn stamp(&self) -> String {
        self.source.stamp()
    }

    /// Bytes fetched so far by ranged GETs (0 for a local file).
    #[getter]
    fn fetched(&self) -> u64 {
        self.source.fetched()
    }

    /// The bytes of each `(start, stop)` range, near ones read as one.
    fn read_ranges<'py>(&self, py: Python<'py>, ranges: Vec<(u64, u64)>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let ranges: Vec<Range<u64>> = ranges.into_iter().map(|(a, b)| a..b).collect();
        Ok(self.fetch(py, &ranges)?.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    /// The bytes `start..end` (fewer at its end, none for `end <= start`).
    fn read<'py>(&self, py: Python<'py>, start: u64, end: u64) -> PyResult<Bound<'py, PyBytes>> {
        let end = end.min(self.source.size());
        if start >= end {
            return Ok(PyBytes::new(py, b""));
        }
        Ok(PyBytes::new(py, &self.fetch(py, std::slice::from_ref(&(start..end)))?[0]))
    }

    /// Fills `out` (a writable C-contiguous `uint8` array) with the bytes from `start`, with
    /// the GIL released: a range past its end raises `ValueError`, naming the file.
    fn read_into(&self, py: Python<'_>, start: u64, mut out: PyReadwriteArray1<'_, u8>) -> PyResult<()> {
        let buf = out.as_slice_mut().map_err(|e| PyValueError::new_err(format!("read_into: {e}")))?;
        py.detach(|| shared_runtime()?.block_on(self.source.read_into(start, buf))).map_err(to_python)
    }

    fn __repr__(&self) -> String {
        format!("npy.Source({:?}, {} bytes)", self.source.name(), self.source.size())
    }
}

/// Opens `file`, a path or a URL ([`npy_store::Source::open`]): a missing one is
/// `FileNotFoundError`, naming it.
#[pyfunction]
pub(crate) fn open_source(py: Python<'_>, file: String) -> PyResult<Source> {
    let opened = py.detach(|| match npy_store::is_url(&file) {
        true => shared_runtime()?.block_on(npy_store::Source::open(&file)),
        false => npy_store::Source::open_local(&file),
    });
    Ok(Source { source: opened.map_err(to_python)? })
}

/// Uploads the local file `path` to `url`: one PUT, or a multipart upload for large files;
/// the object appears only once complete (an upload that fails is aborted).
#[pyfunction]
pub(crate) fn upload(py: Python<'_>, path: std::path::PathBuf, url: String) -> PyResult<()> {
    py.detach(|| {
        let at = npy_store::store_for(&url)?;
        let file = std::fs::File::open(&path).map_err(|e| Error::from(e).reading(&path))?;
        let size = file.metadata().map_err(|e| Error::from(e).reading(&path))?.len();
        let sent = shared_runtime()?.block_on(npy_store::upload(at.store.clone(), &at.path, file, size));
        sent.map_err(|e| e.renamed(&url).writing(&url))
    })
    .map_err(to_python)
}
