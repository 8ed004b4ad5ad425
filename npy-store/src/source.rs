//! [`Source`]: the one source of bytes of npy-store's readers: a local file, opened once
//! (by npy-core's `open_file`: regular files only) and read by positioned reads, each
//! first checking that its path still names the file opened (its `Stamp`); or an object
//! at a URL or in a caller's store, read by ranged GETs on the condition of the ETag its
//! first read found, where the store gives one. A store that answers with a local file
//! (object_store's `LocalFileSystem`) gives a local source. Ranges near each other are
//! read as one by the one coalescing rule, `bridges`; [`SourceRead`] reads one on from its
//! first bytes as a blocking `Read`.
//!
//! [`RowScan`](crate::RowScan) and the archive members read together, the header reads,
//! [`RemoteNpy`](crate::RemoteNpy), [`RemoteNpz`](crate::RemoteNpz)'s directory and
//! members, [`Shards`](crate::Shards) (which maps local ones under a contract) and
//! [`Table`](crate::Table) read through it, and so do Python's `npy.open`, `npy.dask`,
//! `npy.load` of a URL and the `fid` of an archive at a URL.

use std::fs::File;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use npy_core::{Error, ErrorKind, Result};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResultPayload, ObjectStore, ObjectStoreExt};

use crate::error::store_error;
use crate::stamp::Stamp;

/// Ranged GETs of one call in flight at once.
pub(crate) const GETS_IN_FLIGHT: usize = 64;

/// The largest gap between two ranges that one read bridges (its bytes are read and
/// dropped): see `bridges`.
pub(crate) const MAX_GAP: u64 = 64 << 10;

/// The coalescing rule of every ranged read: a gap between two wanted ranges is read
/// through when it is at most [`MAX_GAP`] (64 KiB) and no longer than the range after it,
/// so a read never takes more than twice the bytes wanted.
pub(crate) fn bridges(gap: u64, next_len: u64) -> bool {
    gap <= MAX_GAP && gap <= next_len
}

/// A local file or an object at a URL, read by byte ranges (see the module's docs).
///
/// # Examples
/// ```
/// use npy_store::Source;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.bin");
/// std::fs::write(&path, b"0123456789")?;
/// # let path = path.to_str().unwrap();
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let source = Source::open(path).await?; // or "s3://bucket/x.npy", "https://..."
/// assert_eq!(source.size(), 10);
/// let got = source.read_ranges(&[2..4, 5..8]).await?;
/// assert_eq!(got, [b"23".to_vec(), b"567".to_vec()]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Source {
    /// As the user named it (a path or URL): errors name it.
    name: String,
    size: u64,
    kind: Kind,
    /// Bytes and requests of ranged GETs so far (objects at URLs); the bytes shared with
    /// the streams a source hands out ([`Source::stream`]), which count theirs as they
    /// arrive.
    fetched: Arc<AtomicU64>,
    requests: AtomicU64,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("name", &self.name).field("size", &self.size).finish_non_exhaustive()
    }
}

enum Kind {
    /// (The file shared with the readers that read it on tokio's blocking pool.)
    Local {
        file: Arc<File>,
        path: PathBuf,
        stamp: Stamp,
    },
    Object {
        store: Arc<dyn ObjectStore>,
        location: Path,
        e_tag: Option<String>,
    },
}

impl Source {
    /// Opens `name`, a path or a URL ([`crate::is_url`]): a local file is opened and
    /// stamped, an object's `HEAD` gives its size and ETag.
    ///
    /// # Errors
    /// Naming it: a missing file or object (`NotFound`), a path that is not a regular
    /// file (npy-core's [`npy_core::open_file`]: an I/O error saying what it is, before
    /// anything is opened, so a FIFO is refused at once), a URL no store reads.
    pub async fn open(name: &str) -> Result<Source> {
        if !crate::is_url(name) {
            return Source::open_local(name);
        }
        let at = crate::store_for(name).map_err(|e| e.renamed(name).reading(name))?;
        let head = at.store.head(&at.path).await.map_err(|e| store_error(e, name))?;
        Ok(Source::new(name, head.size, Kind::Object { store: at.store, location: at.path, e_tag: head.e_tag }))
    }

