//! Plain arrays read with few system calls and no Python: [`read_plain`], the way `np.load`
//! of a path takes first, and what `npy.load_many` spreads over threads.
//!
//! Only the plain case is fast: a regular file holding one `.npy` array of a dtype without
//! Python objects, a header of this century (no Python 2 warning to give), and exactly the
//! data its header calls for. Anything else (an error too) is read again by
//! [`crate::load`]'s general way under the GIL, which gives NumPy's results, exceptions and
//! warnings; a file is then opened twice, which only odd files pay.

use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use npy_core::header::Header;
use npy_core::{DynArray, NpyReader, ReadOptions};

use crate::remote::{ObjectRead, Opened};

/// Files up to this size are read whole by one `read` into the buffer that becomes the
/// array's; larger ones by npy-core's reader (a 2 KiB file: 4 system calls instead of 14).
const SMALL: u64 = 1 << 20;

/// The array of the `.npy` file at `path` when it is plain (see the module), read with
/// `open`, `fstat`, one `read` (more only for a file larger than [`SMALL`]) and `close`;
/// `None` for anything else, which the caller reads the general way. `memo`: the last
/// header read with the same `options` (see [`HeaderMemo`]).
pub(crate) fn read_plain(path: &Path, options: &ReadOptions, memo: &mut Option<HeaderMemo>) -> Option<DynArray> {
    let mut file = open_regular(path)?;
    let len = file.metadata().ok().filter(std::fs::Metadata::is_file)?.len();
    if len > SMALL {
        drop(file);
        let reader = NpyReader::from_path_with(path, options).ok()?;
        return plain(&reader.header().clone(), reader.python2_header())
            .then(|| reader.read::<DynArray>().ok())
            .flatten();
    }
    let mut bytes = vec![0; usize::try_from(len).ok()?];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => return None,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    drop(file);
    from_bytes(bytes, options, memo)
}

thread_local! {
    /// The last header `npy.load` read on this thread, with the options it read it under.
    static LOAD_MEMO: RefCell<(Option<ReadOptions>, Option<HeaderMemo>)> = const { RefCell::new((None, None)) };
}

/// [`read_plain`] for `npy.load`: with the last header this thread read under the same
/// options (a loop over a training set's files reads one header again and again).
pub(crate) fn read_plain_again(path: &Path, options: &ReadOptions) -> Option<DynArray> {
    LOAD_MEMO.with(|cell| {
        let mut slot = cell.borrow_mut();
        let (read_under, memo) = &mut *slot;
        if read_under.as_ref() != Some(options) {
            *read_under = Some(options.clone());
            *memo = None;
        }
        read_plain(path, options, memo)
    })
}

/// The last header a thread read with one set of options, and the bytes it was parsed
/// from (magic to padding): a training set's files mostly share one, and comparing its
/// bytes costs a tenth of parsing them (a tenth of a small file's read). Parsing is
/// determined by those bytes and the options, so equal bytes give the same header.
pub(crate) struct HeaderMemo {
    raw: Vec<u8>,
    header: Header,
    python2: bool,
}

/// `path` opened for reading if it is a regular file: opened without waiting (a FIFO's
/// open would wait for a writer), which changes nothing for a regular file's reads.
fn open_regular(path: &Path) -> Option<File> {
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    open.open(path).ok()
}

/// The array of a whole `.npy` file's bytes, when plain: the header parsed from them, the
/// data moved to the front of the same buffer (no second allocation).
fn from_bytes(mut bytes: Vec<u8>, options: &ReadOptions, memo: &mut Option<HeaderMemo>) -> Option<DynArray> {
    let (header, offset, python2) = match memo {
        Some(m) if bytes.starts_with(&m.raw) => (m.header.clone(), m.raw.len(), m.python2),
        _ => {
            let reader = NpyReader::from_reader_with(bytes.as_slice(), options).ok()?;
            let (header, offset, python2) = (reader.header().clone(), reader.data_offset(), reader.python2_header());
            let raw = bytes.get(..offset)?.to_vec();
            *memo = Some(HeaderMemo { raw, header: header.clone(), python2 });
            (header, offset, python2)
        }
    };
    if !plain(&header, python2) || bytes.len() != offset.checked_add(header.data_len().ok()?)? {
        return None;
    }
    bytes.drain(..offset);
    DynArray::new(header, bytes).ok()
}

/// Whether an array of `header` is read as plain bytes with nothing to say.
fn plain(header: &Header, python2_header: bool) -> bool {
    !python2_header && !header.dtype.has_object()
}

/// The `.npy` array at `url`, when plain: its first bytes by one ranged GET, the rest
/// (if any) by one more, as `npy.load` reads it.
pub(crate) fn read_plain_url(url: &str, options: &ReadOptions) -> Option<DynArray> {
    let opened = Opened::open(url).ok()?;
    if !opened.prefix.starts_with(b"\x93NUMPY") {
        return None;
    }
    let reader = NpyReader::from_reader_with(ObjectRead::new(opened), options).ok()?;
    plain(&reader.header().clone(), reader.python2_header()).then(|| reader.read::<DynArray>().ok()).flatten()
}

/// Whether `s` is a URL (`scheme://...`), as `npy._source.is_url` says.
pub(crate) fn is_url(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once("://") else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}
