//! The unsafe byte and allocation helpers of reads and writes, behind safe types whose
//! invariants carry the proofs:
//! - [`Buffer`]: a `Vec<T>` filled through the bytes of its spare capacity, zeroed (by
//!   `calloc`) and backed by transparent huge pages when large; it knows which of those
//!   bytes are initialized, so [`Buffer::spare_bytes`] is safe, and only
//!   [`Buffer::assume_records`] (an `unsafe fn`) turns filled bytes into elements;
//! - [`prefaulting`]: a second thread faulting in a fresh buffer's pages while it fills;
//! - [`PieceBuf`]: a byte buffer that is initialized at all times, for the pieces writes
//!   make, into which records with padding are copied whole by an `unsafe fn`
//!   ([`PieceBuf::copy_records`]) whose contract restores that;
//! - [`RecordBytes`] and [`bytes_of`]: the bytes of a `&[T]` of records, raw (padding and
//!   all, readable from the thread making pieces) or, when `T` has no padding, as `&[u8]`;
//! - [`AppendBytes`]: bytes one thread appends while others read what it has published
//!   (a pickle read as it is checked).
//!
//! The proofs about records' bytes rest on `NpyRecord`'s contract that a record's stored
//! fields (the fields of its native dtype) have no interior mutability, so their bytes do
//! not change while the records are borrowed shared (every `NpyRecord` of this crate and
//! of the derive is made of primitives, arrays and records of them). Skipped fields may
//! hold anything (an atomic counter), so their bytes are never read.
//!
//! `madvise` and `sysconf` are compiled out under Miri, which cannot call them.

use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::record::NpyRecord;

/// Regions at least this large are advised to use transparent huge pages.
#[cfg(all(target_os = "linux", not(miri)))]
const HUGE_THRESHOLD: usize = 4 << 20;
#[cfg(all(target_os = "linux", not(miri)))]
const HUGE_PAGE: usize = 2 << 20;

/// Spare capacity at least this large is faulted in by [`prefaulting`]'s second thread:
/// reads of 40-80 MiB `<f8` files take 0.75x `np.load`'s time with it, 1.0x without (below
/// 32 MiB glibc hands out reused heap memory, which a zeroed buffer must clear first).
const PREFAULT_THRESHOLD: usize = 32 << 20;
/// [`ZeroedBytes`] at least this large are faulted in by a second thread as they fill:
/// smaller than reads' threshold, as bridges fill them in batches (an Arrow batch's
/// column is 16 MiB of 64 Ki rows of 64 `f4`s).
const ZEROED_PREFAULT_THRESHOLD: usize = 8 << 20;
/// Bytes faulted in per `madvise` call: the most [`prefaulting`] waits for its thread once
/// the fill is done.
#[cfg(all(target_os = "linux", not(miri)))]
const PREFAULT_STEP: usize = 16 << 20;

/// A `Vec<T>` being filled through the bytes of its spare capacity: elements are read or
/// converted into [`Buffer::spare_bytes`], then counted as elements by
/// [`Buffer::assume_records`].
///
/// It knows how many bytes at the start of its spare capacity are initialized (from
/// `calloc`, or zeroed by [`Buffer::spare_bytes`] before they were first lent), so it never
/// zeroes them twice and never lends uninitialized memory as `&mut [u8]`.
#[derive(Debug)]
pub(crate) struct Buffer<T> {
    vec: Vec<T>,
    /// Invariant: the first `init` bytes of `vec`'s spare capacity (from `vec.len()` on) are
    /// initialized, and `init <= size_of_val(vec.spare_capacity_mut())`.
    init: usize,
}

impl<T> Buffer<T> {
    /// An empty buffer without capacity.
    pub(crate) fn new() -> Self {
        Buffer { vec: Vec::new(), init: 0 }
    }

    /// An empty buffer with capacity for `n` elements, not initialized: its bytes are zeroed
    /// as they are lent. For small, bounded sizes (it aborts when out of memory).
    pub(crate) fn with_capacity(n: usize) -> Self {
        Buffer { vec: Vec::with_capacity(n), init: 0 }
    }

    /// An empty buffer with capacity for `n` elements whose memory is zeroed (by `calloc`,
    /// which for large sizes maps fresh pages without touching them) and advised to use
    /// huge pages, so a read fills it with a fraction of the page faults.
    ///
    /// # Errors
    /// An `OutOfMemory` I/O error when the memory cannot be had (never an abort: the size
    /// may come from a file's claim).
    pub(crate) fn zeroed(n: usize) -> Result<Self> {
        let vec = zeroed_vec::<T>(n)?;
        // The whole capacity is zeroed: `n` elements (none for a zero-sized `T`).
        Ok(Buffer { vec, init: n * std::mem::size_of::<T>() })
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.vec.len()
    }

    /// The elements.
    pub(crate) fn into_vec(self) -> Vec<T> {
        self.vec
    }

