//! [`Shards`]: many `.npy` files (or stored `.npz` members of one name) of one dtype and
//! trailing shape as one array along axis 0, its rows read lazily: a range of rows, or a
//! batch of rows in any order ([`Shards::gather`]), each row by a positioned read of its
//! file (local files) or a ranged GET (objects at URLs), the runs of a batch coalesced and
//! read side by side. What a training loop asks of its data: random batches of rows
//! across shards, from local disks or buckets.
//!
//! A batch's local reads are shared between the calling thread and a helper thread per
//! further CPU, each run of rows read straight into its place in the batch (see
//! `shards/claims.rs`).
//!
//! A local file is opened once and read with `pread`; before each read, its path is looked
//! at again, and a file replaced or resized since it was opened fails the read, naming it
//! (a file cut short under a read fails it too). An object at a URL is read on the
//! condition of the ETag its `HEAD` found when opened, where the store gives one.
//!
//! Under a [`MapContract`] ([`ShardsOptions::map`]), local files are mapped instead and
//! rows copied out of the maps: no system call a row, where `pread` makes one, so a batch
//! of scattered rows costs about its copies; on `np.load(mmap_mode="r")`'s terms: a file
//! cut short while it is mapped may kill the process with `SIGBUS`.

use std::ops::Range;
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};
use npy_core::header::Header;
use npy_core::mmap::{MapContract, MappedRange};
use npy_core::npz::ReaderOptions;
use npy_core::{Error, ErrorKind, NpyReader, ReadNpy, ReadOptions, Result};

use crate::header::fetch_header_at;
use crate::npz::RemoteNpz;
use crate::source::{bridges, Source, GETS_IN_FLIGHT};

mod claims;

use claims::{helpers_for, read_local_into, Claims, Out, Relay};

/// Runs of rows a thread of a local gather reads, at least: fewer runs are read on one.
const RUNS_PER_THREAD: usize = 32;

/// How [`Shards`] opens its files: the `.npz` member to read of each archive, and the
/// header size limit. Every setting has a documented default.
#[derive(Debug, Clone, Default)]
pub struct ShardsOptions {
    member: Option<String>,
    read: ReadOptions,
    map: Option<MapContract>,
}

impl ShardsOptions {
    /// The defaults: `.npy` files, npy-core's default [`ReadOptions`].
    pub fn new() -> ShardsOptions {
        ShardsOptions::default()
    }

    /// Reads member `name` (`"x"` or `"x.npy"`) of each source, which are then `.npz`
    /// archives (a directory's `.npz` files); the member must be stored, not compressed.
    /// Default: none (the sources are `.npy` files).
    pub fn member(&mut self, name: impl Into<String>) -> &mut Self {
        self.member = Some(name.into());
        self
    }

    /// The header size limit and other reading settings of the headers (default: npy-core's
    /// [`ReadOptions::new`]).
    pub fn read_options(&mut self, options: &ReadOptions) -> &mut Self {
        self.read = options.clone();
        self
    }

    /// Maps local files (their rows, read-only) instead of reading them with `pread`,
    /// under the caller's acceptance of the maps' contract, given by the `unsafe`
    /// [`MapContract::accept`]: nothing truncates or modifies the files while the
    /// [`Shards`] lives. Rows are then copied out of the maps, with no system call but the
    /// check of each file touched (a file replaced or resized before a read still fails
    /// it). Default: no maps.
    pub fn map(&mut self, contract: MapContract) -> &mut Self {
        self.map = Some(contract);
        self
    }
}

/// Many NumPy files as one array along axis 0 (see the [module](self)): cheap to clone (the
/// open files are shared), safe to share between threads, every read independent.
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
/// use npy_store::Shards;
///
/// # let dir = tempfile::tempdir()?;
/// # let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
/// (0..6).map(|i| i as f32).collect::<Vec<_>>().write_npy(&a)?;
/// (6..10).map(|i| i as f32).collect::<Vec<_>>().write_npy(&b)?;
/// # let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let shards = Shards::open(&[a, b]).await?; // a directory or a glob works too
/// assert_eq!(shards.rows(), 10);
/// assert_eq!(shards.gather::<Vec<f32>>(&[9, 0, 5, 6]).await?, [9.0, 0.0, 5.0, 6.0]);
/// assert_eq!(shards.read_rows::<Vec<f32>>(4..8).await?, [4.0, 5.0, 6.0, 7.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Shards {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Shards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shards").field("files", &self.files()).field("rows", &self.rows()).finish_non_exhaustive()
    }
}

