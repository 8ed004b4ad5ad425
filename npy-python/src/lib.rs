//! `npy._npy`: the Rust engine of the `npy` Python package (`npy-python/python/npy`), which
//! gives NumPy's `load`, `save`, `savez`, `savez_compressed` and `open_memmap` their
//! signatures and hands the work to the functions here. Built by maturin (`pip install
//! ./npy-python`), one abi3 module for CPython 3.11+.
//!
//! Reads and writes of paths release the GIL; file objects are read and written through
//! their own methods, as NumPy reads and writes them. Arrays come to Python over the
//! buffer npy-core read them into (no copy). Object arrays never run a pickle: npy-core's
//! restricted decoder checks it, CPython's unpickler (naming only what the decoder allows)
//! builds it.
// One `unsafe` call: the maps' contract of `scan::maps_accepted`, which a caller asks for.
#![deny(unsafe_code)]

mod args;
mod arrays;
mod errors;
mod load;
mod locate;
mod many;
mod npz;
mod objects;
mod pending;
mod plain;
mod pyfile;
mod remote;
mod save;
mod scan;
mod shards;
mod unpickle;
mod writer;

use std::path::PathBuf;

use npy_core::append::Appender;
use npy_core::header::{FileKind, Header};
use npy_core::DynView;
use npy_pyo3::{from_numpy, ArrayBytes};
use numpy::{PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::args::{map_mode, LoadArgs};
use crate::errors::to_python;
use crate::load::{load_file, load_path, Loaded};
use crate::npz::NpzReader;
use crate::save::{Prepared, Target};

fn loaded(py: Python<'_>, loaded: Loaded<'_>) -> PyResult<Py<PyAny>> {
    match loaded {
        Loaded::Array(array) => Ok(array.unbind()),
        Loaded::Archive(reader) => Ok(Bound::new(py, *reader)?.into_any().unbind()),
    }
}

/// `np.load` of a path: an array, an `np.memmap`, or an [`NpzReader`].
#[pyfunction]
fn load_from_path(py: Python<'_>, path: &Bound<'_, PyAny>, args: PyRef<'_, LoadArgs>) -> PyResult<Py<PyAny>> {
    loaded(py, load_path(py, path, &args)?)
}

/// `np.load` of a file object, from its position: an array or an [`NpzReader`].
#[pyfunction]
fn load_from_file(py: Python<'_>, file: &Bound<'_, PyAny>, args: PyRef<'_, LoadArgs>) -> PyResult<Py<PyAny>> {
    loaded(py, load_file(py, file, &args)?)
}

/// `np.load` of the object at a URL (`npz`: `load_npz`, refusing anything but an archive):
/// an array or an [`NpzReader`], read through npy-store with the GIL released (`args`
/// without a map mode: the caller refuses one, naming the URL).
#[pyfunction]
fn load_from_url(py: Python<'_>, url: &str, args: PyRef<'_, LoadArgs>, npz: bool) -> PyResult<Py<PyAny>> {
    loaded(py, load::load_url(py, url, &args, npz)?)
}

/// `npy.load_many`: each of `files` (paths, URLs) as `load_from_path` (`load_from_url`)
/// gives it, in order; plain arrays read on up to `threads` threads with the GIL released.
#[pyfunction]
#[pyo3(signature = (files, mmap_mode, threads))]
fn load_many(
    py: Python<'_>,
    files: &Bound<'_, PyList>,
    mmap_mode: Option<&str>,
    threads: Option<usize>,
) -> PyResult<Vec<Py<PyAny>>> {
    let args = LoadArgs::new(mmap_mode, None, true, "ASCII".to_string(), args::MAX_HEADER_SIZE)?;
    many::load_many(py, files, &args, threads)
}

/// An archive opened as `NpzFile(fid)` opens it: by path, or from a file object.
#[pyfunction]
fn open_npz(py: Python<'_>, file: &Bound<'_, PyAny>, args: PyRef<'_, LoadArgs>) -> PyResult<NpzReader> {
    if file.hasattr("read")? {
        NpzReader::open_file(py, file, &args)
    } else {
        NpzReader::open_path(py, file.extract()?, &args)
    }
}

/// `open_memmap(path, mode)` of an existing `.npy` file (modes `r`, `r+`, `c`); `path` as
/// the caller gave it (a map's `filename` keeps a `pathlib.Path`).
#[pyfunction]
fn map_npy<'py>(path: &Bound<'py, PyAny>, mode: &str, max_header_size: usize) -> PyResult<Bound<'py, PyAny>> {
    let args = LoadArgs { max_header_size, ..LoadArgs::default() };
    let options = args.read_options(None);
    let (header, offset) = load::header_at(path.py(), &path.extract::<PathBuf>()?, &options)?;
    let mode = map_mode(Some(mode))?.unwrap_or("r+");
    arrays::memmap(path, &header, offset, mode)
}