    /// Makes room for `additional` more elements, or says it cannot.
    ///
    /// # Errors
    /// As [`Buffer::zeroed`].
    pub(crate) fn try_grow(&mut self, additional: usize) -> Result<()> {
        if self.vec.capacity() - self.vec.len() >= additional {
            return Ok(());
        }
        try_grow(&mut self.vec, additional)?;
        // The spare capacity may have moved, and `Vec` does not say what it holds.
        self.init = 0;
        Ok(())
    }

    /// The bytes of the `count` elements after the last one (spare capacity, which must
    /// hold them: see [`Buffer::try_grow`]), initialized: bytes not initialized yet are
    /// zeroed first. Bytes never written read as zero.
    ///
    /// # Panics
    /// When the spare capacity holds fewer than `count` elements.
    pub(crate) fn spare_bytes(&mut self, count: usize) -> &mut [u8] {
        let spare = &mut self.vec.spare_capacity_mut()[..count];
        let len = std::mem::size_of_val(spare);
        let ptr = spare.as_mut_ptr().cast::<u8>();
        if self.init < len {
            // SAFETY:
            // - `ptr + init..ptr + len` lies in the spare capacity borrowed mutably above
            //   (`init < len`), so it is valid for writes of `len - init` bytes.
            unsafe { std::ptr::write_bytes(ptr.wrapping_add(self.init), 0, len - self.init) };
            self.init = len;
        }
        // SAFETY:
        // - `ptr..ptr + len` is the first `count` elements of the spare capacity, borrowed
        //   through `&mut self` for the slice's lifetime, so nothing else accesses it;
        // - every byte is initialized: the first `init` ones by the invariant, the rest
        //   zeroed just above;
        // - `u8` has alignment 1 and no invalid values.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
}

impl<T: NpyRecord> Buffer<T> {
    /// Counts the first `k` elements of the spare capacity as elements, once
    /// [`NpyRecord::fill_skipped`] has initialized their skipped fields.
    ///
    /// # Safety
    /// The stored fields of those `k` elements, written through [`Buffer::spare_bytes`],
    /// must hold valid values: every `b1` field of `T::native_dtype()` 0 or 1 (as a
    /// [`Plan`](crate::plan::Plan) writes them), and [`NpyRecord::check`] passed on every
    /// element when `T::NEEDS_CHECK`. By `NpyRecord`'s contract such bytes are valid `T`s,
    /// whatever their padding holds, once `fill_skipped` has run.
    ///
    /// # Panics
    /// When those bytes were not lent by [`Buffer::spare_bytes`] (fewer than `k` elements
    /// of spare capacity, or not initialized).
    pub(crate) unsafe fn assume_records(&mut self, k: usize) {
        let spare = self.vec.spare_capacity_mut();
        assert!(k <= spare.len() && k * std::mem::size_of::<T>() <= self.init, "elements not lent by spare_bytes");
        if T::HAS_SKIPPED {
            for slot in &mut spare[..k] {
                // SAFETY:
                // - `slot` is an element of the spare capacity: valid for writes, aligned;
                // - its stored fields are initialized (this function's contract) and its
                //   skipped fields hold no value yet (bytes lent by `spare_bytes`, never a
                //   `T`), so overwriting them without a drop is right.
                unsafe { T::fill_skipped(slot.as_mut_ptr()) };
            }
        }
        let len = self.vec.len() + k;
        // SAFETY:
        // - `len <= capacity`: `k` elements of spare capacity exist (asserted);
        // - the `k` elements are initialized (their bytes are among the first `init`,
        //   asserted) and valid `T`s: their stored fields hold valid values (this
        //   function's contract) and their skipped fields were just filled.
        unsafe { self.vec.set_len(len) };
        // The initialized bytes now start `k` elements later.
        self.init -= k * std::mem::size_of::<T>();
    }
}

/// An empty `Vec<T>` with capacity `n` whose memory is zeroed and advised to use huge
/// pages; see [`Buffer::zeroed`].
fn zeroed_vec<T>(n: usize) -> Result<Vec<T>> {
    let layout = Layout::array::<T>(n).map_err(|_| out_of_memory(n, std::mem::size_of::<T>()))?;
    if layout.size() == 0 {
        // Nothing to allocate (n == 0, or a zero-sized T).
        return Ok(Vec::new());
    }
    // SAFETY:
    // - the layout has non-zero size (checked above).
    let ptr = unsafe { alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(out_of_memory(n, std::mem::size_of::<T>()));
    }
    advise_huge_pages(ptr, layout.size());
    // SAFETY:
    // - `ptr` was allocated by the global allocator with `Layout::array::<T>(n)`, the
    //   layout a `Vec<T>` of capacity `n` uses;
    // - length 0 <= capacity, so no element is claimed to be initialized.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), 0, n) })
}

/// `n` zero bytes allocated as [`Buffer::zeroed`] allocates (by `calloc`, huge pages when
/// large), so that filling them costs a fraction of the page faults: a member inflated
/// whole, a member staged for a writer's worker (cleared, its capacity kept).
///
/// # Errors
/// As [`Buffer::zeroed`].
pub(crate) fn zeroed_bytes(n: usize) -> Result<Vec<u8>> {
    let mut v = zeroed_vec::<u8>(n)?;
    // SAFETY:
    // - the capacity is `n` bytes (`zeroed_vec`), all zeroed: `n` initialized `u8`s.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Zeroed bytes to fill in place, allocated as npy's reads allocate their buffers: by
/// `calloc` (fresh pages for large sizes, zeroed by the kernel on first touch, never
/// twice) and advised to use transparent huge pages when large, so filling them costs a
/// fraction of the page faults; 8-byte aligned, and given back as `u64` words, which
/// Arrow's buffers take without a copy (`arrow_buffer::Buffer::from_vec`). For bridges
/// that make large arrays of their own (npy-arrow's columns).
///
/// # Examples
/// ```
/// let mut buf = npy_core::ZeroedBytes::new(12)?;
/// buf.as_mut_slice()[..4].copy_from_slice(&7u32.to_le_bytes());
/// assert_eq!(buf.len(), 12);
/// let words = buf.into_words(); // 2 words: the 12 bytes, then zeros
/// assert_eq!(words, [7u64.to_le(), 0]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ZeroedBytes {
    /// Invariant: `len <= 8 * words.len()`.
    words: Vec<u64>,
    len: usize,
}

impl ZeroedBytes {
    /// `len` zero bytes.
    ///
    /// # Errors
    /// An `OutOfMemory` I/O error when the memory cannot be had (never an abort).
    pub fn new(len: usize) -> Result<Self> {
        let n = len.div_ceil(8);
        let mut words = zeroed_vec::<u64>(n)?;
        // SAFETY:
        // - `n` is the capacity of `words` (`zeroed_vec` allocates exactly `n`);
        // - those `n` words are zeroed (by `alloc_zeroed`), and 0 is a valid `u64`.
        unsafe { words.set_len(n) };
        Ok(ZeroedBytes { words, len })
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let ptr = self.words.as_mut_ptr().cast::<u8>();
        // SAFETY:
        // - `ptr..ptr + len` lies in the initialized words (`len <= 8 * words.len()`, the
        //   invariant), borrowed mutably through `&mut self` for the slice's lifetime;
        // - `u8` has alignment 1 and no invalid values, and any bytes are valid `u64`s, so
        //   what is written through the slice keeps the words valid.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.len) }
    }

