//! A `.npy` object's header, from one ranged read of its first bytes.

use std::sync::Arc;

use bytes::Bytes;
use npy_core::header::{Header, Version};
use npy_core::{HeaderPrefix, ReadOptions, Result};
use object_store::path::Path;
use object_store::ObjectStore;

use crate::source::Source;

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
    /// The object (or archive) opened, pinned to that version: its later reads go through
    /// it ([`crate::RowScan::new`], [`crate::RemoteNpy`]).
    pub source: Arc<Source>,
}

/// Reads the header of the `.npy` object at `location` with default [`ReadOptions`]: one
/// ranged GET of its first [`HEADER_PREFIX`] bytes (whose answer also gives the object's
/// size and ETag, so no HEAD is needed), and one more only when the header is longer. The
/// object is opened as a [`Source`] ([`Source::of_object_start`]), which later reads share.
///
/// # Errors
/// The header errors of [`HeaderPrefix::parse_with`], and store errors (a missing
/// object is [`npy_core::ErrorKind::Io`] of kind `NotFound`), naming the object.
pub async fn fetch_header(store: &Arc<dyn ObjectStore>, location: &Path) -> Result<NpyObject> {
    fetch_header_with(store, location, &ReadOptions::new()).await
}

/// As [`fetch_header`], with options (the header size limit).
///
/// # Errors
/// As [`fetch_header`].
pub async fn fetch_header_with(
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    options: &ReadOptions,
) -> Result<NpyObject> {
    let (source, prefix) = Source::of_object_start(store.clone(), location, HEADER_PREFIX as u64).await?;
    header_from(Arc::new(source), 0, None, prefix, options).await
}

/// The header of the `.npy` at the start of `source` (a path or URL opened by
/// [`Source::open_start`]), whose first bytes `prefix` were read with it.
pub(crate) async fn header_of(source: Arc<Source>, prefix: Bytes, options: &ReadOptions) -> Result<NpyObject> {
    header_from(source, 0, None, prefix, options).await
}

/// Reads the header of the `.npy` stored at byte `start` of `source` (an `.npz` archive's
/// stored member), `len` bytes long when known (else to its end), as [`fetch_header_with`]
/// does: the [`NpyObject`]'s size, data offset and prefix are counted from `start`.
///
/// # Errors
/// As [`fetch_header`].
pub(crate) async fn fetch_header_at(
    source: Arc<Source>,
    start: u64,
    len: Option<u64>,
    options: &ReadOptions,
) -> Result<NpyObject> {
    let size = len.unwrap_or(source.size().saturating_sub(start));
    let first = start..start + size.min(HEADER_PREFIX as u64);
    let prefix = if first.is_empty() { Bytes::new() } else { source.read_bytes(first).await? };
    header_from(source, start, len, prefix, options).await
}

/// The header parsed from `prefix`, the first bytes of the `.npy` at byte `start` of
/// `source` (`len` bytes long, else to its end), more read while it asks for them.
async fn header_from(
    source: Arc<Source>,
    start: u64,
    len: Option<u64>,
    mut prefix: Bytes,
    options: &ReadOptions,
) -> Result<NpyObject> {
    let name = source.name().to_string();
    let size = len.unwrap_or(source.size().saturating_sub(start));
    loop {
        match HeaderPrefix::parse_with(&prefix, size, options).map_err(|e| e.reading(&name))? {
            HeaderPrefix::Complete { header, version, data_offset } => {
                let data_offset = data_offset as u64;
                let (location, e_tag) = (Path::from(name.as_str()), source.e_tag().map(str::to_string));
                return Ok(NpyObject { location, size, header, version, data_offset, prefix, e_tag, source });
            }
            HeaderPrefix::NeedBytes(n) => {
                // `HeaderPrefix::parse_with` asks for more only when the object has it (and the
                // header is under the size limit), so this ends.
                let end = (start + n as u64).min(start + size).min(source.size());
                prefix = source.read_bytes(start..end).await?;
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
