//! Several members read at once ([`Reader::read_all`], [`Reader::read_all`],
//! [`Reader::read_many`], [`Reader::read_many_from`]), on worker threads.
//!
//! Each worker reads whole members from a handle of its own on the archive, as
//! [`Reader::npy_from`] does (held to the member's size, its CRC-32 checked at its end),
//! taking the next member in the order asked; the values are put back in that order. At
//! most one worker per CPU ([`super::ReaderOptions::threads`]); reads of less than
//! [`PARALLEL_MIN_BYTES`] in all stay on the caller's thread, as do reads from a reader
//! with no second handle on its archive (one not opened by path, without
//! [`Reader::read_many_from`]).
//!
//! The first error in the order asked wins. A failing worker marks its member; no worker
//! then starts a member after it, and the handles reading members after it refuse to read
//! on, so their workers stop at their next read (at most 32 KiB of compressed data, or a
//! quarter of a MiB stored). Members before it are read to their end, so the error returned
//! is the first there is, whatever the threads' timing.
//!
//! A member is decompressed by one thread, but for one npy compressed in parts whose
//! central directory entry lists where they start (`part_index`): its parts are
//! decompressed at once, on as many threads as the reader has (`whole`). A deflate stream
//! as Python's `zipfile` writes it (and so `np.savez_compressed`) is one raw stream with
//! no flush points: where each of its blocks starts is only known once the blocks before
//! it are inflated, and a block may copy from the 32 KiB of data before it, so the stream
//! cannot be split between threads without inflating it first. Archives of several
//! members read fastest, a member per CPU at once.

use std::io::{self, Read, Seek, SeekFrom};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(not(any(target_family = "wasm", miri)))]
use super::inflates_whole;
use super::{located, piped, As, Decode, FileAt, Members, Reader};
#[cfg(doc)]
use crate::array::DynArray;
use crate::error::{Error, Result};
use crate::io::ReadNpy;
use crate::npz::Method;

/// Reads of fewer bytes than this in all (the members' sizes when read) stay on the
/// caller's thread: a millisecond or so of decompressing, against tens of microseconds to start
/// a thread.
const PARALLEL_MIN_BYTES: u64 = 1 << 20;