    /// Runs `fill` over the bytes while, for buffers of at least 8 MiB, a second thread
    /// faults in their pages from the end backwards, so the kernel zeroes fresh pages on
    /// two CPUs as `fill` writes them (as npy's large reads do); on Linux, with a CPU to
    /// spare. The thread stops when `fill` returns (or panics) and is joined before this
    /// returns.
    pub fn fill_by<R>(&mut self, fill: impl FnOnce(&mut [u8]) -> R) -> R {
        fill_prefaulting(self.as_mut_slice(), fill)
    }

    /// The bytes as native-endian words: the bytes, then zeros up to a multiple of 8.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }
}

/// Grows `v`'s capacity by `additional` elements, or says it cannot.
///
/// # Errors
/// As [`Buffer::zeroed`].
pub(crate) fn try_grow<T>(v: &mut Vec<T>, additional: usize) -> Result<()> {
    v.try_reserve(additional).map_err(|_| out_of_memory(additional, std::mem::size_of::<T>()))
}

/// The error for an allocation of `n` elements of `size` bytes that failed.
pub(crate) fn out_of_memory(n: usize, size: usize) -> Error {
    let what = n.checked_mul(size).map_or_else(|| format!("{n} elements of {size} bytes"), |b| format!("{b} bytes"));
    std::io::Error::new(std::io::ErrorKind::OutOfMemory, format!("cannot allocate {what} for the array")).into()
}

/// Runs `fill(buf)`, which fills `buf`'s spare capacity from its start, while a second
/// thread faults in the pages of that capacity from its end backwards (`madvise`
/// `MADV_POPULATE_WRITE`), so the kernel zeroes fresh pages on two CPUs: for a fresh buffer
/// (`fresh`: from [`Buffer::zeroed`]) of at least 64 MiB, on Linux (not under Miri), with a
/// CPU to spare. The thread stops when the fill returns (or the two meet) and is joined
/// before this returns.
pub(crate) fn prefaulting<T, R>(buf: &mut Buffer<T>, fresh: bool, fill: impl FnOnce(&mut Buffer<T>) -> R) -> R {
    let spare = buf.vec.spare_capacity_mut();
    let (start, len) = (spare.as_mut_ptr() as usize, std::mem::size_of_val(spare));
    if !fresh || len < PREFAULT_THRESHOLD {
        return fill(buf);
    }
    // The capacity stays allocated while `fill` runs: it fills within it, never grows it.
    prefaulting_region(start, len, || fill(buf))
}

/// Runs `fill` over `bytes` while, for at least 8 MiB of them, a second thread faults in
/// their pages from the end backwards, as [`ZeroedBytes::fill_by`] does: for memory that
/// may be fresh (a large buffer just allocated elsewhere, such as the bytes object
/// CPython's unpickler makes for an array's data), so the kernel zeroes it on two CPUs
/// while `fill` writes it. Pages already present are left as they are.
///
/// # Examples
/// ```
/// let mut data = vec![0u8; 1 << 10];
/// let n = npy_core::fill_prefaulting(&mut data, |out| {
///     out.fill(7);
///     out.len()
/// });
/// assert_eq!((n, data[1023]), (1024, 7));
/// ```
pub fn fill_prefaulting<R>(bytes: &mut [u8], fill: impl FnOnce(&mut [u8]) -> R) -> R {
    let (start, len) = (bytes.as_mut_ptr() as usize, bytes.len());
    if len < ZEROED_PREFAULT_THRESHOLD {
        return fill(bytes);
    }
    // The bytes stay allocated while `fill` runs: they are borrowed by it.
    prefaulting_region(start, len, || fill(bytes))
}

/// Runs `fill` while a second thread faults in the pages of `start..start + len` (memory
/// that `fill` writes and that stays allocated until it returns) from the end backwards,
/// on Linux (not under Miri) with a CPU to spare. The thread stops when the fill returns,
/// fails or panics (or the two meet), and is joined before this returns.
fn prefaulting_region<R>(start: usize, len: usize, fill: impl FnOnce() -> R) -> R {
    if !cfg!(all(target_os = "linux", not(miri))) || !crate::cpu::two_cpus() {
        return fill();
    }
    /// Tells the thread to stop when the fill ends, by returning, failing or panicking,
    /// so the scope's join never waits for more than one step.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| populate_backwards(start, len, &stop));
        let _stop = StopOnDrop(&stop);
        fill()
    })
}

