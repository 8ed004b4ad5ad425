//! npy's errors as Python exceptions.

use std::io;

use npy_core::{Error, ErrorKind};
use pyo3::exceptions::{
    PyBlockingIOError, PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyNotADirectoryError, PyOSError,
    PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::{PyErr, PyTypeInfo};

/// `e` as the exception Python code expects, its message npy's (which names the file and
/// the npz member):
/// - file system errors are `OSError`s, the subclass their kind has in Python
///   (`FileNotFoundError`, `PermissionError`, ...), with `errno` and `filename` set;
/// - a dtype that cannot be read as the Rust type asked for (a record field missing or of
///   another kind) is a `TypeError` naming the field;
/// - anything else wrong with a file (its header, dtype, shape, length, pickle) is a
///   `ValueError`, as `np.load` raises.
///
/// # Examples
/// ```no_run
/// use npy_core::prelude::*;
/// use pyo3::prelude::*;
///
/// #[pyfunction]
/// fn load_speeds(path: std::path::PathBuf) -> PyResult<Vec<f64>> {
///     Vec::<f64>::read_npy(&path).map_err(npy_pyo3::py_err)
/// }
/// ```
pub fn py_err(e: Error) -> PyErr {
    let message = e.to_string();
    let filename = e.path().map(|p| p.display().to_string());
    match e.kind() {
        ErrorKind::Io(io) => match io.kind() {
            io::ErrorKind::NotFound => os::<PyFileNotFoundError>(io, message, filename),
            io::ErrorKind::PermissionDenied => os::<PyPermissionError>(io, message, filename),
            io::ErrorKind::AlreadyExists => os::<PyFileExistsError>(io, message, filename),
            io::ErrorKind::IsADirectory => os::<PyIsADirectoryError>(io, message, filename),
            io::ErrorKind::NotADirectory => os::<PyNotADirectoryError>(io, message, filename),
            io::ErrorKind::WouldBlock => os::<PyBlockingIOError>(io, message, filename),
            _ => os::<PyOSError>(io, message, filename),
        },
        ErrorKind::DtypeMismatch { .. } => PyTypeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// An `OSError` of class `E`: `E(errno, message, filename)` with the system's errno, or
/// the errno of the error's kind when npy made the error itself (a directory refused before
/// it was opened is `EISDIR`, as opening it would have said); else `E(message)`.
fn os<E: PyTypeInfo>(io: &io::Error, message: String, filename: Option<String>) -> PyErr {
    let errno = io.raw_os_error().or(match io.kind() {
        io::ErrorKind::NotFound => Some(libc::ENOENT),
        io::ErrorKind::PermissionDenied => Some(libc::EACCES),
        io::ErrorKind::AlreadyExists => Some(libc::EEXIST),
        io::ErrorKind::IsADirectory => Some(libc::EISDIR),
        io::ErrorKind::NotADirectory => Some(libc::ENOTDIR),
        _ => None,
    });
    match errno {
        Some(errno) => PyErr::new::<E, _>((errno, message, filename)),
        None => PyErr::new::<E, _>((message,)),
    }
}
