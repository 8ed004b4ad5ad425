//! `np.load`: a path, a URL or a file object to an array, a map, or an archive
//! ([`NpzReader`]).
//!
//! Reads of paths and URLs run with the GIL released (npy-core's readers; a URL's bytes
//! fetched by npy-store's object stores); reads of file objects call the file's
//! `read`/`readinto` as `np.load` does, reading exactly the array's bytes so the file is
//! left right after it.

use std::path::{Path, PathBuf};

use npy_core::header::{shape_repr, FileKind, Header};
use npy_core::object::CheckedPickle;
use npy_core::{DynArray, ErrorKind, NpyReader, Opened, ReadOptions};
use npy_pyo3::to_numpy;
use pyo3::exceptions::{PyEOFError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};

use crate::args::LoadArgs;
use crate::arrays::{from_dyn, memmap};
use crate::errors::to_python;
use crate::npz::NpzReader;
use crate::objects;
use crate::plain::with_loader;
use crate::pyfile::{name_of, PyFile};
use crate::remote::{named, ObjectStart};
use crate::unpickle::load_checked;

/// What `np.load` gives: an array (or `np.memmap`), or an archive.
pub(crate) enum Loaded<'py> {
    Array(Bound<'py, PyAny>),
    Archive(Box<NpzReader>),
}

/// `np.load(file, ...)` of a path: `file` is the path as the caller gave it (a `str`, or a
/// `pathlib.Path`, which a map's `filename` keeps, as NumPy's does). One call of npy-core's
/// [`Loader::open`] (this thread's, [`with_loader`]) opens the file once, tells what it
/// holds and reads a `.npy` array whole; what comes back is converted here.
pub(crate) fn load_path<'py>(py: Python<'py>, file: &Bound<'py, PyAny>, args: &LoadArgs) -> PyResult<Loaded<'py>> {
    let path = path_of(file)?;
    let options = args.read_options(None);
    let read_data = args.mmap_mode.is_none();
    let opened = py.detach(|| {
        with_loader(&options, |loader| loader.open(&path, read_data).map(|opened| (opened, loader.python2_header())))
    });
    let (opened, python2) = match opened {
        Ok(found) => found,
        Err(e) if args.mmap_mode.is_some() => return Err(map_error(&path, e)),
        Err(e) => return Err(load_error(e, args)),
    };
    if python2 {
        crate::errors::warn_python2_header(py)?;
    }
    match opened {
        Opened::Array(array) => from_dyn(py, array).map(Loaded::Array),
        Opened::Npy(reader) => {
            let (header, offset) = (reader.header().clone(), reader.data_offset() as u64);
            let opened = reader.into_inner().into_inner();
            if let Some(mode) = args.mmap_mode {
                drop(opened);
                if header.dtype.has_object() {
                    return Err(unmappable(&path));
                }
                return memmap(file, &header, offset, mode).map(Loaded::Array);
            }
            // An object array (the only `.npy` not read whole): its pickle, checked.
            args.objects_allowed()?;
            objects::load_path(py, &path, opened, header, offset, args).map(Loaded::Array)
        }
        Opened::Archive(file) => NpzReader::open_opened(py, file, path, args).map(|r| Loaded::Archive(Box::new(r))),
        Opened::Empty => Err(PyEOFError::new_err("No data left in file")),
        Opened::Other => Err(pickle_file(args, &path.display().to_string())),
    }
}

/// The path `file` names (a `str`, `bytes` or path-like). An ASCII `str` is taken as it
/// is: PyO3's `PathBuf` extraction (`os.fspath`, then encoded in the file system's
/// encoding) costs a microsecond a file, a fifth of loading a small one, and gives the same
/// bytes for ASCII in every encoding Python allows; any other goes that way.
pub(crate) fn path_of(file: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    match file.cast::<pyo3::types::PyString>().map(|s| s.to_str()) {
        Ok(Ok(s)) if s.is_ascii() => Ok(PathBuf::from(s)),
        _ => file.extract(),
    }
}

/// NumPy's exception for `e`, met loading the `.npy` file at `path` (not mapped).
fn load_error(e: npy_core::Error, args: &LoadArgs) -> PyErr {
    if let Some(short) = short_header(&e) {
        return short;
    }
    match e.kind() {
        ErrorKind::Truncated { .. } => truncated_path(e),
        _ => args.error(e),
    }
}

