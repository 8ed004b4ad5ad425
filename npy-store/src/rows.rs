//! Rows of a `.npy` object as record batches: one ranged GET for a row range, cut into
//! batches as its bytes arrive.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::{Bytes, BytesMut};
use futures::stream::{self, BoxStream, StreamExt};
use npy_arrow::Layout;
use npy_core::mmap::{MapContract, MappedRange};
use npy_core::npz::MemberInfo;
use npy_core::{Error, ErrorKind, Result};

use crate::error::{io_error, npz_error};
use crate::filter::{Filter, Filtered, Judged};
use crate::fortran_blocks::{BlocksFrom, FortranBlocks, WHOLE_FORTRAN_BYTES};
use crate::source::{read_full_at, Source};
use crate::stream::BatchStream;
use crate::together::{Opened, Span, Together};

/// A scan of rows of the `.npy` data found at byte `data_start` of a [`Source`] (an npz's
/// stored member is the same with its data start), decoded by `layout` (projected by the
/// caller with [`Layout::project`] for fewer columns): which rows, how many per batch,
/// whether local files are mapped and which rows a filter keeps are set with `&mut self`
/// setters, then [`RowScan::batches`] starts it. The one engine of rows as record batches, which
/// DataFusion's scan uses too.
///
/// One ranged GET (on the condition of the source's ETag) for the whole row range, made when
/// the stream is first polled (none for an empty range or rows of no bytes). A local file is read with
/// blocking reads of a batch's rows each on tokio's blocking pool; a remote object's
/// stream is cut into blocks of a batch's rows as its bytes arrive, so the memory held is
/// one block and one network chunk. With [`RowScan::map`] (the caller's acceptance of the
/// maps' contract for this file: nothing changes or truncates it during the scan), a local
/// file's rows are mapped ([`MappedRange`]) and decoded in place: a projection of a few
/// fields then touches their pages without copying every byte, which makes it several
/// times faster than a read of the whole rows. Rows of a Fortran-order array of two dims
/// or more are not contiguous: data of up to [`WHOLE_FORTRAN_BYTES`] is fetched whole (one
/// GET) and the range decoded from it; larger data is read a block of rows at a time into C order,
/// one run per item of a row (positioned reads of a local file, ranged GETs of an object).
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use futures::TryStreamExt;
/// use npy_core::prelude::*;
/// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
/// let location = Path::from("x.npy");
/// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
/// store.put(&location, file.into()).await?;
/// let object = npy_store::fetch_header(&store, &location).await?;
/// let layout = Arc::new(npy_arrow::Layout::new(&object.header, None)?);
/// let mut scan = npy_store::RowScan::new(object.source, object.data_offset, layout);
/// scan.rows(2..7).batch_rows(2);
/// let batches: Vec<_> = scan.batches().try_collect().await?;
/// assert_eq!(batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), [2, 2, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RowScan {
    source: Arc<Source>,
    data_start: u64,
    layout: Arc<Layout>,
    rows: Option<Range<usize>>,
    batch_rows: Option<usize>,
    map: Option<MapContract>,
    filter: Option<(Filter, Judged)>,
}

impl std::fmt::Debug for RowScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowScan")
            .field("source", &self.source)
            .field("data_start", &self.data_start)
            .field("rows", &self.rows)
            .field("batch_rows", &self.batch_rows)
            .field("map", &self.map.is_some())
            .field("filter", &self.filter.as_ref().map(|(f, _)| f))
            .finish_non_exhaustive()
    }
}

impl RowScan {
    /// A scan of every row of the data at byte `data_start` of `source` (a local file or
    /// an object pinned to its version: [`crate::NpyObject::source`], [`Source::open`],
    /// [`Source::of_object`]), decoded by `layout`, in batches of the default size, read
    /// (not mapped).
    pub fn new(source: Arc<Source>, data_start: u64, layout: Arc<Layout>) -> RowScan {
        RowScan { source, data_start, layout, rows: None, batch_rows: None, map: None, filter: None }
    }

    /// The rows to read. Default: all of them.
    pub fn rows(&mut self, rows: Range<usize>) -> &mut Self {
        self.rows = Some(rows);
        self
    }

    /// Rows per batch (at least 1). Default:
    /// [`DEFAULT_BATCH_ROWS`](npy_arrow::read::DEFAULT_BATCH_ROWS), or as many rows as fit
    /// in [`DEFAULT_BATCH_BYTES`](npy_arrow::read::DEFAULT_BATCH_BYTES) when that is fewer.
    pub fn batch_rows(&mut self, rows: usize) -> &mut Self {
        self.batch_rows = Some(rows.max(1));
        self
    }