impl<R: Read + Seek> Reader<R> {
    /// Reads every member as a `V` (`Vec<T>`, [`DynArray`], ...: any [`ReadNpy`] type), in
    /// archive order (that of
    /// [`Reader::names`]), several members at once on worker threads when the archive was
    /// opened by path (one per CPU, see [`super::ReaderOptions::threads`]); otherwise one
    /// after another. Each member is read as [`Reader::read`] reads it, its size and CRC-32
    /// checked.
    ///
    /// What is decompressed at once is at most what the archive holds, which
    /// [`super::ReaderOptions::max_inflated_size`] bounds when it is opened. A single
    /// compressed member is decompressed by one thread (a deflate stream cannot be split),
    /// but for a member npy compressed in parts, listed by its part index.
    ///
    /// # Errors
    /// As [`Reader::read`], for the first failing member in archive order (the error names
    /// it, and the archive when opened by path); members after it may not be read.
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::{Compression, Reader, Writer};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("runs.npz");
    /// let mut w = Writer::create(&path)?;
    /// w.compression(Compression::deflated());
    /// w.add("t", &[0.0f64, 0.5, 1.0])?;
    /// w.add("v", &[2.5f64, -1.0])?;
    /// w.finish()?;
    ///
    /// let mut r = Reader::from_path(&path)?;
    /// assert_eq!(r.names(), ["t", "v"]);
    /// assert_eq!(r.read_all::<Vec<f64>>()?, [vec![0.0, 0.5, 1.0], vec![2.5, -1.0]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Any dtype, as [`DynArray`]s:
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::{npz::{Reader, Writer}, DynArray};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("a", &[1u8, 2])?;
    /// w.add("b", &[1.5f32])?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// let arrays = r.read_all::<DynArray>()?;
    /// assert_eq!(arrays.iter().map(|a| a.dtype().descr()).collect::<Vec<_>>(), ["'|u1'", "'<f4'"]);
    /// assert_eq!(arrays[1].to_vec::<f32>()?, [1.5]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_all<V: ReadNpy + Send>(&mut self) -> Result<Vec<V>> {
        let all: Vec<usize> = (0..self.entries.len()).collect();
        self.read_indices(&all, &As::<V>(PhantomData))
    }

    /// Reads members `names` (array or member names, as [`Reader::read`] takes them) as
    /// `V`s, in the order given, several at once as [`Reader::read_all`] reads them.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`](crate::ErrorKind::Npz) for an unknown name (before anything is
    /// read), or when the deflated members named (a member named twice counts twice) claim
    /// more than [`super::ReaderOptions::max_inflated_size`] in all; as [`Reader::read`]
    /// for the first failing member in the order given.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::{npz::{Reader, Writer}, Array};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("a", &[1i32, 2])?;
    /// w.add("m", &Array::from_shape_vec(vec![2, 2], vec![1i32, 2, 3, 4])?)?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// let got = r.read_many::<Array<i32>>(&["m", "a"])?;
    /// assert_eq!((got[0].shape(), got[1].shape()), (&[2, 2][..], &[2][..]));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_many<V: ReadNpy + Send>(&mut self, names: &[impl AsRef<str>]) -> Result<Vec<V>> {
        let which = self.indices(names)?;
        self.read_indices(&which, &As::<V>(PhantomData))
    }

    /// Reads members `names` as `V`s, in the order given, several at once on worker
    /// threads, each reading from a handle of its own that `open` gives (another handle on
    /// this same archive, as for [`Reader::npy_from`]: the file opened again, a reader of
    /// it in memory), whatever this reader reads from. Threads, order and errors as
    /// [`Reader::read_many`].
    ///
    /// # Errors
    /// As [`Reader::read_many`]; an error of `open` or of reading or seeking a handle, for
    /// the member its worker was to read.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::npz::{Compression, Reader, Writer};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.compression(Compression::deflated());
    /// for k in 0..4u32 {
    ///     w.add(&format!("a{k}"), &vec![k; 1 << 18])?;
    /// }
    /// let bytes = w.finish()?.into_inner();
    /// let r = Reader::from_reader(Cursor::new(&bytes))?;
    /// let got = r.read_many_from::<Vec<u32>, _>(r.names(), || Ok(Cursor::new(&bytes)))?;
    /// assert_eq!(got.iter().map(|a| (a.len(), a[0])).collect::<Vec<_>>(), [(1 << 18, 0), (1 << 18, 1), (1 << 18, 2), (1 << 18, 3)]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_many_from<V, S>(
        &self,
        names: &[impl AsRef<str>],
        open: impl Fn() -> io::Result<S> + Sync,
    ) -> Result<Vec<V>>
    where
        V: ReadNpy + Send,
        S: Read + Seek + Send,
    {
        let which = self.indices(names)?;
        self.check_inflated(&which)?;
        read_with_workers(self.members_at(), &which, self.workers(&which), &open, &As::<V>(PhantomData))
    }

    /// The directory's indices of members `names`.
    fn indices(&self, names: &[impl AsRef<str>]) -> Result<Vec<usize>> {
        names.iter().map(|name| located(self.origin.as_deref(), "", self.index(name.as_ref()))).collect()
    }

    /// Reads members `which` (indices of the directory) with `decode`: on worker threads
    /// over positional handles on an archive opened by path, else one after another
    /// through the zip reader's cursor on the archive.
    fn read_indices<D: Decode<Value: Send> + Sync>(&mut self, which: &[usize], decode: &D) -> Result<Vec<D::Value>> {
        self.check_inflated(which)?;
        if let Some(file) = &self.file {
            let open = || Ok(FileAt { file, pos: 0 });
            return read_with_workers(self.members_at(), which, self.workers(which), &open, decode);
        }
        which.iter().map(|&i| self.with_member_at(i, decode)).collect()
    }

    /// How many workers read members `which`: one per CPU (at most
    /// [`super::ReaderOptions::threads`]) and member, one for little data; and whether a
    /// lone worker may decompress on a second thread (`piped`).
    fn workers(&self, which: &[usize]) -> Workers {
        let bytes = which.iter().map(|&i| self.entries[i].size).fold(0, u64::saturating_add);
        let threads = if bytes < PARALLEL_MIN_BYTES { 1 } else { self.threads.min(which.len()).max(1) };
        // A member in parts may take every CPU: a large one among small ones then does not
        // leave the others' workers idle once theirs are read.
        Workers { threads, piped: threads == 1 && self.threads > 1, parts: self.threads }
    }

    /// Refuses reads of members `which` whose deflated members claim more than
    /// [`super::ReaderOptions::max_inflated_size`] in all (only possible when a member is
    /// named more than once: the archive's were checked when it was opened).
    fn check_inflated(&self, which: &[usize]) -> Result<()> {
        let inflated = which
            .iter()
            .map(|&i| &self.entries[i])
            .filter(|e| e.method != Method::Stored)
            .map(|e| e.size)
            .fold(0, u64::saturating_add);
        if inflated <= self.max_inflated {
            return Ok(());
        }
        let reason = format!(
            "the members asked for inflate to {inflated} bytes in all, more than the {} bytes of \
             max_inflated_size",
            self.max_inflated
        );
        located(self.origin.as_deref(), "", Err(Error::npz(None, reason)))
    }
}

