//! Object arrays' values ↔ Python objects. Reading builds plain Python values from what
//! npy-core's restricted decoder gave; nothing here unpickles.

use npy_core::object::Object;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `value` as the Python value it was pickled from (NumPy scalars as the plain values of
/// the same number or text, as npy-core reads them).
///
/// # Errors
/// `TypeError` for a dict key Python cannot hash (which a crafted pickle may hold).
pub(crate) fn to_python(py: Python<'_>, value: Object) -> PyResult<Bound<'_, PyAny>> {
    Ok(match value {
        Object::None => py.None().into_bound(py),
        Object::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Object::Int(i) => i.into_pyobject(py)?.into_any(),
        Object::BigInt(text) => py.get_type::<PyInt>().call1((text,))?,
        Object::Float(f) => PyFloat::new(py, f).into_any(),
        Object::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any(),
        Object::Str(s) => PyString::new(py, &s).into_any(),
        Object::Bytes(b) => PyBytes::new(py, &b).into_any(),
        Object::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Object::Tuple(items) => {
            let items = items.into_iter().map(|item| to_python(py, item)).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        Object::Dict(pairs) => {
            let dict = PyDict::new(py);
            for (k, v) in pairs {
                dict.set_item(to_python(py, k)?, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
