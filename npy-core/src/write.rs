//! Writing `.npy` data to paths (atomically) and to any [`io::Write`].

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::header::{Header, Version};
use crate::record::{NpyRecord, Plan};

/// Source bytes converted per step when a type's memory is not its file layout.
const CONVERT_CHUNK: usize = 1 << 20;

/// How to write `.npy` files. Every setting has a documented default.
///
/// # Examples
/// ```
/// use npy_core::header::Version;
/// use npy_core::{prelude::*, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("v2.npy");
/// [1u8, 2].write_npy_with(&path, WriteOptions::new().version(Version::V2_0))?;
/// assert_eq!(&std::fs::read(&path)?[6..8], &[2, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    version: Option<Version>,
}

impl WriteOptions {
    /// Default options: the oldest format version that fits the header, as `np.save`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forces a format version (as `numpy.lib.format.write_array(version=...)`); writing
    /// fails if the header does not fit it. Default: chosen as NumPy chooses.
    pub fn version(&mut self, version: Version) -> &mut Self {
        self.version = Some(version);
        self
    }

    pub(crate) fn forced_version(&self) -> Option<Version> {
        self.version
    }
}

/// Writes a file atomically: header and body go to a temporary file in the target's
/// directory, preallocated to its final size, which is renamed over `path` when complete.
/// On any error the temporary file is removed and an existing file at `path` is untouched.
pub(crate) fn to_path(path: &Path, header: &[u8], body: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".npy-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // As a plain `File::create`: 0o666 less the umask (tempfile's default is 0o600).
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(header)?;
    body(tmp.as_file_mut())?;
    tmp.persist(path).map_err(|e| Error::from(e.error))?;
    Ok(())
}

/// Reserves `len` bytes for a file about to be written, so the file system allocates its
/// blocks at once (what makes `np.save` fast). Best effort: unsupported file systems are
/// simply written without it.
fn preallocate(file: &File, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let Ok(len) = libc::off_t::try_from(len) else { return };
        if len > 0 {
            // SAFETY: `fallocate` on a file descriptor we own, with mode 0 (allocate and
            // extend); it touches no memory of ours. Errors are ignored on purpose.
            unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len);
}

pub(crate) fn typed_to_path<T: NpyRecord>(path: &Path, header: Header, data: &[T], opts: &WriteOptions) -> Result<()> {
    let (_, head) = header.encode(opts.forced_version())?;
    let total = head.len() as u64 + header.data_len()? as u64;
    to_path(path, &head, |file| {
        preallocate(file, total);
        write_elements(file, data)
    })
}

pub(crate) fn typed_to_writer<W: Write, T: NpyRecord>(mut writer: W, header: Header, data: &[T]) -> Result<W> {
    let (_, head) = header.encode(None)?;
    writer.write_all(&head)?;
    write_elements(&mut writer, data)?;
    Ok(writer)
}

/// Writes the elements in `T::dtype()` layout: one bulk write when `T`'s memory is that
/// layout, else converted field by field in chunks.
fn write_elements<W: Write, T: NpyRecord>(writer: &mut W, data: &[T]) -> Result<()> {
    let plan = Plan::new(&T::native_dtype(), &T::dtype())?;
    if plan.src_size() != std::mem::size_of::<T>() {
        return Err(Error::usage(format!(
            "NpyRecord for {} describes {} bytes but the type has {}",
            std::any::type_name::<T>(),
            plan.src_size(),
            std::mem::size_of::<T>()
        )));
    }
    if plan.is_identity() && plan.covers_all_src() {
        // SAFETY:
        // - the pointer and length come from a live `&[T]`, so the bytes are readable;
        // - the plan covers every byte of `T`, so `T` has no padding and all its bytes are
        //   initialized (NpyRecord's contract: the native dtype describes `T` exactly);
        // - `u8` has alignment 1 and no invalid values.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        writer.write_all(bytes)?;
        return Ok(());
    }
    let per_chunk = (CONVERT_CHUNK / plan.dst_size().max(1)).max(1);
    let mut out = vec![0u8; per_chunk.min(data.len()) * plan.dst_size()];
    for (k, chunk) in data.chunks(per_chunk).enumerate() {
        let dst = &mut out[..chunk.len() * plan.dst_size()];
        // SAFETY:
        // - `chunk` is a live `&[T]` of `chunk.len()` elements of `size_of::<T>()` bytes,
        //   which equals the plan's source element size (checked above);
        // - the plan reads only the bytes of fields of `T::native_dtype()`, which are
        //   initialized (NpyRecord's contract), never padding.
        unsafe { plan.run_raw(chunk.as_ptr().cast::<u8>(), chunk.len(), dst, k * per_chunk)? };
        writer.write_all(dst)?;
    }
    Ok(())
}

impl From<tempfile::PersistError> for Error {
    fn from(e: tempfile::PersistError) -> Self {
        Error::from(io::Error::from(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// A writer that fails after `limit` bytes.
    #[derive(Debug)]
    struct FailAfter {
        limit: usize,
        written: usize,
    }

    impl Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written + buf.len() > self.limit {
                return Err(io::Error::other("disk full"));
            }
            self.written += buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        [1.0f64, 2.0].write_npy(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = to_path(&path, b"partial", |_| Err(Error::usage("boom")));
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("a.npy")]);
        let e = [1u8; 1000].write_npy_to(FailAfter { limit: 200, written: 0 }).unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Io(_)), "{e}");
    }

    #[test]
    fn path_write_is_readable_by_others() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.npy");
            [1u8].write_npy(&path).unwrap();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_ne!(mode & 0o044, 0, "mode {mode:o}");
        }
    }

    #[test]
    fn forced_version_that_does_not_fit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let arr = DynArray::new(Header::new("[('温', '<f4')]".parse().unwrap(), vec![1]), vec![0; 4]).unwrap();
        let e = arr.write_npy_with(dir.path().join("x.npy"), WriteOptions::new().version(Version::V1_0)).unwrap_err();
        assert!(matches!(e.kind(), crate::ErrorKind::Usage { .. }), "{e}");
        assert!(!dir.path().join("x.npy").exists());
    }
}
