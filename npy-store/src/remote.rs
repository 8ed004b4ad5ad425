//! A `.npy` object read remotely: its header from one ranged GET, then any rows.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use futures::stream::TryStreamExt;
use npy_arrow::{ConvertOptions, Layout};
use npy_core::header::Header;
use npy_core::{Error, ErrorKind, NpyReader, ReadNpy, ReadOptions, Result};
use object_store::path::Path;
use object_store::ObjectStore;

use crate::header::{fetch_header_with, NpyObject};
use crate::rows::RowScan;
use crate::source::Source;
use crate::stream::BatchStream;

/// A `.npy` object in a store, opened by reading its header (see [`crate::fetch_header`]):
/// rows `a..b` are then one ranged GET each (through a [`Source`] pinned to the version
/// the header's read found), or none when they were fetched with the header.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use npy_core::prelude::*;
/// use npy_store::RemoteNpy;
/// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
/// let location = Path::from("data/x.npy");
/// store.put(&location, (0..10u16).collect::<Vec<_>>().write_npy_to(Vec::new())?.into()).await?;
///
/// let npy = RemoteNpy::from_store(store, &location).await?;
/// assert_eq!(npy.rows(), 10);
/// assert_eq!(npy.read_rows::<Vec<u16>>(2..5).await?, [2, 3, 4]);
/// assert_eq!(npy.read::<DynArray>().await?.shape(), [10]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RemoteNpy {
    /// The object, pinned to the version its header's read found: data reads go through it.
    source: Arc<Source>,
    object: NpyObject,
    /// Where the data starts in the object (an npz member's data is inside its archive).
    data_start: u64,
    /// The prefix's bytes of data, from the data start (an npz member's first bytes).
    cached: Bytes,
    /// Where the data (the object, or the member in its archive) ends in the object.
    end: u64,
    /// The npz member this is, if one: errors name it.
    member: Option<String>,
}

impl RemoteNpy {
    /// Opens the `.npy` object at `location` in `store` with default [`ReadOptions`]: one
    /// ranged GET (two for headers over [`crate::HEADER_PREFIX`] bytes).
    ///
    /// # Errors
    /// As [`crate::fetch_header`]: a missing object, a bad magic or header, naming the
    /// object.
    pub async fn from_store(store: Arc<dyn ObjectStore>, location: &Path) -> Result<RemoteNpy> {
        RemoteNpy::from_store_with(store, location, &ReadOptions::new()).await
    }

    /// As [`RemoteNpy::from_store`], with options: the header size limit, and how
    /// [`RemoteNpy::read`] reads object arrays and Python 2 strings.
    ///
    /// # Errors
    /// As [`RemoteNpy::from_store`].
    pub async fn from_store_with(
        store: Arc<dyn ObjectStore>,
        location: &Path,
        options: &ReadOptions,
    ) -> Result<RemoteNpy> {
        let object = fetch_header_with(&store, location, options).await?;
        Ok(RemoteNpy::from_object(object))
    }

    /// A `.npy` object whose header was already read: its data is read through the
    /// object's [`Source`] (`object.source`, pinned to the version its header came from).
    pub fn from_object(object: NpyObject) -> RemoteNpy {
        let data_start = object.data_offset;
        let cached = object.prefix.slice((data_start as usize).min(object.prefix.len())..);
        let end = object.size;
        let source = object.source.clone();
        RemoteNpy { source, object, data_start, cached, end, member: None }
    }

    /// A `.npy` stored at byte `start` of `object`'s location (an npz's stored member
    /// `member`), with `object` read from there: its size, offsets and prefix counted from
    /// `start`.
    pub(crate) fn member(object: NpyObject, start: u64, member: &str) -> RemoteNpy {
        let data_start = start + object.data_offset;
        let cached = object.prefix.slice((object.data_offset as usize).min(object.prefix.len())..);
        let end = start + object.size;
        let source = object.source.clone();
        RemoteNpy { source, object, data_start, cached, end, member: Some(member.to_string()) }
    }

