//! Writing `.npy` data to paths (atomically) and to any [`io::Write`].

use std::cell::RefCell;
use std::io::{self, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::Path;

use crate::atomic::AtomicFile;
use crate::buffer::{self, PieceBuf, RecordBytes};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Version};
use crate::options::WriteOptions;
use crate::plan::Plan;
use crate::record::{native_dtype_of, NpyRecord};

/// Bytes of padded or converted records made per write: small enough to stay in cache,
/// large enough that handing pieces between threads costs little (each hand-off may wake a
/// thread). Writes of fewer than 8 pieces (an append's batch of a few MiB) are made on the
/// writing thread: starting a second one for them costs more than the copy it would take
/// over (100 appends of 3 MB: 0.145 s with one, 0.115 s without; one write of the same
/// records 0.111 s).
const WRITE_PIECE: usize = 1 << 20;
/// Buffers of [`write_pieces`]'s thread: up to this many pieces are in flight.
const WRITE_BUFFERS: usize = 4;
/// The file offsets [`write_pieces`] ends its writes on: pieces are whole records, so
/// their ends fall anywhere in a page, and buffered writes that end mid-page are slower
/// (1,216 MB written after a 384-byte header in 1,048,496-byte writes: 0.262 s best,
/// 0.311 s median of 15; the same ending each write on a page boundary, and one
/// `write` of it all: 0.253 and 0.242 s best, 0.278 and 0.259 s median).
const PAGE: u64 = 4096;

/// Writes a file atomically (see [`crate::atomic`]): header and body go to a new file in
/// the target's directory, which replaces `path` when complete. On any error, an existing
/// file at `path` is untouched and nothing is left beside it; the error names `path`.
pub(crate) fn to_path(
    path: &Path,
    header: &[u8],
    sync: bool,
    body: impl FnOnce(&mut AtomicFile) -> Result<()>,
) -> Result<()> {
    let write = || {
        let mut file = AtomicFile::create(path)?;
        file.write_all(header)?;
        body(&mut file)?;
        file.commit(sync)
    };
    write().map_err(|e| e.writing(path))
}

pub(crate) fn typed_to_path<T: NpyRecord>(path: &Path, header: Header, data: &[T], opts: &WriteOptions) -> Result<()> {
    let prepare = || -> Result<_> {
        let (header, plan) = typed_plan::<T>(header, opts)?;
        let (_, head) = header.encode(opts.forced_version())?;
        Ok((head.len() as u64 + header.data_len()? as u64, head, plan))
    };
    let (total, head, plan) = prepare().map_err(|e| e.writing(path))?;
    to_path(path, &head, opts.syncs(), |file| {
        crate::atomic::preallocate(file.as_file(), total);
        write_with_plan(file, head.len() as u64, &plan, data)
    })
}

pub(crate) fn typed_to_writer<W: Write, T: NpyRecord>(
    mut writer: W,
    header: Header,
    data: &[T],
    opts: &WriteOptions,
) -> Result<W> {
    let (header, plan) = typed_plan::<T>(header, opts)?;
    let (_, head) = header.encode(opts.forced_version())?;
    writer.write_all(&head)?;
    write_with_plan(&mut writer, head.len() as u64, &plan, data)?;
    Ok(writer)
}

/// The header written for typed data of `header` under `opts` (its dtype in the byte
/// order asked for), and the plan from `T`'s memory to it.
pub(crate) fn typed_plan<T: NpyRecord>(header: Header, opts: &WriteOptions) -> Result<(Header, Plan)> {
    let header = Header { dtype: opts.written_dtype(&header.dtype), ..header };
    let plan = Plan::new(&native_dtype_of::<T>()?, &header.dtype)?;
    Ok((header, plan))
}

/// The plan that converts data of `dtype` (a [`crate::DynArray`]'s) to the dtype `opts`
/// write, when they differ (another byte order).
///
/// # Errors
/// As [`Plan::new`].
pub(crate) fn dyn_plan(dtype: &DType, opts: &WriteOptions) -> Result<Option<Plan>> {
    let written = opts.written_dtype(dtype);
    if written == *dtype {
        return Ok(None);
    }
    Plan::new(dtype, &written).map(Some)
}

/// Writes `data`, the data of a [`crate::DynArray`], as `plan` converts it, or as it is;
/// `at` is the writer's offset in its file, if known (else 0: see [`write_pieces`]).
pub(crate) fn write_dyn_data<W: Write + ?Sized>(
    writer: &mut W,
    at: u64,
    plan: Option<&Plan>,
    data: &[u8],
) -> Result<()> {
    match plan {
        Some(plan) => write_bytes_with_plan(writer, at, plan, data),
        None => Ok(writer.write_all(data)?),
    }
}

/// Writes `data`, whole elements of `plan`'s source dtype, converted by `plan`: in pieces,
/// made on a second thread for large data (a [`crate::DynArray`] written in another byte
/// order). Destination bytes no field covers (padding) are written as zeros.
fn write_bytes_with_plan<W: Write + ?Sized>(writer: &mut W, at: u64, plan: &Plan, data: &[u8]) -> Result<()> {
    let (ss, ds) = (plan.src_size(), plan.dst_size());
    if ds == 0 || ss == 0 {
        return Ok(());
    }
    let total = data.len() / ss;
    let per_piece = (WRITE_PIECE / ds).max(1);
    // Zeroed buffers (`rewritten: false`), reused at the same record boundaries: the plan
    // never writes padding, which stays zero.
    write_pieces(writer, at, total.div_ceil(per_piece), per_piece.min(total) * ds, false, |k, buf| {
        let count = per_piece.min(total - k * per_piece);
        let src = &data[k * per_piece * ss..(k * per_piece + count) * ss];
        plan.run(src, &mut buf.bytes_mut()[..count * ds], k * per_piece)?;
        Ok(count * ds)
    })
}