/// `np.save` to a path (`.npy` added by the caller); gives the format version written.
#[pyfunction]
fn save_to_path(
    py: Python<'_>,
    path: PathBuf,
    arr: &Bound<'_, PyUntypedArray>,
    allow_pickle: bool,
    durable: bool,
) -> PyResult<(u8, u8)> {
    let prepared = Prepared::of(arr, allow_pickle, &path.display().to_string())?;
    save::save_path(py, path, &prepared, durable)
}

/// `np.save` to a file object; gives the format version written.
#[pyfunction]
fn save_to_file(file: &Bound<'_, PyAny>, arr: &Bound<'_, PyUntypedArray>, allow_pickle: bool) -> PyResult<(u8, u8)> {
    let what = pyfile::name_of(file).map_or_else(|| "the file".to_string(), |p| p.display().to_string());
    let prepared = Prepared::of(arr, allow_pickle, &what)?;
    save::save_file(file, &prepared)
}

/// `np.savez` (`compress`: `np.savez_compressed`) of `names` and `arrays` to a path (with
/// its suffix) or a file object; gives each member's format version.
#[pyfunction]
fn savez(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    names: Vec<String>,
    arrays: &Bound<'_, PyList>,
    compress: bool,
    allow_pickle: bool,
    durable: bool,
) -> PyResult<Vec<(u8, u8)>> {
    let target = if file.hasattr("write")? { Target::File(file.clone()) } else { Target::Path(file.extract()?) };
    let mut members = Vec::with_capacity(names.len());
    for (name, arr) in names.into_iter().zip(arrays.iter()) {
        let arr = arr.cast_into::<PyUntypedArray>()?;
        let prepared = Prepared::of(&arr, allow_pickle, &format!("{name}.npy"))?;
        members.push((name, prepared));
    }
    save::savez(py, target, &members, compress, durable)
}

/// The file of `open_memmap(path, mode='w+', ...)`, created atomically; gives the data's
/// offset and the format version.
#[pyfunction]
fn create_npy(
    py: Python<'_>,
    path: PathBuf,
    dtype: &Bound<'_, PyArrayDescr>,
    shape: Vec<usize>,
    fortran_order: bool,
    version: Option<(u8, u8)>,
) -> PyResult<(u64, (u8, u8))> {
    save::create_npy(py, path, dtype, shape, fortran_order, version)
}

/// Appends the rows of `arr` to the `.npy` file `path`, in place: its dtype, and its shape
/// but for the first axis, must be the file's. Appends are locked (several processes may
/// append to one file) and crash-safe: the header is rewritten only after the rows are on
/// disk, so a killed append leaves the file as it was.
#[pyfunction]
fn append(py: Python<'_>, path: PathBuf, arr: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    if arr.ndim() == 0 {
        return Err(PyValueError::new_err(format!("{}: cannot append a 0-d array (give rows)", path.display())));
    }
    let dtype = from_numpy(&arr.dtype())?;
    let contiguous = py.import("numpy")?.getattr("ascontiguousarray")?.call1((arr,))?;
    let bytes = ArrayBytes::of(contiguous.cast::<PyUntypedArray>()?)?;
    let header = Header { dtype, fortran_order: false, shape: arr.shape().to_vec() };
    let data = bytes.as_slice()?;
    py.detach(|| Appender::from_path(&path)?.append_dyn(DynView::new(header, data)?)).map_err(to_python)
}

