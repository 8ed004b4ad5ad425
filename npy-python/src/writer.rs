//! The engine of `npy.NpzWriter`: an `.npz` archive written one member at a time through
//! npy-core's `npz::Writer`, to a path (atomically: `npz::Writer::create`) or a file object,
//! each member compressed with the GIL released.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};

use npy_core::npz::{Compression, FileWriter, Writer};
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::to_python;
use crate::pyfile::{name_of, PyFile};
use crate::save::{copy_to, random_access, Copy, Part, Prepared};

/// Compressed members up to this size are copied and compressed on worker threads (one
/// per CPU) while `add` returns, so that several small members compress at once; larger
/// ones are compressed from the array's memory on the caller's thread, with the GIL
/// released, as they go into the archive: a large array is never held twice.
const STAGED_LIMIT: u64 = 16 << 20;

/// Where the archive goes: a path (atomically), a file object that seeks (at its
/// position), or one that does not (a temporary file, copied to it by `close`).
enum Out {
    Path(FileWriter),
    File(Writer<BufWriter<PyFile>>),
    Spooled { writer: Writer<BufWriter<File>>, file: Py<PyAny> },
}

impl Out {
    fn add(&mut self, part: &Part<'_>, compression: Compression) -> npy_core::Result<()> {
        match self {
            Out::Path(writer) => part.add_to(writer, compression),
            Out::File(writer) => part.add_to(writer, compression),
            Out::Spooled { writer, .. } => part.add_to(writer, compression),
        }
    }
}

/// An `.npz` archive being written: the engine of `npy.NpzWriter`.
#[pyclass(module = "npy._npy", name = "NpzArchive", frozen)]
pub(crate) struct NpzArchive {
    /// `None` once closed or aborted.
    out: Mutex<Option<Out>>,
    compression: Compression,
    /// The name errors give a file object's archive (paths name themselves).
    file_name: Option<PathBuf>,
    /// What messages call the archive: its path or file object's name.
    label: String,
}

#[pymethods]
impl NpzArchive {
    /// An archive at `file` (a path, or a file object with `write`), its members compressed
    /// as `Compression::named(compression, level)`; a path's archive is synced to disk
    /// before it appears when `durable`.
    #[new]
    fn new(
        py: Python<'_>,
        file: &Bound<'_, PyAny>,
        compression: &str,
        level: Option<i64>,
        durable: bool,
    ) -> PyResult<Self> {
        let compression = Compression::named(compression, level).map_err(to_python)?;
        let (out, file_name) = if file.hasattr("write")? {
            let name = name_of(file);
            let out = if random_access(file)? {
                let mut writer = Writer::new(BufWriter::with_capacity(1 << 20, PyFile::at_its_position(file)));
                writer.parallel_limit(STAGED_LIMIT);
                Out::File(writer)
            } else {
                let spool = tempfile::tempfile().map_err(|e| to_python(e.into()))?;
                let mut writer = Writer::new(BufWriter::with_capacity(1 << 20, spool));
                writer.parallel_limit(STAGED_LIMIT);
                Out::Spooled { writer, file: file.clone().unbind() }
            };
            (out, name)
        } else {
            let path: PathBuf = file.extract()?;
            let mut writer = py.detach(|| Writer::create(&path)).map_err(to_python)?;
            writer.sync(durable).parallel_limit(STAGED_LIMIT);
            (Out::Path(writer), None)
        };
        let label = match (&out, &file_name) {
            (Out::Path(_), _) => file.extract::<PathBuf>()?.display().to_string(),
            (_, Some(name)) => name.display().to_string(),
            (_, None) => "the file object".to_string(),
        };
        Ok(NpzArchive { out: Mutex::new(Some(out)), compression, file_name, label })
    }

    /// The level members are compressed at (`None` for stored members).
    #[getter]
    fn level(&self) -> Option<u32> {
        match self.compression {
            Compression::Stored => None,
            Compression::Deflated { level } | Compression::Zstd { level } => Some(level),
        }
    }

    /// Whether the archive was closed (written) or aborted.
    #[getter]
    fn closed(&self) -> PyResult<bool> {
        Ok(self.lock()?.is_none())
    }

    /// Adds array `name` (member `name.npy`), as `np.savez` writes it (object arrays
    /// pickled when `allow_pickle`, and only those `npy.load` reads back); gives its
    /// header's format version.
    fn add(
        &self,
        py: Python<'_>,
        name: String,
        arr: &Bound<'_, PyUntypedArray>,
        allow_pickle: bool,
    ) -> PyResult<(u8, u8)> {
        let prepared = Prepared::of(arr, allow_pickle, &format!("{name}.npy"))?;
        let (version, part) = Part::of(&name, &prepared)?;
        let mut guard = self.lock()?;
        let out = guard.as_mut().ok_or_else(|| self.closed_error(&name))?;
        let compression = self.compression;
        py.detach(|| out.add(&part, compression)).map_err(|e| self.error(e))?;
        Ok(version)
    }

    /// Writes the archive's directory and puts it in place: a path's file appears (renamed
    /// over any old one), a file object gets the rest of the archive. Closing twice does
    /// nothing more. On an error the archive is dropped: a path keeps its old file, or none.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(out) = self.lock()?.take() else { return Ok(()) };
        match out {
            Out::Path(writer) => py.detach(|| writer.finish()).map_err(to_python),
            Out::File(writer) => {
                py.detach(|| -> npy_core::Result<()> { Ok(writer.finish()?.flush()?) }).map_err(|e| self.error(e))
            }
            Out::Spooled { writer, file } => {
                let mut spool = py
                    .detach(|| -> npy_core::Result<File> {
                        let mut spool = writer.finish()?.into_inner().map_err(|e| e.into_error())?;
                        spool.seek(SeekFrom::Start(0))?;
                        Ok(spool)
                    })
                    .map_err(|e| self.error(e))?;
                copy_to(&mut spool, file.bind(py)).map_err(|e| match e {
                    Copy::Python(e) => e,
                    Copy::Io(e) => self.error(e.into()),
                })
            }
        }
    }

    /// Drops the archive unfinished: a path's file never appears (any old one stays as it
    /// was); a file object keeps what was written to it so far, which is no archive.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let out = self.lock()?.take();
        // Joins the compressing workers, and removes a path's unnamed file.
        py.detach(|| drop(out));
        Ok(())
    }
}

impl NpzArchive {
    /// The writer, or an error when another thread is adding to it (it would wait for
    /// the GIL this thread holds).
    fn lock(&self) -> PyResult<MutexGuard<'_, Option<Out>>> {
        match self.out.try_lock() {
            Ok(guard) => Ok(guard),
            // A panic was turned into an exception where it happened; the writer's own state
            // stays consistent (a failed member is dropped from the archive).
            Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
                "{}: another thread is writing to this npy.NpzWriter; add members from one thread at a time",
                self.label
            ))),
        }
    }

    fn closed_error(&self, name: &str) -> PyErr {
        PyValueError::new_err(format!("{}: cannot add '{name}': the npy.NpzWriter is closed", self.label))
    }

    /// `e` as the exception to raise, naming the file object's file when it has a name.
    fn error(&self, e: npy_core::Error) -> PyErr {
        to_python(match &self.file_name {
            Some(path) => e.writing(path),
            None => e,
        })
    }
}