    /// Opens the local file `name` (see [`Source::open`]), without a runtime.
    ///
    /// # Errors
    /// As [`Source::open`].
    pub fn open_local(name: &str) -> Result<Source> {
        // npy-core's open: a regular file only, checked before opening, since opening a FIFO
        // waits for a writer that may never come.
        let file = npy_core::open_file(name)?;
        let meta = file.metadata().map_err(|e| Error::from(e).reading(name))?;
        // What was opened, should the path have been replaced between the check and the open.
        if !meta.is_file() {
            return Err(Error::from(ErrorKind::Usage { reason: "not a regular file".into() }).reading(name));
        }
        let stamp = Stamp::of(&meta);
        Ok(Source::new(name, meta.len(), Kind::Local { file: Arc::new(file), path: PathBuf::from(name), stamp }))
    }

    /// Opens `name` by reading its first `first` bytes (all of a smaller one), which come
    /// back with it: an object by one ranged GET, whose answer also gives its size and
    /// ETag (no `HEAD`, but for an empty object, which has no first byte to ask for); a
    /// local file as [`Source::open_local`] opens it, then one positioned read.
    ///
    /// # Errors
    /// As [`Source::open`].
    ///
    /// # Examples
    /// ```
    /// use npy_store::Source;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("x.bin");
    /// std::fs::write(&path, b"0123456789")?;
    /// # let path = path.to_str().unwrap();
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let (source, start) = Source::open_start(path, 4).await?; // or a URL
    /// assert_eq!((source.size(), &start[..]), (10, &b"0123"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn open_start(name: &str, first: u64) -> Result<(Source, Bytes)> {
        if !crate::is_url(name) {
            let source = Source::open_local(name)?;
            let mut start = vec![0; usize::try_from(first.min(source.size)).unwrap_or(usize::MAX)];
            source.read_into(0, &mut start).await?;
            return Ok((source, Bytes::from(start)));
        }
        let at = crate::store_for(name).map_err(|e| e.renamed(name).reading(name))?;
        let range = GetRange::Bounded(0..first.max(1));
        let (source, _, start) = first_read(name, at.store, at.path, range, first, false).await?;
        Ok((source, start))
    }

    /// Opens `name`, a path or a URL, by reading its last `last` bytes (all of a smaller
    /// one), which come back with where they start: as [`Source::open_start`] opens it.
    ///
    /// # Errors
    /// As [`Source::open`].
    pub(crate) async fn open_tail(name: &str, last: u64) -> Result<(Source, u64, Bytes)> {
        if !crate::is_url(name) {
            let source = Source::open_local(name)?;
            let from = source.size.saturating_sub(last);
            let tail = source.read_bytes(from..source.size).await?;
            return Ok((source, from, tail));
        }
        let at = crate::store_for(name).map_err(|e| e.renamed(name).reading(name))?;
        first_read(name, at.store, at.path, GetRange::Suffix(last.max(1)), last, false).await
    }

    /// The object at `location` in `store` (a store the caller holds), opened by one
    /// ranged GET of its first byte (no `HEAD`), whose answer gives its size and ETag:
    /// its later reads are made on that ETag's condition. A store whose answer is a local
    /// file (object_store's `LocalFileSystem`) gives a local source: that file, opened
    /// once, read by positioned reads and stamped, as [`Source::open_local`] gives. Errors
    /// name the object by `location`.
    ///
    /// # Errors
    /// A missing object (`NotFound`) and the store's other errors, naming it.
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use npy_store::Source;
    /// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    /// let location = Path::from("x.bin");
    /// store.put(&location, b"0123456789".to_vec().into()).await?;
    /// let source = Source::of_object(store, &location).await?;
    /// assert_eq!((source.size(), source.is_local()), (10, false));
    /// assert_eq!(source.read_ranges(&[2..4]).await?, [b"23".to_vec()]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn of_object(store: Arc<dyn ObjectStore>, location: &Path) -> Result<Source> {
        Ok(Source::of_object_start(store, location, 0).await?.0)
    }

    /// As [`Source::of_object`], reading its first `first` bytes (all of a smaller
    /// object) by that one GET: they come back with it.
    ///
    /// # Errors
    /// As [`Source::of_object`].
    pub async fn of_object_start(store: Arc<dyn ObjectStore>, location: &Path, first: u64) -> Result<(Source, Bytes)> {
        let name = location.to_string();
        let range = GetRange::Bounded(0..first.max(1));
        let (source, _, start) = first_read(&name, store, location.clone(), range, first, true).await?;
        Ok((source, start))
    }

    /// As [`Source::of_object`], reading its last `last` bytes by that one GET: they come
    /// back with where they start.
    ///
    /// # Errors
    /// As [`Source::of_object`].
    pub(crate) async fn of_object_tail(
        store: Arc<dyn ObjectStore>,
        location: &Path,
        last: u64,
    ) -> Result<(Source, u64, Bytes)> {
        let range = GetRange::Suffix(last.max(1));
        first_read(location.as_ref(), store, location.clone(), range, last, true).await
    }

    fn new(name: &str, size: u64, kind: Kind) -> Source {
        let fetched = Arc::new(AtomicU64::new(0));
        Source { name: name.to_string(), size, kind, fetched, requests: AtomicU64::new(0) }
    }

    /// The path or URL, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size in bytes when opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether it is a local file (read by positioned reads, not GETs).
    pub fn is_local(&self) -> bool {
        matches!(self.kind, Kind::Local { .. })
    }

    /// What says which version of the file or object this is, to compare with a later
    /// open's: a local file's stamp (its size, modification time, device and inode, the
    /// rule that tells a file changed since it was opened, as `size:mtime_ns:device:inode`),
    /// an object's size and ETag (`size:"etag"`; its size alone where its store gives no
    /// ETag). Python's `npy.dask` compares it to tell a file changed under a graph.
    ///
    /// # Examples
    /// ```
    /// use npy_store::Source;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("x.bin");
    /// std::fs::write(&path, b"0123456789")?;
    /// # let path = path.to_str().unwrap();
    /// let stamp = Source::open_local(path)?.stamp();
    /// assert_eq!(Source::open_local(path)?.stamp(), stamp);
    /// std::fs::write(path, b"01234")?;
    /// assert_ne!(Source::open_local(path)?.stamp(), stamp);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stamp(&self) -> String {
        match &self.kind {
            Kind::Local { stamp, .. } => stamp.key(),
            Kind::Object { e_tag: Some(e_tag), .. } => format!("{}:{e_tag:?}", self.size),
            Kind::Object { e_tag: None, .. } => self.size.to_string(),
        }
    }

    /// Bytes fetched so far by ranged GETs (0 for a local file).
    pub fn fetched(&self) -> u64 {
        self.fetched.load(Ordering::Relaxed)
    }

    /// Ranged GETs made so far (0 for a local file).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The bytes of each of `ranges` (in any order, overlapping or not): near ranges read
    /// as one (`bridges`), an object's GETs side by side.
    ///
    /// # Errors
    /// Naming the source: a range past its end or reversed ([`ErrorKind::Usage`]); a file
    /// replaced or resized since it was opened, or an object whose ETag changed
    /// ([`ErrorKind::Usage`]); one cut short under the read ([`ErrorKind::Truncated`]);
    /// I/O and store errors.
    pub async fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>> {
        for r in ranges {
            if r.start > r.end || r.end > self.size {
                let reason = format!("bytes {}..{} asked of {} bytes: it ends first", r.start, r.end, self.size);
                return Err(Error::from(ErrorKind::Usage { reason }).reading(&self.name));
            }
        }
        // The reads: ascending spans, each with the wanted ranges (by index) it covers.
        let mut order: Vec<usize> = (0..ranges.len()).filter(|&i| !ranges[i].is_empty()).collect();
        order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
        let mut spans: Vec<(Range<u64>, Vec<usize>)> = Vec::new();
        for i in order {
            let r = &ranges[i];
            match spans.last_mut() {
                Some((span, wanted)) if r.start <= span.end || bridges(r.start - span.end, r.end - r.start) => {
                    span.end = span.end.max(r.end);
                    wanted.push(i);
                }
                _ => spans.push((r.clone(), vec![i])),
            }
        }
        let mut out = vec![Vec::new(); ranges.len()];
        // A span that is one wanted range becomes its bytes (read into place, no copy);
        // others are cut into the ranges they cover.
        let mut place = |span: &Range<u64>, bytes: Vec<u8>, wanted: &[usize]| {
            if let [i] = wanted {
                if ranges[*i] == *span {
                    out[*i] = bytes;
                    return;
                }
            }
            for &i in wanted {
                let r = &ranges[i];
                out[i] = bytes[(r.start - span.start) as usize..(r.end - span.start) as usize].to_vec();
            }
        };
        if self.is_local() {
            self.unchanged()?;
            for (span, wanted) in &spans {
                let mut buf = vec![0u8; (span.end - span.start) as usize];
                self.read_exact_at(&mut buf, span.start)?;
                place(span, buf, wanted);
            }
        } else {
            // (The GETs gathered first, each by its span's index: a stream of futures made
            // by a closure over borrowed spans is not `Send` for every lifetime, which a
            // boxed stream of rows needs.)
            let gets: Vec<_> = (0..spans.len())
                .map(|k| {
                    let span = spans[k].0.clone();
                    async move { Ok::<_, Error>((k, self.get(span).await?)) }
                })
                .collect();
            let mut got = stream::iter(gets).buffer_unordered(GETS_IN_FLIGHT);
            while let Some((k, bytes)) = got.try_next().await? {
                // (The answer's own buffer when it is one piece, else one copy.)
                place(&spans[k].0, Vec::from(bytes), &spans[k].1);
            }
        }
        Ok(out)
    }

    /// Fills `buf` with the bytes from `offset`: a local file's by positioned reads (after
    /// its stamp is checked), an object's by one ranged GET. For callers that own the
    /// buffer (NumPy's, which asks for huge pages where `Vec`s do not).
    ///
    /// # Errors
    /// As [`Source::read_ranges`].
    pub async fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(buf.len() as u64).filter(|&end| end <= self.size).ok_or_else(|| {
            let reason = format!("bytes {offset}..+{} asked of {} bytes: it ends first", buf.len(), self.size);
            Error::from(ErrorKind::Usage { reason }).reading(&self.name)
        })?;
        if buf.is_empty() {
            return Ok(());
        }
        if self.is_local() {
            self.unchanged()?;
            return self.read_exact_at(buf, offset);
        }
        buf.copy_from_slice(&self.get(offset..end).await?);
        Ok(())
    }

    /// Fails unless the local file is still the one opened (an object: never).
    pub(crate) fn unchanged(&self) -> Result<()> {
        let Kind::Local { path, stamp, .. } = &self.kind else { return Ok(()) };
        if Stamp::of_path(path).map_err(|e| Error::from(e).reading(&self.name))? == *stamp {
            return Ok(());
        }
        Err(self.changed())
    }

    /// The error of a file replaced or resized since it was opened.
    fn changed(&self) -> Error {
        let reason =
            "the file changed since it was opened (its size, time or inode is not the one opened): open it again";
        Error::from(ErrorKind::Usage { reason: reason.into() }).reading(&self.name)
    }

    /// Fills `buf` from the local file's byte `offset`: a file that ends first is
    /// [`ErrorKind::Truncated`] (in bytes from `offset`).
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let Kind::Local { file, .. } = &self.kind else {
            return Err(crate::error::io_error("a positioned read of an object at a URL".into()));
        };
        let mut filled = 0;
        while filled < buf.len() {
            match read_at(file, &mut buf[filled..], offset + filled as u64) {
                Ok(0) => {
                    let (expected, found) = (buf.len() as u64, filled as u64);
                    return Err(Error::from(ErrorKind::Truncated { expected, found }).reading(&self.name));
                }
                Ok(n) => filled += n,
                Err(e) => return Err(Error::from(e).reading(&self.name)),
            }
        }
        Ok(())
    }

    /// The object's bytes `range` by one GET on the condition of its ETag: all of them, or
    /// [`ErrorKind::Truncated`] (in bytes from the range's start).
    pub(crate) async fn get(&self, range: Range<u64>) -> Result<bytes::Bytes> {
        let Kind::Object { store, location, e_tag } = &self.kind else {
            return Err(crate::error::io_error("a ranged GET of a local file".into()));
        };
        let want = range.end - range.start;
        let options =
            GetOptions { range: Some(GetRange::Bounded(range)), if_match: e_tag.clone(), ..Default::default() };
        let fail = |e| store_error(e, &self.name);
        let bytes = store.get_opts(location, options).await.map_err(fail)?.bytes().await.map_err(fail)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.fetched.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if (bytes.len() as u64) < want {
            let (expected, found) = (want, bytes.len() as u64);
            return Err(Error::from(ErrorKind::Truncated { expected, found }).reading(&self.name));
        }
        Ok(bytes)
    }

    /// The local file, if this is one (shared with readers on tokio's blocking pool).
    pub(crate) fn file(&self) -> Option<&Arc<File>> {
        match &self.kind {
            Kind::Local { file, .. } => Some(file),
            Kind::Object { .. } => None,
        }
    }

    /// The ETag of the object's version read (`None` for a local file, or a store that
    /// gives none).
    pub(crate) fn e_tag(&self) -> Option<&str> {
        match &self.kind {
            Kind::Object { e_tag, .. } => e_tag.as_deref(),
            Kind::Local { .. } => None,
        }
    }

    /// The bytes `range`, all of them (one read: see [`Source::read_ranges`]).
    ///
    /// # Errors
    /// As [`Source::read_ranges`].
    pub(crate) async fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        let mut got = self.read_ranges(std::slice::from_ref(&range)).await?;
        Ok(Bytes::from(got.pop().unwrap_or_default()))
    }

    /// The bytes `range` as they arrive: a local file's read a block at a time by
    /// positioned reads (after its stamp is checked), an object's by one GET on the
    /// condition of its ETag. A source that ends first ends the stream early: the caller
    /// counts what it got.
    ///
    /// # Errors
    /// As [`Source::read_ranges`], the stream's items too.
    pub(crate) async fn stream(&self, range: Range<u64>) -> Result<BoxStream<'static, Result<Bytes>>> {
        match &self.kind {
            Kind::Local { file, .. } => {
                self.unchanged()?;
                Ok(file_stream(file.clone(), range, self.name.clone()))
            }
            Kind::Object { store, location, e_tag } => {
                let options =
                    GetOptions { range: Some(GetRange::Bounded(range)), if_match: e_tag.clone(), ..Default::default() };
                let got = store.get_opts(location, options).await.map_err(|e| store_error(e, &self.name))?;
                self.requests.fetch_add(1, Ordering::Relaxed);
                let fetched = Arc::clone(&self.fetched);
                let chunks = match got.payload {
                    // A store that answers with a local file (a `file://` URL's).
                    GetResultPayload::File(file, _) => file_stream(Arc::new(file), got.range, self.name.clone()),
                    GetResultPayload::Stream(s) => {
                        let name = self.name.clone();
                        s.map_err(move |e| store_error(e, &name)).boxed()
                    }
                };
                let counted = chunks.inspect_ok(move |chunk| {
                    fetched.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                });
                Ok(counted.boxed())
            }
        }
    }
}