    /// Maps a local file's rows instead of reading them, under `contract`: the caller's
    /// `unsafe` [`MapContract::accept`] that nothing modifies or truncates the file while
    /// the stream lives. Without effect on remote objects. Default: read.
    pub fn map(&mut self, contract: MapContract) -> &mut Self {
        self.map = Some(contract);
        self
    }

    /// Keeps only the rows `filter` keeps: its columns are decoded first, block by block,
    /// and the scan's other columns only at the rows it kept; a block with none kept gives
    /// no batch. Default: every row. Its parts are of `file`, the file's layout (all its
    /// columns, of which the scan's layout selects some).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a part `file` has not.
    pub fn filter(&mut self, filter: Filter, file: &Layout) -> Result<&mut Self> {
        let judged = filter.over(file).map_err(|e| e.reading(self.source.name()))?;
        self.filter = Some((filter, judged));
        Ok(self)
    }

    /// The batches of the scan, as a stream that fetches nothing until first polled.
    ///
    /// # Errors
    /// Each an item of the stream, which then ends, naming the object:
    /// [`ErrorKind::WrongShape`] for rows past the array's end; [`ErrorKind::Truncated`]
    /// when the object ends before the rows do (never a short batch); store errors (a
    /// missing object is [`ErrorKind::Io`] of kind `NotFound`); the decoding errors of
    /// [`Layout::decode`].
    pub fn batches(&self) -> BatchStream {
        let layout = self.layout.clone();
        let default_rows = || {
            let per_batch = npy_arrow::read::DEFAULT_BATCH_BYTES / layout.row_bytes().max(1);
            npy_arrow::read::DEFAULT_BATCH_ROWS.min(per_batch).max(1)
        };
        let start = State::Start {
            source: self.source.clone(),
            layout: layout.clone(),
            rows: self.rows.clone().unwrap_or(0..layout.rows()),
            batch_rows: self.batch_rows.unwrap_or_else(default_rows),
            place: Box::new(Place {
                data_start: self.data_start,
                map: self.map,
                verify: None,
                filter: self.filter.as_ref().map(|(_, judged)| judged.clone()),
                together: None,
            }),
        };
        BatchStream::new(layout.schema(), scan_stream(start))
    }
}

/// Rows `rows` of a stored npz member whose data starts at byte `place.data_start` of
/// `source`, as [`RowScan`] reads them (never mapped; of the rows `place.filter` keeps),
/// and every byte of the member checked by `place.verify`: the whole member's data is
/// fetched (rows past `rows` only hashed),
/// and its size and CRC-32 are checked before the batch holding its last asked row is
/// given out, so no batch of a member that fails them is ever the end of a stream that
/// ends well.
pub(crate) fn member_row_batches(
    source: Arc<Source>,
    layout: Arc<Layout>,
    rows: Range<usize>,
    batch_rows: usize,
    place: Place,
) -> BoxStream<'static, Result<RecordBatch>> {
    let batch_rows = batch_rows.max(1);
    scan_stream(State::Start { source, layout, rows, batch_rows, place: Box::new(place) })
}

fn scan_stream(start: State) -> BoxStream<'static, Result<RecordBatch>> {
    stream::unfold(start, |state| async move {
        let mut scan = match state {
            State::Done => return None,
            State::Scan(scan) => scan,
            State::Start { source, layout, rows, batch_rows, place } => {
                let name = source.name().to_string();
                match Scan::open(&source, *place, layout, rows, batch_rows).await {
                    Ok(scan) => Box::new(scan),
                    Err(e) => return Some((Err(e.reading(&name)), State::Done)),
                }
            }
        };
        match scan.next_batch().await {
            Ok(Some(batch)) => Some((Ok(batch), State::Scan(scan))),
            Ok(None) => None,
            Err(e) => Some((Err(e.reading(&scan.name)), State::Done)),
        }
    })
    .boxed()
}

/// Rows `rows` decoded by `layout` from `source`, whose bytes start at row `rows.start`
/// (all the data for `RowBytes::Whole`), in batches of at most `batch_rows` rows; errors
/// name `name`.
pub(crate) fn batches_from(
    name: String,
    layout: Arc<Layout>,
    rows: Range<usize>,
    batch_rows: usize,
    source: RowBytes,
    filter: Option<Judged>,
) -> BoxStream<'static, Result<RecordBatch>> {
    let row_bytes = layout.row_bytes();
    // A Fortran-order member read in blocks has the C-order layout already; its filter's
    // judged layout becomes one too.
    let blocks = matches!(source, RowBytes::FortranBlocks(_));
    let filter = filter.map(|f| if blocks { f.c_ordered() } else { f });
    let filtered = match filter.map(|f| Filtered::new(&layout, f)).transpose() {
        Ok(filtered) => filtered,
        Err(e) => return stream::once(async move { Err(e.reading(&name)) }).boxed(),
    };
    let scan = Scan {
        name,
        layout,
        next: rows.start,
        end: rows.end,
        batch_rows: batch_rows.max(1),
        row_bytes,
        source,
        rest: 0,
        verify: None,
        filtered,
        populate: false,
        finished: false,
    };
    stream::unfold(State::Scan(Box::new(scan)), |state| async move {
        let State::Scan(mut scan) = state else { return None };
        match scan.next_batch().await {
            Ok(Some(batch)) => Some((Ok(batch), State::Scan(scan))),
            Ok(None) => None,
            Err(e) => Some((Err(e.reading(&scan.name)), State::Done)),
        }
    })
    .boxed()
}

