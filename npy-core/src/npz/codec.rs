//! A compressed member's bytes decompressed as its [`Method`] says, in one shape: a
//! [`Codec`] is pushed its input (deflate by zlib-rs, Zstandard by libzstd), and a
//! [`CodecReader`] is that codec driven over a reader, pulling its input. What a codec holds
//! is bounded whatever the data claims: deflate's window is 32 KiB; a Zstandard frame's is
//! what its header asks, at most 128 MiB (libzstd's default limit, 2^27 bytes: a frame
//! asking more is refused, as the `zstd` tool refuses it without `--long`), and levels up to
//! 19 ask at most 8 MiB.

use std::io::{self, BufRead, BufReader, Read};

use super::inflate::Inflater;
use super::Method;

/// A decompressor that is pushed its input: deflate or Zstandard.
pub(super) enum Codec {
    Deflate(Box<Inflater>),
    Zstd(Box<zstd::stream::raw::Decoder<'static>>),
}

impl Codec {
    /// The codec of `method`; `None` for a stored member, whose bytes are themselves.
    ///
    /// # Errors
    /// When libzstd cannot allocate its context.
    pub(super) fn of(method: Method) -> io::Result<Option<Codec>> {
        Ok(match method {
            Method::Stored => None,
            Method::Deflated(_) => Some(Codec::Deflate(Box::new(Inflater::new()))),
            Method::Zstd => Some(Codec::Zstd(Box::new(zstd::stream::raw::Decoder::new()?))),
        })
    }

    /// The method's name in messages.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Codec::Deflate(_) => "deflate",
            Codec::Zstd(_) => "Zstandard",
        }
    }

    /// Whether its data is one stream (deflate), after whose end no byte may follow; a
    /// Zstandard member may hold several frames.
    pub(super) fn one_stream(&self) -> bool {
        matches!(self, Codec::Deflate(_))
    }

    /// Decompresses from `input` into `out`: the bytes used and made, and whether the
    /// stream (deflate) or a frame (Zstandard) ended there.
    pub(super) fn step(&mut self, input: &[u8], out: &mut [u8]) -> io::Result<(usize, usize, bool)> {
        match self {
            Codec::Deflate(z) => z.step(input, out),
            Codec::Zstd(d) => {
                use zstd::stream::raw::Operation;
                let status = d.run_on_buffers(input, out)?;
                Ok((status.bytes_read, status.bytes_written, status.remaining == 0))
            }
        }
    }
}

/// A reader decompressing what `S` gives by a [`Codec`]: bytes after a deflate stream's
/// end are not read; input that ends before the stream (or a Zstandard frame) does is an
/// `UnexpectedEof` error.
pub(super) struct CodecReader<S> {
    source: BufReader<S>,
    codec: Codec,
    /// Whether the deflate stream, or the last Zstandard frame, has ended.
    ended: bool,
}

impl<S: Read> CodecReader<S> {
    /// A reader of `data`, compressed with `method` (checked to be deflate or Zstandard
    /// when the archive was opened).
    ///
    /// # Errors
    /// When libzstd cannot allocate its context; `InvalidInput` for a stored member.
    pub(super) fn new(method: Method, data: S) -> io::Result<Self> {
        let codec = Codec::of(method)?
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a stored member has no codec"))?;
        // Input taken in pieces of the size each library reads best: zlib-rs's 32 KiB
        // window, libzstd's block and then some (`ZSTD_DStreamInSize`).
        let capacity = if codec.one_stream() { 32 << 10 } else { zstd::zstd_safe::DCtx::in_size() };
        Ok(CodecReader { source: BufReader::with_capacity(capacity, data), codec, ended: false })
    }
}

impl<S: Read> Read for CodecReader<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let one_stream = self.codec.one_stream();
        if buf.is_empty() || (self.ended && one_stream) {
            return Ok(0);
        }
        loop {
            let input = self.source.fill_buf()?;
            let at_end = input.is_empty();
            let (used, made, ended) = self.codec.step(input, buf)?;
            self.source.consume(used);
            // A step that moved nothing says nothing new (libzstd then hints at the next
            // frame's header).
            if used > 0 || made > 0 || one_stream {
                self.ended = ended;
            }
            if made > 0 || (ended && one_stream) {
                return Ok(made);
            }
            if at_end {
                if self.ended {
                    return Ok(0);
                }
                let why = format!("the {} stream ends early", self.codec.name());
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, why));
            }
            // Input taken and nothing made yet (a block header): take more.
        }
    }
}

/// Whether an error of a [`CodecReader`] is about the data (corrupt, cut short) rather
/// than the source's own I/O: zlib-rs says `InvalidData` (`npz::inflate`), libzstd
/// `Other`, both `UnexpectedEof` for a stream cut short (the member's bytes were checked to
/// be in the file when it was opened).
pub(super) fn is_data_error(e: &io::Error) -> bool {
    use io::ErrorKind::{InvalidData, InvalidInput, Other, UnexpectedEof};
    matches!(e.kind(), InvalidData | InvalidInput | Other | UnexpectedEof)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::npz::DeflateOption;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Two Zstandard frames, one after the other, of the two halves of `data`.
    fn zstd_frames(data: &[u8]) -> Vec<u8> {
        let (a, b) = data.split_at(data.len() / 2);
        [zstd::encode_all(a, 3).unwrap(), zstd::encode_all(b, 3).unwrap()].concat()
    }

    #[test]
    #[cfg_attr(miri, ignore = "decompresses a megabyte: minutes under Miri")]
    fn a_stream_reads_back_in_any_pieces_and_a_cut_or_corrupt_one_is_an_error() {
        let data: Vec<u8> = (0..1u32 << 18).flat_map(|i| (i % 1000).to_le_bytes()).collect();
        let deflated = Method::Deflated(DeflateOption::Normal);
        for (method, stream) in [(deflated, deflate(&data)), (Method::Zstd, zstd_frames(&data))] {
            for size in [1, 7, 4096, 1 << 20] {
                let mut r = CodecReader::new(method, &stream[..]).unwrap();
                let (mut back, mut buf) = (Vec::new(), vec![0; size]);
                loop {
                    let n = r.read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    back.extend_from_slice(&buf[..n]);
                }
                assert!(back == data, "{method:?}: reads of {size}");
            }
            let cut = CodecReader::new(method, &stream[..stream.len() - 3]).unwrap().read_to_end(&mut Vec::new());
            let cut = cut.unwrap_err();
            assert_eq!(cut.kind(), io::ErrorKind::UnexpectedEof, "{method:?}: {cut}");
            assert!(is_data_error(&cut));
        }
        // A reserved block type (11) in the first byte.
        let corrupt = CodecReader::new(deflated, &[0x07u8, 0, 0][..]).unwrap().read_to_end(&mut Vec::new());
        let corrupt = corrupt.unwrap_err();
        assert_eq!(corrupt.kind(), io::ErrorKind::InvalidData, "{corrupt}");
        let corrupt = CodecReader::new(Method::Zstd, &[0xffu8; 64][..]).unwrap().read_to_end(&mut Vec::new());
        assert!(is_data_error(&corrupt.unwrap_err()));
        assert!(CodecReader::new(Method::Stored, &[][..]).is_err());
    }
}