/// Opens the object at `location` in `store` by one GET of `range` (its first or last
/// bytes): the source, where the bytes start, and the bytes (at most `keep` of them: a
/// GET asks for one byte at least). The answer gives the object's
/// size and ETag (no `HEAD`, but for an empty object, which has no byte to ask for). Where
/// `adopt` and the store answers with a local file, the source is that file, stamped.
async fn first_read(
    name: &str,
    store: Arc<dyn ObjectStore>,
    location: Path,
    range: GetRange,
    keep: u64,
    adopt: bool,
) -> Result<(Source, u64, Bytes)> {
    let options = GetOptions { range: Some(range), ..Default::default() };
    let got = match store.get_opts(&location, options).await {
        Ok(got) => got,
        // An empty object has no byte to ask for: its HEAD says it is empty.
        Err(e) if !matches!(e, object_store::Error::NotFound { .. }) => match store.head(&location).await {
            Ok(meta) if meta.size == 0 => {
                let kind = Kind::Object { store, location, e_tag: meta.e_tag };
                return Ok((Source::new(name, 0, kind), 0, Bytes::new()));
            }
            _ => return Err(store_error(e, name)),
        },
        Err(e) => return Err(store_error(e, name)),
    };
    let (size, e_tag, mut at) = (got.meta.size, got.meta.e_tag.clone(), got.range.clone());
    at.end = at.end.min(at.start.saturating_add(keep));
    match got.payload {
        GetResultPayload::File(file, path) if adopt => {
            let meta = file.metadata().map_err(|e| Error::from(e).reading(name))?;
            let kind = Kind::Local { file: Arc::new(file), path, stamp: Stamp::of(&meta) };
            let source = Source::new(name, meta.len(), kind);
            let bytes = source.read_bytes(at.start..at.end.min(source.size)).await?;
            Ok((source, at.start, bytes))
        }
        payload => {
            let got = object_store::GetResult { payload, ..got };
            let bytes = got.bytes().await.map_err(|e| store_error(e, name))?;
            let bytes = bytes.slice(..bytes.len().min(usize::try_from(at.end - at.start).unwrap_or(usize::MAX)));
            let source = Source::new(name, size, Kind::Object { store, location, e_tag });
            source.requests.fetch_add(1, Ordering::Relaxed);
            source.fetched.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            Ok((source, at.start, bytes))
        }
    }
}

