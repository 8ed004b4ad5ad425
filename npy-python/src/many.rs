//! [`load_many`], `npy.load_many`'s engine: plain arrays ([`crate::plain`]) read on
//! threads with the GIL released, the rest by [`crate::load`]'s general way under the GIL,
//! which gives NumPy's results, exceptions and warnings.

use std::path::PathBuf;

use npy_core::{DynArray, Loader, ReadOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::args::LoadArgs;
use crate::arrays::Arrays;
use crate::load::{load_path, load_url, path_of, Loaded};
use crate::plain::{read_plain, read_plain_url};

/// One file of a `load_many`, as the threads take it.
enum Input {
    Path(PathBuf),
    Url(String),
}

/// `npy.load_many(files, mmap_mode=..., threads=...)`: every file as `npy.load(file,
/// mmap_mode)` gives it, in order. Plain arrays are read on up to `threads` threads (the
/// CPUs this process may use) with the GIL released; the rest (maps, archives, object
/// arrays, errors) then one by one the general way. Every file is tried; if any fails,
/// the first failing one's exception is raised, with a note naming it and one naming each
/// other failure.
pub(crate) fn load_many(
    py: Python<'_>,
    files: &Bound<'_, PyList>,
    args: &LoadArgs,
    threads: Option<usize>,
) -> PyResult<Vec<Py<PyAny>>> {
    let mut inputs = Vec::with_capacity(files.len());
    for file in files.iter() {
        let input = match file.cast::<PyString>().map(|s| s.to_str()) {
            Ok(Ok(s)) if npy_store::is_url(s) => Input::Url(s.to_string()),
            _ => Input::Path(path_of(&file)?),
        };
        inputs.push(input);
    }
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
    };
    let made = if args.mmap_mode.is_some() {
        inputs.iter().map(|_| None).collect()
    } else {
        let options = args.read_options(None);
        py.detach(|| read_and_make(&inputs, &options, threads))
    };
    let mut loaded = Vec::with_capacity(made.len());
    let mut failed: Vec<(usize, PyErr)> = Vec::new();
    for (index, (made, file)) in made.into_iter().zip(files.iter()).enumerate() {
        let one = match (made, &inputs[index]) {
            (Some(made), _) => made,
            (None, Input::Url(url)) => load_url(py, url, args, false).and_then(|l| into_object(py, l)),
            (None, Input::Path(_)) => load_path(py, &file, args).and_then(|l| into_object(py, l)),
        };
        match one {
            Ok(object) => loaded.push(object),
            Err(e) => {
                failed.push((index, e));
                loaded.push(py.None());
            }
        }
    }
    if failed.is_empty() {
        return Ok(loaded);
    }
    Err(first_failure(py, files, failed))
}

/// Inputs the calling thread reads between turns at making arrays of those read.
const READ_PER_TURN: usize = 16;

/// Reads every plain input on up to `threads` threads (this one too:
/// [`npy_store::many::in_order`]) and makes their NumPy arrays as they come: the calling
/// thread takes the GIL between its reads to make those of every input read so far in
/// order, so that making arrays (under the GIL, one thread) overlaps the other threads'
/// reads. `None` where an input is not plain, failed, or its read panicked (left to the
/// general way), or its array could not be made.
fn read_and_make(inputs: &[Input], options: &ReadOptions, threads: usize) -> Vec<Option<PyResult<Py<PyAny>>>> {
    let mut made = Vec::with_capacity(inputs.len());
    let read = |index: usize, loader: &mut Option<Loader>| match &inputs[index] {
        Input::Path(path) => read_plain(path, loader.get_or_insert_with(|| Loader::new_with(options))),
        Input::Url(url) => read_plain_url(url, options),
    };
    let make = |ready: Vec<Option<Option<DynArray>>>| {
        Python::attach(|py| {
            let mut arrays = Arrays::default();
            for array in ready {
                made.push(array.flatten().map(|a| arrays.array(py, a).map(Bound::unbind)));
            }
        });
    };
    npy_store::many::in_order(inputs.len(), threads, READ_PER_TURN, read, make);
    made
}

/// What `npy.load` gives for a loaded file (an archive as the engine's `NpzReader`, which
/// the package wraps in its `NpzFile`).
fn into_object(py: Python<'_>, loaded: Loaded<'_>) -> PyResult<Py<PyAny>> {
    match loaded {
        Loaded::Array(array) => Ok(array.unbind()),
        Loaded::Archive(reader) => Ok(Bound::new(py, *reader)?.into_any().unbind()),
    }
}

/// The exception `load_many` raises: the first failure's own, with notes naming its file
/// and every other failure.
fn first_failure(py: Python<'_>, files: &Bound<'_, PyList>, failed: Vec<(usize, PyErr)>) -> PyErr {
    let name =
        |index: usize| files.get_item(index).and_then(|f| f.repr()).map_or_else(|_| "?".to_string(), |r| r.to_string());
    let count = failed.len();
    let mut failed = failed.into_iter();
    let Some((index, first)) = failed.next() else { return PyValueError::new_err("no failure") };
    let total = files.len();
    let mut notes =
        vec![format!("npy.load_many: files[{index}] ({}) failed; {count} of {total} files failed", name(index))];
    for (other, e) in failed {
        notes.push(format!("npy.load_many: files[{other}] ({}) failed too: {}", name(other), describe(py, &e)));
    }
    let value = first.value(py);
    for note in notes {
        // A note that cannot be added leaves the exception as it is.
        let _ = value.call_method1("add_note", (note,));
    }
    first
}

/// `e` as a line: its type's name and message.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map_or_else(|_| "Exception".to_string(), |n| n.to_string());
    format!("{kind}: {}", e.value(py))
}