struct Inner {
    shards: Vec<Shard>,
    /// The first row of each shard in the whole array, and the rows of all of them last.
    starts: Vec<usize>,
    /// The whole array's header: the shards' dtype, all their rows, their trailing shape.
    header: Header,
    row_bytes: usize,
    /// Where gathers' helpers wait for the next gather.
    relay: Relay,
}

/// One file of the array.
struct Shard {
    /// Where its rows start in the file.
    data_start: u64,
    /// The file (named as the user named it, or as found under their directory or pattern).
    source: Arc<Source>,
    /// A local file's rows, mapped (under the options' [`MapContract`]).
    map: Option<MappedRange>,
    /// The bytes and requests its opening read (its header): not counted as rows'.
    opening: (u64, u64),
}

impl Shard {
    fn name(&self) -> &str {
        self.source.name()
    }
}

/// Rows of one shard read by one request, and where each run of them goes.
struct Read {
    shard: usize,
    /// The rows read (the shard's own numbers), gaps between runs included.
    rows: Range<usize>,
    /// The first run: its rows, and the index among the rows gathered where they go.
    run: (Range<usize>, usize),
    /// The runs after it, merged into this read across short gaps (none for most reads).
    more: Vec<(Range<usize>, usize)>,
}

impl Read {
    /// Each run: its rows, and where they go among the rows gathered.
    fn runs(&self) -> impl Iterator<Item = &(Range<usize>, usize)> {
        std::iter::once(&self.run).chain(&self.more)
    }
}

impl Shards {
    /// The array of `sources`, with default options ([`Shards::open_with`]).
    ///
    /// # Errors
    /// As [`Shards::open_with`].
    pub async fn open(sources: &[&str]) -> Result<Shards> {
        Shards::open_with(sources, &ShardsOptions::new()).await
    }

    /// The array of `sources`, one after another along axis 0: each a `.npy` file, a
    /// directory (its `.npy` files, recursively, in path order), a glob pattern, an object
    /// at a URL ([`crate::store_for`]'s), or a URL prefix ending in `/` (its objects, as
    /// [`crate::find_files`] lists them); with [`ShardsOptions::member`], `.npz`
    /// archives and that stored member of each. Every file's header is read now (and an
    /// archive's directory); local files stay open.
    ///
    /// # Errors
    /// Naming the file: a missing one; one that is not a NumPy file or is shorter than its
    /// header says; arrays of Python objects, of no dims, or Fortran-order arrays of two
    /// dims or more (their rows are not contiguous); a compressed member
    /// ([`ErrorKind::Usage`], [`ErrorKind::Npz`]); and a file whose dtype or trailing shape
    /// is not the first file's, naming both ([`ErrorKind::Usage`]). No sources at all is
    /// [`ErrorKind::Usage`].
    pub async fn open_with(sources: &[&str], options: &ShardsOptions) -> Result<Shards> {
        let mut names = Vec::new();
        for &source in sources {
            let url = crate::is_url(source);
            for name in crate::find_files(source).await? {
                names.push((name, url));
            }
        }
        if names.is_empty() {
            let reason = "no files to open: give a file, a directory, a glob pattern or a list of them".into();
            return Err(ErrorKind::Usage { reason }.into());
        }
        let opened = stream::iter(names.iter().map(|(name, url)| open_one(name, *url, options)))
            .buffered(GETS_IN_FLIGHT)
            .try_collect::<Vec<_>>()
            .await?;
        let (first_name, first) = (opened[0].0.name(), &opened[0].1);
        let mut starts = Vec::with_capacity(opened.len() + 1);
        let mut rows = 0usize;
        for (shard, header) in &opened {
            if header.dtype != first.dtype || header.shape[1..] != first.shape[1..] {
                let reason = format!(
                    "its dtype {} and rows of shape {:?} are not those of '{first_name}' ({}, {:?}): shards share \
                     one dtype and one shape but for the first axis",
                    header.dtype.descr(),
                    &header.shape[1..],
                    first.dtype.descr(),
                    &first.shape[1..],
                );
                return Err(Error::from(ErrorKind::Usage { reason }).reading(shard.name()));
            }
            starts.push(rows);
            rows = rows.checked_add(header.shape[0]).ok_or_else(|| {
                Error::from(ErrorKind::Usage { reason: "more rows than this machine can count".into() })
            })?;
        }
        starts.push(rows);
        let mut header = first.clone();
        header.shape[0] = rows;
        header.fortran_order = false;
        let row_bytes = first.dtype.itemsize() * first.shape[1..].iter().product::<usize>();
        let shards = opened.into_iter().map(|(shard, _)| shard).collect();
        let inner = Inner { shards, starts, header, row_bytes, relay: Relay::new() };
        Ok(Shards { inner: Arc::new(inner) })
    }