/// How members are read: by how many threads (the caller's among them), and whether a lone
/// one decompresses large members on a second thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Workers {
    threads: usize,
    piped: bool,
    /// Threads a worker decompresses a member's parts on (`part_index`), at most.
    parts: usize,
}

/// Reads members `which` (indices of `members`' directory) with `decode` on `workers`,
/// each with a handle of its own from `open`: the values in the order of `which`, or the
/// first error in that order.
fn read_with_workers<D: Decode<Value: Send> + Sync, S: Read + Seek + Send>(
    members: Members<'_>,
    which: &[usize],
    workers: Workers,
    open: &(impl Fn() -> io::Result<S> + Sync),
    decode: &D,
) -> Result<Vec<D::Value>> {
    // The next member to take (a position in `which`), and the first that failed.
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let work = || {
        let mut done = Vec::new();
        let mut handle = None;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= which.len() || failed.load(Ordering::Relaxed) < k {
                return done;
            }
            let i = which[k];
            let watch = Watch { at: k, failed: &failed };
            let read = read_member(members, i, &mut handle, open, watch, workers, decode);
            let read = located(members.origin, &members.entries[i].member, read);
            if read.is_err() {
                failed.fetch_min(k, Ordering::Relaxed);
            }
            done.push((k, read));
        }
    };
    let done = if workers.threads <= 1 {
        work()
    } else {
        // Every thread only reads its own handle and the shared counters: none waits on
        // another, so the join below never waits for more than the members in flight.
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..workers.threads).map(|_| scope.spawn(work)).collect();
            let mut done = work();
            for helper in helpers {
                match helper.join() {
                    Ok(theirs) => done.extend(theirs),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            done
        })
    };
    in_order(done, which.len())
}

/// Reads member `i` of `members` with `decode` from the worker's `handle` (opened with
/// `open` the first time), watched by `watch`; a large compressed member decompressed on a
/// second thread if `piped`.
fn read_member<D: Decode<Value: Send> + Sync, S: Read + Seek + Send>(
    members: Members<'_>,
    i: usize,
    handle: &mut Option<S>,
    open: &impl Fn() -> io::Result<S>,
    watch: Watch<'_>,
    workers: Workers,
    decode: &D,
) -> Result<D::Value> {
    let source = match handle {
        Some(source) => source,
        None => handle.insert(open()?),
    };
    let source = Watched { inner: source, watch };
    let e = &members.entries[i];
    #[cfg(not(any(target_family = "wasm", miri)))]
    if inflates_whole(e) {
        let data = super::member_data(e, source)?;
        return decode.decode(members.inflated(i, data, workers.parts)?);
    }
    if workers.piped && piped::worth_piping(e) {
        return members.read_piped(i, source, |npy| decode.decode(npy));
    }
    decode.decode(members.npy_at(i, source)?)
}

