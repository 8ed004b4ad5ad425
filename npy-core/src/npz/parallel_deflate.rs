//! A member deflated in parts, on several threads as pigz does: its bytes are cut into a
//! few equal parts, each deflated by the encoder a sample of it chooses (`encoder`), zlib's
//! primed with the 32 KiB before it (so matches reach back across the cut, as in one
//! stream), each part's stream left open (byte-aligned, with no final block). Joined in
//! order they are one raw deflate stream that lacks only its final block, which the zip
//! writer's own deflate stream adds when the member is closed (see
//! `Writer::append_deflated`). A member long enough for a sample to pay
//! (`encoder::chosen_by_sample`) goes this way on one thread too, as one part.
//!
//! Each cut costs a flush and a block header: the parts are at least [`PART_MIN`] long, so
//! that stays under 2% of the size even for zeros. A member too short to choose for is
//! deflated as one stream by the zip writer's zlib, the bytes CPython's `zlib` writes.
//!
//! [`deflate`] takes a member staged whole; [`PartWriter`] takes one too large to stage as
//! it streams in, a part of [`STREAMED_PART`] at a time, holding the part it fills and, a
//! thread each, those deflating.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::thread::{Scope, ScopedJoinHandle};

use super::encoder::{self, CUT_LEVEL_MIN, WINDOW};

/// The shortest part a member is cut into. A cut costs a flush and a block header, tens of
/// bytes, which weigh most on data that deflates the most: parts of 1 MiB gave zeros 1.6%
/// more at level 6, parts of this length 0.7% (the test below). So a member under 4 MiB
/// is one stream, CPython's bytes.
pub(super) const PART_MIN: usize = 2 << 20;
/// The part length of a streamed member ([`PartWriter`]).
pub(super) const STREAMED_PART: usize = 4 << 20;

/// A member's data deflated in parts: the raw deflate stream without its final block.
pub(super) struct Unfinished {
    pub(super) stream: Vec<u8>,
    pub(super) crc32: u32,
    pub(super) len: u64,
}

/// How many parts to cut `len` bytes deflated at `level` into with `threads` threads: 1
/// (not cut) below [`CUT_LEVEL_MIN`] or two parts of [`PART_MIN`].
pub(super) fn parts(len: usize, level: u32, threads: usize) -> usize {
    if level < CUT_LEVEL_MIN {
        return 1;
    }
    threads.min(len / PART_MIN).max(1)
}

/// Deflates `data` at `level` in `parts` parts (at least 1), one thread each (this one
/// takes the first), stopping early with [`io::ErrorKind::Interrupted`] once `cancel` is set.
pub(super) fn deflate(data: &[u8], level: u32, parts: usize, cancel: &AtomicBool) -> io::Result<Unfinished> {
    let parts = parts.max(1);
    let size = data.len().div_ceil(parts);
    let bounds: Vec<(usize, usize)> = (0..parts).map(|i| (i * size, ((i + 1) * size).min(data.len()))).collect();
    let part = |&(start, end): &(usize, usize)| deflate_part(data, start, end, level, cancel);
    let (first, rest, crc32) = std::thread::scope(|s| {
        let others: Vec<_> = bounds[1..].iter().map(|b| s.spawn(move || part(b))).collect();
        let first = part(&bounds[0]);
        let crc32 = crc32fast::hash(data);
        let rest: Vec<io::Result<Vec<u8>>> = others
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(io::Error::other("a deflate thread panicked"))))
            .collect();
        (first, rest, crc32)
    });
    let mut stream = first?;
    for piece in rest {
        stream.extend_from_slice(&piece?);
    }
    Ok(Unfinished { stream, crc32, len: data.len() as u64 })
}

/// `data[start..end]` deflated as a part of `data` by the encoder its sample chooses (see
/// the module docs).
fn deflate_part(data: &[u8], start: usize, end: usize, level: u32, cancel: &AtomicBool) -> io::Result<Vec<u8>> {
    encoder::deflate_chosen(&data[start.saturating_sub(WINDOW)..start], &data[start..end], level, cancel)
}

/// The part of a streamed member being filled, the 32 KiB of data before it, and the CRC-32
/// and length of all taken so far: what [`PartWriter`] and [`InlineParts`] share.
#[derive(Debug)]
pub(super) struct Filling {
    level: u32,
    part: Vec<u8>,
    primer: Vec<u8>,
    crc: crc32fast::Hasher,
}

impl Filling {
    pub(super) fn new(level: u32) -> Filling {
        let crc = crc32fast::Hasher::new();
        Filling { level, part: Vec::with_capacity(STREAMED_PART), primer: Vec::new(), crc }
    }

