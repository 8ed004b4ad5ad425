//! Writing `.npy` data to paths (atomically) and to any [`io::Write`].

use std::cell::RefCell;
use std::io::{self, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::atomic::AtomicFile;
use crate::buffer::{self, PieceBuf, RecordBytes};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Version};
use crate::options::WriteOptions;
use crate::plan::Plan;
use crate::record::{native_dtype_of, NpyRecord};

/// Bytes of a piece: padded, converted or swapped records are made
/// into buffers of about this size (small enough to stay in a core's cache, large enough
/// that handing pieces between threads costs little), and written in writes that end
/// where the file offset is a multiple of it ([`Split`]). Writes of fewer than 8 pieces (an
/// append's batch of a few MiB) are made on the writing thread: starting a second one for
/// them costs more than the copy it would take over (100 appends of 3 MB: 0.145 s with
/// one, 0.115 s without; one write of the same records 0.111 s).
///
/// Why the ends, as measured: 1,216 MB made on a second thread in 1 MiB pieces
/// (medians of 7 interleaved runs, in four runs of a probe): writes ending on 1 MiB offsets
/// 0.217-0.237 s; the same pieces ending on 4 KiB offsets (the tail carried into the next
/// write) 0.256 s; whole-record pieces ending anywhere 0.242-0.269 s; one `write` of it
/// all from the caller's memory 0.234-0.253 s (one CPU copies it all). The likely cause:
/// the page cache (ext4 on Linux 6.18 here) builds a file of large folios where writes
/// start on boundaries as large as they are, and of small ones where they do not.
const WRITE_PIECE: usize = 1 << 20;
/// Buffers of [`write_pieces`]'s second thread: up to this many pieces are in flight (the
/// writing thread has one more, for pieces it makes itself).
const WRITE_BUFFERS: usize = 8;
/// Buffers [`write_pieces`] hands back at a time to the thread making pieces, which sleeps
/// whenever it is [`WRITE_BUFFERS`] pieces ahead: each hand-off may wake it, and waking a
/// CPU of a virtual machine can take long while its host is busy. A batch wakes it once
/// for several pieces.
const RETURN_BATCH: usize = 4;
/// How long [`write_pieces`] waits at least and at most for a piece its second thread is
/// making before making it on the writing thread: twice what making one there took, within
/// these bounds ([`PATIENCE_FIRST`] before it has made one). Made in time, a piece costs
/// the writing thread nothing; a thread that has lost its CPU (to another process, or to
/// the host of a virtual machine) may not run again for milliseconds.
const PATIENCE: Range<Duration> = Duration::from_micros(200)..Duration::from_millis(10);
/// [`PATIENCE`] before the writing thread has made a piece.
const PATIENCE_FIRST: Duration = Duration::from_millis(1);
/// The least number of pieces [`write_pieces`] makes on a second thread.
const THREAD_PIECES: usize = 8;
/// Where each write's bytes lie in memory, relative to where they go in the file: this
/// many bytes past the file offset's place in a [`PAGE`] ([`Split::place`]). The kernel's
/// copy into the page cache is that much faster from there: 1 GiB in 1 MiB writes from a
/// buffer in cache, 9 runs each (best/median): 16 bytes past 0.155-0.158/0.157-0.162 s,
/// 48 past the same; 0 or 32 past (what a page-aligned allocator or an odd record length
/// would give) 0.165-0.170/0.167-0.174 s; 16 bytes before 0.448/0.486 s.
const SRC_AHEAD: usize = 16;
/// The page size the placement counts in.
const PAGE: usize = 4096;

/// Not public API (see [`crate::WriteNpy`]'s hidden method): an array's `.npy` bytes as an
/// npz member takes them, `len` bytes that `write` writes, header first. The npz writer
/// needs the length before the bytes (a stored member of 4 GiB or more needs zip64
/// records up front) and may run `write` on a staging buffer for its worker threads.
#[doc(hidden)]
pub struct NpyBytes<'a> {
    pub(crate) len: u64,
    pub(crate) write: WriteBody<'a>,
}

/// What writes an [`NpyBytes`]' bytes.
type WriteBody<'a> = Box<dyn FnOnce(&mut dyn Write) -> Result<()> + 'a>;

impl std::fmt::Debug for NpyBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpyBytes").field("len", &self.len).finish_non_exhaustive()
    }
}

impl<'a> NpyBytes<'a> {
    pub(crate) fn new(len: u64, write: impl FnOnce(&mut dyn Write) -> Result<()> + 'a) -> Self {
        NpyBytes { len, write: Box::new(write) }
    }
}

/// The `.npy` bytes of typed data under `header` (its dtype `T`'s), for an npz member:
/// written in the options' byte order, in one `write_all` when no conversion is needed.
pub(crate) fn typed_bytes<'a, T: NpyRecord>(
    header: Header,
    data: &'a [T],
    opts: &WriteOptions,
) -> Result<NpyBytes<'a>> {
    let (header, plan) = typed_plan::<T>(header, opts)?;
    let (_, head) = header.encode(opts.forced_version())?;
    let len = head.len() as u64 + header.data_len()? as u64;
    Ok(NpyBytes::new(len, move |w| {
        w.write_all(&head)?;
        write_with_plan(w, 0, &plan, data)
    }))
}

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

/// Writes `data`, the data of a [`crate::DynArray`], as `plan` converts it, or as it is
/// (in one `write_all`: see [`write_with_plan`]); `at` is the writer's offset in its file,
/// if known (else 0: see [`Split::new`]).
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
    let split = Split::new(data.len() / ss, ds, at, WRITE_PIECE);
    // Zeroed buffers (`rewritten: false`), each piece's elements made from the buffer's
    // start, so at the same places every time: the plan never writes padding, which stays
    // zero.
    write_pieces(writer, split, false, |units, buf, at| {
        let src = &data[units.start * ss..units.end * ss];
        plan.run(src, &mut buf.bytes_mut()[at..][..units.len() * ds], units.start)
    })
}

