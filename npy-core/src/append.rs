//! Growing a `.npy` file in place: [`Appender`] adds rows along the growth axis (the first;
//! the last of a Fortran-order array) and rewrites the shape in the header's spare bytes,
//! which `np.save` (and this crate) leave for exactly this (NumPy PR #20321, the room the
//! `npy-append-array` package uses).
//!
//! # Crash safety
//! The rows are written after the data and synced first; only then is the header
//! rewritten, in place and at the same length, and synced. A crash in between leaves the
//! old array, whole, followed by a tail that readers (NumPy's and this crate's) ignore;
//! [`Appender::recover`] adopts or trims such a tail. A header without room for the new
//! shape is rewritten through an [`AtomicFile`] (the whole file copied), unless
//! [`Appender::in_place_only`] asks for an error instead.
//!
//! A killed process cannot tear the header: it is rewritten by one `write` of its few
//! hundred bytes, after the rows are synced (`npy-cli/tests/npy/append.rs` kills appends at
//! random moments). Against power loss the order of the two syncs holds; a header that
//! fits in one disk sector (512 bytes: any plain dtype's, most records') is rewritten in
//! one, a longer one relies on the disk writing it whole.
//!
//! # Locking
//! Each append (each call of [`Appender::append`], [`Appender::append_iter`],
//! [`Appender::append_dyn`], [`Appender::append_file`], each batch of
//! [`Appender::append_batches`]) and each recovery holds an exclusive advisory lock on the
//! file (`File::lock`: `flock` on Unix) from before it reads the header (the row count)
//! until after it has rewritten the header that counts its rows; between appends nothing
//! is held. So several appenders of one file, in threads or processes, each open for as
//! long as they like, take turns: every append lands whole, after the rows of the last
//! one, and none is lost. A second appender waits for the lock, or fails at once under
//! [`Appender::wait`]`(false)`. After taking the lock an appender checks that the path
//! still names the file it locked (a header without room is rewritten by replacing the
//! file) and reopens it if not. A killed appender's lock goes with its process; the tail
//! it may leave is refused by the next append until [`Appender::recover`] makes the file
//! whole.
//!
//! The lock does not cover:
//! - writers that do not take it: npy-append-array, `np.save` over the file, an
//!   [`NpyMapMut`](crate::mmap::NpyMapMut) writing the data, any other program;
//! - network file systems, where advisory locks are weak (NFS emulates them, with the
//!   server's lock manager; others may not lock at all): keep one appender per file there;
//! - readers, who need none: they read the header, then as many rows as it counts, and
//!   the rows an append adds are on disk before the header counts them. (On Windows,
//!   where this lock is mandatory, a read during an append fails instead.)
//!
//! # Archives
//! `.npz` members are not appendable in place: a zip member's size and CRC-32 sit in its
//! local header before the data and in the central directory after the last member, so
//! growing one member moves everything after it (and a deflated member would be
//! recompressed). Keep a growing array as its own `.npy` file, append to that, and build the
//! archive when the arrays are complete: [`crate::npz::Writer::add_raw_from`] copies a
//! `.npy` file in as a member without decoding it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[cfg(doc)]
use crate::array::DynArray;
use crate::array::DynView;
use crate::atomic::AtomicFile;
use crate::buffer::PieceBuf;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{shape_repr, Header, Version};
use crate::options::ReadOptions;
use crate::plan::Plan;
use crate::read::NpyReader;
use crate::record::{native_dtype_of, NpyRecord};
use crate::write::{encode_with_plan, write_with_plan};

/// Buffers of [`Appender::append_batches`]: one being written, one being made.
const BATCH_BUFFERS: usize = 2;

/// One batch of [`Appender::append_batches`], as written.
struct Batch {
    /// Its written bytes: the first `len`.
    bytes: PieceBuf,
    len: usize,
    rows: usize,
}

/// What [`Appender::recover`] does with bytes past an array's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// The tail's whole rows join the array (an append whose header rewrite was lost);
    /// a partial last row is cut off.
    Adopt,
    /// The tail is cut off: the array is as its header says.
    Trim,
}

/// An open `.npy` file that rows are appended to. See the [module docs](self).
///
/// Several appenders of one file may be open at once: each append takes the file's
/// lock ([module docs](self#locking)), so their appends take turns. Writers that do not
/// take the lock (npy-append-array, a map writing the file) must not write it meanwhile.
///
/// # Examples
/// ```
/// use npy_core::append::Appender;
/// use npy_core::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t0.npy");
/// vec![0.5f64, 1.5].write_npy(&path)?;
/// let mut a = Appender::from_path(&path)?;
/// a.append(&[2.5f64, 3.5, 4.5])?;
/// assert_eq!(a.rows(), 5);
/// assert_eq!(Vec::<f64>::read_npy(&path)?, [0.5, 1.5, 2.5, 3.5, 4.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
    header: Header,
    version: Version,
    /// Bytes before the data.
    data_offset: u64,
    /// Bytes of one step along the growth axis.
    row_bytes: u64,
    /// Bytes past the data when last read under the lock (an interrupted append's).
    tail: u64,
    /// How the header is read, at open and before each append.
    options: ReadOptions,
    in_place_only: bool,
    sync: bool,
    wait: bool,
}

/// The append lock on a file, released when dropped: held through a duplicate of the
/// appender's handle (the same open file), so that replacing the appender's handle after
/// a rewrite keeps the old file locked until the append is done.
struct Lock(File);

