//! `npy.load_npz`: an archive as a lazy, read-only mapping of its members.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use npy_core::npz::{Compression, MemberInfo, Reader, ReaderOptions};
use npy_pyo3::py_err;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::arrays::memmap;
use crate::files::Loaded;

/// An `.npz` archive opened by `npy.load_npz`: a read-only mapping of member names (as
/// `np.load(f).files` lists them, `.npy` stripped; `'x.npy'` finds `'x'` too) to arrays,
/// each read when asked for. Under `mmap_mode`, stored (uncompressed) members are
/// memory-mapped in place (`np.memmap` views of the archive's bytes); deflated members and
/// object arrays are read into memory. `load_all()` reads every member, several at once.
///
/// Use it as a context manager, or call `close()`, to close the file.
#[pyclass(module = "npy", name = "NpzFile", frozen)]
pub(crate) struct NpzFile {
    path: PathBuf,
    names: Vec<String>,
    members: HashMap<String, MemberInfo>,
    mmap_mode: Option<&'static str>,
    reader: Mutex<Option<Reader<BufReader<File>>>>,
}

impl NpzFile {
    pub(crate) fn open(
        path: PathBuf,
        mmap_mode: Option<&'static str>,
        options: &ReaderOptions,
    ) -> npy_core::Result<Self> {
        let mut reader = Reader::from_path_with(&path, options)?;
        let names = reader.names().to_vec();
        let members = reader.members()?.into_iter().map(|m| (m.name.clone(), m)).collect();
        Ok(NpzFile { path, names, members, mmap_mode, reader: Mutex::new(Some(reader)) })
    }

    /// `f` of the open reader, run with the GIL released (and the lock taken without it,
    /// so that a thread waiting for the lock never holds the GIL this one needs back).
    fn with_reader<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Reader<BufReader<File>>) -> npy_core::Result<T> + Send,
    ) -> PyResult<T> {
        let result = py.detach(|| {
            let mut guard = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
            guard.as_mut().map(f)
        });
        match result {
            Some(result) => result.map_err(py_err),
            None => Err(PyValueError::new_err(format!("{}: the archive is closed", self.path.display()))),
        }
    }

    /// The member name `key` means.
    fn name(&self, key: &str) -> PyResult<String> {
        if self.members.contains_key(key) {
            return Ok(key.to_string());
        }
        match key.strip_suffix(".npy") {
            Some(stem) if self.members.contains_key(stem) => Ok(stem.to_string()),
            _ => Err(PyKeyError::new_err(format!("{key} is not a file in the archive {}", self.path.display()))),
        }
    }

    /// Member `name`: mapped when it can be, else read.
    fn member<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if let Some(mode) = self.mmap_mode {
            let info = &self.members[name];
            if let (Some(Compression::Stored), Some(start)) = (&info.compression, info.data_start) {
                if mode == "r+" {
                    return Err(PyValueError::new_err(format!(
                        "{}: mmap_mode 'r+' would change member {name} without its CRC-32; use 'r' or 'c'",
                        self.path.display()
                    )));
                }
                let (header, offset) = self.with_reader(py, |reader| {
                    let npy = reader.npy(name)?;
                    Ok((npy.header().clone(), npy.data_offset() as u64))
                })?;
                if !header.dtype.has_object() {
                    let file = pyo3::types::PyString::new(py, &self.path.to_string_lossy());
                    return memmap(file.as_any(), &header, start + offset, mode);
                }
            }
        }
        self.with_reader(py, |reader| reader.read::<Loaded>(name))?.into_python(py)
    }
}

#[pymethods]
impl NpzFile {
    /// The member names, in the archive's order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.names.clone()
    }

    fn keys(&self) -> Vec<String> {
        self.names.clone()
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    fn __contains__(&self, key: &str) -> bool {
        self.name(key).is_ok()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, &self.names)?.try_iter()?.into_any())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let name = self.name(key)?;
        self.member(py, &name)
    }

    /// The array of member `key`, or `default` when there is none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(&self, py: Python<'py>, key: &str, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        match self.name(key) {
            Ok(name) => self.member(py, &name),
            Err(_) => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    /// Every member's array, in the archive's order.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let all = self.load_all(py)?;
        self.names.iter().map(|n| Ok(all.get_item(n)?.expect("load_all holds every member"))).collect()
    }

    /// `(name, array)` for every member, in the archive's order.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        let values = self.values(py)?;
        Ok(self.names.iter().cloned().zip(values).collect())
    }

    /// A dict of every member's array. Members are read several at once (one thread per
    /// CPU, deflated ones inflated in parallel); under `mmap_mode`, stored members are
    /// mapped instead.
    fn load_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        if self.mmap_mode.is_some() {
            for name in &self.names {
                dict.set_item(name, self.member(py, name)?)?;
            }
            return Ok(dict);
        }
        let loaded = self.with_reader(py, |reader| reader.read_all::<Loaded>())?;
        for (name, array) in self.names.iter().zip(loaded) {
            dict.set_item(name, array.into_python(py)?)?;
        }
        Ok(dict)
    }

    /// Closes the archive's file; members mapped already stay valid.
    fn close(&self, py: Python<'_>) {
        // Waits (without the GIL) for a read under way in another thread.
        let reader = py.detach(|| self.reader.lock().unwrap_or_else(PoisonError::into_inner).take());
        drop(reader);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        format!("<npy.NpzFile {} ({} members)>", self.path.display(), self.names.len())
    }
}