/// The plan from `T`'s memory to its written layout.
pub(crate) fn element_plan<T: NpyRecord>() -> Result<Plan> {
    Plan::new(&native_dtype_of::<T>()?, &T::dtype())
}

/// `data`'s bytes as they are when `T`'s memory is its written layout, in one
/// `write_all` from the caller's memory, as `np.save` writes an array; records with
/// padding copied whole into pieces with their padding zeroed; else converted field by
/// field in pieces ([`write_pieces`]).
///
/// Why one write: the kernel copies the bytes into the page cache once either way, and
/// copying them first into pieces on a second thread (as npy did) read and wrote every
/// byte once more and made the threads wait on each other, for a gain only while a second
/// CPU was idle. A probe process writing 512 MiB of `<f8` six times over its last file,
/// with five NumPy-like saves between (as `write_over` in `benches/io.rs`), made 3,095
/// `write` and 6,185 `futex` calls in 4.45 s of CPU and 6,356 context switches through
/// pieces; 23 `write`s, no `futex`, 2.28 s and 374 with one write each.
///
/// `plan`'s source must be `T::native_dtype()` ([`element_plan`], [`typed_plan`]): the
/// proofs of the byte reads rest on it (a typed plan would let the compiler check it).
/// `at` is the writer's offset in its file, if known (else 0: see [`Split::new`]).
pub(crate) fn write_with_plan<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    at: u64,
    plan: &Plan,
    data: &[T],
) -> Result<()> {
    match Pieces::of(plan, data, at, WRITE_PIECE) {
        None => Ok(writer.write_all(as_written(plan, data))?),
        Some(p) => write_pieces(writer, p.split, p.rewritten, p.fill),
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
    let pieces = Pieces::of(plan, data, 0, len.max(1));
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
            debug_assert!(p.split.count() <= 1, "every record in one piece");
            if p.split.count() == 1 {
                (p.fill)(0..data.len(), &mut buf, 0)?;
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
/// the pieces of `split`, the records of each made into a buffer by `fill`; `rewritten`
/// when `fill` writes every byte of its records (else the buffer must hold zeros where the
/// plan writes nothing).
struct Pieces<'a> {
    split: Split,
    rewritten: bool,
    fill: Box<Fill<'a>>,
}

/// What makes the records of a range ([`Split::units`]) into a buffer, from a byte of it.
type Fill<'a> = dyn Fn(Range<usize>, &mut PieceBuf, usize) -> Result<()> + Sync + 'a;

impl<'a> Pieces<'a> {
    /// The pieces (of about `piece_bytes`, written from file offset `at`) of `data` written
    /// by `plan`; `None` when `data`'s memory is its written bytes ([`as_written`]).
    fn of<T: NpyRecord>(plan: &'a Plan, data: &'a [T], at: u64, piece_bytes: usize) -> Option<Pieces<'a>> {
        debug_assert_eq!(plan.src_size(), std::mem::size_of::<T>(), "a plan for another type");
        if plan.is_identity() && plan.covers_all_src() {
            return None;
        }
        let split = Split::new(if plan.dst_size() == 0 { 0 } else { data.len() }, plan.dst_size(), at, piece_bytes);
        // Records with skipped fields are never copied whole: those fields may hold
        // anything, an atomic another thread updates meanwhile included, so only the
        // stored fields are read (converted: the same bytes).
        Some(if plan.in_place() && !T::HAS_SKIPPED {
            Pieces::in_place(plan, data, split)
        } else {
            Pieces::converted(plan, data, split)
        })
    }

    /// Elements whose memory is not their written layout: records are converted by
    /// `plan` into cache-sized buffers.
    fn converted<T: NpyRecord>(plan: &'a Plan, data: &'a [T], split: Split) -> Pieces<'a> {
        let (ss, ds) = (plan.src_size(), plan.dst_size());
        let src = RecordBytes::of(data);
        let fill = move |units: Range<usize>, buf: &mut PieceBuf, at: usize| {
            let count = units.len();
            let records = src.at(units.start * ss, count * ss);
            let dst = &mut buf.bytes_mut()[at..][..count * ds];
            // SAFETY:
            // - `records` is valid for reads of `count` source elements: `count * ss`
            //   bytes inside `data` (checked by `at`), borrowed for the pieces' lifetime;
            // - the plan's source is `T::native_dtype()`, so it reads only the bytes of
            //   `T`'s stored fields, which are initialized (NpyRecord's contract), never
            //   padding or skipped fields.
            unsafe { plan.run_raw(records, count, dst, units.start) }
        };
        Pieces { split, rewritten: false, fill: Box::new(fill) }
    }

    /// Elements whose memory is their written layout but for padding and byte order
    /// (`plan` is in place: every field where it is written, e.g. an `#[npy(align)]`
    /// struct without skipped fields, or any type written in the other byte order): whole
    /// records are copied into cache-sized buffers, the padding bytes (the plan's source
    /// gaps, which Rust leaves uninitialized) are zeroed there, byte orders are swapped in
    /// place. A plan that swaps every byte of an element (`f64` as `>f8`) swaps while it
    /// copies. Padding is never read.
    fn in_place<T: NpyRecord>(plan: &'a Plan, data: &'a [T], split: Split) -> Pieces<'a> {
        let gaps = plan.src_gaps();
        let size = std::mem::size_of::<T>();
        let swap_unit = plan.whole_swap_unit().filter(|_| gaps.is_empty());
        let identity = plan.is_identity();
        let src = RecordBytes::of(data);
        let fill = move |units: Range<usize>, buf: &mut PieceBuf, at: usize| {
            let len = units.len() * size;
            let dst = &mut buf.bytes_mut()[at..][..len];
            if let Some(unit) = swap_unit {
                // SAFETY:
                // - the plan swaps every byte of the element and its source, `T`'s native
                //   dtype, has no gaps: every byte of a `T` is a byte of a stored field,
                //   initialized in a valid `T` and unchanged while `data` is borrowed (no
                //   skipped fields: checked by `of`);
                // - the range is whole elements inside `data` (checked by `bytes`).
                let records = unsafe { src.bytes(units.start * size, len) };
                crate::scalar::swap_units_into(records, dst, unit);
                return Ok(());
            }
            let records = src.at(units.start * size, len);
            // SAFETY:
            // - `records` is valid for reads of `len` bytes, whole elements inside `data`
            //   (checked by `at`), borrowed for the pieces' lifetime; no byte of them
            //   changes meanwhile: they are stored fields and padding (see `buffer`'s
            //   module doc);
            // - outside `gaps`, the bytes of an element are bytes of fields of
            //   `T::native_dtype()` (the plan's source, whose gaps these are),
            //   initialized in a valid `T`.
            unsafe { buf.copy_records(at, records, len, size, &gaps) };
            if !identity {
                plan.run_in_place(&mut buf.bytes_mut()[at..][..len], units.start)?;
            }
            Ok(())
        };
        Pieces { split, rewritten: true, fill: Box::new(fill) }
    }
}