impl Lock {
    /// Takes the exclusive lock on `file`, waiting for it when `wait`; else a lock held
    /// elsewhere is an [`io::ErrorKind::WouldBlock`] error naming `path`.
    fn take(file: &File, wait: bool, path: &Path) -> Result<Lock> {
        let file = file.try_clone()?;
        if wait {
            #[cfg(not(miri))]
            file.lock()?;
            // Miri reports a `flock` that must wait as unsupported: there the lock is
            // awaited by trying again (the tests of appenders taking turns run under it).
            #[cfg(miri)]
            loop {
                match file.try_lock() {
                    Ok(()) => break,
                    Err(std::fs::TryLockError::WouldBlock) => std::thread::yield_now(),
                    Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
                }
            }
        } else {
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let what =
                        format!("another process is appending to '{}' (it holds the append lock)", path.display());
                    return Err(io::Error::new(io::ErrorKind::WouldBlock, what).into());
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        Ok(Lock(file))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Closing the handle alone would not release it (the appender's handle shares
        // the lock); if unlocking fails, closing the appender's handle releases it.
        let _ = self.0.unlock();
    }
}

/// What an appender reads of its file: the header, its version, where the data starts,
/// and the bytes past the data.
struct State {
    header: Header,
    version: Version,
    data_offset: u64,
    tail: u64,
}

impl State {
    /// Reads the header of `file` (from its start) and measures the bytes after the data.
    ///
    /// # Errors
    /// As [`NpyReader::from_reader_with`]; [`ErrorKind::Truncated`] for data shorter than the header
    /// says (appending after it would leave a hole).
    fn read(file: &File, options: &ReadOptions) -> Result<State> {
        (&*file).seek(SeekFrom::Start(0))?;
        let reader = NpyReader::from_reader_with(io::BufReader::with_capacity(8 << 10, file), options)?;
        let (header, version) = (reader.header().clone(), reader.version());
        let (data_offset, data_len) = (reader.data_offset() as u64, reader.data_len() as u64);
        let end = data_offset.saturating_add(data_len);
        // Measured after the header is read: an append (without the lock, at open) may
        // finish in between, and its rows are written before the header that counts them.
        let len = file.metadata()?.len();
        if len < end {
            return Err(ErrorKind::Truncated { expected: data_len, found: len.saturating_sub(data_offset) }.into());
        }
        Ok(State { header, version, data_offset, tail: len - end })
    }
}

impl Appender {
    /// Opens `path` for appending, with default [`ReadOptions`]. Opening never waits: the
    /// file's lock is taken by each append ([module docs](self#locking)).
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`]; [`ErrorKind::Usage`] for a 0-d array (it has no axis
    /// to grow) or an object array (its data is a pickle).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Appender> {
        Appender::from_path_with(path, &ReadOptions::default())
    }

    /// Opens `path` for appending, reading its header with `options`.
    ///
    /// # Errors
    /// As [`Appender::from_path`].
    pub fn from_path_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Appender> {
        let path = path.as_ref();
        Appender::open_inner(path, options).map_err(|e| e.writing(path))
    }

    fn open_inner(path: &Path, options: &ReadOptions) -> Result<Appender> {
        // Opened for writing, a FIFO would not wait for a peer, but then could not seek.
        crate::file::regular(path)?;
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        // Under a shared lock if it is free, so that the tail measured is not the rows of
        // an append in progress; each append measures it again under its lock.
        let quiet = file.try_lock_shared().is_ok();
        let state = State::read(&file, options).map_err(|e| e.reading(path));
        if quiet {
            file.unlock()?;
        }
        let State { header, version, data_offset, tail } = state?;
        if header.shape.is_empty() {
            return Err(Error::usage("a 0-d array has no axis to append along"));
        }
        if header.dtype.has_object() {
            return Err(Error::usage("an object array's data is a pickle: rows cannot be appended to it"));
        }
        let growth = growth_axis(&header);
        let others: usize = header.shape.iter().enumerate().filter(|&(i, _)| i != growth).map(|(_, &d)| d).product();
        let row_bytes = (others as u64).saturating_mul(header.dtype.itemsize() as u64);
        Ok(Appender {
            file,
            path: path.to_path_buf(),
            header,
            version,
            data_offset,
            row_bytes,
            tail: if quiet { tail } else { 0 },
            options: options.clone(),
            in_place_only: false,
            sync: true,
            wait: true,
        })
    }

    /// Whether an append (or recovery) waits while another appender holds the file's lock
    /// ([module docs](self#locking)). Default: `true`. With `false` it fails at once with an
    /// [`ErrorKind::Io`] error of kind [`io::ErrorKind::WouldBlock`] naming the file
    /// (`another process is appending to 'x.npy'`), and appends nothing.
    ///
    /// # Examples
    /// ```
    /// use npy_core::append::Appender;
    /// use npy_core::prelude::*;
    /// use npy_core::ErrorKind;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("log.npy");
    /// vec![1u8].write_npy(&path)?;
    /// // Another appender, busy: here a plain lock on the file stands for it.
    /// let busy = std::fs::File::open(&path)?;
    /// busy.lock()?;
    /// let e = Appender::from_path(&path)?.wait(false).append(&[2u8]).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock));
    /// assert!(e.to_string().contains("another process is appending to"), "{e}");
    /// busy.unlock()?;
    /// Appender::from_path(&path)?.wait(false).append(&[2u8])?;
    /// assert_eq!(Vec::<u8>::read_npy(&path)?, [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait(&mut self, wait: bool) -> &mut Self {
        self.wait = wait;
        self
    }

    /// Takes the append lock on the file the path names (reopening it if a rewrite
    /// replaced the file this appender had open) and reads the header and tail again
    /// under it: another appender may have grown the file since.
    fn lock(&mut self) -> Result<Lock> {
        let lock = loop {
            let lock = Lock::take(&self.file, self.wait, &self.path)?;
            if crate::file::names_file(&self.path, &self.file, true)? {
                break lock;
            }
            drop(lock);
            self.file = OpenOptions::new().read(true).write(true).open(&self.path)?;
        };
        let State { header, version, data_offset, tail } = State::read(&self.file, &self.options)?;
        if let Some(how) = differs(&self.header, &header) {
            return Err(Error::usage(format!("the file was changed by another writer since it was opened: {how}")));
        }
        (self.header, self.version, self.data_offset, self.tail) = (header, version, data_offset, tail);
        Ok(lock)
    }

    /// Refuse to rewrite the whole file when the header has no room for a new shape
    /// (files from writers that leave none): appends then fail with
    /// [`ErrorKind::Usage`] instead. Default: rewrite atomically.
    pub fn in_place_only(&mut self, yes: bool) -> &mut Self {
        self.in_place_only = yes;
        self
    }

    /// Whether each append syncs its rows to disk before the header counts them, and the
    /// header after. Default: `true`, so that a power cut too leaves the old array or the
    /// new one. `false` skips both syncs (as `WriteOptions::sync(false)` does for writes,
    /// and as npy-append-array and `np.save` never sync): a killed process still leaves
    /// the old or the new array (the kernel has both writes, in order), but after a power
    /// cut the header may count rows that never reached the disk.
    pub fn sync(&mut self, sync: bool) -> &mut Self {
        self.sync = sync;
        self
    }

    /// The header as of this appender's last append (or its opening).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The length of the growth axis, as of this appender's last append (other appenders
    /// of the file may have added rows since).
    pub fn rows(&self) -> usize {
        self.header.shape[growth_axis(&self.header)]
    }

    /// Bytes past the data when the file was last read under the lock (at open, unless
    /// another appender held it then, and at each append): what an interrupted append left
    /// ([`Appender::recover`]).
    pub fn tail_bytes(&self) -> u64 {
        self.tail
    }

    /// Appends `values`, in storage order: whole rows of the array (a row is one step
    /// along the growth axis: `n` elements for shape `(rows, n)` in C order), converted to
    /// the file's dtype as writes convert (the same plan as `write_npy`). `T` may also be
    /// the array's trailing dims as one element (`[f32; 3]` for `'<f4'` of shape
    /// `(rows, 3)`), as reads take them.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] and the like when `T` cannot be written as the file's
    /// dtype (saying why); [`ErrorKind::Usage`] for a number of values that is not whole
    /// rows, for a file with a tail (recover it first), and for a header without room
    /// under [`Appender::in_place_only`]; under [`Appender::wait`]`(false)`, an
    /// [`io::ErrorKind::WouldBlock`] error while another appender holds the file's lock;
    /// I/O errors. Errors name the file; after one, the file holds the old array, the
    /// rows written before the error cut off.
    pub fn append<T: NpyRecord>(&mut self, values: &[T]) -> Result<()> {
        let plan = self.plan_for::<T>().map_err(|e| e.writing(&self.path))?;
        let per_row = (self.row_bytes as usize).checked_div(plan.dst_size()).unwrap_or(0);
        if per_row == 0 {
            let reason = format!("{} rows of no data cannot be appended to", shape_repr(&self.header.shape));
            return Err(Error::usage(reason).writing(&self.path));
        }
        if !values.len().is_multiple_of(per_row) {
            let reason = format!(
                "{} values are not whole rows of {per_row} (the array is {} {})",
                values.len(),
                self.header.dtype.descr(),
                shape_repr(&self.header.shape)
            );
            return Err(Error::usage(reason).writing(&self.path));
        }
        let bytes = (values.len() / per_row) as u64 * self.row_bytes;
        self.grow(Some(bytes), |file, at| write_with_plan(file, at, &plan, values).map(|()| values.len() / per_row))
    }

    /// Appends the elements an iterator gives, in storage order, as [`Appender::append`]
    /// takes them: written in pieces of about 1 MiB as they come, then counted by one
    /// header rewrite after the last (so a crash or an error leaves the old array).
    /// Returns the number of rows appended.
    ///
    /// # Errors
    /// As [`Appender::append`]; the iterator ending inside a row is an
    /// [`ErrorKind::Usage`] error (nothing is appended).
    ///
    /// # Examples
    /// ```
    /// use npy_core::append::Appender;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("squares.npy");
    /// vec![0u64, 1, 4].write_npy(&path)?;
    /// let rows = Appender::from_path(&path)?.append_iter((3..1000u64).map(|i| i * i))?;
    /// assert_eq!(rows, 997);
    /// assert_eq!(Vec::<u64>::read_npy(&path)?[999], 998_001);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn append_iter<T: NpyRecord, I: IntoIterator<Item = T>>(&mut self, items: I) -> Result<usize> {
        let plan = self.plan_for::<T>().map_err(|e| e.writing(&self.path))?;
        let per_row = (self.row_bytes as usize).checked_div(plan.dst_size()).unwrap_or(0);
        if per_row == 0 {
            let reason = format!("{} rows of no data cannot be appended to", shape_repr(&self.header.shape));
            return Err(Error::usage(reason).writing(&self.path));
        }
        let piece = ((1 << 20) / plan.dst_size().max(1)).max(per_row);
        let mut items = items.into_iter();
        let mut rows = 0;
        self.grow(None, |file, mut at| {
            let mut buf: Vec<T> = Vec::with_capacity(piece);
            loop {
                buf.clear();
                buf.extend(items.by_ref().take(piece));
                if !buf.len().is_multiple_of(per_row) {
                    return Err(Error::usage(format!(
                        "the iterator ended inside a row: {} values after {} whole rows of {per_row}",
                        buf.len() % per_row,
                        rows + buf.len() / per_row
                    )));
                }
                write_with_plan(file, at, &plan, &buf)?;
                at += (buf.len() * plan.dst_size()) as u64;
                rows += buf.len() / per_row;
                if buf.len() < piece {
                    return Ok(rows);
                }
            }
        })?;
        Ok(rows)
    }