    /// The whole array's header: the shards' dtype, the rows of all of them, their
    /// trailing shape (C order).
    pub fn header(&self) -> &Header {
        &self.inner.header
    }

    /// Rows of all the shards.
    pub fn rows(&self) -> usize {
        self.inner.header.shape[0]
    }

    /// Bytes of one row.
    pub fn row_bytes(&self) -> usize {
        self.inner.row_bytes
    }

    /// The files (and URLs), in order.
    pub fn files(&self) -> Vec<&str> {
        self.inner.shards.iter().map(Shard::name).collect()
    }

    /// Each file's first row in the whole array, then the rows of all (one more than
    /// there are files).
    pub fn starts(&self) -> &[usize] {
        &self.inner.starts
    }

    /// Bytes fetched so far by ranged GETs (0 for local files).
    pub fn fetched(&self) -> u64 {
        self.inner.shards.iter().map(|s| s.source.fetched() - s.opening.0).sum()
    }

    /// Ranged GETs made so far by reads of rows (0 for local files).
    pub fn requests(&self) -> u64 {
        self.inner.shards.iter().map(|s| s.source.requests() - s.opening.1).sum()
    }

    /// Every row as any [`ReadNpy`] type ([`Shards::read_rows`] of all).
    ///
    /// # Errors
    /// As [`Shards::read_rows`].
    pub async fn read<V: ReadNpy>(&self) -> Result<V> {
        self.read_rows(0..self.rows()).await
    }

    /// Rows `rows` of the whole array as any [`ReadNpy`] type (`Vec<T>` of 1-d shards,
    /// `Array<T>`, `DynArray`, ...): one read of each shard they reach.
    ///
    /// # Errors
    /// As [`Shards::read_rows_raw`], and [`NpyReader::read`]'s (a dtype or shape `V` cannot
    /// read).
    pub async fn read_rows<V: ReadNpy>(&self, rows: Range<usize>) -> Result<V> {
        let count = rows.len();
        let bytes = self.read_rows_raw(rows).await?;
        self.decode(bytes, count)
    }

    /// Rows `rows` of the whole array in any order, repeats allowed, as any [`ReadNpy`]
    /// type: the batch of a training step ([`Shards::gather_raw`]).
    ///
    /// # Errors
    /// As [`Shards::gather_raw`], and [`NpyReader::read`]'s.
    pub async fn gather<V: ReadNpy>(&self, rows: &[usize]) -> Result<V> {
        let bytes = self.gather_raw(rows).await?;
        self.decode(bytes, rows.len())
    }

    fn decode<V: ReadNpy>(&self, bytes: Vec<u8>, count: usize) -> Result<V> {
        let mut header = self.inner.header.clone();
        header.shape[0] = count;
        NpyReader::over_data(bytes.as_slice(), header)?.read::<V>()
    }

    /// The bytes of rows `rows` (C order, the files' byte order).
    ///
    /// # Errors
    /// As [`Shards::gather_raw`].
    pub async fn read_rows_raw(&self, rows: Range<usize>) -> Result<Vec<u8>> {
        self.check(rows.end.max(rows.start), rows.end > rows.start)?;
        if rows.start >= rows.end {
            return Ok(Vec::new());
        }
        let runs = self.runs(std::iter::once((rows.start, rows.len(), 0)));
        self.read_runs(runs, rows.len()).await
    }