/// Faults in the pages of `start..start + len` for writing, `PREFAULT_STEP` bytes at a time
/// from the end, until `stop` is set; stops at the first failure (an old kernel without
/// `MADV_POPULATE_WRITE`, memory pressure), which only means fewer pages were faulted in
/// ahead.
#[cfg(all(target_os = "linux", not(miri)))]
fn populate_backwards(start: usize, len: usize, stop: &AtomicBool) {
    // SAFETY:
    // - sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let first = start.next_multiple_of(page);
    let mut end = (start + len) / page * page;
    while end > first && !stop.load(Ordering::Relaxed) {
        let from = end.saturating_sub(PREFAULT_STEP).max(first) / page * page;
        // SAFETY:
        // - `from..end` is whole pages of the memory being filled (`first` and `end` are
        //   its first and last page boundaries, `from` a page boundary between them),
        //   which stays allocated until this thread is joined (`prefaulting_region`);
        // - MADV_POPULATE_WRITE only makes the kernel back those pages (fresh ones zeroed,
        //   as a first write would): it never changes the contents of a present page, so
        //   the fill writing them meanwhile is unaffected. Had the fill grown the buffer
        //   and freed them (`prefaulting`'s callers fill within the capacity), the call
        //   would fail on pages no longer mapped, or back pages of other memory without
        //   changing what they hold.
        let r = unsafe { libc::madvise(from as *mut libc::c_void, end - from, libc::MADV_POPULATE_WRITE) };
        if r != 0 {
            return;
        }
        end = from;
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn populate_backwards(_start: usize, _len: usize, _stop: &AtomicBool) {}

#[cfg(all(target_os = "linux", not(miri)))]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    if len < HUGE_THRESHOLD {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY:
        // - `start..end` lies inside the allocation just made (rounded inwards to huge-page
        //   boundaries);
        // - MADV_HUGEPAGE only changes how the kernel backs those pages, never their
        //   contents. A failure (e.g. THP disabled) is harmless.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

/// A buffer of bytes that are all initialized at all times: zeroed when made, then written
/// as bytes ([`PieceBuf::bytes_mut`]) or by [`PieceBuf::copy_records`], whose contract
/// restores it. So its bytes are read ([`PieceBuf::bytes`]) without a proof at the reader.
#[derive(Debug)]
pub(crate) struct PieceBuf {
    /// Invariant: every byte is initialized. `MaybeUninit` because `copy_records` passes
    /// through uninitialized bytes (records' padding) before it zeroes them.
    bytes: Box<[MaybeUninit<u8>]>,
}

impl PieceBuf {
    /// A buffer of `len` zero bytes.
    pub(crate) fn zeroed(len: usize) -> Self {
        PieceBuf { bytes: vec![MaybeUninit::new(0u8); len].into_boxed_slice() }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY:
        // - every byte is initialized (the invariant), and `u8` accepts any initialized
        //   byte; `MaybeUninit<u8>` and `u8` have the same size and alignment.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast::<u8>(), self.bytes.len()) }
    }

    /// The bytes, to write.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY:
        // - every byte is initialized (the invariant), and `u8` accepts any initialized
        //   byte; `MaybeUninit<u8>` and `u8` have the same size and alignment;
        // - only initialized bytes can be written through a `&mut [u8]`, so the invariant
        //   holds whatever the borrower does.
        unsafe { std::slice::from_raw_parts_mut(self.bytes.as_mut_ptr().cast::<u8>(), self.bytes.len()) }
    }

    /// Copies the `len` bytes at `src`, whole records of `size` bytes, into the buffer at
    /// byte `at`, and zeroes each record's `gaps` (`(offset, len)` in the record): the
    /// bytes that may be uninitialized (padding) are never read as `u8`.
    ///
    /// # Safety
    /// - `src` must be valid for reads of `len` bytes, none of which is written during the
    ///   call;
    /// - in each record, every byte outside `gaps` must be initialized (the fields of a
    ///   valid `T` whose padding is `gaps`).
    ///
    /// # Panics
    /// When `at + len` is more than the buffer holds or `len` not whole records, or a gap
    /// lies outside a record: before anything is copied.
    pub(crate) unsafe fn copy_records(
        &mut self,
        at: usize,
        src: *const u8,
        len: usize,
        size: usize,
        gaps: &[(usize, usize)],
    ) {
        assert!(size > 0 && len.is_multiple_of(size), "{len} bytes are not whole records of {size} bytes");
        assert!(gaps.iter().all(|&(at, n)| at.checked_add(n).is_some_and(|end| end <= size)), "gap outside a record");
        let dst = &mut self.bytes[at..][..len];
        // SAFETY:
        // - `src` is valid for reads of `len` bytes (this function's contract) and `dst`
        //   for writes of as many; `dst` is this buffer's own memory, so they do not
        //   overlap;
        // - `dst` is `MaybeUninit<u8>`, so it may take uninitialized bytes (padding), which
        //   the loop below zeroes before the invariant is relied on again.
        unsafe { std::ptr::copy_nonoverlapping(src.cast::<MaybeUninit<u8>>(), dst.as_mut_ptr(), len) };
        for rec in dst.chunks_exact_mut(size) {
            for &(at, n) in gaps {
                zero(&mut rec[at..at + n]);
            }
        }
    }
}

/// Zeroes `gap` with plain stores: padding gaps are a few bytes, for which a call to
/// `memset` costs more than the bytes.
#[inline(always)]
fn zero(gap: &mut [MaybeUninit<u8>]) {
    const Z: MaybeUninit<u8> = MaybeUninit::new(0);
    let (words, rest) = gap.as_chunks_mut::<8>();
    words.fill([Z; 8]);
    let rest = match rest.split_first_chunk_mut::<4>() {
        Some((word, tail)) => {
            *word = [Z; 4];
            tail
        }
        None => rest,
    };
    let rest = match rest.split_first_chunk_mut::<2>() {
        Some((half, tail)) => {
            *half = [Z; 2];
            tail
        }
        None => rest,
    };
    if let Some(byte) = rest.first_mut() {
        *byte = Z;
    }
}

/// The bytes of a live `&'a [T]` of records, reached through a raw pointer: never through
/// a reference, which would claim their padding initialized. Their bytes are read by
/// `unsafe` code (a plan's [`run_raw`](crate::plan::Plan::run_raw), or
/// [`PieceBuf::copy_records`]), here or on the thread that makes pieces of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordBytes<'a> {
    ptr: *const u8,
    len: usize,
    _records: PhantomData<&'a [MaybeUninit<u8>]>,
}

