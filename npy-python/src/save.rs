//! `np.save`, `np.savez`, `np.savez_compressed` and `open_memmap(mode='w+')`: NumPy arrays
//! written as `np.save` writes them, to paths (atomically) or to file objects.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use npy_core::atomic::AtomicFile;
use npy_core::header::{Header, Version};
use npy_core::npz::{Compression, Writer};
use npy_core::object::from_pickle_with;
use npy_core::{DType, DynView, WriteNpy, WriteOptions};
use npy_pyo3::{from_numpy, ArrayBytes};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::LoadArgs;
use crate::errors::to_python;
use crate::pyfile::{name_of, write_all, PyFile};

/// An array ready to be written: its header, and its data as NumPy holds it, or the
/// pickle `np.save` writes for object arrays (and dtypes NumPy pickles).
pub(crate) enum Prepared<'py> {
    Raw { header: Header, bytes: ArrayBytes<'py> },
    Pickled { header: Header, pickle: Bound<'py, PyBytes> },
}

impl<'py> Prepared<'py> {
    /// `arr` (a NumPy array) as `np.save(file, arr, allow_pickle)` writes it; `what`
    /// names the file or member in errors.
    pub(crate) fn of(arr: &Bound<'py, PyUntypedArray>, allow_pickle: bool, what: &str) -> PyResult<Self> {
        let dtype = arr.dtype();
        let legacy: bool = dtype.get_type().getattr("_legacy")?.extract()?;
        if dtype.has_object() || !legacy {
            if !allow_pickle {
                let message = if dtype.has_object() {
                    "Object arrays cannot be saved when allow_pickle=False"
                } else {
                    "User-defined dtypes cannot be saved when allow_pickle=False"
                };
                return Err(PyValueError::new_err(message));
            }
            return Prepared::pickled(arr, what);
        }
        let bytes = ArrayBytes::of(arr)?;
        let header =
            Header { dtype: from_numpy(&dtype)?, fortran_order: bytes.fortran_order(), shape: arr.shape().to_vec() };
        Ok(Prepared::Raw { header, bytes })
    }

    /// An object array pickled as `np.save` does (`pickle.dump(arr, protocol=4)`), checked
    /// to hold only what npy reads back (so every file saved loads with `npy.load`).
    fn pickled(arr: &Bound<'py, PyUntypedArray>, what: &str) -> PyResult<Self> {
        let py = arr.py();
        let pickle = py.import("pickle")?.getattr("dumps")?.call1((arr, 4))?.cast_into::<PyBytes>()?;
        let fortran_order = !arr.is_c_contiguous() && arr.is_fortran_contiguous();
        let header =
            Header { dtype: "|O".parse::<DType>().map_err(to_python)?, fortran_order, shape: arr.shape().to_vec() };
        // The budget `npy.load` gives this file's pickle, so that what is saved loads.
        let options = LoadArgs::default().read_options(Some(pickle.as_bytes().len() as u64));
        let bytes = pickle.as_bytes();
        if let Err(e) = py.detach(|| from_pickle_with(bytes, &options).map(drop)) {
            return Err(PyTypeError::new_err(format!(
                "{what}: npy.save writes only object arrays that npy.load reads back (use np.save for others): {e}"
            )));
        }
        Ok(Prepared::Pickled { header, pickle })
    }

    fn header(&self) -> &Header {
        match self {
            Prepared::Raw { header, .. } | Prepared::Pickled { header, .. } => header,
        }
    }

    /// The header's bytes and the format version they are in (the oldest that fits, as
    /// `np.save` chooses).
    fn head(&self) -> PyResult<(Version, Vec<u8>)> {
        self.header().encode(None).map_err(to_python)
    }

    /// The data's length in bytes.
    fn data_len(&self) -> PyResult<usize> {
        match self {
            Prepared::Raw { bytes, .. } => Ok(bytes.as_slice()?.len()),
            Prepared::Pickled { pickle, .. } => Ok(pickle.as_bytes().len()),
        }
    }
}

/// A version as `(major, minor)`, for the warnings the Python side gives.
fn number(version: Version) -> (u8, u8) {
    version.number()
}

/// `np.save(path, arr)`, atomically; synced to disk first when `durable`.
pub(crate) fn save_path(py: Python<'_>, path: PathBuf, prepared: &Prepared<'_>, durable: bool) -> PyResult<(u8, u8)> {
    let (version, head) = prepared.head()?;
    match prepared {
        Prepared::Raw { header, bytes } => {
            let data = bytes.as_slice()?;
            let mut options = WriteOptions::new();
            options.sync(durable);
            py.detach(|| DynView::new(header.clone(), data)?.write_npy_with(&path, &options)).map_err(to_python)?;
        }
        Prepared::Pickled { pickle, .. } => {
            let pickle = pickle.as_bytes();
            py.detach(|| -> npy_core::Result<()> {
                let mut file = AtomicFile::create(&path)?;
                file.write_all(&head)?;
                file.write_all(pickle)?;
                file.commit(durable)
            })
            .map_err(|e| to_python(e.writing(&path)))?;
        }
    }
    Ok(number(version))
}

/// `np.save(file, arr)` for a file object: written at its position, left after the array.
pub(crate) fn save_file(file: &Bound<'_, PyAny>, prepared: &Prepared<'_>) -> PyResult<(u8, u8)> {
    let py = file.py();
    let (version, head) = prepared.head()?;
    let head = PyBytes::new(py, &head);
    write_all(file, head.as_any(), head.as_bytes().len())?;
    let len = prepared.data_len()?;
    match prepared {
        Prepared::Raw { bytes, .. } => {
            if let Some(data) = bytes.as_numpy() {
                write_all(file, data.as_any(), len)?;
            }
        }
        Prepared::Pickled { pickle, .. } => write_all(file, pickle.as_any(), len)?,
    }
    Ok(number(version))
}

/// Where an archive goes.
pub(crate) enum Target<'py> {
    Path(PathBuf),
    File(Bound<'py, PyAny>),
}

/// `np.savez` (`compress`: `np.savez_compressed`) of `members` (name, array) to `target`;
/// gives each member's format version. Paths are written atomically (synced first when
/// `durable`); a file object is written at its position, through a temporary file when it
/// cannot seek.
pub(crate) fn savez(
    py: Python<'_>,
    target: Target<'_>,
    members: &[(String, Prepared<'_>)],
    compress: bool,
    durable: bool,
) -> PyResult<Vec<(u8, u8)>> {
    let compression = if compress { Compression::deflated() } else { Compression::Stored };
    let mut versions = Vec::with_capacity(members.len());
    let mut parts = Vec::with_capacity(members.len());
    for (name, prepared) in members {
        let (version, part) = Part::of(name, prepared)?;
        versions.push(version);
        parts.push(part);
    }
    match target {
        Target::Path(path) => py
            .detach(|| -> npy_core::Result<()> {
                let mut writer = Writer::create(&path)?;
                writer.sync(durable);
                add_all(&mut writer, &parts, compression)?;
                writer.finish()
            })
            .map_err(to_python)?,
        Target::File(file) => {
            let name = name_of(&file);
            let located = |e: npy_core::Error| to_python(if let Some(p) = &name { e.writing(p) } else { e });
            if random_access(&file)? {
                let out = BufWriter::with_capacity(1 << 20, PyFile::at_its_position(&file));
                py.detach(|| -> npy_core::Result<()> {
                    let mut writer = Writer::new(out);
                    add_all(&mut writer, &parts, compression)?;
                    writer.finish()?.flush()?;
                    Ok(())
                })
                .map_err(located)?;
            } else {
                let mut spool = py
                    .detach(|| -> npy_core::Result<File> {
                        let mut writer = Writer::new(BufWriter::with_capacity(1 << 20, tempfile::tempfile()?));
                        add_all(&mut writer, &parts, compression)?;
                        let mut spool = writer.finish()?.into_inner().map_err(|e| e.into_error())?;
                        spool.seek(SeekFrom::Start(0))?;
                        Ok(spool)
                    })
                    .map_err(located)?;
                copy_to(&mut spool, &file).map_err(|e| match e {
                    Copy::Python(e) => e,
                    Copy::Io(e) => located(e.into()),
                })?;
            }
        }
    }
    Ok(versions)
}

/// One member to add: `name.npy` holding `head` then `data`.
pub(crate) struct Part<'a> {
    name: &'a str,
    head: Vec<u8>,
    /// The header of raw data (written by npy-core's writer, without a copy), or `None`
    /// for a pickle (added as bytes).
    raw: Option<&'a Header>,
    data: &'a [u8],
}

impl<'a> Part<'a> {
    /// Member `name` holding `prepared`, and the format version of its header.
    pub(crate) fn of(name: &'a str, prepared: &'a Prepared<'_>) -> PyResult<((u8, u8), Part<'a>)> {
        let (version, head) = prepared.head()?;
        let (raw, data) = match prepared {
            Prepared::Raw { header, bytes } => (Some(header), bytes.as_slice()?),
            Prepared::Pickled { pickle, .. } => (None, pickle.as_bytes()),
        };
        Ok((number(version), Part { name, head, raw, data }))
    }

    /// Adds the member to `writer`, compressed so: raw data from the array's memory as it
    /// goes into the archive (never copied whole, unless the writer stages it for a worker).
    pub(crate) fn add_to<W: Write + Seek>(
        &self,
        writer: &mut Writer<W>,
        compression: Compression,
    ) -> npy_core::Result<()> {
        match self.raw {
            // An empty name is not an array name for npy-core; NumPy writes member '.npy'.
            Some(header) if !self.name.is_empty() => {
                writer.add_with(self.name, &DynView::new(header.clone(), self.data)?, compression)
            }
            _ => {
                let member = format!("{}.npy", self.name);
                let size = (self.head.len() + self.data.len()) as u64;
                writer.add_raw_from_with(&member, size, self.head.as_slice().chain(self.data), compression)
            }
        }
    }
}

fn add_all<W: Write + Seek>(
    writer: &mut Writer<W>,
    parts: &[Part<'_>],
    compression: Compression,
) -> npy_core::Result<()> {
    parts.iter().try_for_each(|part| part.add_to(writer, compression))
}

/// Whether a zip writer can seek back in a file object to finish each member's header:
/// an `io.BytesIO`, or a file of the operating system's that says it can seek. Others
/// (a `gzip.GzipFile`, which says it can but refuses to seek back while writing, a zip
/// member, a pipe, wrappers) are written through a temporary file.
pub(crate) fn random_access(file: &Bound<'_, PyAny>) -> PyResult<bool> {
    let io = file.py().import("io")?;
    let classes = ["BytesIO", "FileIO", "BufferedRandom", "BufferedWriter"];
    for class in classes {
        if file.is_instance(&io.getattr(class)?)? {
            let says = file.call_method0("seekable").and_then(|s| s.extract::<bool>());
            return Ok(matches!(says, Ok(true)) && file.call_method0("tell").is_ok());
        }
    }
    Ok(false)
}

/// Why copying a spooled archive to a file object failed.
pub(crate) enum Copy {
    Python(PyErr),
    Io(std::io::Error),
}

/// Copies `spool` to the end of its data into `file`, in pieces.
pub(crate) fn copy_to(spool: &mut File, file: &Bound<'_, PyAny>) -> Result<(), Copy> {
    let py = file.py();
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = py.detach(|| spool.read(&mut buf)).map_err(Copy::Io)?;
        if n == 0 {
            return Ok(());
        }
        let piece = PyBytes::new(py, &buf[..n]);
        write_all(file, piece.as_any(), n).map_err(Copy::Python)?;
    }
}

/// `numpy.lib.format.open_memmap(path, mode='w+', ...)`'s file: the header `np.save` writes
/// for an array of `dtype` and `shape`, then zeros, created atomically (it appears
/// complete). Gives the data's offset and the format version.
pub(crate) fn create_npy(
    py: Python<'_>,
    path: PathBuf,
    dtype: &Bound<'_, PyArrayDescr>,
    shape: Vec<usize>,
    fortran_order: bool,
    version: Option<(u8, u8)>,
) -> PyResult<(u64, (u8, u8))> {
    let header = Header { dtype: from_numpy(dtype)?, fortran_order, shape };
    let version = match version {
        None => None,
        Some((major, minor)) => Some(Version::from_number(major, minor).ok_or_else(|| {
            PyValueError::new_err(format!(
                "we only support format version (1,0), (2,0), and (3,0), not ({major}, {minor})"
            ))
        })?),
    };
    let (version, head) = header.encode(version).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let total = header.data_len().map_err(to_python)? as u64 + head.len() as u64;
    py.detach(|| -> npy_core::Result<()> {
        let mut file = AtomicFile::create(&path)?;
        file.write_all(&head)?;
        file.as_file().set_len(total)?;
        file.commit(false)
    })
    .map_err(|e| to_python(e.writing(&path)))?;
    Ok((head.len() as u64, number(version)))
}
