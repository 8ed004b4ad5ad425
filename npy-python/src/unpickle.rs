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
//! run it and every opcode before it. Of a pickle the check reads from its file as it
//! goes, leaving out its long bytes payloads ([`SparseData`]), the feeder serves the
//! opcodes from the bytes the check read and reads a payload's content from the file only
//! when the unpickler asks for it (its length is the checked opcode's), straight into the
//! bytes object the unpickler makes.

use std::ffi::c_int;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use npy_core::object::{globals, GrowingPickle};
use pyo3::exceptions::{PyUnicodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyFrozenSet, PySlice, PyTuple};

/// The restricted unpickler's module (`python/npy/_unpickle.py`), imported once.
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
pub(crate) fn set_safe_globals(names: Vec<(String, String)>) {
    *SAFE_GLOBALS.lock().unwrap_or_else(PoisonError::into_inner) = names;
}

/// The restricted unpickler's module.
fn module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    MODULE.get_or_try_init(py, || py.import("npy._unpickle").map(Bound::unbind)).map(|m| m.bind(py))
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
    /// The approved length a waiting reader waits for (0 while none waits): approvals
    /// short of it do not wake it.
    awaited: usize,
}

impl Approval {
    /// An approval of all of `len` bytes, checked already.
    pub(crate) fn whole(len: usize) -> Approval {
        Approval {
            state: Mutex::new(State { approved: len, done: Some(true), cancelled: false, awaited: 0 }),
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
            if state.awaited != 0 && n >= state.awaited {
                self.changed.notify_all();
            }
        }
        !state.cancelled
    }

    /// The unpickler stopped: the check need not go on.
    pub(crate) fn cancel(&self) {
        self.lock().cancelled = true;
    }

