//! A `.npy` object's header, from one ranged read of its first bytes.

use bytes::Bytes;
use npy_core::header::{Header, Version};
use npy_core::{HeaderPrefix, ReadOptions, Result};
use object_store::path::Path;
use object_store::{GetRange, ObjectStore};

use crate::error::store_error;
use crate::source::get_range;

/// Bytes asked for by the first read of an object: 4 KiB, more than the header NumPy
/// writes for an array of up to a few hundred fields. A longer header costs one more read.
pub const HEADER_PREFIX: usize = 4096;

/// A `.npy` object whose header was read: where it is, how large it is, its header, and
/// the first bytes that were fetched with the header (they may hold the first rows).
#[derive(Debug, Clone)]
pub struct NpyObject {
    /// Where the object is in its store.
    pub location: Path,
    /// The object's size in bytes.
    pub size: u64,
    /// The parsed header.
    pub header: Header,
    /// The format version of the file.
    pub version: Version,
    /// Where the data starts, from the start of the object.
    pub data_offset: u64,
    /// The object's first bytes, as fetched with the header (header and maybe data).
    pub prefix: Bytes,
    /// The ETag of the version its first read found, where the store gives one: later
    /// reads of it ([`crate::RemoteNpy`]'s) are made on its condition, so a replaced
    /// object fails them instead of mixing versions.
    pub e_tag: Option<String>,
}

/// Reads the header of the `.npy` object at `location` with default [`ReadOptions`]: one
/// ranged GET of its first [`HEADER_PREFIX`] bytes (whose answer also gives the object's
/// size, so no HEAD is needed), and one more only when the header is longer.
///
/// # Errors
/// The header errors of [`HeaderPrefix::parse_with`], and store errors (a missing
/// object is [`npy_core::ErrorKind::Io`] of kind `NotFound`), naming the object.
pub async fn fetch_header(store: &dyn ObjectStore, location: &Path) -> Result<NpyObject> {
    fetch_header_with(store, location, &ReadOptions::new()).await
}

/// As [`fetch_header`], with options (the header size limit).
///
/// # Errors
/// As [`fetch_header`].
pub async fn fetch_header_with(store: &dyn ObjectStore, location: &Path, options: &ReadOptions) -> Result<NpyObject> {
    fetch_header_at(store, location, 0, None, None, options).await
}

/// Reads the header of the `.npy` stored at byte `start` of the object at `location` (an
/// `.npz` archive's stored member), `len` bytes long when known (else to the object's
/// end), as [`fetch_header_with`] does: the [`NpyObject`]'s size, data offset and prefix
/// are counted from `start`. Where `e_tag` is given, every read is of the version it
/// names (the archive's, as its directory's read found it).
///
/// # Errors
/// As [`fetch_header`].
pub(crate) async fn fetch_header_at(
    store: &dyn ObjectStore,
    location: &Path,
    start: u64,
    len: Option<u64>,
    e_tag: Option<String>,
    options: &ReadOptions,
) -> Result<NpyObject> {
    let name = location.to_string();
    let get = |n: u64, e_tag: Option<String>| async move {
        let got = get_range(store, location, GetRange::Bounded(start..start + n), e_tag).await;
        let got = got.map_err(|e| store_error(e, location.as_ref()))?;
        let (size, e_tag) = (got.size, got.e_tag.clone());
        Ok::<_, npy_core::Error>((size, e_tag, got.bytes(location.as_ref()).await?))
    };
    let first = len.map_or(HEADER_PREFIX as u64, |l| l.min(HEADER_PREFIX as u64));
    let (size, e_tag, mut prefix) = if first == 0 {
        (0, e_tag, Bytes::new())
    } else {
        let (size, e_tag, prefix) = get(first, e_tag).await?;
        (len.unwrap_or(size.saturating_sub(start)), e_tag, prefix)
    };
    loop {
        match HeaderPrefix::parse_with(&prefix, size, options).map_err(|e| e.reading(&name))? {
            HeaderPrefix::Complete { header, version, data_offset } => {
                let data_offset = data_offset as u64;
                let location = location.clone();
                return Ok(NpyObject { location, size, header, version, data_offset, prefix, e_tag });
            }
            HeaderPrefix::NeedBytes(n) => {
                // `HeaderPrefix::parse_with` asks for more only when the object has it (and the
                // header is under the size limit), so this ends.
                prefix = get(n as u64, e_tag.clone()).await?.2;
                if (prefix.len() as u64) < (n as u64).min(size) {
                    let found = prefix.len();
                    let why = format!("object returned {found} of the first {n} bytes asked for");
                    return Err(npy_core::Error::from(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why))
                        .reading(&name));
                }
            }
        }
    }
}