/// The plan from `T`'s memory to its written layout.
pub(crate) fn element_plan<T: NpyRecord>() -> Result<Plan> {
    Plan::new(&native_dtype_of::<T>()?, &T::dtype())
}

/// One bulk write when `T`'s memory is its written layout; records with padding copied
/// whole with their padding zeroed; else converted field by field in chunks.
///
/// `plan`'s source must be `T::native_dtype()` ([`element_plan`], [`typed_plan`]): the
/// proofs of the byte reads rest on it (a typed plan would let the compiler check it).
/// `at` is the writer's offset in its file, if known (else 0: see [`write_pieces`]).
pub(crate) fn write_with_plan<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    at: u64,
    plan: &Plan,
    data: &[T],
) -> Result<()> {
    match Pieces::of(plan, data, WRITE_PIECE) {
        None => Ok(writer.write_all(as_written(plan, data))?),
        Some(p) => write_pieces(writer, at, p.count, p.len, p.rewritten, p.fill),
    }
}

/// `data`'s written bytes (as [`write_with_plan`] writes them) made into a buffer: `spare`
/// when it is large enough, else a new one. Returns the buffer and their length (its
/// first bytes). For a batch that another thread writes
/// ([`crate::append::Appender::append_batches`]).
pub(crate) fn encode_with_plan<T: NpyRecord>(
    plan: &Plan,
    data: &[T],
    spare: Option<PieceBuf>,
) -> Result<(PieceBuf, usize)> {
    let len = data.len() * plan.dst_size();
    let pieces = Pieces::of(plan, data, len.max(1));
    let mut buf = match spare {
        Some(mut b) if b.bytes().len() >= len => {
            if pieces.as_ref().is_some_and(|p| !p.rewritten) {
                // The plan writes no byte of the destination's padding: zeros, as made.
                b.bytes_mut()[..len].fill(0);
            }
            b
        }
        _ => PieceBuf::zeroed(len),
    };
    match pieces {
        None => buf.bytes_mut()[..len].copy_from_slice(as_written(plan, data)),
        Some(p) => {
            debug_assert!(p.count <= 1, "every record in one piece");
            if p.count == 1 {
                (p.fill)(0, &mut buf)?;
            }
        }
    }
    Ok((buf, len))
}

/// The bytes of `data`, whose memory is its written layout ([`Pieces::of`] gave `None`).
fn as_written<'a, T: NpyRecord>(plan: &Plan, data: &'a [T]) -> &'a [u8] {
    assert!(plan.is_identity() && plan.covers_all_src(), "records whose memory is not their written bytes");
    // SAFETY:
    // - the plan's source is `T::native_dtype()` and it covers every source byte, so
    //   every byte of a `T` is a byte of one of its fields (NpyRecord's contract: the
    //   native dtype describes `T`'s memory exactly).
    unsafe { buffer::bytes_of(data) }
}

/// How the written bytes of records whose memory is not their written layout are made:
/// `count` pieces of at most `len` bytes, piece `k` made into a buffer by `fill` (which
/// returns its length); `rewritten` when `fill` writes every byte of its piece (else the
/// buffer must hold zeros where the plan writes nothing).
struct Pieces<'a> {
    count: usize,
    len: usize,
    rewritten: bool,
    fill: Box<Fill<'a>>,
}

/// What makes piece `k` into a buffer, returning its length.
type Fill<'a> = dyn Fn(usize, &mut PieceBuf) -> Result<usize> + Sync + 'a;

