//! Python file objects as `io::Read`, `io::Write` and `io::Seek`, so that npy-core's header
//! codec, npz reader and npz writer serve them as they serve files.
//!
//! Each call takes the GIL for as long as the Python call lasts (callers may have released
//! it). A Python exception travels through npy-core inside the `io::Error` as its source;
//! [`to_python`] gives the caller's code back the very exception its file raised.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// Bytes handed to a file object's `write` per call: bounded, so that a wrapper that
/// copies each call (a zip member, a gzip stream) holds little at a time.
const WRITE_PIECE: usize = 16 << 20;
/// Bytes asked of a file object's `read` per call, for files without `readinto`.
pub(crate) const READ_PIECE: usize = 16 << 20;

/// A Python file object (`read`, `write`, `seek`, `tell` as the `io` module defines them).
#[derive(Debug)]
pub(crate) struct PyFile {
    file: Py<PyAny>,
    /// Where reads and writes happen, when this adapter keeps its own position (a file
    /// shared with a `zipfile.ZipFile` that moves it): each call seeks there first.
    position: Option<u64>,
    /// The file's byte that is byte 0 of this adapter (an archive whose offsets count
    /// from where it starts in the file).
    base: u64,
}

impl PyFile {
    /// Reads and writes at the file's own position, wherever it is when each call starts.
    pub(crate) fn at_its_position(file: &Bound<'_, PyAny>) -> PyFile {
        PyFile { file: file.clone().unbind(), position: None, base: 0 }
    }

    /// Reads and writes at a position of this adapter's own, starting at the file's
    /// current one, so that others may move the file in between.
    pub(crate) fn with_own_position(file: &Bound<'_, PyAny>) -> PyResult<PyFile> {
        let position: u64 = file.call_method0("tell")?.extract()?;
        Ok(PyFile { file: file.clone().unbind(), position: Some(position), base: 0 })
    }

    /// As [`PyFile::with_own_position`], with the file's byte `base` as this adapter's byte
    /// 0 (and its position): what comes before is out of its sight.
    pub(crate) fn based_at(file: &Bound<'_, PyAny>, base: u64) -> PyFile {
        PyFile { file: file.clone().unbind(), position: Some(0), base }
    }

    /// Runs `f` on the file with the GIL, first seeking to this adapter's position if it
    /// keeps one, and moves that position by what `f` says it consumed.
    fn call<T>(&mut self, f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<(T, u64)>) -> io::Result<T> {
        let file = &self.file;
        let position = self.position.map(|at| at + self.base);
        let (value, moved) = Python::attach(|py| {
            let file = file.bind(py);
            if let Some(at) = position {
                file.call_method1("seek", (at,))?;
            }
            f(file)
        })
        .map_err(io_error)?;
        if let Some(at) = &mut self.position {
            *at += moved;
        }
        Ok(value)
    }
}

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let want = buf.len();
        self.call(|file| {
            let data = file.call_method1("read", (want,))?;
            if data.is_none() {
                // A non-blocking file with nothing to give yet: NumPy gives up there too.
                return Err(pyo3::exceptions::PyBlockingIOError::new_err(
                    "the file had no data to give (non-blocking)",
                ));
            }
            let data = data.cast_into::<PyBytes>().map_err(|e| {
                pyo3::exceptions::PyTypeError::new_err(format!("the file's read() gave {}, not bytes", e.into_inner()))
            })?;
            let data = data.as_bytes();
            let n = data.len().min(want);
            buf[..n].copy_from_slice(&data[..n]);
            Ok((n, n as u64))
        })
    }
}

impl Write for PyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let piece = &buf[..buf.len().min(WRITE_PIECE)];
        self.call(|file| {
            let data = PyBytes::new(file.py(), piece);
            let n = written(&file.call_method1("write", (data,))?, piece.len())?;
            Ok((n, n as u64))
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        // The file's own buffer is the caller's to flush, as after `np.save(f, a)`.
        Ok(())
    }
}

impl Seek for PyFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let base = self.base;
        let absolute = |at: u64| at.checked_add(base).and_then(|p| i64::try_from(p).ok());
        let (offset, whence): (i64, u8) = match pos {
            SeekFrom::Start(at) => (absolute(at).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?, 0),
            SeekFrom::Current(delta) => match self.position {
                // Relative to the adapter's position, which the file may not be at.
                Some(at) => (at.checked_add_signed(delta).and_then(absolute).unwrap_or(-1), 0),
                None => (delta, 1),
            },
            SeekFrom::End(delta) => (delta, 2),
        };
        if offset < 0 && whence == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"));
        }
        let file = &self.file;
        let to = Python::attach(|py| file.bind(py).call_method1("seek", (offset, whence))?.extract::<u64>())
            .map_err(io_error)?;
        let to = to
            .checked_sub(base)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the data read"))?;
        if self.position.is_some() {
            self.position = Some(to);
        }
        Ok(to)
    }
}

/// How many bytes a `write` call of `len` bytes wrote: its return value, or all of them
/// when it returns `None` as some writers do (NumPy's writes ignore it).
pub(crate) fn written(result: &Bound<'_, PyAny>, len: usize) -> PyResult<usize> {
    if result.is_none() {
        return Ok(len);
    }
    let n: usize = result.extract()?;
    if n > len {
        return Err(pyo3::exceptions::PyValueError::new_err(format!("write() returned {n} for {len} bytes")));
    }
    Ok(n)
}

/// Writes all of `data` (any buffer: bytes, a memoryview) to `file`, in pieces, again
/// where a raw file writes less than it was given.
pub(crate) fn write_all(file: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>, len: usize) -> PyResult<()> {
    let py = file.py();
    let view = py.import("builtins")?.getattr("memoryview")?.call1((data,))?.call_method1("cast", ("B",))?;
    let mut done = 0;
    while done < len {
        let end = len.min(done + WRITE_PIECE);
        let piece = view.get_item(pyo3::types::PySlice::new(py, done as isize, end as isize, 1))?;
        let n = written(&file.call_method1("write", (piece,))?, end - done)?;
        if n == 0 {
            return Err(pyo3::exceptions::PyOSError::new_err("the file's write() wrote nothing"));
        }
        done += n;
    }
    Ok(())
}

/// A Python exception as an `io::Error` (its source), to travel through npy-core.
pub(crate) fn io_error(e: PyErr) -> io::Error {
    io::Error::other(e)
}

/// The name errors give a file object: its `name` when that is a path (a `str`), as
/// `open()` sets it.
pub(crate) fn name_of(file: &Bound<'_, PyAny>) -> Option<PathBuf> {
    let name = file.getattr("name").ok()?;
    name.cast::<PyString>().ok().map(|s| PathBuf::from(s.to_string_lossy().into_owned()))
}