    /// The bytes of `rows` (in that order, repeats allowed: C order, the files' byte
    /// order), each row read once: the distinct rows are sorted, runs of adjacent rows (and
    /// runs with short gaps between) of a shard read by one positioned read or ranged GET,
    /// all of them side by side (local files on threads, GETs concurrently).
    ///
    /// # Errors
    /// [`ErrorKind::WrongShape`] for a row past the end; naming the file: a local file
    /// replaced or resized since it was opened, or an object changed (its ETag)
    /// ([`ErrorKind::Usage`]); one that ends before its rows ([`ErrorKind::Truncated`]);
    /// I/O and store errors.
    pub async fn gather_raw(&self, rows: &[usize]) -> Result<Vec<u8>> {
        if let Some(&most) = rows.iter().max() {
            self.check(most + 1, true)?;
        }
        // Each row with where it goes, in file order; a row asked again is read once and
        // copied to its other places after.
        let mut placed: Vec<(usize, usize)> = rows.iter().enumerate().map(|(at, &row)| (row, at)).collect();
        if !rows.windows(2).all(|w| w[0] < w[1]) {
            placed.sort_unstable();
        }
        let mut again = Vec::new();
        placed.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                again.push((kept.1, later.1));
            }
            same
        });
        let runs = self.runs(placed_runs(&placed));
        let mut out = self.read_runs(runs, rows.len()).await?;
        let width = self.inner.row_bytes;
        for (from, to) in again {
            out.copy_within(from * width..(from + 1) * width, to * width);
        }
        Ok(out)
    }

    /// Fails unless rows up to `end` exist.
    fn check(&self, end: usize, any: bool) -> Result<()> {
        let total = self.rows();
        if any && end > total {
            let reason = format!("row {} asked of an array of {total} rows", end - 1);
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        Ok(())
    }

    /// The reads of `runs` (global `(first row, count, where they go among the rows
    /// gathered)`, ascending rows), each run split at the shards' ends, runs of a shard with
    /// short gaps merged into one read.
    fn runs(&self, runs: impl Iterator<Item = (usize, usize, usize)>) -> Vec<Read> {
        let starts = &self.inner.starts;
        let width = self.inner.row_bytes as u64;
        let mut reads: Vec<Read> = Vec::new();
        for (first, count, mut at) in runs {
            let (mut row, end) = (first, first + count);
            while row < end {
                // The shard holding `row`: the last whose start is at most it.
                let shard = starts.partition_point(|&s| s <= row) - 1;
                let stop = end.min(starts[shard + 1]);
                let local = row - starts[shard]..stop - starts[shard];
                let len = local.len();
                match reads.last_mut() {
                    Some(read)
                        if read.shard == shard && {
                            let gap = (local.start - read.rows.end) as u64 * width;
                            bridges(gap, len as u64 * width)
                        } =>
                    {
                        read.rows.end = local.end;
                        read.more.push((local, at));
                    }
                    _ => reads.push(Read { shard, rows: local.clone(), run: (local, at), more: Vec::new() }),
                }
                at += len;
                row = stop;
            }
        }
        reads
    }

    /// The bytes of `count` rows, placed by `reads`.
    async fn read_runs(&self, reads: Vec<Read>, count: usize) -> Result<Vec<u8>> {
        let width = self.inner.row_bytes;
        let mut out = vec![0u8; count * width];
        let (local, remote): (Vec<Read>, Vec<Read>) =
            reads.into_iter().partition(|r| self.inner.shards[r.shard].source.is_local());
        if remote.is_empty() {
            self.read_local_runs(local, &mut out).await?;
            return Ok(out);
        }
        if local.is_empty() || u32::try_from(local.len()).is_err() {
            // No local reads, or more than claims count: one after the other.
            self.fetch(remote, &mut out).await?;
            self.read_local_runs(local, &mut out).await?;
            return Ok(out);
        }
        let fetch = self.fetch(remote, &mut out);
        // Local reads on threads while the GETs are in flight, copied in after.
        let helpers = helpers_for(local.len()) + 1;
        let claims = Arc::new(Claims::new(self.inner.clone(), local, helpers));
        let ends = claims.start_helpers(&self.inner.relay);
        let (own, fetched) = futures::join!(claims.joined(ends), fetch);
        fetched?;
        for helper in own? {
            helper.copy_to(&mut out);
        }
        Ok(out)
    }

    /// Local `reads` into `out` (the gather's rows): on the calling thread and, for many
    /// reads, on helper threads that claim them a few at a time alongside it (all on the
    /// calling thread when mapped: copies, no system call but the checks, so no thread is
    /// worth its start). A helper that is slow to wake takes fewer, so a gather never waits
    /// longer for a second thread than it would have read alone.
    async fn read_local_runs(&self, reads: Vec<Read>, out: &mut [u8]) -> Result<()> {
        let mapped = reads.iter().all(|r| self.inner.shards[r.shard].map.is_some());
        let helpers = helpers_for(reads.len());
        if mapped || helpers == 0 {
            let mut out = Out { out, width: self.inner.row_bytes };
            return read_local_into(&self.inner, &reads, &mut out, &mut None);
        }
        let relay = &self.inner.relay;
        relay.starting();
        let claims = Arc::new(Claims::new(self.inner.clone(), reads, helpers));
        let ends = claims.start_helpers(relay);
        let mine = claims.read_into(out);
        // Every helper that claimed reads is awaited before an error is given.
        let own = claims.joined(ends).await;
        relay.ended();
        mine?;
        for helper in own? {
            helper.copy_to(out);
        }
        Ok(())
    }

    /// Ranged GETs of `reads` (objects at URLs), side by side, each run's rows put in `out`.
    async fn fetch(&self, reads: Vec<Read>, out: &mut [u8]) -> Result<()> {
        if reads.is_empty() {
            return Ok(());
        }
        let width = self.inner.row_bytes;
        let inner = &self.inner;
        let mut got = stream::iter(reads.into_iter().map(|read| async move {
            let shard = &inner.shards[read.shard];
            let (start, end) = (read.rows.start * width, read.rows.end * width);
            let range = shard.data_start + start as u64..shard.data_start + end as u64;
            let bytes = shard.source.get(range).await.map_err(|e| in_data(e, start, shard.name()))?;
            Ok::<_, Error>((read, bytes))
        }))
        .buffer_unordered(GETS_IN_FLIGHT);
        while let Some(done) = got.next().await {
            let (read, bytes) = done?;
            for (rows, at) in read.runs() {
                let from = (rows.start - read.rows.start) * width;
                out[at * width..(at + rows.len()) * width].copy_from_slice(&bytes[from..from + rows.len() * width]);
            }
        }
        Ok(())
    }
}