impl<'a> Pieces<'a> {
    /// The pieces of about `piece_bytes` of `data` written by `plan`; `None` when `data`'s
    /// memory is its written bytes ([`as_written`]).
    fn of<T: NpyRecord>(plan: &'a Plan, data: &'a [T], piece_bytes: usize) -> Option<Pieces<'a>> {
        debug_assert_eq!(plan.src_size(), std::mem::size_of::<T>(), "a plan for another type");
        if plan.is_identity() && plan.covers_all_src() {
            return None;
        }
        // Records with skipped fields are never copied whole: those fields may hold
        // anything, an atomic another thread updates meanwhile included, so only the
        // stored fields are read (converted: the same bytes).
        Some(if plan.in_place() && !T::HAS_SKIPPED {
            Pieces::in_place(plan, data, piece_bytes)
        } else {
            Pieces::converted(plan, data, piece_bytes)
        })
    }

    /// Elements whose memory is not their written layout: records are converted by
    /// `plan` into cache-sized buffers (of about `piece_bytes`).
    fn converted<T: NpyRecord>(plan: &'a Plan, data: &'a [T], piece_bytes: usize) -> Pieces<'a> {
        let (ss, ds) = (plan.src_size(), plan.dst_size());
        let per_piece = (piece_bytes / ds.max(1)).max(1);
        let (src, total) = (RecordBytes::of(data), if ds == 0 { 0 } else { data.len() });
        let fill = move |k: usize, buf: &mut PieceBuf| {
            let count = per_piece.min(total - k * per_piece);
            let len = count * ds;
            let records = src.at(k * per_piece * ss, count * ss);
            let dst = &mut buf.bytes_mut()[..len];
            // SAFETY:
            // - `records` is valid for reads of `count` source elements: `count * ss`
            //   bytes inside `data` (checked by `at`), borrowed for the pieces' lifetime;
            // - the plan's source is `T::native_dtype()`, so it reads only the bytes of
            //   `T`'s stored fields, which are initialized (NpyRecord's contract), never
            //   padding or skipped fields.
            unsafe { plan.run_raw(records, count, dst, k * per_piece) }?;
            Ok(len)
        };
        Pieces {
            count: total.div_ceil(per_piece),
            len: per_piece.min(total) * ds,
            rewritten: false,
            fill: Box::new(fill),
        }
    }

    /// Elements whose memory is their written layout but for padding and byte order
    /// (`plan` is in place: every field where it is written, e.g. an `#[npy(align)]`
    /// struct without skipped fields, or any type written in the other byte order): whole
    /// records are copied into cache-sized buffers (of about `piece_bytes`), the padding
    /// bytes (the plan's source gaps, which Rust leaves uninitialized) are zeroed there,
    /// byte orders are swapped in place. A plan that swaps every byte of an element (`f64`
    /// as `>f8`) swaps while it copies. Padding is never read.
    fn in_place<T: NpyRecord>(plan: &'a Plan, data: &'a [T], piece_bytes: usize) -> Pieces<'a> {
        let gaps = plan.src_gaps();
        let size = std::mem::size_of::<T>();
        let per_piece = (piece_bytes / size.max(1)).max(1);
        let swap_unit = plan.whole_swap_unit().filter(|_| gaps.is_empty());
        let identity = plan.is_identity();
        let (src, total) = (RecordBytes::of(data), data.len());
        let fill = move |k: usize, buf: &mut PieceBuf| {
            let len = per_piece.min(total - k * per_piece) * size;
            let dst = &mut buf.bytes_mut()[..len];
            if let Some(unit) = swap_unit {
                // SAFETY:
                // - the plan swaps every byte of the element and its source, `T`'s native
                //   dtype, has no gaps: every byte of a `T` is a byte of a stored field,
                //   initialized in a valid `T` and unchanged while `data` is borrowed (no
                //   skipped fields: checked by `of`);
                // - the range is whole elements inside `data` (checked by `bytes`).
                let records = unsafe { src.bytes(k * per_piece * size, len) };
                crate::scalar::swap_units_into(records, dst, unit);
                return Ok(len);
            }
            let records = src.at(k * per_piece * size, len);
            // SAFETY:
            // - `records` is valid for reads of `len` bytes, whole elements inside `data`
            //   (checked by `at`), borrowed for the pieces' lifetime; no byte of them
            //   changes meanwhile: they are stored fields and padding (see `buffer`'s
            //   module doc);
            // - outside `gaps`, the bytes of an element are bytes of fields of
            //   `T::native_dtype()` (the plan's source, whose gaps these are),
            //   initialized in a valid `T`.
            unsafe { buf.copy_records(records, len, size, &gaps) };
            if !identity {
                plan.run_in_place(&mut buf.bytes_mut()[..len], k * per_piece)?;
            }
            Ok(len)
        };
        Pieces {
            count: total.div_ceil(per_piece),
            len: per_piece.min(total) * size,
            rewritten: true,
            fill: Box::new(fill),
        }
    }
}

/// Writes elements whose memory is their written layout but for padding and byte order
/// ([`Pieces::in_place`]) in pieces of about `piece_bytes`. Large inputs are made on a
/// second thread while this one writes, so the copy costs no time when a core is free.
#[cfg(test)]
fn write_in_place<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    plan: &Plan,
    data: &[T],
    piece_bytes: usize,
) -> Result<()> {
    let p = Pieces::in_place(plan, data, piece_bytes);
    write_pieces(writer, 0, p.count, p.len, p.rewritten, p.fill)
}

/// Writes elements converted by `plan` ([`Pieces::converted`]) in pieces of about
/// `piece_bytes`.
#[cfg(test)]
fn write_converted<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    plan: &Plan,
    data: &[T],
    piece_bytes: usize,
) -> Result<()> {
    let p = Pieces::converted(plan, data, piece_bytes);
    write_pieces(writer, 0, p.count, p.len, p.rewritten, p.fill)
}

/// Runs `f` on a thread and waits at most a minute for it, so a test of a side that fails
/// fails instead of hanging when the other side is left waiting on a channel (the piece
/// maker of [`write_pieces`], the writer of `Appender::append_batches`).
#[cfg(test)]
pub(crate) fn bounded<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Ok(r)) => r,
        Ok(Err(payload)) => std::panic::resume_unwind(payload),
        Err(_) => panic!("did not return within a minute (a thread waits forever?)"),
    }
}

thread_local! {
    /// The piece buffers of this thread's last [`write_pieces`], kept for its next one
    /// (an append's next batch): fresh buffers cost a page fault every 4 KiB. At most
    /// [`WRITE_BUFFERS`] of at most [`WRITE_PIECE`] bytes.
    static SPARE_PIECES: RefCell<Vec<PieceBuf>> = const { RefCell::new(Vec::new()) };
}

/// `n` buffers of `len` bytes, this thread's spares first: zeroed, or, when `rewritten`
/// (each fill writes every byte it returns, padding included), as the last write left them.
fn take_pieces(n: usize, len: usize, rewritten: bool) -> Vec<PieceBuf> {
    let mut spare = SPARE_PIECES.with(|s| std::mem::take(&mut *s.borrow_mut()));
    spare.retain(|b| b.bytes().len() == len);
    spare.truncate(n);
    if !rewritten {
        spare.iter_mut().for_each(|b| b.bytes_mut().fill(0));
    }
    while spare.len() < n {
        spare.push(PieceBuf::zeroed(len));
    }
    spare
}

/// Keeps `buffers` as this thread's spares.
fn keep_pieces(mut buffers: Vec<PieceBuf>) {
    buffers.truncate(WRITE_BUFFERS);
    SPARE_PIECES.with(|s| *s.borrow_mut() = buffers);
}