    /// Appends batches as they come, each one made part of the array once written, as
    /// [`Appender::append`] makes each of its slices (so a crash or an error leaves the
    /// array as of a whole batch). Meanwhile the next batch is made ready here (copied with
    /// its padding zeroed, swapped or converted) while a second thread writes the last one,
    /// so many batches cost about what one write of their records costs. Returns the number
    /// of rows appended.
    ///
    /// The batches are taken from `batches` on this thread (the iterator need not be
    /// `Send`): a producer's loop can be the iterator. Two batches' written bytes are held
    /// in memory (reused from batch to batch): for batches of any size, [`Appender::append`]
    /// writes in pieces of about 1 MiB instead.
    ///
    /// # Errors
    /// As [`Appender::append`], for the first batch that fails; the batches before it stay
    /// appended.
    ///
    /// # Examples
    /// ```
    /// use npy_core::append::Appender;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("log.npy");
    /// Vec::<u32>::new().write_npy(&path)?;
    /// let batches = (0..4u32).map(|b| (b * 1000..(b + 1) * 1000).collect::<Vec<u32>>());
    /// assert_eq!(Appender::from_path(&path)?.append_batches(batches)?, 4000);
    /// assert_eq!(Vec::<u32>::read_npy(&path)?, (0..4000).collect::<Vec<u32>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn append_batches<T, B, I>(&mut self, batches: I) -> Result<usize>
    where
        T: NpyRecord,
        B: AsRef<[T]>,
        I: IntoIterator<Item = B>,
    {
        let plan = self.plan_for::<T>().map_err(|e| e.writing(&self.path))?;
        let per_row = (self.row_bytes as usize).checked_div(plan.dst_size()).unwrap_or(0);
        if !crate::cpu::two_cpus() || per_row == 0 {
            let mut rows = 0;
            for batch in batches {
                let before = self.rows();
                self.append(batch.as_ref())?;
                rows += self.rows() - before;
            }
            return Ok(rows);
        }
        let path = self.path.clone();
        std::thread::scope(|scope| {
            // Every channel end lives inside this closure. This thread's batch sender is
            // dropped before the join, after an error too, so the writer's `recv` fails
            // once the batches sent are appended and it returns; it never waits to send a
            // spare buffer back (`try_send` into room for every buffer). Its ends go with it
            // when it returns or panics, so this thread's `send` and `recv` fail in turn.
            let (batch_tx, batch_rx) = std::sync::mpsc::sync_channel::<Batch>(1);
            let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel::<PieceBuf>(BATCH_BUFFERS);
            let writer = scope.spawn(move || self.write_batches(&batch_rx, &spare_tx));
            let mut made = 0;
            let mut rows = 0;
            let sent = (|| -> Result<()> {
                for batch in batches {
                    let values = batch.as_ref();
                    if !values.len().is_multiple_of(per_row) {
                        return Err(Error::usage(format!(
                            "a batch of {} values is not whole rows of {per_row}",
                            values.len()
                        ))
                        .writing(&path));
                    }
                    let spare = if made < BATCH_BUFFERS {
                        made += 1;
                        None
                    } else {
                        // Fails only when the writer has returned: its error is reported.
                        let Ok(buf) = spare_rx.recv() else { return Ok(()) };
                        Some(buf)
                    };
                    let (bytes, len) = encode_with_plan(&plan, values, spare).map_err(|e| e.writing(&path))?;
                    if batch_tx.send(Batch { bytes, len, rows: values.len() / per_row }).is_err() {
                        return Ok(());
                    }
                    rows += values.len() / per_row;
                }
                Ok(())
            })();
            drop(batch_tx);
            let written = writer.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            // The writer's error first: it stopped the batches.
            written?;
            sent.map(|()| rows)
        })
    }

    /// The writing side of [`Appender::append_batches`]: each batch received is appended
    /// (data, then header), its buffer sent back for the next one.
    fn write_batches(
        &mut self,
        batches: &std::sync::mpsc::Receiver<Batch>,
        spare: &std::sync::mpsc::SyncSender<PieceBuf>,
    ) -> Result<()> {
        while let Ok(Batch { bytes, len, rows }) = batches.recv() {
            let data = &bytes.bytes()[..len];
            self.grow(Some(len as u64), |file, _| file.write_all(data).map(|()| rows).map_err(Error::from))?;
            // Fails once the other side has stopped sending; the buffer is dropped.
            let _ = spare.try_send(bytes);
        }
        Ok(())
    }