/// How many CPUs this process may use (asked once: on Linux it reads cgroup files).
fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

/// Distinct rows in ascending order, each with where it goes among the rows gathered, as
/// runs of rows consecutive both in the file and among the rows gathered: `(first row,
/// count, where the first goes)`.
fn placed_runs(placed: &[(usize, usize)]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let (first, at) = *placed.get(i)?;
        let mut count = 1;
        while placed.get(i + count) == Some(&(first + count, at + count)) {
            count += 1;
        }
        i += count;
        Some((first, count, at))
    })
}

/// `e` of a read `at` bytes into shard `name`'s data: a file or object cut short says
/// how far into the data it ends.
pub(super) fn in_data(e: Error, at: usize, name: &str) -> Error {
    match e.kind() {
        ErrorKind::Truncated { expected, found } => {
            let (expected, found) = (expected + at as u64, found + at as u64);
            Error::from(ErrorKind::Truncated { expected, found }).reading(name)
        }
        _ => e,
    }
}

/// Opens file `name` (`url`: an object at a URL): the shard and its header.
async fn open_one(name: &str, url: bool, options: &ShardsOptions) -> Result<(Shard, Header)> {
    let named = |e: Error| e.renamed(name).reading(name);
    let usage = |reason: String| Error::from(ErrorKind::Usage { reason }).reading(name);
    // A local file is opened (and stamped) before its header is read, which reads it: a
    // file replaced in between fails the first read.
    let source = Arc::new(if url { Source::open(name).await? } else { Source::open_local(name)? });
    let (header, data_start, end) = match &options.member {
        None => {
            let object = fetch_header_at(source.clone(), 0, None, &options.read).await.map_err(named)?;
            (object.header, object.data_offset, object.size)
        }
        Some(member) => {
            let mut limits = ReaderOptions::new();
            limits.read_options(&options.read);
            let npz = RemoteNpz::of_source(source.clone(), &limits).await.map_err(named)?;
            let npy = npz.member(member).await.map_err(named)?;
            let object = npy.object();
            let member_start = npy.data_start() - object.data_offset;
            (object.header.clone(), npy.data_start(), member_start + object.size)
        }
    };
    if header.dtype.has_object() {
        return Err(usage(format!(
            "arrays of Python objects (dtype {}) have no rows to read in place: their data are pickles",
            header.dtype.descr()
        )));
    }
    if header.shape.is_empty() {
        return Err(usage("a 0-d array has no rows".into()));
    }
    if header.fortran_order && header.shape.len() > 1 {
        return Err(usage(format!(
            "a Fortran-order array of {} dims: its rows are not contiguous",
            header.shape.len()
        )));
    }
    let data_len = header.data_len().map_err(|e| e.reading(name))? as u64;
    if data_start + data_len > end {
        let (expected, found) = (data_len, end.saturating_sub(data_start));
        return Err(Error::from(ErrorKind::Truncated { expected, found }).reading(name));
    }
    let map = match (source.file(), options.map) {
        (Some(file), Some(contract)) if data_len > 0 => {
            Some(MappedRange::map(file, data_start..data_start + data_len, contract).map_err(named)?)
        }
        _ => None,
    };
    let opening = (source.fetched(), source.requests());
    Ok((Shard { data_start, source, map, opening }, header))
}

