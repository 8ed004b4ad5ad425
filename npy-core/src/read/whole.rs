//! [`Loader`]: whole `.npy` files read into [`DynArray`]s with the fewest system calls, the
//! way [`DynArray::read_npy`](crate::ReadNpy::read_npy) and a loop over a training set's
//! small files read them.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::NpyReader;
use crate::array::DynArray;
use crate::error::Result;
use crate::header::{Header, Version};
use crate::options::ReadOptions;

/// Files up to this size are read whole by one `read` into the buffer that becomes the
/// array's; larger ones by [`NpyReader`] (a 2 KiB file: 4 system calls instead of 14).
const SMALL: u64 = 1 << 20;

/// Reads whole `.npy` files into [`DynArray`]s: a file of up to 1 MiB by `open`, `fstat`,
/// one `read` into the buffer that becomes the array's, and `close`; anything else (a
/// larger file, one whose bytes are not exactly its header's, an error) by
/// [`NpyReader::from_path_with`], so results and errors are its own.
///
/// A loader remembers the last header it parsed and the bytes it was parsed from: a
/// training set's files mostly share one, and comparing its bytes costs a tenth of
/// parsing them. Keep one loader per thread for a loop over many files (`npy-store`'s
/// `many::load_many` reads a list of files on several threads this way).
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
/// use npy_core::{DynArray, Loader};
///
/// let dir = tempfile::tempdir()?;
/// let paths: Vec<_> = (0..3).map(|i| dir.path().join(format!("sample{i}.npy"))).collect();
/// for (i, path) in paths.iter().enumerate() {
///     vec![i as f32; 4].write_npy(path)?;
/// }
/// let mut loader = Loader::new();
/// let arrays: Vec<DynArray> = paths.iter().map(|p| loader.load(p)).collect::<Result<_, _>>()?;
/// assert_eq!(arrays[2].to_vec::<f32>()?, [2.0; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Loader {
    options: ReadOptions,
    memo: Option<Memo>,
    python2: bool,
}

/// The last header parsed, and the bytes it was parsed from (magic to padding). Parsing is
/// determined by those bytes and the options, so equal bytes give the same header.
#[derive(Debug)]
struct Memo {
    raw: Vec<u8>,
    header: Header,
    version: Version,
    python2: bool,
}

impl Loader {
    /// A loader with default [`ReadOptions`].
    pub fn new() -> Loader {
        Loader::default()
    }

    /// A loader that reads under `options` (a header size limit).
    pub fn new_with(options: &ReadOptions) -> Loader {
        Loader { options: options.clone(), memo: None, python2: false }
    }