    /// Appends the rows of `array`, an array as it is stored (a [`DynArray`], or a
    /// [`DynView`] of bytes held elsewhere): its dtype, order and dims other than the growth
    /// axis must be this array's.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when they differ (saying how); as [`Appender::append`].
    pub fn append_dyn<'a>(&mut self, array: impl Into<DynView<'a>>) -> Result<()> {
        let array = array.into();
        if let Some(how) = differs(&self.header, array.header()) {
            return Err(Error::usage(format!("the array cannot be appended: {how}")).writing(&self.path));
        }
        let rows = array.header().shape[growth_axis(array.header())];
        let bytes = array.data().len() as u64;
        self.grow(Some(bytes), |file, _| file.write_all(array.data()).map(|()| rows).map_err(Error::from))
    }

    /// Appends the data of the `.npy` file at `other`, streamed: its dtype, order and
    /// dims other than the growth axis must be this array's.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] naming both files when they differ (saying how); as
    /// [`Appender::append`] otherwise; errors reading `other` name it.
    pub fn append_file(&mut self, other: impl AsRef<Path>) -> Result<()> {
        let other = other.as_ref();
        let reader = NpyReader::from_path(other)?;
        let (theirs, start) = (reader.header().clone(), reader.data_offset() as u64);
        drop(reader);
        if let Some(how) = differs(&self.header, &theirs) {
            let reason = format!("'{}' cannot be appended: {how}", other.display());
            return Err(Error::usage(reason).writing(&self.path));
        }
        let rows = theirs.shape[growth_axis(&theirs)];
        let bytes = (rows as u64).saturating_mul(self.row_bytes);
        self.grow(Some(bytes), |file, _| {
            let reading = |e: io::Error| Error::from(e).reading(other);
            let mut source = File::open(other).map_err(reading)?;
            source.seek(SeekFrom::Start(start)).map_err(reading)?;
            // Copied by hand, not by io::copy: a read's error names `other`, a write's
            // (a full disk) the target, which `grow` names.
            let mut buf = vec![0u8; (1 << 20).min(bytes) as usize];
            let mut copied = 0u64;
            while copied < bytes {
                let want = (bytes - copied).min(buf.len() as u64) as usize;
                let got = match source.read(&mut buf[..want]) {
                    Ok(0) => {
                        let e: Error = ErrorKind::Truncated { expected: bytes, found: copied }.into();
                        return Err(e.reading(other));
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(reading(e)),
                };
                file.write_all(&buf[..got])?;
                copied += got as u64;
            }
            Ok(rows)
        })
    }

    /// Writes rows with `write` (given the file at the end of the data, and that offset;
    /// it says how many it wrote) and makes them part of the array: synced data, then the header.
    ///
    /// `bytes`, when known, are reserved past the end first (the file's size unchanged),
    /// so the file system allocates their blocks at once, as for a whole write.
    /// All of it under the file's lock, taken first (the header read again under it).
    fn grow(&mut self, bytes: Option<u64>, write: impl FnOnce(&mut File, u64) -> Result<usize>) -> Result<()> {
        let path = self.path.clone();
        let grow = || -> Result<()> {
            let _lock = self.lock()?;
            if self.tail > 0 {
                return Err(Error::usage(format!(
                    "{} bytes follow the data (an interrupted append?): Appender::recover adopts or trims them",
                    self.tail
                )));
            }
            let end = self.data_offset + self.header.data_len()? as u64;
            if let Some(bytes) = bytes {
                crate::atomic::preallocate_beyond_end(&self.file, end, bytes);
            }
            self.file.seek(SeekFrom::Start(end))?;
            let mut header = self.header.clone();
            let axis = growth_axis(&header);
            let counted = write(&mut self.file, end).and_then(|rows| {
                header.shape[axis] = header.shape[axis]
                    .checked_add(rows)
                    .ok_or_else(|| Error::usage("the new length overflows".to_string()))?;
                let written = self.file.stream_position()? - end;
                if written != (rows as u64).saturating_mul(self.row_bytes) {
                    return Err(Error::usage("the rows written are not the rows counted".to_string()));
                }
                let head = header.in_place(self.version, self.data_offset as usize);
                if head.is_none() && self.in_place_only {
                    return Err(Error::usage(format!(
                        "the header has no room for shape {} (its writer left none) and in-place appends were asked for",
                        shape_repr(&header.shape)
                    )));
                }
                Ok(head)
            });
            let head = match counted {
                Ok(head) => head,
                Err(e) => {
                    // The old array is whole; the rows written before the error are cut off
                    // (best effort: if this fails too, they stay as a tail readers ignore).
                    let _ = self.file.set_len(end);
                    return Err(e);
                }
            };
            match head {
                Some(head) => {
                    // The rows are on disk before the shape that counts them.
                    if self.sync {
                        self.file.sync_data()?;
                    }
                    self.file.seek(SeekFrom::Start(0))?;
                    self.file.write_all(&head)?;
                    if self.sync {
                        self.file.sync_data()?;
                    }
                    self.header = header;
                }
                None => {
                    if let Err(e) = self.rewrite(header) {
                        // The file is untouched but for the new rows after its data: cut.
                        let _ = self.file.set_len(end);
                        return Err(e);
                    }
                }
            }
            Ok(())
        };
        grow().map_err(|e| e.writing(&path))
    }

    /// Rewrites the whole file with `header` (a longer one) through an [`AtomicFile`]: the
    /// old file's data (now with the new rows after it) copied after the new header.
    fn rewrite(&mut self, header: Header) -> Result<()> {
        let (version, head) = header.encode(None)?;
        let data_len = header.data_len()? as u64;
        let mut out = AtomicFile::create(&self.path)?;
        out.write_all(&head)?;
        self.file.seek(SeekFrom::Start(self.data_offset))?;
        let copied = io::copy(&mut (&mut self.file).take(data_len), &mut out)?;
        if copied != data_len {
            return Err(ErrorKind::Truncated { expected: data_len, found: copied }.into());
        }
        out.commit(self.sync)?;
        self.file = OpenOptions::new().read(true).write(true).open(&self.path)?;
        self.data_offset = head.len() as u64;
        (self.header, self.version) = (header, version);
        Ok(())
    }

    /// Makes a file whose last append was interrupted whole again: the bytes past its data
    /// are adopted as rows or trimmed ([`Recovery`]), and synced, under the file's lock
    /// (waiting for it). Returns the number of rows after recovery. A file without a tail
    /// is left as it is. As `Appender::from_path(path)?.recover_tail(recovery)`.
    ///
    /// # Errors
    /// As [`Appender::from_path`] and [`Appender::recover_tail`].
    ///
    /// # Examples
    /// ```
    /// use std::io::Write;
    /// use npy_core::append::{Appender, Recovery};
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("n.npy");
    /// vec![1i32, 2].write_npy(&path)?;
    /// // An append that wrote rows 3, 4 and half a row, then died before the header.
    /// let mut f = std::fs::OpenOptions::new().append(true).open(&path)?;
    /// f.write_all(&[3, 0, 0, 0, 4, 0, 0, 0, 5, 0])?;
    /// assert_eq!(Vec::<i32>::read_npy(&path)?, [1, 2]);
    /// assert_eq!(Appender::recover(&path, Recovery::Adopt)?, 4);
    /// assert_eq!(Vec::<i32>::read_npy(&path)?, [1, 2, 3, 4]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recover(path: impl AsRef<Path>, recovery: Recovery) -> Result<usize> {
        Appender::from_path(path)?.recover_tail(recovery)
    }

    /// Adopts or trims the bytes past the data ([`Appender::recover`]), under the file's
    /// lock, as this appender takes it ([`Appender::wait`]). Returns the number of rows
    /// after recovery.
    ///
    /// # Errors
    /// I/O errors; [`ErrorKind::Usage`] when adopting needs more room than the header has
    /// (trim instead, or append the rows again); as [`Appender::wait`] when another
    /// appender holds the lock.
    pub fn recover_tail(&mut self, recovery: Recovery) -> Result<usize> {
        let path = self.path.clone();
        let mut recover = || -> Result<usize> {
            let _lock = self.lock()?;
            let end = self.data_offset + self.header.data_len()? as u64;
            let whole = self.tail.checked_div(self.row_bytes).unwrap_or(0);
            if recovery == Recovery::Adopt && whole > 0 {
                let mut header = self.header.clone();
                let axis = growth_axis(&header);
                header.shape[axis] = usize::try_from(whole)
                    .ok()
                    .and_then(|whole| header.shape[axis].checked_add(whole))
                    .ok_or_else(|| Error::usage("too many rows".to_string()))?;
                let head = header.in_place(self.version, self.data_offset as usize).ok_or_else(|| {
                    Error::usage(format!(
                        "the header has no room for shape {}: trim the tail instead (Recovery::Trim)",
                        shape_repr(&header.shape)
                    ))
                })?;
                self.file.set_len(end + whole * self.row_bytes)?;
                self.file.sync_data()?;
                self.file.seek(SeekFrom::Start(0))?;
                self.file.write_all(&head)?;
                self.header = header;
            } else if self.tail > 0 {
                self.file.set_len(end)?;
            }
            self.file.sync_data()?;
            self.tail = 0;
            Ok(self.rows())
        };
        recover().map_err(|e| e.writing(&path))
    }

    /// The plan from `T`'s memory to the file's element (its trailing dims as one element
    /// when `T` is a subarray of them).
    fn plan_for<T: NpyRecord>(&self) -> Result<Plan> {
        let element = self.header.grouped(&T::dtype()).map_or(self.header.dtype.clone(), |g| g.dtype);
        Plan::new(&native_dtype_of::<T>()?, &element)
    }
}

