//! What an archive holds, as its directory describes it: each member's [`MemberInfo`],
//! and the reads that find them, for callers that take the members' bytes themselves
//! (remote storage, a browser's ranges) as well as for [`Reader`].
//!
//! [`Reader`]: super::Reader

use std::io::{Read, Seek};
use std::ops::Range;

use super::{directory, Method, ReaderOptions};
use crate::error::Result;

/// What a member is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberInfo {
    /// The name as `np.load(f).files` shows it (`.npy` stripped).
    pub name: String,
    /// The member's name in the zip.
    pub member: String,
    /// Stored, deflated or Zstandard, as the archive records it: the method, and a
    /// deflated member's option ([`DeflateOption`](super::DeflateOption), from the zip
    /// flags), never a level, which archives do not record. Always `Some` for an open [`Reader`] (archives with
    /// other methods are refused when opened); `None` only in an info built by hand, which
    /// [`MemberDecoder`] takes as deflated.
    ///
    /// [`Reader`]: super::Reader
    /// [`MemberDecoder`]: super::MemberDecoder
    pub compression: Option<Method>,
    /// Bytes in the archive.
    pub compressed_size: u64,
    /// Bytes when read.
    pub size: u64,
    /// Offset of the member's data in the archive (checked against its local header and
    /// to lie, with the data, before the central directory), if known.
    pub data_start: Option<u64>,
    /// The CRC-32 of the member's bytes when read, as the directory says, if known (a
    /// reader of the member from elsewhere, e.g. a remote store, checks it).
    pub crc32: Option<u32>,
}

/// The byte ranges of an archive that opening it reads besides its end and central
/// directory: its members' local headers, which [`Reader::from_reader_with`] checks against
/// the directory. For readers of archives in remote storage: fetch the archive's end (its
/// last 64 KiB and 22 bytes hold the end record with the longest comment, and a directory
/// of about a thousand members), then these ranges all at once, then open it over what was
/// fetched, instead of making one round trip per member. Reads only the end records
/// and the central directory through `reader` (ranges closer than 64 KiB come merged, as
/// the opening reads through such gaps; a local header whose extra field is longer than
/// the directory's by more than 64 bytes runs past its range, and is then read on its own).
///
/// # Errors
/// As [`Reader::from_reader`], for the end records and the central directory.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::npz::{local_header_ranges, Writer};
///
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add("a", &vec![0.5f64; 100_000])?;
/// w.add("b", &[1u8, 2])?;
/// let bytes = w.finish()?.into_inner();
/// let ranges = local_header_ranges(&mut Cursor::new(&bytes))?;
/// assert_eq!(ranges.len(), 2); // 800 KB of `a` between the two headers
/// assert_eq!(ranges[0].start, 0);
/// # Ok::<(), npy_core::Error>(())
/// ```
///
/// [`Reader::from_reader_with`]: super::Reader::from_reader_with
/// [`Reader::from_reader`]: super::Reader::from_reader
pub fn local_header_ranges<R: Read + Seek>(reader: &mut R) -> Result<Vec<Range<u64>>> {
    local_header_ranges_with(reader, &ReaderOptions::default())
}

/// As [`local_header_ranges`], under the limits of `options` (as [`Reader::from_reader_with`]
/// takes them).
///
/// # Errors
/// As [`Reader::from_reader_with`], for the end records and the central directory.
///
/// [`Reader::from_reader_with`]: super::Reader::from_reader_with
pub fn local_header_ranges_with<R: Read + Seek>(reader: &mut R, options: &ReaderOptions) -> Result<Vec<Range<u64>>> {
    directory::local_header_ranges(reader, options.limits())
}

/// The members of an archive, read and checked as [`Reader::from_reader`] reads and checks
/// its directory and local headers, without a reader: for callers that take the members'
/// bytes themselves (a browser reading ranges of a `File`), through [`MemberDecoder`] and
/// the members' [`MemberInfo::data_start`].
///
/// [`MemberDecoder`]: super::MemberDecoder
///
/// # Errors
/// As [`Reader::from_reader`], but for the zip reader's own view of the archive, which
/// it does not open.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::npz::{members, Writer};
///
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add("a", &[1.5f64, 2.5])?;
/// let bytes = w.finish()?.into_inner();
/// let found = members(&mut Cursor::new(&bytes))?;
/// assert_eq!((found[0].name.as_str(), found[0].size), ("a", 144));
/// # Ok::<(), npy_core::Error>(())
/// ```
///
/// [`Reader::from_reader`]: super::Reader::from_reader
pub fn members<R: Read + Seek>(reader: &mut R) -> Result<Vec<MemberInfo>> {
    members_with(reader, &ReaderOptions::default())
}

/// As [`members`], under the limits of `options` (as [`Reader::from_reader_with`] takes
/// them).
///
/// # Errors
/// As [`members`].
///
/// [`Reader::from_reader_with`]: super::Reader::from_reader_with
pub fn members_with<R: Read + Seek>(reader: &mut R, options: &ReaderOptions) -> Result<Vec<MemberInfo>> {
    Ok(directory::read(reader, options.limits())?.iter().map(member_info).collect())
}

