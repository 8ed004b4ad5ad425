//! Object arrays built by CPython's unpickler from bytes npy-core's restricted decoder has
//! checked: the array `np.load` gives (NumPy scalar types, shared values and
//! `StringDType` included), at the C unpickler's speed. The unpickler can name only the
//! globals the decoder allows (`npy_core::object::globals`), so even a pickle the check
//! wrongly passed could call nothing else.
//!
//! The unpickler reads through a [`Feeder`], which hands it only bytes the check has
//! approved: the whole pickle once it has been checked whole, or, while a second thread
//! checks it, each prefix of opcodes the check has executed ([`Approval`]). The last bytes
//! (the `STOP` opcode) are released only when the whole check has passed, so no array is
//! ever returned from a pickle the check refuses, and no opcode runs before the check has
//! run it and every opcode before it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use npy_core::object::globals;
use pyo3::exceptions::{PyUnicodeError, PyValueError};
use pyo3::ffi::c_str;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyFrozenSet, PySlice, PyTuple};

/// The restricted unpickler's module, made once.
static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
/// `globals()` as a frozenset of `(module, name)`.
static ALLOWED: PyOnceLock<Py<PyFrozenSet>> = PyOnceLock::new();
/// The user's safe globals (`npy.add_safe_globals`, `npy.safe_globals`): `(module,
/// qualified name)` of classes whose code the user trusts to run while loading.
static SAFE_GLOBALS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The safe globals now in force.
pub(crate) fn safe_globals() -> Vec<(String, String)> {
    SAFE_GLOBALS.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Replaces the safe globals (the Python package keeps the objects and their order).
#[pyfunction]
pub(crate) fn _set_safe_globals(names: Vec<(String, String)>) {
    *SAFE_GLOBALS.lock().unwrap_or_else(PoisonError::into_inner) = names;
}

const CODE: &std::ffi::CStr = c_str!(
    r#"
import gc
import pickle


def load(unpickler):
    """`unpickler.load()` with the cyclic garbage collector paused: the values are plain,
    and collections while a million tuples are made would only walk them again and again
    (a pickle that builds a cycle on purpose is collected once the collector runs again)."""
    if not gc.isenabled():
        return unpickler.load()
    gc.disable()
    try:
        return unpickler.load()
    finally:
        gc.enable()


class Unpickler(pickle.Unpickler):
    """CPython's unpickler, naming only the globals in `allowed`."""

    def __init__(self, file, allowed, fix_imports, encoding):
        super().__init__(file, fix_imports=fix_imports, encoding=encoding)
        self.allowed = allowed

    def find_class(self, module, name):
        if (module, name) not in self.allowed:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")

"#
);

/// The module above.
fn module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    MODULE
        .get_or_try_init(py, || {
            PyModule::from_code(py, CODE, c_str!("npy/_unpickle.py"), c_str!("npy._unpickle")).map(Bound::unbind)
        })
        .map(|m| m.bind(py))
}

/// How `np.load` tells the unpickler to read Python 2 pickles: its `fix_imports` and
/// `encoding` arguments.
#[derive(Debug, Clone)]
pub(crate) struct PickleArgs {
    pub(crate) fix_imports: bool,
    pub(crate) encoding: String,
    /// The safe globals in force when the load began (both the check and the unpickler
    /// take these, whatever changes meanwhile).
    pub(crate) safe_globals: Vec<(String, String)>,
}

/// What the check has approved so far, shared by the thread that checks and the [`Feeder`]
/// the unpickler reads.
#[derive(Debug, Default)]
pub(crate) struct Approval {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Leading bytes the check has run every opcode of.
    approved: usize,
    /// Set when the check ended: `true` when it passed (then every byte is approved).
    done: Option<bool>,
    /// The unpickler stopped reading: the check may stop too.
    cancelled: bool,
}

