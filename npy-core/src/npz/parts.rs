//! A member deflated in parts, on several threads as pigz does: its bytes are cut into
//! parts of [`PART`] (the last holds the rest), each deflated on its own by the encoder a
//! sample of it chooses (`encoder`), its stream left open (byte-aligned, with no final
//! block). Joined in order they are one raw deflate stream that lacks only its final
//! block, which the zip writer's own deflate stream adds when the member is closed (see
//! `Writer::append_in_parts`). A member long enough for a sample to pay
//! (`encoder::chosen_by_sample`) goes this way as one part.
//!
//! The parts are cut where they are whatever the threads, so a member's bytes do not
//! depend on them, and no part copies from the one before it, so a reader can inflate
//! them at once (`part_index`, which a staged member's central directory entry carries).
//! Each cut costs a flush, a block header and the matches the part's start cannot reach
//! back for: under 1% of the size even for zeros (the tests below). A member too short to
//! cut or choose for is deflated as one stream by the zip writer's zlib, the bytes
//! CPython's `zlib` writes.
//!
//! Zstandard members stay one frame: `np.load` reads them through `zipfile`, which (on
//! Python 3.14, or patched by `zipfile-zstd`) reads one frame only; measured: a member of a
//! frame per part made `np.load` fail ("cannot use a decompressobj multiple times").
//!
//! [`deflate`] takes a member staged whole; [`PartWriter`] takes one too large to stage as
//! it streams in, a part at a time, holding the part it fills and, a thread each, those
//! deflating.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle};

use super::encoder::{self, CUT_LEVEL_MIN};
use super::Compression;

/// The length of a member's parts: each deflates on a thread, and inflates on one when
/// read. A cut costs tens of bytes, which weigh most on data that deflates
/// the most: parts of 1 MiB gave zeros 1.6% more at level 6, parts of 2 MiB 0.7%.
pub(super) const PART: usize = 4 << 20;

/// A member's data deflated in parts: the raw deflate stream without its final block.
pub(super) struct Unfinished {
    pub(super) stream: Vec<u8>,
    /// The deflated length of each part, in order.
    pub(super) parts: Vec<usize>,
    pub(super) crc32: u32,
    pub(super) len: u64,
}

/// The level a member of `len` bytes compressed as `compression` is deflated in parts at,
/// if it is: deflated at level 4 or more and cut into two parts or more, or long enough to
/// choose an encoder for (module docs: Zstandard members stay one frame). Not in
/// WebAssembly: one thread deflates there, by zlib-rs, whose level 9 the zip writer's
/// stream takes to come near zlib's size (parts at the asked level 6 made the traces'
/// samples 2.5 times NumPy's size), and no reader there inflates parts at once.
pub(super) fn deflate_level(compression: Compression, len: u64) -> Option<u32> {
    let Compression::Deflated { level } = compression else { return None };
    if cfg!(target_family = "wasm") {
        return None;
    }
    let level = level.clamp(1, 9);
    let cut = usize::try_from(len).map_or(true, |len| len > PART);
    ((cut && level >= CUT_LEVEL_MIN) || encoder::chosen_by_sample(len, level)).then_some(level)
}

/// How many parts `len` bytes are cut into: one per [`PART`] (a deflated member shorter
/// than that, chosen for, is one part).
pub(super) fn parts(len: usize) -> usize {
    len.div_ceil(PART).max(1)
}

