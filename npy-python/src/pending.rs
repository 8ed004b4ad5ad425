//! npy-core's pending directories ([`npy_core::pending::PendingDir`]) for the Python
//! writers that write a file at a hidden name first: `to_npy` (beside its target) and the
//! spool of an upload (in the temporary directory). A killed writer's directory is removed
//! by the next one of its kind, told by its free lock, so Python lists no directory.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::errors::to_python;

/// A hidden directory `.{target's name}{infix}XXXXXX` beside `target`, locked while it
/// lives; [`PendingDir::close`] (or leaving its `with` block) removes it and what it holds.
#[pyclass(module = "npy._npy", name = "PendingDir")]
pub(crate) struct PendingDir {
    dir: Option<npy_core::pending::PendingDir>,
    path: PathBuf,
}

#[pymethods]
impl PendingDir {
    /// Creates it, first removing the directories of `infix` beside `target` whose
    /// writers are gone.
    #[new]
    fn new(py: Python<'_>, target: PathBuf, infix: &str) -> PyResult<PendingDir> {
        let dir = py.detach(|| npy_core::pending::PendingDir::create(&target, infix)).map_err(to_python)?;
        let path = dir.path().to_path_buf();
        Ok(PendingDir { dir: Some(dir), path })
    }

    /// The directory's path, a `str`.
    #[getter]
    fn path(&self) -> std::ffi::OsString {
        self.path.clone().into_os_string()
    }

    /// Removes the directory and what it holds (nothing after the first call).
    fn close(&mut self, py: Python<'_>) {
        if let Some(dir) = self.dir.take() {
            py.detach(|| drop(dir));
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }
}
