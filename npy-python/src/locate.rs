//! Where an array's data lie in a `.npy` file or an `.npz` member, local or at a URL:
//! `npy.open`'s, `npy.dask`'s and `npy.virtualizarr`'s one reading of headers and zip
//! directories, through npy-store (`RemoteNpy`'s header, `RemoteNpz`'s checked directory
//! and member headers, deflated ones inflated from their first bytes).
//!
//! A path or URL is read through npy-store's object store for it ([`npy_store::store_for`]);
//! an object only Python can reach (a VirtualiZarr registry's store) through [`PyStore`],
//! an object store whose reads call the Python object's `read(start, end)`.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use npy_core::header::Header;
use npy_core::npz::{Compression, MemberInfo, Method, ReaderOptions};
use npy_core::{Error, ErrorKind, ReadOptions};
use npy_store::{fetch_header_with, RemoteNpz};
use object_store::path::Path;
use object_store::{
    Attributes, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::errors::{context, to_python_without_pickle};
use npy_store::shared_runtime;

/// Where an array is: its header, where its data start in the file (0 for a compressed
/// member, whose data cannot be read in place), and a compressed member's compression.
struct Located {
    header: Header,
    offset: u64,
    compressed: Option<Compression>,
}

/// Why an array could not be located.
enum Refused {
    /// The member is not in the archive, which has these (zip names).
    NoMember(Vec<String>),
    /// A `.npy` file was asked for and this is an archive.
    Archive,
    Npy(Error),
}

impl From<Error> for Refused {
    fn from(e: Error) -> Self {
        Refused::Npy(e)
    }
}

/// The array of the `.npy` file `file` (a path or URL), or of its `.npz` member `member`
/// (`"x"` or `"x.npy"`): `(dtype, fortran_order, shape, offset, deflated, compression)`,
/// `offset` where its data start in the file (0 for a compressed member), `deflated`
/// whether the member is compressed (by deflate or Zstandard: its data cannot be read by
/// range), `compression` its name as `npz::Compression::named` takes it (`"stored"` for a
/// stored member or a `.npy` file). Reads the header only (and an
/// archive's directory); `reader`, an object with `size` and `read(start, end)`, reads
/// the bytes in place of opening `file` (which then only names it).
///
/// A header longer than `max_header_size` is refused in NumPy's words (but for its advice
/// to pass `allow_pickle=True`, which these readers do not take); a file or stored member
/// shorter than its header says is refused. Errors say `{file}: ` or `{file} (member 'x'):
/// ` first; an unknown member is a `KeyError`; I/O errors are `OSError`s naming the file.
#[pyfunction]
#[pyo3(signature = (file, member = None, max_header_size = crate::args::MAX_HEADER_SIZE, reader = None))]
pub(crate) fn locate<'py>(
    py: Python<'py>,
    file: String,
    member: Option<String>,
    max_header_size: usize,
    reader: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (store, path): (Arc<dyn ObjectStore>, Path) = match reader {
        Some(reader) => {
            let size: u64 = reader.getattr("size")?.extract()?;
            let store = PyStore { name: file.clone(), size, reader: reader.unbind() };
            (Arc::new(store), Path::from("object"))
        }
        None => {
            let at = npy_store::store_for(&file).map_err(|e| crate::errors::to_python(e.renamed(&file)))?;
            (at.store, at.path)
        }
    };
    let mut options = ReadOptions::new();
    options.max_header_size(max_header_size);
    let found = py.detach(|| match shared_runtime() {
        Ok(runtime) => runtime.block_on(locate_in(store, &path, member.as_deref(), &options)),
        Err(e) => Err(Refused::Npy(e)),
    });
    let name = match &member {
        Some(m) => format!("{file} (member {})", m.into_pyobject(py)?.repr()?),
        None => file.clone(),
    };
    let found = match found {
        Ok(found) => found,
        Err(Refused::NoMember(names)) => {
            let (member, names) = (member.unwrap_or_default(), PyList::new(py, names)?.repr()?);
            let member = member.into_pyobject(py)?.repr()?;
            return Err(PyKeyError::new_err(format!("{file}: no member {member} in the archive (it has {names})")));
        }
        Err(Refused::Archive) => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{file}: an .npz archive, not a .npy file: name one of its members"
            )))
        }
        Err(Refused::Npy(e)) => return Err(named_error(py, e, &file, &name)),
    };
    let dtype = npy_pyo3::to_numpy(py, &found.header.dtype)?;
    let shape = PyTuple::new(py, &found.header.shape)?;
    let compression = match found.compressed {
        None | Some(Compression::Stored) => "stored",
        Some(Compression::Deflated { .. }) => "deflate",
        Some(Compression::Zstd { .. }) => "zstd",
    };
    let compressed = found.compressed.is_some();
    (dtype, found.header.fortran_order, shape, found.offset, compressed, compression).into_pyobject(py)
}

