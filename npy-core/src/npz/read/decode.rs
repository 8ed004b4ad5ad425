//! A compressed member's bytes decompressed as its method says: deflate (zlib-rs) or
//! Zstandard (the `zstd` crate over libzstd). What a decoder holds is bounded whatever the
//! data claims: deflate's window is 32 KiB; a Zstandard frame's is what its header asks, at
//! most 128 MiB (libzstd's default limit, 2^27 bytes: a frame asking more is refused, as the
//! `zstd` tool refuses it without `--long`), and levels up to 19 ask at most 8 MiB.

use std::io::{self, BufReader, Read};

use super::directory;
use crate::npz::inflate::InflateReader;

/// A decompressing reader of a member's stored bytes `S`.
pub(in crate::npz) enum Decoder<S: Read> {
    Deflated(InflateReader<S>),
    Zstd(zstd::stream::read::Decoder<'static, BufReader<S>>),
}

impl<S: Read> Decoder<S> {
    /// A decoder of `data`, compressed with `method` (checked to be deflate or Zstandard
    /// when the archive was opened).
    ///
    /// # Errors
    /// When libzstd cannot allocate its context.
    pub(in crate::npz) fn new(method: u16, data: S) -> io::Result<Self> {
        Ok(match method {
            directory::ZSTD => Decoder::Zstd(zstd::stream::read::Decoder::new(data)?),
            _ => Decoder::Deflated(InflateReader::new(data)),
        })
    }
}

impl<S: Read> Read for Decoder<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Decoder::Deflated(d) => d.read(buf),
            Decoder::Zstd(d) => d.read(buf),
        }
    }
}

/// Whether an error of a decoder is about the data (corrupt, cut short) rather than the
/// source's own I/O: zlib-rs says `InvalidData` (`npz::inflate`), libzstd `Other`, both
/// `UnexpectedEof` for a stream cut short (the member's bytes were checked to be in the
/// file when it was opened).
pub(in crate::npz) fn is_data_error(e: &io::Error) -> bool {
    use io::ErrorKind::{InvalidData, InvalidInput, Other, UnexpectedEof};
    matches!(e.kind(), InvalidData | InvalidInput | Other | UnexpectedEof)
}