    /// Takes what fits of `buf` into the part: how much, and whether the part is full.
    fn take(&mut self, buf: &[u8]) -> (usize, bool) {
        let n = buf.len().min(STREAMED_PART - self.part.len());
        self.part.extend_from_slice(&buf[..n]);
        self.crc.update(&buf[..n]);
        (n, self.part.len() == STREAMED_PART)
    }

    /// The part and its primer, to be deflated; the next part begins.
    fn hand_over(&mut self) -> (Vec<u8>, Vec<u8>) {
        let part = std::mem::replace(&mut self.part, Vec::with_capacity(STREAMED_PART));
        let primer = std::mem::replace(&mut self.primer, part[part.len().saturating_sub(WINDOW)..].to_vec());
        (part, primer)
    }

    /// Deflates the part on this thread and writes its stream to `out`; the next part
    /// begins.
    fn deflate_to(&mut self, out: &mut impl Write, cancel: &AtomicBool) -> io::Result<()> {
        let stream = encoder::deflate_chosen(&self.primer, &self.part, self.level, cancel)?;
        self.primer.clear();
        self.primer.extend_from_slice(&self.part[self.part.len().saturating_sub(WINDOW)..]);
        self.part.clear();
        out.write_all(&stream)
    }

    /// The CRC-32 and length of all taken.
    fn sum(&self) -> (u32, u64) {
        (self.crc.clone().finalize(), self.crc.total_len())
    }
}

/// Deflates a member as it is written, in parts of [`STREAMED_PART`] on up to `threads`
/// scoped threads at once, writing the parts' streams to `out` in order as they finish
/// (the member's stream without its final block, as [`deflate`] gives); the caller's
/// thread goes on taking data meanwhile (with one thread, it deflates each part itself).
/// [`PartWriter::finish`] deflates the rest and gives the CRC-32 and length of all that
/// was written.
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
        let (part, primer) = self.filling.hand_over();
        let (level, cancel) = (self.filling.level, self.cancel);
        self.running.push_back(self.scope.spawn(move || encoder::deflate_chosen(&primer, &part, level, cancel)));
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
    fn parts_join_into_one_stream_near_one_streams_size() {
        for (len, parts, level) in [(9 << 20, 2, 6), (8 << 20, 3, 4), ((9 << 20) + 12_345, 4, 9)] {
            let data = sample(len);
            let cancel = AtomicBool::new(false);
            let got = deflate(&data, level, parts, &cancel).unwrap();
            assert_eq!(got.len, len as u64);
            assert_eq!(got.crc32, crc32fast::hash(&data));
            let size = got.stream.len() + 2;
            let one = whole(&data, level);
            assert!(size as f64 <= one as f64 * 1.02, "{len} in {parts} parts at {level}: {size} against {one}");
            assert!(inflate(got.stream) == data, "{len} in {parts} parts at {level}: not the data");
        }
    }

    /// The most compressible data (zeros deflate about 1,000 to 1), where a cut costs the
    /// most against the size, in parts of the shortest length: within 2% of one part.
    #[test]
    #[cfg_attr(miri, ignore = "deflates megabytes: minutes under Miri")]
    fn a_cut_costs_under_two_percent_in_parts_of_part_min() {
        let len = 4 * PART_MIN;
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
                // Against the member as one part: the cut's cost, whatever the encoder.
                let got = deflate(&data, level, 4, &AtomicBool::new(false)).unwrap();
                let one = deflate(&data, level, 1, &AtomicBool::new(false)).unwrap();
                let (size, one) = (got.stream.len(), one.stream.len());
                assert!(size as f64 <= one as f64 * 1.02, "{what} at {level}: {size} in parts against {one}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "deflates megabytes: minutes under Miri")]
    fn a_cancelled_member_stops_with_interrupted() {
        let data = sample(PART_MIN * 2);
        let cancel = AtomicBool::new(true);
        let e = deflate(&data, 6, 2, &cancel).err().expect("cancelled");
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
    }

    #[test]
    fn members_are_cut_only_into_parts_of_at_least_part_min() {
        assert_eq!(parts(PART_MIN * 2 - 1, 6, 8), 1);
        assert_eq!(parts(PART_MIN * 2, 6, 8), 2);
        assert_eq!(parts(PART_MIN * 100, 6, 8), 8);
        assert_eq!(parts(PART_MIN * 100, 6, 1), 1);
        assert_eq!(parts(PART_MIN * 100, CUT_LEVEL_MIN - 1, 8), 1);
        assert_eq!(parts(PART_MIN * 100, CUT_LEVEL_MIN, 8), 8);
        assert_eq!(parts(0, 6, 4), 1);
    }
}