/// Where a [`RowScan`] is.
enum State {
    /// Not polled yet: nothing fetched.
    Start {
        source: Arc<Source>,
        layout: Arc<Layout>,
        rows: Range<usize>,
        batch_rows: usize,
        /// (Boxed: the largest field, which would make every state as large.)
        place: Box<Place>,
    },
    /// Scanning (boxed: a scan is several times the size of the other states).
    Scan(Box<Scan>),
    /// After the last batch or an error.
    Done,
}

/// The rows left to decode and where their bytes come from.
struct Scan {
    name: String,
    layout: Arc<Layout>,
    next: usize,
    end: usize,
    batch_rows: usize,
    row_bytes: usize,
    source: RowBytes,
    /// Bytes fetched past the last asked row (the rest of a verified member), read only to
    /// be hashed.
    rest: u64,
    /// The check of a stored npz member's bytes, `None` for a plain `.npy`.
    verify: Option<Verify>,
    /// The filter's decoding ([`RowScan::filter`]), `None` for every row.
    filtered: Option<Filtered>,
    /// Whether a mapped block's pages are mapped in at once before it is decoded: when the
    /// decoding reads some bytes of every row and rows are at most [`POPULATED_ROW_BYTES`],
    /// so that it touches every page of the block anyway.
    populate: bool,
    /// Whether [`Scan::finish`] ran.
    finished: bool,
}

/// Where a scan's bytes are and how they are read: the data start, the maps' contract
/// ([`RowScan::map`]), the check of a member's bytes, the rows' filter, and the reads of
/// the archive's members this one shares (and its index among them).
pub(crate) struct Place {
    pub(crate) data_start: u64,
    pub(crate) map: Option<MapContract>,
    pub(crate) verify: Option<Verify>,
    pub(crate) filter: Option<Judged>,
    pub(crate) together: Option<(Arc<Together>, usize)>,
}

/// The check of a stored npz member over the bytes a scan reads: its bytes before the
/// data (the `.npy` header) hashed when it is made, then every data byte read, and at the
/// end the member's size and CRC-32, as npy-core's npz reader checks them.
pub(crate) struct Verify {
    crc: crc32fast::Hasher,
    /// Bytes of the member hashed so far.
    hashed: u64,
    /// The member's bytes from its data start to its end (its directory's size less the
    /// header's).
    data_len: u64,
    check: Check,
}

impl Verify {
    /// The check of a member `check` describes, whose first `header.len()` bytes (its
    /// `.npy` header) are `header`.
    pub(crate) fn new(header: &[u8], check: Check) -> Verify {
        let mut crc = crc32fast::Hasher::new();
        crc.update(header);
        let hashed = header.len() as u64;
        Verify { crc, hashed, data_len: check.size.saturating_sub(hashed), check }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.crc.update(bytes);
        self.hashed += bytes.len() as u64;
    }

    fn finish(&self) -> Result<()> {
        self.check.finish(self.hashed, &self.crc)
    }

    /// The bytes a checked scan of rows `rows` (from the first) of a member whose data
    /// starts at `data_start` reads, as [`Scan::open`] reads them: its data to its end, or
    /// to the rows' end where they reach past it; `batch_rows` rows of `row_bytes` a block.
    pub(crate) fn span(&self, data_start: u64, rows: &Range<usize>, row_bytes: usize, batch_rows: usize) -> Span {
        let asked = rows.end as u64 * row_bytes as u64;
        Span { data_start, len: self.data_len.max(asked), block: (batch_rows.max(1) * row_bytes) as u64 }
    }
}

/// What a member's bytes must come to: its size and CRC-32 (as its directory entry says),
/// and its name for the errors.
pub(crate) struct Check {
    pub(crate) size: u64,
    pub(crate) crc32: Option<u32>,
    pub(crate) member: String,
}

impl Check {
    /// The check of member `info`'s bytes.
    pub(crate) fn of(info: &MemberInfo) -> Check {
        Check { size: info.size, crc32: info.crc32, member: info.member.clone() }
    }