/// The values of `done` (pairs of a position in the order asked and a result, for some of
/// positions `0..n`) in that order, or the first error in that order. Only members after
/// an error may be missing.
fn in_order<V>(done: Vec<(usize, Result<V>)>, n: usize) -> Result<Vec<V>> {
    let mut slots: Vec<Option<Result<V>>> = std::iter::repeat_with(|| None).take(n).collect();
    for (k, result) in done {
        slots[k] = Some(result);
    }
    slots.into_iter().map(|slot| slot.unwrap_or_else(|| Err(Error::npz(None, "a member was not read")))).collect()
}

/// What a worker's handle watches while it reads the member at position `at` of the order
/// asked: `failed`, the first position that failed.
#[derive(Clone, Copy)]
struct Watch<'a> {
    at: usize,
    failed: &'a AtomicUsize,
}

/// A worker's handle while it reads a member: it refuses to read on once a member before
/// that one failed (whose error is the one returned), so the worker stops.
struct Watched<'a, S> {
    inner: S,
    watch: Watch<'a>,
}

impl<S: Read> Read for Watched<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.watch.failed.load(Ordering::Relaxed) < self.watch.at {
            return Err(io::Error::other("stopped: a member before this one failed"));
        }
        self.inner.read(buf)
    }
}

impl<S: Seek> Seek for Watched<'_, S> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.inner.seek(to)
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{BufReader, Cursor, Write};
    use std::sync::{Condvar, Mutex};
    use std::thread::ThreadId;
    use std::time::Duration;

    use super::*;
    use crate::error::ErrorKind;
    use crate::npz::read::tests::set_crc;
    use crate::npz::{Compression, ReaderOptions, Writer};
    use crate::read::NpyReader;

    /// Deflate at level 1: quick in a debug build.
    const FAST: Compression = Compression::Deflated { level: 1 };

    /// Value `i` of member `k` of the archives below.
    fn value(k: usize, i: usize) -> u32 {
        (k * 1_000_000 + i % 5000) as u32
    }

    /// An archive of members `a0`, `a1`, … of `u32`s, `lens[k]` of them in member `k`.
    fn archive(lens: &[usize], compression: Compression) -> Vec<u8> {
        let mut w = Writer::new(Cursor::new(Vec::new()));
        for (k, &n) in lens.iter().enumerate() {
            w.add_with(&format!("a{k}"), &(0..n).map(|i| value(k, i)).collect::<Vec<_>>(), compression).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    /// `bytes` in a temporary file, opened by path with `options` (the file lives as long
    /// as the handle returned with the reader).
    fn on_disk(bytes: &[u8], options: &ReaderOptions) -> (tempfile::NamedTempFile, Reader<BufReader<File>>) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        let reader = crate::npz::Reader::from_path_with(file.path(), options).unwrap();
        (file, reader)
    }

    /// Asserts that `arrays` are the archive's members `a0`, `a1`, … of `lens` values.
    #[track_caller]
    fn assert_members(arrays: &[Vec<u32>], lens: &[usize]) {
        assert_eq!(arrays.len(), lens.len());
        for (k, (a, &n)) in arrays.iter().zip(lens).enumerate() {
            assert_eq!(a.len(), n, "a{k}");
            assert!(a.iter().enumerate().all(|(i, &v)| v == value(k, i)), "a{k}");
        }
    }

    /// Asserts an [`ErrorKind::Npz`] about `member` that says `says`.
    #[track_caller]
    fn npz_error<V: std::fmt::Debug>(result: Result<V>, member: &str, says: &str) {
        let e = result.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e:?}");
        assert_eq!(e.member(), Some(member), "{e}");
        assert!(e.to_string().contains(says), "'{e}' does not say '{says}'");
    }

    /// Decodes a member as `Vec<u32>`, noting the thread it ran on; with `wait`, the first
    /// member's decode waits (up to 10 s) until the second one's has started, so when two
    /// workers read them, each reads one.
    struct Spy {
        threads: Mutex<Vec<(usize, ThreadId)>>,
        started: Condvar,
        wait: bool,
    }

    impl Decode for Spy {
        type Value = Vec<u32>;
        fn decode<S: Read>(&self, reader: NpyReader<S>) -> Result<Vec<u32>> {
            let first = reader.header().shape[0] == 1 << 17;
            let mut threads = self.threads.lock().unwrap();
            threads.push((usize::from(!first), std::thread::current().id()));
            self.started.notify_all();
            if first && self.wait {
                let wait = self.started.wait_timeout_while(threads, Duration::from_secs(10), |t| t.len() < 2);
                drop(wait.unwrap());
            } else {
                drop(threads);
            }
            crate::io::read_1d(reader, "test", "test")
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn threads_start_at_the_threshold() {
        // Two members of `u32`s whose sizes (a 128-byte header each) make the threshold, and
        // one value fewer in the second (4 bytes under it).
        for (lens, parallel) in [([1 << 17, 262_080 - (1 << 17)], true), ([1 << 17, 262_079 - (1 << 17)], false)] {
            let lens = [lens[0], lens[1]];
            let (_file, mut r) = on_disk(&archive(&lens, FAST), &ReaderOptions::new());
            let bytes: u64 = r.entries.iter().map(|e| e.size).sum();
            assert_eq!(bytes, if parallel { PARALLEL_MIN_BYTES } else { PARALLEL_MIN_BYTES - 4 });
            let workers = if parallel { crate::cpu::cpus().min(2) } else { 1 };
            assert_eq!(r.workers(&[0, 1]).threads, workers);
            let spy = Spy { threads: Mutex::new(Vec::new()), started: Condvar::new(), wait: workers == 2 };
            let got = r.read_indices(&[0, 1], &spy).unwrap();
            assert_members(&got, &lens);
            let mut threads = spy.threads.into_inner().unwrap();
            threads.sort_by_key(|&(k, _)| k);
            let here = std::thread::current().id();
            if workers == 2 {
                // The first member waited for the second, which another thread read.
                assert!(threads[0].1 != threads[1].1, "{threads:?}");
                assert!(threads.iter().any(|&(_, t)| t == here), "{threads:?}");
            } else {
                assert!(threads.iter().all(|&(_, t)| t == here), "{threads:?}");
            }
            assert_members(&r.read_all::<Vec<u32>>().unwrap(), &lens);
        }
        // One thread when asked for one.
        let (_file, r) = on_disk(&archive(&[1 << 19, 1 << 19], FAST), ReaderOptions::new().threads(1));
        assert_eq!(r.workers(&[0, 1]), Workers { threads: 1, piped: false, parts: 1 });
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn one_member_and_members_in_the_order_asked() {
        let lens = [1 << 19];
        let bytes = archive(&lens, FAST);
        let (_file, mut r) = on_disk(&bytes, &ReaderOptions::new());
        assert_eq!(r.workers(&[0]), Workers { threads: 1, piped: crate::cpu::two_cpus(), parts: r.threads });
        assert_members(&r.read_all::<Vec<u32>>().unwrap(), &lens);
        let arrays = r.read_all::<crate::array::DynArray>().unwrap();
        assert_eq!((arrays.len(), arrays[0].shape(), arrays[0].dtype().descr()), (1, &[1 << 19][..], "'<u4'".into()));
        assert_members(&[arrays[0].to_vec::<u32>().unwrap()], &lens);

        let lens = [300_000, 200_000, 100_000, 50];
        let bytes = archive(&lens, FAST);
        let (_file, mut r) = on_disk(&bytes, &ReaderOptions::new());
        let got = r.read_many::<Vec<u32>>(&["a3", "a1.npy", "a0", "a1"]).unwrap();
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [50, 200_000, 300_000, 200_000]);
        assert_eq!(
            (got[0][49], got[1][4999], got[2][5000], got[3][0]),
            (value(3, 49), value(1, 4999), value(0, 0), value(1, 0))
        );
        // From memory (no second handle): one after another, the same values.
        let mut r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        assert_members(&r.read_all::<Vec<u32>>().unwrap(), &lens);
        let got = r.read_many_from::<Vec<u32>, _>(&["a2", "a0"], || Ok(Cursor::new(&bytes))).unwrap();
        assert_eq!((got[0].len(), got[1].len()), (100_000, 300_000));
        // An unknown name fails before anything is read.
        let e = r.read_many::<Vec<u32>>(&["a0", "b"]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { member: Some(m), .. } if m == "b"), "{e}");
        // Not 1-D.
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add("m", &crate::array::Array::from_shape_vec(vec![2, 2], vec![1u8, 2, 3, 4]).unwrap()).unwrap();
        let e = Reader::from_reader(w.finish().unwrap()).unwrap().read_all::<Vec<u8>>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
        assert!(e.to_string().contains("Vec<T>::read_npy reads 1-D arrays"), "{e}");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn the_first_failing_member_in_order_wins() {
        let lens = [200_000; 6];
        let bytes = archive(&lens, FAST);
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        // A corrupt deflate stream (a reserved block type) in members 1 and 4.
        let mut corrupt = bytes.clone();
        for i in [1, 4] {
            corrupt[r.entries[i].data_start as usize] = 0x07;
        }
        // A CRC that does not match the data in member 2 and 5.
        let mut bad_crc = bytes.clone();
        for i in [2, 5] {
            set_crc(&mut bad_crc, &r, i, r.entries[i].crc32 ^ 1);
        }
        for threads in [1, 2] {
            let mut options = ReaderOptions::new();
            options.threads(threads);
            for _ in 0..5 {
                let (_file, mut r) = on_disk(&corrupt, &options);
                npz_error(r.read_all::<Vec<u32>>(), "a1.npy", "the deflate data is corrupt");
                npz_error(r.read_many::<Vec<u32>>(&["a5", "a4", "a0"]), "a4.npy", "the deflate data is corrupt");
                let (_file, mut r) = on_disk(&bad_crc, &options);
                npz_error(r.read_all::<Vec<u32>>(), "a2.npy", "bad crc-32");
                npz_error(r.read_all::<crate::array::DynArray>(), "a2.npy", "bad crc-32");
                let good = r.read_many::<Vec<u32>>(&["a0", "a1", "a3", "a4"]).unwrap();
                for (got, k) in good.iter().zip([0, 1, 3, 4]) {
                    assert!(got.len() == 200_000 && got.iter().enumerate().all(|(i, &v)| v == value(k, i)), "a{k}");
                }
            }
        }
        // The error names the archive opened by path.
        let (file, mut r) = on_disk(&corrupt, &ReaderOptions::new());
        let e = r.read_all::<Vec<u32>>().unwrap_err();
        assert!(e.to_string().contains(&file.path().display().to_string()), "{e}");
        // A stored member whose data is corrupt.
        let stored = archive(&lens, Compression::Stored);
        let mut bad = stored.clone();
        let e = &Reader::from_reader(Cursor::new(&stored)).unwrap().entries[3];
        bad[(e.data_start + e.size / 2) as usize] ^= 0x10;
        let (_file, mut r) = on_disk(&bad, &ReaderOptions::new());
        npz_error(r.read_all::<Vec<u32>>(), "a3.npy", "bad crc-32");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn a_truncated_source_or_a_failing_open_is_the_error_of_its_member() {
        let lens = [200_000; 4];
        let bytes = archive(&lens, FAST);
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let e = &r.entries[2];
        let cut = &bytes[..(e.data_start + e.compressed_size / 2) as usize];
        for threads in [1, 2] {
            let mut options = ReaderOptions::new();
            options.threads(threads);
            let r = crate::npz::Reader::from_reader_with(Cursor::new(&bytes), &options).unwrap();
            npz_error(r.read_many_from::<Vec<u32>, _>(r.names(), || Ok(Cursor::new(cut))), "a2.npy", "a2.npy");
            let e =
                r.read_many_from::<Vec<u32>, _>(r.names(), || Err::<Cursor<&[u8]>, _>(io::Error::other("no handle")));
            let e = e.unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e:?}");
            assert_eq!(e.member(), Some("a0.npy"), "{e}");
            // The members before the cut read.
            let got = r.read_many_from::<Vec<u32>, _>(&["a0", "a1"], || Ok(Cursor::new(cut))).unwrap();
            assert_members(&got, &lens[..2]);
        }
    }

    /// A handle that counts the bytes read through it.
    struct Counting<'a> {
        inner: Cursor<&'a [u8]>,
        read: &'a AtomicUsize,
    }

    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read.fetch_add(n, Ordering::Relaxed);
            Ok(n)
        }
    }

    impl Seek for Counting<'_> {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            self.inner.seek(to)
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn workers_stop_after_a_failure() {
        let lens = [200_000; 4];
        let mut bytes = archive(&lens, FAST);
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let first = r.entries[0].clone();
        bytes[first.data_start as usize] = 0x07;
        let mut options = ReaderOptions::new();
        options.threads(1);
        let r = crate::npz::Reader::from_reader_with(Cursor::new(&bytes), &options).unwrap();
        let read = AtomicUsize::new(0);
        let open = || Ok(Counting { inner: Cursor::new(&bytes[..]), read: &read });
        npz_error(r.read_many_from::<Vec<u32>, _>(r.names(), open), "a0.npy", "corrupt");
        // Nothing past the first member was read.
        assert!(read.load(Ordering::Relaxed) as u64 <= first.compressed_size, "{read:?}");

        // A handle reading a member after one that failed refuses to go on.
        let failed = AtomicUsize::new(usize::MAX);
        let mut handle = Watched { inner: Cursor::new(&bytes[..]), watch: Watch { at: 2, failed: &failed } };
        assert_eq!(handle.read(&mut [0; 4]).unwrap(), 4);
        failed.store(3, Ordering::Relaxed);
        assert_eq!(handle.read(&mut [0; 4]).unwrap(), 4);
        failed.store(1, Ordering::Relaxed);
        let e = handle.read(&mut [0; 4]).unwrap_err();
        assert!(e.to_string().contains("a member before this one failed"), "{e}");
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "deflates megabytes through zlib-rs: minutes under Miri, which reports its Deflate's drop (zlib-rs#491)"
    )]
    fn a_member_named_twice_counts_twice_against_the_inflate_limit() {
        let bytes = archive(&[1000, 1000], FAST);
        let size = Reader::from_reader(Cursor::new(&bytes)).unwrap().entries[0].size;
        let mut options = ReaderOptions::new();
        options.max_inflated_size(2 * size);
        let (_file, mut r) = on_disk(&bytes, &options);
        assert_eq!(r.read_many::<Vec<u32>>(&["a0", "a0"]).unwrap().len(), 2);
        let e = r.read_many::<Vec<u32>>(&["a0", "a1", "a0"]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { member: None, .. }), "{e:?}");
        assert!(e.to_string().contains(&format!("inflate to {} bytes in all", 3 * size)), "{e}");
    }

    /// The workers themselves on a few bytes of stored members (what Miri can run): two
    /// threads, values in the order asked, the first error in that order.
    #[test]
    fn two_workers_on_tiny_stored_members() {
        let lens = [16, 3, 16, 1];
        let bytes = archive(&lens, Compression::Stored);
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let two = Workers { threads: 2, piped: false, parts: 1 };
        let open = || Ok(Cursor::new(&bytes[..]));
        let read = |which: &[usize], source: &[u8]| {
            let open = || Ok(Cursor::new(source));
            read_with_workers(r.members_at(), which, two, &open, &As::<Vec<u32>>(PhantomData))
        };
        assert_members(&read(&[0, 1, 2, 3], &bytes).unwrap(), &lens);
        let got = read_with_workers(r.members_at(), &[3, 0], two, &open, &As::<Vec<u32>>(PhantomData)).unwrap();
        assert_eq!((got[0].as_slice(), got[1].len()), (&[value(3, 0)][..], 16));
        // Members 1 and 3 corrupt (a stored member's bytes fail its CRC-32).
        let mut bad = bytes.clone();
        for i in [1, 3] {
            let e = &r.entries[i];
            bad[(e.data_start + e.size - 1) as usize] ^= 1;
        }
        for _ in 0..4 {
            npz_error(read(&[0, 1, 2, 3], &bad), "a1.npy", "bad crc-32");
            npz_error(read(&[3, 2, 1, 0], &bad), "a3.npy", "bad crc-32");
        }
        let good = read(&[0, 2], &bad).unwrap();
        assert_eq!(good[1], (0..16).map(|i| value(2, i)).collect::<Vec<_>>());
        assert_members(&good[..1], &lens[..1]);
    }
}
