//! `np.load`'s arguments as the readers need them ([`LoadArgs`]), shared by plain loads
//! ([`crate::load`]) and archives ([`crate::npz`]).

use npy_core::{Error, Python2Strings, ReadOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{holds_objects, to_python};
use crate::unpickle::{refused_by_allow_pickle, PickleArgs};

/// NumPy's `max_header_size` default (`numpy.lib.format._MAX_HEADER_SIZE`).
pub(crate) const MAX_HEADER_SIZE: usize = 10_000;

/// `np.load`'s arguments, as the readers need them: checked once, when Python builds them
/// (`npy._npy.LoadArgs(mmap_mode, allow_pickle, fix_imports, encoding, max_header_size)`),
/// and taken by every entry that loads (`load_from_path`, `load_from_file`,
/// `load_from_url`, `open_npz`).
#[pyclass(frozen, module = "npy._npy")]
#[derive(Debug, Clone)]
pub(crate) struct LoadArgs {
    /// `np.memmap`'s spelling of the mode, if mapping.
    pub(crate) mmap_mode: Option<&'static str>,
    /// `None` (npy's default) and `True` load object arrays of data; `False`
    /// refuses them, as NumPy.
    pub(crate) allow_pickle: Option<bool>,
    pub(crate) pickle: PickleArgs,
    pub(crate) max_header_size: usize,
}

impl Default for LoadArgs {
    /// `np.load`'s defaults (with npy's `allow_pickle=None`).
    fn default() -> Self {
        LoadArgs {
            mmap_mode: None,
            allow_pickle: None,
            pickle: PickleArgs { fix_imports: true, encoding: "ASCII".into(), safe_globals: Vec::new() },
            max_header_size: MAX_HEADER_SIZE,
        }
    }
}

#[pymethods]
impl LoadArgs {
    /// `np.load`'s arguments, checked: `encoding` one of NumPy's three, `mmap_mode` one of
    /// `np.memmap`'s spellings ([`map_mode`]); the safe globals in force now are the load's.
    ///
    /// # Errors
    /// `ValueError` for another encoding or map mode.
    #[new]
    pub(crate) fn new(
        mmap_mode: Option<&str>,
        allow_pickle: Option<bool>,
        fix_imports: bool,
        encoding: String,
        max_header_size: usize,
    ) -> PyResult<LoadArgs> {
        if !matches!(encoding.as_str(), "ASCII" | "latin1" | "bytes") {
            return Err(PyValueError::new_err("encoding must be 'ASCII', 'latin1', or 'bytes'"));
        }
        Ok(LoadArgs {
            mmap_mode: map_mode(mmap_mode)?,
            allow_pickle,
            pickle: PickleArgs { fix_imports, encoding, safe_globals: crate::unpickle::safe_globals() },
            max_header_size,
        })
    }
}

impl LoadArgs {
    /// The header limit: `max_header_size`, lifted by `allow_pickle=True` as NumPy lifts it
    /// (a trusted file).
    fn header_limit(&self) -> usize {
        if self.allow_pickle == Some(true) {
            usize::MAX
        } else {
            self.max_header_size
        }
    }

    /// The read options for a file of `file_len` bytes (`None`: not known). Checking an
    /// object array's pickle may take 1 GiB plus 64 bytes per byte of the file:
    /// npy-core's default (128 MiB plus 4 per byte) refuses arrays of millions of small
    /// values that `np.load` reads (a million 3-key dicts, an 11 MB pickle, took 300 MB as
    /// npy-core's values); a hostile pickle still cannot take more.
    pub(crate) fn read_options(&self, file_len: Option<u64>) -> ReadOptions {
        let mut options = ReadOptions::new();
        options.max_header_size(self.header_limit());
        let budget = (1u64 << 30).saturating_add(file_len.unwrap_or(1 << 30).saturating_mul(64));
        options.max_object_bytes(usize::try_from(budget).unwrap_or(usize::MAX));
        // ASCII is checked as latin1, which passes every byte: CPython's unpickler then
        // refuses what is not ASCII with the UnicodeError np.load raises.
        options.python2_strings(match self.pickle.encoding.as_str() {
            "bytes" => Python2Strings::Bytes,
            _ => Python2Strings::Latin1,
        });
        options.safe_globals(self.pickle.safe_globals.iter().cloned());
        options
    }

    /// `e`, met reading under these arguments, as the exception to raise: under
    /// `allow_pickle=False`, a dtype holding Python objects anywhere (records with object
    /// fields too) is NumPy's refusal of object arrays; else as [`to_python`] gives it.
    pub(crate) fn error(&self, e: Error) -> PyErr {
        if self.allow_pickle == Some(false) && holds_objects(&e) {
            return refused_by_allow_pickle();
        }
        to_python(e)
    }

    /// Refuses object arrays under `allow_pickle=False`.
    pub(crate) fn objects_allowed(&self) -> PyResult<()> {
        match self.allow_pickle {
            Some(false) => Err(refused_by_allow_pickle()),
            _ => Ok(()),
        }
    }
}

/// A map's mode as `np.memmap` spells it, from any spelling it accepts; `None` for no map.
/// `'w+'` is refused: `np.load` would empty the file (and then fail for want of a shape);
/// new maps are made by `open_memmap`.
pub(crate) fn map_mode(mode: Option<&str>) -> PyResult<Option<&'static str>> {
    Ok(match mode {
        None => None,
        Some("r" | "readonly") => Some("r"),
        Some("r+" | "readwrite") => Some("r+"),
        Some("c" | "copyonwrite") => Some("c"),
        Some(mode @ ("w+" | "write")) => {
            return Err(PyValueError::new_err(format!(
                "mmap_mode {mode:?} would empty the file (numpy.load truncates it, then fails): \
                 create a map with npy.open_memmap(file, mode='w+', dtype=..., shape=...)"
            )))
        }
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "mmap_mode must be one of 'r', 'r+', 'c', 'readonly', 'readwrite' or 'copyonwrite' (or None), not {other:?}"
            )))
        }
    })
}