    /// Fails unless `out` bytes were read, whose CRC-32 `crc` is the one claimed.
    pub(crate) fn finish(&self, out: u64, crc: &crc32fast::Hasher) -> Result<()> {
        if out != self.size {
            let why = format!("the member holds {out} bytes, not the {} its directory entry claims", self.size);
            return Err(npz_error(&self.member, &why));
        }
        match self.crc32 {
            Some(want) if crc.clone().finalize() != want => {
                let got = crc.clone().finalize();
                Err(npz_error(&self.member, &format!("bad CRC-32: {got:#010x}, the directory says {want:#010x}")))
            }
            _ => Ok(()),
        }
    }
}

pub(crate) enum RowBytes {
    /// A local file, where the next rows' bytes start (read there by positioned reads), and
    /// the block buffer, reused (`None` while a read has them).
    File(Option<(Arc<std::fs::File>, u64, Vec<u8>)>),
    /// A local file's rows mapped, from row `base` on.
    Mapped { rows: MappedRange, base: usize },
    /// A remote object's bytes as they arrive (or an npz member's as they decompress), and
    /// the bytes received but not decoded.
    Stream(BoxStream<'static, Result<Bytes>>, BytesMut),
    /// All the bytes at once: the whole data of a Fortran-order array (rows are decoded
    /// from all of it), or nothing for rows of no bytes.
    Whole(Bytes),
    /// A larger Fortran-order array's rows, read a block at a time into C order (the
    /// scan's layout is then [`Layout::c_ordered`]).
    FortranBlocks(Box<FortranBlocks>),
    /// A stored member's bytes from the first, read with the archive's other members: its
    /// index among them.
    Together { group: Arc<Together>, index: usize },
}

impl Scan {
    async fn open(
        source: &Arc<Source>,
        place: Place,
        layout: Arc<Layout>,
        rows: Range<usize>,
        batch_rows: usize,
    ) -> Result<Scan> {
        let total = layout.rows();
        if rows.start > rows.end || rows.end > total {
            let reason = format!("rows {}..{} asked of an array of {total} rows", rows.start, rows.end);
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        if place.verify.is_some() && rows.start != 0 {
            let reason =
                format!("rows {}..{} of a checked member: its rows are read from the first", rows.start, rows.end);
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        let row_bytes = layout.row_bytes();
        let header = layout.header();
        let fortran = header.fortran_order && header.shape.len() > 1;
        if fortran && total as u64 * row_bytes as u64 > WHOLE_FORTRAN_BYTES {
            return Scan::open_fortran_blocks(source, place, layout, rows, batch_rows).await;
        }
        let Place { data_start, map, verify, filter, together } = place;
        let name = source.name().to_string();
        // The bytes fetched, counted from the data start: all of them for a Fortran-order
        // array, else the rows'; a verified member's from its first row to its end. Header
        // sizes are checked not to overflow when parsed.
        let (from, to) = if fortran { (0, total) } else { (rows.start, rows.end) };
        let (from, to) = (from as u64 * row_bytes as u64, to as u64 * row_bytes as u64);
        let (from, to) = match &verify {
            Some(v) => (0, v.data_len.max(to)),
            None => (from, to),
        };
        let asked = rows.end as u64 * row_bytes as u64;
        let filtered = filter.map(|f| Filtered::new(&layout, f)).transpose()?;
        let reads_rows = match &filtered {
            Some(filtered) => filtered.reads_rows(),
            None => !layout.schema().fields().is_empty(),
        };
        let populate = reads_rows && row_bytes <= POPULATED_ROW_BYTES;
        let mut scan = Scan {
            name,
            layout,
            next: rows.start,
            end: rows.end,
            batch_rows,
            row_bytes,
            source: RowBytes::Whole(Bytes::new()),
            rest: if fortran { 0 } else { to.saturating_sub(asked) },
            verify,
            filtered,
            populate,
            finished: false,
        };
        if from == to || (rows.is_empty() && scan.verify.is_none()) {
            return Ok(scan);
        }
        // A member's rows from its first byte, read with the archive's other members.
        if let Some((group, index)) = together.filter(|_| !fortran && from == 0) {
            if let Opened::Local { size } = group.open().await {
                if size < data_start.saturating_add(to) {
                    return Err(truncated(to, size.saturating_sub(data_start)));
                }
                scan.source = RowBytes::Together { group, index };
                return Ok(scan);
            }
        }
        let range = data_start + from..data_start + to;
        if source.size() < range.end {
            return Err(truncated(to, source.size().saturating_sub(data_start)));
        }
        scan.source = if fortran {
            let all = source.read_bytes(range).await.map_err(|e| match e.kind() {
                ErrorKind::Truncated { found, .. } => truncated(to, from + found),
                _ => e,
            })?;
            if let Some(verify) = &mut scan.verify {
                verify.update(&all);
            }
            RowBytes::Whole(all)
        } else {
            // A verified member hashes every byte it reads: never mapped.
            let map = map.filter(|_| scan.verify.is_none());
            match (source.file(), map) {
                (Some(file), Some(contract)) => {
                    source.unchanged()?;
                    let mapped = MappedRange::map(file, range, contract).map_err(|e| match e.kind() {
                        // The file shrank since it was opened: counted from the data start, as above.
                        ErrorKind::Truncated { found, .. } => truncated(to, found.saturating_sub(data_start)),
                        _ => e,
                    })?;
                    RowBytes::Mapped { rows: mapped, base: rows.start }
                }
                (Some(file), None) => {
                    source.unchanged()?;
                    RowBytes::File(Some((file.clone(), range.start, Vec::new())))
                }
                (None, _) => RowBytes::Stream(source.stream(range).await?, BytesMut::new()),
            }
        };
        Ok(scan)
    }

    /// [`Scan::open`] of a Fortran-order array of more than [`WHOLE_FORTRAN_BYTES`]: a
    /// checked member's bytes are read and hashed, whole and checked, first; then its rows
    /// are read a block at a time into C order ([`FortranBlocks`]), from the file where it is local (maps are
    /// not used), by ranged GETs where it is remote.
    async fn open_fortran_blocks(
        source: &Arc<Source>,
        place: Place,
        layout: Arc<Layout>,
        rows: Range<usize>,
        batch_rows: usize,
    ) -> Result<Scan> {
        let Place { data_start, verify, filter, .. } = place;
        let name = source.name().to_string();
        let data = layout.rows() as u64 * layout.row_bytes() as u64;
        if let Some(verify) = verify {
            hash_all(source, data_start, verify).await?.finish()?;
        }
        // A local file's runs are read where they are, an object's by ranged GETs.
        if source.size() <= data_start {
            return Err(truncated(data, 0));
        }
        let from = match source.file() {
            Some(file) => {
                source.unchanged()?;
                BlocksFrom::File(file.clone())
            }
            None => BlocksFrom::Object(source.clone()),
        };
        let blocks = FortranBlocks::new(from, data_start, &layout)
            .ok_or_else(|| io_error("a Fortran-order array's rows have no items".into()))?;
        let layout = Arc::new(layout.c_ordered());
        let filtered = filter.map(|f| Filtered::new(&layout, f.c_ordered())).transpose()?;
        Ok(Scan {
            name,
            row_bytes: layout.row_bytes(),
            layout,
            next: rows.start,
            end: rows.end,
            batch_rows,
            source: RowBytes::FortranBlocks(Box::new(blocks)),
            rest: 0,
            verify: None,
            filtered,
            populate: false,
            finished: false,
        })
    }

    /// The next block of rows (of those a filter keeps), `None` after the last. The block
    /// of the last rows is given out only once [`Scan::finish`] has checked what the source
    /// checks at its end.
    async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            let n = self.batch_rows.min(self.end - self.next);
            if n == 0 {
                self.finish().await?;
                return Ok(None);
            }
            let batch = self.next_block(n).await?;
            self.next += n;
            if self.next == self.end {
                self.finish().await?;
            }
            if batch.is_some() {
                return Ok(batch);
            }
        }
    }