    /// The array of the `.npy` file at `path` (any dtype but objects).
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`] and `read::<DynArray>`, naming `path`.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<DynArray> {
        let path = path.as_ref();
        self.python2 = false;
        if let Some(array) = self.load_small(path) {
            return Ok(array);
        }
        let reader = NpyReader::from_path_with(path, &self.options)?;
        self.python2 = reader.python2_header();
        reader.read_dyn()
    }

    /// The options the loader reads under.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// Whether the header of the file last loaded needed Python 2's `L` suffix on an
    /// integer to be read (see [`NpyReader::python2_header`]), for callers that warn as
    /// `np.load` does.
    pub fn python2_header(&self) -> bool {
        self.python2
    }

    /// The array of a regular file of at most [`SMALL`] bytes holding exactly one array of
    /// a dtype without objects; `None` for anything else, left to the reader.
    fn load_small(&mut self, path: &Path) -> Option<DynArray> {
        let mut bytes = read_small(path)?;
        let memo = match self.memo.take() {
            Some(memo) if bytes.starts_with(&memo.raw) => memo,
            _ => {
                let reader = NpyReader::from_reader_with(bytes.as_slice(), &self.options).ok()?;
                let raw = bytes.get(..reader.data_offset())?.to_vec();
                let (version, python2) = (reader.version(), reader.python2_header());
                Memo { raw, header: reader.header().clone(), version, python2 }
            }
        };
        let (header, offset, version, python2) = (memo.header.clone(), memo.raw.len(), memo.version, memo.python2);
        self.memo = Some(memo);
        if header.dtype.has_object() || bytes.len() != offset.checked_add(header.data_len().ok()?)? {
            return None;
        }
        bytes.drain(..offset);
        let array = DynArray::from_parts(header, bytes, Some(version)).ok()?;
        self.python2 = python2;
        Some(array)
    }
}

/// The bytes of the regular file at `path` if it holds at most [`SMALL`]: `open`, `fstat`,
/// one `read` (more only if the system returns less) and `close`.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let mut file = open_regular(path)?;
    let meta = file.metadata().ok().filter(std::fs::Metadata::is_file)?;
    if meta.len() > SMALL {
        return None;
    }
    let mut bytes = vec![0; usize::try_from(meta.len()).ok()?];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => return None,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(bytes)
}

/// `path` opened for reading: without waiting where the system can (a FIFO's open would
/// wait for a writer; the caller then finds it is not a regular file), which changes
/// nothing for a regular file's reads.
fn open_regular(path: &Path) -> Option<File> {
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(all(unix, not(target_family = "wasm")))]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    open.open(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{ReadNpy, WriteNpy};
    use crate::ErrorKind;

    /// Small files, a large one, a Python 2 header, and files the fast way leaves to the
    /// reader (trailing bytes, which it reads as `np.load` does; objects, a cut) give
    /// exactly what the reader gives, errors too.
    #[test]
    fn a_loader_gives_what_the_reader_gives() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        vec![1.5f64, -2.0].write_npy(at("a.npy")).unwrap();
        vec![3.5f64, 4.0].write_npy(at("b.npy")).unwrap();
        vec![7u16; 3].write_npy(at("c.npy")).unwrap();
        (0..(SMALL as usize)).map(|i| i as u8).collect::<Vec<u8>>().write_npy(at("large.npy")).unwrap();
        let mut bytes = std::fs::read(at("a.npy")).unwrap();
        bytes.extend_from_slice(b"junk");
        std::fs::write(at("trailing.npy"), &bytes).unwrap();
        std::fs::write(at("cut.npy"), &bytes[..bytes.len() - 12]).unwrap();
        let mut python2 = std::fs::read(at("c.npy")).unwrap();
        let text = String::from_utf8_lossy(&python2[10..]).replace("(3,), }", "(3L,),}");
        python2.truncate(10);
        python2.extend_from_slice(text.as_bytes());
        std::fs::write(at("python2.npy"), &python2).unwrap();
        crate::Array::from_shape_vec(vec![1], vec![crate::Object::Int(1)])
            .unwrap()
            .write_npy(at("objects.npy"))
            .unwrap();

        let mut loader = Loader::new();
        for name in ["a.npy", "b.npy", "c.npy", "a.npy", "large.npy", "python2.npy", "c.npy", "trailing.npy"] {
            let want = NpyReader::from_path(at(name)).unwrap();
            let python2 = want.python2_header();
            let want = want.read_dyn().unwrap();
            let got = loader.load(at(name)).unwrap();
            assert_eq!(
                (got.header(), got.data(), got.version()),
                (want.header(), want.data(), want.version()),
                "{name}"
            );
            assert_eq!(loader.python2_header(), python2, "{name}");
            // Small files of one array are read the fast way, the rest by the reader.
            let fast = loader.load_small(&at(name));
            assert_eq!(fast.is_some(), !matches!(name, "large.npy" | "trailing.npy"), "{name}");
            assert!(fast.is_none_or(|a| a.data() == want.data() && a.header() == want.header()), "{name}");
        }
        assert!(NpyReader::from_path(at("python2.npy")).unwrap().python2_header());
        for name in ["cut.npy", "objects.npy", "missing.npy"] {
            let want = NpyReader::from_path(at(name)).and_then(NpyReader::read_dyn);
            let want = want.map(|a| a.data().len()).expect_err(name);
            let got = loader.load(at(name)).unwrap_err();
            assert_eq!(got.to_string(), want.to_string(), "{name}");
            assert!(got.to_string().contains(name), "{got}");
        }
        assert!(matches!(DynArray::read_npy(dir.path()).unwrap_err().kind(), ErrorKind::Io(_)));
    }
}
