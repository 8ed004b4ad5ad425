//! The archive behind `npy.NpzFile`: an `.npz` opened by path, from a file object, or at a
//! URL (npy-store's `RemoteNpz`: its directory from the archive's tail, each member by one
//! ranged GET, inflated and checked against its CRC-32 as its bytes arrive), its members
//! read when asked for (the Python class around it gives NumPy's `NpzFile`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use npy_core::header::FileKind;
use npy_core::npz::{MemberInfo, Method, Reader, ReaderOptions};
use npy_core::object::CheckedPickle;
use npy_core::{DynArray, ErrorKind, NpyReader, ReadNpy, ReadOptions, Result};
use npy_store::RemoteNpz;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::args::LoadArgs;
use crate::arrays::{from_dyn, memmap};
use crate::errors::to_python;
use crate::pyfile::{name_of, PyFile};
use crate::remote::{named, ObjectStart};
use crate::unpickle::load_checked;
use npy_store::shared_runtime;

/// A member as read: an array of any dtype but objects, an object array's checked
/// pickle, or the bytes of a member that is not a `.npy` file.
pub(crate) enum Member {
    /// And whether its header needed Python 2's syntax (NumPy warns).
    Array(DynArray, bool),
    Objects(CheckedPickle, bool),
    Raw(Vec<u8>),
}

impl ReadNpy for Member {
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        let python2 = reader.python2_header();
        if reader.header().dtype.has_object() {
            reader.read().map(|pickle| Member::Objects(pickle, python2))
        } else {
            reader.read().map(|array| Member::Array(array, python2))
        }
    }
}

/// The open archive, by path (members may be read on several threads, and mapped),
/// through a Python file object, or at a URL.
enum Source {
    Path(Reader<BufReader<File>>),
    File(Reader<BufReader<PyFile>>),
    Url(Box<Remote>),
}

/// Runs `$body` with `$reader` bound to the open archive's npy-core reader (a path's or a
/// file object's), or `$url` with the remote archive.
macro_rules! with_source {
    ($source:expr, $reader:ident => $body:expr, $remote:ident => $url:expr) => {
        match $source {
            Source::Path($reader) => $body,
            Source::File($reader) => $body,
            Source::Url($remote) => $url,
        }
    };
}

/// An archive at a URL, read through npy-store.
struct Remote {
    npz: RemoteNpz,
    url: String,
    /// The options of its members' headers and pickles.
    options: ReadOptions,
}

impl Remote {
    /// The zip name of member `name` (a name of `names()`).
    fn member_of<'a>(&'a self, name: &'a str) -> &'a str {
        MemberInfo::find(self.npz.members(), name).map_or(name, |m| m.member.as_str())
    }

    /// Member `name` as [`read_member`] reads it: its bytes by one ranged GET, inflated
    /// and checked (size, CRC-32) as they arrive, then read.
    fn read_member(&self, name: &str, objects: bool) -> Result<Option<Member>> {
        let bytes = shared_runtime()?.block_on(self.npz.member_bytes(name)).map_err(|e| named(e, &self.url))?;
        let located = |e: npy_core::Error| named(e.in_member(self.member_of(name)), &self.url);
        member_of_bytes(&bytes, objects, &self.options).map_err(located)
    }

    /// Every member, several fetched at once (npy-store's [`RemoteNpz::read_all`]).
    fn read_all(&self) -> Result<Vec<Member>> {
        shared_runtime()?.block_on(self.npz.read_all()).map_err(|e| named(e, &self.url))
    }
}

/// Every member as read at once, or `None` when a member is not a `.npy` file (the
/// members are then read one by one, which gives such a member's raw bytes).
fn read_at_once(all: Result<Vec<Member>>) -> Result<Option<Vec<Member>>> {
    match all {
        Err(e) if matches!(e.kind(), ErrorKind::Format { .. }) => Ok(None),
        other => other.map(Some),
    }
}

/// A member's `bytes` (all of it, checked) read as [`read_member`] reads one: its raw
/// bytes when it is not a `.npy` file; `None` for an object array when `objects` is false.
fn member_of_bytes(bytes: &[u8], objects: bool, options: &ReadOptions) -> Result<Option<Member>> {
    let raw = || Ok(Some(Member::Raw(bytes.to_vec())));
    let not_npy = FileKind::of(bytes) != FileKind::Npy;
    // The bytes are in memory: a header claiming more data than they hold is a truncation
    // error, never an allocation.
    let reader = match NpyReader::from_reader_with(bytes, options) {
        Err(e) if matches!(e.kind(), ErrorKind::Format { .. }) && not_npy => return raw(),
        other => other?,
    };
    if !objects && reader.header().dtype.has_object() {
        return Ok(None);
    }
    match Member::from_npy_reader(reader) {
        Err(e) if matches!(e.kind(), ErrorKind::Format { .. }) && not_npy => raw(),
        other => other.map(Some),
    }
}