/// Concatenates the `.npy` files `inputs` along the growth axis (the first; the last in
/// Fortran order) into `output`, written atomically and streamed in pieces of 1 MiB:
/// `progress` is called with the data bytes copied so far. Every input must have the first
/// one's dtype, order and other dims. Returns the output's header.
///
/// # Errors
/// [`ErrorKind::Usage`] for no input, a 0-d or object array, or an input that differs
/// from the first (naming it and saying how); errors reading an input name it; the
/// output is then untouched and no temporary file is left.
///
/// # Examples
/// ```
/// use npy_core::append::concatenate;
/// use npy_core::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let (a, b, out) = (dir.path().join("a.npy"), dir.path().join("b.npy"), dir.path().join("ab.npy"));
/// vec![1u8, 2].write_npy(&a)?;
/// vec![3u8].write_npy(&b)?;
/// let header = concatenate(&[a, b], &out, &mut |_| {})?;
/// assert_eq!(header.shape, [3]);
/// assert_eq!(Vec::<u8>::read_npy(&out)?, [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn concatenate(inputs: &[PathBuf], output: &Path, progress: &mut dyn FnMut(u64)) -> Result<Header> {
    let mut parts = Vec::with_capacity(inputs.len());
    for input in inputs {
        let reader = NpyReader::from_path(input)?;
        let header = reader.header().clone();
        if header.shape.is_empty() || header.dtype.has_object() {
            let what = if header.shape.is_empty() { "a 0-d array" } else { "an object array" };
            return Err(Error::usage(format!("{what} cannot be concatenated")).reading(input));
        }
        parts.push((input, header, reader.data_offset() as u64, reader.data_len() as u64));
    }
    let Some((_, first, _, _)) = parts.first() else {
        return Err(Error::usage("no input to concatenate").writing(output));
    };
    let mut header = first.clone();
    let axis = growth_axis(&header);
    header.shape[axis] = 0;
    for (input, theirs, _, _) in &parts {
        if let Some(how) = differs(first, theirs) {
            let reason = format!("'{}' cannot follow '{}': {how}", input.display(), inputs[0].display());
            return Err(Error::usage(reason).writing(output));
        }
        let rows = theirs.shape[axis];
        header.shape[axis] = header.shape[axis]
            .checked_add(rows)
            .ok_or_else(|| Error::usage("the total length overflows").writing(output))?;
    }
    let mut write = || -> Result<()> {
        let (_, head) = header.encode(None)?;
        let mut out = AtomicFile::create(output)?;
        out.write_all(&head)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut done = 0u64;
        for (input, _, start, len) in &parts {
            let mut copy = |out: &mut AtomicFile, done: &mut u64, progress: &mut dyn FnMut(u64)| -> Result<()> {
                let mut file = File::open(input)?;
                file.seek(SeekFrom::Start(*start))?;
                let mut left = *len;
                while left > 0 {
                    let want = left.min(buf.len() as u64) as usize;
                    let got = file.read(&mut buf[..want])?;
                    if got == 0 {
                        return Err(ErrorKind::Truncated { expected: *len, found: *len - left }.into());
                    }
                    out.write_all(&buf[..got])?;
                    left -= got as u64;
                    *done += got as u64;
                    progress(*done);
                }
                Ok(())
            };
            copy(&mut out, &mut done, progress).map_err(|e| e.reading(input))?;
        }
        out.commit(true)
    };
    write().map_err(|e| e.writing(output))?;
    Ok(header)
}

/// The growth axis: the first, or the last in Fortran order.
fn growth_axis(header: &Header) -> usize {
    if header.fortran_order {
        header.shape.len() - 1
    } else {
        0
    }
}

