//! Object arrays (and NumPy 2's `StringDType` arrays, which NumPy pickles) from `.npy`
//! files and file objects: their pickle checked by npy-core's restricted decoder, then
//! built by CPython's restricted unpickler ([`crate::unpickle`]).

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use npy_core::header::Header;
use npy_core::object::{CheckProgress, GrowingPickle, SparseCheck};
use npy_core::{Error, ReadOptions};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::LoadArgs;
use crate::errors::to_python;
use crate::unpickle::{build, Approval, FinishGuard, PickleArgs, SparseData, Store};

/// Payloads of `BINBYTES`/`BINBYTES8` at least this long (an array's data, as `np.save`
/// of a dict of arrays writes) are left out of the pickle read to check, and read from the
/// file once, straight into the bytes CPython's unpickler makes of them.
const GAP_FROM: u64 = 64 << 10;

/// The object array of the `.npy` file at `path`, open as `file`, whose header (`header`, data at
/// `offset`) has been read, loaded as `args` ask (their read options sized by the file's
/// length).
///
/// The check reads the pickle from the file as it goes (`npy_core::object::GrowingPickle`),
/// on a second thread while CPython's unpickler builds what it has approved, without the
/// content of its long bytes payloads: the check sees their lengths, and the unpickler
/// reads their content from the file, once, when it makes them; the opcodes it runs are
/// the bytes the check read, never read again. A check that needs a payload's content
/// (rare: a NumPy scalar's or a `bytearray`'s) starts over on the whole pickle.
pub(crate) fn load_path<'py>(
    py: Python<'py>,
    path: &Path,
    file: std::fs::File,
    header: Header,
    offset: u64,
    args: &LoadArgs,
) -> PyResult<Bound<'py, PyAny>> {
    let io = |e: std::io::Error| to_python(Error::from(e).reading(path));
    let len = file.metadata().map_err(io)?.len();
    let (options, args) = (&args.read_options(Some(len)), &args.pickle);
    let most = len.saturating_sub(offset);
    let growing = GrowingPickle::new(most, GAP_FROM).map_err(io)?;
    let data = Bound::new(py, SparseData { pickle: growing })?;
    let pickle = Pickle::Sparse { data: &data, file: Arc::new(file), base: offset, most };
    if let Built::Array(array, _) = check_and_build(py, pickle, &header, options, args, Some(path))? {
        return Ok(array);
    }
    // The check needs a payload it left out: the whole pickle, in memory. Python's FileIO
    // reads the rest of the file into a bytes object it sizes from the file's length,
    // without first zeroing it (half the time of a zeroed PyBytes).
    let file = py.import("io")?.getattr("FileIO")?.call1((path, "rb"))?;
    let read = file.call_method1("seek", (offset,)).and_then(|_| file.call_method0("readall"));
    file.call_method0("close")?;
    let data = read?.cast_into::<PyBytes>()?;
    check_and_build(py, Pickle::Bytes(&data), &header, options, args, Some(path))?.array()
}

/// The object array at a file object's position (after the header, `header`), leaving
/// the file right after its pickle, as `pickle.load` does, when it can seek back to there
/// (the rest of the file is read to check the pickle).
pub(crate) fn load_file<'py>(
    py: Python<'py>,
    file: &Bound<'py, PyAny>,
    header: &Header,
    options: &ReadOptions,
    args: &PickleArgs,
    name: Option<&Path>,
) -> PyResult<Bound<'py, PyAny>> {
    let start: Option<u64> = match file.call_method0("seekable").and_then(|s| s.is_truthy()) {
        Ok(true) => Some(file.call_method0("tell")?.extract()?),
        _ => None,
    };
    let rest = file.call_method0("read")?;
    let data = match rest.cast_into::<PyBytes>() {
        Ok(bytes) => bytes,
        Err(other) => PyBytes::new(py, &other.into_inner().extract::<Vec<u8>>()?),
    };
    let (array, len) = check_and_build(py, Pickle::Bytes(&data), header, options, args, name)?.into_pair()?;
    if let Some(start) = start.filter(|_| len < data.as_bytes().len()) {
        file.call_method1("seek", (start + len as u64,))?;
    }
    Ok(array)
}

/// Pickles at least this long are checked on a second thread while CPython builds the
/// parts already approved (when there is a second CPU); shorter ones are checked first.
const PIPELINE_FROM: usize = 64 << 10;

/// A pickle to check and build: whole in memory, or read by the check from `file` (where
/// it starts at `base`, with `most` bytes after) into `data`, without its long bytes
/// payloads.
enum Pickle<'a, 'py> {
    Bytes(&'a Bound<'py, PyBytes>),
    Sparse { data: &'a Bound<'py, SparseData>, file: Arc<std::fs::File>, base: u64, most: u64 },
}

/// What [`check_and_build`] made.
enum Built<'py> {
    /// The array, and the pickle's length.
    Array(Bound<'py, PyAny>, usize),
    /// The check of a sparse pickle needs a payload left out: check the whole pickle.
    NeedsWhole,
}