/// Member `name` of `reader`: read, or its raw bytes when it is not a `.npy` file (as
/// `NpzFile.__getitem__` gives them), refusing object arrays when `objects` is false.
fn read_member<R: Read + Seek>(reader: &mut Reader<R>, name: &str, objects: bool) -> Result<Option<Member>> {
    if !objects && reader.npy(name).is_ok_and(|npy| npy.header().dtype.has_object()) {
        return Ok(None);
    }
    match reader.read::<Member>(name) {
        Err(e) if matches!(e.kind(), ErrorKind::Format { .. }) && !reader.is_npy(name)? => {
            reader.read_raw(name).map(|raw| Some(Member::Raw(raw)))
        }
        other => other.map(Some),
    }
}

/// An `.npz` archive, its members read lazily: the engine of `npy.NpzFile`.
#[pyclass(module = "npy._npy", frozen)]
pub(crate) struct NpzReader {
    /// The archive's path (for maps and messages), if opened by path.
    path: Option<PathBuf>,
    /// What errors call the archive: its path, or a file object's name.
    label: String,
    names: Vec<String>,
    infos: HashMap<String, MemberInfo>,
    args: LoadArgs,
    source: Mutex<Option<Source>>,
}

impl NpzReader {
    fn options(args: &LoadArgs, file_len: Option<u64>) -> ReaderOptions {
        let mut options = ReaderOptions::new();
        options.read_options(&args.read_options(file_len));
        options
    }

    fn new(path: Option<PathBuf>, label: String, mut source: Source, args: &LoadArgs) -> Result<NpzReader> {
        let (names, members) = with_source!(&mut source,
            reader => (reader.names().to_vec(), reader.members()),
            remote => (remote.npz.names().to_vec(), remote.npz.members()));
        let infos = members.iter().map(|m| (m.name.clone(), m.clone())).collect();
        Ok(NpzReader { path, label, names, infos, args: args.clone(), source: Mutex::new(Some(source)) })
    }

    /// The archive at a URL, opened by [`ObjectStart::open`]: its directory read and checked by
    /// npy-store's `RemoteNpz` (one ranged GET of its tail, more for big directories).
    pub(crate) fn open_url(py: Python<'_>, opened: ObjectStart, args: &LoadArgs) -> PyResult<NpzReader> {
        let size = opened.size();
        let options = NpzReader::options(args, Some(size));
        let url = opened.url;
        py.detach(|| {
            let at = npy_store::store_for(&url).map_err(|e| named(e, &url))?;
            let npz = RemoteNpz::from_store_with(at.store, &at.path, &options);
            let npz = shared_runtime()?.block_on(npz).map_err(|e| named(e, &url))?;
            let options = args.read_options(Some(size));
            let remote = Remote { npz, url: url.clone(), options };
            NpzReader::new(None, url.clone(), Source::Url(Box::new(remote)), args)
        })
        .map_err(to_python)
    }

    /// The archive at `path`.
    pub(crate) fn open_path(py: Python<'_>, path: PathBuf, args: &LoadArgs) -> PyResult<NpzReader> {
        let file = py.detach(|| npy_core::open_file(&path));
        NpzReader::open_opened(py, file.map_err(to_python)?, path, args)
    }

    /// The archive in `file`, open already (as `npy.load` found it), at `path`.
    pub(crate) fn open_opened(py: Python<'_>, file: File, path: PathBuf, args: &LoadArgs) -> PyResult<NpzReader> {
        let options = NpzReader::options(args, file.metadata().ok().map(|m| m.len()));
        let label = path.display().to_string();
        py.detach(|| {
            let reader = Reader::from_file_with(file, &path, &options)?;
            NpzReader::new(Some(path), label, Source::Path(reader), args)
        })
        .map_err(to_python)
    }

    /// The archive in a file object (which is read where this reader needs it, whoever
    /// else moves it in between).
    pub(crate) fn open_file(py: Python<'_>, file: &Bound<'_, PyAny>, args: &LoadArgs) -> PyResult<NpzReader> {
        let name = name_of(file);
        let label = name.as_ref().map_or_else(|| "the archive".to_string(), |n| n.display().to_string());
        let options = NpzReader::options(args, None);
        let open = |adapter: PyFile| {
            let adapter = BufReader::with_capacity(64 << 10, adapter);
            py.detach(|| {
                let reader = Reader::from_reader_with(adapter, &options);
                let reader = reader.map_err(|e| if let Some(path) = &name { e.reading(path) } else { e })?;
                NpzReader::new(None, label.clone(), Source::File(reader), args)
            })
        };
        // An archive's offsets count from the file's start (zipfile writing after other
        // data), or from where the archive starts, which is where the caller put the file
        // (an archive copied after other data): zipfile reads both, and so does this.
        let start: u64 = file.call_method0("tell")?.extract()?;
        match open(PyFile::with_own_position(file)?) {
            Err(e) if start > 0 && matches!(e.kind(), ErrorKind::Npz { .. }) => {
                open(PyFile::based_at(file, start)).map_err(|_| to_python(e))
            }
            opened => opened.map_err(to_python),
        }
    }