/// Writes `pieces` pieces of at most `piece_len` bytes, piece `k` made by `fill(k, buf)`
/// in a buffer of `piece_len` bytes (it returns the piece's length). With 8 pieces or more
/// and a second CPU, pieces are made on a second thread while this one writes (up to
/// [`WRITE_BUFFERS`] in flight), so making them costs no time.
///
/// Buffers start zeroed, unless `rewritten` says `fill` writes every byte of its piece
/// (then they may be this thread's spares as the last write left them); the first `len`
/// bytes of a filled buffer are written.
///
/// `at` is the writer's offset in its file: each write but the last ends on a [`PAGE`]
/// boundary of the file ([`PageWrites`]). Any value is correct (0 when unknown); a wrong
/// one only costs that speed.
fn write_pieces<W: Write + ?Sized>(
    writer: &mut W,
    at: u64,
    pieces: usize,
    piece_len: usize,
    rewritten: bool,
    fill: impl Fn(usize, &mut PieceBuf) -> Result<usize> + Sync,
) -> Result<()> {
    let mut out = PageWrites::new(writer, at);
    if pieces < 8 || !crate::two_cpus() {
        let mut buffers = take_pieces(1, piece_len, rewritten);
        for k in 0..pieces {
            let len = fill(k, &mut buffers[0])?;
            out.write(&buffers[0].bytes()[..len], k + 1 == pieces)?;
        }
        keep_pieces(buffers);
        return Ok(());
    }
    type Piece = (PieceBuf, Result<usize>);
    let fill = &fill;
    let spare = std::thread::scope(|scope| {
        // Every channel end lives inside this closure, so returning from it, by an early
        // `?` too, drops this thread's ends before the scope joins the other thread: its
        // `recv` and `send` then fail and it returns. Its own ends go with it when it
        // returns (or panics), which wakes this thread's `recv` in turn.
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Piece>(WRITE_BUFFERS);
        let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<PieceBuf>(WRITE_BUFFERS);
        for buf in take_pieces(WRITE_BUFFERS, piece_len, rewritten) {
            empty_tx.send(buf).map_err(|_| Error::usage("the buffer channel closed"))?;
        }
        scope.spawn(move || {
            for k in 0..pieces {
                let Ok(mut buf) = empty_rx.recv() else { return };
                let made = fill(k, &mut buf);
                let failed = made.is_err();
                if full_tx.send((buf, made)).is_err() || failed {
                    return;
                }
            }
        });
        // The other thread takes `pieces` buffers: the first ones, then one back for
        // each piece written but the last few, which stay here as spares.
        let mut spare = Vec::with_capacity(WRITE_BUFFERS);
        for k in 0..pieces {
            let (buf, made) = full_rx.recv().map_err(|_| Error::usage("the thread making pieces stopped"))?;
            out.write(&buf.bytes()[..made?], k + 1 == pieces)?;
            if k + WRITE_BUFFERS < pieces {
                // Fails only once the other thread has returned, which needs no more buffers.
                let _ = empty_tx.send(buf);
            } else {
                spare.push(buf);
            }
        }
        Ok::<_, Error>(spare)
    })?;
    keep_pieces(spare);
    Ok(())
}

/// Bytes written to a file at a known offset so that each write but the last ends on a
/// [`PAGE`] boundary: what follows the last boundary in a piece is kept (fewer than
/// [`PAGE`] bytes, copied) and written ahead of the next piece, in one `write_vectored`;
/// the last piece is written whole, so a write of one piece copies nothing.
struct PageWrites<'w, W: Write + ?Sized> {
    writer: &'w mut W,
    /// The file offset of `carry`'s first byte.
    at: u64,
    carry: Vec<u8>,
}

impl<'w, W: Write + ?Sized> PageWrites<'w, W> {
    fn new(writer: &'w mut W, at: u64) -> Self {
        PageWrites { writer, at, carry: Vec::new() }
    }

    /// Writes `carry` and `piece`: all of them when `last`, else up to the last page
    /// boundary they reach, keeping the rest.
    fn write(&mut self, piece: &[u8], last: bool) -> io::Result<()> {
        let end = self.at + (self.carry.len() + piece.len()) as u64;
        let boundary = if last { end } else { end - end % PAGE };
        let carried = self.at + self.carry.len() as u64;
        if boundary <= carried && !last {
            // No boundary inside `piece` (only pieces smaller than a page): keep it all.
            self.carry.extend_from_slice(piece);
            return Ok(());
        }
        let (head, rest) = piece.split_at((boundary - carried) as usize);
        write_all_two(self.writer, &self.carry, head)?;
        self.carry.clear();
        self.carry.extend_from_slice(rest);
        self.at = boundary;
        Ok(())
    }
}

/// Writes all of `first`, then all of `second`, in as few `write_vectored` calls as the
/// writer allows (one `writev` for a file).
fn write_all_two<W: Write + ?Sized>(writer: &mut W, first: &[u8], second: &[u8]) -> io::Result<()> {
    let mut slices = [io::IoSlice::new(first), io::IoSlice::new(second)];
    let mut slices = &mut slices[..];
    io::IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match writer.write_vectored(slices) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "failed to write whole buffer")),
            Ok(n) => io::IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes records one by one or in batches when their number is not known in advance, and
