//! Plain arrays read with few system calls and no Python: [`read_plain`], the way `np.load`
//! of a path takes first, and what `npy.load_many` spreads over threads.
//!
//! Only the plain case is fast: a regular file holding one `.npy` array of a dtype without
//! Python objects and a header of this century (no Python 2 warning to give). Anything
//! else (an error too) is read again by [`crate::load`]'s general way under the GIL, which
//! gives NumPy's results, exceptions and warnings; a file is then opened twice, which only
//! odd files pay.

use std::cell::RefCell;
use std::path::Path;

use npy_core::header::Header;
use npy_core::{DynArray, Loader, NpyReader, ReadOptions};

use crate::remote::{ObjectRead, Opened};

/// The array of the `.npy` file at `path` when it is plain (see the module), read by
/// `loader` (npy-core's [`Loader`]: a small file by `open`, `fstat`, one `read` and
/// `close`); `None` for anything else, which the caller reads the general way.
pub(crate) fn read_plain(path: &Path, loader: &mut Loader) -> Option<DynArray> {
    let array = loader.load(path).ok()?;
    (!loader.python2_header()).then_some(array)
}

thread_local! {
    /// The loader of `npy.load` on this thread: a loop over a training set's files reads
    /// one header again and again, which it remembers.
    static LOADER: RefCell<Option<Loader>> = const { RefCell::new(None) };
}

/// [`read_plain`] for `npy.load`: by this thread's loader, made anew for other options.
pub(crate) fn read_plain_again(path: &Path, options: &ReadOptions) -> Option<DynArray> {
    LOADER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|loader| loader.options() != options) {
            *slot = Some(Loader::new_with(options));
        }
        slot.as_mut().and_then(|loader| read_plain(path, loader))
    })
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
    plain(reader.header(), reader.python2_header()).then(|| reader.read::<DynArray>().ok()).flatten()
}