impl Approval {
    /// An approval of all of `len` bytes, checked already.
    pub(crate) fn whole(len: usize) -> Approval {
        Approval {
            state: Mutex::new(State { approved: len, done: Some(true), cancelled: false }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The check ended: passed (all `len` bytes approved) or failed.
    pub(crate) fn finish(&self, passed: bool, len: usize) {
        let mut state = self.lock();
        if passed {
            state.approved = len;
        }
        state.done = Some(passed);
        self.changed.notify_all();
    }

    /// The check has run every opcode in the first `n` bytes: they may be unpickled.
    /// `false` once the unpickler has stopped, so the check can stop too.
    pub(crate) fn approve(&self, n: usize) -> bool {
        let mut state = self.lock();
        if n > state.approved {
            state.approved = n;
            self.changed.notify_all();
        }
        !state.cancelled
    }

    /// The unpickler stopped: the check need not go on.
    pub(crate) fn cancel(&self) {
        self.lock().cancelled = true;
    }

    /// Waits (without the GIL) until at least `want` bytes are approved or the check has
    /// ended; gives the bytes approved then and whether the check failed.
    fn wait_for(&self, py: Python<'_>, want: usize) -> (usize, bool) {
        let ready = |s: &State| s.approved >= want || s.done.is_some();
        {
            let state = self.lock();
            if ready(&state) {
                return (state.approved, state.done == Some(false));
            }
        }
        py.detach(|| {
            let state = self.changed.wait_while(self.lock(), |s| !ready(s)).unwrap_or_else(PoisonError::into_inner);
            (state.approved, state.done == Some(false))
        })
    }
}

/// Marks the check failed if its thread ends without saying how it ended (a panic), so no
/// reader waits for it forever.
pub(crate) struct FinishGuard<'a> {
    pub(crate) approval: &'a Approval,
    pub(crate) len: usize,
    pub(crate) finished: bool,
}

impl Drop for FinishGuard<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.approval.finish(false, self.len);
        }
    }
}

/// The file CPython's unpickler reads: the pickle's bytes, as far as the check approved
/// them. `peek` gives all approved bytes ahead, so the unpickler works in place on them as
/// `pickle.loads` does on bytes, calling back only when it has used them up.
#[pyclass(module = "npy._npy", name = "_Feeder", frozen)]
pub(crate) struct Feeder {
    data: Py<PyBytes>,
    len: usize,
    position: Mutex<usize>,
    approval: Arc<Approval>,
}

impl Feeder {
    pub(crate) fn new(data: &Bound<'_, PyBytes>, approval: Arc<Approval>) -> Feeder {
        Feeder { data: data.clone().unbind(), len: data.as_bytes().len(), position: Mutex::new(0), approval }
    }

    fn position(&self) -> usize {
        *self.position.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A view of bytes `start..end` (no copy).
    fn view<'py>(&self, py: Python<'py>, start: usize, end: usize) -> PyResult<Bound<'py, PyAny>> {
        let view = py.import("builtins")?.getattr("memoryview")?.call1((self.data.bind(py),))?;
        view.get_item(PySlice::new(py, start as isize, end as isize, 1))
    }

    /// Waits for `want` more bytes at the position; gives the end of what can be handed out.
    fn available(&self, py: Python<'_>, want: usize) -> PyResult<(usize, usize)> {
        let start = self.position();
        let (approved, failed) = self.approval.wait_for(py, start.saturating_add(want).min(self.len));
        if failed && approved <= start {
            return Err(pyo3::exceptions::PyValueError::new_err("the pickle was refused by npy's check"));
        }
        Ok((start, approved.min(self.len)))
    }

    fn advance(&self, to: usize) {
        *self.position.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

#[pymethods]
impl Feeder {
    /// Up to `size` approved bytes (all that remain for -1), moving past them.
    #[pyo3(signature = (size=-1))]
    fn read<'py>(&self, py: Python<'py>, size: isize) -> PyResult<Bound<'py, PyAny>> {
        let want = if size < 0 { self.len } else { size as usize };
        let (start, end) = self.available(py, want)?;
        let end = end.min(start.saturating_add(want));
        self.advance(end);
        self.view(py, start, end)
    }

    /// Fills `buffer` with approved bytes; gives how many.
    fn readinto(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let target = pyo3::buffer::PyBuffer::<u8>::get(buffer)?;
        let want = target.item_count();
        let (start, end) = self.available(py, want)?;
        let end = end.min(start + want);
        let n = end - start;
        let data = self.data.bind(py).as_bytes();
        if n == want {
            target.copy_from_slice(py, &data[start..end])?;
        } else {
            // A short read: the rest of the buffer is the caller's.
            let partial = PyBytes::new(py, &data[start..end]);
            buffer.set_item(PySlice::new(py, 0, n as isize, 1), partial)?;
        }
        self.advance(end);
        Ok(n)
    }

    /// The approved bytes up to and including the next newline.
    fn readline<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let data = self.data.bind(py).as_bytes();
        let mut want = 1;
        loop {
            let (start, end) = self.available(py, want)?;
            if let Some(nl) = data[start..end].iter().position(|&b| b == b'\n') {
                self.advance(start + nl + 1);
                return self.view(py, start, start + nl + 1);
            }
            if end >= self.len || end - start < want {
                // No newline in what there will ever be (or the check stopped there).
                self.advance(end);
                return self.view(py, start, end);
            }
            want = end - start + 1;
        }
    }

    /// All approved bytes ahead, without moving (at least one, unless at the end).
    #[pyo3(signature = (_size=0))]
    fn peek<'py>(&self, py: Python<'py>, _size: isize) -> PyResult<Bound<'py, PyAny>> {
        let (start, end) = self.available(py, 1)?;
        self.view(py, start, end)
    }
}