/// fixes the shape in the header on [`NpyWriter::finish`].
///
/// The header is written first with room for any length (NumPy's growth-axis spaces), so
/// finishing rewrites it in place: the file is exactly what `np.save` writes for the same
/// array. Needs `Seek`; see [`NpyFileWriter`] for an atomic file on a path.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::{prelude::*, NpyWriter};
///
/// let mut w = NpyWriter::<f32, _>::new(Cursor::new(Vec::new()))?;
/// for i in 0..5 {
///     w.push(&(i as f32))?;
/// }
/// w.extend(&[10.0, 11.0])?;
/// let bytes = w.finish()?.into_inner();
/// assert_eq!(bytes, (0..5).map(|i| i as f32).chain([10.0, 11.0]).collect::<Vec<_>>().write_npy_to(Vec::new())?);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug)]
pub struct NpyWriter<T, W: Write + Seek> {
    writer: W,
    start: u64,
    header_len: usize,
    version: Version,
    count: usize,
    /// The dtype written: `T::dtype()`, in the byte order the options asked for.
    dtype: DType,
    plan: Plan,
    _marker: PhantomData<fn(&T)>,
}

impl<T: NpyRecord, W: Write + Seek> NpyWriter<T, W> {
    /// Starts an array of `T` at the writer's current position.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
    pub fn new(writer: W) -> Result<Self> {
        NpyWriter::with_options(writer, &WriteOptions::default())
    }

    /// Starts an array of `T` at the writer's current position, written as `options` say
    /// (a forced version, a byte order; `sync` is for paths: see [`NpyFileWriter`]).
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer;
    /// [`ErrorKind::Usage`](crate::ErrorKind::Usage) when the header does not fit a forced
    /// version.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::dtype::ByteOrder;
    /// use npy_core::{prelude::*, NpyWriter, WriteOptions};
    ///
    /// let mut w = NpyWriter::<u32, _>::with_options(Cursor::new(Vec::new()), WriteOptions::new().byte_order(ByteOrder::Big))?;
    /// w.extend(&[1, 2])?;
    /// let file = w.finish()?.into_inner();
    /// let array = DynArray::read_npy_from(&file[..])?;
    /// assert_eq!(array.header().dtype.descr(), "'>u4'");
    /// assert_eq!(array.to_vec::<u32>()?, [1, 2]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn with_options(mut writer: W, options: &WriteOptions) -> Result<Self> {
        let start = writer.stream_position()?;
        let (header, plan) = typed_plan::<T>(Header::new(T::dtype(), vec![0]), options)?;
        let (version, head) = header.encode(options.forced_version())?;
        writer.write_all(&head)?;
        Ok(NpyWriter {
            writer,
            start,
            header_len: head.len(),
            version,
            count: 0,
            dtype: header.dtype,
            plan,
            _marker: PhantomData,
        })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
    pub fn push(&mut self, record: &T) -> Result<()> {
        self.extend(std::slice::from_ref(record))
    }

    /// Appends records.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
    pub fn extend(&mut self, records: &[T]) -> Result<()> {
        let at = self.start + (self.header_len + self.count * self.plan.dst_size()) as u64;
        write_with_plan(&mut self.writer, at, &self.plan, records)?;
        self.count += records.len();
        Ok(())
    }

    /// Records written so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no record was written yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Writes the final shape into the header and returns the writer, positioned after
    /// the data.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
    pub fn finish(mut self) -> Result<W> {
        let (_, head) = Header::new(self.dtype.clone(), vec![self.count]).encode(Some(self.version))?;
        if head.len() != self.header_len {
            return Err(Error::usage("the header grew while writing (more than 10^21 records?)"));
        }
        let end = self.writer.stream_position()?;
        self.writer.seek(SeekFrom::Start(self.start))?;
        self.writer.write_all(&head)?;
        self.writer.seek(SeekFrom::Start(end))?;
        self.writer.flush()?;
        Ok(self.writer)
    }
}

/// An [`NpyWriter`] to a path, atomic (see [`crate::atomic`]): records go to a new file in
/// the same directory, which replaces `path` only when [`NpyFileWriter::finish`] succeeds.
/// Dropped without `finish` (or killed), it leaves no file behind and any old file
/// untouched. Errors name `path`.
///
/// # Examples
/// ```
/// use npy_core::{prelude::*, NpyFileWriter};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("stream.npy");
/// let mut w = NpyFileWriter::<u16>::create(&path)?;
/// w.extend(&[1, 2, 3])?;
/// w.finish()?;
/// assert_eq!(Vec::<u16>::read_npy(&path)?, [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NpyFileWriter<T: NpyRecord> {
    inner: NpyWriter<T, io::BufWriter<AtomicFile>>,
    path: std::path::PathBuf,
    sync: bool,
}

