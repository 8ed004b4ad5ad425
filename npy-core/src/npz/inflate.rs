//! Inflate by zlib-rs, on every target. Natively flate2 deflates with C zlib, for
//! CPython's bytes, but zlib-rs inflates faster: the `npz` bench's 8 deflated members
//! (256 MB) read in 0.301 s, where C zlib took 0.336 s and `np.load` 0.452 s
//! (`cargo xtask bench --only npz`, 2 CPUs). [`Inflater`] is pushed its input;
//! [`InflateReader`] pulls it from a reader.

use std::io::{self, BufRead, BufReader, Read};

use zlib_rs::{Inflate, InflateFlush, Status};

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

/// A reader inflating the raw deflate stream that `R` gives; a stream that ends before
/// its end block is an `UnexpectedEof` error.
pub(super) struct InflateReader<R> {
    source: BufReader<R>,
    inflater: Inflater,
    ended: bool,
}

impl<R: Read> InflateReader<R> {
    pub(super) fn new(source: R) -> InflateReader<R> {
        InflateReader { source: BufReader::with_capacity(32 << 10, source), inflater: Inflater::new(), ended: false }
    }
}

impl<R: Read> Read for InflateReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.ended {
            return Ok(0);
        }
        loop {
            let input = self.source.fill_buf()?;
            let at_end = input.is_empty();
            let (used, made, ended) = self.inflater.step(input, buf)?;
            self.source.consume(used);
            self.ended = ended;
            if made > 0 || ended {
                return Ok(made);
            }
            if at_end {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the deflate stream ends early"));
            }
            // Input taken and nothing made yet (a block header): take more.
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    #[cfg_attr(miri, ignore = "inflates a megabyte: minutes under Miri")]
    fn a_stream_reads_back_in_any_pieces_and_a_cut_or_corrupt_one_is_an_error() {
        let data: Vec<u8> = (0..1u32 << 18).flat_map(|i| (i % 1000).to_le_bytes()).collect();
        let stream = deflate(&data);
        for size in [1, 7, 4096, 1 << 20] {
            let mut r = InflateReader::new(&stream[..]);
            let (mut back, mut buf) = (Vec::new(), vec![0; size]);
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                back.extend_from_slice(&buf[..n]);
            }
            assert!(back == data, "reads of {size}");
        }
        let cut = InflateReader::new(&stream[..stream.len() / 2]).read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(cut.kind(), io::ErrorKind::UnexpectedEof);
        // A reserved block type (11) in the first byte.
        let corrupt = InflateReader::new(&[0x07u8, 0, 0][..]).read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(corrupt.kind(), io::ErrorKind::InvalidData, "{corrupt}");
    }
}
