//! Object arrays built by CPython's unpickler, once npy-core's restricted decoder has
//! checked their pickle ([`CheckedPickle`]): the array `np.load` gives (NumPy scalar
//! types, shared values and `StringDType` included), at the C unpickler's speed. The
//! unpickler can name only the globals the decoder allows (`npy_core::object::globals`),
//! so even a pickle the check wrongly passed could call nothing else.

use npy_core::object::{globals, CheckedPickle};
use pyo3::ffi::c_str;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyFrozenSet, PyTuple};

/// The restricted unpickler's module, made once.
static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
/// `globals()` as a frozenset of `(module, name)`.
static ALLOWED: PyOnceLock<Py<PyFrozenSet>> = PyOnceLock::new();

const CODE: &std::ffi::CStr = c_str!(
    r#"
import io
import pickle


class Unpickler(pickle.Unpickler):
    """CPython's unpickler, naming only the globals in `allowed`."""

    def __init__(self, data, allowed):
        # np.load's settings for pickles of Python 2.
        super().__init__(io.BytesIO(data), fix_imports=True, encoding="ASCII")
        self.allowed = allowed

    def find_class(self, module, name):
        if (module, name) not in self.allowed:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")


def loads(data, allowed):
    return Unpickler(data, allowed).load()
"#
);

/// The array of `pickle`, checked already.
pub(crate) fn load<'py>(py: Python<'py>, pickle: CheckedPickle) -> PyResult<Bound<'py, PyAny>> {
    let module = MODULE.get_or_try_init(py, || {
        PyModule::from_code(py, CODE, c_str!("npy/_unpickle.py"), c_str!("npy._unpickle")).map(Bound::unbind)
    })?;
    let allowed = ALLOWED.get_or_try_init(py, || {
        let pairs = globals().map(|(module, name)| PyTuple::new(py, [module, name])).collect::<PyResult<Vec<_>>>()?;
        PyFrozenSet::new(py, &pairs).map(Bound::unbind)
    })?;
    let data = PyBytes::new(py, pickle.bytes());
    module.bind(py).getattr("loads")?.call1((data, allowed.bind(py)))
}