    /// `f` of the open archive, run with the GIL released (and the lock taken without it,
    /// so that a thread waiting for the lock never holds the GIL this one needs back: a
    /// file object's reads take it).
    fn with_source<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Source) -> Result<T> + Send) -> PyResult<T> {
        let result = py.detach(|| {
            let mut guard = self.source.lock().unwrap_or_else(PoisonError::into_inner);
            guard.as_mut().map(f)
        });
        match result {
            Some(result) => result.map_err(|e| self.args.error(e)),
            None => Err(PyValueError::new_err(format!("{}: the archive is closed", self.label))),
        }
    }

    fn info(&self, name: &str) -> PyResult<&MemberInfo> {
        self.infos.get(name).ok_or_else(|| PyKeyError::new_err(format!("{name} is not a file in the archive")))
    }

    /// Member `name` mapped in place, if it can be: a stored array (not of objects) of an
    /// archive opened by path, under a map mode.
    fn mapped<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (Some(mode), Some(path)) = (self.args.mmap_mode, &self.path) else { return Ok(None) };
        let info = self.info(name)?;
        let (Some(Method::Stored), Some(start)) = (&info.compression, info.data_start) else { return Ok(None) };
        let header = self.with_source(py, |source| {
            with_source!(source, reader => {
                let npy = reader.npy(name)?;
                Ok((npy.header().clone(), npy.data_offset() as u64))
            }, _remote => Err(std::io::Error::other("an archive at a URL is not mapped").into()))
        });
        let Ok((header, offset)) = header else {
            // Not a .npy member (or a bad one): read, to give its bytes or its error.
            return Ok(None);
        };
        if header.dtype.has_object() {
            return Ok(None);
        }
        if mode == "r+" {
            return Err(PyValueError::new_err(format!(
                "{}: mmap_mode 'r+' would change member {} without its CRC-32; use 'r' or 'c'",
                self.label, info.member
            )));
        }
        let file = PyString::new(py, &path.to_string_lossy());
        memmap(file.as_any(), &header, start + offset, mode).map(Some)
    }

    fn to_python<'py>(&self, py: Python<'py>, member: Option<Member>) -> PyResult<Bound<'py, PyAny>> {
        match member {
            None => Err(crate::unpickle::refused_by_allow_pickle()),
            Some(Member::Array(array, python2)) => {
                if python2 {
                    crate::errors::warn_python2_header(py)?;
                }
                from_dyn(py, array)
            }
            Some(Member::Objects(pickle, python2)) => {
                if python2 {
                    crate::errors::warn_python2_header(py)?;
                }
                load_checked(py, pickle.bytes(), &self.args.pickle)
            }
            Some(Member::Raw(bytes)) => Ok(PyBytes::new(py, &bytes).into_any()),
        }
    }
}

#[pymethods]
impl NpzReader {
    /// The arrays' names (member names with `.npy` stripped), in the archive's order.
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The members' names in the zip, in the archive's order.
    fn members(&self) -> Vec<String> {
        self.names.iter().map(|n| self.infos[n].member.clone()).collect()
    }

    /// Member `name` (a name of `names()`): mapped when it can be, else read.
    fn get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.info(name)?;
        if let Some(mapped) = self.mapped(py, name)? {
            return Ok(mapped);
        }
        let objects = self.args.allow_pickle != Some(false);
        let member = self.with_source(py, |source| {
            with_source!(source,
                reader => read_member(reader, name, objects),
                remote => remote.read_member(name, objects))
        })?;
        self.to_python(py, member)
    }

    /// Every member, in the archive's order, as a dict. Members are read several at once
    /// (one thread per CPU, deflated ones inflated in parallel) from an archive opened by
    /// path, fetched several at once from one at a URL; under a map mode, stored members
    /// are mapped instead.
    fn load_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let parallel = self.args.mmap_mode.is_none() && self.args.allow_pickle != Some(false);
        // A member that is not a .npy file fails the parallel read: then one by one.
        let all = if parallel {
            self.with_source(py, |source| match source {
                Source::Path(reader) => read_at_once(reader.read_all::<Member>()),
                Source::File(_) => Ok(None),
                Source::Url(remote) => read_at_once(remote.read_all()),
            })?
        } else {
            None
        };
        match all {
            Some(members) => {
                for (name, member) in self.names.iter().zip(members) {
                    dict.set_item(name, self.to_python(py, Some(member))?)?;
                }
            }
            None => {
                for name in &self.names {
                    dict.set_item(name, self.get(py, name)?)?;
                }
            }
        }
        Ok(dict)
    }

    /// Closes the archive's file (a path's; a file object stays the caller's). Members
    /// mapped already stay valid.
    fn close(&self, py: Python<'_>) {
        // Waits (without the GIL) for a read under way in another thread.
        let source = py.detach(|| self.source.lock().unwrap_or_else(PoisonError::into_inner).take());
        drop(source);
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| self.source.lock().unwrap_or_else(PoisonError::into_inner).is_none())
    }
}