/// Writes elements whose memory is their written layout but for padding and byte order
/// ([`Pieces::in_place`]) in pieces of about `piece_bytes`, from file offset `at`. Large
/// inputs are made on a second thread while this one writes, so the copy costs no time
/// when a core is free.
#[cfg(test)]
fn write_in_place<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    at: u64,
    plan: &Plan,
    data: &[T],
    piece_bytes: usize,
) -> Result<()> {
    let p = Pieces::in_place(plan, data, Split::new(data.len(), plan.dst_size(), at, piece_bytes));
    write_pieces(writer, p.split, p.rewritten, p.fill)
}

/// Writes elements converted by `plan` ([`Pieces::converted`]) in pieces of about
/// `piece_bytes`, from file offset `at`.
#[cfg(test)]
fn write_converted<W: Write + ?Sized, T: NpyRecord>(
    writer: &mut W,
    at: u64,
    plan: &Plan,
    data: &[T],
    piece_bytes: usize,
) -> Result<()> {
    let p = Pieces::converted(plan, data, Split::new(data.len(), plan.dst_size(), at, piece_bytes));
    write_pieces(writer, p.split, p.rewritten, p.fill)
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

/// How the `total` bytes of a write made in pieces are cut. Piece `k` is the bytes
/// [`Split::range`]`(k)`; its maker makes the whole units (elements or records of `unit`
/// bytes) that hold them, [`Split::units`]`(k)`, from the start of a buffer of
/// [`Split::buffer_len`] bytes, and the piece's bytes are written from there
/// ([`Split::bytes`]).
///
/// Pieces end where the file offset is a multiple of the piece size (see [`WRITE_PIECE`]),
/// so a unit may be cut by a piece's end: its bytes are made for both pieces (at most two
/// units a piece, made twice). Units larger than a sixteenth of a piece would cost too
/// much that way: their pieces are whole units instead, ending anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    /// The file offset of the first byte (0 when unknown).
    at: u64,
    /// Bytes in all.
    total: usize,
    /// Bytes of a unit (not 0 unless `total` is).
    unit: usize,
    /// Where the first piece ends (at most `step`).
    first: usize,
    /// Bytes of every later piece but the last.
    step: usize,
}

impl Split {
    /// The pieces of `units` units of `unit` bytes, written from file offset `at` (0 when
    /// unknown: any value is correct, a wrong one only costs speed), of about
    /// `piece_bytes` (at least 1).
    fn new(units: usize, unit: usize, at: u64, piece_bytes: usize) -> Split {
        let total = units * unit;
        let step = piece_bytes.max(1);
        if unit <= step / 16 {
            let first = step - (at % step as u64) as usize;
            Split { at, total, unit, first, step }
        } else {
            let step = (step / unit.max(1)).max(1) * unit.max(1);
            Split { at, total, unit, first: step, step }
        }
    }

    /// The number of pieces.
    fn count(&self) -> usize {
        match self.total {
            0 => 0,
            t if t <= self.first => 1,
            t => 1 + (t - self.first).div_ceil(self.step),
        }
    }

    /// Whether [`write_pieces`] makes these pieces on a second thread.
    fn threaded(&self) -> bool {
        self.count() >= THREAD_PIECES && crate::cpu::two_cpus()
    }

    /// The bytes of piece `k`.
    fn range(&self, k: usize) -> Range<usize> {
        let start = if k == 0 { 0 } else { self.first + (k - 1) * self.step };
        start.min(self.total)..(self.first + k * self.step).min(self.total)
    }

    /// The units that hold the bytes of piece `k`.
    fn units(&self, k: usize) -> Range<usize> {
        let r = self.range(k);
        r.start / self.unit..r.end.div_ceil(self.unit)
    }

    /// Where piece `k`'s units start in a buffer whose bytes start at address `addr`: the
    /// piece's bytes then lie [`SRC_AHEAD`] bytes past their file offset's place in a
    /// [`PAGE`], and within the buffer if it has [`PAGE`] bytes more than
    /// [`Split::buffer_len`].
    fn place(&self, k: usize, addr: usize) -> usize {
        let range = self.range(k);
        let file = (self.at % PAGE as u64) as usize + range.start;
        (file + SRC_AHEAD).wrapping_sub(addr.wrapping_add(range.start % self.unit)) % PAGE
    }