#[cfg(test)]
mod tests {
    use super::*;
    use npy_core::prelude::*;

    fn write(dir: &std::path::Path, name: &str, values: std::ops::Range<i32>, cols: usize) -> String {
        let path = dir.join(name);
        let data: Vec<i32> = values.flat_map(|v| (0..cols as i32).map(move |c| v * 10 + c)).collect();
        let rows = data.len() / cols;
        let array = Array::from_shape_vec(vec![rows, cols], data).unwrap();
        array.write_npy(&path).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn gathers_rows_across_shards_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.npy", 0..5, 3);
        let b = write(dir.path(), "b.npy", 5..6, 3);
        let c = write(dir.path(), "c.npy", 6..40, 3);
        let shards = run(Shards::open(&[&a, &b, &c])).unwrap();
        assert_eq!(shards.header().shape, [40, 3]);
        assert_eq!(shards.starts(), [0, 5, 6, 40]);
        let rows = [39, 0, 5, 5, 4, 6, 7, 8, 20, 22, 0];
        let got: Array<i32> = run(shards.gather(&rows)).unwrap();
        let want: Vec<i32> = rows.iter().flat_map(|&r| (0..3).map(move |c| r as i32 * 10 + c)).collect();
        assert_eq!(got.shape(), [rows.len(), 3]);
        assert_eq!(got.as_slice(), want.as_slice());
        let slice: Array<i32> = run(shards.read_rows(3..9)).unwrap();
        let want: Vec<i32> = (3..9).flat_map(|r| (0..3).map(move |c| r * 10 + c)).collect();
        assert_eq!(slice.as_slice(), want.as_slice());
        assert!(run(shards.gather_raw(&[])).unwrap().is_empty());
        let past = run(shards.gather_raw(&[40])).unwrap_err();
        assert!(past.to_string().contains("row 40 asked of an array of 40 rows"), "{past}");
    }

    #[test]
    fn coalesces_short_gaps_only() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.npy", 0..100, 1);
        let shards = run(Shards::open(&[&a])).unwrap();
        let rows = [1, 2, 4, 50, 52, 53, 99];
        let placed: Vec<(usize, usize)> = rows.iter().enumerate().map(|(at, &row)| (row, at)).collect();
        let reads = shards.runs(placed_runs(&placed));
        let spans: Vec<_> = reads.iter().map(|r| r.rows.clone()).collect();
        // A gap of one row before a run of one is bridged, before a run of two too; none of 45.
        assert_eq!(spans, [1..5, 50..54, 99..100]);
    }

    #[test]
    fn refuses_files_that_differ_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.npy", 0..5, 3);
        let b = write(dir.path(), "b.npy", 0..5, 2);
        let e = run(Shards::open(&[&a, &b])).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("b.npy") && text.contains("a.npy") && text.contains("[2]"), "{text}");
    }

    #[test]
    fn a_file_replaced_after_opening_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.npy", 0..5, 3);
        let shards = run(Shards::open(&[&a])).unwrap();
        let _ = write(dir.path(), "a.npy", 0..5, 3);
        let e = run(shards.gather_raw(&[1])).unwrap_err();
        assert!(e.to_string().contains("changed since it was opened") && e.to_string().contains("a.npy"), "{e}");
    }
}