/// Bytes read per block of a local file's stream: 1 MiB.
const FILE_BLOCK: u64 = 1 << 20;

/// The bytes `range` of `file` as they come, read in blocks of [`FILE_BLOCK`] by positioned
/// reads on tokio's blocking pool (object_store's own stream of a file is one blocking task
/// per 8 KiB, several times slower); errors name `name`. A file that ends early ends the
/// stream early.
fn file_stream(file: Arc<File>, range: Range<u64>, name: String) -> BoxStream<'static, Result<Bytes>> {
    stream::unfold(Some(range.start), move |pos| {
        let (file, name, end) = (file.clone(), name.clone(), range.end);
        async move {
            let pos = pos?;
            if pos >= end {
                return None;
            }
            let n = (end - pos).min(FILE_BLOCK) as usize;
            let read = tokio::task::spawn_blocking(move || {
                let mut buf = vec![0u8; n];
                let filled = read_full_at(&file, &mut buf, pos)?;
                buf.truncate(filled);
                Ok::<_, std::io::Error>(buf)
            });
            match read.await {
                Ok(Ok(buf)) => {
                    let next = (buf.len() == n).then_some(pos + n as u64);
                    Some((Ok(Bytes::from(buf)), next))
                }
                Ok(Err(e)) => Some((Err(Error::from(e).reading(&name)), None)),
                Err(e) => Some((Err(crate::error::io_error(format!("a read failed: {e}")).reading(&name)), None)),
            }
        }
    })
    .boxed()
}