    /// Piece `k`'s bytes in `buf`, whose units were made from byte `place`.
    fn bytes<'b>(&self, buf: &'b PieceBuf, k: usize, place: usize) -> &'b [u8] {
        let range = self.range(k);
        &buf.bytes()[place + range.start % self.unit..][..range.len()]
    }

    /// Bytes of a buffer that holds the units of any piece.
    fn buffer_len(&self) -> usize {
        if self.total == 0 {
            return 0;
        }
        // A piece that starts inside a unit holds one more than its length in units.
        let cut = !(self.step.is_multiple_of(self.unit) && self.first.is_multiple_of(self.unit));
        let most = self.step.min(self.total).div_ceil(self.unit) + usize::from(cut);
        most.min(self.total / self.unit) * self.unit
    }
}

thread_local! {
    /// The piece buffers of this thread's last [`write_pieces`], kept for its next one
    /// (an append's next batch): fresh buffers cost a page fault every 4 KiB. At most
    /// [`WRITE_BUFFERS`]` + 1` of at most [`WRITE_PIECE`] bytes and a page.
    static SPARE_PIECES: RefCell<Vec<PieceBuf>> = const { RefCell::new(Vec::new()) };
}

/// Writes the pieces of `split`, each in one `write_all`: piece `k`'s units made by
/// `fill(split.units(k), buf, place)` from byte `place` of a buffer ([`Split::place`]:
/// where the kernel copies them fastest), its bytes written from there
/// ([`Split::bytes`]). With [`THREAD_PIECES`] pieces or more and a second CPU, pieces are
/// made on a second thread while this one writes (up to [`WRITE_BUFFERS`] in flight), so
/// making them costs no time. A piece that thread has not taken when this one is ready
/// for it, or has not made within [`PATIENCE`], is made here (in a buffer of its own; a
/// piece of the other thread's made too late is dropped): a second thread that runs late
/// or not at all (its CPU taken by another process or by the host) costs about the time
/// of making pieces on one thread, never a long wait.
///
/// Unless `rewritten` says `fill` writes every byte of its units, the bytes where units go
/// hold zeros when `fill` runs (padding the plan never writes).
fn write_pieces<W: Write + ?Sized>(
    writer: &mut W,
    split: Split,
    rewritten: bool,
    fill: impl Fn(Range<usize>, &mut PieceBuf, usize) -> Result<()> + Sync,
) -> Result<()> {
    let pieces = split.count();
    let len = split.buffer_len() + PAGE;
    // Makes piece `k` into `slot`, returning where its units start.
    let make = |k: usize, slot: &mut Slot| -> Result<usize> {
        let place = split.place(k, slot.buf.bytes().as_ptr().addr());
        if !rewritten && slot.place.is_some_and(|p| p != place) {
            // Units made elsewhere in this buffer before: zeros where these go.
            slot.buf.bytes_mut()[place..][..split.units(k).len() * split.unit].fill(0);
        }
        slot.place = Some(place);
        fill(split.units(k), &mut slot.buf, place)?;
        Ok(place)
    };
    if !split.threaded() {
        let mut slots = Slot::take(1, len, rewritten);
        for k in 0..pieces {
            let place = make(k, &mut slots[0])?;
            writer.write_all(split.bytes(&slots[0].buf, k, place))?;
        }
        Slot::keep(slots);
        return Ok(());
    }
    type Piece = (usize, Slot, Result<usize>);
    let make = &make;
    // The pieces taken so far, by either thread: the other thread takes the next one
    // whenever it has a buffer; this one takes the piece it is to write when the other
    // has not yet taken it (it is behind, or not running), so it never waits for a piece
    // no one is making.
    let taken = &AtomicUsize::new(0);
    let spare = std::thread::scope(|scope| {
        // Every channel end lives inside this closure, so returning from it, by an early
        // `?` too, drops this thread's ends before the scope joins the other thread: its
        // `recv` and `send` then fail and it returns. Its own ends go with it when it
        // returns (or panics), which wakes this thread's `recv` in turn.
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Piece>(WRITE_BUFFERS);
        let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Slot>(WRITE_BUFFERS);
        let mut slots = Slot::take(WRITE_BUFFERS + 1, len, rewritten);
        let mut own = slots.pop().ok_or_else(|| Error::usage("no buffer for the writing thread"))?;
        for slot in slots {
            empty_tx.send(slot).map_err(|_| Error::usage("the buffer channel closed"))?;
        }
        let other = scope.spawn(move || {
            // Returns the buffers it holds once every piece is taken, as spares.
            while let Ok(mut slot) = empty_rx.recv() {
                let k = taken.fetch_add(1, Ordering::AcqRel);
                if k >= pieces {
                    // Every buffer handed back from now on, until the writing thread drops
                    // its end after its last piece.
                    return std::iter::once(slot).chain(empty_rx.iter()).collect();
                }
                let made = make(k, &mut slot);
                let failed = made.is_err();
                if full_tx.send((k, slot, made)).is_err() || failed {
                    break;
                }
            }
            Vec::new()
        });
        let mut back = Vec::with_capacity(RETURN_BATCH);
        // How long to wait for a piece the other thread is making before making it here:
        // twice what making one here took, once known.
        let mut patience = PATIENCE_FIRST;
        for k in 0..pieces {
            let ready = if taken.compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                None
            } else {
                // The other thread took it, after every piece it sent before: any it sent
                // too late (made here meanwhile) come first, and are dropped.
                loop {
                    match full_rx.recv_timeout(patience) {
                        Ok((j, slot, _)) if j < k => back.push(slot),
                        Ok((j, slot, made)) => {
                            debug_assert_eq!(j, k, "pieces arrive in order");
                            break Some((slot, made));
                        }
                        Err(RecvTimeoutError::Timeout) => break None,
                        Err(RecvTimeoutError::Disconnected) => {
                            return Err(Error::usage("the thread making pieces stopped"));
                        }
                    }
                }
            };
            match ready {
                Some((slot, made)) => {
                    writer.write_all(split.bytes(&slot.buf, k, made?))?;
                    back.push(slot);
                }
                None => {
                    // Not taken by the other thread, or not made by it in time (it runs
                    // late): made here rather than waited for.
                    let started = Instant::now();
                    let place = make(k, &mut own)?;
                    patience = (started.elapsed() * 2).clamp(PATIENCE.start, PATIENCE.end);
                    writer.write_all(split.bytes(&own.buf, k, place))?;
                }
            }
            if back.len() >= RETURN_BATCH {
                // Handed back a batch at a time: the other thread, asleep while it is
                // ahead, is woken once a batch, not once a piece. It always has buffers to
                // go on with: fewer than `RETURN_BATCH` wait here.
                for slot in back.drain(..) {
                    // Fails only once the other thread has stopped on an error, which ends
                    // this write with an error too: no spares are kept then.
                    let _ = empty_tx.send(slot);
                }
            }
        }
        // Every piece is taken: the other thread returns once it sees that, or when its
        // `recv` fails for want of buffers. A piece it is still making (made here too)
        // goes into `full_rx`, which holds every buffer it has, so that send never waits.
        drop(empty_tx);
        let theirs = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        back.push(own);
        back.extend(theirs);
        back.extend(full_rx.try_iter().map(|(_, slot, _)| slot));
        Ok::<_, Error>(back)
    })?;
    Slot::keep(spare);
    Ok(())
}

