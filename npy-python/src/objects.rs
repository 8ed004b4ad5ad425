//! Object arrays (and NumPy 2's `StringDType` arrays, which NumPy pickles) from `.npy`
//! files and file objects: their pickle checked by npy-core's restricted decoder, then
//! built by CPython's restricted unpickler ([`crate::unpickle`]).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use npy_core::header::Header;
use npy_core::{Error, ReadOptions};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_python;
use crate::unpickle::{build, Approval, FinishGuard, PickleArgs};

/// The object array of the `.npy` file at `path`, whose header (`header`, data at
/// `offset`) has been read.
pub(crate) fn load_path<'py>(
    py: Python<'py>,
    path: &Path,
    header: Header,
    offset: u64,
    options: &ReadOptions,
    args: &PickleArgs,
) -> PyResult<Bound<'py, PyAny>> {
    let located = |e: Error| to_python(e.reading(path));
    let mut file = py.detach(|| npy_core::open_file(path)).map_err(located)?;
    let len = py.detach(|| file.metadata()).map_err(|e| located(e.into()))?.len();
    let pickle_len = usize::try_from(len.saturating_sub(offset))
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err(format!("{}: too large for memory", path.display())))?;
    let data = PyBytes::new_with(py, pickle_len, |buf| {
        py.detach(|| -> npy_core::Result<()> {
            use std::io::Seek;
            file.seek(std::io::SeekFrom::Start(offset))?;
            file.read_exact(buf)?;
            Ok(())
        })
        .map_err(located)
    })?;
    check_and_build(py, &data, &header, options, args, Some(path))
}

/// The object array at a file object's position (after the header, `header`), leaving
/// the file after its pickle.
pub(crate) fn load_file<'py>(
    py: Python<'py>,
    file: &Bound<'py, PyAny>,
    header: &Header,
    options: &ReadOptions,
    args: &PickleArgs,
    name: Option<&Path>,
) -> PyResult<Bound<'py, PyAny>> {
    let rest: Vec<u8> = file.call_method0("read")?.extract()?;
    let data = PyBytes::new(py, &rest);
    check_and_build(py, &data, header, options, args, name)
}

/// Pickles at least this long are checked on a second thread while CPython builds the
/// parts already approved (when there is a second CPU); shorter ones are checked first.
const PIPELINE_FROM: usize = 64 << 10;

/// The array of `data`, the pickle of an object array whose header is `header`: checked
/// by npy-core's restricted decoder, built by CPython's restricted unpickler from what the
/// check approved. Errors name `name`.
fn check_and_build<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    header: &Header,
    options: &ReadOptions,
    args: &PickleArgs,
    name: Option<&Path>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = data.as_bytes();
    let len = bytes.len();
    let located = |e: Error| match name {
        Some(path) => e.reading(path),
        None => e,
    };
    let check = |approval: &Approval| -> Result<(), Refusal> {
        let mut guard = FinishGuard { approval, len, finished: false };
        let shape = npy_core::object::check_pickle(bytes, options).map_err(Refusal::Pickle)?;
        if shape != header.shape {
            return Err(Refusal::Shape(shape));
        }
        guard.finished = true;
        approval.finish(true, len);
        Ok(())
    };
    let parallel = len >= PIPELINE_FROM && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let approval = Arc::new(Approval::default());
    let (checked, built) = if parallel {
        std::thread::scope(|s| {
            let checker = s.spawn(|| check(&approval));
            let built = build(py, data, Arc::clone(&approval), args);
            if built.is_err() {
                approval.cancel();
            }
            // The checker never takes the GIL: joining it while holding the GIL is safe.
            let checked = checker.join().unwrap_or_else(|_| Err(Refusal::Panicked));
            (checked, built)
        })
    } else {
        let checked = py.detach(|| check(&approval));
        let built =
            if checked.is_ok() { build(py, data, Arc::clone(&approval), args) } else { Ok(py.None().into_bound(py)) };
        (checked, built)
    };
    match checked {
        Err(Refusal::Pickle(e)) => Err(to_python(located(e))),
        Err(Refusal::Shape(shape)) => {
            let what = name.map_or_else(String::new, |p| format!("{}: ", p.display()));
            let message = format!(
                "{what}the pickle's array has shape {}, but the header says {}",
                tuple_repr(&shape),
                tuple_repr(&header.shape)
            );
            Err(crate::errors::unsafe_pickle(py, message))
        }
        Err(Refusal::Panicked) => {
            Err(pyo3::exceptions::PyRuntimeError::new_err("npy's pickle check failed unexpectedly"))
        }
        Ok(()) => built,
    }
}

/// Why the check refused a pickle.
enum Refusal {
    Pickle(Error),
    /// The pickle's array has this shape, not the header's.
    Shape(Vec<usize>),
    /// The checking thread panicked (a bug).
    Panicked,
}

/// A shape as Python prints the tuple.
fn tuple_repr(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}
