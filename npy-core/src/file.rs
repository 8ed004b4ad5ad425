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
/// [`ErrorKind::Io`] of kind [`io::ErrorKind::InvalidInput`] saying what the path is
/// (`is a FIFO, not a file`), and the errors of opening it; both name the path.
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// let e = npy_core::open_file(dir.path()).unwrap_err();
/// assert!(e.to_string().ends_with("is a directory, not a file"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_file(path: impl AsRef<Path>) -> Result<File> {
    let path = path.as_ref();
    let open = || -> io::Result<File> {
        match std::fs::metadata(path) {
            // A missing file is reported by the open, as it always was.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
            Ok(meta) if meta.is_file() => {}
            Ok(meta) => {
                let what = format!("is {}, not a file", file_kind(&meta.file_type()));
                return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
            }
        }
        File::open(path)
    };
    open().map_err(|e| Error::from(e).reading(path))
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
