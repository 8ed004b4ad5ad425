//! An `.npz` archive read remotely: its directory from the archive's tail, stored members
//! by ranged reads, compressed members decompressed as their bytes arrive. Its table under
//! a filter is `filter`'s ([`Filter`](crate::filter::Filter)), and read so that no row comes
//! out before its members passed their checks `checked`'s
//! ([`RemoteNpz::checked_table_batches`]).

use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema, SchemaRef};
use bytes::{Bytes, BytesMut};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use npy_arrow::npz::{MemberColumns, RESIDUE_PREFIX};
use npy_arrow::schema::RESIDUE_KEY;
use npy_arrow::{ConvertOptions, Layout, Part};
use npy_core::header::{Header, Version};
use npy_core::npz::{MemberDecoder, MemberInfo, Method, ReaderOptions};
use npy_core::{Error, HeaderPrefix, ReadNpy, ReadOptions, Result};
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::npz_error;
use crate::filter::Judged;
use crate::fortran_blocks::{self, BlocksFrom, FortranBlocks, WHOLE_FORTRAN_BYTES};
use crate::header::{fetch_header_at, NpyObject};
use crate::remote::RemoteNpy;
use crate::rows::{batches_from, member_row_batches, Check, Place, RowBytes, Verify};
use crate::source::{read_full_at, Source};
use crate::stream::BatchStream;
use crate::together::{Span, Together};

pub(crate) mod checked;
pub(crate) mod filter;

/// Bytes fetched from the end of an archive first: the end record with the longest
/// comment, and the central directory of up to about a thousand members.
pub const NPZ_TAIL: u64 = (64 << 10) + 22;

/// Bytes fetched per read of the directory's blocks past the tail (big directories).
const BLOCK: u64 = 256 << 10;

/// An `.npz` archive in a store, opened by reading and checking its zip directory.
///
/// The directory is read from one ranged GET of the archive's last [`NPZ_TAIL`] bytes,
/// and more only for bigger directories (and for local headers outside the tail, one
/// GET per 256 KiB block), with every check of npy-core's [`npy_core::npz::Reader`]
/// (end records, zip64, names, sizes, local headers, overlaps). Stored members are then
/// [`RemoteNpy`] views whose rows are ranged reads; compressed members are decompressed as
/// their bytes arrive, their size and CRC-32 checked at their end.
///
/// # Examples
/// ```
/// use std::{io::Cursor, sync::Arc};
/// use npy_core::npz::{Compression, DeflateOption, Method, Writer};
/// use npy_store::RemoteNpz;
/// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add("t", &[0.0f64, 0.5, 1.0, 1.5])?;
/// w.add_with("n", &[3u32, 1, 4, 1], Compression::deflated())?;
/// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
/// let location = Path::from("run.npz");
/// store.put(&location, w.finish()?.into_inner().into()).await?;
///
/// let npz = RemoteNpz::from_store(store, &location).await?;
/// assert_eq!(npz.names(), ["t", "n"]);
/// assert_eq!(npz.member("t").await?.read_rows::<Vec<f64>>(1..3).await?, [0.5, 1.0]);
/// assert_eq!(npz.read::<Vec<u32>>("n").await?, [3, 1, 4, 1]);
/// assert_eq!(npz.members()[1].compression, Some(Method::Deflated(DeflateOption::Normal)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpz {
    location: Path,
    /// The archive, pinned to the version its tail's read found: every later read is of
    /// that version (or fails, naming it).
    source: Arc<Source>,
    members: Vec<MemberInfo>,
    names: Vec<String>,
    options: ReadOptions,
    /// The headers of stored members fetched so far, by member name: a table's scan asks
    /// for each several times (its schema, its checks, its scan).
    headers: Arc<Mutex<HashMap<String, NpyObject>>>,
}

impl RemoteNpz {
    /// Opens the archive at `location` in `store` with default [`ReaderOptions`].
    ///
    /// # Errors
    /// Store errors (a missing object is [`npy_core::ErrorKind::Io`] of kind `NotFound`);
    /// [`npy_core::ErrorKind::Npz`] for an archive that is not a zip archive or fails a
    /// check; all naming the archive.
    pub async fn from_store(store: Arc<dyn ObjectStore>, location: &Path) -> Result<RemoteNpz> {
        RemoteNpz::from_store_with(store, location, &ReaderOptions::new()).await
    }

    /// As [`RemoteNpz::from_store`], with options: the archive's limits, and the
    /// [`ReadOptions`] its members are read with ([`ReaderOptions::read_options`]), as
    /// npy-core's [`npy_core::npz::Reader::from_path_with`] takes them.
    ///
    /// # Errors
    /// As [`RemoteNpz::from_store`].
    pub async fn from_store_with(
        store: Arc<dyn ObjectStore>,
        location: &Path,
        options: &ReaderOptions,
    ) -> Result<RemoteNpz> {
        let (source, tail_start, tail) = Source::of_object_tail(store, location, NPZ_TAIL).await?;
        RemoteNpz::from_tail(Arc::new(source), location.clone(), (tail_start, tail), options).await
    }

