//! NumPy arrays made of what npy-core read, and NumPy arrays' bytes for npy-core to write.

use npy_core::header::Header;
use npy_core::DynArray;
use npy_pyo3::to_numpy;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

static EMPTY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static MEMMAP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static UINT8: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ASCONTIGUOUSARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `module.name`, imported once per interpreter.
pub(crate) fn imported<'py>(
    cell: &'static PyOnceLock<Py<PyAny>>,
    py: Python<'py>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let f = cell.get_or_try_init(py, || py.import(module)?.getattr(name).map(Bound::unbind))?;
    Ok(f.bind(py).clone())
}

fn order(fortran: bool) -> &'static str {
    if fortran {
        "F"
    } else {
        "C"
    }
}

/// The NumPy array of `array`, over the bytes npy-core read (no copy): its `Vec` becomes
/// a `uint8` array (rust-numpy hands the buffer over), viewed as the dtype and shaped.
pub(crate) fn from_dyn(py: Python<'_>, array: DynArray) -> PyResult<Bound<'_, PyAny>> {
    let dtype = to_numpy(py, array.dtype())?;
    let shape = PyTuple::new(py, array.shape())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("order", order(array.fortran_order()))?;
    if array.data().is_empty() {
        // Nothing to hand over (no elements, or elements of no bytes), which a byte view
        // cannot be reshaped from.
        kwargs.set_item("dtype", dtype)?;
        return imported(&EMPTY, py, "numpy", "empty")?.call((shape,), Some(&kwargs));
    }
    let bytes = PyArray1::from_vec(py, array.into_data());
    bytes.call_method1("view", (dtype,))?.call_method("reshape", (shape,), Some(&kwargs))
}

/// `np.memmap` of the data at `offset` in `file` (a path as the caller gave it, which the
/// map's `filename` reflects) as `header` describes it: what
/// `numpy.lib.format.open_memmap` returns for `np.load(file, mmap_mode=mode)`.
pub(crate) fn memmap<'py>(
    file: &Bound<'py, PyAny>,
    header: &Header,
    offset: u64,
    mode: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = file.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", to_numpy(py, &header.dtype)?)?;
    kwargs.set_item("shape", PyTuple::new(py, &header.shape)?)?;
    kwargs.set_item("order", order(header.fortran_order))?;
    kwargs.set_item("mode", mode)?;
    kwargs.set_item("offset", offset)?;
    imported(&MEMMAP, py, "numpy", "memmap")?.call((file,), Some(&kwargs))
}

/// A NumPy array's data as npy-core writes it: its bytes in memory order (borrowed,
/// read-only) and whether that order is Fortran's, as `np.save` decides (C order for
/// arrays contiguous neither way, copied so).
pub(crate) struct Bytes<'py> {
    pub(crate) fortran_order: bool,
    pub(crate) data: Option<PyReadonlyArray1<'py, u8>>,
}

impl<'py> Bytes<'py> {
    pub(crate) fn of(array: &Bound<'py, PyUntypedArray>) -> PyResult<Bytes<'py>> {
        let py = array.py();
        let fortran_order = !array.is_c_contiguous() && array.is_fortran_contiguous();
        if array.len() == 0 || array.dtype().itemsize() == 0 {
            return Ok(Bytes { fortran_order, data: None });
        }
        let contiguous = if array.is_contiguous() {
            array.clone().into_any()
        } else {
            imported(&ASCONTIGUOUSARRAY, py, "numpy", "ascontiguousarray")?.call1((array,))?
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("order", "K")?;
        let flat = contiguous.call_method("ravel", (), Some(&kwargs))?;
        let bytes = flat.call_method1("view", (imported(&UINT8, py, "numpy", "uint8")?,))?;
        Ok(Bytes { fortran_order, data: Some(bytes.cast_into::<PyArray1<u8>>()?.readonly()) })
    }

    pub(crate) fn as_slice(&self) -> PyResult<&[u8]> {
        match &self.data {
            Some(data) => Ok(data.as_slice()?),
            None => Ok(&[]),
        }
    }
}