/// A buffer of [`write_pieces`], and where the units of its last piece start (`None`
/// while it holds only zeros or is rewritten whole).
#[derive(Debug)]
struct Slot {
    buf: PieceBuf,
    place: Option<usize>,
}

impl Slot {
    /// `n` slots of `len` bytes, this thread's spares first: zeroed, or, when `rewritten`
    /// (each fill writes every byte of its units, padding included), as the last write
    /// left them.
    fn take(n: usize, len: usize, rewritten: bool) -> Vec<Slot> {
        let mut spare = SPARE_PIECES.with(|s| std::mem::take(&mut *s.borrow_mut()));
        spare.retain(|b| b.bytes().len() == len);
        spare.truncate(n);
        if !rewritten {
            spare.iter_mut().for_each(|b| b.bytes_mut().fill(0));
        }
        while spare.len() < n {
            spare.push(PieceBuf::zeroed(len));
        }
        spare.into_iter().map(|buf| Slot { buf, place: None }).collect()
    }

    /// Keeps the buffers of `slots` as this thread's spares.
    fn keep(slots: Vec<Slot>) {
        let buffers = slots.into_iter().take(WRITE_BUFFERS + 1).map(|s| s.buf).collect();
        SPARE_PIECES.with(|s| *s.borrow_mut() = buffers);
    }
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
        NpyWriter::new_with(writer, &WriteOptions::default())
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
    /// let mut w = NpyWriter::<u32, _>::new_with(Cursor::new(Vec::new()), WriteOptions::new().byte_order(ByteOrder::Big))?;
    /// w.extend(&[1, 2])?;
    /// let file = w.finish()?.into_inner();
    /// let array = DynArray::read_npy_from(&file[..])?;
    /// assert_eq!(array.header().dtype.descr(), "'>u4'");
    /// assert_eq!(array.to_vec::<u32>()?, [1, 2]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn new_with(mut writer: W, options: &WriteOptions) -> Result<Self> {
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
            NpyWriter::new_with(file, options)
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