/// The files `source` names, by npy-store's one rule (`npy_store::find_files`): itself,
/// every `.npy` or `.npz` file under a directory or under a URL prefix ending in `/`, or
/// the files a glob pattern matches, sorted by path as text; `npy.open`, `npy.scan`,
/// `npy.dask` and xarray's `engine="npy"` all take it.
#[pyfunction]
fn find(py: Python<'_>, source: String) -> PyResult<Vec<String>> {
    py.detach(|| npy_store::shared_runtime()?.block_on(npy_store::find_files(&source))).map_err(to_python)
}

/// Whether `s` is a URL (`scheme://...`), not a path: npy-store's one test
/// (`npy_store::is_url`), which `npy._source.is_url` asks. What is not a `str`, or not
/// UTF-8 (a path's undecodable bytes, as `os.fsdecode` gives them), is no URL.
#[pyfunction]
fn is_url(s: &Bound<'_, PyAny>) -> bool {
    s.cast::<pyo3::types::PyString>().ok().and_then(|s| s.to_str().ok()).is_some_and(npy_store::is_url)
}

/// `"npy"` or `"npz"` as `name`'s suffix says (in any case), `None` for another name:
/// npy-core's one suffix test (`FileKind::of_name`), which `npy._source.kind_of_name`
/// asks. What a file holds is told by its bytes, by the readers.
#[pyfunction]
fn kind_of_name(name: &str) -> Option<&'static str> {
    match FileKind::of_name(name)? {
        FileKind::Npy => Some("npy"),
        FileKind::Zip => Some("npz"),
        FileKind::Empty | FileKind::Other => None,
    }
}

/// The engine of the `npy` package.
#[pymodule]
#[pyo3(name = "_npy")]
fn engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LoadArgs>()?;
    m.add_function(wrap_pyfunction!(load_from_path, m)?)?;
    m.add_function(wrap_pyfunction!(unpickle::set_safe_globals, m)?)?;
    m.add_function(wrap_pyfunction!(load_from_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_from_url, m)?)?;
    m.add_function(wrap_pyfunction!(load_many, m)?)?;
    m.add_function(wrap_pyfunction!(open_npz, m)?)?;
    m.add_function(wrap_pyfunction!(map_npy, m)?)?;
    m.add_function(wrap_pyfunction!(save_to_path, m)?)?;
    m.add_function(wrap_pyfunction!(save_to_file, m)?)?;
    m.add_function(wrap_pyfunction!(savez, m)?)?;
    m.add_function(wrap_pyfunction!(create_npy, m)?)?;
    m.add_function(wrap_pyfunction!(append, m)?)?;
    m.add_class::<pending::PendingDir>()?;
    m.add_class::<NpzReader>()?;
    m.add_class::<writer::NpzArchive>()?;
    m.add_function(wrap_pyfunction!(scan::open_scan, m)?)?;
    m.add_class::<scan::Scan>()?;
    m.add_class::<scan::BatchIter>()?;
    m.add_function(wrap_pyfunction!(locate::locate, m)?)?;
    m.add_function(wrap_pyfunction!(find, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add_function(wrap_pyfunction!(kind_of_name, m)?)?;
    m.add_function(wrap_pyfunction!(remote::open_source, m)?)?;
    m.add_function(wrap_pyfunction!(remote::upload, m)?)?;
    m.add_class::<remote::Source>()?;
    m.add_function(wrap_pyfunction!(shards::open_shards, m)?)?;
    m.add_class::<shards::Shards>()?;
    m.add("UnsafePickleError", errors::class(m.py(), "UnsafePickleError")?)?;
    m.add("BadNpzFile", errors::class(m.py(), "BadNpzFile")?)?;
    m.add("MAX_HEADER_SIZE", args::MAX_HEADER_SIZE)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