impl<'a> RecordBytes<'a> {
    /// The bytes of `data`.
    pub(crate) fn of<T: NpyRecord>(data: &'a [T]) -> Self {
        RecordBytes { ptr: data.as_ptr().cast::<u8>(), len: std::mem::size_of_val(data), _records: PhantomData }
    }

    /// A pointer to the `len` bytes at `offset`, which are valid for reads for `'a`:
    /// inside the records, which stay borrowed shared.
    ///
    /// # Panics
    /// When those bytes are not all inside the records.
    pub(crate) fn at(self, offset: usize, len: usize) -> *const u8 {
        assert!(offset.checked_add(len).is_some_and(|end| end <= self.len), "bytes outside the records");
        self.ptr.wrapping_add(offset)
    }

    /// The `len` bytes at `offset` as a slice, for records that have no padding.
    ///
    /// # Safety
    /// Every byte of the range must be a byte of a stored field (the records' type has no
    /// padding and no skipped fields there), so all are initialized and none changes while
    /// the records are borrowed (stored fields have no interior mutability).
    ///
    /// # Panics
    /// When those bytes are not all inside the records.
    pub(crate) unsafe fn bytes(self, offset: usize, len: usize) -> &'a [u8] {
        let start = self.at(offset, len);
        // SAFETY:
        // - `at` checked that the range lies inside the records, which stay borrowed
        //   shared for `'a`, so it is readable for `'a`;
        // - its bytes are initialized and unchanged meanwhile (this function's contract);
        //   `u8` has alignment 1 and no invalid values.
        unsafe { std::slice::from_raw_parts(start, len) }
    }
}