    /// Gives the bytes approved and whether the check failed: at once when at least `want`
    /// bytes are approved or the check has ended, else once `ahead` bytes (at least `want`)
    /// are or it has ended, waiting without the GIL.
    fn wait_for(&self, py: Python<'_>, want: usize, ahead: usize) -> (usize, bool) {
        {
            let state = self.lock();
            if state.approved >= want || state.done.is_some() {
                return (state.approved, state.done == Some(false));
            }
        }
        let ahead = ahead.max(want);
        let ready = |s: &State| s.approved >= ahead || s.done.is_some();
        py.detach(|| {
            let mut state = self.lock();
            state.awaited = ahead;
            let mut state = self.changed.wait_while(state, |s| !ready(s)).unwrap_or_else(PoisonError::into_inner);
            state.awaited = 0;
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

/// How far past its position the unpickler, once it has caught up with the check, waits
/// for the check to approve before it goes on, woken only then (or when the check ends):
/// woken for every approval (each 64 KiB checked) instead, a load of 300,000 strs (8 MB of
/// pickle) made 170 to 250 `futex` calls and as many thread switches.
const WAIT_AHEAD: usize = 256 << 10;

/// A pickle the check reads as it goes, its long bytes payloads left out
/// (`npy_core::object::GrowingPickle`), its bytes read so far exported to Python
/// read-only, so the [`Feeder`] hands out views of them.
#[pyclass(module = "npy._npy", name = "_SparsePickle", frozen)]
pub(crate) struct SparseData {
    pub(crate) pickle: GrowingPickle,
}

#[pymethods]
impl SparseData {
    /// The bytes read so far as a read-only buffer (CPython's buffer protocol).
    ///
    /// # Safety
    /// `view` must be a `Py_buffer` CPython passes to `bf_getbuffer`. The bytes never
    /// change once read (more may follow them, never in their place; the class is frozen
    /// and owns them), and `PyBuffer_FillInfo` keeps this object alive as long as the
    /// view, so the pointer stays valid.
    #[allow(unsafe_code)]
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let bytes = slf.get().pickle.bytes();
        // SAFETY: as above; a writable request is refused by PyBuffer_FillInfo (readonly 1).
        let filled = unsafe {
            pyo3::ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                bytes.as_ptr().cast_mut().cast(),
                bytes.len() as pyo3::ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }
}

/// The bytes a [`Feeder`] serves: a whole pickle, or a sparse one whose gaps it reads from
/// the file.
pub(crate) enum Store {
    Bytes(Py<PyBytes>),
    Sparse {
        data: Py<SparseData>,
        /// The file, and the offset of the pickle's first byte in it.
        file: Arc<std::fs::File>,
        base: u64,
        /// What is left of the file from there: the most the pickle can be.
        most: u64,
    },
}

/// Where a position of the pickle is.
enum Place {
    /// In the kept bytes at this index, in a run that ends (in the pickle) at `end`.
    Kept { index: usize, end: usize },
    /// In a gap, which ends at `end`.
    Gap { end: usize },
}

/// The file CPython's unpickler reads: the pickle's bytes, as far as the check approved
/// them. `peek` gives all approved bytes ahead (up to a gap), so the unpickler works in
/// place on them as `pickle.loads` does on bytes, calling back only when it has used them
/// up. The opcodes are only ever the bytes the check read; a gap's content (the payload
/// of a long bytes, whose length the check has approved) is read from the file when the
/// unpickler asks for it, straight into the bytes object it makes (`readinto`), without
/// the GIL.
#[pyclass(module = "npy._npy", name = "_Feeder", frozen)]
pub(crate) struct Feeder {
    store: Store,
    /// The pickle's length, or for a sparse one (read as it is checked) the most it can
    /// be: what is left of its file. The check approves no more than the pickle.
    len: usize,
    position: Mutex<usize>,
    approval: Arc<Approval>,
}

impl Feeder {
    pub(crate) fn new(py: Python<'_>, store: Store, approval: Arc<Approval>) -> PyResult<Feeder> {
        let len = match &store {
            Store::Bytes(data) => data.bind(py).as_bytes().len(),
            Store::Sparse { most, .. } => usize::try_from(*most)
                .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("a pickle longer than memory"))?,
        };
        Ok(Feeder { store, len, position: Mutex::new(0), approval })
    }

    /// The bytes kept in memory.
    fn kept<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        match &self.store {
            Store::Bytes(data) => data.bind(py).as_bytes(),
            Store::Sparse { data, .. } => data.get().pickle.bytes(),
        }
    }

    fn place(&self, pos: usize) -> Place {
        let Store::Sparse { data, .. } = &self.store else { return Place::Kept { index: pos, end: self.len } };
        data.get().pickle.with_gaps(|gaps| {
            let pos64 = pos as u64;
            let i = gaps.partition_point(|g| g.at + g.len <= pos64);
            if let Some(g) = gaps.get(i).filter(|g| g.at <= pos64) {
                // Ends within the pickle's length, a usize.
                return Place::Gap { end: (g.at + g.len) as usize };
            }
            let index = match i.checked_sub(1).map(|j| gaps[j]) {
                Some(g) => g.kept + (pos - (g.at + g.len) as usize),
                None => pos,
            };
            // (A gap past the approved bytes may not be known yet: no read reaches it.)
            let end = gaps.get(i).map_or(self.len, |g| g.at as usize);
            Place::Kept { index, end }
        })
    }

    fn position(&self) -> usize {
        *self.position.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A view of bytes `start..end` (no copy), when they are all kept (one run).
    fn view<'py>(&self, py: Python<'py>, start: usize, end: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let index = match self.place(start) {
            Place::Kept { index, end: run } if end <= run => index,
            _ if start == end => 0,
            _ => return Ok(None),
        };
        let data = match &self.store {
            Store::Bytes(data) => data.bind(py).clone().into_any(),
            Store::Sparse { data, .. } => data.bind(py).clone().into_any(),
        };
        let view = py.import("builtins")?.getattr("memoryview")?.call1((data,))?;
        view.get_item(PySlice::new(py, index as isize, (index + end - start) as isize, 1)).map(Some)
    }

    /// Bytes `start..end` as a view when they are kept, else as new bytes (a gap's read
    /// from the file).
    fn bytes<'py>(&self, py: Python<'py>, start: usize, end: usize) -> PyResult<Bound<'py, PyAny>> {
        if let Some(view) = self.view(py, start, end)? {
            return Ok(view);
        }
        PyBytes::new_with(py, end - start, |buf| self.fill(py, start, buf)).map(Bound::into_any)
    }

