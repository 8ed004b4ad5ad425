//! What says a local file is still the one opened: its size, modification time, device and
//! inode, looked at again before its bytes are used (a table's files during a scan, a lazy
//! array's shards before each read). A file replaced (renamed over) or rewritten in place
//! changes one of them.

use std::fs::Metadata;
use std::path::Path;

/// A local file's size, modification time, device and inode.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    device: u64,
    inode: u64,
}

impl Stamp {
    /// The stamp of a file's metadata (that of an open file, or of a path).
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        let (device, inode) = (std::os::unix::fs::MetadataExt::dev(meta), std::os::unix::fs::MetadataExt::ino(meta));
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Stamp { len: meta.len(), modified: meta.modified().ok(), device, inode }
    }

    /// The stamp as text, `size:mtime_ns:device:inode` (equal for the same file unchanged):
    /// a value callers outside Rust compare ([`crate::Source::stamp`]).
    pub(crate) fn key(&self) -> String {
        let nanos = self.modified.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_nanos());
        format!("{}:{}:{}:{}", self.len, nanos.unwrap_or(0), self.device, self.inode)
    }

    /// The stamp of the file at `path` now.
    pub(crate) fn of_path(path: &Path) -> std::io::Result<Stamp> {
        std::fs::metadata(path).map(|meta| Stamp::of(&meta))
    }
}
