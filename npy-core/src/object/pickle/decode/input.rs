//! The pickle's input: where its bytes come from ([`PickleInput`]: a reader, or bytes in
//! memory, whose strs a check keeps as spans) and [`Input`], which reads opcodes and their
//! arguments from it, keeping the position for error offsets.

use std::io::{self, Read};

use crate::error::{Error, Result};
use crate::object::pickle::opcode_name;
use crate::stream::{read_full, read_growing};

/// Where a pickle's bytes come from: a reader ([`Stream`]), or bytes in memory
/// ([`InMemory`]), whose strs the check keeps as spans of the input instead of copies.
pub(crate) trait PickleInput: Read {
    /// All of the input, when it is in memory.
    fn whole(&self) -> Option<&[u8]> {
        None
    }

    /// Moves past `n` bytes of an input in memory, which holds them.
    fn skip(&mut self, _n: usize) {}

    /// What is left of an input in memory: opcodes and their arguments are taken from it
    /// in place, not through `read`.
    fn rest(&self) -> Option<&[u8]> {
        None
    }

    /// Where in [`Self::whole`] the next `len` bytes start, when it holds all of them
    /// there (a str or bytes the check keeps as a span).
    fn span_start(&self, _len: u64) -> Option<usize> {
        None
    }

    /// Moves past a payload of `len` bytes left out of the input ([`Sparse`]), when one
    /// starts here: `false` (and nothing moves) otherwise.
    fn gap(&mut self, _len: u64) -> bool {
        false
    }

    /// Notes that the check needed what a gap left out ([`Sparse`]).
    fn want_gap(&self) {}

    /// Whether the check has needed what a gap left out: it cannot decide without it.
    fn wanted_gap(&self) -> bool {
        false
    }
}

/// A reader as a [`PickleInput`].
pub(crate) struct Stream<R>(pub(crate) R);

impl<R: Read> Read for Stream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> PickleInput for Stream<R> {}

/// Bytes in memory as a [`PickleInput`].
pub(crate) struct InMemory<'a> {
    bytes: &'a [u8],
    pub(super) pos: usize,
}

impl Read for InMemory<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.bytes[self.pos..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl<'a> InMemory<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        InMemory { bytes, pos: 0 }
    }
}

impl PickleInput for InMemory<'_> {
    fn whole(&self) -> Option<&[u8]> {
        Some(self.bytes)
    }

    fn skip(&mut self, n: usize) {
        self.pos += n;
    }

    fn rest(&self) -> Option<&[u8]> {
        self.bytes.get(self.pos..)
    }

    fn span_start(&self, len: u64) -> Option<usize> {
        (len <= (self.bytes.len() - self.pos) as u64).then_some(self.pos)
    }
}

/// A pickle in memory but for the content of some long bytes payloads (its gaps, which
/// [`super::super::sparse::read_sparse`] left out), as a [`PickleInput`]: the bytes around the
/// gaps are read in place, and a gap only by the bytes opcode whose payload it is
/// ([`PickleInput::gap`]). Reading into a gap any other way reads nothing (the pickle seems to
/// end there) and marks the gap wanted, as does the check looking at a gap's content: the
/// check cannot decide without it.
pub(crate) struct Sparse<'a> {
    /// The bytes kept, gaps cut out.
    bytes: &'a [u8],
    gaps: &'a [crate::object::Gap],
    /// Position in `bytes`.
    pos: usize,
    /// The next gap ahead (`gaps.len()` when none is left).
    next: usize,
    /// Where the run of kept bytes at the position ends: the next gap, or the end.
    end: usize,
    wanted: std::cell::Cell<bool>,
}

impl<'a> Sparse<'a> {
    pub(crate) fn new(bytes: &'a [u8], gaps: &'a [crate::object::Gap]) -> Self {
        let end = gaps.first().map_or(bytes.len(), |g| g.kept.min(bytes.len()));
        Sparse { bytes, gaps, pos: 0, next: 0, end, wanted: std::cell::Cell::new(false) }
    }

    fn run_end(&self) -> usize {
        self.end
    }
}

impl Read for Sparse<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.bytes[self.pos..self.run_end()];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        if n < buf.len() && self.next < self.gaps.len() {
            self.wanted.set(true);
        }
        Ok(n)
    }
}

