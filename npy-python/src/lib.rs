//! The `npy` Python package: NumPy's `.npy` and `.npz` files read and written by npy's Rust
//! core. `npy.load` and `npy.save` give and write what `np.load` and `np.save` do; object
//! arrays load without running a pickle; stored `.npz` members map in place; appends are
//! locked and crash-safe. Built by maturin (`pip install ./npy-python`).
//!
//! Every function releases the GIL while it reads or writes, and arrays come to Python
//! over the buffer npy-core read them into (no copy).
#![forbid(unsafe_code)]

mod arrays;
mod files;
mod npz;
mod unpickle;

use std::io::Write;
use std::path::PathBuf;

use npy_core::append::Appender;
use npy_core::atomic::AtomicFile;
use npy_core::header::Header;
use npy_core::npz::ReaderOptions;
use npy_core::object::from_pickle;
use npy_core::{DType, DynView, ReadNpy, WriteNpy};
use npy_pyo3::{from_numpy, py_err, ArrayBytes};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrays::memmap;
use crate::files::{header_of, map_mode, objects_unmappable, path_of, read_options, Loaded, MAX_HEADER_SIZE};
use crate::npz::NpzFile;

/// Loads the array in a `.npy` file, or opens an `.npz` archive (as `load_npz`).
///
/// Gives what `np.load(file, mmap_mode=mmap_mode, allow_pickle=True)` gives: the same
/// dtype (titles, offsets, padding), shape, order and bytes. An object array's pickle is
/// first checked whole by a decoder that knows only NumPy's arrays and plain values (None,
/// bool, int, float, complex, str, bytes, NumPy scalars, and lists, tuples and dicts of
/// them): a pickle naming anything else raises `ValueError` and nothing in it runs. A
/// checked pickle is then built by CPython's unpickler, able to name only what the decoder
/// allows.
///
/// mmap_mode: None, 'r', 'r+' or 'c': the file is mapped as `np.load` maps it (an
///     `np.memmap`); object arrays cannot be.
/// max_header_size: headers longer than this raise `ValueError` before anything is read
///     (NumPy's default, 10000).
///
/// Raises OSError (FileNotFoundError, ...) when the file cannot be read, ValueError when
/// it is no valid `.npy` file; the message names the file.
#[pyfunction]
#[pyo3(signature = (file, mmap_mode=None, *, max_header_size=MAX_HEADER_SIZE))]
fn load<'py>(
    py: Python<'py>,
    file: &Bound<'py, PyAny>,
    mmap_mode: Option<&str>,
    max_header_size: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let path = path_of("load", file)?;
    let mode = map_mode(mmap_mode)?;
    if py.detach(|| npy_core::npz::is_npz(&path)).map_err(py_err)? {
        return Ok(Bound::new(py, open_npz(py, path, mode, max_header_size)?)?.into_any());
    }
    let file_len = std::fs::metadata(&path).ok().map(|m| m.len());
    let options = read_options(max_header_size, file_len);
    if let Some(mode) = mode {
        let (header, offset) = py.detach(|| header_of(&path, &options)).map_err(py_err)?;
        if header.dtype.has_object() {
            return Err(objects_unmappable(&path));
        }
        return memmap(file, &header, offset, mode);
    }
    py.detach(|| Loaded::read_npy_with(&path, &options)).map_err(py_err)?.into_python(py)
}

/// Opens an `.npz` archive as a lazy mapping of its members (`NpzFile`), as `np.load`
/// does, each member read when asked for.
///
/// mmap_mode: None, 'r' or 'c': stored (uncompressed) members are then memory-mapped in
///     place (views of the archive's bytes); deflated members are read into memory. ('r+'
///     is refused for stored members: writing would leave their CRC-32 wrong.)
/// max_header_size: as for `load`, for each member's header.
///
/// `npz.load_all()` reads every member, several at once.
#[pyfunction]
#[pyo3(signature = (file, mmap_mode=None, *, max_header_size=MAX_HEADER_SIZE))]
fn load_npz(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    mmap_mode: Option<&str>,
    max_header_size: usize,
) -> PyResult<NpzFile> {
    let path = path_of("load_npz", file)?;
    open_npz(py, path, map_mode(mmap_mode)?, max_header_size)
}

fn open_npz(py: Python<'_>, path: PathBuf, mode: Option<&'static str>, max_header_size: usize) -> PyResult<NpzFile> {
    let file_len = std::fs::metadata(&path).ok().map(|m| m.len());
    let mut options = ReaderOptions::new();
    options.read_options(&read_options(max_header_size, file_len));
    py.detach(|| NpzFile::open(path, mode, &options)).map_err(py_err)
}