/// A [`Source`] read as a blocking [`std::io::Read`] from where the bytes its caller
/// already holds end to its end, for npy-core's readers: those bytes first (the start
/// [`Source::open_start`] gave), then the rest: a local file's by positioned reads (after
/// its stamp is checked), an object's by one ranged GET on the condition of its ETag,
/// its chunks handed on as they arrive. Read it on a thread that is not a worker of
/// `handle`'s runtime, which it waits on.
///
/// # Examples
/// ```
/// use std::io::Read;
/// use npy_store::source::{Source, SourceRead};
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.bin");
/// std::fs::write(&path, b"0123456789")?;
/// # let path = path.to_str().unwrap();
/// let runtime = tokio::runtime::Runtime::new()?;
/// let (source, start) = runtime.block_on(Source::open_start(path, 4))?;
/// let mut all = Vec::new();
/// SourceRead::new(source, start, runtime.handle().clone()).read_to_end(&mut all)?;
/// assert_eq!(all, b"0123456789");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SourceRead {
    source: Source,
    handle: tokio::runtime::Handle,
    /// Bytes received and not read yet.
    chunk: Bytes,
    /// Where the bytes not yet received start.
    next: u64,
    /// The object's rest, once asked for.
    rest: Option<BoxStream<'static, object_store::Result<Bytes>>>,
    /// Whether a local file's stamp was checked (at the first read of the rest).
    checked: bool,
}

