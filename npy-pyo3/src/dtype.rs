//! npy's dtype model ↔ NumPy's dtype objects, walked field by field: a record becomes
//! the `np.dtype({'names', 'formats', 'titles', 'offsets', 'itemsize'})` that
//! `numpy.lib.format.descr_to_dtype` makes of its descr (so `np.load`'s dtype), and back.

use npy_core::dtype::{Field, Record};
use npy_core::{literal, DType};
use numpy::PyArrayDescr;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::error::py_err;

/// Deepest nesting of records and subarrays converted (npy-core refuses deeper descrs).
const MAX_DEPTH: usize = 64;

/// The NumPy dtype of `dtype`: what `np.load` gives for a file with this descr (titles,
/// offsets, padding and itemsize included).
///
/// # Errors
/// Any error NumPy raises building it.
///
/// # Examples
/// ```no_run
/// use npy_core::DType;
/// use numpy::PyArrayDescrMethods;
/// use pyo3::prelude::*;
///
/// Python::attach(|py| -> PyResult<()> {
///     let dtype: DType = "[('t0', '<f8'), ('id', '<i4')]".parse().map_err(npy_pyo3::py_err)?;
///     let numpy = npy_pyo3::to_numpy(py, &dtype)?;
///     assert_eq!(numpy.itemsize(), 12);
///     assert_eq!(npy_pyo3::from_numpy(&numpy)?, dtype);
///     Ok(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn to_numpy<'py>(py: Python<'py>, dtype: &DType) -> PyResult<Bound<'py, PyArrayDescr>> {
    let np_dtype = py.import("numpy")?.getattr("dtype")?;
    Ok(to_object(&np_dtype, dtype, 0)?.cast_into::<PyArrayDescr>()?)
}

/// `dtype` made by `np_dtype` (`numpy.dtype`).
fn to_object<'py>(np_dtype: &Bound<'py, PyAny>, dtype: &DType, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err(format!("dtype nested deeper than {MAX_DEPTH} levels")));
    }
    let py = np_dtype.py();
    match dtype {
        DType::Scalar(s) => np_dtype.call1((s.type_str(),)),
        DType::SubArray(a) => {
            // Nested as given: NumPy keeps `(('<f8', (5,)), (2,))` apart from `('<f8', (2, 5))`
            // (they are different dtypes; arrays of the one do not compare with the other).
            let base = to_object(np_dtype, a.base(), depth + 1)?;
            np_dtype.call1(((base, PyTuple::new(py, a.shape())?),))
        }
        DType::Record(r) => {
            let spec = PyDict::new(py);
            let fields = r.fields();
            let names = PyList::new(py, fields.iter().map(|f| f.name.as_str()))?;
            let formats = PyList::empty(py);
            let titles = PyList::empty(py);
            for f in fields {
                formats.append(to_object(np_dtype, &f.dtype, depth + 1)?)?;
                match &f.title {
                    Some(title) => titles.append(py.import("ast")?.getattr("literal_eval")?.call1((title.repr(),))?)?,
                    None => titles.append(py.None())?,
                }
            }
            spec.set_item("names", names)?;
            spec.set_item("formats", formats)?;
            spec.set_item("titles", titles)?;
            spec.set_item("offsets", PyList::new(py, fields.iter().map(|f| f.offset))?)?;
            spec.set_item("itemsize", r.itemsize())?;
            np_dtype.call1((spec,))
        }
    }
}

/// npy's model of a NumPy dtype: names, titles, offsets, itemsize, byte orders and
/// subarrays, as `np.save` would write it.
///
/// # Errors
/// `TypeError` for dtypes a `.npy` header cannot describe without pickling: object fields
/// in records, NumPy 2's `StringDType` and other dtypes of new-style classes.
pub fn from_numpy(dtype: &Bound<'_, PyArrayDescr>) -> PyResult<DType> {
    from_object(dtype.as_any(), 0)
}

fn from_object(dtype: &Bound<'_, PyAny>, depth: usize) -> PyResult<DType> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err(format!("dtype nested deeper than {MAX_DEPTH} levels")));
    }
    let names = dtype.getattr("names")?;
    if names.is_none() {
        let sub = dtype.getattr("subdtype")?;
        if !sub.is_none() {
            let (base, shape): (Bound<'_, PyAny>, Vec<usize>) = sub.extract()?;
            return DType::subarray(from_object(&base, depth + 1)?, shape).map_err(py_err);
        }
        let text: String = dtype.getattr("str")?.extract()?;
        return text.parse::<DType>().map_err(|e| PyTypeError::new_err(format!("dtype {text}: {e}")));
    }
    let fields_map = dtype.getattr("fields")?;
    let mut fields = Vec::new();
    for name in names.try_iter()? {
        let name = name?;
        let entry = fields_map.get_item(&name)?;
        let field_dtype = from_object(&entry.get_item(0)?, depth + 1)?;
        let offset: usize = entry.get_item(1)?.extract()?;
        let title = match entry.len()? {
            3 => {
                let repr = entry.get_item(2)?.repr()?.to_string();
                Some(literal::parse(&repr).map_err(|e| PyTypeError::new_err(format!("field title {repr}: {e}")))?)
            }
            _ => None,
        };
        fields.push(Field { title, ..Field::new(name.extract::<String>()?, field_dtype, offset) });
    }
    // NumPy keeps fields in the order they were given; a header lists them by offset.
    fields.sort_by_key(|f| f.offset);
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    Ok(DType::Record(Record::new(fields, itemsize).map_err(|e| PyTypeError::new_err(e.to_string()))?))
}