// SAFETY:
// - a `RecordBytes` only hands out pointers (reading through them is `unsafe`, and the
//   contracts of those reads exclude bytes written meanwhile); the records stay borrowed
//   shared for `'a`, so safe code changes none of their bytes except through interior
//   mutability, which the bytes read (stored fields and padding) do not have (see the
//   module doc); no `T` is shared or made on another thread, only bytes.
unsafe impl Send for RecordBytes<'_> {}
// SAFETY:
// - as for `Send`: shared use only hands out the same pointers.
unsafe impl Sync for RecordBytes<'_> {}

/// The bytes of `data` as `&[u8]`.
///
/// # Safety
/// Every byte of a `T` must be a byte of a field of `T::native_dtype()`: `T` has no
/// padding and no skipped fields, so all its bytes are initialized and not changed while
/// `data` is borrowed (stored fields have no interior mutability: see the module doc).
pub(crate) unsafe fn bytes_of<T: NpyRecord>(data: &[T]) -> &[u8] {
    // SAFETY:
    // - the pointer and length come from a live `&[T]`, so the bytes are readable for the
    //   result's lifetime, which is `data`'s;
    // - they are all initialized and not changed meanwhile (this function's contract);
    // - `u8` has alignment 1 and no invalid values.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// Bytes one thread appends while any thread reads those appended so far: a zeroed
/// region of fixed capacity, reserved up front (address space only: `MAP_NORESERVE`, so a
/// capacity of a file's length costs nothing until written) and never moved. The first
/// [`AppendBytes::bytes`] are published: they never change again, and readers see only
/// them. Appends by two threads at once are refused (one is a bug), never raced.
///
/// Dropping a large one unmaps it on a thread of its own (a few milliseconds for tens of
/// MiB), so the thread that drops it does not wait.
#[cfg(not(target_family = "wasm"))]
pub(crate) struct AppendBytes {
    /// The region: only ever reached through `ptr`, kept to be unmapped on drop.
    map: Option<memmap2::MmapMut>,
    ptr: *mut u8,
    capacity: usize,
    /// Bytes published: `0..len` are written and never written again.
    len: std::sync::atomic::AtomicUsize,
    /// Whether an append is running.
    appending: AtomicBool,
}

// SAFETY: the region is owned by the value (unmapped only on drop); bytes below `len` are
// only read, and bytes at or past it are written only by the one append running at a time
// (`appending`) and published by a release store of `len`, so no byte is written while
// another thread may read it.
#[cfg(not(target_family = "wasm"))]
unsafe impl Send for AppendBytes {}
// SAFETY: as for `Send`: shared access reads only published bytes.
#[cfg(not(target_family = "wasm"))]
unsafe impl Sync for AppendBytes {}

#[cfg(not(target_family = "wasm"))]
impl std::fmt::Debug for AppendBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppendBytes").field("capacity", &self.capacity).field("len", &self.bytes().len()).finish()
    }
}

#[cfg(not(target_family = "wasm"))]
impl AppendBytes {
    /// Unmapped on a thread of their own when dropped: regions with this many bytes
    /// published, or more.
    const UNMAP_APART: usize = 2 << 20;

    /// Room for `capacity` bytes, none published.
    ///
    /// # Errors
    /// The system's, when the address space cannot be had.
    pub(crate) fn new(capacity: usize) -> std::io::Result<AppendBytes> {
        // (A map of no bytes is an error: one byte more.)
        let mut map = memmap2::MmapOptions::new().len(capacity.max(1)).no_reserve_swap().map_anon()?;
        let ptr = map.as_mut_ptr();
        Ok(AppendBytes {
            map: Some(map),
            ptr,
            capacity,
            len: std::sync::atomic::AtomicUsize::new(0),
            appending: AtomicBool::new(false),
        })
    }

    /// The bytes published so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        let len = self.len.load(Ordering::Acquire);
        // SAFETY:
        // - `ptr..ptr + len` lies in the region (`len <= capacity`), which lives as long as
        //   `self` and was zeroed by the kernel, so every byte is initialized;
        // - bytes below `len` are never written again (`append` writes only past it), so
        //   the shared slice sees no write while it lives; the acquire load pairs with the
        //   release store that published them, so their writes happened before.
        unsafe { std::slice::from_raw_parts(self.ptr, len) }
    }

    /// Lends `fill` the next unpublished bytes (at most `most`, zeros or what a failed
    /// fill left), then publishes the first `n` of them when it gives `Ok(n)`.
    ///
    /// # Errors
    /// `fill`'s; an error when another append is running.
    pub(crate) fn append(
        &self,
        most: usize,
        fill: impl FnOnce(&mut [u8]) -> std::io::Result<usize>,
    ) -> std::io::Result<usize> {
        if self.appending.swap(true, Ordering::Acquire) {
            return Err(std::io::Error::other("two appends at once to the same bytes"));
        }
        let len = self.len.load(Ordering::Relaxed);
        let room = most.min(self.capacity - len);
        // SAFETY:
        // - `ptr + len..ptr + len + room` lies in the region (`room <= capacity - len`),
        //   whose bytes are initialized (zeroed by the kernel, or written before);
        // - no reader reaches them (readers see only `0..len`), and no other append runs
        //   (`appending`), so this is the only reference to them while it lives.
        let spare = unsafe { std::slice::from_raw_parts_mut(self.ptr.wrapping_add(len), room) };
        let filled = fill(spare);
        if let Ok(n) = filled {
            self.len.store(len + n.min(room), Ordering::Release);
        }
        self.appending.store(false, Ordering::Release);
        filled.map(|n| n.min(room))
    }
}