impl std::fmt::Debug for SourceRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceRead").field("source", &self.source).field("next", &self.next).finish_non_exhaustive()
    }
}

impl SourceRead {
    /// Reads `source` on from the end of `start`, its first bytes.
    pub fn new(source: Source, start: Bytes, handle: tokio::runtime::Handle) -> SourceRead {
        SourceRead { source, handle, next: start.len() as u64, chunk: start, rest: None, checked: false }
    }

    /// The source read.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The next bytes of the rest: empty at the source's end (or where an object's answer
    /// ended early, which the caller finds short).
    fn receive(&mut self, buf: &mut [u8]) -> Result<usize> {
        let size = self.source.size;
        if self.next >= size {
            return Ok(0);
        }
        match &self.source.kind {
            Kind::Local { file, .. } => {
                if !self.checked {
                    self.source.unchanged()?;
                    self.checked = true;
                }
                let want = buf.len().min(usize::try_from(size - self.next).unwrap_or(usize::MAX));
                let n = read_at(file, &mut buf[..want], self.next)
                    .map_err(|e| Error::from(e).reading(&self.source.name))?;
                self.next += n as u64;
                Ok(n)
            }
            Kind::Object { store, location, e_tag } => {
                if self.rest.is_none() {
                    let range = Some(GetRange::Bounded(self.next..size));
                    let options = GetOptions { range, if_match: e_tag.clone(), ..Default::default() };
                    let (store, location) = (store.clone(), location.clone());
                    let got = self.handle.block_on(async move { store.get_opts(&location, options).await });
                    self.rest = Some(got.map_err(|e| store_error(e, &self.source.name))?.into_stream());
                    self.source.requests.fetch_add(1, Ordering::Relaxed);
                }
                let Some(rest) = self.rest.as_mut() else { return Ok(0) };
                match self.handle.block_on(rest.next()) {
                    Some(Ok(bytes)) => {
                        self.next += bytes.len() as u64;
                        self.source.fetched.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                        let n = bytes.len().min(buf.len());
                        buf[..n].copy_from_slice(&bytes[..n]);
                        self.chunk = bytes.slice(n..);
                        Ok(n)
                    }
                    Some(Err(e)) => Err(store_error(e, &self.source.name)),
                    None => Ok(0),
                }
            }
        }
    }
}