impl PickleInput for Sparse<'_> {
    fn whole(&self) -> Option<&[u8]> {
        Some(self.bytes)
    }

    fn skip(&mut self, n: usize) {
        self.pos += n;
    }

    #[inline]
    fn rest(&self) -> Option<&[u8]> {
        // At a gap, nothing: a read then marks it wanted.
        match self.bytes.get(self.pos..self.end) {
            Some(rest) if !rest.is_empty() || self.next == self.gaps.len() => Some(rest),
            _ => None,
        }
    }

    fn span_start(&self, len: u64) -> Option<usize> {
        (len <= (self.run_end() - self.pos) as u64).then_some(self.pos)
    }

    fn gap(&mut self, len: u64) -> bool {
        match self.gaps.get(self.next) {
            Some(g) if g.kept == self.pos && g.len == len => {
                self.next += 1;
                self.end = self.gaps.get(self.next).map_or(self.bytes.len(), |g| g.kept.min(self.bytes.len()));
                true
            }
            _ => false,
        }
    }

    fn want_gap(&self) {
        self.wanted.set(true);
    }

    fn wanted_gap(&self) -> bool {
        self.wanted.get()
    }
}

/// A pickle read from a reader as the check reads it, into bytes other threads read
/// meanwhile (a [`GrowingPickle`](crate::object::GrowingPickle)'s), as a [`PickleInput`]: bytes are read in chunks (growing from
/// [`Growing::FIRST_CHUNK`] to [`Growing::LAST_CHUNK`] and small again after each gap) and
/// published as they come. The payload of a `BINBYTES` or `BINBYTES8` at least
/// `min_gap` long is left out where it was not read already (its rest seeked past, a
/// [`Gap`](crate::object::Gap) published), when the check meets its opcode
/// ([`PickleInput::gap`]).
#[cfg(not(target_family = "wasm"))]
pub(crate) struct Growing<'a, R> {
    kept: &'a crate::buffer::AppendBytes,
    gaps: &'a std::sync::Mutex<Vec<crate::object::Gap>>,
    min_gap: u64,
    reader: R,
    /// The bytes published, as of the last read (they only grow, and never change).
    bytes: &'a [u8],
    /// Position in `bytes`.
    pos: usize,
    /// Bytes left out so far.
    left_out: u64,
    /// The reader has ended.
    eof: bool,
    /// An error of seeking past a gap, given by the next read.
    failed: Option<io::Error>,
    chunk: usize,
    wanted: std::cell::Cell<bool>,
}

#[cfg(not(target_family = "wasm"))]
impl<'a, R: Read + io::Seek> Growing<'a, R> {
    /// Bytes read at a time after a gap (an array's few opcodes before the next payload:
    /// at most this much of that payload is read and kept).
    const FIRST_CHUNK: usize = 4 << 10;
    /// Bytes read at a time at most (doubling from [`Self::FIRST_CHUNK`]).
    const LAST_CHUNK: usize = 1 << 20;

    /// Reads from `reader` into `kept`, leaving out payloads of at least `min_gap` bytes
    /// (pushed to `gaps`).
    pub(crate) fn new(
        kept: &'a crate::buffer::AppendBytes,
        gaps: &'a std::sync::Mutex<Vec<crate::object::Gap>>,
        min_gap: u64,
        reader: R,
    ) -> Self {
        let bytes = kept.bytes();
        Growing {
            kept,
            gaps,
            min_gap,
            reader,
            bytes,
            pos: bytes.len(),
            left_out: 0,
            eof: false,
            failed: None,
            chunk: Self::FIRST_CHUNK,
            wanted: std::cell::Cell::new(false),
        }
    }

    /// Reads the next chunk and publishes it; `false` at the reader's end.
    fn more(&mut self) -> io::Result<bool> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.eof {
            return Ok(false);
        }
        let reader = &mut self.reader;
        let got = self.kept.append(self.chunk, |spare| loop {
            match reader.read(spare) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                read => return read,
            }
        })?;
        self.chunk = (self.chunk * 2).min(Self::LAST_CHUNK);
        self.bytes = self.kept.bytes();
        self.eof = got == 0;
        Ok(got > 0)
    }
}

#[cfg(not(target_family = "wasm"))]
impl<R: Read + io::Seek> Read for Growing<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.bytes.len() && !self.more()? {
            return Ok(0);
        }
        let rest = &self.bytes[self.pos..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(not(target_family = "wasm"))]
