//! Reading from streams and files until a buffer is full: the small I/O helpers under both
//! the `.npy` reader and the pickle decoder. Pure I/O: nothing here knows about headers,
//! dtypes or arrays.
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, Read};

use crate::error::Result;

/// Bytes read per step when a source's length is unknown, so a length the source only
/// claims (a header's shape, a pickle's frame) costs memory only as data actually arrives.
pub(crate) const STREAM_CHUNK: usize = 16 << 20;

/// Reads until `buf` is full or the input ends; returns the bytes read.
///
/// # Errors
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from the reader (interruptions are retried).
pub(crate) fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

/// Appends up to `len` bytes from `reader` to `out` (fewer if the input ends first) and
/// returns how many: the buffer grows as bytes arrive (std's `read_to_end`, doubling from
/// a small probe), so a length the input only claims costs memory, and time, only as far
/// as its bytes are present. (Growing by zero-filled 16 MiB steps cost each hostile claim
/// a 16 MiB fill: 90% of the pickle checks' tests in debug builds.)
///
/// # Errors
/// As [`read_full`]; `out` keeps the bytes read before the error.
pub(crate) fn read_growing<R: Read>(reader: &mut R, len: usize, out: &mut Vec<u8>) -> Result<usize> {
    let start = out.len();
    let limit = u64::try_from(len).unwrap_or(u64::MAX);
    reader.by_ref().take(limit).read_to_end(out)?;
    Ok(out.len() - start)
}

/// Reads `buf.len()` bytes of `file` at `offset` unless the file ends first; returns how
/// many were read. Does not use or move the file's cursor on Unix.
///
/// # Errors
/// As [`read_full`].
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match read_at(file, &mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

/// One read of `file` at `offset` (it may read fewer bytes than `buf` holds); 0 at the
/// file's end. Does not use or move the file's cursor on Unix.
#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    // Reads at `offset`; it also moves the handle's cursor, which this handle's users
    // never rely on.
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(not(any(unix, windows)))]
pub(crate) fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> io::Result<usize> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "positional reads"))
}
