//! A NumPy array's data as bytes for npy-core: borrowed when the array is contiguous.

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A NumPy array's data as npy-core reads and writes it: its bytes in memory order,
/// borrowed read-only (a `uint8` view of the array; an array contiguous neither way is
/// copied to C order first, as `np.save` writes it), and whether that order is Fortran's.
///
/// With [`from_numpy`](crate::from_numpy) for the dtype, it is what writing a NumPy array
/// with npy-core takes: `DynView::new(Header { dtype, fortran_order, shape }, bytes)`.
///
/// # Examples
/// ```no_run
/// use npy_core::header::Header;
/// use npy_core::{DynView, WriteNpy};
/// use npy_pyo3::{from_numpy, py_err, ArrayBytes};
/// use numpy::{PyUntypedArray, PyUntypedArrayMethods};
/// use pyo3::prelude::*;
///
/// /// Saves any NumPy array (but object arrays) as `np.save` would.
/// #[pyfunction]
/// fn save(array: &Bound<'_, PyUntypedArray>, path: std::path::PathBuf) -> PyResult<()> {
///     let bytes = ArrayBytes::of(array)?;
///     let header = Header { dtype: from_numpy(&array.dtype())?, fortran_order: bytes.fortran_order(), shape: array.shape().to_vec() };
///     DynView::new(header, bytes.as_slice()?).and_then(|v| v.write_npy(&path)).map_err(py_err)
/// }
/// ```
#[derive(Debug)]
pub struct ArrayBytes<'py> {
    fortran_order: bool,
    data: Option<PyReadonlyArray1<'py, u8>>,
}

impl<'py> ArrayBytes<'py> {
    /// The bytes of `array` (of a subclass's too: its memory, as a plain `ndarray` views
    /// it, whatever the subclass does to `ravel` and `view`, as `np.matrix` and
    /// `np.ma.MaskedArray` do).
    ///
    /// # Errors
    /// Any error NumPy raises viewing or copying the array.
    pub fn of(array: &Bound<'py, PyUntypedArray>) -> PyResult<Self> {
        let py = array.py();
        let fortran_order = !array.is_c_contiguous() && array.is_fortran_contiguous();
        if array.len() == 0 || array.dtype().itemsize() == 0 {
            return Ok(ArrayBytes { fortran_order, data: None });
        }
        let numpy = py.import("numpy")?;
        let ndarray = numpy.getattr("ndarray")?;
        let plain = if array.get_type().is(&ndarray) {
            array.clone().into_any()
        } else {
            ndarray.getattr("view")?.call1((array, &ndarray))?
        };
        let contiguous =
            if array.is_contiguous() { plain } else { numpy.getattr("ascontiguousarray")?.call1((plain,))? };
        let kwargs = PyDict::new(py);
        kwargs.set_item("order", "K")?;
        let flat = contiguous.call_method("ravel", (), Some(&kwargs))?;
        let bytes = flat.call_method1("view", (numpy.getattr("uint8")?,))?;
        Ok(ArrayBytes { fortran_order, data: Some(bytes.cast_into::<PyArray1<u8>>()?.readonly()) })
    }

    /// Whether the bytes are in Fortran order (the array is F- but not C-contiguous).
    pub fn fortran_order(&self) -> bool {
        self.fortran_order
    }

    /// The bytes as the `uint8` NumPy array they are read from (`None` when there are
    /// none), for handing them to Python code without a copy (a file object's `write`).
    pub fn as_numpy(&self) -> Option<&Bound<'py, PyArray1<u8>>> {
        self.data.as_deref()
    }

    /// The bytes.
    ///
    /// # Errors
    /// rust-numpy's, should the view not be contiguous (it always is).
    pub fn as_slice(&self) -> PyResult<&[u8]> {
        match &self.data {
            Some(data) => Ok(data.as_slice()?),
            None => Ok(&[]),
        }
    }
}
