//! npy's errors as the exceptions code written for NumPy catches: one place decides.
//!
//! - a Python file object's own exception travels through npy-core inside the `io::Error`
//!   and comes back as it was raised;
//! - a pickle the restricted decoder refuses is `npy.UnsafePickleError`, both a
//!   `ValueError` and a `pickle.UnpicklingError` (NumPy raises the latter for a pickle that
//!   fails to load), saying how to load a file one trusts with NumPy;
//! - a broken archive (its zip structure, a member's CRC-32 or size) read is
//!   `npy.BadNpzFile`, both a `ValueError` and the `zipfile.BadZipFile` NumPy raises;
//! - anything else as npy-pyo3's `py_err` gives it (`OSError`s with errno and filename,
//!   `ValueError`s naming the file).

use npy_core::{Access, Error, ErrorKind};
use npy_pyo3::py_err;
use pyo3::ffi::c_str;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The module defining npy's exception classes, made once.
static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

const CODE: &std::ffi::CStr = c_str!(
    r#"
import pickle
import zipfile


class UnsafePickleError(ValueError, pickle.UnpicklingError):
    """A pickle that npy's restricted decoder refuses: it holds more than data (plain
    values, arrays, NumPy scalars, the standard library's data types), or is not a valid
    pickle. npy never runs a pickle; a file you trust loads with
    ``numpy.load(file, allow_pickle=True)``."""


class BadNpzFile(ValueError, zipfile.BadZipFile):
    """An ``.npz`` archive whose zip structure is broken, or whose member fails its CRC-32
    or size check (NumPy raises ``zipfile.BadZipFile`` for these)."""


UnsafePickleError.__module__ = "npy"
BadNpzFile.__module__ = "npy"
"#
);

/// npy's exception class `name`.
pub(crate) fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module = MODULE.get_or_try_init(py, || {
        PyModule::from_code(py, CODE, c_str!("npy/_errors.py"), c_str!("npy._errors")).map(Bound::unbind)
    })?;
    Ok(module.bind(py).getattr(name)?.cast_into()?)
}

/// An exception of npy's class `name`.
fn raised(py: Python<'_>, name: &str, message: String) -> PyErr {
    match class(py, name) {
        Ok(class) => PyErr::from_type(class, message),
        Err(e) => e,
    }
}

/// `npy.UnsafePickleError(message)`.
pub(crate) fn unsafe_pickle(py: Python<'_>, message: String) -> PyErr {
    raised(py, "UnsafePickleError", message)
}

/// `e` as the exception to raise (see the module).
pub(crate) fn to_python(e: Error) -> PyErr {
    if let ErrorKind::Io(io) = e.kind() {
        if let Some(raised) = io.get_ref().and_then(|inner| inner.downcast_ref::<PyErr>()) {
            return Python::attach(|py| raised.clone_ref(py));
        }
    }
    match e.kind() {
        ErrorKind::Pickle { .. } => Python::attach(|py| {
            let message =
                format!("{e}; npy never runs a pickle: load a file you trust with numpy.load(file, allow_pickle=True)");
            unsafe_pickle(py, message)
        }),
        ErrorKind::Npz { .. } if e.access() != Some(Access::Write) => {
            Python::attach(|py| raised(py, "BadNpzFile", e.to_string()))
        }
        _ => py_err(e),
    }
}

/// NumPy's warning for a header written on Python 2 (`numpy/lib/_format_impl.py`), at the
/// caller of the package function (two frames up from the engine).
pub(crate) fn warn_python2_header(py: Python<'_>) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    PyErr::warn(
        py,
        &category,
        c_str!(
            "Reading `.npy` or `.npz` file required additional header parsing as it was created on Python 2. \
             Save the file again to speed up loading and avoid this warning."
        ),
        2,
    )
}