    /// Fills `out` with the bytes from `start`: kept ones copied, a gap's read from the
    /// file without the GIL.
    fn fill(&self, py: Python<'_>, start: usize, out: &mut [u8]) -> PyResult<()> {
        let (mut pos, mut done) = (start, 0);
        while done < out.len() {
            let want = out.len() - done;
            match self.place(pos) {
                Place::Kept { index, end } => {
                    let n = want.min(end - pos);
                    if n == 0 {
                        return Err(PyValueError::new_err("npy read past the pickle's end"));
                    }
                    out[done..done + n].copy_from_slice(&self.kept(py)[index..index + n]);
                    done += n;
                    pos += n;
                }
                Place::Gap { end } => {
                    let Store::Sparse { file, base, .. } = &self.store else {
                        return Err(PyValueError::new_err("npy read a gap of a whole pickle"));
                    };
                    let n = want.min(end - pos);
                    let target = &mut out[done..done + n];
                    let offset = base + pos as u64;
                    // Into a new bytes object of CPython's, whose pages may be fresh.
                    let read = py.detach(|| npy_core::fill_prefaulting(target, |t| read_at(file, t, offset)));
                    match read {
                        Ok(got) if got == n => {}
                        Ok(got) => {
                            let (start, len) = self.gap_around(pos);
                            return Err(pyo3::exceptions::PyEOFError::new_err(format!(
                                "the file ended {} bytes into a {len}-byte payload of its pickle: it was cut short \
                                 while npy loaded it",
                                pos + got - start
                            )));
                        }
                        Err(e) => return Err(e.into()),
                    }
                    done += n;
                    pos += n;
                }
            }
        }
        Ok(())
    }

    /// Where the gap at `pos` starts, and its length.
    fn gap_around(&self, pos: usize) -> (usize, u64) {
        let Store::Sparse { data, .. } = &self.store else { return (pos, 0) };
        data.get().pickle.with_gaps(|gaps| {
            gaps.iter()
                .find(|g| g.at <= pos as u64 && (pos as u64) < g.at + g.len)
                .map_or((pos, 0), |g| (g.at as usize, g.len))
        })
    }

    /// Waits for `want` more bytes at the position; gives the end of what can be handed out.
    fn available(&self, py: Python<'_>, want: usize) -> PyResult<(usize, usize)> {
        let start = self.position();
        let need = start.saturating_add(want).min(self.len);
        let ahead = start.saturating_add(want.max(WAIT_AHEAD)).min(self.len);
        let (approved, failed) = self.approval.wait_for(py, need, ahead);
        if failed && approved <= start {
            return Err(pyo3::exceptions::PyValueError::new_err("the pickle was refused by npy's check"));
        }
        Ok((start, approved.min(self.len)))
    }