impl<T: NpyRecord> NpyFileWriter<T> {
    /// Starts writing an array of `T` to `path`.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) when the file cannot be created (the
    /// directory does not exist or is not writable).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        NpyFileWriter::create_with(path, &WriteOptions::default())
    }

    /// Starts writing an array of `T` to `path` as `options` say: a forced version, a
    /// byte order, whether [`NpyFileWriter::finish`] syncs.
    ///
    /// # Errors
    /// As [`NpyFileWriter::create`]; [`ErrorKind::Usage`](crate::ErrorKind::Usage) when the
    /// header does not fit a forced version.
    pub fn create_with(path: impl AsRef<Path>, options: &WriteOptions) -> Result<Self> {
        let path = path.as_ref();
        let start = || {
            let file = io::BufWriter::with_capacity(1 << 20, AtomicFile::create(path)?);
            NpyWriter::with_options(file, options)
        };
        let inner = start().map_err(|e| e.writing(path))?;
        Ok(NpyFileWriter { inner, path: path.to_path_buf(), sync: options.syncs() })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io), naming the path.
    pub fn push(&mut self, record: &T) -> Result<()> {
        self.inner.push(record).map_err(|e| e.writing(&self.path))
    }

    /// Appends records.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io), naming the path.
    pub fn extend(&mut self, records: &[T]) -> Result<()> {
        self.inner.extend(records).map_err(|e| e.writing(&self.path))
    }

    /// Records written so far.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when no record was written yet.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Fixes the header and moves the file into place.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io); the target is untouched then.
    pub fn finish(self) -> Result<()> {
        let (path, sync) = (self.path, self.sync);
        let finish = || self.inner.finish()?.into_inner().map_err(|e| Error::from(e.into_error()))?.commit(sync);
        finish().map_err(|e| e.writing(&path))
    }

    /// Whether [`NpyFileWriter::finish`] syncs the file and its directory; see
    /// [`WriteOptions::sync`]. Default: `true`.
    pub fn sync(&mut self, sync: bool) -> &mut Self {
        self.sync = sync;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// The side that makes pieces failing (at the first, a middle or the last piece) ends
    /// the write with its error, with 8 pieces (the threshold of the second thread) and
    /// more; the pieces before it are written (pages: each is written as it comes).
    #[test]
    fn a_failing_piece_maker_ends_the_write_with_its_error() {
        const P: usize = PAGE as usize;
        for pieces in [8, 14] {
            for bad in [0, pieces / 2, pieces - 1] {
                let mut out = Vec::new();
                let e = write_pieces(&mut out, 0, pieces, P, false, |k, buf| {
                    if k == bad {
                        return Err(Error::usage(format!("piece {k} cannot be made")));
                    }
                    buf.bytes_mut().fill(k as u8);
                    Ok(P)
                })
                .unwrap_err();
                assert_eq!(e.to_string(), format!("piece {bad} cannot be made"));
                let want: Vec<u8> = (0..bad).flat_map(|k| [k as u8; P]).collect();
                assert_eq!(out, want, "{pieces} pieces, failing at {bad}");
            }
        }
    }

    /// The writer failing (at the first, a middle or the last piece) ends the write with
    /// its error, just below the threshold of the second thread (7 pieces), at it (8) and
    /// above (14): the thread making pieces, waiting on a full channel, stops.
    #[test]
    fn a_failing_writer_ends_the_write_with_its_error() {
        const P: usize = PAGE as usize;
        for pieces in [7, 8, 14] {
            for bad in [0, pieces / 2, pieces - 1] {
                let mut out = FailAfter { limit: bad * P, written: 0 };
                let e = write_pieces(&mut out, 0, pieces, P, false, |k, buf| {
                    buf.bytes_mut().fill(k as u8);
                    Ok(P)
                })
                .unwrap_err();
                assert!(matches!(e.kind(), crate::ErrorKind::Io(_)), "{pieces} pieces, failing at {bad}: {e}");
                assert_eq!(out.written, bad * P);
            }
        }
    }

    /// Either side failing while a piece's tail is carried to the next write (the data
    /// starting mid-page), with the least that starts the second thread (8 pieces) and one
    /// more: the writer failing at its first, a middle or its last call, and the piece
    /// maker failing at the first, a middle or the last piece. Each ends the write with
    /// that side's error within the bound, having written the whole page-ending writes
    /// before it.
    #[test]
    fn either_side_failing_under_a_carried_tail_ends_the_write() {
        const P: usize = PAGE as usize;
        let want: Vec<u8> = (0..9).flat_map(|k| [k as u8; P]).collect();
        for pieces in [8, 9] {
            for bad in [0, pieces / 2, pieces] {
                // The writes end at data offsets 3,996 + j * 4,096 (file offsets 4,096 (j + 1)),
                // the last one at the end: the writer fails at the first, the one ending at
                // `bad` pieces less the carried 100 bytes, or the last.
                let ends: Vec<usize> = (0..pieces - 1).map(|j| 3996 + j * P).chain([pieces * P]).collect();
                let limit = if bad == pieces { pieces * P - 1 } else { (bad * P).saturating_sub(100) };
                let before = ends.iter().copied().filter(|&e| e <= limit).max().unwrap_or(0);
                let written = bounded(move || {
                    let mut out = FailAfter { limit, written: 0 };
                    let e = write_pieces(&mut out, 100, pieces, P, false, |k, buf| {
                        buf.bytes_mut().fill(k as u8);
                        Ok(P)
                    })
                    .unwrap_err();
                    assert!(matches!(e.kind(), crate::ErrorKind::Io(_)), "{pieces} pieces, writer failing: {e}");
                    out.written
                });
                assert_eq!(written, before, "{pieces} pieces, writer failing at {bad}");
                let (maker_bad, want) = (bad.min(pieces - 1), want.clone());
                bounded(move || {
                    let mut out = Vec::new();
                    let e = write_pieces(&mut out, 100, pieces, P, false, |k, buf| {
                        if k == maker_bad {
                            return Err(Error::usage(format!("piece {k} cannot be made")));
                        }
                        buf.bytes_mut().fill(k as u8);
                        Ok(P)
                    })
                    .unwrap_err();
                    assert_eq!(e.to_string(), format!("piece {maker_bad} cannot be made"));
                    // The pieces before the bad one, but for the tail carried to the next write.
                    assert_eq!(
                        out,
                        want[..(maker_bad * P).saturating_sub(100)],
                        "{pieces} pieces, failing at {maker_bad}"
                    );
                });
            }
        }
    }

    /// Pieces of any length written from any offset: every write but the last ends on a
    /// page boundary of the file, the bytes are the pieces' in order, whichever path wrote
    /// them (one thread: 5 pieces; two: 40), through a writer that takes at most 1,000
    /// bytes a call (each call's slices then continue where the last call stopped).
    #[test]
    fn pieces_are_written_in_writes_that_end_on_page_boundaries() {
        let lengths = |k: usize| [5000, 1, 4095, 4096, 12_345, 300, 8192][k % 7];
        for (at, pieces, most) in [(0, 5, usize::MAX), (384, 40, usize::MAX), (4095, 40, 1000), (77, 5, 1000)] {
            let mut out = Calls { at, most, bytes: Vec::new(), ends: Vec::new() };
            write_pieces(&mut out, at, pieces, 12_345, true, |k, buf| {
                let len = lengths(k);
                buf.bytes_mut()[..len].iter_mut().enumerate().for_each(|(i, b)| *b = (k * 7 + i) as u8);
                Ok(len)
            })
            .unwrap();
            let want: Vec<u8> = (0..pieces).flat_map(|k| (0..lengths(k)).map(move |i| (k * 7 + i) as u8)).collect();
            assert_eq!(out.bytes, want, "from {at}, {pieces} pieces");
            let (last, ends) = out.ends.split_last().unwrap();
            assert_eq!(*last, at + want.len() as u64);
            if most == usize::MAX {
                assert!(ends.iter().all(|e| e % PAGE == 0), "from {at}: write ends {ends:?}");
                assert!(out.ends.len() < pieces + 1, "from {at}: {} writes of {pieces} pieces", out.ends.len());
            }
        }
    }

    /// A writer that records its bytes and where each call ended (starting at file offset
    /// `at`), taking at most `most` bytes a call.
    #[derive(Debug)]
    struct Calls {
        at: u64,
        most: usize,
        bytes: Vec<u8>,
        ends: Vec<u64>,
    }

    impl Write for Calls {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[io::IoSlice::new(buf)])
        }

        fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            let mut room = self.most;
            for b in bufs {
                let take = b.len().min(room);
                self.bytes.extend_from_slice(&b[..take]);
                room -= take;
            }
            let n = self.most - room;
            self.ends.push(self.at + self.bytes.len() as u64);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Spare buffers are reused on this thread: as the last write left them when the
    /// fill rewrites every byte, zeroed again when it does not; and the spares a write
    /// keeps are its last buffers, whichever path wrote (one thread or two).
    #[test]
    fn spare_pieces_are_zeroed_for_fills_that_leave_bytes() {
        for pieces in [3, 8, 14] {
            let mut out = Vec::new();
            write_pieces(&mut out, 0, pieces, 64, false, |_, buf| {
                buf.bytes_mut().fill(0xff);
                Ok(64)
            })
            .unwrap();
            assert_eq!(out, vec![0xff; 64 * pieces]);
            let mut out = Vec::new();
            write_pieces(&mut out, 0, pieces, 64, false, |k, buf| {
                buf.bytes_mut()[..32].fill(k as u8);
                Ok(64)
            })
            .unwrap();
            let want: Vec<u8> = (0..pieces).flat_map(|k| [vec![k as u8; 32], vec![0; 32]].concat()).collect();
            assert_eq!(out, want, "{pieces} pieces");
            // Rewritten fills see the spares as they were (never read here: written over).
            let kept = SPARE_PIECES.with(|s| s.borrow().len());
            assert_eq!(kept, if pieces < 8 { 1 } else { WRITE_BUFFERS });
            let seen = std::sync::Mutex::new(Vec::new());
            let mut out = Vec::new();
            write_pieces(&mut out, 0, 1, 64, true, |_, buf| {
                *seen.lock().unwrap() = buf.bytes().to_vec();
                Ok(0)
            })
            .unwrap_or_else(|e| panic!("{e}"));
            let seen = seen.into_inner().unwrap();
            assert_eq!(seen.len(), 64);
            assert!(seen[..32].iter().all(|&b| b != 0xff) && seen[32..].iter().all(|&b| b == 0));
        }
    }

    /// A writer that fails after `limit` bytes.
    #[derive(Debug)]
    struct FailAfter {
        limit: usize,
        written: usize,
    }

    impl Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[io::IoSlice::new(buf)])
        }

        /// All of the slices or none, as one call.
        fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            let len = bufs.iter().map(|b| b.len()).sum::<usize>();
            if self.written + len > self.limit {
                return Err(io::Error::other("disk full"));
            }
            self.written += len;
            Ok(len)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        [1.0f64, 2.0].write_npy(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = to_path(&path, b"partial", true, |_| Err(Error::usage("boom")));
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("a.npy")]);
        let e = [1u8; 1000].write_npy_to(FailAfter { limit: 200, written: 0 }).unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Io(_)), "{e}");
    }

    /// A record with padding after `a` and after `c` (NumPy's `align=True` layout).
    #[cfg(feature = "derive")]
    #[derive(crate::NpyRecord)]
    #[npy(crate = "crate", align)]
    #[repr(C)]
    struct Padded {
        a: u8,
        b: u32,
        c: u16,
    }

    /// Padded (`write_in_place`) and converted (`write_converted`) records written a few at a
    /// time: 14 pieces, which `write_pieces` makes on its thread when there is a second CPU
    /// (under Miri: `-Zmiri-num-cpus=2`, as `cargo xtask miri` runs it). The bytes are those
    /// of one piece, and a writer failing midway ends the write with its error.
    #[cfg(feature = "derive")]
    #[test]
    fn records_written_in_small_pieces_are_those_of_one_piece() {
        #[derive(crate::NpyRecord)]
        #[npy(crate = "crate", endian = "big")]
        struct Swapped {
            a: u16,
            b: f64,
            flag: bool,
        }
        let n = 40u16;

        let padded: Vec<Padded> = (0..n).map(|i| Padded { a: i as u8, b: u32::from(i) * 1000, c: i + 7 }).collect();
        let plan = element_plan::<Padded>().unwrap();
        assert!(plan.is_identity() && !plan.covers_all_src());
        let size = std::mem::size_of::<Padded>();
        let (mut one, mut pieces) = (Vec::new(), Vec::new());
        write_with_plan(&mut one, 0, &plan, &padded).unwrap();
        write_in_place(&mut pieces, &plan, &padded, 3 * size).unwrap();
        let want: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut r = vec![i as u8, 0, 0, 0];
                r.extend((u32::from(i) * 1000).to_ne_bytes());
                r.extend((i + 7).to_ne_bytes());
                r.extend([0, 0]);
                r
            })
            .collect();
        assert_eq!(one, want);
        assert_eq!(pieces, want);
        let e = write_in_place(&mut FailAfter { limit: 10 * size, written: 0 }, &plan, &padded, 3 * size);
        assert!(matches!(e.unwrap_err().kind(), crate::ErrorKind::Io(_)));

        let swapped: Vec<Swapped> = (0..n).map(|i| Swapped { a: i, b: f64::from(i) / 4.0, flag: i % 3 == 0 }).collect();
        let plan = element_plan::<Swapped>().unwrap();
        assert!(!plan.is_identity());
        let (mut one, mut pieces) = (Vec::new(), Vec::new());
        write_with_plan(&mut one, 0, &plan, &swapped).unwrap();
        write_converted(&mut pieces, &plan, &swapped, 3 * plan.dst_size()).unwrap();
        let want: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut r = i.to_be_bytes().to_vec();
                r.extend((f64::from(i) / 4.0).to_be_bytes());
                r.push(u8::from(i % 3 == 0));
                r
            })
            .collect();
        assert_eq!(one, want);
        assert_eq!(pieces, want);
        let e = write_converted(&mut FailAfter { limit: 50, written: 0 }, &plan, &swapped, 3 * plan.dst_size());
        assert!(matches!(e.unwrap_err().kind(), crate::ErrorKind::Io(_)));
    }

    /// Records written in the other byte order, a few at a time (14 pieces: on the second
    /// thread when there is a second CPU): `f64`s swapped while copied, padded records
    /// copied with zeroed padding and swapped in place; the bytes are those of one piece.
    #[cfg(feature = "derive")]
    #[test]
    fn other_byte_order_written_in_small_pieces() {
        let be = |dtype: &DType| dtype.with_byte_order(crate::dtype::ByteOrder::Big);
        let values: Vec<f64> = (0..40).map(|i| f64::from(i) * 1.25 - 3.0).collect();
        let plan = Plan::new(&f64::dtype(), &be(&f64::dtype())).unwrap();
        assert_eq!(plan.whole_swap_unit(), Some(8));
        let (mut one, mut pieces) = (Vec::new(), Vec::new());
        write_with_plan(&mut one, 0, &plan, &values).unwrap();
        write_in_place(&mut pieces, &plan, &values, 3 * 8).unwrap();
        let want: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!((one, pieces), (want.clone(), want));

        let padded: Vec<Padded> = (0..40u16).map(|i| Padded { a: i as u8, b: u32::from(i) << 20, c: i + 7 }).collect();
        let plan = Plan::new(&Padded::native_dtype(), &be(&Padded::dtype())).unwrap();
        assert!(plan.in_place() && !plan.is_identity() && plan.whole_swap_unit().is_none());
        let size = std::mem::size_of::<Padded>();
        let (mut one, mut pieces) = (Vec::new(), Vec::new());
        write_with_plan(&mut one, 0, &plan, &padded).unwrap();
        write_in_place(&mut pieces, &plan, &padded, 3 * size).unwrap();
        let want: Vec<u8> = (0..40u16)
            .flat_map(|i| {
                [
                    vec![i as u8, 0, 0, 0],
                    (u32::from(i) << 20).to_be_bytes().to_vec(),
                    (i + 7).to_be_bytes().to_vec(),
                    vec![0, 0],
                ]
                .concat()
            })
            .collect();
        assert_eq!((one, pieces), (want.clone(), want));
        let e = write_in_place(&mut FailAfter { limit: 10 * size, written: 0 }, &plan, &padded, 3 * size);
        assert!(matches!(e.unwrap_err().kind(), crate::ErrorKind::Io(_)));
    }

    /// A skipped field may change while its record is written (an atomic counter another
    /// thread updates): its bytes are never read, only the stored fields' (under Miri, a
    /// read of the counter would be reported as a data race). The written bytes are those
    /// of the stored fields, with zeros where the skipped field lies.
    #[cfg(feature = "derive")]
    #[test]
    fn skipped_fields_are_never_read_while_written() {
        use std::sync::atomic::{AtomicU32, Ordering};
        #[derive(crate::NpyRecord)]
        #[npy(crate = "crate", align)]
        #[repr(C)]
        struct Counted {
            id: u32,
            #[npy(skip)]
            hits: AtomicU32,
            value: u64,
        }
        let records: Vec<Counted> =
            (0..20u32).map(|i| Counted { id: i, hits: AtomicU32::new(0), value: u64::from(i) << 40 }).collect();
        let want: Vec<u8> = (0..20u32)
            .flat_map(|i| [&i.to_ne_bytes()[..], &[0; 4], &(u64::from(i) << 40).to_ne_bytes()].concat())
            .collect();
        let plan = element_plan::<Counted>().unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for r in &records {
                    r.hits.fetch_add(1, Ordering::Relaxed);
                }
            });
            let mut out = Vec::new();
            write_with_plan(&mut out, 0, &plan, &records).unwrap();
            assert_eq!(out, want);
        });
    }

    #[test]
    fn forced_version_that_does_not_fit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let arr = DynArray::new(Header::new("[('温', '<f4')]".parse().unwrap(), vec![1]), vec![0; 4]).unwrap();
        let e = arr.write_npy_with(dir.path().join("x.npy"), WriteOptions::new().version(Version::V1_0)).unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Usage { .. }), "{e}");
        assert!(!dir.path().join("x.npy").exists());
    }
}