/// How an array of `theirs` differs from `ours` for appending, if it does.
fn differs(ours: &Header, theirs: &Header) -> Option<String> {
    if theirs.dtype != ours.dtype {
        return Some(format!("its dtype is {}, not {}", theirs.dtype.descr(), ours.dtype.descr()));
    }
    let order = |h: &Header| h.shape.len() > 1 && h.fortran_order;
    if order(theirs) != order(ours) {
        return Some("its order (C or Fortran) differs".to_string());
    }
    let rest = |h: &Header| {
        let axis = if h.shape.is_empty() { None } else { Some(growth_axis(h)) };
        h.shape.iter().enumerate().filter(|&(i, _)| Some(i) != axis).map(|(_, &d)| d).collect::<Vec<_>>()
    };
    if theirs.shape.is_empty() || rest(theirs) != rest(ours) {
        return Some(format!(
            "its shape is {}, where {} needs the same dims but the growth axis",
            shape_repr(&theirs.shape),
            shape_repr(&ours.shape)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::write::bounded;
    use crate::{Array, DynArray};

    fn header_bytes(path: &Path) -> Vec<u8> {
        let reader = NpyReader::from_path(path).unwrap();
        let n = reader.data_offset();
        std::fs::read(path).unwrap()[..n].to_vec()
    }

    #[test]
    fn typed_appends_grow_the_array_and_write_nps_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        let values: Vec<u64> = (0..7).map(|i| i * 1_000_003).collect();
        values[..3].to_vec().write_npy(&path).unwrap();
        let mut a = Appender::from_path(&path).unwrap();
        a.append(&values[3..5]).unwrap();
        a.append::<u64>(&[]).unwrap();
        // Not synced: the same file (only the syncs are skipped).
        a.sync(false).append(&values[5..]).unwrap();
        assert_eq!(a.rows(), 7);
        assert_eq!(Vec::<u64>::read_npy(&path).unwrap(), values);
        // The header is the one np.save writes for the whole array.
        let (_, want) = Header::new("<u8".parse().unwrap(), vec![7]).encode(None).unwrap();
        assert_eq!(header_bytes(&path), want);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, want.len() + 7 * 8);
    }

    /// `append_batches` writes what one `append` a batch writes, for records with padding
    /// (copied, gaps zeroed), converted rows (a big-endian file) and rows of a 2-d array;
    /// batches of any size, empty ones included, each counted once written.
    #[cfg(feature = "derive")]
    #[test]
    #[cfg_attr(miri, ignore = "tens of minutes under Miri; append_batches runs there in the failure tests")]
    fn batches_append_what_appends_of_each_batch_append() {
        #[derive(crate::NpyRecord, Debug, Clone, Copy, PartialEq)]
        #[npy(crate = "crate", align)]
        #[repr(C)]
        struct Padded {
            flag: u8,
            value: f64,
            id: u16,
        }
        let dir = tempfile::tempdir().unwrap();
        let records: Vec<Padded> =
            (0..50_000u32).map(|i| Padded { flag: i as u8, value: f64::from(i) * 0.5, id: (i * 7) as u16 }).collect();
        let sizes = [3, 0, 20_000, 1, 4_096, 0, 25_000];
        let (one, each) = (dir.path().join("one.npy"), dir.path().join("each.npy"));
        for path in [&one, &each] {
            records[..900].write_npy(path).unwrap();
        }
        let batches: Vec<&[Padded]> = sizes
            .iter()
            .scan(900, |at, &n| {
                *at += n;
                Some(&records[*at - n..*at])
            })
            .collect();
        let mut a = Appender::from_path(&one).unwrap();
        assert_eq!(a.append_batches(batches.iter().copied()).unwrap(), 49_100);
        assert_eq!(a.rows(), 50_000);
        let mut e = Appender::from_path(&each).unwrap();
        batches.iter().for_each(|b| e.append(b).unwrap());
        assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&each).unwrap());
        assert_eq!(Vec::<Padded>::read_npy(&one).unwrap(), records);

        // Records with a skipped field, converted field by field into padded rows (the
        // buffers reused, their padding zero).
        #[derive(crate::NpyRecord, Debug, Clone, PartialEq)]
        #[npy(crate = "crate", align)]
        #[repr(C)]
        struct Noted {
            flag: u8,
            #[npy(skip)]
            note: u32,
            value: f64,
        }
        let noted: Vec<Noted> = (0..10_000u32).map(|i| Noted { flag: i as u8, note: i, value: f64::from(i) }).collect();
        let (one, each) = (dir.path().join("noted1.npy"), dir.path().join("noted2.npy"));
        for path in [&one, &each] {
            noted[..10].write_npy(path).unwrap();
        }
        Appender::from_path(&one).unwrap().append_batches(noted[10..].chunks(999)).unwrap();
        let mut e = Appender::from_path(&each).unwrap();
        noted[10..].chunks(999).for_each(|b| e.append(b).unwrap());
        assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&each).unwrap());
        let back = Vec::<Noted>::read_npy(&one).unwrap();
        assert_eq!(back.iter().map(|r| (r.flag, r.note, r.value)).collect::<Vec<_>>()[9_999], (15, 0, 9_999.0));

        // A big-endian file: the rows converted; not synced.
        let path = dir.path().join("be.npy");
        let bytes: Vec<u8> = [1.5f64, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
        DynArray::new(Header::new(">f8".parse().unwrap(), vec![2]), bytes).unwrap().write_npy(&path).unwrap();
        let more: Vec<Vec<f64>> = (0..5).map(|b| (0..300_000).map(|i| f64::from(b * 300_000 + i)).collect()).collect();
        assert_eq!(Appender::from_path(&path).unwrap().sync(false).append_batches(&more).unwrap(), 1_500_000);
        let back = DynArray::read_npy(&path).unwrap();
        assert_eq!((back.dtype().descr(), back.shape()), ("'>f8'".to_string(), &[1_500_002][..]));
        let want: Vec<f64> = [1.5, -2.0].into_iter().chain(more.concat()).collect();
        assert_eq!(Vec::<f64>::read_npy(&path).unwrap(), want);

        // Rows of a (2, 3) array, as scalars or as [f32; 3] elements.
        let path = dir.path().join("c.npy");
        Array::from_shape_vec(vec![2, 3], (0..6).map(|i| i as f32).collect()).unwrap().write_npy(&path).unwrap();
        let rows =
            Appender::from_path(&path).unwrap().append_batches([[[6f32, 7.0, 8.0]], [[9.0, 10.0, 11.0]]]).unwrap();
        assert_eq!(rows, 2);
        let back = Array::<f32>::read_npy(&path).unwrap();
        assert_eq!((back.shape(), back.as_slice()), (&[4, 3][..], &(0..12).map(|i| i as f32).collect::<Vec<_>>()[..]));
    }

    /// A batch that is not whole rows stops `append_batches` with an error naming the
    /// file; the batches before it stay appended (whole, counted, no tail), the ones after
    /// it are never taken from the iterator.
    #[test]
    fn a_bad_batch_stops_the_batches_and_the_ones_before_it_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.npy");
        Array::from_shape_vec(vec![1, 3], vec![0u32, 1, 2]).unwrap().write_npy(&path).unwrap();
        let taken = std::cell::Cell::new(0);
        let batches = (1..10u32).map(|b| {
            taken.set(b);
            let n = if b == 4 { 4 } else { 3 * 10_000 };
            (0..n).map(|i| b * 1_000_000 + i).collect::<Vec<u32>>()
        });
        let mut a = Appender::from_path(&path).unwrap();
        let e = a.append_batches(batches).unwrap_err();
        assert!(e.to_string().contains("a batch of 4 values is not whole rows of 3"), "{e}");
        assert!(e.to_string().contains("rows.npy"), "{e}");
        assert_eq!(taken.get(), 4);
        let back = Array::<u32>::read_npy(&path).unwrap();
        assert_eq!(back.shape(), [1 + 3 * 10_000, 3]);
        assert_eq!(back.as_slice()[3..6], [1_000_000, 1_000_001, 1_000_002]);
        assert_eq!(*back.as_slice().last().unwrap(), 3_000_000 + 29_999);
        assert_eq!(Appender::from_path(&path).unwrap().tail_bytes(), 0);
        // The appender goes on from there.
        assert_eq!(a.rows(), 30_001);
        a.append_batches([[7u32, 8, 9]]).unwrap();
        assert_eq!(Array::<u32>::read_npy(&path).unwrap().shape(), [30_002, 3]);
    }

    /// `append_batches` with the least that starts its writer thread (one batch of one
    /// row, on two CPUs), failing on either side: the writer on its first batch (a file
    /// with a tail), the caller before it sends anything (a bad first batch) and the
    /// caller's iterator panicking after one batch. Each returns (or panics) instead of
    /// waiting on the other side, and the file holds whole batches only.
    #[test]
    fn either_side_failing_ends_the_batches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.npy");

        // The writer fails on the first batch: the file has a tail.
        [1u16, 2].write_npy(&path).unwrap();
        let tail = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        (&tail).write_all(&[9, 9]).unwrap();
        drop(tail);
        let p = path.clone();
        let e = bounded(move || Appender::from_path(&p).unwrap().append_batches((0..5u16).map(|i| [i])).unwrap_err());
        assert!(e.to_string().contains("2 bytes follow the data"), "{e}");
        assert!(e.to_string().contains("one.npy"), "{e}");
        assert_eq!(Appender::recover(&path, Recovery::Trim).unwrap(), 2);

        // The caller fails before sending anything: a batch of no whole row.
        let two = dir.path().join("two.npy");
        Array::from_shape_vec(vec![1, 2], vec![1u16, 2]).unwrap().write_npy(&two).unwrap();
        let p = two.clone();
        let e = bounded(move || Appender::from_path(&p).unwrap().append_batches([[7u16]]).unwrap_err());
        assert!(e.to_string().contains("a batch of 1 values is not whole rows of 2"), "{e}");
        assert_eq!(Array::<u16>::read_npy(&two).unwrap().shape(), [1, 2]);

        // The caller's iterator panics after one batch: the panic goes on, the writer
        // returns, the batch sent before stays appended.
        let p = path.clone();
        let panicked = std::panic::catch_unwind(|| {
            bounded(move || {
                let batches = (0..3u16).map(|i| if i == 1 { panic!("the producer failed") } else { [i] });
                Appender::from_path(&p).unwrap().append_batches(batches)
            })
        });
        assert!(panicked.is_err());
        assert_eq!(Vec::<u16>::read_npy(&path).unwrap(), [1, 2, 0]);
        assert_eq!(Appender::from_path(&path).unwrap().tail_bytes(), 0);
    }

    /// The values `(appender, round)` appends in the contention tests: distinct, and
    /// telling which append a row came from and where in it.
    fn part(who: u64, round: u64, rows: u64) -> Vec<u64> {
        (0..rows).map(|k| who * 1_000_000 + round * 1_000 + k).collect()
    }

    /// Appenders each open for the whole test, in threads (each its own handle, so its own
    /// lock), appending in turns: every append lands whole and once, none is lost, and the
    /// file has no tail.
    #[test]
    fn long_lived_appenders_in_threads_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.npy");
        [7u64; 3].write_npy(&path).unwrap();
        let (appenders, rounds) = (4u64, if cfg!(miri) { 3 } else { 40 });
        let rows = |who: u64, round: u64| 1 + (who * 7 + round * 13) % 50;
        std::thread::scope(|scope| {
            for who in 0..appenders {
                let path = &path;
                scope.spawn(move || {
                    let mut a = Appender::from_path(path).unwrap();
                    for round in 0..rounds {
                        let values = part(who, round, rows(who, round));
                        match round % 3 {
                            0 => a.append(&values).unwrap(),
                            1 => assert_eq!(a.append_iter(values.iter().copied()).unwrap(), values.len()),
                            _ => assert_eq!(a.append_batches([&values[..1], &values[1..]]).unwrap(), values.len()),
                        }
                    }
                });
            }
        });
        let values = Vec::<u64>::read_npy(&path).unwrap();
        assert_eq!(values[..3], [7, 7, 7]);
        // A batch of `append_batches` is an append of its own: parts may be split in two
        // there, so the check counts rows per appender instead.
        let mut per = vec![Vec::new(); appenders as usize];
        values[3..].iter().for_each(|&v| per[(v / 1_000_000) as usize].push(v));
        for (who, got) in per.iter().enumerate() {
            let want: Vec<u64> = (0..rounds).flat_map(|r| part(who as u64, r, rows(who as u64, r))).collect();
            assert_eq!(*got, want, "appender {who}");
        }
        assert_eq!(Appender::from_path(&path).unwrap().tail_bytes(), 0);
    }

    /// A header without room, rewritten (the file replaced) while other appenders wait on
    /// the lock of the old file: they find the new one and append to it; nothing is lost.
    #[test]
    fn appenders_waiting_on_a_replaced_file_append_to_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tight.npy");
        tight_file(&path, 9);
        let dtype = DynArray::read_npy(&path).unwrap().dtype().clone();
        let appenders = 4u8;
        let rounds = if cfg!(miri) { 2 } else { 10 };
        // All open the tight file first, then append: the first append rewrites it. One
        // more appender opened now appends last, long after the file was replaced.
        let mut stale = Appender::from_path(&path).unwrap();
        let opened = std::sync::Barrier::new(appenders as usize);
        std::thread::scope(|scope| {
            for who in 0..appenders {
                let (path, dtype, opened) = (&path, &dtype, &opened);
                scope.spawn(move || {
                    let mut a = Appender::from_path(path).unwrap();
                    opened.wait();
                    for round in 0..rounds {
                        let row = 100 + who * rounds + round;
                        let more = DynArray::new(Header::new(dtype.clone(), vec![1]), vec![row]).unwrap();
                        a.append_dyn(&more).unwrap();
                    }
                });
            }
        });
        stale.append_dyn(&DynArray::new(Header::new(dtype.clone(), vec![1]), vec![250]).unwrap()).unwrap();
        let mut data = DynArray::read_npy(&path).unwrap().data().to_vec();
        assert_eq!(data[..9], (0..9).collect::<Vec<u8>>()[..]);
        assert_eq!(data.pop(), Some(250));
        data.drain(..9);
        data.sort_unstable();
        assert_eq!(data, (100..100 + appenders * rounds).collect::<Vec<u8>>());
        assert_eq!(Appender::from_path(&path).unwrap().tail_bytes(), 0);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["tight.npy"], "no temporary file is left");
    }

    /// Under `wait(false)` a held lock is a `WouldBlock` error naming the file, for appends
    /// and recoveries, that writes nothing; the lock is per append, so once it is free the
    /// same appender appends.
    #[test]
    fn without_waiting_a_held_lock_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.npy");
        [1u16, 2].write_npy(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut a = Appender::from_path(&path).unwrap();
        a.wait(false);
        let holder = File::open(&path).unwrap();
        holder.lock().unwrap();
        let busy = |e: Error| {
            assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::WouldBlock), "{e:?}");
            assert_eq!(e.path(), Some(path.as_path()));
            let want = format!("another process is appending to '{}'", path.display());
            assert!(e.to_string().contains(&want), "{e}");
        };
        busy(a.append(&[3u16]).unwrap_err());
        busy(a.recover_tail(Recovery::Trim).unwrap_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        holder.unlock().unwrap();
        a.append(&[3u16]).unwrap();
        assert_eq!(Vec::<u16>::read_npy(&path).unwrap(), [1, 2, 3]);
    }

    /// The header and tail are read again under the lock: an appender opened before another
    /// one appended sees its rows (and appends after them), and a file whose dtype another
    /// writer changed meanwhile is refused.
    #[test]
    fn each_append_reads_the_header_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        [1i32].write_npy(&path).unwrap();
        let (mut early, mut late) = (Appender::from_path(&path).unwrap(), Appender::from_path(&path).unwrap());
        late.append(&[2i32, 3]).unwrap();
        early.append(&[4i32]).unwrap();
        assert_eq!(early.rows(), 4);
        assert_eq!(Vec::<i32>::read_npy(&path).unwrap(), [1, 2, 3, 4]);
        [1.5f32].write_npy(&path).unwrap();
        let e = early.append(&[5i32]).unwrap_err();
        assert!(e.to_string().contains("changed by another writer since it was opened: its dtype is '<f4'"), "{e}");
    }

    /// Readers during appends (taking no lock): every read succeeds and gives a whole
    /// array, the rows of the appends counted so far, never a length between two appends
    /// nor a "data truncated" from a header read after the file's length was measured.
    #[test]
    fn readers_during_appends_see_whole_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read.npy");
        Vec::<u64>::new().write_npy(&path).unwrap();
        let (rounds, rows) = (if cfg!(miri) { 5 } else { 1_000 }, 1_000u64);
        let done = std::sync::atomic::AtomicBool::new(false);
        let reads = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut reads = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    // Mostly opens (the header read, where the race was), some whole reads.
                    if reads % 16 == 0 {
                        let values = Vec::<u64>::read_npy(&path).unwrap_or_else(|e| panic!("read {reads}: {e}"));
                        assert_eq!(values.len() as u64 % rows, 0, "read {reads}: {} rows", values.len());
                        assert!(values.iter().enumerate().all(|(i, &v)| v == i as u64), "read {reads}");
                    } else {
                        let r = NpyReader::from_path(&path).unwrap_or_else(|e| panic!("read {reads}: {e}"));
                        assert_eq!(r.len() as u64 % rows, 0, "read {reads}: {} rows", r.len());
                    }
                    reads += 1;
                }
                reads
            });
            // Set on the way out, also when an append panics: the reader then stops and the
            // test fails instead of waiting for it forever.
            struct Done<'a>(&'a std::sync::atomic::AtomicBool);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            let finished = Done(&done);
            let mut a = Appender::from_path(&path).unwrap();
            a.sync(false);
            for round in 0..rounds {
                a.append(&(round * rows..(round + 1) * rows).collect::<Vec<u64>>()).unwrap();
            }
            drop(finished);
            reader.join().unwrap()
        });
        assert_eq!(Vec::<u64>::read_npy(&path).unwrap().len() as u64, rounds * rows);
        assert!(reads > 0);
    }

    #[test]
    fn iterators_and_dynamic_arrays_append_whole_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        [7u64, 8].write_npy(&path).unwrap();
        let mut a = Appender::from_path(&path).unwrap();
        // More than one piece of 1 MiB, then nothing.
        assert_eq!(a.append_iter(0..300_001u64).unwrap(), 300_001);
        assert_eq!(a.append_iter(std::iter::empty::<u64>()).unwrap(), 0);
        let back = Vec::<u64>::read_npy(&path).unwrap();
        assert_eq!((back.len(), back[..3].to_vec(), back[300_002]), (300_003, vec![7, 8, 0], 300_000));
        // Rows of 3: an iterator ending inside a row appends nothing.
        let rows = dir.path().join("r.npy");
        Array::from_shape_vec(vec![1, 3], vec![1.5f32, 2.5, 3.5]).unwrap().write_npy(&rows).unwrap();
        let before = std::fs::read(&rows).unwrap();
        let mut r = Appender::from_path(&rows).unwrap();
        let e = r.append_iter((0..7).map(|i| i as f32)).unwrap_err().to_string();
        assert!(e.contains("the iterator ended inside a row: 1 values after 2 whole rows of 3"), "{e}");
        assert_eq!(std::fs::read(&rows).unwrap(), before);
        assert_eq!(r.append_iter((0..6).map(|i| i as f32)).unwrap(), 2);
        // A dynamic array of the same dtype and row shape; another one is refused.
        let more = DynArray::read_npy(&rows).unwrap();
        r.append_dyn(&more).unwrap();
        let back = Array::<f32>::read_npy(&rows).unwrap();
        assert_eq!(back.shape(), [6, 3]);
        assert_eq!(&back.as_slice()[9..12], [1.5, 2.5, 3.5]);
        let other = DynArray::read_npy(&path).unwrap();
        let e = r.append_dyn(&other).unwrap_err().to_string();
        assert!(e.contains("the array cannot be appended: its dtype is '<u8', not '<f4'"), "{e}");
    }

    #[test]
    fn rows_of_2d_arrays_in_c_and_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        // C order (2, 3): rows of 3, as scalars or as [f32; 3] elements.
        let path = dir.path().join("c.npy");
        Array::from_shape_vec(vec![2, 3], (0..6).map(|i| i as f32).collect()).unwrap().write_npy(&path).unwrap();
        let mut a = Appender::from_path(&path).unwrap();
        a.append(&[6f32, 7.0, 8.0]).unwrap();
        a.append(&[[9f32, 10.0, 11.0]]).unwrap();
        let e = a.append(&[1f32, 2.0]).unwrap_err();
        assert!(e.to_string().contains("2 values are not whole rows of 3"), "{e}");
        let back = Array::<f32>::read_npy(&path).unwrap();
        assert_eq!((back.shape(), back.as_slice()), (&[4, 3][..], &(0..12).map(|i| i as f32).collect::<Vec<_>>()[..]));
        // Fortran order (3, 2): the last axis grows; a step is a column of 3.
        let path = dir.path().join("f.npy");
        let f = Array::from_shape_vec_fortran(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        f.write_npy(&path).unwrap();
        Appender::from_path(&path).unwrap().append(&[7i64, 8, 9]).unwrap();
        let back = Array::<i64>::read_npy(&path).unwrap();
        assert!(back.fortran_order());
        assert_eq!((back.shape(), back.as_slice()), (&[3, 3][..], &[1i64, 2, 3, 4, 5, 6, 7, 8, 9][..]));
    }

    #[test]
    fn big_endian_files_get_converted_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("be.npy");
        // A '>f8' file written by the dynamic writer.
        let bytes: Vec<u8> = [1.5f64, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
        DynArray::new(Header::new(">f8".parse().unwrap(), vec![2]), bytes).unwrap().write_npy(&path).unwrap();
        Appender::from_path(&path).unwrap().append(&[3.25f64]).unwrap();
        let back = DynArray::read_npy(&path).unwrap();
        assert_eq!(back.dtype().descr(), "'>f8'");
        assert_eq!(Vec::<f64>::read_npy(&path).unwrap(), [1.5, -2.0, 3.25]);
    }

    #[test]
    fn files_append_when_dtype_and_dims_agree() {
        let dir = tempfile::tempdir().unwrap();
        let (a_path, b_path) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
        Array::from_shape_vec(vec![1, 2], vec![1u16, 2]).unwrap().write_npy(&a_path).unwrap();
        Array::from_shape_vec(vec![2, 2], vec![3u16, 4, 5, 6]).unwrap().write_npy(&b_path).unwrap();
        Appender::from_path(&a_path).unwrap().append_file(&b_path).unwrap();
        assert_eq!(Array::<u16>::read_npy(&a_path).unwrap().as_slice(), [1, 2, 3, 4, 5, 6]);
        let wide = dir.path().join("wide.npy");
        Array::from_shape_vec(vec![1, 3], vec![7u16, 8, 9]).unwrap().write_npy(&wide).unwrap();
        let e = Appender::from_path(&a_path).unwrap().append_file(&wide).unwrap_err();
        assert!(e.to_string().contains("its shape is (1, 3), where (3, 2) needs"), "{e}");
        assert_eq!(e.path(), Some(a_path.as_path()));
        let floats = dir.path().join("floats.npy");
        [1.0f32, 2.0].write_npy(&floats).unwrap();
        let e = Appender::from_path(&a_path).unwrap().append_file(&floats).unwrap_err();
        assert!(e.to_string().contains("its dtype is '<f4', not '<u2'"), "{e}");
        // Nothing was appended by the refusals.
        assert_eq!(Array::<u16>::read_npy(&a_path).unwrap().shape(), [3, 2]);
    }

    #[test]
    fn wrong_types_and_0d_arrays_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.npy");
        [1i32, 2].write_npy(&path).unwrap();
        let e = Appender::from_path(&path).unwrap().append(&[1.5f64]).unwrap_err();
        assert_eq!(e.path(), Some(path.as_path()), "{e}");
        assert_eq!(Vec::<i32>::read_npy(&path).unwrap(), [1, 2]);
        let scalar = dir.path().join("s.npy");
        Array::from_shape_vec(vec![], vec![1i32]).unwrap().write_npy(&scalar).unwrap();
        let e = Appender::from_path(&scalar).unwrap_err();
        assert!(e.to_string().contains("0-d array"), "{e}");
    }

    /// A `.npy` of `n` `|i1` values whose header has no spare byte (a writer that pads only
    /// to the alignment): its field name is chosen so that the dict ends the 64-byte block.
    fn tight_file(path: &Path, n: usize) {
        let (text, total) = (1..64)
            .map(|k| {
                let text =
                    format!("{{'descr': [('{}', '|i1')], 'fortran_order': False, 'shape': ({n},), }}", "x".repeat(k));
                let total = 10 + text.len() + 1;
                (text, total)
            })
            .find(|(_, total)| total % 64 == 0)
            .unwrap();
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&((total - 10) as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(b'\n');
        bytes.extend((0..n).map(|i| i as u8));
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_header_without_room_is_rewritten_atomically_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tight.npy");
        tight_file(&path, 9);
        let before = std::fs::read(&path).unwrap();
        // Rows of the same record dtype, from another file.
        let dtype = DynArray::read_npy(&path).unwrap().dtype().clone();
        let more = |n: usize, first: u8| {
            let more = dir.path().join(format!("more{first}.npy"));
            DynArray::new(Header::new(dtype.clone(), vec![n]), (first..first + n as u8).collect())
                .unwrap()
                .write_npy(&more)
                .unwrap();
            more
        };
        let (two, one) = (more(2, 9), more(1, 11));
        let mut a = Appender::from_path(&path).unwrap();
        a.in_place_only(true);
        let e = a.append_file(&two).unwrap_err();
        assert!(e.to_string().contains("no room for shape (11,)"), "{e}");
        // Refused before anything is written: the file is as it was.
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let mut a = Appender::from_path(&path).unwrap();
        a.append_file(&two).unwrap();
        let array = DynArray::read_npy(&path).unwrap();
        assert_eq!(array.shape(), [11]);
        assert_eq!(array.data(), (0..11).collect::<Vec<u8>>());
        // Rewritten with np.save's header, which has room: the next append is in place.
        assert_eq!(header_bytes(&path), array.header().encode(None).unwrap().1);
        a.in_place_only(true).append_file(&one).unwrap();
        assert_eq!(DynArray::read_npy(&path).unwrap().data(), (0..12).collect::<Vec<u8>>());
        std::fs::remove_file(two).unwrap();
        std::fs::remove_file(one).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["tight.npy"], "no temporary file is left");
    }

    #[test]
    fn tails_are_refused_then_adopted_or_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.npy");
        [1u32, 2].write_npy(&path).unwrap();
        let clean = std::fs::read(&path).unwrap();
        // Rows 3 and 4 and half of a fifth, as an append killed before its header.
        let mut torn = clean.clone();
        torn.extend([3u32, 4].iter().flat_map(|v| v.to_le_bytes()));
        torn.extend([5, 0]);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(Vec::<u32>::read_npy(&path).unwrap(), [1, 2], "readers ignore the tail");
        let mut a = Appender::from_path(&path).unwrap();
        assert_eq!(a.tail_bytes(), 10);
        let e = a.append(&[9u32]).unwrap_err();
        assert!(e.to_string().contains("10 bytes follow the data"), "{e}");
        assert_eq!(Appender::recover(&path, Recovery::Adopt).unwrap(), 4);
        assert_eq!(Vec::<u32>::read_npy(&path).unwrap(), [1, 2, 3, 4]);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, clean.len() + 8);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(Appender::recover(&path, Recovery::Trim).unwrap(), 2);
        assert_eq!(std::fs::read(&path).unwrap(), clean);
        // Nothing to do on a clean file.
        assert_eq!(Appender::recover(&path, Recovery::Adopt).unwrap(), 2);
        assert_eq!(std::fs::read(&path).unwrap(), clean);
    }

    #[test]
    fn version_2_headers_update_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.npy");
        let header = Header::new("<i2".parse().unwrap(), vec![2]);
        let (_, head) = header.encode(Some(Version::V2_0)).unwrap();
        let mut bytes = head.clone();
        bytes.extend([1i16, 2].iter().flat_map(|v| v.to_le_bytes()));
        std::fs::write(&path, bytes).unwrap();
        Appender::from_path(&path).unwrap().append(&[3i16]).unwrap();
        let reader = NpyReader::from_path(&path).unwrap();
        assert_eq!((reader.version(), reader.data_offset()), (Version::V2_0, head.len()));
        assert_eq!(Vec::<i16>::read_npy(&path).unwrap(), [1, 2, 3]);
    }
}