/// Saves `arr` to a `.npy` file, byte for byte the file `np.save(file, arr)` writes
/// (`.npy` is appended to a name that lacks it, as `np.save` does).
///
/// The file appears whole or not at all: it is written beside its place and renamed over
/// it when complete, so a failed or killed save leaves any old file as it was.
///
/// Object arrays are saved as `np.save` saves them (a pickle) when they hold plain values
/// (None, bool, int, float, complex, str, bytes, NumPy scalars, and lists, tuples and dicts
/// of them); anything else raises `TypeError`, so every file saved loads with `npy.load`.
#[pyfunction]
fn save(py: Python<'_>, file: &Bound<'_, PyAny>, arr: &Bound<'_, PyAny>) -> PyResult<()> {
    let mut path = path_of("save", file)?;
    if !path.as_os_str().to_string_lossy().ends_with(".npy") {
        path.as_mut_os_string().push(".npy");
    }
    let arr = py.import("numpy")?.getattr("asanyarray")?.call1((arr,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    let dtype = arr.dtype();
    let legacy: bool = dtype.get_type().getattr("_legacy")?.extract()?;
    if dtype.has_object() || !legacy {
        return save_pickled(py, path, arr);
    }
    let bytes = ArrayBytes::of(arr)?;
    let header =
        Header { dtype: from_numpy(&dtype)?, fortran_order: bytes.fortran_order(), shape: arr.shape().to_vec() };
    let data = bytes.as_slice()?;
    py.detach(|| DynView::new(header, data)?.write_npy(&path)).map_err(py_err)
}

/// An object array (or one of a dtype NumPy pickles) saved as `np.save` does: the header,
/// then `pickle.dump(arr, protocol=4)`, checked first to hold only what npy reads back.
fn save_pickled(py: Python<'_>, path: PathBuf, arr: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    let buffer = py.import("io")?.getattr("BytesIO")?.call0()?;
    let dump = py.import("pickle")?.getattr("dump")?;
    dump.call((arr, &buffer, 4), None)?;
    let pickle = buffer.call_method0("getvalue")?.cast_into::<PyBytes>()?;
    let pickle = pickle.as_bytes();
    let fortran_order = !arr.is_c_contiguous() && arr.is_fortran_contiguous();
    let header = Header { dtype: "|O".parse::<DType>().map_err(py_err)?, fortran_order, shape: arr.shape().to_vec() };
    // The budget `npy.load` gives this file's pickle, so that what is saved loads.
    let options = read_options(MAX_HEADER_SIZE, Some(pickle.len() as u64));
    let plain = py.detach(|| from_pickle(pickle, &options).map(drop));
    if let Err(e) = plain {
        return Err(PyTypeError::new_err(format!(
            "{}: npy.save writes object arrays of plain values only (use np.save for others): {e}",
            path.display()
        )));
    }
    py.detach(|| {
        let (_, head) = header.encode(None)?;
        let mut file = AtomicFile::create(&path)?;
        file.write_all(&head)?;
        file.write_all(pickle)?;
        file.commit(true)
    })
    .map_err(|e: npy_core::Error| py_err(e.writing(&path)))
}

/// Appends the rows of `arr` to the `.npy` file `file`, in place: its dtype, and its shape
/// but for the first axis, must be the file's (the file grows along its first axis).
///
/// Appends are locked (several processes may append to one file; each waits for the
/// others) and crash-safe: the header is rewritten only after the rows are on disk, so a
/// killed append leaves the file as it was before it. Create the file with `npy.save`.
#[pyfunction]
fn append(py: Python<'_>, file: &Bound<'_, PyAny>, arr: &Bound<'_, PyAny>) -> PyResult<()> {
    let path = path_of("append", file)?;
    let arr = py.import("numpy")?.getattr("asanyarray")?.call1((arr,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if arr.ndim() == 0 {
        return Err(PyValueError::new_err(format!("{}: cannot append a 0-d array (give rows)", path.display())));
    }
    let dtype = from_numpy(&arr.dtype())?;
    let contiguous = py.import("numpy")?.getattr("ascontiguousarray")?.call1((arr,))?;
    let bytes = ArrayBytes::of(contiguous.cast::<PyUntypedArray>()?)?;
    let header = Header { dtype, fortran_order: false, shape: arr.shape().to_vec() };
    let data = bytes.as_slice()?;
    py.detach(|| Appender::from_path(&path)?.append_dyn(DynView::new(header, data)?)).map_err(py_err)
}

/// NumPy's `.npy` and `.npz` files on npy's Rust core: `load`, `save`, `load_npz`,
/// `append`.
#[pymodule]
#[pyo3(name = "npy")]
fn npy_python(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(load_npz, m)?)?;
    m.add_function(wrap_pyfunction!(append, m)?)?;
    m.add_class::<NpzFile>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let mapping = m.py().import("collections.abc")?.getattr("Mapping")?;
    mapping.call_method1("register", (m.getattr("NpzFile")?,))?;
    Ok(())
}