/// A checked directory entry as [`Reader::members`] gives it.
pub(super) fn member_info(e: &directory::Entry) -> MemberInfo {
    MemberInfo {
        name: e.key.clone(),
        member: e.member.clone(),
        compression: Some(e.method),
        compressed_size: e.compressed_size,
        size: e.size,
        data_start: Some(e.data_start),
        crc32: Some(e.crc32),
    }
}

impl MemberInfo {
    /// The member of `members` that `name` names, as every reader of archives looks it up
    /// ([`Reader::read`](super::Reader::read), remote archives, the bindings): the member
    /// whose array is called `name` (`x` is `x.npy`, as NumPy's `NpzFile` takes it), else
    /// the member of that zip name (`x.npy` itself, or a member named otherwise). `None`
    /// when no member has that name.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::npz::{MemberInfo, Reader, Writer};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("t", &[1u8])?;
    /// let r = Reader::from_reader(w.finish()?)?;
    /// assert_eq!(MemberInfo::find(r.members(), "t").map(|m| m.member.as_str()), Some("t.npy"));
    /// assert_eq!(MemberInfo::find(r.members(), "t.npy").map(|m| m.name.as_str()), Some("t"));
    /// assert!(MemberInfo::find(r.members(), "u").is_none());
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn find<'a>(members: &'a [MemberInfo], name: &str) -> Option<&'a MemberInfo> {
        members.iter().find(|m| m.name == name).or_else(|| members.iter().find(|m| m.member == name))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::npz::{Compression, DeflateOption, Reader, Writer};
    use crate::ErrorKind;

    #[test]
    fn members_are_what_a_reader_finds_and_its_checks_hold() {
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add("stored", &[1u8, 2, 3]).unwrap();
        w.add_with("deflated", &vec![0.5f64; 1000], Compression::deflated()).unwrap();
        if !cfg!(miri) {
            w.add_with("zstd", &vec![7i32; 1000], Compression::zstd()).unwrap();
        }
        let bytes = w.finish().unwrap().into_inner();
        let found = members(&mut Cursor::new(&bytes)).unwrap();
        let reader = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        assert_eq!(found, reader.members());
        assert_eq!(found[1].compression, Some(Method::Deflated(DeflateOption::Normal)));
        if !cfg!(miri) {
            assert_eq!(found[2].compression, Some(Method::Zstd));
        }

        // The limits hold as a reader's do: 8,000 bytes of doubles are more than 4,000.
        let e = members_with(&mut Cursor::new(&bytes), ReaderOptions::new().max_inflated_size(4000)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
        // A cut archive is refused.
        assert!(members(&mut Cursor::new(&bytes[..bytes.len() - 1])).is_err());
    }

    /// Sets the general-purpose flags of every header (local and central) of `member`.
    fn set_flags(bytes: &mut [u8], member: &[u8], flags: u16) {
        let mut found = 0;
        for at in 0..bytes.len() - 46 {
            let (sig, name_at) = match &bytes[at..at + 4] {
                b"PK\x03\x04" => (6, 30),
                b"PK\x01\x02" => (8, 46),
                _ => continue,
            };
            if bytes[at + name_at..].starts_with(member) {
                bytes[at + sig..at + sig + 2].copy_from_slice(&flags.to_le_bytes());
                found += 1;
            }
        }
        assert_eq!(found, 2, "the headers of {member:?}");
    }

    #[test]
    fn a_deflated_member_reports_the_option_its_flags_record() {
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add_with("x", &vec![0.5f64; 1000], Compression::Deflated { level: 9 }).unwrap();
        w.add("s", &[1u8, 2, 3]).unwrap();
        let written = w.finish().unwrap().into_inner();
        // npy's writer records no option, at any level, as Python's zipfile.
        let found = members(&mut Cursor::new(&written)).unwrap();
        assert_eq!(found[0].compression, Some(Method::Deflated(DeflateOption::Normal)));
        assert_eq!(found[0].compression.unwrap().compression(), Compression::deflated());
        // Bits 1 and 2 as Info-ZIP's `zip -9` (maximum), `-1` (fast) and others set them;
        // bit 11 (UTF-8 names) is beside them and changes nothing.
        let options = [DeflateOption::Normal, DeflateOption::Maximum, DeflateOption::Fast, DeflateOption::SuperFast];
        for (bits, option) in options.into_iter().enumerate() {
            for flags in [(bits as u16) << 1, (bits as u16) << 1 | 1 << 11] {
                let mut bytes = written.clone();
                set_flags(&mut bytes, b"x.npy", flags);
                set_flags(&mut bytes, b"s.npy", flags);
                let found = members(&mut Cursor::new(&bytes)).unwrap();
                assert_eq!(found[0].compression, Some(Method::Deflated(option)), "flags {flags:#06x}");
                // A stored member has no option, whatever its flags.
                assert_eq!(found[1].compression, Some(Method::Stored), "flags {flags:#06x}");
                let mut r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
                assert_eq!(r.members(), found);
                assert_eq!(r.read::<Vec<f64>>("x").unwrap(), vec![0.5; 1000]);
            }
        }
    }
}