    /// `e`, naming the object (and the member).
    fn locate(&self, e: Error) -> Error {
        let e = e.reading(self.object.location.as_ref());
        match &self.member {
            Some(m) => e.in_member(m),
            None => e,
        }
    }

    /// The object's header.
    pub fn header(&self) -> &Header {
        &self.object.header
    }

    /// The object as read: location, size, header, version, first bytes.
    pub fn object(&self) -> &NpyObject {
        &self.object
    }

    /// Where the array's data starts in the object.
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// Rows of the array: the first dim, or 1 for a 0-d array.
    pub fn rows(&self) -> usize {
        self.object.header.shape.first().copied().unwrap_or(1)
    }

    /// The Arrow layout of the rows with default [`ConvertOptions`] (see [`Layout::new_with`]).
    ///
    /// # Errors
    /// As [`Layout::new_with`], naming the object.
    pub fn layout(&self) -> Result<Layout> {
        self.layout_with(&ConvertOptions::new())
    }

    /// As [`RemoteNpy::layout`], with options.
    ///
    /// # Errors
    /// As [`RemoteNpy::layout`].
    pub fn layout_with(&self, options: &ConvertOptions) -> Result<Layout> {
        Layout::new_with(&self.object.header, Some(self.object.version), options).map_err(|e| self.locate(e))
    }

    /// The whole array as any [`ReadNpy`] type (`Vec<T>` of a 1-d array, `Array<T>`,
    /// `DynArray`, ...), as [`NpyReader::read`] reads it: one ranged GET, or none when the
    /// data came with the header.
    ///
    /// # Errors
    /// As [`RemoteNpy::read_rows`].
    pub async fn read<V: ReadNpy>(&self) -> Result<V> {
        self.read_rows(0..self.rows()).await
    }

    /// Rows `rows` (a slice along the first axis) as any [`ReadNpy`] type, as
    /// [`NpyReader::read`] reads an array of that many rows: `Vec<T>` of a 1-d array,
    /// `Array<T>` of any, `DynArray`, ... One ranged GET, or none when the rows came with
    /// the header. A Fortran-order array of two dims or more is read whole only (its rows
    /// are not contiguous).
    ///
    /// # Errors
    /// [`ErrorKind::WrongShape`] for rows past the end, or part of a Fortran-order N-d
    /// array; [`ErrorKind::Truncated`] when the object ends first; the errors of
    /// [`NpyReader::read`] (a dtype or shape `V` cannot read); store errors. All name the
    /// object.
    pub async fn read_rows<V: ReadNpy>(&self, rows: Range<usize>) -> Result<V> {
        self.read_rows_inner(rows).await.map_err(|e| self.locate(e))
    }