    /// The next `n` rows decoded (those a filter keeps: `None` when it keeps none).
    async fn next_block(&mut self, n: usize) -> Result<Option<RecordBatch>> {
        let need = n * self.row_bytes;
        let first = self.next;
        let (layout, filtered) = (&self.layout, self.filtered.as_ref());
        let decode = |data: &[u8]| match filtered {
            Some(filtered) => filtered.decode(layout, data, first, n),
            None => layout.decode(data, first, n).map(Some),
        };
        match &mut self.source {
            RowBytes::Whole(all) => decode(all),
            RowBytes::Mapped { rows, base } => {
                let from = (first - *base) * self.row_bytes;
                if self.populate {
                    rows.populate(from..from + need)?;
                }
                decode(&rows[from..])
            }
            RowBytes::File(slot) => {
                let (file, at, mut buf) =
                    slot.take().ok_or_else(|| io_error("a read of this object failed before".into()))?;
                let read = tokio::task::spawn_blocking(move || {
                    // (Grown once: a buffer of the block's length is not zeroed again.)
                    buf.resize(need, 0);
                    let done = read_full_at(&file, &mut buf, at);
                    (file, buf, done)
                });
                let (file, buf, done) =
                    read.await.map_err(|e| io_error(format!("the read of rows {first}..{} failed: {e}", first + n)))?;
                if done? < need {
                    // The file shrank since it was opened.
                    let (first, n, row) = (first as u64, n as u64, self.row_bytes as u64);
                    return Err(truncated((first + n) * row, first * row));
                }
                if let Some(verify) = &mut self.verify {
                    verify.update(&buf);
                }
                let batch = decode(&buf)?;
                *slot = Some((file, at + need as u64, buf));
                Ok(batch)
            }
            RowBytes::FortranBlocks(blocks) => decode(&blocks.block(first, n).await?),
            RowBytes::Together { group, index } => {
                let verify = &mut self.verify;
                let decoded = group.with_next(*index, need, |block| {
                    if let Some(verify) = verify {
                        verify.update(block);
                    }
                    decode(block)
                });
                match decoded.await? {
                    Some(batch) => batch,
                    None => {
                        // The file shrank since it was opened.
                        let (first, n, row) = (first as u64, n as u64, self.row_bytes as u64);
                        Err(truncated((first + n) * row, first * row))
                    }
                }
            }
            RowBytes::Stream(chunks, pending) => {
                while pending.len() < need {
                    match chunks.next().await {
                        Some(Ok(chunk)) => pending.extend_from_slice(&chunk),
                        Some(Err(e)) => return Err(e),
                        None => {
                            let (first, n, row) = (first as u64, n as u64, self.row_bytes as u64);
                            return Err(truncated((first + n) * row, first * row + pending.len() as u64));
                        }
                    }
                }
                let block = pending.split_to(need);
                if let Some(verify) = &mut self.verify {
                    verify.update(&block);
                }
                decode(&block)
            }
        }
    }

