//! Inflate by zlib-rs, on every target, and natively by libdeflate for members in parts
//! read whole ([`whole`]). Natively flate2 deflates with C zlib, for
//! CPython's bytes, but zlib-rs inflates faster: the `npz` bench's 8 deflated members
//! (256 MB) read in 0.301 s, where C zlib took 0.336 s and `np.load` 0.452 s
//! (`cargo xtask bench --only npz`, 2 CPUs). [`Inflater`] is pushed its input (a
//! [`super::codec::CodecReader`] pulls it from a reader).

use std::io;
#[cfg(not(any(target_family = "wasm", miri)))]
use std::sync::{Mutex, MutexGuard, PoisonError};

#[cfg(not(any(target_family = "wasm", miri)))]
use libdeflater::{DecompressionError, Decompressor};
use zlib_rs::{Inflate, InflateFlush, Status};

#[cfg(not(any(target_family = "wasm", miri)))]
use super::part_index::Part;

/// A raw deflate stream's inflater, pushed its input.
pub(super) struct Inflater(Inflate);

impl Inflater {
    pub(super) fn new() -> Inflater {
        Inflater(Inflate::new(false, 15))
    }

    /// Inflates from `input` into `out`: the bytes used and made, and whether the stream
    /// ended there. Bytes that are not deflate data are an `InvalidData` error.
    pub(super) fn step(&mut self, input: &[u8], out: &mut [u8]) -> io::Result<(usize, usize, bool)> {
        let (before_in, before_out) = (self.0.total_in(), self.0.total_out());
        let status = self.0.decompress(input, out, InflateFlush::NoFlush).map_err(|e| {
            let why = self.0.error_message().unwrap_or_else(|| e.as_str());
            io::Error::new(io::ErrorKind::InvalidData, format!("corrupt deflate stream ({why})"))
        })?;
        let used = (self.0.total_in() - before_in) as usize;
        let made = (self.0.total_out() - before_out) as usize;
        Ok((used, made, status == Status::StreamEnd))
    }
}

/// Deflated members in parts up to this size, read whole, are inflated whole by libdeflate
/// ([`whole`]) before they are read, their parts at once, for the member's size in memory
/// besides the array read from it (as `Writer` stages members up to 256 MiB). Other
/// members stream through [`Inflater`], straight into the array: on one thread, NumPy's
/// members inflated whole by libdeflate and then copied read no faster (the deflate
/// bench, one run: 0.42 to 0.96 of `np.load`'s time, where zlib-rs streaming took 0.44 to
/// 0.90; better on four kinds, worse on three).
pub(super) const WHOLE_MAX: u64 = 256 << 20;
/// Nor is a member inflated whole that claims more than this many times its deflated
/// bytes (zeros, a bomb, or a size that lies): its size is only trusted as far as its data
/// inflates, streaming, so a forged one costs no allocation.
pub(super) const WHOLE_RATIO_MAX: u64 = 64;

/// Whether a deflated member of `size` bytes, `deflated` in the archive, is inflated whole
/// when read whole.
pub(super) fn inflates_whole(size: u64, deflated: u64) -> bool {
    !cfg!(any(target_family = "wasm", miri)) && size <= WHOLE_MAX && size <= deflated.saturating_mul(WHOLE_RATIO_MAX)
}

/// Inflates `stream`, a raw deflate stream of `size` bytes when inflated, whole, by
/// libdeflate; when `parts` lists its independent parts (`part_index`), on up to
/// `threads` threads at once, each part into its place. Why not, when the stream is
/// corrupt, inflates past `size` or short of it, or a part is not what the index says.
#[cfg(not(any(target_family = "wasm", miri)))]
pub(super) fn whole(stream: &[u8], size: usize, parts: &[Part], threads: usize) -> Result<Vec<u8>, String> {
    // Zeroed by the allocator, whose pages of zeros take memory only once written.
    let mut out = vec![0; size];
    if parts.is_empty() {
        inflate_into(&mut Decompressor::new(), stream, &mut out, "the member's")?;
        return Ok(out);
    }
    // Each part with the slice of `out` it inflates into, taken in order by the threads.
    let mut jobs = Vec::with_capacity(parts.len());
    let mut rest = &mut out[..];
    for (k, part) in parts.iter().enumerate() {
        let (into, after) = rest.split_at_mut(part.inflated.len());
        jobs.push((k, part, into));
        rest = after;
    }
    let jobs = Mutex::new(jobs.into_iter());
    let failed = Mutex::new(None::<(usize, String)>);
    let work = || {
        let (mut decompressor, mut scratch) = (Decompressor::new(), Vec::new());
        while lock(&failed).is_none() {
            let Some((k, part, into)) = lock(&jobs).next() else { return };
            let last = k + 1 == parts.len();
            if let Err(why) = inflate_part(&mut decompressor, &mut scratch, &stream[part.deflated.clone()], last, into)
            {
                let mut failed = lock(&failed);
                if failed.as_ref().is_none_or(|(first, _)| k < *first) {
                    *failed = Some((
                        k,
                        format!(
                            "part {} of {} (bytes {}..{}): {why}",
                            k + 1,
                            parts.len(),
                            part.deflated.start,
                            part.deflated.end
                        ),
                    ));
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.min(parts.len()) {
            s.spawn(work);
        }
        work();
    });
    match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        Some((_, why)) => Err(why),
        None => Ok(out),
    }
}

/// `m` locked; a thread that panicked holding it left nothing half done.
#[cfg(not(any(target_family = "wasm", miri)))]
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Inflates one part into `into`, which it must fill exactly: a part but the last ends
/// with a flush, not a final block, so its bytes are copied into `scratch` and given one
/// (an empty final block of fixed codes: bits 1, 01, then the end code's seven 0 bits).
#[cfg(not(any(target_family = "wasm", miri)))]
fn inflate_part(
    decompressor: &mut Decompressor,
    scratch: &mut Vec<u8>,
    part: &[u8],
    last: bool,
    into: &mut [u8],
) -> Result<(), String> {
    if last {
        return inflate_into(decompressor, part, into, "the part's");
    }
    scratch.clear();
    scratch.extend_from_slice(part);
    scratch.extend_from_slice(&[0x03, 0x00]);
    inflate_into(decompressor, scratch, into, "the part's")
}

/// Inflates `stream` into `out`, which it must fill exactly.
#[cfg(not(any(target_family = "wasm", miri)))]
/// `whose` says whose bytes `out` holds ("the member's"), for the errors.
fn inflate_into(decompressor: &mut Decompressor, stream: &[u8], out: &mut [u8], whose: &str) -> Result<(), String> {
    let len = out.len();
    match decompressor.deflate_decompress(stream, out) {
        Ok(n) if n == len => Ok(()),
        Ok(n) => Err(format!("the data ends after {n} of {whose} {len} bytes")),
        Err(DecompressionError::InsufficientSpace) => {
            Err(format!("the data inflates past {whose} size of {len} bytes"))
        }
        Err(DecompressionError::BadData) => Err("the deflate data is corrupt (libdeflate: bad data)".to_string()),
    }
}
