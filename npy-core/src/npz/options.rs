//! How an archive is opened: [`ReaderOptions`], the limits on what its directory may claim
//! and the options its members are read with, for [`Reader`] and for the
//! readers of archives elsewhere that take the same options.
//!
//! [`Reader`]: super::Reader

use super::directory;
use crate::options::ReadOptions;

/// How to open an `.npz` archive: limits on what its directory may claim, and the options
/// for its members' `.npy` headers. Every setting has a documented default.
///
/// Whatever the limits, [`Reader`] checks the archive's structure when it opens it (see
/// its documentation): the limits bound what a valid-looking archive may make a reader
/// allocate and decompress.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::npz::{Compression, Reader, ReaderOptions, Writer};
/// use npy_core::ErrorKind;
///
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add_with("zeros", &vec![0u8; 1 << 20], Compression::deflated())?;
/// let bytes = w.finish()?.into_inner();
///
/// // 1 MiB of zeros deflates to about a kilobyte; a reader of untrusted archives can
/// // refuse to decompress more than it is prepared to hold.
/// let e = Reader::from_reader_with(Cursor::new(&bytes), ReaderOptions::new().max_inflated_size(64 << 10)).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Npz { .. }));
/// let mut r = Reader::from_reader_with(Cursor::new(&bytes), ReaderOptions::new().max_inflated_size(2 << 20))?;
/// assert_eq!(r.read::<Vec<u8>>("zeros")?.len(), 1 << 20);
/// # Ok::<(), npy_core::Error>(())
/// ```
///
/// [`Reader`]: super::Reader
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    max_entries: usize,
    pub(super) max_inflated_size: u64,
    pub(super) read_options: ReadOptions,
    pub(super) threads: Option<usize>,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_entries: ReaderOptions::DEFAULT_MAX_ENTRIES,
            max_inflated_size: ReaderOptions::DEFAULT_MAX_INFLATED_SIZE,
            read_options: ReadOptions::new(),
            threads: None,
        }
    }
}

impl ReaderOptions {
    /// Default of [`ReaderOptions::max_entries`]: 65,536, one more than a zip without zip64
    /// records can count.
    pub const DEFAULT_MAX_ENTRIES: usize = 1 << 16;
    /// Default of [`ReaderOptions::max_inflated_size`]: 64 GiB.
    pub const DEFAULT_MAX_INFLATED_SIZE: u64 = 64 << 30;

    /// Default options: at most 65,536 members, deflated members claiming at most 64 GiB
    /// in all, and default [`ReadOptions`] for members' headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Largest number of members accepted, checked on the count the end record claims
    /// before the central directory is read. Default [`ReaderOptions::DEFAULT_MAX_ENTRIES`]
    /// (65,536).
    pub fn max_entries(&mut self, entries: usize) -> &mut Self {
        self.max_entries = entries;
        self
    }

    /// Largest total of the sizes the compressed members claim (deflate and Zstandard
    /// alike: the name says "inflated", but it counts the decompressed bytes of either),
    /// checked when the archive is opened. Reading a member decompresses at most its
    /// claimed size (more is an error), so this bounds the bytes decompressed from the archive and the memory any one read
    /// allocates for it. Stored members are not counted: their bytes are in the file.
    /// Default [`ReaderOptions::DEFAULT_MAX_INFLATED_SIZE`] (64 GiB): larger than typical
    /// archives hold, so `np.savez_compressed` output opens unchanged; readers of
    /// untrusted archives should set what they are prepared to hold in memory.
    pub fn max_inflated_size(&mut self, bytes: u64) -> &mut Self {
        self.max_inflated_size = bytes;
        self
    }

    /// Options for reading members' `.npy` headers (e.g. the header size limit). Default
    /// [`ReadOptions::new`].
    pub fn read_options(&mut self, options: &ReadOptions) -> &mut Self {
        self.read_options = options.clone();
        self
    }

    /// The options members are read with, as [`ReaderOptions::read_options`] set them: for
    /// readers of archives elsewhere (npy-store's `RemoteNpz`) that take one
    /// `ReaderOptions` as this crate's [`Reader`] does.
    ///
    /// [`Reader`]: super::Reader
    pub fn member_options(&self) -> &ReadOptions {
        &self.read_options
    }

    /// Most members read at once, each on a thread of its own, by the reads of several
    /// members ([`Reader::read_all`], [`Reader::read_many`]); never more than one per CPU.
    /// Default: the number of CPUs. 1 reads every member on the caller's thread alone (0 is
    /// taken as 1); above 1, a large compressed member read alone is also decompressed on
    /// a second thread (see [`Reader`]).
    ///
    /// [`Reader::read_all`]: super::Reader::read_all
    /// [`Reader::read_many`]: super::Reader::read_many
    /// [`Reader`]: super::Reader
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// The directory's limits these options set.
    pub(super) fn limits(&self) -> directory::Limits {
        directory::Limits { max_entries: self.max_entries, max_inflated: self.max_inflated_size }
    }
}