/// Deflates `data` at `level` in its [`parts`] on up to `threads` threads (this one among
/// them), stopping early with [`io::ErrorKind::Interrupted`] once `cancel` is set.
pub(super) fn deflate(data: &[u8], level: u32, threads: usize, cancel: &AtomicBool) -> io::Result<Unfinished> {
    let count = parts(data.len());
    let next = AtomicUsize::new(0);
    // Each thread takes the next part until none is left or one fails.
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                return done;
            }
            let compressed = encoder::deflate_chosen(&data[k * PART..((k + 1) * PART).min(data.len())], level, cancel);
            let failed = compressed.is_err();
            done.push((k, compressed));
            if failed {
                next.store(count, Ordering::Relaxed);
                return done;
            }
        }
    };
    let (done, crc32) = std::thread::scope(|s| {
        let others: Vec<_> = (1..threads.min(count)).map(|_| s.spawn(work)).collect();
        let crc32 = crc32fast::hash(data);
        let mut done = work();
        for other in others {
            let theirs = other.join().unwrap_or_else(|_| vec![(0, Err(io::Error::other("a deflate thread panicked")))]);
            done.extend(theirs);
        }
        (done, crc32)
    });
    // Each part in its place (no sort: its code would weigh on WebAssembly's budget).
    let mut slots: Vec<Option<io::Result<Vec<u8>>>> = std::iter::repeat_with(|| None).take(count).collect();
    for (k, compressed) in done {
        slots[k] = Some(compressed);
    }
    let (mut stream, mut lens) = (Vec::new(), Vec::with_capacity(count));
    for slot in slots {
        let compressed = slot.unwrap_or_else(|| Err(io::Error::other("a part of the member was not deflated")))?;
        lens.push(compressed.len());
        stream.extend_from_slice(&compressed);
    }
    Ok(Unfinished { stream, parts: lens, crc32, len: data.len() as u64 })
}

/// The part of a streamed member being filled, and the CRC-32 and length of all taken so
/// far: what [`PartWriter`] and [`InlineParts`] share.
#[derive(Debug)]
pub(super) struct Filling {
    level: u32,
    part: Vec<u8>,
    crc: crc32fast::Hasher,
}

impl Filling {
    pub(super) fn new(level: u32) -> Filling {
        Filling { level, part: Vec::with_capacity(PART), crc: crc32fast::Hasher::new() }
    }

    /// Takes what fits of `buf` into the part: how much, and whether the part is full.
    fn take(&mut self, buf: &[u8]) -> (usize, bool) {
        let n = buf.len().min(PART - self.part.len());
        self.part.extend_from_slice(&buf[..n]);
        self.crc.update(&buf[..n]);
        (n, self.part.len() == PART)
    }

    /// The part, to be deflated; the next part begins.
    fn hand_over(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.part, Vec::with_capacity(PART))
    }

    /// Deflates the part on this thread and writes it to `out`; the next part begins.
    fn deflate_to(&mut self, out: &mut impl Write, cancel: &AtomicBool) -> io::Result<()> {
        let stream = encoder::deflate_chosen(&self.part, self.level, cancel)?;
        self.part.clear();
        out.write_all(&stream)
    }

    /// The CRC-32 and length of all taken.
    fn sum(&self) -> (u32, u64) {
        (self.crc.clone().finalize(), self.crc.total_len())
    }
}

/// Deflates a member as it is written, in parts of [`PART`] on up to `threads` scoped
/// threads at once, writing the parts to `out` in order as they finish (as [`deflate`]
/// gives them); the caller's thread goes on taking data meanwhile (with one thread, it
/// deflates each part itself). [`PartWriter::finish`] deflates the rest and gives the
/// CRC-32 and length of all that was written.
pub(super) struct PartWriter<'scope, 'env, W: Write> {
    scope: &'scope Scope<'scope, 'env>,
    out: &'env mut W,
    threads: usize,
    cancel: &'env AtomicBool,
    filling: Filling,
    running: VecDeque<ScopedJoinHandle<'scope, io::Result<Vec<u8>>>>,
}

impl<'scope, 'env, W: Write> PartWriter<'scope, 'env, W> {
    pub(super) fn new(
        scope: &'scope Scope<'scope, 'env>,
        out: &'env mut W,
        level: u32,
        threads: usize,
        cancel: &'env AtomicBool,
    ) -> Self {
        let (filling, running) = (Filling::new(level), VecDeque::new());
        PartWriter { scope, out, threads: threads.max(1), cancel, filling, running }
    }