/// Builds the value of `data`, a pickle approved through `approval`, with CPython's
/// restricted unpickler. On failure the unpickler's own exception is returned (the
/// caller raises the check's instead when the check failed), with `np.load`'s wording
/// for text that does not decode.
pub(crate) fn build<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    approval: Arc<Approval>,
    args: &PickleArgs,
) -> PyResult<Bound<'py, PyAny>> {
    let allowed = ALLOWED.get_or_try_init(py, || {
        let pairs = globals().map(|(module, name)| PyTuple::new(py, [module, name])).collect::<PyResult<Vec<_>>>()?;
        PyFrozenSet::new(py, &pairs).map(Bound::unbind)
    })?;
    // The check that approved these bytes took the safe globals of `args`: the same here.
    let allowed = if args.safe_globals.is_empty() {
        allowed.bind(py).clone()
    } else {
        let extra = args.safe_globals.iter().map(|(m, n)| PyTuple::new(py, [m, n])).collect::<PyResult<Vec<_>>>()?;
        let all = pyo3::types::PySet::new(py, &extra)?;
        for pair in allowed.bind(py).iter() {
            all.add(pair)?;
        }
        PyFrozenSet::new(py, all.iter())?
    };
    let feeder = Bound::new(py, Feeder::new(data, approval))?;
    let unpickler =
        module(py)?.getattr("Unpickler")?.call1((feeder, &allowed, args.fix_imports, args.encoding.as_str()))?;
    module(py)?.getattr("load")?.call1((unpickler,)).map_err(|e| {
        if e.is_instance_of::<PyUnicodeError>(py) {
            // np.load's message (numpy/lib/_format_impl.py, read_array).
            let text = format!(
                "Unpickling a python object failed: {}\nYou may need to pass the encoding= option to numpy.load",
                e.value(py).repr().map(|r| r.to_string()).unwrap_or_default()
            );
            let wrapped = PyUnicodeError::new_err(text);
            wrapped.set_cause(py, Some(e));
            return wrapped;
        }
        e
    })
}

/// The array of a pickle checked whole already.
pub(crate) fn load_checked<'py>(py: Python<'py>, pickle: &[u8], args: &PickleArgs) -> PyResult<Bound<'py, PyAny>> {
    let data = PyBytes::new(py, pickle);
    build(py, &data, Arc::new(Approval::whole(pickle.len())), args)
}

/// `np.load`'s refusal of object arrays under `allow_pickle=False`.
pub(crate) fn refused_by_allow_pickle() -> PyErr {
    PyValueError::new_err("Object arrays cannot be loaded when allow_pickle=False")
}