    /// After the last asked row: the bytes fetched past it read and hashed (a verified
    /// member's rest), a stream read to its end (so that the checks it makes there, an npz
    /// member's size and CRC-32, are made), and the member's check. Once.
    async fn finish(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        match &mut self.source {
            RowBytes::Stream(chunks, pending) => {
                if let Some(verify) = &mut self.verify {
                    verify.update(pending);
                }
                pending.clear();
                while let Some(chunk) = chunks.next().await {
                    let chunk = chunk?;
                    if let Some(verify) = &mut self.verify {
                        verify.update(&chunk);
                    }
                }
            }
            RowBytes::File(slot) if self.rest > 0 => {
                let (file, at, buf) =
                    slot.take().ok_or_else(|| io_error("a read of this object failed before".into()))?;
                let (rest, verify) = (self.rest, self.verify.take());
                let read = tokio::task::spawn_blocking(move || hash_rest(file, at, buf, rest, verify));
                let (file, buf, verify) =
                    read.await.map_err(|e| io_error(format!("the read of the member's end failed: {e}")))??;
                *slot = Some((file, at + rest, buf));
                self.verify = verify;
            }
            RowBytes::Together { group, index } => {
                let mut left = self.rest;
                while left > 0 {
                    let n = left.min(HASH_BLOCK);
                    // A file that shrank since it was opened: the member's check says how.
                    let verify = &mut self.verify;
                    let hashed = group.with_next(*index, n as usize, |bytes| {
                        if let Some(verify) = verify {
                            verify.update(bytes);
                        }
                    });
                    if hashed.await?.is_none() {
                        break;
                    }
                    left -= n;
                }
            }
            // All fetched bytes were hashed when fetched (`Whole`), or no check is made
            // (`Mapped`, plain files).
            RowBytes::File(_) | RowBytes::Whole(_) | RowBytes::Mapped { .. } | RowBytes::FortranBlocks(_) => {}
        }
        match &self.verify {
            Some(verify) => verify.finish(),
            None => Ok(()),
        }
    }
}

/// Rows of at most a page: a decoding that reads a value of every row touches every page.
const POPULATED_ROW_BYTES: usize = 4096;

/// Bytes read per block when only hashed: 1 MiB.
const HASH_BLOCK: u64 = 1 << 20;

/// The `rest` bytes of `file` from byte `at` read in blocks of [`HASH_BLOCK`] and hashed by
/// `verify` (only read, when there is no check): a verified member's bytes past its asked
/// rows.
fn hash_rest(
    file: Arc<std::fs::File>,
    at: u64,
    mut buf: Vec<u8>,
    rest: u64,
    mut verify: Option<Verify>,
) -> Result<(Arc<std::fs::File>, Vec<u8>, Option<Verify>)> {
    let mut done = 0;
    while done < rest {
        let n = (rest - done).min(HASH_BLOCK) as usize;
        buf.resize(n, 0);
        let got = read_full_at(&file, &mut buf, at + done)?;
        if let Some(verify) = &mut verify {
            verify.update(&buf[..got]);
        }
        if got < n {
            // The file shrank since it was opened: the member's check says how.
            break;
        }
        done += n as u64;
    }
    Ok((file, buf, verify))
}

/// `verify` after every byte of the data at byte `data_start` of `source` to its end (a
/// checked member's, `verify.data_len` bytes) was read and hashed.
async fn hash_all(source: &Source, data_start: u64, mut verify: Verify) -> Result<Verify> {
    if verify.data_len == 0 {
        return Ok(verify);
    }
    let mut chunks = source.stream(data_start..data_start + verify.data_len).await?;
    while let Some(chunk) = chunks.next().await {
        verify.update(&chunk?);
    }
    Ok(verify)
}

/// The object ends before the rows asked for: `expected` bytes of data needed, `found`
/// present, both counted from the data start.
fn truncated(expected: u64, found: u64) -> Error {
    ErrorKind::Truncated { expected, found }.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, RecordBatchReader};
    use futures::TryStreamExt;
    use npy_core::prelude::*;
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{ObjectStore, ObjectStoreExt};