#[cfg(not(target_family = "wasm"))]
impl Drop for AppendBytes {
    fn drop(&mut self) {
        let Some(map) = self.map.take() else { return };
        if *self.len.get_mut() >= Self::UNMAP_APART {
            // A failed spawn drops the map here.
            let _ = std::thread::Builder::new().name("npy-unmap".into()).spawn(move || drop(map));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published bytes never change while one thread appends and another reads them, an
    /// append inside another is refused, and the capacity bounds every append.
    #[cfg(all(not(target_family = "wasm"), not(miri)))]
    #[test]
    fn appended_bytes_are_read_as_written_while_more_come() {
        let bytes = AppendBytes::new(1 << 20).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut seen = 0usize;
                while seen < 1 << 20 {
                    let now = bytes.bytes();
                    assert!(now.iter().enumerate().skip(seen.saturating_sub(8)).all(|(i, &b)| b == (i % 251) as u8));
                    seen = now.len();
                }
            });
            let mut written = 0usize;
            while written < 1 << 20 {
                let n = bytes
                    .append(1000, |spare| {
                        for (k, b) in spare.iter_mut().enumerate() {
                            *b = ((written + k) % 251) as u8;
                        }
                        Ok(spare.len())
                    })
                    .unwrap();
                written += n;
            }
            assert_eq!(written, 1 << 20, "the capacity bounds the last append");
        });
        assert_eq!(bytes.append(10, |spare| Ok(spare.len())).unwrap(), 0, "full");
        let other = AppendBytes::new(10).unwrap();
        let nested = other.append(5, |_| other.append(5, |spare| Ok(spare.len())));
        assert!(nested.is_err(), "two appends at once");
        assert!(other.bytes().is_empty());
    }
    use crate::prelude::*;

    #[test]
    fn big_buffers_are_zeroed_and_usable() {
        // 8 MiB, over the huge-page threshold; Miri (no `madvise`) checks a Miri-sized one.
        let n = if cfg!(miri) { 1 << 12 } else { 1 << 20 };
        let mut v = Buffer::<u64>::zeroed(n).unwrap();
        assert_eq!(v.vec.capacity(), n);
        let bytes = v.spare_bytes(n);
        assert!(bytes.iter().all(|&b| b == 0));
        let v: Vec<f64> = {
            let mut out = Vec::new();
            [1.0f64, 2.0].write_npy_to(&mut out).unwrap();
            Vec::<f64>::read_npy_from(&out[..]).unwrap()
        };
        assert_eq!(v, [1.0, 2.0]);
    }

    /// `ZeroedBytes` are zero, filled in place (with the second thread faulting pages in
    /// when large), and come back as words with zeros after the bytes; a fill that panics
    /// stops and joins that thread.
    #[test]
    fn zeroed_bytes_fill_in_place_and_stop_their_helper() {
        let len = if cfg!(miri) { 1 << 10 } else { (ZEROED_PREFAULT_THRESHOLD << 1) + 3 };
        let mut b = ZeroedBytes::new(len).unwrap();
        assert_eq!(b.len(), len);
        let sum = b.fill_by(|out| {
            assert!(out.iter().all(|&x| x == 0));
            out.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8 | 1);
            out.len()
        });
        assert_eq!(sum, len);
        let words = b.into_words();
        assert_eq!(words.len(), len.div_ceil(8));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert!(bytes[..len].iter().enumerate().all(|(i, &x)| x == i as u8 | 1));
        assert!(bytes[len..].iter().all(|&x| x == 0));
        assert!(ZeroedBytes::new(0).unwrap().is_empty());

        let mut b = ZeroedBytes::new(len).unwrap();
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.fill_by(|out| {
                out[0] = 1;
                panic!("the fill fails")
            })
        }));
        assert!(failed.is_err(), "the panic comes through, after the helper was joined");
    }

    /// Bytes filled with their pages faulted in ahead keep what they held until written.
    #[test]
    fn filling_any_bytes_prefaulted_keeps_their_contents() {
        let len = if cfg!(miri) { 1 << 10 } else { (ZEROED_PREFAULT_THRESHOLD << 1) + 3 };
        let mut data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let n = fill_prefaulting(&mut data, |out| {
            assert!(out.iter().enumerate().all(|(i, &x)| x == (i % 251) as u8));
            out[len / 2..].fill(7);
            out.len()
        });
        assert_eq!(n, len);
        assert!(data[..len / 2].iter().enumerate().all(|(i, &x)| x == (i % 251) as u8));
        assert!(data[len / 2..].iter().all(|&x| x == 7));
    }

    /// Bytes are zeroed once, as first lent, whatever the buffer's history: grown from
    /// nothing, grown past its capacity (moved), partly filled.
    #[test]
    fn spare_bytes_are_initialized_once_and_elements_counted() {
        let mut b = Buffer::<u32>::new();
        b.try_grow(3).unwrap();
        b.spare_bytes(2).copy_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0]);
        assert!(b.spare_bytes(3)[..8] == [1, 0, 0, 0, 2, 0, 0, 0] && b.spare_bytes(3)[8..] == [0; 4]);
        // SAFETY: two `u32`s were written through `spare_bytes`; any bytes are a `u32`.
        unsafe { b.assume_records(2) };
        assert_eq!(b.spare_bytes(1), [0; 4]);
        b.try_grow(1000).unwrap();
        assert!(b.spare_bytes(1000).iter().all(|&x| x == 0));
        b.spare_bytes(1).copy_from_slice(&7u32.to_ne_bytes());
        // SAFETY: as above, one `u32`.
        unsafe { b.assume_records(1) };
        assert_eq!(b.into_vec(), [1, 2, 7]);

        let mut z = Buffer::<u16>::zeroed(4).unwrap();
        z.spare_bytes(4)[2] = 9;
        // SAFETY: any bytes are `u16`s.
        unsafe { z.assume_records(4) };
        assert_eq!(z.into_vec(), [0, 9, 0, 0]);
        assert!(Buffer::<()>::zeroed(5).unwrap().spare_bytes(5).is_empty());
    }

    /// Counting elements that `spare_bytes` did not lend panics instead of reading
    /// uninitialized memory.
    #[test]
    fn elements_must_have_been_lent() {
        let mut b = Buffer::<u8>::with_capacity(4);
        let counted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: the call panics before it counts anything (the point of the test).
            unsafe { b.assume_records(2) }
        }));
        assert!(counted.is_err());
        assert_eq!(b.len(), 0);
    }

    #[test]
    fn zero_clears_exactly_the_gap() {
        for len in 0..=27 {
            for at in 0..3 {
                let mut buf = [MaybeUninit::new(0xA5u8); 40];
                zero(&mut buf[at..at + len]);
                // SAFETY: every byte of `buf` was initialized above.
                let bytes: Vec<u8> = buf.iter().map(|b| unsafe { b.assume_init() }).collect();
                let want: Vec<u8> = (0..40).map(|i| if (at..at + len).contains(&i) { 0 } else { 0xA5 }).collect();
                assert_eq!(bytes, want, "gap of {len} bytes at {at}");
            }
        }
    }

    /// Records with padding are copied whole and their padding zeroed: under Miri, reading
    /// the piece checks that no uninitialized byte is left.
    #[test]
    fn padded_records_copy_with_their_padding_zeroed() {
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Padded {
            a: u8,
            b: u32,
            c: u16,
        }
        let records: Vec<Padded> = (0..5u8).map(|i| Padded { a: i, b: u32::from(i) << 16, c: 7 }).collect();
        let size = std::mem::size_of::<Padded>();
        let src = RecordBytes { ptr: records.as_ptr().cast(), len: size * records.len(), _records: PhantomData };
        let mut piece = PieceBuf::zeroed(size * 4 + 5);
        piece.bytes_mut().fill(0xEE);
        // SAFETY: records 1..4 are live; outside the gaps (1..4 and 10..12) their bytes are
        // the fields `a`, `b` and `c`, initialized.
        unsafe { piece.copy_records(5, src.at(size, 3 * size), 3 * size, size, &[(1, 3), (10, 2)]) };
        let want: Vec<u8> = [0xEE; 5]
            .into_iter()
            .chain((1..4u32).flat_map(|i| {
                [vec![i as u8, 0, 0, 0], (i << 16).to_ne_bytes().to_vec(), 7u16.to_ne_bytes().to_vec(), vec![0, 0]]
                    .concat()
            }))
            .chain([0xEE; 12])
            .collect();
        assert_eq!(piece.bytes(), want);
        assert!(std::panic::catch_unwind(|| src.at(size, 5 * size)).is_err());
    }

    /// Skipped fields are initialized when elements are counted.
    #[cfg(feature = "derive")]
    #[test]
    fn skipped_fields_are_filled() {
        #[derive(crate::NpyRecord, Debug, PartialEq)]
        #[npy(crate = "crate")]
        struct Noted {
            id: u32,
            #[npy(skip)]
            note: String,
        }
        let mut b = Buffer::<Noted>::zeroed(2).unwrap();
        let size = std::mem::size_of::<Noted>();
        let at = std::mem::offset_of!(Noted, id);
        let bytes = b.spare_bytes(2);
        bytes[at..at + 4].copy_from_slice(&5u32.to_ne_bytes());
        bytes[size + at..size + at + 4].copy_from_slice(&6u32.to_ne_bytes());
        // SAFETY: the stored field `id` of both elements was written; it has no invalid values.
        unsafe { b.assume_records(2) };
        let v = b.into_vec();
        assert_eq!(v, [Noted { id: 5, note: String::new() }, Noted { id: 6, note: String::new() }]);
    }
}
