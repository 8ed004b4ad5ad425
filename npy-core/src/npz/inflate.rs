//! Inflate by zlib-rs, on every target. Natively flate2 deflates with C zlib, for
//! CPython's bytes, but zlib-rs inflates faster: the `npz` bench's 8 deflated members
//! (256 MB) read in 0.301 s, where C zlib took 0.336 s and `np.load` 0.452 s
//! (`cargo xtask bench --only npz`, 2 CPUs). [`Inflater`] is pushed its input (a
//! [`super::codec::CodecReader`] pulls it from a reader).

use std::io;

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