    fn data(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// All rows of `file` as one batch, decoded by npy-arrow's `BatchReader` from the bytes.
    fn expected(file: &[u8]) -> RecordBatch {
        let reader = npy_core::NpyReader::from_reader(file).unwrap();
        let rows = reader.header().shape.first().copied().unwrap_or(1).max(1);
        let mut batches =
            npy_arrow::BatchReader::from_npy_reader_with(reader, npy_arrow::ConvertOptions::new().batch_rows(rows))
                .unwrap();
        batches.next().map(|b| b.unwrap()).unwrap_or_else(|| RecordBatch::new_empty(batches.schema()))
    }

    async fn batches(
        source: &Arc<Source>,
        rows: Range<usize>,
        batch_rows: usize,
        map: Option<MapContract>,
    ) -> Result<Vec<RecordBatch>> {
        let object = crate::header::fetch_header_at(source.clone(), 0, None, &npy_core::ReadOptions::new()).await?;
        let layout = Arc::new(Layout::new(&object.header, None)?);
        let mut scan = RowScan::new(source.clone(), object.data_offset, layout);
        scan.rows(rows).batch_rows(batch_rows);
        if let Some(contract) = map {
            scan.map(contract);
        }
        scan.batches().try_collect().await
    }

    /// Every row range of `file` (read from `source`), in batches of 1, 2 and 5 rows, is the
    /// same as the rows of the whole file read from its bytes; local files mapped with `map`.
    async fn check_ranges(source: Arc<Source>, file: &[u8], map: Option<MapContract>) {
        let all = expected(file);
        let location = source.name().to_string();
        let rows = npy_core::NpyReader::from_reader(file).unwrap().header().shape.first().copied().unwrap_or(1);
        for a in 0..=rows {
            for b in a..=rows {
                for batch_rows in [1, 2, 5] {
                    let got = batches(&source, a..b, batch_rows, map).await.unwrap();
                    let sizes: Vec<usize> = got.iter().map(RecordBatch::num_rows).collect();
                    assert!(sizes.iter().all(|&n| n == batch_rows.min(b - a) || n == (b - a) % batch_rows));
                    assert_eq!(sizes.iter().sum::<usize>(), b - a, "{location} {a}..{b}");
                    let mut first = a;
                    for batch in got {
                        let want: Vec<ArrayRef> = all.slice(first, batch.num_rows()).columns().to_vec();
                        assert_eq!(batch.columns(), &want[..], "{location} rows {a}..{b} by {batch_rows}");
                        first += batch.num_rows();
                    }
                }
            }
        }
    }

    /// The object `location` of `store` (with `file` put there first), as a source.
    async fn put(store: &Arc<dyn ObjectStore>, location: &Path, file: &[u8]) -> Arc<Source> {
        store.put(location, file.to_vec().into()).await.unwrap();
        Arc::new(Source::of_object(store.clone(), location).await.unwrap())
    }

    fn records() -> Vec<u8> {
        (0..23).map(|i| i64::from(i) * 1_000_003 - 5).collect::<Vec<i64>>().write_npy_to(Vec::new()).unwrap()
    }

    const FILES: [&str; 9] = [
        "shape/3x4_F_i4.npy",
        "shape/2x3x4_F_f8.npy",
        "shape/3x4_C_i4.npy",
        "shape/0d_f8.npy",
        "shape/5x0x3_f4.npy",
        "string/be_U4.npy",
        "record/trace_aligned.npy",
        "record/nested_3_levels.npy",
        "record/3x2_F.npy",
    ];

    /// [`FILES`] and a generated file, by name.
    fn test_files() -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = FILES.iter().map(|f| (f.to_string(), data(f))).collect();
        files.push(("gen/records.npy".into(), records()));
        files
    }