/// `np.load(url, ...)` of an object in a store (`s3://`, `gs://`, `az://`, `http(s)://`,
/// `file://`): one ranged GET of its first bytes says what it is and how large; a `.npy`'s
/// data then come by one more GET (none for a small one), read as a file object of the
/// same bytes is read (NumPy's messages for a short file); an archive is opened through
/// npy-store's `RemoteNpz` (`npz`: refuse anything else as an archive, `load_npz`).
pub(crate) fn load_url<'py>(py: Python<'py>, url: &str, args: &LoadArgs, npz: bool) -> PyResult<Loaded<'py>> {
    let opened = py.detach(|| ObjectStart::open(url)).map_err(to_python)?;
    let magic = FileKind::of(&opened.prefix[..opened.prefix.len().min(FileKind::PROBE_LEN)]);
    match magic {
        FileKind::Zip => NpzReader::open_url(py, opened, args).map(|r| Loaded::Archive(Box::new(r))),
        _ if npz => NpzReader::open_url(py, opened, args).map(|r| Loaded::Archive(Box::new(r))),
        FileKind::Empty => Err(PyEOFError::new_err("No data left in file")),
        FileKind::Other => Err(pickle_file(args, url)),
        FileKind::Npy => read_npy_at(py, opened, args).map(Loaded::Array),
    }
}

/// The `.npy` array of an object opened at a URL.
fn read_npy_at<'py>(py: Python<'py>, opened: ObjectStart, args: &LoadArgs) -> PyResult<Bound<'py, PyAny>> {
    let url = opened.url.clone();
    let options = args.read_options(Some(opened.size()));
    let reader = match py.detach(|| NpyReader::from_reader_with(opened.into_read()?, &options)) {
        Ok(reader) => reader,
        Err(e) => {
            let e = named(e, &url);
            return Err(short_header(&e).unwrap_or_else(|| args.error(e)));
        }
    };
    if reader.python2_header() {
        crate::errors::warn_python2_header(py)?;
    }
    let header = reader.header().clone();
    if header.dtype.has_object() {
        args.objects_allowed()?;
        let pickle = py.detach(|| reader.read::<CheckedPickle>()).map_err(|e| args.error(named(e, &url)))?;
        return load_checked(py, pickle.bytes(), &args.pickle);
    }
    match py.detach(|| reader.read::<DynArray>()) {
        Ok(array) => from_dyn(py, array),
        Err(e) => match *e.kind() {
            // NumPy's words for a file object whose data end early.
            ErrorKind::Truncated { expected, found } => {
                let (expected, found) = (usize::try_from(expected), usize::try_from(found));
                let (Ok(expected), Ok(found)) = (expected, found) else { return Err(to_python(named(e, &url))) };
                Err(PyValueError::new_err(format!("{url}: {}", short_read(&header, expected, found))))
            }
            _ => Err(to_python(named(e, &url))),
        },
    }
}

/// NumPy's error for a `.npy` file that ends before its header does (`_read_bytes` in
/// `numpy/lib/_format_impl.py`: `EOF: reading array header, expected 118 bytes got 50`),
/// when `e` is of one.
fn short_header(e: &npy_core::Error) -> Option<PyErr> {
    let short = e.short_header()?;
    let (what, expected, found) = (short.part.numpy_name(), short.expected, short.found);
    let context = crate::errors::context(e);
    Some(PyValueError::new_err(format!("{context}EOF: reading {what}, expected {expected} bytes got {found}")))
}

/// NumPy's error for a `.npy` file whose data end early (`e`, a
/// [`ErrorKind::Truncated`] that keeps the array's shape): `np.load` reads an OS file's
/// data with `np.fromfile`, and says how many of the elements the file held.
fn truncated_path(e: npy_core::Error) -> PyErr {
    let (ErrorKind::Truncated { expected, found }, Some(shape)) = (e.kind(), e.array_shape()) else {
        return to_python(e);
    };
    let count = shape.iter().product::<usize>();
    let itemsize = usize::try_from(*expected).unwrap_or(usize::MAX) / count.max(1);
    let read = usize::try_from(*found).unwrap_or(usize::MAX) / itemsize.max(1);
    PyValueError::new_err(format!("{}{}", crate::errors::context(&e), fewer_elements(shape, read)))
}

/// NumPy's message for an array of `shape` of which only `read` elements were in the file
/// (`read_array` in `numpy/lib/_format_impl.py`).
fn fewer_elements(shape: &[usize], read: usize) -> String {
    let count = shape.iter().product::<usize>();
    format!(
        "Failed to read all data for array. Expected {} = {count} elements, could only read {read} elements. \
         (file seems not fully written?)",
        shape_repr(shape)
    )
}