    fn advance(&self, to: usize) {
        *self.position.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

/// Reads into `out` from `offset` until it is full or the file ends; gives how much.
fn read_at(file: &std::fs::File, out: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < out.len() {
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(file, &mut out[done..], offset + done as u64);
        #[cfg(windows)]
        let read = std::os::windows::fs::FileExt::seek_read(file, &mut out[done..], offset + done as u64);
        match read {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[pymethods]
impl Feeder {
    /// Up to `size` approved bytes (all that remain for -1), moving past them.
    #[pyo3(signature = (size=-1))]
    fn read<'py>(&self, py: Python<'py>, size: isize) -> PyResult<Bound<'py, PyAny>> {
        let want = if size < 0 { self.len } else { size as usize };
        let (start, end) = self.available(py, want)?;
        let end = end.min(start.saturating_add(want));
        let bytes = self.bytes(py, start, end)?;
        self.advance(end);
        Ok(bytes)
    }

    /// Fills `buffer` with approved bytes; gives how many.
    fn readinto(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let target = pyo3::buffer::PyBuffer::<u8>::get(buffer)?;
        let want = target.item_count();
        let (start, end) = self.available(py, want)?;
        let end = end.min(start + want);
        let n = end - start;
        match self.place(start) {
            Place::Kept { index, end: run } if end <= run => {
                let data = &self.kept(py)[index..index + n];
                if n == want {
                    target.copy_from_slice(py, data)?;
                } else {
                    // A short read: the rest of the buffer is the caller's.
                    let partial = PyBytes::new(py, data);
                    buffer.set_item(PySlice::new(py, 0, n as isize, 1), partial)?;
                }
            }
            _ => {
                if target.readonly() || !target.is_c_contiguous() {
                    return Err(PyValueError::new_err("readinto needs a writable contiguous buffer"));
                }
                // SAFETY: `target` holds the buffer exported (so it stays alive and
                // unresized) and is writable and contiguous, of `want` >= `n` bytes; CPython's
                // unpickler gives its own new bytes object, which nothing else sees, and
                // any caller's buffer is written as `io.FileIO.readinto` writes it, without
                // the GIL.
                #[allow(unsafe_code)]
                let out = unsafe { std::slice::from_raw_parts_mut(target.buf_ptr().cast::<u8>(), n) };
                self.fill(py, start, out)?;
            }
        }
        self.advance(end);
        Ok(n)
    }

    /// The approved bytes up to and including the next newline (lines are never in gaps).
    fn readline<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut want = 1;
        loop {
            let (start, end) = self.available(py, want)?;
            let (index, run) = match self.place(start) {
                Place::Kept { index, end } => (index, end),
                Place::Gap { .. } => (0, start),
            };
            let end = end.min(run);
            let data = &self.kept(py)[index..index + (end - start)];
            if let Some(nl) = data.iter().position(|&b| b == b'\n') {
                self.advance(start + nl + 1);
                return self.bytes(py, start, start + nl + 1);
            }
            if end >= self.len || end == run || end - start < want {
                // No newline in what there will ever be (or the check stopped there).
                self.advance(end);
                return self.bytes(py, start, end);
            }
            want = end - start + 1;
        }
    }

    /// All approved bytes ahead up to a gap, without moving (at least one, unless at the
    /// end; in a gap, up to 64 KiB of it).
    #[pyo3(signature = (_size=0))]
    fn peek<'py>(&self, py: Python<'py>, _size: isize) -> PyResult<Bound<'py, PyAny>> {
        let (start, end) = self.available(py, 1)?;
        let end = match self.place(start) {
            Place::Kept { end: run, .. } => end.min(run),
            Place::Gap { end: gap } => end.min(gap).min(start + (64 << 10)),
        };
        self.bytes(py, start, end)
    }
}

/// Builds the value of `data`, a pickle approved through `approval`, with CPython's
/// restricted unpickler. On failure the unpickler's own exception is returned (the
/// caller raises the check's instead when the check failed), with `np.load`'s wording
/// for text that does not decode.
pub(crate) fn build<'py>(
    py: Python<'py>,
    data: Store,
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
    let feeder = Bound::new(py, Feeder::new(py, data, approval)?)?;
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
    let data = PyBytes::new(py, pickle).unbind();
    build(py, Store::Bytes(data), Arc::new(Approval::whole(pickle.len())), args)
}

/// `np.load`'s refusal of object arrays under `allow_pickle=False`.
pub(crate) fn refused_by_allow_pickle() -> PyErr {
    PyValueError::new_err("Object arrays cannot be loaded when allow_pickle=False")
}