    #[tokio::test]
    async fn ranges_in_memory() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        for (name, file) in test_files() {
            check_ranges(put(&store, &Path::from(name), &file).await, &file, None).await;
        }
    }

    #[tokio::test]
    async fn ranges_from_streams_in_small_chunks() {
        // Chunks of 5 and 13 bytes: rows and batches straddle every chunk boundary.
        for chunk in [5, 13] {
            let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
            let store: Arc<dyn ObjectStore> = Arc::new(object_store::chunked::ChunkedStore::new(inner, chunk));
            for (name, file) in test_files() {
                check_ranges(put(&store, &Path::from(name), &file).await, &file, None).await;
            }
        }
    }

    #[tokio::test]
    async fn ranges_local_files() {
        let dir = tempfile::tempdir().unwrap();
        for (name, file) in test_files() {
            let path = dir.path().join(name.replace('/', "_"));
            std::fs::write(&path, &file).unwrap();
            let source = Arc::new(Source::open_local(path.to_str().unwrap()).unwrap());
            check_ranges(source, &file, None).await;
        }
    }

    #[tokio::test]
    async fn a_scan_reads_every_row_by_default_in_default_batches() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let location = Path::from("all.npy");
        // 100,000 rows of 8 bytes: more than one default batch (65,536 rows).
        let file = (0..100_000i64).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap();
        store.put(&location, file.clone().into()).await.unwrap();
        let object = crate::header::fetch_header(&store, &location).await.unwrap();
        let layout = Arc::new(Layout::new(&object.header, None).unwrap());
        let stream = RowScan::new(object.source, object.data_offset, layout.clone()).batches();
        assert_eq!(stream.schema(), layout.schema());
        let got: Vec<RecordBatch> = stream.try_collect().await.unwrap();
        let sizes: Vec<usize> = got.iter().map(|b| b.num_rows()).collect();
        assert_eq!(sizes, [npy_arrow::read::DEFAULT_BATCH_ROWS, 100_000 - npy_arrow::read::DEFAULT_BATCH_ROWS]);
        let all = expected(&file);
        // The values of the whole file (the expected batch's schema also has the version).
        assert_eq!(got[0].columns(), all.slice(0, sizes[0]).columns());
        assert_eq!(got[1].columns(), all.slice(sizes[0], sizes[1]).columns());
    }

    /// A local file (by its path) and an object: a file cut short, rows past the end.
    #[tokio::test]
    async fn errors_name_the_object() {
        let file = records();
        let dir = tempfile::tempdir().unwrap();
        let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let open = |name: &str, bytes: &[u8]| {
            let (memory, path) = (memory.clone(), dir.path().join(name));
            let (name, bytes) = (name.to_string(), bytes.to_vec());
            async move {
                std::fs::write(&path, &bytes).unwrap();
                let local = Arc::new(Source::open_local(path.to_str().unwrap()).unwrap());
                [local, put(&memory, &Path::from(name), &bytes).await]
            }
        };
        let object = crate::header::fetch_header(&memory, &Path::from("x")).await.map(|_| ());
        assert!(object.unwrap_err().to_string().starts_with("reading 'x'"));
        for (k, whole) in open("whole.npy", &file).await.into_iter().enumerate() {
            let object = crate::header::fetch_header_at(whole.clone(), 0, None, &Default::default()).await.unwrap();
            let layout = Arc::new(Layout::new(&object.header, None).unwrap());
            // Cut inside row 20, and cut before the data of row 10 starts.
            for (cut, rows) in
                [(object.data_offset as usize + 20 * 8 + 3, 15..23), (object.data_offset as usize, 10..12)]
            {
                let short = open(&format!("short{cut}.npy"), &file[..cut]).await[k].clone();
                let stream =
                    RowScan::new(short.clone(), object.data_offset, layout.clone()).rows(rows).batch_rows(2).batches();
                let got: Vec<Result<RecordBatch>> = stream.collect().await;
                let last = got.last().unwrap().as_ref().unwrap_err();
                assert!(matches!(last.kind(), ErrorKind::Truncated { .. }), "{last}");
                assert_eq!(last.path(), Some(std::path::Path::new(short.name())), "{last}");
                // Whole batches before the error only, never a short one.
                assert!(got[..got.len() - 1].iter().all(|b| b.as_ref().unwrap().num_rows() == 2));
            }
            let past = RowScan::new(whole.clone(), object.data_offset, layout.clone()).rows(20..24).batches();
            let e = past.try_collect::<Vec<_>>().await.unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
            assert!(e.to_string().starts_with(&format!("reading '{}': rows 20..24", whole.name())), "{e}");
        }
    }
}