    /// The archive `source` (opened by [`Source::open`]), its directory read from one
    /// read of its tail and checked as [`RemoteNpz::from_store_with`] checks it.
    pub(crate) async fn of_source(source: Arc<Source>, options: &ReaderOptions) -> Result<RemoteNpz> {
        let from = source.size().saturating_sub(NPZ_TAIL);
        let tail = source.read_bytes(from..source.size()).await?;
        let location = Path::from(source.name());
        RemoteNpz::from_tail(source, location, (from, tail), options).await
    }

    /// The archive at the path or URL `name` (as [`Source::open`] opens it), opened as
    /// [`RemoteNpz::from_store_with`] opens one: one read of its tail, its directory
    /// checked; errors name it `name`.
    ///
    /// # Errors
    /// As [`Source::open`] and [`RemoteNpz::from_store`].
    pub async fn open_with(name: &str, options: &ReaderOptions) -> Result<RemoteNpz> {
        let (source, tail_start, tail) = Source::open_tail(name, NPZ_TAIL).await?;
        RemoteNpz::from_tail(Arc::new(source), Path::from(name), (tail_start, tail), options).await
    }

    /// The archive `source` (at `location`), whose bytes from `tail.0` to its end are
    /// `tail.1`: its directory read from them, and more blocks where it is larger.
    async fn from_tail(
        source: Arc<Source>,
        location: Path,
        tail: (u64, Bytes),
        options: &ReaderOptions,
    ) -> Result<RemoteNpz> {
        let name = source.name().to_string();
        let ranged =
            Ranged { handle: tokio::runtime::Handle::current(), source: source.clone(), pos: 0, tail, block: None };
        let limits = options.clone();
        // npy-core's reader checks the directory through blocking reads; those past the
        // tail wait on the store. They run on a thread of their own, not on tokio's
        // blocking pool: a store that reads on that pool (the local one does) would wait
        // for a pool thread, and with as many archives opened at once as the pool has
        // threads, the directory reads would hold them all and wait forever.
        let (answer, read) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new().name("npz-directory".into()).spawn(move || {
            let reader = npy_core::npz::Reader::from_reader_with(ranged, &limits);
            // The receiver is gone when the open was dropped: nobody waits for the answer.
            let _ = answer.send(reader.map(|r| (r.members().to_vec(), r.names().to_vec())));
        });
        spawned.map_err(|e| Error::from(e).reading(&name))?;
        let (members, names) = match read.await {
            Ok(directory) => directory.map_err(|e| e.reading(&name))?,
            Err(_) => {
                let e = io::Error::other("reading the directory failed: its thread ended without an answer");
                return Err(Error::from(e).reading(&name));
            }
        };
        let options = options.member_options().clone();
        let headers = Arc::default();
        Ok(RemoteNpz { location, source, members, names, options, headers })
    }

    /// The archive opened (its reads go through it).
    pub(crate) fn source(&self) -> &Arc<Source> {
        &self.source
    }

    /// Where the archive is in its store.
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The arrays' names, as NumPy's `NpzFile.files`: member names with one `.npy`
    /// stripped, in archive order (as [`npy_core::npz::Reader::names`]).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Details of every member, in archive order (as [`npy_core::npz::Reader::members`]):
    /// the directory fetched and checked when the archive was opened, so this reads
    /// nothing and cannot fail.
    pub fn members(&self) -> &[MemberInfo] {
        &self.members
    }

    pub(crate) fn info(&self, name: &str) -> Result<&MemberInfo> {
        MemberInfo::find(&self.members, name).ok_or_else(|| {
            Error::from(npy_core::ErrorKind::Npz {
                member: Some(name.to_string()),
                reason: format!("no such array; the archive has {:?}", self.names),
                source: None,
            })
            .reading(self.location.as_ref())
        })
    }

    /// Stored member `name` as a [`RemoteNpy`]: its header from one ranged GET (the first
    /// time; kept for the next), its rows ranged reads. Its CRC is not checked (no read
    /// covers all its bytes): read the member with [`RemoteNpz::member_batches`] or check it
    /// with [`RemoteNpz::verify_member`].
    ///
    /// # Errors
    /// [`npy_core::ErrorKind::Npz`] for an unknown or compressed member (read those with
    /// [`RemoteNpz::read`] or [`RemoteNpz::member_batches`]); header errors, naming the
    /// archive and member.
    pub async fn member(&self, name: &str) -> Result<RemoteNpy> {
        let info = self.info(name)?;
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        let Some(start) = info.data_start.filter(|_| info.compression == Some(Method::Stored)) else {
            let why = "a compressed member has no rows to read in place: read it with read or member_batches";
            return Err(located(npz_error(&info.member, why)));
        };
        let cached = self.headers.lock().ok().and_then(|h| h.get(&info.member).cloned());
        let object = match cached {
            Some(object) => object,
            None => {
                let object = fetch_header_at(self.source.clone(), start, Some(info.size), &self.options)
                    .await
                    .map_err(located)?;
                if let Ok(mut headers) = self.headers.lock() {
                    headers.insert(info.member.clone(), object.clone());
                }
                object
            }
        };
        Ok(RemoteNpy::member(object, start, &info.member))
    }

