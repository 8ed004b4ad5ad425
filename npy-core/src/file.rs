//! Opening an input by path: only regular files, checked before they are opened.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::error::{Error, Result};

/// Opens `path` for reading, after checking that it is a regular file (symlinks followed):
/// what is not (a FIFO, a socket, a device, a directory) is refused before it is opened,
/// since opening a FIFO waits for a writer (a FIFO named like an input would hang the
/// reader), and a file's readers rely on its size and on reads at positions.
///
/// # Errors
/// [`ErrorKind::Io`](crate::ErrorKind::Io) saying what the path is (`is a FIFO, not a
/// file`), of kind [`io::ErrorKind::IsADirectory`] for a directory (as opening one to read
/// fails on other systems) and [`io::ErrorKind::InvalidInput`] for anything else; and the
/// errors of opening it. Both name the path.
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// let e = npy_core::open_file(dir.path()).unwrap_err();
/// assert!(e.to_string().ends_with("is a directory, not a file"), "{e}");
/// assert!(matches!(e.kind(), npy_core::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::IsADirectory));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_file(path: impl AsRef<Path>) -> Result<File> {
    let path = path.as_ref();
    let open = || -> io::Result<File> {
        regular(path)?;
        File::open(path)
    };
    open().map_err(|e| Error::from(e).reading(path))
}

/// The check of [`open_file`]: an error saying what `path` is when it is not a regular file
/// (a missing file is left to the open that follows, which reports it as it always did).
pub(crate) fn regular(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => {
            let what = format!("is {}, not a file", file_kind(&meta.file_type()));
            let kind = if meta.is_dir() { io::ErrorKind::IsADirectory } else { io::ErrorKind::InvalidInput };
            Err(io::Error::new(kind, what))
        }
    }
}

/// Whether `path` still names the file `file` is open on, and not another one a rename put
/// in its place (a rewritten file, a lock holder's directory taken over). `follow` follows
/// a symbolic link at `path`; without it a link never names the file. Only Unix can tell
/// (device and inode numbers); elsewhere any file there is taken to be it.
///
/// # Errors
/// The I/O error of reading either's metadata (a missing `path` is one).
pub fn names_file(path: impl AsRef<Path>, file: &File, follow: bool) -> io::Result<bool> {
    let path = path.as_ref();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let named = if follow { std::fs::metadata(path)? } else { std::fs::symlink_metadata(path)? };
        let ours = file.metadata()?;
        Ok((ours.dev(), ours.ino()) == (named.dev(), named.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, follow);
        std::fs::symlink_metadata(path).map(|_| true)
    }
}

/// What a file type that is not a regular file is, in words.
fn file_kind(ty: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ty.is_fifo() {
            return "a FIFO";
        } else if ty.is_socket() {
            return "a socket";
        } else if ty.is_char_device() {
            return "a character device";
        } else if ty.is_block_device() {
            return "a block device";
        }
    }
    if ty.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}