impl<'py> Built<'py> {
    fn into_pair(self) -> PyResult<(Bound<'py, PyAny>, usize)> {
        match self {
            Built::Array(array, len) => Ok((array, len)),
            Built::NeedsWhole => {
                Err(pyo3::exceptions::PyRuntimeError::new_err("npy's pickle check needed bytes it was given"))
            }
        }
    }

    fn array(self) -> PyResult<Bound<'py, PyAny>> {
        self.into_pair().map(|(array, _)| array)
    }
}

/// The array of the pickle `pickle`, the pickle of an object array whose header is
/// `header`, and the pickle's length: checked by npy-core's restricted decoder, built by
/// CPython's restricted unpickler from what the check approved. Bytes after the pickle
/// are not read, as `np.load` ignores them. Errors name `name`.
fn check_and_build<'py>(
    py: Python<'py>,
    pickle: Pickle<'_, 'py>,
    header: &Header,
    options: &ReadOptions,
    args: &PickleArgs,
    name: Option<&Path>,
) -> PyResult<Built<'py>> {
    // The pickle's length, or the most it can be.
    let len = match &pickle {
        Pickle::Bytes(data) => data.as_bytes().len(),
        Pickle::Sparse { most, .. } => usize::try_from(*most)
            .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("a pickle longer than memory"))?,
    };
    // What the check reads (shared with its thread: no Python object).
    let input = match &pickle {
        Pickle::Bytes(data) => Input::Bytes(data.as_bytes()),
        Pickle::Sparse { data, file, base, .. } => Input::File(&data.get().pickle, file, *base),
    };
    let located = |e: Error| match name {
        Some(path) => e.reading(path),
        None => e,
    };
    let check = |approval: &Approval| -> Result<usize, Refusal> {
        let mut guard = FinishGuard { approval, len, finished: false };
        let (mut refusal, mut cancelled) = (None, false);
        let report = |progress: CheckProgress<'_>| match progress {
            CheckProgress::Checked(n) => {
                if approval.approve(n) {
                    ControlFlow::Continue(())
                } else {
                    cancelled = true;
                    ControlFlow::Break(())
                }
            }
            CheckProgress::Passed { shape, len } => {
                if shape != header.shape {
                    refusal = Some(Refusal::Shape(shape.to_vec()));
                } else {
                    guard.finished = true;
                    approval.finish(true, len);
                }
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Continue(()),
        };
        let checked = match input {
            Input::Bytes(bytes) => {
                npy_core::object::check_pickle_prefix_with(bytes, report, options).map(SparseCheck::Passed)
            }
            Input::File(growing, mut reader, base) => std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(base))
                .map_err(Error::from)
                .and_then(|_| npy_core::object::check_growing_pickle_with(growing, reader, report, options)),
        };
        match (checked, refusal) {
            (Err(_), _) if cancelled => Err(Refusal::Cancelled),
            (Err(e), _) => Err(Refusal::Pickle(e)),
            (Ok(SparseCheck::Passed(_)), Some(refusal)) => Err(refusal),
            (Ok(SparseCheck::Passed(checked)), None) => Ok(checked.len),
            (Ok(_), _) => Err(Refusal::NeedsWhole),
        }
    };
    let store = || match &pickle {
        Pickle::Bytes(data) => Store::Bytes((*data).clone().unbind()),
        Pickle::Sparse { data, file, base, most } => {
            Store::Sparse { data: (*data).clone().unbind(), file: Arc::clone(file), base: *base, most: *most }
        }
    };
    let parallel = len >= PIPELINE_FROM && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let approval = Arc::new(Approval::default());
    let (checked, built) = if parallel {
        std::thread::scope(|s| {
            let checker = s.spawn(|| check(&approval));
            let built = build(py, store(), Arc::clone(&approval), args);
            if built.is_err() {
                approval.cancel();
            }
            // The checker never takes the GIL: joining it while holding the GIL is safe.
            let checked = checker.join().unwrap_or_else(|_| Err(Refusal::Panicked));
            (checked, built)
        })
    } else {
        let checked = py.detach(|| check(&approval));
        let built = if checked.is_ok() {
            build(py, store(), Arc::clone(&approval), args)
        } else {
            Ok(py.None().into_bound(py))
        };
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
        Err(Refusal::NeedsWhole) => Ok(Built::NeedsWhole),
        Err(Refusal::Cancelled) => Err(built
            .err()
            .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("npy's pickle check stopped unexpectedly"))),
        Ok(len) => built.map(|array| Built::Array(array, len)),
    }
}

/// The bytes the check reads: in memory, or from a file (at an offset) as it goes.
#[derive(Clone, Copy)]
enum Input<'a> {
    Bytes(&'a [u8]),
    File(&'a GrowingPickle, &'a std::fs::File, u64),
}

/// Why the check refused a pickle.
enum Refusal {
    Pickle(Error),
    /// The pickle's array has this shape, not the header's.
    Shape(Vec<usize>),
    /// The unpickler stopped first (with its own error), so the check stopped too.
    Cancelled,
    /// The checking thread panicked (a bug).
    Panicked,
    /// A sparse check needs the content of a payload left out.
    NeedsWhole,
}

/// A shape as Python prints the tuple.
fn tuple_repr(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}