    async fn read_rows_inner<V: ReadNpy>(&self, rows: Range<usize>) -> Result<V> {
        let header = &self.object.header;
        let total = self.rows();
        if rows.start > rows.end || rows.end > total {
            let reason = format!("rows {}..{} asked of an array of {total} rows", rows.start, rows.end);
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        let fortran = header.fortran_order && header.shape.len() > 1;
        if fortran && rows != (0..total) {
            let reason = format!(
                "rows {}..{} of a Fortran-order array of {} dims are not contiguous: read all rows",
                rows.start,
                rows.end,
                header.shape.len()
            );
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        let row_bytes = (header.data_len()? / total.max(1)) as u64;
        let range = rows.start as u64 * row_bytes..rows.end as u64 * row_bytes;
        let data = self.data(range).await?;
        let mut part = header.clone();
        if let Some(first) = part.shape.first_mut() {
            *first = rows.len();
        }
        NpyReader::over_data(&data[..], part)?.read::<V>()
    }

    /// The data bytes `range` (counted from the data start): from the prefix when it holds
    /// them, else one ranged GET. Exactly those bytes, or [`ErrorKind::Truncated`].
    async fn data(&self, range: Range<u64>) -> Result<Bytes> {
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        if range.end <= self.cached.len() as u64 {
            return Ok(self.cached.slice(range.start as usize..range.end as usize));
        }
        let truncated = |found: u64| ErrorKind::Truncated { expected: range.end, found }.into();
        let end = self.data_start + range.end;
        if end > self.end {
            return Err(truncated(self.end.saturating_sub(self.data_start)));
        }
        // One GET on the condition of the object's ETag; a short answer is counted from
        // the data start.
        self.source.read_bytes(self.data_start + range.start..end).await.map_err(|e| match e.kind() {
            ErrorKind::Truncated { found, .. } => truncated(range.start + found),
            _ => e,
        })
    }

    /// Rows `rows` as one record batch with default [`ConvertOptions`], of the columns
    /// `projection` (indices into the schema of [`RemoteNpy::layout`]; `None` for all): one
    /// ranged GET.
    ///
    /// # Errors
    /// As [`RowScan::batches`], and [`Layout::project`]'s for a bad projection, naming the
    /// object.
    pub async fn read_batch(&self, rows: Range<usize>, projection: Option<&[usize]>) -> Result<RecordBatch> {
        self.read_batch_with(rows, projection, &ConvertOptions::new()).await
    }

    /// As [`RemoteNpy::read_batch`], with options.
    ///
    /// # Errors
    /// As [`RemoteNpy::read_batch`].
    pub async fn read_batch_with(
        &self,
        rows: Range<usize>,
        projection: Option<&[usize]>,
        options: &ConvertOptions,
    ) -> Result<RecordBatch> {
        let layout = Arc::new(self.projected(options, projection)?);
        let schema = layout.schema();
        let batch_rows = rows.len().max(1);
        let batches: Vec<RecordBatch> = self.stream(layout, rows, batch_rows).try_collect().await?;
        Ok(batches.into_iter().next().unwrap_or_else(|| RecordBatch::new_empty(schema)))
    }

    /// Rows `rows` as a stream of batches with default [`ConvertOptions`], of the columns
    /// `projection` (see [`RowScan`]: one ranged GET, cut as bytes arrive).
    ///
    /// # Errors
    /// [`Layout`]'s errors for the dtype or projection now; the stream's as
    /// [`RowScan::batches`].
    pub fn batches(&self, rows: Range<usize>, projection: Option<&[usize]>) -> Result<BatchStream> {
        self.batches_with(rows, projection, &ConvertOptions::new())
    }

    /// As [`RemoteNpy::batches`], with options: batches of [`ConvertOptions::batch_rows_for`]
    /// the rows.
    ///
    /// # Errors
    /// As [`RemoteNpy::batches`].
    pub fn batches_with(
        &self,
        rows: Range<usize>,
        projection: Option<&[usize]>,
        options: &ConvertOptions,
    ) -> Result<BatchStream> {
        let layout = Arc::new(self.projected(options, projection)?);
        let batch_rows = options.batch_rows_for(layout.row_bytes());
        Ok(self.stream(layout, rows, batch_rows))
    }

    fn projected(&self, options: &ConvertOptions, projection: Option<&[usize]>) -> Result<Layout> {
        let layout = self.layout_with(options)?;
        match projection {
            Some(columns) => layout.project(columns).map_err(|e| self.locate(e)),
            None => Ok(layout),
        }
    }

    fn stream(&self, layout: Arc<Layout>, rows: Range<usize>, batch_rows: usize) -> BatchStream {
        let schema = layout.schema();
        let batches =
            RowScan::new(self.source.clone(), self.data_start, layout).rows(rows).batch_rows(batch_rows).batches();
        match self.member.clone() {
            Some(member) => BatchStream::new(schema, Box::pin(batches.map_err(move |e| e.in_member(&member)))),
            None => batches,
        }
    }
}