    /// Member `name`'s bytes (a whole `.npy`): a stored member's from one ranged GET, a
    /// compressed one's decompressed as they arrive, its size and CRC-32 checked.
    ///
    /// # Errors
    /// [`npy_core::ErrorKind::Npz`] for an unknown member, compressed data that is bad,
    /// ends early or runs past the claimed size, and a bad CRC; store errors; naming the
    /// archive and member.
    pub async fn member_bytes(&self, name: &str) -> Result<Bytes> {
        let info = self.info(name)?;
        // A stored member's size is its bytes in the archive (checked to lie within it):
        // made room for at once, not doubled into. A compressed one's is only claimed.
        let stored = info.compression == Some(Method::Stored);
        let room = if stored { info.size } else { info.compressed_size };
        let mut all = BytesMut::with_capacity(usize::try_from(room).unwrap_or(0));
        let mut chunks = self.member_stream(info).await?;
        while let Some(chunk) = chunks.next().await {
            all.extend_from_slice(&chunk?);
        }
        Ok(all.freeze())
    }

    /// Checks member `name` as npy-core's npz reader does when it reads it: its bytes read
    /// (stored) or decompressed (deflate or Zstandard) as they arrive and dropped, their count and CRC-32
    /// checked against its directory entry. Memory: one chunk.
    ///
    /// # Errors
    /// As [`RemoteNpz::member_bytes`].
    ///
    /// # Examples
    /// ```
    /// use std::{io::Cursor, sync::Arc};
    /// use npy_core::npz::Writer;
    /// use npy_store::RemoteNpz;
    /// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("t", &[0.0f64, 0.5, 1.0])?;
    /// let mut bytes = w.finish()?.into_inner();
    /// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    /// let location = Path::from("run.npz");
    /// store.put(&location, bytes.clone().into()).await?;
    /// RemoteNpz::from_store(store.clone(), &location).await?.verify_member("t").await?;
    ///
    /// // One bit of the last value flipped: the member's CRC-32 no longer matches.
    /// let last = bytes.windows(8).position(|w| w == 1.0f64.to_le_bytes()).unwrap();
    /// bytes[last] ^= 1;
    /// store.put(&location, bytes.into()).await?;
    /// let e = RemoteNpz::from_store(store, &location).await?.verify_member("t").await.unwrap_err();
    /// assert!(e.to_string().contains("CRC-32"), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn verify_member(&self, name: &str) -> Result<()> {
        let info = self.info(name)?;
        let mut chunks = self.member_stream(info).await?;
        while let Some(chunk) = chunks.next().await {
            chunk?;
        }
        Ok(())
    }

    /// Member `name` read as any [`ReadNpy`] type (`Vec<T>`, `Array<T>`, `DynArray`, ...),
    /// as [`npy_core::npz::Reader::read`] reads it, its size and CRC-32 checked.
    ///
    /// # Errors
    /// As [`RemoteNpz::member_bytes`]; as [`npy_core::NpyReader::read`] for the member's `.npy`.
    pub async fn read<V: ReadNpy>(&self, name: &str) -> Result<V> {
        let info = self.info(name)?;
        let bytes = self.member_bytes(name).await?;
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        // The member's bytes are in memory: a header claiming more data than they hold is
        // a truncation error, never an allocation.
        npy_core::NpyReader::from_reader_with(&bytes[..], &self.options).and_then(|r| r.read()).map_err(located)
    }

    /// Member `name`'s rows as record batches with default [`ConvertOptions`], of the
    /// columns `projection` (`None`: all): a stored member's by one ranged GET of all its
    /// data (see [`crate::RowScan`]), a compressed one's decompressed and cut into batches as
    /// its bytes arrive (memory: one batch's bytes and one chunk; a Fortran-order N-d member
    /// is decompressed whole first). Every byte of the member is hashed as it is read, and its
    /// size and CRC-32 are checked before the batch of its last rows is given out: a stream
    /// that ends without an error gave only checked rows, and a corrupt member's stream
    /// ends with an error naming the archive and member (some of its first batches may
    /// have come out before it: a reader that stops early has not had its rows checked).
    ///
    /// # Errors
    /// As [`RemoteNpz::member`] and [`Layout`]'s now; the stream's as
    /// [`RemoteNpz::member_bytes`] and [`crate::RowScan::batches`].
    pub async fn member_batches(&self, name: &str, projection: Option<&[usize]>) -> Result<BatchStream> {
        self.member_batches_with(name, projection, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpz::member_batches`], with options: batches of
    /// [`ConvertOptions::batch_rows_for`] the member's rows.
    ///
    /// # Errors
    /// As [`RemoteNpz::member_batches`].
    pub async fn member_batches_with(
        &self,
        name: &str,
        projection: Option<&[usize]>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let parts: Option<Vec<Part>> = projection.map(|columns| columns.iter().map(|&c| Part::whole(c)).collect());
        let (layout, prepared) = self.member_scan(name, options, parts.as_deref()).await?;
        let schema = match &parts {
            Some(parts) => layout.select(parts)?.schema(),
            None => layout.schema(),
        };
        Ok(BatchStream::new(schema, prepared.start(options.batch_rows_for(layout.row_bytes()))))
    }

    /// The layout of member `name` (its header's mapping to Arrow, unprojected) and its
    /// scan, ready to start ([`Prepared::start`]) once the batch size is known, as
    /// [`RemoteNpz::member_batches_with`] gives it.
    pub(crate) async fn member_scan(
        &self,
        name: &str,
        options: &ConvertOptions,
        parts: Option<&[Part]>,
    ) -> Result<(Layout, Prepared)> {
        let info = self.info(name)?;
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        let member = info.member.clone();
        if info.compression == Some(Method::Stored) {
            let npy = self.member(name).await?;
            let layout = npy.layout_with(options)?;
            let projected = match parts {
                Some(parts) => layout.select(parts).map_err(located)?,
                None => layout.clone(),
            };
            // The member's CRC-32 covers its header too: the bytes fetched with it.
            let object = npy.object();
            let header = object
                .prefix
                .get(..object.data_offset as usize)
                .ok_or_else(|| located(npz_error(&info.member, "the member's header was not fetched whole")))?;
            let verify = Verify::new(header, Check::of(info));
            let prepared = Prepared::Stored {
                source: self.source.clone(),
                data_start: npy.data_start(),
                layout: Arc::new(projected),
                rows: 0..npy.rows(),
                verify,
                member,
            };
            return Ok((layout, prepared));
        }
        let (header, version, mut chunks, pending) = self.decompressed_head(info).await?;
        let full = Layout::new_with(&header, Some(version), options).map_err(located)?;
        let mut layout = Arc::new(match parts {
            Some(parts) => full.select(parts).map_err(located)?,
            None => full.clone(),
        });
        let rows = 0..layout.rows();
        let name = self.location.to_string();
        let fortran = header.fortran_order && header.shape.len() > 1;
        let source = if fortran && full.rows() as u64 * full.row_bytes() as u64 > WHOLE_FORTRAN_BYTES {
            // Rows of a larger one are read a block at a time from its data decompressed into a
            // temporary file.
            let file = fortran_blocks::spool(&pending, chunks, located).await?;
            let blocks = FortranBlocks::new(BlocksFrom::File(Arc::new(file)), 0, &full)
                .ok_or_else(|| located(npz_error(&info.member, "a Fortran-order array's rows have no items")))?;
            layout = Arc::new(layout.c_ordered());
            RowBytes::FortranBlocks(Box::new(blocks))
        } else if fortran {
            let mut pending = pending;
            while let Some(chunk) = chunks.next().await {
                pending.extend_from_slice(&chunk?);
            }
            RowBytes::Whole(pending.freeze())
        } else {
            RowBytes::Stream(chunks, pending)
        };
        Ok((full, Prepared::Compressed { name, layout, rows, source, member }))
    }

    /// A compressed member's header, decompressed from its first bytes, and the rest of its
    /// bytes: those decompressed past the header, and the stream of the others.
    async fn decompressed_head(
        &self,
        info: &MemberInfo,
    ) -> Result<(Header, Version, BoxStream<'static, Result<Bytes>>, BytesMut)> {
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        let mut chunks = self.member_stream(info).await?;
        let mut pending = BytesMut::new();
        let (header, version, data_offset) = loop {
            match HeaderPrefix::parse_with(&pending, info.size, &self.options).map_err(located)? {
                HeaderPrefix::Complete { header, version, data_offset } => break (header, version, data_offset),
                HeaderPrefix::NeedBytes(_) => match chunks.next().await {
                    Some(chunk) => pending.extend_from_slice(&chunk?),
                    None => return Err(located(npz_error(&info.member, "the member ends inside its .npy header"))),
                },
            }
        };
        let _ = pending.split_to(data_offset);
        Ok((header, version, chunks, pending))
    }

    /// Member `name`'s `.npy` header and format version: a stored member's from one ranged
    /// GET of its first bytes, a compressed one's decompressed from its first bytes (its first
    /// GET, dropped once the header is read). Where its data starts in the archive is its
    /// [`MemberInfo::data_start`] plus the header's length, for a stored member:
    /// [`RemoteNpz::member`] gives it ([`RemoteNpy::data_start`]).
    ///
    /// # Errors
    /// [`npy_core::ErrorKind::Npz`] for an unknown member; header errors (a stored member
    /// shorter than its header says is [`npy_core::ErrorKind::Truncated`]); store errors;
    /// naming the archive and member.
    ///
    /// # Examples
    /// ```
    /// use std::{io::Cursor, sync::Arc};
    /// use npy_core::npz::{Compression, Writer};
    /// use npy_store::RemoteNpz;
    /// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add_with("n", &[3u32, 1, 4], Compression::deflated())?;
    /// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    /// let location = Path::from("run.npz");
    /// store.put(&location, w.finish()?.into_inner().into()).await?;
    ///
    /// let (header, _version) = RemoteNpz::from_store(store, &location).await?.member_header("n").await?;
    /// assert_eq!(header.shape, [3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn member_header(&self, name: &str) -> Result<(Header, Version)> {
        let info = self.info(name)?;
        if info.compression == Some(Method::Stored) {
            let npy = self.member(name).await?;
            return Ok((npy.header().clone(), npy.object().version));
        }
        let (header, version, _, _) = self.decompressed_head(info).await?;
        Ok((header, version))
    }

    /// The layout of member `name` with default [`ConvertOptions`]: a stored member's
    /// header from one ranged GET, a compressed one's decompressed from the member's first bytes
    /// (its first GET, dropped once the header is read).
    ///
    /// # Errors
    /// As [`RemoteNpz::member`] (but for compressed members, which are read); [`Layout`]'s.
    pub async fn member_layout(&self, name: &str) -> Result<Layout> {
        self.member_layout_with(name, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpz::member_layout`], with options.
    ///
    /// # Errors
    /// As [`RemoteNpz::member_layout`].
    pub async fn member_layout_with(&self, name: &str, options: &ConvertOptions) -> Result<Layout> {
        let info = self.info(name)?;
        if info.compression == Some(Method::Stored) {
            return self.member(name).await?.layout_with(options);
        }
        let (header, version, _, _) = self.decompressed_head(info).await?;
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        Layout::new_with(&header, Some(version), options).map_err(located)
    }

    /// Members `names` (all, in archive order, when `None`) as one table with default
    /// [`ConvertOptions`], as [`npy_arrow::NpzBatchReader`] reads a local archive: a column
    /// per member ([`MemberColumns`]), the members of one length. Gives the table's schema
    /// and rows.
    ///
    /// # Errors
    /// As [`RemoteNpz::member_layout`]; [`npy_core::ErrorKind::Npz`] for members of
    /// different lengths, naming both.
    pub async fn table_schema(&self, names: Option<&[&str]>) -> Result<(SchemaRef, usize)> {
        self.table_schema_with(names, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpz::table_schema`], with options.
    ///
    /// # Errors
    /// As [`RemoteNpz::table_schema`].
    pub async fn table_schema_with(
        &self,
        names: Option<&[&str]>,
        options: &ConvertOptions,
    ) -> Result<(SchemaRef, usize)> {
        self.selection_schema(&self.whole(names), options).await
    }

    /// Members `names` (all, in archive order, when `None`), each whole.
    pub(crate) fn whole(&self, names: Option<&[&str]>) -> Vec<(String, Option<Vec<Part>>)> {
        self.table_names(names).into_iter().map(|n| (n, None)).collect()
    }

    /// The schema and rows of a selection's table: for each member, its table columns
    /// (`None`: [`MemberColumns`]) or the parts of its layout given, named after the
    /// member ([`Part::name`]).
    pub(crate) async fn selection_schema(
        &self,
        selection: &[(String, Option<Vec<Part>>)],
        options: &ConvertOptions,
    ) -> Result<(SchemaRef, usize)> {
        let mut fields = Vec::new();
        let mut rows: Option<(usize, String)> = None;
        for (name, parts) in selection {
            let layout = self.member_layout_with(name, options).await?;
            let info = self.info(name)?;
            self.check_rows(&mut rows, &info.member, layout.rows())?;
            fields.extend(self.selected_fields(name, &layout, parts.as_deref())?);
        }
        Ok((Arc::new(Schema::new(fields)), rows.map_or(0, |(n, _)| n)))
    }

    /// The table's fields of member `name`, whose layout is `layout`: its
    /// [`MemberColumns`], or `parts` of its layout named after it (the residue column as
    /// the table names it).
    pub(crate) fn selected_fields(&self, name: &str, layout: &Layout, parts: Option<&[Part]>) -> Result<Vec<Field>> {
        let info = self.info(name)?;
        let located = |e: Error| e.in_member(&info.member).reading(self.location.as_ref());
        Ok(match parts {
            None => MemberColumns::new(&info.name, layout, info.compression).fields().to_vec(),
            Some(parts) => {
                let schema = layout.select(parts).map_err(located)?.schema();
                (parts.iter().zip(schema.fields()))
                    .map(|(p, f)| {
                        let name = match f.metadata().contains_key(RESIDUE_KEY) {
                            true => format!("{RESIDUE_PREFIX}{}", info.name),
                            false => p.name(&info.name),
                        };
                        f.as_ref().clone().with_name(name)
                    })
                    .collect()
            }
        })
    }

    /// The batches of [`RemoteNpz::table_schema`]'s table, with default [`ConvertOptions`]:
    /// every member's batches read side by side (stored members by one ranged GET each,
    /// compressed ones decompressed as they arrive), their columns put together.
    ///
    /// # Errors
    /// As [`RemoteNpz::table_schema`]; the stream's as [`RemoteNpz::member_batches`].
    pub async fn table_batches(&self, names: Option<&[&str]>) -> Result<BatchStream> {
        self.table_batches_with(names, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpz::table_batches`], with options: batches of
    /// [`ConvertOptions::batch_rows_for`] the bytes of a row of all members.
    ///
    /// # Errors
    /// As [`RemoteNpz::table_batches`].
    pub async fn table_batches_with(&self, names: Option<&[&str]>, options: &ConvertOptions) -> Result<BatchStream> {
        self.selection_batches(&self.whole(names), options).await
    }

    /// The batches of [`RemoteNpz::selection_schema`]'s table, as
    /// [`RemoteNpz::table_batches_with`] reads them.
    pub(crate) async fn selection_batches(
        &self,
        selection: &[(String, Option<Vec<Part>>)],
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let mut prepared = Vec::new();
        let mut fields = Vec::new();
        let mut rows: Option<(usize, String)> = None;
        let mut row_bytes = 0usize;
        for (name, parts) in selection {
            let (layout, scan) = self.member_scan(name, options, parts.as_deref()).await?;
            let info = self.info(name)?;
            self.check_rows(&mut rows, &info.member, layout.rows())?;
            // The bytes of a row it reads: parts are decoded from the whole rows' bytes.
            row_bytes = row_bytes.saturating_add(layout.row_bytes());
            fields.extend(self.selected_fields(name, &layout, parts.as_deref())?);
            // A member read whole gives the table's columns; one read in parts, its batches'.
            let columns = parts.is_none().then(|| MemberColumns::new(&info.name, &layout, info.compression));
            prepared.push((info.member.clone(), columns, scan));
        }
        // One batch size for all members, from all their rows' bytes (as NpzBatchReader).
        let batch_rows = options.batch_rows_for(row_bytes);
        let (heads, scans): (Vec<_>, Vec<Prepared>) = prepared.into_iter().map(|(m, c, s)| ((m, c), s)).unzip();
        let together = Prepared::together(&scans, batch_rows);
        let members: Vec<_> = (heads.into_iter().zip(scans).zip(together))
            .map(|(((member, columns), scan), together)| {
                (member, columns, scan.start_filtered(batch_rows, None, together))
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let total = rows.map_or(0, |(n, _)| n);
        let location = self.location.to_string();
        let state = (members, 0usize);
        let table = schema.clone();
        let batches = stream::unfold(state, move |(mut members, done)| {
            let (schema, location) = (schema.clone(), location.clone());
            async move {
                if done >= total && !members.is_empty() {
                    // Each member's stream to its end: one of no rows (or ended early) still
                    // makes its checks there.
                    for (_, _, batches) in &mut members {
                        while let Some(batch) = batches.next().await {
                            if let Err(e) = batch {
                                return Some((Err(e), (Vec::new(), total)));
                            }
                        }
                    }
                    return None;
                }
                let mut columns = Vec::with_capacity(schema.fields().len());
                let mut got = None;
                for (member, columns_of, batches) in &mut members {
                    let located = |e: Error| e.in_member(member).reading(&location);
                    let batch = match batches.next().await {
                        Some(Ok(batch)) => batch,
                        Some(Err(e)) => return Some((Err(e), (Vec::new(), total))),
                        None => {
                            let e = located(npz_error(member, "the member ended before its rows"));
                            return Some((Err(e), (Vec::new(), total)));
                        }
                    };
                    got = Some(batch.num_rows());
                    match columns_of.as_ref().map(|c| c.columns(&batch)) {
                        Some(Ok(c)) => columns.extend(c),
                        Some(Err(e)) => return Some((Err(located(e)), (Vec::new(), total))),
                        None => columns.extend(batch.columns().iter().cloned()),
                    }
                }
                // A table of no members has no rows.
                let rows = got?;
                let options = RecordBatchOptions::new().with_row_count(Some(rows));
                let batch = RecordBatch::try_new_with_options(schema, columns, &options)
                    .map_err(|e| Error::from(io::Error::other(e)).reading(&location));
                Some((batch, (members, done + rows)))
            }
        });
        Ok(BatchStream::new(table, batches.boxed()))
    }

    fn table_names(&self, names: Option<&[&str]>) -> Vec<String> {
        match names {
            Some(names) => names.iter().map(|n| n.to_string()).collect(),
            None => self.members.iter().map(|m| m.name.clone()).collect(),
        }
    }

    /// Checks that member `name`'s `rows` (its name in the zip) are those of the first
    /// member, kept in `first`.
    pub(crate) fn check_rows(&self, first: &mut Option<(usize, String)>, name: &str, rows: usize) -> Result<()> {
        match first {
            None => *first = Some((rows, name.to_string())),
            Some((n, first)) if *n != rows => {
                let reason = format!(
                    "{rows} rows, where member '{first}' has {n}: an archive reads as one table only when its \
                     members share a length"
                );
                return Err(npz_error(name, &reason).reading(self.location.as_ref()));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// The member's bytes as they arrive (stored) or decompress (deflate or Zstandard), ending with an
    /// error if they are short, long, or fail the CRC.
    async fn member_stream(&self, info: &MemberInfo) -> Result<BoxStream<'static, Result<Bytes>>> {
        let name = self.location.to_string();
        let member = info.member.clone();
        let located = move |e: Error| e.in_member(&member).reading(&name);
        let start = info.data_start.ok_or_else(|| located(npz_error(&info.member, "the member's place is unknown")))?;
        let stored = info.compression == Some(Method::Stored);
        let want = Check::of(info);
        if info.compressed_size == 0 {
            let empty = stream::once(async move { want.finish(0, &crc32fast::Hasher::new()).map(|()| Bytes::new()) });
            return Ok(empty.map_err(located).boxed());
        }
        let raw = self.source.stream(start..start + info.compressed_size).await.map_err(&located)?;
        let decoder = MemberDecoder::new(info).map_err(&located)?;
        let state =
            Decompressing { raw, decoder, size: info.size, stored, input: Bytes::new(), stalled: false, done: false };
        Ok(stream::unfold(state, Decompressing::next).map_err(located).boxed())
    }
}

impl RemoteNpz {
    /// Every member read as `V` (`Vec<T>`, `DynArray`, ...), in archive order, as
    /// [`RemoteNpz::read`] reads each (its size and CRC-32 checked): four members fetched
    /// at once, each read as its bytes are in, so an archive of many small members costs a
    /// round trip per four members, not one each.
    /// What `np.load(url)`'s `NpzFile` gives for all its members (npy-store's
    /// counterpart of [`npy_core::npz::Reader::read_all`]).
    ///
    /// # Errors
    /// As [`RemoteNpz::read`], for the first failing member in archive order (the error
    /// names the archive and member); members after it may not be read.
    ///
    /// # Examples
    /// ```
    /// use std::{io::Cursor, sync::Arc};
    /// use npy_core::npz::{Compression, Writer};
    /// use npy_store::RemoteNpz;
    /// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("t", &[0.0f64, 0.5])?;
    /// w.add_with("v", &[2.5f64], Compression::deflated())?;
    /// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    /// let location = Path::from("run.npz");
    /// store.put(&location, w.finish()?.into_inner().into()).await?;
    ///
    /// let npz = RemoteNpz::from_store(store, &location).await?;
    /// assert_eq!(npz.read_all::<Vec<f64>>().await?, [vec![0.0, 0.5], vec![2.5]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn read_all<V: ReadNpy>(&self) -> Result<Vec<V>> {
        let reads = stream::iter(&self.names).map(|name| self.read::<V>(name));
        reads.buffered(READ_ALL_FETCHES).try_collect().await
    }
}

/// Members fetched at once by [`RemoteNpz::read_all`]: a few round trips in flight, not
/// so many that a large archive's members all sit in memory as bytes at once.
const READ_ALL_FETCHES: usize = 4;

/// A member's scan, its header read, not started: the batch size of a table depends on
/// all its members' rows.
pub(crate) enum Prepared {
    /// A stored member, read by one ranged GET of all its data and checked.
    Stored {
        /// The archive, pinned to the version its directory came from.
        source: Arc<Source>,
        data_start: u64,
        layout: Arc<Layout>,
        rows: Range<usize>,
        verify: Verify,
        member: String,
    },
    /// A compressed member, decompressed as its bytes arrive (checked by its stream).
    Compressed { name: String, layout: Arc<Layout>, rows: Range<usize>, source: RowBytes, member: String },
}

impl Prepared {
    /// The member's batches of `batch_rows` rows; errors name the member.
    fn start(self, batch_rows: usize) -> BoxStream<'static, Result<RecordBatch>> {
        self.start_filtered(batch_rows, None, None)
    }

    /// The reads that the stored members of `prepared` (the columns of one table, scanned
    /// in step at `batch_rows` rows a block) share, and each one's index among them: for
    /// two members or more in C order, [`Together`]; `None` for the others.
    pub(crate) fn together(prepared: &[Prepared], batch_rows: usize) -> Vec<Option<(Arc<Together>, usize)>> {
        let spans: Vec<Option<Span>> = (prepared.iter())
            .map(|p| match p {
                Prepared::Stored { data_start, layout, rows, verify, .. } => {
                    let header = layout.header();
                    let fortran = header.fortran_order && header.shape.len() > 1;
                    (!fortran).then(|| verify.span(*data_start, rows, layout.row_bytes(), batch_rows))
                }
                Prepared::Compressed { .. } => None,
            })
            .collect();
        let shared: Vec<Span> = spans.iter().flatten().copied().collect();
        let first = prepared.iter().find_map(|p| match p {
            Prepared::Stored { source, .. } => Some(source.clone()),
            Prepared::Compressed { .. } => None,
        });
        let Some(source) = first.filter(|_| shared.len() > 1) else { return vec![None; prepared.len()] };
        let group = Arc::new(Together::new(source, shared));
        let mut next = 0;
        (spans.iter())
            .map(|span| {
                span.map(|_| {
                    next += 1;
                    (Arc::clone(&group), next - 1)
                })
            })
            .collect()
    }

    /// [`Prepared::start`], of the rows `filter` keeps (a block of none gives no batch), a
    /// stored member's bytes read with the others of `together` ([`Prepared::together`]).
    pub(crate) fn start_filtered(
        self,
        batch_rows: usize,
        filter: Option<Judged>,
        together: Option<(Arc<Together>, usize)>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let (batches, member) = match self {
            Prepared::Stored { source, data_start, layout, rows, verify, member } => {
                let place = Place { data_start, map: None, verify: Some(verify), filter, together };
                (member_row_batches(source, layout, rows, batch_rows, place), member)
            }
            Prepared::Compressed { name, layout, rows, source, member } => {
                (batches_from(name, layout, rows, batch_rows, source, filter), member)
            }
        };
        batches.map_err(move |e| e.in_member(&member)).boxed()
    }
}

/// A member's raw bytes, decompressed (deflate or Zstandard members) and checked as they
/// pass, by npy-core's `MemberDecoder`: stored bytes pass as they arrive, uncopied.
struct Decompressing {
    raw: BoxStream<'static, Result<Bytes>>,
    decoder: MemberDecoder,
    /// The member's size, as its directory entry claims.
    size: u64,
    stored: bool,
    /// Raw bytes received and not decoded yet: a chunk is decoded a piece of at most
    /// [`DECOMPRESS_CHUNK`] bytes at a time (a MiB of deflated zeros comes to a GiB).
    input: Bytes,
    /// Whether the last decoding of `input` made no progress: it needs more raw bytes.
    stalled: bool,
    done: bool,
}

/// Bytes decompressed per output chunk at most.
const DECOMPRESS_CHUNK: u64 = 256 << 10;

impl Decompressing {
    async fn next(mut self) -> Option<(Result<Bytes>, Decompressing)> {
        while !self.done {
            let step = if !self.stored && !self.input.is_empty() && !self.stalled {
                self.decompress_piece()
            } else {
                match self.raw.next().await {
                    None => {
                        self.done = true;
                        // A stream that ended early, the size and the CRC-32.
                        self.decoder.finish().map(|()| Bytes::new())
                    }
                    Some(Err(e)) => Err(e),
                    Some(Ok(chunk)) if !self.stored => {
                        self.input =
                            if self.input.is_empty() { chunk } else { [&self.input[..], &chunk].concat().into() };
                        self.stalled = false;
                        continue;
                    }
                    Some(Ok(chunk)) => self.decoder.pass(&chunk).map(|()| chunk),
                }
            };
            match step {
                Ok(out) if out.is_empty() => continue,
                Ok(out) => return Some((Ok(out), self)),
                Err(e) => {
                    self.done = true;
                    return Some((Err(e), self));
                }
            }
        }
        None
    }

    /// At most [`DECOMPRESS_CHUNK`] bytes decoded from `input` (what it used taken off it);
    /// never more than the claimed size and one byte, to see a stream that runs past it.
    fn decompress_piece(&mut self) -> Result<Bytes> {
        let left = self.size.saturating_sub(self.decoder.decoded());
        let mut buf = vec![0u8; (left + 1).min(DECOMPRESS_CHUNK) as usize];
        let (used, made) = self.decoder.decode(&self.input, &mut buf)?;
        self.input = self.input.slice(used..);
        if used == 0 && made == 0 {
            self.stalled = true;
        }
        buf.truncate(made);
        Ok(Bytes::from(buf))
    }
}

/// A blocking `Read + Seek` over an object: the archive's tail as fetched, and one more
/// block fetched at a time (ranged GETs on the store, waited for on the reading thread,
/// which is not one of the runtime's; a local file's read on that thread).
struct Ranged {
    handle: tokio::runtime::Handle,
    source: Arc<Source>,
    pos: u64,
    tail: (u64, Bytes),
    block: Option<(u64, Bytes)>,
}

/// Bytes read per block of a local archive's directory past its tail (and of its members'
/// local headers, each a block where a store's answer is [`BLOCK`]).
const FILE_BLOCK: u64 = 16 << 10;

impl Ranged {
    fn cached(&self, pos: u64) -> Option<&[u8]> {
        [Some(&self.tail), self.block.as_ref()].into_iter().flatten().find_map(|(start, bytes)| {
            let end = start + bytes.len() as u64;
            (pos >= *start && pos < end).then(|| &bytes[(pos - start) as usize..])
        })
    }
}

impl Read for Ranged {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.source.size();
        if self.pos >= size || buf.is_empty() {
            return Ok(0);
        }
        if self.cached(self.pos).is_none() {
            let bytes = match self.source.file() {
                // A local file's read on this thread: no task of the runtime's a block.
                Some(file) => {
                    let mut block = vec![0; FILE_BLOCK.min(size - self.pos) as usize];
                    let got = read_full_at(file, &mut block, self.pos)?;
                    block.truncate(got);
                    Bytes::from(block)
                }
                // On the version the tail came from.
                None => self.handle.block_on(self.source.get(self.pos..(self.pos + BLOCK).min(size)))?,
            };
            if bytes.is_empty() {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the object is shorter than it was"));
            }
            self.block = Some((self.pos, bytes));
        }
        let pos = self.pos;
        let have = self.cached(pos).unwrap_or_default();
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Ranged {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.source.size().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}
