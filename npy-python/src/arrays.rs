//! NumPy arrays made of what npy-core read.

use npy_core::dtype::DType;
use npy_core::header::Header;
use npy_core::DynArray;
use npy_pyo3::to_numpy;
use numpy::{PyArray1, PyArrayDescr};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

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
    Arrays::default().array(py, array)
}

/// NumPy arrays of npy-core's, made one after another: the NumPy dtype of the last one is
/// kept for the next (files of one dtype make it once; `np.dtype(..)` is a Python call).
#[derive(Default)]
pub(crate) struct Arrays<'py> {
    last: Option<(DType, Bound<'py, PyArrayDescr>)>,
}

impl<'py> Arrays<'py> {
    /// The NumPy array of `array`, as [`from_dyn`] makes it.
    pub(crate) fn array(&mut self, py: Python<'py>, array: DynArray) -> PyResult<Bound<'py, PyAny>> {
        let dtype = match &self.last {
            Some((dtype, numpy)) if dtype == array.dtype() => numpy.clone(),
            _ => {
                let numpy = to_numpy(py, array.dtype())?;
                self.last = Some((array.dtype().clone(), numpy.clone()));
                numpy
            }
        };
        if array.data().is_empty() {
            // Nothing to hand over (no elements, or elements of no bytes), which a byte
            // view cannot be reshaped from. np.ndarray, not np.empty, which makes `S0`
            // `S1` (NumPy reads such arrays as an ndarray of `S0`).
            let kwargs = PyDict::new(py);
            kwargs.set_item("order", order(array.fortran_order()))?;
            kwargs.set_item("dtype", dtype)?;
            let shape = PyTuple::new(py, array.shape())?;
            return py.import("numpy")?.getattr("ndarray")?.call((shape,), Some(&kwargs));
        }
        // A 1-d array is its bytes' view as it is (unless the dtype is a subarray, whose
        // view has its dimensions).
        let flat = array.shape().len() == 1 && !matches!(array.dtype(), DType::SubArray(_));
        let shape = (!flat).then(|| (array.shape().to_vec(), array.fortran_order()));
        let viewed = PyArray1::from_vec(py, array.into_data()).call_method1("view", (dtype,))?;
        let Some((shape, fortran)) = shape else { return Ok(viewed) };
        let kwargs = PyDict::new(py);
        kwargs.set_item("order", order(fortran))?;
        viewed.call_method("reshape", (PyTuple::new(py, shape)?,), Some(&kwargs))
    }
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
    py.import("numpy")?.getattr("memmap")?.call((file,), Some(&kwargs))
}
