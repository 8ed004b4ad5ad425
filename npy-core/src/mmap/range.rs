//! A byte range of an open file mapped read-only, for engines that decode rows from it
//! ([`MappedRange`]), and the caller's acceptance of the maps' contract that lets safe
//! code make such maps ([`MapContract`]).

use std::fmt;
use std::fs::File;
use std::ops::{Deref, Range};

use memmap2::{Mmap, MmapOptions};

use crate::error::{ErrorKind, Result};

/// Proof that the caller accepted the [contract of maps](super::NpyMap#safety) for the files
/// a scan will map: created only by the `unsafe` [`MapContract::accept`], and then passed,
/// copied, to code that maps files with [`MappedRange::map`] without being `unsafe` itself.
///
/// This is how an engine that is itself free of `unsafe` code (npy-store, npy-datafusion)
/// offers memory-mapped scans of local files: the one `unsafe` act is the user's, where the
/// user knows the files.
///
/// # Examples
/// ```
/// use npy_core::mmap::{MapContract, MappedRange};
/// use npy_core::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t0.npy");
/// (0..100).map(f64::from).collect::<Vec<_>>().write_npy(&path)?;
/// // SAFETY: nothing modifies or truncates the files of this directory while they are mapped.
/// let contract = unsafe { MapContract::accept() };
/// // Rows 10..12 of the data, which starts at byte 128.
/// let file = std::fs::File::open(&path)?;
/// let rows = MappedRange::map(&file, 128 + 10 * 8..128 + 12 * 8, contract)?;
/// assert_eq!(rows[..8], 10f64.to_le_bytes());
/// assert_eq!(rows.len(), 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MapContract(());

impl MapContract {
    /// The caller's acceptance of the maps' contract, for every file that is mapped with this
    /// value or a copy of it.
    ///
    /// # Safety
    /// The contract of [`NpyMap`](super::NpyMap#safety), for every file mapped with this
    /// value: while a [`MappedRange`] of a file lives, nothing modifies the bytes it covers
    /// and nothing truncates the file below them (no other process, no other handle or map
    /// in this program). Otherwise the behavior is undefined: values change under a `&[u8]`,
    /// or the process dies of `SIGBUS`.
    pub unsafe fn accept() -> MapContract {
        MapContract(())
    }
}

/// Bytes `range` of a file, mapped read-only: a `&[u8]` through [`Deref`] and [`AsRef`],
/// `Send` and `Sync`, so that it may own the memory of a `bytes::Bytes` or an Arrow buffer.
///
/// Mapping costs a system call whatever the size; the pages are read when first touched, so
/// a scan that looks at a few bytes of each row reads those pages from the page cache
/// without copying the rest, where `read` copies every byte.
pub struct MappedRange {
    /// `None` for an empty range (a map cannot be empty).
    map: Option<Mmap>,
}

impl MappedRange {
    /// Maps bytes `range` of `file` (open for reading) read-only, under `contract`.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when the file is shorter than `range.end` (a page past the
    /// end would be `SIGBUS` when touched, so it is never mapped); [`ErrorKind::Io`] when
    /// the file's size cannot be read or the map fails; [`ErrorKind::WrongShape`] for a
    /// range that runs backwards or does not fit the address space.
    pub fn map(file: &File, range: Range<u64>, contract: MapContract) -> Result<MappedRange> {
        let MapContract(()) = contract;
        if range.start > range.end {
            let reason = format!("bytes {}..{} of a file asked to be mapped", range.start, range.end);
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        let size = file.metadata()?.len();
        if size < range.end {
            return Err(ErrorKind::Truncated { expected: range.end, found: size }.into());
        }
        let len = usize::try_from(range.end - range.start).map_err(|_| {
            let reason = format!("{} bytes do not fit this machine's address space", range.end - range.start);
            ErrorKind::WrongShape { reason }
        })?;
        if len == 0 {
            return Ok(MappedRange { map: None });
        }
        // SAFETY:
        // - the range lies inside the file (its size checked above), so no mapped page is
        //   past its end when the map is made, and `contract` is the caller's promise that
        //   nothing modifies these bytes or truncates the file while the map lives
        //   (`MapContract::accept`'s contract, which is `NpyMap`'s).
        let map = unsafe { MmapOptions::new().offset(range.start).len(len).map(file)? };
        Ok(MappedRange { map: Some(map) })
    }
}

impl MappedRange {
    /// Maps the pages of bytes `range` of the map into the process now, in one system call
    /// (`madvise(MADV_POPULATE_READ)` on Linux 5.14 and later; elsewhere nothing), instead
    /// of a page fault per 16 pages as they are first touched: for a scan about to read
    /// every page of a block of rows (a third less time in the kernel than faults, measured
    /// over a 584 MB table). A range past the end is cut to it.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the file was cut short under the map (the contract broken:
    /// touching those pages would be `SIGBUS`). A kernel without the call is no error.
    pub fn populate(&self, range: Range<usize>) -> Result<()> {
        let Some(map) = &self.map else { return Ok(()) };
        let end = range.end.min(map.len());
        if range.start >= end {
            return Ok(());
        }
        #[cfg(target_os = "linux")]
        if let Err(e) = map.advise_range(memmap2::Advice::PopulateRead, range.start, end - range.start) {
            // EFAULT: pages past the file's end (it was truncated); EINVAL, ENOSYS: an
            // older kernel, where pages are faulted in as they are touched.
            if e.raw_os_error() == Some(libc::EFAULT) {
                let reason = format!("{} mapped bytes, of which some are past the file's end now", map.len());
                return Err(ErrorKind::Io(std::io::Error::other(reason)).into());
            }
        }
        Ok(())
    }
}

impl Deref for MappedRange {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

impl AsRef<[u8]> for MappedRange {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for MappedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedRange").field("len", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(bytes).unwrap();
        tmp.flush().unwrap();
        let file = File::open(tmp.path()).unwrap();
        (tmp, file)
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not support file-backed memory maps")]
    fn maps_any_range_inside_the_file() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (_tmp, file) = file_of(&bytes);
        // SAFETY: the temporary file is not changed while mapped.
        let contract = unsafe { MapContract::accept() };
        for range in [0..20_000u64, 1..2, 4095..4097, 4096..8192, 12_345..20_000, 20_000..20_000, 7..7] {
            let map = MappedRange::map(&file, range.clone(), contract).unwrap();
            assert_eq!(&map[..], &bytes[range.start as usize..range.end as usize], "{range:?}");
            assert_eq!(map.as_ref().len(), (range.end - range.start) as usize);
        }
    }

    #[test]
    fn refuses_ranges_past_the_end_and_backwards() {
        let (_tmp, file) = file_of(&[1, 2, 3]);
        // SAFETY: the temporary file is not changed while mapped.
        let contract = unsafe { MapContract::accept() };
        let e = MappedRange::map(&file, 0..4, contract).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { expected: 4, found: 3 }), "{e}");
        let e = MappedRange::map(&file, 10..10, contract).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { expected: 10, found: 3 }), "{e}");
        #[allow(clippy::reversed_empty_ranges)]
        let e = MappedRange::map(&file, 2..1, contract).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    }
}
