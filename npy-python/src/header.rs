//! npy-core's header codec for the package's Python readers (`npy.open`, `npy.dask`,
//! `npy.virtualizarr`), so that every path reads a header as `npy.load` does.

use npy_core::HeaderPrefix;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::to_python_without_pickle;

/// The `.npy` header at the start of `prefix`, the first bytes of an object of `size`
/// bytes: `(dtype, fortran_order, shape, data_offset, (major, minor))`; or, when `prefix`
/// is too short, the number of first bytes it needs (an `int`). A header longer than
/// `max_header_size` is refused, as `npy.load` refuses it (in NumPy's words, but for its
/// advice to pass `allow_pickle=True`, which these readers do not take).
#[pyfunction]
#[pyo3(signature = (prefix, size, max_header_size = crate::args::MAX_HEADER_SIZE))]
pub(crate) fn parse_header<'py>(
    py: Python<'py>,
    prefix: &[u8],
    size: u64,
    max_header_size: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut options = npy_core::ReadOptions::new();
    options.max_header_size(max_header_size);
    match HeaderPrefix::parse_with(prefix, size, &options).map_err(to_python_without_pickle)? {
        HeaderPrefix::NeedBytes(n) => Ok(n.into_pyobject(py)?.into_any()),
        HeaderPrefix::Complete { header, version, data_offset } => {
            let dtype = npy_pyo3::to_numpy(py, &header.dtype)?;
            let shape = PyTuple::new(py, &header.shape)?;
            let (major, minor) = version.number();
            let parts = (dtype, header.fortran_order, shape, data_offset, (major, minor));
            Ok(parts.into_pyobject(py)?.into_any())
        }
    }
}
