//! npy's errors as the exceptions code written for NumPy catches: one place decides.
//!
//! - a Python file object's own exception travels through npy-core inside the `io::Error`
//!   and comes back as it was raised;
//! - a pickle the restricted decoder refuses is `npy.UnsafePickleError`, both a
//!   `ValueError` and a `pickle.UnpicklingError` (NumPy raises the latter for a pickle that
//!   fails to load), saying how to load a file one trusts with NumPy;
//! - a broken archive (its zip structure, a member's CRC-32 or size) read is
//!   `npy.BadNpzFile`, both a `ValueError` and the `zipfile.BadZipFile` NumPy raises;
//! - a header over `max_header_size` is NumPy's `ValueError`, in NumPy's words (which name
//!   Python's arguments; npy-core's message names its Rust options);
//! - a record or subarray holding Python objects (which NumPy pickles and npy never
//!   unpickles) is `npy.UnsafePickleError`, saying so without naming npy-core's API;
//! - anything else as npy-pyo3's `py_err` gives it (`OSError`s with errno and filename,
//!   `ValueError`s naming the file).
//!
//! Messages given in NumPy's words keep npy's naming of the file (`reading 'a.npz',
//! member 'x.npy': `) before them, so that NumPy's text is in the message as it is.

use npy_core::{Access, Error, ErrorKind};
use npy_pyo3::py_err;
use pyo3::exceptions::PyValueError;
use pyo3::ffi::c_str;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The module defining npy's exception classes (`python/npy/_errors.py`), imported once.
static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// npy's exception class `name`.
pub(crate) fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module = MODULE.get_or_try_init(py, || py.import("npy._errors").map(Bound::unbind))?;
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
            let message = format!(
                "{e}; npy never runs a pickle: let a class you trust through with npy.safe_globals([cls]), or \
                 load a file you trust with numpy.load(file, allow_pickle=True)"
            );
            unsafe_pickle(py, message)
        }),
        ErrorKind::Npz { .. } if e.access() != Some(Access::Write) => {
            Python::attach(|py| raised(py, "BadNpzFile", e.to_string()))
        }
        ErrorKind::HeaderTooLarge { len, .. } => {
            PyValueError::new_err(format!("{}{}", context(&e), header_too_large(*len)))
        }
        _ if holds_objects(&e) => Python::attach(|py| {
            let ErrorKind::UnsupportedDtype { descr, .. } = e.kind() else { unreachable!("holds_objects checked it") };
            let message = format!(
                "{}the dtype holds Python objects in records or subarrays ({descr}), which NumPy pickles; \
                 npy never runs a pickle: load a file you trust with numpy.load(file, allow_pickle=True)",
                context(&e)
            );
            unsafe_pickle(py, message)
        }),
        _ => py_err(e),
    }
}

/// Whether `e` refuses a dtype for the Python objects in it (records with object fields,
/// subarrays of objects): data NumPy pickles.
pub(crate) fn holds_objects(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::UnsupportedDtype { descr, .. } if descr.contains("|O"))
}

/// What `e`'s message says before what happened: the file and member it names
/// (`reading 'a.npz', member 'x.npy': `), or nothing.
pub(crate) fn context(e: &Error) -> String {
    let full = e.to_string();
    let what = e.kind().to_string();
    full.strip_suffix(what.as_str()).unwrap_or_default().to_string()
}

/// [`to_python`] for npy's own readers of headers (`crate::locate`: `npy.open`, `npy.dask`,
/// `npy.virtualizarr`), which take `max_header_size` but no `allow_pickle`: a long
/// header's message names the one argument there is.
pub(crate) fn to_python_without_pickle(e: Error) -> PyErr {
    if let ErrorKind::HeaderTooLarge { len, .. } = e.kind() {
        return PyValueError::new_err(format!(
            "{}{}\nTo allow loading, adjust `max_header_size`.",
            context(&e),
            header_too_large_first(*len)
        ));
    }
    to_python(e)
}

/// NumPy's message for a header of `len` bytes over `max_header_size`
/// (`_read_array_header` in `numpy/lib/_format_impl.py`, NumPy 2.4). NumPy counts the
/// header's characters, npy its bytes: they differ only for a format 3.0 header holding
/// characters beyond ASCII.
fn header_too_large(len: u64) -> String {
    format!(
        "{}\n\
         To allow loading, adjust `max_header_size` or fully trust the `.npy` file using `allow_pickle=True`.\n\
         For safety against large resource use or crashes, sandboxing may be necessary.",
        header_too_large_first(len)
    )
}

/// The first line of [`header_too_large`].
fn header_too_large_first(len: u64) -> String {
    format!("Header info length ({len}) is large and may not be safe to load securely.")
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