/// A `.npy` file's header and data offset, for a map of it (opening it checks that the
/// file holds all the data the header calls for); object arrays refused as NumPy refuses
/// them.
pub(crate) fn header_at(py: Python<'_>, path: &Path, options: &ReadOptions) -> PyResult<(Header, u64)> {
    let read =
        py.detach(|| NpyReader::from_path_with(path, options).map(|r| (r.header().clone(), r.data_offset() as u64)));
    match read {
        Err(e) => Err(map_error(path, e)),
        Ok((header, _)) if header.dtype.has_object() => Err(unmappable(path)),
        Ok(found) => Ok(found),
    }
}

/// NumPy's refusal to map the `.npy` file at `path`, which holds Python objects.
fn unmappable(path: &Path) -> PyErr {
    PyValueError::new_err(format!("{}: Array can't be memory-mapped: Python objects in dtype.", path.display()))
}

/// NumPy's exception for `e`, met opening the `.npy` file at `path` to map it.
fn map_error(path: &Path, e: npy_core::Error) -> PyErr {
    match e.kind() {
        // Records with object fields (which npy-core does not model) hold objects too.
        ErrorKind::UnsupportedDtype { descr, .. } if descr.contains("|O") => unmappable(path),
        // NumPy's message is Python's mmap's.
        ErrorKind::Truncated { .. } => PyValueError::new_err(format!(
            "{}mmap length is greater than file size ({})",
            crate::errors::context(&e),
            e.kind()
        )),
        _ => short_header(&e).unwrap_or_else(|| to_python(e)),
    }
}

/// What `np.load` does with a file that is neither `.npy` nor `.npz`: it unpickles it
/// under `allow_pickle=True`, which npy never does.
fn pickle_file(args: &LoadArgs, name: &str) -> PyErr {
    if args.allow_pickle == Some(false) {
        return PyValueError::new_err(
            "This file contains pickled (object) data. If you trust the file you can load it unsafely using the \
             `allow_pickle=` keyword argument or `pickle.load()`.",
        );
    }
    Python::attach(|py| {
        let message = format!(
            "{name}: the file is neither an .npy nor an .npz file (perhaps a pickle); npy never runs a pickle: \
             load a file you trust with numpy.load(file, allow_pickle=True) or pickle.load"
        );
        crate::errors::unsafe_pickle(py, message)
    })
}

/// `np.load(file, ...)` of a file object, from its current position.
pub(crate) fn load_file<'py>(py: Python<'py>, file: &Bound<'py, PyAny>, args: &LoadArgs) -> PyResult<Loaded<'py>> {
    // Six bytes, or as many as there are: a read may give fewer than asked for and more
    // be left (a pipe, a socket), where np.load's one read takes a short read for all.
    let mut magic: Vec<u8> = Vec::with_capacity(FileKind::PROBE_LEN);
    while magic.len() < FileKind::PROBE_LEN {
        let got: Vec<u8> = file.call_method1("read", (FileKind::PROBE_LEN - magic.len(),))?.extract()?;
        if got.is_empty() {
            break;
        }
        magic.extend_from_slice(&got);
    }
    if magic.is_empty() {
        return Err(PyEOFError::new_err("No data left in file"));
    }
    // Back to where the array starts, as np.load does.
    file.call_method1("seek", (-(magic.len() as i64), 1))?;
    let name = name_of(file);
    let label = name.as_ref().map_or_else(|| "the file".to_string(), |n| n.display().to_string());
    match FileKind::of(&magic) {
        FileKind::Empty => unreachable!("checked above"),
        FileKind::Zip => NpzReader::open_file(py, file, args).map(|r| Loaded::Archive(Box::new(r))),
        FileKind::Other => Err(pickle_file(args, &label)),
        FileKind::Npy => {
            if args.mmap_mode.is_some() {
                return Err(PyValueError::new_err(
                    "Filename must be a string or a path-like object.  Memmap cannot use existing file handles.",
                ));
            }
            read_npy_from(py, file, args, name.as_deref()).map(Loaded::Array)
        }
    }
}

/// The `.npy` array at `file`'s position, leaving the file right after it.
fn read_npy_from<'py>(
    py: Python<'py>,
    file: &Bound<'py, PyAny>,
    args: &LoadArgs,
    name: Option<&Path>,
) -> PyResult<Bound<'py, PyAny>> {
    let located = |e: npy_core::Error| match name {
        Some(path) => e.reading(path),
        None => e,
    };
    let options = args.read_options(None);
    let reader = match NpyReader::from_reader_with(PyFile::at_its_position(file), &options) {
        Ok(reader) => reader,
        Err(e) => {
            let e = located(e);
            return Err(short_header(&e).unwrap_or_else(|| args.error(e)));
        }
    };
    let header = reader.header().clone();
    if reader.python2_header() {
        crate::errors::warn_python2_header(py)?;
    }
    if header.dtype.has_object() {
        args.objects_allowed()?;
        return objects::load_file(py, file, &header, &options, &args.pickle, name);
    }
    read_data(py, file, &header).map_err(|e| match e {
        DataError::Python(e) => e,
        DataError::Short { expected, found } => {
            let what = name.map_or_else(String::new, |p| format!("{}: ", p.display()));
            let message = match is_os_file(py, file) {
                Ok(true) => fewer_elements(&header.shape, found / header.dtype.itemsize().max(1)),
                Ok(false) => short_read(&header, expected, found),
                Err(e) => return e,
            };
            PyValueError::new_err(format!("{what}{message}"))
        }
    })
}