    /// Bytes `0..n` of a test pattern: byte `i` is `i * 7 + i / 251` (mod 256), so no
    /// run of bytes repeats at a short period.
    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// The fill of `write_pieces` for units of `unit` bytes of `src`, failing at the
    /// piece that holds byte `bad` (if any), with the piece's first byte in its message.
    fn fill_from<'a>(
        src: &'a [u8],
        unit: usize,
        bad: Option<usize>,
    ) -> impl Fn(Range<usize>, &mut PieceBuf, usize) -> Result<()> + Sync + 'a {
        move |units, buf, at| {
            let bytes = units.start * unit..units.end * unit;
            if let Some(b) = bad.filter(|b| bytes.contains(b)) {
                return Err(Error::usage(format!("the piece of byte {b} cannot be made")));
            }
            buf.bytes_mut()[at..][..bytes.len()].copy_from_slice(&src[bytes]);
            Ok(())
        }
    }

    /// Whole units of `unit` bytes of [`pattern`] that, written from file offset `at`,
    /// make `pieces` pieces of `piece` bytes (the last about half full), and their split.
    fn source(pieces: usize, at: u64, unit: usize, piece: usize) -> (Vec<u8>, Split) {
        let n = (pieces - 1) * piece + piece / 2 - at as usize;
        let src = pattern(n - n % unit);
        let split = Split::new(src.len() / unit, unit, at, piece);
        assert_eq!(split.count(), pieces, "{n} bytes from {at}");
        (src, split)
    }

    /// Splits: the pieces cover the bytes in order without gaps; a piece's units hold its
    /// bytes and fit the buffer; pieces end on multiples of the piece size in the file
    /// (but the last), or, for units above a sixteenth of it, hold whole units.
    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn splits_cover_the_bytes_in_pieces_ending_on_boundaries() {
        for unit in [1, 3, 8, 24, 304, 4096, 5000] {
            for units in [0, 1, 2, 17, 1000, 4099] {
                for at in [0, 1, 128, 4095, 65_536, 1 << 20, (1 << 20) + 77] {
                    for step in [1, 64, 4096, 65_536] {
                        let split = Split::new(units, unit, at, step);
                        let what = format!("{units} units of {unit} from {at} in pieces of {step}: {split:?}");
                        assert_eq!(split.total, units * unit, "{what}");
                        let mut end = 0;
                        for k in 0..split.count() {
                            let (range, held) = (split.range(k), split.units(k));
                            assert!(range.start == end && range.end > range.start, "{what}: piece {k} {range:?}");
                            end = range.end;
                            assert!(held.start * unit <= range.start && held.end * unit >= range.end, "{what}: {k}");
                            assert!(held.len() * unit <= split.buffer_len(), "{what}: piece {k} holds {held:?}");
                            if unit > step / 16 {
                                assert!(range.start % unit == 0 && range.end % unit == 0, "{what}: piece {k}");
                                assert!(range.len() <= step.max(unit), "{what}: piece {k}");
                            } else if end < split.total {
                                assert_eq!((at + end as u64) % step as u64, 0, "{what}: piece {k} ends at {end}");
                            }
                        }
                        assert_eq!(end, split.total, "{what}");
                    }
                }
            }
        }
    }

    /// The side that makes pieces failing (at the first, a middle or the last piece) ends
    /// the write with its error, with 8 pieces (the threshold of the second thread) and
    /// more (40: buffers handed back in batches), from file offsets at and inside a piece
    /// boundary, the pieces cutting units or not; the pieces before it are written,
    /// whole. Each case runs under a bound, so
    /// a side left waiting fails the test instead of hanging it.
    #[test]
    fn a_failing_piece_maker_ends_the_write_with_its_error() {
        const P: usize = 4096;
        for (pieces, at, unit) in [(8, 0, 1), (14, 0, 1), (40, 0, 1), (8, 100, 24), (9, 100, 24), (8, 3, 256)] {
            for bad_piece in [0, pieces / 2, pieces - 1] {
                let (src, split) = source(pieces, at, unit, P);
                let bad = split.range(bad_piece).end - 1;
                let out = bounded(move || {
                    let mut out = Vec::new();
                    let e = write_pieces(&mut out, split, false, fill_from(&src, unit, Some(bad))).unwrap_err();
                    assert_eq!(e.to_string(), format!("the piece of byte {bad} cannot be made"));
                    (out, src)
                });
                let (out, src) = out;
                let before = split.range(bad_piece).start;
                assert_eq!(out, src[..before], "{pieces} pieces from {at}, failing at {bad_piece}");
            }
        }
    }

    /// The writer failing (at the first, a middle or the last piece) ends the write with
    /// its error, just below the threshold of the second thread (7 pieces), at it (8) and
    /// above (14; 40, with buffers handed back in batches), from offsets at and inside a
    /// piece boundary: the thread making pieces, waiting on a full channel or for buffers,
    /// stops. Each case runs under a bound.
    #[test]
    fn a_failing_writer_ends_the_write_with_its_error() {
        const P: usize = 4096;
        for (pieces, at, unit) in [(7, 0, 1), (8, 0, 1), (14, 0, 1), (40, 0, 1), (8, 100, 24), (9, 100, 24)] {
            for bad_piece in [0, pieces / 2, pieces - 1] {
                let (src, split) = source(pieces, at, unit, P);
                let limit = split.range(bad_piece).end - 1;
                let written = bounded(move || {
                    let mut out = FailAfter { limit, written: 0 };
                    let e = write_pieces(&mut out, split, false, fill_from(&src, unit, None)).unwrap_err();
                    assert!(matches!(e.kind(), crate::error::ErrorKind::Io(_)), "{e}");
                    out.written
                });
                assert_eq!(written, split.range(bad_piece).start, "{pieces} pieces from {at}, failing at {bad_piece}");
            }
        }
    }

    /// Pieces written from any offset, cutting units or not: the bytes are the source's
    /// in order, whichever path wrote them (one thread: 5 pieces; two: 40), each piece in
    /// one write that ends on a piece boundary of the file (but the last), also through a
    /// writer that takes at most 1,000 bytes a call.
    #[test]
    fn pieces_are_written_in_writes_that_end_on_piece_boundaries() {
        const P: usize = 4096;
        for (at, pieces, unit, most) in [
            (0, 5, 1, usize::MAX),
            (384, 40, 24, usize::MAX),
            (4095, 40, 7, 1000),
            (77, 5, 256, 1000),
            (0, 9, 304, 1000),
        ] {
            let n = (pieces - 1) * P + 1000;
            let src = pattern(n - n % unit);
            let split = Split::new(src.len() / unit, unit, at, P);
            for rewritten in [true, false] {
                let mut out = Calls::new(at, most);
                write_pieces(&mut out, split, rewritten, fill_from(&src, unit, None)).unwrap();
                assert_eq!(out.bytes, src, "from {at}, {pieces} pieces of units of {unit}");
                let (last, ends) = out.ends.split_last().unwrap();
                assert_eq!(*last, at + src.len() as u64);
                if most == usize::MAX {
                    assert_eq!(out.ends.len(), split.count(), "from {at}: one write a piece");
                    assert!(ends.iter().all(|e| e % P as u64 == 0), "from {at}: write ends {ends:?}");
                    assert!(out.ahead.iter().all(|&a| a == SRC_AHEAD), "from {at}: {:?}", out.ahead);
                }
            }
        }
    }

    /// A writer that records its bytes, where each call ended (starting at file offset
    /// `at`) and where its bytes lay in memory relative to their file offset (mod
    /// [`PAGE`]), taking at most `most` bytes a call.
    #[derive(Debug)]
    struct Calls {
        at: u64,
        most: usize,
        bytes: Vec<u8>,
        ends: Vec<u64>,
        ahead: Vec<usize>,
    }

    impl Calls {
        fn new(at: u64, most: usize) -> Calls {
            Calls { at, most, bytes: Vec::new(), ends: Vec::new(), ahead: Vec::new() }
        }
    }

    impl Write for Calls {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let file = self.at as usize + self.bytes.len();
            self.ahead.push(buf.as_ptr().addr().wrapping_sub(file) % PAGE);
            let take = buf.len().min(self.most);
            self.bytes.extend_from_slice(&buf[..take]);
            self.ends.push(self.at + self.bytes.len() as u64);
            Ok(take)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Spare buffers are reused on this thread, zeroed again for fills that leave bytes;
    /// within a write, units made elsewhere in a buffer than its last piece's find zeros
    /// where they go; and the spares a write keeps are its last buffers, whichever path
    /// wrote (one thread or two).
    #[test]
    fn spare_pieces_are_zeroed_for_fills_that_leave_bytes() {
        const U: usize = 48;
        for pieces in [3, 8, 14] {
            // Units of 48 bytes from offset 8 in pieces of 4,096: each piece starts at
            // another place in a unit, so its units start elsewhere in the buffer (not a
            // whole unit away) than the last piece's.
            let split = Split::new(pieces * 4096 / U, U, 8, 4096);
            let mut out = Vec::new();
            write_pieces(&mut out, split, false, |units, buf, at| {
                buf.bytes_mut()[at..][..units.len() * U].fill(0xff);
                Ok(())
            })
            .unwrap();
            assert_eq!(out, vec![0xff; split.total]);
            // Half of each unit written: the other half reads zero, the 0xff before too.
            let mut out = Vec::new();
            write_pieces(&mut out, split, false, |units, buf, at| {
                for (i, u) in buf.bytes_mut()[at..][..units.len() * U].chunks_exact_mut(U).enumerate() {
                    u[..U / 2].fill((units.start + i) as u8);
                }
                Ok(())
            })
            .unwrap();
            let want: Vec<u8> =
                (0..split.total / U).flat_map(|u| [vec![u as u8; U / 2], vec![0; U / 2]].concat()).collect();
            assert_eq!(out, want, "{pieces} pieces");
            let kept: Vec<usize> =
                SPARE_PIECES.with(|s| s.borrow().iter().map(|b| b.bytes().as_ptr().addr()).collect());
            assert_eq!(kept.len(), if split.threaded() { WRITE_BUFFERS + 1 } else { 1 });
            // A rewritten fill of the same size gets those buffers back as they are: every
            // buffer it fills is one of them (how many it fills depends on which thread
            // made which piece).
            let seen = std::sync::Mutex::new(Vec::new());
            write_pieces(&mut Vec::new(), split, true, |units, buf, at| {
                seen.lock().unwrap().push(buf.bytes().as_ptr().addr());
                buf.bytes_mut()[at..][..units.len() * U].fill(1);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
            let seen: std::collections::BTreeSet<usize> = seen.into_inner().unwrap().into_iter().collect();
            assert!(seen.iter().all(|b| kept.contains(b)), "{pieces} pieces: {seen:?} not all of {kept:?}");
        }
    }

    /// A fill as [`fill_from`]'s on the thread that calls it first (the writing thread),
    /// counting its pieces there; on any other thread it first waits until the writing
    /// thread has made the last piece or failed: a second thread that does not run.
    struct Stalled<'a> {
        src: &'a [u8],
        unit: usize,
        bad: Option<usize>,
        last: Range<usize>,
        writer: std::thread::ThreadId,
        made_here: AtomicUsize,
        released: (std::sync::Mutex<bool>, std::sync::Condvar),
    }

    impl<'a> Stalled<'a> {
        fn new(src: &'a [u8], unit: usize, bad: Option<usize>, split: Split) -> Stalled<'a> {
            let last = split.units(split.count() - 1);
            let writer = std::thread::current().id();
            Stalled { src, unit, bad, last, writer, made_here: AtomicUsize::new(0), released: Default::default() }
        }

        fn fill(&self, units: Range<usize>, buf: &mut PieceBuf, at: usize) -> Result<()> {
            let (lock, cv) = &self.released;
            if std::thread::current().id() != self.writer {
                let _released = cv.wait_while(lock.lock().unwrap(), |r| !*r).unwrap();
                return fill_from(self.src, self.unit, self.bad)(units, buf, at);
            }
            let last = units == self.last;
            let made = fill_from(self.src, self.unit, self.bad)(units, buf, at);
            self.made_here.fetch_add(usize::from(made.is_ok()), Ordering::Relaxed);
            if last || made.is_err() {
                *lock.lock().unwrap() = true;
                cv.notify_all();
            }
            made
        }
    }

    /// A second thread that takes a piece and then does not run (its CPU taken): the
    /// writing thread makes that piece and every later one itself, so the write ends
    /// without it, each piece in one write ending on a piece boundary, the piece made late
    /// by the other thread dropped; and a failing piece made there ends the write with its
    /// error. Each case runs under a bound.
    #[test]
    fn a_second_thread_that_does_not_run_leaves_its_pieces_to_the_writing_thread() {
        const P: usize = 4096;
        for (pieces, at, unit) in [(8, 0, 1), (40, 100, 24), (14, 3, 256)] {
            let (src, split) = source(pieces, at, unit, P);
            assert!(split.threaded() || !crate::cpu::two_cpus());
            let (out, made_here) = bounded({
                let src = src.clone();
                move || {
                    let stalled = Stalled::new(&src, unit, None, split);
                    let mut out = Calls::new(at, usize::MAX);
                    write_pieces(&mut out, split, false, |u, b, a| stalled.fill(u, b, a)).unwrap();
                    (out, stalled.made_here.into_inner())
                }
            });
            assert_eq!(out.bytes, src, "{pieces} pieces from {at}");
            assert_eq!(out.ends.len(), pieces, "one write a piece");
            assert!(out.ends[..pieces - 1].iter().all(|e| e % P as u64 == 0), "{:?}", out.ends);
            // Every piece: the one the other thread took before it stalled too.
            assert_eq!(made_here, pieces, "pieces made by the writing thread");
            for bad_piece in [1, pieces / 2, pieces - 1] {
                let bad = split.range(bad_piece).end - 1;
                let src = src.clone();
                let written = bounded(move || {
                    let stalled = Stalled::new(&src, unit, Some(bad), split);
                    let mut out = Vec::new();
                    let e = write_pieces(&mut out, split, false, |u, b, a| stalled.fill(u, b, a)).unwrap_err();
                    assert_eq!(e.to_string(), format!("the piece of byte {bad} cannot be made"));
                    out.len()
                });
                assert_eq!(written, split.range(bad_piece).start, "{pieces} pieces, failing at {bad_piece}");
            }
        }
    }

    /// A writer that fails after `limit` bytes.
    #[derive(Debug)]
    struct FailAfter {
        limit: usize,
        written: usize,
    }

    impl Write for FailAfter {
        /// All of `buf` or none, as a file that fails at the end of its room.
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let len = buf.len();
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
        assert!(matches!(e.kind(), crate::error::ErrorKind::Io(_)), "{e}");
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

    /// The ways the record tests cut records of `size` bytes into pieces (file offset,
    /// piece size): whole records (3 a piece), and pieces of 16 records' bytes ending on
    /// their multiples from file offset 5, which cut records in two.
    fn cuts(size: usize) -> [(u64, usize); 2] {
        [(0, 3 * size), (5, 16 * size)]
    }

    /// Padded (`write_in_place`) and converted (`write_converted`) records written a few at a
    /// time: 67 pieces of whole records, or 13 pieces that cut records, which `write_pieces`
    /// makes on its thread when there is a second CPU (under Miri: `-Zmiri-num-cpus=2`, as
    /// `cargo xtask miri` runs it). The bytes are those of one piece, and a writer failing
    /// midway ends the write with its error.
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
        let n = 200u16;

        let padded: Vec<Padded> = (0..n).map(|i| Padded { a: i as u8, b: u32::from(i) * 1000, c: i + 7 }).collect();
        let plan = element_plan::<Padded>().unwrap();
        assert!(plan.is_identity() && !plan.covers_all_src());
        let size = std::mem::size_of::<Padded>();
        let want: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut r = vec![i as u8, 0, 0, 0];
                r.extend((u32::from(i) * 1000).to_ne_bytes());
                r.extend((i + 7).to_ne_bytes());
                r.extend([0, 0]);
                r
            })
            .collect();
        let mut one = Vec::new();
        write_with_plan(&mut one, 0, &plan, &padded).unwrap();
        assert_eq!(one, want);
        for (at, step) in cuts(size) {
            let mut pieces = Vec::new();
            write_in_place(&mut pieces, at, &plan, &padded, step).unwrap();
            assert_eq!(pieces, want, "from {at} in pieces of {step}");
            let e = write_in_place(&mut FailAfter { limit: 10 * size, written: 0 }, at, &plan, &padded, step);
            assert!(matches!(e.unwrap_err().kind(), crate::error::ErrorKind::Io(_)));
        }

        let swapped: Vec<Swapped> = (0..n).map(|i| Swapped { a: i, b: f64::from(i) / 4.0, flag: i % 3 == 0 }).collect();
        let plan = element_plan::<Swapped>().unwrap();
        assert!(!plan.is_identity());
        let want: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut r = i.to_be_bytes().to_vec();
                r.extend((f64::from(i) / 4.0).to_be_bytes());
                r.push(u8::from(i % 3 == 0));
                r
            })
            .collect();
        let mut one = Vec::new();
        write_with_plan(&mut one, 0, &plan, &swapped).unwrap();
        assert_eq!(one, want);
        for (at, step) in cuts(plan.dst_size()) {
            let mut pieces = Vec::new();
            write_converted(&mut pieces, at, &plan, &swapped, step).unwrap();
            assert_eq!(pieces, want, "from {at} in pieces of {step}");
            let e = write_converted(&mut FailAfter { limit: 50, written: 0 }, at, &plan, &swapped, step);
            assert!(matches!(e.unwrap_err().kind(), crate::error::ErrorKind::Io(_)));
        }
    }

    /// Records written in the other byte order, a few at a time (on the second thread when
    /// there is a second CPU; pieces of whole records, and pieces that cut them): `f64`s
    /// swapped while copied, padded records copied with zeroed padding and swapped in
    /// place; the bytes are those of one piece.
    #[cfg(feature = "derive")]
    #[test]
    fn other_byte_order_written_in_small_pieces() {
        let be = |dtype: &DType| dtype.with_byte_order(crate::dtype::ByteOrder::Big);
        let values: Vec<f64> = (0..200).map(|i| f64::from(i) * 1.25 - 3.0).collect();
        let plan = Plan::new(&f64::dtype(), &be(&f64::dtype())).unwrap();
        assert_eq!(plan.whole_swap_unit(), Some(8));
        let want: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
        let mut one = Vec::new();
        write_with_plan(&mut one, 0, &plan, &values).unwrap();
        assert_eq!(one, want);
        for (at, step) in cuts(8) {
            let mut pieces = Vec::new();
            write_in_place(&mut pieces, at, &plan, &values, step).unwrap();
            assert_eq!(pieces, want, "from {at} in pieces of {step}");
        }

        let padded: Vec<Padded> = (0..200u16).map(|i| Padded { a: i as u8, b: u32::from(i) << 20, c: i + 7 }).collect();
        let plan = Plan::new(&Padded::native_dtype(), &be(&Padded::dtype())).unwrap();
        assert!(plan.in_place() && !plan.is_identity() && plan.whole_swap_unit().is_none());
        let size = std::mem::size_of::<Padded>();
        let want: Vec<u8> = (0..200u16)
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
        let mut one = Vec::new();
        write_with_plan(&mut one, 0, &plan, &padded).unwrap();
        assert_eq!(one, want);
        for (at, step) in cuts(size) {
            let mut pieces = Vec::new();
            write_in_place(&mut pieces, at, &plan, &padded, step).unwrap();
            assert_eq!(pieces, want, "from {at} in pieces of {step}");
            let e = write_in_place(&mut FailAfter { limit: 10 * size, written: 0 }, at, &plan, &padded, step);
            assert!(matches!(e.unwrap_err().kind(), crate::error::ErrorKind::Io(_)));
        }
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
        assert!(matches!(e.kind(), crate::error::ErrorKind::Usage { .. }), "{e}");
        assert!(!dir.path().join("x.npy").exists());
    }
}
