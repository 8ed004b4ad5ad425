//! A deflated member inflated whole by libdeflate, straight into a buffer of its size: a
//! single stream (as NumPy writes members) on one thread, a member deflated in independent
//! parts (`parts`, listed by its `part_index`) its parts at once, each into its place. A
//! read as `DynArray` then takes that buffer for the array's data, so a member's bytes
//! are written once. Native only: libdeflate is C, and WebAssembly starts no threads.
//!
//! Members over these bounds, and reads of parts of a member, stream (`codec`).

use std::sync::{Mutex, MutexGuard, PoisonError};

use libdeflater::{DecompressionError, Decompressor};

use super::part_index::Part;

/// Deflated members up to this size, read whole, are decompressed whole before they are
/// read: into the array's own buffer for a `DynArray`, else beside the array read from it
/// (as `Writer` stages members up to 256 MiB).
pub(super) const WHOLE_MAX: u64 = 256 << 20;
/// Nor is a member decompressed whole that claims more than this many times its
/// compressed bytes (zeros, a bomb, or a size that lies), unless it claims at most
/// [`WHOLE_ANY_MAX`]: its size is only trusted as far as its data decompresses,
/// streaming, so a forged one costs no allocation.
pub(super) const WHOLE_RATIO_MAX: u64 = 64;
/// A member claiming up to this is decompressed whole however far it deflated: what a
/// forged size costs is within what any read may take (twice the archive plus 1 MiB).
/// Such members are the small ones that deflate best (a flag column of 100 KB NumPy
/// deflated 500 to 1), whose long matches zlib-rs's copies took three quarters of a read
/// to inflate (the deflate bench: 83 us; libdeflate's whole read, 55).
pub(super) const WHOLE_ANY_MAX: u64 = 1 << 20;

/// Whether a deflated member of `size` bytes, `compressed` in the archive, is
/// decompressed whole when read whole.
pub(super) fn inflates_whole(size: u64, compressed: u64) -> bool {
    size <= WHOLE_ANY_MAX || (size <= WHOLE_MAX && size <= compressed.saturating_mul(WHOLE_RATIO_MAX))
}

/// Inflates `stream`, a member's data deflated in `parts` (one for a single stream) of
/// `size` bytes in all, on up to `threads` threads at once, each part into its place. Why
/// not, when a part is corrupt or does not inflate to exactly its place.
pub(super) fn inflate(stream: &[u8], size: usize, parts: &[Part], threads: usize) -> Result<Vec<u8>, String> {
    // Zeroed by the allocator, whose pages of zeros take memory only once written (huge
    // ones when large).
    let mut out = crate::buffer::zeroed_bytes(size).map_err(|e| e.to_string())?;
    // Each part with the slice of `out` it inflates into, taken in order by the threads.
    let mut jobs = Vec::with_capacity(parts.len());
    let mut rest = &mut out[..];
    for (k, part) in parts.iter().enumerate() {
        let (into, after) = rest.split_at_mut(part.data.len());
        jobs.push((k, part, into));
        rest = after;
    }
    let jobs = Mutex::new(jobs.into_iter());
    let failed = Mutex::new(None::<(usize, String)>);
    // A single stream's sizes are the member's.
    let whose = if parts.len() == 1 { "member's" } else { "part's" };
    let work = || {
        let mut decoder = PartDecoder::new();
        while lock(&failed).is_none() {
            let Some((k, part, into)) = lock(&jobs).next() else { return };
            let last = k + 1 == parts.len();
            if let Err(why) = decoder.decode(&stream[part.compressed.clone()], last, into, whose) {
                let mut failed = lock(&failed);
                if failed.as_ref().is_none_or(|(first, _)| k < *first) {
                    let (start, end) = (part.compressed.start, part.compressed.end);
                    let why = match parts.len() {
                        1 => why,
                        n => format!("part {} of {n} (bytes {start}..{end}): {why}", k + 1),
                    };
                    *failed = Some((k, why));
                }
            }
        }
    };
    let joined = std::thread::scope(|s| {
        let others: Vec<_> = (1..threads.min(parts.len())).map(|_| s.spawn(work)).collect();
        work();
        others.into_iter().map(|other| other.join()).fold(Ok(()), Result::and)
    });
    match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some((_, why)) => Err(why),
        None if joined.is_err() => Err("an inflating thread panicked".to_string()),
        None => Ok(out),
    }
}

/// `m` locked; a thread that panicked holding it left nothing half done.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A thread's inflater of parts: libdeflate, and the bytes of a part given a final block.
struct PartDecoder(Box<Decompressor>, Vec<u8>);

impl PartDecoder {
    fn new() -> PartDecoder {
        PartDecoder(Box::new(Decompressor::new()), Vec::new())
    }

    /// Inflates one part into `into`, which it must fill exactly; errors say `into`'s size
    /// is `whose`. A part but the last ends with a flush, not a final block, so its bytes
    /// are copied and given one (an empty final block of fixed codes: bits 1, 01, then the
    /// end code's seven 0 bits).
    fn decode(&mut self, part: &[u8], last: bool, into: &mut [u8], whose: &str) -> Result<(), String> {
        let len = into.len();
        let PartDecoder(decompressor, scratch) = self;
        let part = if last {
            part
        } else {
            scratch.clear();
            scratch.extend_from_slice(part);
            scratch.extend_from_slice(&[0x03, 0x00]);
            scratch
        };
        match decompressor.deflate_decompress(part, into) {
            Ok(made) if made == len => Ok(()),
            Ok(made) => Err(format!("the data ends after {made} of the {whose} {len} bytes")),
            Err(DecompressionError::InsufficientSpace) => {
                Err(format!("the data inflates past the {whose} size of {len} bytes"))
            }
            Err(DecompressionError::BadData) => Err("the deflate data is corrupt (libdeflate: bad data)".to_string()),
        }
    }
}