/// Whether NumPy reads `file` as an OS file (`isfileobj` in `numpy/lib/_format_impl.py`:
/// an `io.FileIO`, `io.BufferedReader` or `io.BufferedWriter` with a file descriptor).
fn is_os_file(py: Python<'_>, file: &Bound<'_, PyAny>) -> PyResult<bool> {
    let io = py.import("io")?;
    let classes =
        PyTuple::new(py, [io.getattr("FileIO")?, io.getattr("BufferedReader")?, io.getattr("BufferedWriter")?])?;
    Ok(file.is_instance(&classes)? && file.call_method0("fileno").is_ok())
}

/// NumPy's message for the data of an array, `expected` bytes, ending after `found` in a
/// file object that is not an OS file: NumPy reads it in pieces of up to 256 KiB of whole
/// elements (`BUFFER_SIZE`), and names the piece it could not complete.
fn short_read(header: &Header, expected: usize, found: usize) -> String {
    const BUFFER_SIZE: usize = 1 << 18;
    let itemsize = header.dtype.itemsize().max(1);
    let piece = BUFFER_SIZE / itemsize.min(BUFFER_SIZE) * itemsize;
    let start = found / piece * piece;
    let size = piece.min(expected - start);
    format!("EOF: reading array data, expected {size} bytes got {}", found - start)
}

/// Why the data of an array could not be read from a file object.
enum DataError {
    Python(PyErr),
    /// The file ended first.
    Short {
        expected: usize,
        found: usize,
    },
}

impl From<PyErr> for DataError {
    fn from(e: PyErr) -> Self {
        DataError::Python(e)
    }
}

/// Reads the data `header` describes from `file` straight into a new NumPy array (its
/// `readinto`, or `read` for files without one), and shapes it.
fn read_data<'py>(py: Python<'py>, file: &Bound<'py, PyAny>, header: &Header) -> Result<Bound<'py, PyAny>, DataError> {
    let numpy = py.import("numpy")?;
    let dtype = to_numpy(py, &header.dtype)?;
    let count = header.element_count().map_err(to_python)?;
    let total = header.data_len().map_err(to_python)?;
    // np.ndarray rather than np.empty, as NumPy does for zero-width string dtypes.
    let flat = numpy.getattr("ndarray")?.call1(((count,), &dtype))?;
    if total > 0 {
        let bytes = flat.call_method1("view", (numpy.getattr("uint8")?,))?;
        let view = py.import("builtins")?.getattr("memoryview")?.call1((bytes,))?;
        let readinto = file.getattr("readinto").ok();
        let mut done = 0;
        while done < total {
            let rest = view.get_item(PySlice::new(py, done as isize, total as isize, 1))?;
            let got = match &readinto {
                Some(readinto) => {
                    let n = readinto.call1((rest,))?;
                    if n.is_none() {
                        0
                    } else {
                        n.extract::<usize>()?
                    }
                }
                None => {
                    let want = (total - done).min(crate::pyfile::READ_PIECE);
                    let data = file.call_method1("read", (want,))?;
                    let n = data.len()?;
                    if n > 0 {
                        view.set_item(PySlice::new(py, done as isize, (done + n) as isize, 1), data)?;
                    }
                    n
                }
            };
            if got == 0 {
                return Err(DataError::Short { expected: total, found: done });
            }
            done += got;
        }
    }
    Ok(shaped(py, flat, header)?)
}

/// `flat` in `header`'s shape and order, as `np.load` shapes it.
fn shaped<'py>(py: Python<'py>, flat: Bound<'py, PyAny>, header: &Header) -> PyResult<Bound<'py, PyAny>> {
    if header.fortran_order {
        let reversed: Vec<usize> = header.shape.iter().rev().copied().collect();
        return flat.call_method1("reshape", (PyTuple::new(py, reversed)?,))?.call_method0("transpose");
    }
    flat.call_method1("reshape", (PyTuple::new(py, &header.shape)?,))
}