    /// Starts deflating the filled part on a thread of its own, first writing out the
    /// oldest parts while all threads are busy; with one thread, deflates it here, as
    /// always in WebAssembly, which starts no threads (and whose module then holds no
    /// thread's code for this: 828 bytes of its gzipped budget).
    fn start_part(&mut self) -> io::Result<()> {
        if self.threads == 1 || cfg!(target_family = "wasm") {
            return self.filling.deflate_to(self.out, self.cancel);
        }
        while self.running.len() >= self.threads {
            self.write_oldest()?;
        }
        let part = self.filling.hand_over();
        let (level, cancel) = (self.filling.level, self.cancel);
        self.running.push_back(self.scope.spawn(move || encoder::deflate_chosen(&part, level, cancel)));
        Ok(())
    }

    /// Waits for the oldest part and writes its stream out.
    fn write_oldest(&mut self) -> io::Result<()> {
        let Some(oldest) = self.running.pop_front() else { return Ok(()) };
        let stream = oldest.join().unwrap_or_else(|_| Err(io::Error::other("a deflate thread panicked")))?;
        self.out.write_all(&stream)
    }

    /// Deflates the last part and writes every part out: the CRC-32 and length of the data.
    pub(super) fn finish(mut self) -> io::Result<(u32, u64)> {
        if !self.filling.part.is_empty() {
            self.start_part()?;
        }
        while !self.running.is_empty() {
            self.write_oldest()?;
        }
        Ok(self.filling.sum())
    }
}

impl<W: Write> Write for PartWriter<'_, '_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (n, full) = self.filling.take(buf);
        if full {
            self.start_part()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A member written a little at a time (`Writer::start_array`), deflated in the parts a
/// [`PartWriter`] with one thread makes, on the caller's thread as each fills: `filling`
/// kept between writes, `out` the archive's writer.
pub(super) struct InlineParts<'a, W: Write> {
    pub(super) filling: &'a mut Filling,
    pub(super) out: &'a mut W,
}

impl<W: Write> InlineParts<'_, W> {
    /// Deflates the last part and writes it out: the CRC-32 and length of the data.
    pub(super) fn finish(self) -> io::Result<(u32, u64)> {
        if !self.filling.part.is_empty() {
            self.filling.deflate_to(self.out, &AtomicBool::new(false))?;
        }
        Ok(self.filling.sum())
    }
}

