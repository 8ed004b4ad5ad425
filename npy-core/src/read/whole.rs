//! [`Loader`]: whole `.npy` files read into [`DynArray`]s with the fewest system calls, the
//! way [`DynArray::read_npy`](crate::ReadNpy::read_npy) and a loop over a training set's
//! small files read them; and [`Loader::open`], which tells what a file holds by its first
//! bytes as `np.load` does, reading it once.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::NpyReader;
use crate::array::DynArray;
use crate::error::{Error, Result};
use crate::header::{FileKind, Header, Version};
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
        self.array_of(&mut bytes)
    }

    /// The array `bytes` (a whole file) hold, taking them, when they are exactly one array
    /// of a dtype without objects; `None` (the bytes left as they are) for anything else.
    fn array_of(&mut self, bytes: &mut Vec<u8>) -> Option<DynArray> {
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
        let mut data = std::mem::take(bytes);
        data.drain(..offset);
        let array = DynArray::from_parts(header, data, Some(version)).ok()?;
        self.python2 = python2;
        Some(array)
    }

    /// What the file at `path` holds, told by its first bytes as `np.load` tells them (a
    /// `.npy` by its magic, an archive by a zip's), the file opened once: with
    /// `read_data`, a `.npy` array read whole (a small file by one `read`, as
    /// [`Loader::load`]); a `.npy` file's reader past its header for an object array, or
    /// for any without `read_data` (to map the data); an archive's file at its start.
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`] and `read::<DynArray>`, naming `path`: a file
    /// that is not regular, a bad header, data shorter than the header says.
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    /// use npy_core::{Loader, Opened};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let (npy, empty) = (dir.path().join("a.npy"), dir.path().join("empty"));
    /// vec![1.5f64, 2.5].write_npy(&npy)?;
    /// std::fs::write(&empty, b"")?;
    /// let mut loader = Loader::new();
    /// let Opened::Array(array) = loader.open(&npy, true)? else { panic!("an array") };
    /// assert_eq!(array.to_vec::<f64>()?, [1.5, 2.5]);
    /// let Opened::Npy(reader) = loader.open(&npy, false)? else { panic!("a header") };
    /// assert_eq!((reader.header().shape.as_slice(), reader.data_offset()), (&[2][..], 128));
    /// assert!(matches!(loader.open(&empty, true)?, Opened::Empty));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(&mut self, path: impl AsRef<Path>, read_data: bool) -> Result<Opened> {
        let path = path.as_ref();
        self.python2 = false;
        let io = |e: std::io::Error| Error::from(e).reading(path);
        // `open` and `fstat`, as a small file's read; what is not a regular file gets
        // `open_file`'s error, which says what it is.
        let (mut file, len) = match open_regular(path) {
            Some(found) => found,
            None => {
                let file = crate::file::open_file(path)?;
                let len = file.metadata().map_err(io)?.len();
                (file, len)
            }
        };
        let mut start = Vec::new();
        if read_data && len <= SMALL {
            // A small file whole: the array's own buffer when it is a plain array.
            start = read_len(&mut file, len).map_err(io)?;
            if let Some(array) = self.array_of(&mut start) {
                return Ok(Opened::Array(array));
            }
        } else {
            (&mut file).take(FileKind::PROBE_LEN as u64).read_to_end(&mut start).map_err(io)?;
        }
        let opened = match FileKind::of(&start) {
            FileKind::Empty => Opened::Empty,
            FileKind::Other => Opened::Other,
            kind @ (FileKind::Zip | FileKind::Npy) => {
                file.seek(SeekFrom::Start(0)).map_err(io)?;
                if kind == FileKind::Zip {
                    return Ok(Opened::Archive(file));
                }
                let reader = NpyReader::from_opened(file, path, &self.options)?;
                self.python2 = reader.python2_header();
                if !read_data || reader.header().dtype.has_object() {
                    return Ok(Opened::Npy(reader));
                }
                Opened::Array(reader.read_dyn()?)
            }
        };
        Ok(opened)
    }
}

/// What [`Loader::open`] returns: what a file holds.
#[derive(Debug)]
pub enum Opened {
    /// A `.npy` array, read whole (any dtype but Python objects).
    Array(DynArray),
    /// A `.npy` file past its header, its data not read: an object array (its pickle), or
    /// any array opened without `read_data`.
    Npy(NpyReader<BufReader<File>>),
    /// A zip archive (an `.npz`, told by its first bytes): the file, at its start.
    Archive(File),
    /// An empty file (`np.load` raises `EOFError`).
    Empty,
    /// Neither a `.npy` nor a zip (`np.load` would try it as a pickle).
    Other,
}

/// The bytes of the regular file at `path` if it holds at most [`SMALL`]: `open`, `fstat`,
/// one `read` (more only if the system returns less) and `close`.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let (mut file, len) = open_regular(path)?;
    if len > SMALL {
        return None;
    }
    let bytes = read_len(&mut file, len).ok()?;
    if bytes.len() as u64 != len {
        return None;
    }
    Some(bytes)
}

/// Up to `len` bytes of `file` from its position, by one `read` into a buffer of that size
/// (more only if the system returns less); fewer if the file ends first.
fn read_len(file: &mut File, len: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0; usize::try_from(len).map_err(std::io::Error::other)?];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// `path` opened for reading and its length, when it is a regular file (`open`, `fstat`):
/// opened without waiting where the system can (a FIFO's open would wait for a writer;
/// it is then found not to be a regular file), which changes nothing for a regular file's
/// reads.
fn open_regular(path: &Path) -> Option<(File, u64)> {
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(all(unix, not(target_family = "wasm")))]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let file = open.open(path).ok()?;
    let len = file.metadata().ok().filter(std::fs::Metadata::is_file)?.len();
    Some((file, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{ReadNpy, WriteNpy};
    use crate::ErrorKind;

    /// Small files, a large one, a Python 2 header, and files the fast way leaves to the
    /// reader (trailing bytes, which it reads as `np.load` does; objects, a cut) give
    /// exactly what the reader gives, errors too.
    /// Small files, a large one, one with bytes after its data and one cut short, a
    /// Python 2 header, an object array, in a new directory.
    fn files() -> tempfile::TempDir {
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
        dir
    }

    #[test]
    fn a_loader_gives_what_the_reader_gives() {
        let dir = files();
        let at = |name: &str| dir.path().join(name);
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

    /// `open` tells each kind of file by its first bytes, reads a `.npy` array as the
    /// reader does (fast for a small file), leaves the data of object arrays and of any
    /// array opened without `read_data`, and fails as the reader fails.
    #[test]
    fn open_tells_what_a_file_holds() {
        let dir = files();
        let at = |name: &str| dir.path().join(name);
        let mut archive = crate::npz::Writer::new(std::io::Cursor::new(Vec::new()));
        archive.add("x", &[1u8, 2]).unwrap();
        std::fs::write(at("archive.npz"), archive.finish().unwrap().into_inner()).unwrap();
        std::fs::write(at("empty"), b"").unwrap();
        std::fs::write(at("pickle"), b"\x80\x04\x95 a pickle").unwrap();
        std::fs::write(at("short"), b"\x93NUM").unwrap();

        let mut loader = Loader::new();
        for name in ["a.npy", "large.npy", "trailing.npy", "python2.npy", "a.npy"] {
            let want = NpyReader::from_path(at(name)).unwrap();
            let (python2, offset) = (want.python2_header(), want.data_offset());
            let want = want.read_dyn().unwrap();
            let Opened::Array(got) = loader.open(at(name), true).unwrap() else { panic!("{name}: an array") };
            assert_eq!((got.header(), got.data()), (want.header(), want.data()), "{name}");
            assert_eq!(loader.python2_header(), python2, "{name}");
            let Opened::Npy(got) = loader.open(at(name), false).unwrap() else { panic!("{name}: a header") };
            assert_eq!((got.header(), got.data_offset()), (want.header(), offset), "{name}");
            assert_eq!(loader.python2_header(), python2, "{name}");
        }
        for read_data in [true, false] {
            let Opened::Npy(objects) = loader.open(at("objects.npy"), read_data).unwrap() else { panic!("objects") };
            assert!(objects.header().dtype.has_object());
            assert_eq!(objects.read::<crate::Array<crate::Object>>().unwrap().shape(), [1]);
            let Opened::Archive(mut file) = loader.open(at("archive.npz"), read_data).unwrap() else { panic!("zip") };
            let mut start = [0; 4];
            file.read_exact(&mut start).unwrap();
            assert_eq!(&start, b"PK\x03\x04");
            assert!(matches!(loader.open(at("empty"), read_data).unwrap(), Opened::Empty));
            assert!(matches!(loader.open(at("pickle"), read_data).unwrap(), Opened::Other));
            assert!(matches!(loader.open(at("short"), read_data).unwrap(), Opened::Other));
        }
        let want = NpyReader::from_path(at("cut.npy")).map(|_| ()).unwrap_err().to_string();
        assert_eq!(loader.open(at("cut.npy"), true).map(|_| ()).unwrap_err().to_string(), want);
        for name in ["missing.npy", ""] {
            let want = NpyReader::from_path(at(name)).map(|_| ()).unwrap_err().to_string();
            assert_eq!(loader.open(at(name), true).map(|_| ()).unwrap_err().to_string(), want, "{name:?}");
        }
    }
}