/// `e` as the exception to raise: an I/O error naming `file`; anything else saying `name`
/// (the file, or the file and member) first, in place of npy's naming.
fn named_error(py: Python<'_>, e: Error, file: &str, name: &str) -> PyErr {
    if matches!(e.kind(), ErrorKind::Io(_)) {
        return crate::errors::to_python(e.renamed(file).reading(file));
    }
    let before = context(&e);
    let raised = to_python_without_pickle(e);
    let message = raised.value(py).to_string();
    let what = message.strip_prefix(before.as_str()).unwrap_or(&message);
    PyErr::from_type(raised.get_type(py), format!("{name}: {what}"))
}

/// [`locate`]'s reading, in the store.
async fn locate_in(
    store: Arc<dyn ObjectStore>,
    path: &Path,
    member: Option<&str>,
    options: &ReadOptions,
) -> Result<Located, Refused> {
    let mut limits = ReaderOptions::new();
    limits.read_options(options);
    let Some(member) = member else {
        return match fetch_header_with(&store, path, options).await {
            Ok(npy) => Ok(Located { header: npy.header, offset: npy.data_offset, compressed: None }),
            // An archive says so (not "bad magic"): npy-store opens it as one.
            Err(e) if matches!(e.kind(), ErrorKind::Format { .. }) => {
                match RemoteNpz::from_store_with(store, path, &limits).await {
                    Ok(_) => Err(Refused::Archive),
                    Err(_) => Err(Refused::Npy(e)),
                }
            }
            Err(e) => Err(Refused::Npy(e)),
        };
    };
    let npz = RemoteNpz::from_store_with(store, path, &limits).await?;
    let Some(info) = MemberInfo::find(npz.members(), member) else {
        return Err(Refused::NoMember(npz.members().iter().map(|m| m.member.clone()).collect()));
    };
    if info.compression == Some(Method::Stored) {
        let npy = npz.member(&info.member).await?;
        return Ok(Located { header: npy.header().clone(), offset: npy.data_start(), compressed: None });
    }
    let (header, _) = npz.member_header(&info.member).await?;
    let compressed = info.compression.map_or(Compression::deflated(), Method::compression);
    Ok(Located { header, offset: 0, compressed: Some(compressed) })
}

/// An object only Python can read, as an object store of one object (at any path): its
/// `size`, and `read(start, end)` giving those bytes. Reads only; its reads take the GIL.
struct PyStore {
    /// What errors call it.
    name: String,
    size: u64,
    reader: Py<PyAny>,
}

impl fmt::Debug for PyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyStore").field("name", &self.name).field("size", &self.size).finish()
    }
}

impl fmt::Display for PyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PyStore({})", self.name)
    }
}

impl PyStore {
    fn refused(&self, what: &str) -> object_store::Error {
        object_store::Error::NotImplemented { operation: format!("{what} of {}", self.name), implementer: "npy".into() }
    }

    fn meta(&self, location: &Path) -> ObjectMeta {
        ObjectMeta {
            location: location.clone(),
            last_modified: Default::default(),
            size: self.size,
            e_tag: None,
            version: None,
        }
    }
}

#[async_trait]
impl ObjectStore for PyStore {
    async fn put_opts(&self, _: &Path, _: PutPayload, _: PutOptions) -> object_store::Result<PutResult> {
        Err(self.refused("a write"))
    }

    async fn put_multipart_opts(
        &self,
        _: &Path,
        _: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(self.refused("a write"))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        let meta = self.meta(location);
        let range = match &options.range {
            Some(range) => range.as_range(self.size).map_err(|e| object_store::Error::Generic {
                store: "npy",
                source: format!("{}: {e}", self.name).into(),
            })?,
            None => 0..self.size,
        };
        let bytes = if options.head || range.is_empty() {
            Bytes::new()
        } else {
            let read = Python::attach(|py| -> PyResult<Vec<u8>> {
                self.reader.bind(py).call_method1("read", (range.start, range.end))?.extract()
            });
            let read = read.map_err(|e| object_store::Error::Generic { store: "npy", source: Box::new(e) })?;
            Bytes::from(read)
        };
        let payload = GetResultPayload::Stream(stream::once(async move { Ok(bytes) }).boxed());
        Ok(GetResult { payload, meta, range, attributes: Attributes::new() })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let refused = self.refused("a delete");
        locations
            .map(move |_| {
                Err(object_store::Error::NotImplemented { operation: refused.to_string(), implementer: "npy".into() })
            })
            .boxed()
    }

    fn list(&self, _: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        stream::once(std::future::ready(Err(self.refused("a listing")))).boxed()
    }

    async fn list_with_delimiter(&self, _: Option<&Path>) -> object_store::Result<ListResult> {
        Err(self.refused("a listing"))
    }

    async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> object_store::Result<()> {
        Err(self.refused("a copy"))
    }
}