impl<W: Write> Write for InlineParts<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (n, full) = self.filling.take(buf);
        if full {
            self.filling.deflate_to(self.out, &AtomicBool::new(false))?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use flate2::{Compress, Compression, FlushCompress};

    use super::*;

    /// Bytes deflate finds 3-byte matches in (as in arrays of numbers), with a run of zeros.
    fn sample(len: usize) -> Vec<u8> {
        let mut data: Vec<u8> = (0..len / 4).flat_map(|i| ((i as f32) / 64.0).to_le_bytes()).collect();
        data.resize(len, 0);
        data[len / 3..len / 2].fill(0);
        data
    }

    /// `stream` ended by the empty final block the zip writer adds, inflated.
    fn inflate(mut stream: Vec<u8>) -> Vec<u8> {
        stream.extend_from_slice(&[0x03, 0x00]);
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(&stream[..]).read_to_end(&mut out).unwrap();
        out
    }

    fn whole(data: &[u8], level: u32) -> usize {
        let mut z = Compress::new(Compression::new(level), false);
        let mut out = Vec::with_capacity(data.len() + 1024);
        z.compress_vec(data, &mut out, FlushCompress::Finish).unwrap();
        assert_eq!(z.total_in() as usize, data.len());
        out.len()
    }

    #[test]
    #[cfg_attr(miri, ignore = "deflates megabytes: minutes under Miri")]
    fn parts_join_into_one_stream_near_one_streams_size_whatever_the_threads() {
        for (len, level) in [(9 << 20, 6), (8 << 20, 4), ((9 << 20) + 12_345, 9)] {
            let data = sample(len);
            let cancel = AtomicBool::new(false);
            let got = deflate(&data, level, 3, &cancel).unwrap();
            assert_eq!(got.len, len as u64);
            assert_eq!(got.crc32, crc32fast::hash(&data));
            assert_eq!((got.parts.len(), got.parts.iter().sum::<usize>()), (len.div_ceil(PART), got.stream.len()));
            let alone = deflate(&data, level, 1, &cancel).unwrap();
            assert!(
                alone.stream == got.stream && alone.parts == got.parts,
                "{len} at {level}: other bytes on one thread"
            );
            let size = got.stream.len() + 2;
            let one = whole(&data, level);
            assert!(size as f64 <= one as f64 * 1.02, "{len} at {level}: {size} against {one}");
            // Each part inflates alone: none copies from the part before it.
            let mut at = 0;
            for (k, &n) in got.parts.iter().enumerate() {
                let part = &data[k * PART..((k + 1) * PART).min(len)];
                assert!(inflate(got.stream[at..at + n].to_vec()) == part, "{len} at {level}: part {k}");
                at += n;
            }
            assert!(inflate(got.stream) == data, "{len} at {level}: not the data");
        }
    }

    /// The most compressible data (zeros deflate about 1,000 to 1), where a cut costs the
    /// most against the size: within 1% of one stream.
    #[test]
    #[cfg_attr(miri, ignore = "deflates megabytes: minutes under Miri")]
    fn a_cut_costs_under_one_percent() {
        let len = 4 * PART;
        let mut sparse = vec![0u8; len];
        sparse.iter_mut().step_by(4099).for_each(|b| *b = 1);
        let kinds: [(&str, Vec<u8>); 4] = [
            ("zeros", vec![0; len]),
            ("sparse ones", sparse),
            ("a counter", (0..len as u64 / 8).flat_map(|i| i.to_le_bytes()).collect()),
            ("a short pattern", b"0123456789abcdef".iter().copied().cycle().take(len).collect()),
        ];
        for (what, data) in kinds {
            for level in [CUT_LEVEL_MIN, 6, 9] {
                // Against the member as one part: the cuts' cost, whatever the encoder.
                let got = deflate(&data, level, 2, &AtomicBool::new(false)).unwrap();
                let one = encoder::deflate_chosen(&data, level, &AtomicBool::new(false)).unwrap();
                let (size, one) = (got.stream.len(), one.len());
                assert!(size as f64 <= one as f64 * 1.01, "{what} at {level}: {size} in parts against {one}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "deflates megabytes: minutes under Miri")]
    fn a_cancelled_member_stops_with_interrupted() {
        let data = sample(PART * 2);
        let cancel = AtomicBool::new(true);
        let e = deflate(&data, 6, 2, &cancel).err().expect("cancelled");
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
    }

    #[test]
    fn members_are_cut_into_parts_of_part_at_deflate_level_4_and_more() {
        let deflated = |level| super::Compression::Deflated { level };
        let of = |compression, len: usize| deflate_level(compression, len as u64);
        assert_eq!((parts(PART), parts(PART + 1), parts(PART * 100), parts(0)), (1, 2, 100, 1));
        assert_eq!(of(deflated(6), PART + 1), Some(6));
        assert_eq!(of(deflated(CUT_LEVEL_MIN), PART + 1), Some(CUT_LEVEL_MIN));
        assert_eq!(of(deflated(CUT_LEVEL_MIN - 1), PART * 100), None);
        assert_eq!(of(deflated(9), PART), None, "one part, not chosen for above level 6");
        assert_eq!(of(deflated(6), PART), Some(6), "one part, chosen for");
        assert_eq!(of(deflated(6), 1000), None);
        assert_eq!(of(super::Compression::Zstd { level: 8 }, PART * 2), None, "one frame");
        assert_eq!(of(super::Compression::Stored, PART * 2), None);
    }
}