impl<R: Read + io::Seek> PickleInput for Growing<'_, R> {
    fn whole(&self) -> Option<&[u8]> {
        Some(self.bytes)
    }

    fn skip(&mut self, n: usize) {
        self.pos += n;
    }

    #[inline]
    fn rest(&self) -> Option<&[u8]> {
        // At the end of what is read, nothing unless the reader has ended: a read then
        // reads on.
        let rest = &self.bytes[self.pos..];
        (!rest.is_empty() || self.eof).then_some(rest)
    }

    fn span_start(&self, len: u64) -> Option<usize> {
        (len <= (self.bytes.len() - self.pos) as u64).then_some(self.pos)
    }

    fn gap(&mut self, len: u64) -> bool {
        let have = (self.bytes.len() - self.pos) as u64;
        if len < self.min_gap || len <= have {
            // Short, or read already: the check reads it in place.
            return false;
        }
        let out = len - have;
        let kept = self.bytes.len();
        let gap = crate::object::Gap { at: kept as u64 + self.left_out, kept, len: out };
        self.gaps.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(gap);
        self.left_out += out;
        self.pos = kept;
        self.chunk = Self::FIRST_CHUNK;
        match i64::try_from(out) {
            Ok(skip) if !self.eof => {
                if let Err(e) = self.reader.seek(io::SeekFrom::Current(skip)) {
                    self.failed = Some(e);
                }
            }
            // Past any file: what follows is not there.
            _ => self.eof = true,
        }
        true
    }

    fn want_gap(&self) {
        self.wanted.set(true);
    }

    fn wanted_gap(&self) -> bool {
        self.wanted.get()
    }
}

/// The pickle's bytes, read exactly as needed (nothing past `STOP` is consumed), with the
/// position for error offsets.
pub(super) struct Input<R> {
    pub(super) reader: R,
    /// Bytes consumed so far.
    pub(super) pos: u64,
    /// File offset of the pickle's first byte.
    pub(super) base: u64,
    /// The pickle's length, when the source knows it: longer claims fail before reading.
    pub(super) len: Option<u64>,
}

impl<R: PickleInput> Input<R> {
    #[inline]
    pub(super) fn byte(&mut self) -> Result<Option<u8>> {
        if let Some(rest) = self.reader.rest() {
            let b = rest.first().copied();
            if b.is_some() {
                self.reader.skip(1);
                self.pos += 1;
            }
            return Ok(b);
        }
        let mut b = [0u8; 1];
        loop {
            match self.reader.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.pos += 1;
                    return Ok(Some(b[0]));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    pub(super) fn truncated(&self, at: u64, op: u8) -> Error {
        let name = opcode_name(op).unwrap_or("an opcode");
        Error::pickle(self.base + at, format!("the pickle ends inside the argument of {name}"))
    }

    #[inline]
    pub(super) fn array<const N: usize>(&mut self, at: u64, op: u8) -> Result<[u8; N]> {
        if let Some(&chunk) = self.reader.rest().and_then(|rest| rest.first_chunk::<N>()) {
            self.reader.skip(N);
            self.pos += N as u64;
            return Ok(chunk);
        }
        let mut buf = [0u8; N];
        let got = read_full(&mut self.reader, &mut buf)?;
        self.pos += got as u64;
        if got < N {
            return Err(self.truncated(at, op));
        }
        Ok(buf)
    }

    /// `len` bytes; memory grows only as they arrive (a claim costs nothing).
    pub(super) fn bytes(&mut self, len: u64, at: u64, op: u8) -> Result<Vec<u8>> {
        if self.len.is_some_and(|total| len > total.saturating_sub(self.pos)) {
            return Err(self.truncated(at, op));
        }
        let len = usize::try_from(len).map_err(|_| self.truncated(at, op))?;
        let mut out = Vec::new();
        let got = read_growing(&mut self.reader, len, &mut out)?;
        self.pos += got as u64;
        if got < len {
            return Err(self.truncated(at, op));
        }
        Ok(out)
    }

    /// Moves past `len` bytes of an input in memory, giving their offset in it, for a
    /// [`Value::StrAt`]: `None` when the input is not in memory, holds fewer bytes (before
    /// a gap), or when the offset or length does not fit a u32.
    pub(super) fn span(&mut self, len: u64) -> Option<u32> {
        let start = u32::try_from(self.reader.span_start(len)?).ok()?;
        u32::try_from(len).ok()?;
        // Fits: at most the input's length.
        self.reader.skip(len as usize);
        self.pos += len;
        Some(start)
    }

    /// A `\n`-terminated text argument (without the `\n`), at most `max` bytes.
    pub(super) fn line(&mut self, max: usize, at: u64, op: u8) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            match self.byte()? {
                None => return Err(self.truncated(at, op)),
                Some(b'\n') => return Ok(out),
                Some(_) if out.len() == max => {
                    let name = opcode_name(op).unwrap_or("?");
                    return Err(Error::pickle(self.base + at, format!("the argument of {name} is over {max} bytes")));
                }
                Some(b) => out.push(b),
            }
        }
    }
}