impl std::io::Read for SourceRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.chunk.is_empty() {
            return self.receive(buf).map_err(std::io::Error::from);
        }
        let n = self.chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

/// Fills `buf` from byte `offset` of `file` by positioned reads, as far as the file goes:
/// how many bytes it got (fewer than asked where the file ends first).
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match read_at(file, &mut buf[filled..], offset + filled as u64)? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// A positioned read of `file` (the offset of no handle moves), tried again when a signal
/// interrupts it.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    loop {
        match positioned_read(file, buf, offset) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            got => return got,
        }
    }
}

#[cfg(unix)]
fn positioned_read(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn positioned_read(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    /// Opening a FIFO waits for a writer that may never come: it is refused before it is
    /// opened. The answer comes over a channel, so that a hang fails the test.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_before_it_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo.npy");
        let made = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        let name = path.to_str().unwrap().to_owned();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(Source::open_local(&name).map(|s| s.size())));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("Source::open_local of a FIFO waited for a writer");
        let e = got.unwrap_err();
        assert!(e.to_string().contains("is a FIFO, not a file") && e.to_string().contains("fifo.npy"), "{e}");
    }

    #[test]
    fn bridges_short_gaps_only() {
        assert!(bridges(0, 1));
        assert!(bridges(100, 100));
        assert!(!bridges(101, 100), "a gap longer than the range after it is not read");
        assert!(!bridges(MAX_GAP + 1, u64::MAX));
    }

    #[test]
    fn ranges_of_a_file_and_of_an_object_agree() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, &data).unwrap();
        let url = format!("file://{}", path.display());
        // Out of order, overlapping, empty, adjacent, near and far apart.
        let ranges = [150_000..150_010, 0..10, 5..20, 30..30, 20..40, 1000..1100, 90_000..190_000, 199_999..200_000];
        for name in [path.to_str().unwrap(), url.as_str()] {
            let source = run(Source::open(name)).unwrap();
            assert_eq!(source.size(), data.len() as u64);
            let got = run(source.read_ranges(&ranges)).unwrap();
            for (r, bytes) in ranges.iter().zip(&got) {
                assert_eq!(bytes[..], data[r.start as usize..r.end as usize], "{name}: {r:?}");
            }
            if !source.is_local() {
                // 0..40 (three ranges), 1000..1100 (its gap is longer than it),
                // 90_000..190_000 (150_000..150_010 inside it), and the last byte.
                assert_eq!(source.requests(), 4, "{name}");
            }
            let e = run(source.read_ranges(std::slice::from_ref(&(0..200_001)))).unwrap_err();
            assert!(e.to_string().contains("ends first") && e.to_string().contains("x.bin"), "{e}");
            let mut buf = vec![0u8; 100];
            run(source.read_into(1000, &mut buf)).unwrap();
            assert_eq!(buf[..], data[1000..1100], "{name}");
            let e = run(source.read_into(199_950, &mut buf)).unwrap_err();
            assert!(e.to_string().contains("ends first") && e.to_string().contains("x.bin"), "{e}");
            // A range as it arrives: a local file's in blocks of a MiB or less.
            let before = (source.requests(), source.fetched());
            let chunks: Vec<Bytes> = run(async { source.stream(5..150_005).await?.try_collect().await }).unwrap();
            assert!(chunks.concat() == data[5..150_005], "{name}");
            if !source.is_local() {
                assert_eq!((source.requests(), source.fetched()), (before.0 + 1, before.1 + 150_000), "{name}");
            }
        }
    }

    /// An object of a store that answers with a local file is that file, read by
    /// positioned reads; an in-memory store's by GETs: both give every byte of a range
    /// over several blocks, by one GET for the object.
    #[test]
    fn an_object_of_a_local_store_is_a_local_file() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..3_500_000u32).map(|i| (i % 247) as u8).collect();
        let local: Arc<dyn ObjectStore> =
            Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let location = Path::from("a.bin");
        for (store, file) in [(local, true), (memory, false)] {
            run(store.put(&location, data.clone().into())).unwrap();
            let (source, start) = run(Source::of_object_start(store, &location, 5)).unwrap();
            assert_eq!((source.size(), source.is_local(), &start[..]), (3_500_000, file, &data[..5]));
            let chunks: Vec<Bytes> = run(async { source.stream(7..3_400_007).await?.try_collect().await }).unwrap();
            assert!(chunks.concat() == data[7..3_400_007]);
            assert_eq!(source.requests(), if file { 0 } else { 2 });
        }
    }

    #[test]
    fn a_file_replaced_after_opening_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("y.bin");
        std::fs::write(&path, [1u8; 100]).unwrap();
        let source = Source::open_local(path.to_str().unwrap()).unwrap();
        std::fs::write(dir.path().join("z.bin"), [2u8; 100]).unwrap();
        std::fs::rename(dir.path().join("z.bin"), &path).unwrap();
        let e = run(source.read_ranges(std::slice::from_ref(&(0..10)))).unwrap_err();
        assert!(e.to_string().contains("changed since it was opened") && e.to_string().contains("y.bin"), "{e}");
        let e = run(source.stream(0..10)).map(|_| ()).unwrap_err();
        assert!(e.to_string().contains("changed since it was opened") && e.to_string().contains("y.bin"), "{e}");
        let e = Source::open_local(dir.path().to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("is a directory, not a file"), "{e}");
    }

    /// `open_start` gives a file's and an object's first bytes; `SourceRead` reads on from
    /// them to the end (an object's rest by one more GET), and fails, naming the source,
    /// once the file or object is replaced.
    #[test]
    fn a_source_read_from_its_start_gives_every_byte() {
        use std::io::Read;
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        let path = dir.path().join("r.bin");
        std::fs::write(&path, &data).unwrap();
        std::fs::write(dir.path().join("empty.bin"), b"").unwrap();
        let url = format!("file://{}", path.display());
        for name in [path.to_str().unwrap(), url.as_str()] {
            for first in [0, 10, 4096, 400_000] {
                let (source, start) = runtime.block_on(Source::open_start(name, first)).unwrap();
                assert_eq!((source.size(), start.len()), (300_000, first.min(300_000) as usize), "{name}");
                let mut all = Vec::new();
                let mut read = SourceRead::new(source, start, runtime.handle().clone());
                read.read_to_end(&mut all).unwrap();
                assert!(all == data, "{name} from {first}");
                if !read.source().is_local() {
                    assert_eq!(read.source().requests(), if first >= 300_000 { 1 } else { 2 }, "{name}");
                    assert_eq!(read.source().fetched(), 300_000, "{name}");
                }
            }
            let (source, start) = runtime.block_on(Source::open_start(name, 10)).unwrap();
            std::fs::write(dir.path().join("new.bin"), &data).unwrap();
            std::fs::rename(dir.path().join("new.bin"), &path).unwrap();
            let e = SourceRead::new(source, start, runtime.handle().clone()).read_to_end(&mut Vec::new()).unwrap_err();
            assert!(e.to_string().contains("changed since it was opened") && e.to_string().contains("r.bin"), "{e}");
        }
        let empty = dir.path().join("empty.bin");
        let empty_url = format!("file://{}", empty.display());
        for name in [empty.to_str().unwrap(), empty_url.as_str()] {
            let (source, start) = runtime.block_on(Source::open_start(name, 4096)).unwrap();
            assert_eq!((source.size(), start.len()), (0, 0), "{name}");
        }
        let missing = format!("file://{}", dir.path().join("missing.bin").display());
        let e = runtime.block_on(Source::open_start(&missing, 10)).unwrap_err();
        assert!(e.to_string().contains("missing.bin"), "{e}");
    }
}
