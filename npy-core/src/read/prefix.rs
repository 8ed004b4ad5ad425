//! A header from a file's first bytes, for readers of remote storage that fetch a prefix
//! and then only what this asks for.

use super::{check_present, read_header};
use crate::error::{ErrorKind, Result};
use crate::header::{Header, Version, MAGIC_VERSION_LEN};
use crate::options::ReadOptions;

/// What the first bytes of a file say ([`HeaderPrefix::parse_with`]).
#[derive(Debug, Clone, PartialEq)]
pub enum HeaderPrefix {
    /// The header is in the prefix.
    Complete {
        /// The parsed header.
        header: Header,
        /// The file's format version.
        version: Version,
        /// Where the data starts, from the start of the file.
        data_offset: usize,
    },
    /// The header needs the first `n` bytes of the file (more than the prefix holds).
    NeedBytes(usize),
}

impl HeaderPrefix {
    /// [`HeaderPrefix::parse_with`] with default [`ReadOptions`].
    ///
    /// # Errors
    /// As [`HeaderPrefix::parse_with`].
    pub fn parse(prefix: &[u8], file_len: u64) -> Result<HeaderPrefix> {
        HeaderPrefix::parse_with(prefix, file_len, &ReadOptions::default())
    }

    /// Reads the header from the first bytes of a file (or object) of `file_len` bytes, as
    /// a reader over remote storage does: fetch a prefix (4 KiB holds any header NumPy
    /// writes for arrays of fewer than a few hundred fields), and fetch more only when
    /// this says so. The same checks as
    /// [`NpyReader::from_path_with`](crate::NpyReader::from_path_with) apply: the header
    /// size limit, and a header that claims more data than `file_len` holds. Only the sizes
    /// differ, on a 32-bit host: the data is not read here, so a header describing more
    /// than `isize::MAX` bytes is accepted up to
    /// [`MAX_DATA_LEN`](crate::header::MAX_DATA_LEN) (2^53; see
    /// [`Header::data_len_u64`]), for a reader that reads its ranges.
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`](crate::NpyReader::from_path_with), without the I/O.
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, HeaderPrefix, ReadOptions};
    ///
    /// let file = vec![1.5f64; 100].write_npy_to(Vec::new())?;
    /// let options = ReadOptions::new();
    /// // Start with too few bytes: each answer says how many are needed next.
    /// let mut have = 8;
    /// let (header, data_offset) = loop {
    ///     match HeaderPrefix::parse_with(&file[..have], file.len() as u64, &options)? {
    ///         HeaderPrefix::NeedBytes(n) => have = n,
    ///         HeaderPrefix::Complete { header, data_offset, .. } => break (header, data_offset),
    ///     }
    /// };
    /// assert_eq!((header.shape.as_slice(), data_offset, have), (&[100][..], 128, 128));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse_with(prefix: &[u8], file_len: u64, options: &ReadOptions) -> Result<HeaderPrefix> {
        let have = prefix.len() as u64;
        let need = |n: usize| if have < file_len.min(n as u64) { Some(HeaderPrefix::NeedBytes(n)) } else { None };
        if let Some(more) = need(MAGIC_VERSION_LEN) {
            return Ok(more);
        }
        let version = Version::from_magic(prefix)?;
        if let Some(more) = need(version.preamble_len()) {
            return Ok(more);
        }
        if let Some(field) = prefix.get(MAGIC_VERSION_LEN..version.preamble_len()) {
            let header_len = version.decode_header_len(field)?;
            if header_len > options.header_limit() {
                return Err(ErrorKind::HeaderTooLarge { len: header_len as u64, limit: options.header_limit() }.into());
            }
            if let Some(more) = need(version.preamble_len() + header_len) {
                return Ok(more);
            }
        }
        let (version, header_len, header, _) = read_header(&mut &prefix[..], options, Some(file_len))?;
        let data_offset = version.preamble_len() + header_len;
        // The data is not read here: its length is the header codec's (up to 2^53 on a
        // 32-bit host), not what an NpyReader could hold (Header::data_len).
        check_present(&header, header.data_len_u64()?, file_len - data_offset as u64)?;
        Ok(HeaderPrefix::Complete { data_offset, version, header })
    }
}
